//! Canonical events to agentloop frames, and the turn shape an original client expects.

use crate::dialect::extension::{self, arguments_text, stamp, Ext, WithExt};
use crate::dialect::{Out, Turn};
use crate::event::{Event, Sequenced};
use crate::json::{Json, RawJson};
use crate::names::{Agent, Review};
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use serde::Serialize;

use super::{
    parts, AgentFinished, ApplyPatchCommand, ApprovalRequest, ContextCompacted, ContextInfo,
    ErrorPayload, LoadingState, ResponseItem, WsMessage,
};

/// The shared `payload.id` of one streamed item: every chunk of a node span's message (or
/// reasoning) gets the same one, as the document's `MessageStateManager` expects.
fn item_id(prefix: &str, ev: &Sequenced) -> String {
    let run = ev.envelope.run_id.as_deref().unwrap_or("");
    let node = ev.envelope.node_id.as_deref().unwrap_or("");
    let h = crate::uuid::derive(0, format!("{run}\u{0}{node}").as_bytes(), 0);
    format!("{prefix}_{}", &h[..8])
}

/// The `command` array of an approval request: the tool, then its arguments' values.
fn command_of(name: &str, arguments: &Json<'_>) -> Vec<String> {
    let mut command = vec![String::from(name)];
    if let Json::Object(args) = arguments {
        for (_, v) in args.canonical() {
            command.push(match v {
                Json::String(s) => String::from(s.as_ref()),
                other => String::from(RawJson::from_tree(other).as_str()),
            });
        }
    }
    command
}

fn push<P: Serialize>(out: &mut Out<'_>, kind: &str, payload: P, ext: Ext<'_>) {
    let id = out.frame_uuid(ext.event_id);
    out.push(&WithExt {
        body: WsMessage {
            id: &id,
            kind,
            payload: Some(payload),
        },
        ext,
    });
}

/// An original client's turn (see the module docs): what it must not see, and the
/// `agent_finished` it needs before the turn's end. Returns false when the event is not sent.
fn shape_turn(out: &mut Out<'_>) -> bool {
    let turn = &mut *out.turn;
    match &out.ev.event {
        Event::RunStart { .. } => *turn = Turn::default(),
        Event::ApprovalResolved {
            review: Review::Explain,
            ..
        } => turn.explaining = true,
        Event::LlmComplete { .. } if turn.explaining => {
            // The original's explanation ends with a newline, and its example client relies on
            // it: it prints text as it comes and clears the current line when the repeated
            // `approval_request` arrives, which would erase a last line left open.
            if core::mem::take(&mut turn.line_open) {
                let ext = stamp(out);
                let id = item_id("msg", out.ev);
                let item = ResponseItem::Message {
                    id: &id,
                    role: "assistant",
                    content: parts("\n"),
                };
                push(out, "response_item", item, ext);
            }
            return false;
        }
        Event::ContextInfo { .. } if turn.explaining => return false,
        Event::LlmComplete { .. } => turn.finished = true,
        Event::ToolApproval { .. } => {
            turn.explaining = false;
            turn.finished = false;
        }
        // The original never echoes the user's input; its example client would print it.
        Event::UserMessage { .. } => return false,
        Event::MessageChunk { content, .. } => {
            turn.finished = false;
            if !content.is_empty() {
                turn.line_open = !content.ends_with('\n');
            }
        }
        Event::ReasoningChunk { .. } | Event::ToolCall { .. } | Event::ToolEnd { .. } => {
            turn.finished = false
        }
        Event::RunEnd { .. } if !turn.finished => {
            let ext = stamp(out);
            let id = item_id("msg", out.ev);
            push(
                out,
                "agent_finished",
                AgentFinished { response_id: &id },
                ext,
            );
        }
        _ => {}
    }
    true
}

