//! The SDK's own shapes at the boundary: options the app passes in and results it gets back.
//!
//! These are camelCase, as JavaScript APIs are. Shapes that *are* the wire — events, the
//! transcript, `Gap`, `Usage`, stored messages — keep the protocol's snake_case (their tsify
//! types come from weft-protocol), so what the app sees matches the protocol documents and the
//! golden transcripts field for field.

use serde::Serialize;
use tsify::Tsify;
use weft_protocol::event::StoredMessage;
use weft_protocol::json::{self, ObjectWriter, RawJson};
use weft_protocol::reassembler::Gap;
use weft_protocol::Usage;

/// `new Client(options)`.
#[derive(Debug, Clone, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ClientOptions {
    /// The server: `wss://host` (the dialect's endpoint path is added: `/`, `/agentloop`,
    /// `/ws`, `/ws/chat`) or a full endpoint URL. `http(s)://` is accepted and turned into
    /// `ws(s)://` — but for `"agui"`, where it is an AG-UI agent's HTTP endpoint, used as it
    /// is: runs are POSTs and the events come back as server-sent events.
    pub url: String,
    /// Which wire protocol to speak. A one-dialect package (`weft-sdk/loom`, …) speaks its own
    /// when none is given and refuses any other (`unsupported`); `weft-sdk` and
    /// `weft-sdk/with-agui` speak several and need it.
    #[serde(default)]
    #[tsify(optional, type = "Dialect")]
    pub dialect: Option<String>,
    /// The session (thread) to join; runs go to it unless `RunOptions.threadId` says otherwise.
    /// Sent as the `session_id` query parameter so a reconnect reaches the same session.
    #[serde(default)]
    #[tsify(optional)]
    pub session_id: Option<String>,
    /// Auth token, sent to weft as the WebSocket subprotocol `weft.token.<token>` (never in the
    /// URL, so it stays out of server logs): letters, digits and ``!#$%&'*+-.^_`|~`` only. An
    /// original server takes no subprotocol: there it goes in the `token` query parameter.
    /// A function returning the token (or a promise of it) is called before every connect and
    /// reconnect, so a short-lived per-user token is fresh each time; if it throws, that
    /// attempt fails and the next one (after the backoff) calls it again.
    #[serde(default)]
    #[tsify(optional, type = "string | (() => string | Promise<string>)")]
    pub token: Option<String>,
    /// Which server this is: `"auto"` (default) finds out on the first connect — it offers the
    /// `weft.<dialect>` subprotocol and, if the handshake fails for want of it, connects again
    /// without and treats the server as the dialect's original; `"weft"` or `"original"` skip
    /// finding out. `client.server` says what was found. On an original server the client
    /// speaks only the dialect's own document (see the README, "Talking to the original
    /// servers").
    #[serde(default)]
    #[tsify(optional, type = "\"auto\" | \"weft\" | \"original\"")]
    pub server: Option<String>,
    /// Reconnect after a drop and resume every unfinished run (default `true`).
    #[serde(default)]
    #[tsify(optional)]
    pub reconnect: Option<Reconnect>,
    /// How often to ping the server to detect a half-open socket, in ms (default 15000; 0
    /// turns heartbeats off).
    #[serde(default)]
    #[tsify(optional)]
    pub heartbeat_interval_ms: Option<f64>,
    /// How long to wait for any frame after a heartbeat ping before treating the socket as
    /// dead and reconnecting, in ms (default 10000).
    #[serde(default)]
    #[tsify(optional)]
    pub heartbeat_timeout_ms: Option<f64>,
    /// How long `ping()`, `toolsList()`, `toolShow()`, `userMessages()`, `contextInfo()`,
    /// `compact()` and `addMcpServer()` wait for their reply before rejecting with code
    /// `timeout`, in ms (default 30000).
    #[serde(default)]
    #[tsify(optional)]
    pub request_timeout_ms: Option<f64>,
}

/// `reconnect`: on/off, or the backoff to use.
#[derive(Debug, Clone, Tsify)]
#[serde(untagged)]
pub enum Reconnect {
    /// `true` for the default backoff, `false` to stay disconnected after a drop.
    Enabled(bool),
    /// A tuned backoff.
    Backoff(ReconnectOptions),
}

/// Exponential backoff with jitter between reconnect attempts.
#[derive(Debug, Clone, Default, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ReconnectOptions {
    /// Delay before the first attempt, in ms (default 500); doubles with every failed attempt.
    #[serde(default)]
    #[tsify(optional)]
    pub initial_delay_ms: Option<f64>,
    /// Longest delay between attempts, in ms (default 15000).
    #[serde(default)]
    #[tsify(optional)]
    pub max_delay_ms: Option<f64>,
    /// Give up after this many failed attempts in a row (default: never). Unfinished runs then
    /// reject with code `disconnected`.
    #[serde(default)]
    #[tsify(optional)]
    pub max_attempts: Option<u32>,
}

