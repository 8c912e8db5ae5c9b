//! The tool and approval path every agent shares: `act` starts a lane's tool calls (or asks
//! for approval, one request at a time across the whole run), tool results and decisions come
//! back through [`Run::handle`], and `maybe_done_acting` hands a lane's results back to its
//! agent once every call has one.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use weft_protocol::command::ApprovalDecision;
use weft_protocol::event::NodeResult;
use weft_protocol::{Event, Review};

use super::responses::Response;
use super::{context, Effect, EngineError, Lane, Phase, Run};
use crate::provider::{ChatMessage, ChatRequest, ToolCall, ToolResult};
use crate::read::{unknown_variant, variant, Fields, FromValue, Read};

/// Where one tool call of the run is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum CallState {
    NeedsApproval,
    AwaitingApproval,
    Running,
    Done { result: String, is_error: bool },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Call {
    pub(super) call: ToolCall,
    pub(super) arguments: Value,
    pub(super) state: CallState,
    #[serde(default)]
    pub(super) lane: Lane,
    /// When its approval was last asked (the run's clock): nobody waits on it forever.
    #[serde(default)]
    pub(super) asked_at_ms: Option<i64>,
}

impl Run {
    /// Runs a lane's tool calls: each starts at once, or waits for approval (one asked at a
    /// time across the run). `span`: open an `act` node span (react, dup); tot's `act` is
    /// already open, and a GoT node's tools run between its responses' spans.
    pub(super) fn act(&mut self, lane: Lane, calls: Vec<ToolCall>, span: bool) {
        match &lane {
            None => {
                self.phase = Phase::Acting;
                if span {
                    self.emit(Event::NodeEnter { id: "act".into() });
                }
            }
            Some(id) => {
                if let Some(lanes) = self.lanes() {
                    lanes.act(self, id);
                }
            }
        }
        self.calls.retain(|c| c.lane != lane);
        let mut ready = Vec::new();
        for call in calls {
            let (arguments, state) = match (
                context::parse_arguments(&call.arguments),
                self.tool(&call.name),
            ) {
                (_, None) => (
                    Value::Null,
                    CallState::Done {
                        result: format!("unknown tool: {}", call.name),
                        is_error: true,
                    },
                ),
                (Err(e), Some(_)) => (
                    Value::Null,
                    CallState::Done {
                        result: e,
                        is_error: true,
                    },
                ),
                (Ok(args), Some(t)) => {
                    let state =
                        if t.needs_approval && !self.session.always_allowed.contains(&call.name) {
                            CallState::NeedsApproval
                        } else {
                            CallState::Running
                        };
                    (args, state)
                }
            };
            if let CallState::Done { result, is_error } = &state {
                self.emit(Event::ToolEnd {
                    call_id: Some(call.id.clone()),
                    name: call.name.clone(),
                    result: result.clone(),
                    is_error: *is_error,
                });
            }
            if state == CallState::Running {
                ready.push(call.id.clone());
            }
            self.calls.push(Call {
                call,
                arguments,
                state,
                lane: lane.clone(),
                asked_at_ms: None,
            });
        }
        for id in ready {
            self.start_tool(&id);
        }
        self.next_approval();
        self.effect(Effect::Checkpoint);
        self.maybe_done_acting(&lane);
    }

    pub(super) fn start_tool(&mut self, call_id: &str) {
        let Some(c) = self.calls.iter_mut().find(|c| c.call.id == call_id) else {
            return;
        };
        c.state = CallState::Running;
        let (name, arguments) = (c.call.name.clone(), c.arguments.clone());
        let client = self.tool(&name).is_some_and(|t| t.client);
        self.emit(Event::ToolStart {
            call_id: Some(call_id.into()),
            name: name.clone(),
        });
        self.effect(Effect::RunTool {
            call_id: call_id.into(),
            name,
            arguments,
            client,
        });
    }

    /// Asks for the next approval, if none is being asked.
    pub(super) fn next_approval(&mut self) {
        if self
            .calls
            .iter()
            .any(|c| c.state == CallState::AwaitingApproval)
        {
            return;
        }
        if let Some(c) = self
            .calls
            .iter_mut()
            .find(|c| c.state == CallState::NeedsApproval)
        {
            c.state = CallState::AwaitingApproval;
            let id = c.call.id.clone();
            self.ask_approval(&id);
        }
    }

    pub(super) fn ask_approval(&mut self, call_id: &str) {
        let now = self.now_ms;
        let Some(c) = self.calls.iter_mut().find(|c| c.call.id == call_id) else {
            return;
        };
        c.asked_at_ms = Some(now);
        let (name, arguments) = (c.call.name.clone(), c.arguments.clone());
        self.emit(Event::ToolApproval {
            call_id: Some(call_id.into()),
            name,
            arguments: arguments.into(),
        });
        self.effect(Effect::AwaitApproval {
            call_id: call_id.into(),
        });
    }

