//! The client against the original servers, natively: finding which server it is, speaking
//! only the dialect's document there, and runs correlated by the original's own frames. The
//! server frames are written as `specs/ORIGINALS.md` says each original sends them (no
//! `run_id`/`event_id` fields, their own run names and ends of turn).

use super::*;
use crate::error::ErrorCode;
use weft_protocol::reassembler::ToolStatus;

fn auto(dialect: Dialect) -> Connection {
    Connection::new(Config {
        server: ServerChoice::Auto,
        ..config(dialect)
    })
}

/// A client connected to the original server of `dialect` (found through the fallback).
fn original(dialect: Dialect) -> Connection {
    let mut c = auto(dialect);
    c.connect();
    c.closed(1006, "", 0.0, 0.0);
    c.tick(0.0, 0.0);
    c.opened_as(0.0, "");
    drain(&mut c);
    assert_eq!(c.server(), Some(ServerKind::Original));
    c
}

fn opens(out: &[Output]) -> Vec<(String, Vec<String>)> {
    out.iter()
        .filter_map(|o| match o {
            Output::Open { url, protocols } => Some((url.clone(), protocols.clone())),
            _ => None,
        })
        .collect()
}

fn statuses(out: &[Output]) -> Vec<&'static str> {
    out.iter()
        .filter_map(|o| match o {
            Output::Status(s) => Some(s.state),
            _ => None,
        })
        .collect()
}

fn errors(out: &[Output]) -> Vec<&str> {
    out.iter()
        .filter_map(|o| match o {
            Output::Error(e) => Some(e.code().as_str()),
            _ => None,
        })
        .collect()
}

fn frames_of(v: &[Value]) -> Vec<String> {
    v.iter().map(Value::to_string).collect()
}

#[test]
fn auto_connects_again_without_the_subprotocol_and_finds_an_original() {
    for dialect in [Dialect::Loom, Dialect::Agentchat, Dialect::Cueso] {
        let mut c = auto(dialect);
        c.connect();
        let first = drain(&mut c);
        let offered = opens(&first);
        assert_eq!(
            offered[0].1,
            [
                "weft.".to_string() + dialect.as_str(),
                "weft.token.t0k".into()
            ]
        );
        assert!(!offered[0].0.contains("token="), "no token in a weft URL");
        // The handshake fails for want of a selected subprotocol: no status, no rejection,
        // and a second try without it at once.
        c.closed(1006, "", 5.0, 0.0);
        let out = drain(&mut c);
        assert!(
            statuses(&out).is_empty() && !out.iter().any(|o| matches!(o, Output::ConnectFailed(_)))
        );
        assert_eq!(c.deadline(), Some(5.0));
        c.tick(5.0, 0.0);
        let second = opens(&drain(&mut c));
        assert_eq!(second.len(), 1);
        assert!(
            second[0].1.is_empty(),
            "{dialect}: no subprotocol the second time"
        );
        assert!(
            second[0].0.ends_with("session_id=sess-1&token=t0k"),
            "{}",
            second[0].0
        );
        c.opened_as(6.0, "");
        let out = drain(&mut c);
        assert_eq!(statuses(&out), ["open"]);
        assert!(out.contains(&Output::Connected));
        assert_eq!(c.server(), Some(ServerKind::Original));
        // Later sockets go straight to the original's URL.
        c.closed(1006, "", 7.0, 0.0);
        drain(&mut c);
        c.tick(100_000.0, 0.0);
        let third = opens(&drain(&mut c));
        assert!(third[0].1.is_empty() && third[0].0.contains("token=t0k"));
    }
}

#[test]
fn a_selected_subprotocol_is_weft_without_asking_except_on_agentloop() {
    let mut c = auto(Dialect::Loom);
    c.connect();
    drain(&mut c);
    c.opened_as(0.0, "weft.loom");
    let out = drain(&mut c);
    assert!(out.contains(&Output::Connected) && sent(&out).is_empty());
    assert_eq!(c.server(), Some(ServerKind::Weft));

    // agentloop's original selects whatever is offered first: weft proves itself with a pong.
    let mut c = auto(Dialect::Agentloop);
    let run = c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
    c.connect();
    drain(&mut c);
    c.opened_as(0.0, "weft.agentloop");
    let out = drain(&mut c);
    let probe = sent(&out);
    assert_eq!(probe.len(), 1, "only the probe goes out: {probe:?}");
    assert_eq!(probe[0]["type"], "ping");
    assert!(!out.contains(&Output::Connected));
    assert_eq!(c.server(), None);
    let pong = json!({"type": "pong", "id": probe[0]["id"]}).to_string();
    c.frame(pong.as_bytes(), 1.0);
    let out = drain(&mut c);
    assert!(out.contains(&Output::Connected));
    assert_eq!(c.server(), Some(ServerKind::Weft));
    assert_eq!(
        sent(&out)[0]["type"],
        "user_input",
        "the run waited for the answer"
    );
    assert_eq!(c.run_id(run), Some(RUN));
}

