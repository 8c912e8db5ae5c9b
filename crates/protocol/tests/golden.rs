//! Golden transcripts: for every dialect and scenario, `tests/fixtures/<dialect>/<name>.jsonl`
//! holds the frames the server sends and `<name>.transcript.json` what a client reassembles
//! from them. The test checks both directions: encoding the canonical run gives exactly the
//! recorded frames, and reassembling the recorded frames gives exactly the recorded transcript.
//! Run with `WEFT_BLESS=1` to rewrite the fixtures after an intended change, then review the diff.

mod common;

use std::path::PathBuf;

use weft_protocol::{Dialect, Encoder, Reassembler, Transcript};

fn fixture(dialect: Dialect, name: &str, ext: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dialect.as_str())
        .join(format!("{name}.{ext}"))
}

fn frames_of(dialect: Dialect, run: &[weft_protocol::Sequenced]) -> Vec<String> {
    let mut enc = Encoder::new(dialect, 42);
    run.iter().flat_map(|e| enc.encode(e)).collect()
}

fn reassemble(dialect: Dialect, frames: &[String]) -> Transcript {
    let mut r = Reassembler::new(dialect);
    for f in frames {
        let pushed = r.push_frame(f.as_bytes()).unwrap();
        assert!(pushed.gap.is_none() && !pushed.duplicate, "{dialect}: {f}");
    }
    r.transcript().clone()
}

#[test]
fn golden_transcripts() {
    let bless = std::env::var_os("WEFT_BLESS").is_some();
    let mut checked = 0;
    for dialect in Dialect::ALL {
        for (name, run) in common::scenarios() {
            let frames = frames_of(dialect, &run);
            let transcript =
                serde_json::to_string_pretty(&reassemble(dialect, &frames)).unwrap() + "\n";
            let jsonl = frames.join("\n") + "\n";
            let (frames_path, transcript_path) = (
                fixture(dialect, name, "jsonl"),
                fixture(dialect, name, "transcript.json"),
            );
            if bless {
                std::fs::create_dir_all(frames_path.parent().unwrap()).unwrap();
                std::fs::write(&frames_path, &jsonl).unwrap();
                std::fs::write(&transcript_path, &transcript).unwrap();
            }
            let recorded = std::fs::read_to_string(&frames_path).unwrap_or_else(|e| {
                panic!("{}: {e} (run with WEFT_BLESS=1)", frames_path.display())
            });
            assert_eq!(jsonl, recorded, "{dialect}/{name}: encoding changed");
            let recorded_frames: Vec<String> = recorded.lines().map(String::from).collect();
            let reassembled = reassemble(dialect, &recorded_frames);
            // The SDK writes transcripts without serde; `Serialize` is the reference.
            assert_eq!(
                reassembled.to_json(),
                serde_json::to_string(&reassembled).unwrap(),
                "{dialect}/{name}: Transcript::to_json"
            );
            let got = serde_json::to_string_pretty(&reassembled).unwrap() + "\n";
            let want = std::fs::read_to_string(&transcript_path).unwrap();
            assert_eq!(got, want, "{dialect}/{name}: reassembly changed");
            checked += 1;
        }
    }
    assert_eq!(checked, Dialect::ALL.len() * common::scenarios().len());
}

#[test]
fn every_dialect_reassembles_the_same_transcript() {
    for (name, run) in common::scenarios() {
        let loom = reassemble(Dialect::Loom, &frames_of(Dialect::Loom, &run));
        for dialect in Dialect::ALL.into_iter().filter(|&d| d != Dialect::Loom) {
            let other = reassemble(dialect, &frames_of(dialect, &run));
            assert_eq!(
                serde_json::to_value(&other).unwrap(),
                serde_json::to_value(&loom).unwrap(),
                "{name}: {dialect} differs from loom"
            );
        }
    }
}

#[test]
fn scenarios_reassemble_to_what_they_say() {
    use weft_protocol::reassembler::{RunStatus, ToolStatus};
    let t = reassemble(
        Dialect::Loom,
        &frames_of(Dialect::Loom, &common::tool_call()),
    );
    assert_eq!(t.messages.len(), 3);
    assert_eq!(t.messages[0].text, "What time is it?");
    assert_eq!(t.messages[1].tool_call_ids, ["call_1"]);
    assert_eq!(t.messages[2].text, "It is 10:00 UTC.");
    let call = t.tool_call("call_1").unwrap();
    assert_eq!(
        call.arguments,
        Some(serde_json::json!({"timezone": "UTC"}).into())
    );
    assert_eq!(call.status, ToolStatus::Done);
    assert_eq!(call.result.as_deref(), Some("2026-11-22T10:00:00Z"));
    let run = t.run("run-tool").unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.total_usage.total_tokens, 122);
    assert_eq!(t.total_usage().prompt_tokens, 102);

    let t = reassemble(
        Dialect::Cueso,
        &frames_of(Dialect::Cueso, &common::approval_denied()),
    );
    let call = t.tool_call("call_w").unwrap();
    assert_eq!(call.status, ToolStatus::Denied);
    assert_eq!(call.review_message.as_deref(), Some("not now"));
    let run = t.run("run-deny").unwrap();
    assert_eq!(
        run.call_usage.len(),
        2,
        "usage per call reaches cueso clients too"
    );
    assert_eq!(run.total_usage.total_tokens, 168);

    let t = reassemble(
        Dialect::Agentloop,
        &frames_of(Dialect::Agentloop, &common::provider_error()),
    );
    let run = t.run("run-error").unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    assert!(run.error.as_deref().unwrap().contains("500"));

    let t = reassemble(
        Dialect::Agentchat,
        &frames_of(Dialect::Agentchat, &common::cancelled()),
    );
    assert_eq!(t.run("run-cancel").unwrap().status, RunStatus::Cancelled);
}

