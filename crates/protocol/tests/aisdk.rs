//! Golden streams of the AI SDK dialect: for every shared scenario,
//! `tests/fixtures/aisdk/<name>.jsonl` holds the UI message chunks its requests get, one per
//! line, `[DONE]` where one request's stream ends. A run that asks for an approval ends its
//! stream there ([`Encoder::pause`]); the answer's request carries on with a fresh
//! encoder, as the server does. `WEFT_BLESS=1` rewrites them; tests/aisdk feeds them to the AI
//! SDK's own stream reader.

mod common;

use serde_json::{json, Value};
use weft_protocol::dialect::aisdk::{decode_request, Encoder};
use weft_protocol::{Agent, Command, Envelope, Event, Limits, Review, Sequenced};

fn streams_of(run: &[Sequenced]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut enc = Encoder::new();
    for ev in run {
        lines.extend(enc.encode(ev));
        if matches!(ev.event, Event::ToolApproval { .. }) {
            lines.extend(enc.pause());
            lines.push("[DONE]".into());
            enc = Encoder::new();
        }
    }
    lines.push("[DONE]".into());
    lines
}

#[test]
fn golden_streams() {
    for (name, run) in common::scenarios() {
        common::golden("aisdk", name, &(streams_of(&run).join("\n") + "\n"));
    }
}

#[test]
fn every_stream_opens_what_it_closes_and_ends_once() {
    for (name, run) in common::scenarios() {
        let lines = streams_of(&run);
        for stream in lines.split(|l| l == "[DONE]").filter(|s| !s.is_empty()) {
            let chunks: Vec<Value> = stream
                .iter()
                .map(|c| serde_json::from_str(c).unwrap())
                .collect();
            let kinds: Vec<&str> = chunks.iter().map(|c| c["type"].as_str().unwrap()).collect();
            assert_eq!(kinds[0], "start", "{name}: {kinds:?}");
            let ends = kinds
                .iter()
                .filter(|k| ["finish", "error", "abort"].contains(k))
                .count();
            assert_eq!(ends, 1, "{name}: one end per stream: {kinds:?}");
            for (open, close) in [
                ("text-start", "text-end"),
                ("reasoning-start", "reasoning-end"),
                ("start-step", "finish-step"),
            ] {
                let opened = kinds.iter().filter(|k| **k == open).count();
                let closed = kinds.iter().filter(|k| **k == close).count();
                assert_eq!(opened, closed, "{name}: {open}/{close} in {kinds:?}");
            }
            // Every delta belongs to an open part of its kind.
            let mut open: Vec<String> = Vec::new();
            for c in &chunks {
                let kind = c["type"].as_str().unwrap();
                let id = c["id"].as_str().unwrap_or_default().to_string();
                if kind.ends_with("-start") && kind != "tool-input-start" {
                    open.push(id);
                } else if kind.ends_with("-delta") && kind != "tool-input-delta" {
                    assert!(open.contains(&id), "{name}: {c} outside its part");
                } else if kind.ends_with("-end") {
                    open.retain(|o| *o != id);
                }
            }
        }
    }
}

fn ev(id: u64, event: Event) -> Sequenced {
    Sequenced {
        envelope: Envelope {
            run_id: Some("r1".to_string()),
            event_id: Some(id),
            ..Envelope::default()
        },
        event,
    }
}

fn types(chunks: &[String]) -> Vec<String> {
    chunks
        .iter()
        .map(|c| {
            let v: Value = serde_json::from_str(c).unwrap();
            v["type"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn a_user_message_starts_a_run_in_the_chat() {
    let body = br#"{"id":"chat-1","trigger":"submit-message","agent":"tot",
        "messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Hello"},{"type":"text","text":" there"}]}]}"#;
    let req = decode_request(body, Limits::default()).unwrap();
    assert_eq!(req.chat_id, "chat-1");
    let [Command::Run(run)] = &req.commands[..] else {
        panic!("{:?}", req.commands)
    };
    assert_eq!(run.message, "Hello there");
    assert_eq!(run.thread_id.as_deref(), Some("chat-1"));
    assert_eq!(run.agent, Some(Agent::Tot));
}

