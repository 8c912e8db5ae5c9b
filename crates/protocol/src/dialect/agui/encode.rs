//! Canonical events into AG-UI events, one stream (one AG-UI run) at a time.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{json, Value};

use super::{AguiEvent, Interrupt, Outcome};
use crate::event::{Envelope, Event, Sequenced};

/// Turns one weft run's canonical events into AG-UI events, for one stream (one AG-UI run).
/// A stream that continues a weft run (after a pause) gets a fresh encoder. On a WebSocket,
/// where one stream carries the whole weft run, [`Encoder::encode_continuing`] runs AG-UI run
/// after AG-UI run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Encoder {
    started: bool,
    finished: bool,
    /// The AG-UI run ended with an interrupt: the weft run's next event starts the next one.
    interrupted: bool,
    thread_id: String,
    run_id: String,
    /// The open text or reasoning message: whether it is reasoning, and its id.
    part: Option<(bool, String)>,
    /// Calls whose `TOOL_CALL_START` went out, and whether their `TOOL_CALL_END` did.
    calls: Vec<(String, bool)>,
    /// Calls with a result.
    results: Vec<String>,
    /// Approvals asked and not yet answered: the call id and its tool.
    approvals: Vec<(String, String)>,
    /// Steps this stream started and has not finished.
    steps: Vec<String>,
}

impl Encoder {
    /// An encoder for a new stream.
    pub fn new() -> Self {
        Encoder::default()
    }

    /// An encoder for a new stream of the thread (the weft session) `thread_id`: the
    /// `threadId` of its run's events.
    pub fn for_thread(thread_id: &str) -> Self {
        Encoder {
            thread_id: thread_id.to_string(),
            ..Encoder::default()
        }
    }

    /// The events that end the stream with an error before its run ended: `RUN_ERROR` (which
    /// AG-UI allows as a stream's first event, too).
    pub fn error(&mut self, message: &str) -> Vec<AguiEvent> {
        let mut out = Vec::new();
        if self.finished {
            return out;
        }
        self.close_all(&mut out);
        self.finished = true;
        out.push(AguiEvent::RunError {
            message: message.to_string(),
            code: None,
        });
        out
    }

