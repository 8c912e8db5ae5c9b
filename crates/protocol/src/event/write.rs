//! The loom JSON form of events written by [`ObjectWriter`]: the text `Serialize` gives, byte
//! for byte (the tests hold the two equal on every golden transcript's events and on generated
//! ones), for a client that hands events to JavaScript as JSON and links no serde serializer.
//! `Serialize` stays, for servers that write events inside other serde values and as the
//! reference these are checked against.

use alloc::string::String;

use super::{Event, NodeResult, Sequenced, StoredMessage, ToolSpec, UnknownEvent, Usage};
use crate::json::{ObjectWriter, RawJson};

impl Sequenced {
    /// The event's members, then the envelope's.
    pub fn to_json(&self) -> String {
        let mut w = ObjectWriter::new();
        self.write_members(&mut w);
        w.finish()
    }

    /// Its members, into an object being written.
    pub(crate) fn write_members(&self, w: &mut ObjectWriter) {
        self.event.write_members(w);
        w.opt_str("session_id", self.envelope.session_id.as_deref())
            .opt_str("node_id", self.envelope_node_id())
            .opt_uint("event_id", self.envelope.event_id);
    }
}

impl Event {
    /// The event alone (`type` and its fields), as its `Serialize` writes it.
    pub fn write_json(&self) -> String {
        let mut w = ObjectWriter::new();
        self.write_members(&mut w);
        w.finish()
    }

