//! What a socket that did not offer `weft.<dialect>` gets (specs/README, "Original clients see
//! only their own protocol"): only the frame and event types its documents define, dense event
//! ids, each thought once and whole, and agentloop's turn shaped as its original client expects.

mod common;

use serde_json::{json, Value};
use weft_protocol::{Agent, Dialect, Encoder, Event, FinishReason, Review, Sequenced, Sequencer};

/// The frame types each dialect's documents define for the server to send.
fn documented(dialect: Dialect) -> &'static [&'static str] {
    match dialect {
        Dialect::Loom => &[
            "run_stream_event",
            "run_end",
            "error",
            "pong",
            "tools_list",
            "tool_show",
            "user_messages",
        ],
        Dialect::Agentloop => &[
            "response_item",
            "loading_state",
            "approval_request",
            "agent_finished",
            "context_info",
            "context_compacted",
            "error",
        ],
        Dialect::Agentchat => &[
            "user_message",
            "agent_thinking",
            "tool_call",
            "tool_result",
            "agent_message",
            "error",
        ],
        Dialect::Agui => &weft_protocol::dialect::agui::KNOWN_TYPES,
        Dialect::Cueso => &[
            "session_created",
            "content_delta",
            "tool_call_delta",
            "message_complete",
            "tool_result",
            "final",
            "error",
        ],
    }
}

/// What an original loom client's event enum decodes (`ProtocolEvent`, loom's `stream-event`
/// crate at the spec's commit): §4.2 without `run_start`, which the original never sent, and
/// without `got_expand`, whose `node_id` loom's own envelope takes away from it.
const LOOM_EVENTS: &[&str] = &[
    "node_enter",
    "node_exit",
    "message_chunk",
    "usage",
    "values",
    "updates",
    "custom",
    "checkpoint",
    "tot_expand",
    "tot_evaluate",
    "tot_backtrack",
    "got_plan",
    "got_node_start",
    "got_node_complete",
    "got_node_failed",
    "tool_call_chunk",
    "tool_call",
    "tool_start",
    "tool_output",
    "tool_end",
    "tool_approval",
];

fn encode(enc: &mut Encoder, run: &[Sequenced]) -> Vec<Value> {
    run.iter()
        .flat_map(|e| enc.encode(e))
        .map(|f| serde_json::from_str(&f).unwrap())
        .collect()
}

fn original(dialect: Dialect, run: &[Sequenced]) -> Vec<Value> {
    encode(&mut Encoder::original(dialect, 7), run)
}

fn kind(frame: &Value) -> &str {
    frame["type"].as_str().unwrap_or("")
}

/// A react run that reasons in three pieces, answers, and calls for an approval answered
/// `review`; then what the engine emits after that answer.
fn reasoning_run(review: Review) -> Vec<Sequenced> {
    let mut s = Sequencer::new(Some(common::SESSION.into()), "run-r");
    let mut run = vec![s.stamp(Event::RunStart {
        run_id: Some("run-r".into()),
        message: Some("write it".into()),
        agent: Some(Agent::React),
    })];
    let mut e = |ev: Event| run.push(s.stamp(ev));
    e(Event::NodeEnter { id: "think".into() });
    for piece in ["Let me ", "think about ", "it."] {
        e(Event::ReasoningChunk {
            content: piece.into(),
            id: "think".into(),
        });
    }
    e(Event::MessageChunk {
        content: "Writing.".into(),
        id: "think".into(),
    });
    let args = json!({"path": "a.txt", "content": "hi"});
    e(Event::ToolCall {
        call_id: Some("c1".into()),
        name: "write".into(),
        arguments: args.clone().into(),
    });
    e(Event::LlmComplete {
        content: "Writing.".into(),
        tool_calls: vec!["write".into()],
        finish_reason: FinishReason::ToolCalls,
    });
    e(Event::ToolApproval {
        call_id: Some("c1".into()),
        name: "write".into(),
        arguments: args.clone().into(),
    });
    e(Event::ApprovalResolved {
        call_id: Some("c1".into()),
        name: Some("write".into()),
        review,
        message: None,
    });
    match review {
        Review::Explain => {
            e(Event::MessageChunk {
                content: "It writes a file.".into(),
                id: "think".into(),
            });
            e(Event::LlmComplete {
                content: "It writes a file.".into(),
                tool_calls: vec![],
                finish_reason: FinishReason::Stop,
            });
            e(Event::ContextInfo {
                token_count: 10,
                usage_percent: 0.1,
                transcript_length: 3,
                max_tokens: 1000,
                strategy: "ThresholdContextManager".into(),
            });
            e(Event::ToolApproval {
                call_id: Some("c1".into()),
                name: "write".into(),
                arguments: args.into(),
            });
        }
        _ => {
            e(Event::ToolEnd {
                call_id: Some("c1".into()),
                name: "write".into(),
                result: "denied by the user".into(),
                is_error: true,
            });
            e(Event::NodeExit {
                id: "think".into(),
                result: weft_protocol::event::NodeResult::Ok,
            });
            e(Event::RunEnd {
                reply: "Writing.".into(),
                usage: None,
                total_usage: None,
                iteration_count: Some(1),
                paused: false,
                tool_calls: vec!["write".into()],
            });
        }
    }
    run
}

