//! dup ("deeply understanding problems"): `understand` → `plan` → `act` → `observe` → `plan` …
//!
//! `understand` asks the model, without tools, for a structured understanding of the request
//! (core goal, key constraints, relevant context) and keeps it in the history as an assistant
//! message, so every later step — and later runs of the session — see it. `plan` is react's
//! `think` under an instruction to plan the next step towards that goal and carry it out with
//! the tools; `act` runs them on the shared tool and approval path; `observe` takes their
//! results into the history and reports the context. `observe` makes no model call of its own:
//! the next `plan` is where the model weighs the results against the goal (its instruction says
//! so), which keeps dup at one model call more than react rather than twice as many. A plan
//! that calls no tools is the answer.
//!
//! Events: `understand` and every `plan` stream `message_chunk`s and end with `usage`,
//! `llm_complete` and `context_info` like any response of the run's own conversation; `act`
//! carries the tool events; `observe` carries a `context_info` of the history with the results.

use weft_protocol::event::NodeResult;
use weft_protocol::Event;

use super::responses::Stream;
use super::steps::Steps;
use super::{prompts, EngineError, Phase, Run};
use crate::provider::{ChatMessage, ChatRequest, ToolResult};

/// What only a dup run keeps.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Dup {
    /// The understanding is in the history: a compaction's restart of the step plans.
    pub(super) understood: bool,
}

/// dup's one step of its own, by the name a checkpoint gives it.
pub(super) const STEP: &str = "Understanding";

/// dup's answers to the shared loop.
pub(super) struct DupSteps;

impl Steps for DupSteps {
    fn begin(&self, run: &mut Run) {
        if run.agent.understood() {
            run.think();
        } else {
            run.understand();
        }
    }

    fn think_node(&self) -> &'static str {
        "plan"
    }

    fn think_request(&self, run: &Run) -> ChatRequest {
        run.dup_plan_request()
    }

    fn acted(&self, run: &mut Run, results: Vec<ToolResult>) {
        run.observe(results);
    }

    fn own_stream(&self, _run: &Run) -> Option<Stream> {
        Some(Stream {
            node: "understand".into(),
            visible: true,
            tools: false,
        })
    }

    fn own_end(&self, run: &mut Run) -> Result<(), EngineError> {
        run.understood_it();
        Ok(())
    }

    fn own_resume(&self, run: &mut Run) {
        run.interrupted("understand");
        run.understand();
    }
}

impl Run {
    /// `understand`: one model call without tools.
    fn understand(&mut self) {
        self.phase = Phase::Own;
        self.emit(Event::NodeEnter {
            id: "understand".into(),
        });
        self.ask(prompts::DUP_UNDERSTAND);
    }

    /// The understanding is in: keep it (unless the model said nothing), then plan.
    fn understood_it(&mut self) {
        let record = !self.response.text.trim().is_empty();
        self.complete_response(record, true);
        if let Some(dup) = self.agent.dup_mut() {
            dup.understood = true;
        }
        self.emit(Event::NodeExit {
            id: "understand".into(),
            result: NodeResult::Ok,
        });
        self.think();
    }

    /// The `plan` request: the history under the plan instruction, every tool offered.
    fn dup_plan_request(&self) -> ChatRequest {
        let mut messages = self.session.history.clone();
        if matches!(
            messages.last(),
            Some(ChatMessage::Assistant { tool_calls, .. }) if tool_calls.is_empty()
        ) {
            messages.push(ChatMessage::user(format!(
                "{}{}",
                prompts::DUP_CUE,
                self.message
            )));
        }
        ChatRequest {
            model: self.config.model.clone(),
            system: Some(self.system_with(prompts::DUP_PLAN)),
            messages,
            tools: self.tool_defs(),
            max_tokens: self.config.max_tokens,
            temperature: None,
        }
    }

    /// `act` is over: `observe` takes the results in, then the next `plan` (or the end).
    fn observe(&mut self, results: Vec<ToolResult>) {
        self.emit(Event::NodeExit {
            id: "act".into(),
            result: NodeResult::Ok,
        });
        self.emit(Event::NodeEnter {
            id: "observe".into(),
        });
        self.session
            .history
            .extend(results.into_iter().map(ChatMessage::Tool));
        let info = self.context_info();
        self.emit(info);
        self.emit(Event::NodeExit {
            id: "observe".into(),
            result: NodeResult::Ok,
        });
        if self.exit || self.paused || self.iteration >= self.config.max_iterations {
            self.end_run();
        } else {
            self.think();
        }
    }
}
