//! AG-UI (the Agent-User Interaction protocol, `@ag-ui/core` 1.0): what `HttpAgent` from
//! `@ag-ui/client` speaks, and CopilotKit, assistant-ui and the agent frameworks behind them.
//!
//! A run is one [`RunAgentInput`] in and a stream of [`AguiEvent`]s out. Over HTTP the input
//! is a `POST` body and the events are server-sent events (`data: <json>\n\n`, [`sse`]).
//!
//! # Why an HTTP dialect of its own, not a variant of [`Dialect`](super::Dialect)
//!
//! The socket [`Dialect`](super::Dialect)s speak *commands* (one frame, one request) and
//! number the frames of a weft run densely for `resume`. AG-UI has no commands: its request
//! is a whole [`RunAgentInput`] (the conversation, the page's tools, `resume` answers), and
//! one weft run can span several AG-UI runs (a run that waits for the page ends its AG-UI run
//! with `RUN_FINISHED`; the answer's input starts the next, which carries on the same weft
//! run). So, like the AI SDK ([`super::aisdk`]), its reader turns an input into canonical
//! [`Command`]s and a per-stream [`Encoder`] turns the run's events into AG-UI events. The
//! same two serve the WebSocket at `/agui` still to come (issue 37): one input per client
//! frame, one event per server frame — what differs there is only the framing ([`sse`] or
//! none), and weft's own `resume`/`cancel` frames, which belong to that endpoint.
//!
//! # The input
//!
//! | in the input | commands |
//! |---|---|
//! | `tools` (non-empty) | [`Command::ClientTools`]: AG-UI's frontend tools, run in the page; declared read-only, so weft asks no approval of them (the page that runs a call is the one that would approve it), and the socket declares no approvals (those it answers through `resume`) |
//! | the last message, `user` | [`Command::Run`] (its text; `content` parts of type `text` joined) |
//! | the `tool` messages after the last `assistant` message | [`Command::ToolResult`] each (`error` set: an error result) |
//! | `resume` entries | [`Command::ApprovalResponse`] each: `interruptId` is the call id; `resolved` approves unless `payload.approved` is `false`, `cancelled` denies |
//!
//! `threadId` is the weft session; `runId`, `parentRunId`, `state`, `context` and
//! `forwardedProps` are read and kept (weft's agents do not use them yet). weft's extension
//! of `forwardedProps`: `agent` (`react`, `dup`, `tot`, `got`).
//!
//! # The events
//!
//! | canonical | AG-UI |
//! |---|---|
//! | the first event of a stream | `RUN_STARTED {threadId, runId}` (the weft session and run) |
//! | `message_chunk` | `TEXT_MESSAGE_START` (role `assistant`) once, then `TEXT_MESSAGE_CONTENT`; `TEXT_MESSAGE_END` when something else comes |
//! | `reasoning_chunk` | `REASONING_START` + `REASONING_MESSAGE_START` once, then `REASONING_MESSAGE_CONTENT`; `REASONING_MESSAGE_END` + `REASONING_END` when something else comes |
//! | `tool_call_chunk` | `TOOL_CALL_START` (once per call), `TOOL_CALL_ARGS` |
//! | `tool_call` | `TOOL_CALL_START` + `TOOL_CALL_ARGS` if not streamed, then `TOOL_CALL_END` |
//! | `tool_end` | `TOOL_CALL_RESULT` (`messageId` `result-<call id>`, `role: "tool"`) |
//! | `node_enter` / `node_exit` | `STEP_STARTED` / `STEP_FINISHED`, `stepName` the node span's id (`run-<node>-<n>`: unique, so parallel spans of one node do not clash) |
//! | `values` | `STATE_SNAPSHOT` |
//! | `run_end` | `RUN_FINISHED {outcome: {type: "success"}, result: <reply>}` |
//! | `error`, code `cancelled` | `RUN_FINISHED {outcome: {type: "cancelled"}}` |
//! | `error`, otherwise | `RUN_ERROR {message, code}` |
//! | `tool_approval` | nothing at once; the stream's [`Encoder::pause`] ends the AG-UI run with `RUN_FINISHED {outcome: {type: "interrupt", interrupts: [{id: <call id>, reason: "tool_call", toolCallId: <call id>, …}]}}` |
//! | a pause with no approval waiting (a frontend tool) | `RUN_FINISHED {outcome: {type: "success", pendingToolCallIds}}` |
//! | `llm_complete`, `user_message` | nothing (the text went out as it streamed; the user's message is the input's) |
//! | everything else: `usage`, `updates`, `custom`, `checkpoint`, the ToT/GoT plan events, `tool_start`, `tool_output`, `approval_resolved`, `context_info`, `context_compacted`, `events_lost`, unknown events | `CUSTOM {name: "weft:<type>", value: <the canonical event object>}` |
//!
//! Decision: AG-UI's own carriers first (STEP_* for node spans, STATE_SNAPSHOT for state, an
//! interrupt for an approval), and CUSTOM for the rest, named `weft:<canonical type>` with
//! the canonical object as its value, so a weft client rebuilds the run losslessly
//! ([`Decoder`] turns them back) and other AG-UI clients pass them by, as AG-UI defines
//! CUSTOM. Why not ACTIVITY_* for plans: activity messages enter the client's message list,
//! which the client sends back with its next input as history; weft keeps its own history.
//!
//! Every open part, step and tool call is closed before a `RUN_FINISHED`: `@ag-ui/client`
//! refuses a run that finishes with any open. A step left open by a pause is not finished in
//! the next stream (that AG-UI run never started it).
//!
//! # Client side
//!
//! [`decode_event`] reads one event: an unknown `type` is kept ([`AguiEvent::Unknown`]), a
//! known type with a bad body is an error. [`Decoder`] turns events into canonical ones; what
//! has no canonical counterpart (`STATE_DELTA`, `MESSAGES_SNAPSHOT`, `ACTIVITY_*`, `RAW`,
//! `REASONING_ENCRYPTED_VALUE`, the `SUBAGENT_*` events, unknown types) becomes
//! [`Event::Unknown`] with the AG-UI type as its kind and the event's other fields as its data.

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::command::{ApprovalDecision, ClientTools, Command, RunCommand, ToolResult};
use crate::event::{Envelope, Event, NodeResult, Sequenced, ToolSpec, UnknownEvent};
use crate::frame::{parse_object, Limits};
use crate::json::{Json, RawJson};
use crate::names::{Agent, Review};
use crate::Error;

