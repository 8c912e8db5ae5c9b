//! Property tests: loom carries every canonical event losslessly; every command a dialect can
//! express comes back from its frame unchanged; and a run's frames reassemble to the same
//! transcript fed one by one, in one batch, with duplicates injected, or with frames lost and
//! then replayed by a resume.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use proptest::prelude::*;
use serde_json::{json, Value};
use weft_protocol::command::{
    AddMcpServer, ApprovalDecision, ClientTools, Resume, RunCommand, ToolFormat, ToolResult,
    ToolShowQuery, ToolsQuery, UserMessagesQuery,
};
use weft_protocol::event::{NodeResult, StoredMessage, ToolSpec};
use weft_protocol::json::RawJson;
use weft_protocol::{
    Agent, Command, Dialect, Encoder, Event, FinishReason, Limits, Reassembler, Review, Role,
    Sequencer, Usage,
};

fn text() -> impl Strategy<Value = String> {
    "\\PC{0,12}"
}

fn word() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_]{0,8}"
}

fn json_value() -> impl Strategy<Value = RawJson> {
    json_tree().prop_map(RawJson::from)
}

fn json_tree() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        text().prop_map(Value::from),
        (word(), text()).prop_map(|(k, v)| json!({ k: v })),
        prop::collection::vec(any::<u16>(), 0..3).prop_map(|v| json!(v)),
    ]
}

fn usage() -> impl Strategy<Value = Usage> {
    (0u64..1 << 40, 0u64..1 << 40).prop_map(|(p, c)| Usage {
        prompt_tokens: p,
        completion_tokens: c,
        total_tokens: p + c,
    })
}

fn review() -> impl Strategy<Value = Review> {
    prop::sample::select(Review::ALL.to_vec())
}

fn opt<T: std::fmt::Debug + Clone>(
    s: impl Strategy<Value = T>,
) -> impl Strategy<Value = Option<T>> {
    prop::option::of(s)
}

fn tool_spec() -> impl Strategy<Value = ToolSpec> {
    (word(), opt(text()), any::<bool>()).prop_map(|(name, description, read_only)| ToolSpec {
        name,
        description,
        input_schema: json!({"type": "object", "properties": {}}).into(),
        read_only,
    })
}

