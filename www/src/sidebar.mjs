// The sidebar's list of sessions (kept in localStorage) and the header that names the open one.

import { ago, h } from './dom.mjs';
import { newRecord } from './state.mjs';
import { sessions } from './store.mjs';

/** @typedef {import('./state.mjs').App} App */

/** @param {App} app */
export function renderSessions(app) {
  const { state, els, actions } = app;
  const list = sessions.list();
  const current = state.session;
  const rows = list.map((s) =>
    h(
      'div',
      { class: `session${current?.id === s.id ? ' is-active' : ''}`, dataset: { id: s.id } },
      h(
        'button',
        { class: 'session-open', type: 'button', onclick: () => current?.id !== s.id && actions.openSession(s) },
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
            if (current?.id === s.id) actions.openSession(sessions.list()[0] ?? newRecord());
            else renderSessions(app);
          },
        },
        '×',
      ),
    ),
  );
  if (current && !list.some((s) => s.id === current.id)) {
    rows.unshift(
      h(
        'div',
        { class: 'session is-active is-draft' },
        h(
          'span',
          { class: 'session-open' },
          h('span', { class: 'session-title', text: 'New chat' }),
          h('span', { class: 'session-meta', text: `${current.dialect} · not started` }),
        ),
      ),
    );
  }
  els.sessions.replaceChildren(...rows);
}

/** @param {App} app */
export function renderHeader({ state, els }) {
  const s = state.session;
  if (!s) return;
  els.title.textContent = s.title || 'New chat';
  els.sessionId.textContent = `session ${s.id.slice(0, 8)}`;
  els.sessionId.title = `${s.id} — click to copy`;
  els.dialect.value = s.dialect;
  document.title = s.title ? `${s.title} · weft` : 'weft · agent chat';
}
