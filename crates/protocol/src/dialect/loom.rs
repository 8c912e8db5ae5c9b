//! loom: `loom-websocket-api.md` (requests and responses) and `loom-stream-protocol.md` (the
//! events inside `run_stream_event`).
//!
//! The canonical model *is* loom's event model, so this dialect carries every canonical event
//! one to one: run events go inside `run_stream_event` (weft's own event types there too, as
//! §8 allows), `run_end` and `error` end a run, replies keep their loom shapes. weft adds
//! `iteration_count`, `paused` and `tool_calls` to `run_end` and `code` to `error`.

use crate::json::RawJson;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use serde::Serialize;

use crate::command::{
    Command, RunCommand, ToolFormat, ToolShowQuery, ToolsQuery, UserMessagesQuery, MAX_RUN_ID_LEN,
};
use crate::event::{Envelope, Event, Sequenced, StoredMessage, ToolSpec, Usage};
use crate::field::{Fields, Lenient};
use crate::json::{Object, ObjectWriter};
use crate::names::Agent;
use crate::Error;

use super::{extension, frame_type, Codec, Description, Dialect, Original, Out, Requests, TurnEnd};

/// loom, described (see [`Description`]); its codec is `CODEC`.
pub const DIALECT: Description = Description {
    dialect: Dialect::Loom,
    name: "loom",
    endpoint: "/",
    subprotocol: "weft.loom",
    documents: &["loom-websocket-api.md", "loom-stream-protocol.md"],
    requests: Requests {
        ping: true,
        tools: true,
        history: true,
        context: false,
        approvals: false,
        app: true,
        input: false,
    },
    reports_context: true,
    asks_approval: true,
    carries_plans: true,
    run_options: true,
    whole_thoughts: false,
    error_text: |_| None,
    no_pending_approval_text: NO_PENDING_APPROVAL,
    original: Original {
        selects_offered_subprotocol: false,
        names_runs: true,
        names_sessions: false,
        broadcasts_turns: false,
        closes_after_error: false,
        turn_end: TurnEnd::RunEnd,
    },
};

/// loom's codec (see [`Codec`]).
pub(crate) const CODEC: Codec = Codec {
    decode_request,
    encode_request: |command, _| encode_request(command),
    decode_server,
    encode,
    fast: super::fast::loom,
};

/// weft's answer to an approval answer that finds nothing pending, where the original server
/// has no words of its own for it.
pub(crate) const NO_PENDING_APPROVAL: &str = "no approval is pending";

/// `run_stream_event` (§4.1): one event of a run, with its envelope.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunStreamEventResponse<'a> {
    /// Always `"run_stream_event"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Run id.
    pub id: &'a str,
    /// The event with its envelope.
    pub event: &'a Sequenced,
}

/// `run_end` (§4.2): the run's final reply.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunEndResponse<'a> {
    /// Always `"run_end"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Run id.
    pub id: &'a str,
    /// Full assistant reply.
    pub reply: &'a str,
    /// Usage of the last call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Usage of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_usage: Option<Usage>,
    /// Session id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<&'a str>,
    /// Node span id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_id: Option<&'a str>,
    /// Frame sequence number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_id: Option<u64>,
    /// weft: LLM round trips in the session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iteration_count: Option<u64>,
    /// weft: the run paused after a `pause_after` tool.
    #[serde(skip_serializing_if = "core::ops::Not::not")]
    pub paused: bool,
    /// weft: tools called in the last iteration.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub tool_calls: &'a [String],
}

/// `tools_list` response (§4.3).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolsListResponse<'a> {
    /// Always `"tools_list"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Request id.
    pub id: &'a str,
    pub tools: &'a [ToolSpec],
}

/// `tool_show` response (§4.4): exactly one of `tool`, `tool_yaml`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolShowResponse<'a> {
    /// Always `"tool_show"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Request id.
    pub id: &'a str,
    /// JSON definition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<&'a RawJson>,
    /// YAML definition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_yaml: Option<&'a str>,
}