/// Every run event variant, with arbitrary payloads.
fn run_event() -> impl Strategy<Value = Event> {
    let a = prop_oneof![
        (opt(word()), opt(text()), opt(word())).prop_map(|(run_id, message, agent)| {
            Event::RunStart {
                run_id,
                message,
                agent: agent.map(|a| Agent::from(a.as_str())),
            }
        }),
        word().prop_map(|id| Event::NodeEnter { id }),
        (word(), opt(text())).prop_map(|(id, e)| Event::NodeExit {
            id,
            result: e.map_or(NodeResult::Ok, NodeResult::Err),
        }),
        (text(), word()).prop_map(|(content, id)| Event::MessageChunk { content, id }),
        usage().prop_map(Event::Usage),
        json_value().prop_map(|state| Event::Values { state }),
        (word(), json_value()).prop_map(|(id, state)| Event::Updates { id, state }),
        json_value().prop_map(|value| Event::Custom { value }),
        (
            word(),
            text(),
            any::<i32>(),
            json_value(),
            opt(word()),
            opt(word())
        )
            .prop_map(
                |(checkpoint_id, timestamp, step, state, thread_id, checkpoint_ns)| {
                    Event::Checkpoint {
                        checkpoint_id,
                        timestamp,
                        step: step.into(),
                        state,
                        thread_id,
                        checkpoint_ns,
                    }
                }
            ),
        prop::collection::vec(text(), 0..4).prop_map(|candidates| Event::TotExpand { candidates }),
        (0u64..10, prop::collection::vec(-1e6f64..1e6, 0..4))
            .prop_map(|(chosen, scores)| Event::TotEvaluate { chosen, scores }),
        (text(), 0u64..10).prop_map(|(reason, to_depth)| Event::TotBacktrack { reason, to_depth }),
    ];
    let b = prop_oneof![
        (0u64..100, 0u64..100, prop::collection::vec(word(), 0..4)).prop_map(
            |(node_count, edge_count, node_ids)| {
                Event::GotPlan {
                    node_count,
                    edge_count,
                    node_ids,
                }
            }
        ),
        word().prop_map(|id| Event::GotNodeStart { id }),
        (word(), text())
            .prop_map(|(id, result_summary)| Event::GotNodeComplete { id, result_summary }),
        (word(), text()).prop_map(|(id, error)| Event::GotNodeFailed { id, error }),
        (word(), 0u64..9, 0u64..9).prop_map(|(node_id, nodes_added, edges_added)| {
            Event::GotExpand {
                node_id,
                nodes_added,
                edges_added,
            }
        }),
        (opt(word()), opt(word()), text()).prop_map(|(call_id, name, arguments_delta)| {
            Event::ToolCallChunk {
                call_id,
                name,
                arguments_delta,
            }
        }),
        (opt(word()), word(), json_value()).prop_map(|(call_id, name, arguments)| {
            Event::ToolCall {
                call_id,
                name,
                arguments,
            }
        }),
        (opt(word()), word()).prop_map(|(call_id, name)| Event::ToolStart { call_id, name }),
        (opt(word()), word(), text()).prop_map(|(call_id, name, content)| Event::ToolOutput {
            call_id,
            name,
            content
        }),
        (opt(word()), word(), text(), any::<bool>()).prop_map(
            |(call_id, name, result, is_error)| Event::ToolEnd {
                call_id,
                name,
                result,
                is_error,
            }
        ),
        (opt(word()), word(), json_value()).prop_map(|(call_id, name, arguments)| {
            Event::ToolApproval {
                call_id,
                name,
                arguments,
            }
        }),
    ];
    let c = prop_oneof![
        (text(), word()).prop_map(|(content, id)| Event::ReasoningChunk { content, id }),
        (text(), prop::collection::vec(word(), 0..3), word()).prop_map(
            |(content, tool_calls, f)| Event::LlmComplete {
                content,
                tool_calls,
                finish_reason: FinishReason::from(f.as_str()),
            }
        ),
        (opt(word()), opt(word()), review(), opt(text())).prop_map(
            |(call_id, name, review, message)| {
                Event::ApprovalResolved {
                    call_id,
                    name,
                    review,
                    message,
                }
            }
        ),
        (
            0u64..1 << 20,
            0.0f64..100.0,
            0u64..999,
            1u64..1 << 20,
            word()
        )
            .prop_map(
                |(token_count, usage_percent, transcript_length, max_tokens, strategy)| {
                    Event::ContextInfo {
                        token_count,
                        usage_percent,
                        transcript_length,
                        max_tokens,
                        strategy,
                    }
                }
            ),
        (0u64..1 << 20, 0u64..1 << 20, 0.0f64..100.0, word()).prop_map(
            |(old_token_count, new_token_count, reduction_percent, strategy)| {
                Event::ContextCompacted {
                    old_token_count,
                    new_token_count,
                    reduction_percent,
                    strategy,
                }
            }
        ),
        text().prop_map(|content| Event::UserMessage { content }),
        (
            text(),
            opt(usage()),
            opt(usage()),
            opt(0u64..99),
            any::<bool>(),
            prop::collection::vec(word(), 0..3)
        )
            .prop_map(
                |(reply, usage, total_usage, iteration_count, paused, tool_calls)| Event::RunEnd {
                    reply,
                    usage,
                    total_usage,
                    iteration_count,
                    paused,
                    tool_calls,
                }
            ),
        (
            text(),
            opt(word()),
            opt(json_value().prop_filter("null is absence", |v| !v.is_null()))
        )
            .prop_map(|(message, code, details)| Event::Error {
                message,
                code,
                id: None,
                details,
            }),
    ];
    prop_oneof![a, b, c]
}

/// Replies outside runs.
fn reply_event() -> impl Strategy<Value = Event> {
    prop_oneof![
        word().prop_map(|id| Event::Pong { id }),
        (word(), prop::collection::vec(tool_spec(), 0..3))
            .prop_map(|(id, tools)| Event::ToolsList { id, tools }),
        (word(), json_value(), text(), any::<bool>()).prop_map(|(id, tool, yaml, as_json)| {
            Event::ToolShow {
                id,
                tool: as_json.then_some(tool).filter(|t| !t.is_null()),
                tool_yaml: (!as_json).then_some(yaml),
            }
        }),
        (
            word(),
            word(),
            prop::collection::vec((opt(0u64..99), text()), 0..3),
            opt(any::<bool>()),
            opt(word())
        )
            .prop_map(|(id, thread_id, msgs, has_more, active_run_id)| {
                Event::UserMessages {
                    id,
                    thread_id,
                    messages: msgs
                        .into_iter()
                        .map(|(id, content)| StoredMessage {
                            id,
                            role: Role::User,
                            content,
                        })
                        .collect(),
                    has_more,
                    active_run_id,
                }
            }),
        (text(), opt(word()), opt(word())).prop_map(|(message, code, id)| Event::Error {
            message,
            code,
            id,
            details: None,
        }),
    ]
}

