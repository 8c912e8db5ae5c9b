//! How a run ends — with its reply (`end_run`) or an `error` (`fail`) — and how a run restored
//! from a checkpoint goes on ([`Run::resume`]).

use serde_json::Value;
use weft_protocol::event::NodeResult;
use weft_protocol::json::RawJson;
use weft_protocol::Event;

use super::acting::CallState;
use super::ending::{Cut, ErrorCode};
use super::responses::Response;
use super::{context, Effect, LlmCall, Phase, Run};
use crate::provider::{ChatMessage, ToolResult};

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
        if let (Some(live), Some(lanes)) = (self.outbox.live(), self.lanes()) {
            if let Some(LlmCall { lane: Some(id), .. }) = self.llm.iter().find(|c| c.id == live) {
                let id = id.clone();
                self.outbox.ctx = Some(live);
                lanes.cut(self, &id, Cut::Interrupted);
                self.outbox.ctx = None;
            }
        }
        let inflight = std::mem::take(&mut self.llm);
        self.outbox.cut(&inflight, &self.llm);
        match self.phase.clone() {
            Phase::Thinking => self.steps().rethink(self),
            Phase::Own => self.steps().own_resume(self),
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
            Phase::Done => self.effect(Effect::Finished),
        }
    }

    /// react's and dup's answer to a `think` response cut by a restart: closed, then asked
    /// for again (without a second compaction).
    pub(super) fn rethink(&mut self) {
        let node = self.think_node();
        self.interrupted(node);
        self.compacted_this_step = true;
        self.think();
    }

    /// Closes the run's own response cut by a restart, and its node span.
    pub(super) fn interrupted(&mut self, node: &str) {
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
        if let (Some(live), Some(lanes)) = (self.outbox.live(), self.lanes()) {
            if let Some(LlmCall { lane: Some(id), .. }) = inflight.iter().find(|c| c.id == live) {
                let saved = self.outbox.ctx.replace(live);
                lanes.cut(self, &id.clone(), finish);
                self.outbox.ctx = saved;
            }
        }
        self.outbox.cut(&inflight, &self.llm);
    }

    pub(super) fn fail(&mut self, message: String, code: ErrorCode, details: Option<Value>) {
        let finish = code.cut();
        let main_call = self.llm.iter().find(|c| c.lane.is_none()).map(|c| c.id);
        let response = std::mem::take(&mut self.response);
        // Whether the run's own lane streams a response its clients see (a summary is not
        // shown).
        let streaming =
            !matches!(self.phase, Phase::Compacting { .. }) && self.stream_of(&None).is_some();
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
