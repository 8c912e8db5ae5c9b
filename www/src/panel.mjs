// The agent panel: the followed run's activity (steps, ToT tree, GoT graph), the context window
// (`contextInfo()` / `compact()`) and token usage.

import { dialectInfo } from 'weft-sdk';

import { AGENT_NAME } from './chat.mjs';
import { withAgentloop } from './connection.mjs';
import { fmt, h, messageOf } from './dom.mjs';
import { renderGot } from './got.mjs';
import { addNote } from './page.mjs';
import { DIALECTS, serves } from './state.mjs';
import { renderTot } from './tot.mjs';

/**
 * @typedef {import('./state.mjs').App} App
 * @typedef {import('./state.mjs').ContextView} ContextView
 * @typedef {import('./chat.mjs').RunView} RunView
 */

/**
 * Where the run's dialect carries no plans (`dialectInfo().plans`): which dialect does.
 * @param {App} app
 * @param {string} what
 */
function needsPlans({ state, actions }, what) {
  const planner = DIALECTS.find((d) => dialectInfo(d).plans) ?? 'loom';
  return h(
    'div',
    { class: 'viz-empty' },
    h('p', { text: `${what} come from ${planner} events, which only the ${planner} dialect carries. This session speaks ${state.session?.dialect}.` }),
    state.active ? null : h('button', { class: 'btn small', type: 'button', onclick: () => actions.switchDialect(planner) }, `Switch to ${planner}`),
  );
}

/** @type {Record<string, string>} */
const AGENT_ABOUT = {
  react: 'ReAct thinks, calls tools, and answers. Its steps show here as they happen.',
  dup: 'DUP understands the request, plans, acts and observes until a plan needs no tools.',
  tot: 'Tree of thoughts proposes candidate steps, scores them, acts on the best and backtracks from dead ends. The tree grows here.',
  got: 'Graph of thoughts plans sub-tasks as a graph and runs independent ones side by side. The graph shows here, node by node.',
};

let activityKey = '';

/** @param {App} app */
export function renderActivity(app) {
  const { state, els } = app;
  const v = state.followed;
  els.toggleInspector.dataset.live = v?.running ? 'true' : 'false';
  // Redraw only when what the panel shows changed (not for every streamed word).
  const key = v
    ? `${v.runId}|${v.status}|${v.dialect}|${v.spans.map((s) => `${s.id}${s.state}${s.tools.length}`).join()}|${v.tot?.version}|${v.got?.version}|${state.session?.dialect}`
    : `none|${state.agent}`;
  if (key === activityKey && els.activity.childElementCount) return;
  activityKey = key;
  if (!v) {
    els.activityTitle.textContent = AGENT_NAME[state.agent];
    els.activityStatus.textContent = '';
    els.activity.replaceChildren(h('p', { class: 'muted', text: AGENT_ABOUT[state.agent] }));
    return;
  }
  const plans = dialectInfo(v.dialect).plans;
  els.activityTitle.textContent = AGENT_NAME[v.agent] ?? v.agent;
  els.activityStatus.textContent = v.running ? 'running' : v.status;
  els.activityStatus.dataset.status = v.status;
  let body;
  if (v.agent === 'got')
    body = v.got
      ? renderGot(v.got)
      : plans
        ? h('div', { class: 'viz-empty', text: 'Planning the graph…' })
        : needsPlans(app, 'The plan and its nodes (got_plan, got_node_*, got_expand)');
  else if (v.agent === 'tot')
    body = v.tot
      ? renderTot(v.tot, v.running)
      : plans
        ? h('div', { class: 'viz-empty', text: 'Proposing the first candidates…' })
        : needsPlans(app, 'The tree (tot_expand, tot_evaluate, tot_backtrack)');
  else
    body = v.spans.length
      ? renderSpans(v)
      : plans
        ? h('div', { class: 'viz-empty', text: 'Starting…' })
        : needsPlans(app, 'The agent’s steps (node_enter / node_exit)');
  els.activity.replaceChildren(h('p', { class: 'activity-run', title: v.message, text: v.message ? `“${v.message}”` : '' }), body);
}

/** @param {RunView} v */
function renderSpans(v) {
  return h(
    'ol',
    { class: 'spans' },
    v.spans.map((s) =>
      h(
        'li',
        { class: `span is-${s.state}`, dataset: { span: s.id } },
        h('span', { class: 'span-dot', 'aria-hidden': 'true' }),
        h('span', { class: 'span-name', text: s.id.replace(/_/g, ' ') }),
        s.tools.length ? h('span', { class: 'span-tools', text: s.tools.join(', ') }) : null,
      ),
    ),
  );
}

/**
 * @param {App} app
 * @param {ContextView | null} info
 */
export function setContext(app, info) {
  app.state.context = info;
  renderContext(app);
}

