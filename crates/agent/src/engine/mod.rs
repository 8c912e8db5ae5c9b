//! A run as a resumable state machine (the `react` agent).
//!
//! The host drives a [`Run`]: it feeds [`Input`]s (LLM deltas, tool results, approval decisions,
//! cancel) and takes [`Output`]s from [`Run::poll`] — canonical events to log and send, and
//! [`Effect`]s to carry out (call the LLM, run a tool, wait for an approval, persist a
//! checkpoint). Nothing here waits, sleeps or does I/O, so a run waiting for an approval is just
//! a JSON checkpoint, and a run restored from one continues where it stopped
//! ([`Run::resume`]).
//!
//! The react loop: `think` (stream the model) → `act` (run the tools it called; those that
//! change anything wait for approval) → `think` … until a reply without tool calls, the
//! iteration cap, a `pause_after` tool, or `no-exit`. Events follow specs/loom-stream-protocol.md
//! and specs/README.md: `run_start` first; each node span `node_enter` … `node_exit`; every LLM
//! response ends with `usage`, `llm_complete` and `context_info`; `run_end` (or `error`) last.

pub mod context;

use std::collections::{BTreeSet, VecDeque};
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use weft_protocol::command::ApprovalDecision;
use weft_protocol::event::NodeResult;
use weft_protocol::{Agent, Event, FinishReason, Review, Sequenced, Sequencer, Usage};

use crate::provider::{
    ChatMessage, ChatRequest, Delta, ProviderError, ToolCall, ToolDef, ToolResult,
};

/// How a run behaves. Serialized into every checkpoint, so a restored run keeps its settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Model name passed to the provider (empty: the provider config's model).
    pub model: String,
    /// The system prompt.
    pub system_prompt: String,
    /// LLM round trips allowed per run before it ends with what it has (default 10).
    pub max_iterations: u32,
    /// The model's context window, in tokens.
    pub context_window: u64,
    /// Compact the history before a model call once the estimate passes this fraction of the
    /// window (default 0.8).
    pub compact_at: f64,
    /// Cap on generated tokens per call.
    pub max_tokens: Option<u32>,
    /// Tools after which the run pauses (cueso `pause_after`).
    pub pause_after: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            model: String::new(),
            system_prompt: "You are a helpful assistant. Use the tools when they help; \
                            keep answers short."
                .into(),
            max_iterations: 10,
            context_window: 128_000,
            compact_at: 0.8,
            max_tokens: None,
            pause_after: Vec::new(),
        }
    }
}

/// A tool the run may call, and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// What the model sees.
    pub def: ToolDef,
    /// Whether a call waits for the user's approval.
    pub needs_approval: bool,
    /// Whether a client socket runs it (the host forwards the call) rather than the host.
    pub client: bool,
}

/// What survives a run: the session's history, its remembered approvals and its LLM round trips.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// The conversation, oldest first (a summary first, after a compaction).
    pub history: Vec<ChatMessage>,
    /// Tools approved with `always`: never asked again in this session.
    pub always_allowed: BTreeSet<String>,
    /// LLM round trips over the session's life (cueso `iteration_count`).
    pub iterations: u64,
}

/// Something for the run to take in.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A decoded piece of the LLM's streamed response.
    Llm(Delta),
    /// The LLM response body ended normally.
    LlmEnd,
    /// The LLM call failed (HTTP error, cut stream, malformed stream).
    LlmFailed(ProviderError),
    /// A tool finished.
    ToolResult {
        /// The call.
        call_id: String,
        /// Its result text.
        result: String,
        /// Whether it failed.
        is_error: bool,
    },
    /// The user answered an approval request.
    Approval(ApprovalDecision),
    /// Stop the run.
    Cancel,
}

