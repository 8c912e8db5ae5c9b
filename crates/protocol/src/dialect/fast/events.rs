//! The other frames of a stream, read in one pass into a small borrowed tree ([`Obj`]) and from
//! it straight into their events: tool calls and results, node spans, whole model responses.
//! They are a few percent of a stream's frames but cost the general path several times a
//! delta each (agentchat's stream is nothing but these).
//!
//! Each shape names every key it accepts and what each must be; a frame with anything else
//! declines, and the general path reads it.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::scan::{Obj, Scan, Val};
use super::{Body, Delta};
use crate::dialect::extension::parse_arguments;
use crate::dialect::Dialect;
use crate::event::{Event, NodeResult};
use crate::names::FinishReason;

/// The frame in `s`, if it is one of this module's shapes.
pub(super) fn read<'a>(dialect: Dialect, s: &mut Scan<'a>) -> Option<Delta<'a>> {
    let top = s.frame_object()?;
    match dialect {
        Dialect::Loom => loom(&top),
        Dialect::Agentloop => agentloop(&top),
        Dialect::Agentchat => agentchat(&top),
        Dialect::Cueso => cueso(&top),
    }
}

/// An event of a dialect that carries weft's `run_id` and `event_id` beside its own fields.
fn stamped<'a>(top: &Obj<'_>, event: Event) -> Option<Delta<'a>> {
    Some(Delta::stamped(
        top.opt_string("run_id")?.map(Cow::Owned),
        top.opt_uint("event_id")?,
        Body::Event(event),
    ))
}

/// `run_stream_event` frames of node spans, tools and whole responses. Their envelope sits in
/// the inner event, the run id outside it.
fn loom<'a>(top: &Obj<'_>) -> Option<Delta<'a>> {
    const ENVELOPE: [&str; 4] = ["type", "session_id", "node_id", "event_id"];
    if !top.keys_within(&["type", "id", "event"]) || top.str("type")? != "run_stream_event" {
        return None;
    }
    let e = top.object("event")?;
    let within = |keys: &[&str]| e.keys().all(|k| ENVELOPE.contains(&k) || keys.contains(&k));
    let event = match e.str("type")? {
        "node_enter" if within(&["id"]) => Event::NodeEnter {
            id: e.string("id")?,
        },
        "node_exit" if within(&["id", "result"]) => Event::NodeExit {
            id: e.string("id")?,
            result: match e.get("result")? {
                Val::Str(s) if s == "Ok" => NodeResult::Ok,
                Val::Obj(o) if o.keys_within(&["Err"]) => NodeResult::Err(o.string("Err")?),
                _ => return None,
            },
        },
        "tool_start" if within(&["call_id", "name"]) => Event::ToolStart {
            call_id: e.opt_string("call_id")?,
            name: e.string("name")?,
        },
        "tool_end" if within(&["call_id", "name", "result", "is_error"]) => Event::ToolEnd {
            call_id: e.opt_string("call_id")?,
            name: e.string("name")?,
            result: e.string("result")?,
            is_error: e.boolean("is_error")?,
        },
        "tool_call" if within(&["call_id", "name", "arguments"]) => Event::ToolCall {
            call_id: e.opt_string("call_id")?,
            name: e.string("name")?,
            arguments: e
                .get("arguments")
                .map_or(serde_json::Value::Null, Val::to_json),
        },
        "llm_complete" if within(&["content", "tool_calls", "finish_reason"]) => {
            Event::LlmComplete {
                content: e.string("content")?,
                tool_calls: tool_names(e)?,
                finish_reason: FinishReason::from(e.str("finish_reason")?),
            }
        }
        _ => return None,
    };
    Some(Delta {
        run_id: Some(Cow::Owned(top.string("id")?)),
        event_id: e.opt_uint("event_id")?,
        session_id: e.opt_string("session_id")?.map(Cow::Owned),
        node_id: e.opt_string("node_id")?.map(Cow::Owned),
        body: Body::Event(event),
    })
}

