// weft-sdk/agui: `WeftAgent`, an AG-UI agent (`AbstractAgent` of `@ag-ui/client`) over weft's
// AG-UI WebSocket (`GET /agui`), so an app built on `@ag-ui/client` (or on CopilotKit through
// it) gets weft's transport by changing one constructor: `new HttpAgent({ url })` becomes
// `new WeftAgent({ url })`, and the rest of the app is as it was.
//
// What it adds to `HttpAgent`: one socket for every run of the thread; a dropped socket is
// reopened and the run resumed where it was, by the `event_id` weft puts on every event
// (nothing lost, nothing twice); `abortRun()` cancels the run on the server; `connectAgent()`
// reattaches to the thread's running run (a reloaded page gets it from its start).
//
// The wire (weft_protocol::dialect::agui::socket): one `RunAgentInput` per client frame, one
// AG-UI event per server frame with weft's `run_id` and `event_id` beside its own fields, and
// weft's own `{"type":"resume","run_id","after_event_id"}` and `{"type":"cancel","run_id"}`.
// Plain JavaScript over the platform's `WebSocket`: the events arrive as AG-UI's own, so there
// is nothing for weft's wasm to translate.
//
// `@ag-ui/client` and `rxjs` are peers: the app's own copies are the ones its agent runs on.

import { AbstractAgent } from '@ag-ui/client';
import { Observable } from 'rxjs';

/**
 * weft's fields beside an event's own (see the wire above): for resuming and for weft's own
 * clients. `@ag-ui/client` strips fields it does not know, warning about each, so they are
 * taken off before the event goes on.
 */
const WEFT_FIELDS = ['run_id', 'event_id', 'user_message', 'agent', 'tool', 'arguments', 'is_error', 'last_usage', 'total_usage', 'request_id', 'details'];

/** How long to wait before reopening a dropped socket (ms), doubling up to `MAX_RETRY_MS`. */
const RETRY_MS = 250;
const MAX_RETRY_MS = 8000;

/**
 * A frame of weft's AG-UI socket: an AG-UI event with weft's fields beside its own.
 * @typedef {{ type: string, run_id?: string, event_id?: number, request_id?: string, code?: string, [key: string]: any }} Frame
 */

/**
 * One run the agent follows on its socket: what it saw of it, and where its events go.
 * @typedef {object} Following
 * @property {string} runId the weft run (the `runId` of the input that started it)
 * @property {number} seen the last `event_id` delivered
 * @property {(frame: Frame) => void} deliver
 * @property {(error: Error) => void} fail
 * @property {() => string} resend what to send on a socket to start or carry on
 */

export class WeftAgent extends AbstractAgent {
  /**
   * @param {import('./agui.d.mts').WeftAgentConfig} config
   */
  constructor(config) {
    super(config);
    /** The `/agui` endpoint, `ws://` or `wss://`. */
    this.url = config.url;
    /** @type {string | undefined} */
    this.token = config.token;
    /** @type {typeof WebSocket} */
    this.WebSocket = config.WebSocket ?? globalThis.WebSocket;
    /** @type {WebSocket | null} */
    this.socket = null;
    /** @type {Promise<WebSocket> | null} */
    this.opening = null;
    /** @type {Following | null} the run whose events the agent delivers now */
    this.following = null;
    /** The weft run the agent last followed and the last event of it delivered, for a resume. */
    this.lastRun = { runId: '', seen: 0 };
    this.retryMs = RETRY_MS;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.retryTimer = undefined;
  }

  /**
   * One AG-UI run: the input goes out as one frame; the run's events come back until its
   * `RUN_FINISHED` or `RUN_ERROR`. An input that answers (tool results, `resume`) continues the
   * weft run the previous one interrupted.
   * @param {import('@ag-ui/core').RunAgentInput} input
   * @returns {Observable<import('@ag-ui/core').BaseEvent>}
   */
  run(input) {
    const last = input.messages.at(-1);
    const starts = last?.role === 'user';
    const runId = starts ? input.runId : this.lastRun.runId;
    const seen = starts ? 0 : this.lastRun.seen;
    const frame = JSON.stringify({ ...input, threadId: this.threadId });
    // On a socket that dropped, the run is resumed instead; a run the server never got is
    // refused as unknown, and the input goes again (`retry`).
    return this.#follow(runId, seen, () => frame, starts ? () => frame : null);
  }

  /**
   * Reattaches to the thread's running run (`connectAgent()`): its events from the start, then
   * live. With none running, the stream ends at once.
   * @param {import('@ag-ui/core').RunAgentInput} _input
   * @returns {Observable<import('@ag-ui/core').BaseEvent>}
   */
  connect(_input) {
    // An empty run id asks for the session's active run (weft's resume).
    return this.#follow('', 0, () => JSON.stringify({ type: 'resume', run_id: '', after_event_id: 0 }), null);
  }

