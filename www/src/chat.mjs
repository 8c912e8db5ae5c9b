// One run in the chat: the user's message, then what the agent does, in order — its internal
// steps (a ToT proposal, a GoT plan, a DUP understanding), tool calls as cards, its prose —
// and the reply, rendered as Markdown, with the run's token usage underneath.
//
// Everything is driven by the run's events (`client.onEvent`), so a run another tab started
// renders the same way. Text arrives as `message_chunk` deltas (or whole in `llm_complete`, as
// agentchat sends it); one model response runs until its `llm_complete`. Loom's `node_enter`
// names the agent step a response belongs to, which tells the page whether it is prose for the
// user or the agent talking to itself (JSON candidates, scores, a plan).

import { duration, fmt, h, throttled } from './dom.mjs';
import { GotModel, jsonIn } from './got.mjs';
import { renderMarkdown } from './markdown.mjs';
import { ToolCard } from './tools.mjs';
import { TotModel } from './tot.mjs';

/**
 * @typedef {import('weft-sdk').RunEvent} RunEvent
 * @typedef {import('weft-sdk').Usage} Usage
 * @typedef {Extract<RunEvent, { type: 'llm_complete' }>} LlmComplete
 */

/**
 * One model response as it streams: the explanation of a tool call (onto its card), prose for
 * the user, or a step of the agent's own working.
 * @typedef {{ kind: 'explain', text: string, cardsAtStart: number, card: ToolCard, render(): void, done(): void }} ExplainResponse
 * @typedef {{ kind: 'prose', span: string | null, text: string, cardsAtStart: number, el: HTMLDivElement, finished: boolean, render(): void, done(): void }} ProseResponse
 * @typedef {{ kind: 'step', span: string | null | undefined, text: string, cardsAtStart: number, el: HTMLDetailsElement, label: HTMLSpanElement, finished: boolean, render(): void, done(): void }} StepResponse
 * @typedef {ExplainResponse | ProseResponse | StepResponse} Response
 */

/** Agent steps whose model responses are the agent's own working, not prose for the user. */
const INTERNAL = new Set(['think_expand', 'think_evaluate', 'plan_graph', 'understand', 'execute_graph']);

/** @type {Record<string, string>} */
const STEP_LABEL = {
  think_expand: 'Proposing next steps',
  think_evaluate: 'Scoring the candidates',
  plan_graph: 'Planning sub-tasks',
  understand: 'Understanding the request',
  execute_graph: 'Sub-task',
  plan: 'Plan',
  think: 'Thought',
  act: 'Step',
  observe: 'Observation',
  reasoning: 'Reasoning',
};

/** What a finished step says, when its event does not say better. */
/** @type {Record<string, string>} */
const STEP_DONE = {
  think_expand: 'Proposed next steps',
  think_evaluate: 'Scored the candidates',
  plan_graph: 'Planned sub-tasks',
  understand: 'Understood the request',
  reasoning: 'Reasoning',
};

/** @type {Record<string, string>} */
export const AGENT_NAME = { react: 'ReAct', dup: 'DUP', tot: 'Tree of thoughts', got: 'Graph of thoughts' };

/**
 * A model response that is an agent's JSON (candidates, scores, a plan, a judgement).
 * @param {string} text
 */
function agentJson(text) {
  const t = text.trim();
  if (!t.startsWith('{')) return null;
  const json = jsonIn(t);
  return json && ['candidates', 'scores', 'nodes', 'complex'].some((k) => k in json) ? json : null;
}

/**
 * Which agent step wrote a JSON response, when the dialect does not say (no node_enter).
 * @type {[string, string][]}
 */
const JSON_SPAN = [
  ['candidates', 'think_expand'],
  ['scores', 'think_evaluate'],
  ['complex', 'execute_graph'],
  ['nodes', 'plan_graph'],
];

const norm = (/** @type {unknown} */ s) =>
  String(s ?? '')
    .replace(/\s+/g, ' ')
    .trim();

/**
 * A user message bubble.
 * @param {string} text
 */
export function userBubble(text) {
  return h('div', { class: 'msg user' }, h('div', { class: 'bubble', text }));
}

/**
 * A stored assistant message (history).
 * @param {string} text
 */
