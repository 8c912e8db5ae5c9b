//! remote: an agent that runs elsewhere — an AG-UI agent the host drives as a client (README,
//! "Bring your own agent"). The run asks the host to call it ([`Effect::CallRemote`]) and takes
//! its answer as canonical events the host decoded ([`Input::Remote`]); everything else — the
//! run's own `run_start`, the event ids, the log, cancel, the checkpoint, the history — is the
//! same as for weft's own agents, so every dialect sees a remote run as it sees any other.
//!
//! What the remote agent keeps between its runs is its own; this room keeps the session's
//! history (the user's messages and the replies), which the host sends as the thread's
//! `messages`. A remote run is never asked for twice: a restart that cuts it fails it
//! (`stream_cut`), and a new run is the user's choice. One that waits for the page when the
//! server restarts waits again, and goes on once answered, in the thread the host stored.

use serde_json::Value;
use weft_protocol::command::ApprovalDecision;
use weft_protocol::dialect::agui::Answer;
use weft_protocol::json::RawJson;
use weft_protocol::{Event, Review};

use super::acting::{Call, CallState};
use super::agent_state::AgentState;
use super::ending::ErrorCode;
use super::steps::{OwnStep, Steps};
use super::{Effect, EngineError, Phase, Run};
use crate::provider::{ChatMessage, ToolCall};

/// The name a remote run's checkpoint keeps as its agent (the profile's own name is its
/// config's `agent`).
pub const REMOTE: &str = "remote";

/// What a remote run gathers for its next call while the remote agent waits for the page. Not
/// in the checkpoint: a run restored while it waits has gathered nothing yet (the answers come
/// after the restart), and one restored mid-call fails (the call is never made twice).
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Remote {
    /// A call is out: its events are coming.
    calling: bool,
    answers: Vec<Answer>,
    tool_results: Vec<(String, String)>,
}

/// remote's one step: waiting for the remote agent's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RemoteStep {
    Calling,
}

impl OwnStep for RemoteStep {
    const ALL: &'static [Self] = &[RemoteStep::Calling];

    fn as_str(self) -> &'static str {
        "Remote"
    }
}

/// remote's answers to the shared loop.
pub(super) struct RemoteSteps;

impl Steps for RemoteSteps {
    fn begin(&self, run: &mut Run) {
        run.phase = Phase::Own;
        let mut history = run.session.history.clone();
        // Run::new put the user's message last: it goes as the turn's message.
        history.pop();
        run.call_remote(history, Some(run.message.clone()));
    }

    /// A run stored before it began (the host saves it first) restores at the shared loop's
    /// first step: as cut as one restored mid-call.
    fn rethink(&self, run: &mut Run) {
        self.own_resume(run);
    }

    fn own_resume(&self, run: &mut Run) {
        // Waiting for approvals when it stopped: it waits on (the questions are in its log,
        // and the host's expiry alarm outlives a restart; asking again here would refuse them
        // at once when no client is connected yet), and the answers go on in the thread the
        // host stored (it fails the run then if it has none). Anything else was cut.
        let waits = !run.calls.is_empty()
            && run
                .calls
                .iter()
                .all(|c| c.state == CallState::AwaitingApproval);
        if waits {
            return;
        }
        run.fail(
            "the server restarted while the remote agent was answering; the run is not sent \
             again (send the message again for a new run)"
                .into(),
            ErrorCode::Host("stream_cut".into()),
            None,
        );
    }
}

impl Run {
    fn remote_state(&mut self) -> Option<&mut Remote> {
        match &mut self.agent {
            AgentState::Remote(r) => Some(r),
            _ => None,
        }
    }

    fn call_remote(&mut self, history: Vec<ChatMessage>, message: Option<String>) {
        let Some(state) = self.remote_state() else {
            return;
        };
        state.calling = true;
        let answers = std::mem::take(&mut state.answers);
        let tool_results = std::mem::take(&mut state.tool_results);
        self.calls.clear();
        let state = message
            .as_ref()
            .and_then(|_| self.session.remote_state.clone());
        self.effect(Effect::CallRemote {
            history,
            message,
            state,
            answers,
            tool_results,
        });
    }

    /// The remote agent's events, decoded by the host: passed on stamped as the run's own, the
    /// run ended by its `run_end` (the reply kept in the history) or its `error`. An approval
    /// it asks for, and a call of a page's tool, wait for the page once its response ends.
    pub(super) fn remote(&mut self, events: Vec<Event>) -> Result<(), EngineError> {
        if self.phase != Phase::Own {
            return Err(EngineError::Unexpected(
                "a remote agent's events while none is called",
            ));
        }
        for event in events {
            match event {
                // The run's own went out when it started.
                Event::RunStart { .. } => {}
                Event::RunEnd {
                    reply, tool_calls, ..
                } => {
                    if !reply.is_empty() {
                        self.session
                            .history
                            .push(ChatMessage::assistant(reply.clone()));
                    }
                    self.last_content = reply;
                    self.last_tools = tool_calls;
                    self.end_run();
                    return Ok(());
                }
                Event::Error { message, code, .. } => {
                    let code = code.unwrap_or_else(|| "remote".into());
                    self.fail(message, ErrorCode::from(code), None);
                    return Ok(());
                }
                Event::Values { state } => {
                    self.session.remote_state = Some(state.clone());
                    self.emit(Event::Values { state });
                }
                Event::StateDelta { delta } => {
                    let base = self.session.remote_state.clone();
                    match base.unwrap_or_else(RawJson::empty_object).patched(&delta) {
                        Ok(state) => self.session.remote_state = Some(state),
                        Err(e) => {
                            let message = format!("the remote agent's state change: {e}");
                            self.fail(message, ErrorCode::Host("remote_protocol".into()), None);
                            return Ok(());
                        }
                    }
                    self.emit(Event::StateDelta { delta });
                }
                Event::ToolApproval {
                    call_id,
                    name,
                    arguments,
                } => {
                    let id = call_id.clone().unwrap_or_default();
                    self.wait_for(
                        &id,
                        &name,
                        arguments.to_value(),
                        CallState::AwaitingApproval,
                    );
                    self.emit(Event::ToolApproval {
                        call_id,
                        name,
                        arguments,
                    });
                    self.effect(Effect::AwaitApproval { call_id: id });
                }
                Event::ToolCall {
                    call_id,
                    name,
                    arguments,
                } => {
                    if self.tool(&name).is_some_and(|t| t.client) {
                        let id = call_id.clone().unwrap_or_default();
                        self.wait_for(&id, &name, arguments.to_value(), CallState::NeedsApproval);
                    }
                    self.emit(Event::ToolCall {
                        call_id,
                        name,
                        arguments,
                    });
                }
                other => self.emit(other),
            }
        }
        Ok(())
    }

