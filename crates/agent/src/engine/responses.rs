//! The model's responses in the run's own lane: asking (react's `think`, the agents' tool-less
//! questions, compaction), taking the streamed deltas in, and closing a response when its
//! stream ends (`usage`, `llm_complete`, `context_info`, the history).
//!
//! The responses of an agent's own lanes (GoT's sub-tasks) come in through the same
//! [`Run::delta`]; where each lane is, the agent's [`Lanes`](super::steps::Lanes) say.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use weft_protocol::event::NodeResult;
use weft_protocol::{Event, FinishReason, Usage};

use super::ending::ErrorCode;
use super::{context, Effect, EngineError, Lane, Phase, Run};
use crate::provider::{ChatMessage, ChatRequest, Delta, ToolCall};
use crate::read::{Fields, FromValue, Read};

/// The response being streamed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Response {
    pub(super) text: String,
    pub(super) reasoning: String,
    pub(super) calls: Vec<ToolCall>,
    pub(super) usage: Option<Usage>,
    pub(super) finish: Option<String>,
}

impl Response {
    pub(super) fn streamed_anything(&self) -> bool {
        !self.text.is_empty() || !self.reasoning.is_empty() || !self.calls.is_empty()
    }
}

/// How a lane's current model call streams.
pub(super) struct Stream {
    /// The node name its chunks carry.
    pub(super) node: String,
    /// Whether its text is shown (a compaction summary is not).
    pub(super) visible: bool,
    /// Whether tool calls in it are taken.
    pub(super) tools: bool,
}

impl Run {
    /// Starts a threshold compaction if the history is past the limit (once per step).
    pub(super) fn maybe_compact(&mut self) -> bool {
        let estimate = self.estimate();
        let limit = (self.config.context_window as f64 * self.config.compact_at) as u64;
        if estimate > limit && !self.compacted_this_step {
            if let Some(cut) = context::cut_point(&self.session.history, self.keep_budget()) {
                self.phase = Phase::Compacting { cut, manual: false };
                let req = context::summary_request(&self.config.model, &self.session.history, cut);
                self.call_llm(None, req);
                return true;
            }
        }
        false
    }

