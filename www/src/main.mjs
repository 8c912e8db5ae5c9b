// weft's demo chat app: one page on the public weft-sdk API. A `Client` per session (in the
// dialect the user picks), `client.run()` per message, every event of every run of the session
// through `client.onEvent`, approvals through `client.onApproval`, the connection's state through
// `client.onStatus`, the stored history through `client.userMessages()` (loom), and the context
// window through `contextInfo()` / `compact()` (agentloop: a short-lived agentloop client on the
// same session when the page speaks another dialect).
//
// No provider key is ever here: the server holds the keys and runs the model.

import init, { Client, dialectInfo } from 'weft-sdk';

import { Approvals } from './approval.mjs';
import { AGENT_NAME, RunView, assistantBubble, note, userBubble } from './chat.mjs';
import { ago, duration, fmt, h, set, throttled } from './dom.mjs';
import { renderGot } from './got.mjs';
import { prefs, sessions } from './store.mjs';
import { renderTot } from './tot.mjs';

const $ = (id) => document.getElementById(id);
const DIALECTS = ['loom', 'agentloop', 'agentchat', 'cueso'];
const AGENTS = ['react', 'dup', 'tot', 'got'];

/** What differs by dialect, from the SDK (after `init()`): endpoint, requests served, context. */
const serves = (dialect, request) => dialectInfo(dialect).requests.includes(request);
/** The dialect that serves `request` (`userMessages`: loom; `contextInfo`: agentloop). */
const servedBy = (request) => DIALECTS.find((d) => serves(d, request));

const SUGGESTIONS = [
  { text: 'What time is it?', agent: 'react', tip: 'calls a tool' },
  { text: 'Write hello to notes.txt', agent: 'react', tip: 'asks for your approval' },
  { text: 'What time is it; calculate 6*7', agent: 'got', tip: 'plans a graph' },
  { text: 'What time is it? dead end', agent: 'tot', tip: 'scores and backtracks' },
  { text: 'Explain `ls -la`', agent: 'react', tip: 'Markdown reply' },
  { text: 'Count to 60', agent: 'dup', tip: 'understand, plan, answer' },
];

