//! What passes between a run and its host: the [`Input`]s the host feeds, the [`Output`]s it
//! takes ([`Effect`]s among them), and the [`EngineError`] for an input the run cannot take.

use std::fmt;

use serde_json::Value;
use weft_protocol::command::ApprovalDecision;
use weft_protocol::dialect::agui::Answer;
use weft_protocol::json::RawJson;
use weft_protocol::{Event, Sequenced};

use crate::provider::{ChatMessage, ChatRequest, Delta, ProviderError};

/// Something for the run to take in.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A decoded piece of the streamed response of model call `call`.
    Llm {
        /// As [`Effect::CallLlm`] named it: several calls may stream at once.
        call: u64,
        /// As the provider's [`StreamDecoder`](crate::provider::StreamDecoder) gave it.
        delta: Delta,
    },
    /// The response body of model call `call` ended normally.
    LlmEnd {
        /// As [`Effect::CallLlm`] named it; the run expects nothing more of it.
        call: u64,
    },
    /// Model call `call` failed (HTTP error, cut stream, malformed stream).
    LlmFailed {
        /// As [`Effect::CallLlm`] named it; the run expects nothing more of it.
        call: u64,
        /// What went wrong.
        error: ProviderError,
    },
    /// A tool finished.
    ToolResult {
        /// As [`Effect::RunTool`] gave it.
        call_id: String,
        /// What the model reads as the tool's answer; over [`MAX_TOOL_RESULT_BYTES`] it is cut.
        ///
        /// [`MAX_TOOL_RESULT_BYTES`]: super::MAX_TOOL_RESULT_BYTES
        result: String,
        /// The tool failed: `result` says why, and tot takes the step as failed.
        is_error: bool,
    },
    /// A running tool reported how it is getting on (an MCP server's progress): shown to the
    /// clients as a `tool_output` event; the model sees only the result.
    ToolOutput {
        /// As [`Effect::RunTool`] gave it; a call that is not running refuses the input.
        call_id: String,
        /// What the tool said.
        content: String,
    },
    /// The user answered an approval request.
    Approval(ApprovalDecision),
    /// Nobody can answer this call's approval request (no client connected that could, or
    /// nobody answered in time): it is not run, and the model and the clients are told
    /// `reason` as its result — not "denied by the user", since nobody denied it.
    Refuse {
        /// As [`Effect::AwaitApproval`] gave it.
        call_id: String,
        /// Why it is refused.
        reason: String,
    },
    /// What the remote agent of a remote run ([`Effect::CallRemote`]) said, decoded into
    /// canonical events: its `run_end` or `error` ends the run (the host feeds one when the
    /// call fails or its stream breaks off).
    Remote {
        /// In the order the agent sent them.
        events: Vec<Event>,
    },
    /// The response of the last [`Effect::CallRemote`] ended, with what it said fed before as
    /// [`Input::Remote`]. A run still going on then waits for the page (its approvals, its
    /// tools' results), whose answers go to the remote agent in the next call.
    RemoteEnded,
    /// Stop the run.
    Cancel,
    /// The host cannot carry the run on (its event log or checkpoint cannot be written): it
    /// ends with an `error` of this code and message, rather than going on in a state a
    /// restart or a resume could not find again.
    HostFailed {
        /// The error code the clients see (e.g. `storage`).
        code: String,
        /// What failed, for the clients.
        message: String,
    },
}

/// Work for the host.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Send this request to the LLM and feed back its deltas, then [`Input::LlmEnd`] or
    /// [`Input::LlmFailed`], each with this `call`. Several calls may be outstanding at once
    /// (got runs independent sub-tasks side by side); their inputs may be fed in any
    /// interleaving. An input for a call the run no longer waits for is refused
    /// ([`EngineError::NoSuchLlmCall`]): stop reading that stream.
    CallLlm {
        /// Names this call in the inputs that answer it; unique within the run.
        call: u64,
        /// Provider-neutral: the host builds the HTTP request with its provider's codec.
        request: ChatRequest,
    },
    /// Run this tool and feed back [`Input::ToolResult`]. Client tools go to the socket that
    /// declared them. Calls of one step may run concurrently.
    RunTool {
        /// The model's id for the call, unique within the run; the result must carry it.
        call_id: String,
        /// One of the run's [`ToolInfo`](super::ToolInfo)s.
        name: String,
        /// A JSON object, already parsed from the model's text (a call whose arguments do not
        /// parse never runs).
        arguments: Value,
        /// A client socket runs it ([`ToolInfo::client`](super::ToolInfo::client)), not the
        /// host.
        client: bool,
    },
    /// Wait for the user's decision on this call ([`Input::Approval`]). Nothing needs to stay
    /// awake meanwhile: persist the checkpoint and stop.
    AwaitApproval {
        /// The one call asked about; the decision must name it (or name none).
        call_id: String,
    },
    /// Call the remote agent of this run (its config's `agent` names it) with the session's
    /// conversation and this message, and feed back what it streams as [`Input::Remote`],
    /// ending with its `run_end` or an `error` (the call failed, the stream broke off or made
    /// no sense). Never sent twice for one run.
    CallRemote {
        /// The conversation before this run's message.
        history: Vec<ChatMessage>,
        /// The user's message: the run's first call. `None`: the call goes on with the
        /// remote run that stopped for the page, with its answers.
        message: Option<String>,
        /// The thread's state as the remote agents last left it (the run's first call).
        state: Option<RawJson>,
        /// The user's answers to the approvals the remote agent asked for.
        answers: Vec<Answer>,
        /// The results of the page's tools it called: call id, result.
        tool_results: Vec<(String, String)>,
    },
    /// Persist [`Run::checkpoint`](super::Run::checkpoint) now: a step is complete.
    Checkpoint,
    /// The run is over; store [`Run::session`](super::Run::session) as the session's new state.
    Finished,
}

/// One thing out of the run, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// A canonical event, stamped: log it, then send it.
    Event(Sequenced),
    /// Work for the host.
    Effect(Effect),
}

/// An input the run cannot take: the host should tell whoever sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EngineError {
    /// The run has ended: nothing more goes in.
    Finished,
    /// No tool call of this run has that id, or it is not waiting for that input.
    NoSuchCall(String),
    /// No approval is pending.
    NoPendingApproval,
    /// No model call with this id is outstanding (it ended, failed, or was never made).
    NoSuchLlmCall(u64),
    /// The input does not fit the run's state (e.g. LLM deltas while tools run).
    Unexpected(&'static str),
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Finished => f.write_str("the run has already ended"),
            EngineError::NoSuchCall(id) => write!(f, "no tool call {id} is waiting for that"),
            EngineError::NoPendingApproval => f.write_str("no approval is pending"),
            EngineError::NoSuchLlmCall(id) => write!(f, "no model call {id} is outstanding"),
            EngineError::Unexpected(what) => write!(f, "unexpected input: {what}"),
        }
    }
}

impl std::error::Error for EngineError {}
