//! The Vercel AI SDK's UI message stream: what `useChat` (`DefaultChatTransport`) speaks, so an
//! unchanged AI SDK app runs on weft.
//!
//! It is not a socket dialect: each turn is one HTTP request whose answer is a stream of
//! server-sent events (`data: {chunk}` lines, `data: [DONE]` last). The request carries the
//! whole conversation as `UIMessage`s; the server keeps its own history, so only the last
//! message is read ([`decode_request`]):
//!
//! | last message | commands |
//! |---|---|
//! | `user`, its text parts | [`Command::Run`] in the chat's session |
//! | `assistant`, a tool part in state `approval-responded` | [`Command::ApprovalResponse`] (`approved` → `yes`, else `no-continue` with the `reason`) |
//! | `assistant`, a tool part in state `output-available` / `output-error` | [`Command::ToolResult`] of a client-side tool |
//!
//! Answers for calls that no longer wait are the server's to pass over: the AI SDK sends every
//! part again with every request.
//!
//! weft's extensions of the body: `agent` (`react`, `dup`, `tot`, `got`) and `tools`, the
//! client-side tools the page runs (weft's `ToolSpec`s; they are declared with approvals on,
//! since `useChat` answers approval requests).
//!
//! What each canonical event becomes ([`Encoder`]):
//!
//! | canonical | UI message chunks |
//! |---|---|
//! | the run's first event in this stream | `start {messageId}` (`msg-<run id>`, the same for every request of one run, so a continuation extends the same message) |
//! | `message_chunk` / `reasoning_chunk` | `text-start` / `reasoning-start` once, then `-delta`s; `-end` when something else comes |
//! | `tool_call_chunk` | `tool-input-start`, `tool-input-delta` |
//! | `tool_call` | `tool-input-available` |
//! | `tool_approval` | `tool-approval-request` (`approvalId` is the call id) |
//! | `approval_resolved` denied | `tool-output-denied` (and the tool's `tool_end` is not sent) |
//! | `tool_end` | `tool-output-available` / `tool-output-error` |
//! | a model response | `start-step` before its first piece, `finish-step` before the next one's |
//! | `run_end` | `finish-step`, `finish {finishReason: "stop"}` |
//! | `error` | `abort` when cancelled, else `error {errorText}` |
//!
//! A run that waits for the page (an approval, a client-side tool) ends the request's stream
//! with [`Encoder::pause`] (`finish {finishReason: "tool-calls"}`): the AI SDK answers in its
//! next request, whose stream carries on the same message. Everything else (node spans, plan
//! events, usage, context) has no chunk and is left out.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::command::{ApprovalDecision, ClientTools, Command, RunCommand, ToolResult};
use crate::event::{Event, Sequenced, ToolSpec};
use crate::field::Fields;
use crate::frame::{parse_object, Limits};
use crate::json::{Json, Object, ObjectWriter};
use crate::names::{Agent, Review};
use crate::{text, Error};

/// The response header that marks the body as a UI message stream.
pub const STREAM_HEADER: (&str, &str) = ("x-vercel-ai-ui-message-stream", "v1");

/// The last server-sent event of a stream.
pub const DONE: &str = "data: [DONE]\n\n";

/// One chunk as a server-sent event.
pub fn sse(chunk: &str) -> String {
    format!("data: {chunk}\n\n")
}

/// A `POST /api/chat` body, read.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// The chat's id: the session.
    pub chat_id: String,
    /// What it asks, in order: the page's tools first, if it declared any.
    pub commands: Vec<Command>,
}

