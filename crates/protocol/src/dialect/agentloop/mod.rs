//! agentloop: `agentloop-websocket.md`. Every frame is `{id, type, payload}`.
//!
//! | canonical | agentloop frame |
//! |---|---|
//! | `run_start` | `loading_state {loading: true}`, then (to weft's clients) the user message as a `response_item` |
//! | `user_message` | `response_item` message, role `user` (to weft's clients) |
//! | `message_chunk` | `response_item` message, role `assistant`; every chunk of one LLM response shares one `payload.id` |
//! | `reasoning_chunk` | `response_item` `reasoning`, chunks sharing one `payload.id` |
//! | `tool_call` | `response_item` `function_call` |
//! | `tool_end` | `response_item` `function_call_output` (+ `tool`, `is_error`) |
//! | `tool_approval` | `approval_request` (`command` is `[tool, ...args]`; `apply_patch` adds `applyPatch`) (+ `call_id`, `tool`, `arguments`) |
//! | `llm_complete` | `agent_finished` (it follows every model response) |
//! | `context_info`, `context_compacted` | the same names |
//! | `run_end` | `loading_state {loading: false}` (+ `reply`, `usage`, `total_usage`) — the turn's last frame |
//! | `error` | `error` (+ `code`, and `request_id` when it answers a request outside a run), then `loading_state {loading: false}` when it ends a run |
//! | `usage`, `approval_resolved`, `pong` | weft extension frames |
//! | everything else | not sent |
//!
//! Frame ids are UUID-shaped, unique, and the same when a frame is replayed.
//!
//! A socket of the original protocol ([`Encoder::original`](super::Encoder::original)) gets no
//! extension frame, each reasoning item once and whole, and its turn shaped as the original
//! client expects: a turn that ends without a model response after its last item (the user
//! answered `no-exit`) still gets `agent_finished` before `loading_state:false`; an `explain`
//! answer's explanation is followed by the repeated `approval_request` with no
//! `agent_finished` or `context_info` between. Nor does it get its own input back: the
//! original never echoes it, and its example client prints every message item it is sent.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use serde::Serialize;

use crate::command::{ApprovalDecision, Command, RunCommand};
use crate::field::Fields;
use crate::json::{Json, Object, ObjectWriter, RawJson};
use crate::names::{Agent, Review};
use crate::Error;

use super::extension::{self};
use super::loom::check_run_id;
use super::{frame_type, Codec, Description, Dialect, Original, Requests, TurnEnd};

mod decode;
mod encode;

pub(crate) use decode::decode_server;
pub(crate) use encode::encode;

/// agentloop, described (see [`Description`]); its codec is `CODEC`.
pub const DIALECT: Description = Description {
    dialect: Dialect::Agentloop,
    name: "agentloop",
    endpoint: "/agentloop",
    subprotocol: "weft.agentloop",
    documents: &["agentloop-websocket.md"],
    requests: Requests {
        ping: false,
        tools: false,
        history: false,
        context: true,
        approvals: true,
        app: false,
        input: false,
    },
    reports_context: true,
    asks_approval: true,
    carries_plans: false,
    run_options: false,
    whole_thoughts: true,
    error_text,
    no_pending_approval_text: "No pending approval request",
    original: Original {
        selects_offered_subprotocol: true,
        names_runs: false,
        names_sessions: false,
        broadcasts_turns: false,
        closes_after_error: false,
        turn_end: TurnEnd::LoadingStateOff,
    },
};

/// agentloop's codec (see [`Codec`]).
pub(crate) const CODEC: Codec = Codec {
    decode_request,
    encode_request,
    decode_server,
    encode,
    fast: super::fast::agentloop,
};