/// `client.run(options)`.
#[derive(Debug, Clone, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct RunOptions {
    /// The user message.
    pub message: String,
    /// Which agent runs it: weft's four, or a name the server's operator configured (see
    /// `agents()`). Left out: the server's default agent (`react` unless its operator set
    /// another; on loom, whose request needs one, `react`).
    #[serde(default)]
    #[tsify(optional, type = "Agent")]
    pub agent: Option<String>,
    /// The thread to run in (default: the client's `sessionId`).
    #[serde(default)]
    #[tsify(optional)]
    pub thread_id: Option<String>,
    /// Working folder for the agent's file tools (loom).
    #[serde(default)]
    #[tsify(optional)]
    pub working_folder: Option<String>,
    /// Adaptive graph of thoughts (loom, agent `got` only).
    #[serde(default)]
    #[tsify(optional)]
    pub got_adaptive: Option<bool>,
    /// Also stream `values`/`updates` state snapshots (loom).
    #[serde(default)]
    #[tsify(optional)]
    pub verbose: Option<bool>,
}

/// What `run.result` resolves to once the run completes.
#[derive(Debug, Clone, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct RunResult {
    /// The final assistant reply.
    pub reply: String,
    /// Usage of the run's last LLM call, when the server reported it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub usage: Option<Usage>,
    /// Usage of the whole run.
    pub total_usage: Usage,
    /// The run's id (what `resume` and `cancel` name).
    pub run_id: String,
}

/// What `reassembler.push()` did with a frame.
#[derive(Debug, Clone, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct PushResult {
    /// Events applied to the transcript (frames held back by an earlier gap and released by
    /// this one included).
    pub applied: usize,
    /// The frame repeated one already applied and was dropped.
    pub duplicate: bool,
    /// The frame skipped ahead: it is held until the missing frames arrive; send `resume` with
    /// `gap.run_id` and `gap.after_event_id` to get them.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub gap: Option<Gap>,
}

/// What `onApproval` callbacks receive: a tool call that waits for the user's decision.
#[derive(Debug, Clone, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    /// The call. An original agentloop server names none (it approves its oldest pending
    /// call): the client gives the turn's waiting call, absent only when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub call_id: Option<String>,
    /// The tool.
    pub name: String,
    /// Its arguments, parsed.
    #[tsify(type = "unknown")]
    pub arguments: RawJson,
    /// The run that made the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub run_id: Option<String>,
    /// Aborted when the call is settled without this client: another tab or device answered
    /// it, or it came from the replay of a run (`follow()`) and was answered long ago. Close the
    /// prompt then; an answer given after that is not sent.
    // A placeholder, written as `null`: the client then sets the signal of its
    // `AbortController` on the object the callback receives.
    #[tsify(type = "AbortSignal")]
    pub signal: (),
}

/// What `onAuthorization` callbacks receive: an MCP server of the session needs this user's
/// OAuth authorization (`url` set: open it, in a popup or a tab), or has just got it
/// (`authorized`: its tools are offered from the next run on).
#[derive(Debug, Clone, PartialEq, Serialize, Tsify)]
pub struct McpAuthorization {
    /// The server's `name` in the Worker's `MCP_SERVERS`.
    pub server: String,
    /// Where the user authorizes; absent once `authorized`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub url: Option<String>,
    /// `true` when the authorization completed (the callback reached the session).
    pub authorized: bool,
}

/// What an `onApproval` callback returns.
#[derive(Debug, Clone, Tsify)]
pub struct ApprovalAnswer {
    /// `yes` runs the call; `always` runs it and stops asking for this tool in this session;
    /// `no-continue` refuses it and lets the model go on; `no-exit` refuses it and ends the run;
    /// `explain` asks the model to explain the call, then asks again.
    #[tsify(type = "Review")]
    pub review: String,
    /// Told to the model with a refusal (or kept with the decision otherwise).
    #[serde(default)]
    #[tsify(optional)]
    pub message: Option<String>,
}

/// A tool the app runs itself (`registerTool`), or one the server offers (`toolsList`).
#[derive(Debug, Clone, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    /// Tool name, unique within the session.
    pub name: String,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub description: Option<String>,
    /// JSON Schema of the arguments object (default: any object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[tsify(optional, type = "unknown")]
    pub input_schema: Option<RawJson>,
    /// A read-only tool runs without asking for approval; any other client tool is approved
    /// first, like the server's own mutating tools.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[tsify(optional)]
    pub read_only: bool,
}

