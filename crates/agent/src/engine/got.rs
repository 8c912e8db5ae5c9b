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

use weft_protocol::sorted::SortedSet;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use weft_protocol::event::NodeResult;
use weft_protocol::{Event, FinishReason};

use super::{clip, prompts, Effect, Phase, Response, Run, Stream};
use crate::provider::{ChatMessage, ChatRequest, ToolDef, ToolResult};

/// Longest node id accepted from a plan: ids go into every event of the node.
const MAX_ID_CHARS: usize = 64;

/// How long a `got_node_complete` summary may be.
const SUMMARY_CHARS: usize = 200;

/// The graph of a GoT run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Graph {
    pub(super) nodes: Vec<Node>,
    adaptive: bool,
    /// Plans refused so far (a bad plan is asked for again once).
    rejections: u32,
    /// Why the last plan was refused.
    rejected: Option<String>,
}

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

/// A node as planned, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Planned {
    id: String,
    task: String,
    deps: Vec<String>,
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

/// Reads and validates a plan (or a sub-graph): see the module docs for the shape.
pub(super) fn parse_plan(text: &str, max_nodes: usize) -> Result<Vec<Planned>, String> {
    let v = prompts::json_in(text).ok_or("the reply holds no JSON object")?;
    plan_from(&v, max_nodes)
}

