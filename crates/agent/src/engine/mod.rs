//! A run as a resumable state machine: the `react`, `dup`, `tot` and `got` agents.
//!
//! The host drives a [`Run`]: it feeds [`Input`]s (LLM deltas, tool results, approval decisions,
//! cancel) and takes [`Output`]s from [`Run::poll`] — canonical events to log and send, and
//! [`Effect`]s to carry out (call the LLM, run a tool, wait for an approval, persist a
//! checkpoint). Nothing here waits, sleeps or does I/O, so a run waiting for an approval is just
//! a JSON checkpoint, and a run restored from one continues where it stopped
//! ([`Run::resume`]).
//!
//! Events follow specs/loom-stream-protocol.md and specs/README.md: `run_start` first; each node
//! span `node_enter` … `node_exit`; every model response of the run's own conversation ends with
//! `usage`, `llm_complete` and `context_info`; `run_end` (or `error`) last.
//!
//! # The agents
//!
//! - **react**: `think` (stream the model) → `act` (run the tools it called; those that change
//!   anything wait for approval) → `think` … until a reply without tool calls, the iteration
//!   cap, a `pause_after` tool, or `no-exit`.
//! - **dup** ([`dup`]): `understand` (a structured understanding, kept in the history as an
//!   assistant message) → `plan` → `act` → `observe` → `plan` … until a plan answers without
//!   tools.
//! - **tot** ([`tot`]): `think_expand` (k candidate steps) → `think_evaluate` (a score each) →
//!   `act` (carry out the best) … with `tot_backtrack` on a low score or a failed step.
//! - **got** ([`got`]): `plan_graph` (a DAG of sub-tasks) → `execute_graph` (every ready node a
//!   ReAct sub-task of its own, independent nodes at the same time) → the reply from the sinks.
//!
//! All four share one tool and approval path (`act`, `approval`, one approval asked at a time
//! across the whole run), one emitter (`emit`, through the outbox's [`Sequencer`]) and one
//! checkpoint (the run as JSON, the agent's own state — the ToT tree, the GoT graph — included).
//!
//! # Lanes: several model calls at once
//!
//! A GoT run has several conversations going at once: its own, and one per running sub-task. A
//! *lane* names one (`None`: the run's own, whose messages are the session history; `Some(id)`:
//! graph node `id`). Every model call and every tool call belongs to a lane, and each lane has at
//! most one model call outstanding. Because independent nodes may stream at the same time,
//! [`Effect::CallLlm`] carries a call id, and [`Input::Llm`], [`Input::LlmEnd`] and
//! [`Input::LlmFailed`] say which call they belong to; the host may run the calls concurrently
//! or one after another, and feed their inputs interleaved in any order.
//!
//! The canonical event stream has no lane of its own: agentloop gives all chunks of a node span
//! one message id, cueso's `content_delta` has no id at all, and the `Reassembler` closes the
//! open message at every tool event. So interleaved responses would
//! garble the message text for three of the four dialects. The engine therefore keeps one
//! invariant: **a model response's events are contiguous in the stream.** Whichever call
//! produces an event first when none is streaming becomes *live*; its events go out at once,
//! while every other event (another call's chunks, a tool result of another node, …) waits in
//! a queue (`held`) and goes out, in order, when the live response ends. What a call's handler
//! emits after its response has ended (a node's completion, the next node's start) is no longer
//! that response's: it queues behind what was held before it, so no event overtakes one it
//! follows from (a node's start, the completion of a node it depends on). The waiting costs
//! nothing but display latency: state changes and effects (tool runs, further model calls) are
//! never held back, so a node's tools run while another node's response streams. Each GoT
//! sub-task response is also a node span of its own (`execute_graph`), opened by its first
//! delta, because dialects key messages on spans (see `got`).
//!
//! Restarts: held events are part of the checkpoint. The run asks for a checkpoint whenever a
//! sub-task's response starts to stream out and after every release of held events, so after a
//! restart [`Run::resume`] knows which cut response its clients saw the start of (it gets an
//! `interrupted` `llm_complete` and its span closed, as react's cut `think` does); the other cut
//! responses had sent nothing, and what they held is dropped with them. Every cut call is asked
//! for again. (A crash in the instant between sending released events and writing that
//! checkpoint can send them once more after the restart.)

