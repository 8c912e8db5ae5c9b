/* tslint:disable */
/* eslint-disable */

/**
 * An event as listeners and iterators receive it: the canonical event in loom's JSON shape
 * (`type` plus payload), its envelope, and `run_id`, the run it belongs to.
 */
export type RunEvent = Event & {
    session_id?: string;
    node_id?: string;
    event_id?: number;
    run_id?: string;
};

/** `for await (const event of run.events())` — the package's entry module adds the method. */
export interface RunEvents {
    [Symbol.asyncIterator](): RunEvents;
}


/**
 * A tool as the model sees it: loom's `ToolSpec` (`loom-websocket-api.md` §4.3).
 */
export interface ToolSpec {
    /**
     * Tool name, unique within a session.
     */
    name: string;
    /**
     * What the tool does, for the model.
     */
    description?: string;
    /**
     * JSON Schema of the arguments object.
     */
    input_schema: unknown;
    /**
     * weft extension for client-side tools: a read-only tool runs without asking for approval.
     */
    read_only?: boolean;
}

/**
 * A tool the app runs itself (`registerTool`), or one the server offers (`toolsList`).
 */
export interface ToolDefinition {
    /**
     * Tool name, unique within the session.
     */
    name: string;
    /**
     * What the tool does, for the model.
     */
    description?: string;
    /**
     * JSON Schema of the arguments object (default: any object).
     */
    inputSchema?: unknown;
    /**
     * A read-only tool runs without asking for approval; any other client tool is approved
     * first, like the server's own mutating tools.
     */
    readOnly?: boolean;
}

/**
 * An event of a type this version does not know, with every field kept: `data` is the JSON
 * object of its members but `type` and the envelope's.
 */
export type UnknownEvent = { type: string; [field: string]: unknown };

/**
 * Everything a server says, in canonical form. See the module docs for where the set comes from.
 */
export type Event = { type: "run_start"; run_id?: string; message?: string; agent?: Agent } | { type: "node_enter"; id: string } | { type: "node_exit"; id: string; result: NodeResult } | { type: "message_chunk"; content: string; id: string } | ({ type: "usage" } & Usage) | { type: "values"; state: unknown } | { type: "state_delta"; delta: unknown[] } | { type: "updates"; id: string; state: unknown } | { type: "custom"; value: unknown } | { type: "checkpoint"; checkpoint_id: string; timestamp: string; step: number; state: unknown; thread_id?: string; checkpoint_ns?: string } | { type: "tot_expand"; candidates: string[] } | { type: "tot_evaluate"; chosen: number; scores: number[] } | { type: "tot_backtrack"; reason: string; to_depth: number } | { type: "got_plan"; node_count: number; edge_count: number; node_ids: string[] } | { type: "got_node_start"; id: string } | { type: "got_node_complete"; id: string; result_summary: string } | { type: "got_node_failed"; id: string; error: string } | { type: "got_expand"; node_id: string; nodes_added: number; edges_added: number } | { type: "tool_call_chunk"; call_id?: string; name?: string; arguments_delta: string } | { type: "tool_call"; call_id?: string; name: string; arguments: unknown } | { type: "tool_start"; call_id?: string; name: string } | { type: "tool_output"; call_id?: string; name: string; content: string } | { type: "tool_end"; call_id?: string; name: string; result: string; is_error: boolean } | { type: "tool_approval"; call_id?: string; name: string; arguments: unknown } | { type: "reasoning_chunk"; content: string; id: string } | { type: "llm_complete"; content: string; tool_calls: string[]; finish_reason: FinishReason } | { type: "approval_resolved"; call_id?: string; name?: string; review: Review; message?: string } | { type: "context_info"; token_count: number; usage_percent: number; transcript_length: number; max_tokens: number; strategy: string } | { type: "context_compacted"; old_token_count: number; new_token_count: number; reduction_percent: number; strategy: string } | { type: "user_message"; content: string } | { type: "events_lost"; from: number } | { type: "run_end"; reply: string; usage?: Usage; total_usage?: Usage; iteration_count?: number; paused?: boolean; tool_calls?: string[] } | { type: "error"; message: string; code?: string; id?: string; details?: unknown } | { type: "pong"; id: string } | { type: "tools_list"; id: string; tools: ToolSpec[] } | { type: "tool_show"; id: string; tool?: unknown; tool_yaml?: string } | { type: "user_messages"; id: string; thread_id: string; messages: StoredMessage[]; has_more?: boolean; active_run_id?: string } | ({ type: "unknown" } & UnknownEvent);

/**
 * Everything reassembled so far.
 */
export interface Transcript {
    /**
     * User and assistant messages, in order.
     */
    messages: Message[];
    /**
     * Tool calls, in the order they were first seen.
     */
    tool_calls: ToolCall[];
    /**
     * Runs, in the order they started.
     */
    runs: TranscriptRun[];
}

/**
 * Exponential backoff with jitter between reconnect attempts.
 */
export interface ReconnectOptions {
    /**
     * Delay before the first attempt, in ms (default 500); doubles with every failed attempt.
     */
    initialDelayMs?: number;
    /**
     * Longest delay between attempts, in ms (default 15000).
     */
    maxDelayMs?: number;
    /**
     * Give up after this many failed attempts in a row (default: never). Unfinished runs then
     * reject with code `disconnected`.
     */
    maxAttempts?: number;
}

