// weft-sdk/ai: the AI SDK's `ChatTransport` over a weft `Client`, so a `useChat` app talks to
// weft on its WebSocket: streaming, resume after a drop (the client's own, by event id: nothing
// twice), `stop()` as cancel, approvals through `addToolApprovalResponse`, client-side tools
// through `onToolCall` + `addToolOutput`, and the history as initial messages.
//
// A subpath of its own, so apps that do not use the AI SDK do not load it. The AI SDK is a
// peer: only its types are named (ai.d.mts), nothing of it is imported.
//
// The chunks are the ones weft's server sends on `POST /api/chat` (the protocol crate's
// `dialect::aisdk`): `UIChunkEncoder` is that encoder's twin for the page, and
// tests/sdk/ai.test.mjs holds the two equal on every golden stream.

/** Canonical weft events (`run.onEvent`'s) to AI SDK UI message chunks, for one stream. */
export class UIChunkEncoder {
  #started = false;
  #step = false;
  #answered = false;
  /** The open text or reasoning part: `{ kind, id }`. */
  #part = null;
  #inputs = new Set();
  #denied = new Set();
  #finished = false;

  /** Whether the stream is over (the run ended, failed, or paused). */
  get finished() {
    return this.#finished;
  }

  /** The chunks that carry this event, possibly none. */
  encode(ev) {
    const out = [];
    if (this.#finished) return out;
    if (!this.#started) {
      this.#started = true;
      out.push({ type: 'start', messageId: `msg-${ev.run_id ?? 'run'}` });
    }
    const call = ev.call_id;
    switch (ev.type) {
      case 'message_chunk':
        this.#piece(out, 'text', ev.event_id ?? 0, ev.content);
        break;
      case 'reasoning_chunk':
        this.#piece(out, 'reasoning', ev.event_id ?? 0, ev.content);
        break;
      case 'tool_call_chunk':
        if (call == null) break;
        this.#openStep(out);
        this.#closePart(out);
        if (!this.#inputs.has(call)) {
          this.#inputs.add(call);
          out.push({ type: 'tool-input-start', toolCallId: call, toolName: ev.name ?? '' });
        }
        if (ev.arguments_delta) out.push({ type: 'tool-input-delta', toolCallId: call, inputTextDelta: ev.arguments_delta });
        break;
      case 'tool_call':
        if (call == null) break;
        this.#openStep(out);
        this.#closePart(out);
        out.push({ type: 'tool-input-available', toolCallId: call, toolName: ev.name, input: ev.arguments ?? null });
        break;
      case 'llm_complete':
        this.#closePart(out);
        this.#answered = true;
        break;
      case 'tool_approval':
        if (call == null) break;
        this.#closePart(out);
        out.push({ type: 'tool-approval-request', approvalId: call, toolCallId: call });
        break;
      case 'approval_resolved':
        if (call == null || ev.review === 'yes' || ev.review === 'always') break;
        this.#closePart(out);
        this.#denied.add(call);
        out.push({ type: 'tool-output-denied', toolCallId: call });
        break;
      case 'tool_end':
        if (call == null || this.#denied.has(call)) break;
        this.#closePart(out);
        out.push(
          ev.is_error
            ? { type: 'tool-output-error', toolCallId: call, errorText: ev.result }
            : { type: 'tool-output-available', toolCallId: call, output: ev.result },
        );
        break;
      case 'run_end':
        this.#finish(out, 'stop');
        break;
      case 'error':
        this.#closePart(out);
        this.#closeStep(out);
        out.push(ev.code === 'cancelled' ? { type: 'abort', reason: ev.message } : { type: 'error', errorText: ev.message });
        this.#finished = true;
        break;
      default:
    }
    return out;
  }

  /** The chunks that end the stream while the run waits for the page. */
  pause() {
    const out = [];
    if (!this.#finished && this.#started) this.#finish(out, 'tool-calls');
    this.#finished = true;
    return out;
  }

  #piece(out, kind, at, delta) {
    this.#openStep(out);
    if (this.#part && this.#part.kind !== kind) this.#closePart(out);
    if (!this.#part) {
      this.#part = { kind, id: `${kind[0]}${at}` };
      out.push({ type: `${kind}-start`, id: this.#part.id });
    }
    out.push({ type: `${kind}-delta`, id: this.#part.id, delta });
  }

  #openStep(out) {
    if (this.#step && this.#answered) {
      this.#closePart(out);
      this.#closeStep(out);
    }
    if (!this.#step) {
      this.#step = true;
      this.#answered = false;
      out.push({ type: 'start-step' });
    }
  }

  #closeStep(out) {
    if (this.#step) {
      this.#step = false;
      out.push({ type: 'finish-step' });
    }
  }

  #closePart(out) {
    if (this.#part) {
      out.push({ type: `${this.#part.kind}-end`, id: this.#part.id });
      this.#part = null;
    }
  }

  #finish(out, reason) {
    this.#closePart(out);
    this.#closeStep(out);
    out.push({ type: 'finish', finishReason: reason });
    this.#finished = true;
  }
}

/**
 * The AI SDK's `ChatTransport` over a weft `Client`. The chat id is the weft session (each
 * run names it as its thread). Give it the client-side tools the page runs (their calls reach
 * `useChat`'s `onToolCall`; answer with `addToolOutput`), and pass
 * `transport.sendAutomaticallyWhen` to `useChat` so an answered approval or tool goes back at
 * once.
 */
export class WeftChatTransport {
  #client;
  #agent;
  /** Answers the run waits for, by call id: `{ resolve, reject, kind }`. */
  #waiting = new Map();
  /** Calls of the current step, by id: `'open'`, `'ended'`. */
  #step = new Map();
  /** The run of each chat that may still stream. */
  #runs = new Map();
  /** The stream open now, told when the page holds everything the run waits for. */
  #onSettled = null;
  #off = [];

  /** Reconnecting follows the running turn from its start (a reloaded page has lost it). */
  resumeStreamIsReplay = true;

  constructor({ client, agent, tools = [] }) {
    this.#client = client;
    this.#agent = agent;
    this.#off.push(
      client.onApproval(
        (req) =>
          new Promise((resolve) => {
            if (req.callId == null) return resolve({ review: 'no-continue', message: 'this page answers approvals by call id' });
            this.#waiting.set(req.callId, { kind: 'approval', resolve });
            req.signal.addEventListener('abort', () => this.#waiting.delete(req.callId));
            this.#settled();
          }),
      ),
    );
    for (const tool of tools) {
      this.#off.push(
        client.registerTool(
          tool,
          (args, callId) =>
            new Promise((resolve, reject) => {
              this.#waiting.set(callId, { kind: 'tool', resolve, reject });
              this.#settled();
            }),
        ),
      );
    }
    this.sendAutomaticallyWhen = ({ messages }) => this.#answered(messages.at(-1)).length > 0;
  }

  /** Stops listening to the client (its approvals and tools go back to it). */
  close() {
    for (const off of this.#off.splice(0)) off();
  }

  async sendMessages({ chatId, messages, abortSignal }) {
    const last = messages.at(-1);
    if (last?.role === 'user') {
      const message = last.parts
        .filter((p) => p.type === 'text')
        .map((p) => p.text)
        .join('');
      const run = this.#client.run({ message, agent: this.#agent, threadId: chatId });
      this.#runs.set(chatId, run);
      return this.#stream(run, abortSignal);
    }
    const run = this.#runs.get(chatId);
    if (!run || run.finished) throw new Error(`no run of chat ${chatId} waits for an answer`);
    // The stream listens before the answers go, so it carries all they cause.
    const stream = this.#stream(run, abortSignal);
    for (const [part, answer] of this.#answered(last)) {
      this.#waiting.delete(part.toolCallId);
      if (answer.kind === 'approval') {
        answer.resolve(part.approval.approved ? { review: 'yes' } : { review: 'no-continue', message: part.approval.reason });
      } else if (part.state === 'output-available') {
        answer.resolve(part.output);
      } else {
        answer.reject(new Error(part.errorText ?? 'the tool failed'));
      }
    }
    return stream;
  }

  async reconnectToStream({ chatId }) {
    let runId;
    try {
      runId = (await this.#client.userMessages(chatId, { limit: 1 })).activeRunId;
    } catch {
      return null; // the dialect cannot say (only loom names the running run)
    }
    if (!runId) return null;
    const run = this.#client.follow(runId);
    this.#runs.set(chatId, run);
    return this.#stream(run);
  }

  /** The tool parts of `message` that answer something the run waits for, with the answer. */
  #answered(message) {
    if (message?.role !== 'assistant') return [];
    return message.parts.flatMap((p) => {
      const answer = p.toolCallId != null && this.#waiting.get(p.toolCallId);
      if (!answer) return [];
      const ready = answer.kind === 'approval' ? p.state === 'approval-responded' : p.state === 'output-available' || p.state === 'output-error';
      return ready ? [[p, answer]] : [];
    });
  }

  /** Ends the open stream once every call of the step has ended or waits for this page. */
  #settled() {
    if (this.#waiting.size === 0) return;
    for (const [id, state] of this.#step) if (state === 'open' && !this.#waiting.has(id)) return;
    this.#onSettled?.();
  }

  #stream(run, abortSignal) {
    let off = () => {};
    return new ReadableStream({
      start: (controller) => {
        const encoder = new UIChunkEncoder();
        const end = (chunks) => {
          for (const c of chunks) controller.enqueue(c);
          off();
          if (this.#onSettled === pause) this.#onSettled = null;
          controller.close();
        };
        const pause = () => end(encoder.pause());
        this.#onSettled = pause;
        this.#step.clear();
        off = run.onEvent((ev) => {
          if (ev.type === 'tool_call' && ev.call_id != null) this.#step.set(ev.call_id, 'open');
          if (ev.type === 'tool_end' && ev.call_id != null) this.#step.set(ev.call_id, 'ended');
          if (ev.type === 'llm_complete' && ev.tool_calls?.length) {
            // A new response: its calls are the step's.
            for (const [id, state] of this.#step) if (state === 'ended') this.#step.delete(id);
          }
          const chunks = encoder.encode(ev);
          if (encoder.finished) return end(chunks);
          for (const c of chunks) controller.enqueue(c);
          this.#settled();
        });
        abortSignal?.addEventListener(
          'abort',
          () => {
            if (!run.finished) run.cancel();
          },
          { once: true },
        );
      },
      cancel: () => off(),
    });
  }
}

/**
 * The client's transcript as the AI SDK's initial `messages`: text, and each tool call with
 * its outcome, so a reloaded page shows the conversation before it streams on.
 */
export function toUIMessages(transcript) {
  const calls = new Map(transcript.tool_calls.map((c) => [c.call_id, c]));
  return transcript.messages.map((m, i) => {
    const parts = [];
    if (m.reasoning) parts.push({ type: 'reasoning', text: m.reasoning, state: 'done' });
    if (m.text) parts.push({ type: 'text', text: m.text, state: 'done' });
    for (const id of m.tool_call_ids ?? []) {
      const c = calls.get(id);
      if (!c) continue;
      const base = { type: `tool-${c.name}`, toolCallId: id, input: c.arguments ?? {} };
      if (c.status === 'denied') parts.push({ ...base, state: 'output-denied', approval: { id, approved: false, reason: c.review_message } });
      else if (c.status === 'error') parts.push({ ...base, state: 'output-error', errorText: c.result ?? '' });
      else if (c.result != null) parts.push({ ...base, state: 'output-available', output: c.result });
      else parts.push({ ...base, state: 'input-available' });
    }
    return { id: `${m.run_id ?? 'm'}-${i}`, role: m.role === 'user' ? 'user' : 'assistant', parts };
  });
}