/// Reads the body `DefaultChatTransport` sends (see the module docs for what it becomes).
pub fn decode_request(body: &[u8], limits: Limits) -> Result<ChatRequest, Error> {
    let obj = parse_object(body, limits)?;
    let f = Fields::new("chat", &obj);
    let chat_id: String = f.req("id")?;
    let mut commands = Vec::new();
    if f.raw("tools").is_some() {
        let tools = f.objects("tools", ToolSpec::read)?;
        commands.push(Command::ClientTools(ClientTools {
            tools,
            approvals: true,
        }));
    }
    let messages = match f.raw("messages") {
        Some(Json::Array(m)) if !m.is_empty() => m,
        _ => return Err(f.err("messages", "is required (a non-empty array)")),
    };
    let last = match messages.last() {
        Some(Json::Object(m)) => m,
        _ => return Err(f.err("messages", "must end with a message object")),
    };
    let m = Fields::new("chat", last);
    let role: String = m.req("role")?;
    let parts = match m.raw("parts") {
        Some(Json::Array(p)) => p.as_slice(),
        _ => return Err(m.err("parts", "is required (an array)")),
    };
    match role.as_str() {
        "user" => {
            let text: String = parts
                .iter()
                .filter(|p| p.get("type").and_then(Json::as_str) == Some("text"))
                .filter_map(|p| p.get("text").and_then(Json::as_str))
                .collect();
            if text.trim().is_empty() {
                return Err(Error::invalid("chat", "the last message has no text"));
            }
            let agent = f.opt::<String>("agent")?.map(|a| Agent::from(a.as_str()));
            commands.push(Command::Run(RunCommand {
                message: text,
                agent,
                id: None,
                thread_id: Some(chat_id.clone()),
                working_folder: None,
                got_adaptive: None,
                verbose: None,
                previous_response_id: None,
            }));
        }
        "assistant" => {
            for part in parts.iter().filter_map(Json::as_object) {
                if let Some(command) = tool_answer(part)? {
                    commands.push(command);
                }
            }
        }
        other => {
            return Err(Error::invalid(
                "chat",
                format!("the last message is from {other:?}: nothing to answer"),
            ))
        }
    }
    Ok(ChatRequest { chat_id, commands })
}

/// What the page answered in one tool part of its last message, if anything.
fn tool_answer(part: &Object<'_>) -> Result<Option<Command>, Error> {
    let kind = part.get("type").and_then(Json::as_str).unwrap_or("");
    if !(kind.starts_with("tool-") || kind == "dynamic-tool") {
        return Ok(None);
    }
    let f = Fields::new("chat", part);
    let call_id: String = f.req("toolCallId")?;
    let state: String = f.opt("state")?.unwrap_or_default();
    Ok(match state.as_str() {
        "approval-responded" => {
            let Some(Json::Object(approval)) = f.raw("approval") else {
                return Ok(None);
            };
            let a = Fields::new("chat", approval);
            let approved: bool = a.req("approved")?;
            let reason: Option<String> = a.opt("reason")?;
            Some(Command::ApprovalResponse(ApprovalDecision {
                call_id: Some(call_id),
                review: if approved {
                    Review::Yes
                } else {
                    Review::NoContinue
                },
                custom_deny_message: if approved { None } else { reason },
                explanation: None,
            }))
        }
        "output-available" => {
            let result = match f.raw("output") {
                Some(Json::String(s)) => String::from(s.as_ref()),
                Some(v) => v.to_serde().to_string(),
                None => String::new(),
            };
            Some(Command::ToolResult(ToolResult {
                call_id,
                result,
                is_error: false,
            }))
        }
        "output-error" => Some(Command::ToolResult(ToolResult {
            call_id,
            result: f.opt("errorText")?.unwrap_or_default(),
            is_error: true,
        })),
        _ => None,
    })
}

/// Turns one run's canonical events into UI message chunks (JSON text each; [`sse`] frames
/// them), for one request's stream. A request that continues a run gets a fresh encoder: its
/// chunks carry on the same message.
#[derive(Debug, Clone, Default)]
pub struct Encoder {
    started: bool,
    /// A step is open; `answered`: its model response is complete, so the next piece of a
    /// response opens a new step.
    step: bool,
    answered: bool,
    /// The open text or reasoning part: its kind (`text`, `reasoning`) and id.
    part: Option<(&'static str, String)>,
    /// Calls whose `tool-input-start` went out.
    inputs: Vec<String>,
    /// Calls denied: their `tool_end` is not an output.
    denied: Vec<String>,
    finished: bool,
}

impl Encoder {
    /// An encoder for a new stream.
    pub fn new() -> Self {
        Encoder::default()
    }