/// Work for the host.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Send this request to the LLM and feed back its deltas, then [`Input::LlmEnd`] or
    /// [`Input::LlmFailed`].
    CallLlm(ChatRequest),
    /// Run this tool and feed back [`Input::ToolResult`]. Client tools go to the socket that
    /// declared them. Calls of one step may run concurrently.
    RunTool {
        /// The call.
        call_id: String,
        /// The tool.
        name: String,
        /// Its arguments (a JSON object).
        arguments: Value,
        /// Whether a client runs it.
        client: bool,
    },
    /// Wait for the user's decision on this call ([`Input::Approval`]). Nothing needs to stay
    /// awake meanwhile: persist the checkpoint and stop.
    AwaitApproval {
        /// The call.
        call_id: String,
    },
    /// Persist [`Run::checkpoint`] now: a step is complete.
    Checkpoint,
    /// The run is over; store [`Run::session`] as the session's new state.
    Finished,
}

/// One thing out of the run, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// A canonical event, stamped: log it, then send it.
    Event(Sequenced),
    /// Work for the host.
    Effect(Effect),
}

/// An input the run cannot take: the host should tell whoever sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EngineError {
    /// The run has ended.
    Finished,
    /// No tool call of this run has that id, or it is not waiting for that input.
    NoSuchCall(String),
    /// No approval is pending.
    NoPendingApproval,
    /// The input does not fit the run's state (e.g. LLM deltas while tools run).
    Unexpected(&'static str),
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Finished => f.write_str("the run has already ended"),
            EngineError::NoSuchCall(id) => write!(f, "no tool call {id} is waiting for that"),
            EngineError::NoPendingApproval => f.write_str("no approval is pending"),
            EngineError::Unexpected(what) => write!(f, "unexpected input: {what}"),
        }
    }
}

impl std::error::Error for EngineError {}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
enum Phase {
    /// Streaming a model response.
    Thinking,
    /// Streaming an explanation of a call awaiting approval.
    Explaining { call_id: String },
    /// Streaming a summary of `history[..cut]`.
    Compacting { cut: usize, manual: bool },
    /// Running the tool calls of the last response.
    Acting,
    /// Over.
    Done,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
enum CallState {
    NeedsApproval,
    AwaitingApproval,
    Running,
    Done { result: String, is_error: bool },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Call {
    call: ToolCall,
    arguments: Value,
    state: CallState,
}

/// The response being streamed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Response {
    text: String,
    reasoning: String,
    calls: Vec<ToolCall>,
    usage: Option<Usage>,
    finish: Option<String>,
}

impl Response {
    fn streamed_anything(&self) -> bool {
        !self.text.is_empty() || !self.reasoning.is_empty() || !self.calls.is_empty()
    }
}

/// How a run starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    /// The run id.
    pub run_id: String,
    /// The session.
    pub session_id: String,
    /// The user message.
    pub message: String,
    /// The agent (this engine runs `react`).
    pub agent: Agent,
    /// The client's thread id, when it gave one: a `checkpoint` event then closes the run.
    pub thread_id: Option<String>,
    /// Send `values` and `updates` snapshots after every node (loom `verbose`).
    pub verbose: bool,
    /// The workspace folder the run's tools work in (loom `working_folder`), kept with the run
    /// so the host runs every tool of it there, restarts included.
    pub working_folder: Option<String>,
}

/// One run. Serialize it (serde JSON) to checkpoint; deserialize and call [`Run::resume`] to
/// continue.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    config: Config,
    tools: Vec<ToolInfo>,
    seq: Sequencer,
    agent: String,
    session: Session,
    phase: Phase,
    /// LLM round trips of this run.
    iteration: u32,
    response: Response,
    calls: Vec<Call>,
    last_usage: Option<Usage>,
    total: Usage,
    last_content: String,
    last_tools: Vec<String>,
    paused: bool,
    exit: bool,
    compacted_this_step: bool,
    #[serde(default)]
    thread_id: Option<String>,
    #[serde(default)]
    verbose: bool,
    #[serde(default)]
    working_folder: Option<String>,
    /// The host's clock, as last given ([`Run::set_clock`]).
    #[serde(default)]
    now_ms: i64,
    #[serde(skip)]
    out: VecDeque<Output>,
}

