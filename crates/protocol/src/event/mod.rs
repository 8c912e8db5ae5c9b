//! The canonical event model: everything a server says, in one vocabulary every dialect
//! translates to and from.
//!
//! The loom stream protocol (`loom-stream-protocol.md` §4.2) is the richest of the four, so its
//! 23 event types are the core; weft adds what the other dialects need (`reasoning_chunk`,
//! `llm_complete`, `approval_resolved`, `context_info`, `context_compacted`, `user_message`,
//! `run_end`, `error`) and the direct replies to requests (`pong`, `tools_list`, `tool_show`,
//! `user_messages`). The JSON form of an [`Event`] is exactly the loom event object (type +
//! payload at the top level), so the loom dialect carries every event losslessly and the
//! server's event log can store that form.

mod json;
mod parts;
mod write;

use alloc::string::String;
use alloc::vec::Vec;
use serde::Serialize;

use crate::field::Fields;
use crate::json::RawJson;
use crate::names::{Agent, FinishReason, Review};
use crate::Error;
pub use parts::{NodeResult, StoredMessage, ToolSpec, Usage};

/// Where an event sits: the loom envelope (§2) plus the run it belongs to.
///
/// `event_id` counts frames from 1 within a run (specs/README). On canonical events it is the
/// position in the run's event log; each dialect renumbers the frames it actually sends so a
/// client always sees a dense sequence and can tell a gap from a dropped event type.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
pub struct Envelope {
    /// Session (thread) the event belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Node span id, `run-<node>-<n>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    /// Sequence number within the run, from 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_id: Option<u64>,
    /// The run this event belongs to; `None` for replies that belong to no run.
    #[serde(skip)]
    pub run_id: Option<String>,
}

impl Envelope {
    pub(crate) fn read(f: Fields<'_>) -> Result<Self, Error> {
        Ok(Envelope {
            session_id: f.opt("session_id")?,
            node_id: f.opt("node_id")?,
            event_id: f.opt("event_id")?,
            run_id: None,
        })
    }
}

/// An event with its envelope: what the server logs and sends, and what the client decodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Sequenced {
    /// Where it sits.
    pub envelope: Envelope,
    /// What happened.
    pub event: Event,
}

impl Sequenced {
    /// An event outside any run (a reply, a connection-level error).
    pub fn bare(event: Event) -> Self {
        Sequenced {
            envelope: Envelope::default(),
            event,
        }
    }

    /// The envelope `node_id` as written on the wire. `got_expand` has a payload field of the
    /// same name (loom §8), which wins: its frame carries no envelope node id.
    fn envelope_node_id(&self) -> Option<&str> {
        match self.event {
            Event::GotExpand { .. } => None,
            _ => self.envelope.node_id.as_deref(),
        }
    }
}