/// `response_item` function calls and their outputs, and `agent_finished`.
fn agentloop<'a>(top: &Obj<'_>) -> Option<Delta<'a>> {
    let event = match top.str("type")? {
        "agent_finished" => {
            let payload = top.object("payload")?;
            if !top.keys_within(&["id", "type", "payload", "run_id", "event_id"])
                || !payload.keys_within(&["responseId"])
                || !payload.has_str("responseId")
            {
                return None;
            }
            Event::LlmComplete {
                content: String::new(),
                tool_calls: Vec::new(),
                finish_reason: FinishReason::Stop,
            }
        }
        "response_item" => {
            let p = top.object("payload")?;
            match p.str("type")? {
                "function_call"
                    if top.keys_within(&["id", "type", "payload", "run_id", "event_id"])
                        && p.keys_within(&["type", "id", "call_id", "name", "arguments"])
                        && p.has_str("id") =>
                {
                    Event::ToolCall {
                        call_id: p.opt_string("call_id")?,
                        name: p.string("name")?,
                        arguments: parse_arguments(&p.opt_string("arguments")?.unwrap_or_default()),
                    }
                }
                "function_call_output"
                    if top.keys_within(&[
                        "id", "type", "payload", "run_id", "event_id", "tool", "is_error",
                    ]) && p.keys_within(&["type", "id", "call_id", "output"])
                        && p.has_str("id") =>
                {
                    Event::ToolEnd {
                        call_id: p.opt_string("call_id")?,
                        name: top.opt_string("tool")?.unwrap_or_default(),
                        result: p.string("output")?,
                        is_error: top.opt_boolean("is_error")?.unwrap_or(false),
                    }
                }
                _ => return None,
            }
        }
        _ => return None,
    };
    // Every agentloop frame has a unique id; nothing reads it back, but a frame without one is
    // left to the general path.
    if !top.has_str("id") {
        return None;
    }
    stamped(top, event)
}

/// `tool_call` and `tool_result`.
fn agentchat<'a>(top: &Obj<'_>) -> Option<Delta<'a>> {
    const EXT: [&str; 4] = ["type", "run_id", "event_id", "call_id"];
    let within = |keys: &[&str]| top.keys().all(|k| EXT.contains(&k) || keys.contains(&k));
    let event = match top.str("type")? {
        "tool_call" if within(&["tool_name", "tool_args"]) => Event::ToolCall {
            call_id: top.opt_string("call_id")?,
            name: top.string("tool_name")?,
            arguments: parse_arguments(top.str("tool_args")?),
        },
        "tool_result" if within(&["tool_name", "result", "success"]) => Event::ToolEnd {
            call_id: top.opt_string("call_id")?,
            name: top.string("tool_name")?,
            result: top.string("result")?,
            is_error: !top.boolean("success")?,
        },
        _ => return None,
    };
    stamped(top, event)
}

/// `tool_result` and `message_complete` (without tool calls).
fn cueso<'a>(top: &Obj<'_>) -> Option<Delta<'a>> {
    const EXT: [&str; 3] = ["type", "run_id", "event_id"];
    let within = |keys: &[&str]| top.keys().all(|k| EXT.contains(&k) || keys.contains(&k));
    let event = match top.str("type")? {
        "tool_result" if within(&["tool_name", "tool_call_id", "result", "error"]) => {
            Event::ToolEnd {
                call_id: top.opt_string("tool_call_id")?,
                name: top.string("tool_name")?,
                result: top.string("result")?,
                is_error: top.opt_boolean("error")?.unwrap_or(false),
            }
        }
        "message_complete" if within(&["content", "tool_calls", "finish_reason"]) => {
            Event::LlmComplete {
                content: top.string("content")?,
                tool_calls: tool_names(top)?,
                finish_reason: match top.opt_string("finish_reason")?.as_deref() {
                    Some("tool_use") => FinishReason::ToolCalls,
                    Some("end_turn") | None => FinishReason::Stop,
                    Some(other) => FinishReason::from(other),
                },
            }
        }
        _ => return None,
    };
    stamped(top, event)
}

/// A whole response's `tool_calls` (the names of the tools it called): `Some(empty)` when
/// absent, `None` (decline) when not an array of strings.
fn tool_names(o: &Obj<'_>) -> Option<Vec<String>> {
    match o.get("tool_calls") {
        None => Some(Vec::new()),
        Some(Val::Arr(names)) => names
            .iter()
            .map(|n| match n {
                Val::Str(s) => Some(String::from(s.as_ref())),
                _ => None,
            })
            .collect(),
        Some(_) => None,
    }
}
