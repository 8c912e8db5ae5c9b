// The composer: the agent picked, the hint under the input, the suggestions of an empty chat.

import { dialectInfo } from 'weft-sdk';

import { AGENT_NAME } from './chat.mjs';
import { h, messageOf } from './dom.mjs';
import { renderActivity } from './panel.mjs';
import { DIALECTS } from './state.mjs';
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
  // What the session's dialect carries (the SDK's dialectInfo), and which dialect carries plans.
  const info = state.session ? dialectInfo(state.session.dialect) : undefined;
  const plans = info?.plans ?? false;
  const runOptions = info?.runOptions ?? false;
  const planner = DIALECTS.find((d) => dialectInfo(d).plans);
  els.adaptiveWrap.hidden = state.agent !== 'got';
  els.adaptive.checked = state.adaptive && runOptions;
  els.adaptive.disabled = !runOptions;
  let hint = 'Enter sends · Shift+Enter for a new line';
  if (state.active) hint = 'Streaming… Enter will send once this run ends.';
  else if ((state.agent === 'tot' || state.agent === 'got') && !plans) hint = `The live ${state.agent === 'tot' ? 'tree' : 'graph'} needs ${planner}`;
  else if (state.agent === 'got' && !runOptions) hint = `adaptive needs ${DIALECTS.find((d) => dialectInfo(d).runOptions)}`;
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

/**
 * Adds the operator's own agents (the server's `AGENTS` variants, from `client.agents()`) to
 * the picker after the four, each titled with its description; a variant picked on an earlier
 * visit is picked again. A server that cannot say (an original server) keeps the four.
 * @param {App} app
 */
export async function loadAgents(app) {
  const { state, els } = app;
  let agents;
  try {
    agents = (await state.client?.agents())?.agents ?? [];
  } catch (e) {
    console.warn(`weft demo: the server's agents could not be listed: ${messageOf(e)}`);
    return;
  }
  const picker = els.composer.querySelector('.agents');
  if (!picker) return;
  for (const old of picker.querySelectorAll('label[data-operator]')) old.remove();
  const shown = new Set([...picker.querySelectorAll('input[name="agent"]')].map((i) => (i instanceof HTMLInputElement ? i.value : '')));
  for (const { name, description } of agents) {
    if (shown.has(name)) continue;
    /** @type {HTMLInputElement} */
    const input = h('input', { type: 'radio', name: 'agent', value: name, onchange: () => input.checked && setAgent(app, name) });
    picker.append(h('label', { title: description, dataset: { operator: '' } }, input, h('span', { text: name })));
  }
  const picked = prefs.get('agent');
  if (picked && agents.some((a) => a.name === picked)) state.agent = picked;
  renderComposer(app);
}
