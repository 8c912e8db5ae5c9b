//! How a run ends, fails, survives a restart, and what it refuses.

use super::*;

#[test]
fn cancel_mid_stream_keeps_what_was_said() {
    let mut run = started(
        Config::default(),
        tools(false),
        Session::default(),
        &start("Hi"),
    );
    let body = fixture(TEXT).1;
    let mut host = Host {
        streams: [TEXT].into(),
        cut_after: Some(body.len() / 2),
        ..Host::default()
    };
    host.drive(&mut run);
    let kinds = collapse(host.kinds());
    assert_eq!(kinds[kinds.len() - 2..], ["llm_complete", "error"]);
    let Event::Error { message, code, .. } = &host.events.last().unwrap().event else {
        panic!()
    };
    assert_eq!(
        (message.as_str(), code.as_deref()),
        ("cancelled", Some("cancelled"))
    );
    assert!(
        matches!(&host.events[host.events.len() - 2].event, Event::LlmComplete { finish_reason, content, .. }
        if finish_reason.as_str() == "cancelled" && !content.is_empty())
    );
    assert!(run.is_finished());
    assert_eq!(
        run.handle(Input::Cancel),
        Err(weft_agent::engine::EngineError::Finished)
    );
}

#[test]
fn iteration_cap_ends_the_run_with_a_reply_not_an_error() {
    let config = Config {
        max_iterations: 1,
        ..Config::default()
    };
    let mut run = started(config, tools(false), Session::default(), &start("Weather?"));
    let mut host = Host {
        streams: [ONE_TOOL].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    assert_eq!(host.requests.len(), 1);
    assert_eq!(host.events.last().unwrap().event.kind(), "run_end");
    assert_eq!(host.tools_run, ["get_weather"]);
}

#[test]
fn provider_error_mid_stream_fails_the_run_clearly() {
    let mut run = started(
        Config::default(),
        tools(false),
        Session::default(),
        &start("Think hard"),
    );
    let mut host = Host {
        streams: [MIDSTREAM_ERROR].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    let kinds = collapse(host.kinds());
    assert_eq!(kinds[..3], ["run_start", "node_enter", "reasoning_chunk"]);
    assert_eq!(*kinds.last().unwrap(), "error");
    let Event::Error { message, code, .. } = &host.events.last().unwrap().event else {
        panic!()
    };
    assert_eq!(code.as_deref(), Some("provider"));
    assert!(!message.is_empty());
    assert!(host.finished);
}

#[test]
fn a_run_checkpointed_while_awaiting_approval_continues_after_restore() {
    // Uninterrupted, for reference.
    let (_, reference) = approval_run(vec![decision(Review::Yes, None)], vec![ONE_TOOL, TEXT]);

    // Stop at the approval, as a Durable Object would, keeping only the checkpoint.
    let mut run = started(
        Config::default(),
        tools(true),
        Session::default(),
        &start("Weather in SF?"),
    );
    let mut host = Host {
        streams: [ONE_TOOL, TEXT].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    assert_eq!(host.events.last().unwrap().event.kind(), "tool_approval");
    let saved = run.checkpoint().expect("a run serializes");
    let logged = host.events.last().unwrap().envelope.event_id.unwrap();
    drop(run);

    let mut restored = Run::restore(&saved).unwrap();
    restored.resume(logged);
    assert_eq!(restored.pending_approvals().len(), 1);
    host.approvals.push_back(decision(Review::Yes, None));
    host.drive(&mut restored);
    assert!(host.finished);
    assert_eq!(host.kinds(), reference.kinds());
    let ids: Vec<u64> = host
        .events
        .iter()
        .map(|e| e.envelope.event_id.unwrap())
        .collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
    assert_eq!(reply_of(&host), reply_of(&reference));
}

#[test]
fn a_tool_result_of_megabytes_is_cut_to_what_the_model_and_the_log_keep() {
    // A window the cut result fits in, so no compaction comes between.
    let config = Config {
        context_window: 1_000_000,
        ..Config::default()
    };
    let mut run = started(
        config,
        tools(false),
        Session::default(),
        &start("Weather in SF?"),
    );
    let mut host = Host {
        streams: [ONE_TOOL, TEXT].into(),
        result_bytes: Some(3_000_000),
        ..Host::default()
    };
    host.drive(&mut run);
    assert!(host.finished);
    let sent = host.requests[1]
        .messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::Tool(result) => Some(result.content.clone()),
            _ => None,
        })
        .expect("the tool result went back to the model");
    assert!(sent.len() < MAX_TOOL_RESULT_BYTES + 100, "{}", sent.len());
    assert!(sent.ends_with(&format!(
        "[truncated: the tool returned 3000000 bytes; the first {MAX_TOOL_RESULT_BYTES} are shown]"
    )));
    let logged = host
        .events
        .iter()
        .find_map(|e| match &e.event {
            Event::ToolEnd { result, .. } => Some(result.len()),
            _ => None,
        })
        .expect("a tool_end event");
    assert!(logged < MAX_TOOL_RESULT_BYTES + 100, "{logged}");
}

/// A checkpoint written by the build of 2026-11-24 (a run waiting for the approval of
/// `get_weather`, 16 events logged): a deploy must not strand the runs it finds in storage, so
/// every later build restores it. `WEFT_BLESS_CHECKPOINTS=1` rewrites it from today's build,
/// which only a deliberate format break should do.
const GOLDEN_CHECKPOINT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/checkpoints/awaiting-approval.2026-11-24.json"
);