#[test]
fn agentloop_s_original_answers_the_probe_with_an_error_and_is_found() {
    let mut c = auto(Dialect::Agentloop);
    c.connect();
    drain(&mut c);
    c.opened_as(0.0, "weft.agentloop");
    drain(&mut c);
    // A leftover of the previous connection's loop comes first, and is dropped.
    let leftover = json!({"id": "x1", "type": "loading_state", "payload": {"loading": false}});
    c.frame(leftover.to_string().as_bytes(), 1.0);
    assert!(drain(&mut c).is_empty());
    let refusal = json!({"type": "error", "payload": {"message": "Unknown message type: ping"}});
    c.frame(refusal.to_string().as_bytes(), 2.0);
    let out = drain(&mut c);
    assert!(out.contains(&Output::Connected));
    assert_eq!(c.server(), Some(ServerKind::Original));
    assert!(c.transcript().runs.is_empty());
    // No answer at all is no weft either.
    let mut c = auto(Dialect::Agentloop);
    c.connect();
    drain(&mut c);
    c.opened_as(0.0, "weft.agentloop");
    drain(&mut c);
    assert_eq!(c.deadline(), Some(10_000.0));
    c.tick(10_000.0, 0.0);
    assert!(drain(&mut c).contains(&Output::Connected));
    assert_eq!(c.server(), Some(ServerKind::Original));
}

#[test]
fn a_server_that_is_down_fails_the_first_connect_after_both_tries() {
    let mut c = auto(Dialect::Cueso);
    let run = c.run(opts("hi"), RUN.into(), 0.0).unwrap();
    c.connect();
    c.closed(1006, "", 0.0, 0.0);
    c.tick(0.0, 0.0);
    drain(&mut c);
    c.closed(1006, "", 1.0, 0.0);
    let out = drain(&mut c);
    assert!(out
        .iter()
        .any(|o| matches!(o, Output::ConnectFailed(e) if e.code() == "connect_failed")));
    assert!(matches!(done(&out)[..], [Err(e)] if e.code() == "connect_failed"));
    assert_eq!(c.server(), None);
    assert!(c.run_id(run).is_none());
    // A later connect() tries weft first again.
    c.connect();
    assert_eq!(opens(&drain(&mut c))[0].1[0], "weft.cueso");
}

#[test]
fn the_server_option_skips_finding_out() {
    let mut c = Connection::new(Config {
        server: ServerChoice::Original,
        ..config(Dialect::Loom)
    });
    assert_eq!(c.server(), Some(ServerKind::Original));
    c.connect();
    let open = opens(&drain(&mut c));
    assert!(open[0].1.is_empty() && open[0].0.contains("token=t0k"));
    let mut c = Connection::new(Config {
        server: ServerChoice::Weft,
        ..config(Dialect::Agentloop)
    });
    c.connect();
    drain(&mut c);
    c.opened(0.0);
    assert!(
        drain(&mut c).contains(&Output::Connected),
        "no probe when told"
    );
    assert_eq!(
        original_url("ws://h/ws?a=1", Some("t k")),
        "ws://h/ws?a=1&token=t%20k"
    );
    assert_eq!(original_url("ws://h/ws", None), "ws://h/ws");
}

#[test]
fn an_original_is_sent_only_its_document_and_the_rest_is_refused_at_once() {
    for dialect in Dialect::ALL {
        let mut c = original(dialect);
        c.set_approver(true);
        c.set_tools(vec![ToolSpec {
            name: "notes".into(),
            description: None,
            input_schema: json!({"type": "object"}).into(),
            read_only: true,
        }]);
        let out = drain(&mut c);
        assert!(sent(&out).is_empty(), "{dialect}: no client_tools");
        assert_eq!(
            errors(&out),
            ["unsupported"],
            "{dialect}: registerTool is said to be useless"
        );
        let ping = c.ping(0.0);
        match dialect {
            Dialect::Loom => assert!(ping.is_ok()),
            _ => assert_eq!(ping.unwrap_err().code(), "unsupported", "{dialect}"),
        }
        drain(&mut c);
        let run = c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
        drain(&mut c);
        let e = c.cancel(run, 0.0).unwrap_err();
        assert_eq!(e.code(), "unsupported");
        assert!(e.message().contains("weft server") && e.message().contains(dialect.as_str()));
        assert_eq!(c.follow("run-x".into()).unwrap_err().code(), "unsupported");
        // Heartbeats: only loom's document has ping, and loom answers it after the run.
        c.tick(100_000.0, 0.0);
        assert!(
            sent(&drain(&mut c)).is_empty(),
            "{dialect}: no heartbeat during a run"
        );
    }
}

#[test]
fn requests_queued_before_the_server_is_found_are_refused_if_it_cannot_serve_them() {
    let mut c = auto(Dialect::Agentchat);
    c.connect();
    drain(&mut c);
    let ping = c.ping(0.0).unwrap();
    c.closed(1006, "", 0.0, 0.0);
    c.tick(0.0, 0.0);
    c.opened_as(0.0, "");
    let out = drain(&mut c);
    assert!(
        sent(&out).is_empty(),
        "the ping never goes out: {:?}",
        sent(&out)
    );
    let refused = replies(&out);
    assert!(matches!(refused[..], [(RequestKind::Ping, Err(e))] if e.code() == "unsupported"));
    assert!(!out
        .iter()
        .any(|o| matches!(o, Output::Reply { id, .. } if *id != ping)));
}

fn loom_event(run: &str, event: Value) -> String {
    let mut event = event;
    event["session_id"] = json!(run);
    event["event_id"] = json!(1);
    json!({"type": "run_stream_event", "id": run, "event": event}).to_string()
}