/// Everything a server says, in canonical form. See the module docs for where the set comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
pub enum Event {
    /// A run started (always its first event).
    RunStart {
        #[serde(skip_serializing_if = "Option::is_none")]
        run_id: Option<String>,
        /// The user message that started it.
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// The agent running it (`react`, `dup`, `tot`, `got`).
        #[serde(skip_serializing_if = "Option::is_none")]
        agent: Option<Agent>,
    },
    /// A node span started.
    NodeEnter {
        /// Node name (`think`, `act`, …), not the envelope's node_id.
        id: String,
    },
    /// A node span ended.
    NodeExit {
        /// Node name.
        id: String,
        /// How it ended.
        result: NodeResult,
    },
    /// A piece of assistant text.
    MessageChunk { content: String, id: String },
    /// Token usage of the LLM call that just finished.
    Usage(Usage),
    /// A full state snapshot (only with `verbose`).
    Values {
        #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
        state: RawJson,
    },
    /// A change to the state as a JSON Patch (RFC 6902): an array of operations, applied in
    /// order, all or none (AG-UI's `STATE_DELTA`; the reassembler applies it to the run's state).
    StateDelta {
        #[cfg_attr(feature = "tsify", tsify(type = "unknown[]"))]
        delta: RawJson,
    },
    /// State after a node merged its update (only with `verbose`).
    Updates {
        /// Node name.
        id: String,
        #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
        state: RawJson,
    },
    /// Arbitrary JSON from an agent.
    Custom {
        #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
        value: RawJson,
    },
    /// The run's state was checkpointed.
    Checkpoint {
        /// Checkpoint id.
        checkpoint_id: String,
        /// When, as RFC 3339 text.
        timestamp: String,
        /// Step number.
        step: i64,
        /// The state checkpointed.
        #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
        state: RawJson,
        /// Thread the checkpoint belongs to.
        #[serde(skip_serializing_if = "Option::is_none")]
        thread_id: Option<String>,
        /// Checkpoint namespace.
        #[serde(skip_serializing_if = "Option::is_none")]
        checkpoint_ns: Option<String>,
    },
    /// Tree of thoughts: candidate next steps.
    TotExpand { candidates: Vec<String> },
    /// Tree of thoughts: the candidates were scored.
    TotEvaluate {
        /// Index of the chosen candidate.
        chosen: u64,
        /// One score per candidate.
        scores: Vec<f64>,
    },
    /// Tree of thoughts: going back up the tree.
    TotBacktrack {
        /// Why.
        reason: String,
        /// Depth returned to.
        to_depth: u64,
    },
    /// Graph of thoughts: the plan.
    GotPlan {
        /// Number of nodes.
        node_count: u64,
        /// Number of edges.
        edge_count: u64,
        node_ids: Vec<String>,
    },
    /// Graph of thoughts: a node started.
    GotNodeStart {
        /// Graph node id.
        id: String,
    },
    /// Graph of thoughts: a node finished.
    GotNodeComplete {
        /// Graph node id.
        id: String,
        /// A short summary of its result.
        result_summary: String,
    },
    /// Graph of thoughts: a node failed.
    GotNodeFailed {
        /// Graph node id.
        id: String,
        /// Why.
        error: String,
    },
    /// Adaptive graph of thoughts: a node was expanded into a sub-graph.
    GotExpand {
        node_id: String,
        /// Nodes added.
        nodes_added: u64,
        /// Edges added.
        edges_added: u64,
    },
    /// A fragment of a tool call's JSON arguments. weft sends one with an empty
    /// `arguments_delta` first, to announce the call (cueso's `input: null` frame).
    ToolCallChunk {
        /// Call id.
        #[serde(skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        /// Tool name.
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        arguments_delta: String,
    },
    /// A complete tool call.
    ToolCall {
        /// Call id.
        #[serde(skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        /// Tool name.
        name: String,
        /// Parsed arguments.
        #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
        arguments: RawJson,
    },
    /// A tool started running.
    ToolStart {
        /// Call id.
        #[serde(skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        /// Tool name.
        name: String,
    },
    /// Output a running tool produced (may come several times per call).
    ToolOutput {
        /// Call id.
        #[serde(skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        /// Tool name.
        name: String,
        content: String,
    },
    /// A tool finished.
    ToolEnd {
        /// Call id.
        #[serde(skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        /// Tool name.
        name: String,
        /// Its result, as given to the model.
        result: String,
        /// Whether the result is an error.
        is_error: bool,
    },
    /// A tool call waits for the user's approval.
    ToolApproval {
        /// Call id.
        #[serde(skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        /// Tool name.
        name: String,
        /// Parsed arguments.
        #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
        arguments: RawJson,
    },
    /// weft: a piece of the model's reasoning.
    ReasoningChunk { content: String, id: String },
    /// weft: one LLM response is complete (before its tools run).
    LlmComplete {
        content: String,
        /// Names of the tools it called, in order.
        tool_calls: Vec<String>,
        /// Why it stopped.
        finish_reason: FinishReason,
    },
    /// weft: the user answered an approval request.
    ApprovalResolved {
        /// Call id.
        #[serde(skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        /// Tool name.
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        review: Review,
        /// The deny message or the explanation, when there is one.
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// weft: how full the context window is.
    ContextInfo {
        /// Estimated tokens of the whole transcript.
        token_count: u64,
        /// `token_count / max_tokens`, in percent.
        usage_percent: f64,
        /// Number of transcript items.
        transcript_length: u64,
        /// The model's context window.
        max_tokens: u64,
        /// Compaction strategy name.
        strategy: String,
    },
    /// weft: older turns were summarised.
    ContextCompacted {
        /// Tokens before.
        old_token_count: u64,
        /// Tokens after.
        new_token_count: u64,
        /// Reduction, in percent.
        reduction_percent: f64,
        /// Compaction strategy name.
        strategy: String,
    },
    /// weft: the user message of a run, when a dialect sends it apart from the run start.
    UserMessage { content: String },
    /// weft: the run's frames from `from` up to this event's own `event_id` are gone for good.
    ///
    /// The server logs streamed text in batches, after sending it, so a restart can lose the
    /// last few frames it sent; it then numbers on past every frame it may have sent, and says
    /// so with this event (in the place of the first frame after the hole), so a client that
    /// saw some of them, or none, carries on instead of waiting for a resume that cannot fill
    /// the hole. Original clients never get it: they do not resume.
    EventsLost {
        /// The first event id that may be missing.
        from: u64,
    },
    /// The run finished (loom's `run_end` response).
    RunEnd {
        /// The full assistant reply.
        reply: String,
        /// Usage of the last LLM call.
        #[serde(skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
        /// Usage of the whole run.
        #[serde(skip_serializing_if = "Option::is_none")]
        total_usage: Option<Usage>,
        /// LLM round trips over the whole life of the session (cueso `iteration_count`).
        #[serde(skip_serializing_if = "Option::is_none")]
        iteration_count: Option<u64>,
        /// Whether the run paused after a `pause_after` tool (cueso `paused`).
        #[serde(skip_serializing_if = "core::ops::Not::not")]
        #[cfg_attr(feature = "tsify", tsify(optional))]
        paused: bool,
        /// Tool names called in the last iteration (cueso `final.tool_calls`).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        #[cfg_attr(feature = "tsify", tsify(optional))]
        tool_calls: Vec<String>,
    },
    /// Something failed: a request, or a whole run (then it is the run's last event).
    Error {
        /// What went wrong, for a person.
        message: String,
        /// weft: a machine-readable code (`cancelled`, `busy`, `invalid_json`, …).
        #[serde(skip_serializing_if = "Option::is_none")]
        code: Option<String>,
        /// The request id it answers, when it answers one outside a run.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// Structured details (agentloop `details`), e.g. a provider's status code.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
        details: Option<RawJson>,
    },
    /// Reply to `ping`.
    Pong {
        /// The ping's id.
        id: String,
    },
    /// Reply to `tools_list`.
    ToolsList { id: String, tools: Vec<ToolSpec> },
    /// Reply to `tool_show`: exactly one of `tool` and `tool_yaml` is set.
    ToolShow {
        id: String,
        /// The definition as JSON (`output: "json"`).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
        tool: Option<RawJson>,
        /// The definition as YAML (the default).
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_yaml: Option<String>,
    },
    /// Reply to `user_messages`.
    UserMessages {
        id: String,
        thread_id: String,
        /// Messages, oldest first.
        messages: Vec<StoredMessage>,
        /// Whether older messages remain.
        #[serde(skip_serializing_if = "Option::is_none")]
        has_more: Option<bool>,
        /// weft: the run streaming in this thread right now, if any, so a client that was not
        /// there when it started (a reloaded page, another device) can follow it.
        #[serde(skip_serializing_if = "Option::is_none")]
        active_run_id: Option<String>,
    },
    /// An event type this crate does not know, kept whole: `kind` is its `type`, `data` every
    /// other field.
    #[serde(untagged)]
    Unknown(UnknownEvent),
}

/// An event of a type this version does not know, with every field kept: `data` is the JSON
/// object of its members but `type` and the envelope's.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "tsify",
    derive(tsify::Tsify),
    tsify(type = "{ type: string; [field: string]: unknown }")
)]
pub struct UnknownEvent {
    pub kind: String,
    pub data: RawJson,
}

