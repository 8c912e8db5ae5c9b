//! agentchat: `agentchat-websocket.md`.
//!
//! | canonical | agentchat frame |
//! |---|---|
//! | `run_start` (with message), `user_message` | `user_message` |
//! | `reasoning_chunk` | `agent_thinking` |
//! | `tool_call` | `tool_call` (+ `call_id`) |
//! | `tool_end` | `tool_result` (+ `call_id`) |
//! | `llm_complete` with text | `agent_message`: one per completed assistant message |
//! | `error` | `error` (+ `code`, and `request_id` when it answers a request outside a run) |
//! | `usage`, `tool_approval`, `approval_resolved`, `run_end`, `pong` | weft extension frames |
//! | everything else | not sent |
//!
//! The dialect has no streamed text: a client sees each assistant message whole.
//! Requests: `chat` (+ weft `agent`, `id`) and the shared extension requests.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use serde::Serialize;

use crate::command::{Command, RunCommand};
use crate::event::Event;
use crate::event::Sequenced;
use crate::field::{Fields, Lenient};
use crate::json::{Object, ObjectWriter};
use crate::names::{Agent, FinishReason};
use crate::Error;

use super::extension::{self, arguments_text, parse_arguments, stamp, ExtIn, WithExt};
use super::loom::check_run_id;
use super::{frame_type, Codec, Description, Dialect, Original, Out, Requests, TurnEnd};

/// agentchat, described (see [`Description`]); its codec is `CODEC`.
pub const DIALECT: Description = Description {
    dialect: Dialect::Agentchat,
    name: "agentchat",
    endpoint: "/ws",
    subprotocol: "weft.agentchat",
    documents: &["agentchat-websocket.md"],
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
    whole_thoughts: true,
    error_text,
    no_pending_approval_text: super::loom::NO_PENDING_APPROVAL,
    original: Original {
        selects_offered_subprotocol: false,
        names_runs: false,
        names_sessions: false,
        broadcasts_turns: true,
        closes_after_error: false,
        turn_end: TurnEnd::Reply,
    },
};

/// agentchat's codec (see [`Codec`]).
pub(crate) const CODEC: Codec = Codec {
    decode_request,
    encode_request: |command, _| encode_request(command),
    decode_server,
    encode,
    fast: super::fast::agentchat,
};

/// Nova's words for a message it could not take: an unknown type, and an empty message.
fn error_text(e: &Error) -> Option<String> {
    match e {
        Error::UnknownType { kind, .. } => Some(unknown_type_text(kind)),
        Error::Invalid { reason, .. } if reason == EMPTY_MESSAGE => {
            Some(String::from(EMPTY_MESSAGE))
        }
        _ => None,
    }
}

/// What agentchat's and agentloop's servers answer a message of a type they do not know.
pub(crate) fn unknown_type_text(kind: &str) -> String {
    crate::text::concat(&["Unknown message type: ", kind])
}

