//! Approvals: each review, and explain.

use super::*;

#[test]
fn approval_yes_runs_the_tool() {
    let (_, host) = approval_run(vec![decision(Review::Yes, None)], vec![ONE_TOOL, TEXT]);
    let kinds = collapse(host.kinds());
    let act = kinds.iter().position(|k| *k == "tool_approval").unwrap();
    assert_eq!(
        kinds[act - 1..act + 5],
        [
            "node_enter",
            "tool_approval",
            "approval_resolved",
            "tool_start",
            "tool_end",
            "node_exit"
        ]
    );
    assert_eq!(host.tools_run, ["get_weather"]);
    assert_eq!(*kinds.last().unwrap(), "run_end");
}

#[test]
fn approval_no_continue_tells_the_model_and_goes_on() {
    let (run, host) = approval_run(
        vec![decision(Review::NoContinue, Some("not today"))],
        vec![ONE_TOOL, TEXT],
    );
    assert!(host.tools_run.is_empty());
    let end = host.events.iter().find_map(|e| match &e.event {
        Event::ToolEnd {
            result, is_error, ..
        } => Some((result.clone(), *is_error)),
        _ => None,
    });
    assert_eq!(end, Some(("denied by the user: not today".into(), true)));
    assert_eq!(host.requests.len(), 2, "the model is asked again");
    assert!(
        matches!(&run.session().history[2], ChatMessage::Tool(r) if r.is_error && r.content.contains("not today"))
    );
    assert_eq!(host.events.last().unwrap().event.kind(), "run_end");
}

#[test]
fn approval_no_exit_stops_the_run() {
    let (run, host) = approval_run(vec![decision(Review::NoExit, None)], vec![ONE_TOOL]);
    assert!(host.tools_run.is_empty());
    assert_eq!(host.requests.len(), 1, "the model is not asked again");
    assert_eq!(
        collapse(host.kinds())[9..],
        [
            "node_enter",
            "tool_approval",
            "approval_resolved",
            "tool_end",
            "node_exit",
            "run_end"
        ]
    );
    assert!(run.is_finished());
}

#[test]
fn approval_always_is_remembered_for_the_session() {
    let (run, host) = approval_run(vec![decision(Review::Always, None)], vec![ONE_TOOL, TEXT]);
    assert_eq!(host.tools_run, ["get_weather"]);
    assert!(run.session().always_allowed.contains("get_weather"));
    // The next run of the session runs it without asking.
    let mut next = Run::new(
        Config::default(),
        tools(true),
        run.session().clone(),
        &start("Again?"),
    );
    next.start();
    let mut host = Host {
        streams: [ONE_TOOL, TEXT].into(),
        ..Host::default()
    };
    host.drive(&mut next);
    assert!(!host.kinds().contains(&"tool_approval"));
    assert_eq!(host.tools_run, ["get_weather"]);
    assert_eq!(next.session().iterations, 4);
}

#[test]
fn approval_explain_streams_an_explanation_then_asks_again() {
    let (_, host) = approval_run(
        vec![decision(Review::Explain, None), decision(Review::Yes, None)],
        vec![ONE_TOOL, TEXT, TEXT],
    );
    let kinds = collapse(host.kinds());
    let first = kinds.iter().position(|k| *k == "tool_approval").unwrap();
    assert_eq!(
        kinds[first..first + 8],
        [
            "tool_approval",
            "approval_resolved",
            "message_chunk",
            "usage",
            "llm_complete",
            "tool_approval",
            "approval_resolved",
            "tool_start"
        ]
    );
    let explain_chunk = host
        .events
        .iter()
        .find(|e| matches!(&e.event, Event::MessageChunk { id, .. } if id == "explain"));
    assert!(
        explain_chunk.is_some(),
        "the explanation is streamed from the explain node"
    );
    // The explanation request asks about the pending call and offers no tools.
    let req = &host.requests[1];
    assert!(req.tools.is_empty());
    assert!(
        matches!(req.messages.last(), Some(ChatMessage::User { content }) if content.contains("get_weather"))
    );
    assert_eq!(host.tools_run, ["get_weather"]);
}