impl Run {
    /// A new run; call [`Run::start`] to begin.
    pub fn new(config: Config, tools: Vec<ToolInfo>, session: Session, start: &Start) -> Self {
        let mut run = Run::blank(config, tools, session, &start.session_id, &start.run_id);
        run.agent = start.agent.as_str().into();
        run.thread_id.clone_from(&start.thread_id);
        run.verbose = start.verbose;
        run.working_folder.clone_from(&start.working_folder);
        run.emit(Event::RunStart {
            run_id: Some(start.run_id.clone()),
            message: Some(start.message.clone()),
            agent: Some(start.agent.clone()),
        });
        run.session
            .history
            .push(ChatMessage::user(start.message.clone()));
        run
    }

    fn blank(
        config: Config,
        tools: Vec<ToolInfo>,
        session: Session,
        session_id: &str,
        run_id: &str,
    ) -> Self {
        Run {
            config,
            tools,
            seq: Sequencer::new(Some(session_id.into()), run_id),
            agent: String::new(),
            session,
            phase: Phase::Thinking,
            iteration: 0,
            response: Response::default(),
            calls: Vec::new(),
            last_usage: None,
            total: Usage::default(),
            last_content: String::new(),
            last_tools: Vec::new(),
            paused: false,
            exit: false,
            compacted_this_step: false,
            thread_id: None,
            verbose: false,
            working_folder: None,
            now_ms: 0,
            out: VecDeque::new(),
        }
    }

    /// Tells the run what time it is (the engine has no clock of its own); used to stamp the
    /// `checkpoint` event. Call it before [`Run::handle`] whenever convenient.
    pub fn set_clock(&mut self, now_ms: i64) {
        self.now_ms = now_ms;
    }

    /// Begins the run: the first model call (or a compaction first, if the history is full).
    pub fn start(&mut self) {
        self.think();
    }

    /// A manual compaction of the session (agentloop `manual_compact`): one summary call, then
    /// `context_compacted`. An empty history is an error event, as specs/README says.
    pub fn compact(
        config: Config,
        tools: Vec<ToolInfo>,
        session: Session,
        session_id: &str,
        run_id: &str,
    ) -> Self {
        let mut run = Run::blank(config, tools, session, session_id, run_id);
        if run.session.history.is_empty() {
            run.emit(Event::Error {
                message: "Cannot compact empty transcript".into(),
                code: Some("empty_transcript".into()),
                id: None,
                details: None,
            });
            run.phase = Phase::Done;
            run.effect(Effect::Finished);
            return run;
        }
        let cut = context::cut_point(&run.session.history, run.keep_budget())
            .unwrap_or(run.session.history.len());
        run.phase = Phase::Compacting { cut, manual: true };
        let req = context::summary_request(&run.config.model, &run.session.history, cut);
        run.effect(Effect::CallLlm(req));
        run
    }

