//! How a run ends — with its reply (`end_run`) or an `error` (`fail`) — and how a run restored
//! from a checkpoint goes on ([`Run::resume`]).

use serde_json::Value;
use weft_protocol::event::NodeResult;
use weft_protocol::json::RawJson;
use weft_protocol::{Agent, Event, FinishReason};

use super::acting::CallState;
use super::responses::Response;
use super::{context, Effect, LlmCall, Phase, Run};
use crate::provider::{ChatMessage, ToolResult};

/// The code of the `error` a run fails with. The host's own codes come in as text
/// ([`Input::HostFailed`](super::Input::HostFailed)) and keep their spelling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ErrorCode {
    /// The client cancelled the run.
    Cancelled,
    /// The model call of the run's own conversation failed.
    Provider,
    /// got: the model gave no valid plan twice.
    InvalidPlan,
    /// got: every sub-task that gives the answer failed.
    GraphFailed,
    /// A code of the host's (`storage`, …).
    Host(String),
}

impl ErrorCode {
    pub(super) fn as_str(&self) -> &str {
        match self {
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::Provider => "provider",
            ErrorCode::InvalidPlan => "invalid_plan",
            ErrorCode::GraphFailed => "graph_failed",
            ErrorCode::Host(code) => code,
        }
    }

    /// How the responses a failure cuts short end: a cancel is no error of the model's.
    fn cut(&self) -> Cut {
        match self {
            ErrorCode::Cancelled => Cut::Cancelled,
            _ => Cut::Error,
        }
    }
}

impl From<String> for ErrorCode {
    fn from(code: String) -> Self {
        match code.as_str() {
            "cancelled" => ErrorCode::Cancelled,
            "provider" => ErrorCode::Provider,
            "invalid_plan" => ErrorCode::InvalidPlan,
            "graph_failed" => ErrorCode::GraphFailed,
            _ => ErrorCode::Host(code),
        }
    }
}

/// Why a model response ends before its stream did: the `finish_reason` of its `llm_complete`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cut {
    /// The run ended (cancelled, `no-exit`, a pause): the text said so far stands.
    Cancelled,
    /// The run failed.
    Error,
    /// A restart: what went out after the checkpoint is unknown.
    Interrupted,
}

impl Cut {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Cut::Cancelled => "cancelled",
            Cut::Error => "error",
            Cut::Interrupted => "interrupted",
        }
    }

    pub(super) fn finish_reason(self) -> FinishReason {
        FinishReason::from(self.as_str())
    }
}

impl Run {
    /// Continues a restored run. `last_event_id` is the last event of this run the host logged
    /// (events streamed after the checkpoint keep their ids). Re-issues the effects the run was
    /// waiting on, with new call ids; a model response cut by the restart is closed as
    /// `interrupted` and asked for again.
    pub fn resume(&mut self, last_event_id: u64) {
        let seq = &mut self.outbox.seq;
        seq.last_event_id = seq.last_event_id.max(last_event_id);
        // The sub-task response that was streaming out when the run last checkpointed (it does
        // so whenever one starts to) is closed right after what its clients saw: `llm_complete
        // interrupted` and its span's `node_exit`. The other cut responses had sent nothing;
        // what they had held goes with them.
        if let Some(live) = self.outbox.live() {
            if let Some(LlmCall { lane: Some(id), .. }) = self.llm.iter().find(|c| c.id == live) {
                let id = id.clone();
                self.outbox.ctx = Some(live);
                self.close_node_response(&id, Cut::Interrupted);
                self.outbox.ctx = None;
            }
        }
        let inflight = std::mem::take(&mut self.llm);
        self.outbox.cut(&inflight, &self.llm);
        match self.phase.clone() {
            Phase::Thinking if self.kind() == Agent::Tot => {
                self.interrupted("act");
                self.tot_redo_act();
            }
            Phase::Thinking => {
                let node = self.think_node();
                self.interrupted(node);
                self.compacted_this_step = true;
                self.think();
            }
            Phase::Understanding => {
                self.interrupted("understand");
                self.understand();
            }
            Phase::Expanding => {
                self.interrupted("think_expand");
                self.expand();
            }
            Phase::Evaluating => {
                self.interrupted("think_evaluate");
                self.evaluate();
            }
            Phase::Planning => {
                self.interrupted("plan_graph");
                self.plan_graph();
            }
            Phase::Explaining { call_id } => {
                self.response = Response::default();
                self.phase = Phase::Acting;
                self.ask_approval(&call_id);
            }
            Phase::Compacting { cut, .. } => {
                self.response = Response::default();
                let req = context::summary_request(&self.config.model, &self.session.history, cut);
                self.call_llm(None, req);
            }
            Phase::Acting => self.reissue_tools(&None),
            Phase::Executing => self.got_resume(),
            Phase::Done => self.effect(Effect::Finished),
        }
    }

