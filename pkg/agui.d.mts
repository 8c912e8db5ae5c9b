// weft-sdk/agui: `WeftAgent`, an AG-UI agent over weft's AG-UI WebSocket (see agui.mjs).

import { AbstractAgent, type AgentConfig } from '@ag-ui/client';
import type { BaseEvent, RunAgentInput } from '@ag-ui/core';
import type { Observable } from 'rxjs';

/** A `WeftAgent`'s options: `@ag-ui/client`'s `AgentConfig` and where weft is. */
export interface WeftAgentConfig extends AgentConfig {
  /** weft's AG-UI WebSocket endpoint: `wss://<host>/agui` (`ws://` locally). */
  url: string;
  /** weft's auth token (`WEFT_AUTH_TOKEN`, or a per-user token), when the server asks one. */
  token?: string;
  /** The `WebSocket` class to use (in Node before 22, `ws`'s); the platform's by default. */
  WebSocket?: typeof WebSocket;
}

/**
 * An AG-UI agent whose runs go over weft's WebSocket: `HttpAgent`'s drop-in replacement. The
 * thread (`threadId`) is a weft session; a dropped socket is reopened and the run resumed by
 * event offset (every event once, in order); approvals are AG-UI interrupts, answered with
 * `resume` in the next run; `abortRun()` cancels the run on the server; `connectAgent()`
 * reattaches to the thread's running run.
 */
export declare class WeftAgent extends AbstractAgent {
  constructor(config: WeftAgentConfig);
  /** The `/agui` endpoint. */
  url: string;
  token: string | undefined;
  /** One AG-UI run: the input out as one frame, the run's events back. */
  run(input: RunAgentInput): Observable<BaseEvent>;
  /** The thread's running run, from its start, then live; ends at once when none runs. */
  protected connect(input: RunAgentInput): Observable<BaseEvent>;
  /** Cancels the run on the server. */
  abortRun(): void;
  /** Closes the socket; a run still on goes on on the server. */
  close(): void;
  clone(): WeftAgent;
}