/// `client.addMcpServer(server)`: a remote MCP server whose tools this session's runs may call.
#[derive(Debug, Clone, Default, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct McpServerOptions {
    /// The prefix of its tools' names (`<name>_<tool>`): A-Z, a-z, 0-9, - and _.
    pub name: String,
    /// Its Streamable HTTP endpoint (`https://…/mcp`).
    pub url: String,
    /// Sent with every request to it (a token, typically): kept with the session, never
    /// shown back.
    #[serde(default)]
    #[tsify(optional, type = "Record<string, string>")]
    pub headers: Option<std::collections::BTreeMap<String, String>>,
}

/// `client.userMessages(threadId, options)`.
#[derive(Debug, Clone, Default, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct UserMessagesOptions {
    /// Only messages older than this message id (the `id` of a `StoredMessage`).
    #[serde(default)]
    #[tsify(optional)]
    pub before: Option<u64>,
    /// At most this many (server default 100, capped at 1000).
    #[serde(default)]
    #[tsify(optional)]
    pub limit: Option<u64>,
}

/// One page of a thread's stored messages.
#[derive(Debug, Clone, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct UserMessagesPage {
    /// The thread.
    pub thread_id: String,
    /// Messages, oldest first.
    pub messages: Vec<StoredMessage>,
    /// Older messages remain: ask again with `before` set to the first message's `id`.
    pub has_more: bool,
    /// The run streaming in the thread now, if any: `client.follow(activeRunId)` shows it
    /// (after a page reload, or when another tab or device started it).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub active_run_id: Option<String>,
}

/// How full the session's context window is: what `contextInfo()` resolves to (the
/// `context_info` events of a run carry the same numbers in snake_case).
#[derive(Debug, Clone, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ContextInfo {
    /// Estimated tokens of the session's history (system prompt and tools included).
    pub token_count: u64,
    /// `tokenCount` as a percentage of `maxTokens`.
    pub usage_percent: f64,
    /// Items in the history.
    pub transcript_length: u64,
    /// The model's context window.
    pub max_tokens: u64,
    /// The compaction strategy's name.
    pub strategy: String,
}

/// What `agents()` resolves to: the agents a weft server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct AgentList {
    /// The agent of a run that names none (the server's `DEFAULT_AGENT`).
    pub default_agent: String,
    /// weft's four, then the operator's own, in the server's order.
    pub agents: Vec<AgentInfo>,
}

/// One agent a run may name (`client.run({ agent: name })`).
#[derive(Debug, Clone, PartialEq, Serialize, Tsify)]
pub struct AgentInfo {
    /// What a run names.
    pub name: String,
    /// One line, for a picker.
    pub description: String,
    /// The weft agent that runs it: `react`, `dup`, `tot` or `got`; `remote` for an AG-UI agent
    /// that runs elsewhere (see `remote`).
    pub agent: String,
    /// Its model's provider, or `null` when it has none (see `problem`).
    #[tsify(type = "string | null")]
    pub provider: Option<String>,
    /// Its model, or `null` when it has none.
    #[tsify(type = "string | null")]
    pub model: Option<String>,
    /// Why its runs are refused (its provider has no key), or `null`.
    #[tsify(type = "string | null")]
    pub problem: Option<String>,
    /// A remote agent's host (never its path or headers), or `null` for one weft runs.
    #[tsify(type = "string | null")]
    pub remote: Option<String>,
}

/// What `compact()` resolves to once the server has summarised the older turns.
#[derive(Debug, Clone, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct CompactResult {
    /// Estimated tokens before.
    pub old_token_count: u64,
    /// Estimated tokens after.
    pub new_token_count: u64,
    /// How much smaller, in percent.
    pub reduction_percent: f64,
    /// The compaction strategy's name.
    pub strategy: String,
}

/// Where the client's connection is, for `onStatus` listeners.
#[derive(Debug, Clone, PartialEq, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ClientStatus {
    /// `connecting` (first attempt), `open`, `reconnecting` (waiting `retryInMs` before
    /// attempt `attempt`), or `closed` (by `close()`, a refusal, or after the last attempt).
    #[tsify(type = "\"connecting\" | \"open\" | \"reconnecting\" | \"closed\"")]
    pub state: &'static str,
    /// The reconnect attempt about to be made.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub attempt: Option<u32>,
    /// Delay before that attempt, in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub retry_in_ms: Option<f64>,
    /// Why the socket closed: its close code and reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub reason: Option<String>,
}

