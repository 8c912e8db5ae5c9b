//! The transcript a [`Reassembler`](super::Reassembler) builds: messages, tool calls and runs,
//! each as a client shows it.

use crate::json::{ObjectWriter, RawJson};
use alloc::string::String;
use alloc::vec::Vec;
use serde::Serialize;

use crate::event::Usage;
use crate::names::{Agent, Review, Role};

/// Everything reassembled so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Transcript {
    /// User and assistant messages, in order.
    pub messages: Vec<Message>,
    /// Tool calls, in the order they were first seen.
    pub tool_calls: Vec<ToolCall>,
    /// Runs, in the order they started.
    #[cfg_attr(feature = "tsify", tsify(type = "TranscriptRun[]"))]
    pub runs: Vec<Run>,
}

impl Transcript {
    /// Usage summed over every run (each run's total as last reported).
    pub fn total_usage(&self) -> Usage {
        let mut total = Usage::default();
        for run in &self.runs {
            total.add(&run.total_usage);
        }
        total
    }

    /// The tool call with this id.
    pub fn tool_call(&self, call_id: &str) -> Option<&ToolCall> {
        self.tool_calls.iter().find(|c| c.call_id == call_id)
    }

    /// The run with this id.
    pub fn run(&self, run_id: &str) -> Option<&Run> {
        self.runs
            .iter()
            .find(|r| r.run_id.as_deref() == Some(run_id))
    }
}

/// One message.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// Its text, accumulated in order.
    pub text: String,
    /// The model's reasoning before or while writing it.
    #[serde(skip_serializing_if = "String::is_empty")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub reasoning: String,
    /// The run it belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Tool calls the message made.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub tool_call_ids: Vec<String>,
    /// No more text will be added.
    pub complete: bool,
}

/// Where a tool call is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
pub enum ToolStatus {
    /// Arguments are still arriving.
    Streaming,
    /// Arguments are complete; the call has not started.
    Pending,
    /// Waiting for the user's decision.
    AwaitingApproval,
    /// The user allowed it.
    Approved,
    /// The user refused it; it will not run.
    Denied,
    /// Running.
    Running,
    /// Finished with a result.
    Done,
    /// Finished with an error.
    Error,
}

/// One tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct ToolCall {
    /// Call id (`call-<n>` when the server gave none).
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as streamed (JSON text).
    pub arguments_text: String,
    /// Arguments parsed, once complete and valid.
    #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
    pub arguments: Option<RawJson>,
    /// Where it is.
    pub status: ToolStatus,
    /// The user's last decision on it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<Review>,
    /// Deny message or explanation given with the decision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review_message: Option<String>,
    /// Output streamed while it ran.
    #[serde(skip_serializing_if = "String::is_empty")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub output: String,
    pub result: Option<String>,
    /// Whether the result is an error.
    pub is_error: bool,
    /// The run it belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// How a run ended, or that it has not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
pub enum RunStatus {
    /// Still streaming.
    Running,
    /// Finished with a reply.
    Completed,
    /// Failed with an error.
    Failed,
    /// Stopped by `cancel`.
    Cancelled,
}

/// One run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(
    feature = "tsify",
    derive(tsify::Tsify),
    tsify(missing_as_null, rename = "TranscriptRun")
)]
pub struct Run {
    /// Run id, when the server gave one.
    pub run_id: Option<String>,
    /// The agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<Agent>,
    /// Where it is.
    pub status: RunStatus,
    /// The final reply.
    pub reply: Option<String>,
    /// Usage of the last LLM call.
    pub usage: Option<Usage>,
    /// Usage of each LLM call, in order.
    pub call_usage: Vec<Usage>,
    /// Usage of the whole run so far.
    pub total_usage: Usage,
    /// The error, when it failed.
    pub error: Option<String>,
    /// It paused after a `pause_after` tool.
    pub paused: bool,
    /// The agent's state: its last snapshot (`values`, AG-UI's `STATE_SNAPSHOT`) with every
    /// patch since (`state_delta`) applied; a new run starts from the previous run's.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "unknown"))]
    pub state: Option<RawJson>,
}

