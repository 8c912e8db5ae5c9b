//! got's answers to the shared loop: its own steps (`plan_graph`, `execute_graph`) and its
//! lanes, one per sub-task, named by the graph node's id.

use serde_json::Value;

use super::super::ending::Cut;
use super::super::responses::{Response, Stream};
use super::super::steps::{Lanes, Steps};
use super::super::{prompts, EngineError, Run};
use super::{NodeState, Step};
use crate::provider::{ChatMessage, ToolResult};

/// got's answers to the shared loop.
pub(in crate::engine) struct GotSteps;

impl Steps for GotSteps {
    fn begin(&self, run: &mut Run) {
        // Only a run's first step compacts for got: the graph's briefs quote the request.
        run.plan_graph();
    }

    fn own_stream(&self, run: &Run) -> Option<Stream> {
        match run.agent.got()?.step {
            Step::Planning => Some(Stream {
                node: "plan_graph".into(),
                visible: true,
                tools: false,
            }),
            // The nodes' responses stream in their own lanes.
            Step::Executing => None,
        }
    }

    fn own_end(&self, run: &mut Run) -> Result<(), EngineError> {
        match run.agent.got().map(|g| g.step) {
            Some(Step::Planning) => {
                run.planned();
                Ok(())
            }
            _ => Err(EngineError::Unexpected(
                "an LLM end while no LLM call is running",
            )),
        }
    }

    fn own_resume(&self, run: &mut Run) {
        match run.agent.got().map(|g| g.step) {
            Some(Step::Planning) => {
                run.interrupted("plan_graph");
                run.plan_graph();
            }
            Some(Step::Executing) => run.got_resume(),
            None => {}
        }
    }

    fn snapshot(&self, run: &Run, state: &mut Value) {
        state["graph"] = run.graph().snapshot();
    }

    fn lanes(&self) -> Option<&'static dyn Lanes> {
        Some(&GotSteps)
    }
}

impl Lanes for GotSteps {
    fn stream(&self, run: &Run, id: &str) -> Option<Stream> {
        run.node_stream(id)
    }

    fn response<'r>(&self, run: &'r mut Run, id: &str) -> Option<&'r mut Response> {
        run.node_mut(id).map(|n| &mut n.response)
    }

    fn streams(&self, run: &mut Run, id: &str) {
        run.node_span(id);
    }

    fn ended(&self, run: &mut Run, id: &str) {
        run.node_llm_end(id);
    }

    fn failed(&self, run: &mut Run, id: &str, error: String) {
        run.node_failed(id, error);
    }

    fn cut(&self, run: &mut Run, id: &str, finish: Cut) {
        run.close_node_response(id, finish);
    }

    fn acting(&self, run: &Run, id: &str) -> bool {
        run.graph()
            .node(id)
            .is_some_and(|n| n.state == NodeState::Acting)
    }

    fn act(&self, run: &mut Run, id: &str) {
        if let Some(n) = run.node_mut(id) {
            n.state = NodeState::Acting;
        }
    }

    fn acted(&self, run: &mut Run, id: &str, results: Vec<ToolResult>) {
        run.node_acted(id, results);
    }

    fn explain(
        &self,
        run: &mut Run,
        id: &str,
        call_id: &str,
    ) -> Option<(Vec<ChatMessage>, String)> {
        let system = run.system_with(prompts::GOT_NODE);
        let n = run.node_mut(id)?;
        n.state = NodeState::Explaining {
            call_id: call_id.into(),
        };
        n.response = Response::default();
        Some((n.messages.clone(), system))
    }

    fn holds_call(&self, run: &Run, call_id: &str, lane: &str) -> bool {
        run.graph()
            .nodes
            .iter()
            .any(|n| n.id != lane && n.response.calls.iter().any(|c| c.id == call_id))
    }

    fn stop(&self, run: &mut Run) {
        run.got_stop();
    }
}