/// Server events: `type` plus one or two string fields each.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerEvent<'a> {
    /// Echo of the user's message.
    UserMessage { message: &'a str },
    /// Agent response content.
    AgentMessage { message: &'a str },
    /// The agent called a tool.
    ToolCall {
        /// Tool name.
        tool_name: &'a str,
        /// Arguments, JSON-encoded.
        tool_args: String,
    },
    /// A tool's result.
    ToolResult {
        /// Tool name.
        tool_name: &'a str,
        result: &'a str,
        /// Whether it succeeded.
        success: bool,
    },
    /// Reasoning / debug stream.
    AgentThinking { reasoning: &'a str },
    /// Server-side or validation error.
    Error { error: &'a str },
}

/// The message the original server gives for an empty chat message.
pub const EMPTY_MESSAGE: &str = "Empty message received";

pub(crate) fn decode_request(obj: &Object<'_>) -> Result<Command, Error> {
    let kind = frame_type(obj)?;
    if kind != "chat" {
        return match extension::decode_request(kind, obj) {
            Some(cmd) => cmd,
            None => Err(Error::UnknownType {
                dialect: Dialect::Agentchat,
                kind: kind.into(),
            }),
        };
    }
    let f = Fields::new(kind, obj);
    let message: String = f.req("message")?;
    if message.trim().is_empty() {
        return Err(Error::invalid(kind, EMPTY_MESSAGE));
    }
    Ok(Command::Run(RunCommand {
        message,
        agent: f.opt::<String>("agent")?.map(|a| Agent::from(a.as_str())),
        id: check_run_id(kind, f.opt("id")?)?,
        thread_id: f.opt("session_id")?,
        ..RunCommand::default()
    }))
}

/// Writes `chat` (the user's message; weft adds `agent` when the client named one, and the client's
/// run `id`) or a shared extension request.
pub(crate) fn encode_request(command: &Command) -> Result<String, Error> {
    match command {
        Command::Run(r) => {
            let mut w = ObjectWriter::typed("chat");
            w.str("message", &r.message)
                .opt_str("session_id", r.thread_id.as_deref());
            Ok(extension::run_extras(&mut w, r).finish())
        }
        other => extension::encode_request(Dialect::Agentchat, other),
    }
}

pub(crate) fn encode(out: &mut Out<'_>) {
    let ev = out.ev;
    let mut agent = None;
    let (body, call_id) = match &ev.event {
        Event::RunStart {
            message: Some(message),
            agent: a,
            ..
        } => {
            agent = a.as_ref().map(Agent::as_str);
            (ServerEvent::UserMessage { message }, None)
        }
        Event::UserMessage { content } => (ServerEvent::UserMessage { message: content }, None),
        Event::ReasoningChunk { content, .. } => {
            (ServerEvent::AgentThinking { reasoning: content }, None)
        }
        Event::ToolCall {
            call_id,
            name,
            arguments,
        } => (
            ServerEvent::ToolCall {
                tool_name: name,
                tool_args: arguments_text(arguments),
            },
            call_id.as_deref(),
        ),
        Event::ToolEnd {
            call_id,
            name,
            result,
            is_error,
        } => (
            ServerEvent::ToolResult {
                tool_name: name,
                result,
                success: !is_error,
            },
            call_id.as_deref(),
        ),
        Event::LlmComplete { content, .. } if !content.is_empty() => {
            (ServerEvent::AgentMessage { message: content }, None)
        }
        Event::Error {
            message,
            code,
            id,
            details,
        } => {
            let mut ext = stamp(out);
            ext.code = code.as_deref();
            ext.request_id = id.as_deref();
            ext.details = details.as_ref();
            out.push(&WithExt {
                body: ServerEvent::Error { error: message },
                ext,
            });
            return;
        }
        Event::ToolApproval { .. }
        | Event::ApprovalResolved { .. }
        | Event::Usage(_)
        | Event::RunEnd { .. }
        | Event::EventsLost { .. }
        | Event::Pong { .. }
        // The answer to `add_mcp_server`.
        | Event::ToolsList { .. } => return extension::push_event_frame(out),
        _ => return,
    };
    let mut ext = stamp(out);
    ext.call_id = call_id;
    ext.agent = agent;
    out.push(&WithExt { body, ext });
}

pub(crate) fn decode_server(obj: &Object<'_>) -> Result<Vec<Sequenced>, Error> {
    let kind = frame_type(obj)?;
    let l = Lenient::new(Fields::new(kind, obj));
    let ext = ExtIn::read(obj)?;
    let event = match kind {
        "user_message" => Event::RunStart {
            run_id: ext.run_id.clone(),
            message: Some(l.req("message")),
            agent: ext.agent.as_deref().map(Agent::from),
        },
        "agent_message" => Event::LlmComplete {
            content: l.req("message"),
            tool_calls: Vec::new(),
            finish_reason: FinishReason::Stop,
        },
        "tool_call" => Event::ToolCall {
            call_id: ext.call_id.clone(),
            name: l.req("tool_name"),
            arguments: parse_arguments(&l.req::<String>("tool_args")),
        },
        "tool_result" => Event::ToolEnd {
            call_id: ext.call_id.clone(),
            name: l.req("tool_name"),
            result: l.req("result"),
            is_error: !l.req::<bool>("success"),
        },
        "agent_thinking" => Event::ReasoningChunk {
            content: l.req("reasoning"),
            id: String::new(),
        },
        "error" => Event::Error {
            message: l.req("error"),
            code: ext.code.clone(),
            id: ext.request_id.clone(),
            details: ext.details.clone(),
        },
        _ => return Ok(vec![extension::decode_event_frame(obj)?]),
    };
    l.finish(vec![ext.stamp(event)])
}