    /// Whether the AG-UI run is over (finished, failed, or paused).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The AG-UI events that carry this event, possibly none.
    pub fn encode(&mut self, ev: &Sequenced) -> Vec<AguiEvent> {
        let mut out = Vec::new();
        if self.finished {
            return out;
        }
        if !self.started {
            self.started = true;
            self.run_id = ev.envelope.run_id.clone().unwrap_or_default();
            if self.thread_id.is_empty() {
                self.thread_id = ev
                    .envelope
                    .session_id
                    .clone()
                    .unwrap_or_else(|| self.run_id.clone());
            }
            out.push(AguiEvent::RunStarted {
                thread_id: self.thread_id.clone(),
                run_id: self.run_id.clone(),
                parent_run_id: None,
                input: None,
            });
        }
        let at = ev.envelope.event_id.unwrap_or(0);
        match &ev.event {
            Event::RunStart { .. } | Event::LlmComplete { .. } | Event::UserMessage { .. } => {
                if matches!(ev.event, Event::LlmComplete { .. }) {
                    self.close_part(&mut out);
                }
            }
            Event::MessageChunk { content, .. } => self.piece(&mut out, false, at, content),
            Event::ReasoningChunk { content, .. } => self.piece(&mut out, true, at, content),
            Event::ToolCallChunk {
                call_id: Some(call),
                name,
                arguments_delta,
            } => {
                self.close_part(&mut out);
                self.start_call(&mut out, call, name.as_deref().unwrap_or(""));
                if !arguments_delta.is_empty() {
                    out.push(AguiEvent::ToolCallArgs {
                        tool_call_id: call.clone(),
                        delta: arguments_delta.clone(),
                    });
                }
            }
            Event::ToolCall {
                call_id: Some(call),
                name,
                arguments,
            } => {
                self.close_part(&mut out);
                if !self.calls.iter().any(|(c, _)| c == call) {
                    self.start_call(&mut out, call, name);
                    out.push(AguiEvent::ToolCallArgs {
                        tool_call_id: call.clone(),
                        delta: arguments.as_str().to_string(),
                    });
                }
                self.end_call(&mut out, call);
            }
            Event::ToolApproval {
                call_id: Some(call),
                name,
                ..
            } => {
                self.close_part(&mut out);
                self.end_call(&mut out, call);
                self.approvals.push((call.clone(), name.clone()));
            }
            Event::ToolEnd {
                call_id: Some(call),
                result,
                ..
            } => {
                self.close_part(&mut out);
                self.end_call(&mut out, call);
                self.results.push(call.clone());
                out.push(AguiEvent::ToolCallResult {
                    message_id: format!("result-{call}"),
                    tool_call_id: call.clone(),
                    content: Value::String(result.clone()),
                    role: Some("tool".into()),
                });
            }
            Event::NodeEnter { id } => {
                self.close_part(&mut out);
                let step = step_name(&ev.envelope, id);
                if !self.steps.contains(&step) {
                    self.steps.push(step.clone());
                    out.push(AguiEvent::StepStarted { step_name: step });
                }
            }
            Event::NodeExit { id, .. } => {
                self.close_part(&mut out);
                let step = step_name(&ev.envelope, id);
                if let Some(i) = self.steps.iter().position(|s| *s == step) {
                    self.steps.remove(i);
                    out.push(AguiEvent::StepFinished { step_name: step });
                }
            }
            Event::Values { state } => out.push(AguiEvent::StateSnapshot {
                snapshot: state.to_value(),
            }),
            Event::StateDelta { delta } => out.push(AguiEvent::StateDelta {
                delta: match delta.to_value() {
                    Value::Array(ops) => ops,
                    other => alloc::vec![other],
                },
            }),
            Event::RunEnd { reply, .. } => {
                self.close_all(&mut out);
                out.push(self.finished_with(
                    Outcome::Success {
                        pending_tool_call_ids: None,
                    },
                    Some(Value::String(reply.clone())),
                ));
            }
            Event::Error { message, code, .. } => {
                self.close_all(&mut out);
                if code.as_deref() == Some("cancelled") {
                    out.push(self.finished_with(Outcome::Cancelled, None));
                } else {
                    self.finished = true;
                    out.push(AguiEvent::RunError {
                        message: message.clone(),
                        code: code.clone(),
                    });
                }
            }
            other => {
                if let Event::ApprovalResolved {
                    call_id: Some(call),
                    ..
                } = other
                {
                    self.approvals.retain(|(c, _)| c != call);
                }
                self.close_part(&mut out);
                out.push(AguiEvent::Custom {
                    name: format!("weft:{}", other.kind()),
                    value: Value::Object(other.to_json()),
                });
            }
        }
        out
    }

    /// The AG-UI events of one event of a weft run whose every AG-UI run goes out on one stream
    /// (the WebSocket): as [`Encoder::encode`], but an approval asked ends the AG-UI run at
    /// once with its interrupt — weft asks one approval at a time, so each interrupt names one
    /// call — and the weft run's next event (the answer's effect, the approval's expiry, a
    /// cancel) starts the next AG-UI run with `RUN_STARTED`, as a `POST` with the answer would.
    /// A function of the events alone, so a replay of the log gives the same events.
    pub fn encode_continuing(&mut self, ev: &Sequenced) -> Vec<AguiEvent> {
        if self.interrupted {
            *self = Encoder {
                thread_id: core::mem::take(&mut self.thread_id),
                ..Encoder::default()
            };
        }
        let mut out = self.encode(ev);
        if matches!(
            ev.event,
            Event::ToolApproval {
                call_id: Some(_),
                ..
            }
        ) && !self.finished
        {
            out.extend(self.pause());
            self.interrupted = true;
        }
        out
    }