    /// Whether the stream is over (the run ended, failed, or paused).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The chunks that carry this event, possibly none, as JSON text.
    pub fn encode(&mut self, ev: &Sequenced) -> Vec<String> {
        self.encode_chunks(ev).iter().map(Chunk::to_json).collect()
    }

    /// The chunks that carry this event, possibly none.
    pub fn encode_chunks(&mut self, ev: &Sequenced) -> Vec<Chunk> {
        let mut out = Vec::new();
        if self.finished {
            return out;
        }
        if !self.started {
            self.started = true;
            let id = ev.envelope.run_id.as_deref().unwrap_or("run");
            out.push(chunk("start", |w| {
                w.str("messageId", &text::concat(&["msg-", id]));
            }));
        }
        let at = ev.envelope.event_id.unwrap_or(0);
        match &ev.event {
            Event::MessageChunk { content, .. } => self.piece(&mut out, "text", at, content),
            Event::ReasoningChunk { content, .. } => self.piece(&mut out, "reasoning", at, content),
            Event::ToolCallChunk {
                call_id: Some(call),
                name,
                arguments_delta,
            } => {
                self.open_step(&mut out);
                self.close_part(&mut out);
                if !self.inputs.contains(call) {
                    self.inputs.push(call.clone());
                    out.push(chunk("tool-input-start", |w| {
                        w.str("toolCallId", call)
                            .str("toolName", name.as_deref().unwrap_or(""));
                    }));
                }
                if !arguments_delta.is_empty() {
                    out.push(chunk("tool-input-delta", |w| {
                        w.str("inputTextDelta", arguments_delta)
                            .str("toolCallId", call);
                    }));
                }
            }
            Event::ToolCall {
                call_id: Some(call),
                name,
                arguments,
            } => {
                self.open_step(&mut out);
                self.close_part(&mut out);
                out.push(chunk("tool-input-available", |w| {
                    w.raw("input", arguments)
                        .str("toolCallId", call)
                        .str("toolName", name);
                }));
            }
            Event::LlmComplete { .. } => {
                self.close_part(&mut out);
                self.answered = true;
            }
            Event::ToolApproval {
                call_id: Some(call),
                ..
            } => {
                self.close_part(&mut out);
                out.push(chunk("tool-approval-request", |w| {
                    w.str("approvalId", call).str("toolCallId", call);
                }));
            }
            Event::ApprovalResolved {
                call_id: Some(call),
                review,
                ..
            } if !matches!(review, Review::Yes | Review::Always) => {
                self.close_part(&mut out);
                self.denied.push(call.clone());
                out.push(chunk("tool-output-denied", |w| {
                    w.str("toolCallId", call);
                }));
            }
            Event::ToolEnd {
                call_id: Some(call),
                result,
                is_error,
                ..
            } if !self.denied.contains(call) => {
                self.close_part(&mut out);
                out.push(if *is_error {
                    chunk("tool-output-error", |w| {
                        w.str("errorText", result).str("toolCallId", call);
                    })
                } else {
                    chunk("tool-output-available", |w| {
                        w.str("output", result).str("toolCallId", call);
                    })
                });
            }
            Event::RunEnd { .. } => self.finish(&mut out, "stop"),
            Event::Error { message, code, .. } => {
                self.close_part(&mut out);
                self.close_step(&mut out);
                if code.as_deref() == Some("cancelled") {
                    out.push(chunk("abort", |w| {
                        w.str("reason", message);
                    }));
                } else {
                    out.push(chunk("error", |w| {
                        w.str("errorText", message);
                    }));
                }
                self.finished = true;
            }
            _ => {}
        }
        out
    }

    /// The chunks that end this request's stream while the run waits for the page (an approval
    /// or a client-side tool's output, sent with the next request).
    pub fn pause(&mut self) -> Vec<String> {
        self.pause_chunks().iter().map(Chunk::to_json).collect()
    }

    /// [`Encoder::pause`]'s chunks.
    pub fn pause_chunks(&mut self) -> Vec<Chunk> {
        let mut out = Vec::new();
        if !self.finished && self.started {
            self.finish(&mut out, "tool-calls");
        }
        self.finished = true;
        out
    }

