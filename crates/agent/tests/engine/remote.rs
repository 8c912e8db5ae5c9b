//! The remote room: a run whose agent runs elsewhere asks its host for the call once, takes
//! the decoded events as its own, waits for the page's answers between calls, and is never
//! called twice for one message (a restart fails it).

use weft_agent::engine::{Effect, Input, Output, Run, REMOTE};
use weft_protocol::dialect::agui::Answer;
use weft_protocol::json::RawJson;

use super::*;

fn remote_run(history: Vec<ChatMessage>, tools: Vec<ToolInfo>) -> Run {
    let start = Start {
        agent: Agent::Unknown(REMOTE.into()),
        ..start("count to 2")
    };
    let session = Session {
        history,
        ..Session::default()
    };
    started(Config::default(), tools, session, &start)
}

/// Everything the run put out since last asked: its events' kinds, and its effects.
fn outputs(run: &mut Run) -> (Vec<String>, Vec<Effect>) {
    let (mut events, mut effects) = (Vec::new(), Vec::new());
    while let Some(out) = run.poll() {
        match out {
            Output::Event(e) => events.push(e.event.kind().to_string()),
            Output::Effect(e) => effects.push(e),
        }
    }
    (events, effects)
}

fn text(content: &str) -> Event {
    Event::MessageChunk {
        content: content.into(),
        id: "m1".into(),
    }
}

fn run_end(reply: &str) -> Event {
    Event::RunEnd {
        reply: reply.into(),
        usage: None,
        total_usage: None,
        iteration_count: None,
        paused: false,
        tool_calls: Vec::new(),
    }
}

#[test]
fn a_remote_run_calls_once_with_the_history_and_ends_with_the_agents_reply() {
    let mut run = remote_run(vec![ChatMessage::user("before")], Vec::new());
    let (events, effects) = outputs(&mut run);
    assert_eq!(events, ["run_start"]);
    assert_eq!(
        effects,
        [Effect::CallRemote {
            history: vec![ChatMessage::user("before")],
            message: Some("count to 2".into()),
            state: None,
            answers: Vec::new(),
            tool_results: Vec::new(),
        }]
    );
    run.handle(Input::Remote {
        events: vec![text("1 "), text("2"), run_end("1 2")],
    })
    .unwrap();
    let (events, effects) = outputs(&mut run);
    assert_eq!(events, ["message_chunk", "message_chunk", "run_end"]);
    assert!(effects.contains(&Effect::Finished));
    assert!(run.is_finished());
    assert_eq!(
        run.session().history,
        [
            ChatMessage::user("before"),
            ChatMessage::user("count to 2"),
            ChatMessage::assistant("1 2")
        ]
    );
}