fn every_run() -> Vec<(String, Vec<Sequenced>)> {
    let mut runs: Vec<(String, Vec<Sequenced>)> = common::scenarios()
        .into_iter()
        .map(|(n, r)| (n.to_string(), r))
        .collect();
    runs.push(("reasoning-no-exit".into(), reasoning_run(Review::NoExit)));
    runs.push(("reasoning-explain".into(), reasoning_run(Review::Explain)));
    runs
}

#[test]
fn an_original_client_gets_only_documented_types_with_dense_ids() {
    for dialect in Dialect::ALL {
        for (name, run) in every_run() {
            let frames = original(dialect, &run);
            assert!(!frames.is_empty(), "{dialect}/{name}");
            let mut expected_id = 1;
            for f in &frames {
                assert!(
                    documented(dialect).contains(&kind(f)),
                    "{dialect}/{name}: undocumented frame {f}"
                );
                if dialect == Dialect::Loom && kind(f) == "run_stream_event" {
                    let inner = f["event"]["type"].as_str().unwrap();
                    assert!(LOOM_EVENTS.contains(&inner), "{name}: loom event {inner}");
                }
                if let Some(id) = f["event_id"]
                    .as_u64()
                    .or_else(|| f["event"]["event_id"].as_u64())
                {
                    assert_eq!(id, expected_id, "{dialect}/{name}: ids not dense at {f}");
                    expected_id += 1;
                }
            }
            assert!(expected_id > 1, "{dialect}/{name}: no numbered frame");
        }
    }
}

