//! AG-UI events into canonical ones (the client side).

use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{json, Map, Value};

use super::{text_of, AguiEvent, Outcome};
use crate::event::{Envelope, Event, NodeResult, Sequenced, UnknownEvent};
use crate::json::RawJson;
use crate::Error;

/// Client side: turns AG-UI events into canonical ones (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct Decoder {
    run_id: Option<String>,
    /// Calls seen: id, tool name, arguments so far.
    calls: Vec<(String, String, String)>,
}

impl Decoder {
    pub fn new() -> Self {
        Decoder::default()
    }

    /// What it knows (the AG-UI run id; the calls: id, name, arguments so far), to be kept
    /// with its thread ([`Thread::to_snapshot`](super::Thread::to_snapshot)).
    pub(super) fn parts(&self) -> (Option<&str>, &[(String, String, String)]) {
        (self.run_id.as_deref(), &self.calls)
    }

    pub(super) fn from_parts(run_id: Option<String>, calls: Vec<(String, String, String)>) -> Self {
        Decoder { run_id, calls }
    }

    /// The canonical events one AG-UI event carries, possibly none.
    pub fn decode(&mut self, ev: &AguiEvent) -> Result<Vec<Sequenced>, Error> {
        let mut out = Vec::new();
        let events = match ev {
            AguiEvent::RunStarted { run_id, .. } => {
                self.run_id = Some(run_id.clone());
                alloc::vec![Event::RunStart {
                    run_id: Some(run_id.clone()),
                    message: None,
                    agent: None,
                }]
            }
            AguiEvent::TextMessageContent { message_id, delta } => {
                alloc::vec![Event::MessageChunk {
                    content: delta.clone(),
                    id: message_id.clone(),
                }]
            }
            AguiEvent::TextMessageChunk {
                message_id,
                delta: Some(delta),
                ..
            } => alloc::vec![Event::MessageChunk {
                content: delta.clone(),
                id: message_id.clone().unwrap_or_default(),
            }],
            AguiEvent::ReasoningMessageContent { message_id, delta } => {
                alloc::vec![Event::ReasoningChunk {
                    content: delta.clone(),
                    id: message_id.clone(),
                }]
            }
            AguiEvent::ReasoningMessageChunk {
                message_id,
                delta: Some(delta),
            } => alloc::vec![Event::ReasoningChunk {
                content: delta.clone(),
                id: message_id.clone().unwrap_or_default(),
            }],
            AguiEvent::ToolCallStart {
                tool_call_id,
                tool_call_name,
                ..
            } => {
                self.calls
                    .push((tool_call_id.clone(), tool_call_name.clone(), String::new()));
                alloc::vec![Event::ToolCallChunk {
                    call_id: Some(tool_call_id.clone()),
                    name: Some(tool_call_name.clone()),
                    arguments_delta: String::new(),
                }]
            }
            AguiEvent::ToolCallArgs {
                tool_call_id,
                delta,
            } => {
                if let Some(c) = self.calls.iter_mut().find(|c| c.0 == *tool_call_id) {
                    c.2.push_str(delta);
                }
                alloc::vec![Event::ToolCallChunk {
                    call_id: Some(tool_call_id.clone()),
                    name: None,
                    arguments_delta: delta.clone(),
                }]
            }
            AguiEvent::ToolCallChunk {
                tool_call_id,
                tool_call_name,
                delta,
                ..
            } => {
                if let Some(id) = tool_call_id {
                    match self.calls.iter_mut().find(|c| c.0 == *id) {
                        Some(c) => c.2.push_str(delta.as_deref().unwrap_or("")),
                        None => self.calls.push((
                            id.clone(),
                            tool_call_name.clone().unwrap_or_default(),
                            delta.clone().unwrap_or_default(),
                        )),
                    }
                }
                alloc::vec![Event::ToolCallChunk {
                    call_id: tool_call_id.clone(),
                    name: tool_call_name.clone(),
                    arguments_delta: delta.clone().unwrap_or_default(),
                }]
            }
            AguiEvent::ToolCallEnd { tool_call_id } => {
                let (name, args) = self.call(tool_call_id);
                let arguments = RawJson::parse(&args).unwrap_or_else(|| RawJson::string(&args));
                alloc::vec![Event::ToolCall {
                    call_id: Some(tool_call_id.clone()),
                    name,
                    arguments,
                }]
            }
            AguiEvent::ToolCallResult {
                tool_call_id,
                content,
                ..
            } => {
                let (name, _) = self.call(tool_call_id);
                let result = match content {
                    Value::String(s) => s.clone(),
                    other => text_of(Some(other)),
                };
                alloc::vec![Event::ToolEnd {
                    call_id: Some(tool_call_id.clone()),
                    name,
                    result,
                    is_error: false,
                }]
            }
            AguiEvent::StepStarted { step_name } => alloc::vec![Event::NodeEnter {
                id: step_name.clone(),
            }],
            AguiEvent::StepFinished { step_name } => alloc::vec![Event::NodeExit {
                id: step_name.clone(),
                result: NodeResult::Ok,
            }],
            AguiEvent::StateSnapshot { snapshot } => alloc::vec![Event::Values {
                state: RawJson::from_value(snapshot),
            }],
            AguiEvent::StateDelta { delta } => alloc::vec![Event::StateDelta {
                delta: RawJson::from_value(&Value::Array(delta.clone())),
            }],
            AguiEvent::RunFinished {
                result, outcome, ..
            } => match outcome {
                Some(Outcome::Interrupt { interrupts }) => interrupts
                    .iter()
                    .map(|i| {
                        let call = i.tool_call_id.clone().unwrap_or_else(|| i.id.clone());
                        let (name, args) = self.call(&call);
                        Event::ToolApproval {
                            call_id: Some(call),
                            name,
                            arguments: RawJson::parse(&args).unwrap_or_else(RawJson::empty_object),
                        }
                    })
                    .collect(),
                Some(Outcome::Cancelled) => alloc::vec![Event::Error {
                    message: "cancelled".into(),
                    code: Some("cancelled".into()),
                    id: None,
                    details: None,
                }],
                _ => alloc::vec![Event::RunEnd {
                    reply: match result {
                        Some(Value::String(s)) => s.clone(),
                        _ => String::new(),
                    },
                    usage: None,
                    total_usage: None,
                    iteration_count: None,
                    paused: false,
                    tool_calls: Vec::new(),
                }],
            },
            AguiEvent::RunError { message, code } => alloc::vec![Event::Error {
                message: message.clone(),
                code: code.clone(),
                id: None,
                details: None,
            }],
            AguiEvent::Custom { name, value } => match name.strip_prefix("weft:") {
                Some(_) => {
                    let Value::Object(map) = value else {
                        return Err(Error::field("CUSTOM", "value", "a weft event is an object"));
                    };
                    alloc::vec![Event::from_json(&crate::json::Object::from_serde(map))?]
                }
                None => alloc::vec![Event::Custom {
                    value: RawJson::from_value(&json!({"name": name, "value": value})),
                }],
            },
            // Opening and closing frames carry nothing a canonical event holds.
            AguiEvent::TextMessageStart { .. }
            | AguiEvent::TextMessageEnd { .. }
            | AguiEvent::TextMessageChunk { .. }
            | AguiEvent::ReasoningStart { .. }
            | AguiEvent::ReasoningMessageStart { .. }
            | AguiEvent::ReasoningMessageEnd { .. }
            | AguiEvent::ReasoningMessageChunk { .. }
            | AguiEvent::ReasoningEnd { .. } => Vec::new(),
            other => {
                let mut data = match other.to_value() {
                    Value::Object(m) => m,
                    _ => Map::new(),
                };
                data.remove("type");
                alloc::vec![Event::Unknown(UnknownEvent {
                    kind: other.kind(),
                    data: RawJson::from_value(&Value::Object(data)),
                })]
            }
        };
        for event in events {
            out.push(Sequenced {
                envelope: Envelope {
                    run_id: self.run_id.clone(),
                    ..Envelope::default()
                },
                event,
            });
        }
        Ok(out)
    }

    fn call(&self, id: &str) -> (String, String) {
        self.calls
            .iter()
            .find(|c| c.0 == id)
            .map(|c| (c.1.clone(), c.2.clone()))
            .unwrap_or_default()
    }
}
