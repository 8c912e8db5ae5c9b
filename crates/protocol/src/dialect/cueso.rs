//! cueso: `cueso-websocket.md`.
//!
//! | canonical | cueso frame |
//! |---|---|
//! | `run_start` | `session_created` (+ `user_message`, `agent`) — first, for every message |
//! | `message_chunk` | `content_delta` |
//! | `tool_call_chunk` | `tool_call_delta`: `input: null` to announce the call, then `input_json` fragments |
//! | `llm_complete` | `message_complete` (`finish_reason` `tool_use` or `end_turn`) |
//! | `tool_end` | `tool_result` (`error: true` when it failed) |
//! | `run_end` | `final` (+ `usage`, `total_usage`) |
//! | `error` | `error` (+ `code`, and `request_id` when it answers a request outside a run) |
//! | `reasoning_chunk`, `usage`, `tool_approval`, `approval_resolved`, `user_message`, `pong` | weft extension frames |
//! | everything else | not sent |
//!
//! Requests: a frame without `type` is a chat message (+ weft `agent`, `id`); one with `type`
//! is a shared extension request.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use serde::Serialize;

use crate::command::{Command, RunCommand};
use crate::event::{Event, Sequenced};
use crate::field::{Fields, Lenient};
use crate::json::{Json, Object, ObjectWriter};
use crate::names::{Agent, FinishReason};
use crate::Error;

use super::extension::{self, stamp, ExtIn, WithExt};
use super::loom::check_run_id;
use super::{Codec, Description, Dialect, Original, Out, Requests, TurnEnd};

/// cueso, described (see [`Description`]); its codec is `CODEC`.
pub const DIALECT: Description = Description {
    dialect: Dialect::Cueso,
    name: "cueso",
    endpoint: "/ws/chat",
    subprotocol: "weft.cueso",
    documents: &["cueso-websocket.md"],
    requests: Requests {
        ping: false,
        tools: false,
        history: false,
        context: false,
        approvals: false,
        app: false,
        input: false,
    },
    reports_context: false,
    asks_approval: false,
    carries_plans: false,
    run_options: false,
    whole_thoughts: false,
    error_text: |_| None,
    no_pending_approval_text: super::loom::NO_PENDING_APPROVAL,
    original: Original {
        selects_offered_subprotocol: false,
        names_runs: false,
        names_sessions: true,
        broadcasts_turns: false,
        closes_after_error: true,
        turn_end: TurnEnd::RunEnd,
    },
};

/// cueso's codec (see [`Codec`]).
pub(crate) const CODEC: Codec = Codec {
    decode_request,
    encode_request: |command, _| encode_request(command),
    decode_server,
    encode,
    fast: super::fast::cueso,
};

/// The `tool_call` object of `tool_call_delta`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ToolCallDelta<'a> {
    /// The first delta of a call: `input` is `null`.
    Start {
        /// Call id.
        id: &'a str,
        /// Tool name.
        name: &'a str,
        /// Always `null`.
        input: (),
    },
    /// A fragment of the arguments' JSON.
    Fragment {
        /// Call id.
        id: &'a str,
        /// Tool name.
        name: &'a str,
        input_json: &'a str,
    },
}

