// The composer: the agent picked, the hint under the input, the suggestions of an empty chat.

import { dialectInfo } from 'weft-sdk';

import { AGENT_NAME } from './chat.mjs';
import { h } from './dom.mjs';
import { renderActivity } from './panel.mjs';
import { send } from './runs.mjs';
import { DIALECTS, els, state } from './state.mjs';
import { prefs } from './store.mjs';

const SUGGESTIONS = [
  { text: 'What time is it?', agent: 'react', tip: 'calls a tool' },
  { text: 'Write hello to notes.txt', agent: 'react', tip: 'asks for your approval' },
  { text: 'What time is it; calculate 6*7', agent: 'got', tip: 'plans a graph' },
  { text: 'What time is it? dead end', agent: 'tot', tip: 'scores and backtracks' },
  { text: 'Explain `ls -la`', agent: 'react', tip: 'Markdown reply' },
  { text: 'Count to 60', agent: 'dup', tip: 'understand, plan, answer' },
];

export function renderComposer() {
  for (const input of els.composer.querySelectorAll('input[name="agent"]')) input.checked = input.value === state.agent;
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

export function autosize() {
  els.input.style.height = 'auto';
  els.input.style.height = `${Math.min(els.input.scrollHeight, 200)}px`;
}

export function updateWelcome() {
  const empty = !state.runs.size && !els.history.querySelector('.history-page .msg') && !els.history.querySelector('.history-note');
  els.welcome.hidden = !empty;
}

export function renderSuggestions() {
  els.suggestions.replaceChildren(
    ...SUGGESTIONS.map((s) =>
      h(
        'button',
        {
          class: 'suggestion',
          type: 'button',
          onclick: () => {
            setAgent(s.agent);
            send(s.text);
          },
        },
        h('span', { class: 'suggestion-text', text: s.text }),
        h('span', { class: 'suggestion-tip', text: `${AGENT_NAME[s.agent]} · ${s.tip}` }),
      ),
    ),
  );
}

export function setAgent(agent) {
  state.agent = agent;
  prefs.set('agent', agent);
  renderComposer();
  if (!state.followed) renderActivity();
}

/**
 * Adds the operator's own agents (the server's `AGENTS` variants, from `client.agents()`) to
 * the picker after the four, each titled with its description; a variant picked on an earlier
 * visit is picked again. A server that cannot say (an original server) keeps the four.
 */
export async function loadAgents() {
  let agents;
  try {
    agents = (await state.client?.agents())?.agents ?? [];
  } catch (e) {
    console.warn(`weft demo: the server's agents could not be listed: ${e.message}`);
    return;
  }
  const picker = els.composer.querySelector('.agents');
  for (const old of picker.querySelectorAll('label[data-operator]')) old.remove();
  const shown = new Set([...picker.querySelectorAll('input[name="agent"]')].map((i) => i.value));
  for (const { name, description } of agents) {
    if (shown.has(name)) continue;
    const input = h('input', { type: 'radio', name: 'agent', value: name, onchange: () => input.checked && setAgent(name) });
    picker.append(h('label', { title: description, dataset: { operator: '' } }, input, h('span', { text: name })));
  }
  if (agents.some((a) => a.name === prefs.get('agent'))) state.agent = prefs.get('agent');
  renderComposer();
}
