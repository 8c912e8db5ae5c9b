//! tot (tree of thoughts): `think_expand` → `think_evaluate` → `act`, one level of the tree per
//! step, with backtracking.
//!
//! - `think_expand` asks the model, without tools, for `k` candidate next steps
//!   ([`Config::tot_candidates`]) as JSON; `tot_expand {candidates}`.
//! - `think_evaluate` asks for a score from 0 to 1 per candidate; `tot_evaluate {chosen,
//!   scores}`, `chosen` the best (the first on a tie).
//! - `act` carries out the chosen step: one model call with every tool offered, then its tools on
//!   the shared tool and approval path, all inside the `act` span. A reply without tool calls is
//!   the answer and ends the run. Otherwise the results join the history and the tree grows a
//!   level, until [`Config::tot_max_depth`] levels: then one last `act` without tools gives the
//!   final answer (also when the [`Config::max_iterations`] `act` steps are used up — the cap
//!   may be passed by that one call, so a run always ends with an answer).
//!
//! Backtracking (`tot_backtrack {reason, to_depth}`): when the best score of a level is under
//! [`Config::tot_threshold`], or a step fails (a tool returned an error, or the user denied it),
//! the run goes back to the best unexplored candidate scoring at least the threshold — for a low
//! score in a level above, for a failure in the same level or above — and the history is cut
//! back to where that level was expanded, so the model continues from that point of the path.
//! The failed step is listed as abandoned in later expand prompts (what it changed in the
//! workspace cannot be undone, so the model must know it was tried). With nowhere to go back to,
//! the run goes on: a low-scored best candidate is still carried out, and after a failure the
//! tree grows on, the failure in the history for the model to see.
//!
//! Only a run's first step may compact the history: the levels remember history lengths.
//!
//! [`Config::tot_candidates`]: super::Config::tot_candidates
//! [`Config::tot_max_depth`]: super::Config::tot_max_depth
//! [`Config::tot_threshold`]: super::Config::tot_threshold
//! [`Config::max_iterations`]: super::Config::max_iterations

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use weft_protocol::event::NodeResult;
use weft_protocol::json::parse_f64;
use weft_protocol::Event;

use super::responses::Stream;
use super::steps::{OwnStep, Steps};
use super::{clip, prompts, EngineError, Phase, Response, Run};
use crate::provider::{ChatMessage, ChatRequest, ToolResult};
use crate::read::{Fields, FromValue, Read};

/// What only a tot run keeps: its tree, and which of its own steps it is at.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Tot {
    pub(super) tree: Tree,
    /// Meaningful while the run is at a step of tot's own ([`Phase::Own`]).
    pub(super) step: Step,
}

/// tot's steps of its own (its `act` is the shared `think`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Step {
    /// Streaming the candidates.
    #[default]
    Expanding,
    /// Streaming the scores.
    Evaluating,
}

impl OwnStep for Step {
    const ALL: &'static [Self] = &[Step::Expanding, Step::Evaluating];

    fn as_str(self) -> &'static str {
        match self {
            Step::Expanding => "Expanding",
            Step::Evaluating => "Evaluating",
        }
    }
}

impl Step {
    /// Its node span.
    fn node(self) -> &'static str {
        match self {
            Step::Expanding => "think_expand",
            Step::Evaluating => "think_evaluate",
        }
    }
}

impl Tot {
    pub(super) fn restored(tree: Tree) -> Self {
        Tot {
            tree,
            step: Step::default(),
        }
    }
}

/// tot's answers to the shared loop.
pub(super) struct TotSteps;

impl Steps for TotSteps {
    fn begin(&self, run: &mut Run) {
        // Only a run's first step compacts for tot: the levels point into the history.
        run.expand();
    }

    fn think_node(&self) -> &'static str {
        "act"
    }

    fn think_tools(&self, run: &Run) -> bool {
        !run.tree().final_step
    }

    fn thought(&self, run: &mut Run, response: Response) {
        run.tot_acted(response);
    }

    fn acted(&self, run: &mut Run, results: Vec<ToolResult>) {
        run.tot_step_done(results);
    }

    fn rethink(&self, run: &mut Run) {
        run.interrupted("act");
        run.tot_redo_act();
    }

    fn own_stream(&self, run: &Run) -> Option<Stream> {
        Some(Stream {
            node: run.tot_step().node().into(),
            visible: true,
            tools: false,
        })
    }

    fn own_end(&self, run: &mut Run) -> Result<(), EngineError> {
        match run.tot_step() {
            Step::Expanding => run.expanded(),
            Step::Evaluating => run.evaluated(),
        }
        Ok(())
    }

    fn own_resume(&self, run: &mut Run) {
        let step = run.tot_step();
        run.interrupted(step.node());
        match step {
            Step::Expanding => run.expand(),
            Step::Evaluating => run.evaluate(),
        }
    }

    fn snapshot(&self, run: &Run, state: &mut Value) {
        state["tree"] = run.tree().snapshot();
    }
}

