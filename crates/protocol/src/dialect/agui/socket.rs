//! AG-UI over a WebSocket (`GET /agui`, an upgrade): the socket dialect [`Dialect::Agui`].
//!
//! # The wire
//!
//! AG-UI has no WebSocket binding of its own. The open proposal (ag-ui-protocol/ag-ui #2084,
//! PR #2085) decides two things, which weft follows: the client sends one `RunAgentInput` as
//! one JSON text frame, and the server sends one AG-UI event per frame — the same events as
//! over SSE. It leaves the rest open; weft decides:
//!
//! - **The socket outlives a run.** A client sends its next `RunAgentInput` (a new message, its
//!   frontend tools' results, its answers to interrupts) on the same socket. The `threadId`
//!   names the session (as `POST /agui`); empty, it is the socket's own (`?session_id=`, or a
//!   fresh one).
//! - **A weft run is AG-UI run after AG-UI run on one stream.** An approval ends the AG-UI run
//!   at once with `RUN_FINISHED {outcome: interrupt}` naming that one call (weft asks one
//!   approval at a time); the next `RunAgentInput` answers it with `resume`, and the weft run's
//!   next event starts the next AG-UI run with `RUN_STARTED`
//!   ([`Encoder::encode_continuing`](super::Encoder::encode_continuing)). An interrupt left
//!   unanswered expires like any approval (`APPROVAL_TIMEOUT_MS`): the run goes on, in a new
//!   AG-UI run that says so (`CUSTOM weft:approval_resolved`).
//! - **A frontend tool's call does not end the AG-UI run here** (unlike `POST /agui`, whose
//!   stream ends when the run stops to wait): nothing in the run's events says that a call is
//!   the page's, and the encoder is a function of them. The page answers with an input carrying
//!   the `tool` message (or weft's `tool_result`); weft-sdk's `WeftAgent` ends its app's AG-UI
//!   run itself when the server starts the call (`CUSTOM weft:tool_start`), as AG-UI apps expect.
//! - **Every run frame carries `run_id` and `event_id`** at its top level, as in weft's other
//!   dialects: the weft run, and the frame's place in it (1, 2, … dense). `@ag-ui/core`'s event
//!   schemas are open objects (`z.looseObject`), so the events still pass them — the e2e suite
//!   parses every event a client receives with `EventSchemas`.
//! - **weft's own requests** are frames with a `type` (a `RunAgentInput` has none), in the
//!   shape every weft endpoint takes: `{"type":"resume","run_id","after_event_id"}` replays the
//!   run's frames after that `event_id`, then the live ones — nothing lost, nothing twice;
//!   `{"type":"cancel","run_id"}` stops the run (its AG-UI run finishes with
//!   `outcome: cancelled`); `ping`, `tool_result`, `client_tools`, `add_mcp_server` and
//!   `approval_response` as everywhere.
//! - **What AG-UI's events leave out** rides beside their own fields, for weft's clients to
//!   rebuild a run losslessly: `user_message` and `agent` on `RUN_STARTED`, `tool` and
//!   `arguments` on `TOOL_CALL_END` and on an interrupt's `RUN_FINISHED`, `is_error` on a failed
//!   tool's `TOOL_CALL_RESULT`, `last_usage` (the last model call's; AG-UI's own `usage` is
//!   another shape) and `total_usage` on a run's last `RUN_FINISHED`, `request_id` and `details` on `RUN_ERROR`. A
//!   client that did not offer `weft.agui` gets none of these, nor `run_id` and `event_id`:
//!   the events alone (it never resumes, and `@ag-ui/client` strips every field it does not
//!   know, warning about each).
//! - **Replies outside runs**: a refused request is `RUN_ERROR {message, code}`; `pong` and the
//!   other answers are `CUSTOM {name: "weft:<type>"}`.
//!
//! A client that offers no subprotocol (the proposal's) is served too: it answers interrupts
//! in its input, so it is asked to approve, as a `weft.agui` client is.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{json, Map, Value};