/// What differs by dialect, for an app that shows it or offers only what the dialect serves:
/// `dialectInfo(dialect)`. The SDK's own rules read the same description of the dialect (the
/// protocol's `Dialect::describe`), so an app that asks here never copies them.
#[derive(Debug, Clone, Serialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct DialectInfo {
    /// The path of its endpoint on a weft server (`/`, `/agentloop`, `/ws`, `/ws/chat`): what
    /// a `url` without a path gets.
    pub endpoint: &'static str,
    /// The `Client` requests a weft server serves on its sockets (`"ping"`, `"toolsList"`,
    /// `"toolShow"`, `"userMessages"`, `"contextInfo"`, `"compact"`, `"addMcpServer"`); the
    /// others reject with `unsupported`.
    pub requests: Vec<&'static str>,
    /// Whether its runs report the context window as they go (`context_info` events); where
    /// they do not, `contextInfo()` on a socket of a dialect that serves it asks.
    pub reports_context: bool,
    /// Whether its runs carry the agents' plans: the steps (`node_enter`/`node_exit`), the
    /// tree of thoughts and the graph of thoughts (loom). Elsewhere these agents' work arrives
    /// as text, and `RunView`'s `spans`, `tot` and `got` stay empty.
    pub plans: bool,
    /// Whether its `run` request carries the run options `workingFolder`, `gotAdaptive` and
    /// `verbose` (loom); elsewhere they are left out.
    pub run_options: bool,
}

// The results go to JavaScript as JSON text parsed by `JSON.parse` (crate::marshal), written
// member by member: serde's serializer is not linked into the SDK. The derived `Serialize`
// above stays as the reference the tests compare these with, and as tsify's source of the
// TypeScript shapes.

impl RunResult {
    pub(crate) fn to_json(&self) -> String {
        let mut w = ObjectWriter::new();
        w.str("reply", &self.reply);
        if let Some(u) = &self.usage {
            w.object("usage", |w| u.write_members(w));
        }
        w.object("totalUsage", |w| self.total_usage.write_members(w))
            .str("runId", &self.run_id)
            .finish()
    }
}

impl ApprovalRequest {
    pub(crate) fn to_json(&self) -> String {
        ObjectWriter::new()
            .opt_str("callId", self.call_id.as_deref())
            .str("name", &self.name)
            .raw("arguments", &self.arguments)
            .opt_str("runId", self.run_id.as_deref())
            .json("signal", "null")
            .finish()
    }
}

impl McpAuthorization {
    /// Reads weft's `custom` event values `{"type": "mcp_authorization", "server", "url"}`
    /// and `{"type": "mcp_authorized", "server"}`; `None` for any other value (an agent's own
    /// custom event, or one missing its server or URL).
    pub(crate) fn from_custom(value: &RawJson) -> Option<McpAuthorization> {
        let tree = value.tree();
        let server = tree.get("server")?.as_str()?.into();
        match tree.get("type")?.as_str()? {
            "mcp_authorization" => Some(McpAuthorization {
                server,
                url: Some(tree.get("url")?.as_str()?.into()),
                authorized: false,
            }),
            "mcp_authorized" => Some(McpAuthorization {
                server,
                url: None,
                authorized: true,
            }),
            _ => None,
        }
    }

    pub(crate) fn to_json(&self) -> String {
        ObjectWriter::new()
            .str("server", &self.server)
            .opt_str("url", self.url.as_deref())
            .bool("authorized", self.authorized)
            .finish()
    }
}

impl ToolDefinition {
    fn write_members(&self, w: &mut ObjectWriter) {
        w.str("name", &self.name)
            .opt_str("description", self.description.as_deref());
        if let Some(schema) = &self.input_schema {
            w.raw("inputSchema", schema);
        }
        if self.read_only {
            w.bool("readOnly", true);
        }
    }

    /// A list of them, as `toolsList()` resolves.
    pub(crate) fn list_json(tools: &[ToolDefinition]) -> String {
        json::objects(tools, ToolDefinition::write_members)
    }
}

impl UserMessagesPage {
    pub(crate) fn to_json(&self) -> String {
        ObjectWriter::new()
            .str("threadId", &self.thread_id)
            .objects("messages", &self.messages, StoredMessage::write_members)
            .bool("hasMore", self.has_more)
            .opt_str("activeRunId", self.active_run_id.as_deref())
            .finish()
    }
}