#[test]
fn answers_come_in_the_last_assistant_message() {
    let body = br#"{"id":"c","messages":[
        {"id":"u","role":"user","parts":[{"type":"text","text":"hi"}]},
        {"id":"a","role":"assistant","parts":[
          {"type":"step-start"},
          {"type":"text","text":"ok","state":"done"},
          {"type":"tool-write","toolCallId":"w1","state":"approval-responded","input":{},
           "approval":{"id":"w1","approved":false,"reason":"not now"}},
          {"type":"tool-write","toolCallId":"w2","state":"approval-responded","input":{},
           "approval":{"id":"w2","approved":true}},
          {"type":"tool-shell","toolCallId":"s1","state":"output-available","input":{},"output":{"code":0}},
          {"type":"dynamic-tool","toolName":"x","toolCallId":"x1","state":"output-error","input":{},"errorText":"boom"},
          {"type":"tool-get_time","toolCallId":"t1","state":"input-available","input":{}}]}],
        "tools":[{"name":"shell","input_schema":{"type":"object"}}]}"#;
    let req = decode_request(body, Limits::default()).unwrap();
    assert_eq!(req.commands.len(), 5, "{:?}", req.commands);
    assert!(
        matches!(&req.commands[0], Command::ClientTools(t) if t.approvals && t.tools[0].name == "shell")
    );
    assert!(matches!(&req.commands[1], Command::ApprovalResponse(d)
        if d.call_id.as_deref() == Some("w1") && d.review == Review::NoContinue
            && d.custom_deny_message.as_deref() == Some("not now")));
    assert!(matches!(&req.commands[2], Command::ApprovalResponse(d)
        if d.call_id.as_deref() == Some("w2") && d.review == Review::Yes));
    assert!(matches!(&req.commands[3], Command::ToolResult(r)
        if r.call_id == "s1" && r.result == r#"{"code":0}"# && !r.is_error));
    assert!(matches!(&req.commands[4], Command::ToolResult(r)
        if r.call_id == "x1" && r.result == "boom" && r.is_error));
}

#[test]
fn bad_bodies_are_clear_errors() {
    for (body, says) in [
        (&br#"{"messages":[]}"#[..], "id"),
        (br#"{"id":"c","messages":[]}"#, "messages"),
        (br#"{"id":"c"}"#, "messages"),
        (br#"{"id":"c","messages":[{"role":"user","parts":[]}]}"#, "no text"),
        (br#"{"id":"c","messages":[{"role":"system","parts":[]}]}"#, "system"),
        (br#"{"id":"c","messages":[{"role":"user"}]}"#, "parts"),
        (br#"{"id":"c","messages":[{"role":"assistant","parts":[{"type":"tool-a","state":"output-available"}]}]}"#, "toolCallId"),
        (b"not json", "JSON"),
    ] {
        let e = decode_request(body, Limits::default()).unwrap_err();
        assert!(e.to_string().contains(says), "{e} should say {says}");
    }
}

#[test]
fn a_reply_with_a_tool_is_two_steps_in_one_message() {
    let mut enc = Encoder::new();
    let run = [
        ev(
            1,
            Event::RunStart {
                run_id: Some("r1".into()),
                message: None,
                agent: None,
            },
        ),
        ev(2, Event::NodeEnter { id: "think".into() }),
        ev(
            3,
            Event::ReasoningChunk {
                content: "hm".into(),
                id: "think".into(),
            },
        ),
        ev(
            4,
            Event::MessageChunk {
                content: "Let me".into(),
                id: "think".into(),
            },
        ),
        ev(
            5,
            Event::MessageChunk {
                content: " check.".into(),
                id: "think".into(),
            },
        ),
        ev(
            6,
            Event::ToolCallChunk {
                call_id: Some("c1".into()),
                name: Some("get_time".into()),
                arguments_delta: String::new(),
            },
        ),
        ev(
            7,
            Event::ToolCallChunk {
                call_id: Some("c1".into()),
                name: Some("get_time".into()),
                arguments_delta: "{}".into(),
            },
        ),
        ev(
            8,
            Event::ToolCall {
                call_id: Some("c1".into()),
                name: "get_time".into(),
                arguments: json!({}).into(),
            },
        ),
        ev(
            9,
            Event::LlmComplete {
                content: "Let me check.".into(),
                tool_calls: vec!["get_time".into()],
                finish_reason: "tool_calls".into(),
            },
        ),
        ev(
            10,
            Event::ToolEnd {
                call_id: Some("c1".into()),
                name: "get_time".into(),
                result: "noon".into(),
                is_error: false,
            },
        ),
        ev(
            11,
            Event::MessageChunk {
                content: "Noon.".into(),
                id: "think".into(),
            },
        ),
        ev(
            12,
            Event::LlmComplete {
                content: "Noon.".into(),
                tool_calls: Vec::new(),
                finish_reason: "stop".into(),
            },
        ),
        ev(
            13,
            Event::RunEnd {
                reply: "Noon.".into(),
                usage: None,
                total_usage: None,
                iteration_count: None,
                paused: false,
                tool_calls: Vec::new(),
            },
        ),
    ];
    let chunks: Vec<String> = run.iter().flat_map(|e| enc.encode(e)).collect();
    assert_eq!(
        types(&chunks),
        [
            "start",
            "start-step",
            "reasoning-start",
            "reasoning-delta",
            "reasoning-end",
            "text-start",
            "text-delta",
            "text-delta",
            "text-end",
            "tool-input-start",
            "tool-input-delta",
            "tool-input-available",
            "tool-output-available",
            "finish-step",
            "start-step",
            "text-start",
            "text-delta",
            "text-end",
            "finish-step",
            "finish"
        ]
    );
    assert!(chunks[0].contains(r#""messageId":"msg-r1""#));
    assert!(enc.is_finished());
    assert!(enc.encode(&run[0]).is_empty(), "nothing after the end");
}

#[test]
fn an_approval_pauses_the_stream_and_the_next_request_continues_the_message() {
    let mut first = Encoder::new();
    let mut out: Vec<String> = [
        ev(
            4,
            Event::ToolCall {
                call_id: Some("w".into()),
                name: "write".into(),
                arguments: json!({"path": "a"}).into(),
            },
        ),
        ev(
            5,
            Event::LlmComplete {
                content: String::new(),
                tool_calls: vec!["write".into()],
                finish_reason: "tool_calls".into(),
            },
        ),
        ev(
            6,
            Event::ToolApproval {
                call_id: Some("w".into()),
                name: "write".into(),
                arguments: json!({"path": "a"}).into(),
            },
        ),
    ]
    .iter()
    .flat_map(|e| first.encode(e))
    .collect();
    out.extend(first.pause());
    assert_eq!(
        types(&out),
        [
            "start",
            "start-step",
            "tool-input-available",
            "tool-approval-request",
            "finish-step",
            "finish"
        ]
    );
    assert!(out.last().unwrap().contains("tool-calls"));
    let mut next = Encoder::new();
    let out: Vec<String> = [
        ev(
            7,
            Event::ApprovalResolved {
                call_id: Some("w".into()),
                name: None,
                review: Review::NoContinue,
                message: None,
            },
        ),
        ev(
            8,
            Event::ToolEnd {
                call_id: Some("w".into()),
                name: "write".into(),
                result: "denied by the user".into(),
                is_error: true,
            },
        ),
        ev(
            9,
            Event::Error {
                message: "cancelled".into(),
                code: Some("cancelled".into()),
                id: None,
                details: None,
            },
        ),
    ]
    .iter()
    .flat_map(|e| next.encode(e))
    .collect();
    assert_eq!(types(&out), ["start", "tool-output-denied", "abort"]);
    assert!(out[0].contains("msg-r1"), "the same message");
}

#[test]
fn a_failure_is_an_error_chunk() {
    let mut enc = Encoder::new();
    let out = enc.encode(&ev(
        1,
        Event::Error {
            message: "the model is down".into(),
            code: Some("provider".into()),
            id: None,
            details: None,
        },
    ));
    assert_eq!(types(&out), ["start", "error"]);
    assert!(out[1].contains("the model is down"));
    assert!(enc.pause().is_empty());
}

#[test]
fn deltas_of_one_part_join_and_nothing_else_does() {
    use weft_protocol::dialect::aisdk::Chunk;
    let delta = |kind: &'static str, id: &str, text: &str| Chunk::Delta {
        kind,
        id: id.into(),
        delta: text.into(),
    };
    let mut a = delta("text", "t1", "Hel");
    assert_eq!(a.absorb(delta("text", "t1", "lo \"you\"")), None);
    assert_eq!(
        serde_json::from_str::<Value>(&a.to_json()).unwrap(),
        json!({"type": "text-delta", "id": "t1", "delta": "Hello \"you\""})
    );
    assert_eq!(
        a.to_json(),
        json!({"type": "text-delta", "id": "t1", "delta": "Hello \"you\""}).to_string()
    );
    // Another part, another kind, or not a delta: given back, the first left as it was.
    for other in [
        delta("text", "t2", "x"),
        delta("reasoning", "t1", "x"),
        Chunk::Json(r#"{"id":"t1","type":"text-end"}"#.into()),
    ] {
        assert_eq!(a.absorb(other.clone()), Some(other));
    }
    assert_eq!(
        a,
        delta("text", "t1", "Hello \"you\""),
        "nothing taken from what was given back"
    );
    let mut end = Chunk::Json(r#"{"type":"finish-step"}"#.into());
    let next = delta("text", "t3", "x");
    assert_eq!(end.absorb(next.clone()), Some(next));
}
