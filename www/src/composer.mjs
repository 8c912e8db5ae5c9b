// The composer: the agent picked, the hint under the input, the suggestions of an empty chat.

import { AGENT_NAME } from './chat.mjs';
import { h } from './dom.mjs';
import { renderActivity } from './panel.mjs';
import { prefs } from './store.mjs';

/** @typedef {import('./state.mjs').App} App */

const SUGGESTIONS = [
  { text: 'What time is it?', agent: 'react', tip: 'calls a tool' },
  { text: 'Write hello to notes.txt', agent: 'react', tip: 'asks for your approval' },
  { text: 'What time is it; calculate 6*7', agent: 'got', tip: 'plans a graph' },
  { text: 'What time is it? dead end', agent: 'tot', tip: 'scores and backtracks' },
  { text: 'Explain `ls -la`', agent: 'react', tip: 'Markdown reply' },
  { text: 'Count to 60', agent: 'dup', tip: 'understand, plan, answer' },
];

/** @param {App} app */
export function renderComposer({ state, els }) {
  for (const input of els.composer.querySelectorAll('input[name="agent"]')) if (input instanceof HTMLInputElement) input.checked = input.value === state.agent;
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

/** @param {App} app */
export function autosize({ els }) {
  els.input.style.height = 'auto';
  els.input.style.height = `${Math.min(els.input.scrollHeight, 200)}px`;
}

/** @param {App} app */
export function renderSuggestions(app) {
  const { els } = app;
  els.suggestions.replaceChildren(
    ...SUGGESTIONS.map((s) =>
      h(
        'button',
        {
          class: 'suggestion',
          type: 'button',
          onclick: () => {
            setAgent(app, s.agent);
            app.actions.send(s.text);
          },
        },
        h('span', { class: 'suggestion-text', text: s.text }),
        h('span', { class: 'suggestion-tip', text: `${AGENT_NAME[s.agent]} · ${s.tip}` }),
      ),
    ),
  );
}

/**
 * @param {App} app
 * @param {string} agent
 */
export function setAgent(app, agent) {
  const { state } = app;
  state.agent = agent;
  prefs.set('agent', agent);
  renderComposer(app);
  if (!state.followed) renderActivity(app);
}
