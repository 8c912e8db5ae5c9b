//! One sub-task's life: its model calls over its own conversation (each response an
//! `execute_graph` span of its own), its tools on the shared path, and its end — done, failed,
//! or cut by the end of the run or a restart.

use weft_protocol::event::NodeResult;
use weft_protocol::{Event, FinishReason};

use super::super::ending::Cut;
use super::super::responses::{Response, Stream};
use super::super::{clip, prompts, Effect, Run};
use super::plan::parse_judgement;
use super::NodeState;
use crate::provider::{ChatMessage, ChatRequest, ToolDef, ToolResult};

/// How long a `got_node_complete` summary may be.
const SUMMARY_CHARS: usize = 200;

impl Run {
    /// One `think` step of the node's sub-task.
    pub(super) fn node_think(&mut self, id: &str) {
        let system = self.system_with(prompts::GOT_NODE);
        let tools = self.tool_defs();
        self.effect(Effect::Checkpoint);
        self.node_call(id, NodeState::Thinking, system, tools);
    }

    /// Starts a model call of one node over its own conversation, in `state`.
    pub(super) fn node_call(
        &mut self,
        id: &str,
        state: NodeState,
        system: String,
        tools: Vec<ToolDef>,
    ) {
        let (model, max_tokens) = (self.config.model.clone(), self.config.max_tokens);
        let Some(node) = self.node_mut(id) else {
            return;
        };
        node.state = state;
        node.response = Response::default();
        node.span = false;
        let req = ChatRequest {
            model,
            system: Some(system),
            messages: node.messages.clone(),
            tools,
            max_tokens,
            temperature: None,
        };
        self.call_llm(Some(id.into()), req);
    }

    /// How a node's model call streams.
    pub(super) fn node_stream(&self, id: &str) -> Option<Stream> {
        let node = self.agent.got()?.graph.node(id)?;
        let (name, tools) = match &node.state {
            NodeState::Thinking => (id, true),
            NodeState::Judging => (id, false),
            NodeState::Explaining { .. } => ("explain", false),
            _ => return None,
        };
        Some(Stream {
            node: name.into(),
            visible: true,
            tools,
        })
    }

    /// Opens the `execute_graph` span of a node's current response, once: with its first
    /// delta, so that whichever response streams first owns the stream (see `engine`).
    pub(super) fn node_span(&mut self, id: &str) {
        let Some(node) = self.node_mut(id) else {
            return;
        };
        if !std::mem::replace(&mut node.span, true) {
            self.emit(Event::NodeEnter {
                id: "execute_graph".into(),
            });
        }
    }

    /// Closes a node's response span, if open.
    pub(super) fn close_node_span(&mut self, id: &str, result: NodeResult) {
        let Some(node) = self.node_mut(id) else {
            return;
        };
        if std::mem::replace(&mut node.span, false) {
            self.emit(Event::NodeExit {
                id: "execute_graph".into(),
                result,
            });
        }
    }

    /// Closes a node's response: `usage`, `llm_complete`, the span (no `context_info`: the
    /// node's conversation is not the session's).
    pub(super) fn complete_node_response(&mut self, id: &str) -> Response {
        self.session.iterations += 1;
        self.node_span(id);
        let response = self
            .node_mut(id)
            .map(|n| std::mem::take(&mut n.response))
            .unwrap_or_default();
        self.account(response.usage);
        self.emit_complete(&response);
        self.close_node_span(id, NodeResult::Ok);
        self.response_over();
        response
    }

