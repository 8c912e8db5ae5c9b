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
//! across the whole run), one emitter (`emit`, through the [`Sequencer`]) and one checkpoint
//! (this struct as JSON, the agent's own state — the ToT tree, the GoT graph — included).
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

pub mod context;
pub mod dup;
pub mod got;
pub mod prompts;
pub mod tot;

use std::collections::{BTreeSet, VecDeque};
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{json, Map, Value};
use weft_protocol::command::ApprovalDecision;
use weft_protocol::event::NodeResult;
use weft_protocol::{Agent, Event, FinishReason, Review, Sequenced, Sequencer, Usage};

use crate::provider::{
    ChatMessage, ChatRequest, Delta, ProviderError, ToolCall, ToolDef, ToolResult,
};

/// How a run behaves. Serialized into every checkpoint, so a restored run keeps its settings;
/// a field missing from an older checkpoint takes its default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Model name passed to the provider (empty: the provider config's model).
    pub model: String,
    /// The system prompt.
    pub system_prompt: String,
    /// LLM round trips allowed per run before it ends with what it has (default 10): `think`
    /// steps for react, `understand` + `plan` for dup, `act` steps for tot, and the steps of
    /// each sub-task for got.
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
    /// tot: candidate next steps asked for at each depth, `k` (default 3, at most 8).
    pub tot_candidates: u32,
    /// tot: how deep the tree goes before the final answer (default 3).
    pub tot_max_depth: u32,
    /// tot: a best score (0 to 1) under this backtracks (default 0.5).
    pub tot_threshold: f64,
    /// got: most sub-tasks in a plan, and in each adaptive expansion (default 8).
    pub got_max_nodes: u32,
    /// got: most sub-tasks with a model call outstanding at once (default 3). Each is an open
    /// connection for the host, and a Worker has only six.
    pub got_max_parallel: u32,
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
            tot_candidates: 3,
            tot_max_depth: 3,
            tot_threshold: 0.5,
            got_max_nodes: 8,
            got_max_parallel: 3,
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
    /// A decoded piece of the streamed response of model call `call`.
    Llm {
        /// The call, as [`Effect::CallLlm`] named it.
        call: u64,
        /// The piece.
        delta: Delta,
    },
    /// The response body of model call `call` ended normally.
    LlmEnd {
        /// The call.
        call: u64,
    },
    /// Model call `call` failed (HTTP error, cut stream, malformed stream).
    LlmFailed {
        /// The call.
        call: u64,
        /// What went wrong.
        error: ProviderError,
    },
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
    /// Nobody can answer this call's approval request (no client connected that could, or
    /// nobody answered in time): it is not run, and the model and the clients are told
    /// `reason` as its result — not "denied by the user", since nobody denied it.
    Refuse {
        /// The call.
        call_id: String,
        /// Why it is refused.
        reason: String,
    },
    /// Stop the run.
    Cancel,
    /// The host cannot carry the run on (its event log or checkpoint cannot be written): it
    /// ends with an `error` of this code and message, rather than going on in a state a
    /// restart or a resume could not find again.
    HostFailed {
        /// The error code the clients see (e.g. `storage`).
        code: String,
        /// What failed, for the clients.
        message: String,
    },
}

/// Work for the host.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Send this request to the LLM and feed back its deltas, then [`Input::LlmEnd`] or
    /// [`Input::LlmFailed`], each with this `call`. Several calls may be outstanding at once
    /// (got runs independent sub-tasks side by side); their inputs may be fed in any
    /// interleaving. An input for a call the run no longer waits for is refused
    /// ([`EngineError::NoSuchLlmCall`]): stop reading that stream.
    CallLlm {
        /// Names this call in the inputs that answer it; unique within the run.
        call: u64,
        /// What to send.
        request: ChatRequest,
    },
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
    /// No model call with this id is outstanding (it ended, failed, or was never made).
    NoSuchLlmCall(u64),
    /// The input does not fit the run's state (e.g. LLM deltas while tools run).
    Unexpected(&'static str),
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Finished => f.write_str("the run has already ended"),
            EngineError::NoSuchCall(id) => write!(f, "no tool call {id} is waiting for that"),
            EngineError::NoPendingApproval => f.write_str("no approval is pending"),
            EngineError::NoSuchLlmCall(id) => write!(f, "no model call {id} is outstanding"),
            EngineError::Unexpected(what) => write!(f, "unexpected input: {what}"),
        }
    }
}

