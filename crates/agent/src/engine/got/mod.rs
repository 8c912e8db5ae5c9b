//! got (graph of thoughts): `plan_graph` → `execute_graph`, and the adaptive expansion.
//!
//! - `plan_graph` asks the model, without tools, for a DAG of sub-tasks as JSON: `{"nodes":
//!   [{"id", "task", "deps": [...]}]}` (`depends_on`/`dependencies` and a top-level `edges` list
//!   of `[from, to]` or `{from, to}` are read too). The plan is validated — at least one and at
//!   most [`Config::got_max_nodes`] nodes, ids unique, non-empty and short, every task given,
//!   every dependency a known node, no cycles — and a bad one is asked for again once, with the
//!   reason; a second bad plan ends the run with an `error` (`invalid_plan`) saying what was
//!   wrong. A good one is announced with `got_plan {node_count, edge_count, node_ids}`.
//! - `execute_graph` runs every ready node — all its dependencies finished — as a ReAct
//!   sub-task in a lane of its own: a conversation of one user turn (the node's task, the whole
//!   request, and the results it builds on) under a sub-task instruction, with every tool,
//!   looping `think` → tools until a reply without tool calls (or [`Config::max_iterations`]
//!   steps). Up to [`Config::got_max_parallel`] nodes run at once, their model calls
//!   outstanding together (see the module docs of `engine` for how their events stay
//!   readable). Their events are streamed too, between `got_node_start` and `got_node_complete
//!   {result_summary}` or `got_node_failed {error}`: each model response of a sub-task is one
//!   `execute_graph` node span (`node_enter`, `message_chunk`s with the graph node's id as
//!   their `id`, tool calls, `usage`, `llm_complete`, `node_exit`), its tools' events and
//!   approvals follow on the shared path. One span per response rather than one around the
//!   whole execution: loom spans do not nest, and dialects key a message on its span (agentloop
//!   gives every chunk of a span one message id), so each response needs its own. A
//!   sub-task's conversation is scratch, not the session's: it gets no `context_info` and no
//!   compaction.
//! - A node fails when its model call fails. Its dependents still run, told that it failed, so
//!   the answer can say what could not be done; the run fails (`graph_failed`) only when every
//!   node that gives the answer failed.
//! - The reply aggregates the sinks (the nodes nothing depends on): the one sink's result, or
//!   each sink's task and result in plan order. It goes into the history as the run's one
//!   assistant turn; the plan and the sub-tasks' conversations do not.
//! - With `got_adaptive`, a node is first judged: one model call asking whether it is too
//!   complex to do in one go, and if so for a sub-graph. A valid sub-graph of at least two nodes
//!   replaces the node — its sources take the node's dependencies, the node's dependents depend
//!   on its sinks — announced by `got_expand {node_id, nodes_added, edges_added}` (edges counted
//!   are those added: inside the sub-graph and to its neighbours). Sub-nodes are named
//!   `<node>.<id>` and are not judged again, so expansion is one level deep; a judgement that is
//!   not valid JSON, or a sub-graph that is not valid, leaves the node as it is.
//!
//! [`Config::got_max_nodes`]: super::Config::got_max_nodes
//! [`Config::got_max_parallel`]: super::Config::got_max_parallel
//! [`Config::max_iterations`]: super::Config::max_iterations

mod node;
mod plan;
mod steps;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use weft_protocol::event::NodeResult;
use weft_protocol::Event;

use super::ending::{Cut, ErrorCode};
use super::responses::Response;
use super::steps::OwnStep;
use super::{prompts, Effect, Phase, Run};
use crate::provider::ChatMessage;
use crate::read::{unknown_variant, variant, Fields, FromValue, Read};
use plan::{parse_plan, Planned};
pub(super) use steps::GotSteps;

/// What only a got run keeps: its graph, and which of its own steps it is at.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Got {
    pub(super) graph: Graph,
    /// Meaningful while the run is at a step of got's own ([`Phase::Own`]).
    pub(super) step: Step,
}

/// got's steps of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Streaming the plan.
    Planning,
    /// The graph's nodes are running, each in its own lane.
    Executing,
}

impl OwnStep for Step {
    const ALL: &'static [Self] = &[Step::Planning, Step::Executing];

