//! What a run is set up with: its settings ([`Config`]), its tools ([`ToolInfo`]), the session
//! it continues ([`Session`]) and how it starts ([`Start`]).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use weft_protocol::json::RawJson;
use weft_protocol::Agent;

use crate::provider::{ChatMessage, ToolDef};
use crate::read::{Fields, FromValue, Read};

/// How a run behaves. Serialized into every checkpoint, so a restored run keeps its settings;
/// a field missing from an older checkpoint takes its default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// The agent the run was asked for by name: one of the four, or an operator's variant of
    /// one (the worker's `AGENTS`). The host picks the provider and key of the run's model
    /// calls by it, so a run restored from its checkpoint calls the same one. Empty (older
    /// checkpoints): the host's default model.
    pub agent: String,
    /// Model name passed to the provider (empty: the provider config's model).
    pub model: String,
    /// The persona every model call starts with; the agents add their step's instruction
    /// after it. The host decides it (the worker: a loom `SOUL.md`, the agent's own prompt,
    /// `SYSTEM_PROMPT`, then [`DEFAULT_SYSTEM_PROMPT`]).
    pub system_prompt: String,
    /// Sampling temperature of every model call; `None` leaves the provider's default.
    pub temperature: Option<f32>,
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

/// The persona of a run nobody gave one.
pub const DEFAULT_SYSTEM_PROMPT: &str =
    "You are a helpful assistant. Use the tools when they help; keep answers short.";

impl Default for Config {
    fn default() -> Self {
        Config {
            agent: String::new(),
            model: String::new(),
            system_prompt: DEFAULT_SYSTEM_PROMPT.into(),
            temperature: None,
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
    /// The state of the session's thread with its remote agents (AG-UI's `state`: their last
    /// `STATE_SNAPSHOT` with every `STATE_DELTA` since applied), sent back with the next run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_state: Option<RawJson>,
}

/// How a run starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    /// Stamped on every event of the run, and the prefix of its `checkpoint` ids.
    pub run_id: String,
    /// Stamped on every event of the run (its envelope's `session_id`).
    pub session_id: String,
    /// Goes into the history as the run's user turn; the agents' prompts quote it.
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

impl FromValue for Config {
    /// Every field defaults (`#[serde(default)]` on the struct): to [`Config::default`]'s.
    fn from_value(v: &Value) -> Read<Self> {
        let f = Fields::of("config", v)?;
        let d = Config::default();
        Ok(Config {
            agent: f.or("agent", d.agent)?,
            model: f.or("model", d.model)?,
            system_prompt: f.or("system_prompt", d.system_prompt)?,
            temperature: f.or("temperature", d.temperature)?,
            max_iterations: f.or("max_iterations", d.max_iterations)?,
            context_window: f.or("context_window", d.context_window)?,
            compact_at: f.or("compact_at", d.compact_at)?,
            max_tokens: f.or("max_tokens", d.max_tokens)?,
            pause_after: f.or("pause_after", d.pause_after)?,
            tot_candidates: f.or("tot_candidates", d.tot_candidates)?,
            tot_max_depth: f.or("tot_max_depth", d.tot_max_depth)?,
            tot_threshold: f.or("tot_threshold", d.tot_threshold)?,
            got_max_nodes: f.or("got_max_nodes", d.got_max_nodes)?,
            got_max_parallel: f.or("got_max_parallel", d.got_max_parallel)?,
        })
    }
}

impl FromValue for ToolInfo {
    fn from_value(v: &Value) -> Read<Self> {
        let f = Fields::of("tool info", v)?;
        Ok(ToolInfo {
            def: f.req("def")?,
            needs_approval: f.req("needs_approval")?,
            client: f.req("client")?,
        })
    }
}

impl FromValue for Session {
    fn from_value(v: &Value) -> Read<Self> {
        let f = Fields::of("session", v)?;
        Ok(Session {
            history: f.req("history")?,
            always_allowed: f.req("always_allowed")?,
            iterations: f.req("iterations")?,
            remote_state: f.req("remote_state")?,
        })
    }
}

impl Session {
    /// A session state as stored (its `Serialize`), read back.
    pub fn from_json(v: &Value) -> Result<Session, String> {
        Session::from_value(v)
    }
}
