//! Golden streams of AG-UI: for every shared scenario, `tests/fixtures/agui-sse/<name>.jsonl` holds
//! the AG-UI events its streams carry, one per line, `[END]` where one stream (one AG-UI run)
//! ends. A run that asks for an approval ends its stream there ([`Encoder::pause`]: an
//! interrupt); the answer's input carries on with a fresh encoder, as the server does.
//! `WEFT_BLESS=1` rewrites them; tests/e2e/agui.test.mjs holds the server's live streams to
//! `@ag-ui/core`'s own schemas.

mod common;

use serde_json::{json, Value};
use weft_protocol::dialect::agui::{decode_event, decode_request, AguiEvent, Decoder, Encoder};
use weft_protocol::{Agent, Command, Event, Limits, Review};

fn streams_of(run: &[weft_protocol::Sequenced]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut enc = Encoder::new();
    for ev in run {
        lines.extend(enc.encode(ev).iter().map(AguiEvent::to_json));
        if matches!(ev.event, Event::ToolApproval { .. }) {
            lines.extend(enc.pause().iter().map(AguiEvent::to_json));
            lines.push("[END]".into());
            enc = Encoder::new();
        }
    }
    lines.push("[END]".into());
    lines
}

#[test]
fn golden_streams() {
    for (name, run) in common::scenarios() {
        common::golden("agui-sse", name, &(streams_of(&run).join("\n") + "\n"));
    }
}

/// What `@ag-ui/client` checks of a run (its `verifyEvents`): RUN_STARTED first, one end,
/// nothing open at RUN_FINISHED, every content inside its open message.
#[test]
fn every_stream_is_a_run_the_client_accepts() {
    for (name, run) in common::scenarios() {
        let lines = streams_of(&run);
        for stream in lines.split(|l| l == "[END]").filter(|s| !s.is_empty()) {
            let events: Vec<Value> = stream
                .iter()
                .map(|c| serde_json::from_str(c).unwrap())
                .collect();
            let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
            assert_eq!(kinds[0], "RUN_STARTED", "{name}: {kinds:?}");
            let ends = kinds
                .iter()
                .filter(|k| ["RUN_FINISHED", "RUN_ERROR"].contains(k))
                .count();
            assert_eq!(ends, 1, "{name}: one end per stream: {kinds:?}");
            assert!(
                ["RUN_FINISHED", "RUN_ERROR"].contains(kinds.last().unwrap()),
                "{name}: {kinds:?}"
            );
            let mut open: Vec<String> = Vec::new();
            for e in &events {
                let kind = e["type"].as_str().unwrap();
                let key = e["messageId"]
                    .as_str()
                    .or(e["toolCallId"].as_str())
                    .or(e["stepName"].as_str())
                    .unwrap_or_default()
                    .to_string();
                match kind {
                    "TEXT_MESSAGE_START"
                    | "TOOL_CALL_START"
                    | "STEP_STARTED"
                    | "REASONING_MESSAGE_START" => {
                        assert!(!open.contains(&key), "{name}: {key} opened twice");
                        open.push(format!("{kind}:{key}"));
                    }
                    "TEXT_MESSAGE_CONTENT" => assert!(
                        open.contains(&format!("TEXT_MESSAGE_START:{key}")),
                        "{name}: {e}"
                    ),
                    "TOOL_CALL_ARGS" => assert!(
                        open.contains(&format!("TOOL_CALL_START:{key}")),
                        "{name}: {e}"
                    ),
                    "REASONING_MESSAGE_CONTENT" => assert!(
                        open.contains(&format!("REASONING_MESSAGE_START:{key}")),
                        "{name}: {e}"
                    ),
                    "TEXT_MESSAGE_END" => {
                        open.retain(|o| *o != format!("TEXT_MESSAGE_START:{key}"))
                    }
                    "TOOL_CALL_END" => open.retain(|o| *o != format!("TOOL_CALL_START:{key}")),
                    "STEP_FINISHED" => {
                        assert!(
                            open.contains(&format!("STEP_STARTED:{key}")),
                            "{name}: {key} finished unstarted"
                        );
                        open.retain(|o| *o != format!("STEP_STARTED:{key}"));
                    }
                    "REASONING_MESSAGE_END" => {
                        open.retain(|o| *o != format!("REASONING_MESSAGE_START:{key}"))
                    }
                    "RUN_FINISHED" => {
                        assert!(open.is_empty(), "{name}: finished with {open:?} open")
                    }
                    _ => {}
                }
            }
        }
    }
}