    pub(super) fn finish_call(&mut self, call_id: &str, result: String, is_error: bool) {
        if let Some(c) = self.calls.iter_mut().find(|c| c.call.id == call_id) {
            c.state = CallState::Done {
                result: result.clone(),
                is_error,
            };
            let name = c.call.name.clone();
            self.emit(Event::ToolEnd {
                call_id: Some(call_id.into()),
                name,
                result,
                is_error,
            });
        }
    }

    /// Whether a lane is running tools (and so takes tool results and approvals).
    pub(super) fn lane_acting(&self, lane: &Lane) -> bool {
        match lane {
            None => self.phase == Phase::Acting,
            Some(id) => self.lanes().is_some_and(|lanes| lanes.acting(self, id)),
        }
    }

    pub(super) fn tool_result(
        &mut self,
        call_id: &str,
        result: String,
        is_error: bool,
    ) -> Result<(), EngineError> {
        let lane = self
            .calls
            .iter()
            .find(|c| c.call.id == call_id && c.state == CallState::Running)
            .map(|c| c.lane.clone());
        let Some(lane) = lane.filter(|l| self.lane_acting(l)) else {
            return Err(EngineError::NoSuchCall(call_id.into()));
        };
        self.finish_call(call_id, result, is_error);
        self.effect(Effect::Checkpoint);
        self.maybe_done_acting(&lane);
        Ok(())
    }

    /// Output of a running call, for the clients only.
    pub(super) fn tool_output(
        &mut self,
        call_id: &str,
        content: String,
    ) -> Result<(), EngineError> {
        let call = self
            .calls
            .iter()
            .find(|c| c.call.id == call_id && c.state == CallState::Running)
            .filter(|c| self.lane_acting(&c.lane));
        let Some(call) = call else {
            return Err(EngineError::NoSuchCall(call_id.into()));
        };
        let name = call.call.name.clone();
        self.emit(Event::ToolOutput {
            call_id: Some(call_id.into()),
            name,
            content,
        });
        Ok(())
    }

    /// An answer to an approval request; `refusal` is the result the call gets when nobody
    /// decided (see [`Input::Refuse`](super::Input::Refuse)) instead of a denial by the user.
    pub(super) fn approval(
        &mut self,
        d: ApprovalDecision,
        refusal: Option<String>,
    ) -> Result<(), EngineError> {
        // An agent's own lanes take approvals whatever the run's own lane is doing.
        if self.lanes().is_none() && self.phase != Phase::Acting {
            return Err(EngineError::NoPendingApproval);
        }
        let call = match &d.call_id {
            Some(id) => self
                .calls
                .iter()
                .find(|c| &c.call.id == id && c.state == CallState::AwaitingApproval)
                .ok_or_else(|| EngineError::NoSuchCall(id.clone()))?,
            None => self
                .calls
                .iter()
                .find(|c| c.state == CallState::AwaitingApproval)
                .ok_or(EngineError::NoPendingApproval)?,
        };
        if !self.lane_acting(&call.lane) {
            return Err(EngineError::NoPendingApproval);
        }
        let (call_id, name, lane) = (
            call.call.id.clone(),
            call.call.name.clone(),
            call.lane.clone(),
        );
        let message = d
            .custom_deny_message
            .clone()
            .filter(|m| !m.trim().is_empty());
        self.emit(Event::ApprovalResolved {
            call_id: Some(call_id.clone()),
            name: Some(name.clone()),
            review: d.review,
            message: message.clone(),
        });
        let denied = match (refusal, &message) {
            (Some(reason), _) => reason,
            (None, Some(m)) => format!("denied by the user: {m}"),
            (None, None) => "denied by the user".to_string(),
        };
        match d.review {
            Review::Always => {
                self.session.always_allowed.insert(name);
                self.start_tool(&call_id);
            }
            Review::Yes => self.start_tool(&call_id),
            Review::NoContinue => self.finish_call(&call_id, denied, true),
            Review::NoExit => {
                self.finish_call(&call_id, denied, true);
                self.exit = true;
                let open: Vec<String> = self
                    .calls
                    .iter()
                    .filter(|c| {
                        matches!(
                            c.state,
                            CallState::NeedsApproval | CallState::AwaitingApproval
                        )
                    })
                    .map(|c| c.call.id.clone())
                    .collect();
                for id in open {
                    self.finish_call(&id, "not run: the user stopped the run".into(), true);
                }
                if let Some(lanes) = self.lanes() {
                    lanes.stop(self);
                    return Ok(());
                }
            }
            Review::Explain => {
                self.explain(&lane, &call_id);
                return Ok(());
            }
        }
        self.next_approval();
        self.effect(Effect::Checkpoint);
        self.maybe_done_acting(&lane);
        Ok(())
    }