    /// Keeps a call the page answers: an approval (asked at once) or a page tool's call (run
    /// once the response ends; [`CallState::NeedsApproval`] marks it not yet started).
    fn wait_for(&mut self, id: &str, name: &str, arguments: Value, state: CallState) {
        let asked_at_ms = (state == CallState::AwaitingApproval).then_some(self.now_ms);
        self.calls.retain(|c| c.call.id != id);
        self.calls.push(Call {
            call: ToolCall {
                id: id.into(),
                name: name.into(),
                arguments: arguments.to_string(),
                signature: None,
            },
            arguments,
            state,
            lane: None,
            asked_at_ms,
        });
    }

    /// The remote agent's response ended: the page's tools it called start, and once the page
    /// has answered everything the next call goes out.
    pub(super) fn remote_ended(&mut self) -> Result<(), EngineError> {
        if self.phase != Phase::Own {
            return Err(EngineError::Finished);
        }
        if let Some(state) = self.remote_state() {
            state.calling = false;
        }
        let page_calls: Vec<String> = self
            .calls
            .iter()
            .filter(|c| c.state == CallState::NeedsApproval)
            .map(|c| c.call.id.clone())
            .collect();
        for id in page_calls {
            self.start_tool(&id);
        }
        let answered = matches!(&self.agent, AgentState::Remote(r)
            if !r.answers.is_empty() || !r.tool_results.is_empty());
        if self.calls.is_empty() && !answered {
            // Neither an end nor an error, nor anything to wait for: the host's decoder
            // always ends a response with one of them, so this is a stream that said nothing.
            self.fail(
                "the remote agent's response ended without finishing its run".into(),
                ErrorCode::Host("stream_cut".into()),
                None,
            );
            return Ok(());
        }
        if !self.calls.is_empty() {
            // It waits for the page: stored with its questions, so that a restart asks them
            // again (own_resume) and the answers go on in the thread the host stored.
            self.effect(Effect::Checkpoint);
        }
        self.maybe_call_again();
        Ok(())
    }

    /// The user's answer to an approval the remote agent asked for.
    pub(super) fn remote_approval(
        &mut self,
        d: ApprovalDecision,
        refusal: Option<String>,
    ) -> Result<(), EngineError> {
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
        let (call_id, name) = (call.call.id.clone(), call.call.name.clone());
        let approved = match d.review {
            Review::Yes | Review::Always => true,
            Review::NoContinue | Review::NoExit => false,
            // A remote agent has no way to be asked why.
            Review::Explain => {
                return Err(EngineError::Unexpected(
                    "a remote agent cannot explain its calls: answer yes or no",
                ))
            }
        };
        let message = refusal.or_else(|| {
            d.custom_deny_message
                .clone()
                .filter(|m| !m.trim().is_empty())
        });
        self.emit(Event::ApprovalResolved {
            call_id: Some(call_id.clone()),
            name: Some(name),
            review: d.review,
            message: message.clone(),
        });
        self.calls.retain(|c| c.call.id != call_id);
        if let Some(state) = self.remote_state() {
            state.answers.push(Answer {
                call_id,
                approved,
                message,
            });
        }
        self.maybe_call_again();
        Ok(())
    }

    /// A page tool's result, for the remote agent's next call.
    pub(super) fn remote_tool_result(
        &mut self,
        call_id: &str,
        result: String,
        is_error: bool,
    ) -> Result<(), EngineError> {
        if !self
            .calls
            .iter()
            .any(|c| c.call.id == call_id && c.state == CallState::Running)
        {
            return Err(EngineError::NoSuchCall(call_id.into()));
        }
        self.finish_call(call_id, result.clone(), is_error);
        self.calls.retain(|c| c.call.id != call_id);
        if let Some(state) = self.remote_state() {
            state.tool_results.push((call_id.into(), result));
        }
        self.maybe_call_again();
        Ok(())
    }

    /// The next call, once the response is over and the page has answered everything.
    fn maybe_call_again(&mut self) {
        let calling = matches!(&self.agent, AgentState::Remote(r) if r.calling);
        if calling || !self.calls.is_empty() {
            return;
        }
        self.effect(Effect::Checkpoint);
        self.call_remote(Vec::new(), None);
    }
}