/**
 * Frames of a run that were skipped: resume after `after_event_id` to get them.
 */
export interface Gap {
    run_id: string;
    /**
     * The last event id received without a hole before it.
     */
    after_event_id: number;
    /**
     * The event id that arrived instead of `after_event_id + 1`.
     */
    received: number;
}

/**
 * How a node span ended: loom writes `"Ok"` or `{"Err": "message"}`.
 */
export type NodeResult = "Ok" | { Err: string };

/**
 * How a run ended, or that it has not.
 */
export type RunStatus = "running" | "completed" | "failed" | "cancelled";

/**
 * How full the session's context window is: what `contextInfo()` resolves to (the
 * `context_info` events of a run carry the same numbers in snake_case).
 */
export interface ContextInfo {
    /**
     * Estimated tokens of the session's history (system prompt and tools included).
     */
    tokenCount: number;
    /**
     * `tokenCount` as a percentage of `maxTokens`.
     */
    usagePercent: number;
    /**
     * Items in the history.
     */
    transcriptLength: number;
    /**
     * The model's context window.
     */
    maxTokens: number;
    /**
     * The compaction strategy's name.
     */
    strategy: string;
}

/**
 * One agent a run may name (`client.run({ agent: name })`).
 */
export interface AgentInfo {
    /**
     * What a run names.
     */
    name: string;
    /**
     * One line, for a picker.
     */
    description: string;
    /**
     * The weft agent that runs it: `react`, `dup`, `tot` or `got`; `remote` for an AG-UI agent
     * that runs elsewhere (see `remote`).
     */
    agent: string;
    /**
     * Its model's provider, or `null` when it has none (see `problem`).
     */
    provider: string | null;
    /**
     * Its model, or `null` when it has none.
     */
    model: string | null;
    /**
     * Why its runs are refused (its provider has no key), or `null`.
     */
    problem: string | null;
    /**
     * A remote agent's host (never its path or headers), or `null` for one weft runs.
     */
    remote: string | null;
}

/**
 * One message.
 */
export interface Message {
    /**
     * Who said it.
     */
    role: Role;
    /**
     * Its text, accumulated in order.
     */
    text: string;
    /**
     * The model's reasoning before or while writing it.
     */
    reasoning?: string;
    /**
     * The run it belongs to.
     */
    run_id?: string;
    /**
     * Tool calls the message made.
     */
    tool_call_ids?: string[];
    /**
     * No more text will be added.
     */
    complete: boolean;
}

/**
 * One of the five socket protocols.
 */
export type Dialect = "loom" | "agentloop" | "agentchat" | "cueso" | "agui";

/**
 * One page of a thread's stored messages.
 */
export interface UserMessagesPage {
    /**
     * The thread.
     */
    threadId: string;
    /**
     * Messages, oldest first.
     */
    messages: StoredMessage[];
    /**
     * Older messages remain: ask again with `before` set to the first message's `id`.
     */
    hasMore: boolean;
    /**
     * The run streaming in the thread now, if any: `client.follow(activeRunId)` shows it
     * (after a page reload, or when another tab or device started it).
     */
    activeRunId?: string;
}

/**
 * One run.
 */
export interface TranscriptRun {
    /**
     * Run id, when the server gave one.
     */
    run_id: string | null;
    /**
     * The agent.
     */
    agent?: Agent;
    /**
     * Where it is.
     */
    status: RunStatus;
    /**
     * The final reply.
     */
    reply: string | null;
    /**
     * Usage of the last LLM call.
     */
    usage: Usage | null;
    /**
     * Usage of each LLM call, in order.
     */
    call_usage: Usage[];
    /**
     * Usage of the whole run so far.
     */
    total_usage: Usage;
    /**
     * The error, when it failed.
     */
    error: string | null;
    /**
     * It paused after a `pause_after` tool.
     */
    paused: boolean;
    /**
     * The agent's state: its last snapshot (`values`, AG-UI's `STATE_SNAPSHOT`) with every
     * patch since (`state_delta`) applied; a new run starts from the previous run's.
     */
    state?: unknown;
}

/**
 * One stored message of a thread (loom `UserMessageItem`).
 */
export interface StoredMessage {
    /**
     * weft extension: the message's sequence number within its thread, the `before` cursor.
     */
    id?: number;
    /**
     * Who said it.
     */
    role: Role;
    /**
     * What was said.
     */
    content: string;
}

/**
 * One tool call.
 */
export interface ToolCall {
    /**
     * Call id (`call-<n>` when the server gave none).
     */
    call_id: string;
    /**
     * Tool name.
     */
    name: string;
    /**
     * Arguments as streamed (JSON text).
     */
    arguments_text: string;
    /**
     * Arguments parsed, once complete and valid.
     */
    arguments: unknown;
    /**
     * Where it is.
     */
    status: ToolStatus;
    /**
     * The user's last decision on it.
     */
    review?: Review;
    /**
     * Deny message or explanation given with the decision.
     */
    review_message?: string;
    /**
     * Output streamed while it ran.
     */
    output?: string;
    result: string | null;
    /**
     * Whether the result is an error.
     */
    is_error: boolean;
    /**
     * The run it belongs to.
     */
    run_id?: string;
}