#[test]
fn loom_s_original_names_the_run_and_the_client_adopts_it() {
    let mut c = original(Dialect::Loom);
    let run = c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
    let out = drain(&mut c);
    assert_eq!(sent(&out)[0]["id"], RUN);
    let server_run = "run-5b8e0d9c-0000-4000-8000-000000000001";
    let frames = vec![
        loom_event(server_run, json!({"type": "node_enter", "id": "think"})),
        loom_event(server_run, json!({"type": "message_chunk", "content": "Hi", "id": "think"})),
        loom_event(server_run, json!({"type": "message_chunk", "content": " there", "id": "think"})),
        loom_event(server_run, json!({"type": "node_exit", "id": "think", "result": "Ok"})),
        json!({"type": "run_end", "id": server_run, "reply": "Hi there", "session_id": server_run, "event_id": 4}).to_string(),
    ];
    // A heartbeat is held while the run streams (the original answers it after run_end).
    c.tick(15_000.0, 0.0);
    assert!(sent(&drain(&mut c)).is_empty());
    let out = feed(&mut c, &frames);
    assert_eq!(texts(&out), "Hi there");
    match &done(&out)[..] {
        [Ok(r)] => {
            assert_eq!(r.reply, "Hi there");
            assert_eq!(r.run_id, server_run);
        }
        other => panic!("{other:?}"),
    }
    assert!(handles(&out).iter().all(|h| *h == Some(run)));
    let t = c.transcript();
    assert_eq!(t.runs.len(), 1);
    assert_eq!(t.runs[0].run_id.as_deref(), Some(server_run));
    assert_eq!(
        t.messages[0].text, "Hello",
        "the user's message is in the transcript"
    );
    assert_eq!(t.messages[1].text, "Hi there");
    // Between runs the heartbeat runs again.
    c.tick(30_000.0, 0.0);
    assert_eq!(sent(&drain(&mut c))[0]["type"], "ping");
}

#[test]
fn a_request_behind_a_long_run_on_loom_s_original_waits_for_it_then_times_out() {
    let mut c = original(Dialect::Loom);
    c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
    c.tools_list(0.0).unwrap();
    drain(&mut c);
    // The original answers it after run_end: while the run streams, the timeout does not run.
    for now in [20_000.0, 40_000.0, 60_000.0] {
        c.tick(now, 0.0);
        assert!(
            replies(&drain(&mut c)).is_empty(),
            "timed out at {now} ms, mid-run"
        );
    }
    let server_run = "run-5b8e0d9c-0000-4000-8000-000000000002";
    feed(
        &mut c,
        &[
            loom_event(
                server_run,
                json!({"type": "message_chunk", "content": "Hi", "id": "think"}),
            ),
            json!({"type": "run_end", "id": server_run, "reply": "Hi"}).to_string(),
        ],
    );
    // From the run's end it has the whole of requestTimeoutMs again, and no more.
    c.tick(89_000.0, 0.0);
    assert!(replies(&drain(&mut c)).is_empty());
    c.tick(90_000.0, 0.0);
    let out = drain(&mut c);
    assert!(
        matches!(&replies(&out)[..], [(_, Err(e))] if e.code() == "timeout"),
        "{out:?}"
    );
}