/// What [`Run::tree`] reads in a run of another agent.
static NO_TREE: Tree = Tree {
    levels: Vec::new(),
    abandoned: Vec::new(),
    current: None,
    final_step: false,
};

/// The tree, as far as it matters: the levels of the current path, each with its candidates.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Tree {
    /// `levels[d]`: the candidates proposed at depth `d` of the current path.
    levels: Vec<Level>,
    /// Steps carried out and given up (they go into later expand prompts).
    abandoned: Vec<String>,
    /// The step being carried out: (depth, candidate).
    current: Option<(usize, usize)>,
    /// The last `act`: the final answer, without tools.
    final_step: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Level {
    /// The history's length when this level was expanded: going back here cuts it to this.
    history_len: usize,
    candidates: Vec<String>,
    scores: Vec<f64>,
    explored: Vec<bool>,
}

impl Tree {
    pub(super) fn snapshot(&self) -> Value {
        json!({
            "levels": self.levels.iter().map(|l| json!({
                "candidates": l.candidates,
                "scores": l.scores,
                "explored": l.explored,
            })).collect::<Vec<_>>(),
            "current": self.current,
            "abandoned": self.abandoned,
        })
    }

    /// The best unexplored candidate scoring at least `threshold` in `levels[..end]`: the
    /// highest score, then the deepest level (closest to where the run is), then the first.
    fn best_unexplored(&self, end: usize, threshold: f64) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize, f64)> = None;
        for (d, level) in self.levels.iter().enumerate().take(end) {
            for (i, score) in level.scores.iter().enumerate() {
                let open = !level.explored.get(i).copied().unwrap_or(true);
                if !open || *score < threshold {
                    continue;
                }
                if best.is_none_or(|(_, _, s)| *score >= s) {
                    best = Some((d, i, *score));
                }
            }
        }
        best.map(|(d, i, _)| (d, i))
    }
}

/// The candidates in an expand reply: `{"candidates": [...]}` (strings, or objects with a
/// `step`/`text`/`description`), else the lines of a list, else the whole reply as one; at most
/// `k`, never none.
pub(super) fn parse_candidates(text: &str, k: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let add = |out: &mut Vec<String>, s: &str| {
        let s = s.trim();
        if !s.is_empty() && !out.iter().any(|o| o == s) {
            out.push(clip(s, 500));
        }
    };
    let listed = prompts::json_in(text)
        .and_then(|v| v.get("candidates").and_then(Value::as_array).cloned())
        .or_else(|| serde_json::from_str::<Vec<Value>>(text.trim()).ok());
    if let Some(items) = listed {
        for item in items {
            match &item {
                Value::String(s) => add(&mut out, s),
                Value::Object(o) => {
                    if let Some(s) = ["step", "text", "description", "candidate"]
                        .iter()
                        .find_map(|f| o.get(*f).and_then(Value::as_str))
                    {
                        add(&mut out, s);
                    }
                }
                _ => {}
            }
        }
    }
    if out.is_empty() {
        for line in text.lines() {
            let l = line.trim();
            let item = l
                .strip_prefix("- ")
                .or_else(|| l.strip_prefix("* "))
                .or_else(|| {
                    let digits = l.chars().take_while(char::is_ascii_digit).count();
                    (digits > 0)
                        .then(|| {
                            l[digits..]
                                .strip_prefix(". ")
                                .or(l[digits..].strip_prefix(") "))
                        })
                        .flatten()
                });
            if let Some(item) = item {
                add(&mut out, item);
            }
        }
    }
    if out.is_empty() {
        add(&mut out, text);
    }
    if out.is_empty() {
        out.push("Answer the request directly.".into());
    }
    out.truncate(k.max(1));
    out
}