    /// The events that end this stream's AG-UI run while the weft run waits for the page: an
    /// interrupt per approval asked, else a success whose `pendingToolCallIds` are the calls
    /// the page runs.
    pub fn pause(&mut self) -> Vec<AguiEvent> {
        let mut out = Vec::new();
        if self.finished || !self.started {
            self.finished = true;
            return out;
        }
        self.close_all(&mut out);
        let outcome = if self.approvals.is_empty() {
            let pending: Vec<String> = self
                .calls
                .iter()
                .map(|(c, _)| c.clone())
                .filter(|c| !self.results.contains(c))
                .collect();
            Outcome::Success {
                pending_tool_call_ids: (!pending.is_empty()).then_some(pending),
            }
        } else {
            Outcome::Interrupt {
                interrupts: self
                    .approvals
                    .iter()
                    .map(|(call, name)| Interrupt {
                        id: call.clone(),
                        reason: "tool_call".into(),
                        message: Some(format!("approve the call of {name}?")),
                        tool_call_id: Some(call.clone()),
                        response_schema: Some(json!({
                            "type": "object",
                            "properties": {
                                "approved": {"type": "boolean"},
                                "reason": {"type": "string"}
                            },
                            "required": ["approved"]
                        })),
                        expires_at: None,
                        metadata: None,
                    })
                    .collect(),
            }
        };
        out.push(self.finished_with(outcome, None));
        out
    }

    fn finished_with(&mut self, outcome: Outcome, result: Option<Value>) -> AguiEvent {
        self.finished = true;
        AguiEvent::RunFinished {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
            result,
            outcome: Some(outcome),
            usage: None,
        }
    }

    fn piece(&mut self, out: &mut Vec<AguiEvent>, reasoning: bool, at: u64, delta: &str) {
        if self.part.as_ref().is_some_and(|(r, _)| *r != reasoning) {
            self.close_part(out);
        }
        let id = match &self.part {
            Some((_, id)) => id.clone(),
            None => {
                let id = format!(
                    "{}-{}-{at}",
                    if reasoning { "reasoning" } else { "msg" },
                    self.run_id
                );
                if reasoning {
                    out.push(AguiEvent::ReasoningStart {
                        message_id: id.clone(),
                    });
                    out.push(AguiEvent::ReasoningMessageStart {
                        message_id: id.clone(),
                        role: "reasoning".into(),
                    });
                } else {
                    out.push(AguiEvent::TextMessageStart {
                        message_id: id.clone(),
                        role: Some("assistant".into()),
                        name: None,
                    });
                }
                self.part = Some((reasoning, id.clone()));
                id
            }
        };
        out.push(if reasoning {
            AguiEvent::ReasoningMessageContent {
                message_id: id,
                delta: delta.to_string(),
            }
        } else {
            AguiEvent::TextMessageContent {
                message_id: id,
                delta: delta.to_string(),
            }
        });
    }

    fn close_part(&mut self, out: &mut Vec<AguiEvent>) {
        match self.part.take() {
            Some((true, id)) => {
                out.push(AguiEvent::ReasoningMessageEnd {
                    message_id: id.clone(),
                });
                out.push(AguiEvent::ReasoningEnd { message_id: id });
            }
            Some((false, id)) => out.push(AguiEvent::TextMessageEnd { message_id: id }),
            None => {}
        }
    }

    fn start_call(&mut self, out: &mut Vec<AguiEvent>, call: &str, name: &str) {
        if self.calls.iter().any(|(c, _)| c == call) {
            return;
        }
        self.calls.push((call.to_string(), false));
        out.push(AguiEvent::ToolCallStart {
            tool_call_id: call.to_string(),
            tool_call_name: name.to_string(),
            parent_message_id: None,
        });
    }

    fn end_call(&mut self, out: &mut Vec<AguiEvent>, call: &str) {
        if let Some((_, ended)) = self.calls.iter_mut().find(|(c, _)| c == call) {
            if !*ended {
                *ended = true;
                out.push(AguiEvent::ToolCallEnd {
                    tool_call_id: call.to_string(),
                });
            }
        }
    }

    /// Closes every open part, call and step: a run may not finish with any open.
    fn close_all(&mut self, out: &mut Vec<AguiEvent>) {
        self.close_part(out);
        let open: Vec<String> = self
            .calls
            .iter()
            .filter(|(_, ended)| !ended)
            .map(|(c, _)| c.clone())
            .collect();
        for call in open {
            self.end_call(out, &call);
        }
        while let Some(step) = self.steps.pop() {
            out.push(AguiEvent::StepFinished { step_name: step });
        }
    }
}

/// A node span's step name: its envelope id, unique in the run.
fn step_name(envelope: &Envelope, node: &str) -> String {
    envelope.node_id.clone().unwrap_or_else(|| node.to_string())
}
