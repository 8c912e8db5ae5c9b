//! weft's extensions, shared by every dialect (DESIGN.md "weft extensions").
//!
//! Requests: `approval_response`, `tool_result`, `client_tools`, `add_mcp_server`, `resume`,
//! `cancel` and `ping`,
//! with the same top-level shape on every endpoint (agentloop keeps its own
//! `approval_response`, with `payload`).
//!
//! Server frames: where a dialect has no frame for a canonical event a client needs, the event's
//! own JSON object is sent as a frame, with `run_id` and `event_id` beside it.

use alloc::collections::BTreeMap;
use alloc::string::String;
use serde::Serialize;

use crate::command::{
    AddMcpServer, ApprovalDecision, ClientTools, Command, Resume, RunCommand, ToolResult,
};
use crate::event::{Event, Sequenced, ToolSpec, Usage};
use crate::field::{Fields, Lenient};
use crate::json::{Json, Object, ObjectWriter, RawJson};
use crate::names::{Agent, Review};
use crate::Error;

use super::{Dialect, Out};

/// For the dialects whose own client frame has no `type` (cueso's message, AG-UI's input):
/// a frame with one is a weft request, and an unknown one is refused naming `dialect`; `None`
/// for a frame without.
pub(crate) fn decode_typed(obj: &Object<'_>, dialect: Dialect) -> Option<Result<Command, Error>> {
    let kind = obj.get("type")?;
    let Json::String(kind) = kind else {
        return Some(Err(Error::field("message", "type", "must be a string")));
    };
    Some(decode_request(kind, obj).unwrap_or_else(|| {
        Err(Error::UnknownType {
            dialect,
            kind: String::from(kind.as_ref()),
        })
    }))
}

/// Decodes a shared extension request, or returns `None` when `kind` is not one.
pub(crate) fn decode_request(kind: &str, obj: &Object<'_>) -> Option<Result<Command, Error>> {
    let f = Fields::new(kind, obj);
    let read = || -> Result<Command, Error> {
        Ok(match kind {
            "approval_response" => Command::ApprovalResponse(ApprovalDecision {
                call_id: Some(f.req("call_id")?),
                review: Review::read(&f, "review")?,
                custom_deny_message: f.opt("custom_deny_message")?,
                explanation: f.opt("explanation")?,
            }),
            "tool_result" => Command::ToolResult(ToolResult {
                call_id: f.req("call_id")?,
                result: f.req("result")?,
                is_error: f.opt("is_error")?.unwrap_or(false),
            }),
            "client_tools" => Command::ClientTools(ClientTools {
                tools: f.objects("tools", ToolSpec::read)?,
                approvals: f.opt("approvals")?.unwrap_or(false),
            }),
            "add_mcp_server" => Command::AddMcpServer(AddMcpServer {
                id: f.req("id")?,
                name: f.req("name")?,
                url: f.req("url")?,
                headers: match f.raw("headers") {
                    None => BTreeMap::new(),
                    Some(Json::Object(m)) => {
                        let mut headers = BTreeMap::new();
                        for (name, value) in m.iter() {
                            let Json::String(value) = value else {
                                return Err(f.err("headers", "must map names to strings"));
                            };
                            headers.insert(String::from(name), String::from(value.as_ref()));
                        }
                        headers
                    }
                    Some(_) => return Err(f.err("headers", "must be an object")),
                },
            }),
            "resume" => Command::Resume(Resume {
                run_id: f.req("run_id")?,
                after_event_id: f.opt("after_event_id")?.unwrap_or(0),
            }),
            "cancel" => Command::Cancel {
                run_id: match f.opt::<String>("run_id")? {
                    Some(id) => id,
                    None => f.req("id")?,
                },
            },
            _ => Command::Ping { id: f.req("id")? },
        })
    };
    match kind {
        "approval_response" | "tool_result" | "client_tools" | "add_mcp_server" | "resume"
        | "cancel" | "ping" => Some(read()),
        _ => None,
    }
}