/// `user_messages` response (§4.5).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UserMessagesResponse<'a> {
    /// Always `"user_messages"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Request id.
    pub id: &'a str,
    /// Thread id.
    pub thread_id: &'a str,
    /// Messages, oldest first.
    pub messages: &'a [StoredMessage],
    /// More remain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
    /// weft extension: the thread's run streaming now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_run_id: Option<&'a str>,
}

/// `pong` (§4.6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PongResponse<'a> {
    /// Always `"pong"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The ping's id.
    pub id: &'a str,
}

/// `error` (§4.7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorResponse<'a> {
    /// Always `"error"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Run id (or the request id it answers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<&'a str>,
    /// Error message.
    pub error: &'a str,
    /// weft: machine-readable code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'a str>,
    /// weft: structured details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<&'a RawJson>,
    /// weft: session of the failed run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<&'a str>,
    /// weft: frame sequence number, when it ends a run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_id: Option<u64>,
}

/// Checks a client-chosen run id (specs/README: non-empty, at most 128 characters).
pub(crate) fn check_run_id(kind: &str, id: Option<String>) -> Result<Option<String>, Error> {
    match id {
        Some(id) if id.is_empty() => Err(Error::invalid(kind, "id must not be empty")),
        Some(id) if id.chars().count() > MAX_RUN_ID_LEN => Err(Error::invalid(
            kind,
            alloc::format!("id must be at most {MAX_RUN_ID_LEN} characters"),
        )),
        other => Ok(other),
    }
}

pub(crate) fn decode_request(obj: &Object<'_>) -> Result<Command, Error> {
    let kind = frame_type(obj)?;
    let f = Fields::new(kind, obj);
    Ok(match kind {
        "run" => Command::Run(RunCommand {
            message: f.req("message")?,
            agent: Some(Agent::from(f.req::<String>("agent")?.as_str())),
            id: check_run_id(kind, f.opt("id")?)?,
            thread_id: f.opt("thread_id")?,
            working_folder: f.opt("working_folder")?,
            got_adaptive: f.opt("got_adaptive")?,
            verbose: f.opt("verbose")?,
            previous_response_id: None,
        }),
        "tools_list" => Command::ToolsList(ToolsQuery {
            id: f.req("id")?,
            working_folder: f.opt("working_folder")?,
            thread_id: f.opt("thread_id")?,
        }),
        "tool_show" => Command::ToolShow(ToolShowQuery {
            id: f.req("id")?,
            name: f.req("name")?,
            output: match f.opt::<String>("output")?.as_deref() {
                None => None,
                Some("yaml") => Some(ToolFormat::Yaml),
                Some("json") => Some(ToolFormat::Json),
                Some(_) => return Err(f.err("output", "must be \"yaml\" or \"json\"")),
            },
            working_folder: f.opt("working_folder")?,
            thread_id: f.opt("thread_id")?,
        }),
        "user_messages" => {
            let thread_id: Option<String> = f.opt("thread_id")?;
            let thread_id = match thread_id {
                Some(t) if !t.is_empty() => t,
                _ => return Err(Error::invalid(kind, "thread_id is required")),
            };
            Command::UserMessages(UserMessagesQuery {
                id: f.req("id")?,
                thread_id,
                before: f.opt("before")?,
                limit: f.opt("limit")?,
            })
        }
        other => match extension::decode_request(other, obj) {
            Some(cmd) => cmd?,
            None => match super::loom_app::decode_request(other, f) {
                Some(cmd) => cmd?,
                None => {
                    return Err(Error::UnknownType {
                        dialect: Dialect::Loom,
                        kind: other.into(),
                    })
                }
            },
        },
    })
}

