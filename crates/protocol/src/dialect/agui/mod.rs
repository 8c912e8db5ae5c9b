//! AG-UI (the Agent-User Interaction protocol, `@ag-ui/core` 1.0): what `HttpAgent` from
//! `@ag-ui/client` speaks, and CopilotKit, assistant-ui and the agent frameworks behind them.
//!
//! A run is one [`RunAgentInput`] in and a stream of [`AguiEvent`]s out. Over HTTP the input
//! is a `POST` body and the events are server-sent events (`data: <json>\n\n`, [`sse`]).
//!
//! # Over HTTP and over a WebSocket
//!
//! AG-UI is both a variant of the socket [`Dialect`](super::Dialect)s (`Dialect::Agui`, the
//! WebSocket at `GET /agui`: its description, codec and wire are in [`socket`]'s docs) and an
//! HTTP dialect (`POST /agui`, server-sent events, what `HttpAgent` speaks). Both read inputs
//! with the same reader and write events with the same [`Encoder`]; what differs is the
//! framing ([`sse`] or a frame per event), weft's `run_id`/`event_id` beside each event on the
//! socket, and how a weft run that waits for the page is cut into AG-UI runs. A `POST` stream
//! ends its AG-UI run when the run stops to wait ([`Encoder::pause`]), and the next `POST`
//! gets a fresh encoder; the socket's one encoder cuts the run where the events say
//! ([`Encoder::encode_continuing`]), so a replay of the log cuts it at the same places.
//!
//! Its request is a whole [`RunAgentInput`] (the conversation, the page's tools, `resume`
//! answers), not one command: the reader turns it into canonical [`Command`]s, a
//! [`Command::Batch`] on the socket when there are several.
//!
//! # The input
//!
//! | in the input | commands |
//! |---|---|
//! | `tools` (non-empty) | [`Command::ClientTools`]: AG-UI's frontend tools, run in the page; declared read-only, so weft asks no approval of them (the page that runs a call is the one that would approve it), and the socket declares no approvals (those it answers through `resume`) |
//! | the last message, `user` | [`Command::Run`] (its text; `content` parts of type `text` joined) |
//! | the `tool` messages after the last `assistant` message | [`Command::ToolResult`] each (`error` set: an error result) |
//! | `resume` entries | [`Command::ApprovalResponse`] each: `interruptId` is the call id; `resolved` approves unless `payload.approved` is `false`, `cancelled` denies; `payload.reason` is the denial's message; weft's extension `payload.review` (`always`, `no-exit`, `explain`) says more, where it agrees with `approved` |
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
//! | `state_delta` | `STATE_DELTA` (the patch as it is) |
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
//! [`Thread`] is a client of any AG-UI backend over HTTP, sans IO: the `RunAgentInput` of each
//! run (the history, the state, the page's tools, `resume` answers to interrupts), the
//! response's server-sent events ([`SseReader`]) read into canonical events, one client run
//! across the AG-UI runs an interrupt or a frontend tool splits it into (see its module docs).
//! [`decode_event`] reads one event: an unknown `type` is kept ([`AguiEvent::Unknown`]), a
//! known type with a bad body is an error. [`Decoder`] turns events into canonical ones; what
//! has no canonical counterpart (`MESSAGES_SNAPSHOT`, `ACTIVITY_*`, `RAW`,
//! `REASONING_ENCRYPTED_VALUE`, the `SUBAGENT_*` events, unknown types) becomes
//! [`Event::Unknown`](crate::event::Event::Unknown) with the AG-UI type as its kind and the event's other fields as its data.

mod client;
mod decode;
mod encode;
mod events;
pub mod socket;

pub use client::{Answer, SseReader, Thread, Turn};

pub use decode::Decoder;
pub use encode::Encoder;
pub use events::{decode_event, AguiEvent, Interrupt, Outcome, KNOWN_TYPES};
pub(crate) use socket::CODEC;
pub use socket::DIALECT;

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::command::{ApprovalDecision, ClientTools, Command, RunCommand, ToolResult};
use crate::event::ToolSpec;
use crate::field::{Fields, Lenient};
use crate::frame::{parse_object, Limits};
use crate::json::{Object, RawJson};
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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

/// Reads a `RunAgentInput` body into the commands it asks (see the module docs).
pub fn decode_request(body: &[u8], limits: Limits) -> Result<AguiRequest, Error> {
    let obj = parse_object(body, limits)?;
    read_input(&obj, true)
}

