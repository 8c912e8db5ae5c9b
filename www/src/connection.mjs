// The connection: one `Client` per session (in the dialect the user picks), its state in the
// header, the banner and the panel's connection details, approvals through `client.onApproval`,
// MCP servers' OAuth authorizations through `client.onAuthorization` (a popup), and a
// short-lived agentloop client for the context requests when the page speaks another dialect.

import { Client, dialectInfo } from 'weft-sdk';

import { duration, h, messageOf } from './dom.mjs';
import { addNote, hideBanner, showBanner } from './page.mjs';
import { servedBy, serves } from './state.mjs';

/** @typedef {import('./state.mjs').App} App */

let resumedTimer = 0;

/** Stops the "resumed" state from settling into "live" (a new session is opening). */
export function clearResumed() {
  clearTimeout(resumedTimer);
}

/**
 * @param {App} app
 * @param {string} s
 * @param {string} [detail]
 */
function setConn(app, s, detail = '') {
  const { state } = app;
  state.conn.state = s;
  state.conn.detail = detail;
  renderConn(app);
}

/** @param {App} app */
function renderConn(app) {
  const { state, els } = app;
  const { state: s, detail } = state.conn;
  /** @type {Record<string, string>} */
  const labels = { connecting: 'connecting', live: 'live', reconnecting: 'reconnecting', resumed: 'resumed', offline: 'offline' };
  const label = labels[s] ?? s;
  els.conn.dataset.state = s;
  els.conn.title = detail || label;
  const text = els.conn.querySelector('.conn-label');
  if (text) text.textContent = label;
  renderConnDetails(app);
}

/**
 * @param {App} app
 * @param {import('weft-sdk').ClientStatus} st
 */
function onStatus(app, st) {
  const { state } = app;
  clearTimeout(resumedTimer);
  switch (st.state) {
    case 'connecting':
      setConn(app, 'connecting');
      break;
    case 'open':
      if (state.conn.state === 'reconnecting') {
        state.conn.reconnects++;
        setConn(app, 'resumed', 'reconnected; unfinished runs resumed from the last event received');
        showBanner(
          app,
          state.active ? 'Reconnected — the run carries on from the last event this page received. Nothing was lost or repeated.' : 'Reconnected.',
          'ok',
          5000,
        );
        const settle = () => {
          if (state.conn.state !== 'resumed') return;
          if (state.active) resumedTimer = setTimeout(settle, 1000);
          else setConn(app, 'live');
        };
        resumedTimer = setTimeout(settle, 4000);
      } else {
        setConn(app, 'live');
        hideBanner(app);
      }
      break;
    case 'reconnecting': {
      const wait = st.retryInMs != null ? ` in ${duration(st.retryInMs)}` : '';
      setConn(app, 'reconnecting', `attempt ${st.attempt ?? 1}${wait} — ${st.reason ?? 'connection lost'}`);
      showBanner(
        app,
        `Connection lost (${st.reason ?? 'no reason given'}). Reconnecting${wait}, attempt ${st.attempt ?? 1}.` +
          (state.active ? ' The run goes on on the server; this page will pick it up where it left off.' : ''),
        'warn',
      );
      break;
    }
    case 'closed':
      setConn(app, 'offline', st.reason ?? 'closed');
      showBanner(app, `Disconnected: ${st.reason ?? 'the connection closed'}.`, 'error', 0, { label: 'Reconnect', action: () => reopen(app) });
      break;
    default:
      break;
  }
}

/** The popups opened to authorize an MCP server, by server, to close once it is authorized. */
const popups = new Map();

/**
 * An MCP server of the session needs the user's OAuth authorization, or got it. Its URL opens
 * in a popup at once (the ask arrives during the run the user just started); a browser that
 * blocks popups not opened by a click gets a button in the banner instead. When the server is
 * authorized the popup closes and the chat says so: its tools are offered from the next
 * message on, with no reload.
 * @param {App} app
 * @param {import('weft-sdk').McpAuthorization} auth
 */
