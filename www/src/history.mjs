// The stored history of a session through `client.userMessages()` (loom), page by page, and
// the run still streaming when the page was (re)loaded, followed with `client.follow()`.

import { assistantBubble, note, userBubble } from './chat.mjs';
import { updateWelcome } from './composer.mjs';
import { h } from './dom.mjs';
import { autoscroll } from './page.mjs';
import { addRun, watch } from './runs.mjs';
import { switchDialect } from './sessions.mjs';
import { els, servedBy, serves, state } from './state.mjs';

export async function loadHistory(client) {
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