    fn as_str(self) -> &'static str {
        match self {
            Step::Planning => "Planning",
            Step::Executing => "Executing",
        }
    }
}

impl Got {
    pub(super) fn new(adaptive: bool) -> Self {
        Got::restored(Graph::new(adaptive))
    }

    pub(super) fn restored(graph: Graph) -> Self {
        Got {
            graph,
            step: Step::Planning,
        }
    }
}

/// The sub-tasks of a GoT run, and how its plan was arrived at (a bad plan is asked for again
/// once).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Graph {
    pub(super) nodes: Vec<Node>,
    adaptive: bool,
    /// Plans refused so far (a bad plan is asked for again once).
    rejections: u32,
    /// Why the last plan was refused.
    rejected: Option<String>,
}

/// What [`Run::graph`] reads in a run of another agent.
static NO_GRAPH: Graph = Graph {
    nodes: Vec::new(),
    adaptive: false,
    rejections: 0,
    rejected: None,
};

/// One sub-task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Node {
    pub(super) id: String,
    task: String,
    deps: Vec<String>,
    pub(super) state: NodeState,
    /// The sub-task's own conversation.
    pub(super) messages: Vec<ChatMessage>,
    pub(super) response: Response,
    /// Its `think` steps so far.
    iteration: u32,
    /// The current response's `execute_graph` span is open (its first delta came).
    #[serde(default)]
    span: bool,
    /// The result when done, the error when failed.
    result: String,
    /// Made by an adaptive expansion: not judged again.
    sub: bool,
}

/// Where a sub-task is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum NodeState {
    /// Its dependencies are not all finished (or too many nodes run).
    Waiting,
    /// Adaptive: the model judges whether to split it.
    Judging,
    /// Its model call is streaming.
    Thinking,
    /// The model explains one of its calls awaiting approval.
    Explaining { call_id: String },
    /// Its tools run (or wait for approval).
    Acting,
    /// Finished with a result.
    Done,
    /// Finished with an error.
    Failed,
    /// Replaced by a sub-graph.
    Expanded,
}

impl NodeState {
    fn finished(&self) -> bool {
        matches!(
            self,
            NodeState::Done | NodeState::Failed | NodeState::Expanded
        )
    }
    fn running(&self) -> bool {
        !self.finished() && *self != NodeState::Waiting
    }
}

impl Graph {
    pub(super) fn new(adaptive: bool) -> Self {
        Graph {
            adaptive,
            ..Graph::default()
        }
    }

    pub(super) fn node(&self, id: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }

    pub(super) fn node_mut(&mut self, id: &str) -> Option<&mut Node> {
        self.nodes.iter_mut().find(|n| n.id == id)
    }

    pub(super) fn snapshot(&self) -> Value {
        json!({
            "adaptive": self.adaptive,
            "nodes": self.nodes.iter().map(|n| json!({
                "id": n.id,
                "task": n.task,
                "deps": n.deps,
                "state": n.state,
                "result": n.result,
            })).collect::<Vec<_>>(),
        })
    }

    /// The nodes that give the answer: not expanded, and nothing (not expanded) depends on them.
    fn sinks(&self) -> Vec<&Node> {
        let live = || self.nodes.iter().filter(|n| n.state != NodeState::Expanded);
        live()
            .filter(|n| !live().any(|m| m.deps.contains(&n.id)))
            .collect()
    }
}

impl Run {
    /// The graph, read: a run of another agent has an empty one.
    fn graph(&self) -> &Graph {
        self.agent.got().map(|g| &g.graph).unwrap_or(&NO_GRAPH)
    }

    fn node_mut(&mut self, id: &str) -> Option<&mut Node> {
        self.agent.got_mut()?.graph.node_mut(id)
    }

    /// The run goes to a step of got's own.
    fn got_enter(&mut self, step: Step) {
        self.phase = Phase::Own;
        if let Some(got) = self.agent.got_mut() {
            got.step = step;
        }
    }

    /// Whether the graph's nodes are running.
    fn executing(&self) -> bool {
        self.phase == Phase::Own && self.agent.got().is_some_and(|g| g.step == Step::Executing)
    }