impl std::error::Error for EngineError {}

/// What the run's own lane is doing. GoT nodes have their own states ([`got::NodeState`]).
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
    /// dup: streaming the understanding.
    Understanding,
    /// tot: streaming the candidates.
    Expanding,
    /// tot: streaming the scores.
    Evaluating,
    /// got: streaming the plan.
    Planning,
    /// got: the graph's nodes are running (each in its own lane).
    Executing,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
enum CallState {
    NeedsApproval,
    AwaitingApproval,
    Running,
    Done { result: String, is_error: bool },
}

/// Which conversation something belongs to: `None` the run's own, `Some(id)` GoT node `id`.
type Lane = Option<String>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Call {
    call: ToolCall,
    arguments: Value,
    state: CallState,
    #[serde(default)]
    lane: Lane,
    /// When its approval was last asked (the run's clock): nobody waits on it forever.
    #[serde(default)]
    asked_at_ms: Option<i64>,
}

/// A model call in flight.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct LlmCall {
    id: u64,
    #[serde(default)]
    lane: Lane,
}

/// An event waiting for the live response to end, tagged with the model call whose input
/// produced it (`None`: a tool result, an approval, a restart). `event: None` marks the end of
/// that call's response.
#[derive(Debug, Clone, PartialEq)]
struct Held {
    call: Option<u64>,
    event: Option<Event>,
}

/// [`Held`] as checkpointed: canonical events have a JSON form of their own ([`Event::to_json`])
/// rather than a serde `Deserialize`.
#[derive(Serialize, Deserialize)]
struct HeldJson {
    call: Option<u64>,
    #[serde(default)]
    event: Option<Map<String, Value>>,
}

impl Serialize for Held {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        HeldJson {
            call: self.call,
            event: self.event.as_ref().map(Event::to_json),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Held {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let h = HeldJson::deserialize(d)?;
        let event = match h.event {
            Some(map) => Some(Event::from_json(&map).map_err(serde::de::Error::custom)?),
            None => None,
        };
        Ok(Held {
            call: h.call,
            event,
        })
    }
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

/// How a lane's current model call streams.
struct Stream {
    /// The node name its chunks carry.
    node: String,
    /// Whether its text is shown (a compaction summary is not).
    visible: bool,
    /// Whether tool calls in it are taken.
    tools: bool,
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
    /// The agent; one this engine does not know runs as `react`.
    pub agent: Agent,
    /// The client's thread id, when it gave one: a `checkpoint` event then closes the run.
    pub thread_id: Option<String>,
    /// Send `values` and `updates` snapshots after every node (loom `verbose`).
    pub verbose: bool,
    /// The workspace folder the run's tools work in (loom `working_folder`), kept with the run
    /// so the host runs every tool of it there, restarts included.
    pub working_folder: Option<String>,
    /// got: expand a sub-task judged too complex into a sub-graph (loom `got_adaptive`).
    pub got_adaptive: bool,
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
    #[serde(default)]
    thread_id: Option<String>,
    #[serde(default)]
    verbose: bool,
    #[serde(default)]
    working_folder: Option<String>,
    /// The host's clock, as last given ([`Run::set_clock`]).
    #[serde(default)]
    now_ms: i64,
    /// The user message of this run (the agents' prompts quote it).
    #[serde(default)]
    message: String,
    /// Model calls in flight.
    #[serde(default)]
    llm: Vec<LlmCall>,
    /// The last model call id given out.
    #[serde(default)]
    next_call: u64,
    /// The call whose response is streaming out (see the module docs).
    #[serde(default)]
    live: Option<u64>,
    /// Events waiting for the live response to end.
    #[serde(default)]
    held: VecDeque<Held>,
    /// dup: the understanding is done.
    #[serde(default)]
    understood: bool,
    /// tot: the tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tot: Option<tot::Tree>,
    /// got: the graph.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    got: Option<got::Graph>,
    /// The model call whose input is being taken (tags the events it causes).
    #[serde(skip)]
    ctx: Option<u64>,
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
        run.message.clone_from(&start.message);
        match start.agent {
            Agent::Tot => run.tot = Some(tot::Tree::default()),
            Agent::Got => run.got = Some(got::Graph::new(start.got_adaptive)),
            _ => {}
        }
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
            message: String::new(),
            llm: Vec::new(),
            next_call: 0,
            live: None,
            held: VecDeque::new(),
            understood: false,
            tot: None,
            got: None,
            ctx: None,
            out: VecDeque::new(),
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
        match self.kind() {
            Agent::Dup | Agent::Tot | Agent::Got => {
                if !self.maybe_compact() {
                    self.begin();
                }
            }
            _ => self.think(),
        }
    }