/// The response headers of an AG-UI event stream.
pub const STREAM_HEADERS: &[(&str, &str)] = &[
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache"),
];

/// One event as a server-sent event.
pub fn sse(event: &str) -> String {
    format!("data: {event}\n\n")
}

/// A run's input (`RunAgentInputSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunAgentInput {
    pub thread_id: String,
    pub run_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
    pub messages: Vec<Message>,
    #[serde(default)]
    pub tools: Vec<Tool>,
    #[serde(default)]
    pub context: Vec<Context>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forwarded_props: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<Vec<ResumeEntry>>,
}

/// A message of the conversation (`MessageSchema`, every role in one shape).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub id: String,
    /// `developer`, `system`, `assistant`, `user`, `tool`, `activity`, `reasoning`.
    pub role: String,
    /// Text, or (user and tool messages) an array of content parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity_type: Option<String>,
}

/// A call in an assistant message (`ToolCallSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: String,
    pub function: FunctionCall,
}

/// `FunctionCallSchema`: the arguments are JSON text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    pub arguments: String,
}

/// A frontend tool (`ToolSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub description: String,
    /// Its JSON Schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
}

/// `ContextSchema`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Context {
    pub description: String,
    pub value: String,
}

/// An answer to an interrupt (`ResumeEntrySchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeEntry {
    pub interrupt_id: String,
    /// `resolved` or `cancelled`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
}

/// A `RunAgentInput`, read.
#[derive(Debug, Clone, PartialEq)]
pub struct AguiRequest {
    pub input: RunAgentInput,
    /// What it asks, in order (see the module docs).
    pub commands: Vec<Command>,
}

fn bad(kind: &str, e: &serde_json::Error) -> Error {
    Error::invalid(kind, e.to_string())
}

