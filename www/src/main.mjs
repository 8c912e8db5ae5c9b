// weft's demo chat app: one page on the public weft-sdk API. A `Client` per session (in the
// dialect the user picks), `client.run()` per message, every event of every run of the session
// through `client.onEvent`, approvals through `client.onApproval`, MCP servers' OAuth
// authorizations through `client.onAuthorization` (a popup), the connection's state through
// `client.onStatus`, the stored history through `client.userMessages()` (loom), and the context
// window through `contextInfo()` / `compact()` (agentloop: a short-lived agentloop client on the
// same session when the page speaks another dialect).
//
// No provider key is ever here: the server holds the keys and runs the model.
//
// This module builds the page's one `App` (state.mjs: its elements, its state, and the actions
// a control asks of the parts above it), wires the page's controls and starts it. The parts
// live by concern and import only downwards: page.mjs (banner, notes, scrolling, drawers,
// theme) < connection.mjs, sidebar.mjs (the session list and the header) < panel.mjs (the agent
// panel) < composer.mjs < runs.mjs < history.mjs < sessions.mjs (opening a session, switching
// its dialect) < this module.

import init from 'weft-sdk';

import { Approvals } from './approval.mjs';
import { autosize, loadAgents, renderSuggestions, setAgent } from './composer.mjs';
import { renderConnDetails } from './connection.mjs';
import { messageOf } from './dom.mjs';
import { closeDrawers, drawer, layout, showBanner, toggle, toggleTheme } from './page.mjs';
import { compactNow, refreshContext } from './panel.mjs';
import { send } from './runs.mjs';
import { openSession, switchDialect } from './sessions.mjs';
import { renderHeader, renderSessions } from './sidebar.mjs';
import { createState, defaultServer, findElements, newRecord } from './state.mjs';
import { prefs, sessions } from './store.mjs';

/** @typedef {import('./state.mjs').App} App */

/** @param {URLSearchParams} params */
function createApp(params) {
  const els = findElements(document);
  const state = createState(params);
  /** @type {App} */
  const app = {
    state,
    els,
    // The approval dialog shows the explanation the model streamed onto the call's card.
    approvals: new Approvals(els.approval, (req) => {
      if (req.callId === undefined) return {};
      for (const view of state.runs.values()) {
        const card = view.cards.get(req.callId);
        if (card) return { explanation: card.explanation };
      }
      return {};
    }),
    actions: {
      send: (text) => send(app, text),
      openSession: (record) => openSession(app, record),
      switchDialect: (dialect) => switchDialect(app, dialect),
    },
  };
  return app;
}

/** @param {App} app */
function wire(app) {
  const { state, els } = app;
  els.composer.addEventListener('submit', (e) => {
    e.preventDefault();
    send(app, els.input.value);
  });
  els.input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send(app, els.input.value);
    }
  });
  els.input.addEventListener('input', () => autosize(app));
  els.stop.addEventListener('click', () => state.active?.run.cancel());
  for (const input of els.composer.querySelectorAll('input[name="agent"]')) {
    if (input instanceof HTMLInputElement) input.addEventListener('change', () => input.checked && setAgent(app, input.value));
  }
  els.adaptive.addEventListener('change', () => {
    state.adaptive = els.adaptive.checked;
    prefs.set('adaptive', state.adaptive);
  });
  els.dialect.addEventListener('change', () => switchDialect(app, els.dialect.value));
  els.newChat.addEventListener('click', () => {
    openSession(app, newRecord());
    els.input.focus();
  });
  els.sessionId.addEventListener('click', () => state.session && navigator.clipboard?.writeText(state.session.id).catch(() => {}));
  els.contextRefresh.addEventListener('click', () => refreshContext(app));
  els.compact.addEventListener('click', () => compactNow(app));
  els.ping.addEventListener('click', async () => {
    try {
      if (!state.client) throw new Error('not connected');
      state.conn.ping = await state.client.ping();
    } catch (e) {
      state.conn.ping = null;
      showBanner(app, `Ping failed: ${messageOf(e)}`, 'warn', 4000);
    }
    renderConnDetails(app);
  });
  els.theme.addEventListener('click', toggleTheme);
  els.theme2.addEventListener('click', toggleTheme);
  els.toggleSidebar.addEventListener('click', () => toggle(app, 'sidebar'));
  els.toggleInspector.addEventListener('click', () => toggle(app, 'inspector'));
  els.scrim.addEventListener('click', () => closeDrawers(app));
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && !els.scrim.hidden) closeDrawers(app);
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
    if (state.session) openSession(app, state.session);
    loadAgents(app);
  });
  // Another tab changed the list (a new session, a title): show it here too.
  window.addEventListener('storage', (e) => {
    if (e.key !== 'weft.sessions.v1' || !state.session) return;
    const saved = sessions.get(state.session.id);
    if (saved && saved.title && !state.session.title) {
      state.session.title = saved.title;
      renderHeader(app);
    }
    renderSessions(app);
  });
  drawer.sidebar.addEventListener('change', () => layout(app));
  drawer.inspector.addEventListener('change', () => layout(app));
  layout(app);
}

async function main() {
  const params = new URLSearchParams(location.search);
  const app = createApp(params);
  wire(app);
  renderSuggestions(app);
  try {
    await init();
  } catch (e) {
    showBanner(app, `Could not load weft-sdk: ${messageOf(e)}`, 'error');
    return;
  }
  const wanted = params.get('session');
  const record =
    (wanted ? (sessions.get(wanted) ?? { ...newRecord(), id: wanted }) : null) ?? sessions.get(prefs.get('active')) ?? sessions.list()[0] ?? newRecord();
  await openSession(app, record);
  await loadAgents(app);
  document.documentElement.dataset.ready = 'true';
}

main();