/// Encodes a shared extension request, or returns `None` when the command is not one.
/// Writes a shared extension request; `dialect` can carry no other command. `approval_response`
/// here is the form of loom, agentchat and cueso (agentloop has its own), so it needs the call
/// id; `cancel` names the run in `id` (DESIGN.md), which servers also accept as `run_id`.
pub(crate) fn encode_request(dialect: Dialect, command: &Command) -> Result<String, Error> {
    let unsupported = Error::Unsupported {
        dialect,
        what: "this command",
    };
    Ok(match command {
        Command::ApprovalResponse(d) => ObjectWriter::typed("approval_response")
            .str("call_id", d.call_id.as_deref().ok_or(unsupported)?)
            .str("review", d.review.as_str())
            .opt_str("custom_deny_message", d.custom_deny_message.as_deref())
            .finish(),
        Command::ToolResult(r) => ObjectWriter::typed("tool_result")
            .str("call_id", &r.call_id)
            .str("result", &r.result)
            .bool("is_error", r.is_error)
            .finish(),
        Command::ClientTools(t) => {
            let mut w = ObjectWriter::typed("client_tools");
            w.objects("tools", &t.tools, ToolSpec::write_members);
            if t.approvals {
                w.bool("approvals", true);
            }
            w.finish()
        }
        Command::AddMcpServer(a) => {
            let mut w = ObjectWriter::typed("add_mcp_server");
            w.str("id", &a.id).str("name", &a.name).str("url", &a.url);
            w.object("headers", |h| {
                for (name, value) in &a.headers {
                    h.str(name, value);
                }
            });
            w.finish()
        }
        Command::Resume(r) => ObjectWriter::typed("resume")
            .str("run_id", &r.run_id)
            .uint("after_event_id", r.after_event_id)
            .finish(),
        Command::Cancel { run_id } => ObjectWriter::typed("cancel").str("id", run_id).finish(),
        Command::Ping { id } => ObjectWriter::typed("ping").str("id", id).finish(),
        _ => return Err(unsupported),
    })
}

/// What weft adds to the user message of agentchat and cueso, whose own have neither: the agent
/// when the client named one (none: the server's default), and the client's run id.
pub(crate) fn run_extras<'w>(w: &'w mut ObjectWriter, r: &RunCommand) -> &'w mut ObjectWriter {
    w.opt_str("agent", r.agent.as_ref().map(Agent::as_str))
        .opt_str("id", r.id.as_deref())
}

/// Writes the current event as an extension frame (the event's own fields, then `run_id` and
/// `event_id`) — for sockets that asked for weft's extensions only; an original client gets
/// nothing, and no `event_id` is spent. Written by [`ObjectWriter`], as `Serialize` writes it
/// with the event flattened, so a server links no serde serializer of events.
pub(crate) fn push_event_frame(out: &mut Out<'_>) {
    if !out.extensions {
        return;
    }
    let event_id = out.next_event_id();
    let ev = out.ev;
    let mut w = ObjectWriter::new();
    ev.event.write_members(&mut w);
    w.opt_str("run_id", ev.envelope.run_id.as_deref())
        .opt_uint("event_id", event_id);
    out.push_text(w.finish());
}

/// Reads an extension server frame back: the canonical event plus `run_id`/`event_id`.
pub(crate) fn decode_event_frame(obj: &Object<'_>) -> Result<Sequenced, Error> {
    let event = Event::from_json(obj)?;
    let f = Fields::new("frame", obj);
    let mut seq = Sequenced::bare(event);
    seq.envelope.run_id = f.opt("run_id")?;
    seq.envelope.event_id = f.opt("event_id")?;
    seq.envelope.session_id = f.opt("session_id")?;
    seq.envelope.node_id = f.opt("node_id")?;
    Ok(seq)
}