/// Writes a request as loom's own client does (§3): `run`, `tools_list`, `tool_show` and
/// `user_messages` in loom's shapes, the rest as weft's shared extension requests.
pub(crate) fn encode_request(command: &Command) -> Result<String, Error> {
    Ok(match command {
        Command::Run(r) => ObjectWriter::typed("run")
            .str("message", &r.message)
            // loom's run requires an agent: none named is react, the original's default.
            .str("agent", r.agent.as_ref().map_or("react", Agent::as_str))
            .opt_str("id", r.id.as_deref())
            .opt_str("thread_id", r.thread_id.as_deref())
            .opt_str("working_folder", r.working_folder.as_deref())
            .opt_bool("got_adaptive", r.got_adaptive)
            .opt_bool("verbose", r.verbose)
            .finish(),
        Command::ToolsList(q) => ObjectWriter::typed("tools_list")
            .str("id", &q.id)
            .opt_str("working_folder", q.working_folder.as_deref())
            .opt_str("thread_id", q.thread_id.as_deref())
            .finish(),
        Command::ToolShow(q) => ObjectWriter::typed("tool_show")
            .str("id", &q.id)
            .str("name", &q.name)
            .opt_str("output", q.output.map(ToolFormat::as_str))
            .opt_str("working_folder", q.working_folder.as_deref())
            .opt_str("thread_id", q.thread_id.as_deref())
            .finish(),
        Command::UserMessages(q) => ObjectWriter::typed("user_messages")
            .str("id", &q.id)
            .str("thread_id", &q.thread_id)
            .opt_uint("before", q.before)
            .opt_uint("limit", q.limit)
            .finish(),
        Command::ApprovalResponse(d) if d.call_id.is_none() => {
            return Err(Error::invalid(
                "approval_response",
                "call_id is required outside agentloop",
            ))
        }
        Command::ContextInfo { .. } => {
            return Err(Error::Unsupported {
                dialect: Dialect::Loom,
                what: "context info requests",
            })
        }
        Command::Compact { .. } => {
            return Err(Error::Unsupported {
                dialect: Dialect::Loom,
                what: "compaction requests",
            })
        }
        other => return extension::encode_request(Dialect::Loom, other),
    })
}

pub(crate) fn encode(out: &mut Out<'_>) {
    let ev = out.ev;
    let env = &ev.envelope;
    match (&ev.event, env.run_id.as_deref()) {
        (
            Event::RunEnd {
                reply,
                usage,
                total_usage,
                iteration_count,
                paused,
                tool_calls,
            },
            Some(run_id),
        ) => {
            let event_id = out.next_event_id();
            out.push(&RunEndResponse {
                kind: "run_end",
                id: run_id,
                reply,
                usage: *usage,
                total_usage: *total_usage,
                session_id: env.session_id.as_deref(),
                node_id: env.node_id.as_deref(),
                event_id,
                iteration_count: *iteration_count,
                paused: *paused,
                tool_calls,
            });
        }
        (
            Event::Error {
                message,
                code,
                id,
                details,
            },
            run_id,
        ) => {
            let event_id = out.next_event_id();
            out.push(&ErrorResponse {
                kind: "error",
                id: run_id.or(id.as_deref()),
                error: message,
                code: code.as_deref(),
                details: details.as_ref(),
                session_id: run_id.and(env.session_id.as_deref()),
                event_id,
            });
        }
        (Event::Pong { id }, _) => out.push(&PongResponse { kind: "pong", id }),
        (Event::ToolsList { id, tools }, _) => out.push(&ToolsListResponse {
            kind: "tools_list",
            id,
            tools,
        }),
        (
            Event::ToolShow {
                id,
                tool,
                tool_yaml,
            },
            _,
        ) => out.push(&ToolShowResponse {
            kind: "tool_show",
            id,
            tool: tool.as_ref(),
            tool_yaml: tool_yaml.as_deref(),
        }),
        (
            Event::UserMessages {
                id,
                thread_id,
                messages,
                has_more,
                active_run_id,
            },
            _,
        ) => out.push(&UserMessagesResponse {
            kind: "user_messages",
            id,
            thread_id,
            messages,
            has_more: *has_more,
            active_run_id: active_run_id.as_deref(),
        }),
        (event, Some(_)) if !out.extensions && !original_client_decodes(event) => {}
        (_, Some(run_id)) => {
            let mut numbered = ev.clone();
            numbered.envelope.event_id = out.next_event_id();
            // What `RunStreamEventResponse` serializes to, written by the protocol's own
            // writer: serde's serializer of events would be linked for this frame alone.
            let mut w = ObjectWriter::typed("run_stream_event");
            w.str("id", run_id)
                .object("event", |w| numbered.write_members(w));
            out.push_text(w.finish());
        }
        // A weft event outside any run (e.g. `context_compacted` after a manual compaction).
        (_, None) => extension::push_event_frame(out),
    }
}

