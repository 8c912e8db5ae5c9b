// The stored history of a session through `client.userMessages()` (loom), page by page, and
// the run still streaming when the page was (re)loaded, followed with `client.follow()`.

import { assistantBubble, note, userBubble } from './chat.mjs';
import { h, messageOf } from './dom.mjs';
import { autoscroll, updateWelcome } from './page.mjs';
import { addRun, watch } from './runs.mjs';
import { servedBy, serves } from './state.mjs';

/**
 * @typedef {import('./state.mjs').App} App
 * @typedef {import('weft-sdk').Client} Client
 */

/**
 * The open session's stored history, or why this dialect cannot show it.
 * @param {App} app
 * @param {Client | null} client the session's (null: none could be made)
 */
export async function loadHistory(app, client) {
  const { state, els, actions } = app;
  const { session } = state;
  if (!session) return;
  if (!serves(session.dialect, 'userMessages')) {
    const loom = servedBy('userMessages');
    els.history.replaceChildren(
      h(
        'div',
        { class: 'history-note' },
        h('strong', { text: `History needs ${loom}. ` }),
        `This session speaks ${session.dialect}; its stored messages come from ${loom}’s user_messages request, which ${session.dialect} has no message for. `,
        h('button', { class: 'btn small', type: 'button', onclick: () => actions.switchDialect(loom) }, `Switch to ${loom}`),
      ),
    );
    return;
  }
  if (!client) return;
  try {
    const page = await client.userMessages(session.id, { limit: 50 });
    if (client !== state.client) return;
    const active = page.activeRunId && !state.runs.has(page.activeRunId) ? page.activeRunId : null;
    // A run still streaming (the page was reloaded, or another tab or device started it): its
    // user message is the last one stored; the run's own view shows it, with the reply as it
    // streams — replayed from the run's start, then live.
    const last = page.messages.at(-1);
    const message = active && last?.role === 'user' ? page.messages.pop()?.content : undefined;
    showHistory(app, page, false);
    if (active && !state.active) watch(app, client.follow(active), addRun(app, { runId: active, message, own: false }));
  } catch (e) {
    if (client !== state.client) return;
    els.history.replaceChildren(note(`Could not load the history: ${messageOf(e)}`, 'error'));
  }
}

/**
 * @param {App} app
 * @param {import('weft-sdk').UserMessagesPage} page
 * @param {boolean} older a page before the ones shown
 */
function showHistory(app, page, older) {
  const { state, els } = app;
  const items = page.messages.map((m) => (m.role === 'user' ? userBubble(m.content) : assistantBubble(m.content)));
  const block = h('div', { class: 'history-page' }, items);
  const more = els.history.querySelector('.history-more');
  more?.remove();
  if (older) els.history.prepend(block);
  else els.history.replaceChildren(block);
  if (page.hasMore && page.messages.length) {
    const before = page.messages[0].id;
    els.history.prepend(
      h(
        'button',
        {
          class: 'btn small history-more',
          type: 'button',
          onclick: async () => {
            const { client, session } = state;
            if (!client || !session) return;
            const next = await client.userMessages(session.id, { before, limit: 50 });
            if (client === state.client) showHistory(app, next, true);
          },
        },
        'Load earlier messages',
      ),
    );
  }
  if (!older && page.messages.length) {
    els.history.append(h('div', { class: 'history-divider', text: 'earlier in this session · stored on the server, loaded with user_messages' }));
  }
  updateWelcome(app);
  autoscroll(app, true);
}
