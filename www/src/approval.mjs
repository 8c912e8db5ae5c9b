// The approval dialog: what `client.onApproval` shows the user. One request at a time (a
// response may call several tools that need approval); each resolves with the decision the
// SDK sends to the server: yes, always, no-continue, no-exit or explain. After "explain" the
// server streams the model's explanation and asks again, so the dialog comes back with it.

import { h } from './dom.mjs';
import { renderMarkdown } from './markdown.mjs';
import { argumentsView } from './tools.mjs';

const WHAT = {
  apply_patch: 'change files in this session’s workspace',
  write: 'write a file in this session’s workspace',
};

export class Approvals {
  /**
   * @param {HTMLDialogElement} dialog
   * @param {(req: import('weft-sdk').ApprovalRequest) => { explanation?: string }} describe
   */
  constructor(dialog, describe) {
    this.dialog = dialog;
    this.describe = describe;
    /** @type {{ req: import('weft-sdk').ApprovalRequest, resolve: (a: import('weft-sdk').ApprovalAnswer) => void }[]} */
    this.queue = [];
    this.current = null;
    this.title = dialog.querySelector('#approval-title');
    this.sub = dialog.querySelector('#approval-sub');
    this.args = dialog.querySelector('#approval-args');
    this.explanation = dialog.querySelector('#approval-explain');
    this.message = dialog.querySelector('#approval-message');
    this.always = dialog.querySelector('[data-review="always"]');
    for (const button of dialog.querySelectorAll('[data-review]')) {
      button.addEventListener('click', () => this.answer(button.dataset.review));
    }
    // A decision is required: Escape does not dismiss the dialog silently.
    dialog.addEventListener('cancel', (e) => e.preventDefault());
  }

  /**
   * `onApproval` callback. A request the SDK withdraws (another tab answered it, or it came
   * from the replay of a run answered long ago) leaves the dialog; the answer it resolves
   * with then is not sent.
   */
  ask(req) {
    return new Promise((resolve) => {
      this.queue.push({ req, resolve });
      req.signal.addEventListener('abort', () => {
        this.settled(req.callId);
        resolve({ review: 'no-continue' });
      }, { once: true });
      this.next();
    });
  }

  next() {
    if (this.current || !this.queue.length) return;
    this.current = this.queue.shift();
    const { req } = this.current;
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
    this.dialog.querySelector('[data-review="yes"]').focus();
  }

  answer(review) {
    const current = this.current;
    if (!current) return;
    const message = this.message.value.trim();
    this.current = null;
    this.dialog.close();
    current.resolve(message && review.startsWith('no') ? { review, message } : { review });
    this.next();
  }

  /** The call was decided elsewhere: stop asking here. */
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