/// Whether an original loom client can decode this event. Its event enum (`ProtocolEvent` of
/// loom's `stream-event` crate at the spec's commit) has no catch-all and fails on any other
/// type, so the rest go to weft clients only. It is narrower than §4.2, and the types win (what
/// a real client decodes with): it has no `run_start`, which the original server never sent;
/// and its envelope takes `got_expand`'s own `node_id` for itself, so not even loom's own
/// `got_expand` decodes there.
pub(crate) fn original_client_decodes(event: &Event) -> bool {
    matches!(
        event,
        Event::NodeEnter { .. }
            | Event::NodeExit { .. }
            | Event::MessageChunk { .. }
            | Event::Usage(_)
            | Event::Values { .. }
            | Event::Updates { .. }
            | Event::Custom { .. }
            | Event::Checkpoint { .. }
            | Event::TotExpand { .. }
            | Event::TotEvaluate { .. }
            | Event::TotBacktrack { .. }
            | Event::GotPlan { .. }
            | Event::GotNodeStart { .. }
            | Event::GotNodeComplete { .. }
            | Event::GotNodeFailed { .. }
            | Event::ToolCallChunk { .. }
            | Event::ToolCall { .. }
            | Event::ToolStart { .. }
            | Event::ToolOutput { .. }
            | Event::ToolEnd { .. }
            | Event::ToolApproval { .. }
    )
}

/// The reply message of the stream protocol (§5): the run's full reply, without a `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplyMessage<'a> {
    /// Session id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<&'a str>,
    /// Node span that produced the reply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_id: Option<&'a str>,
    /// Sequence number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_id: Option<u64>,
    /// Full assistant reply.
    pub reply: &'a str,
}

pub(crate) fn decode_server(obj: &Object<'_>) -> Result<Vec<Sequenced>, Error> {
    if !obj.contains_key("type") && obj.contains_key("reply") {
        let f = Fields::new("reply", obj);
        let mut seq = Sequenced::bare(Event::RunEnd {
            reply: f.req("reply")?,
            usage: None,
            total_usage: None,
            iteration_count: None,
            paused: false,
            tool_calls: Vec::new(),
        });
        seq.envelope = Envelope::read(f)?;
        return Ok(vec![seq]);
    }
    let kind = frame_type(obj)?;
    let f = Fields::new(kind, obj);
    let l = Lenient::new(f);
    let seq = match kind {
        "run_stream_event" => {
            let run_id: String = f.req("id")?;
            let mut seq = f.object("event", |inner| Sequenced::from_json(inner.map()))?;
            seq.envelope.run_id = Some(run_id);
            seq
        }
        // The frame is the canonical event with the run id as `id`.
        "run_end" => Sequenced {
            envelope: Envelope {
                session_id: l.opt("session_id"),
                node_id: l.opt("node_id"),
                event_id: l.opt("event_id"),
                run_id: Some(l.req("id")),
            },
            event: Event::from_json(obj)?,
        },
        "error" => {
            let id: Option<String> = l.opt("id");
            let event_id: Option<u64> = l.opt("event_id");
            // An error with an event_id ends a run, and its id is the run id.
            let (run_id, id) = if event_id.is_some() {
                (id, None)
            } else {
                (None, id)
            };
            Sequenced {
                envelope: Envelope {
                    session_id: l.opt("session_id"),
                    node_id: None,
                    event_id,
                    run_id,
                },
                event: Event::Error {
                    message: l.req("error"),
                    code: l.opt("code"),
                    id,
                    details: l.opt("details"),
                },
            }
        }
        // pong, tools_list, tool_show, user_messages and weft event frames share the
        // canonical JSON form.
        _ => extension::decode_event_frame(obj)?,
    };
    l.finish(vec![seq])
}