    /// `type`, then the fields in the order the enum declares them.
    pub(crate) fn write_members(&self, w: &mut ObjectWriter) {
        if let Event::Unknown(u) = self {
            return u.write_members(w);
        }
        w.str("type", self.kind());
        match self {
            Event::RunStart {
                run_id,
                message,
                agent,
            } => {
                w.opt_str("run_id", run_id.as_deref())
                    .opt_str("message", message.as_deref())
                    .opt_str("agent", agent.as_ref().map(|a| a.as_str()));
            }
            Event::NodeEnter { id } | Event::GotNodeStart { id } | Event::Pong { id } => {
                w.str("id", id);
            }
            Event::NodeExit { id, result } => {
                w.str("id", id);
                match result {
                    NodeResult::Ok => w.str("result", "Ok"),
                    NodeResult::Err(e) => w.object("result", |w| {
                        w.str("Err", e);
                    }),
                };
            }
            Event::MessageChunk { content, id } | Event::ReasoningChunk { content, id } => {
                w.str("content", content).str("id", id);
            }
            Event::Usage(u) => u.write_members(w),
            Event::Values { state } => {
                w.raw("state", state);
            }
            Event::StateDelta { delta } => {
                w.raw("delta", delta);
            }
            Event::Updates { id, state } => {
                w.str("id", id).raw("state", state);
            }
            Event::Custom { value } => {
                w.raw("value", value);
            }
            Event::Checkpoint {
                checkpoint_id,
                timestamp,
                step,
                state,
                thread_id,
                checkpoint_ns,
            } => {
                w.str("checkpoint_id", checkpoint_id)
                    .str("timestamp", timestamp)
                    .int("step", *step)
                    .raw("state", state)
                    .opt_str("thread_id", thread_id.as_deref())
                    .opt_str("checkpoint_ns", checkpoint_ns.as_deref());
            }
            Event::TotExpand { candidates } => {
                w.strings("candidates", candidates);
            }
            Event::TotEvaluate { chosen, scores } => {
                w.uint("chosen", *chosen).floats("scores", scores);
            }
            Event::TotBacktrack { reason, to_depth } => {
                w.str("reason", reason).uint("to_depth", *to_depth);
            }
            Event::GotPlan {
                node_count,
                edge_count,
                node_ids,
            } => {
                w.uint("node_count", *node_count)
                    .uint("edge_count", *edge_count)
                    .strings("node_ids", node_ids);
            }
            Event::GotNodeComplete { id, result_summary } => {
                w.str("id", id).str("result_summary", result_summary);
            }
            Event::GotNodeFailed { id, error } => {
                w.str("id", id).str("error", error);
            }
            Event::GotExpand {
                node_id,
                nodes_added,
                edges_added,
            } => {
                w.str("node_id", node_id)
                    .uint("nodes_added", *nodes_added)
                    .uint("edges_added", *edges_added);
            }
            Event::ToolCallChunk {
                call_id,
                name,
                arguments_delta,
            } => {
                w.opt_str("call_id", call_id.as_deref())
                    .opt_str("name", name.as_deref())
                    .str("arguments_delta", arguments_delta);
            }
            Event::ToolCall {
                call_id,
                name,
                arguments,
            }
            | Event::ToolApproval {
                call_id,
                name,
                arguments,
            } => {
                w.opt_str("call_id", call_id.as_deref())
                    .str("name", name)
                    .raw("arguments", arguments);
            }
            Event::ToolStart { call_id, name } => {
                w.opt_str("call_id", call_id.as_deref()).str("name", name);
            }
            Event::ToolOutput {
                call_id,
                name,
                content,
            } => {
                w.opt_str("call_id", call_id.as_deref())
                    .str("name", name)
                    .str("content", content);
            }
            Event::ToolEnd {
                call_id,
                name,
                result,
                is_error,
            } => {
                w.opt_str("call_id", call_id.as_deref())
                    .str("name", name)
                    .str("result", result)
                    .bool("is_error", *is_error);
            }
            Event::LlmComplete {
                content,
                tool_calls,
                finish_reason,
            } => {
                w.str("content", content)
                    .strings("tool_calls", tool_calls)
                    .str("finish_reason", finish_reason.as_str());
            }
            Event::ApprovalResolved {
                call_id,
                name,
                review,
                message,
            } => {
                w.opt_str("call_id", call_id.as_deref())
                    .opt_str("name", name.as_deref())
                    .str("review", review.as_str())
                    .opt_str("message", message.as_deref());
            }
            Event::ContextInfo {
                token_count,
                usage_percent,
                transcript_length,
                max_tokens,
                strategy,
            } => {
                w.uint("token_count", *token_count)
                    .float("usage_percent", *usage_percent)
                    .uint("transcript_length", *transcript_length)
                    .uint("max_tokens", *max_tokens)
                    .str("strategy", strategy);
            }
            Event::ContextCompacted {
                old_token_count,
                new_token_count,
                reduction_percent,
                strategy,
            } => {
                w.uint("old_token_count", *old_token_count)
                    .uint("new_token_count", *new_token_count)
                    .float("reduction_percent", *reduction_percent)
                    .str("strategy", strategy);
            }
            Event::UserMessage { content } => {
                w.str("content", content);
            }
            Event::EventsLost { from } => {
                w.uint("from", *from);
            }
            Event::RunEnd {
                reply,
                usage,
                total_usage,
                iteration_count,
                paused,
                tool_calls,
            } => {
                w.str("reply", reply);
                if let Some(u) = usage {
                    w.object("usage", |w| u.write_members(w));
                }
                if let Some(u) = total_usage {
                    w.object("total_usage", |w| u.write_members(w));
                }
                w.opt_uint("iteration_count", *iteration_count);
                if *paused {
                    w.bool("paused", true);
                }
                if !tool_calls.is_empty() {
                    w.strings("tool_calls", tool_calls);
                }
            }
            Event::Error {
                message,
                code,
                id,
                details,
            } => {
                w.str("message", message)
                    .opt_str("code", code.as_deref())
                    .opt_str("id", id.as_deref());
                if let Some(d) = details {
                    w.raw("details", d);
                }
            }
            Event::ToolsList { id, tools } => {
                w.str("id", id)
                    .objects("tools", tools, ToolSpec::write_members);
            }
            Event::ToolShow {
                id,
                tool,
                tool_yaml,
            } => {
                w.str("id", id);
                if let Some(t) = tool {
                    w.raw("tool", t);
                }
                w.opt_str("tool_yaml", tool_yaml.as_deref());
            }
            Event::UserMessages {
                id,
                thread_id,
                messages,
                has_more,
                active_run_id,
            } => {
                w.str("id", id)
                    .str("thread_id", thread_id)
                    .objects("messages", messages, StoredMessage::write_members)
                    .opt_bool("has_more", *has_more)
                    .opt_str("active_run_id", active_run_id.as_deref());
            }
            Event::Unknown(_) => {}
        }
    }
}

impl UnknownEvent {
    /// `type`, then the data's members but a `type` of its own, in its canonical order.
    fn write_members(&self, w: &mut ObjectWriter) {
        w.str("type", &self.kind);
        let data = self.data.tree();
        if let Some(members) = data.as_object() {
            for (k, v) in members.canonical() {
                if k != "type" {
                    w.raw(k, &RawJson::from_tree(v));
                }
            }
        }
    }
}

impl Usage {
    /// Its members, into an object being written.
    pub fn write_members(&self, w: &mut ObjectWriter) {
        w.uint("prompt_tokens", self.prompt_tokens)
            .uint("completion_tokens", self.completion_tokens)
            .uint("total_tokens", self.total_tokens);
    }
}

impl StoredMessage {
    /// Its members, into an object being written.
    pub fn write_members(&self, w: &mut ObjectWriter) {
        w.opt_uint("id", self.id)
            .str("role", self.role.as_str())
            .str("content", &self.content);
    }
}