impl Event {
    /// The wire `type` of this event.
    pub fn kind(&self) -> &str {
        match self {
            Event::RunStart { .. } => "run_start",
            Event::NodeEnter { .. } => "node_enter",
            Event::NodeExit { .. } => "node_exit",
            Event::MessageChunk { .. } => "message_chunk",
            Event::Usage(_) => "usage",
            Event::Values { .. } => "values",
            Event::Updates { .. } => "updates",
            Event::StateDelta { .. } => "state_delta",
            Event::Custom { .. } => "custom",
            Event::Checkpoint { .. } => "checkpoint",
            Event::TotExpand { .. } => "tot_expand",
            Event::TotEvaluate { .. } => "tot_evaluate",
            Event::TotBacktrack { .. } => "tot_backtrack",
            Event::GotPlan { .. } => "got_plan",
            Event::GotNodeStart { .. } => "got_node_start",
            Event::GotNodeComplete { .. } => "got_node_complete",
            Event::GotNodeFailed { .. } => "got_node_failed",
            Event::GotExpand { .. } => "got_expand",
            Event::ToolCallChunk { .. } => "tool_call_chunk",
            Event::ToolCall { .. } => "tool_call",
            Event::ToolStart { .. } => "tool_start",
            Event::ToolOutput { .. } => "tool_output",
            Event::ToolEnd { .. } => "tool_end",
            Event::ToolApproval { .. } => "tool_approval",
            Event::ReasoningChunk { .. } => "reasoning_chunk",
            Event::LlmComplete { .. } => "llm_complete",
            Event::ApprovalResolved { .. } => "approval_resolved",
            Event::ContextInfo { .. } => "context_info",
            Event::ContextCompacted { .. } => "context_compacted",
            Event::UserMessage { .. } => "user_message",
            Event::EventsLost { .. } => "events_lost",
            Event::RunEnd { .. } => "run_end",
            Event::Error { .. } => "error",
            Event::Pong { .. } => "pong",
            Event::ToolsList { .. } => "tools_list",
            Event::ToolShow { .. } => "tool_show",
            Event::UserMessages { .. } => "user_messages",
            Event::Unknown(u) => &u.kind,
        }
    }

    /// Whether this event ends its run (nothing of the run follows it).
    pub fn is_terminal(&self) -> bool {
        matches!(self, Event::RunEnd { .. } | Event::Error { .. })
    }

    /// Whether this is a piece of a streamed response: most of a run's events, each carried
    /// by at most one frame in every dialect (a server may log these in batches after sending
    /// them, and counts on that bound; see [`Event::EventsLost`]).
    pub fn is_delta(&self) -> bool {
        matches!(
            self,
            Event::MessageChunk { .. } | Event::ReasoningChunk { .. } | Event::ToolCallChunk { .. }
        )
    }
}