    fn max_nodes(&self) -> usize {
        self.config.got_max_nodes.max(1) as usize
    }

    /// `plan_graph`: one model call without tools.
    fn plan_graph(&mut self) {
        self.got_enter(Step::Planning);
        self.emit(Event::NodeEnter {
            id: "plan_graph".into(),
        });
        let rejected = self.graph().rejected.clone();
        let instruction = prompts::got_plan(self.max_nodes() as u32, rejected.as_deref());
        self.ask(&instruction);
    }

    fn planned(&mut self) {
        let response = self.complete_response(false, false);
        match parse_plan(&response.text, self.max_nodes()) {
            Ok(plan) => {
                let edge_count: usize = plan.iter().map(|p| p.deps.len()).sum();
                let node_ids: Vec<String> = plan.iter().map(|p| p.id.clone()).collect();
                if let Some(graph) = self.agent.got_mut().map(|g| &mut g.graph) {
                    graph.nodes = plan.into_iter().map(|p| new_node(p, false)).collect();
                }
                self.emit(Event::GotPlan {
                    node_count: node_ids.len() as u64,
                    edge_count: edge_count as u64,
                    node_ids,
                });
                self.emit(Event::NodeExit {
                    id: "plan_graph".into(),
                    result: NodeResult::Ok,
                });
                self.got_enter(Step::Executing);
                self.effect(Effect::Checkpoint);
                self.schedule();
            }
            Err(why) => {
                self.emit(Event::NodeExit {
                    id: "plan_graph".into(),
                    result: NodeResult::Err(format!("invalid plan: {why}")),
                });
                let rejections = self.agent.got_mut().map(|g| &mut g.graph).map(|graph| {
                    graph.rejections += 1;
                    graph.rejections
                });
                if rejections.is_some_and(|n| n < 2) {
                    if let Some(graph) = self.agent.got_mut().map(|g| &mut g.graph) {
                        graph.rejected = Some(why);
                    }
                    self.plan_graph();
                } else {
                    self.fail(
                        format!("the model's plan is not a valid graph of sub-tasks: {why}"),
                        ErrorCode::InvalidPlan,
                        None,
                    );
                }
            }
        }
    }

    /// Starts what can start; finishes the graph when every node has.
    fn schedule(&mut self) {
        if !self.executing() {
            return;
        }
        let parallel = self.config.got_max_parallel.max(1) as usize;
        loop {
            let graph = self.graph();
            let running = graph.nodes.iter().filter(|n| n.state.running()).count();
            if running >= parallel {
                break;
            }
            let ready = graph
                .nodes
                .iter()
                .find(|n| {
                    n.state == NodeState::Waiting
                        && n.deps
                            .iter()
                            .all(|d| graph.nodes.iter().any(|m| &m.id == d && m.state.finished()))
                })
                .map(|n| (n.id.clone(), graph.adaptive && !n.sub));
            let Some((id, judge)) = ready else { break };
            self.emit(Event::GotNodeStart { id: id.clone() });
            self.brief(&id);
            if judge {
                self.judge(&id);
            } else {
                self.node_think(&id);
            }
        }
        let graph = self.graph();
        if graph.nodes.iter().any(|n| n.state.running()) {
            return;
        }
        // Nothing runs and nothing can start: every node is finished (a plan is a DAG, so
        // nothing can wait forever; should one anyway, it fails rather than hang the run).
        let stuck: Vec<String> = graph
            .nodes
            .iter()
            .filter(|n| n.state == NodeState::Waiting)
            .map(|n| n.id.clone())
            .collect();
        for id in stuck {
            self.node_failed(&id, "its dependencies never finished".into());
        }
        if self.executing() {
            self.finish_graph();
        }
    }

    /// The node's conversation: its task, the whole request, and its inputs.
    fn brief(&mut self, id: &str) {
        let message = self.message.clone();
        let graph = self.graph();
        let Some(node) = graph.node(id) else { return };
        let inputs: Vec<(String, String, String)> = node
            .deps
            .iter()
            .filter_map(|d| graph.node(d))
            .map(|d| {
                let result = if d.state == NodeState::Failed {
                    format!("FAILED: {}", d.result)
                } else {
                    d.result.clone()
                };
                (d.id.clone(), d.task.clone(), result)
            })
            .collect();
        let text = prompts::got_brief(id, &node.task, &message, &inputs);
        if let Some(node) = self.node_mut(id) {
            node.messages = vec![ChatMessage::user(text)];
        }
    }