#[test]
fn a_checkpoint_of_an_earlier_build_restores_and_the_run_goes_on() {
    if std::env::var_os("WEFT_BLESS_CHECKPOINTS").is_some() {
        let mut run = started(
            Config::default(),
            tools(true),
            Session::default(),
            &start("Weather in SF?"),
        );
        let mut host = Host {
            streams: [ONE_TOOL].into(),
            ..Host::default()
        };
        host.drive(&mut run);
        assert_eq!(
            host.events.len(),
            16,
            "the fixture's event count is in its doc"
        );
        let saved = run.checkpoint().expect("a run serializes");
        std::fs::write(GOLDEN_CHECKPOINT, saved + "\n").expect("fixture written");
    }
    let saved = std::fs::read_to_string(GOLDEN_CHECKPOINT).expect("the golden checkpoint");
    let mut restored = Run::restore(saved.trim()).expect("an earlier build's checkpoint restores");
    restored.resume(16);
    assert_eq!(restored.pending_approvals().len(), 1);
    let mut host = Host {
        streams: [TEXT].into(),
        ..Host::default()
    };
    host.approvals.push_back(decision(Review::Yes, None));
    host.drive(&mut restored);
    assert!(host.finished);
    assert_eq!(host.tools_run, ["get_weather"]);
    assert_eq!(host.events.first().unwrap().envelope.event_id, Some(17));
    assert_eq!(host.events.last().unwrap().event.kind(), "run_end");
}