/// Reads a `RunAgentInput` body into the commands it asks (see the module docs).
pub fn decode_request(body: &[u8], limits: Limits) -> Result<AguiRequest, Error> {
    let obj = parse_object(body, limits)?;
    let value = Value::Object(obj.to_serde());
    let input: RunAgentInput =
        serde_json::from_value(value).map_err(|e| bad("RunAgentInput", &e))?;
    if input.thread_id.is_empty() {
        return Err(Error::field(
            "RunAgentInput",
            "threadId",
            "must not be empty",
        ));
    }
    let mut commands = Vec::new();
    if !input.tools.is_empty() {
        let tools = input
            .tools
            .iter()
            .map(|t| ToolSpec {
                name: t.name.clone(),
                description: Some(t.description.clone()),
                input_schema: t
                    .parameters
                    .as_ref()
                    .map_or_else(|| json!({"type": "object"}).into(), RawJson::from_value),
                // The page runs them: asking it to approve its own call first would ask twice.
                read_only: true,
            })
            .collect();
        commands.push(Command::ClientTools(ClientTools {
            tools,
            approvals: false,
        }));
    }
    for entry in input.resume.iter().flatten() {
        let approved = entry.status == "resolved"
            && entry
                .payload
                .as_ref()
                .and_then(|p| p.get("approved"))
                .and_then(Value::as_bool)
                != Some(false);
        let reason = entry
            .payload
            .as_ref()
            .and_then(|p| p.get("reason"))
            .and_then(Value::as_str)
            .map(ToOwned::to_owned);
        commands.push(Command::ApprovalResponse(ApprovalDecision {
            call_id: Some(entry.interrupt_id.clone()),
            review: if approved {
                Review::Yes
            } else {
                Review::NoContinue
            },
            custom_deny_message: if approved { None } else { reason },
            explanation: None,
        }));
    }
    match input.messages.last() {
        Some(m) if m.role == "user" => {
            let text = text_of(m.content.as_ref());
            if text.trim().is_empty() {
                return Err(Error::invalid(
                    "RunAgentInput",
                    "the last message has no text",
                ));
            }
            let agent = input
                .forwarded_props
                .as_ref()
                .and_then(|p| p.get("agent"))
                .and_then(Value::as_str)
                .map(Agent::from);
            commands.push(Command::Run(RunCommand {
                message: text,
                agent,
                thread_id: Some(input.thread_id.clone()),
                ..RunCommand::default()
            }));
        }
        _ => {
            let since = input
                .messages
                .iter()
                .rposition(|m| m.role == "assistant")
                .map_or(0, |i| i + 1);
            for m in &input.messages[since..] {
                if m.role != "tool" {
                    continue;
                }
                let Some(call_id) = m.tool_call_id.clone() else {
                    return Err(Error::field("tool message", "toolCallId", "is required"));
                };
                let (result, is_error) = match &m.error {
                    Some(e) => (e.clone(), true),
                    None => (text_of(m.content.as_ref()), false),
                };
                commands.push(Command::ToolResult(ToolResult {
                    call_id,
                    result,
                    is_error,
                }));
            }
        }
    }
    if !commands.iter().any(|c| {
        matches!(
            c,
            Command::Run(_) | Command::ToolResult(_) | Command::ApprovalResponse(_)
        )
    }) {
        return Err(Error::invalid(
            "RunAgentInput",
            "nothing to run: no user message last, no tool results, no resume",
        ));
    }
    Ok(AguiRequest { input, commands })
}