/// Reads a `RunAgentInput` object. Without `require_thread`, an empty `threadId` names no
/// session (on a WebSocket: the socket's own).
pub(crate) fn read_input(obj: &Object<'_>, require_thread: bool) -> Result<AguiRequest, Error> {
    let input = run_agent_input(Fields::new("RunAgentInput", obj))?;
    if require_thread && input.thread_id.is_empty() {
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
        let payload = |key: &str| entry.payload.as_ref().and_then(|p| p.get(key));
        let approved = entry.status == "resolved"
            && payload("approved").and_then(Value::as_bool) != Some(false);
        // weft's own answer, when its client gave one: `always`, `no-exit`, `explain`.
        let review = payload("review")
            .and_then(Value::as_str)
            .and_then(Review::parse)
            .filter(|r| r.approves() == approved)
            .unwrap_or(if approved {
                Review::Yes
            } else {
                Review::NoContinue
            });
        let reason = payload("reason")
            .and_then(Value::as_str)
            .map(ToOwned::to_owned);
        commands.push(Command::ApprovalResponse(ApprovalDecision {
            call_id: Some(entry.interrupt_id.clone()),
            review,
            custom_deny_message: reason,
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
                thread_id: (!input.thread_id.is_empty()).then(|| input.thread_id.clone()),
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

/// A `RunAgentInput`, read field by field on the protocol's own tree (as the events are, and
/// for the same reason: serde's derived readers of the input's six types were a dozen KB of
/// the Worker's code). It accepts what those derives accepted from an object: unknown fields
/// passed over, an optional field absent or `null`, `tools` and `context` absent as empty.
fn run_agent_input(f: Fields<'_>) -> Result<RunAgentInput, Error> {
    let l = Lenient::new(f);
    // `#[serde(default)]` lists: absent is empty, `null` is not a list.
    let listed = |name: &str| f.map().contains_key(name);
    let input = RunAgentInput {
        thread_id: l.req("threadId"),
        run_id: l.req("runId"),
        protocol_version: l.opt("protocolVersion"),
        parent_run_id: l.opt("parentRunId"),
        state: l.opt("state"),
        messages: l.objects("messages", message),
        tools: if listed("tools") {
            l.objects("tools", |f| {
                let l = Lenient::new(f);
                let tool = Tool {
                    name: l.req("name"),
                    description: l.req("description"),
                    parameters: l.opt("parameters"),
                };
                l.finish(tool)
            })
        } else {
            Vec::new()
        },
        context: if listed("context") {
            l.objects("context", |f| {
                let l = Lenient::new(f);
                let context = Context {
                    description: l.req("description"),
                    value: l.req("value"),
                };
                l.finish(context)
            })
        } else {
            Vec::new()
        },
        forwarded_props: l.opt("forwardedProps"),
        resume: f.raw("resume").map(|_| {
            l.objects("resume", |f| {
                let l = Lenient::new(f);
                let entry = ResumeEntry {
                    interrupt_id: l.req("interruptId"),
                    status: l.req("status"),
                    payload: l.opt("payload"),
                };
                l.finish(entry)
            })
        }),
    };
    l.finish(input)
}

/// A `MessageSchema` object (the input's `messages`, `MESSAGES_SNAPSHOT`'s).
pub(super) fn message(f: Fields<'_>) -> Result<Message, Error> {
    let l = Lenient::new(f);
    let tool_calls = f.raw("toolCalls").map(|_| {
        l.objects("toolCalls", |f| {
            let l = Lenient::new(f);
            let function = l.keep(f.object("function", |f| {
                let l = Lenient::new(f);
                let function = FunctionCall {
                    name: l.req("name"),
                    arguments: l.req("arguments"),
                };
                l.finish(function)
            }));
            let call = ToolCall {
                id: l.req("id"),
                kind: l.req("type"),
                function,
            };
            l.finish(call)
        })
    });
    let message = Message {
        id: l.req("id"),
        role: l.req("role"),
        content: l.opt("content"),
        name: l.opt("name"),
        tool_calls,
        tool_call_id: l.opt("toolCallId"),
        error: l.opt("error"),
        activity_type: l.opt("activityType"),
    };
    l.finish(message)
}

/// A message as `MessageSchema` writes it (an unset field left out; what its `Serialize`
/// writes, without linking it for the events that carry messages).
pub(super) fn message_value(m: &Message) -> Value {
    let mut o = serde_json::Map::new();
    o.insert("id".into(), Value::String(m.id.clone()));
    o.insert("role".into(), Value::String(m.role.clone()));
    if let Some(c) = &m.content {
        o.insert("content".into(), c.clone());
    }
    if let Some(calls) = &m.tool_calls {
        let calls = calls
            .iter()
            .map(|c| {
                json!({
                    "id": c.id,
                    "type": c.kind,
                    "function": {"name": c.function.name, "arguments": c.function.arguments},
                })
            })
            .collect();
        o.insert("toolCalls".into(), Value::Array(calls));
    }
    for (key, value) in [
        ("name", &m.name),
        ("toolCallId", &m.tool_call_id),
        ("error", &m.error),
        ("activityType", &m.activity_type),
    ] {
        if let Some(v) = value {
            o.insert(key.into(), Value::String(v.clone()));
        }
    }
    Value::Object(o)
}

/// The text of a message's `content`: a string, or its `text` parts joined.
pub(super) fn text_of(content: Option<&Value>) -> String {
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