const els = {
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

function defaultServer() {
  return /^https?:$/.test(location.protocol) ? location.origin.replace(/^http/, 'ws') : 'ws://127.0.0.1:8080';
}

function uuid() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const x = [...b].map((v) => v.toString(16).padStart(2, '0')).join('');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

const params = new URLSearchParams(location.search);

const state = {
  server: params.get('server') || prefs.get('server', '') || defaultServer(),
  token: params.get('token') || prefs.get('token', ''),
  /** @type {import('./store.mjs').SessionRecord | null} */
  session: null,
  /** @type {Client | null} */
  client: null,
  /** @type {Map<string, RunView>} */
  runs: new Map(),
  /** @type {RunView | null} the run the panel shows */
  followed: null,
  /** @type {{ run: import('weft-sdk').Run, view: RunView } | null} this page's streaming run */
  active: null,
  agent: AGENTS.includes(prefs.get('agent')) ? prefs.get('agent') : 'react',
  adaptive: Boolean(prefs.get('adaptive', false)),
  conn: { state: 'connecting', detail: '', reconnects: 0, ping: null },
  context: null,
  compacting: false,
  stick: true,
};

// ----- connection -----

let resumedTimer = 0;

function setConn(s, detail = '') {
  state.conn.state = s;
  state.conn.detail = detail;
  renderConn();
}

function renderConn() {
  const { state: s, detail } = state.conn;
  const label = { connecting: 'connecting', live: 'live', reconnecting: 'reconnecting', resumed: 'resumed', offline: 'offline' }[s] ?? s;
  els.conn.dataset.state = s;
  els.conn.title = detail || label;
  els.conn.querySelector('.conn-label').textContent = label;
  renderConnDetails();
}

function onStatus(st) {
  clearTimeout(resumedTimer);
  switch (st.state) {
    case 'connecting':
      setConn('connecting');
      break;
    case 'open':
      if (state.conn.state === 'reconnecting') {
        state.conn.reconnects++;
        setConn('resumed', 'reconnected; unfinished runs resumed from the last event received');
        showBanner(state.active ? 'Reconnected — the run carries on from the last event this page received. Nothing was lost or repeated.' : 'Reconnected.', 'ok', 5000);
        const settle = () => {
          if (state.conn.state !== 'resumed') return;
          if (state.active) resumedTimer = setTimeout(settle, 1000);
          else setConn('live');
        };
        resumedTimer = setTimeout(settle, 4000);
      } else {
        setConn('live');
        hideBanner();
      }
      break;
    case 'reconnecting': {
      const wait = st.retryInMs != null ? ` in ${duration(st.retryInMs)}` : '';
      setConn('reconnecting', `attempt ${st.attempt ?? 1}${wait} — ${st.reason ?? 'connection lost'}`);
      showBanner(
        `Connection lost (${st.reason ?? 'no reason given'}). Reconnecting${wait}, attempt ${st.attempt ?? 1}.` +
          (state.active ? ' The run goes on on the server; this page will pick it up where it left off.' : ''),
        'warn',
      );
      break;
    }
    case 'closed':
      setConn('offline', st.reason ?? 'closed');
      showBanner(`Disconnected: ${st.reason ?? 'the connection closed'}.`, 'error', 0, { label: 'Reconnect', action: () => openSession(state.session) });
      break;
    default:
      break;
  }
}

function connect() {
  const { session } = state;
  let client;
  try {
    client = new Client({
      url: state.server,
      dialect: session.dialect,
      sessionId: session.id,
      token: state.token || undefined,
      reconnect: { initialDelayMs: 300, maxDelayMs: 5000 },
    });
  } catch (e) {
    setConn('offline', e.message);
    showBanner(`Cannot connect: ${e.message}`, 'error');
    return null;
  }
  state.client = client;
  state.conn = { state: 'connecting', detail: '', reconnects: 0, ping: null };
  renderConn();
  const mine = (f) => (x) => {
    if (client === state.client) f(x);
  };
  client.onStatus(mine(onStatus));
  client.onEvent(mine(onEvent));
  client.onError(mine((e) => console.warn('weft-sdk:', e.code, e.message)));
  client.onApproval((req) => approvals.ask(req));
  client.connect().catch(
    mine((e) => {
      setConn('offline', e.message);
      showBanner(`Cannot reach the server at ${state.server}: ${e.message}`, 'error', 0, { label: 'Retry', action: () => openSession(state.session) });
    }),
  );
  return client;
}

function closeClient() {
  const client = state.client;
  state.client = null;
  client?.close();
}

/** `fn` with an agentloop client of this session: the page's own, or a short-lived one. */
async function withAgentloop(fn) {
  const main = state.client;
  if (main && serves(main.dialect, 'contextInfo')) return fn(main);
  const side = new Client({
    url: state.server,
    dialect: servedBy('contextInfo'),
    sessionId: state.session.id,
    token: state.token || undefined,
    reconnect: false,
    heartbeatIntervalMs: 0,
  });
  try {
    await side.connect();
    return await fn(side);
  } finally {
    side.close();
  }
}

// ----- events -----

function onEvent(ev) {
  switch (ev.type) {
    case 'context_info':
      setContext({
        tokenCount: ev.token_count,
        usagePercent: ev.usage_percent,
        transcriptLength: ev.transcript_length,
        maxTokens: ev.max_tokens,
        strategy: ev.strategy,
      });
      break;
    case 'context_compacted':
      if (!state.compacting) addNote(compactionText(ev.old_token_count, ev.new_token_count, ev.reduction_percent), 'info');
      if (state.context) setContext({ ...state.context, tokenCount: ev.new_token_count, usagePercent: (ev.new_token_count * 100) / state.context.maxTokens });
      break;
    default:
      break;
  }
  const id = ev.run_id;
  let view = id ? state.runs.get(id) : undefined;
  if (!view && id && ev.type === 'run_start') {
    // A run another tab (or another dialect's socket) started in this session.
    view = addRun({ runId: id, message: ev.message, agent: ev.agent, own: false });
    if (!state.session.title && ev.message) {
      state.session.title = titleOf(ev.message);
      state.session.updatedAt = Date.now();
      sessions.save(state.session);
      renderSessions();
      renderHeader();
    }
  }
  view?.apply(ev);
}

function compactionText(before, after, percent) {
  return `Context compacted: ${fmt(before)} → ${fmt(after)} tokens (−${Number(percent).toFixed(1)} %). The older turns are now a summary.`;
}

// ----- runs -----

const onRunChange = throttled(() => {
  renderActivity();
  renderUsage();
  autoscroll();
});

function addRun({ runId, message, agent, own }) {
  const view = new RunView({ runId, message, agent, dialect: state.session.dialect, own, onChange: onRunChange });
  // Clicking a run's footer shows that run in the panel.
  view.meta.title = 'Show this run in the agent panel';
  view.meta.addEventListener('click', () => {
    state.followed = view;
    renderActivity();
    if (els.app.dataset.inspector !== 'open') toggle('inspector');
  });
  state.runs.set(runId, view);
  els.runs.append(view.el);
  state.followed = view;
  updateWelcome();
  renderActivity();
  autoscroll(true);
  return view;
}

function send(text) {
  const message = text.trim();
  const { session, client } = state;
  if (!message || !client || state.active) return;
  if (!session.title) session.title = titleOf(message);
  session.updatedAt = Date.now();
  sessions.save(session);
  renderSessions();
  renderHeader();
  const options = { message, agent: state.agent };
  if (state.agent === 'got' && state.adaptive && session.dialect === 'loom') options.gotAdaptive = true;
  let run;
  try {
    run = client.run(options);
  } catch (e) {
    showBanner(e.message, 'error', 6000);
    return;
  }
  els.input.value = '';
  autosize();
  watch(run, addRun({ runId: run.runId, message, agent: state.agent, own: true }));
}

/** Shows `run` as this page's running run (Stop cancels it) until it settles. */
function watch(run, view) {
  setActive({ run, view });
  run.result
    .then(
      (r) => view.finish(r.reply, r.totalUsage),
      (e) => view.fail(e.code, e.message),
    )
    .finally(() => {
      if (state.active?.run === run) setActive(null);
      renderUsage();
      // loom and agentloop runs report the context as they go; the others do not.
      if (!dialectInfo(view.dialect).reportsContext && view.dialect === state.session?.dialect) refreshContext();
    });
}

function titleOf(message) {
  const line = message.trim().split('\n')[0];
  return line.length > 48 ? `${line.slice(0, 47)}…` : line;
}

function setActive(active) {
  state.active = active;
  els.send.hidden = Boolean(active);
  els.stop.hidden = !active;
  els.dialect.disabled = Boolean(active);
  els.compact.disabled = Boolean(active);
  els.app.dataset.running = active ? 'true' : 'false';
  renderComposer();
}

// ----- history -----

async function loadHistory(client) {
  const { session } = state;
  if (!serves(session.dialect, 'userMessages')) {
    const loom = servedBy('userMessages');
    els.history.replaceChildren(
      h(
        'div',
        { class: 'history-note' },
        h('strong', { text: `History needs ${loom}. ` }),
        `This session speaks ${session.dialect}; its stored messages come from ${loom}’s user_messages request, which ${session.dialect} has no message for. `,
        h('button', { class: 'btn small', type: 'button', onclick: () => switchDialect(loom) }, `Switch to ${loom}`),
      ),
    );
    return;
  }
  try {
    const page = await client.userMessages(session.id, { limit: 50 });
    if (client !== state.client) return;
    const active = page.activeRunId && !state.runs.has(page.activeRunId) ? page.activeRunId : null;
    // A run still streaming (the page was reloaded, or another tab or device started it): its
    // user message is the last one stored; the run's own view shows it, with the reply as it
    // streams — replayed from the run's start, then live.
    const last = page.messages.at(-1);
    const message = active && last?.role === 'user' ? page.messages.pop().content : undefined;
    showHistory(page, false);
    if (active && !state.active) watch(client.follow(active), addRun({ runId: active, message, own: false }));
  } catch (e) {
    if (client !== state.client) return;
    els.history.replaceChildren(note(`Could not load the history: ${e.message}`, 'error'));
  }
}

function showHistory(page, older) {
  const items = page.messages.map((m) => (m.role === 'user' ? userBubble(m.content) : assistantBubble(m.content)));
  const block = h('div', { class: 'history-page' }, items);
  const more = els.history.querySelector('.history-more');
  more?.remove();
  if (older) els.history.prepend(block);
  else els.history.replaceChildren(block);
  if (page.hasMore && page.messages.length) {
    const before = page.messages[0].id;
    els.history.prepend(
      h('button', {
        class: 'btn small history-more',
        type: 'button',
        onclick: async () => {
          const client = state.client;
          const next = await client.userMessages(state.session.id, { before, limit: 50 });
          if (client === state.client) showHistory(next, true);
        },
      }, 'Load earlier messages'),
    );
  }
  if (!older && page.messages.length) {
    els.history.append(h('div', { class: 'history-divider', text: 'earlier in this session · stored on the server, loaded with user_messages' }));
  }
  updateWelcome();
  autoscroll(true);
}

// ----- sessions -----

function newRecord() {
  const now = Date.now();
  return { id: uuid(), title: '', dialect: DIALECTS.includes(prefs.get('dialect')) ? prefs.get('dialect') : 'loom', createdAt: now, updatedAt: now };
}

async function openSession(record) {
  closeClient();
  approvals.reset();
  clearTimeout(resumedTimer);
  hideBanner();
  state.runs.clear();
  state.followed = null;
  state.context = null;
  setActive(null);
  els.history.replaceChildren();
  els.runs.replaceChildren();
  state.session = record;
  prefs.set('active', record.id);
  closeDrawers();
  renderHeader();
  renderSessions();
  renderComposer();
  renderActivity();
  renderContext();
  renderUsage();
  updateWelcome();
  const client = connect();
  if (!client) return;
  await loadHistory(client);
  if (client === state.client) refreshContext();
}

function switchDialect(dialect) {
  if (state.active || !DIALECTS.includes(dialect) || dialect === state.session.dialect) {
    els.dialect.value = state.session.dialect;
    return;
  }
  const from = state.session.dialect;
  state.session.dialect = dialect;
  prefs.set('dialect', dialect);
  if (sessions.get(state.session.id)) sessions.save(state.session);
  if (serves(dialect, 'userMessages')) {
    // loom can read the stored history: show the session whole.
    openSession(state.session);
    return;
  }
  closeClient();
  connect();
  addNote(`Now speaking ${dialect} instead of ${from}: same session, new socket.`, 'info');
  if (!els.history.childElementCount && !state.runs.size) loadHistory(state.client);
  renderHeader();
  renderSessions();
  renderComposer();
  renderActivity();
  renderConnDetails();
}

function renderSessions() {
  const list = sessions.list();
  const current = state.session;
  const rows = list.map((s) =>
    h(
      'div',
      { class: `session${current?.id === s.id ? ' is-active' : ''}`, dataset: { id: s.id } },
      h(
        'button',
        { class: 'session-open', type: 'button', onclick: () => current?.id !== s.id && openSession(s) },
        h('span', { class: 'session-title', text: s.title || 'Untitled' }),
        h('span', { class: 'session-meta', text: `${s.dialect} · ${ago(s.updatedAt)}` }),
      ),
      h(
        'button',
        {
          class: 'session-remove',
          type: 'button',
          title: 'Remove from this list (the server keeps the session)',
          'aria-label': `Remove ${s.title || 'session'} from the list`,
          onclick: () => {
            sessions.remove(s.id);
            if (current?.id === s.id) openSession(sessions.list()[0] ?? newRecord());
            else renderSessions();
          },
        },
        '×',
      ),
    ),
  );
  if (current && !list.some((s) => s.id === current.id)) {
    rows.unshift(h('div', { class: 'session is-active is-draft' }, h('span', { class: 'session-open' }, h('span', { class: 'session-title', text: 'New chat' }), h('span', { class: 'session-meta', text: `${current.dialect} · not started` }))));
  }
  els.sessions.replaceChildren(...rows);
}

function renderHeader() {
  const s = state.session;
  els.title.textContent = s.title || 'New chat';
  els.sessionId.textContent = `session ${s.id.slice(0, 8)}`;
  els.sessionId.title = `${s.id} — click to copy`;
  els.dialect.value = s.dialect;
  document.title = s.title ? `${s.title} · weft` : 'weft · agent chat';
}

// ----- composer -----

function renderComposer() {
  for (const input of els.composer.querySelectorAll('input[name="agent"]')) input.checked = input.value === state.agent;
  const loom = state.session?.dialect === 'loom';
  els.adaptiveWrap.hidden = state.agent !== 'got';
  els.adaptive.checked = state.adaptive && loom;
  els.adaptive.disabled = !loom;
  let hint = 'Enter sends · Shift+Enter for a new line';
  if (state.active) hint = 'Streaming… Enter will send once this run ends.';
  else if ((state.agent === 'tot' || state.agent === 'got') && !loom) hint = `The live ${state.agent === 'tot' ? 'tree' : 'graph'} needs loom`;
  else if (state.agent === 'got' && !loom) hint = 'adaptive needs loom';
  els.hint.textContent = hint;
}

function autosize() {
  els.input.style.height = 'auto';
  els.input.style.height = `${Math.min(els.input.scrollHeight, 200)}px`;
}

function updateWelcome() {
  const empty = !state.runs.size && !els.history.querySelector('.history-page .msg') && !els.history.querySelector('.history-note');
  els.welcome.hidden = !empty;
}

function renderSuggestions() {
  els.suggestions.replaceChildren(
    ...SUGGESTIONS.map((s) =>
      h(
        'button',
        {
          class: 'suggestion',
          type: 'button',
          onclick: () => {
            setAgent(s.agent);
            send(s.text);
          },
        },
        h('span', { class: 'suggestion-text', text: s.text }),
        h('span', { class: 'suggestion-tip', text: `${AGENT_NAME[s.agent]} · ${s.tip}` }),
      ),
    ),
  );
}

function setAgent(agent) {
  state.agent = agent;
  prefs.set('agent', agent);
  renderComposer();
  if (!state.followed) renderActivity();
}

// ----- the panel: activity, context, usage, connection -----

function loomOnly(what) {
  return h(
    'div',
    { class: 'viz-empty' },
    h('p', { text: `${what} come from loom events, which only the loom dialect carries. This session speaks ${state.session.dialect}.` }),
    state.active ? null : h('button', { class: 'btn small', type: 'button', onclick: () => switchDialect('loom') }, 'Switch to loom'),
  );
}

const AGENT_ABOUT = {
  react: 'ReAct thinks, calls tools, and answers. Its steps show here as they happen.',
  dup: 'DUP understands the request, plans, acts and observes until a plan needs no tools.',
  tot: 'Tree of thoughts proposes candidate steps, scores them, acts on the best and backtracks from dead ends. The tree grows here.',
  got: 'Graph of thoughts plans sub-tasks as a graph and runs independent ones side by side. The graph shows here, node by node.',
};

let activityKey = '';

function renderActivity() {
  const v = state.followed;
  $('toggle-inspector').dataset.live = v?.running ? 'true' : 'false';
  // Redraw only when what the panel shows changed (not for every streamed word).
  const key = v
    ? `${v.runId}|${v.status}|${v.dialect}|${v.spans.map((s) => `${s.id}${s.state}${s.tools.length}`).join()}|${v.tot?.version}|${v.got?.version}|${state.session.dialect}`
    : `none|${state.agent}`;
  if (key === activityKey && els.activity.childElementCount) return;
  activityKey = key;
  if (!v) {
    els.activityTitle.textContent = AGENT_NAME[state.agent];
    els.activityStatus.textContent = '';
    els.activity.replaceChildren(h('p', { class: 'muted', text: AGENT_ABOUT[state.agent] }));
    return;
  }
  const loom = v.dialect === 'loom';
  els.activityTitle.textContent = AGENT_NAME[v.agent] ?? v.agent;
  els.activityStatus.textContent = v.running ? 'running' : v.status;
  els.activityStatus.dataset.status = v.status;
  let body;
  if (v.agent === 'got') body = v.got ? renderGot(v.got) : loom ? h('div', { class: 'viz-empty', text: 'Planning the graph…' }) : loomOnly('The plan and its nodes (got_plan, got_node_*, got_expand)');
  else if (v.agent === 'tot') body = v.tot ? renderTot(v.tot, v.running) : loom ? h('div', { class: 'viz-empty', text: 'Proposing the first candidates…' }) : loomOnly('The tree (tot_expand, tot_evaluate, tot_backtrack)');
  else body = v.spans.length ? renderSpans(v) : loom ? h('div', { class: 'viz-empty', text: 'Starting…' }) : loomOnly('The agent’s steps (node_enter / node_exit)');
  els.activity.replaceChildren(h('p', { class: 'activity-run', title: v.message, text: v.message ? `“${v.message}”` : '' }), body);
}

function renderSpans(v) {
  return h(
    'ol',
    { class: 'spans' },
    v.spans.map((s) =>
      h(
        'li',
        { class: `span is-${s.state}`, dataset: { span: s.id } },
        h('span', { class: 'span-dot', 'aria-hidden': 'true' }),
        h('span', { class: 'span-name', text: s.id.replace(/_/g, ' ') }),
        s.tools.length ? h('span', { class: 'span-tools', text: s.tools.join(', ') }) : null,
      ),
    ),
  );
}

function setContext(info) {
  state.context = info;
  renderContext();
}

function renderContext() {
  const c = state.context;
  const agentloop = state.session ? serves(state.session.dialect, 'compact') : false;
  els.compact.title = agentloop
    ? 'Summarise the older turns now (manual_compact)'
    : `Summarise the older turns now: manual_compact is an agentloop message, so the page sends it on a short-lived agentloop socket to this session`;
  if (!c) {
    els.contextFill.style.width = '0%';
    els.contextTokens.textContent = '—';
    els.contextPercent.textContent = '';
    els.contextStrategy.textContent = '';
    els.contextNote.textContent = 'Filled in by the runs’ context_info events, or Refresh.';
    return;
  }
  const pct = Math.max(0, Math.min(100, c.usagePercent));
  els.contextFill.style.width = `${Math.max(pct, 0.8)}%`;
  els.contextMeter.dataset.level = pct >= 80 ? 'high' : pct >= 60 ? 'mid' : 'low';
  els.contextMeter.setAttribute('aria-valuenow', pct.toFixed(1));
  els.contextTokens.textContent = `${fmt(c.tokenCount)} / ${fmt(c.maxTokens)} tokens`;
  els.contextPercent.textContent = `${pct.toFixed(1)} %`;
  els.contextStrategy.textContent = c.strategy;
  els.contextNote.textContent = `${fmt(c.transcriptLength)} item${c.transcriptLength === 1 ? '' : 's'} in the history; the server compacts on its own at 80 %.`;
}

async function refreshContext() {
  const session = state.session;
  els.contextRefresh.disabled = true;
  try {
    const info = await withAgentloop((c) => c.contextInfo());
    if (session === state.session) setContext(info);
  } catch (e) {
    if (session === state.session) els.contextNote.textContent = `Could not ask the server: ${e.message}`;
  } finally {
    els.contextRefresh.disabled = false;
  }
}

async function compactNow() {
  if (state.active || state.compacting) return;
  const session = state.session;
  state.compacting = true;
  els.compact.disabled = true;
  els.compact.textContent = 'Compacting…';
  try {
    const r = await withAgentloop((c) => c.compact());
    if (session !== state.session) return;
    addNote(compactionText(r.oldTokenCount, r.newTokenCount, r.reductionPercent), 'info');
    await refreshContext();
  } catch (e) {
    if (session !== state.session) return;
    addNote(e.code === 'empty_transcript' ? 'Nothing to compact yet: the conversation is empty.' : `Could not compact: ${e.message}${e.code ? ` (${e.code})` : ''}`, 'warn');
  } finally {
    state.compacting = false;
    els.compact.textContent = 'Compact now';
    els.compact.disabled = Boolean(state.active);
  }
}

function renderUsage() {
  const views = [...state.runs.values()];
  const done = views.filter((v) => !v.running);
  const sum = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  for (const v of views) {
    const u = v.usage();
    sum.prompt_tokens += u.prompt_tokens;
    sum.completion_tokens += u.completion_tokens;
    sum.total_tokens += u.total_tokens;
  }
  const last = state.followed;
  const rows = [
    h('div', { class: 'usage-total' },
      h('span', { class: 'big', text: fmt(sum.total_tokens) }),
      h('span', { class: 'muted', text: ` tokens in ${views.length} run${views.length === 1 ? '' : 's'} on this page` }),
    ),
    h('div', { class: 'usage-split' },
      h('span', {}, h('b', { text: fmt(sum.prompt_tokens) }), ' in'),
      h('span', {}, h('b', { text: fmt(sum.completion_tokens) }), ' out'),
      h('span', {}, h('b', { text: String(done.length) }), ' finished'),
    ),
  ];
  if (last && last.calls.length) {
    const u = last.usage();
    rows.push(
      h('div', { class: 'usage-run' },
        h('div', { class: 'usage-run-head' }, h('span', { text: 'Last run' }), h('span', { class: 'muted', text: `${fmt(u.total_tokens)} tokens · ${last.calls.length} call${last.calls.length === 1 ? '' : 's'}` })),
        h('ol', { class: 'usage-calls' },
          last.calls.slice(-8).map((c, i) =>
            h('li', {},
              h('span', { class: 'muted', text: `#${last.calls.length - Math.min(8, last.calls.length) + i + 1}` }),
              h('span', { class: 'bar' }, h('span', { class: 'bar-in', style: { width: `${(c.prompt_tokens / Math.max(...last.calls.map((x) => x.total_tokens))) * 100}%` } })),
              h('span', { text: `${fmt(c.prompt_tokens)} in · ${fmt(c.completion_tokens)} out` }),
            )),
        ),
      ),
    );
  }
  els.usage.replaceChildren(...rows);
}

function renderConnDetails() {
  const s = state.session;
  if (!s) return;
  let endpoint = state.server;
  try {
    const u = new URL(state.server);
    endpoint = `${u.protocol}//${u.host}${dialectInfo(s.dialect).endpoint}`;
  } catch {
    /* shown as given */
  }
  const kv = (k, v) => [h('dt', { text: k }), h('dd', {}, v)];
  els.connDetails.replaceChildren(
    ...kv('state', h('span', { class: `conn-text is-${state.conn.state}`, text: state.conn.detail ? `${state.conn.state} — ${state.conn.detail}` : state.conn.state })),
    ...kv('dialect', s.dialect),
    ...kv('endpoint', h('code', { text: endpoint })),
    ...kv('session', h('code', { text: s.id })),
    ...kv('reconnects', String(state.conn.reconnects)),
    ...(state.conn.ping != null ? kv('round trip', `${Math.round(state.conn.ping)} ms`) : []),
  );
}

// ----- banner, notes, scrolling, drawers -----

let bannerTimer = 0;

function showBanner(text, kind = 'info', hideAfterMs = 0, button) {
  clearTimeout(bannerTimer);
  els.banner.hidden = false;
  els.banner.dataset.kind = kind;
  set(
    els.banner,
    h('span', { text }),
    button ? h('button', { class: 'btn small', type: 'button', onclick: button.action }, button.label) : null,
  );
  if (hideAfterMs) bannerTimer = setTimeout(hideBanner, hideAfterMs);
}

function hideBanner() {
  clearTimeout(bannerTimer);
  els.banner.hidden = true;
}

function addNote(text, kind) {
  els.runs.append(note(text, kind));
  updateWelcome();
  autoscroll(true);
}

function autoscroll(force = false) {
  if (force) state.stick = true;
  if (!state.stick) return;
  requestAnimationFrame(() => {
    els.messages.scrollTop = els.messages.scrollHeight;
  });
}

// Below these widths the sessions (and then the agent panel) slide in over the chat.
const drawer = { sidebar: matchMedia('(max-width: 1279px)'), inspector: matchMedia('(max-width: 799px)') };

function closeDrawers() {
  els.app.dataset.sidebar = 'closed';
  if (drawer.inspector.matches) els.app.dataset.inspector = 'closed';
  els.scrim.hidden = true;
}

function toggle(which) {
  const open = els.app.dataset[which] !== 'open';
  if (!drawer[which].matches) {
    // A column: show or hide it, and remember.
    els.app.dataset[which] = open ? 'open' : 'closed';
    prefs.set(which, open);
    return;
  }
  closeDrawers();
  els.app.dataset[which] = open ? 'open' : 'closed';
  els.scrim.hidden = !open;
}

function layout() {
  els.app.dataset.inspector = drawer.inspector.matches ? 'closed' : prefs.get('inspector', true) ? 'open' : 'closed';
  els.app.dataset.sidebar = 'closed';
  els.scrim.hidden = true;
}

function toggleTheme() {
  const root = document.documentElement;
  root.dataset.chosen = 'yes'; // stop following the system (theme.js)
  root.dataset.theme = root.dataset.theme === 'dark' ? 'light' : 'dark';
  prefs.set('theme', root.dataset.theme);
}

// ----- wiring -----

const approvals = new Approvals($('approval'), (req) => {
  for (const view of state.runs.values()) {
    const card = view.cards.get(req.callId);
    if (card) return { explanation: card.explanation };
  }
  return {};
});

function wire() {
  els.composer.addEventListener('submit', (e) => {
    e.preventDefault();
    send(els.input.value);
  });
  els.input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send(els.input.value);
    }
  });
  els.input.addEventListener('input', autosize);
  els.stop.addEventListener('click', () => state.active?.run.cancel());
  for (const input of els.composer.querySelectorAll('input[name="agent"]')) {
    input.addEventListener('change', () => input.checked && setAgent(input.value));
  }
  els.adaptive.addEventListener('change', () => {
    state.adaptive = els.adaptive.checked;
    prefs.set('adaptive', state.adaptive);
  });
  els.dialect.addEventListener('change', () => switchDialect(els.dialect.value));
  els.newChat.addEventListener('click', () => {
    openSession(newRecord());
    els.input.focus();
  });
  els.sessionId.addEventListener('click', () => navigator.clipboard?.writeText(state.session.id).catch(() => {}));
  els.contextRefresh.addEventListener('click', refreshContext);
  els.compact.addEventListener('click', compactNow);
  els.ping.addEventListener('click', async () => {
    try {
      state.conn.ping = await state.client.ping();
    } catch (e) {
      state.conn.ping = null;
      showBanner(`Ping failed: ${e.message}`, 'warn', 4000);
    }
    renderConnDetails();
  });
  $('theme').addEventListener('click', toggleTheme);
  $('theme-2').addEventListener('click', toggleTheme);
  $('toggle-sidebar').addEventListener('click', () => toggle('sidebar'));
  $('toggle-inspector').addEventListener('click', () => toggle('inspector'));
  els.scrim.addEventListener('click', closeDrawers);
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && !els.scrim.hidden) closeDrawers();
  });
  els.messages.addEventListener('scroll', () => {
    const m = els.messages;
    state.stick = m.scrollHeight - m.scrollTop - m.clientHeight < 80;
  });
  els.serverUrl.value = state.server;
  els.serverToken.value = state.token;
  els.serverApply.addEventListener('click', () => {
    state.server = els.serverUrl.value.trim() || defaultServer();
    state.token = els.serverToken.value.trim();
    prefs.set('server', state.server === defaultServer() ? '' : state.server);
    prefs.set('token', state.token);
    openSession(state.session);
  });
  // Another tab changed the list (a new session, a title): show it here too.
  window.addEventListener('storage', (e) => {
    if (e.key !== 'weft.sessions.v1' || !state.session) return;
    const saved = sessions.get(state.session.id);
    if (saved && saved.title && !state.session.title) {
      state.session.title = saved.title;
      renderHeader();
    }
    renderSessions();
  });
  drawer.sidebar.addEventListener('change', layout);
  drawer.inspector.addEventListener('change', layout);
  layout();
}

async function main() {
  wire();
  renderSuggestions();
  try {
    await init();
  } catch (e) {
    showBanner(`Could not load weft-sdk: ${e.message}`, 'error');
    return;
  }
  const wanted = params.get('session');
  const record =
    (wanted ? sessions.get(wanted) ?? { ...newRecord(), id: wanted } : null) ?? sessions.get(prefs.get('active')) ?? sessions.list()[0] ?? newRecord();
  await openSession(record);
  document.documentElement.dataset.ready = 'true';
}

main();