/// The text of a message's `content`: a string, or its `text` parts joined.
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// Every event type of AG-UI 1.0, with the fields `@ag-ui/core`'s schemas define (the common
/// `timestamp`, `rawEvent`, `metadata` and `subagentRunId` are passed over when read).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AguiEvent {
    #[serde(rename_all = "camelCase")]
    TextMessageStart {
        message_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    TextMessageContent {
        message_id: String,
        delta: String,
    },
    #[serde(rename_all = "camelCase")]
    TextMessageEnd {
        message_id: String,
    },
    #[serde(rename_all = "camelCase")]
    TextMessageChunk {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delta: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    ToolCallStart {
        tool_call_id: String,
        tool_call_name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_message_id: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    ToolCallArgs {
        tool_call_id: String,
        delta: String,
    },
    #[serde(rename_all = "camelCase")]
    ToolCallEnd {
        tool_call_id: String,
    },
    #[serde(rename_all = "camelCase")]
    ToolCallChunk {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_call_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_call_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_message_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delta: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    ToolCallResult {
        message_id: String,
        tool_call_id: String,
        /// Text, or an array of content parts.
        content: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
    },
    StateSnapshot {
        snapshot: Value,
    },
    /// An RFC 6902 JSON Patch.
    StateDelta {
        delta: Vec<Value>,
    },
    MessagesSnapshot {
        messages: Vec<Message>,
    },
    #[serde(rename_all = "camelCase")]
    ActivitySnapshot {
        message_id: String,
        activity_type: String,
        content: Map<String, Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replace: Option<bool>,
    },
    #[serde(rename_all = "camelCase")]
    ActivityDelta {
        message_id: String,
        activity_type: String,
        patch: Vec<Value>,
    },
    Raw {
        event: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source: Option<String>,
    },
    Custom {
        name: String,
        value: Value,
    },
    #[serde(rename_all = "camelCase")]
    RunStarted {
        thread_id: String,
        run_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        input: Option<Value>,
    },
    #[serde(rename_all = "camelCase")]
    RunFinished {
        thread_id: String,
        run_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<Outcome>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Vec<Value>>,
    },
    RunError {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    StepStarted {
        step_name: String,
    },
    #[serde(rename_all = "camelCase")]
    StepFinished {
        step_name: String,
    },
    #[serde(rename_all = "camelCase")]
    ReasoningStart {
        message_id: String,
    },
    #[serde(rename_all = "camelCase")]
    ReasoningMessageStart {
        message_id: String,
        role: String,
    },
    #[serde(rename_all = "camelCase")]
    ReasoningMessageContent {
        message_id: String,
        delta: String,
    },
    #[serde(rename_all = "camelCase")]
    ReasoningMessageEnd {
        message_id: String,
    },
    #[serde(rename_all = "camelCase")]
    ReasoningMessageChunk {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delta: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    ReasoningEnd {
        message_id: String,
    },
    #[serde(rename_all = "camelCase")]
    ReasoningEncryptedValue {
        /// `tool-call` or `message`.
        subtype: String,
        entity_id: String,
        encrypted_value: String,
    },
    /// A type this version does not know, kept whole: `data` is every field but `type`.
    #[serde(skip)]
    Unknown {
        kind: String,
        data: Map<String, Value>,
    },
}

/// How a run finished (`RunFinishedOutcomeSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Outcome {
    #[serde(rename_all = "camelCase")]
    Success {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pending_tool_call_ids: Option<Vec<String>>,
    },
    Interrupt {
        interrupts: Vec<Interrupt>,
    },
    Cancelled,
}

/// What a run waits for (`InterruptSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Interrupt {
    pub id: String,
    /// weft writes `tool_call`.
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// The `type`s of [`AguiEvent`]'s known variants.
pub const KNOWN_TYPES: [&str; 28] = [
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "TEXT_MESSAGE_CHUNK",
    "TOOL_CALL_START",
    "TOOL_CALL_ARGS",
    "TOOL_CALL_END",
    "TOOL_CALL_CHUNK",
    "TOOL_CALL_RESULT",
    "STATE_SNAPSHOT",
    "STATE_DELTA",
    "MESSAGES_SNAPSHOT",
    "ACTIVITY_SNAPSHOT",
    "ACTIVITY_DELTA",
    "RAW",
    "CUSTOM",
    "RUN_STARTED",
    "RUN_FINISHED",
    "RUN_ERROR",
    "STEP_STARTED",
    "STEP_FINISHED",
    "REASONING_START",
    "REASONING_MESSAGE_START",
    "REASONING_MESSAGE_CONTENT",
    "REASONING_MESSAGE_END",
    "REASONING_MESSAGE_CHUNK",
    "REASONING_END",
    "REASONING_ENCRYPTED_VALUE",
];

impl AguiEvent {
    /// The event's `type`.
    pub fn kind(&self) -> String {
        match self {
            AguiEvent::Unknown { kind, .. } => kind.clone(),
            other => match serde_json::to_value(other) {
                Ok(Value::Object(m)) => m
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                _ => String::new(),
            },
        }
    }

    /// The event as its JSON object.
    pub fn to_value(&self) -> Value {
        match self {
            AguiEvent::Unknown { kind, data } => {
                let mut m = data.clone();
                m.insert("type".into(), Value::String(kind.clone()));
                Value::Object(m)
            }
            // Our own variants serialize to objects with string keys: this cannot fail.
            other => serde_json::to_value(other).unwrap_or(Value::Null),
        }
    }

    /// The event as JSON text.
    pub fn to_json(&self) -> String {
        self.to_value().to_string()
    }
}

/// Reads one event: an unknown type is kept, a known type with a bad body is an error.
pub fn decode_event(frame: &[u8], limits: Limits) -> Result<AguiEvent, Error> {
    let obj = parse_object(frame, limits)?;
    let kind = match obj.get("type") {
        Some(Json::String(t)) => t.to_string(),
        _ => return Err(Error::MissingType),
    };
    let mut data = obj.to_serde();
    if !KNOWN_TYPES.contains(&kind.as_str()) {
        data.remove("type");
        return Ok(AguiEvent::Unknown { kind, data });
    }
    serde_json::from_value(Value::Object(data)).map_err(|e| bad(&kind, &e))
}

/// Turns one weft run's canonical events into AG-UI events, for one stream (one AG-UI run).
/// A stream that continues a weft run (after a pause) gets a fresh encoder.
#[derive(Debug, Clone, Default)]
pub struct Encoder {
    started: bool,
    finished: bool,
    thread_id: String,
    run_id: String,
    /// The open text or reasoning message: whether it is reasoning, and its id.
    part: Option<(bool, String)>,
    /// Calls whose `TOOL_CALL_START` went out, and whether their `TOOL_CALL_END` did.
    calls: Vec<(String, bool)>,
    /// Calls with a result.
    results: Vec<String>,
    /// Approvals asked and not yet answered: the call id and its tool.
    approvals: Vec<(String, String)>,
    /// Steps this stream started and has not finished.
    steps: Vec<String>,
}

impl Encoder {
    /// An encoder for a new stream.
    pub fn new() -> Self {
        Encoder::default()
    }

    /// An encoder for a new stream of the thread (the weft session) `thread_id`: the
    /// `threadId` of its run's events.
    pub fn for_thread(thread_id: &str) -> Self {
        Encoder {
            thread_id: thread_id.to_string(),
            ..Encoder::default()
        }
    }

    /// The events that end the stream with an error before its run ended: `RUN_ERROR` (which
    /// AG-UI allows as a stream's first event, too).
    pub fn error(&mut self, message: &str) -> Vec<AguiEvent> {
        let mut out = Vec::new();
        if self.finished {
            return out;
        }
        self.close_all(&mut out);
        self.finished = true;
        out.push(AguiEvent::RunError {
            message: message.to_string(),
            code: None,
        });
        out
    }

    /// Whether the AG-UI run is over (finished, failed, or paused).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The AG-UI events that carry this event, possibly none.
    pub fn encode(&mut self, ev: &Sequenced) -> Vec<AguiEvent> {
        let mut out = Vec::new();
        if self.finished {
            return out;
        }
        if !self.started {
            self.started = true;
            self.run_id = ev.envelope.run_id.clone().unwrap_or_default();
            if self.thread_id.is_empty() {
                self.thread_id = ev
                    .envelope
                    .session_id
                    .clone()
                    .unwrap_or_else(|| self.run_id.clone());
            }
            out.push(AguiEvent::RunStarted {
                thread_id: self.thread_id.clone(),
                run_id: self.run_id.clone(),
                parent_run_id: None,
                input: None,
            });
        }
        let at = ev.envelope.event_id.unwrap_or(0);
        match &ev.event {
            Event::RunStart { .. } | Event::LlmComplete { .. } | Event::UserMessage { .. } => {
                if matches!(ev.event, Event::LlmComplete { .. }) {
                    self.close_part(&mut out);
                }
            }
            Event::MessageChunk { content, .. } => self.piece(&mut out, false, at, content),
            Event::ReasoningChunk { content, .. } => self.piece(&mut out, true, at, content),
            Event::ToolCallChunk {
                call_id: Some(call),
                name,
                arguments_delta,
            } => {
                self.close_part(&mut out);
                self.start_call(&mut out, call, name.as_deref().unwrap_or(""));
                if !arguments_delta.is_empty() {
                    out.push(AguiEvent::ToolCallArgs {
                        tool_call_id: call.clone(),
                        delta: arguments_delta.clone(),
                    });
                }
            }
            Event::ToolCall {
                call_id: Some(call),
                name,
                arguments,
            } => {
                self.close_part(&mut out);
                if !self.calls.iter().any(|(c, _)| c == call) {
                    self.start_call(&mut out, call, name);
                    out.push(AguiEvent::ToolCallArgs {
                        tool_call_id: call.clone(),
                        delta: arguments.as_str().to_string(),
                    });
                }
                self.end_call(&mut out, call);
            }
            Event::ToolApproval {
                call_id: Some(call),
                name,
                ..
            } => {
                self.close_part(&mut out);
                self.end_call(&mut out, call);
                self.approvals.push((call.clone(), name.clone()));
            }
            Event::ToolEnd {
                call_id: Some(call),
                result,
                ..
            } => {
                self.close_part(&mut out);
                self.end_call(&mut out, call);
                self.results.push(call.clone());
                out.push(AguiEvent::ToolCallResult {
                    message_id: format!("result-{call}"),
                    tool_call_id: call.clone(),
                    content: Value::String(result.clone()),
                    role: Some("tool".into()),
                });
            }
            Event::NodeEnter { id } => {
                self.close_part(&mut out);
                let step = step_name(&ev.envelope, id);
                if !self.steps.contains(&step) {
                    self.steps.push(step.clone());
                    out.push(AguiEvent::StepStarted { step_name: step });
                }
            }
            Event::NodeExit { id, .. } => {
                self.close_part(&mut out);
                let step = step_name(&ev.envelope, id);
                if let Some(i) = self.steps.iter().position(|s| *s == step) {
                    self.steps.remove(i);
                    out.push(AguiEvent::StepFinished { step_name: step });
                }
            }
            Event::Values { state } => out.push(AguiEvent::StateSnapshot {
                snapshot: state.to_value(),
            }),
            Event::RunEnd { reply, .. } => {
                self.close_all(&mut out);
                out.push(self.finished_with(
                    Outcome::Success {
                        pending_tool_call_ids: None,
                    },
                    Some(Value::String(reply.clone())),
                ));
            }
            Event::Error { message, code, .. } => {
                self.close_all(&mut out);
                if code.as_deref() == Some("cancelled") {
                    out.push(self.finished_with(Outcome::Cancelled, None));
                } else {
                    self.finished = true;
                    out.push(AguiEvent::RunError {
                        message: message.clone(),
                        code: code.clone(),
                    });
                }
            }
            other => {
                if let Event::ApprovalResolved {
                    call_id: Some(call),
                    ..
                } = other
                {
                    self.approvals.retain(|(c, _)| c != call);
                }
                self.close_part(&mut out);
                out.push(AguiEvent::Custom {
                    name: format!("weft:{}", other.kind()),
                    value: Value::Object(other.to_json()),
                });
            }
        }
        out
    }

    /// The events that end this stream's AG-UI run while the weft run waits for the page: an
    /// interrupt per approval asked, else a success whose `pendingToolCallIds` are the calls
    /// the page runs.
    pub fn pause(&mut self) -> Vec<AguiEvent> {
        let mut out = Vec::new();
        if self.finished || !self.started {
            self.finished = true;
            return out;
        }
        self.close_all(&mut out);
        let outcome = if self.approvals.is_empty() {
            let pending: Vec<String> = self
                .calls
                .iter()
                .map(|(c, _)| c.clone())
                .filter(|c| !self.results.contains(c))
                .collect();
            Outcome::Success {
                pending_tool_call_ids: (!pending.is_empty()).then_some(pending),
            }
        } else {
            Outcome::Interrupt {
                interrupts: self
                    .approvals
                    .iter()
                    .map(|(call, name)| Interrupt {
                        id: call.clone(),
                        reason: "tool_call".into(),
                        message: Some(format!("approve the call of {name}?")),
                        tool_call_id: Some(call.clone()),
                        response_schema: Some(json!({
                            "type": "object",
                            "properties": {
                                "approved": {"type": "boolean"},
                                "reason": {"type": "string"}
                            },
                            "required": ["approved"]
                        })),
                        expires_at: None,
                        metadata: None,
                    })
                    .collect(),
            }
        };
        out.push(self.finished_with(outcome, None));
        out
    }

    fn finished_with(&mut self, outcome: Outcome, result: Option<Value>) -> AguiEvent {
        self.finished = true;
        AguiEvent::RunFinished {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
            result,
            outcome: Some(outcome),
            usage: None,
        }
    }

    fn piece(&mut self, out: &mut Vec<AguiEvent>, reasoning: bool, at: u64, delta: &str) {
        if self.part.as_ref().is_some_and(|(r, _)| *r != reasoning) {
            self.close_part(out);
        }
        let id = match &self.part {
            Some((_, id)) => id.clone(),
            None => {
                let id = format!(
                    "{}-{}-{at}",
                    if reasoning { "reasoning" } else { "msg" },
                    self.run_id
                );
                if reasoning {
                    out.push(AguiEvent::ReasoningStart {
                        message_id: id.clone(),
                    });
                    out.push(AguiEvent::ReasoningMessageStart {
                        message_id: id.clone(),
                        role: "reasoning".into(),
                    });
                } else {
                    out.push(AguiEvent::TextMessageStart {
                        message_id: id.clone(),
                        role: Some("assistant".into()),
                        name: None,
                    });
                }
                self.part = Some((reasoning, id.clone()));
                id
            }
        };
        out.push(if reasoning {
            AguiEvent::ReasoningMessageContent {
                message_id: id,
                delta: delta.to_string(),
            }
        } else {
            AguiEvent::TextMessageContent {
                message_id: id,
                delta: delta.to_string(),
            }
        });
    }

    fn close_part(&mut self, out: &mut Vec<AguiEvent>) {
        match self.part.take() {
            Some((true, id)) => {
                out.push(AguiEvent::ReasoningMessageEnd {
                    message_id: id.clone(),
                });
                out.push(AguiEvent::ReasoningEnd { message_id: id });
            }
            Some((false, id)) => out.push(AguiEvent::TextMessageEnd { message_id: id }),
            None => {}
        }
    }

    fn start_call(&mut self, out: &mut Vec<AguiEvent>, call: &str, name: &str) {
        if self.calls.iter().any(|(c, _)| c == call) {
            return;
        }
        self.calls.push((call.to_string(), false));
        out.push(AguiEvent::ToolCallStart {
            tool_call_id: call.to_string(),
            tool_call_name: name.to_string(),
            parent_message_id: None,
        });
    }

    fn end_call(&mut self, out: &mut Vec<AguiEvent>, call: &str) {
        if let Some((_, ended)) = self.calls.iter_mut().find(|(c, _)| c == call) {
            if !*ended {
                *ended = true;
                out.push(AguiEvent::ToolCallEnd {
                    tool_call_id: call.to_string(),
                });
            }
        }
    }

    /// Closes every open part, call and step: a run may not finish with any open.
    fn close_all(&mut self, out: &mut Vec<AguiEvent>) {
        self.close_part(out);
        let open: Vec<String> = self
            .calls
            .iter()
            .filter(|(_, ended)| !ended)
            .map(|(c, _)| c.clone())
            .collect();
        for call in open {
            self.end_call(out, &call);
        }
        while let Some(step) = self.steps.pop() {
            out.push(AguiEvent::StepFinished { step_name: step });
        }
    }
}

/// A node span's step name: its envelope id, unique in the run.
fn step_name(envelope: &Envelope, node: &str) -> String {
    envelope.node_id.clone().unwrap_or_else(|| node.to_string())
}

/// Client side: turns AG-UI events into canonical ones (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct Decoder {
    run_id: Option<String>,
    /// Calls seen: id, tool name, arguments so far.
    calls: Vec<(String, String, String)>,
}

impl Decoder {
    pub fn new() -> Self {
        Decoder::default()
    }

    /// The canonical events one AG-UI event carries, possibly none.
    pub fn decode(&mut self, ev: &AguiEvent) -> Result<Vec<Sequenced>, Error> {
        let mut out = Vec::new();
        let events = match ev {
            AguiEvent::RunStarted { run_id, .. } => {
                self.run_id = Some(run_id.clone());
                alloc::vec![Event::RunStart {
                    run_id: Some(run_id.clone()),
                    message: None,
                    agent: None,
                }]
            }
            AguiEvent::TextMessageContent { message_id, delta } => {
                alloc::vec![Event::MessageChunk {
                    content: delta.clone(),
                    id: message_id.clone(),
                }]
            }
            AguiEvent::TextMessageChunk {
                message_id,
                delta: Some(delta),
                ..
            } => alloc::vec![Event::MessageChunk {
                content: delta.clone(),
                id: message_id.clone().unwrap_or_default(),
            }],
            AguiEvent::ReasoningMessageContent { message_id, delta } => {
                alloc::vec![Event::ReasoningChunk {
                    content: delta.clone(),
                    id: message_id.clone(),
                }]
            }
            AguiEvent::ReasoningMessageChunk {
                message_id,
                delta: Some(delta),
            } => alloc::vec![Event::ReasoningChunk {
                content: delta.clone(),
                id: message_id.clone().unwrap_or_default(),
            }],
            AguiEvent::ToolCallStart {
                tool_call_id,
                tool_call_name,
                ..
            } => {
                self.calls
                    .push((tool_call_id.clone(), tool_call_name.clone(), String::new()));
                alloc::vec![Event::ToolCallChunk {
                    call_id: Some(tool_call_id.clone()),
                    name: Some(tool_call_name.clone()),
                    arguments_delta: String::new(),
                }]
            }
            AguiEvent::ToolCallArgs {
                tool_call_id,
                delta,
            } => {
                if let Some(c) = self.calls.iter_mut().find(|c| c.0 == *tool_call_id) {
                    c.2.push_str(delta);
                }
                alloc::vec![Event::ToolCallChunk {
                    call_id: Some(tool_call_id.clone()),
                    name: None,
                    arguments_delta: delta.clone(),
                }]
            }
            AguiEvent::ToolCallChunk {
                tool_call_id,
                tool_call_name,
                delta,
                ..
            } => {
                if let Some(id) = tool_call_id {
                    match self.calls.iter_mut().find(|c| c.0 == *id) {
                        Some(c) => c.2.push_str(delta.as_deref().unwrap_or("")),
                        None => self.calls.push((
                            id.clone(),
                            tool_call_name.clone().unwrap_or_default(),
                            delta.clone().unwrap_or_default(),
                        )),
                    }
                }
                alloc::vec![Event::ToolCallChunk {
                    call_id: tool_call_id.clone(),
                    name: tool_call_name.clone(),
                    arguments_delta: delta.clone().unwrap_or_default(),
                }]
            }
            AguiEvent::ToolCallEnd { tool_call_id } => {
                let (name, args) = self.call(tool_call_id);
                let arguments = RawJson::parse(&args).unwrap_or_else(|| RawJson::string(&args));
                alloc::vec![Event::ToolCall {
                    call_id: Some(tool_call_id.clone()),
                    name,
                    arguments,
                }]
            }
            AguiEvent::ToolCallResult {
                tool_call_id,
                content,
                ..
            } => {
                let (name, _) = self.call(tool_call_id);
                let result = match content {
                    Value::String(s) => s.clone(),
                    other => text_of(Some(other)),
                };
                alloc::vec![Event::ToolEnd {
                    call_id: Some(tool_call_id.clone()),
                    name,
                    result,
                    is_error: false,
                }]
            }
            AguiEvent::StepStarted { step_name } => alloc::vec![Event::NodeEnter {
                id: step_name.clone(),
            }],
            AguiEvent::StepFinished { step_name } => alloc::vec![Event::NodeExit {
                id: step_name.clone(),
                result: NodeResult::Ok,
            }],
            AguiEvent::StateSnapshot { snapshot } => alloc::vec![Event::Values {
                state: RawJson::from_value(snapshot),
            }],
            AguiEvent::RunFinished {
                result, outcome, ..
            } => match outcome {
                Some(Outcome::Interrupt { interrupts }) => interrupts
                    .iter()
                    .map(|i| {
                        let call = i.tool_call_id.clone().unwrap_or_else(|| i.id.clone());
                        let (name, args) = self.call(&call);
                        Event::ToolApproval {
                            call_id: Some(call),
                            name,
                            arguments: RawJson::parse(&args).unwrap_or_else(RawJson::empty_object),
                        }
                    })
                    .collect(),
                Some(Outcome::Cancelled) => alloc::vec![Event::Error {
                    message: "cancelled".into(),
                    code: Some("cancelled".into()),
                    id: None,
                    details: None,
                }],
                _ => alloc::vec![Event::RunEnd {
                    reply: match result {
                        Some(Value::String(s)) => s.clone(),
                        _ => String::new(),
                    },
                    usage: None,
                    total_usage: None,
                    iteration_count: None,
                    paused: false,
                    tool_calls: Vec::new(),
                }],
            },
            AguiEvent::RunError { message, code } => alloc::vec![Event::Error {
                message: message.clone(),
                code: code.clone(),
                id: None,
                details: None,
            }],
            AguiEvent::Custom { name, value } => match name.strip_prefix("weft:") {
                Some(_) => {
                    let Value::Object(map) = value else {
                        return Err(Error::field("CUSTOM", "value", "a weft event is an object"));
                    };
                    alloc::vec![Event::from_json(&crate::json::Object::from_serde(map))?]
                }
                None => alloc::vec![Event::Custom {
                    value: RawJson::from_value(&json!({"name": name, "value": value})),
                }],
            },
            // Opening and closing frames carry nothing a canonical event holds.
            AguiEvent::TextMessageStart { .. }
            | AguiEvent::TextMessageEnd { .. }
            | AguiEvent::TextMessageChunk { .. }
            | AguiEvent::ReasoningStart { .. }
            | AguiEvent::ReasoningMessageStart { .. }
            | AguiEvent::ReasoningMessageEnd { .. }
            | AguiEvent::ReasoningMessageChunk { .. }
            | AguiEvent::ReasoningEnd { .. } => Vec::new(),
            other => {
                let mut data = match other.to_value() {
                    Value::Object(m) => m,
                    _ => Map::new(),
                };
                data.remove("type");
                alloc::vec![Event::Unknown(UnknownEvent {
                    kind: other.kind(),
                    data: RawJson::from_value(&Value::Object(data)),
                })]
            }
        };
        for event in events {
            out.push(Sequenced {
                envelope: Envelope {
                    run_id: self.run_id.clone(),
                    ..Envelope::default()
                },
                event,
            });
        }
        Ok(out)
    }

    fn call(&self, id: &str) -> (String, String) {
        self.calls
            .iter()
            .find(|c| c.0 == id)
            .map(|c| (c.1.clone(), c.2.clone()))
            .unwrap_or_default()
    }
}