    /// The next event or effect, in order.
    #[must_use]
    pub fn poll(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    /// The checkpoint: everything needed to continue, as JSON.
    pub fn checkpoint(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Restores a run from [`Run::checkpoint`].
    pub fn restore(checkpoint: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(checkpoint)
    }

    /// Continues a restored run. `last_event_id` is the last event of this run the host logged
    /// (events streamed after the checkpoint keep their ids). Re-issues the effect the run was
    /// waiting on; a model response cut by the restart is closed as `interrupted` and asked for
    /// again.
    pub fn resume(&mut self, last_event_id: u64) {
        self.seq.last_event_id = self.seq.last_event_id.max(last_event_id);
        match self.phase.clone() {
            Phase::Thinking => {
                let partial = std::mem::take(&mut self.response.text);
                self.emit(Event::LlmComplete {
                    content: partial,
                    tool_calls: Vec::new(),
                    finish_reason: FinishReason::from("interrupted"),
                });
                self.response = Response::default();
                self.emit(Event::NodeExit {
                    id: "think".into(),
                    result: NodeResult::Err("interrupted by a restart".into()),
                });
                self.compacted_this_step = true;
                self.think();
            }
            Phase::Explaining { call_id } => {
                self.response = Response::default();
                self.ask_approval(&call_id);
            }
            Phase::Compacting { cut, .. } => {
                self.response = Response::default();
                let req = context::summary_request(&self.config.model, &self.session.history, cut);
                self.effect(Effect::CallLlm(req));
            }
            Phase::Acting => {
                for c in self.calls.clone() {
                    match c.state {
                        CallState::Running => self.effect(Effect::RunTool {
                            call_id: c.call.id.clone(),
                            name: c.call.name.clone(),
                            arguments: c.arguments.clone(),
                            client: self.tool(&c.call.name).is_some_and(|t| t.client),
                        }),
                        CallState::AwaitingApproval => self.effect(Effect::AwaitApproval {
                            call_id: c.call.id.clone(),
                        }),
                        _ => {}
                    }
                }
            }
            Phase::Done => self.effect(Effect::Finished),
        }
    }

    /// The session as it stands (store it when the run is [`Effect::Finished`]).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The workspace folder of the run's tools, if the client chose one.
    pub fn working_folder(&self) -> Option<&str> {
        self.working_folder.as_deref()
    }

    /// The run id.
    pub fn run_id(&self) -> &str {
        &self.seq.run_id
    }

    /// The last event id stamped.
    pub fn last_event_id(&self) -> u64 {
        self.seq.last_event_id
    }

    /// Whether the run has ended.
    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Done
    }

    /// The calls running now, as (call id, tool name): the host's to answer.
    pub fn running_calls(&self) -> Vec<(&str, &str)> {
        self.calls
            .iter()
            .filter(|c| c.state == CallState::Running)
            .map(|c| (c.call.id.as_str(), c.call.name.as_str()))
            .collect()
    }

    /// The calls waiting for the user's decision (the first is the one asked).
    pub fn pending_approvals(&self) -> Vec<&str> {
        self.calls
            .iter()
            .filter(|c| c.state == CallState::AwaitingApproval)
            .map(|c| c.call.id.as_str())
            .collect()
    }

    /// Takes one input.
    pub fn handle(&mut self, input: Input) -> Result<(), EngineError> {
        if self.phase == Phase::Done {
            return Err(EngineError::Finished);
        }
        match input {
            Input::Cancel => {
                self.fail("cancelled".into(), "cancelled", None);
                Ok(())
            }
            Input::Llm(delta) => self.delta(delta),
            Input::LlmEnd => self.llm_end(),
            Input::LlmFailed(e) => {
                if !matches!(
                    self.phase,
                    Phase::Thinking | Phase::Explaining { .. } | Phase::Compacting { .. }
                ) {
                    return Err(EngineError::Unexpected(
                        "an LLM failure while no LLM call is running",
                    ));
                }
                let details = json!({ "status": e.status(), "retryable": e.is_retryable() });
                self.fail(e.to_string(), "provider", Some(details));
                Ok(())
            }
            Input::ToolResult {
                call_id,
                result,
                is_error,
            } => self.tool_result(&call_id, result, is_error),
            Input::Approval(d) => self.approval(d),
        }
    }

    // --- outputs -------------------------------------------------------------------------

    fn emit(&mut self, event: Event) {
        let exited = match &event {
            Event::NodeExit { id, .. } => Some(id.clone()),
            _ => None,
        };
        let stamped = self.seq.stamp(event);
        self.out.push_back(Output::Event(stamped));
        // specs/README (loom): with `verbose`, `values` then `updates` follow each `node_exit`.
        if let (true, Some(node)) = (self.verbose, exited) {
            let state = self.state_snapshot();
            let stamped = self.seq.stamp(Event::Values {
                state: state.clone(),
            });
            self.out.push_back(Output::Event(stamped));
            let stamped = self.seq.stamp(Event::Updates { id: node, state });
            self.out.push_back(Output::Event(stamped));
        }
    }

    /// The run's state as the `values`/`updates` snapshots show it.
    fn state_snapshot(&self) -> Value {
        json!({
            "messages": self.session.history,
            "iteration": self.iteration,
            "usage": self.total,
        })
    }

    fn effect(&mut self, effect: Effect) {
        self.out.push_back(Output::Effect(effect));
    }

    fn tool(&self, name: &str) -> Option<&ToolInfo> {
        self.tools.iter().find(|t| t.def.name == name)
    }

    // --- think -----------------------------------------------------------------------------

    fn think(&mut self) {
        let estimate = self.estimate();
        let limit = (self.config.context_window as f64 * self.config.compact_at) as u64;
        if estimate > limit && !self.compacted_this_step {
            if let Some(cut) = context::cut_point(&self.session.history, self.keep_budget()) {
                self.phase = Phase::Compacting { cut, manual: false };
                let req = context::summary_request(&self.config.model, &self.session.history, cut);
                self.effect(Effect::CallLlm(req));
                return;
            }
        }
        self.compacted_this_step = false;
        self.phase = Phase::Thinking;
        self.response = Response::default();
        self.emit(Event::NodeEnter { id: "think".into() });
        let req = ChatRequest {
            model: self.config.model.clone(),
            system: Some(self.config.system_prompt.clone()),
            messages: self.session.history.clone(),
            tools: self.tools.iter().map(|t| t.def.clone()).collect(),
            max_tokens: self.config.max_tokens,
            temperature: None,
        };
        self.effect(Effect::Checkpoint);
        self.effect(Effect::CallLlm(req));
    }

    /// Tokens the turns kept verbatim by a compaction may take.
    fn keep_budget(&self) -> u64 {
        (self.config.context_window as f64 * context::KEEP_SHARE) as u64
    }

    fn estimate(&self) -> u64 {
        let defs: Vec<ToolDef> = self.tools.iter().map(|t| t.def.clone()).collect();
        context::estimate(&self.config.system_prompt, &self.session.history, &defs)
    }

    fn context_info(&self) -> Event {
        let tokens = self.estimate();
        Event::ContextInfo {
            token_count: tokens,
            usage_percent: context::percent(tokens, self.config.context_window),
            transcript_length: self.session.history.len() as u64,
            max_tokens: self.config.context_window,
            strategy: context::STRATEGY.into(),
        }
    }

    fn node(&self) -> &'static str {
        match self.phase {
            Phase::Explaining { .. } => "explain",
            _ => "think",
        }
    }