#[test]
fn the_agents_state_is_kept_in_the_session_and_sent_with_the_next_run() {
    let mut run = remote_run(Vec::new(), Vec::new());
    outputs(&mut run);
    let json = |text: &str| RawJson::parse(text).unwrap();
    run.handle(Input::Remote {
        events: vec![
            Event::Values {
                state: json(r#"{"count":1,"tags":[]}"#),
            },
            Event::StateDelta {
                delta: json(r#"[{"op":"replace","path":"/count","value":2}]"#),
            },
            run_end("ok"),
        ],
    })
    .unwrap();
    let (events, _) = outputs(&mut run);
    assert_eq!(events, ["values", "state_delta", "run_end"]);
    let state = run.session().remote_state.clone();
    assert_eq!(state, Some(json(r#"{"count":2,"tags":[]}"#)));
    // The session, as stored and read back, starts the next run with it.
    let session: Session =
        serde_json::from_str(&serde_json::to_string(run.session()).unwrap()).unwrap();
    let start = Start {
        agent: Agent::Unknown(REMOTE.into()),
        ..start("again")
    };
    let mut next = started(Config::default(), Vec::new(), session, &start);
    let (_, effects) = outputs(&mut next);
    assert!(matches!(
        &effects[..],
        [Effect::CallRemote { state: Some(s), .. }] if s == &json(r#"{"count":2,"tags":[]}"#)
    ));
    // A change that does not apply is the agent's error: the state stays as it was.
    next.handle(Input::Remote {
        events: vec![Event::StateDelta {
            delta: json(r#"[{"op":"replace","path":"/missing/x","value":1}]"#),
        }],
    })
    .unwrap();
    let (events, _) = outputs(&mut next);
    assert_eq!(events, ["error"]);
    assert_eq!(
        next.session().remote_state,
        Some(json(r#"{"count":2,"tags":[]}"#))
    );
}

#[test]
fn the_agents_error_fails_the_run_and_keeps_no_reply() {
    let mut run = remote_run(Vec::new(), Vec::new());
    outputs(&mut run);
    run.handle(Input::Remote {
        events: vec![
            text("half"),
            Event::Error {
                message: "the agent's event stream ended before the run finished".into(),
                code: Some("stream_cut".into()),
                id: None,
                details: None,
            },
        ],
    })
    .unwrap();
    let (events, _) = outputs(&mut run);
    assert_eq!(events, ["message_chunk", "error"]);
    assert!(run.is_finished());
    assert_eq!(run.session().history, [ChatMessage::user("count to 2")]);
}

#[test]
fn an_interrupt_waits_for_the_user_and_the_answer_goes_in_the_next_call() {
    let mut run = remote_run(Vec::new(), Vec::new());
    outputs(&mut run);
    run.handle(Input::Remote {
        events: vec![Event::ToolApproval {
            call_id: Some("call-1".into()),
            name: "write".into(),
            arguments: RawJson::empty_object(),
        }],
    })
    .unwrap();
    run.handle(Input::RemoteEnded).unwrap();
    let (events, effects) = outputs(&mut run);
    assert_eq!(events, ["tool_approval"]);
    assert_eq!(
        effects,
        [
            Effect::AwaitApproval {
                call_id: "call-1".into()
            },
            // Stored as it waits for the page, so that a restart asks again.
            Effect::Checkpoint,
        ]
    );
    assert_eq!(run.pending_approvals(), ["call-1"]);
    // A checkpoint of the waiting run restores it waiting.
    let back = Run::restore(&run.checkpoint().unwrap()).unwrap();
    assert_eq!(back.pending_approvals(), ["call-1"]);
    // Another call's answer is refused; the one asked is taken.
    assert!(run
        .handle(Input::Approval(ApprovalDecision {
            call_id: Some("forged".into()),
            review: Review::Yes,
            custom_deny_message: None,
            explanation: None,
        }))
        .is_err());
    run.handle(Input::Approval(ApprovalDecision {
        call_id: Some("call-1".into()),
        review: Review::Yes,
        custom_deny_message: None,
        explanation: None,
    }))
    .unwrap();
    let (events, effects) = outputs(&mut run);
    assert_eq!(events, ["approval_resolved"]);
    assert_eq!(
        effects.last(),
        Some(&Effect::CallRemote {
            history: Vec::new(),
            message: None,
            state: None,
            answers: vec![Answer {
                call_id: "call-1".into(),
                approved: true,
                message: None,
            }],
            tool_results: Vec::new(),
        })
    );
    run.handle(Input::Remote {
        events: vec![text("done"), run_end("done")],
    })
    .unwrap();
    assert!(run.is_finished());
}

#[test]
fn an_approval_refused_while_the_response_still_streams_goes_in_the_call_after_it() {
    let mut run = remote_run(Vec::new(), Vec::new());
    outputs(&mut run);
    run.handle(Input::Remote {
        events: vec![Event::ToolApproval {
            call_id: Some("call-1".into()),
            name: "write".into(),
            arguments: RawJson::empty_object(),
        }],
    })
    .unwrap();
    // The host found nobody to ask before the response ended.
    run.handle(Input::Refuse {
        call_id: "call-1".into(),
        reason: "no connected client can approve write".into(),
    })
    .unwrap();
    let (_, effects) = outputs(&mut run);
    assert!(!effects
        .iter()
        .any(|e| matches!(e, Effect::CallRemote { .. })));
    run.handle(Input::RemoteEnded).unwrap();
    let (events, effects) = outputs(&mut run);
    assert!(!events.contains(&"error".to_string()), "{events:?}");
    assert!(matches!(
        effects.last(),
        Some(Effect::CallRemote { message: None, answers, .. })
            if answers == &[Answer {
                call_id: "call-1".into(),
                approved: false,
                message: Some("no connected client can approve write".into()),
            }]
    ));
}

#[test]
fn a_page_tool_the_agent_calls_runs_on_the_page_and_its_result_goes_in_the_next_call() {
    let page_tool = ToolInfo {
        client: true,
        ..tool("pick_color", false)
    };
    let mut run = remote_run(Vec::new(), vec![page_tool]);
    outputs(&mut run);
    run.handle(Input::Remote {
        events: vec![Event::ToolCall {
            call_id: Some("c1".into()),
            name: "pick_color".into(),
            arguments: RawJson::empty_object(),
        }],
    })
    .unwrap();
    let (_, effects) = outputs(&mut run);
    assert!(effects.is_empty(), "nothing runs before the response ends");
    run.handle(Input::RemoteEnded).unwrap();
    let (events, effects) = outputs(&mut run);
    assert_eq!(events, ["tool_start"]);
    // Stored as it waits for the page, so that a restart asks again.
    assert!(matches!(
        &effects[..],
        [Effect::RunTool { call_id, client: true, .. }, Effect::Checkpoint] if call_id == "c1"
    ));
    run.handle(Input::ToolResult {
        call_id: "c1".into(),
        result: "blue".into(),
        is_error: false,
    })
    .unwrap();
    let (events, effects) = outputs(&mut run);
    assert_eq!(events, ["tool_end"]);
    assert!(matches!(
        effects.last(),
        Some(Effect::CallRemote { message: None, tool_results, .. })
            if tool_results == &[("c1".to_string(), "blue".to_string())]
    ));
}

#[test]
fn a_restart_fails_a_remote_run_rather_than_calling_again() {
    let mut run = remote_run(Vec::new(), Vec::new());
    outputs(&mut run);
    run.handle(Input::Remote {
        events: vec![text("1 ")],
    })
    .unwrap();
    outputs(&mut run);
    let mut back = Run::restore(&run.checkpoint().unwrap()).unwrap();
    back.resume(run.last_event_id());
    let (events, effects) = outputs(&mut back);
    assert_eq!(events, ["error"]);
    assert!(!effects
        .iter()
        .any(|e| matches!(e, Effect::CallRemote { .. } | Effect::CallLlm { .. })));
    assert!(back.is_finished());
}

#[test]
fn a_run_stored_before_it_began_fails_on_restore_too() {
    let start = Start {
        agent: Agent::Unknown(REMOTE.into()),
        ..start("count to 2")
    };
    // The host stores a run before it starts it.
    let run = Run::new(Config::default(), Vec::new(), Session::default(), &start);
    let mut back = Run::restore(&run.checkpoint().unwrap()).unwrap();
    back.resume(0);
    let (events, effects) = outputs(&mut back);
    assert!(events.ends_with(&["error".to_string()]), "{events:?}");
    assert!(!effects
        .iter()
        .any(|e| matches!(e, Effect::CallRemote { .. } | Effect::CallLlm { .. })));
}

#[test]
fn a_remote_response_that_ends_with_nothing_to_wait_for_fails_the_run() {
    let mut run = remote_run(Vec::new(), Vec::new());
    outputs(&mut run);
    run.handle(Input::RemoteEnded).unwrap();
    let (events, _) = outputs(&mut run);
    assert_eq!(events, ["error"]);
    assert!(run.is_finished());
}

#[test]
fn a_run_restored_while_it_waits_for_an_approval_waits_on_and_goes_on() {
    let mut run = remote_run(Vec::new(), Vec::new());
    outputs(&mut run);
    run.handle(Input::Remote {
        events: vec![Event::ToolApproval {
            call_id: Some("call-1".into()),
            name: "write".into(),
            arguments: RawJson::empty_object(),
        }],
    })
    .unwrap();
    run.handle(Input::RemoteEnded).unwrap();
    outputs(&mut run);
    let mut back = Run::restore(&run.checkpoint().unwrap()).unwrap();
    back.resume(run.last_event_id());
    // It waits on, asking nothing at once (a refusal when no client is connected yet).
    let (events, effects) = outputs(&mut back);
    assert!(events.is_empty(), "{events:?}");
    assert!(effects.is_empty(), "{effects:?}");
    assert!(!back.is_finished());
    assert_eq!(back.pending_approvals(), ["call-1"]);
    back.handle(Input::Approval(ApprovalDecision {
        call_id: Some("call-1".into()),
        review: Review::Yes,
        custom_deny_message: None,
        explanation: None,
    }))
    .unwrap();
    let (events, effects) = outputs(&mut back);
    assert_eq!(events, ["approval_resolved"]);
    assert!(matches!(
        effects.last(),
        Some(Effect::CallRemote { message: None, answers, .. })
            if answers.len() == 1 && answers[0].call_id == "call-1" && answers[0].approved
    ));
}