    pub(super) fn node_llm_end(&mut self, id: &str) {
        let Some(state) = self
            .agent
            .got()
            .and_then(|g| g.graph.node(id))
            .map(|n| n.state.clone())
        else {
            return;
        };
        match state {
            NodeState::Judging => {
                let response = self.complete_node_response(id);
                match parse_judgement(&response.text, self.max_nodes()) {
                    Some(sub) if self.can_expand(id, &sub) => self.expand_node(id, sub),
                    _ => self.node_think(id),
                }
            }
            NodeState::Thinking => {
                let response = self.complete_node_response(id);
                if let Some(node) = self.node_mut(id) {
                    node.iteration += 1;
                    node.messages.push(ChatMessage::Assistant {
                        content: response.text.clone(),
                        tool_calls: response.calls.clone(),
                    });
                }
                if response.calls.is_empty() {
                    self.node_done(id, &response.text);
                } else {
                    self.act(Some(id.into()), response.calls, false);
                }
            }
            NodeState::Explaining { call_id } => {
                self.node_span(id);
                let response = self
                    .node_mut(id)
                    .map(|n| std::mem::take(&mut n.response))
                    .unwrap_or_default();
                self.account(response.usage);
                self.emit(Event::LlmComplete {
                    content: response.text,
                    tool_calls: Vec::new(),
                    finish_reason: FinishReason::Stop,
                });
                self.close_node_span(id, NodeResult::Ok);
                self.response_over();
                if let Some(node) = self.node_mut(id) {
                    node.state = NodeState::Acting;
                }
                self.ask_approval(&call_id);
            }
            _ => {}
        }
    }

    /// A node's tools are done: its next step, or its end.
    pub(super) fn node_acted(&mut self, id: &str, results: Vec<ToolResult>) {
        let max = self.config.max_iterations;
        let Some(node) = self.node_mut(id) else {
            return;
        };
        node.messages
            .extend(results.into_iter().map(ChatMessage::Tool));
        let capped = node.iteration >= max;
        let last = node
            .messages
            .iter()
            .rev()
            .find_map(|m| match m {
                ChatMessage::Assistant { content, .. } if !content.trim().is_empty() => {
                    Some(content.clone())
                }
                _ => None,
            })
            .unwrap_or_default();
        if self.exit || self.paused {
            return self.got_stop();
        }
        if capped {
            self.node_done(id, &last);
        } else {
            self.node_think(id);
        }
    }

    pub(super) fn node_done(&mut self, id: &str, text: &str) {
        let result = match text.trim() {
            "" => "(no answer)".to_string(),
            t => t.to_string(),
        };
        if let Some(node) = self.node_mut(id) {
            node.state = NodeState::Done;
            node.result.clone_from(&result);
        }
        self.emit(Event::GotNodeComplete {
            id: id.into(),
            result_summary: clip(&result, SUMMARY_CHARS),
        });
        self.effect(Effect::Checkpoint);
        self.schedule();
    }

    /// A node failed (its model call, or nothing could start it): `got_node_failed`, and the
    /// graph goes on without it.
    pub(super) fn node_failed(&mut self, id: &str, error: String) {
        let Some(node) = self.node_mut(id) else {
            return;
        };
        if node.state.finished() {
            return;
        }
        let response = std::mem::take(&mut node.response);
        node.state = NodeState::Failed;
        node.result.clone_from(&error);
        if response.streamed_anything() {
            self.emit(Event::LlmComplete {
                content: response.text,
                tool_calls: Vec::new(),
                finish_reason: Cut::Error.finish_reason(),
            });
        }
        self.close_node_span(id, NodeResult::Err(error.clone()));
        let lane = Some(id.to_string());
        self.calls.retain(|c| c.lane != lane);
        self.llm.retain(|c| c.lane != lane);
        self.response_over();
        self.emit(Event::GotNodeFailed {
            id: id.into(),
            error,
        });
        self.next_approval();
        self.effect(Effect::Checkpoint);
        self.schedule();
    }

    /// Closes the response of a node cut by the end of the run (`finish` `cancelled`) or a
    /// restart (`interrupted`: what went out after the checkpoint is unknown, so the text is
    /// left as the client has it).
    pub(super) fn close_node_response(&mut self, id: &str, finish: Cut) {
        let response = self
            .node_mut(id)
            .map(|n| std::mem::take(&mut n.response))
            .unwrap_or_default();
        let content = if finish == Cut::Interrupted {
            String::new()
        } else {
            response.text
        };
        self.emit(Event::LlmComplete {
            content,
            tool_calls: Vec::new(),
            finish_reason: finish.finish_reason(),
        });
        let why = if finish == Cut::Interrupted {
            "interrupted by a restart".to_string()
        } else {
            format!("the run ended ({})", finish.as_str())
        };
        self.close_node_span(id, NodeResult::Err(why));
    }
}
