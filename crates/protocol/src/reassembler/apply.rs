//! How each canonical event changes the transcript: messages opened and closed, tool calls
//! followed through approval and execution, runs started and ended.

use alloc::string::String;
use alloc::vec::Vec;

use super::{Message, Reassembler, Run, RunStatus, ToolCall, ToolStatus};
use crate::dialect::fast::{Body, Delta};
use crate::event::{Event, Sequenced, Usage};
use crate::json::RawJson;
use crate::names::{Agent, Review, Role};

impl Reassembler {
    /// Applies a delta read in place, as [`Reassembler::apply`] applies its event.
    pub(super) fn apply_delta(&mut self, delta: Delta<'_>) {
        let mut running = None;
        let run = self.run_or_running(delta.run_id.as_deref(), &mut running);
        match &delta.body {
            Body::Text {
                content, reasoning, ..
            } => self.append_text(run, content, *reasoning),
            Body::Arguments {
                call_id,
                name,
                delta,
            } => self.append_arguments(run, call_id.as_deref(), name.as_deref(), delta),
            Body::Event(_) => self.apply(delta.into_sequenced()),
        }
    }

    pub(super) fn append_text(&mut self, run: Option<&str>, content: &str, reasoning: bool) {
        let i = self.open_message(run);
        let message = &mut self.transcript.messages[i];
        if reasoning {
            message.reasoning.push_str(content);
        } else {
            message.text.push_str(content);
        }
    }

    pub(super) fn append_arguments(
        &mut self,
        run: Option<&str>,
        call_id: Option<&str>,
        name: Option<&str>,
        delta: &str,
    ) {
        let i = self.tool_call(run, call_id, name);
        self.transcript.tool_calls[i].arguments_text.push_str(delta);
    }