export function assistantBubble(text) {
  const md = h('div', { class: 'markdown reply' });
  md.innerHTML = renderMarkdown(text);
  return h('div', { class: 'msg assistant' }, avatar(), h('div', { class: 'body' }, md));
}

function avatar() {
  return h('div', { class: 'avatar', 'aria-hidden': 'true' }, 'w');
}

/**
 * A line in the chat that is neither side speaking (a compaction, a dialect switch).
 * @param {string} text
 * @param {string} [kind]
 */
export function note(text, kind = 'info') {
  return h('div', { class: `note is-${kind}`, role: 'status' }, h('span', { text }));
}

export class RunView {
  /**
   * @param {{ runId: string, message?: string, agent?: string, dialect: import('weft-sdk').Dialect, own: boolean,
   *   onChange?: (view: RunView) => void }} opts
   */
  constructor({ runId, message, agent, dialect, own, onChange }) {
    this.runId = runId;
    this.message = message ?? '';
    this.agent = agent ?? 'react';
    this.dialect = dialect;
    this.own = own;
    this.onChange = onChange ?? (() => {});
    this.status = 'running';
    this.startedAt = performance.now();
    /** @type {number | null} */
    this.endedAt = null;
    /** @type {Map<string, ToolCard>} */
    this.cards = new Map();
    /** @type {ToolCard | null} */
    this.lastCard = null;
    /** @type {string | null} the agent step (loom `node_enter`) the run is in */
    this.span = null;
    /** @type {Response | null} */
    this.response = null;
    /** @type {StepResponse | null} */
    this.reasoning = null;
    /** @type {ToolCard | null} the card whose explanation streams */
    this.explaining = null;
    /** @type {StepResponse | null} */
    this.lastStep = null;
    /** @type {ProseResponse | null} */
    this.lastProse = null;
    this.planText = '';
    this.lastJsonText = '';
    /** @type {Usage[]} one per model call */
    this.calls = [];
    /** @type {Usage | null} */
    this.total = null;
    /** @type {{ id: string, state: 'running' | 'ok' | 'failed', tools: string[] }[]} */
    this.spans = [];
    /** @type {{ code: string | undefined, message: string | undefined } | null} */
    this.error = null;
    this.stoppedByUser = false;
    /** @type {TotModel | null} */
    this.tot = null;
    /** @type {GotModel | null} */
    this.got = null;

    this.timeline = h('div', { class: 'timeline' });
    this.meta = h('div', { class: 'run-meta' });
    this.el = h(
      'section',
      { class: 'turn', dataset: { runId, agent: this.agent, status: 'running' } },
      this.message ? userBubble(this.message) : null,
      h('div', { class: 'msg assistant' }, avatar(), h('div', { class: 'body' }, this.timeline, this.meta)),
    );
    this.renderMeta();
    this.changed = throttled(() => this.onChange(this));
  }

  get running() {
    return this.status === 'running';
  }