use super::{read_input, AguiEvent, Decoder, Outcome};
use crate::command::Command;
use crate::dialect::extension;
use crate::dialect::loom::check_run_id;
use crate::dialect::{Codec, Description, Dialect, Original, Out, Requests, TurnEnd};
use crate::event::{Event, Sequenced, Usage};
use crate::field::{Fields, Lenient};
use crate::json::{Json, Object, RawJson};
use crate::Error;

/// AG-UI over a WebSocket, described (see [`Description`]); its codec is `CODEC`.
pub const DIALECT: Description = Description {
    dialect: Dialect::Agui,
    name: "agui",
    endpoint: "/agui",
    subprotocol: "weft.agui",
    documents: &[],
    requests: Requests {
        ping: false,
        tools: false,
        history: false,
        context: false,
        approvals: false,
        app: false,
        input: true,
    },
    // As a CUSTOM `weft:context_info` event.
    reports_context: true,
    asks_approval: true,
    // Node spans as STEP_STARTED / STEP_FINISHED, the plans as CUSTOM events.
    carries_plans: true,
    run_options: false,
    whole_thoughts: false,
    error_text: |_| None,
    no_pending_approval_text: "no interrupt is pending",
    original: Original {
        selects_offered_subprotocol: false,
        names_runs: false,
        names_sessions: false,
        broadcasts_turns: false,
        closes_after_error: false,
        turn_end: TurnEnd::RunEnd,
    },
};

/// AG-UI's socket codec (see [`Codec`]).
pub(crate) const CODEC: Codec = Codec {
    decode_request,
    encode_request: |command, _| encode_request(command),
    decode_server,
    encode,
    fast: super::super::fast::agui,
};

/// A client frame: weft's request when it has a `type`, else a `RunAgentInput` — one command,
/// or a [`Command::Batch`] when it asks several things.
pub(crate) fn decode_request(obj: &Object<'_>) -> Result<Command, Error> {
    if let Some(request) = extension::decode_typed(obj, Dialect::Agui) {
        return request;
    }
    let request = read_input(obj, false)?;
    let mut commands = request.commands;
    // The client's runId names the weft run (RUN_STARTED carries it back), as AG-UI means it.
    for c in &mut commands {
        if let Command::Run(run) = c {
            let id = Some(request.input.run_id.clone()).filter(|id| !id.is_empty());
            run.id = check_run_id("RunAgentInput", id)?;
        }
    }
    Ok(match commands.len() {
        1 => commands.remove(0),
        _ => Command::Batch { commands },
    })
}

/// A command as the frame that asks it: a `RunAgentInput` for a message; weft's request for
/// the rest — a tool's result and an approval's answer too, which weft's socket takes as they
/// are on every endpoint (an input would have to carry the conversation to say the same).
pub(crate) fn encode_request(command: &Command) -> Result<String, Error> {
    let input = |messages: Value, resume: Option<Value>, thread: Option<&str>| {
        let mut input = json!({
            "threadId": thread.unwrap_or(""),
            "runId": "",
            "messages": messages,
            "tools": [],
            "context": [],
        });
        if let Some(resume) = resume {
            input["resume"] = resume;
        }
        input
    };
    let value = match command {
        Command::Run(r) => {
            let mut v = input(
                json!([{"id": "user", "role": "user", "content": r.message}]),
                None,
                r.thread_id.as_deref(),
            );
            v["runId"] = Value::String(r.id.clone().unwrap_or_default());
            if let Some(agent) = &r.agent {
                v["forwardedProps"] = json!({"agent": agent.as_str()});
            }
            v
        }
        Command::Batch { .. } => {
            return Err(Error::Unsupported {
                dialect: Dialect::Agui,
                what: "a batch of commands",
            })
        }
        other => return extension::encode_request(Dialect::Agui, other),
    };
    Ok(value.to_string())
}