    /// Adaptive: asks whether the node is too complex.
    fn judge(&mut self, id: &str) {
        let system = self.system_with(&prompts::got_judge(self.max_nodes() as u32));
        self.node_call(id, NodeState::Judging, system, Vec::new());
    }

    /// Whether a sub-graph may replace `id`: its ids must be new and the graph not too big.
    fn can_expand(&self, id: &str, sub: &[Planned]) -> bool {
        let Some(graph) = self.agent.got().map(|g| &g.graph) else {
            return false;
        };
        let live = graph
            .nodes
            .iter()
            .filter(|n| n.state != NodeState::Expanded)
            .count();
        live + sub.len() <= 2 * self.max_nodes()
            && sub
                .iter()
                .all(|p| graph.node(&format!("{id}.{}", p.id)).is_none())
    }

    /// Replaces `id` by its sub-graph.
    fn expand_node(&mut self, id: &str, sub: Vec<Planned>) {
        let Some(graph) = self.agent.got_mut().map(|g| &mut g.graph) else {
            return;
        };
        let Some(pos) = graph.nodes.iter().position(|n| n.id == id) else {
            return;
        };
        let outer_deps = graph.nodes[pos].deps.clone();
        let name = |s: &str| format!("{id}.{s}");
        let internal: usize = sub.iter().map(|p| p.deps.len()).sum();
        let sinks: Vec<String> = sub
            .iter()
            .filter(|p| !sub.iter().any(|q| q.deps.contains(&p.id)))
            .map(|p| name(&p.id))
            .collect();
        let mut added_in = 0;
        let nodes: Vec<Node> = sub
            .into_iter()
            .map(|p| {
                let deps = if p.deps.is_empty() {
                    added_in += outer_deps.len();
                    outer_deps.clone()
                } else {
                    p.deps.iter().map(|d| name(d)).collect()
                };
                new_node(
                    Planned {
                        id: name(&p.id),
                        task: p.task,
                        deps,
                    },
                    true,
                )
            })
            .collect();
        let count = nodes.len();
        let mut added_out = 0;
        for n in &mut graph.nodes {
            if let Some(i) = n.deps.iter().position(|d| d == id) {
                n.deps.remove(i);
                for s in &sinks {
                    if !n.deps.contains(s) {
                        n.deps.push(s.clone());
                        added_out += 1;
                    }
                }
            }
        }
        graph.nodes[pos].state = NodeState::Expanded;
        graph.nodes[pos].response = Response::default();
        let at = pos + 1;
        graph.nodes.splice(at..at, nodes);
        self.emit(Event::GotExpand {
            node_id: id.into(),
            nodes_added: count as u64,
            edges_added: (internal + added_in + added_out) as u64,
        });
        self.effect(Effect::Checkpoint);
        self.schedule();
    }

    /// Every node has finished: the reply from the sinks.
    fn finish_graph(&mut self) {
        let graph = self.graph();
        let sinks: Vec<(String, String, bool)> = graph
            .sinks()
            .into_iter()
            .map(|n| (n.task.clone(), n.result.clone(), n.state == NodeState::Done))
            .collect();
        let answered = sinks.iter().any(|(_, _, ok)| *ok);
        if !answered {
            let graph = self.graph();
            let why: Vec<String> = graph
                .sinks()
                .iter()
                .map(|n| format!("{}: {}", n.id, n.result))
                .collect();
            return self.fail(
                format!(
                    "every sub-task that gives the answer failed ({})",
                    why.join("; ")
                ),
                ErrorCode::GraphFailed,
                None,
            );
        }
        let reply = aggregate(&sinks);
        self.finish_with(reply);
    }

    fn finish_with(&mut self, reply: String) {
        if !reply.is_empty() {
            self.session
                .history
                .push(ChatMessage::assistant(reply.clone()));
        }
        self.last_content = reply;
        self.last_tools = Vec::new();
        self.end_run();
    }

