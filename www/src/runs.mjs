// Runs: sending a message with `client.run()`, every event of every run of the session through
// `client.onEvent`, and the run this page is streaming (Stop cancels it).

import { dialectInfo } from 'weft-sdk';

import { RunView } from './chat.mjs';
import { autosize, renderComposer, updateWelcome } from './composer.mjs';
import { fmt, throttled } from './dom.mjs';
import { addNote, autoscroll, showBanner, toggle } from './page.mjs';
import { refreshContext, renderActivity, renderUsage, setContext } from './panel.mjs';
import { renderHeader, renderSessions } from './sessions.mjs';
import { els, state, titleOf } from './state.mjs';
import { sessions } from './store.mjs';

export function onEvent(ev) {
  switch (ev.type) {
    case 'context_info':
      setContext({
        tokenCount: ev.token_count,
        usagePercent: ev.usage_percent,
        transcriptLength: ev.transcript_length,
        maxTokens: ev.max_tokens,
        strategy: ev.strategy,
      });
      break;
    case 'context_compacted':
      if (!state.compacting) addNote(compactionText(ev.old_token_count, ev.new_token_count, ev.reduction_percent), 'info');
      if (state.context) setContext({ ...state.context, tokenCount: ev.new_token_count, usagePercent: (ev.new_token_count * 100) / state.context.maxTokens });
      break;
    default:
      break;
  }
  const id = ev.run_id;
  let view = id ? state.runs.get(id) : undefined;
  if (!view && id && ev.type === 'run_start') {
    // A run another tab (or another dialect's socket) started in this session.
    view = addRun({ runId: id, message: ev.message, agent: ev.agent, own: false });
    if (!state.session.title && ev.message) {
      state.session.title = titleOf(ev.message);
      state.session.updatedAt = Date.now();
      sessions.save(state.session);
      renderSessions();
      renderHeader();
    }
  }
  view?.apply(ev);
}

export function compactionText(before, after, percent) {
  return `Context compacted: ${fmt(before)} → ${fmt(after)} tokens (−${Number(percent).toFixed(1)} %). The older turns are now a summary.`;
}

const onRunChange = throttled(() => {
  renderActivity();
  renderUsage();
  autoscroll();
});

export function addRun({ runId, message, agent, own }) {
  const view = new RunView({ runId, message, agent, dialect: state.session.dialect, own, onChange: onRunChange });
  // Clicking a run's footer shows that run in the panel.
  view.meta.title = 'Show this run in the agent panel';
  view.meta.addEventListener('click', () => {
    state.followed = view;
    renderActivity();
    if (els.app.dataset.inspector !== 'open') toggle('inspector');
  });
  state.runs.set(runId, view);
  els.runs.append(view.el);
  state.followed = view;
  updateWelcome();
  renderActivity();
  autoscroll(true);
  return view;
}

export function send(text) {
  const message = text.trim();
  const { session, client } = state;
  if (!message || !client || state.active) return;
  if (!session.title) session.title = titleOf(message);
  session.updatedAt = Date.now();
  sessions.save(session);
  renderSessions();
  renderHeader();
  const options = { message, agent: state.agent };
  if (state.agent === 'got' && state.adaptive && dialectInfo(session.dialect).runOptions) options.gotAdaptive = true;
  let run;
  try {
    run = client.run(options);
  } catch (e) {
    showBanner(e.message, 'error', 6000);
    return;
  }
  els.input.value = '';
  autosize();
  watch(run, addRun({ runId: run.runId, message, agent: state.agent, own: true }));
}

/** Shows `run` as this page's running run (Stop cancels it) until it settles. */
export function watch(run, view) {
  setActive({ run, view });
  run.result
    .then(
      (r) => view.finish(r.reply, r.totalUsage),
      (e) => view.fail(e.code, e.message),
    )
    .finally(() => {
      if (state.active?.run === run) setActive(null);
      renderUsage();
      // loom and agentloop runs report the context as they go; the others do not.
      if (!dialectInfo(view.dialect).reportsContext && view.dialect === state.session?.dialect) refreshContext();
    });
}

export function setActive(active) {
  state.active = active;
  els.send.hidden = Boolean(active);
  els.stop.hidden = !active;
  els.dialect.disabled = Boolean(active);
  els.compact.disabled = Boolean(active);
  els.app.dataset.running = active ? 'true' : 'false';
  renderComposer();
}