//!
//! # The rooms
//!
//! - this module: the [`Run`] itself — its fields, how it starts, what the host may ask of it,
//!   and [`Run::handle`], which routes each input;
//! - `config`: what a run is set up with ([`Config`], [`ToolInfo`], [`Session`], [`Start`]);
//! - `host`: what passes between the run and its host ([`Input`], [`Output`], [`Effect`],
//!   [`EngineError`]);
//! - `outbox`: the order events leave in — stamping, the live response, what is held;
//! - the loop every agent shares, which names no agent: `responses` (the model's responses of
//!   the run's own lane — asking, streaming in, closing; compaction), `acting` (the tool and
//!   approval path, `act` … `maybe_done_acting`), `lifecycle` (how a run ends, and how a
//!   restored one goes on: [`Run::resume`]), and `ending` (the codes they end with);
//! - `steps`: what the shared loop asks of an agent — where it begins, what follows each of
//!   its responses and tool runs, its own steps, its lanes;
//! - the agents, each its own room: `react` (the shared loop's defaults), [`dup`], [`tot`],
//!   [`got`], and `remote` (an agent that runs elsewhere, which the host calls and whose
//!   decoded events the run takes in); `agent_state`: the table from an agent to its state and its answers;
//! - `checkpoint`: the run as stored; [`context`]: token estimates and compaction;
//!   [`prompts`]: the agents' instructions.
//!
//! Adding an agent: its module (its state, its steps, an `impl Steps`), its row in
//! `agent_state`'s table, its instructions in `prompts`, and its name in
//! `weft_protocol::Agent`; `checkpoint` too if it keeps state beyond its steps.

pub mod context;
pub mod dup;
pub mod got;
pub mod prompts;
pub mod tot;

mod acting;
mod agent_state;
mod checkpoint;
mod config;
mod ending;
mod host;
mod lifecycle;
mod outbox;
mod react;
mod remote;
mod responses;
mod steps;

use serde::{Deserialize, Serialize};
use serde_json::json;
use weft_protocol::command::ApprovalDecision;
use weft_protocol::{Event, Review, Sequencer, Usage};

use crate::provider::{ChatMessage, ChatRequest, ToolDef};
use crate::read::{unknown_variant, variant, Fields, FromValue, Read};
use acting::{Call, CallState};
use agent_state::AgentState;
pub use config::{Config, Session, Start, ToolInfo, DEFAULT_SYSTEM_PROMPT};
use ending::ErrorCode;
pub use host::{Effect, EngineError, Input, Output};
use outbox::Outbox;
pub use remote::REMOTE;
use responses::Response;
use steps::{Lanes, Steps};

/// What the run's own lane is doing. The agents' own steps are theirs to name
/// ([`steps`](self::steps)); lanes of their own keep their own states (GoT's nodes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
enum Phase {
    /// Streaming a model response that may call tools: react `think`, dup `plan`, tot `act`.
    Thinking,
    /// Streaming an explanation of a call awaiting approval.
    Explaining { call_id: String },
    /// Streaming a summary of `history[..cut]`.
    Compacting { cut: usize, manual: bool },
    /// Running the tool calls of the last response.
    Acting,
    /// Over.
    Done,
    /// At one of the agent's own steps, which its state says (a checkpoint writes that
    /// step's name here: `checkpoint.rs`).
    #[serde(skip)]
    Own,
}

/// Which conversation something belongs to: `None` the run's own, `Some(id)` one the agent
/// runs beside it (GoT: graph node `id`), answered for by the agent's [`steps::Lanes`].
type Lane = Option<String>;

/// A model call in flight.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct LlmCall {
    id: u64,
    #[serde(default)]
    lane: Lane,
}

/// One run. Serialize it (serde JSON) to checkpoint; deserialize and call [`Run::resume`] to
/// continue (the checkpoint's shape: `checkpoint.rs`).
#[derive(Debug, Clone)]
pub struct Run {
    config: Config,
    tools: Vec<ToolInfo>,
    /// Stamps, holds and queues what goes out.
    outbox: Outbox,
    /// Which agent, with its own state.
    agent: AgentState,
    session: Session,
    phase: Phase,
    /// LLM round trips of this run (what [`Config::max_iterations`] caps).
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
    thread_id: Option<String>,
    verbose: bool,
    working_folder: Option<String>,
    /// The host's clock, as last given ([`Run::set_clock`]).
    now_ms: i64,
    /// The user message of this run (the agents' prompts quote it).
    message: String,
    /// Model calls in flight.
    llm: Vec<LlmCall>,
    /// The last model call id given out.
    next_call: u64,
}