fn plan_from(v: &Value, max_nodes: usize) -> Result<Vec<Planned>, String> {
    let items = v
        .get("nodes")
        .and_then(Value::as_array)
        .ok_or("`nodes` is missing or not a list")?;
    if items.is_empty() {
        return Err("the plan has no nodes".into());
    }
    if items.len() > max_nodes {
        return Err(format!(
            "the plan has {} nodes; at most {max_nodes} are allowed",
            items.len()
        ));
    }
    let text_of = |v: Option<&Value>| match v {
        Some(Value::String(s)) => Some(s.trim().to_string()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let mut nodes: Vec<Planned> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let id = text_of(item.get("id"))
            .filter(|s| !s.is_empty())
            .ok_or_else(|| format!("node {} has no id", i + 1))?;
        if id.chars().count() > MAX_ID_CHARS {
            return Err(format!(
                "node id `{}` is longer than {MAX_ID_CHARS} characters",
                clip(&id, 20)
            ));
        }
        if nodes.iter().any(|n| n.id == id) {
            return Err(format!("duplicate node id `{id}`"));
        }
        let task = ["task", "description", "title"]
            .iter()
            .find_map(|f| text_of(item.get(*f)))
            .filter(|s| !s.is_empty())
            .ok_or_else(|| format!("node `{id}` has no task"))?;
        let mut deps = Vec::new();
        for field in ["deps", "depends_on", "dependencies"] {
            match item.get(field) {
                None | Some(Value::Null) => {}
                Some(Value::Array(list)) => {
                    for d in list {
                        let d = text_of(Some(d))
                            .ok_or_else(|| format!("node `{id}`: `{field}` must list node ids"))?;
                        deps.push(d);
                    }
                }
                Some(_) => return Err(format!("node `{id}`: `{field}` must be a list")),
            }
        }
        nodes.push(Planned { id, task, deps });
    }
    if let Some(edges) = v.get("edges").filter(|e| !e.is_null()) {
        let list = edges.as_array().ok_or("`edges` must be a list")?;
        for e in list {
            let (from, to) = match e {
                Value::Array(pair) if pair.len() == 2 => {
                    (text_of(pair.first()), text_of(pair.get(1)))
                }
                Value::Object(o) => (text_of(o.get("from")), text_of(o.get("to"))),
                _ => (None, None),
            };
            let (Some(from), Some(to)) = (from, to) else {
                return Err("every edge must be [from, to] or {\"from\", \"to\"}".into());
            };
            let target = nodes
                .iter_mut()
                .find(|n| n.id == to)
                .ok_or_else(|| format!("an edge points to unknown node `{to}`"))?;
            target.deps.push(from);
        }
    }
    let ids: SortedSet<String> = nodes.iter().map(|n| n.id.clone()).collect();
    for n in &mut nodes {
        let mut seen = SortedSet::new();
        n.deps.retain(|d| seen.insert(d.clone()));
        if let Some(d) = n.deps.iter().find(|d| !ids.contains(*d)) {
            return Err(format!("node `{}` depends on unknown node `{d}`", n.id));
        }
    }
    // Kahn's algorithm: whatever cannot be ordered is on or behind a cycle.
    let mut done: SortedSet<&str> = SortedSet::new();
    loop {
        let before = done.len();
        for n in &nodes {
            if !done.contains(n.id.as_str()) && n.deps.iter().all(|d| done.contains(d.as_str())) {
                done.insert(&n.id);
            }
        }
        if done.len() == before {
            break;
        }
    }
    if done.len() < nodes.len() {
        let stuck: Vec<String> = nodes
            .iter()
            .filter(|n| !done.contains(n.id.as_str()))
            .map(|n| format!("`{}`", n.id))
            .collect();
        return Err(format!(
            "the graph has a cycle through {}",
            stuck.join(", ")
        ));
    }
    Ok(nodes)
}

/// A judgement: `Some(sub-graph)` when the node is complex and the sub-graph is valid and has
/// at least two nodes; `None` (do the node as it is) otherwise.
pub(super) fn parse_judgement(text: &str, max_nodes: usize) -> Option<Vec<Planned>> {
    let v = prompts::json_in(text)?;
    if v.get("complex").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    plan_from(&v, max_nodes).ok().filter(|p| p.len() >= 2)
}

impl Run {
    fn graph(&mut self) -> &mut Graph {
        self.got.get_or_insert_with(Graph::default)
    }

    fn max_nodes(&self) -> usize {
        self.config.got_max_nodes.max(1) as usize
    }

    /// `plan_graph`: one model call without tools.
    pub(super) fn plan_graph(&mut self) {
        self.phase = Phase::Planning;
        self.emit(Event::NodeEnter {
            id: "plan_graph".into(),
        });
        let rejected = self.graph().rejected.clone();
        let instruction = prompts::got_plan(self.max_nodes() as u32, rejected.as_deref());
        self.ask(&instruction);
    }

    pub(super) fn planned(&mut self) {
        let response = self.complete_response(false, false);
        match parse_plan(&response.text, self.max_nodes()) {
            Ok(plan) => {
                let edge_count: usize = plan.iter().map(|p| p.deps.len()).sum();
                let node_ids: Vec<String> = plan.iter().map(|p| p.id.clone()).collect();
                self.graph().nodes = plan.into_iter().map(|p| new_node(p, false)).collect();
                self.emit(Event::GotPlan {
                    node_count: node_ids.len() as u64,
                    edge_count: edge_count as u64,
                    node_ids,
                });
                self.emit(Event::NodeExit {
                    id: "plan_graph".into(),
                    result: NodeResult::Ok,
                });
                self.phase = Phase::Executing;
                self.effect(Effect::Checkpoint);
                self.schedule();
            }
            Err(why) => {
                self.emit(Event::NodeExit {
                    id: "plan_graph".into(),
                    result: NodeResult::Err(format!("invalid plan: {why}")),
                });
                let graph = self.graph();
                graph.rejections += 1;
                if graph.rejections < 2 {
                    graph.rejected = Some(why);
                    self.plan_graph();
                } else {
                    self.fail(
                        format!("the model's plan is not a valid graph of sub-tasks: {why}"),
                        "invalid_plan",
                        None,
                    );
                }
            }
        }
    }

    /// Starts what can start; finishes the graph when every node has.
    fn schedule(&mut self) {
        if self.phase != Phase::Executing {
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
        if self.phase == Phase::Executing {
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
        if let Some(node) = graph.node_mut(id) {
            node.messages = vec![ChatMessage::user(text)];
        }
    }

    /// Adaptive: asks whether the node is too complex.
    fn judge(&mut self, id: &str) {
        let system = self.system_with(&prompts::got_judge(self.max_nodes() as u32));
        self.node_call(id, NodeState::Judging, system, Vec::new());
    }

    /// One `think` step of the node's sub-task.
    fn node_think(&mut self, id: &str) {
        let system = self.system_with(prompts::GOT_NODE);
        let tools = self.tool_defs();
        self.effect(Effect::Checkpoint);
        self.node_call(id, NodeState::Thinking, system, tools);
    }

    /// Starts a model call of one node over its own conversation, in `state`.
    fn node_call(&mut self, id: &str, state: NodeState, system: String, tools: Vec<ToolDef>) {
        let (model, max_tokens) = (self.config.model.clone(), self.config.max_tokens);
        let Some(node) = self.graph().node_mut(id) else {
            return;
        };
        node.state = state;
        node.response = Response::default();
        node.span = false;
        let req = ChatRequest {
            model,
            system: Some(system),
            messages: node.messages.clone(),
            tools,
            max_tokens,
            temperature: None,
        };
        self.call_llm(Some(id.into()), req);
    }

    /// How a node's model call streams.
    pub(super) fn node_stream(&self, id: &str) -> Option<Stream> {
        let node = self.got.as_ref()?.node(id)?;
        let (name, tools) = match &node.state {
            NodeState::Thinking => (id, true),
            NodeState::Judging => (id, false),
            NodeState::Explaining { .. } => ("explain", false),
            _ => return None,
        };
        Some(Stream {
            node: name.into(),
            visible: true,
            tools,
        })
    }

    /// Opens the `execute_graph` span of a node's current response, once: with its first
    /// delta, so that whichever response streams first owns the stream (see `engine`).
    pub(super) fn node_span(&mut self, id: &str) {
        let Some(node) = self.graph().node_mut(id) else {
            return;
        };
        if !std::mem::replace(&mut node.span, true) {
            self.emit(Event::NodeEnter {
                id: "execute_graph".into(),
            });
        }
    }

    /// Closes a node's response span, if open.
    fn close_node_span(&mut self, id: &str, result: NodeResult) {
        let Some(node) = self.graph().node_mut(id) else {
            return;
        };
        if std::mem::replace(&mut node.span, false) {
            self.emit(Event::NodeExit {
                id: "execute_graph".into(),
                result,
            });
        }
    }

    /// Closes a node's response: `usage`, `llm_complete`, the span (no `context_info`: the
    /// node's conversation is not the session's).
    fn complete_node_response(&mut self, id: &str) -> Response {
        self.session.iterations += 1;
        self.node_span(id);
        let response = self
            .graph()
            .node_mut(id)
            .map(|n| std::mem::take(&mut n.response))
            .unwrap_or_default();
        self.account(response.usage);
        self.emit_complete(&response);
        self.close_node_span(id, NodeResult::Ok);
        self.response_over();
        response
    }

    pub(super) fn node_llm_end(&mut self, id: &str) {
        let Some(state) = self
            .got
            .as_ref()
            .and_then(|g| g.node(id))
            .map(|n| n.state.clone())
        else {
            return;
        };
        match state {
            NodeState::Judging => {
                let response = self.complete_node_response(id);
                match parse_judgement(&response.text, self.max_nodes()) {
                    Some(sub) if self.can_expand(id, &sub) => self.expand_node(id, sub),
                    _ => self.node_think(id),
                }
            }
            NodeState::Thinking => {
                let response = self.complete_node_response(id);
                if let Some(node) = self.graph().node_mut(id) {
                    node.iteration += 1;
                    node.messages.push(ChatMessage::Assistant {
                        content: response.text.clone(),
                        tool_calls: response.calls.clone(),
                    });
                }
                if response.calls.is_empty() {
                    self.node_done(id, &response.text);
                } else {
                    self.act(Some(id.into()), response.calls, false);
                }
            }
            NodeState::Explaining { call_id } => {
                self.node_span(id);
                let response = self
                    .graph()
                    .node_mut(id)
                    .map(|n| std::mem::take(&mut n.response))
                    .unwrap_or_default();
                self.account(response.usage);
                self.emit(Event::LlmComplete {
                    content: response.text,
                    tool_calls: Vec::new(),
                    finish_reason: FinishReason::Stop,
                });
                self.close_node_span(id, NodeResult::Ok);
                self.response_over();
                if let Some(node) = self.graph().node_mut(id) {
                    node.state = NodeState::Acting;
                }
                self.ask_approval(&call_id);
            }
            _ => {}
        }
    }

    /// A node's tools are done: its next step, or its end.
    pub(super) fn node_acted(&mut self, id: &str, results: Vec<ToolResult>) {
        let max = self.config.max_iterations;
        let Some(node) = self.graph().node_mut(id) else {
            return;
        };
        node.messages
            .extend(results.into_iter().map(ChatMessage::Tool));
        let capped = node.iteration >= max;
        let last = node
            .messages
            .iter()
            .rev()
            .find_map(|m| match m {
                ChatMessage::Assistant { content, .. } if !content.trim().is_empty() => {
                    Some(content.clone())
                }
                _ => None,
            })
            .unwrap_or_default();
        if self.exit || self.paused {
            return self.got_stop();
        }
        if capped {
            self.node_done(id, &last);
        } else {
            self.node_think(id);
        }
    }

    fn node_done(&mut self, id: &str, text: &str) {
        let result = match text.trim() {
            "" => "(no answer)".to_string(),
            t => t.to_string(),
        };
        if let Some(node) = self.graph().node_mut(id) {
            node.state = NodeState::Done;
            node.result.clone_from(&result);
        }
        self.emit(Event::GotNodeComplete {
            id: id.into(),
            result_summary: clip(&result, SUMMARY_CHARS),
        });
        self.effect(Effect::Checkpoint);
        self.schedule();
    }

    /// A node failed (its model call, or nothing could start it): `got_node_failed`, and the
    /// graph goes on without it.
    pub(super) fn node_failed(&mut self, id: &str, error: String) {
        let Some(node) = self.graph().node_mut(id) else {
            return;
        };
        if node.state.finished() {
            return;
        }
        let response = std::mem::take(&mut node.response);
        node.state = NodeState::Failed;
        node.result.clone_from(&error);
        if response.streamed_anything() {
            self.emit(Event::LlmComplete {
                content: response.text,
                tool_calls: Vec::new(),
                finish_reason: FinishReason::from("error"),
            });
        }
        self.close_node_span(id, NodeResult::Err(error.clone()));
        let lane = Some(id.to_string());
        self.calls.retain(|c| c.lane != lane);
        self.llm.retain(|c| c.lane != lane);
        self.response_over();
        self.emit(Event::GotNodeFailed {
            id: id.into(),
            error,
        });
        self.next_approval();
        self.effect(Effect::Checkpoint);
        self.schedule();
    }

    /// Closes the response of a node cut by the end of the run (`finish` `cancelled`) or a
    /// restart (`interrupted`: what went out after the checkpoint is unknown, so the text is
    /// left as the client has it).
    pub(super) fn close_node_response(&mut self, id: &str, finish: &str) {
        let response = self
            .graph()
            .node_mut(id)
            .map(|n| std::mem::take(&mut n.response))
            .unwrap_or_default();
        let content = if finish == "interrupted" {
            String::new()
        } else {
            response.text
        };
        self.emit(Event::LlmComplete {
            content,
            tool_calls: Vec::new(),
            finish_reason: FinishReason::from(finish),
        });
        let why = if finish == "interrupted" {
            "interrupted by a restart".to_string()
        } else {
            format!("the run ended ({finish})")
        };
        self.close_node_span(id, NodeResult::Err(why));
    }

    /// Whether a sub-graph may replace `id`: its ids must be new and the graph not too big.
    fn can_expand(&self, id: &str, sub: &[Planned]) -> bool {
        let Some(graph) = self.got.as_ref() else {
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
        let graph = self.graph();
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
                "graph_failed",
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
    pub(super) fn got_stop(&mut self) {
        self.close_streams("cancelled");
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
    pub(super) fn got_resume(&mut self) {
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
                    if let Some(n) = self.graph().node_mut(&id) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(plan: &[Planned]) -> Vec<(&str, Vec<&str>)> {
        plan.iter()
            .map(|p| (p.id.as_str(), p.deps.iter().map(String::as_str).collect()))
            .collect()
    }

    #[test]
    fn a_plan_in_any_of_the_accepted_shapes() {
        let p = parse_plan(
            r#"Here: {"nodes": [{"id": "a", "task": "A"}, {"id": "b", "description": "B", "depends_on": ["a", "a"]}, {"id": 3, "title": "C"}], "edges": [["a", "3"], {"from": "b", "to": "3"}]}"#,
            8,
        )
        .unwrap();
        assert_eq!(
            ids(&p),
            [("a", vec![]), ("b", vec!["a"]), ("3", vec!["a", "b"])]
        );
        assert_eq!(p[1].task, "B");
    }

    #[test]
    fn bad_plans_say_what_is_wrong() {
        let err = |t: &str| parse_plan(t, 3).unwrap_err();
        assert_eq!(err("nothing"), "the reply holds no JSON object");
        assert_eq!(err(r#"{"steps": []}"#), "`nodes` is missing or not a list");
        assert_eq!(err(r#"{"nodes": []}"#), "the plan has no nodes");
        assert_eq!(
            err(
                r#"{"nodes": [{"id":"a","task":"t"},{"id":"b","task":"t"},{"id":"c","task":"t"},{"id":"d","task":"t"}]}"#
            ),
            "the plan has 4 nodes; at most 3 are allowed"
        );
        assert_eq!(
            err(r#"{"nodes": [{"id":"a","task":"t"},{"id":"a","task":"u"}]}"#),
            "duplicate node id `a`"
        );
        assert_eq!(err(r#"{"nodes": [{"task":"t"}]}"#), "node 1 has no id");
        assert_eq!(err(r#"{"nodes": [{"id":"a"}]}"#), "node `a` has no task");
        assert_eq!(
            err(r#"{"nodes": [{"id":"a","task":"t","deps":["z"]}]}"#),
            "node `a` depends on unknown node `z`"
        );
        assert_eq!(
            err(r#"{"nodes": [{"id":"a","task":"t"}], "edges": [["a","q"]]}"#),
            "an edge points to unknown node `q`"
        );
        assert_eq!(
            err(r#"{"nodes": [{"id":"a","task":"t","deps":"b"}]}"#),
            "node `a`: `deps` must be a list"
        );
        assert_eq!(
            err(
                r#"{"nodes": [{"id":"a","task":"t","deps":["b"]},{"id":"b","task":"t","deps":["a"]},{"id":"c","task":"t"}]}"#
            ),
            "the graph has a cycle through `a`, `b`"
        );
        assert_eq!(
            err(r#"{"nodes": [{"id":"a","task":"t","deps":["a"]}]}"#),
            "the graph has a cycle through `a`"
        );
        let long = "x".repeat(65);
        assert!(
            err(&format!(r#"{{"nodes": [{{"id":"{long}","task":"t"}}]}}"#))
                .contains("longer than 64")
        );
    }

    #[test]
    fn judgements() {
        assert_eq!(parse_judgement(r#"{"complex": false}"#, 8), None);
        assert_eq!(parse_judgement("no", 8), None);
        assert_eq!(
            parse_judgement(r#"{"complex": true, "nodes": [{"id":"a","task":"t"}]}"#, 8),
            None,
            "one node is no split"
        );
        let sub = parse_judgement(
            r#"{"complex": true, "nodes": [{"id":"a","task":"t"},{"id":"b","task":"u","deps":["a"]}]}"#,
            8,
        )
        .unwrap();
        assert_eq!(ids(&sub), [("a", vec![]), ("b", vec!["a"])]);
    }

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