    /// The agent's first step, or its next one after a threshold compaction.
    fn begin(&mut self) {
        match self.kind() {
            Agent::Dup if !self.understood => self.understand(),
            // Only a run's first step compacts for tot and got: their trees and graphs point
            // into the history, and a run's own steps are few.
            Agent::Tot => self.expand(),
            Agent::Got => self.plan_graph(),
            _ => self.think(),
        }
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
        self.out.pop_front()
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

    /// Continues a restored run. `last_event_id` is the last event of this run the host logged
    /// (events streamed after the checkpoint keep their ids). Re-issues the effects the run was
    /// waiting on, with new call ids; a model response cut by the restart is closed as
    /// `interrupted` and asked for again.
    pub fn resume(&mut self, last_event_id: u64) {
        self.seq.last_event_id = self.seq.last_event_id.max(last_event_id);
        // The sub-task response that was streaming out when the run last checkpointed (it does
        // so whenever one starts to) is closed right after what its clients saw: `llm_complete
        // interrupted` and its span's `node_exit`. The other cut responses had sent nothing;
        // what they had held goes with them.
        if let Some(live) = self.live {
            if let Some(LlmCall { lane: Some(id), .. }) = self.llm.iter().find(|c| c.id == live) {
                let id = id.clone();
                self.ctx = Some(live);
                self.close_node_response(&id, "interrupted");
                self.ctx = None;
            }
        }
        let inflight = std::mem::take(&mut self.llm);
        self.held
            .retain(|h| !h.call.is_some_and(|c| inflight.iter().any(|l| l.id == c)));
        self.live = None;
        self.flush();
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
            finish_reason: FinishReason::from("interrupted"),
        });
        self.response = Response::default();
        self.emit(Event::NodeExit {
            id: node.into(),
            result: NodeResult::Err("interrupted by a restart".into()),
        });
    }