  /** Cancels the run on the server: its AG-UI run ends with `RUN_FINISHED {outcome: cancelled}`. */
  abortRun() {
    const runId = this.following?.runId;
    if (runId && this.socket?.readyState === 1) this.socket.send(JSON.stringify({ type: 'cancel', run_id: runId }));
    super.abortRun();
  }

  /** Closes the socket; a run still on goes on on the server (another agent may resume it). */
  close() {
    clearTimeout(this.retryTimer);
    this.following = null;
    const socket = this.socket;
    this.socket = null;
    this.opening = null;
    socket?.close(1000);
  }

  clone() {
    const copy = super.clone();
    copy.url = this.url;
    copy.token = this.token;
    copy.WebSocket = this.WebSocket;
    copy.socket = null;
    copy.opening = null;
    copy.following = null;
    copy.lastRun = { runId: '', seen: 0 };
    return copy;
  }

  /**
   * The events of one weft run as an AG-UI run's stream.
   * @param {string} runId the run ('' until the server names it: a reattach)
   * @param {number} seen events of it already delivered
   * @param {() => string} next the frame that starts the stream
   * @param {(() => string) | null} retry the frame to send when the server does not know the run
   * @returns {Observable<any>}
   */
  #follow(runId, seen, next, retry) {
    return new Observable((subscriber) => {
      this.lastRun = { runId, seen };
      /** @type {Following} */
      const following = {
        runId,
        seen,
        resend: next,
        deliver: (f) => {
          if (f.run_id === undefined) {
            // A refusal outside the run: of the input itself, or of a resume.
            if (f.type !== 'RUN_ERROR') return;
            if (f.code === 'unknown_run' && retry) {
              this.socket?.send(retry());
              return;
            }
            if (f.code === 'no_active_run' && following.runId === '') {
              this.#done(following);
              subscriber.complete();
              return;
            }
            this.#done(following);
            subscriber.next(event(f));
            subscriber.complete();
            return;
          }
          if (following.runId === '') following.runId = f.run_id;
          if (f.run_id !== following.runId || (f.event_id ?? 0) <= following.seen) return;
          following.seen = f.event_id ?? following.seen;
          this.lastRun = { runId: following.runId, seen: following.seen };
          subscriber.next(event(f));
          if (f.type === 'RUN_FINISHED' || f.type === 'RUN_ERROR') {
            this.#done(following);
            subscriber.complete();
          }
        },
        fail: (e) => {
          this.#done(following);
          subscriber.error(e);
        },
      };
      this.following = following;
      this.#send(following);
      return () => this.#done(following);
    });
  }

  /** @param {Following} following */
  #done(following) {
    if (this.following === following) this.following = null;
  }

  /** Sends what carries the followed run on, on the socket (opened if need be). */
  async #send(/** @type {Following} */ following) {
    let socket;
    try {
      socket = await this.#open();
    } catch (e) {
      following.fail(e instanceof Error ? e : new Error(String(e)));
      return;
    }
    if (this.following === following) socket.send(following.resend());
  }

  /** @returns {Promise<WebSocket>} the socket, open */
  #open() {
    if (this.socket && this.socket.readyState === 1) return Promise.resolve(this.socket);
    if (this.opening) return this.opening;
    const url = new URL(this.url);
    url.searchParams.set('session_id', this.threadId);
    if (this.token) url.searchParams.set('token', this.token);
    this.opening = new Promise((resolve, reject) => {
      const socket = new this.WebSocket(url.toString(), ['weft.agui']);
      let opened = false;
      socket.onopen = () => {
        opened = true;
        this.socket = socket;
        this.opening = null;
        this.retryMs = RETRY_MS;
        resolve(socket);
      };
      socket.onmessage = (m) => {
        if (socket !== this.socket) return;
        /** @type {Frame} */
        let frame;
        try {
          frame = JSON.parse(typeof m.data === 'string' ? m.data : new TextDecoder().decode(m.data));
        } catch {
          return;
        }
        this.following?.deliver(frame);
      };
      socket.onclose = (c) => {
        if (!opened) {
          this.opening = null;
          reject(new Error(`weft: the socket at ${this.url} did not open (${c.code} ${c.reason})`));
          return;
        }
        if (socket !== this.socket) return;
        this.socket = null;
        // A drop mid-run: reopen and resume it where it was.
        const following = this.following;
        if (following) this.#reconnect(following);
      };
    });
    return this.opening;
  }

  /** @param {Following} following */
  #reconnect(following) {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      if (this.following !== following) return;
      following.resend = () => JSON.stringify({ type: 'resume', run_id: following.runId, after_event_id: following.seen });
      this.#open().then(
        (socket) => {
          if (this.following === following) socket.send(following.resend());
        },
        () => {
          this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
          this.#reconnect(following);
        },
      );
    }, this.retryMs);
  }
}

/**
 * The AG-UI event of a frame: the frame without weft's fields.
 * @param {Frame} frame
 */
function event(frame) {
  const out = { ...frame };
  for (const key of WEFT_FIELDS) delete out[key];
  return out;
}