/**
 * The `code` of a `WeftError`: what went wrong, to branch on. A server may send a code of its
 * own that is not listed here; it reaches the app as the server wrote it.
 */
export type ErrorCode = "invalid_argument" | "connect_failed" | "disconnected" | "closed" | "timeout" | "callback_failed" | "run_failed" | "server_error" | "busy" | "internal" | "unsupported" | "resume_unsupported" | "ambiguous_reply" | "cancelled" | "unknown_run" | "stale" | "empty_transcript" | "frame_too_large" | "invalid_utf8" | "invalid_json" | "not_an_object" | "missing_type" | "unknown_type" | "invalid_field" | "invalid_request";

/**
 * The user's answer to an approval request (agentloop's review options).
 *
 * Closed: a decision this version does not understand must not be taken for a "yes".
 */
export type Review = "yes" | "no-continue" | "no-exit" | "always" | "explain";

/**
 * Token usage of one LLM call, or of a whole run.
 */
export interface Usage {
    /**
     * Input tokens.
     */
    prompt_tokens: number;
    /**
     * Output tokens.
     */
    completion_tokens: number;
    /**
     * `prompt_tokens + completion_tokens`, as the provider reported it.
     */
    total_tokens: number;
}

/**
 * What `agents()` resolves to: the agents a weft server offers.
 */
export interface AgentList {
    /**
     * The agent of a run that names none (the server's `DEFAULT_AGENT`).
     */
    defaultAgent: string;
    /**
     * weft's four, then the operator's own, in the server's order.
     */
    agents: AgentInfo[];
}

/**
 * What `compact()` resolves to once the server has summarised the older turns.
 */
export interface CompactResult {
    /**
     * Estimated tokens before.
     */
    oldTokenCount: number;
    /**
     * Estimated tokens after.
     */
    newTokenCount: number;
    /**
     * How much smaller, in percent.
     */
    reductionPercent: number;
    /**
     * The compaction strategy's name.
     */
    strategy: string;
}

/**
 * What `onApproval` callbacks receive: a tool call that waits for the user's decision.
 */
export interface ApprovalRequest {
    /**
     * The call. An original agentloop server names none (it approves its oldest pending
     * call): the client gives the turn's waiting call, absent only when there is none.
     */
    callId?: string;
    /**
     * The tool.
     */
    name: string;
    /**
     * Its arguments, parsed.
     */
    arguments: unknown;
    /**
     * The run that made the call.
     */
    runId?: string;
    /**
     * Aborted when the call is settled without this client: another tab or device answered
     * it, or it came from the replay of a run (`follow()`) and was answered long ago. Close the
     * prompt then; an answer given after that is not sent.
     */
    signal: AbortSignal;
}

/**
 * What `onAuthorization` callbacks receive: an MCP server of the session needs this user's
 * OAuth authorization (`url` set: open it, in a popup or a tab), or has just got it
 * (`authorized`: its tools are offered from the next run on).
 */
export interface McpAuthorization {
    /**
     * The server's `name` in the Worker's `MCP_SERVERS`.
     */
    server: string;
    /**
     * Where the user authorizes; absent once `authorized`.
     */
    url?: string;
    /**
     * `true` when the authorization completed (the callback reached the session).
     */
    authorized: boolean;
}

/**
 * What `reassembler.push()` did with a frame.
 */
export interface PushResult {
    /**
     * Events applied to the transcript (frames held back by an earlier gap and released by
     * this one included).
     */
    applied: number;
    /**
     * The frame repeated one already applied and was dropped.
     */
    duplicate: boolean;
    /**
     * The frame skipped ahead: it is held until the missing frames arrive; send `resume` with
     * `gap.run_id` and `gap.after_event_id` to get them.
     */
    gap?: Gap;
}

/**
 * What `run.result` resolves to once the run completes.
 */
export interface RunResult {
    /**
     * The final assistant reply.
     */
    reply: string;
    /**
     * Usage of the run's last LLM call, when the server reported it.
     */
    usage?: Usage;
    /**
     * Usage of the whole run.
     */
    totalUsage: Usage;
    /**
     * The run's id (what `resume` and `cancel` name).
     */
    runId: string;
}

/**
 * What an `onApproval` callback returns.
 */
export interface ApprovalAnswer {
    /**
     * `yes` runs the call; `always` runs it and stops asking for this tool in this session;
     * `no-continue` refuses it and lets the model go on; `no-exit` refuses it and ends the run;
     * `explain` asks the model to explain the call, then asks again.
     */
    review: Review;
    /**
     * Told to the model with a refusal (or kept with the decision otherwise).
     */
    message?: string;
}

/**
 * What differs by dialect, for an app that shows it or offers only what the dialect serves:
 * `dialectInfo(dialect)`. The SDK's own rules read the same description of the dialect (the
 * protocol's `Dialect::describe`), so an app that asks here never copies them.
 */