proptest! {
    #[test]
    fn loom_carries_every_run_event_losslessly(events in prop::collection::vec(run_event(), 1..12)) {
        let mut seq = Sequencer::new(Some("s".into()), "run-p");
        let mut enc = Encoder::new(Dialect::Loom, 1);
        for ev in events {
            let stamped = seq.stamp(ev);
            let frames = enc.encode(&stamped);
            prop_assert_eq!(frames.len(), 1);
            let back = Dialect::Loom.decode_server(frames[0].as_bytes(), Limits::default()).unwrap();
            let mut want = stamped.clone();
            // loom's `error` has no node id, and `got_expand`'s payload `node_id` takes the
            // envelope's place.
            if matches!(want.event, Event::Error { .. } | Event::GotExpand { .. }) {
                want.envelope.node_id = None;
            }
            prop_assert_eq!(&back[0], &want);
        }
    }

    #[test]
    fn serde_reads_back_what_it_writes(events in prop::collection::vec(run_event(), 1..8)) {
        // `Deserialize` is how the server's checkpoints and event log read events back.
        let mut seq = Sequencer::new(Some("s".into()), "run-p");
        for ev in events {
            let stamped = seq.stamp(ev);
            let json = serde_json::to_string(&stamped).unwrap();
            let mut back: weft_protocol::Sequenced = serde_json::from_str(&json).unwrap();
            prop_assert_eq!(back.envelope.run_id.take(), None);
            let mut want = stamped.clone();
            want.envelope.run_id = None;
            if matches!(want.event, Event::GotExpand { .. }) {
                want.envelope.node_id = None;
            }
            prop_assert_eq!(&back, &want);
            let event: Event = serde_json::from_str(&serde_json::to_string(&stamped.event).unwrap()).unwrap();
            prop_assert_eq!(&event, &stamped.event);
        }
    }

    #[test]
    fn events_are_written_as_serialize_writes_them(
        events in prop::collection::vec(prop_oneof![run_event(), reply_event()], 1..8),
        session in opt(word()),
    ) {
        // `Sequenced::to_json` is how the SDK hands events to JavaScript; `Serialize` is the
        // reference, byte for byte.
        let mut seq = Sequencer::new(session, "run-p");
        for ev in events {
            let stamped = seq.stamp(ev.clone());
            prop_assert_eq!(stamped.to_json(), serde_json::to_string(&stamped).unwrap());
            let bare = weft_protocol::Sequenced::bare(ev);
            prop_assert_eq!(bare.to_json(), serde_json::to_string(&bare).unwrap());
        }
    }

    #[test]
    fn loom_carries_every_reply_losslessly(ev in reply_event()) {
        let stamped = weft_protocol::Sequenced::bare(ev);
        let frames = Encoder::new(Dialect::Loom, 1).encode(&stamped);
        let back = Dialect::Loom.decode_server(frames[0].as_bytes(), Limits::default()).unwrap();
        prop_assert_eq!(&back[0], &stamped);
    }

    #[test]
    fn every_dialect_says_which_request_an_error_answers(
        message in text(),
        code in opt(word()),
        id in word(),
    ) {
        // An error outside a run (a refused `run`, a stale approval): the client must learn
        // which of its requests failed, or a refused run would wait forever.
        let ev = weft_protocol::Sequenced::bare(Event::Error { message, code, id: Some(id), details: None });
        for d in Dialect::ALL {
            let frames = Encoder::new(d, 1).encode(&ev);
            prop_assert_eq!(frames.len(), 1, "{}", d);
            let back = d.decode_server(frames[0].as_bytes(), Limits::default()).unwrap();
            prop_assert_eq!(&back[0].event, &ev.event, "{} {}", d, frames[0]);
        }
    }

    #[test]
    fn commands_come_back_from_their_frames(
        message in "[a-z]\\PC{0,20}",
        agent in prop::sample::select(vec!["react", "dup", "tot", "got"]),
        id in "[a-z0-9-]{1,20}",
        thread in opt(word()),
        review in review(),
        deny in opt(text()),
        after in 0u64..1000,
        tools in prop::collection::vec(tool_spec(), 0..3),
        flag in any::<bool>(),
    ) {
        let commands = vec![
            Command::Run(RunCommand {
                message: message.clone(),
                agent: Some(Agent::from(agent)),
                id: Some(id.clone()),
                thread_id: thread.clone(),
                ..RunCommand::default()
            }),
            Command::ApprovalResponse(ApprovalDecision {
                call_id: Some(id.clone()),
                review,
                custom_deny_message: deny.clone(),
                explanation: None,
            }),
            Command::ToolResult(ToolResult { call_id: id.clone(), result: message.clone(), is_error: flag }),
            Command::ClientTools(ClientTools { tools: tools.clone(), approvals: flag }),
            Command::Resume(Resume { run_id: id.clone(), after_event_id: after }),
            Command::Cancel { run_id: id.clone() },
            Command::Ping { id: id.clone() },
            Command::ToolsList(ToolsQuery { id: id.clone(), working_folder: thread.clone(), thread_id: thread.clone() }),
            Command::ToolShow(ToolShowQuery {
                id: id.clone(),
                name: message.clone(),
                output: flag.then_some(ToolFormat::Json),
                working_folder: None,
                thread_id: thread.clone(),
            }),
            Command::UserMessages(UserMessagesQuery { id: id.clone(), thread_id: "t".into(), before: Some(after), limit: None }),
            Command::ContextInfo { id: Some(id.clone()) },
            Command::Compact { id: Some(id.clone()) },
            Command::AddMcpServer(AddMcpServer {
                id: id.clone(),
                name: id.clone(),
                url: message.clone(),
                headers: [("Authorization".to_string(), message.clone())].into_iter().collect(),
            }),
        ];
        for d in Dialect::ALL {
            for cmd in &commands {
                let Ok(frame) = d.encode_request(cmd, &id) else { continue };
                let mut want = cmd.clone();
                if let (Dialect::Agentloop, Command::Run(r)) = (d, &mut want) {
                    r.thread_id = None; // agentloop sessions are the connection's
                }
                let got = d.decode_request(frame.as_bytes(), Limits::default()).unwrap();
                prop_assert_eq!(got, want, "{} {}", d, frame);
            }
        }
        // Every dialect can run a message, resume, cancel, ping and add an MCP server.
        for d in Dialect::ALL {
            for cmd in [&commands[0], &commands[4], &commands[5], &commands[6], &commands[12]] {
                prop_assert!(d.encode_request(cmd, &id).is_ok(), "{} cannot carry {:?}", d, cmd);
            }
        }
    }

    #[test]
    fn reassembly_ignores_batching_duplicates_and_resumed_losses(
        pick in 0usize..6,
        dups in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>()), 0..8),
        lost in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
    ) {
        let (_, run) = common::scenarios().swap_remove(pick);
        for d in Dialect::ALL {
            let mut enc = Encoder::new(d, 3);
            let frames: Vec<String> = run.iter().flat_map(|e| enc.encode(e)).collect();

            let mut one = Twin::new(d);
            for f in &frames {
                one.push(f)?;
            }
            let mut batch = Reassembler::new(d);
            batch.push_frames(frames.iter().map(|f| f.as_bytes())).unwrap();
            prop_assert_eq!(one.transcript(), batch.transcript());

            // Duplicates: frame j is delivered again after frame i.
            let mut stream: Vec<&String> = frames.iter().collect();
            for (at, which) in &dups {
                let j = which.index(frames.len());
                let i = at.index(frames.len()).max(j);
                stream.insert(i + 1, &frames[j]);
            }
            let mut noisy = Twin::new(d);
            for f in &stream {
                noisy.push(f)?;
            }
            prop_assert_eq!(one.transcript(), noisy.transcript());

            // Losses: some frames never arrive; the client resumes from the reported gap and
            // the server replays everything after it.
            let dropped: Vec<usize> = lost.iter().map(|l| l.index(frames.len())).collect();
            let mut lossy = Twin::new(d);
            for (i, f) in frames.iter().enumerate() {
                if !dropped.contains(&i) {
                    lossy.push(f)?;
                }
            }
            let after = lossy.0.last_event_id("run-plain")
                .max(lossy.0.last_event_id(run[0].envelope.run_id.as_deref().unwrap()));
            for f in frames.iter().skip(after as usize) {
                lossy.push(f)?;
            }
            prop_assert_eq!(one.transcript(), lossy.transcript());
        }
    }
}