    /// Asks again for what a lane's tool calls were waiting on (after a restart).
    fn reissue_tools(&mut self, lane: &Lane) {
        for c in self.calls.clone() {
            if &c.lane != lane {
                continue;
            }
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
                self.fail("cancelled".into(), "cancelled", None);
                Ok(())
            }
            Input::HostFailed { code, message } => {
                self.fail(message, &code, None);
                Ok(())
            }
            Input::Llm { call, delta } => {
                let lane = self.lane_of(call)?;
                self.ctx = Some(call);
                let result = self.delta(&lane, delta);
                self.ctx = None;
                self.settle(call);
                result
            }
            Input::LlmEnd { call } => {
                let lane = self.lane_of(call)?;
                self.llm.retain(|c| c.id != call);
                self.ctx = Some(call);
                let result = self.llm_end(&lane);
                self.ctx = None;
                self.settle(call);
                result
            }
            Input::LlmFailed { call, error } => {
                let lane = self.lane_of(call)?;
                self.llm.retain(|c| c.id != call);
                self.ctx = Some(call);
                let details =
                    json!({ "status": error.status(), "retryable": error.is_retryable() });
                match &lane {
                    None => self.fail(error.to_string(), "provider", Some(details)),
                    Some(id) => self.node_failed(id, error.to_string()),
                }
                self.ctx = None;
                self.settle(call);
                Ok(())
            }
            Input::ToolResult {
                call_id,
                result,
                is_error,
            } => self.tool_result(&call_id, cap_tool_result(result), is_error),
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

    fn lane_of(&self, call: u64) -> Result<Lane, EngineError> {
        self.llm
            .iter()
            .find(|c| c.id == call)
            .map(|c| c.lane.clone())
            .ok_or(EngineError::NoSuchLlmCall(call))
    }

    /// After an input of model call `call`: when the call is over, its response no longer
    /// holds the stream.
    fn settle(&mut self, call: u64) {
        if self.llm.iter().any(|c| c.id == call) {
            return;
        }
        let waiting = !self.held.is_empty();
        if self.live == Some(call) {
            self.live = None;
        } else if self
            .held
            .iter()
            .rev()
            .find(|h| h.call == Some(call))
            .is_some_and(|h| h.event.is_some())
        {
            // (Unless its end is marked already: `response_over` may have settled it.)
            self.held.push_back(Held {
                call: Some(call),
                event: None,
            });
        } else {
            return;
        }
        self.flush();
        if waiting && self.phase != Phase::Done {
            self.effect(Effect::Checkpoint);
        }
    }

    /// The response of the call being handled is closed (its `llm_complete` and span are out)
    /// and the call is over, so what the handler emits next — a node's completion, the next
    /// node's start — belongs to no response. Settled now, it queues behind what other calls
    /// held while this one streamed, instead of going out with this call's own events ahead of
    /// them: a node's start could otherwise overtake the completion of a node it depends on.
    fn response_over(&mut self) {
        let Some(call) = self.ctx else {
            return;
        };
        if self.llm.iter().any(|c| c.id == call) {
            return;
        }
        self.ctx = None;
        self.settle(call);
    }

    // --- outputs -------------------------------------------------------------------------

    fn emit(&mut self, event: Event) {
        let exited = match &event {
            Event::NodeExit { id, .. } => Some(id.clone()),
            _ => None,
        };
        self.put_out(event);
        // specs/README (loom): with `verbose`, `values` then `updates` follow each `node_exit`.
        if let (true, Some(node)) = (self.verbose, exited) {
            let state = self.state_snapshot();
            self.put_out(Event::Values {
                state: state.clone(),
            });
            self.put_out(Event::Updates { id: node, state });
        }
    }

    /// Sends an event now if it does not cut into another call's response, else holds it.
    fn put_out(&mut self, event: Event) {
        let now = match self.live {
            None => self.held.is_empty(),
            Some(live) => self.ctx == Some(live),
        };
        if now {
            if self.live.is_none() && self.ctx.is_some() {
                self.live = self.ctx;
                self.went_live();
            }
            let stamped = self.seq.stamp(event);
            self.out.push_back(Output::Event(stamped));
        } else {
            self.held.push_back(Held {
                call: self.ctx,
                event: Some(event),
            });
            self.flush();
        }
    }

    /// Sends held events in order, as far as the live response allows.
    fn flush(&mut self) {
        loop {
            let live = self.live;
            let Some(pos) = self
                .held
                .iter()
                .position(|h| live.is_none() || h.call == live)
            else {
                return;
            };
            let Some(h) = self.held.remove(pos) else {
                return;
            };
            match h.event {
                None => {
                    if self.live == h.call {
                        self.live = None;
                    }
                }
                Some(event) => {
                    if self.live.is_none() && h.call.is_some() {
                        self.live = h.call;
                        self.went_live();
                    }
                    let stamped = self.seq.stamp(event);
                    self.out.push_back(Output::Event(stamped));
                }
            }
        }
    }

    /// A sub-task's response started to stream out: checkpoint, so that a restart knows whose
    /// span to close (the run's own responses open their spans before their checkpoint).
    fn went_live(&mut self) {
        let node = self
            .live
            .is_some_and(|l| self.llm.iter().any(|c| c.id == l && c.lane.is_some()));
        if node {
            self.effect(Effect::Checkpoint);
        }
    }

    /// The run's state as the `values`/`updates` snapshots show it.
    fn state_snapshot(&self) -> Value {
        let mut state = json!({
            "messages": self.session.history,
            "iteration": self.iteration,
            "usage": self.total,
        });
        if let Some(tree) = &self.tot {
            state["tree"] = tree.snapshot();
        }
        if let Some(graph) = &self.got {
            state["graph"] = graph.snapshot();
        }
        state
    }

    fn effect(&mut self, effect: Effect) {
        self.out.push_back(Output::Effect(effect));
    }

    fn tool(&self, name: &str) -> Option<&ToolInfo> {
        self.tools.iter().find(|t| t.def.name == name)
    }

    fn tool_defs(&self) -> Vec<ToolDef> {
        self.tools.iter().map(|t| t.def.clone()).collect()
    }

    /// The agent this run is; one the engine does not know runs as react.
    fn kind(&self) -> Agent {
        Agent::from(self.agent.as_str())
    }

    /// The system prompt with an agent's instruction after the persona.
    fn system_with(&self, instruction: &str) -> String {
        format!("{}\n\n{instruction}", self.config.system_prompt)
    }

    /// Asks the model; the lane's inputs come back under the returned call id.
    fn call_llm(&mut self, lane: Lane, request: ChatRequest) -> u64 {
        self.next_call += 1;
        let call = self.next_call;
        self.llm.push(LlmCall { id: call, lane });
        self.effect(Effect::CallLlm { call, request });
        call
    }

    // --- think -----------------------------------------------------------------------------

    /// Starts a threshold compaction if the history is past the limit (once per step).
    fn maybe_compact(&mut self) -> bool {
        let estimate = self.estimate();
        let limit = (self.config.context_window as f64 * self.config.compact_at) as u64;
        if estimate > limit && !self.compacted_this_step {
            if let Some(cut) = context::cut_point(&self.session.history, self.keep_budget()) {
                self.phase = Phase::Compacting { cut, manual: false };
                let req = context::summary_request(&self.config.model, &self.session.history, cut);
                self.call_llm(None, req);
                return true;
            }
        }
        false
    }

    /// The name of the node whose model call may call tools: react `think`, dup `plan`, tot
    /// `act`.
    fn think_node(&self) -> &'static str {
        match self.kind() {
            Agent::Dup => "plan",
            Agent::Tot => "act",
            _ => "think",
        }
    }