export interface DialectInfo {
    /**
     * The path of its endpoint on a weft server (`/`, `/agentloop`, `/ws`, `/ws/chat`): what
     * a `url` without a path gets.
     */
    endpoint: string;
    /**
     * The `Client` requests a weft server serves on its sockets (`"ping"`, `"toolsList"`,
     * `"toolShow"`, `"userMessages"`, `"contextInfo"`, `"compact"`, `"addMcpServer"`); the
     * others reject with `unsupported`.
     */
    requests: string[];
    /**
     * Whether its runs report the context window as they go (`context_info` events); where
     * they do not, `contextInfo()` on a socket of a dialect that serves it asks.
     */
    reportsContext: boolean;
    /**
     * Whether its runs carry the agents' plans: the steps (`node_enter`/`node_exit`), the
     * tree of thoughts and the graph of thoughts (loom). Elsewhere these agents' work arrives
     * as text, and `RunView`'s `spans`, `tot` and `got` stay empty.
     */
    plans: boolean;
    /**
     * Whether its `run` request carries the run options `workingFolder`, `gotAdaptive` and
     * `verbose` (loom); elsewhere they are left out.
     */
    runOptions: boolean;
}

/**
 * Where a tool call is in its life.
 */
export type ToolStatus = "streaming" | "pending" | "awaiting_approval" | "approved" | "denied" | "running" | "done" | "error";

/**
 * Where an event sits: the loom envelope (§2) plus the run it belongs to.
 *
 * `event_id` counts frames from 1 within a run (specs/README). On canonical events it is the
 * position in the run's event log; each dialect renumbers the frames it actually sends so a
 * client always sees a dense sequence and can tell a gap from a dropped event type.
 */
export interface Envelope {
    /**
     * Session (thread) the event belongs to.
     */
    session_id?: string;
    /**
     * Node span id, `run-<node>-<n>`.
     */
    node_id?: string;
    /**
     * Sequence number within the run, from 1.
     */
    event_id?: number;
}

/**
 * Where the client's connection is, for `onStatus` listeners.
 */
export interface ClientStatus {
    /**
     * `connecting` (first attempt), `open`, `reconnecting` (waiting `retryInMs` before
     * attempt `attempt`), or `closed` (by `close()`, a refusal, or after the last attempt).
     */
    state: "connecting" | "open" | "reconnecting" | "closed";
    /**
     * The reconnect attempt about to be made.
     */
    attempt?: number;
    /**
     * Delay before that attempt, in ms.
     */
    retryInMs?: number;
    /**
     * Why the socket closed: its close code and reason.
     */
    reason?: string;
}

/**
 * Which agent runs a message (loom `agent`); `react` by default.
 */
export type Agent = "react" | "dup" | "tot" | "got" | (string & {});

/**
 * Who said a message.
 */
export type Role = "system" | "user" | "assistant" | (string & {});

/**
 * Why an LLM response stopped, in OpenAI's spelling.
 */
export type FinishReason = "stop" | "tool_calls" | "length" | "content_filter" | (string & {});

/**
 * `client.addMcpServer(server)`: a remote MCP server whose tools this session's runs may call.
 */
export interface McpServerOptions {
    /**
     * The prefix of its tools' names (`<name>_<tool>`): A-Z, a-z, 0-9, - and _.
     */
    name: string;
    /**
     * Its Streamable HTTP endpoint (`https://…/mcp`).
     */
    url: string;
    /**
     * Sent with every request to it (a token, typically): kept with the session, never
     * shown back.
     */
    headers?: Record<string, string>;
}

/**
 * `client.run(options)`.
 */
export interface RunOptions {
    /**
     * The user message.
     */
    message: string;
    /**
     * Which agent runs it: weft's four, or a name the server's operator configured (see
     * `agents()`). Left out: the server's default agent (`react` unless its operator set
     * another; on loom, whose request needs one, `react`).
     */
    agent?: Agent;
    /**
     * The thread to run in (default: the client's `sessionId`).
     */
    threadId?: string;
    /**
     * Working folder for the agent's file tools (loom).
     */
    workingFolder?: string;
    /**
     * Adaptive graph of thoughts (loom, agent `got` only).
     */
    gotAdaptive?: boolean;
    /**
     * Also stream `values`/`updates` state snapshots (loom).
     */
    verbose?: boolean;
}

/**
 * `client.userMessages(threadId, options)`.
 */
export interface UserMessagesOptions {
    /**
     * Only messages older than this message id (the `id` of a `StoredMessage`).
     */
    before?: number;
    /**
     * At most this many (server default 100, capped at 1000).
     */
    limit?: number;
}

/**
 * `new Client(options)`.
 */
