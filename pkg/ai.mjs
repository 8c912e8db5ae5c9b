// weft-sdk/ai: the AI SDK's `ChatTransport` over a weft `Client`, so a `useChat` app talks to
// weft on its WebSocket: streaming, resume after a drop (the client's own, by event id: nothing
// twice), `stop()` as cancel, approvals through `addToolApprovalResponse`, client-side tools
// through `onToolCall` + `addToolOutput`, and the history as initial messages.
//
// A subpath of its own, so apps that do not use the AI SDK do not load it. The AI SDK is a
// peer: only its types are named (ai.d.mts), nothing of it is imported.
//
// The chunks are the ones weft's server sends on `POST /api/chat`: the wasm writes them with the
// protocol crate's own encoder (`dialect::aisdk`), and each stream gets its own, so the page
// holds no second copy of that mapping. Chunks that arrive in one task come in one lot, deltas
// of one part joined (`Chat` costs per chunk); the first delta of a reply is never held.
//
// Deltas that arrive close together, in tasks of their own as a live socket delivers them, are
// joined too: a delta of a part that has shown text already waits at most `deltaWindowMs` for
// the ones after it, and anything else (a new part, a tool call, the end, an abort, a pause for
// an approval) takes what waits along at once, in order. The AI SDK's `Chat` does its work per
// chunk and React renders per lot, so a model streaming a delta every few milliseconds would
// otherwise cost a render each (Cloudflare Agents throttles its renders by 50 ms for this,
// after its users hit React's "Maximum update depth exceeded": cloudflare/agents #1361, #1913).

/**
 * The AI SDK's `ChatTransport` over a weft `Client`. The chat id is the weft session (each
 * run names it as its thread). Give it the client-side tools the page runs (their calls reach
 * `useChat`'s `onToolCall`; answer with `addToolOutput`), and pass
 * `transport.sendAutomaticallyWhen` to `useChat` so an answered approval or tool goes back at
 * once.
 */
/**
 * How long a delta may wait for the ones after it, by default: a frame at 60 Hz, so text shows
 * no later than the display could show it (a delta held past one paint is held at most one
 * more), and a model streaming every few milliseconds costs `Chat` and React a lot per frame
 * instead of one per delta. Measured (tests/bench, the paced rows: a loom frame every 2 ms, the
 * page's CPU time, medians of three runs on a loaded machine, BENCHMARKS.md): per frame, 0.87×
 * of `deltaWindowMs: 0` at 4 ms, 0.81× at 16 ms, 0.61× at 50 ms — Cloudflare Agents' render
 * throttle, but three times the latency before a delta shows.
 */
const DELTA_WINDOW_MS = 16;

/** The chunks that continue a part, and the field that carries their piece of it. */
const DELTA_FIELD = { 'text-delta': 'delta', 'reasoning-delta': 'delta', 'tool-input-delta': 'inputTextDelta' };

const isDelta = (chunk) => chunk.type in DELTA_FIELD;

export class WeftChatTransport {
  #client;
  #agent;
  #windowMs;
  /** Answers runs wait for, by call id: `{ resolve, reject, kind }`. */
  #waiting = new Map();
  /** The run of each chat that may still stream. */
  #runs = new Map();
  /** The streams open now, each with its own state (two `useChat`s may share a transport). */
  #streams = new Set();
  #off = [];

  /** Reconnecting follows the running turn from its start (a reloaded page has lost it). */
  resumeStreamIsReplay = true;

  constructor({ client, agent, tools = [], deltaWindowMs = DELTA_WINDOW_MS }) {
    if (!(deltaWindowMs >= 0 && deltaWindowMs < Infinity))
      throw new RangeError(`deltaWindowMs must be a number of milliseconds, 0 or more (got ${deltaWindowMs})`);
    this.#client = client;
    this.#agent = agent;
    this.#windowMs = deltaWindowMs;
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
    } catch (e) {
      // Only loom names the running run: in the other dialects there is nothing to resume.
      // Anything else (the socket, the server) is the AI SDK's to show.
      if (/** @type {{code?: string}} */ (e)?.code === 'unsupported') return null;
      throw e;
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

  /** Ends each open stream whose step's calls have all ended or wait for this page. */
  #settled() {
    for (const s of this.#streams) s.settled();
  }

  #stream(run, abortSignal) {
    const waiting = this.#waiting;
    const streams = this.#streams;
    const windowMs = this.#windowMs;
    /** Calls of the stream's current step, by id: `'open'`, `'ended'`. */
    const step = new Map();
    let end = null;
    let controller;
    /** Deltas waiting for the ones after them (one per part, joined), and the timer that ends the wait. */
    let held = [];
    let timer = null;
    /** A delta has gone out: the reply shows. */
    let shown = false;
    const release = () => {
      if (timer !== null) clearTimeout(timer);
      timer = null;
      const out = held;
      held = [];
      for (const c of out) controller.enqueue(c);
    };
    const hold = (chunk) => {
      const last = held.at(-1);
      const field = DELTA_FIELD[chunk.type];
      if (last && last.type === chunk.type && last.id === chunk.id && last.toolCallId === chunk.toolCallId) last[field] += chunk[field];
      else held.push(chunk);
      timer ??= setTimeout(release, windowMs);
    };
    const state = {
      /** Pauses the stream once a call of its step waits for the page and none runs on. */
      settled() {
        let asked = false;
        for (const [id, s] of step) {
          if (s !== 'open') continue;
          if (!waiting.has(id)) return;
          asked = true;
        }
        if (asked) close(end(true));
      },
    };
    const close = (chunks) => {
      if (!streams.delete(state)) return;
      release();
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    };
    return new ReadableStream({
      start: (c) => {
        controller = c;
        streams.add(state);
        end = run.__uiChunks((chunks, done) => {
          // More of a part that shows already: it may wait for the rest.
          if (windowMs > 0 && shown && !done && chunks.every(isDelta)) {
            for (const chunk of chunks) hold(chunk);
            return;
          }
          release();
          for (const chunk of chunks) {
            const id = chunk.toolCallId;
            switch (chunk.type) {
              case 'start-step':
                // A new response: the calls of the last one are behind it.
                for (const [k, s] of step) if (s === 'ended') step.delete(k);
                break;
              case 'tool-input-available':
                step.set(id, 'open');
                break;
              case 'tool-output-available':
              case 'tool-output-error':
              case 'tool-output-denied':
                step.set(id, 'ended');
                break;
              default:
                if (isDelta(chunk)) shown = true;
            }
            controller.enqueue(chunk);
          }
          if (done) close([]);
          else state.settled();
        });
        abortSignal?.addEventListener(
          'abort',
          () => {
            // What waits goes first: a reader that reads on sees all that arrived.
            if (streams.has(state)) release();
            if (!run.finished) run.cancel();
          },
          { once: true },
        );
      },
      cancel: () => {
        if (timer !== null) clearTimeout(timer);
        timer = null;
        held = [];
        streams.delete(state);
        end?.(false);
      },
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