/// The scores in an evaluate reply, one per candidate, each in 0..=1: `{"scores": [...]}` or a
/// bare list; scores on a 0–10 or 0–100 scale are brought to 0–1; a missing score is 0. A reply
/// with no scores at all gives every candidate `neutral`, so a model that cannot score neither
/// blocks the run nor sends it backtracking.
pub(super) fn parse_scores(text: &str, n: usize, neutral: f64) -> Vec<f64> {
    let listed = prompts::json_in(text)
        .and_then(|v| v.get("scores").and_then(Value::as_array).cloned())
        .or_else(|| serde_json::from_str::<Vec<Value>>(text.trim()).ok());
    let Some(items) = listed else {
        return vec![neutral; n];
    };
    let mut scores: Vec<f64> = items
        .iter()
        .map(|v| match v {
            Value::Number(x) => x.as_f64().unwrap_or(0.0),
            Value::String(s) => parse_f64(s.trim()).unwrap_or(0.0),
            _ => 0.0,
        })
        .map(|x| if x.is_finite() { x } else { 0.0 })
        .collect();
    if scores.is_empty() {
        return vec![neutral; n];
    }
    let top = scores.iter().copied().fold(0.0_f64, f64::max);
    let scale = if top > 10.0 {
        100.0
    } else if top > 1.0 {
        10.0
    } else {
        1.0
    };
    for s in &mut scores {
        *s = (*s / scale).clamp(0.0, 1.0);
    }
    scores.resize(n, 0.0);
    scores
}

impl Run {
    /// The tree, read: a run of another agent has an empty one.
    fn tree(&self) -> &Tree {
        self.agent.tot().map_or(&NO_TREE, |t| &t.tree)
    }

    fn tree_mut(&mut self) -> Option<&mut Tree> {
        self.agent.tot_mut().map(|t| &mut t.tree)
    }

    fn tot_step(&self) -> Step {
        self.agent.tot().map(|t| t.step).unwrap_or_default()
    }

    /// The run goes to a step of tot's own.
    fn tot_enter(&mut self, step: Step) {
        self.phase = Phase::Own;
        if let Some(tot) = self.agent.tot_mut() {
            tot.step = step;
        }
        self.emit(Event::NodeEnter {
            id: step.node().into(),
        });
    }

    fn k(&self) -> usize {
        self.config.tot_candidates.clamp(1, 8) as usize
    }

    /// `think_expand` at the next depth.
    fn expand(&mut self) {
        self.tot_enter(Step::Expanding);
        let abandoned = self.tree().abandoned.clone();
        let instruction = prompts::tot_expand(self.k() as u32, &abandoned);
        self.ask(&instruction);
    }

    fn expanded(&mut self) {
        let response = self.complete_response(false, false);
        let candidates = parse_candidates(&response.text, self.k());
        self.emit(Event::TotExpand {
            candidates: candidates.clone(),
        });
        let level = Level {
            history_len: self.session.history.len(),
            explored: vec![false; candidates.len()],
            scores: Vec::new(),
            candidates,
        };
        if let Some(tree) = self.tree_mut() {
            tree.levels.push(level);
        }
        self.emit(Event::NodeExit {
            id: "think_expand".into(),
            result: NodeResult::Ok,
        });
        self.evaluate();
    }

    /// `think_evaluate` of the deepest level.
    fn evaluate(&mut self) {
        self.tot_enter(Step::Evaluating);
        let candidates = self
            .tree()
            .levels
            .last()
            .map(|l| l.candidates.clone())
            .unwrap_or_default();
        self.ask(&prompts::tot_evaluate(&candidates));
    }

    fn evaluated(&mut self) {
        let response = self.complete_response(false, false);
        let threshold = self.config.tot_threshold;
        let depth = self.tree().levels.len().saturating_sub(1);
        let n = self.tree().levels.last().map_or(0, |l| l.candidates.len());
        let scores = parse_scores(&response.text, n, threshold);
        let mut chosen = 0;
        for (i, s) in scores.iter().enumerate() {
            if scores.get(chosen).is_none_or(|best| s > best) {
                chosen = i;
            }
        }
        if let Some(level) = self.tree_mut().and_then(|t| t.levels.last_mut()) {
            level.scores.clone_from(&scores);
        }
        self.emit(Event::TotEvaluate {
            chosen: chosen as u64,
            scores: scores.clone(),
        });
        let best = scores.get(chosen).copied().unwrap_or(0.0);
        if best < threshold {
            if let Some((d, i)) = self.tree().best_unexplored(depth, threshold) {
                self.emit(Event::TotBacktrack {
                    reason: format!(
                        "the best candidate scored {best:.2}, under the threshold {threshold:.2}"
                    ),
                    to_depth: d as u64,
                });
                self.emit(Event::NodeExit {
                    id: "think_evaluate".into(),
                    result: NodeResult::Ok,
                });
                self.back_to(d);
                return self.act_on(d, i);
            }
        }
        self.emit(Event::NodeExit {
            id: "think_evaluate".into(),
            result: NodeResult::Ok,
        });
        self.act_on(depth, chosen);
    }

