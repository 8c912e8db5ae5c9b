// The connection: one `Client` per session (in the dialect the user picks), its state in the
// header and the banner, approvals through `client.onApproval`, and a short-lived agentloop
// client for the context requests when the page speaks another dialect.

import { Client } from 'weft-sdk';

import { Approvals } from './approval.mjs';
import { duration } from './dom.mjs';
import { hideBanner, showBanner } from './page.mjs';
import { renderConnDetails } from './panel.mjs';
import { onEvent } from './runs.mjs';
import { openSession } from './sessions.mjs';
import { $, els, servedBy, serves, state } from './state.mjs';

let resumedTimer = 0;

/** Stops the "resumed" state from settling into "live" (a new session is opening). */
export function clearResumed() {
  clearTimeout(resumedTimer);
}

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

export function connect() {
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

export function closeClient() {
  const client = state.client;
  state.client = null;
  client?.close();
}

/** `fn` with an agentloop client of this session: the page's own, or a short-lived one. */
export async function withAgentloop(fn) {
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

export const approvals = new Approvals($('approval'), (req) => {
  for (const view of state.runs.values()) {
    const card = view.cards.get(req.callId);
    if (card) return { explanation: card.explanation };
  }
  return {};
});