impl Run {
    /// A new run; call [`Run::start`] to begin.
    pub fn new(config: Config, tools: Vec<ToolInfo>, session: Session, start: &Start) -> Self {
        let mut run = Run::blank(config, tools, session, &start.session_id, &start.run_id);
        run.agent = AgentState::new(&start.agent, start.got_adaptive);
        run.thread_id.clone_from(&start.thread_id);
        run.verbose = start.verbose;
        run.working_folder.clone_from(&start.working_folder);
        run.message.clone_from(&start.message);
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
            outbox: Outbox::new(Sequencer::new(Some(session_id.into()), run_id)),
            agent: AgentState::React,
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
            message: String::new(),
            llm: Vec::new(),
            next_call: 0,
        }
    }

    /// Tells the run what time it is (the engine has no clock of its own); used to stamp the
    /// `checkpoint` event. Call it before [`Run::handle`] whenever convenient.
    pub fn set_clock(&mut self, now_ms: i64) {
        self.now_ms = now_ms;
    }

    /// Begins the run: the agent's first model call (or a compaction first, if the history is
    /// full).
    pub fn start(&mut self) {
        if !self.maybe_compact() {
            self.begin();
        }
    }

    /// The agent's first step, or its next one after a threshold compaction.
    fn begin(&mut self) {
        self.steps().begin(self);
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
        run.call_llm(None, req);
        run
    }

    /// The next event or effect, in order.
    #[must_use]
    pub fn poll(&mut self) -> Option<Output> {
        self.outbox.pop()
    }

    /// The checkpoint: everything needed to continue, as JSON. An error (a value JSON cannot
    /// hold) is the host's to surface: an empty checkpoint would wedge the session on restore.
    pub fn checkpoint(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(self)
    }

    /// Restores a run from [`Run::checkpoint`].
    pub fn restore(checkpoint: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(checkpoint)
    }

    /// What the run was set up with (a restored run: as it started).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The session as it stands (store it when the run is [`Effect::Finished`]).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The workspace folder of the run's tools, if the client chose one.
    pub fn working_folder(&self) -> Option<&str> {
        self.working_folder.as_deref()
    }

    /// As [`Start::session_id`] gave it: the thread a remote agent keeps the run in.
    pub fn session_id(&self) -> Option<&str> {
        self.outbox.seq.session_id.as_deref()
    }

    /// As [`Start::run_id`] (or [`Run::compact`]) gave it.
    pub fn run_id(&self) -> &str {
        &self.outbox.seq.run_id
    }

    /// The `event_id` of the last event stamped. After a restart the host passes the last id
    /// in its own log to [`Run::resume`], which goes on after the higher of the two.
    pub fn last_event_id(&self) -> u64 {
        self.outbox.seq.last_event_id
    }

    /// Whether the run was waiting on model calls (a restored run: when it checkpointed). Only
    /// a model's response streams deltas, so only such a run can have sent events its host
    /// had not logged yet.
    pub fn awaits_model(&self) -> bool {
        !self.llm.is_empty()
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
        self.waiting_approvals().map(|(id, _, _)| id).collect()
    }

    /// The calls waiting for the user's decision: call id, tool, and when it was asked (the
    /// run's clock; `None` for a run checkpointed before asks were timed).
    pub fn waiting_approvals(&self) -> impl Iterator<Item = (&str, &str, Option<i64>)> {
        self.calls
            .iter()
            .filter(|c| c.state == CallState::AwaitingApproval)
            .map(|c| (c.call.id.as_str(), c.call.name.as_str(), c.asked_at_ms))
    }

    /// The model calls outstanding, oldest first.
    pub fn pending_llm_calls(&self) -> Vec<u64> {
        self.llm.iter().map(|c| c.id).collect()
    }

    /// Takes one input.
    pub fn handle(&mut self, input: Input) -> Result<(), EngineError> {
        if self.phase == Phase::Done {
            return Err(EngineError::Finished);
        }
        match input {
            Input::Cancel => {
                self.fail("cancelled".into(), ErrorCode::Cancelled, None);
                Ok(())
            }
            Input::HostFailed { code, message } => {
                self.fail(message, ErrorCode::from(code), None);
                Ok(())
            }
            Input::Llm { call, delta } => {
                let lane = self.lane_of(call)?;
                self.outbox.ctx = Some(call);
                let result = self.delta(&lane, delta);
                self.outbox.ctx = None;
                self.settle(call);
                result
            }
            Input::LlmEnd { call } => {
                let lane = self.lane_of(call)?;
                self.llm.retain(|c| c.id != call);
                self.outbox.ctx = Some(call);
                let result = self.llm_end(&lane);
                self.outbox.ctx = None;
                self.settle(call);
                result
            }
            Input::LlmFailed { call, error } => {
                let lane = self.lane_of(call)?;
                self.llm.retain(|c| c.id != call);
                self.outbox.ctx = Some(call);
                let details =
                    json!({ "status": error.status(), "retryable": error.is_retryable() });
                match &lane {
                    None => self.fail(error.to_string(), ErrorCode::Provider, Some(details)),
                    Some(id) => self.lane_failed(id, error.to_string()),
                }
                self.outbox.ctx = None;
                self.settle(call);
                Ok(())
            }
            Input::ToolResult {
                call_id,
                result,
                is_error,
            } if self.is_remote() => {
                self.remote_tool_result(&call_id, cap_tool_result(result), is_error)
            }
            Input::ToolResult {
                call_id,
                result,
                is_error,
            } => self.tool_result(&call_id, cap_tool_result(result), is_error),
            Input::ToolOutput { call_id, content } => self.tool_output(&call_id, content),
            Input::Remote { events } => self.remote(events),
            Input::RemoteEnded => self.remote_ended(),
            Input::Approval(d) if self.is_remote() => self.remote_approval(d, None),
            Input::Refuse { call_id, reason } if self.is_remote() => {
                let d = ApprovalDecision {
                    call_id: Some(call_id),
                    review: Review::NoContinue,
                    custom_deny_message: None,
                    explanation: None,
                };
                self.remote_approval(d, Some(reason))
            }
            Input::Approval(d) => self.approval(d, None),
            Input::Refuse { call_id, reason } => {
                let d = ApprovalDecision {
                    call_id: Some(call_id),
                    review: Review::NoContinue,
                    custom_deny_message: Some(reason.clone()),
                    explanation: None,
                };
                self.approval(d, Some(reason))
            }
        }
    }

    /// A run of an agent that runs elsewhere (the `remote` room).
    fn is_remote(&self) -> bool {
        matches!(self.agent, AgentState::Remote(_))
    }

    fn lane_of(&self, call: u64) -> Result<Lane, EngineError> {
        self.llm
            .iter()
            .find(|c| c.id == call)
            .map(|c| c.lane.clone())
            .ok_or(EngineError::NoSuchLlmCall(call))
    }

    fn tool(&self, name: &str) -> Option<&ToolInfo> {
        self.tools.iter().find(|t| t.def.name == name)
    }

    fn tool_defs(&self) -> Vec<ToolDef> {
        self.tools.iter().map(|t| t.def.clone()).collect()
    }

    /// The agent's answers to the shared loop.
    fn steps(&self) -> &'static dyn Steps {
        self.agent.steps()
    }

    /// The agent's lanes beside the run's own, if it runs any.
    fn lanes(&self) -> Option<&'static dyn Lanes> {
        self.steps().lanes()
    }

    /// Lane `id`'s model call failed: the agent's to carry on without it.
    fn lane_failed(&mut self, id: &str, error: String) {
        if let Some(lanes) = self.lanes() {
            lanes.failed(self, id, error);
        }
    }

    /// The system prompt with an agent's instruction after the persona.
    fn system_with(&self, instruction: &str) -> String {
        format!("{}\n\n{instruction}", self.config.system_prompt)
    }

    /// Asks the model; the lane's inputs come back under the returned call id.
    fn call_llm(&mut self, lane: Lane, mut request: ChatRequest) -> u64 {
        request.temperature = request.temperature.or(self.config.temperature);
        self.next_call += 1;
        let call = self.next_call;
        self.llm.push(LlmCall { id: call, lane });
        self.effect(Effect::CallLlm { call, request });
        call
    }
}