    /// The name of the node whose model call may call tools: react `think`, dup `plan`, tot
    /// `act`.
    pub(super) fn think_node(&self) -> &'static str {
        self.steps().think_node()
    }

    pub(super) fn think(&mut self) {
        if self.maybe_compact() {
            return;
        }
        self.compacted_this_step = false;
        self.phase = Phase::Thinking;
        self.response = Response::default();
        self.emit(Event::NodeEnter {
            id: self.think_node().into(),
        });
        let req = self.steps().think_request(self);
        self.effect(Effect::Checkpoint);
        self.call_llm(None, req);
    }

    /// react's `think` request: the history under the persona, every tool offered.
    pub(super) fn think_request(&self) -> ChatRequest {
        ChatRequest {
            model: self.config.model.clone(),
            system: Some(self.config.system_prompt.clone()),
            messages: self.session.history.clone(),
            tools: self.tool_defs(),
            max_tokens: self.config.max_tokens,
            temperature: None,
        }
    }

    /// A model call of the run's own lane that offers no tools (understand, expand, evaluate,
    /// plan): `instruction` after the persona, the history as the conversation.
    pub(super) fn ask(&mut self, instruction: &str) {
        let req = ChatRequest {
            model: self.config.model.clone(),
            system: Some(self.system_with(instruction)),
            messages: self.session.history.clone(),
            tools: Vec::new(),
            max_tokens: self.config.max_tokens,
            temperature: None,
        };
        self.response = Response::default();
        self.effect(Effect::Checkpoint);
        self.call_llm(None, req);
    }

    /// Tokens the turns kept verbatim by a compaction may take.
    pub(super) fn keep_budget(&self) -> u64 {
        (self.config.context_window as f64 * context::KEEP_SHARE) as u64
    }

    pub(super) fn estimate(&self) -> u64 {
        context::estimate(
            &self.config.system_prompt,
            &self.session.history,
            &self.tool_defs(),
        )
    }

    pub(super) fn context_info(&self) -> Event {
        let tokens = self.estimate();
        Event::ContextInfo {
            token_count: tokens,
            usage_percent: context::percent(tokens, self.config.context_window),
            transcript_length: self.session.history.len() as u64,
            max_tokens: self.config.context_window,
            strategy: context::STRATEGY.into(),
        }
    }

    /// How the current model call of `lane` streams, if it has one.
    pub(super) fn stream_of(&self, lane: &Lane) -> Option<Stream> {
        let shown = |node: &str, tools: bool| {
            Some(Stream {
                node: node.into(),
                visible: true,
                tools,
            })
        };
        match lane {
            None => match &self.phase {
                Phase::Thinking => shown(self.think_node(), self.steps().think_tools(self)),
                Phase::Explaining { .. } => shown("explain", false),
                Phase::Compacting { .. } => Some(Stream {
                    node: String::new(),
                    visible: false,
                    tools: false,
                }),
                Phase::Own => self.steps().own_stream(self),
                Phase::Acting | Phase::Done => None,
            },
            Some(id) => self.lanes()?.stream(self, id),
        }
    }

    pub(super) fn take_response(&mut self, lane: &Lane) -> Response {
        match lane {
            None => std::mem::take(&mut self.response),
            Some(id) => self
                .lanes()
                .and_then(|lanes| lanes.response(self, id))
                .map(std::mem::take)
                .unwrap_or_default(),
        }
    }

    pub(super) fn put_response(&mut self, lane: &Lane, response: Response) {
        match lane {
            None => self.response = response,
            Some(id) => {
                if let Some(r) = self.lanes().and_then(|lanes| lanes.response(self, id)) {
                    *r = response;
                }
            }
        }
    }

    /// Whether a tool call id is in use by another lane's open calls: providers number calls
    /// per response, so two sub-tasks' calls may share an id, and ids route results and
    /// approvals.
    pub(super) fn call_id_taken(&self, id: &str, lane: &Lane) -> bool {
        self.calls.iter().any(|c| c.call.id == id)
            || self.lanes().is_some_and(|lanes| {
                lane.as_deref()
                    .is_some_and(|lane| lanes.holds_call(self, id, lane))
            })
    }

    pub(super) fn delta(&mut self, lane: &Lane, delta: Delta) -> Result<(), EngineError> {
        let Some(stream) = self.stream_of(lane) else {
            return Err(EngineError::Unexpected(
                "LLM output while no LLM call is running",
            ));
        };
        if let (Some(id), Some(lanes)) = (lane, self.lanes()) {
            lanes.streams(self, id);
        }
        let mut response = self.take_response(lane);
        let node = stream.node;
        match delta {
            Delta::Text(t) => {
                response.text.push_str(&t);
                if stream.visible {
                    self.emit(Event::MessageChunk {
                        content: t,
                        id: node,
                    });
                }
            }
            Delta::Reasoning(t) if stream.visible => {
                response.reasoning.push_str(&t);
                self.emit(Event::ReasoningChunk {
                    content: t,
                    id: node,
                });
            }
            Delta::ToolCallStart { id, name, .. } if stream.tools => {
                let mut id = id;
                if lane.is_some() && self.call_id_taken(&id, lane) {
                    let base = id.clone();
                    let mut n = 2;
                    while self.call_id_taken(&id, lane) || response.calls.iter().any(|c| c.id == id)
                    {
                        id = format!("{base}_{n}");
                        n += 1;
                    }
                }
                response.calls.push(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: String::new(),
                    signature: None,
                });
                self.emit(Event::ToolCallChunk {
                    call_id: Some(id),
                    name: Some(name),
                    arguments_delta: String::new(),
                });
            }
            Delta::ToolCallArgs { index, fragment } if stream.tools => {
                if let Some(call) = response.calls.get_mut(index as usize) {
                    call.arguments.push_str(&fragment);
                    let (id, name) = (call.id.clone(), call.name.clone());
                    self.emit(Event::ToolCallChunk {
                        call_id: Some(id),
                        name: Some(name),
                        arguments_delta: fragment,
                    });
                }
            }
            Delta::ToolCallSignature { index, signature } => {
                if let Some(call) = response.calls.get_mut(index as usize) {
                    call.signature = Some(signature);
                }
            }
            Delta::ToolCallEnd { index, .. } if stream.tools => {
                if let Some(call) = response.calls.get(index as usize) {
                    let arguments = context::parse_arguments(&call.arguments)
                        .unwrap_or_else(|_| Value::String(call.arguments.clone()));
                    let (id, name) = (call.id.clone(), call.name.clone());
                    self.emit(Event::ToolCall {
                        call_id: Some(id),
                        name,
                        arguments: arguments.into(),
                    });
                }
            }
            Delta::Usage {
                prompt_tokens,
                completion_tokens,
                total_tokens,
            } => {
                response.usage = Some(Usage {
                    prompt_tokens,
                    completion_tokens,
                    total_tokens,
                });
            }
            Delta::Finish(reason) => response.finish = Some(reason.as_str().into()),
            Delta::Error(e) => {
                self.put_response(lane, response);
                let ctx = self.outbox.ctx;
                self.llm.retain(|c| Some(c.id) != ctx);
                match lane {
                    None => {
                        let details =
                            json!({ "status": e.status(), "retryable": e.is_retryable() });
                        self.fail(e.to_string(), ErrorCode::Provider, Some(details));
                    }
                    Some(id) => self.lane_failed(id, e.to_string()),
                }
                return Ok(());
            }
            // Reasoning of a summary, tool calls during an explanation: not part of the answer.
            _ => {}
        }
        self.put_response(lane, response);
        Ok(())
    }

    /// Accounts a finished response's usage: `usage` event, last and total.
    pub(super) fn account(&mut self, usage: Option<Usage>) {
        if let Some(u) = usage {
            self.last_usage = Some(u);
            self.total.add(&u);
            self.emit(Event::Usage(u));
        }
    }

    /// Emits `llm_complete` for a finished response: its reason, or one inferred from whether
    /// it called tools.
    pub(super) fn emit_complete(&mut self, response: &Response) {
        let names: Vec<String> = response.calls.iter().map(|c| c.name.clone()).collect();
        let finish = response.finish.clone().unwrap_or_else(|| {
            if names.is_empty() {
                "stop".into()
            } else {
                "tool_calls".into()
            }
        });
        self.emit(Event::LlmComplete {
            content: response.text.clone(),
            tool_calls: names,
            finish_reason: FinishReason::from(finish.as_str()),
        });
    }

    pub(super) fn account_usage(&mut self) {
        let usage = self.response.usage;
        self.account(usage);
    }

    pub(super) fn llm_end(&mut self, lane: &Lane) -> Result<(), EngineError> {
        if let Some(id) = lane {
            if let Some(lanes) = self.lanes() {
                lanes.ended(self, id);
            }
            return Ok(());
        }
        match self.phase.clone() {
            Phase::Thinking => {
                self.finish_thinking();
                Ok(())
            }
            Phase::Explaining { call_id } => {
                self.account_usage();
                let text = std::mem::take(&mut self.response.text);
                self.emit(Event::LlmComplete {
                    content: text,
                    tool_calls: Vec::new(),
                    finish_reason: FinishReason::Stop,
                });
                self.response = Response::default();
                self.phase = Phase::Acting;
                self.ask_approval(&call_id);
                Ok(())
            }
            Phase::Compacting { cut, manual } => {
                let summary = std::mem::take(&mut self.response.text);
                if let Some(u) = self.response.usage.take() {
                    self.total.add(&u);
                }
                let old = self.estimate();
                self.session.history =
                    context::apply_summary(&self.session.history, cut, summary.trim());
                let new = self.estimate();
                self.emit(Event::ContextCompacted {
                    old_token_count: old,
                    new_token_count: new,
                    reduction_percent: context::percent(old.saturating_sub(new), old),
                    strategy: context::STRATEGY.into(),
                });
                if manual {
                    self.phase = Phase::Done;
                    self.effect(Effect::Checkpoint);
                    self.effect(Effect::Finished);
                } else {
                    self.compacted_this_step = true;
                    self.begin();
                }
                Ok(())
            }
            Phase::Own => self.steps().own_end(self),
            Phase::Acting | Phase::Done => Err(EngineError::Unexpected(
                "an LLM end while no LLM call is running",
            )),
        }
    }

    /// Closes the run's own response: counts it, `usage`, `llm_complete`, into the history
    /// when `record`, `context_info`. `count`: whether it is one of the round trips
    /// [`Config::max_iterations`](super::Config::max_iterations) caps.
    pub(super) fn complete_response(&mut self, record: bool, count: bool) -> Response {
        if count {
            self.iteration += 1;
        }
        self.session.iterations += 1;
        self.account_usage();
        let response = std::mem::take(&mut self.response);
        self.emit_complete(&response);
        if record {
            self.session.history.push(ChatMessage::Assistant {
                content: response.text.clone(),
                tool_calls: response.calls.clone(),
            });
        }
        let info = self.context_info();
        self.emit(info);
        response
    }

    pub(super) fn finish_thinking(&mut self) {
        let response = self.complete_response(true, true);
        self.steps().thought(self, response);
    }

    /// react's and dup's answer to a `think` response: it is the answer, or its tools run.
    pub(super) fn answer_or_act(&mut self, response: Response) {
        self.emit(Event::NodeExit {
            id: self.think_node().into(),
            result: NodeResult::Ok,
        });
        self.last_content = response.text;
        self.last_tools = response.calls.iter().map(|c| c.name.clone()).collect();
        if response.calls.is_empty() {
            self.end_run();
        } else {
            self.act(None, response.calls, true);
        }
    }
}

impl FromValue for Response {
    fn from_value(v: &Value) -> Read<Self> {
        let f = Fields::of("response", v)?;
        Ok(Response {
            text: f.req("text")?,
            reasoning: f.req("reasoning")?,
            calls: f.req("calls")?,
            usage: f.req("usage")?,
            finish: f.req("finish")?,
        })
    }
}