/// A weft client reading the streams back gets the run's transcript events: text, tool calls
/// and results, and every loom-only event through its `weft:` CUSTOM.
#[test]
fn the_streams_decode_back_into_canonical_events() {
    for (name, run) in common::scenarios() {
        let mut decoder = Decoder::new();
        let mut back = Vec::new();
        for line in streams_of(&run).iter().filter(|l| *l != "[END]") {
            let ev = decode_event(line.as_bytes(), Limits::default()).unwrap();
            back.extend(decoder.decode(&ev).unwrap().into_iter().map(|s| s.event));
        }
        let text = |evs: &[Event]| -> String {
            evs.iter()
                .filter_map(|e| match e {
                    Event::MessageChunk { content, .. } => Some(content.as_str()),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(
            text(&back),
            text(&run.iter().map(|s| s.event.clone()).collect::<Vec<_>>()),
            "{name}"
        );
        for original in run.iter().map(|s| &s.event) {
            let kept = match original {
                Event::ToolEnd {
                    call_id, result, ..
                } => back.iter().any(|e| {
                    matches!(e,
                    Event::ToolEnd { call_id: c, result: r, .. } if c == call_id && r == result)
                }),
                Event::ToolCall {
                    call_id,
                    name: n,
                    arguments,
                } => back.iter().any(|e| {
                    matches!(e,
                    Event::ToolCall { call_id: c, name, arguments: a } if c == call_id && name == n
                        && a.to_value() == arguments.to_value())
                }),
                Event::ToolApproval { call_id, .. } => back.iter().any(|e| {
                    matches!(e,
                    Event::ToolApproval { call_id: c, .. } if c == call_id)
                }),
                Event::Usage(_)
                | Event::ContextInfo { .. }
                | Event::TotExpand { .. }
                | Event::GotPlan { .. }
                | Event::ApprovalResolved { .. } => back.contains(original),
                _ => true,
            };
            assert!(kept, "{name}: {original:?} lost in {back:?}");
        }
    }
}

#[test]
fn a_user_message_starts_a_run_in_the_thread() {
    let body = br#"{"threadId":"t-1","runId":"r-1","state":{},"context":[],"forwardedProps":{"agent":"tot"},
        "tools":[{"name":"pick_color","description":"asks the user","parameters":{"type":"object"}}],
        "messages":[{"id":"u1","role":"user","content":"Hello"}]}"#;
    let req = decode_request(body, Limits::default()).unwrap();
    assert_eq!(req.input.thread_id, "t-1");
    let [Command::ClientTools(tools), Command::Run(run)] = &req.commands[..] else {
        panic!("{:?}", req.commands)
    };
    assert!(!tools.approvals);
    assert!(
        tools.tools[0].read_only,
        "the page runs it: no approval first"
    );
    assert_eq!(tools.tools[0].name, "pick_color");
    assert_eq!(run.message, "Hello");
    assert_eq!(run.thread_id.as_deref(), Some("t-1"));
    assert_eq!(run.agent, Some(Agent::Tot));
    let parts = br#"{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user",
        "content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"url","value":"x"}},{"type":"text","text":"b"}]}]}"#;
    let req = decode_request(parts, Limits::default()).unwrap();
    assert!(matches!(&req.commands[..], [Command::Run(r)] if r.message == "ab"));
}

#[test]
fn tool_messages_and_resume_are_answers() {
    let body = br#"{"threadId":"t","runId":"r2","messages":[
        {"id":"u","role":"user","content":"hi"},
        {"id":"old","role":"tool","toolCallId":"c0","content":"stale"},
        {"id":"a","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"pick","arguments":"{}"}}]},
        {"id":"t1","role":"tool","toolCallId":"c1","content":"red"},
        {"id":"t2","role":"tool","toolCallId":"c2","content":"","error":"boom"}],
        "resume":[{"interruptId":"w1","status":"resolved","payload":{"approved":true}},
                  {"interruptId":"w2","status":"resolved","payload":{"approved":false,"reason":"no"}},
                  {"interruptId":"w3","status":"cancelled"}]}"#;
    let req = decode_request(body, Limits::default()).unwrap();
    let c = &req.commands;
    assert_eq!(c.len(), 5, "{c:?}");
    assert!(
        matches!(&c[0], Command::ApprovalResponse(d) if d.call_id.as_deref() == Some("w1") && d.review == Review::Yes)
    );
    assert!(
        matches!(&c[1], Command::ApprovalResponse(d) if d.review == Review::NoContinue && d.custom_deny_message.as_deref() == Some("no"))
    );
    assert!(
        matches!(&c[2], Command::ApprovalResponse(d) if d.call_id.as_deref() == Some("w3") && d.review == Review::NoContinue)
    );
    assert!(
        matches!(&c[3], Command::ToolResult(r) if r.call_id == "c1" && r.result == "red" && !r.is_error)
    );
    assert!(
        matches!(&c[4], Command::ToolResult(r) if r.call_id == "c2" && r.result == "boom" && r.is_error)
    );
}

#[test]
fn bad_inputs_are_clear_errors() {
    for (body, says) in [
        (&br#"{"runId":"r","messages":[]}"#[..], "threadId"),
        (br#"{"threadId":"t","runId":"r"}"#, "messages"),
        (br#"{"threadId":"","runId":"r","messages":[]}"#, "threadId"),
        (
            br#"{"threadId":"t","runId":"r","messages":[]}"#,
            "nothing to run",
        ),
        (
            br#"{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":" "}]}"#,
            "no text",
        ),
        (
            br#"{"threadId":"t","runId":"r","messages":[{"id":"x","role":"tool","content":"a"}]}"#,
            "toolCallId",
        ),
        (
            br#"{"threadId":"t","runId":"r","messages":[{"role":"user","content":"a"}]}"#,
            "id",
        ),
        (b"not json", "JSON"),
    ] {
        let e = decode_request(body, Limits::default()).unwrap_err();
        assert!(e.to_string().contains(says), "{e} should say {says}");
    }
}

#[test]
fn every_event_type_reads_and_writes_back() {
    let events = [
        json!({"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}),
        json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}),
        json!({"type":"TEXT_MESSAGE_END","messageId":"m"}),
        json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"m","delta":"x"}),
        json!({"type":"TOOL_CALL_START","toolCallId":"c","toolCallName":"f","parentMessageId":"m"}),
        json!({"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"{}"}),
        json!({"type":"TOOL_CALL_END","toolCallId":"c"}),
        json!({"type":"TOOL_CALL_CHUNK","toolCallId":"c","toolCallName":"f","delta":"{"}),
        json!({"type":"TOOL_CALL_RESULT","messageId":"r","toolCallId":"c","content":"ok","role":"tool"}),
        json!({"type":"STATE_SNAPSHOT","snapshot":{"a":1}}),
        json!({"type":"STATE_DELTA","delta":[{"op":"add","path":"/a","value":2}]}),
        json!({"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u","role":"user","content":"hi"}]}),
        json!({"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"plan","content":{"s":1},"replace":true}),
        json!({"type":"ACTIVITY_DELTA","messageId":"a","activityType":"plan","patch":[{"op":"remove","path":"/s"}]}),
        json!({"type":"RAW","event":{"x":1},"source":"lg"}),
        json!({"type":"CUSTOM","name":"n","value":[1]}),
        json!({"type":"RUN_STARTED","threadId":"t","runId":"r","parentRunId":"p"}),
        json!({"type":"RUN_FINISHED","threadId":"t","runId":"r","result":"done","outcome":{"type":"success"}}),
        json!({"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i","reason":"tool_call","toolCallId":"c"}]}}),
        json!({"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"cancelled"}}),
        json!({"type":"RUN_ERROR","message":"m","code":"c"}),
        json!({"type":"STEP_STARTED","stepName":"s"}),
        json!({"type":"STEP_FINISHED","stepName":"s"}),
        json!({"type":"REASONING_START","messageId":"m"}),
        json!({"type":"REASONING_MESSAGE_START","messageId":"m","role":"reasoning"}),
        json!({"type":"REASONING_MESSAGE_CONTENT","messageId":"m","delta":"d"}),
        json!({"type":"REASONING_MESSAGE_END","messageId":"m"}),
        json!({"type":"REASONING_MESSAGE_CHUNK","messageId":"m","delta":"d"}),
        json!({"type":"REASONING_END","messageId":"m"}),
        json!({"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"m","encryptedValue":"x"}),
    ];
    let mut decoder = Decoder::new();
    for e in events {
        let read = decode_event(e.to_string().as_bytes(), Limits::default()).unwrap();
        assert!(!matches!(read, AguiEvent::Unknown { .. }), "{e}");
        assert_eq!(read.to_value(), e, "written back as read");
        decoder.decode(&read).unwrap();
    }
}

#[test]
fn unknown_types_are_kept_and_bad_bodies_are_errors() {
    let future = br#"{"type":"SUBAGENT_STARTED","subagentRunId":"s","name":"n"}"#;
    let read = decode_event(future, Limits::default()).unwrap();
    let AguiEvent::Unknown { kind, data } = &read else {
        panic!("{read:?}")
    };
    assert_eq!(kind, "SUBAGENT_STARTED");
    assert_eq!(data["name"], "n");
    assert_eq!(
        read.to_value(),
        serde_json::from_slice::<Value>(future).unwrap()
    );
    let back = Decoder::new().decode(&read).unwrap();
    assert!(matches!(&back[0].event, Event::Unknown(u) if u.kind == "SUBAGENT_STARTED"));
    for (bad, says) in [
        (
            &br#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m"}"#[..],
            "delta",
        ),
        (
            br#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"maybe"}}"#,
            "maybe",
        ),
        (br#"{"type":"STEP_STARTED","stepName":3}"#, "STEP_STARTED"),
        (br#"{"delta":"x"}"#, "type"),
    ] {
        let e = decode_event(bad, Limits::default()).unwrap_err();
        assert!(e.to_string().contains(says), "{e} should say {says}");
    }
    let custom = AguiEvent::Custom {
        name: "weft:usage".into(),
        value: json!("no object"),
    };
    assert!(Decoder::new().decode(&custom).is_err());
}

/// The field readers accept what serde's derive accepted from an object: unknown fields passed
/// over, an optional field `null` or absent, a field of any JSON `null` but there.
#[test]
fn events_read_as_the_derive_read_them() {
    let read = |text: &str| decode_event(text.as_bytes(), Limits::default()).unwrap();
    assert_eq!(
        read(
            r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":null,"timestamp":1,"rawEvent":{"x":[1]}}"#
        ),
        AguiEvent::TextMessageStart {
            message_id: "m".into(),
            role: None,
            name: None
        }
    );
    assert_eq!(
        read(r#"{"type":"STATE_SNAPSHOT","snapshot":null}"#),
        AguiEvent::StateSnapshot {
            snapshot: Value::Null
        }
    );
    assert_eq!(
        read(r#"{"type":"CUSTOM","name":"n","value":null}"#),
        AguiEvent::Custom {
            name: "n".into(),
            value: Value::Null
        }
    );
    // The last of a repeated key counts, as in serde_json's map.
    assert_eq!(
        read(r#"{"type":"STEP_STARTED","stepName":"a","stepName":"b"}"#),
        AguiEvent::StepStarted {
            step_name: "b".into()
        }
    );
    let finished =
        read(r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":null,"result":null}"#);
    assert!(matches!(
        finished,
        AguiEvent::RunFinished {
            outcome: None,
            result: None,
            ..
        }
    ));
    let cancelled = read(
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"cancelled","why":"x"}}"#,
    );
    assert!(matches!(
        cancelled,
        AguiEvent::RunFinished {
            outcome: Some(weft_protocol::dialect::agui::Outcome::Cancelled),
            ..
        }
    ));
    // Every optional field set, and written back as read.
    for e in [
        json!({"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant","name":"n"}),
        json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"m","role":"assistant","delta":"d","name":"n"}),
        json!({"type":"TOOL_CALL_CHUNK","toolCallId":"c","toolCallName":"f","parentMessageId":"m","delta":"{"}),
        json!({"type":"TOOL_CALL_RESULT","messageId":"r","toolCallId":"c","content":[{"type":"text","text":"ok"}]}),
        json!({"type":"MESSAGES_SNAPSHOT","messages":[
            {"id":"a","role":"assistant","content":"x","name":"n","toolCalls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},
            {"id":"t","role":"tool","content":"r","toolCallId":"c","error":"e"},
            {"id":"v","role":"activity","activityType":"plan"}
        ]}),
        json!({"type":"RAW","event":null}),
        json!({"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"messages":[]}}),
        json!({"type":"RUN_FINISHED","threadId":"t","runId":"r","result":{"a":1},"usage":[{"n":1}],
            "outcome":{"type":"success","pendingToolCallIds":["c"]}}),
        json!({"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[
            {"id":"i","reason":"tool_call","message":"ok?","toolCallId":"c","responseSchema":{"type":"object"},
             "expiresAt":"2026-11-28T00:00:00Z","metadata":{"k":"v"}}]}}),
        json!({"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"plan","content":{}}),
        json!({"type":"REASONING_MESSAGE_CHUNK"}),
    ] {
        assert_eq!(read(&e.to_string()).to_value(), e, "written back as read");
    }
}

#[test]
fn malformed_events_name_their_field() {
    for (bad, says) in [
        (
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":null}"#,
            "field `delta` is required",
        ),
        (
            r#"{"type":"TOOL_CALL_START","toolCallId":"c","toolCallName":7}"#,
            "field `toolCallName` must be a string, found a number",
        ),
        (
            r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":["assistant"]}"#,
            "field `role` must be a string",
        ),
        (
            r#"{"type":"STATE_SNAPSHOT"}"#,
            "field `snapshot` is required",
        ),
        (
            r#"{"type":"CUSTOM","name":"n"}"#,
            "field `value` is required",
        ),
        (
            r#"{"type":"TOOL_CALL_RESULT","messageId":"r","toolCallId":"c"}"#,
            "field `content` is required",
        ),
        (
            r#"{"type":"STATE_DELTA","delta":{"op":"add"}}"#,
            "field `delta` must be an array",
        ),
        (
            r#"{"type":"STATE_DELTA","delta":null}"#,
            "field `delta` is required",
        ),
        (
            r#"{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"p","content":[]}"#,
            "field `content` must be an object",
        ),
        (
            r#"{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"u"}]}"#,
            "field `messages[0].role` is required",
        ),
        (
            r#"{"type":"MESSAGES_SNAPSHOT","messages":["hi"]}"#,
            "field `messages[0]` must be an object",
        ),
        (
            r#"{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"a","role":"assistant","toolCalls":[{"id":"c","type":"function","function":{"name":"f"}}]}]}"#,
            "field `messages[0].toolCalls[0].function.arguments` is required",
        ),
        (
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":"success"}"#,
            "field `outcome` must be an object",
        ),
        (
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{}}"#,
            "field `outcome.type` is required",
        ),
        (
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt"}}"#,
            "field `outcome.interrupts` is required",
        ),
        (
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"reason":"x"}]}}"#,
            "field `outcome.interrupts[0].id` is required",
        ),
        (
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"success","pendingToolCallIds":[1]}}"#,
            "field `outcome.pendingToolCallIds` [0] must be a string",
        ),
        (
            r#"{"type":"RUN_FINISHED","runId":"r"}"#,
            "field `threadId` is required",
        ),
        (
            r#"{"type":"RUN_ERROR","message":null}"#,
            "malformed `RUN_ERROR`",
        ),
        (r#"{"type":7}"#, "no string field `type`"),
        (r#"["TEXT_MESSAGE_END"]"#, "object"),
    ] {
        let e = decode_event(bad.as_bytes(), Limits::default()).unwrap_err();
        assert!(
            e.to_string().contains(says),
            "{bad}: `{e}` should say {says}"
        );
    }
    // An unknown type is kept whole, whatever its fields hold.
    let odd = decode_event(
        br#"{"type":"SUBAGENT_FINISHED","delta":7,"x":null}"#,
        Limits::default(),
    )
    .unwrap();
    assert_eq!(odd.kind(), "SUBAGENT_FINISHED");
    assert_eq!(
        odd.to_value(),
        json!({"type":"SUBAGENT_FINISHED","delta":7,"x":null})
    );
}

#[test]
fn inputs_read_as_the_derive_read_them() {
    let body = json!({
        "threadId": "t", "runId": "r", "state": null, "forwardedProps": null, "resume": null,
        "messages": [{"id": "u", "role": "user", "content": "hi", "extra": 1}],
    });
    let read = decode_request(body.to_string().as_bytes(), Limits::default()).unwrap();
    assert!(read.input.tools.is_empty() && read.input.context.is_empty());
    assert_eq!(read.input.resume, None);
    assert_eq!(read.input.state, None);
    assert_eq!(read.commands.len(), 1);
    for (body, says) in [
        (
            r#"{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":"a"}],"tools":null}"#,
            "field `tools` is required",
        ),
        (
            r#"{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":"a"}],"tools":[{"name":"f"}]}"#,
            "field `tools[0].description` is required",
        ),
        (
            r#"{"threadId":"t","runId":"r","messages":[],"resume":[{"interruptId":"i"}]}"#,
            "field `resume[0].status` is required",
        ),
        (
            r#"{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":"a"}],"context":[{"description":"d","value":1}]}"#,
            "field `context[0].value` must be a string",
        ),
        (
            r#"{"threadId":"t","runId":"r","messages":{}}"#,
            "field `messages` must be an array",
        ),
        (
            r#"{"threadId":1,"runId":"r","messages":[]}"#,
            "field `threadId` must be a string",
        ),
    ] {
        let e = decode_request(body.as_bytes(), Limits::default()).unwrap_err();
        assert!(
            e.to_string().contains(says),
            "{body}: `{e}` should say {says}"
        );
    }
}
