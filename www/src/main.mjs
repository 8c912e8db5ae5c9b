// weft's demo chat app: one page on the public weft-sdk API. A `Client` per session (in the
// dialect the user picks), `client.run()` per message, every event of every run of the session
// through `client.onEvent`, approvals through `client.onApproval`, the connection's state through
// `client.onStatus`, the stored history through `client.userMessages()` (loom), and the context
// window through `contextInfo()` / `compact()` (agentloop: a short-lived agentloop client on the
// same session when the page speaks another dialect).
//
// No provider key is ever here: the server holds the keys and runs the model.
//
// This module wires the page's controls and starts it; the parts live by concern: state.mjs
// (elements, state, what each dialect serves), connection.mjs, runs.mjs, history.mjs,
// sessions.mjs, composer.mjs, panel.mjs (the agent panel) and page.mjs (banner, scrolling,
// drawers, theme).

import init from 'weft-sdk';

import { autosize, loadAgents, renderSuggestions, setAgent } from './composer.mjs';
import { closeDrawers, drawer, layout, showBanner, toggle, toggleTheme } from './page.mjs';
import { compactNow, refreshContext, renderConnDetails } from './panel.mjs';
import { send } from './runs.mjs';
import { newRecord, openSession, renderHeader, renderSessions, switchDialect } from './sessions.mjs';
import { $, defaultServer, els, params, state } from './state.mjs';
import { prefs, sessions } from './store.mjs';

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
    loadAgents();
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
  await loadAgents();
  document.documentElement.dataset.ready = 'true';
}

main();
