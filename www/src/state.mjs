// The demo's shared state: the page's elements, what it shows and the few facts every part
// reads (the dialects and agents offered, and what each dialect serves, from the SDK).

import { dialectInfo } from 'weft-sdk';

import { prefs } from './store.mjs';

export const $ = (id) => document.getElementById(id);

export const DIALECTS = ['loom', 'agentloop', 'agentchat', 'cueso'];

const AGENTS = ['react', 'dup', 'tot', 'got'];

/** What differs by dialect, from the SDK (after `init()`): endpoint, requests served, context. */
export const serves = (dialect, request) => dialectInfo(dialect).requests.includes(request);

/** The dialect that serves `request` (`userMessages`: loom; `contextInfo`: agentloop). */
export const servedBy = (request) => DIALECTS.find((d) => serves(d, request));

export const params = new URLSearchParams(location.search);

export function defaultServer() {
  return /^https?:$/.test(location.protocol) ? location.origin.replace(/^http/, 'ws') : 'ws://127.0.0.1:8080';
}

export function uuid() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const x = [...b].map((v) => v.toString(16).padStart(2, '0')).join('');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

export function titleOf(message) {
  const line = message.trim().split('\n')[0];
  return line.length > 48 ? `${line.slice(0, 47)}…` : line;
}

export const els = {
  app: $('app'),
  sidebar: $('sidebar'),
  scrim: $('scrim'),
  sessions: $('sessions'),
  newChat: $('new-chat'),
  title: $('session-title'),
  sessionId: $('session-id'),
  dialect: $('dialect'),
  conn: $('conn'),
  banner: $('banner'),
  messages: $('messages'),
  history: $('history'),
  welcome: $('welcome'),
  suggestions: $('suggestions'),
  runs: $('runs'),
  composer: $('composer'),
  input: $('input'),
  adaptive: $('adaptive'),
  adaptiveWrap: $('adaptive-wrap'),
  hint: $('hint'),
  send: $('send'),
  stop: $('stop'),
  activityTitle: $('activity-title'),
  activityStatus: $('activity-status'),
  activity: $('activity'),
  contextMeter: $('context-meter'),
  contextFill: $('context-fill'),
  contextTokens: $('context-tokens'),
  contextPercent: $('context-percent'),
  contextNote: $('context-note'),
  contextStrategy: $('context-strategy'),
  contextRefresh: $('context-refresh'),
  compact: $('compact'),
  usage: $('usage'),
  connDetails: $('conn-details'),
  ping: $('ping'),
  serverUrl: $('server-url'),
  serverToken: $('server-token'),
  serverApply: $('server-apply'),
};

export const state = {
  server: params.get('server') || prefs.get('server', '') || defaultServer(),
  token: params.get('token') || prefs.get('token', ''),
  /** @type {import('./store.mjs').SessionRecord | null} */
  session: null,
  /** @type {import('weft-sdk').Client | null} */
  client: null,
  /** @type {Map<string, import('./chat.mjs').RunView>} */
  runs: new Map(),
  /** @type {import('./chat.mjs').RunView | null} the run the panel shows */
  followed: null,
  /** @type {{ run: import('weft-sdk').Run, view: import('./chat.mjs').RunView } | null} this page's streaming run */
  active: null,
  agent: AGENTS.includes(prefs.get('agent')) ? prefs.get('agent') : 'react',
  adaptive: Boolean(prefs.get('adaptive', false)),
  conn: { state: 'connecting', detail: '', reconnects: 0, ping: null },
  context: null,
  compacting: false,
  stick: true,
};