/// Server events.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerEvent<'a> {
    /// Sent first for every client message.
    SessionCreated { session_id: &'a str },
    /// Streamed assistant text.
    ContentDelta {
        content: &'a str,
        /// Always `assistant`.
        role: &'static str,
    },
    /// Streamed tool call.
    ToolCallDelta { tool_call: ToolCallDelta<'a> },
    /// One LLM response is complete.
    MessageComplete {
        content: &'a str,
        /// Tool names it called.
        tool_calls: &'a [String],
        /// `tool_use` or `end_turn`.
        finish_reason: &'static str,
    },
    /// A tool's result.
    ToolResult {
        /// Tool name.
        tool_name: &'a str,
        /// Call id.
        tool_call_id: &'a str,
        result: &'a str,
        /// Present and `true` when the tool failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<bool>,
    },
    /// The end of the response cycle for one message.
    Final {
        /// The last iteration's text.
        content: &'a str,
        /// Tool names called in the last iteration.
        tool_calls: &'a [String],
        session_id: &'a str,
        /// LLM round trips in the session.
        iteration_count: u64,
        /// The loop paused after a `pause_after` tool.
        paused: bool,
    },
    /// An unhandled error.
    Error { message: &'a str },
}

pub(crate) fn decode_request(obj: &Object<'_>) -> Result<Command, Error> {
    if let Some(request) = extension::decode_typed(obj, Dialect::Cueso) {
        return request;
    }
    let f = Fields::new("message", obj);
    let message: String = f.req("message")?;
    if message.trim().is_empty() {
        return Err(Error::invalid("message", "message must not be empty"));
    }
    Ok(Command::Run(RunCommand {
        message,
        agent: f.opt::<String>("agent")?.map(|a| Agent::from(a.as_str())),
        id: check_run_id("message", f.opt("id")?)?,
        thread_id: f.opt("session_id")?,
        ..RunCommand::default()
    }))
}

/// Writes the client's message — `message`, and `session_id` as `null` to ask for a new
/// session, as cueso's own client sends it; weft adds `agent` when the client named one, and the
/// client's run `id` — or a shared extension request.
pub(crate) fn encode_request(command: &Command) -> Result<String, Error> {
    match command {
        Command::Run(r) => {
            let mut w = ObjectWriter::new();
            w.str("message", &r.message)
                .str_or_null("session_id", r.thread_id.as_deref());
            Ok(extension::run_extras(&mut w, r).finish())
        }
        other => extension::encode_request(Dialect::Cueso, other),
    }
}

pub(crate) fn encode(out: &mut Out<'_>) {
    let ev = out.ev;
    let session_id = ev.envelope.session_id.as_deref().unwrap_or("");
    let mut ext = match &ev.event {
        Event::RunStart { .. }
        | Event::MessageChunk { .. }
        | Event::ToolCallChunk { .. }
        | Event::LlmComplete { .. }
        | Event::ToolEnd { .. }
        | Event::RunEnd { .. }
        | Event::Error { .. } => stamp(out),
        Event::ReasoningChunk { .. }
        | Event::Usage(_)
        | Event::ToolApproval { .. }
        | Event::ApprovalResolved { .. }
        | Event::UserMessage { .. }
        | Event::EventsLost { .. }
        | Event::Pong { .. }
        // The answer to `add_mcp_server`.
        | Event::ToolsList { .. } => return extension::push_event_frame(out),
        _ => return,
    };
    let body = match &ev.event {
        Event::RunStart { message, agent, .. } => {
            ext.user_message = message.as_deref();
            ext.agent = agent.as_ref().map(Agent::as_str);
            ServerEvent::SessionCreated { session_id }
        }
        Event::MessageChunk { content, .. } => ServerEvent::ContentDelta {
            content,
            role: "assistant",
        },
        Event::ToolCallChunk {
            call_id,
            name,
            arguments_delta,
        } => {
            let id = call_id.as_deref().unwrap_or("");
            let name = name.as_deref().unwrap_or("");
            ServerEvent::ToolCallDelta {
                tool_call: if arguments_delta.is_empty() {
                    ToolCallDelta::Start {
                        id,
                        name,
                        input: (),
                    }
                } else {
                    ToolCallDelta::Fragment {
                        id,
                        name,
                        input_json: arguments_delta,
                    }
                },
            }
        }
        Event::LlmComplete {
            content,
            tool_calls,
            ..
        } => ServerEvent::MessageComplete {
            content,
            tool_calls,
            finish_reason: if tool_calls.is_empty() {
                "end_turn"
            } else {
                "tool_use"
            },
        },
        Event::ToolEnd {
            call_id,
            name,
            result,
            is_error,
        } => ServerEvent::ToolResult {
            tool_name: name,
            tool_call_id: call_id.as_deref().unwrap_or(""),
            result,
            error: is_error.then_some(true),
        },
        Event::RunEnd {
            reply,
            usage,
            total_usage,
            iteration_count,
            paused,
            tool_calls,
        } => {
            ext.usage = *usage;
            ext.total_usage = *total_usage;
            ServerEvent::Final {
                content: reply,
                tool_calls,
                session_id,
                iteration_count: iteration_count.unwrap_or(0),
                paused: *paused,
            }
        }
        Event::Error {
            message,
            code,
            id,
            details,
        } => {
            ext.code = code.as_deref();
            ext.request_id = id.as_deref();
            ext.details = details.as_ref();
            ServerEvent::Error { message }
        }
        _ => return,
    };
    out.push(&WithExt { body, ext });
}

pub(crate) fn decode_server(obj: &Object<'_>) -> Result<Vec<Sequenced>, Error> {
    let kind = match obj.get("type") {
        Some(Json::String(t)) => t.as_ref(),
        _ => return Err(Error::MissingType),
    };
    let f = Fields::new(kind, obj);
    let l = Lenient::new(f);
    let ext = ExtIn::read(obj)?;
    let mut session_id = None;
    let event = match kind {
        "session_created" => {
            session_id = Some(l.req::<String>("session_id"));
            Event::RunStart {
                run_id: ext.run_id.clone(),
                message: ext.user_message.clone(),
                agent: ext.agent.as_deref().map(Agent::from),
            }
        }
        "content_delta" => Event::MessageChunk {
            content: l.req("content"),
            id: String::new(),
        },
        "tool_call_delta" => f.object("tool_call", |call| {
            Ok(Event::ToolCallChunk {
                call_id: call.opt("id")?,
                name: call.opt("name")?,
                arguments_delta: call.opt("input_json")?.unwrap_or_default(),
            })
        })?,
        "message_complete" => Event::LlmComplete {
            content: l.req("content"),
            tool_calls: l.opt("tool_calls").unwrap_or_default(),
            finish_reason: match l.opt::<String>("finish_reason").as_deref() {
                Some("tool_use") => FinishReason::ToolCalls,
                Some("end_turn") | None => FinishReason::Stop,
                Some(other) => FinishReason::from(other),
            },
        },
        "tool_result" => Event::ToolEnd {
            call_id: l.opt("tool_call_id"),
            name: l.req("tool_name"),
            result: l.req("result"),
            is_error: l.opt("error").unwrap_or(false),
        },
        "final" => {
            session_id = l.opt("session_id");
            Event::RunEnd {
                reply: l.req("content"),
                usage: ext.usage,
                total_usage: ext.total_usage,
                iteration_count: l.opt("iteration_count"),
                paused: l.opt("paused").unwrap_or(false),
                tool_calls: l.opt("tool_calls").unwrap_or_default(),
            }
        }
        "error" => Event::Error {
            message: l.req("message"),
            code: ext.code.clone(),
            id: ext.request_id.clone(),
            details: ext.details.clone(),
        },
        _ => return Ok(vec![extension::decode_event_frame(obj)?]),
    };
    let mut seq = ext.stamp(event);
    seq.envelope.session_id = session_id;
    l.finish(vec![seq])
}
