// Runs: sending a message with `client.run()`, every event of every run of the session through
// `client.onEvent`, and the run this page is streaming (Stop cancels it).

import { dialectInfo } from 'weft-sdk';

import { RunView } from './chat.mjs';
import { autosize, renderComposer } from './composer.mjs';
import { messageOf, throttled } from './dom.mjs';
import { addNote, autoscroll, showBanner, toggle, updateWelcome } from './page.mjs';
import { compactionText, refreshContext, renderActivity, renderUsage, setContext } from './panel.mjs';
import { renderHeader, renderSessions } from './sidebar.mjs';
import { titleOf } from './state.mjs';
import { sessions } from './store.mjs';

/** @typedef {import('./state.mjs').App} App */

/**
 * Every event of every run of the session (`client.onEvent`).
 * @param {App} app
 * @param {import('weft-sdk').RunEvent} ev
 */
export function onEvent(app, ev) {
  const { state } = app;
  switch (ev.type) {
    case 'context_info':
      setContext(app, {
        tokenCount: ev.token_count,
        usagePercent: ev.usage_percent,
        transcriptLength: ev.transcript_length,
        maxTokens: ev.max_tokens,
        strategy: ev.strategy,
      });
      break;
    case 'context_compacted':
      if (!state.compacting) addNote(app, compactionText(ev.old_token_count, ev.new_token_count, ev.reduction_percent), 'info');
      if (state.context)
        setContext(app, { ...state.context, tokenCount: ev.new_token_count, usagePercent: (ev.new_token_count * 100) / state.context.maxTokens });
      break;
    default:
      break;
  }
  const id = ev.run_id;
  let view = id ? state.runs.get(id) : undefined;
  if (!view && id && ev.type === 'run_start') {
    // A run another tab (or another dialect's socket) started in this session.
    view = addRun(app, { runId: id, message: ev.message, agent: ev.agent, own: false });
    if (state.session && !state.session.title && ev.message) {
      state.session.title = titleOf(ev.message);
      state.session.updatedAt = Date.now();
      sessions.save(state.session);
      renderSessions(app);
      renderHeader(app);
    }
  }
  view?.apply(ev);
}

const onRunChange = throttled((/** @type {App} */ app) => {
  renderActivity(app);
  renderUsage(app);
  autoscroll(app);
});

/**
 * A run's view, added to the chat and followed by the panel.
 * @param {App} app
 * @param {{ runId: string, message?: string, agent?: string, own: boolean }} run
 */
export function addRun(app, { runId, message, agent, own }) {
  const { state, els } = app;
  if (!state.session) throw new Error('a run needs an open session');
  const view = new RunView({ runId, message, agent, dialect: state.session.dialect, own, onChange: () => onRunChange(app) });
  // Clicking a run's footer shows that run in the panel.
  view.meta.title = 'Show this run in the agent panel';
  view.meta.addEventListener('click', () => {
    state.followed = view;
    renderActivity(app);
    if (els.app.dataset.inspector !== 'open') toggle(app, 'inspector');
  });
  state.runs.set(runId, view);
  els.runs.append(view.el);
  state.followed = view;
  updateWelcome(app);
  renderActivity(app);
  autoscroll(app, true);
  return view;
}

/**
 * Sends `text` as a new run of the open session, unless one of this page's is streaming.
 * @param {App} app
 * @param {string} text
 */
export function send(app, text) {
  const { state, els } = app;
  const message = text.trim();
  const { session, client } = state;
  if (!message || !session || !client || state.active) return;
  if (!session.title) session.title = titleOf(message);
  session.updatedAt = Date.now();
  sessions.save(session);
  renderSessions(app);
  renderHeader(app);
  /** @type {import('weft-sdk').RunOptions} */
  const options = { message, agent: state.agent };
  if (state.agent === 'got' && state.adaptive && dialectInfo(session.dialect).runOptions) options.gotAdaptive = true;
  let run;
  try {
    run = client.run(options);
  } catch (e) {
    showBanner(app, messageOf(e), 'error', 6000);
    return;
  }
  els.input.value = '';
  autosize(app);
  watch(app, run, addRun(app, { runId: run.runId, message, agent: state.agent, own: true }));
}

/**
 * Shows `run` as this page's running run (Stop cancels it) until it settles.
 * @param {App} app
 * @param {import('weft-sdk').Run} run
 * @param {RunView} view
 */
export function watch(app, run, view) {
  const { state } = app;
  setActive(app, { run, view });
  run.result
    .then(
      (r) => view.finish(r.reply, r.totalUsage),
      (e) => view.fail(e.code, e.message),
    )
    .finally(() => {
      if (state.active?.run === run) setActive(app, null);
      renderUsage(app);
      // loom and agentloop runs report the context as they go; the others do not.
      if (!dialectInfo(view.dialect).reportsContext && view.dialect === state.session?.dialect) refreshContext(app);
    });
}

/**
 * @param {App} app
 * @param {import('./state.mjs').State['active']} active
 */
export function setActive(app, active) {
  const { state, els } = app;
  state.active = active;
  els.send.hidden = Boolean(active);
  els.stop.hidden = !active;
  els.dialect.disabled = Boolean(active);
  els.compact.disabled = Boolean(active);
  els.app.dataset.running = active ? 'true' : 'false';
  renderComposer(app);
}