/** @param {App} app */
export function renderContext({ state, els }) {
  const c = state.context;
  const agentloop = state.session ? serves(state.session.dialect, 'compact') : false;
  els.compact.title = agentloop
    ? 'Summarise the older turns now (manual_compact)'
    : `Summarise the older turns now: manual_compact is an agentloop message, so the page sends it on a short-lived agentloop socket to this session`;
  if (!c) {
    els.contextFill.style.width = '0%';
    els.contextTokens.textContent = '—';
    els.contextPercent.textContent = '';
    els.contextStrategy.textContent = '';
    els.contextNote.textContent = 'Filled in by the runs’ context_info events, or Refresh.';
    return;
  }
  const pct = Math.max(0, Math.min(100, c.usagePercent));
  els.contextFill.style.width = `${Math.max(pct, 0.8)}%`;
  els.contextMeter.dataset.level = pct >= 80 ? 'high' : pct >= 60 ? 'mid' : 'low';
  els.contextMeter.setAttribute('aria-valuenow', pct.toFixed(1));
  els.contextTokens.textContent = `${fmt(c.tokenCount)} / ${fmt(c.maxTokens)} tokens`;
  els.contextPercent.textContent = `${pct.toFixed(1)} %`;
  els.contextStrategy.textContent = c.strategy;
  els.contextNote.textContent = `${fmt(c.transcriptLength)} item${c.transcriptLength === 1 ? '' : 's'} in the history; the server compacts on its own at 80 %.`;
}

/** @param {App} app */
export async function refreshContext(app) {
  const { state, els } = app;
  const session = state.session;
  els.contextRefresh.disabled = true;
  try {
    const info = await withAgentloop(app, (c) => c.contextInfo());
    if (session === state.session) setContext(app, info);
  } catch (e) {
    if (session === state.session) els.contextNote.textContent = `Could not ask the server: ${messageOf(e)}`;
  } finally {
    els.contextRefresh.disabled = false;
  }
}

/** @param {App} app */
export async function compactNow(app) {
  const { state, els } = app;
  if (state.active || state.compacting) return;
  const session = state.session;
  state.compacting = true;
  els.compact.disabled = true;
  els.compact.textContent = 'Compacting…';
  try {
    const r = await withAgentloop(app, (c) => c.compact());
    if (session !== state.session) return;
    addNote(app, compactionText(r.oldTokenCount, r.newTokenCount, r.reductionPercent), 'info');
    await refreshContext(app);
  } catch (err) {
    if (session !== state.session) return;
    const e = /** @type {Error & { code?: string }} */ (err);
    addNote(
      app,
      e.code === 'empty_transcript' ? 'Nothing to compact yet: the conversation is empty.' : `Could not compact: ${e.message}${e.code ? ` (${e.code})` : ''}`,
      'warn',
    );
  } finally {
    state.compacting = false;
    els.compact.textContent = 'Compact now';
    els.compact.disabled = Boolean(state.active);
  }
}

/**
 * @param {number} before
 * @param {number} after
 * @param {number} percent
 */
export function compactionText(before, after, percent) {
  return `Context compacted: ${fmt(before)} → ${fmt(after)} tokens (−${Number(percent).toFixed(1)} %). The older turns are now a summary.`;
}

/** @param {App} app */
export function renderUsage({ state, els }) {
  const views = [...state.runs.values()];
  const done = views.filter((v) => !v.running);
  const sum = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  for (const v of views) {
    const u = v.usage();
    sum.prompt_tokens += u.prompt_tokens;
    sum.completion_tokens += u.completion_tokens;
    sum.total_tokens += u.total_tokens;
  }
  const last = state.followed;
  const rows = [
    h(
      'div',
      { class: 'usage-total' },
      h('span', { class: 'big', text: fmt(sum.total_tokens) }),
      h('span', { class: 'muted', text: ` tokens in ${views.length} run${views.length === 1 ? '' : 's'} on this page` }),
    ),
    h(
      'div',
      { class: 'usage-split' },
      h('span', {}, h('b', { text: fmt(sum.prompt_tokens) }), ' in'),
      h('span', {}, h('b', { text: fmt(sum.completion_tokens) }), ' out'),
      h('span', {}, h('b', { text: String(done.length) }), ' finished'),
    ),
  ];
  if (last && last.calls.length) {
    const u = last.usage();
    rows.push(
      h(
        'div',
        { class: 'usage-run' },
        h(
          'div',
          { class: 'usage-run-head' },
          h('span', { text: 'Last run' }),
          h('span', { class: 'muted', text: `${fmt(u.total_tokens)} tokens · ${last.calls.length} call${last.calls.length === 1 ? '' : 's'}` }),
        ),
        h(
          'ol',
          { class: 'usage-calls' },
          last.calls
            .slice(-8)
            .map((c, i) =>
              h(
                'li',
                {},
                h('span', { class: 'muted', text: `#${last.calls.length - Math.min(8, last.calls.length) + i + 1}` }),
                h(
                  'span',
                  { class: 'bar' },
                  h('span', { class: 'bar-in', style: { width: `${(c.prompt_tokens / Math.max(...last.calls.map((x) => x.total_tokens))) * 100}%` } }),
                ),
                h('span', { text: `${fmt(c.prompt_tokens)} in · ${fmt(c.completion_tokens)} out` }),
              ),
            ),
        ),
      ),
    );
  }
  els.usage.replaceChildren(...rows);
}
