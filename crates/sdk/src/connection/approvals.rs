//! Approvals and client tools: the app's answers (kept until the server acknowledges them),
//! the `client_tools` declaration, and which calls of the app's tools are due to run here.

use weft_protocol::command::{ApprovalDecision, ClientTools, ToolResult};
use weft_protocol::event::{Sequenced, ToolSpec};
use weft_protocol::json::RawJson;
use weft_protocol::reassembler::ToolStatus;
use weft_protocol::text;
use weft_protocol::{Command, Event, Review};

use super::{Connection, Output, Phase, Tag};
use crate::error::{Error, ErrorCode};
use crate::types::ApprovalAnswer;

impl Connection {
    /// The app's decision on an approval request, sent in the dialect's own message.
    pub fn answer(
        &mut self,
        call_id: Option<String>,
        answer: ApprovalAnswer,
        now: f64,
    ) -> Result<(), Error> {
        self.usable("onApproval")?;
        let review = Review::parse(&answer.review).ok_or_else(|| {
            Error::argument(text::concat(&[
                "onApproval: the callback answered review ",
                &crate::marshal::quoted(&answer.review),
                "; use \"yes\", \"no-continue\", \"no-exit\", \"always\" or \"explain\"",
            ]))
        })?;
        if self.http.is_some() {
            self.http_answer(call_id, review.approves(), answer.message);
            return Ok(());
        }
        let (custom_deny_message, explanation) = if review.approves() || review == Review::Explain {
            (None, answer.message)
        } else {
            (answer.message, None)
        };
        let peer = self.peer();
        let cmd = Command::ApprovalResponse(ApprovalDecision {
            // An original's document has no call id in its answer (agentloop approves its
            // one pending request); the id the client gave the request is its own.
            call_id: call_id.clone().filter(|_| peer.acknowledges_answers()),
            review,
            custom_deny_message: custom_deny_message.clone(),
            explanation,
        });
        if let Some(c) = &call_id {
            if !self.asking.remove(c) {
                // Settled meanwhile without this client (the request was withdrawn): the
                // server would refuse the answer as stale.
                return Ok(());
            }
        }
        if !peer.serves(&cmd) {
            return Err(Error::new(
                ErrorCode::Unsupported,
                peer.why_not("onApproval"),
            ));
        }
        let frame_id = self.new_id("approval");
        let frame = self.encode(&cmd, &frame_id, "onApproval")?;
        match call_id {
            Some(call_id) if peer.acknowledges_answers() => {
                self.unacked_approvals.insert(call_id, frame.clone());
                self.send_unacked(frame);
            }
            // An original agentloop server approves its oldest pending call: nothing to
            // acknowledge it by, so it waits in the outbox like any request; and the decision
            // goes on the call here, as weft's `approval_resolved` would put it.
            call_id => {
                self.send(frame, Tag::None, now);
                self.resolved_here(call_id, review, custom_deny_message);
            }
        }
        Ok(())
    }

    /// Records the app's decision on its call, for a server that does not say it was taken.
    fn resolved_here(&mut self, call_id: Option<String>, review: Review, message: Option<String>) {
        // The latest call of that id: a provider may number calls per response, so an id
        // comes back in later runs.
        let calls = &self.reassembler.transcript().tool_calls;
        let Some(call) = call_id.and_then(|c| calls.iter().rev().find(|t| t.call_id == c)) else {
            return;
        };
        let event = Event::ApprovalResolved {
            call_id: Some(call.call_id.clone()),
            name: Some(call.name.clone()),
            review,
            message,
        };
        let envelope = weft_protocol::Envelope {
            run_id: call.run_id.clone(),
            ..weft_protocol::Envelope::default()
        };
        self.reassembler.push_event(Sequenced { envelope, event });
        while let Some(ev) = self.reassembler.poll() {
            self.route(ev);
        }
    }

    /// The outcome of a client tool the app ran.
    pub fn tool_result(
        &mut self,
        call_id: String,
        result: String,
        is_error: bool,
    ) -> Result<(), Error> {
        self.usable("registerTool")?;
        if self.http.is_some() {
            self.http_tool_result(call_id, result, is_error);
            return Ok(());
        }
        let cmd = Command::ToolResult(ToolResult {
            call_id: call_id.clone(),
            result,
            is_error,
        });
        let peer = self.peer();
        if !peer.serves(&cmd) {
            return Err(Error::new(
                ErrorCode::Unsupported,
                peer.why_not("registerTool()"),
            ));
        }
        let frame = self.encode(&cmd, &call_id, "registerTool")?;
        self.unacked_results.insert(call_id, frame.clone());
        self.send_unacked(frame);
        Ok(())
    }