/// Server side: one canonical event as AG-UI events, a frame each.
pub(crate) fn encode(out: &mut Out<'_>) {
    let ev = out.ev;
    let events = match ev.envelope.run_id {
        Some(_) => out.agui.encode_continuing(ev),
        None => reply(&ev.event),
    };
    for event in events {
        let event_id = out.next_event_id();
        let mut frame = match event.to_value() {
            Value::Object(m) => m,
            _ => continue,
        };
        // An original client gets the events alone: it never resumes, and `@ag-ui/client`
        // strips every field it does not know, warning about each.
        if out.extensions {
            beside(&mut frame, &event, &ev.event);
            if let Some(run) = &ev.envelope.run_id {
                frame.insert("run_id".into(), Value::String(run.clone()));
            }
            if let Some(id) = event_id {
                frame.insert("event_id".into(), id.into());
            }
        }
        out.push(&frame);
    }
}

/// A reply outside a run: an error is `RUN_ERROR`, anything else a weft `CUSTOM` event.
fn reply(event: &Event) -> Vec<AguiEvent> {
    alloc::vec![match event {
        Event::Error { message, code, .. } => AguiEvent::RunError {
            message: message.clone(),
            code: code.clone(),
        },
        other => AguiEvent::Custom {
            name: alloc::format!("weft:{}", other.kind()),
            value: Value::Object(other.to_json()),
        },
    }]
}

/// weft's fields beside an event's own: what the canonical event has and the AG-UI event
/// lacks (see the module docs).
fn beside(frame: &mut Map<String, Value>, event: &AguiEvent, canonical: &Event) {
    let mut put = |key: &str, value: Value| {
        frame.insert(key.to_string(), value);
    };
    match (event, canonical) {
        (AguiEvent::RunStarted { .. }, Event::RunStart { message, agent, .. }) => {
            if let Some(m) = message {
                put("user_message", Value::String(m.clone()));
            }
            if let Some(a) = agent {
                put("agent", Value::String(a.as_str().to_string()));
            }
        }
        (
            AguiEvent::ToolCallEnd { .. } | AguiEvent::RunFinished { .. },
            Event::ToolCall {
                name, arguments, ..
            }
            | Event::ToolApproval {
                name, arguments, ..
            },
        ) => {
            put("tool", Value::String(name.clone()));
            put("arguments", arguments.to_value());
        }
        (
            AguiEvent::RunFinished { .. },
            Event::RunEnd {
                usage, total_usage, ..
            },
        ) => {
            for (key, usage) in [("last_usage", usage), ("total_usage", total_usage)] {
                if let Some(u) = usage {
                    put(key, usage_value(u));
                }
            }
        }
        (AguiEvent::ToolCallResult { .. }, Event::ToolEnd { is_error: true, .. }) => {
            put("is_error", Value::Bool(true));
        }
        (AguiEvent::RunError { .. }, Event::Error { id, details, .. }) => {
            if let Some(id) = id {
                put("request_id", Value::String(id.clone()));
            }
            if let Some(d) = details {
                put("details", d.to_value());
            }
        }
        _ => {}
    }
}

fn usage_value(u: &Usage) -> Value {
    json!({
        "prompt_tokens": u.prompt_tokens,
        "completion_tokens": u.completion_tokens,
        "total_tokens": u.total_tokens,
    })
}

