// The demo's state and the facts every part reads: the page's elements, what it shows (`State`),
// the dialects and agents offered, and what each dialect serves (from the SDK). Nothing here is a
// module-level global: main.mjs builds one `App` and passes it to every part.

import { dialectInfo } from 'weft-sdk';

import { prefs } from './store.mjs';

/**
 * @typedef {import('weft-sdk').Dialect} Dialect
 * @typedef {import('./store.mjs').SessionRecord} SessionRecord
 * @typedef {import('./chat.mjs').RunView} RunView
 * @typedef {{ tokenCount: number, usagePercent: number, transcriptLength: number, maxTokens: number, strategy: string }} ContextView
 * @typedef {{ state: string, detail: string, reconnects: number, ping: number | null }} ConnView
 */

/**
 * What the page shows, changed by its parts.
 * @typedef {object} State
 * @property {string} server
 * @property {string} token
 * @property {SessionRecord | null} session
 * @property {import('weft-sdk').Client | null} client
 * @property {Map<string, RunView>} runs
 * @property {RunView | null} followed the run the panel shows
 * @property {{ run: import('weft-sdk').Run, view: RunView } | null} active this page's streaming run
 * @property {string} agent
 * @property {boolean} adaptive
 * @property {ConnView} conn
 * @property {ContextView | null} context
 * @property {boolean} compacting
 * @property {boolean} stick
 */

/**
 * What a control asks of the parts above the one that drew it (a "Switch to loom" button in
 * the panel opens the session again), so that modules import only the ones below them. main.mjs
 * fills these in.
 * @typedef {object} Actions
 * @property {(text: string) => void} send
 * @property {(record: SessionRecord) => Promise<void>} openSession
 * @property {(dialect: string) => void} switchDialect
 */

/**
 * The one value every part of the page is given.
 * @typedef {object} App
 * @property {State} state
 * @property {Elements} els
 * @property {import('./approval.mjs').Approvals} approvals
 * @property {Actions} actions
 */

/** @type {Dialect[]} */
export const DIALECTS = ['loom', 'agentloop', 'agentchat', 'cueso'];

const AGENTS = ['react', 'dup', 'tot', 'got'];

/**
 * Whether `dialect` is one the page offers.
 * @param {unknown} dialect
 * @returns {dialect is Dialect}
 */
export const isDialect = (dialect) => DIALECTS.some((d) => d === dialect);

/**
 * What differs by dialect, from the SDK (after `init()`): endpoint, requests served, context.
 * @param {Dialect} dialect
 * @param {string} request
 */
export const serves = (dialect, request) => dialectInfo(dialect).requests.includes(request);

/**
 * The dialect that serves `request` (`userMessages`: loom; `contextInfo`: agentloop).
 * @param {string} request
 * @returns {Dialect}
 */
export const servedBy = (request) => {
  const dialect = DIALECTS.find((d) => serves(d, request));
  if (!dialect) throw new Error(`no dialect serves ${request}`);
  return dialect;
};

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

/** @param {string} message */
export function titleOf(message) {
  const line = message.trim().split('\n')[0];
  return line.length > 48 ? `${line.slice(0, 47)}…` : line;
}

/** @returns {SessionRecord} a new session, in the dialect last picked */
export function newRecord() {
  const now = Date.now();
  const dialect = prefs.get('dialect');
  return { id: uuid(), title: '', dialect: isDialect(dialect) ? dialect : 'loom', createdAt: now, updatedAt: now };
}

/**
 * The element `id`, which index.html must have, as a `type`.
 * @template {HTMLElement} T
 * @param {Document} doc
 * @param {string} id
 * @param {{ new (): T }} type
 * @returns {T}
 */
function byId(doc, id, type) {
  const el = doc.getElementById(id);
  if (!(el instanceof type)) throw new Error(`index.html has no ${type.name} #${id}`);
  return el;
}

/** @param {Document} doc the page's elements the parts draw into */
export function findElements(doc) {
  /** @param {string} id */
  const $ = (id) => byId(doc, id, HTMLElement);
  return {
    app: $('app'),
    sidebar: $('sidebar'),
    scrim: $('scrim'),
    sessions: $('sessions'),
    newChat: $('new-chat'),
    title: $('session-title'),
    sessionId: $('session-id'),
    dialect: byId(doc, 'dialect', HTMLSelectElement),
    conn: $('conn'),
    banner: $('banner'),
    messages: $('messages'),
    history: $('history'),
    welcome: $('welcome'),
    suggestions: $('suggestions'),
    runs: $('runs'),
    composer: $('composer'),
    input: byId(doc, 'input', HTMLTextAreaElement),
    adaptive: byId(doc, 'adaptive', HTMLInputElement),
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
    contextRefresh: byId(doc, 'context-refresh', HTMLButtonElement),
    compact: byId(doc, 'compact', HTMLButtonElement),
    usage: $('usage'),
    connDetails: $('conn-details'),
    ping: $('ping'),
    serverUrl: byId(doc, 'server-url', HTMLInputElement),
    serverToken: byId(doc, 'server-token', HTMLInputElement),
    serverApply: $('server-apply'),
    approval: byId(doc, 'approval', HTMLDialogElement),
    theme: $('theme'),
    theme2: $('theme-2'),
    toggleSidebar: $('toggle-sidebar'),
    toggleInspector: $('toggle-inspector'),
  };
}

/** @typedef {ReturnType<typeof findElements>} Elements */

/**
 * What the page shows when it starts: the server and token from the URL or the preferences.
 * @param {URLSearchParams} params
 * @returns {State}
 */
export function createState(params) {
  const agent = prefs.get('agent');
  return {
    server: params.get('server') || prefs.get('server', '') || defaultServer(),
    token: params.get('token') || prefs.get('token', ''),
    session: null,
    client: null,
    runs: new Map(),
    followed: null,
    active: null,
    agent: AGENTS.includes(agent) ? agent : 'react',
    adaptive: Boolean(prefs.get('adaptive', false)),
    conn: { state: 'connecting', detail: '', reconnects: 0, ping: null },
    context: null,
    compacting: false,
    stick: true,
  };
}