/// A reassembler that applies deltas in place (no events asked for) beside one that turns every
/// frame into events: each push must do the same in both, and the transcripts must match.
struct Twin(Reassembler, Reassembler);

impl Twin {
    fn new(d: Dialect) -> Self {
        Twin(Reassembler::new(d), Reassembler::new(d).with_events())
    }

    fn push(&mut self, frame: &str) -> Result<(), TestCaseError> {
        let in_place = self.0.push_frame(frame.as_bytes()).unwrap();
        let by_events = self.1.push_frame(frame.as_bytes()).unwrap();
        let mut events = 0;
        while self.1.poll().is_some() {
            events += 1;
        }
        prop_assert_eq!(&in_place, &by_events, "{}", frame);
        prop_assert_eq!(events, by_events.applied);
        prop_assert_eq!(self.0.transcript(), self.1.transcript(), "after {}", frame);
        Ok(())
    }

    fn transcript(&self) -> &weft_protocol::Transcript {
        self.0.transcript()
    }
}

#[test]
fn a_gap_is_reported_with_the_resume_point() {
    let run = common::tool_call();
    let mut enc = Encoder::new(Dialect::Cueso, 0);
    let frames: Vec<String> = run.iter().flat_map(|e| enc.encode(e)).collect();
    let mut r = Reassembler::new(Dialect::Cueso);
    r.push_frame(frames[0].as_bytes()).unwrap();
    r.push_frame(frames[1].as_bytes()).unwrap();
    let pushed = r.push_frame(frames[3].as_bytes()).unwrap();
    let gap = pushed.gap.expect("frame 4 after 2 is a gap");
    assert_eq!(
        (gap.run_id.as_str(), gap.after_event_id, gap.received),
        ("run-tool", 2, 4)
    );
    assert_eq!(r.last_event_id("run-tool"), 2);
    // The held frame is applied once the gap fills, and not twice when replayed.
    let pushed = r.push_frame(frames[2].as_bytes()).unwrap();
    assert_eq!(pushed.applied, 2);
    assert!(r.push_frame(frames[3].as_bytes()).unwrap().duplicate);
    assert_eq!(r.last_event_id("run-tool"), 4);
}