    /// The run stops mid-graph (`no-exit`, or a `pause_after` tool ran): what is finished
    /// answers.
    fn got_stop(&mut self) {
        self.close_streams(Cut::Cancelled);
        self.calls.retain(|c| c.lane.is_none());
        let graph = self.graph();
        let mut finished: Vec<(String, String, bool)> = graph
            .sinks()
            .into_iter()
            .filter(|n| n.state == NodeState::Done)
            .map(|n| (n.task.clone(), n.result.clone(), true))
            .collect();
        if finished.is_empty() {
            finished = graph
                .nodes
                .iter()
                .filter(|n| n.state == NodeState::Done)
                .map(|n| (n.task.clone(), n.result.clone(), true))
                .collect();
        }
        let reply = aggregate(&finished);
        self.finish_with(reply);
    }

    /// After a restart: every node asks again for what it was waiting on.
    fn got_resume(&mut self) {
        let nodes: Vec<(String, NodeState)> = self
            .graph()
            .nodes
            .iter()
            .map(|n| (n.id.clone(), n.state.clone()))
            .collect();
        for (id, state) in nodes {
            match state {
                NodeState::Judging => self.judge(&id),
                NodeState::Thinking => self.node_think(&id),
                NodeState::Explaining { call_id } => {
                    if let Some(n) = self.node_mut(&id) {
                        n.state = NodeState::Acting;
                        n.response = Response::default();
                    }
                    self.ask_approval(&call_id);
                }
                NodeState::Acting => self.reissue_tools(&Some(id)),
                _ => {}
            }
        }
        self.schedule();
    }
}

fn new_node(p: Planned, sub: bool) -> Node {
    Node {
        id: p.id,
        task: p.task,
        deps: p.deps,
        state: NodeState::Waiting,
        messages: Vec::new(),
        response: Response::default(),
        iteration: 0,
        span: false,
        result: String::new(),
        sub,
    }
}

/// The reply from the sinks: the one result as it is, or each task with its result.
fn aggregate(sinks: &[(String, String, bool)]) -> String {
    if let [(_, result, true)] = sinks {
        return result.clone();
    }
    sinks
        .iter()
        .map(|(task, result, ok)| {
            if *ok {
                format!("{task}\n{result}")
            } else {
                format!("{task}\nFAILED: {result}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

impl FromValue for Graph {
    fn from_value(v: &Value) -> Read<Self> {
        let f = Fields::of("got", v)?;
        Ok(Graph {
            nodes: f.req("nodes")?,
            adaptive: f.req("adaptive")?,
            rejections: f.req("rejections")?,
            rejected: f.req("rejected")?,
        })
    }
}

impl FromValue for Node {
    fn from_value(v: &Value) -> Read<Self> {
        let f = Fields::of("got node", v)?;
        Ok(Node {
            id: f.req("id")?,
            task: f.req("task")?,
            deps: f.req("deps")?,
            state: f.req("state")?,
            messages: f.req("messages")?,
            response: f.req("response")?,
            iteration: f.req("iteration")?,
            span: f.or_default("span")?,
            result: f.req("result")?,
            sub: f.req("sub")?,
        })
    }
}

impl FromValue for NodeState {
    fn from_value(v: &Value) -> Read<Self> {
        match variant("node state", v)? {
            ("waiting", None) => Ok(NodeState::Waiting),
            ("judging", None) => Ok(NodeState::Judging),
            ("thinking", None) => Ok(NodeState::Thinking),
            ("explaining", Some(fields)) => Ok(NodeState::Explaining {
                call_id: Fields::of("explaining", fields)?.req("call_id")?,
            }),
            ("acting", None) => Ok(NodeState::Acting),
            ("done", None) => Ok(NodeState::Done),
            ("failed", None) => Ok(NodeState::Failed),
            ("expanded", None) => Ok(NodeState::Expanded),
            (name, _) => Err(unknown_variant("node state", name)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reply_aggregates_the_sinks() {
        assert_eq!(aggregate(&[("t".into(), "r".into(), true)]), "r");
        assert_eq!(
            aggregate(&[
                ("t".into(), "r".into(), true),
                ("u".into(), "boom".into(), false)
            ]),
            "t\nr\n\nu\nFAILED: boom"
        );
    }
}