    /// Cuts the path back to level `d`: deeper levels go, the history returns to where `d` was
    /// expanded.
    fn back_to(&mut self, d: usize) {
        let Some(tree) = self.tree_mut() else {
            return;
        };
        tree.levels.truncate(d + 1);
        let len = tree.levels.get(d).map(|l| l.history_len);
        if let Some(len) = len {
            self.session.history.truncate(len);
        }
    }

    /// `act` on candidate `i` of level `d`.
    fn act_on(&mut self, d: usize, i: usize) {
        if self.iteration >= self.config.max_iterations {
            return self.tot_final_step();
        }
        let mut step = String::new();
        if let Some(tree) = self.tree_mut() {
            if let Some(s) = tree.levels.get_mut(d).and_then(|l| {
                if let Some(e) = l.explored.get_mut(i) {
                    *e = true;
                }
                l.candidates.get(i).cloned()
            }) {
                step = s;
            }
            tree.current = Some((d, i));
            tree.final_step = false;
        }
        self.tot_call(prompts::tot_act(&step), true);
    }

    /// The last `act`: the final answer, no tools.
    fn tot_final_step(&mut self) {
        if let Some(tree) = self.tree_mut() {
            tree.final_step = true;
            tree.current = None;
        }
        self.tot_call(prompts::TOT_FINAL.into(), false);
    }

    fn tot_call(&mut self, instruction: String, tools: bool) {
        self.phase = Phase::Thinking;
        self.response = Response::default();
        self.emit(Event::NodeEnter { id: "act".into() });
        let req = ChatRequest {
            model: self.config.model.clone(),
            system: Some(self.system_with(&instruction)),
            messages: self.session.history.clone(),
            tools: if tools { self.tool_defs() } else { Vec::new() },
            max_tokens: self.config.max_tokens,
            temperature: None,
        };
        self.effect(super::Effect::Checkpoint);
        self.call_llm(None, req);
    }

    /// Carries out the interrupted `act` again (after a restart).
    fn tot_redo_act(&mut self) {
        let (current, final_step) = {
            let t = self.tree();
            (t.current, t.final_step)
        };
        match current {
            // The cut call was not counted yet (a response counts when it ends).
            Some((d, i)) if !final_step => self.act_on(d, i),
            _ if final_step => self.tot_final_step(),
            _ => self.expand(),
        }
    }

    /// The `act` response is in (already counted and in the history).
    fn tot_acted(&mut self, response: Response) {
        self.last_content.clone_from(&response.text);
        self.last_tools = response.calls.iter().map(|c| c.name.clone()).collect();
        if response.calls.is_empty() || self.tree().final_step {
            self.emit(Event::NodeExit {
                id: "act".into(),
                result: NodeResult::Ok,
            });
            return self.end_run();
        }
        self.act(None, response.calls, false);
    }

    /// The step's tools are done: backtrack if it failed, else go a level deeper.
    fn tot_step_done(&mut self, results: Vec<ToolResult>) {
        let failure = results
            .iter()
            .find(|r| r.is_error)
            .map(|r| format!("{} failed: {}", r.name, clip(r.content.trim(), 200)));
        self.session
            .history
            .extend(results.into_iter().map(ChatMessage::Tool));
        let result = match &failure {
            Some(why) => NodeResult::Err(format!("the step failed: {why}")),
            None => NodeResult::Ok,
        };
        if self.exit || self.paused {
            self.emit(Event::NodeExit {
                id: "act".into(),
                result,
            });
            return self.end_run();
        }
        let threshold = self.config.tot_threshold;
        let current = self.tree().current;
        if let (Some(why), Some((d, i))) = (&failure, current) {
            if let Some((to, j)) = self.tree().best_unexplored(d + 1, threshold) {
                self.emit(Event::TotBacktrack {
                    reason: format!("the step failed: {why}"),
                    to_depth: to as u64,
                });
                self.emit(Event::NodeExit {
                    id: "act".into(),
                    result,
                });
                if let Some(tree) = self.tree_mut() {
                    let step = tree
                        .levels
                        .get(d)
                        .and_then(|l| l.candidates.get(i))
                        .cloned()
                        .unwrap_or_default();
                    tree.abandoned.push(step);
                }
                self.back_to(to);
                return self.act_on(to, j);
            }
        }
        self.emit(Event::NodeExit {
            id: "act".into(),
            result,
        });
        let depth = self.tree().levels.len();
        if depth >= self.config.tot_max_depth.max(1) as usize
            || self.iteration >= self.config.max_iterations
        {
            self.tot_final_step();
        } else {
            self.expand();
        }
    }
}