    /// Applies one event to the transcript.
    pub(super) fn apply(&mut self, ev: Sequenced) {
        let mut running = None;
        let run_id = self.run_or_running(ev.envelope.run_id.as_deref(), &mut running);
        match &ev.event {
            Event::RunStart { message, agent, .. } => {
                self.ensure_run(run_id, agent.clone());
                if let Some(m) = message {
                    self.user_message(run_id, m);
                }
            }
            Event::UserMessage { content } => {
                self.ensure_run(run_id, None);
                self.user_message(run_id, content);
            }
            Event::MessageChunk { content, .. } => self.append_text(run_id, content, false),
            Event::ReasoningChunk { content, .. } => self.append_text(run_id, content, true),
            Event::ToolCallChunk {
                call_id,
                name,
                arguments_delta,
            } => {
                self.append_arguments(run_id, call_id.as_deref(), name.as_deref(), arguments_delta)
            }
            Event::ToolCall {
                call_id,
                name,
                arguments,
            } => {
                let i = self.tool_call(run_id, call_id.as_deref(), Some(name));
                let call = &mut self.transcript.tool_calls[i];
                call.set_arguments(arguments);
                if call.status == ToolStatus::Streaming {
                    call.status = ToolStatus::Pending;
                }
            }
            Event::ToolApproval {
                call_id,
                name,
                arguments,
            } => {
                self.close_message(run_id);
                let i = self.tool_call(run_id, call_id.as_deref(), Some(name));
                let call = &mut self.transcript.tool_calls[i];
                call.set_arguments(arguments);
                call.status = ToolStatus::AwaitingApproval;
            }
            Event::ApprovalResolved {
                call_id,
                name,
                review,
                message,
            } => {
                let i = self.tool_call(run_id, call_id.as_deref(), name.as_deref());
                let call = &mut self.transcript.tool_calls[i];
                call.review = Some(*review);
                call.review_message.clone_from(message);
                call.status = match review {
                    Review::Yes | Review::Always => ToolStatus::Approved,
                    Review::NoContinue | Review::NoExit => ToolStatus::Denied,
                    Review::Explain => ToolStatus::AwaitingApproval,
                };
            }
            Event::ToolStart { call_id, name } => {
                self.close_message(run_id);
                let i = self.tool_call(run_id, call_id.as_deref(), Some(name));
                let call = &mut self.transcript.tool_calls[i];
                call.finish_arguments();
                call.status = ToolStatus::Running;
            }
            Event::ToolOutput {
                call_id,
                name,
                content,
            } => {
                self.close_message(run_id);
                let i = self.tool_call(run_id, call_id.as_deref(), Some(name));
                self.transcript.tool_calls[i].output.push_str(content);
            }
            Event::ToolEnd {
                call_id,
                name,
                result,
                is_error,
            } => {
                // Tools run after the response that called them is complete.
                self.close_message(run_id);
                let i = self.tool_call(run_id, call_id.as_deref(), Some(name));
                let call = &mut self.transcript.tool_calls[i];
                call.finish_arguments();
                call.result = Some(result.clone());
                call.is_error = *is_error;
                if call.status != ToolStatus::Denied {
                    call.status = if *is_error {
                        ToolStatus::Error
                    } else {
                        ToolStatus::Done
                    };
                }
            }
            Event::LlmComplete {
                content,
                tool_calls,
                ..
            } => {
                let open = self.open_index(run_id);
                let i = match open {
                    Some(i) => Some(i),
                    None if !content.is_empty() || !tool_calls.is_empty() => {
                        Some(self.open_message(run_id))
                    }
                    None => None,
                };
                if let Some(i) = i {
                    let msg = &mut self.transcript.messages[i];
                    // The complete text is authoritative: it heals a chunk lost by a lossy
                    // transport, and is all a dialect without chunks (agentchat) sends.
                    if !content.is_empty() {
                        msg.text.clone_from(content);
                    }
                    let ids = msg.tool_call_ids.clone();
                    for id in ids {
                        // From the end, as `tool_call` looks a call up: the response's own
                        // calls are the latest.
                        if let Some(call) = self
                            .transcript
                            .tool_calls
                            .iter_mut()
                            .rev()
                            .find(|c| c.call_id == id)
                        {
                            call.finish_arguments();
                        }
                    }
                }
                self.close_message(run_id);
            }
            Event::NodeExit { .. } => self.close_message(run_id),
            Event::Values { state } => self.ensure_run(run_id, None).state = Some(state.clone()),
            Event::StateDelta { delta } => {
                let run = self.ensure_run(run_id, None);
                // AG-UI's state starts as an empty object, as `@ag-ui/client`'s does.
                let patched = match &run.state {
                    Some(state) => state.patched(delta),
                    None => RawJson::empty_object().patched(delta),
                };
                match patched {
                    Ok(state) => run.state = Some(state),
                    // Not applied, not passed on: the caller reports it.
                    Err(e) => return self.rejected = Some(e),
                }
            }
            Event::Usage(u) => {
                let run = self.ensure_run(run_id, None);
                run.usage = Some(*u);
                run.call_usage.push(*u);
                run.total_usage.add(u);
            }
            Event::RunEnd {
                reply,
                usage,
                total_usage,
                paused,
                ..
            } => {
                self.close_message(run_id);
                let run = self.ensure_run(run_id, None);
                // A failed run's dialect may still close the turn (agentloop sends
                // `loading_state: false` after its `error`); the failure stands.
                if run.status != RunStatus::Running {
                    return self.emit(ev);
                }
                run.status = RunStatus::Completed;
                run.reply = Some(reply.clone());
                if usage.is_some() {
                    run.usage = *usage;
                }
                if let Some(t) = total_usage {
                    run.total_usage = *t;
                }
                run.paused = *paused;
            }
            // An error with a request `id` and no run answers a request (a bad frame, an
            // unknown tool): it does not end the run that may be streaming meanwhile.
            Event::Error {
                message, code, id, ..
            } if ev.envelope.run_id.is_some() || (id.is_none() && self.is_running(run_id)) => {
                self.close_message(run_id);
                let run = self.ensure_run(run_id, None);
                run.status = if code.as_deref() == Some("cancelled") {
                    RunStatus::Cancelled
                } else {
                    RunStatus::Failed
                };
                run.error = Some(message.clone());
            }
            _ => {}
        }
        self.emit(ev);
    }