    fn think(&mut self) {
        if self.maybe_compact() {
            return;
        }
        self.compacted_this_step = false;
        self.phase = Phase::Thinking;
        self.response = Response::default();
        self.emit(Event::NodeEnter {
            id: self.think_node().into(),
        });
        let req = match self.kind() {
            Agent::Dup => self.dup_plan_request(),
            _ => ChatRequest {
                model: self.config.model.clone(),
                system: Some(self.config.system_prompt.clone()),
                messages: self.session.history.clone(),
                tools: self.tool_defs(),
                max_tokens: self.config.max_tokens,
                temperature: None,
            },
        };
        self.effect(Effect::Checkpoint);
        self.call_llm(None, req);
    }

    /// A model call of the run's own lane that offers no tools (understand, expand, evaluate,
    /// plan): `instruction` after the persona, the history as the conversation.
    fn ask(&mut self, instruction: &str) {
        let req = ChatRequest {
            model: self.config.model.clone(),
            system: Some(self.system_with(instruction)),
            messages: self.session.history.clone(),
            tools: Vec::new(),
            max_tokens: self.config.max_tokens,
            temperature: None,
        };
        self.response = Response::default();
        self.effect(Effect::Checkpoint);
        self.call_llm(None, req);
    }

    /// Tokens the turns kept verbatim by a compaction may take.
    fn keep_budget(&self) -> u64 {
        (self.config.context_window as f64 * context::KEEP_SHARE) as u64
    }

