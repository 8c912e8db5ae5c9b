//! dup: understand, plan, act, observe — and a restart while an approval waits.

use super::*;

const UNDERSTANDING: &str =
    "Core goal: the weather in SF. Key constraints: be short. Relevant context: none.";

pub(super) fn dup_model(req: &ChatRequest) -> Reply {
    let i = instruction(req);
    if i.starts_with("Understand the problem first.") {
        return say(UNDERSTANDING);
    }
    assert!(i.starts_with("Plan, act, observe."), "{i}");
    if has_results(req) {
        say("It is sunny in SF.")
    } else {
        Reply::Say(
            "I will look it up. ".into(),
            vec![("get_weather", json!({"city": "SF"}))],
        )
    }
}

pub(super) fn dup_run(approval: bool) -> Run {
    let mut run = Run::new(
        Config::default(),
        weather(approval),
        Session::default(),
        &start(Agent::Dup, "Weather in SF?"),
    );
    run.start();
    run
}

const DUP_TRACE: &[&str] = &[
    "run_start",
    "enter understand",
    "chunk understand",
    "usage",
    "llm_complete stop",
    "context_info",
    "exit understand",
    "enter plan",
    "chunk plan",
    "tool_call_chunk",
    "tool_call get_weather",
    "usage",
    "llm_complete tool_calls",
    "context_info",
    "exit plan",
    "enter act",
    "tool_start call_0_get_weather",
    "tool_end call_0_get_weather",
    "exit act",
    "enter observe",
    "context_info",
    "exit observe",
    "enter plan",
    "chunk plan",
    "usage",
    "llm_complete stop",
    "context_info",
    "exit plan",
    "run_end",
];

#[test]
fn dup_understands_then_plans_acts_and_observes() {
    let mut run = dup_run(false);
    let mut h = host(dup_model);
    h.drive(&mut run);
    assert_eq!(h.trace(), lines(DUP_TRACE));
    assert!(h.finished);
    h.assert_dense();
    assert_eq!(h.reply(), "It is sunny in SF.");
    // understand offers no tools; plan offers them; the first plan repeats the request after
    // the understanding, the second answers the results.
    assert!(h.requests[0].tools.is_empty());
    assert_eq!(h.requests[1].tools.len(), 1);
    assert_eq!(
        last_user(&h.requests[1]),
        "With that understanding, carry out my request: Weather in SF?"
    );
    assert!(has_results(&h.requests[2]));
    // The understanding stays in the history, as an assistant turn; the cue does not.
    let history = &run.session().history;
    assert_eq!(history.len(), 5, "{history:?}");
    assert_eq!(history[1], ChatMessage::assistant(UNDERSTANDING));
    assert!(
        matches!(&history[2], ChatMessage::Assistant { tool_calls, .. } if tool_calls.len() == 1)
    );
    assert!(
        matches!(&history[3], ChatMessage::Tool(r) if r.content.starts_with("get_weather says ok"))
    );
    assert_eq!(history[4], ChatMessage::assistant("It is sunny in SF."));
    // Every model call is a round trip: understand + two plans.
    let Event::RunEnd {
        iteration_count,
        total_usage,
        ..
    } = &h.events.last().unwrap().event
    else {
        panic!()
    };
    assert_eq!(*iteration_count, Some(3));
    assert_eq!(h.find("usage").len(), 3);
    assert!(total_usage.unwrap().total_tokens > 30);
}

#[test]
fn dup_survives_a_restart_while_an_approval_waits() {
    let mut reference = host(dup_model);
    reference.approvals.push_back(yes());
    reference.drive(&mut dup_run(true));

    let mut run = dup_run(true);
    let mut h = host(dup_model);
    h.drive(&mut run);
    assert_eq!(h.events.last().unwrap().event.kind(), "tool_approval");
    drop(run);
    let mut run = h.restart();
    assert_eq!(run.pending_approvals(), ["call_0_get_weather"]);
    h.approvals.push_back(yes());
    h.drive(&mut run);
    assert!(h.finished);
    assert_eq!(h.trace(), reference.trace());
    h.assert_dense();
    assert_eq!(h.reply(), "It is sunny in SF.");
    assert_eq!(run.session().history.len(), 5);
}