#[test]
fn agentchat_s_original_ends_the_run_at_its_one_agent_message() {
    let mut c = original(Dialect::Agentchat);
    let run = c.run(opts("What time is it?"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    let frames = frames_of(&[
        json!({"type": "user_message", "message": "What time is it?"}),
        json!({"type": "tool_call", "tool_name": "get_time", "tool_args": "{\"timezone\":\"UTC\"}"}),
        json!({"type": "agent_thinking", "reasoning": "The tool says 10:00."}),
        json!({"type": "agent_message", "message": "It is 10:00 UTC."}),
    ]);
    let out = feed(&mut c, &frames);
    assert_eq!(texts(&out), "It is 10:00 UTC.");
    match &done(&out)[..] {
        [Ok(r)] => assert_eq!(
            (r.reply.as_str(), r.run_id.as_str()),
            ("It is 10:00 UTC.", RUN)
        ),
        other => panic!("{other:?}"),
    }
    assert!(handles(&out).iter().all(|h| *h == Some(run)));
    let t = c.transcript();
    assert_eq!(t.runs.len(), 1);
    assert_eq!(t.runs[0].status, RunStatus::Completed);
    assert_eq!(t.tool_calls[0].name, "get_time");
}

#[test]
fn agentchat_s_original_broadcasts_another_client_s_turn_which_is_not_taken_for_ours() {
    let mut c = original(Dialect::Agentchat);
    // Another client's turn streams while nothing of ours runs: not ours, and not a run.
    let idle = feed(
        &mut c,
        &frames_of(&[
            json!({"type": "user_message", "message": "Tell me a joke"}),
            json!({"type": "agent_message", "message": "Why did the socket close?"}),
        ]),
    );
    assert!(done(&idle).is_empty());
    c.run(opts("What time is it?"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    let frames = frames_of(&[
        // Another client's refusal, which the original sends to every socket.
        json!({"type": "error", "error": "Empty message received"}),
        // Another one, ahead of ours on the server.
        json!({"type": "user_message", "message": "And another"}),
        json!({"type": "tool_call", "tool_name": "read", "tool_args": "{\"path\":\"a\"}"}),
        json!({"type": "agent_message", "message": "Not yours."}),
        json!({"type": "user_message", "message": "What time is it?"}),
        json!({"type": "tool_call", "tool_name": "get_time", "tool_args": "{\"timezone\":\"UTC\"}"}),
        json!({"type": "agent_message", "message": "It is 10:00 UTC."}),
    ]);
    let out = feed(&mut c, &frames);
    assert_eq!(texts(&out), "It is 10:00 UTC.");
    assert!(matches!(&done(&out)[..], [Ok(r)] if r.reply == "It is 10:00 UTC."));
    let t = c.transcript();
    let texts: Vec<&str> = t.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, ["What time is it?", "It is 10:00 UTC."]);
    assert_eq!(t.tool_calls.len(), 1);
    assert_eq!(t.tool_calls[0].name, "get_time");
}

#[test]
fn cueso_s_original_ends_the_run_at_final() {
    let mut c = original(Dialect::Cueso);
    c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    let frames = frames_of(&[
        json!({"type": "session_created", "session_id": "sess-1"}),
        json!({"type": "content_delta", "content": "Hi", "role": "assistant"}),
        json!({"type": "content_delta", "content": " there", "role": "assistant"}),
        json!({"type": "message_complete", "content": "Hi there", "tool_calls": [], "finish_reason": "end_turn"}),
        json!({"type": "final", "content": "Hi there", "tool_calls": [], "session_id": "sess-1", "iteration_count": 1, "paused": false}),
    ]);
    let out = feed(&mut c, &frames);
    assert_eq!(texts(&out), "Hi there");
    assert!(matches!(&done(&out)[..], [Ok(r)] if r.reply == "Hi there"));
    let t = c.transcript();
    assert_eq!(t.messages[0].text, "Hello");
    assert_eq!(t.runs[0].status, RunStatus::Completed);
}

fn agentloop_item(id: &str, role: &str, text: &str) -> Value {
    json!({"id": format!("f-{text}"), "type": "response_item", "payload": {
        "type": "message", "id": id, "role": role,
        "content": [{"type": "output_text", "text": text}]}})
}

fn loading(on: bool) -> Value {
    json!({"id": format!("l-{on}"), "type": "loading_state", "payload": {"loading": on}})
}

fn finished() -> Value {
    json!({"id": "af", "type": "agent_finished", "payload": {"responseId": "r1"}})
}

#[test]
fn agentloop_s_original_turn_is_one_run_ending_at_its_last_loading_state() {
    let mut c = original(Dialect::Agentloop);
    let run = c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    let frames = frames_of(&[
        loading(true),
        agentloop_item("msg_1", "assistant", "Hi"),
        agentloop_item("msg_1", "assistant", " there"),
        finished(),
        loading(false),
        loading(false),
    ]);
    let out = feed(&mut c, &frames);
    assert_eq!(texts(&out), "Hi there");
    match &done(&out)[..] {
        [Ok(r)] => assert_eq!(r.reply, "Hi there"),
        other => panic!("{other:?}"),
    }
    assert!(handles(&out).iter().all(|h| *h == Some(run)));
    // The next turn: a late repeat before its start changes nothing.
    let next = c.run(opts("Again"), "run-b".into(), 0.0).unwrap();
    drain(&mut c);
    let frames = frames_of(&[
        loading(false),
        loading(true),
        agentloop_item("msg_2", "assistant", "Once more"),
        finished(),
        loading(false),
    ]);
    let out = feed(&mut c, &frames);
    assert!(matches!(&done(&out)[..], [Ok(r)] if r.reply == "Once more"));
    assert!(handles(&out).iter().all(|h| *h == Some(next)));
    let t = c.transcript();
    assert_eq!(t.runs.len(), 2, "one turn, one run: {:?}", t.runs);
    let users: Vec<&str> = t
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(users, ["Hello", "Again"]);
}

#[test]
fn agentloop_s_original_approval_is_answered_without_a_call_id() {
    let mut c = original(Dialect::Agentloop);
    c.run(opts("write notes"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    let request = json!({"id": "ar", "type": "approval_request", "payload": {
        "command": ["apply_patch", "*** Begin Patch\n*** End Patch"],
        "applyPatch": {"patch": "*** Begin Patch\n*** End Patch"}}});
    let out = feed(&mut c, &frames_of(&[loading(true), finished(), request]));
    let asked: Vec<&ApprovalRequest> = out
        .iter()
        .filter_map(|o| match o {
            Output::Approval(a) => Some(a),
            _ => None,
        })
        .collect();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].call_id, None);
    assert_eq!(asked[0].name, "apply_patch");
    for (review, message) in [
        ("explain", None),
        ("no-continue", Some("not now")),
        ("yes", None),
    ] {
        let answer = ApprovalAnswer {
            review: review.into(),
            message: message.map(String::from),
        };
        c.answer(None, answer, 1.0).unwrap();
        let frame = &sent(&drain(&mut c))[0];
        assert_eq!(frame["type"], "approval_response");
        assert_eq!(frame["payload"]["review"], review);
        assert!(frame["payload"].get("callId").is_none(), "{frame}");
    }
}

#[test]
fn a_drop_mid_run_fails_it_with_resume_unsupported_and_the_next_run_goes_out() {
    let starts: [(Dialect, Vec<Value>); 4] = [
        (
            Dialect::Loom,
            vec![serde_json::from_str(&loom_event(
                "run-srv",
                json!({"type": "message_chunk", "content": "Hal", "id": "think"}),
            ))
            .unwrap()],
        ),
        (
            Dialect::Agentloop,
            vec![loading(true), agentloop_item("m", "assistant", "Hal")],
        ),
        (
            Dialect::Agentchat,
            vec![
                json!({"type": "user_message", "message": "Hello"}),
                json!({"type": "agent_thinking", "reasoning": "Hal"}),
            ],
        ),
        (
            Dialect::Cueso,
            vec![
                json!({"type": "session_created", "session_id": "s"}),
                json!({"type": "content_delta", "content": "Hal", "role": "assistant"}),
            ],
        ),
    ];
    for (dialect, frames) in starts {
        let mut c = original(dialect);
        let run = c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
        drain(&mut c);
        feed(&mut c, &frames_of(&frames));
        c.closed(1006, "", 10.0, 0.0);
        let out = drain(&mut c);
        match &done(&out)[..] {
            [Err(e)] => {
                assert_eq!(e.code(), "resume_unsupported", "{dialect}");
                assert!(e.message().contains("transcript()"), "{}", e.message());
            }
            other => panic!("{dialect}: {other:?}"),
        }
        assert!(c.run_id(run).is_none());
        let t = c.transcript();
        assert_eq!(
            t.runs.last().unwrap().status,
            RunStatus::Failed,
            "{dialect}"
        );
        let kept = t
            .messages
            .iter()
            .any(|m| m.text == "Hal" || m.reasoning == "Hal");
        assert!(kept, "{dialect}: the text so far stays");
        assert_eq!(statuses(&out), ["reconnecting"]);
        // The next run waits for the new socket, which resumes nothing.
        let next = c.run(opts("Again"), "run-b".into(), 10.0).unwrap();
        c.tick(100_000.0, 0.0);
        drain(&mut c);
        c.opened_as(100_000.0, "");
        let frames = sent(&drain(&mut c));
        assert_eq!(frames.len(), 1, "{dialect}: {frames:?}");
        assert!(frames[0].get("type").is_none_or(|t| t != "resume"));
        assert!(frames[0].to_string().contains("Again"));
        assert_eq!(c.run_id(next), Some("run-b"));
    }
}

#[test]
fn runs_sent_back_to_back_are_matched_in_the_order_the_original_takes_them() {
    let mut c = original(Dialect::Loom);
    let first = c.run(opts("one"), "run-1".into(), 0.0).unwrap();
    let second = c.run(opts("two"), "run-2".into(), 0.0).unwrap();
    drain(&mut c);
    let mut out = Vec::new();
    for (server_run, reply) in [("run-srv-a", "One."), ("run-srv-b", "Two.")] {
        out.extend(feed(
            &mut c,
            &[
                loom_event(
                    server_run,
                    json!({"type": "message_chunk", "content": reply, "id": "think"}),
                ),
                json!({"type": "run_end", "id": server_run, "reply": reply}).to_string(),
            ],
        ));
    }
    let results: Vec<(RunHandle, String, String)> = out
        .iter()
        .filter_map(|o| match o {
            Output::RunDone { run, result: Ok(r) } => {
                Some((*run, r.reply.clone(), r.run_id.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [
            (first, "One.".into(), "run-srv-a".into()),
            (second, "Two.".into(), "run-srv-b".into())
        ]
    );
    let users: Vec<&str> = c
        .transcript()
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(users, ["one", "two"]);

    let mut c = original(Dialect::Agentchat);
    let first = c.run(opts("one"), "run-1".into(), 0.0).unwrap();
    let second = c.run(opts("two"), "run-2".into(), 0.0).unwrap();
    drain(&mut c);
    let out = feed(
        &mut c,
        &frames_of(&[
            json!({"type": "user_message", "message": "one"}),
            json!({"type": "agent_message", "message": "One."}),
            json!({"type": "user_message", "message": "two"}),
            json!({"type": "agent_message", "message": "Two."}),
        ]),
    );
    let results: Vec<(RunHandle, String)> = out
        .iter()
        .filter_map(|o| match o {
            Output::RunDone { run, result: Ok(r) } => Some((*run, r.reply.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(results, [(first, "One.".into()), (second, "Two.".into())]);
}

#[test]
fn close_while_probing_is_final() {
    let mut c = auto(Dialect::Agentloop);
    c.connect();
    c.opened_as(0.0, "weft.agentloop");
    drain(&mut c);
    c.close();
    drain(&mut c);
    assert_eq!(c.deadline(), None);
    c.tick(20_000.0, 0.0);
    let out = drain(&mut c);
    assert!(out.is_empty(), "{out:?}");
    assert!(c.run(opts("hi"), RUN.into(), 0.0).is_err());
}

#[test]
fn cueso_s_original_names_the_session_of_a_client_without_one_and_the_next_run_names_it() {
    let mut c = Connection::new(Config {
        server: ServerChoice::Auto,
        session_id: None,
        ..config(Dialect::Cueso)
    });
    c.connect();
    c.closed(1006, "", 0.0, 0.0);
    c.tick(0.0, 0.0);
    c.opened_as(0.0, "");
    drain(&mut c);
    c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
    let first = sent(&drain(&mut c));
    assert_eq!(first[0]["session_id"], Value::Null, "{first:?}");
    feed(
        &mut c,
        &frames_of(&[
            json!({"type": "session_created", "session_id": "s-made"}),
            json!({"type": "content_delta", "content": "Hi", "role": "assistant"}),
            json!({"type": "final", "content": "Hi", "tool_calls": [], "session_id": "s-made", "iteration_count": 1, "paused": false}),
        ]),
    );
    c.run(opts("Again"), "run-2".into(), 0.0).unwrap();
    let second = sent(&drain(&mut c));
    assert_eq!(second[0]["message"], "Again");
    assert_eq!(second[0]["session_id"], "s-made", "{second:?}");
}

#[test]
fn cueso_s_original_failing_a_turn_fails_the_run_with_its_message() {
    let mut c = original(Dialect::Cueso);
    c.run(opts("fail"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    let out = feed(
        &mut c,
        &frames_of(&[
            json!({"type": "session_created", "session_id": "sess-1"}),
            json!({"type": "content_delta", "content": "Let me", "role": "assistant"}),
            json!({"type": "error", "message": "Error code: 529 - Overloaded"}),
        ]),
    );
    match &done(&out)[..] {
        [Err(e)] => assert!(e.message().contains("529"), "{e:?}"),
        other => panic!("{other:?}"),
    }
    // The original closes the socket after its error: a run asked for before the close
    // arrives waits for the next socket instead of going out on this one and being cut.
    c.run(opts("Hello"), "run-2".into(), 1.0).unwrap();
    assert!(sent(&drain(&mut c)).is_empty());
    c.closed(1011, "", 1.0, 0.0);
    assert!(
        done(&drain(&mut c)).is_empty(),
        "the waiting run is not failed"
    );
    c.tick(60_000.0, 0.0);
    drain(&mut c);
    c.opened_as(60_000.0, "");
    let resent = sent(&drain(&mut c));
    assert_eq!(resent.len(), 1);
    assert_eq!(resent[0]["message"], "Hello");
}

#[test]
fn agentloop_s_leftovers_of_an_earlier_loop_neither_start_nor_end_our_turn() {
    let mut c = original(Dialect::Agentloop);
    let run = c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    let context = json!({"id": "ci", "type": "context_info", "payload": {
        "tokenCount": 120, "usagePercent": 1, "transcriptLength": 3, "maxTokens": 12000,
        "strategy": "auto"}});
    let frames = frames_of(&[
        // What the loop a new connection killed still had to send, before our turn...
        finished(),
        context.clone(),
        loading(false),
        loading(true),
        // ...and after its start, before anything of it.
        finished(),
        context,
        loading(false),
        agentloop_item("msg_1", "assistant", "Hi"),
        finished(),
        loading(false),
    ]);
    let out = feed(&mut c, &frames);
    match &done(&out)[..] {
        [Ok(r)] => assert_eq!(r.reply, "Hi"),
        other => panic!("{other:?}"),
    }
    assert!(handles(&out).iter().all(|h| h.is_none() || *h == Some(run)));
    let t = c.transcript();
    assert_eq!(t.runs.len(), 1, "{:?}", t.runs);
    let texts: Vec<(Role, &str)> = t
        .messages
        .iter()
        .map(|m| (m.role.clone(), m.text.as_str()))
        .collect();
    assert_eq!(texts, [(Role::User, "Hello"), (Role::Assistant, "Hi")]);
    // A later turn on the same socket whose model answered nothing still ends.
    let empty = c.run(opts("Again"), "run-2".into(), 0.0).unwrap();
    drain(&mut c);
    let context = json!({"id": "ci2", "type": "context_info", "payload": {
        "tokenCount": 130, "usagePercent": 1, "transcriptLength": 5, "maxTokens": 12000,
        "strategy": "auto"}});
    let out = feed(
        &mut c,
        &frames_of(&[loading(true), finished(), context, loading(false)]),
    );
    assert!(
        matches!(&done(&out)[..], [Ok(r)] if r.reply.is_empty()),
        "{out:?}"
    );
    assert!(handles(&out)
        .iter()
        .all(|h| h.is_none() || *h == Some(empty)));
}

#[test]
fn cueso_s_original_that_keeps_the_socket_after_its_error_is_closed_by_the_client() {
    // uvicorn 0.35 with the legacy `websockets`, as cueso's lockfile pins them: the error,
    // then nothing — no close, no answer to anything more on that socket.
    let mut c = original(Dialect::Cueso);
    for attempt in 0..3 {
        let at = f64::from(attempt) * 10_000.0;
        c.run(opts("fail"), format!("run-f{attempt}"), at).unwrap();
        let sent_now = sent(&drain(&mut c));
        assert_eq!(sent_now.len(), 1, "attempt {attempt}: {sent_now:?}");
        for f in frames_of(&[
            json!({"type": "session_created", "session_id": "sess-1"}),
            json!({"type": "error", "message": "Error code: 529 - Overloaded"}),
        ]) {
            c.frame(f.as_bytes(), at + 1.0);
        }
        let out = drain(&mut c);
        match &done(&out)[..] {
            [Err(e)] => assert!(e.message().contains("529"), "{e:?}"),
            other => panic!("attempt {attempt}: {other:?}"),
        }
        c.run(opts("Hello"), format!("run-n{attempt}"), at + 2.0)
            .unwrap();
        assert!(sent(&drain(&mut c)).is_empty(), "waits for the close");
        assert_eq!(c.deadline(), Some(at + 1.0 + CLOSE_GRACE_MS));
        c.tick(at + CLOSE_GRACE_MS, 0.0);
        assert!(drain(&mut c).is_empty(), "not before the grace ends");
        c.tick(at + 1.0 + CLOSE_GRACE_MS, 0.0);
        let out = drain(&mut c);
        assert!(
            out.iter().any(|o| matches!(o, Output::Close { .. })),
            "{out:?}"
        );
        assert_eq!(statuses(&out), ["reconnecting"]);
        assert!(done(&out).is_empty(), "the waiting run is not failed");
        c.tick(at + 5_000.0, 0.0);
        drain(&mut c);
        c.opened_as(at + 5_000.0, "");
        let resent = sent(&drain(&mut c));
        assert_eq!(resent.len(), 1);
        assert_eq!(resent[0]["message"], "Hello");
        let out = feed(
            &mut c,
            &frames_of(&[
                json!({"type": "session_created", "session_id": "sess-1"}),
                json!({"type": "final", "content": "Hi", "tool_calls": [], "session_id": "sess-1"}),
            ]),
        );
        assert!(
            matches!(&done(&out)[..], [Ok(r)] if r.reply == "Hi"),
            "{out:?}"
        );
    }
}

#[test]
fn agentchat_s_original_overlapping_turns_make_ours_ambiguous_not_anothers_reply() {
    // Another client's turn opened first, ours while it streams; then the other way round.
    let orders = [["Hello", "What time is it?"], ["What time is it?", "Hello"]];
    for order in orders {
        let mut c = original(Dialect::Agentchat);
        let run = c.run(opts("What time is it?"), RUN.into(), 0.0).unwrap();
        drain(&mut c);
        let out = feed(
            &mut c,
            &frames_of(&[
                json!({"type": "user_message", "message": order[0]}),
                json!({"type": "user_message", "message": order[1]}),
                json!({"type": "agent_message", "message": "Hi there!"}),
            ]),
        );
        match &done(&out)[..] {
            [Err(e)] => {
                assert_eq!(e.code(), &ErrorCode::AmbiguousReply, "{order:?}");
                assert!(e.message().contains("may be theirs"), "{e:?}");
            }
            other => panic!("{order:?}: {other:?}"),
        }
        assert!(handles(&out).iter().all(|h| *h == Some(run)));
        // The other turn's reply, when it comes, is nobody's here.
        let later = feed(
            &mut c,
            &frames_of(&[json!({"type": "agent_message", "message": "It is 10:00 UTC."})]),
        );
        assert!(later.is_empty(), "{later:?}");
        // And the next run of ours, alone, is ours again.
        c.run(opts("Hello again"), "run-2".into(), 1.0).unwrap();
        drain(&mut c);
        let next = feed(
            &mut c,
            &frames_of(&[
                json!({"type": "user_message", "message": "Hello again"}),
                json!({"type": "agent_message", "message": "Hi again!"}),
            ]),
        );
        assert!(
            matches!(&done(&next)[..], [Ok(r)] if r.reply == "Hi again!"),
            "{next:?}"
        );
    }
}

/// A tool call of a transcript as `(call_id, name, status, result, review, run_id)`.
type CallSummary = (
    String,
    String,
    ToolStatus,
    Option<String>,
    Option<Review>,
    Option<String>,
);

fn calls(c: &Connection) -> Vec<CallSummary> {
    c.transcript()
        .tool_calls
        .iter()
        .map(|t| {
            (
                t.call_id.clone(),
                t.name.clone(),
                t.status,
                t.result.clone(),
                t.review,
                t.run_id.clone(),
            )
        })
        .collect()
}

/// The events the app sees for tool calls, `kind name call_id` each.
fn tool_events(out: &[Output]) -> Vec<String> {
    out.iter()
        .filter_map(|o| match o {
            Output::Event { event, .. } => match &event.event {
                Event::ToolCall { call_id, name, .. } | Event::ToolEnd { call_id, name, .. } => {
                    Some(format!(
                        "{} {name} {}",
                        event.event.kind(),
                        call_id.as_deref().unwrap_or("-")
                    ))
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[test]
fn every_original_gives_the_same_events_and_transcript_fields_as_weft() {
    let turns: [(Dialect, Vec<Value>, &str); 3] = [
        (
            Dialect::Cueso,
            vec![
                json!({"type": "session_created", "session_id": "sess-1"}),
                json!({"type": "tool_call_delta", "tool_call": {"id": "toolu_1", "name": "get_time", "input": null}}),
                json!({"type": "tool_call_delta", "tool_call": {"id": "toolu_1", "name": "get_time", "input_json": "{\"timezone\":\"UTC\"}"}}),
                json!({"type": "message_complete", "content": "", "tool_calls": ["get_time"], "finish_reason": "tool_use"}),
                json!({"type": "tool_result", "tool_name": "get_time", "tool_call_id": "toolu_1", "result": "10:00"}),
                json!({"type": "content_delta", "content": "It is 10:00.", "role": "assistant"}),
                json!({"type": "message_complete", "content": "It is 10:00.", "tool_calls": [], "finish_reason": "end_turn"}),
                json!({"type": "final", "content": "It is 10:00.", "tool_calls": [], "session_id": "sess-1"}),
            ],
            "toolu_1",
        ),
        (
            Dialect::Agentloop,
            vec![
                loading(true),
                json!({"id": "fc", "type": "response_item", "payload": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_time", "arguments": "{\"timezone\":\"UTC\"}"}}),
                finished(),
                json!({"id": "fo", "type": "response_item", "payload": {"type": "function_call_output", "id": "out_1", "call_id": "call_1", "output": "10:00"}}),
                agentloop_item("msg_t", "assistant", "It is 10:00."),
                finished(),
                loading(false),
            ],
            "call_1",
        ),
        (
            Dialect::Agentchat,
            vec![
                json!({"type": "user_message", "message": "What time is it?"}),
                json!({"type": "tool_call", "tool_name": "get_time", "tool_args": "{\"timezone\":\"UTC\"}"}),
                json!({"type": "agent_message", "message": "It is 10:00."}),
            ],
            "call-0",
        ),
    ];
    for (dialect, frames, call_id) in turns {
        let mut c = original(dialect);
        c.run(opts("What time is it?"), RUN.into(), 0.0).unwrap();
        drain(&mut c);
        let out = feed(&mut c, &frames_of(&frames));
        assert!(
            matches!(&done(&out)[..], [Ok(r)] if r.run_id == RUN),
            "{dialect}: {out:?}"
        );
        assert_eq!(
            tool_events(&out),
            [
                format!("tool_call get_time {call_id}"),
                format!("tool_end get_time {call_id}")
            ],
            "{dialect}"
        );
        let t = c.transcript();
        assert_eq!(t.runs[0].run_id.as_deref(), Some(RUN), "{dialect}");
        assert!(
            t.messages.iter().all(|m| m.run_id.as_deref() == Some(RUN)),
            "{dialect}: {:?}",
            t.messages
        );
        // A model turn that only called tools is the message that holds the calls, never
        // an empty message besides.
        let texts: Vec<(&str, usize)> = t
            .messages
            .iter()
            .map(|m| (m.text.as_str(), m.tool_call_ids.len()))
            .collect();
        let expected: &[(&str, usize)] = match dialect {
            // Its one `agent_message` is the whole response, calls and text.
            Dialect::Agentchat => &[("What time is it?", 0), ("It is 10:00.", 1)],
            _ => &[("What time is it?", 0), ("", 1), ("It is 10:00.", 0)],
        };
        assert_eq!(texts, expected, "{dialect}");
        let [(id, name, status, result, _, run)] = &calls(&c)[..] else {
            panic!("{dialect}: {:?}", calls(&c));
        };
        assert_eq!(
            (id.as_str(), name.as_str(), *status),
            (call_id, "get_time", ToolStatus::Done),
            "{dialect}"
        );
        assert_eq!(run.as_deref(), Some(RUN), "{dialect}");
        // agentchat's original never says the result: the call ends with its run.
        let expected = if dialect == Dialect::Agentchat {
            ""
        } else {
            "10:00"
        };
        assert_eq!(result.as_deref(), Some(expected), "{dialect}");
    }
}

#[test]
fn agentloop_s_original_approval_names_its_call_and_the_decision_is_recorded_on_it() {
    let mut c = original(Dialect::Agentloop);
    // Two runs whose calls have the same id, as a provider numbering per response gives.
    for (n, (review, output, status)) in [
        ("yes", "Done", ToolStatus::Done),
        ("no-continue", "aborted", ToolStatus::Denied),
    ]
    .into_iter()
    .enumerate()
    {
        c.run(opts("write notes"), format!("run-{n}"), 0.0).unwrap();
        drain(&mut c);
        let call = json!({"id": "fw", "type": "response_item", "payload": {"type": "function_call",
            "id": "fc_w", "call_id": "call_w", "name": "apply_patch", "arguments": "{\"patch\":\"p\"}"}});
        let request = json!({"id": "ar", "type": "approval_request", "payload": {
            "command": ["apply_patch", "p"], "applyPatch": {"patch": "p"}}});
        let out = feed(
            &mut c,
            &frames_of(&[loading(true), call, finished(), request]),
        );
        let asked: Vec<&ApprovalRequest> = out
            .iter()
            .filter_map(|o| match o {
                Output::Approval(a) => Some(a),
                _ => None,
            })
            .collect();
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].call_id.as_deref(), Some("call_w"));
        let answer = ApprovalAnswer {
            review: review.into(),
            message: None,
        };
        c.answer(Some("call_w".into()), answer, 1.0).unwrap();
        let frame = &sent(&drain(&mut c))[0];
        assert!(frame["payload"].get("callId").is_none(), "{frame}");
        assert_eq!(calls(&c)[n].4, Review::parse(review));
        let out = feed(
            &mut c,
            &frames_of(&[
                json!({"id": "fo", "type": "response_item", "payload": {"type": "function_call_output", "id": "out_w", "call_id": "call_w", "output": output}}),
                agentloop_item("msg_r", "assistant", "Answered."),
                finished(),
                loading(false),
            ]),
        );
        assert_eq!(tool_events(&out), ["tool_end apply_patch call_w"]);
        assert!(matches!(&done(&out)[..], [Ok(r)] if r.reply == "Answered."));
        // The decision stays on its own run's call.
        assert_eq!(
            (calls(&c)[n].2, calls(&c)[n].4),
            (status, Review::parse(review))
        );
    }
    assert_eq!(
        (calls(&c)[0].2, calls(&c)[0].4),
        (ToolStatus::Done, Some(Review::Yes))
    );
}