#[test]
fn a_forged_or_stale_approval_is_refused_and_nothing_runs() {
    let mut run = started(
        Config::default(),
        tools(true),
        Session::default(),
        &start("Weather?"),
    );
    let mut host = Host {
        streams: [ONE_TOOL].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    let forged = ApprovalDecision {
        call_id: Some("call_forged".into()),
        ..decision(Review::Yes, None)
    };
    assert!(run.handle(Input::Approval(forged)).is_err());
    assert!(run
        .handle(Input::ToolResult {
            call_id: "call_forged".into(),
            result: "x".into(),
            is_error: false
        })
        .is_err());
    assert!(host.tools_run.is_empty());
    assert_eq!(run.pending_approvals().len(), 1);
}

#[test]
fn verbose_snapshots_follow_each_node_and_a_thread_checkpoint_closes_the_run() {
    let start = Start {
        thread_id: Some("thread-9".into()),
        verbose: true,
        ..start("Weather?")
    };
    let mut run = Run::new(Config::default(), tools(false), Session::default(), &start);
    run.set_clock(1_763_805_600_000);
    run.start();
    let mut host = Host {
        streams: [ONE_TOOL, TEXT].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    let kinds = collapse(host.kinds());
    let exits: Vec<usize> = kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| **k == "node_exit")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(exits.len(), 3);
    for i in exits {
        assert_eq!(kinds[i + 1..i + 3], ["values", "updates"]);
    }
    assert_eq!(kinds[kinds.len() - 2..], ["checkpoint", "run_end"]);
    let Event::Checkpoint {
        thread_id,
        timestamp,
        step,
        ..
    } = &host.events[host.events.len() - 2].event
    else {
        panic!()
    };
    assert_eq!(thread_id.as_deref(), Some("thread-9"));
    assert_eq!(timestamp, "2025-11-22T10:00:00Z");
    assert_eq!(*step, 2);
    let Event::Updates { id, state } = &host
        .events
        .iter()
        .find(|e| e.event.kind() == "updates")
        .unwrap()
        .event
    else {
        panic!()
    };
    assert_eq!(id, "think");
    assert_eq!(state.to_value()["iteration"], 1);
}

#[test]
fn an_approval_nobody_can_give_is_refused_with_its_reason_and_the_run_goes_on() {
    let mut run = Run::new(
        Config::default(),
        tools(true),
        Session::default(),
        &start("Weather?"),
    );
    run.set_clock(5_000);
    run.start();
    let mut host = Host {
        streams: [ONE_TOOL, TEXT].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    let waiting: Vec<(String, String, Option<i64>)> = run
        .waiting_approvals()
        .map(|(id, name, at)| (id.to_string(), name.to_string(), at))
        .collect();
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0].1, "get_weather");
    assert_eq!(
        waiting[0].2,
        Some(5_000),
        "the ask is timed on the run's clock"
    );
    let reason = "no connected client can approve get_weather";
    run.handle(Input::Refuse {
        call_id: waiting[0].0.clone(),
        reason: reason.into(),
    })
    .unwrap();
    host.drive(&mut run);
    assert!(host.tools_run.is_empty());
    let end = host.events.iter().find_map(|e| match &e.event {
        Event::ToolEnd {
            result, is_error, ..
        } => Some((result.clone(), *is_error)),
        _ => None,
    });
    assert_eq!(
        end,
        Some((reason.into(), true)),
        "never 'denied by the user'"
    );
    assert!(
        matches!(&run.session().history[2], ChatMessage::Tool(r) if r.content == reason),
        "the model hears the reason"
    );
    assert_eq!(host.events.last().unwrap().event.kind(), "run_end");
    assert_eq!(run.waiting_approvals().count(), 0);
}

#[test]
fn a_running_tools_output_reaches_the_clients_and_none_comes_after_its_result() {
    let mut run = started(
        Config::default(),
        tools(false),
        Session::default(),
        &start("Weather?"),
    );
    let mut host = Host {
        streams: [ONE_TOOL, TEXT].into(),
        output: Some("step 1 of 2"),
        ..Host::default()
    };
    host.drive(&mut run);
    let kinds = collapse(host.kinds());
    let at = |kind: &str| kinds.iter().position(|k| *k == kind).unwrap();
    assert!(at("tool_start") < at("tool_output") && at("tool_output") < at("tool_end"));
    let output = host
        .events
        .iter()
        .find_map(|e| match &e.event {
            Event::ToolOutput {
                call_id,
                name,
                content,
            } => Some((call_id.clone(), name.clone(), content.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (output.1.as_str(), output.2.as_str()),
        ("get_weather", "step 1 of 2")
    );
    assert!(host.finished);
    assert!(run
        .handle(Input::ToolOutput {
            call_id: output.0.unwrap(),
            content: "late".into()
        })
        .is_err());
}