export interface ClientOptions {
    /**
     * The server: `wss://host` (the dialect's endpoint path is added: `/`, `/agentloop`,
     * `/ws`, `/ws/chat`) or a full endpoint URL. `http(s)://` is accepted and turned into
     * `ws(s)://` — but for `"agui"`, where it is an AG-UI agent's HTTP endpoint, used as it
     * is: runs are POSTs and the events come back as server-sent events.
     */
    url: string;
    /**
     * Which wire protocol to speak. A one-dialect package (`weft-sdk/loom`, …) speaks its own
     * when none is given and refuses any other (`unsupported`); `weft-sdk` and
     * `weft-sdk/with-agui` speak several and need it.
     */
    dialect?: Dialect;
    /**
     * The session (thread) to join; runs go to it unless `RunOptions.threadId` says otherwise.
     * Sent as the `session_id` query parameter so a reconnect reaches the same session.
     */
    sessionId?: string;
    /**
     * Auth token, sent to weft as the WebSocket subprotocol `weft.token.<token>` (never in the
     * URL, so it stays out of server logs): letters, digits and ``!#$%&'*+-.^_`|~`` only. An
     * original server takes no subprotocol: there it goes in the `token` query parameter.
     * A function returning the token (or a promise of it) is called before every connect and
     * reconnect, so a short-lived per-user token is fresh each time; if it throws, that
     * attempt fails and the next one (after the backoff) calls it again.
     */
    token?: string | (() => string | Promise<string>);
    /**
     * Which server this is: `"auto"` (default) finds out on the first connect — it offers the
     * `weft.<dialect>` subprotocol and, if the handshake fails for want of it, connects again
     * without and treats the server as the dialect's original; `"weft"` or `"original"` skip
     * finding out. `client.server` says what was found. On an original server the client
     * speaks only the dialect's own document (see the README, "Talking to the original
     * servers").
     */
    server?: "auto" | "weft" | "original";
    /**
     * Reconnect after a drop and resume every unfinished run (default `true`).
     */
    reconnect?: Reconnect;
    /**
     * How often to ping the server to detect a half-open socket, in ms (default 15000; 0
     * turns heartbeats off).
     */
    heartbeatIntervalMs?: number;
    /**
     * How long to wait for any frame after a heartbeat ping before treating the socket as
     * dead and reconnecting, in ms (default 10000).
     */
    heartbeatTimeoutMs?: number;
    /**
     * How long `ping()`, `toolsList()`, `toolShow()`, `userMessages()`, `contextInfo()`,
     * `compact()` and `addMcpServer()` wait for their reply before rejecting with code
     * `timeout`, in ms (default 30000).
     */
    requestTimeoutMs?: number;
}

/**
 * `reconnect`: on/off, or the backoff to use.
 */
export type Reconnect = boolean | ReconnectOptions;


/**
 * A connection to a weft server, or to the original server of one of the four dialects, for
 * one session (see the `server` option).
 *
 * ```js
 * const client = new Client({ url: "wss://weft.example.com", dialect: "loom", sessionId });
 * await client.connect();
 * const run = client.run({ message: "hi" });
 * run.onText((delta) => render(delta));
 * const { reply } = await run.result;
 * client.close();
 * ```
 */