/// The ws-server's words for a message it could not take: an unknown type, and any frame it
/// could not read as one of its messages.
fn error_text(e: &Error) -> Option<String> {
    match e {
        Error::UnknownType { kind, .. } => Some(super::agentchat::unknown_type_text(kind)),
        Error::InvalidJson { .. }
        | Error::NotAnObject { .. }
        | Error::MissingType
        | Error::Field { .. }
        | Error::InvalidUtf8 { .. } => Some(String::from("Invalid message format")),
        _ => None,
    }
}

/// The base message shape: `{id, type, payload}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WsMessage<'a, P: Serialize> {
    /// Unique id of the message.
    pub id: &'a str,
    /// Message type.
    #[serde(rename = "type")]
    pub kind: &'a str,
    /// Message-specific data (absent for requests that need none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload: Option<P>,
}

/// One content part of a message or reasoning item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContentPart<'a> {
    /// `input_text` (the document uses it for every role).
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub text: &'a str,
}

/// `applyPatch` of approval messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApplyPatchCommand<'a> {
    pub patch: &'a str,
}

/// The payload of a `response_item`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseItem<'a> {
    /// A message (assistant text, the user's input, a system notice).
    Message {
        /// Item id, shared by every chunk of one streamed message.
        id: &'a str,
        /// `assistant`, `user` or `system`.
        role: &'a str,
        content: Vec<ContentPart<'a>>,
    },
    /// A tool call.
    FunctionCall {
        /// Item id.
        id: &'a str,
        /// Call id.
        call_id: &'a str,
        /// Tool name.
        name: &'a str,
        /// Arguments, JSON-encoded.
        arguments: String,
    },
    /// A tool call's output.
    FunctionCallOutput {
        /// Item id.
        id: String,
        /// Call id.
        call_id: &'a str,
        output: &'a str,
    },
    /// Reasoning (for models that support it).
    Reasoning {
        /// Item id, shared by every chunk of one reasoning stream.
        id: &'a str,
        content: Vec<ContentPart<'a>>,
        /// Time spent reasoning.
        #[serde(skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
    },
}

/// `loading_state` payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LoadingState {
    /// Whether the agent is processing.
    pub loading: bool,
}

/// `approval_request` payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApprovalRequest<'a> {
    /// `[tool, ...args]`.
    pub command: Vec<String>,
    /// The patch, for `apply_patch`.
    #[serde(rename = "applyPatch", skip_serializing_if = "Option::is_none")]
    pub apply_patch: Option<ApplyPatchCommand<'a>>,
}

/// `agent_finished` payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentFinished<'a> {
    /// The response that finished.
    #[serde(rename = "responseId")]
    pub response_id: &'a str,
}

/// `context_info` payload.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextInfo<'a> {
    /// Estimated tokens of the transcript.
    pub token_count: u64,
    /// Percent of the window used.
    pub usage_percent: f64,
    /// Transcript items.
    pub transcript_length: u64,
    pub max_tokens: u64,
    /// Strategy name.
    pub strategy: &'a str,
}

/// `context_compacted` payload.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextCompacted<'a> {
    /// Tokens before.
    pub old_token_count: u64,
    /// Tokens after.
    pub new_token_count: u64,
    /// Percent saved.
    pub reduction_percent: f64,
    /// Strategy name.
    pub strategy: &'a str,
}

/// `error` payload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorPayload<'a> {
    pub message: &'a str,
    /// Details (`null` when there are none).
    pub details: Option<RawJson>,
}

/// The text of the `input_text`/`output_text` parts of a content array.
fn text_of(content: &[Json<'_>]) -> String {
    let mut text = String::new();
    for part in content {
        match part {
            Json::String(s) => text.push_str(s),
            Json::Object(m) => {
                if let Some(Json::String(s)) = m.get("text") {
                    text.push_str(s);
                }
            }
            _ => {}
        }
    }
    text
}

fn parts(text: &str) -> Vec<ContentPart<'_>> {
    vec![ContentPart {
        kind: "input_text",
        text,
    }]
}

