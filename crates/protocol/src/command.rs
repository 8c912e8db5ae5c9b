//! The canonical model of what a client asks, whatever dialect it speaks.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use serde::Serialize;

use crate::event::ToolSpec;
use crate::names::{Agent, Review};

/// Longest run id a client may choose (specs/README, loom).
pub const MAX_RUN_ID_LEN: usize = 128;

/// One client request, in canonical form.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Command {
    /// Run one user message through an agent.
    Run(RunCommand),
    /// Answer an approval request.
    ApprovalResponse(ApprovalDecision),
    /// The result of a client-side tool call.
    ToolResult(ToolResult),
    /// Declare the tools this socket runs itself.
    ClientTools(ClientTools),
    /// Add an MCP server to the session (weft's extension, where the operator allows it).
    AddMcpServer(AddMcpServer),
    /// Replay the frames of a run after the given event id, then continue live.
    Resume(Resume),
    /// Stop a run.
    Cancel { run_id: String },
    /// List the tools.
    ToolsList(ToolsQuery),
    /// Show one tool.
    ToolShow(ToolShowQuery),
    /// Page through a thread's stored messages.
    UserMessages(UserMessagesQuery),
    /// Ask how full the context window is (agentloop `get_context_info`).
    ContextInfo {
        /// Request id, when the dialect has one.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// Summarise older turns now (agentloop `manual_compact`).
    Compact {
        /// Request id, when the dialect has one.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// Keepalive; answered with `pong` at once, even while a run streams.
    Ping {
        /// Echoed in the pong.
        id: String,
    },
    /// A request of loom's web app, newer than the spec ([`crate::dialect::loom_app`]).
    LoomApp(crate::dialect::loom_app::AppQuery),
    /// Several requests from one frame, carried out in order: AG-UI's `RunAgentInput`, which
    /// declares the page's tools and answers interrupts or tool calls or starts a run, all at
    /// once ([`crate::dialect::agui`]). Never nested, never empty.
    Batch { commands: Vec<Command> },
}

impl Command {
    /// The canonical name of the command, for errors and logs.
    pub fn kind(&self) -> &'static str {
        match self {
            Command::Run(_) => "run",
            Command::ApprovalResponse(_) => "approval_response",
            Command::ToolResult(_) => "tool_result",
            Command::ClientTools(_) => "client_tools",
            Command::AddMcpServer(_) => "add_mcp_server",
            Command::Resume(_) => "resume",
            Command::Cancel { .. } => "cancel",
            Command::ToolsList(_) => "tools_list",
            Command::ToolShow(_) => "tool_show",
            Command::UserMessages(_) => "user_messages",
            Command::ContextInfo { .. } => "context_info",
            Command::Compact { .. } => "compact",
            Command::Ping { .. } => "ping",
            Command::LoomApp(q) => q.request.kind(),
            Command::Batch { .. } => "batch",
        }
    }

    /// The session the command names, if it names one (loom `run.thread_id` and
    /// `user_messages.thread_id`, agentchat and cueso `session_id`). specs/README, "Sessions
    /// named in a message": that session is where the command belongs, whatever socket it
    /// came on.
    pub fn session(&self) -> Option<&str> {
        match self {
            Command::Run(r) => r.thread_id.as_deref(),
            Command::UserMessages(q) => Some(q.thread_id.as_str()),
            Command::Batch { commands } => commands.iter().find_map(Command::session),
            _ => None,
        }
        .filter(|s| !s.is_empty())
    }
}

/// A user message to run (loom `run`, agentloop `user_input`, agentchat `chat`, cueso's message).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunCommand {
    pub message: String,
    /// The agent it asks for, by name: one of weft's four or a variant the operator configured
    /// (`AGENTS`). `None` when the client named none (agentloop's own message, an agentchat or
    /// cueso message without weft's `agent`): the server's default agent runs it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<Agent>,
    /// The client's run id, when it chose one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The thread / session to run in (loom `thread_id`, agentchat and cueso `session_id`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    /// Working folder (loom).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working_folder: Option<String>,
    /// Adaptive graph of thoughts (loom, `got` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub got_adaptive: Option<bool>,
    /// Send `values`/`updates` snapshots (loom).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verbose: Option<bool>,
    /// agentloop `previousResponseId` (accepted, unused: the server keeps the history).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_response_id: Option<String>,
}

/// An answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApprovalDecision {
    /// The call it answers. agentloop's own message has none; then the oldest pending approval
    /// of the session is meant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    pub review: Review,
    /// Told to the model when the call is denied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_deny_message: Option<String>,
    /// agentloop `explanation` (accepted and kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
}

/// The outcome of a client-side tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolResult {
    pub call_id: String,
    /// What the tool returned, as given to the model.
    pub result: String,
    /// Whether `result` describes a failure.
    pub is_error: bool,
}

/// Tools a socket executes itself.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientTools {
    pub tools: Vec<ToolSpec>,
    /// The socket can answer approval requests (needed on agentchat and cueso, whose own
    /// protocols have none).
    #[serde(skip_serializing_if = "core::ops::Not::not")]
    pub approvals: bool,
}

/// An MCP server a client adds to its session: its tools join the session's under
/// `<name>_<tool>`. The answer is a `tools_list` carrying `id` and those tools, or an `error`
/// carrying `id`.
#[derive(Clone, PartialEq, Eq, Serialize)]
pub struct AddMcpServer {
    /// Request id, echoed.
    pub id: String,
    /// The prefix of its tools' names.
    pub name: String,
    /// Its Streamable HTTP endpoint.
    pub url: String,
    /// Sent with every request to it (a token, typically): kept by the session, never shown.
    pub headers: BTreeMap<String, String>,
}

impl core::fmt::Debug for AddMcpServer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // Header values hold tokens: a logged command names the headers, nothing more.
        let headers: Vec<&str> = self.headers.keys().map(String::as_str).collect();
        f.debug_struct("AddMcpServer")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("url", &self.url)
            .field("headers", &headers)
            .finish()
    }
}

/// Resume a run after a reconnect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resume {
    pub run_id: String,
    /// The last event id the client saw (0 for none): everything after it is replayed.
    pub after_event_id: u64,
}

/// `tools_list` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolsQuery {
    /// Request id, echoed.
    pub id: String,
    /// Working folder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working_folder: Option<String>,
    /// Thread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
}

/// Output format of `tool_show`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolFormat {
    /// YAML text (loom's default).
    #[default]
    Yaml,
    /// A JSON object.
    Json,
}

impl ToolFormat {
    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolFormat::Yaml => "yaml",
            ToolFormat::Json => "json",
        }
    }
}

/// `tool_show` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolShowQuery {
    /// Request id, echoed.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Output format; `None` means the default (YAML).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<ToolFormat>,
    /// Working folder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working_folder: Option<String>,
    /// Thread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
}

/// `user_messages` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserMessagesQuery {
    /// Request id, echoed.
    pub id: String,
    /// Thread (required and non-empty: the server answers `error` otherwise).
    pub thread_id: String,
    /// Only messages with a sequence number below this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<u64>,
    /// At most this many (default 100, capped at 1000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
}