  /**
   * One event of this run.
   * @param {RunEvent} ev
   */
  apply(ev) {
    switch (ev.type) {
      case 'run_start':
        if (ev.agent) this.agent = ev.agent;
        this.el.dataset.agent = this.agent;
        if (ev.message && !this.message) {
          this.message = ev.message;
          this.el.prepend(userBubble(ev.message));
        }
        break;
      case 'node_enter':
        this.endResponse();
        this.span = ev.id;
        this.spans.push({ id: ev.id, state: 'running', tools: [] });
        break;
      case 'node_exit': {
        this.endResponse();
        const span = [...this.spans].reverse().find((s) => s.id === ev.id && s.state === 'running');
        if (span) span.state = ev.result === 'Ok' ? 'ok' : 'failed';
        break;
      }
      case 'reasoning_chunk':
        this.reason(ev.content);
        break;
      case 'message_chunk':
        this.text(ev.content);
        break;
      case 'llm_complete':
        if (!this.response && ev.content) this.text(ev.content);
        this.endResponse(ev);
        break;
      case 'tool_call_chunk': {
        const card = this.card(ev.call_id, ev.name);
        card.appendArgs(ev.arguments_delta ?? '');
        break;
      }
      case 'tool_call':
        this.card(ev.call_id, ev.name).setArgs(ev.arguments);
        break;
      case 'tool_approval': {
        const card = this.card(ev.call_id, ev.name);
        if (card.args === undefined) card.setArgs(ev.arguments);
        this.endResponse();
        card.setStatus('awaiting_approval');
        break;
      }
      case 'approval_resolved': {
        const card = this.card(ev.call_id, ev.name);
        card.review(ev.review, ev.message);
        this.explaining = ev.review === 'explain' ? card : null;
        if (ev.review === 'no-exit') this.stoppedByUser = true;
        break;
      }
      case 'tool_start':
        this.endResponse();
        this.card(ev.call_id, ev.name).setStatus('running');
        break;
      case 'tool_output':
        this.card(ev.call_id, ev.name).output(ev.content ?? '');
        break;
      case 'tool_end':
        this.endResponse();
        this.card(ev.call_id, ev.name).result(ev.result, ev.is_error);
        break;
      case 'usage':
        this.calls.push({ prompt_tokens: ev.prompt_tokens, completion_tokens: ev.completion_tokens, total_tokens: ev.total_tokens });
        this.renderMeta();
        break;
      case 'tot_expand':
        (this.tot ??= new TotModel(this.message)).expand(ev.candidates ?? []);
        this.labelStep('think_expand', `Proposed ${ev.candidates?.length ?? 0} next steps`, (ev.candidates ?? []).map((c, i) => `${i + 1}. ${c}`).join('\n'));
        break;
      case 'tot_evaluate':
        (this.tot ??= new TotModel(this.message)).evaluate(ev.chosen, ev.scores ?? []);
        this.labelStep('think_evaluate', `Scored ${(ev.scores ?? []).map((s) => s.toFixed(2)).join(' · ')} → chose #${ev.chosen + 1}`);
        break;
      case 'tot_backtrack':
        (this.tot ??= new TotModel(this.message)).backtrack(ev.to_depth, ev.reason);
        this.endResponse();
        this.timeline.append(h('div', { class: 'step-line is-backtrack', text: `↩ Backtracked to level ${ev.to_depth + 1}: ${ev.reason}` }));
        break;
      case 'got_plan':
        (this.got ??= new GotModel()).plan(ev, this.planText);
        this.labelStep(
          'plan_graph',
          `Planned ${ev.node_count} sub-task${ev.node_count === 1 ? '' : 's'}, ${ev.edge_count} dependenc${ev.edge_count === 1 ? 'y' : 'ies'}`,
        );
        break;
      case 'got_node_start':
        (this.got ??= new GotModel()).start(ev.id);
        break;
      case 'got_node_complete':
        (this.got ??= new GotModel()).complete(ev.id, ev.result_summary);
        break;
      case 'got_node_failed':
        (this.got ??= new GotModel()).fail(ev.id, ev.error);
        this.timeline.append(h('div', { class: 'step-line is-failed', text: `✕ Sub-task ${ev.id} failed: ${ev.error}` }));
        break;
      case 'got_expand':
        (this.got ??= new GotModel()).expand(ev, this.lastJsonText);
        this.labelStep('execute_graph', `Split ${ev.node_id} into ${ev.nodes_added} sub-tasks`);
        break;
      case 'run_end':
        this.finish(ev.reply, ev.total_usage);
        break;
      case 'error':
        this.fail(ev.code, ev.message);
        break;
      default:
        break;
    }
    this.changed();
  }

  // ----- model responses -----

  /** @param {string} delta */
  reason(delta) {
    if (!this.reasoning) {
      this.reasoning = this.step('reasoning');
      this.reasoning.el.open = false;
    }
    this.reasoning.text += delta;
    this.reasoning.render();
  }

  /** @param {string} delta */
  text(delta) {
    if (!delta) return;
    this.reasoning?.done();
    this.reasoning = null;
    if (!this.response) this.response = this.openResponse();
    this.response.text += delta;
    this.response.render();
  }

  /** @returns {Response} */
  openResponse() {
    if (this.explaining) {
      const card = this.explaining;
      return {
        kind: 'explain',
        text: '',
        cardsAtStart: this.cards.size,
        card,
        render() {
          card.explain(this.text);
        },
        done() {},
      };
    }
    if (this.span !== null && INTERNAL.has(this.span)) return this.step(this.span);
    return this.prose();
  }

