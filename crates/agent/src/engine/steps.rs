//! What an agent brings to the loop every agent shares: the points where agents differ, and
//! nothing else. The shared rooms (`responses`, `acting`, `lifecycle`) ask the run's agent
//! through these two traits and never name one; each agent answers in its own module, and
//! `agent_state` is the table from an agent to its answers.
//!
//! The defaults are react's: an agent overrides what it does otherwise. An agent with steps of
//! its own (dup's `understand`, tot's `think_expand` …) keeps which one it is at in its own
//! state while the run is in [`Phase::Own`](super::Phase::Own); one that runs conversations
//! beside the run's own (GoT's sub-tasks) answers for them through [`Lanes`].

use serde_json::Value;

use super::ending::Cut;
use super::responses::{Response, Stream};
use super::{EngineError, Run};
use crate::provider::{ChatMessage, ChatRequest, ToolResult};

/// One agent's answers to the shared loop. Implemented by a unit value per agent; every method
/// takes the run it acts on.
pub(super) trait Steps: Sync {
    /// The agent's first step (after the compaction a full history asks for first).
    fn begin(&self, run: &mut Run);

    /// The node span of the response that may call tools (react `think`, dup `plan`, tot
    /// `act`).
    fn think_node(&self) -> &'static str {
        "think"
    }

    /// The request of that response.
    fn think_request(&self, run: &Run) -> ChatRequest {
        run.think_request()
    }

    /// Whether that response is offered the tools.
    fn think_tools(&self, _run: &Run) -> bool {
        true
    }

    /// That response is in (counted, in the history).
    fn thought(&self, run: &mut Run, response: Response) {
        run.answer_or_act(response);
    }

    /// The tools the run's own lane ran are done.
    fn acted(&self, run: &mut Run, results: Vec<ToolResult>) {
        run.back_to_thinking(results);
    }

    /// A restart cut that response: close it, ask again.
    fn rethink(&self, run: &mut Run) {
        run.rethink();
    }

    /// How the response of the agent's own step streams; `None` when that step streams
    /// nothing (GoT's `execute_graph`, whose responses are its lanes').
    fn own_stream(&self, _run: &Run) -> Option<Stream> {
        None
    }

    /// The response of the agent's own step is in.
    fn own_end(&self, _run: &mut Run) -> Result<(), EngineError> {
        Err(EngineError::Unexpected(
            "an LLM end while no LLM call is running",
        ))
    }

    /// A restart found the run in the agent's own step: ask again for what it waited on.
    fn own_resume(&self, _run: &mut Run) {}

    /// Adds the agent's state to the `values`/`updates` snapshots.
    fn snapshot(&self, _run: &Run, _state: &mut Value) {}

    /// The conversations the agent runs beside the run's own, if it runs any.
    fn lanes(&self) -> Option<&'static dyn Lanes> {
        None
    }
}

/// The lanes `Some(id)` of an agent that runs conversations of its own beside the run's (GoT:
/// one per sub-task). The shared loop streams, counts and routes their model and tool calls;
/// where each lane is, and what follows its steps, is the agent's.
pub(super) trait Lanes: Sync {
    /// How lane `id`'s current model call streams, if it has one.
    fn stream(&self, run: &Run, id: &str) -> Option<Stream>;

    /// The response lane `id` is streaming.
    fn response<'r>(&self, run: &'r mut Run, id: &str) -> Option<&'r mut Response>;

    /// A delta of lane `id` is about to go out (its first opens the response's span).
    fn streams(&self, run: &mut Run, id: &str);

    /// Lane `id`'s model call ended.
    fn ended(&self, run: &mut Run, id: &str);

    /// Lane `id`'s model call failed.
    fn failed(&self, run: &mut Run, id: &str, error: String);

    /// Closes lane `id`'s response cut by the end of the run or a restart.
    fn cut(&self, run: &mut Run, id: &str, finish: Cut);

    /// Whether lane `id` is running tools (and so takes tool results and approvals).
    fn acting(&self, run: &Run, id: &str) -> bool;

    /// Lane `id` starts running tools.
    fn act(&self, run: &mut Run, id: &str);

    /// Lane `id`'s tools are done.
    fn acted(&self, run: &mut Run, id: &str, results: Vec<ToolResult>);

    /// Lane `id` is to explain its call `call_id`: its conversation and system prompt, the
    /// lane set to stream the explanation.
    fn explain(&self, run: &mut Run, id: &str, call_id: &str)
        -> Option<(Vec<ChatMessage>, String)>;

    /// Whether a response streaming in a lane other than `lane` has a call `call_id`.
    fn holds_call(&self, run: &Run, call_id: &str, lane: &str) -> bool;

    /// The user stopped the run (`no-exit`) while lanes run: the agent ends it.
    fn stop(&self, run: &mut Run);
}