pub(crate) fn decode_request(obj: &Object<'_>) -> Result<Command, Error> {
    let kind = frame_type(obj)?;
    let f = Fields::new(kind, obj);
    let has_payload = f.raw("payload").is_some();
    Ok(match kind {
        "user_input" => {
            let id: String = f.req("id")?;
            f.object("payload", |p| {
                let mut message = String::new();
                let items = p.objects("input", |item| {
                    let role: Option<String> = item.opt("role")?;
                    let content = match item.raw("content") {
                        Some(Json::Array(parts)) => text_of(parts),
                        Some(Json::String(s)) => String::from(s.as_ref()),
                        _ => String::new(),
                    };
                    Ok((role, content))
                })?;
                for (role, content) in items {
                    if role.as_deref().is_none_or(|r| r == "user") && !content.is_empty() {
                        if !message.is_empty() {
                            message.push('\n');
                        }
                        message.push_str(&content);
                    }
                }
                if message.trim().is_empty() {
                    return Err(Error::invalid(kind, "input has no user text"));
                }
                Ok(Command::Run(RunCommand {
                    message,
                    agent: p.opt::<String>("agent")?.map(|a| Agent::from(a.as_str())),
                    id: check_run_id(kind, Some(id.clone()))?,
                    previous_response_id: p.opt("previousResponseId")?,
                    ..RunCommand::default()
                }))
            })?
        }
        "approval_response" if has_payload => f.object("payload", |p| {
            Ok(Command::ApprovalResponse(ApprovalDecision {
                call_id: p.opt("callId")?,
                review: Review::read(&p, "review")?,
                custom_deny_message: p.opt("customDenyMessage")?,
                explanation: p.opt("explanation")?,
            }))
        })?,
        "get_context_info" => Command::ContextInfo { id: f.opt("id")? },
        "manual_compact" => Command::Compact { id: f.opt("id")? },
        other => match extension::decode_request(other, obj) {
            Some(cmd) => cmd?,
            None => {
                return Err(Error::UnknownType {
                    dialect: Dialect::Agentloop,
                    kind: other.into(),
                })
            }
        },
    })
}

/// Writes a request as agentloop's own client does: `{id, type, payload}`. A user message is
/// `user_input` with one `message` item of `input_text` parts (the run id, when the client
/// chose one, is the frame id), an answer `approval_response` with `review` (weft adds
/// `callId`); `get_context_info` and `manual_compact` have no payload. The rest are shared
/// extension requests.
pub(crate) fn encode_request(command: &Command, frame_id: &str) -> Result<String, Error> {
    let mut w = ObjectWriter::new();
    match command {
        Command::Run(r) => {
            w.str("id", r.id.as_deref().unwrap_or(frame_id))
                .str("type", "user_input")
                .object("payload", |p| {
                    p.objects("input", [&r.message], |message, item| {
                        item.str("type", "message").str("role", "user").objects(
                            "content",
                            [message],
                            |text, part| {
                                part.str("type", "input_text").str("text", text);
                            },
                        );
                    })
                    .opt_str("previousResponseId", r.previous_response_id.as_deref())
                    .opt_str("agent", r.agent.as_ref().map(Agent::as_str));
                });
        }
        Command::ApprovalResponse(d) => {
            w.str("id", frame_id)
                .str("type", "approval_response")
                .object("payload", |p| {
                    p.str("review", d.review.as_str())
                        .opt_str("customDenyMessage", d.custom_deny_message.as_deref())
                        .opt_str("explanation", d.explanation.as_deref())
                        .opt_str("callId", d.call_id.as_deref());
                });
        }
        Command::ContextInfo { id } => {
            w.str("id", id.as_deref().unwrap_or(frame_id))
                .str("type", "get_context_info");
        }
        Command::Compact { id } => {
            w.str("id", id.as_deref().unwrap_or(frame_id))
                .str("type", "manual_compact");
        }
        other => return extension::encode_request(Dialect::Agentloop, other),
    }
    Ok(w.finish())
}
