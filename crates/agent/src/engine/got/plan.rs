//! A plan (or an adaptive sub-graph) as the model writes it, read and validated into
//! [`Planned`] nodes: see the module docs of `got` for the shapes accepted and the checks.

use serde_json::Value;
use weft_protocol::sorted::SortedSet;

use super::super::{clip, prompts};

/// Longest node id accepted from a plan: ids go into every event of the node.
const MAX_ID_CHARS: usize = 64;

/// A node as planned, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::engine) struct Planned {
    pub(super) id: String,
    pub(super) task: String,
    pub(super) deps: Vec<String>,
}

/// Reads and validates a plan (or a sub-graph): see the module docs for the shape.
pub(in crate::engine) fn parse_plan(text: &str, max_nodes: usize) -> Result<Vec<Planned>, String> {
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
pub(in crate::engine) fn parse_judgement(text: &str, max_nodes: usize) -> Option<Vec<Planned>> {
    let v = prompts::json_in(text)?;
    if v.get("complex").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    plan_from(&v, max_nodes).ok().filter(|p| p.len() >= 2)
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
}
