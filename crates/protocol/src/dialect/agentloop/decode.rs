//! agentloop frames back to canonical events (the client side).

use crate::dialect::extension::{self, parse_arguments, ExtIn};
use crate::dialect::frame_type;
use crate::event::{Event, Sequenced};
use crate::field::Fields;
use crate::json::{Json, Object, RawJson};
use crate::names::{Agent, FinishReason};
use crate::Error;
use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::text_of;

pub(crate) fn decode_server(obj: &Object<'_>) -> Result<Vec<Sequenced>, Error> {
    let kind = frame_type(obj)?;
    let f = Fields::new(kind, obj);
    let ext = ExtIn::read(obj)?;
    let event = match kind {
        "response_item" => match f.object("payload", |p| decode_item(p, &ext))? {
            Some(event) => event,
            None => return Ok(Vec::new()),
        },
        "loading_state" => {
            let loading: bool = f.object("payload", |p| p.req("loading"))?;
            if loading {
                Event::RunStart {
                    run_id: ext.run_id.clone(),
                    message: None,
                    agent: ext.agent.as_deref().map(Agent::from),
                }
            } else {
                Event::RunEnd {
                    reply: ext.reply.clone().unwrap_or_default(),
                    usage: ext.usage,
                    total_usage: ext.total_usage,
                    iteration_count: None,
                    paused: false,
                    tool_calls: Vec::new(),
                }
            }
        }
        "approval_request" => {
            let (command, patch) = f.object("payload", |p| {
                let command: Vec<String> = p.req("command")?;
                let patch = p.opt_object("applyPatch", |a| a.req::<String>("patch"))?;
                Ok((command, patch))
            })?;
            // Without weft's fields this is an original server's request: `apply_patch` with
            // its patch, or a shell command.
            let (name, arguments) = match (&ext.tool, &ext.arguments) {
                (Some(tool), Some(args)) => (tool.clone(), args.clone()),
                _ if command.first().map(String::as_str) == Some("apply_patch") => {
                    let patch = patch
                        .or_else(|| command.get(1).cloned())
                        .unwrap_or_default();
                    let patch = Json::String(Cow::Owned(patch));
                    (String::from("apply_patch"), object_of("patch", patch))
                }
                _ => {
                    let words = command.into_iter().map(|w| Json::String(Cow::Owned(w)));
                    (
                        String::from("shell"),
                        object_of("command", Json::Array(words.collect())),
                    )
                }
            };
            Event::ToolApproval {
                call_id: ext.call_id.clone(),
                name,
                arguments,
            }
        }
        "agent_finished" => Event::LlmComplete {
            content: String::new(),
            tool_calls: Vec::new(),
            finish_reason: FinishReason::Stop,
        },
        "context_info" => f.object("payload", |p| {
            Ok(Event::ContextInfo {
                token_count: p.req("tokenCount")?,
                usage_percent: p.req("usagePercent")?,
                transcript_length: p.req("transcriptLength")?,
                max_tokens: p.req("maxTokens")?,
                strategy: p.req("strategy")?,
            })
        })?,
        "context_compacted" => f.object("payload", |p| {
            Ok(Event::ContextCompacted {
                old_token_count: p.req("oldTokenCount")?,
                new_token_count: p.req("newTokenCount")?,
                reduction_percent: p.req("reductionPercent")?,
                strategy: p.req("strategy")?,
            })
        })?,
        "error" => {
            let (message, details) =
                f.object("payload", |p| Ok((p.req("message")?, p.opt("details")?)))?;
            Event::Error {
                message,
                code: ext.code.clone(),
                id: ext.request_id.clone(),
                details,
            }
        }
        _ => return Ok(vec![extension::decode_event_frame(obj)?]),
    };
    Ok(vec![ext.stamp(event)])
}

/// One `response_item` payload to its canonical event (`None` for items with no canonical
/// meaning, such as a system notice, which are kept as [`Event::Unknown`] instead).
fn decode_item(p: Fields<'_>, ext: &ExtIn) -> Result<Option<Event>, Error> {
    let item_type: String = p.req("type")?;
    let content = || match p.raw("content") {
        Some(Json::Array(parts)) => text_of(parts),
        Some(Json::String(s)) => String::from(s.as_ref()),
        _ => String::new(),
    };
    Ok(Some(match item_type.as_str() {
        "message" => match p.opt::<String>("role")?.as_deref() {
            Some("user") => Event::UserMessage { content: content() },
            Some("assistant") | None => Event::MessageChunk {
                content: content(),
                id: String::new(),
            },
            Some(_) => unknown_item(&item_type, p),
        },
        "function_call" => Event::ToolCall {
            call_id: p.opt("call_id")?,
            name: p.req("name")?,
            arguments: parse_arguments(&p.opt::<String>("arguments")?.unwrap_or_default()),
        },
        "function_call_output" => Event::ToolEnd {
            call_id: p.opt("call_id")?,
            name: ext.tool.clone().unwrap_or_default(),
            result: p.req("output")?,
            is_error: ext.is_error.unwrap_or(false),
        },
        "local_shell_call" => Event::ToolCall {
            call_id: p.opt("id")?,
            name: String::from("shell"),
            arguments: p.opt("action")?.unwrap_or_default(),
        },
        "local_shell_call_output" => Event::ToolEnd {
            call_id: None,
            name: String::from("shell"),
            result: p.req("output")?,
            is_error: ext.is_error.unwrap_or(false),
        },
        "reasoning" => Event::ReasoningChunk {
            content: content(),
            id: String::new(),
        },
        _ => unknown_item(&item_type, p),
    }))
}

/// `{"<key>": value}`.
fn object_of(key: &'static str, value: Json<'_>) -> RawJson {
    let object: Object<'_> = [(Cow::Borrowed(key), value)].into_iter().collect();
    RawJson::from_tree(&Json::Object(object))
}

fn unknown_item(item_type: &str, p: Fields<'_>) -> Event {
    Event::Unknown(crate::event::UnknownEvent {
        kind: crate::text::concat(&["response_item.", item_type]),
        data: RawJson::from_object(p.map(), &[]),
    })
}