    fn delta(&mut self, delta: Delta) -> Result<(), EngineError> {
        let streaming = matches!(self.phase, Phase::Thinking | Phase::Explaining { .. });
        let compacting = matches!(self.phase, Phase::Compacting { .. });
        if !streaming && !compacting {
            return Err(EngineError::Unexpected(
                "LLM output while no LLM call is running",
            ));
        }
        let node = self.node();
        match delta {
            Delta::Text(t) => {
                self.response.text.push_str(&t);
                if streaming {
                    self.emit(Event::MessageChunk {
                        content: t,
                        id: node.into(),
                    });
                }
            }
            Delta::Reasoning(t) if streaming => {
                self.response.reasoning.push_str(&t);
                self.emit(Event::ReasoningChunk {
                    content: t,
                    id: node.into(),
                });
            }
            Delta::ToolCallStart { id, name, .. } if self.phase == Phase::Thinking => {
                self.response.calls.push(ToolCall {
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
            Delta::ToolCallArgs { index, fragment } if self.phase == Phase::Thinking => {
                if let Some(call) = self.response.calls.get_mut(index as usize) {
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
                if let Some(call) = self.response.calls.get_mut(index as usize) {
                    call.signature = Some(signature);
                }
            }
            Delta::ToolCallEnd { index, .. } if self.phase == Phase::Thinking => {
                if let Some(call) = self.response.calls.get(index as usize) {
                    let arguments = context::parse_arguments(&call.arguments)
                        .unwrap_or_else(|_| Value::String(call.arguments.clone()));
                    let (id, name) = (call.id.clone(), call.name.clone());
                    self.emit(Event::ToolCall {
                        call_id: Some(id),
                        name,
                        arguments,
                    });
                }
            }
            Delta::Usage {
                prompt_tokens,
                completion_tokens,
                total_tokens,
            } => {
                self.response.usage = Some(Usage {
                    prompt_tokens,
                    completion_tokens,
                    total_tokens,
                });
            }
            Delta::Finish(reason) => self.response.finish = Some(reason.as_str().into()),
            Delta::Error(e) => {
                let details = json!({ "status": e.status(), "retryable": e.is_retryable() });
                self.fail(e.to_string(), "provider", Some(details));
            }
            // Reasoning of a summary, tool calls during an explanation: not part of the answer.
            _ => {}
        }
        Ok(())
    }

    fn account_usage(&mut self) {
        if let Some(u) = self.response.usage {
            self.last_usage = Some(u);
            self.total.add(&u);
            self.emit(Event::Usage(u));
        }
    }

    fn llm_end(&mut self) -> Result<(), EngineError> {
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
                    self.think();
                }
                Ok(())
            }
            _ => Err(EngineError::Unexpected(
                "an LLM end while no LLM call is running",
            )),
        }
    }

    fn finish_thinking(&mut self) {
        self.iteration += 1;
        self.session.iterations += 1;
        self.account_usage();
        let response = std::mem::take(&mut self.response);
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
            tool_calls: names.clone(),
            finish_reason: FinishReason::from(finish.as_str()),
        });
        self.session.history.push(ChatMessage::Assistant {
            content: response.text.clone(),
            tool_calls: response.calls.clone(),
        });
        let info = self.context_info();
        self.emit(info);
        self.emit(Event::NodeExit {
            id: "think".into(),
            result: NodeResult::Ok,
        });
        self.last_content = response.text;
        self.last_tools = names;
        if response.calls.is_empty() {
            self.end_run();
        } else {
            self.act(response.calls);
        }
    }

    // --- act -------------------------------------------------------------------------------

    fn act(&mut self, calls: Vec<ToolCall>) {
        self.phase = Phase::Acting;
        self.emit(Event::NodeEnter { id: "act".into() });
        self.calls.clear();
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
            });
        }
        for id in ready {
            self.start_tool(&id);
        }
        self.next_approval();
        self.effect(Effect::Checkpoint);
        self.maybe_done_acting();
    }

    fn start_tool(&mut self, call_id: &str) {
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
    fn next_approval(&mut self) {
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

    fn ask_approval(&mut self, call_id: &str) {
        let Some(c) = self.calls.iter().find(|c| c.call.id == call_id) else {
            return;
        };
        let (name, arguments) = (c.call.name.clone(), c.arguments.clone());
        self.emit(Event::ToolApproval {
            call_id: Some(call_id.into()),
            name,
            arguments,
        });
        self.effect(Effect::AwaitApproval {
            call_id: call_id.into(),
        });
    }

    fn finish_call(&mut self, call_id: &str, result: String, is_error: bool) {
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

    fn tool_result(
        &mut self,
        call_id: &str,
        result: String,
        is_error: bool,
    ) -> Result<(), EngineError> {
        let running = self
            .calls
            .iter()
            .any(|c| c.call.id == call_id && c.state == CallState::Running);
        if self.phase != Phase::Acting || !running {
            return Err(EngineError::NoSuchCall(call_id.into()));
        }
        self.finish_call(call_id, result, is_error);
        self.effect(Effect::Checkpoint);
        self.maybe_done_acting();
        Ok(())
    }

    fn approval(&mut self, d: ApprovalDecision) -> Result<(), EngineError> {
        if self.phase != Phase::Acting {
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
        let (call_id, name) = (call.call.id.clone(), call.call.name.clone());
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
        let denied = match &message {
            Some(m) => format!("denied by the user: {m}"),
            None => "denied by the user".to_string(),
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
            }
            Review::Explain => {
                self.phase = Phase::Explaining {
                    call_id: call_id.clone(),
                };
                self.response = Response::default();
                let c = self.calls.iter().find(|c| c.call.id == call_id);
                let args = c.map(|c| c.call.arguments.clone()).unwrap_or_default();
                let mut messages = self.session.history.clone();
                // The question goes after the pending call's turn without answering it, so the
                // history stays valid for every provider: the call is still open.
                messages.pop();
                messages.push(ChatMessage::user(format!(
                    "Before I decide: explain in two or three sentences what calling the tool \
                     `{}` with arguments {} will do, and why it is needed.",
                    c.map(|c| c.call.name.as_str()).unwrap_or_default(),
                    args
                )));
                self.effect(Effect::CallLlm(ChatRequest {
                    model: self.config.model.clone(),
                    system: Some(self.config.system_prompt.clone()),
                    messages,
                    tools: Vec::new(),
                    max_tokens: self.config.max_tokens,
                    temperature: None,
                }));
                return Ok(());
            }
        }
        self.next_approval();
        self.effect(Effect::Checkpoint);
        self.maybe_done_acting();
        Ok(())
    }

    fn maybe_done_acting(&mut self) {
        if self.phase != Phase::Acting
            || !self
                .calls
                .iter()
                .all(|c| matches!(c.state, CallState::Done { .. }))
        {
            return;
        }
        for c in std::mem::take(&mut self.calls) {
            if let CallState::Done { result, is_error } = c.state {
                if !is_error && self.config.pause_after.contains(&c.call.name) {
                    self.paused = true;
                }
                self.session.history.push(ChatMessage::Tool(ToolResult {
                    call_id: c.call.id,
                    name: c.call.name,
                    content: result,
                    is_error,
                }));
            }
        }
        self.emit(Event::NodeExit {
            id: "act".into(),
            result: NodeResult::Ok,
        });
        if self.exit || self.paused || self.iteration >= self.config.max_iterations {
            self.end_run();
        } else {
            self.think();
        }
    }

    // --- the end ---------------------------------------------------------------------------

    fn end_run(&mut self) {
        self.phase = Phase::Done;
        if let Some(thread) = self.thread_id.clone() {
            // specs/README (loom): when a thread_id is given a checkpoint closes the run.
            let timestamp =
                crate::tools::format_time_offset(self.now_ms, "UTC").unwrap_or_default();
            let step = i64::from(self.iteration);
            self.emit(Event::Checkpoint {
                checkpoint_id: format!("{}-{step}", self.seq.run_id),
                timestamp,
                step,
                state: self.state_snapshot(),
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

    fn fail(&mut self, message: String, code: &str, details: Option<Value>) {
        let response = std::mem::take(&mut self.response);
        if matches!(self.phase, Phase::Thinking | Phase::Explaining { .. })
            && response.streamed_anything()
        {
            self.emit(Event::LlmComplete {
                content: response.text.clone(),
                tool_calls: Vec::new(),
                finish_reason: FinishReason::from(if code == "cancelled" {
                    "cancelled"
                } else {
                    "error"
                }),
            });
            if self.phase == Phase::Thinking && !response.text.is_empty() {
                self.session
                    .history
                    .push(ChatMessage::assistant(response.text));
            }
        }
        // Every call the model made needs an answer in the history, or providers refuse it.
        for c in std::mem::take(&mut self.calls) {
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
            code: Some(code.into()),
            id: None,
            details,
        });
        self.effect(Effect::Checkpoint);
        self.effect(Effect::Finished);
    }
}