/// Client side: one AG-UI event (from weft's socket, or any AG-UI server's) as the canonical
/// events it carries, read from the frame alone: weft's fields beside it (`run_id`,
/// `event_id`, and what [`beside`] adds) fill in what a stateful [`Decoder`] would remember.
pub(crate) fn decode_server(obj: &Object<'_>) -> Result<Vec<Sequenced>, Error> {
    let kind = match obj.get("type") {
        Some(Json::String(t)) => t.as_ref(),
        _ => return Err(Error::MissingType),
    };
    let l = Lenient::new(Fields::new(kind, obj));
    let run_id: Option<String> = l.opt("run_id");
    let event_id: Option<u64> = l.opt("event_id");
    let tool: Option<String> = l.opt("tool");
    let arguments: Option<RawJson> = l.opt("arguments");
    let user_message: Option<String> = l.opt("user_message");
    let agent: Option<String> = l.opt("agent");
    let request_id: Option<String> = l.opt("request_id");
    let is_error: Option<bool> = l.opt("is_error");
    let usage = l.opt_object("last_usage", Usage::read);
    let total_usage = l.opt_object("total_usage", Usage::read);
    let (run_id, event_id, tool, arguments, user_message, agent, request_id, usage, total_usage) =
        l.finish((
            run_id,
            event_id,
            tool,
            arguments,
            user_message,
            agent,
            request_id,
            usage,
            total_usage,
        ))?;
    let is_error = is_error.unwrap_or(false);
    let mut event = super::events::from_object(kind, obj)?;
    // A known type's reader passes weft's fields over; an unknown one keeps every field.
    if let AguiEvent::Unknown { data, .. } = &mut event {
        for key in [
            "run_id",
            "event_id",
            "tool",
            "arguments",
            "user_message",
            "agent",
            "request_id",
            "is_error",
            "last_usage",
            "total_usage",
            "details",
        ] {
            data.remove(key);
        }
    }
    let events: Vec<Event> = match &event {
        AguiEvent::RunStarted {
            run_id: agui_run, ..
        } => alloc::vec![Event::RunStart {
            run_id: Some(run_id.clone().unwrap_or_else(|| agui_run.clone())),
            message: user_message,
            agent: agent.as_deref().map(crate::Agent::from),
        }],
        AguiEvent::ToolCallEnd { tool_call_id } => match tool {
            Some(name) => alloc::vec![Event::ToolCall {
                call_id: Some(tool_call_id.clone()),
                name,
                arguments: arguments.unwrap_or_else(RawJson::empty_object),
            }],
            // Its name and arguments came with TOOL_CALL_START and TOOL_CALL_ARGS.
            None => Vec::new(),
        },
        AguiEvent::RunFinished {
            outcome: Some(Outcome::Interrupt { interrupts }),
            ..
        } => interrupts
            .iter()
            .map(|i| Event::ToolApproval {
                call_id: Some(i.tool_call_id.clone().unwrap_or_else(|| i.id.clone())),
                name: tool.clone().unwrap_or_default(),
                arguments: arguments.clone().unwrap_or_else(RawJson::empty_object),
            })
            .collect(),
        AguiEvent::RunFinished {
            outcome: None | Some(Outcome::Success { .. }),
            result,
            ..
        } => alloc::vec![Event::RunEnd {
            reply: match result {
                Some(Value::String(s)) => s.clone(),
                _ => String::new(),
            },
            usage,
            total_usage,
            iteration_count: None,
            paused: false,
            tool_calls: Vec::new(),
        }],
        AguiEvent::RunError { message, code } => alloc::vec![Event::Error {
            message: message.clone(),
            code: code.clone(),
            id: request_id,
            details: None,
        }],
        other => Decoder::new()
            .decode(other)?
            .into_iter()
            .map(|s| match s.event {
                Event::ToolEnd {
                    call_id,
                    name,
                    result,
                    ..
                } => Event::ToolEnd {
                    call_id,
                    name,
                    result,
                    is_error,
                },
                other => other,
            })
            .collect(),
    };
    // A frame that carries no canonical event (a message opened or closed, a call closed by
    // a server that adds nothing beside it) is kept as what it is, so that its `event_id` is
    // seen: a client would otherwise take the next one's for a gap.
    let events = if events.is_empty() {
        let mut data = match event.to_value() {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        data.remove("type");
        alloc::vec![Event::Unknown(crate::event::UnknownEvent {
            kind: event.kind(),
            data: RawJson::from_value(&Value::Object(data)),
        })]
    } else {
        events
    };
    Ok(events
        .into_iter()
        .map(|event| {
            let mut seq = Sequenced::bare(event);
            seq.envelope.run_id.clone_from(&run_id);
            seq.envelope.event_id = event_id;
            seq
        })
        .collect())
}
