// The approval dialog: what `client.onApproval` shows the user. One request at a time (a
// response may call several tools that need approval); each resolves with the decision the
// SDK sends to the server: yes, always, no-continue, no-exit or explain. After "explain" the
// server streams the model's explanation and asks again, so the dialog comes back with it.

import { find, h } from './dom.mjs';
import { renderMarkdown } from './markdown.mjs';
import { argumentsView } from './tools.mjs';

/**
 * @typedef {import('weft-sdk').ApprovalRequest} ApprovalRequest
 * @typedef {import('weft-sdk').ApprovalAnswer} ApprovalAnswer
 * @typedef {import('weft-sdk').Review} Review
 */

/** @type {Review[]} */
const REVIEWS = ['yes', 'always', 'no-continue', 'no-exit', 'explain'];

/**
 * @param {unknown} review a button's `data-review`
 * @returns {review is Review}
 */
const isReview = (review) => REVIEWS.some((r) => r === review);

/** @type {Record<string, string>} */
const WHAT = {
  apply_patch: 'change files in this session’s workspace',
  write: 'write a file in this session’s workspace',
};

export class Approvals {
  /**
   * @param {HTMLDialogElement} dialog
   * @param {(req: ApprovalRequest) => { explanation?: string }} describe
   */
  constructor(dialog, describe) {
    this.dialog = dialog;
    this.describe = describe;
    /** @type {{ req: ApprovalRequest, resolve: (a: ApprovalAnswer) => void }[]} */
    this.queue = [];
    /** @type {{ req: ApprovalRequest, resolve: (a: ApprovalAnswer) => void } | null} the request shown */
    this.current = null;
    this.title = find(dialog, '#approval-title', HTMLElement);
    this.sub = find(dialog, '#approval-sub', HTMLElement);
    this.args = find(dialog, '#approval-args', HTMLElement);
    this.explanation = find(dialog, '#approval-explain', HTMLElement);
    this.message = find(dialog, '#approval-message', HTMLInputElement);
    this.always = find(dialog, '[data-review="always"]', HTMLElement);
    this.yes = find(dialog, '[data-review="yes"]', HTMLElement);
    for (const button of dialog.querySelectorAll('[data-review]')) {
      const review = button instanceof HTMLElement ? button.dataset.review : undefined;
      if (!isReview(review)) throw new Error(`the approval dialog has a button for an unknown decision: ${review}`);
      button.addEventListener('click', () => this.answer(review));
    }
    // A decision is required: Escape does not dismiss the dialog silently.
    dialog.addEventListener('cancel', (e) => e.preventDefault());
  }

  /**
   * `onApproval` callback. A request the SDK withdraws (another tab answered it, or it came
   * from the replay of a run answered long ago) leaves the dialog; the answer it resolves
   * with then is not sent.
   * @param {ApprovalRequest} req
   * @returns {Promise<ApprovalAnswer>}
   */
  ask(req) {
    return new Promise((resolve) => {
      this.queue.push({ req, resolve });
      req.signal.addEventListener(
        'abort',
        () => {
          this.settled(req.callId);
          resolve({ review: 'no-continue' });
        },
        { once: true },
      );
      this.next();
    });
  }

  next() {
    const current = this.current ? undefined : this.queue.shift();
    if (!current) return;
    this.current = current;
    const { req } = current;
    const { explanation } = this.describe(req) ?? {};
    this.dialog.dataset.callId = req.callId ?? '';
    this.dialog.dataset.tool = req.name;
    this.title.textContent = `Allow ${req.name}?`;
    this.sub.textContent = `The agent wants to ${WHAT[req.name] ?? `run the tool ${req.name}`}. Nothing happens until you decide.`;
    this.args.replaceChildren(argumentsView(req.name, req.arguments));
    this.explanation.hidden = !explanation;
    const md = h('div', { class: 'markdown' });
    md.innerHTML = renderMarkdown(explanation ?? '');
    this.explanation.replaceChildren(h('span', { class: 'label', text: 'The agent explains' }), md);
    this.always.title = `Run it, and do not ask again for ${req.name} in this session`;
    this.message.value = '';
    if (!this.dialog.open) this.dialog.showModal();
    this.yes.focus();
  }

  /** @param {Review} review */
  answer(review) {
    const current = this.current;
    if (!current) return;
    const message = this.message.value.trim();
    this.current = null;
    this.dialog.close();
    current.resolve(message && review.startsWith('no') ? { review, message } : { review });
    this.next();
  }

  /**
   * The call was decided elsewhere: stop asking here.
   * @param {string | undefined} callId
   */
  settled(callId) {
    if (this.current?.req.callId === callId) {
      this.current = null;
      this.dialog.close();
    }
    this.queue = this.queue.filter((q) => q.req.callId !== callId);
    this.next();
  }

  /** Forget everything (the page moved to another session). */
  reset() {
    this.queue = [];
    this.current = null;
    if (this.dialog.open) this.dialog.close();
  }
}