pub(crate) fn encode(out: &mut Out<'_>) {
    if !out.extensions && !shape_turn(out) {
        return;
    }
    let ev = out.ev;
    match &ev.event {
        Event::RunStart { message, agent, .. } => {
            let mut ext = stamp(out);
            ext.agent = agent.as_ref().map(Agent::as_str);
            push(out, "loading_state", LoadingState { loading: true }, ext);
            // The input, for weft's clients only (see `shape_turn`).
            if let Some(m) = message.as_ref().filter(|_| out.extensions) {
                let ext = stamp(out);
                let id = item_id("msg_user", ev);
                push(
                    out,
                    "response_item",
                    ResponseItem::Message {
                        id: &id,
                        role: "user",
                        content: parts(m),
                    },
                    ext,
                );
            }
        }
        Event::UserMessage { content } => {
            let ext = stamp(out);
            let id = item_id("msg_user", ev);
            push(
                out,
                "response_item",
                ResponseItem::Message {
                    id: &id,
                    role: "user",
                    content: parts(content),
                },
                ext,
            );
        }
        Event::MessageChunk { content, .. } => {
            let ext = stamp(out);
            let id = item_id("msg", ev);
            push(
                out,
                "response_item",
                ResponseItem::Message {
                    id: &id,
                    role: "assistant",
                    content: parts(content),
                },
                ext,
            );
        }
        Event::ReasoningChunk { content, .. } => {
            let ext = stamp(out);
            let id = item_id("rs", ev);
            push(
                out,
                "response_item",
                ResponseItem::Reasoning {
                    id: &id,
                    content: parts(content),
                    duration_ms: None,
                },
                ext,
            );
        }
        Event::ToolCall {
            call_id,
            name,
            arguments,
        } => {
            let ext = stamp(out);
            let call_id = call_id.as_deref().unwrap_or("");
            let item = ResponseItem::FunctionCall {
                id: call_id,
                call_id,
                name,
                arguments: arguments_text(arguments),
            };
            push(out, "response_item", item, ext);
        }
        Event::ToolEnd {
            call_id,
            name,
            result,
            is_error,
        } => {
            let mut ext = stamp(out);
            ext.tool = (!name.is_empty()).then_some(name.as_str());
            ext.is_error = is_error.then_some(true);
            let call_id = call_id.as_deref().unwrap_or("");
            let item = ResponseItem::FunctionCallOutput {
                id: format!("output_{call_id}"),
                call_id,
                output: result,
            };
            push(out, "response_item", item, ext);
        }
        Event::ToolApproval {
            call_id,
            name,
            arguments,
        } => {
            let mut ext = stamp(out);
            ext.call_id = call_id.as_deref();
            ext.tool = Some(name);
            ext.arguments = Some(arguments);
            let args = arguments.tree();
            let patch = match args.get("patch") {
                Some(Json::String(p)) if name == "apply_patch" => {
                    Some(ApplyPatchCommand { patch: p })
                }
                _ => None,
            };
            let payload = ApprovalRequest {
                command: command_of(name, &args),
                apply_patch: patch,
            };
            push(out, "approval_request", payload, ext);
        }
        Event::LlmComplete { .. } => {
            let ext = stamp(out);
            let id = item_id("msg", ev);
            push(
                out,
                "agent_finished",
                AgentFinished { response_id: &id },
                ext,
            );
        }
        Event::ContextInfo {
            token_count,
            usage_percent,
            transcript_length,
            max_tokens,
            strategy,
        } => {
            let ext = stamp(out);
            let payload = ContextInfo {
                token_count: *token_count,
                usage_percent: *usage_percent,
                transcript_length: *transcript_length,
                max_tokens: *max_tokens,
                strategy,
            };
            push(out, "context_info", payload, ext);
        }
        Event::ContextCompacted {
            old_token_count,
            new_token_count,
            reduction_percent,
            strategy,
        } => {
            let ext = stamp(out);
            let payload = ContextCompacted {
                old_token_count: *old_token_count,
                new_token_count: *new_token_count,
                reduction_percent: *reduction_percent,
                strategy,
            };
            push(out, "context_compacted", payload, ext);
        }
        Event::RunEnd {
            reply,
            usage,
            total_usage,
            ..
        } => {
            let mut ext = stamp(out);
            ext.reply = Some(reply);
            ext.usage = *usage;
            ext.total_usage = *total_usage;
            push(out, "loading_state", LoadingState { loading: false }, ext);
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
            push(
                out,
                "error",
                ErrorPayload {
                    message,
                    details: details.clone(),
                },
                ext,
            );
            if out.run_id().is_some() {
                let ext = stamp(out);
                push(out, "loading_state", LoadingState { loading: false }, ext);
            }
        }
        Event::ApprovalResolved { .. }
        | Event::Usage(_)
        | Event::EventsLost { .. }
        | Event::Pong { .. }
        // The answer to `add_mcp_server`.
        | Event::ToolsList { .. } => extension::push_event_frame(out),
        _ => {}
    }
}