#[test]
fn an_original_loom_client_gets_no_run_start_nor_got_expand_and_a_weft_one_does() {
    let mut s = Sequencer::new(Some(common::SESSION.into()), "run-g");
    let run = [
        s.stamp(Event::RunStart {
            run_id: Some("run-g".into()),
            message: Some("plan".into()),
            agent: Some(Agent::Got),
        }),
        s.stamp(Event::GotExpand {
            node_id: "task".into(),
            nodes_added: 2,
            edges_added: 0,
        }),
        s.stamp(Event::NodeEnter { id: "plan".into() }),
    ];
    let inner = |frames: Vec<Value>| -> Vec<(String, u64)> {
        frames
            .iter()
            .map(|f| {
                let ev = &f["event"];
                (
                    ev["type"].as_str().unwrap().into(),
                    ev["event_id"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(
        inner(original(Dialect::Loom, &run)),
        [("node_enter".to_string(), 1)]
    );
    let weft = inner(encode(&mut Encoder::new(Dialect::Loom, 7), &run));
    let kinds: Vec<&str> = weft.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds, ["run_start", "got_expand", "node_enter"]);
}

#[test]
fn a_weft_client_still_gets_every_extension() {
    let run = reasoning_run(Review::NoContinue);
    let weft = encode(&mut Encoder::new(Dialect::Agentloop, 7), &run);
    assert!(weft.iter().any(|f| kind(f) == "approval_resolved"));
    let thoughts = weft
        .iter()
        .filter(|f| f["payload"]["type"] == "reasoning")
        .count();
    assert_eq!(thoughts, 3, "weft clients get reasoning as it streams");
    let loom = encode(&mut Encoder::new(Dialect::Loom, 7), &run);
    assert!(loom.iter().any(|f| f["event"]["type"] == "reasoning_chunk"));
}

#[test]
fn each_thought_goes_out_once_and_whole() {
    let run = reasoning_run(Review::NoContinue);
    let agentloop = original(Dialect::Agentloop, &run);
    let reasoning: Vec<&Value> = agentloop
        .iter()
        .filter(|f| f["payload"]["type"] == "reasoning")
        .collect();
    assert_eq!(reasoning.len(), 1);
    assert_eq!(
        reasoning[0]["payload"]["content"][0]["text"],
        "Let me think about it."
    );
    let at =
        |frames: &[Value], pred: &dyn Fn(&Value) -> bool| frames.iter().position(pred).unwrap();
    assert!(
        at(&agentloop, &|f| f["payload"]["type"] == "reasoning")
            < at(&agentloop, &|f| f["payload"]["role"] == "assistant"),
        "the thought goes out before the text that follows it"
    );
    let agentchat = original(Dialect::Agentchat, &run);
    let thinking: Vec<&Value> = agentchat
        .iter()
        .filter(|f| kind(f) == "agent_thinking")
        .collect();
    assert_eq!(thinking.len(), 1);
    assert_eq!(thinking[0]["reasoning"], "Let me think about it.");
    let loom = original(Dialect::Loom, &run);
    assert!(loom.iter().all(|f| f["event"]["type"] != "reasoning_chunk"));
}

#[test]
fn replaying_an_original_run_gives_the_frames_sent_live() {
    for dialect in Dialect::ALL {
        let run = reasoning_run(Review::NoContinue);
        let live = original(dialect, &run);
        // A fresh encoder fed the same log, as `resume` and a rebuilt live encoder do.
        assert_eq!(original(dialect, &run), live, "{dialect}");
    }
}

#[test]
fn agentloop_s_original_client_never_gets_its_input_back() {
    let mut s = Sequencer::new(Some(common::SESSION.into()), "run-u");
    let run = [
        s.stamp(Event::RunStart {
            run_id: Some("run-u".into()),
            message: Some("hello".into()),
            agent: Some(Agent::React),
        }),
        s.stamp(Event::UserMessage {
            content: "and more".into(),
        }),
        s.stamp(Event::MessageChunk {
            content: "Hi".into(),
            id: "think".into(),
        }),
        s.stamp(Event::RunEnd {
            reply: "Hi".into(),
            usage: None,
            total_usage: None,
            iteration_count: Some(1),
            paused: false,
            tool_calls: vec![],
        }),
    ];
    let roles = |frames: Vec<Value>| -> Vec<String> {
        frames
            .iter()
            .filter_map(|f| f["payload"]["role"].as_str().map(String::from))
            .collect()
    };
    assert_eq!(roles(original(Dialect::Agentloop, &run)), ["assistant"]);
    let weft = encode(&mut Encoder::new(Dialect::Agentloop, 7), &run);
    assert_eq!(roles(weft), ["user", "user", "assistant"]);
}

#[test]
fn agentloop_no_exit_ends_with_agent_finished_then_loading_false() {
    let frames = original(Dialect::Agentloop, &reasoning_run(Review::NoExit));
    let tail: Vec<&str> = frames[frames.len() - 3..].iter().map(kind).collect();
    assert_eq!(tail, ["response_item", "agent_finished", "loading_state"]);
    assert_eq!(frames.last().unwrap()["payload"]["loading"], false);
}

#[test]
fn agentloop_explain_repeats_the_request_with_no_agent_finished_between() {
    let frames = original(Dialect::Agentloop, &reasoning_run(Review::Explain));
    let first = frames
        .iter()
        .position(|f| kind(f) == "approval_request")
        .unwrap();
    let between: Vec<&str> = frames[first + 1..].iter().map(kind).collect();
    assert_eq!(
        between,
        ["response_item", "response_item", "approval_request"]
    );
    // One item, ending with a newline as the original's explanation does: its example client
    // clears the line the repeated request finds open.
    let items = &frames[first + 1..first + 3];
    assert_eq!(items[0]["payload"]["id"], items[1]["payload"]["id"]);
    let text: String = items
        .iter()
        .map(|f| f["payload"]["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "It writes a file.\n");
}

#[test]
fn agentloop_explanation_ending_its_line_gets_no_second_newline() {
    let mut run = reasoning_run(Review::Explain);
    for ev in &mut run {
        if let Event::MessageChunk { content, .. } = &mut ev.event {
            if content == "It writes a file." {
                content.push('\n');
            }
        }
    }
    let frames = original(Dialect::Agentloop, &run);
    let first = frames
        .iter()
        .position(|f| kind(f) == "approval_request")
        .unwrap();
    let between: Vec<&str> = frames[first + 1..].iter().map(kind).collect();
    assert_eq!(between, ["response_item", "approval_request"]);
}

#[test]
fn errors_use_the_originals_wording() {
    let limits = weft_protocol::Limits::default();
    let text = |d: Dialect, frame: &str| {
        d.error_text(&d.decode_request(frame.as_bytes(), limits).unwrap_err())
    };
    assert_eq!(
        text(Dialect::Agentchat, r#"{"type":"shout"}"#),
        "Unknown message type: shout"
    );
    assert_eq!(
        text(Dialect::Agentchat, r#"{"type":"chat","message":"  "}"#),
        "Empty message received"
    );
    assert_eq!(
        text(Dialect::Agentloop, r#"{"id":"1","type":"ping2"}"#),
        "Unknown message type: ping2"
    );
    assert_eq!(text(Dialect::Agentloop, "{nope"), "Invalid message format");
    assert_eq!(
        text(
            Dialect::Agentloop,
            r#"{"type":"user_input","id":"1","payload":3}"#
        ),
        "Invalid message format"
    );
    assert_eq!(
        Dialect::Agentloop.describe().no_pending_approval_text,
        "No pending approval request"
    );
    // Where no original wording is known, the error says what is wrong itself.
    assert!(text(Dialect::Cueso, "[1]").contains("JSON object"));
}