  /** @returns {ProseResponse} */
  prose() {
    const el = h('div', { class: 'markdown streaming' });
    this.timeline.append(el);
    const view = this;
    /** @type {ProseResponse} */
    const response = {
      kind: 'prose',
      span: this.span,
      text: '',
      cardsAtStart: this.cards.size,
      el,
      finished: false,
      render: throttled(() => {
        if (response.finished) return;
        el.innerHTML = renderMarkdown(response.text);
        view.changed();
      }),
      done() {
        response.finished = true;
        el.classList.remove('streaming');
        el.innerHTML = renderMarkdown(response.text);
      },
    };
    return response;
  }

  /**
   * A collapsible step: the agent's own working.
   * @param {string | null | undefined} span
   * @returns {StepResponse}
   */
  step(span) {
    const label = h('span', { class: 'step-label', text: `${STEP_LABEL[span ?? ''] ?? 'Step'}…` });
    const preview = h('span', { class: 'step-preview' });
    const body = h('pre', { class: 'step-body' });
    const el = h('details', { class: `step is-${span ?? 'step'} is-streaming`, dataset: { span: span ?? '' } }, h('summary', {}, label, preview), body);
    this.timeline.append(el);
    /** @type {StepResponse} */
    const response = {
      kind: 'step',
      span,
      text: '',
      cardsAtStart: this.cards.size,
      el,
      label,
      finished: false,
      render: throttled(() => {
        if (response.finished) return;
        const t = response.text;
        body.textContent = t;
        preview.textContent = t.length > 70 ? `…${t.slice(-70)}` : t;
      }),
      done() {
        response.finished = true;
        el.classList.remove('is-streaming');
        preview.textContent = '';
        const json = agentJson(response.text);
        body.textContent = json ? JSON.stringify(json, null, 2) : response.text;
        const text = label.textContent ?? '';
        if (text.endsWith('…')) label.textContent = STEP_DONE[span ?? ''] ?? text.slice(0, -1);
      },
    };
    return response;
  }

  /**
   * Ends the current model response, deciding what it was.
   * @param {LlmComplete} [complete] the response's `llm_complete`, when it ended with one
   */
  endResponse(complete) {
    this.reasoning?.done();
    this.reasoning = null;
    const r = this.response;
    if (!r) return;
    this.response = null;
    if (complete?.content && complete.content.length >= r.text.length) r.text = complete.content;
    if (r.kind === 'explain') {
      r.card.explain(r.text);
      this.explaining = null;
      return;
    }
    if (r.span === 'plan_graph') this.planText = r.text;
    if (agentJson(r.text)) this.lastJsonText = r.text;
    const toolCalls = (complete?.tool_calls?.length ?? 0) > 0 || this.cards.size > r.cardsAtStart;
    if (r.kind === 'prose' && (toolCalls || agentJson(r.text))) {
      // Text that came with tool calls, or an agent's JSON: working, not the answer.
      r.finished = true;
      const json = agentJson(r.text);
      const span = r.span ?? (json ? JSON_SPAN.find(([k]) => k in json)?.[1] : toolCalls ? 'think' : 'step');
      const step = this.step(span);
      r.el.replaceWith(step.el);
      step.text = r.text;
      step.done();
      if (json && 'complex' in json) step.label.textContent = json.complex ? 'Judged a sub-task too big: splitting it' : 'Judged a sub-task simple enough';
      this.lastStep = step;
      return;
    }
    r.done();
    if (r.kind === 'step') {
      this.lastStep = r;
      if (r.span === 'execute_graph') {
        const json = agentJson(r.text);
        r.label.textContent =
          json && 'complex' in json
            ? json.complex
              ? 'Judged a sub-task too big: splitting it'
              : 'Judged a sub-task simple enough'
            : `Sub-task answer: ${norm(r.text).slice(0, 60)}`;
      }
    } else {
      this.lastProse = r;
    }
  }

  /**
   * Names the last step, when it is a `span` step, by what its event says.
   * @param {string} span
   * @param {string} label
   * @param {string} [detail] its body instead of the model's JSON
   */
  labelStep(span, label, detail) {
    const step = this.lastStep;
    if (!step || step.span !== span) return;
    step.label.textContent = label;
    const body = step.el.querySelector('.step-body');
    if (detail && body) body.textContent = detail;
  }