    /// The tools the app runs itself changed: declare the new list on the open socket (and on
    /// every socket after it).
    pub fn set_tools(&mut self, tools: Vec<ToolSpec>) {
        self.tools = tools;
        if self.server.is_some() {
            self.tools_unserved();
        }
        self.redeclare();
    }

    /// Whether the app answers approvals. A socket of a dialect whose every socket is asked
    /// (loom, agentloop) has nothing to say; the others must opt in with
    /// `client_tools {approvals: true}` to be asked at all
    /// ([`weft_protocol::Dialect::asks_approval`]).
    pub fn set_approver(&mut self, on: bool) {
        let approvals = on && !self.dialect().asks_approval();
        if approvals != self.approvals {
            self.approvals = approvals;
            self.redeclare();
        }
    }

    fn redeclare(&mut self) {
        // Over HTTP every input declares the tools.
        if self.phase == Phase::Open
            && self.http.is_none()
            && self.peer().takes_client_tools()
            && (self.declared || !self.tools.is_empty() || self.approvals)
        {
            self.declare_tools();
        }
    }

    pub(super) fn declare_tools(&mut self) {
        let cmd = Command::ClientTools(ClientTools {
            tools: self.tools.clone(),
            approvals: self.approvals,
        });
        if let Ok(frame) = self.dialect().encode_request(&cmd, "client_tools") {
            self.declared = true;
            self.out.push_back(Output::Send(frame));
        }
    }

    /// Calls of tools the app registered that are now due to run here, each once. A call is
    /// due when the server has started it, which every dialect shows one way or another:
    /// - its `tool_start` (loom carries it);
    /// - an approving `approval_resolved` for it (the server starts it right after);
    /// - the end of the LLM response that made it (`usage` or `llm_complete`), when it needs no
    ///   approval: the app declared the tool read-only, or a user answered `always` for it;
    /// - a `tool_call` outside the run's numbered stream, sent to this socket alone.
    ///
    /// The server takes a `tool_result` only for a call it has started, so none of these is
    /// early; and a refused call never becomes due.
    pub(super) fn client_tool_calls(&mut self, ev: &Sequenced) -> Vec<Output> {
        // Over HTTP a call is due when its AG-UI run has finished (`http.rs`).
        if self.tools.is_empty() || !self.peer().takes_client_tools() || self.http.is_some() {
            return Vec::new();
        }
        let transcript = self.reassembler.transcript();
        let mut due: Vec<String> = Vec::new();
        match &ev.event {
            Event::ToolStart {
                call_id: Some(c), ..
            } => due.push(c.clone()),
            Event::ApprovalResolved {
                call_id: Some(c),
                name,
                review,
                ..
            } if review.approves() => {
                if *review == Review::Always {
                    let name = name
                        .clone()
                        .or_else(|| transcript.tool_call(c).map(|t| t.name.clone()));
                    self.always.extend(name);
                }
                due.push(c.clone());
            }
            // The step that starts the response's calls ([`weft_protocol::Dialect::ends_response`]).
            event if ev.envelope.run_id.is_some() && self.dialect().ends_response(event) => {
                due.extend(
                    transcript
                        .tool_calls
                        .iter()
                        .filter(|t| t.run_id == ev.envelope.run_id)
                        .filter(|t| t.status == ToolStatus::Pending)
                        .filter(|t| {
                            self.always.contains(&t.name)
                                || self.tools.iter().any(|s| s.name == t.name && s.read_only)
                        })
                        .map(|t| t.call_id.clone()),
                );
            }
            Event::ToolCall {
                call_id: Some(c), ..
            } if ev.envelope.event_id.is_none() && self.weft_server => due.push(c.clone()),
            _ => {}
        }
        let mut out = Vec::new();
        for call_id in due {
            let Some(call) = transcript.tool_call(&call_id) else {
                continue;
            };
            if !self.tools.iter().any(|t| t.name == call.name) {
                continue;
            }
            if !self.dispatched.insert(call_id.clone()) {
                continue;
            }
            out.push(Output::ClientTool {
                call_id,
                name: call.name.clone(),
                arguments: call.arguments.clone().unwrap_or_else(RawJson::empty_object),
            });
        }
        out
    }
}