export class Client {
    free(): void;
    [Symbol.dispose](): void;
    /**
     * Adds a remote MCP server to this client's session, where the server's operator allows
     * it (`MCP_CLIENT_SERVERS`): resolves with its tools as the model sees them
     * (`<name>_<tool>`, every call asking approval), or rejects with why it was refused. The
     * headers stay with the session; no reply, status or tool list shows them.
     */
    addMcpServer(server: McpServerOptions): Promise<ToolDefinition[]>;
    /**
     * The agents the server offers — weft's four and the operator's own (`AGENTS`), each with
     * its description, the weft agent that runs it and its model — and the one a run that
     * names no `agent` gets. Read from the server's `GET /status` over HTTP (with the token),
     * so it needs no open socket; rejects with `unsupported` where there is none (an original
     * server) or it answers an error.
     */
    agents(): Promise<AgentList>;
    /**
     * Closes the socket for good. Runs still streaming and requests still waiting reject with
     * `closed`; the server goes on with the runs (a disconnect never cancels one).
     */
    close(): void;
    /**
     * Summarises the session's older turns now, so later runs send fewer tokens (agentloop
     * only; other dialects reject with `unsupported`). Resolves with the token counts before
     * and after; rejects with the server's code when there is nothing to compact
     * (`empty_transcript`) or a run is streaming (`busy`). Every socket of the session sees the
     * `context_compacted` event. A client of another dialect can open an agentloop `Client`
     * on the same `sessionId` for this.
     */
    compact(): Promise<CompactResult>;
    /**
     * Opens the socket. Resolves once it is open; rejects with `connect_failed` when the first
     * attempt fails (wrong URL, server down, token refused) — call it again to retry — or with
     * `closed` after `close()`. Runs and requests made before it resolves are queued.
     */
    connect(): Promise<void>;
    /**
     * How full the session's context window is: estimated tokens of its history, the window,
     * the percentage (agentloop only; other dialects reject with `unsupported`). Runs report
     * the same as `context_info` events in loom and agentloop.
     */
    contextInfo(): Promise<ContextInfo>;
    /**
     * Follows a run this client did not start, by its id: one started before the page was
     * reloaded, or from another tab or device (`userMessages()` gives the session's
     * `activeRunId`). The returned `Run` gets the run from its start (what this client has
     * not seen yet is replayed), then live, and settles when it ends; its approvals reach
     * `onApproval`, those answered already arriving withdrawn. Rejects `run.result` with
     * `unknown_run` when the server has no such run; throws `closed` after `close()`. Needs a
     * weft server: it asks with `resume`, weft's extension to every dialect (on an original
     * server it throws `unsupported`).
     */
    follow(runId: string): Run;
    /**
     * The last event id of a run received with nothing missing before it.
     */
    lastEventId(runId: string): number;
    /**
     * A client for one session; nothing is opened until `connect()`. Throws
     * `invalid_argument` for options it cannot use (unknown dialect, a URL that is not
     * `ws(s)://` or `http(s)://`, a token a subprotocol cannot carry, a negative delay).
     */
    constructor(options: ClientOptions);
    /**
     * Answers tool approvals with `callback(request)`, which returns (or resolves to)
     * `{ review, message? }`. Works in every dialect on weft: on agentchat and cueso the
     * client declares itself an approver (`client_tools` with `approvals: true`) while a
     * callback is set. Of the original servers only agentloop asks (its request names no
     * call: the client names it by the turn's one waiting call, and the answer applies to the
     * original's one pending request). One callback answers at a
     * time; a newer one replaces it. If the callback throws or answers something else, the
     * call is denied (`no-continue`) and `onError` is told. Returns the function that removes
     * the callback.
     */
    onApproval(callback: (request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>): () => void;
    /**
     * Calls `callback` when an MCP server of the session needs this user's OAuth authorization,
     * with `{ server, url, authorized: false }` — open `url` (a popup, a tab): the user approves
     * at the server's authorization server, which sends the browser on to the Worker's callback
     * — and once it is authorized, with `{ server, authorized: true }`: the server's tools are
     * offered from the next run on, with no reload. Only the user whose run or `toolsList()`
     * met the server is asked. Loom (on weft) and AG-UI carry it; agentchat, cueso, agentloop
     * and the original servers have no frame for it, so there it never fires (a call of the
     * server fails with a message saying where to authorize). Returns the function that
     * unsubscribes.
     */
    onAuthorization(callback: (authorization: McpAuthorization) => void): () => void;
    /**
     * Calls `callback` with problems no call of the app is waiting on: a frame that does not
     * decode, an approval callback that failed. Without a listener they go to the console.
     * Returns the function that unsubscribes.
     */
    onError(callback: (error: Error & { code: ErrorCode }) => void): () => void;
    /**
     * Calls `callback` with every event this client applies, of any run (its own, and those
     * other sockets of the session started). Returns the function that unsubscribes.
     */
    onEvent(callback: (event: RunEvent) => void): () => void;
    /**
     * Calls `callback` when the connection changes state (`connecting`, `open`,
     * `reconnecting` with the attempt and delay, `closed` with the reason). Returns the
     * function that unsubscribes.
     */
    onStatus(callback: (status: ClientStatus) => void): () => void;
    /**
     * Round trip to the server, in ms. weft answers it in every dialect; of the original
     * servers only loom's does (the others reject with `unsupported` at once).
     */
    ping(): Promise<number>;
    /**
     * Declares a tool this page runs itself and the handler that runs it: `handler(args,
     * callId)` returns (or resolves to) the result — a string, or any value, sent as JSON. A throw or
     * rejection is sent as an error result. The server asks for approval first unless the
     * tool is `readOnly`. Registering a name again replaces the tool. Returns the function
     * that unregisters it. Needs a weft server: an original one never calls the tool, and
     * `onError` gets `unsupported` to say so.
     */
    registerTool(spec: ToolDefinition, handler: (args: any, callId: string) => unknown): () => void;
    /**
     * Starts a run of one user message. Returns at once; the run streams through its `Run`
     * handle. Throws `invalid_argument` for an empty message, `closed` after `close()`.
     */
    run(options: RunOptions): Run;
    /**
     * One tool's definition: a JSON object with `format` `"json"`, YAML text by default
     * (loom only).
     */
    toolShow(name: string, format?: "yaml" | "json"): Promise<unknown>;
    /**
     * The tools the server offers (loom only; other dialects reject with `unsupported`).
     */
    toolsList(): Promise<ToolDefinition[]>;
    /**
     * Everything reassembled from every run this client has seen (its own and those other
     * sockets of the session started): messages, tool calls, runs. A fresh copy per call.
     */
    transcript(): Transcript;
    /**
     * A page of a thread's stored messages, oldest first (loom only).
     */
    userMessages(threadId: string, options?: UserMessagesOptions): Promise<UserMessagesPage>;
    /**
     * The dialect spoken.
     */
    readonly dialect: Dialect;
    /**
     * The server found: `"weft"`, or `"original"` for the dialect's original server, which
     * is spoken to in its own document only; `undefined` until the first socket has opened
     * (with `server: "auto"`).
     */
    readonly server: "weft" | "original" | undefined;
}

/**
 * Reassembles the frames of one dialect into a transcript, whatever carried them.
 *
 * ```js
 * const r = new Reassembler("cueso");
 * const off = r.onEvent((ev) => console.log(ev.type));
 * for (const frame of frames) r.push(frame);
 * r.transcript().messages;
 * ```
 */
export class Reassembler {
    free(): void;
    [Symbol.dispose](): void;
    /**
     * The last event id of `runId` applied with nothing missing before it: the
     * `after_event_id` to resume from (0 when nothing of the run arrived).
     */
    lastEventId(runId: string): number;
    /**
     * A reassembler for frames of `dialect`: in a one-dialect entry (`weft-sdk/loom`, …) its
     * own when not given; `weft-sdk` and `weft-sdk/with-agui` need it. Throws
     * `invalid_argument` for an unknown name, `unsupported` for a dialect this build leaves out.
     */
    constructor(dialect?: Dialect);
    /**
     * Calls `callback` with every event applied from now on, in order (after the push that
     * applied it has finished updating the transcript). Returns the function that unsubscribes.
     */
    onEvent(callback: (event: RunEvent) => void): () => void;
    /**
     * Pushes many text frames in one call, in order. Stops at the first frame that does not
     * decode and throws naming its index; the frames before it stay applied. The result sums
     * `applied`, ORs `duplicate` and keeps the last `gap`.
     *
     * The frames cross into wasm as one string, joined in JavaScript with U+001E (a character
     * JSON text can only hold escaped), so a batch costs one copy instead of one per frame.
     */
    pushMany(frames: string[]): PushResult;
    /**
     * Pushes one server frame. Returns what it did: events applied, whether it was a
     * duplicate (dropped), and the gap it revealed (the frame is then held until the missing
     * frames arrive). Throws a `WeftError` with the protocol's code (`invalid_json`,
     * `invalid_field`, …) when the frame does not decode; the transcript is then unchanged.
     */
    push(frame: string | Uint8Array | ArrayBuffer): PushResult;
    /**
     * Everything reassembled so far: messages, tool calls (arguments parsed once complete,
     * status through approval and execution) and runs (status, reply, usage). A fresh copy on
     * every call.
     */
    transcript(): Transcript;
    /**
     * The dialect it decodes.
     */
    readonly dialect: Dialect;
}

/**
 * One run: stream it with `onText`/`onEvent` or `for await (const ev of run.events())`,
 * await `result`, stop it with `cancel()`. `free()` is optional: the run is released when
 * garbage-collected.
 */
export class Run {
    private constructor();
    free(): void;
    [Symbol.dispose](): void;
    /**
     * Asks the server to stop the run; `result` then rejects with code `cancelled`. A run that
     * already ended (`close()` ends every run the client follows) is left alone. Needs a weft
     * server once the run has gone out: the original servers have no cancel, so there it
     * throws `unsupported` and the run goes on.
     */
    cancel(): void;
    /**
     * An async iterator over every event of the run from its first, ending after the run's
     * last event (`run_end`, or `error`; the outcome is also in `result`).
     */
    events(): RunEvents;
    /**
     * Calls `callback` with each event of this run from now on. Returns the function that
     * unsubscribes.
     */
    onEvent(callback: (event: RunEvent) => void): () => void;
    /**
     * Calls `callback` with each piece of assistant text as it streams (every dialect; one
     * whose server sends whole messages yields them whole). Returns the function that
     * unsubscribes.
     */
    onText(callback: (delta: string) => void): () => void;
    /**
     * Whether the run has ended.
     */
    readonly finished: boolean;
    /**
     * Settles when the run ends: resolves with the reply and usage, rejects with a `WeftError`
     * whose `code` is the server's (`cancelled` after `cancel()`, …), or `disconnected` /
     * `closed` when the client stopped following it, or `resume_unsupported` when the socket
     * dropped mid-run on an original server, which cannot resume it (what arrived stays in
     * `transcript()`).
     */
    readonly result: Promise<RunResult>;
    /**
     * The run's id: chosen by the client (a UUID) unless the server named it otherwise.
     */
    readonly runId: string;
}

/**
 * The iterator `run.events()` returns; `for await` works on it (`[Symbol.asyncIterator]`
 * comes from the package's entry module).
 */
export class RunEvents {
    private constructor();
    free(): void;
    [Symbol.dispose](): void;
    /**
     * The next event, or `{ done: true }` after the run's last one.
     */
    next(): Promise<IteratorResult<RunEvent, undefined>>;
    /**
     * Stops iterating (what `break` in `for await` calls).
     */
    return(): Promise<IteratorResult<RunEvent, undefined>>;
}

/**
 * What differs by dialect: its endpoint path, the requests a weft server serves on it,
 * whether its runs report the context window and carry the agents' plans, and whether its run
 * request takes the run options. Throws `invalid_argument` for an unknown dialect.
 */
export function dialectInfo(dialect: Dialect): DialectInfo;

export type InitInput = RequestInfo | URL | Response | BufferSource | WebAssembly.Module;

export interface InitOutput {
    readonly memory: WebAssembly.Memory;
    readonly __wbg_client_free: (a: number, b: number) => void;
    readonly __wbg_reassembler_free: (a: number, b: number) => void;
    readonly __wbg_run_free: (a: number, b: number) => void;
    readonly __wbg_runevents_free: (a: number, b: number) => void;
    readonly client_addMcpServer: (a: number, b: any) => any;
    readonly client_agents: (a: number) => any;
    readonly client_close: (a: number) => void;
    readonly client_compact: (a: number) => any;
    readonly client_connect: (a: number) => any;
    readonly client_contextInfo: (a: number) => any;
    readonly client_dialect: (a: number) => [number, number];
    readonly client_follow: (a: number, b: number, c: number) => [number, number, number];
    readonly client_lastEventId: (a: number, b: number, c: number) => number;
    readonly client_new: (a: any) => [number, number, number];
    readonly client_onApproval: (a: number, b: any) => any;
    readonly client_onAuthorization: (a: number, b: any) => any;
    readonly client_onError: (a: number, b: any) => any;
    readonly client_onEvent: (a: number, b: any) => any;
    readonly client_onStatus: (a: number, b: any) => any;
    readonly client_ping: (a: number) => any;
    readonly client_registerTool: (a: number, b: any, c: any) => [number, number, number];
    readonly client_run: (a: number, b: any) => [number, number, number];
    readonly client_server: (a: number) => [number, number];
    readonly client_toolShow: (a: number, b: number, c: number, d: number, e: number) => any;
    readonly client_toolsList: (a: number) => any;
    readonly client_transcript: (a: number) => [number, number, number];
    readonly client_userMessages: (a: number, b: number, c: number, d: number) => any;
    readonly dialectInfo: (a: number, b: number) => [number, number, number];
    readonly reassembler_dialect: (a: number) => [number, number];
    readonly reassembler_lastEventId: (a: number, b: number, c: number) => number;
    readonly reassembler_new: (a: number, b: number) => [number, number, number];
    readonly reassembler_onEvent: (a: number, b: any) => any;
    readonly reassembler_push: (a: number, b: any) => [number, number, number];
    readonly reassembler_pushMany: (a: number, b: any) => [number, number, number];
    readonly reassembler_transcript: (a: number) => [number, number, number];
    readonly run___uiChunks: (a: number, b: any) => any;
    readonly run_cancel: (a: number) => [number, number];
    readonly run_events: (a: number) => number;
    readonly run_finished: (a: number) => number;
    readonly run_onEvent: (a: number, b: any) => any;
    readonly run_onText: (a: number, b: any) => any;
    readonly run_result: (a: number) => any;
    readonly run_runId: (a: number) => [number, number];
    readonly runevents_next: (a: number) => any;
    readonly runevents_return: (a: number) => any;
    readonly wasm_bindgen_b2274a1287d9f2dc___convert__closures_____invoke___alloc_429c669814daab17___string__String______true_: (a: number, b: number, c: number, d: number) => void;
    readonly wasm_bindgen_b2274a1287d9f2dc___convert__closures_____invoke___bool__wasm_bindgen_b2274a1287d9f2dc___JsValue______true_: (a: number, b: number, c: number, d: any) => void;
    readonly wasm_bindgen_b2274a1287d9f2dc___convert__closures_____invoke___js_sys_7372e5b13f55676___Function_fn_wasm_bindgen_b2274a1287d9f2dc___JsValue_____wasm_bindgen_b2274a1287d9f2dc___sys__Undefined___js_sys_7372e5b13f55676___Function_fn_wasm_bindgen_b2274a1287d9f2dc___JsValue_____wasm_bindgen_b2274a1287d9f2dc___sys__Undefined_______true_: (a: number, b: number, c: any, d: any) => void;
    readonly wasm_bindgen_b2274a1287d9f2dc___convert__closures_____invoke___bool__wasm_bindgen_b2274a1287d9f2dc___JsValue__true_: (a: number, b: number, c: number) => any;
    readonly wasm_bindgen_b2274a1287d9f2dc___convert__closures_____invoke___js_sys_7372e5b13f55676___Uint8Array______true_: (a: number, b: number, c: any) => void;
    readonly wasm_bindgen_b2274a1287d9f2dc___convert__closures_____invoke___js_sys_7372e5b13f55676___Uint8Array______true__46: (a: number, b: number, c: any) => void;
    readonly wasm_bindgen_b2274a1287d9f2dc___convert__closures_____invoke___js_sys_7372e5b13f55676___Uint8Array______true__47: (a: number, b: number, c: any) => void;
    readonly wasm_bindgen_b2274a1287d9f2dc___convert__closures_____invoke___wasm_bindgen_b2274a1287d9f2dc___JsValue______true_: (a: number, b: number, c: any) => void;
    readonly wasm_bindgen_b2274a1287d9f2dc___convert__closures_____invoke_______true_: (a: number, b: number) => void;
    readonly __wbindgen_malloc: (a: number, b: number) => number;
    readonly __wbindgen_realloc: (a: number, b: number, c: number, d: number) => number;
    readonly __wbindgen_free: (a: number, b: number, c: number) => void;
    readonly __wbindgen_exn_store: (a: number) => void;
    readonly __externref_table_alloc: () => number;
    readonly __wbindgen_externrefs: WebAssembly.Table;
    readonly __wbindgen_destroy_closure: (a: number, b: number) => void;
    readonly __externref_table_dealloc: (a: number) => void;
    readonly __wbindgen_start: () => void;
}

export type SyncInitInput = BufferSource | WebAssembly.Module;

/**
 * Instantiates the given `module`, which can either be bytes or
 * a precompiled `WebAssembly.Module`.
 *
 * @param {{ module: SyncInitInput }} module - Passing `SyncInitInput` directly is deprecated.
 *
 * @returns {InitOutput}
 */
export function initSync(module: { module: SyncInitInput } | SyncInitInput): InitOutput;

/**
 * If `module_or_path` is {RequestInfo} or {URL}, makes a request and
 * for everything else, calls `WebAssembly.instantiate` directly.
 *
 * @param {{ module_or_path: InitInput | Promise<InitInput> }} module_or_path - Passing `InitInput` directly is deprecated.
 *
 * @returns {Promise<InitOutput>}
 */
export default function __wbg_init (module_or_path?: { module_or_path: InitInput | Promise<InitInput> } | InitInput | Promise<InitInput>): Promise<InitOutput>;