  /**
   * The card of tool call `callId` (the last one when the dialect does not say), made if new.
   * @param {string | undefined} callId
   * @param {string | undefined} name
   */
  card(callId, name) {
    const id = callId ?? this.lastCard?.callId ?? `call-${this.cards.size + 1}`;
    let card = this.cards.get(id);
    if (!card) {
      this.reasoning?.done();
      this.reasoning = null;
      card = new ToolCard(id, name);
      this.cards.set(id, card);
      this.timeline.append(card.el);
      const span = this.spans.at(-1);
      if (span) span.tools.push(name ?? 'tool');
    }
    card.setName(name);
    this.lastCard = card;
    return card;
  }

  // ----- the end -----

  /**
   * The run completed (its `run_end`, or `run.result`).
   * @param {string | null | undefined} reply
   * @param {Usage | null | undefined} totalUsage
   */
  finish(reply, totalUsage) {
    if (totalUsage) this.total = totalUsage;
    if (this.status !== 'running') {
      this.renderMeta();
      return;
    }
    this.endResponse();
    this.status = 'completed';
    this.endedAt = performance.now();
    const last = this.lastProse;
    if (reply && (!last || norm(last.text) !== norm(reply))) {
      const el = h('div', { class: 'markdown reply' });
      el.innerHTML = renderMarkdown(reply);
      this.timeline.append(el);
    } else if (last) {
      last.el.classList.add('reply');
    } else {
      const why = this.stoppedByUser ? 'You denied the call and stopped the run; the agent did not carry on.' : 'The run ended without a reply.';
      this.timeline.append(h('div', { class: 'run-end-note', text: why }));
    }
    this.tot?.finish(true);
    this.done();
  }

  /**
   * The run failed, or was cancelled.
   * @param {string | undefined} code
   * @param {string | undefined} message
   */
  fail(code, message) {
    if (this.status !== 'running') return;
    this.endResponse();
    this.status = code === 'cancelled' ? 'cancelled' : 'failed';
    this.endedAt = performance.now();
    this.error = { code, message };
    const text =
      code === 'cancelled'
        ? 'Stopped.'
        : code === 'closed'
          ? 'This page stopped following the run (the socket was closed); the server carries on with it.'
          : `${message ?? 'The run failed.'}${code ? ` (${code})` : ''}`;
    this.timeline.append(h('div', { class: `run-error is-${this.status}`, role: 'alert', text }));
    this.tot?.finish(false);
    this.done();
  }

  done() {
    for (const card of this.cards.values()) {
      if (['streaming', 'pending', 'awaiting_approval', 'explaining'].includes(card.el.dataset.status ?? '')) card.setStatus('pending');
    }
    this.el.dataset.status = this.status;
    this.renderMeta();
    this.changed();
  }

  /** @returns {Usage} the run's total, or the sum of its calls so far */
  usage() {
    if (this.total) return this.total;
    return this.calls.reduce(
      (a, u) => ({
        prompt_tokens: a.prompt_tokens + u.prompt_tokens,
        completion_tokens: a.completion_tokens + u.completion_tokens,
        total_tokens: a.total_tokens + u.total_tokens,
      }),
      { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    );
  }

  renderMeta() {
    const u = this.usage();
    const parts = [h('span', { class: 'badge', text: AGENT_NAME[this.agent] ?? this.agent }), h('span', { class: 'badge subtle', text: this.dialect })];
    if (this.running) {
      parts.push(h('span', { class: 'live-dot', text: 'streaming' }));
    } else {
      if (this.status !== 'completed') parts.push(h('span', { class: `badge is-${this.status}`, text: this.status }));
      if (this.endedAt) parts.push(h('span', { text: duration(this.endedAt - this.startedAt) }));
    }
    if (u.total_tokens) {
      parts.push(
        h(
          'span',
          { class: 'tokens', title: `${fmt(u.prompt_tokens)} prompt + ${fmt(u.completion_tokens)} completion tokens` },
          `${fmt(u.total_tokens)} tokens`,
          h('span', { class: 'muted', text: ` · ${fmt(u.prompt_tokens)} in · ${fmt(u.completion_tokens)} out` }),
        ),
      );
    }
    if (this.calls.length) parts.push(h('span', { class: 'muted', text: `${this.calls.length} LLM call${this.calls.length === 1 ? '' : 's'}` }));
    this.meta.replaceChildren(...parts);
  }
}