/// weft's extension fields on the frames of agentloop, agentchat and cueso: where those
/// dialects lack something a client needs (which run, which frame, which call), it rides
/// beside the native fields. Original clients ignore fields they do not know.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Ext<'a> {
    /// The run the frame belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<&'a str>,
    /// The frame's sequence number within the run, in this dialect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_id: Option<u64>,
    /// The tool call a frame is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<&'a str>,
    /// The tool's name, where the native frame lacks it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<&'a str>,
    /// The tool call's arguments, where the native frame flattens them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<&'a RawJson>,
    /// Whether a tool result is an error, where the native frame cannot say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// The user message that started a run, where the native frame lacks it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_message: Option<&'a str>,
    /// The agent running the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<&'a str>,
    /// The run's final reply, on the frame that ends it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply: Option<&'a str>,
    /// Usage of the run's last LLM call, on the frame that ends it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Usage of the whole run, on the frame that ends it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_usage: Option<Usage>,
    /// Machine-readable error code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'a str>,
    /// Structured error details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<&'a RawJson>,
    /// On an `error` that answers a request outside a run (a refused `run`, a stale
    /// approval): that request's id, so the client can tell which call failed (loom carries
    /// it in the error's own `id`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<&'a str>,
}

/// The extension fields as read back from a frame.
#[derive(Debug, Clone, Default)]
pub(crate) struct ExtIn {
    pub(crate) run_id: Option<String>,
    pub(crate) event_id: Option<u64>,
    pub(crate) call_id: Option<String>,
    pub(crate) tool: Option<String>,
    pub(crate) arguments: Option<RawJson>,
    pub(crate) is_error: Option<bool>,
    pub(crate) user_message: Option<String>,
    pub(crate) agent: Option<String>,
    pub(crate) reply: Option<String>,
    pub(crate) usage: Option<Usage>,
    pub(crate) total_usage: Option<Usage>,
    pub(crate) code: Option<String>,
    pub(crate) details: Option<RawJson>,
    pub(crate) request_id: Option<String>,
}

impl ExtIn {
    pub(crate) fn read(obj: &Object<'_>) -> Result<Self, Error> {
        let kind = match obj.get("type") {
            Some(Json::String(t)) => t.as_ref(),
            _ => "frame",
        };
        let l = Lenient::new(Fields::new(kind, obj));
        let ext = ExtIn {
            run_id: l.opt("run_id"),
            event_id: l.opt("event_id"),
            call_id: l.opt("call_id"),
            tool: l.opt("tool"),
            arguments: l.opt("arguments"),
            is_error: l.opt("is_error"),
            user_message: l.opt("user_message"),
            agent: l.opt("agent"),
            reply: l.opt("reply"),
            usage: l.opt_object("usage", Usage::read),
            total_usage: l.opt_object("total_usage", Usage::read),
            code: l.opt("code"),
            details: l.opt("details"),
            request_id: l.opt("request_id"),
        };
        l.finish(ext)
    }

    /// Wraps a decoded event with this frame's run and sequence number.
    pub(crate) fn stamp(&self, event: Event) -> Sequenced {
        let mut seq = Sequenced::bare(event);
        seq.envelope.run_id.clone_from(&self.run_id);
        seq.envelope.event_id = self.event_id;
        seq
    }
}

/// A native frame with the extension fields beside its own.
#[derive(Serialize)]
pub(crate) struct WithExt<'a, B: Serialize> {
    #[serde(flatten)]
    pub(crate) body: B,
    #[serde(flatten)]
    pub(crate) ext: Ext<'a>,
}

/// Claims the next event id of the run and returns the extension fields that stamp a frame.
pub(crate) fn stamp<'a>(out: &mut Out<'a>) -> Ext<'a> {
    let event_id = out.next_event_id();
    Ext {
        run_id: out.ev.envelope.run_id.as_deref(),
        event_id,
        ..Ext::default()
    }
}

/// Parses JSON-encoded tool arguments; text that is not JSON is kept as a string.
pub(crate) fn parse_arguments(text: &str) -> RawJson {
    if text.trim().is_empty() {
        return RawJson::empty_object();
    }
    RawJson::parse(text).unwrap_or_else(|| RawJson::string(text))
}

/// JSON-encodes tool arguments for dialects that carry them as a string.
pub(crate) fn arguments_text(arguments: &RawJson) -> String {
    if arguments.is_null() {
        String::from("{}")
    } else {
        String::from(arguments.as_str())
    }
}