/// A call id names a call of its own run: a server that numbers calls per turn (`call_1` in
/// every run) gets a call per run, in place and as events alike.
#[test]
fn a_call_id_reused_by_another_run_is_another_call() {
    let frames = |run: &str, args: &str| {
        [
            format!(r#"{{"type":"user_message","message":"hi","run_id":"{run}","event_id":1}}"#),
            format!(
                r#"{{"type":"tool_call","tool_name":"read","tool_args":"{args}","run_id":"{run}","event_id":2,"call_id":"call_1"}}"#
            ),
            format!(
                r#"{{"type":"tool_result","tool_name":"read","result":"ok {run}","success":true,"run_id":"{run}","event_id":3,"call_id":"call_1"}}"#
            ),
        ]
    };
    for events in [false, true] {
        let mut r = Reassembler::new(Dialect::Agentchat);
        r.set_events(events);
        for frame in frames("run-a", "{}")
            .iter()
            .chain(&frames("run-b", "{\\\"x\\\":1}"))
        {
            r.push_frame(frame.as_bytes()).expect("a valid frame");
        }
        let calls = &r.transcript().tool_calls;
        assert_eq!(calls.len(), 2, "events: {events}");
        assert_eq!(calls[0].run_id.as_deref(), Some("run-a"));
        assert_eq!(calls[0].result.as_deref(), Some("ok run-a"));
        assert_eq!(calls[1].run_id.as_deref(), Some("run-b"));
        assert_eq!(calls[1].result.as_deref(), Some("ok run-b"));
        assert_eq!(calls[1].arguments, Some(serde_json::json!({"x": 1}).into()));
    }
}

#[test]
fn every_status_and_absence_is_written_as_serialize_writes_it() {
    use weft_protocol::reassembler::{Message, Run, RunStatus, ToolCall, ToolStatus};
    use weft_protocol::{Agent, Review, Role, Usage};
    let usage = Usage {
        prompt_tokens: 1,
        completion_tokens: 2,
        total_tokens: 3,
    };
    let call = |status, full: bool| ToolCall {
        call_id: "c\"1".into(),
        name: "n".into(),
        arguments_text: "{\"a\":".into(),
        arguments: full.then(|| serde_json::json!({"b": [1, 2.5], "a": null}).into()),
        status,
        review: full.then_some(Review::NoContinue),
        review_message: full.then(|| "no\n".into()),
        output: if full { "out".into() } else { String::new() },
        result: full.then(|| "r".into()),
        is_error: full,
        run_id: full.then(|| "run-1".into()),
    };
    let run = |status, full: bool| Run {
        run_id: full.then(|| "run-1".into()),
        agent: full.then(|| Agent::from("future-agent")),
        status,
        reply: full.then(|| "hi".into()),
        usage: full.then_some(usage),
        call_usage: if full { vec![usage, usage] } else { vec![] },
        total_usage: usage,
        error: full.then(|| "boom".into()),
        paused: full,
        state: full.then(|| weft_protocol::json::RawJson::parse(r#"{"k":[1,"s\u0000"]}"#).unwrap()),
    };
    let mut t = Transcript::default();
    assert_eq!(t.to_json(), serde_json::to_string(&t).unwrap());
    for full in [false, true] {
        t.messages.push(Message {
            role: if full { Role::Assistant } else { Role::User },
            text: "t\u{0}".into(),
            reasoning: if full { "why".into() } else { String::new() },
            run_id: full.then(|| "run-1".into()),
            tool_call_ids: if full {
                vec!["a".into(), "b".into()]
            } else {
                vec![]
            },
            complete: full,
        });
        for status in [
            ToolStatus::Streaming,
            ToolStatus::Pending,
            ToolStatus::AwaitingApproval,
            ToolStatus::Approved,
            ToolStatus::Denied,
            ToolStatus::Running,
            ToolStatus::Done,
            ToolStatus::Error,
        ] {
            t.tool_calls.push(call(status, full));
        }
        for status in [
            RunStatus::Running,
            RunStatus::Completed,
            RunStatus::Failed,
            RunStatus::Cancelled,
        ] {
            t.runs.push(run(status, full));
        }
    }
    assert_eq!(t.to_json(), serde_json::to_string(&t).unwrap());
}
