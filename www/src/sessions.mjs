// Sessions: the list in the sidebar (kept in localStorage), opening one, switching its dialect,
// and the header that names it.

import { renderComposer, updateWelcome } from './composer.mjs';
import { approvals, clearResumed, closeClient, connect } from './connection.mjs';
import { ago, h } from './dom.mjs';
import { loadHistory } from './history.mjs';
import { addNote, closeDrawers, hideBanner } from './page.mjs';
import { refreshContext, renderActivity, renderConnDetails, renderContext, renderUsage } from './panel.mjs';
import { setActive } from './runs.mjs';
import { DIALECTS, els, serves, state, uuid } from './state.mjs';
import { prefs, sessions } from './store.mjs';

export function newRecord() {
  const now = Date.now();
  return { id: uuid(), title: '', dialect: DIALECTS.includes(prefs.get('dialect')) ? prefs.get('dialect') : 'loom', createdAt: now, updatedAt: now };
}

export async function openSession(record) {
  closeClient();
  approvals.reset();
  clearResumed();
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

export function switchDialect(dialect) {
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

export function renderSessions() {
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

export function renderHeader() {
  const s = state.session;
  els.title.textContent = s.title || 'New chat';
  els.sessionId.textContent = `session ${s.id.slice(0, 8)}`;
  els.sessionId.title = `${s.id} — click to copy`;
  els.dialect.value = s.dialect;
  document.title = s.title ? `${s.title} · weft` : 'weft · agent chat';
}