function onAuthorization(app, auth) {
  const { server, url } = auth;
  if (auth.authorized) {
    popups.get(server)?.close();
    popups.delete(server);
    hideBanner(app);
    addNote(app, `${server} is authorized: its tools are there from your next message.`, 'info');
    return;
  }
  if (!url) return;
  const open = () => {
    const popup = window.open(url, `weft-authorize-${server}`, 'popup,width=520,height=680');
    if (popup) popups.set(server, popup);
    return popup;
  };
  if (open()) {
    addNote(app, `${server} asks you to authorize it: a window opened for that.`, 'info');
  } else {
    showBanner(app, `The MCP server ${server} needs your authorization.`, 'warn', 0, {
      label: `Authorize ${server}`,
      action: () => {
        if (open()) hideBanner(app);
      },
    });
  }
}

/** @param {App} app opens the session again (a new socket) */
function reopen(app) {
  if (app.state.session) app.actions.openSession(app.state.session);
}

/**
 * The session's `Client`, connecting, its events to `onEvent`; null (and the reason in the
 * banner) when the settings cannot make one.
 * @param {App} app
 * @param {(app: App, ev: import('weft-sdk').RunEvent) => void} onEvent
 */
export function connect(app, onEvent) {
  const { state } = app;
  const { session } = state;
  if (!session) return null;
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
    setConn(app, 'offline', messageOf(e));
    showBanner(app, `Cannot connect: ${messageOf(e)}`, 'error');
    return null;
  }
  state.client = client;
  state.conn = { state: 'connecting', detail: '', reconnects: 0, ping: null };
  renderConn(app);
  /**
   * `f`, for as long as `client` is the page's.
   * @template T
   * @param {(x: T) => void} f
   */
  const mine = (f) => (/** @type {T} */ x) => {
    if (client === state.client) f(x);
  };
  client.onStatus(mine((st) => onStatus(app, st)));
  client.onEvent(mine((ev) => onEvent(app, ev)));
  client.onError(mine((e) => console.warn('weft-sdk:', e.code, e.message)));
  client.onApproval((req) => app.approvals.ask(req));
  client.onAuthorization(mine((auth) => onAuthorization(app, auth)));
  client.connect().catch(
    mine((e) => {
      setConn(app, 'offline', messageOf(e));
      showBanner(app, `Cannot reach the server at ${state.server}: ${messageOf(e)}`, 'error', 0, { label: 'Retry', action: () => reopen(app) });
    }),
  );
  return client;
}

/** @param {App} app */
export function closeClient({ state }) {
  const client = state.client;
  state.client = null;
  client?.close();
}

/**
 * `fn` with an agentloop client of this session: the page's own, or a short-lived one.
 * @template T
 * @param {App} app
 * @param {(client: Client) => Promise<T>} fn
 * @returns {Promise<T>}
 */
export async function withAgentloop({ state }, fn) {
  const main = state.client;
  if (main && serves(main.dialect, 'contextInfo')) return fn(main);
  if (!state.session) throw new Error('no session is open');
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

/** @param {App} app */
export function renderConnDetails({ state, els }) {
  const s = state.session;
  if (!s) return;
  let endpoint = state.server;
  try {
    const u = new URL(state.server);
    endpoint = `${u.protocol}//${u.host}${dialectInfo(s.dialect).endpoint}`;
  } catch {
    /* shown as given */
  }
  /**
   * @param {string} k
   * @param {string | Node} v
   */
  const kv = (k, v) => [h('dt', { text: k }), h('dd', {}, v)];
  els.connDetails.replaceChildren(
    ...kv(
      'state',
      h('span', { class: `conn-text is-${state.conn.state}`, text: state.conn.detail ? `${state.conn.state} — ${state.conn.detail}` : state.conn.state }),
    ),
    ...kv('dialect', s.dialect),
    ...kv('endpoint', h('code', { text: endpoint })),
    ...kv('session', h('code', { text: s.id })),
    ...kv('reconnects', String(state.conn.reconnects)),
    ...(state.conn.ping != null ? kv('round trip', `${Math.round(state.conn.ping)} ms`) : []),
  );
}
