// Sessions: opening one (a new `Client`, its history, the panel) and switching its dialect.

import { renderComposer } from './composer.mjs';
import { clearResumed, closeClient, connect, renderConnDetails } from './connection.mjs';
import { loadHistory } from './history.mjs';
import { addNote, closeDrawers, hideBanner, updateWelcome } from './page.mjs';
import { refreshContext, renderActivity, renderContext, renderUsage } from './panel.mjs';
import { onEvent, setActive } from './runs.mjs';
import { renderHeader, renderSessions } from './sidebar.mjs';
import { isDialect, serves } from './state.mjs';
import { prefs, sessions } from './store.mjs';

/** @typedef {import('./state.mjs').App} App */

/**
 * Shows `record` (and connects to it) in place of the open session.
 * @param {App} app
 * @param {import('./store.mjs').SessionRecord} record
 */
export async function openSession(app, record) {
  const { state, els } = app;
  closeClient(app);
  app.approvals.reset();
  clearResumed();
  hideBanner(app);
  state.runs.clear();
  state.followed = null;
  state.context = null;
  setActive(app, null);
  els.history.replaceChildren();
  els.runs.replaceChildren();
  state.session = record;
  prefs.set('active', record.id);
  closeDrawers(app);
  renderHeader(app);
  renderSessions(app);
  renderComposer(app);
  renderActivity(app);
  renderContext(app);
  renderUsage(app);
  updateWelcome(app);
  const client = connect(app, onEvent);
  if (!client) return;
  await loadHistory(app, client);
  if (client === state.client) refreshContext(app);
}

/**
 * Speaks `dialect` on the open session from now on (a new socket).
 * @param {App} app
 * @param {string} dialect
 */
export function switchDialect(app, dialect) {
  const { state, els } = app;
  if (!state.session) return;
  if (state.active || !isDialect(dialect) || dialect === state.session.dialect) {
    els.dialect.value = state.session.dialect;
    return;
  }
  const from = state.session.dialect;
  state.session.dialect = dialect;
  prefs.set('dialect', dialect);
  if (sessions.get(state.session.id)) sessions.save(state.session);
  if (serves(dialect, 'userMessages')) {
    // loom can read the stored history: show the session whole.
    openSession(app, state.session);
    return;
  }
  closeClient(app);
  const client = connect(app, onEvent);
  addNote(app, `Now speaking ${dialect} instead of ${from}: same session, new socket.`, 'info');
  if (!els.history.childElementCount && !state.runs.size) loadHistory(app, client);
  renderHeader(app);
  renderSessions(app);
  renderComposer(app);
  renderActivity(app);
  renderConnDetails(app);
}