    /// Closes the run's own response cut by a restart, and its node span.
    fn interrupted(&mut self, node: &str) {
        let partial = std::mem::take(&mut self.response.text);
        self.emit(Event::LlmComplete {
            content: partial,
            tool_calls: Vec::new(),
            finish_reason: Cut::Interrupted.finish_reason(),
        });
        self.response = Response::default();
        self.emit(Event::NodeExit {
            id: node.into(),
            result: NodeResult::Err("interrupted by a restart".into()),
        });
    }

    pub(super) fn end_run(&mut self) {
        // A run that ends while sub-tasks still stream (no-exit, pause): what they said so far
        // is closed, what they were holding goes out first.
        if !self.llm.is_empty() || self.outbox.holds_any() {
            self.close_streams(Cut::Cancelled);
        }
        self.phase = Phase::Done;
        if let Some(thread) = self.thread_id.clone() {
            // specs/README (loom): when a thread_id is given a checkpoint closes the run.
            let timestamp =
                crate::tools::format_time_offset(self.now_ms, "UTC").unwrap_or_default();
            let step = i64::from(self.iteration);
            self.emit(Event::Checkpoint {
                checkpoint_id: format!("{}-{step}", self.outbox.seq.run_id),
                timestamp,
                step,
                state: self.state_snapshot().into(),
                thread_id: Some(thread),
                checkpoint_ns: None,
            });
        }
        self.emit(Event::RunEnd {
            reply: self.last_content.clone(),
            usage: self.last_usage,
            total_usage: Some(self.total),
            iteration_count: Some(self.session.iterations),
            paused: self.paused,
            tool_calls: self.last_tools.clone(),
        });
        self.effect(Effect::Checkpoint);
        self.effect(Effect::Finished);
    }

    /// Ends every model call in flight: the sub-task response streaming out gets its
    /// `llm_complete` with what it said; what the others said was never sent and is dropped;
    /// every other held event goes out.
    pub(super) fn close_streams(&mut self, finish: Cut) {
        let inflight = std::mem::take(&mut self.llm);
        if let Some(live) = self.outbox.live() {
            if let Some(LlmCall { lane: Some(id), .. }) = inflight.iter().find(|c| c.id == live) {
                let saved = self.outbox.ctx.replace(live);
                self.close_node_response(&id.clone(), finish);
                self.outbox.ctx = saved;
            }
        }
        self.outbox.cut(&inflight, &self.llm);
    }

    pub(super) fn fail(&mut self, message: String, code: ErrorCode, details: Option<Value>) {
        let finish = code.cut();
        let main_call = self.llm.iter().find(|c| c.lane.is_none()).map(|c| c.id);
        let response = std::mem::take(&mut self.response);
        let streaming = matches!(
            self.phase,
            Phase::Thinking
                | Phase::Explaining { .. }
                | Phase::Understanding
                | Phase::Expanding
                | Phase::Evaluating
                | Phase::Planning
        );
        if streaming && response.streamed_anything() {
            let saved = self.outbox.ctx;
            self.outbox.ctx = main_call.or(saved);
            self.emit(Event::LlmComplete {
                content: response.text.clone(),
                tool_calls: Vec::new(),
                finish_reason: finish.finish_reason(),
            });
            self.outbox.ctx = saved;
            if self.phase == Phase::Thinking && !response.text.is_empty() {
                self.session
                    .history
                    .push(ChatMessage::assistant(response.text));
            }
        }
        self.close_streams(finish);
        // Every call the model made needs an answer in the history, or providers refuse it.
        // (A sub-task's calls live in its own conversation, which ends with the run.)
        for c in std::mem::take(&mut self.calls) {
            if c.lane.is_some() {
                continue;
            }
            let (content, is_error) = match c.state {
                CallState::Done { result, is_error } => (result, is_error),
                _ => (format!("not run: {message}"), true),
            };
            self.session.history.push(ChatMessage::Tool(ToolResult {
                call_id: c.call.id,
                name: c.call.name,
                content,
                is_error,
            }));
        }
        self.phase = Phase::Done;
        self.emit(Event::Error {
            message,
            code: Some(code.as_str().into()),
            id: None,
            details: details.map(RawJson::from),
        });
        self.effect(Effect::Checkpoint);
        self.effect(Effect::Finished);
    }
}
