//! What the dup, tot and got agents ask the model, beyond the conversation itself.
//!
//! Each instruction is appended to the run's system prompt (the persona stays first), so the
//! conversation the model sees is the session's own and needs no extra turns that would have to
//! be kept out of the history afterwards. The first sentence of each is a fixed marker
//! (`Understand the problem first.`, `Tree of thoughts: propose next steps.`, …): a real model
//! reads it as a heading, and the scripted LLM (`tests/scripted-llm/rules.mjs`) keys its
//! deterministic answers on it, so change a marker in both places.
//!
//! Structured answers are asked for as JSON with a one-line example; the parsers in the agent
//! modules accept the object anywhere in the reply (code fences and stray prose around it are
//! common) and say exactly what was wrong when it does not fit.

/// dup `understand`: the structured understanding, recorded as an assistant message.
pub const DUP_UNDERSTAND: &str = "Understand the problem first. Do not solve it yet and do \
not call tools. Write your understanding of the user's latest request in three short \
sections:\nCore goal: what the user wants in the end.\nKey constraints: what the answer must \
respect.\nRelevant context: what from the conversation or the tools matters.";

/// dup `plan`: the loop after the understanding.
pub const DUP_PLAN: &str = "Plan, act, observe. You have written your understanding of the \
problem above. Work towards its core goal step by step: say in one sentence what you will do \
next and do it with the tools; when their results come back, check them against the goal and \
plan the next step. When you can answer, answer the user without calling tools.";

/// dup: the user turn that follows the understanding in the first `plan` call only (not kept in
/// the history): a conversation must not end on the model's own turn — Anthropic would take it
/// as a prefix to continue, Gemini refuses it. It repeats the request, so the model (and the
/// scripted LLM) answers that and not the understanding.
pub const DUP_CUE: &str = "With that understanding, carry out my request: ";

/// tot `think_expand`: `k` candidates, and the steps already abandoned.
pub fn tot_expand(k: u32, abandoned: &[String]) -> String {
    let mut s = format!(
        "Tree of thoughts: propose next steps. Given the conversation so far, propose exactly \
         {k} different candidate next steps towards answering the user's latest request. A step \
         is either one action with the tools, or giving the final answer."
    );
    if !abandoned.is_empty() {
        s.push_str(" These steps were tried and abandoned; do not propose them again:");
        for a in abandoned {
            s.push_str("\n- ");
            s.push_str(a);
        }
        s.push('\n');
    }
    s.push_str(
        " Reply with JSON only, no prose: {\"candidates\": [\"first step\", \"second step\"]}",
    );
    s
}

/// tot `think_evaluate`: one score from 0 to 1 per candidate.
pub fn tot_evaluate(candidates: &[String]) -> String {
    let mut s = String::from(
        "Tree of thoughts: score the candidates. Rate how promising each candidate next step \
         below is for answering the user's latest request, from 0 (useless) to 1 (certainly \
         right).\n\nCandidates:",
    );
    for (i, c) in candidates.iter().enumerate() {
        s.push_str(&format!("\n{}. {c}", i + 1));
    }
    s.push_str(
        "\n\nReply with JSON only, no prose, one score per candidate in order: \
         {\"scores\": [0.8, 0.3]}",
    );
    s
}

/// tot `act`: carry out the chosen step.
pub fn tot_act(step: &str) -> String {
    format!(
        "Tree of thoughts: carry out this step: {step}\nUse the tools if the step needs them. If \
         the step is to give the final answer, answer the user directly without calling tools."
    )
}

/// tot: the last `act` once the tree is as deep as allowed (no tools offered).
pub const TOT_FINAL: &str = "Tree of thoughts: give the final answer. The steps so far are \
above; answer the user's latest request now, as well as they allow, without calling tools.";