/// `text` cut to at most `max` characters (on a character boundary), `…` marking the cut.
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// The most of a tool's result the model and the log keep: a client tool (or any tool) may
/// answer with megabytes, which would fill the context and outgrow a storage row. What is cut
/// is said in the result itself, so the model knows it saw part.
pub const MAX_TOOL_RESULT_BYTES: usize = 1024 * 1024;

fn cap_tool_result(mut result: String) -> String {
    if result.len() <= MAX_TOOL_RESULT_BYTES {
        return result;
    }
    let total = result.len();
    let mut cut = MAX_TOOL_RESULT_BYTES;
    while !result.is_char_boundary(cut) {
        cut -= 1;
    }
    result.truncate(cut);
    result.push_str(&format!(
        "\n[truncated: the tool returned {total} bytes; the first {cut} are shown]"
    ));
    result
}

impl FromValue for Phase {
    /// [`Phase::Own`] is never written as itself (checkpoint.rs): not read here either.
    fn from_value(v: &serde_json::Value) -> Read<Self> {
        match variant("phase", v)? {
            ("Thinking", None) => Ok(Phase::Thinking),
            ("Explaining", Some(fields)) => Ok(Phase::Explaining {
                call_id: Fields::of("Explaining", fields)?.req("call_id")?,
            }),
            ("Compacting", Some(fields)) => {
                let f = Fields::of("Compacting", fields)?;
                Ok(Phase::Compacting {
                    cut: f.req("cut")?,
                    manual: f.req("manual")?,
                })
            }
            ("Acting", None) => Ok(Phase::Acting),
            ("Done", None) => Ok(Phase::Done),
            (name, _) => Err(unknown_variant("phase", name)),
        }
    }
}

impl FromValue for LlmCall {
    fn from_value(v: &serde_json::Value) -> Read<Self> {
        let f = Fields::of("model call", v)?;
        Ok(LlmCall {
            id: f.req("id")?,
            lane: f.or_default("lane")?,
        })
    }
}