    /// `explain`: the model explains the pending call in its lane's conversation, then the same
    /// approval is asked again.
    pub(super) fn explain(&mut self, lane: &Lane, call_id: &str) {
        let c = self.calls.iter().find(|c| c.call.id == call_id);
        let args = c.map(|c| c.call.arguments.clone()).unwrap_or_default();
        let question = format!(
            "Before I decide: explain in two or three sentences what calling the tool \
             `{}` with arguments {} will do, and why it is needed.",
            c.map(|c| c.call.name.as_str()).unwrap_or_default(),
            args
        );
        let (mut messages, system) = match lane {
            None => {
                self.phase = Phase::Explaining {
                    call_id: call_id.into(),
                };
                self.response = Response::default();
                (
                    self.session.history.clone(),
                    self.config.system_prompt.clone(),
                )
            }
            Some(id) => {
                let Some(lane) = self
                    .lanes()
                    .and_then(|lanes| lanes.explain(self, id, call_id))
                else {
                    return;
                };
                lane
            }
        };
        // The question goes after the pending call's turn without answering it, so the
        // history stays valid for every provider: the call is still open.
        messages.pop();
        messages.push(ChatMessage::user(question));
        let req = ChatRequest {
            model: self.config.model.clone(),
            system: Some(system),
            messages,
            tools: Vec::new(),
            max_tokens: self.config.max_tokens,
            temperature: None,
        };
        self.call_llm(lane.clone(), req);
    }

    pub(super) fn maybe_done_acting(&mut self, lane: &Lane) {
        if !self.lane_acting(lane)
            || self
                .calls
                .iter()
                .any(|c| &c.lane == lane && !matches!(c.state, CallState::Done { .. }))
        {
            return;
        }
        let (mine, rest): (Vec<Call>, Vec<Call>) = std::mem::take(&mut self.calls)
            .into_iter()
            .partition(|c| &c.lane == lane);
        self.calls = rest;
        let mut results = Vec::new();
        for c in mine {
            if let CallState::Done { result, is_error } = c.state {
                if !is_error && self.config.pause_after.contains(&c.call.name) {
                    self.paused = true;
                }
                results.push(ToolResult {
                    call_id: c.call.id,
                    name: c.call.name,
                    content: result,
                    is_error,
                });
            }
        }
        match lane {
            Some(id) => {
                if let Some(lanes) = self.lanes() {
                    lanes.acted(self, id, results);
                }
            }
            None => self.steps().acted(self, results),
        }
    }

    /// react's answer to its tools' results: into the history, then `think` again (or the
    /// end).
    pub(super) fn back_to_thinking(&mut self, results: Vec<ToolResult>) {
        self.session
            .history
            .extend(results.into_iter().map(ChatMessage::Tool));
        self.emit(Event::NodeExit {
            id: "act".into(),
            result: NodeResult::Ok,
        });
        self.think_again_or_end();
    }

    /// After a step's tools: the next `think`, unless the user stopped the run, a tool paused
    /// it, or the iteration cap is reached.
    pub(super) fn think_again_or_end(&mut self) {
        if self.exit || self.paused || self.iteration >= self.config.max_iterations {
            self.end_run();
        } else {
            self.think();
        }
    }

    /// Runs again a lane's tool calls that were running (after a restart). A call that
    /// waits for an approval is not asked again: its question is in the run's log (a client
    /// that comes back gets it by `resume`), the host's expiry alarm outlives the restart, and
    /// asking anew would have the host refuse it at once when no client is connected yet — as
    /// none is while a restarted session loads its run.
    pub(super) fn reissue_tools(&mut self, lane: &Lane) {
        for c in self.calls.clone() {
            if &c.lane != lane || c.state != CallState::Running {
                continue;
            }
            self.effect(Effect::RunTool {
                call_id: c.call.id.clone(),
                name: c.call.name.clone(),
                arguments: c.arguments.clone(),
                client: self.tool(&c.call.name).is_some_and(|t| t.client),
            });
        }
    }
}

impl FromValue for CallState {
    fn from_value(v: &Value) -> Read<Self> {
        match variant("call state", v)? {
            ("NeedsApproval", None) => Ok(CallState::NeedsApproval),
            ("AwaitingApproval", None) => Ok(CallState::AwaitingApproval),
            ("Running", None) => Ok(CallState::Running),
            ("Done", Some(fields)) => {
                let f = Fields::of("Done", fields)?;
                Ok(CallState::Done {
                    result: f.req("result")?,
                    is_error: f.req("is_error")?,
                })
            }
            (name, _) => Err(unknown_variant("call state", name)),
        }
    }
}

impl FromValue for Call {
    fn from_value(v: &Value) -> Read<Self> {
        let f = Fields::of("call", v)?;
        Ok(Call {
            call: f.req("call")?,
            arguments: f.req("arguments")?,
            state: f.req("state")?,
            lane: f.or_default("lane")?,
            asked_at_ms: f.or_default("asked_at_ms")?,
        })
    }
}