impl ContextInfo {
    pub(crate) fn to_json(&self) -> String {
        ObjectWriter::new()
            .uint("tokenCount", self.token_count)
            .float("usagePercent", self.usage_percent)
            .uint("transcriptLength", self.transcript_length)
            .uint("maxTokens", self.max_tokens)
            .str("strategy", &self.strategy)
            .finish()
    }
}

impl CompactResult {
    pub(crate) fn to_json(&self) -> String {
        ObjectWriter::new()
            .uint("oldTokenCount", self.old_token_count)
            .uint("newTokenCount", self.new_token_count)
            .float("reductionPercent", self.reduction_percent)
            .str("strategy", &self.strategy)
            .finish()
    }
}

impl ClientStatus {
    pub(crate) fn to_json(&self) -> String {
        let mut w = ObjectWriter::new();
        w.str("state", self.state)
            .opt_uint("attempt", self.attempt.map(u64::from));
        if let Some(ms) = self.retry_in_ms {
            w.float("retryInMs", ms);
        }
        w.opt_str("reason", self.reason.as_deref()).finish()
    }
}

impl DialectInfo {
    pub(crate) fn to_json(&self) -> String {
        ObjectWriter::new()
            .str("endpoint", self.endpoint)
            .strings("requests", &self.requests)
            .bool("reportsContext", self.reports_context)
            .bool("plans", self.plans)
            .bool("runOptions", self.run_options)
            .finish()
    }
}

/// `Gap` as `PushResult.gap` carries it (the protocol's snake_case).
pub(crate) fn gap_json(gap: &Gap) -> String {
    ObjectWriter::new()
        .str("run_id", &gap.run_id)
        .uint("after_event_id", gap.after_event_id)
        .uint("received", gap.received)
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_protocol::{Role, Usage};

    fn same<T: Serialize>(value: &T, written: String) {
        assert_eq!(written, serde_json::to_string(value).unwrap());
    }

    #[test]
    fn results_are_written_as_serialize_writes_them() {
        let usage = Usage {
            prompt_tokens: 3,
            completion_tokens: 4,
            total_tokens: 7,
        };
        for full in [false, true] {
            let r = RunResult {
                reply: "hi \"you\"".into(),
                usage: full.then_some(usage),
                total_usage: usage,
                run_id: "run-1".into(),
            };
            same(&r, r.to_json());
            let a = ApprovalRequest {
                call_id: full.then(|| "c1".into()),
                name: "shell".into(),
                arguments: RawJson::parse(r#"{"cmd":"ls\n","n":1.5}"#).unwrap(),
                run_id: full.then(|| "run-1".into()),
                signal: (),
            };
            same(&a, a.to_json());
            let m = McpAuthorization {
                server: "notes".into(),
                url: full.then(|| "https://auth.example.com/authorize?state=\"s\"".into()),
                authorized: !full,
            };
            same(&m, m.to_json());
            let tools = vec![
                ToolDefinition {
                    name: "t".into(),
                    description: full.then(|| "d".into()),
                    input_schema: full.then(RawJson::empty_object),
                    read_only: full,
                },
                ToolDefinition {
                    name: "u".into(),
                    description: None,
                    input_schema: None,
                    read_only: false,
                },
            ];
            same(&tools, ToolDefinition::list_json(&tools));
            same(
                &Vec::<ToolDefinition>::new(),
                ToolDefinition::list_json(&[]),
            );
            let page = UserMessagesPage {
                thread_id: "t".into(),
                messages: vec![StoredMessage {
                    id: full.then_some(9),
                    role: Role::User,
                    content: "q".into(),
                }],
                has_more: full,
                active_run_id: full.then(|| "run-2".into()),
            };
            same(&page, page.to_json());
            let s = ClientStatus {
                state: "reconnecting",
                attempt: full.then_some(3),
                retry_in_ms: full.then_some(1500.5),
                reason: full.then(|| "1006 ".into()),
            };
            same(&s, s.to_json());
        }
        let c = ContextInfo {
            token_count: 10,
            usage_percent: 0.1 + 0.2,
            transcript_length: 2,
            max_tokens: 128_000,
            strategy: "summarize".into(),
        };
        same(&c, c.to_json());
        let c = CompactResult {
            old_token_count: 10,
            new_token_count: 5,
            reduction_percent: 50.0,
            strategy: "summarize".into(),
        };
        same(&c, c.to_json());
        let d = DialectInfo {
            endpoint: "/ws",
            requests: vec!["ping", "toolsList"],
            reports_context: true,
            plans: false,
            run_options: true,
        };
        same(&d, d.to_json());
        let g = Gap {
            run_id: "r".into(),
            after_event_id: 4,
            received: 6,
        };
        same(&g, gap_json(&g));
    }
}