impl ToolCall {
    /// Takes complete arguments from a `tool_call`/`tool_approval` event.
    pub(super) fn set_arguments(&mut self, arguments: &RawJson) {
        if arguments.is_null() {
            return self.finish_arguments();
        }
        if self.arguments_text.is_empty() {
            self.arguments_text = String::from(arguments.as_str());
        }
        self.arguments = Some(arguments.clone());
    }

    /// The streamed arguments are complete: parse them once.
    pub(super) fn finish_arguments(&mut self) {
        if self.arguments.is_none() {
            let text = self.arguments_text.trim();
            self.arguments = if text.is_empty() {
                Some(RawJson::empty_object())
            } else {
                RawJson::parse(text)
            };
        }
        if self.status == ToolStatus::Streaming {
            self.status = ToolStatus::Pending;
        }
    }
}

impl Transcript {
    /// The JSON text `Serialize` writes, written by [`ObjectWriter`]: what the browser SDK's
    /// `transcript()` hands to JavaScript without linking serde's serializer (the tests hold the
    /// two equal).
    pub fn to_json(&self) -> String {
        ObjectWriter::new()
            .objects("messages", &self.messages, Message::write_members)
            .objects("tool_calls", &self.tool_calls, ToolCall::write_members)
            .objects("runs", &self.runs, Run::write_members)
            .finish()
    }
}

impl Message {
    fn write_members(&self, w: &mut ObjectWriter) {
        w.str("role", self.role.as_str()).str("text", &self.text);
        if !self.reasoning.is_empty() {
            w.str("reasoning", &self.reasoning);
        }
        w.opt_str("run_id", self.run_id.as_deref());
        if !self.tool_call_ids.is_empty() {
            w.strings("tool_call_ids", &self.tool_call_ids);
        }
        w.bool("complete", self.complete);
    }
}

impl ToolStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolStatus::Streaming => "streaming",
            ToolStatus::Pending => "pending",
            ToolStatus::AwaitingApproval => "awaiting_approval",
            ToolStatus::Approved => "approved",
            ToolStatus::Denied => "denied",
            ToolStatus::Running => "running",
            ToolStatus::Done => "done",
            ToolStatus::Error => "error",
        }
    }
}

impl ToolCall {
    fn write_members(&self, w: &mut ObjectWriter) {
        w.str("call_id", &self.call_id)
            .str("name", &self.name)
            .str("arguments_text", &self.arguments_text)
            .json(
                "arguments",
                self.arguments.as_ref().map_or("null", RawJson::as_str),
            )
            .str("status", self.status.as_str())
            .opt_str("review", self.review.map(Review::as_str))
            .opt_str("review_message", self.review_message.as_deref());
        if !self.output.is_empty() {
            w.str("output", &self.output);
        }
        w.str_or_null("result", self.result.as_deref())
            .bool("is_error", self.is_error)
            .opt_str("run_id", self.run_id.as_deref());
    }
}

impl RunStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }
}

impl Run {
    fn write_members(&self, w: &mut ObjectWriter) {
        w.str_or_null("run_id", self.run_id.as_deref())
            .opt_str("agent", self.agent.as_ref().map(Agent::as_str))
            .str("status", self.status.as_str())
            .str_or_null("reply", self.reply.as_deref());
        match &self.usage {
            Some(u) => w.object("usage", |w| u.write_members(w)),
            None => w.json("usage", "null"),
        };
        w.objects("call_usage", &self.call_usage, Usage::write_members)
            .object("total_usage", |w| self.total_usage.write_members(w))
            .str_or_null("error", self.error.as_deref())
            .bool("paused", self.paused);
        if let Some(state) = &self.state {
            w.json("state", state.as_str());
        }
    }
}
