// A tool call as a card: its arguments fill in while the model streams them (parsed as far as
// they go), then the approval, the run, and the result or error.

import { Allow, parse } from 'partial-json';

import { h, set } from './dom.mjs';
import { renderMarkdown } from './markdown.mjs';

/**
 * Parses JSON that may be cut short (a tool call's arguments mid-stream) as far as it goes,
 * with partial-json: every prefix of a value parses, strings, numbers and literals that are
 * still arriving included. `undefined` for nothing yet, or for text that is not JSON.
 * @param {string} text
 * @returns {unknown}
 */
export function parsePartialJson(text) {
  if (!text.trim()) return undefined;
  try {
    return parse(text, Allow.ALL);
  } catch {
    return undefined;
  }
}

/**
 * A patch in the Codex format, one line per row, added / removed / header lines marked.
 * @param {string} patch
 */
function patchView(patch) {
  return h(
    'pre',
    { class: 'patch' },
    String(patch)
      .split('\n')
      .map((line) =>
        h(
          'span',
          {
            class: line.startsWith('***') ? 'p-head' : line.startsWith('+') ? 'p-add' : line.startsWith('-') ? 'p-del' : line.startsWith('@@') ? 'p-hunk' : '',
          },
          line,
          '\n',
        ),
      ),
  );
}

/**
 * The arguments of a call, as readable as the tool allows.
 * @param {string} name
 * @param {unknown} args
 * @param {string} [raw] the arguments' JSON as the model wrote it
 */
export function argumentsView(name, args, raw) {
  if (args && typeof args === 'object' && !Array.isArray(args)) {
    if (name === 'apply_patch' && 'patch' in args && typeof args.patch === 'string') return patchView(args.patch);
    const entries = Object.entries(args);
    if (!entries.length) return h('div', { class: 'args-empty', text: 'no arguments' });
    return h(
      'dl',
      { class: 'args' },
      entries.map(([k, v]) => [
        h('dt', { text: k }),
        h(
          'dd',
          {},
          typeof v === 'string' && (v.includes('\n') || v.length > 60)
            ? h('pre', { text: v })
            : h('code', { text: typeof v === 'string' ? v : JSON.stringify(v) }),
        ),
      ]),
    );
  }
  return h('pre', { class: 'args-raw', text: raw ?? JSON.stringify(args, null, 2) });
}

/** @type {Record<string, string>} */
const STATUS = {
  streaming: 'writing arguments…',
  pending: 'queued',
  awaiting_approval: 'waiting for you',
  approved: 'approved',
  denied: 'denied',
  running: 'running…',
  done: 'done',
  error: 'error',
  explaining: 'explaining…',
};

/** @type {Record<string, string>} */
const REVIEW = {
  yes: 'Approved',
  always: 'Always allowed',
  'no-continue': 'Denied — the agent goes on',
  'no-exit': 'Denied — run stopped',
  explain: 'Asked for an explanation',
};

const ICON_PATH =
  'M14.7 6.3a1 1 0 0 0 0 1.4l1.6 1.6a1 1 0 0 0 1.4 0l3.77-3.77a6 6 0 0 1-7.94 7.94l-6.91 6.91a2.12 2.12 0 0 1-3-3l6.91-6.91a6 6 0 0 1 7.94-7.94l-3.76 3.76z';

function icon() {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('class', 'tool-icon');
  svg.setAttribute('aria-hidden', 'true');
  const p = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  p.setAttribute('d', ICON_PATH);
  svg.append(p);
  return svg;
}

export class ToolCard {
  /**
   * @param {string} callId
   * @param {string} [name] not known yet when the dialect names it later
   */
  constructor(callId, name) {
    this.callId = callId;
    this.name = name || 'tool';
    this.raw = '';
    /** @type {unknown} the complete arguments, once known */
    this.args = undefined;
    this.explanation = '';
    this.el = h('div', { class: 'tool', dataset: { callId, status: 'streaming', tool: this.name } });
    this.nameEl = h('span', { class: 'tool-name', text: this.name });
    this.statusEl = h('span', { class: 'tool-status', text: STATUS.streaming });
    this.argsEl = h('div', { class: 'tool-args' });
    this.explainEl = h('div', { class: 'tool-explain', hidden: true });
    this.reviewEl = h('div', { class: 'tool-review', hidden: true });
    this.outputEl = h('pre', { class: 'tool-output', hidden: true });
    this.resultEl = h('div', { class: 'tool-result', hidden: true });
    this.el.append(
      h('div', { class: 'tool-head' }, icon(), this.nameEl, this.statusEl),
      this.argsEl,
      this.explainEl,
      this.reviewEl,
      this.outputEl,
      this.resultEl,
    );
  }

  /** @param {string | undefined} name */
  setName(name) {
    if (!name || name === this.name) return;
    this.name = name;
    this.nameEl.textContent = name;
    this.el.dataset.tool = name;
  }

  /**
   * More of the arguments' JSON, as streamed.
   * @param {string} delta
   */
  appendArgs(delta) {
    this.raw += delta;
    const partial = parsePartialJson(this.raw);
    this.argsEl.replaceChildren(argumentsView(this.name, partial, this.raw), h('span', { class: 'caret', 'aria-hidden': 'true' }));
  }

  /**
   * The complete, parsed arguments.
   * @param {unknown} args
   */
  setArgs(args) {
    this.args = args;
    this.argsEl.replaceChildren(argumentsView(this.name, args, this.raw || undefined));
    if (this.el.dataset.status === 'streaming') this.setStatus('pending');
  }

  /** @param {string} status a `ToolStatus`, or `explaining` */
  setStatus(status) {
    this.el.dataset.status = status;
    this.statusEl.textContent = STATUS[status] ?? status;
  }

  /**
   * The user's (or another tab's) decision.
   * @param {import('weft-sdk').Review} review
   * @param {string} [message] told to the model with it
   */
  review(review, message) {
    this.reviewEl.hidden = false;
    this.reviewEl.dataset.review = review;
    set(this.reviewEl, h('strong', { text: REVIEW[review] ?? review }), message ? h('span', { text: ` — “${message}”` }) : null);
    if (review === 'explain') this.setStatus('explaining');
    else if (review === 'yes' || review === 'always') this.setStatus('approved');
    else this.setStatus('denied');
  }

  /**
   * The model's explanation of the call, streaming.
   * @param {string} text
   */
  explain(text) {
    this.explanation = text;
    this.explainEl.hidden = !text;
    const md = h('div', { class: 'markdown' });
    md.innerHTML = renderMarkdown(text);
    this.explainEl.replaceChildren(h('span', { class: 'label', text: 'Why' }), md);
  }

  /** @param {string} content more of what the tool printed */
  output(content) {
    this.outputEl.hidden = false;
    this.outputEl.textContent += content;
  }

  /**
   * @param {string} result
   * @param {boolean} isError
   */
  result(result, isError) {
    this.resultEl.hidden = false;
    this.resultEl.classList.toggle('is-error', Boolean(isError));
    const text = String(result ?? '');
    this.resultEl.replaceChildren(
      h('span', { class: 'label', text: isError ? 'Error' : 'Result' }),
      text.length > 600 || text.includes('\n') ? h('pre', { text }) : h('code', { text }),
    );
    this.setStatus(isError ? 'error' : 'done');
  }
}