#[test]
fn unusual_events_are_written_as_serialize_writes_them() {
    use weft_protocol::event::UnknownEvent;
    use weft_protocol::Sequenced;
    let unknown = |data: Value| {
        Event::Unknown(UnknownEvent {
            kind: "from_the_future".into(),
            data: data.into(),
        })
    };
    let events = [
        unknown(json!({"z": [1, {"b": null, "a": 1.5}], "type": "shadowed", "é\n": "x"})),
        unknown(json!({})),
        unknown(json!([1, 2])),
        Event::TotEvaluate {
            chosen: 0,
            scores: vec![f64::NAN, f64::INFINITY, -0.0, 1e300, 5e-324, 0.1 + 0.2],
        },
        Event::Checkpoint {
            checkpoint_id: "c".into(),
            timestamp: "t".into(),
            step: i64::MIN,
            state: json!({"k": "v"}).into(),
            thread_id: None,
            checkpoint_ns: Some("ns".into()),
        },
        Event::NodeExit {
            id: "act".into(),
            result: NodeResult::Err("it \"broke\"\u{7f}\u{1f}".into()),
        },
        Event::GotExpand {
            node_id: "n1".into(),
            nodes_added: 2,
            edges_added: 3,
        },
    ];
    for event in events {
        let mut seq = Sequenced::bare(event);
        seq.envelope.node_id = Some("run-x-1".into());
        seq.envelope.event_id = Some(u64::MAX);
        assert_eq!(seq.to_json(), serde_json::to_string(&seq).unwrap());
    }
    for (name, run) in common::scenarios() {
        for seq in run {
            assert_eq!(
                seq.to_json(),
                serde_json::to_string(&seq).unwrap(),
                "{name}"
            );
        }
    }
}