    fn estimate(&self) -> u64 {
        context::estimate(
            &self.config.system_prompt,
            &self.session.history,
            &self.tool_defs(),
        )
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

    /// How the current model call of `lane` streams, if it has one.
    fn stream_of(&self, lane: &Lane) -> Option<Stream> {
        let shown = |node: &str, tools: bool| {
            Some(Stream {
                node: node.into(),
                visible: true,
                tools,
            })
        };
        match lane {
            None => match &self.phase {
                Phase::Thinking => shown(self.think_node(), !self.tot_final()),
                Phase::Explaining { .. } => shown("explain", false),
                Phase::Understanding => shown("understand", false),
                Phase::Expanding => shown("think_expand", false),
                Phase::Evaluating => shown("think_evaluate", false),
                Phase::Planning => shown("plan_graph", false),
                Phase::Compacting { .. } => Some(Stream {
                    node: String::new(),
                    visible: false,
                    tools: false,
                }),
                Phase::Acting | Phase::Done | Phase::Executing => None,
            },
            Some(id) => self.node_stream(id),
        }
    }

    fn take_response(&mut self, lane: &Lane) -> Response {
        match lane {
            None => std::mem::take(&mut self.response),
            Some(id) => self
                .got
                .as_mut()
                .and_then(|g| g.node_mut(id))
                .map(|n| std::mem::take(&mut n.response))
                .unwrap_or_default(),
        }
    }

    fn put_response(&mut self, lane: &Lane, response: Response) {
        match lane {
            None => self.response = response,
            Some(id) => {
                if let Some(n) = self.got.as_mut().and_then(|g| g.node_mut(id)) {
                    n.response = response;
                }
            }
        }
    }

    /// Whether a tool call id is in use by another lane's open calls: providers number calls
    /// per response, so two sub-tasks' calls may share an id, and ids route results and
    /// approvals.
    fn call_id_taken(&self, id: &str, lane: &Lane) -> bool {
        self.calls.iter().any(|c| c.call.id == id)
            || self.got.as_ref().is_some_and(|g| {
                g.nodes.iter().any(|n| {
                    Some(&n.id) != lane.as_ref() && n.response.calls.iter().any(|c| c.id == id)
                })
            })
    }

    fn delta(&mut self, lane: &Lane, delta: Delta) -> Result<(), EngineError> {
        let Some(stream) = self.stream_of(lane) else {
            return Err(EngineError::Unexpected(
                "LLM output while no LLM call is running",
            ));
        };
        if let Some(id) = lane {
            self.node_span(id);
        }
        let mut response = self.take_response(lane);
        let node = stream.node;
        match delta {
            Delta::Text(t) => {
                response.text.push_str(&t);
                if stream.visible {
                    self.emit(Event::MessageChunk {
                        content: t,
                        id: node,
                    });
                }
            }
            Delta::Reasoning(t) if stream.visible => {
                response.reasoning.push_str(&t);
                self.emit(Event::ReasoningChunk {
                    content: t,
                    id: node,
                });
            }
            Delta::ToolCallStart { id, name, .. } if stream.tools => {
                let mut id = id;
                if lane.is_some() && self.call_id_taken(&id, lane) {
                    let base = id.clone();
                    let mut n = 2;
                    while self.call_id_taken(&id, lane) || response.calls.iter().any(|c| c.id == id)
                    {
                        id = format!("{base}_{n}");
                        n += 1;
                    }
                }
                response.calls.push(ToolCall {
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
            Delta::ToolCallArgs { index, fragment } if stream.tools => {
                if let Some(call) = response.calls.get_mut(index as usize) {
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
                if let Some(call) = response.calls.get_mut(index as usize) {
                    call.signature = Some(signature);
                }
            }
            Delta::ToolCallEnd { index, .. } if stream.tools => {
                if let Some(call) = response.calls.get(index as usize) {
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
                response.usage = Some(Usage {
                    prompt_tokens,
                    completion_tokens,
                    total_tokens,
                });
            }
            Delta::Finish(reason) => response.finish = Some(reason.as_str().into()),
            Delta::Error(e) => {
                self.put_response(lane, response);
                self.llm.retain(|c| Some(c.id) != self.ctx);
                match lane {
                    None => {
                        let details =
                            json!({ "status": e.status(), "retryable": e.is_retryable() });
                        self.fail(e.to_string(), "provider", Some(details));
                    }
                    Some(id) => self.node_failed(id, e.to_string()),
                }
                return Ok(());
            }
            // Reasoning of a summary, tool calls during an explanation: not part of the answer.
            _ => {}
        }
        self.put_response(lane, response);
        Ok(())
    }

    /// Accounts a finished response's usage: `usage` event, last and total.
    fn account(&mut self, usage: Option<Usage>) {
        if let Some(u) = usage {
            self.last_usage = Some(u);
            self.total.add(&u);
            self.emit(Event::Usage(u));
        }
    }

    /// Emits `llm_complete` for a finished response: its reason, or one inferred from whether
    /// it called tools.
    fn emit_complete(&mut self, response: &Response) {
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
            tool_calls: names,
            finish_reason: FinishReason::from(finish.as_str()),
        });
    }

    fn account_usage(&mut self) {
        let usage = self.response.usage;
        self.account(usage);
    }

    fn llm_end(&mut self, lane: &Lane) -> Result<(), EngineError> {
        if let Some(id) = lane {
            self.node_llm_end(id);
            return Ok(());
        }
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
                    self.begin();
                }
                Ok(())
            }
            Phase::Understanding => {
                self.understood_it();
                Ok(())
            }
            Phase::Expanding => {
                self.expanded();
                Ok(())
            }
            Phase::Evaluating => {
                self.evaluated();
                Ok(())
            }
            Phase::Planning => {
                self.planned();
                Ok(())
            }
            Phase::Acting | Phase::Done | Phase::Executing => Err(EngineError::Unexpected(
                "an LLM end while no LLM call is running",
            )),
        }
    }

    /// Closes the run's own response: counts it, `usage`, `llm_complete`, into the history
    /// when `record`, `context_info`. `count`: whether it is one of the round trips
    /// [`Config::max_iterations`] caps.
    fn complete_response(&mut self, record: bool, count: bool) -> Response {
        if count {
            self.iteration += 1;
        }
        self.session.iterations += 1;
        self.account_usage();
        let response = std::mem::take(&mut self.response);
        self.emit_complete(&response);
        if record {
            self.session.history.push(ChatMessage::Assistant {
                content: response.text.clone(),
                tool_calls: response.calls.clone(),
            });
        }
        let info = self.context_info();
        self.emit(info);
        response
    }

    fn finish_thinking(&mut self) {
        let response = self.complete_response(true, true);
        if self.kind() == Agent::Tot {
            return self.tot_acted(response);
        }
        self.emit(Event::NodeExit {
            id: self.think_node().into(),
            result: NodeResult::Ok,
        });
        self.last_content = response.text;
        self.last_tools = response.calls.iter().map(|c| c.name.clone()).collect();
        if response.calls.is_empty() {
            self.end_run();
        } else {
            self.act(None, response.calls, true);
        }
    }

    // --- act -------------------------------------------------------------------------------

    /// Runs a lane's tool calls: each starts at once, or waits for approval (one asked at a
    /// time across the run). `span`: open an `act` node span (react, dup); tot's `act` is
    /// already open, and a GoT node's tools run between its responses' spans.
    fn act(&mut self, lane: Lane, calls: Vec<ToolCall>, span: bool) {
        match &lane {
            None => {
                self.phase = Phase::Acting;
                if span {
                    self.emit(Event::NodeEnter { id: "act".into() });
                }
            }
            Some(id) => {
                if let Some(n) = self.got.as_mut().and_then(|g| g.node_mut(id)) {
                    n.state = got::NodeState::Acting;
                }
            }
        }
        self.calls.retain(|c| c.lane != lane);
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
                lane: lane.clone(),
                asked_at_ms: None,
            });
        }
        for id in ready {
            self.start_tool(&id);
        }
        self.next_approval();
        self.effect(Effect::Checkpoint);
        self.maybe_done_acting(&lane);
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
        let now = self.now_ms;
        let Some(c) = self.calls.iter_mut().find(|c| c.call.id == call_id) else {
            return;
        };
        c.asked_at_ms = Some(now);
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

    /// Whether a lane is running tools (and so takes tool results and approvals).
    fn lane_acting(&self, lane: &Lane) -> bool {
        match lane {
            None => self.phase == Phase::Acting,
            Some(id) => self
                .got
                .as_ref()
                .and_then(|g| g.node(id))
                .is_some_and(|n| n.state == got::NodeState::Acting),
        }
    }

    fn tool_result(
        &mut self,
        call_id: &str,
        result: String,
        is_error: bool,
    ) -> Result<(), EngineError> {
        let lane = self
            .calls
            .iter()
            .find(|c| c.call.id == call_id && c.state == CallState::Running)
            .map(|c| c.lane.clone());
        let Some(lane) = lane.filter(|l| self.lane_acting(l)) else {
            return Err(EngineError::NoSuchCall(call_id.into()));
        };
        self.finish_call(call_id, result, is_error);
        self.effect(Effect::Checkpoint);
        self.maybe_done_acting(&lane);
        Ok(())
    }

    /// An answer to an approval request; `refusal` is the result the call gets when nobody
    /// decided (see [`Input::Refuse`]) instead of a denial by the user.
    fn approval(
        &mut self,
        d: ApprovalDecision,
        refusal: Option<String>,
    ) -> Result<(), EngineError> {
        if self.got.is_none() && self.phase != Phase::Acting {
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
        if !self.lane_acting(&call.lane) {
            return Err(EngineError::NoPendingApproval);
        }
        let (call_id, name, lane) = (
            call.call.id.clone(),
            call.call.name.clone(),
            call.lane.clone(),
        );
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
        let denied = match (refusal, &message) {
            (Some(reason), _) => reason,
            (None, Some(m)) => format!("denied by the user: {m}"),
            (None, None) => "denied by the user".to_string(),
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
                if self.got.is_some() {
                    self.got_stop();
                    return Ok(());
                }
            }
            Review::Explain => {
                self.explain(&lane, &call_id);
                return Ok(());
            }
        }
        self.next_approval();
        self.effect(Effect::Checkpoint);
        self.maybe_done_acting(&lane);
        Ok(())
    }

    /// `explain`: the model explains the pending call in its lane's conversation, then the same
    /// approval is asked again.
    fn explain(&mut self, lane: &Lane, call_id: &str) {
        let c = self.calls.iter().find(|c| c.call.id == call_id);
        let args = c.map(|c| c.call.arguments.clone()).unwrap_or_default();
        let question = format!(
            "Before I decide: explain in two or three sentences what calling the tool \
             `{}` with arguments {} will do, and why it is needed.",
            c.map(|c| c.call.name.as_str()).unwrap_or_default(),
            args
        );
        let (mut messages, system) = match lane {
            None => {
                self.phase = Phase::Explaining {
                    call_id: call_id.into(),
                };
                self.response = Response::default();
                (
                    self.session.history.clone(),
                    self.config.system_prompt.clone(),
                )
            }
            Some(id) => {
                let system = self.system_with(prompts::GOT_NODE);
                let Some(n) = self.got.as_mut().and_then(|g| g.node_mut(id)) else {
                    return;
                };
                n.state = got::NodeState::Explaining {
                    call_id: call_id.into(),
                };
                n.response = Response::default();
                (n.messages.clone(), system)
            }
        };
        // The question goes after the pending call's turn without answering it, so the
        // history stays valid for every provider: the call is still open.
        messages.pop();
        messages.push(ChatMessage::user(question));
        let req = ChatRequest {
            model: self.config.model.clone(),
            system: Some(system),
            messages,
            tools: Vec::new(),
            max_tokens: self.config.max_tokens,
            temperature: None,
        };
        self.call_llm(lane.clone(), req);
    }

    fn maybe_done_acting(&mut self, lane: &Lane) {
        if !self.lane_acting(lane)
            || self
                .calls
                .iter()
                .any(|c| &c.lane == lane && !matches!(c.state, CallState::Done { .. }))
        {
            return;
        }
        let (mine, rest): (Vec<Call>, Vec<Call>) = std::mem::take(&mut self.calls)
            .into_iter()
            .partition(|c| &c.lane == lane);
        self.calls = rest;
        let mut results = Vec::new();
        for c in mine {
            if let CallState::Done { result, is_error } = c.state {
                if !is_error && self.config.pause_after.contains(&c.call.name) {
                    self.paused = true;
                }
                results.push(ToolResult {
                    call_id: c.call.id,
                    name: c.call.name,
                    content: result,
                    is_error,
                });
            }
        }
        match lane {
            Some(id) => self.node_acted(id, results),
            None => match self.kind() {
                Agent::Dup => self.observe(results),
                Agent::Tot => self.tot_step_done(results),
                _ => {
                    self.session
                        .history
                        .extend(results.into_iter().map(ChatMessage::Tool));
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
            },
        }
    }

    // --- the end ---------------------------------------------------------------------------

    fn end_run(&mut self) {
        // A run that ends while sub-tasks still stream (no-exit, pause): what they said so far
        // is closed, what they were holding goes out first.
        if !self.llm.is_empty() || !self.held.is_empty() {
            self.close_streams("cancelled");
        }
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

    /// Ends every model call in flight: the sub-task response streaming out gets its
    /// `llm_complete` with what it said; what the others said was never sent and is dropped;
    /// every other held event goes out.
    fn close_streams(&mut self, finish: &str) {
        let inflight = std::mem::take(&mut self.llm);
        if let Some(live) = self.live {
            if let Some(LlmCall { lane: Some(id), .. }) = inflight.iter().find(|c| c.id == live) {
                let saved = self.ctx.replace(live);
                self.close_node_response(&id.clone(), finish);
                self.ctx = saved;
            }
        }
        self.held
            .retain(|h| !h.call.is_some_and(|c| inflight.iter().any(|l| l.id == c)));
        self.live = None;
        self.flush();
    }

    fn fail(&mut self, message: String, code: &str, details: Option<Value>) {
        let finish = if code == "cancelled" {
            "cancelled"
        } else {
            "error"
        };
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
            let saved = self.ctx;
            self.ctx = main_call.or(saved);
            self.emit(Event::LlmComplete {
                content: response.text.clone(),
                tool_calls: Vec::new(),
                finish_reason: FinishReason::from(finish),
            });
            self.ctx = saved;
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
            code: Some(code.into()),
            id: None,
            details,
        });
        self.effect(Effect::Checkpoint);
        self.effect(Effect::Finished);
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