impl FromValue for Tree {
    fn from_value(v: &Value) -> Read<Self> {
        let f = Fields::of("tot", v)?;
        Ok(Tree {
            levels: f.req("levels")?,
            abandoned: f.req("abandoned")?,
            current: f.req("current")?,
            final_step: f.req("final_step")?,
        })
    }
}

impl FromValue for Level {
    fn from_value(v: &Value) -> Read<Self> {
        let f = Fields::of("tot level", v)?;
        Ok(Level {
            history_len: f.req("history_len")?,
            candidates: f.req("candidates")?,
            scores: f.req("scores")?,
            explored: f.req("explored")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_from_json_lists_or_prose() {
        assert_eq!(
            parse_candidates(r#"{"candidates": ["a", "b", "a", " ", "c"]}"#, 2),
            ["a", "b"]
        );
        assert_eq!(
            parse_candidates(
                r#"```json
{"candidates": [{"step": "x"}, {"text": "y"}, 3]}
```"#,
                5
            ),
            ["x", "y"]
        );
        assert_eq!(parse_candidates(r#"["p", "q"]"#, 3), ["p", "q"]);
        assert_eq!(
            parse_candidates("Options:\n1. first\n2) second\n- third", 3),
            ["first", "second", "third"]
        );
        assert_eq!(parse_candidates("just do it", 3), ["just do it"]);
        assert_eq!(parse_candidates("", 3), ["Answer the request directly."]);
    }

    #[test]
    fn scores_are_normalised_and_padded() {
        assert_eq!(
            parse_scores(r#"{"scores": [0.9, 0.2]}"#, 3, 0.5),
            [0.9, 0.2, 0.0]
        );
        assert_eq!(parse_scores(r#"{"scores": [9, "4"]}"#, 2, 0.5), [0.9, 0.4]);
        assert_eq!(parse_scores("[80, 20]", 2, 0.5), [0.8, 0.2]);
        assert_eq!(
            parse_scores(r#"{"scores": [-1, 0.5, 0.7]}"#, 2, 0.5),
            [0.0, 0.5]
        );
        assert_eq!(parse_scores("no idea", 2, 0.5), [0.5, 0.5]);
        assert_eq!(parse_scores(r#"{"scores": []}"#, 1, 0.4), [0.4]);
    }

    /// A score given as a string reads as `str::parse::<f64>` read it: the same scores as the
    /// number it parses to, where that is finite, else as a missing score.
    #[cfg(not(target_arch = "wasm32"))]
    mod string_scores {
        use proptest::prelude::*;

        use super::parse_scores;

        proptest! {
            #[test]
            fn read_as_str_parse_read_them(
                text in prop_oneof![
                    "\\PC{0,10}",
                    "[ \t]?[+-]?[0-9]{0,3}(\\.[0-9]{0,3})?([eE][+-]?[0-9]{0,3})?[ \t\n]?",
                    "[ +-]?(inf|Infinity|NaN|nan|INF)[ ]?",
                ],
                other in 0.0..100.0_f64,
            ) {
                let parsed = text.trim().parse::<f64>().ok().filter(|x| x.is_finite());
                let reply = serde_json::json!([text, other]).to_string();
                let want = serde_json::json!([parsed.unwrap_or(0.0), other]).to_string();
                prop_assert_eq!(parse_scores(&reply, 2, 0.5), parse_scores(&want, 2, 0.5));
            }
        }
    }

    #[test]
    fn the_best_unexplored_candidate_wins_then_the_deepest() {
        let level = |scores: Vec<f64>, explored: Vec<bool>| Level {
            history_len: 0,
            candidates: scores.iter().map(|s| s.to_string()).collect(),
            scores,
            explored,
        };
        let tree = Tree {
            levels: vec![
                level(vec![0.9, 0.7, 0.2], vec![true, false, false]),
                level(vec![0.7, 0.6], vec![false, true]),
            ],
            ..Tree::default()
        };
        assert_eq!(tree.best_unexplored(2, 0.5), Some((1, 0)));
        assert_eq!(tree.best_unexplored(1, 0.5), Some((0, 1)));
        assert_eq!(tree.best_unexplored(1, 0.8), None);
        assert_eq!(tree.best_unexplored(0, 0.0), None);
    }
}
