//! tot: expand, evaluate, act, backtrack — and a restart in the middle of a step.

use super::*;

/// The tot script: Paris fails, SF works; after a result, answering wins.
pub(super) fn tot_model(req: &ChatRequest) -> Reply {
    let i = instruction(req);
    if i.starts_with("Tree of thoughts: propose next steps.") {
        return if has_results(req) {
            say(r#"{"candidates": ["Answer: sunny", "Check again"]}"#)
        } else {
            say(r#"{"candidates": ["Look up Paris", "Look up SF", "Guess"]}"#)
        };
    }
    if i.starts_with("Tree of thoughts: score the candidates.") {
        return if i.contains("Answer: sunny") {
            say(r#"{"scores": [0.95, 0.2]}"#)
        } else {
            say(r#"{"scores": [0.9, 0.8, 0.1]}"#)
        };
    }
    if let Some(step) = i.strip_prefix("Tree of thoughts: carry out this step: ") {
        let step = step.lines().next().unwrap_or_default();
        return match step {
            "Look up Paris" => call("get_weather", json!({"city": "Paris"})),
            "Look up SF" => call("get_weather", json!({"city": "SF"})),
            _ => say("It is sunny in SF."),
        };
    }
    say("It is sunny, I think.")
}

pub(super) fn tot_tool() -> Tool {
    Box::new(|_, args| {
        if args["city"] == "Paris" {
            ("no such city in this test".into(), true)
        } else {
            ("sunny".into(), false)
        }
    })
}

const TOT_TRACE: &[&str] = &[
    "run_start",
    "enter think_expand",
    "chunk think_expand",
    "usage",
    "llm_complete stop",
    "context_info",
    "tot_expand",
    "exit think_expand",
    "enter think_evaluate",
    "chunk think_evaluate",
    "usage",
    "llm_complete stop",
    "context_info",
    "tot_evaluate",
    "exit think_evaluate",
    "enter act",
    "tool_call_chunk",
    "tool_call get_weather",
    "usage",
    "llm_complete tool_calls",
    "context_info",
    "tool_start call_0_get_weather",
    "tool_end call_0_get_weather",
    "tot_backtrack",
    "exit act err",
    "enter act",
    "tool_call_chunk",
    "tool_call get_weather",
    "usage",
    "llm_complete tool_calls",
    "context_info",
    "tool_start call_0_get_weather",
    "tool_end call_0_get_weather",
    "exit act",
    "enter think_expand",
    "chunk think_expand",
    "usage",
    "llm_complete stop",
    "context_info",
    "tot_expand",
    "exit think_expand",
    "enter think_evaluate",
    "chunk think_evaluate",
    "usage",
    "llm_complete stop",
    "context_info",
    "tot_evaluate",
    "exit think_evaluate",
    "enter act",
    "chunk act",
    "usage",
    "llm_complete stop",
    "context_info",
    "exit act",
    "run_end",
];

pub(super) fn tot_run(tools: Vec<ToolInfo>, config: Config) -> Run {
    let mut run = Run::new(
        config,
        tools,
        Session::default(),
        &start(Agent::Tot, "Weather?"),
    );
    run.start();
    run
}

#[test]
fn tot_expands_evaluates_acts_and_backtracks_from_a_failed_step() {
    let mut run = tot_run(weather(false), Config::default());
    let mut h = host(tot_model);
    h.tool = tot_tool();
    h.drive(&mut run);
    assert_eq!(h.trace(), lines(TOT_TRACE));
    h.assert_dense();
    assert_eq!(h.reply(), "It is sunny in SF.");
    assert_eq!(
        h.find("tot_expand")[0],
        &Event::TotExpand {
            candidates: vec!["Look up Paris".into(), "Look up SF".into(), "Guess".into()]
        }
    );
    assert_eq!(
        h.find("tot_evaluate"),
        [
            &Event::TotEvaluate {
                chosen: 0,
                scores: vec![0.9, 0.8, 0.1]
            },
            &Event::TotEvaluate {
                chosen: 0,
                scores: vec![0.95, 0.2]
            }
        ]
    );
    assert_eq!(
        h.find("tot_backtrack"),
        [&Event::TotBacktrack {
            reason: "the step failed: get_weather failed: no such city in this test".into(),
            to_depth: 0
        }]
    );
    // Expanding and evaluating offer no tools; acting does. The second expand knows what was
    // abandoned, and asks for three candidates.
    assert!(h.requests[0].tools.is_empty() && h.requests[1].tools.is_empty());
    assert_eq!(h.requests[2].tools.len(), 1);
    let second_expand = instruction(&h.requests[4]);
    assert!(second_expand.contains("propose exactly 3"));
    assert!(
        second_expand.contains("tried and abandoned") && second_expand.contains("- Look up Paris")
    );
    // The failed branch left the history: only the SF call and its result remain of the path.
    assert!(!h.requests[3]
        .messages
        .iter()
        .any(|m| matches!(m, ChatMessage::Tool(r) if r.is_error)));
    let history = &run.session().history;
    assert_eq!(history.len(), 4, "{history:?}");
    assert!(matches!(&history[2], ChatMessage::Tool(r) if r.content == "sunny"));
    assert_eq!(history[3], ChatMessage::assistant("It is sunny in SF."));
    assert_eq!(h.tools_run.len(), 2);
}

#[test]
fn tot_backtracks_when_every_candidate_scores_low() {
    // Depth 0: A (0.9) then B (0.7); A works, but depth 1 only scores 0.2 and 0.1: back to B.
    let model = |req: &ChatRequest| {
        let i = instruction(req);
        if i.starts_with("Tree of thoughts: propose") {
            return if has_results(req) {
                say(r#"{"candidates": ["C", "D"]}"#)
            } else {
                say(r#"{"candidates": ["A", "B"]}"#)
            };
        }
        if i.starts_with("Tree of thoughts: score") {
            return if i.contains("1. C") {
                say(r#"{"scores": [0.2, 0.1]}"#)
            } else {
                say(r#"{"scores": [0.9, 0.7]}"#)
            };
        }
        match i.lines().next().unwrap_or_default() {
            "Tree of thoughts: carry out this step: A" => call("get_weather", json!({"city": "A"})),
            "Tree of thoughts: carry out this step: B" => say("B says sunny."),
            other => panic!("unexpected step {other}"),
        }
    };
    let config = Config {
        tot_candidates: 2,
        ..Config::default()
    };
    let mut run = tot_run(weather(false), config);
    let mut h = host(model);
    h.drive(&mut run);
    let trace = h.trace();
    let evaluate_exit = trace
        .iter()
        .rposition(|l| l == "exit think_evaluate")
        .unwrap();
    assert_eq!(
        trace[evaluate_exit - 2..],
        lines(&[
            "tot_evaluate",
            "tot_backtrack",
            "exit think_evaluate",
            "enter act",
            "chunk act",
            "usage",
            "llm_complete stop",
            "context_info",
            "exit act",
            "run_end"
        ])
    );
    assert_eq!(
        h.find("tot_backtrack"),
        [&Event::TotBacktrack {
            reason: "the best candidate scored 0.20, under the threshold 0.50".into(),
            to_depth: 0
        }]
    );
    assert_eq!(h.reply(), "B says sunny.");
    // Back at depth 0, A's call and result are gone from what B sees and from the history.
    let b = h.requests.last().unwrap();
    assert_eq!(b.messages, vec![ChatMessage::user("Weather?")]);
    assert_eq!(run.session().history.len(), 2);
    assert!(instruction(&h.requests[2]).starts_with("Tree of thoughts: carry out this step: A"));
}

#[test]
fn tot_gives_the_final_answer_without_tools_at_the_depth_limit() {
    let model = |req: &ChatRequest| {
        let i = instruction(req);
        if i.starts_with("Tree of thoughts: propose") {
            say(r#"{"candidates": ["Look up SF"]}"#)
        } else if i.starts_with("Tree of thoughts: score") {
            say("I'd say 7/10: [7]")
        } else if i.starts_with("Tree of thoughts: give the final answer.") {
            say("Sunny, from the lookup.")
        } else {
            call("get_weather", json!({"city": "SF"}))
        }
    };
    let config = Config {
        tot_max_depth: 1,
        ..Config::default()
    };
    let mut run = tot_run(weather(false), config);
    let mut h = host(model);
    h.drive(&mut run);
    assert_eq!(h.reply(), "Sunny, from the lookup.");
    let last = h.requests.last().unwrap();
    assert!(
        last.tools.is_empty(),
        "the final answer is asked for without tools"
    );
    assert!(has_results(last));
    // Unparsable scores leave the candidate at the threshold: it is carried out.
    assert_eq!(
        h.find("tot_evaluate"),
        [&Event::TotEvaluate {
            chosen: 0,
            scores: vec![0.5]
        }]
    );
    assert_eq!(h.requests.len(), 4);
}

#[test]
fn tot_survives_a_restart_in_the_middle_of_a_step() {
    let mut reference = host(tot_model);
    reference.tool = tot_tool();
    reference.approvals.extend([yes(), yes()]);
    reference.drive(&mut tot_run(weather(true), Config::default()));
    assert_eq!(reference.reply(), "It is sunny in SF.");

    // Stop at the second approval (after the backtrack), restart from the checkpoint.
    let mut run = tot_run(weather(true), Config::default());
    let mut h = host(tot_model);
    h.tool = tot_tool();
    h.approvals.push_back(yes());
    h.drive(&mut run);
    assert_eq!(h.find("tot_backtrack").len(), 1);
    assert_eq!(h.events.last().unwrap().event.kind(), "tool_approval");
    drop(run);
    let mut run = h.restart();
    h.approvals.push_back(yes());
    h.drive(&mut run);
    assert_eq!(h.trace(), reference.trace());
    h.assert_dense();
    assert_eq!(h.reply(), "It is sunny in SF.");
    assert_eq!(run.session().history, reference_history(&reference));
}

fn reference_history(h: &Host) -> Vec<ChatMessage> {
    // The history as the reference run's last request saw it, plus its answer.
    let mut history = h.requests.last().unwrap().messages.clone();
    history.push(ChatMessage::assistant(h.reply()));
    history
}