    /// The chunks that end the stream with a failure the run's events did not carry (the
    /// client lost the run: it closed, or the connection cannot resume it).
    pub fn fail(&mut self, message: &str) -> Vec<Chunk> {
        let mut out = Vec::new();
        if !self.finished {
            self.close_part(&mut out);
            self.close_step(&mut out);
            out.push(chunk("error", |w| {
                w.str("errorText", message);
            }));
        }
        self.finished = true;
        out
    }

    fn piece(&mut self, out: &mut Vec<Chunk>, kind: &'static str, at: u64, delta: &str) {
        self.open_step(out);
        if self.part.as_ref().is_some_and(|(k, _)| *k != kind) {
            self.close_part(out);
        }
        let id = match &self.part {
            Some((_, id)) => id.clone(),
            None => {
                // Without `format!`: the browser SDK links this encoder, and none of core's
                // formatting machinery.
                let id = text::concat(&[&kind[..1], &text::uint(at)]);
                out.push(chunk(&text::concat(&[kind, "-start"]), |w| {
                    w.str("id", &id);
                }));
                self.part = Some((kind, id.clone()));
                id
            }
        };
        out.push(Chunk::Delta {
            kind,
            id,
            delta: delta.into(),
        });
    }

    fn open_step(&mut self, out: &mut Vec<Chunk>) {
        if self.step && self.answered {
            self.close_part(out);
            self.close_step(out);
        }
        if !self.step {
            self.step = true;
            self.answered = false;
            out.push(chunk("start-step", |_| {}));
        }
    }

    fn close_step(&mut self, out: &mut Vec<Chunk>) {
        if self.step {
            self.step = false;
            out.push(chunk("finish-step", |_| {}));
        }
    }

    fn close_part(&mut self, out: &mut Vec<Chunk>) {
        if let Some((kind, id)) = self.part.take() {
            out.push(chunk(&text::concat(&[kind, "-end"]), |w| {
                w.str("id", &id);
            }));
        }
    }

    fn finish(&mut self, out: &mut Vec<Chunk>, reason: &str) {
        self.close_part(out);
        self.close_step(out);
        out.push(chunk("finish", |w| {
            w.str("finishReason", reason);
        }));
        self.finished = true;
    }
}

/// A chunk of type `kind` with the members `write` writes. Members go in ascending order of
/// their keys and `type` last, as serde_json writes a `json!` object: the chunks are the text
/// the encoder has always sent.
fn chunk(kind: &str, write: impl FnOnce(&mut ObjectWriter)) -> Chunk {
    let mut w = ObjectWriter::new();
    write(&mut w);
    Chunk::Json(w.str("type", kind).finish())
}

/// One UI message chunk. A text or reasoning delta is kept apart from its JSON until it is
/// written, so that whoever hands several chunks over at once can join the consecutive deltas of
/// one part into one ([`Chunk::absorb`]): the AI SDK's `Chat` pays per chunk, not per character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chunk {
    /// `text-delta` or `reasoning-delta` (`kind` `text` or `reasoning`) of the part `id`.
    Delta {
        kind: &'static str,
        id: String,
        delta: String,
    },
    /// Any other chunk, as JSON text.
    Json(String),
}

impl Chunk {
    /// The chunk's JSON text.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    /// Appends the chunk's JSON text to `out`.
    pub fn write_json(&self, out: &mut String) {
        match self {
            Chunk::Json(json) => out.push_str(json),
            Chunk::Delta { kind, id, delta } => {
                out.push_str("{\"delta\":");
                crate::json::write_str(out, delta);
                out.push_str(",\"id\":");
                crate::json::write_str(out, id);
                out.push_str(",\"type\":\"");
                out.push_str(kind);
                out.push_str("-delta\"}");
            }
        }
    }

    /// Takes `next` into this chunk when both are deltas of the same part (their text joined);
    /// gives it back otherwise.
    pub fn absorb(&mut self, next: Chunk) -> Option<Chunk> {
        match (self, next) {
            (
                Chunk::Delta { kind, id, delta },
                Chunk::Delta {
                    kind: k,
                    id: i,
                    delta: d,
                },
            ) if *kind == k && *id == i => {
                delta.push_str(&d);
                None
            }
            (_, next) => Some(next),
        }
    }
}