/// got `plan_graph`: a DAG of sub-tasks as JSON. `rejected` is why the previous plan was
/// refused, for the one re-ask.
pub fn got_plan(max_nodes: u32, rejected: Option<&str>) -> String {
    let mut s = format!(
        "Graph of thoughts: plan sub-tasks. Break the user's latest request into a small graph \
         of at most {max_nodes} sub-tasks. Each node has a short id, a task that can be done on \
         its own, and deps: the ids of the nodes whose results it needs. Nodes that do not need \
         each other run at the same time. The graph must have no cycles; the nodes that nothing \
         depends on give the final answer. Reply with JSON only, no prose: {{\"nodes\": \
         [{{\"id\": \"a\", \"task\": \"...\", \"deps\": []}}, {{\"id\": \"b\", \"task\": \
         \"...\", \"deps\": [\"a\"]}}]}}"
    );
    if let Some(why) = rejected {
        s.push_str(&format!(
            "\n\nYour previous plan was rejected: {why}. Reply with a corrected plan."
        ));
    }
    s
}

/// got: one node's ReAct sub-task.
pub const GOT_NODE: &str = "Graph of thoughts: you are doing one sub-task of a larger request. \
Do only this sub-task, with the tools if it needs them, and answer with its result in a few \
sentences. The results of the sub-tasks it builds on are given with it.";

/// got (adaptive): is a node too complex to do in one go?
pub fn got_judge(max_nodes: u32) -> String {
    format!(
        "Graph of thoughts: judge a sub-task. Decide whether the sub-task below can be done in \
         one go, or is too complex and should be split into at most {max_nodes} smaller \
         sub-tasks. Reply with JSON only, no prose: {{\"complex\": false}} or {{\"complex\": \
         true, \"nodes\": [{{\"id\": \"a\", \"task\": \"...\", \"deps\": []}}]}} (no cycles)."
    )
}

/// got: the user turn that starts a node's sub-task.
pub fn got_brief(
    id: &str,
    task: &str,
    request: &str,
    inputs: &[(String, String, String)],
) -> String {
    let mut s = format!("Sub-task {id}: {task}\n\nThe whole request: {request}");
    if !inputs.is_empty() {
        s.push_str("\n\nResults it builds on:");
        for (dep, dep_task, result) in inputs {
            s.push_str(&format!("\n- {dep} ({dep_task}): {result}"));
        }
    }
    s
}

/// The JSON object in a model's reply: the whole reply, or the first `{` to the last `}` when
/// the model wrapped it in a code fence or prose. `None` when there is none.
pub fn json_in(text: &str) -> Option<serde_json::Value> {
    let trimmed = text.trim();
    if let Ok(v @ serde_json::Value::Object(_)) = serde_json::from_str(trimmed) {
        return Some(v);
    }
    let start = trimmed.find('{')?;
    let end = trimmed.rfind('}')?;
    if end <= start {
        return None;
    }
    match serde_json::from_str(&trimmed[start..=end]) {
        Ok(v @ serde_json::Value::Object(_)) => Some(v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_found_in_fences_and_prose() {
        assert_eq!(json_in(r#"{"a":1}"#).unwrap()["a"], 1);
        assert_eq!(
            json_in("Sure!\n```json\n{\"a\": [1, 2]}\n```\nDone.").unwrap()["a"][1],
            2
        );
        assert!(json_in("no json here").is_none());
        assert!(json_in("} backwards {").is_none());
        assert!(json_in("[1, 2]").is_none());
        assert!(json_in("{not json}").is_none());
    }

    #[test]
    fn markers_are_where_the_scripted_llm_looks() {
        assert!(tot_expand(3, &[]).starts_with("Tree of thoughts: propose next steps."));
        assert!(tot_expand(2, &["x".into()]).contains("- x"));
        assert!(tot_evaluate(&["a".into(), "b".into()]).contains("\n2. b"));
        assert!(got_plan(8, Some("a cycle")).contains("previous plan was rejected: a cycle"));
        assert!(
            got_brief("a", "t", "r", &[("b".into(), "u".into(), "v".into())])
                .ends_with("- b (u): v")
        );
    }
}