    /// The run a frame belongs to: its own run id, or for a frame without one (an original
    /// server's, which streams one run at a time) the run still running, kept in `running`;
    /// `None` when no run is running (a new anonymous run then starts).
    pub(super) fn run_or_running<'a>(
        &self,
        run_id: Option<&'a str>,
        running: &'a mut Option<String>,
    ) -> Option<&'a str> {
        if run_id.is_some() {
            return run_id;
        }
        *running = match self.transcript.runs.last() {
            Some(r) if r.status == RunStatus::Running => r.run_id.clone(),
            _ => None,
        };
        running.as_deref()
    }

    pub(super) fn is_running(&self, run_id: Option<&str>) -> bool {
        self.transcript
            .runs
            .iter()
            .rev()
            .any(|r| r.run_id.as_deref() == run_id && r.status == RunStatus::Running)
    }

    pub(super) fn ensure_run(&mut self, run_id: Option<&str>, agent: Option<Agent>) -> &mut Run {
        let pos = self.transcript.runs.iter().rposition(|r| {
            r.run_id.as_deref() == run_id && (run_id.is_some() || r.status == RunStatus::Running)
        });
        let i = match pos {
            Some(i) => i,
            None => {
                self.transcript.runs.push(Run {
                    run_id: run_id.map(String::from),
                    agent: None,
                    status: RunStatus::Running,
                    reply: None,
                    usage: None,
                    call_usage: Vec::new(),
                    total_usage: Usage::default(),
                    error: None,
                    paused: false,
                    // The thread's state carries from one run to the next.
                    state: self.transcript.runs.last().and_then(|r| r.state.clone()),
                });
                self.transcript.runs.len() - 1
            }
        };
        let run = &mut self.transcript.runs[i];
        if agent.is_some() {
            run.agent = agent;
        }
        run
    }

    pub(super) fn user_message(&mut self, run_id: Option<&str>, text: &str) {
        // A dialect may send the user message both with the run start and on its own.
        let seen = self
            .transcript
            .messages
            .iter()
            .rev()
            .take_while(|m| m.run_id.as_deref() == run_id)
            .any(|m| m.role == Role::User && m.text == text);
        if run_id.is_some() && seen {
            return;
        }
        self.close_message(run_id);
        self.transcript.messages.push(Message {
            role: Role::User,
            text: text.into(),
            reasoning: String::new(),
            run_id: run_id.map(String::from),
            tool_call_ids: Vec::new(),
            complete: true,
        });
    }

    /// The index of the run's open assistant message, if one is open.
    pub(super) fn open_index(&self, run_id: Option<&str>) -> Option<usize> {
        self.open
            .iter()
            .find(|(r, _)| r.as_deref() == run_id)
            .map(|&(_, i)| i)
    }

    pub(super) fn open_message(&mut self, run_id: Option<&str>) -> usize {
        if let Some(i) = self.open_index(run_id) {
            return i;
        }
        self.ensure_run(run_id, None);
        self.transcript.messages.push(Message {
            role: Role::Assistant,
            text: String::new(),
            reasoning: String::new(),
            run_id: run_id.map(String::from),
            tool_call_ids: Vec::new(),
            complete: false,
        });
        let i = self.transcript.messages.len() - 1;
        self.open.push((run_id.map(String::from), i));
        i
    }

    pub(super) fn close_message(&mut self, run_id: Option<&str>) {
        if let Some(at) = self.open.iter().position(|(r, _)| r.as_deref() == run_id) {
            let (_, i) = self.open.swap_remove(at);
            self.transcript.messages[i].complete = true;
        }
    }

    /// Finds the call an event is about, or starts it. Without a call id, the latest call of
    /// that name in the run that has not finished is meant.
    pub(super) fn tool_call(
        &mut self,
        run_id: Option<&str>,
        call_id: Option<&str>,
        name: Option<&str>,
    ) -> usize {
        let calls = &self.transcript.tool_calls;
        // A run's calls start at its first; a frame without a run (an original server's) may
        // name any call.
        let from = match run_id {
            Some(run) => self.first_call.get(run).copied().unwrap_or(calls.len()),
            None => 0,
        };
        let found = match call_id {
            Some(id) => calls[from..].iter().rposition(|c| {
                c.call_id == id && (run_id.is_none() || c.run_id.as_deref() == run_id)
            }),
            None => calls[from..].iter().rposition(|c| {
                c.run_id.as_deref() == run_id
                    && name.is_none_or(|n| c.name == n)
                    && !matches!(c.status, ToolStatus::Done | ToolStatus::Error)
            }),
        }
        .map(|i| i + from);
        if let Some(i) = found {
            if let (Some(n), true) = (name, self.transcript.tool_calls[i].name.is_empty()) {
                self.transcript.tool_calls[i].name = n.into();
            }
            return i;
        }
        let call_id = match call_id {
            Some(id) => String::from(id),
            None => crate::text::concat(&[
                "call-",
                &crate::text::uint(self.transcript.tool_calls.len() as u64),
            ]),
        };
        let m = self.open_message(run_id);
        self.transcript.messages[m]
            .tool_call_ids
            .push(call_id.clone());
        if let Some(run) = run_id {
            if !self.first_call.contains_key(run) {
                self.first_call
                    .insert(String::from(run), self.transcript.tool_calls.len());
            }
        }
        self.transcript.tool_calls.push(ToolCall {
            call_id,
            name: name.unwrap_or_default().into(),
            arguments_text: String::new(),
            arguments: None,
            status: ToolStatus::Streaming,
            review: None,
            review_message: None,
            output: String::new(),
            result: None,
            is_error: false,
            run_id: run_id.map(String::from),
        });
        self.transcript.tool_calls.len() - 1
    }
}
