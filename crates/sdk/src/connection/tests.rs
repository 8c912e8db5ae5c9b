//! The client's rules, natively: runs in every dialect, reconnect and resume, heartbeats,
//! request correlation, approvals and client tools. Server frames are made with the protocol's
//! own `Sequencer` + `Encoder`, exactly as the worker makes them.

use serde_json::json;
use weft_protocol::event::NodeResult;
use weft_protocol::{Encoder, Sequencer, Usage};

use super::*;

const RUN: &str = "run-a";

fn config(dialect: Dialect) -> Config {
    Config {
        dialect,
        url: endpoint_url("ws://127.0.0.1:8080", dialect, Some("sess-1")).unwrap(),
        protocols: subprotocols(dialect, Some("t0k")).unwrap(),
        server: ServerChoice::Weft,
        original_url: original_url(
            &endpoint_url("ws://127.0.0.1:8080", dialect, Some("sess-1")).unwrap(),
            Some("t0k"),
        ),
        session_id: Some("sess-1".into()),
        reconnect: Some(Backoff::default()),
        heartbeat_interval_ms: 15_000.0,
        heartbeat_timeout_ms: 10_000.0,
        request_timeout_ms: 30_000.0,
        id_prefix: "c1".into(),
    }
}

fn opts(message: &str) -> RunOptions {
    RunOptions {
        message: message.into(),
        agent: None,
        thread_id: None,
        working_folder: None,
        got_adaptive: None,
        verbose: None,
    }
}

fn drain(c: &mut Connection) -> Vec<Output> {
    std::iter::from_fn(|| c.poll()).collect()
}

fn sent(out: &[Output]) -> Vec<Value> {
    out.iter()
        .filter_map(|o| match o {
            Output::Send(f) => Some(serde_json::from_str(f).unwrap()),
            _ => None,
        })
        .collect()
}

/// A connected client with nothing pending.
fn connected(dialect: Dialect) -> Connection {
    let mut c = Connection::new(config(dialect));
    c.connect();
    c.opened(0.0);
    drain(&mut c);
    c
}

fn usage(p: u64, c: u64) -> Usage {
    Usage {
        prompt_tokens: p,
        completion_tokens: c,
        total_tokens: p + c,
    }
}

fn text(s: &str) -> Event {
    Event::MessageChunk {
        content: s.into(),
        id: "think".into(),
    }
}

/// A plain reply, streamed in three chunks.
fn plain_run(run_id: &str) -> Vec<Event> {
    vec![
        Event::RunStart {
            run_id: Some(run_id.into()),
            message: Some("Hello".into()),
            agent: Some(Agent::React),
        },
        Event::NodeEnter { id: "think".into() },
        text("Hi"),
        text(" there"),
        text("!"),
        Event::Usage(usage(12, 6)),
        Event::LlmComplete {
            content: "Hi there!".into(),
            tool_calls: vec![],
            finish_reason: weft_protocol::FinishReason::Stop,
        },
        Event::NodeExit {
            id: "think".into(),
            result: NodeResult::Ok,
        },
        Event::RunEnd {
            reply: "Hi there!".into(),
            usage: Some(usage(12, 6)),
            total_usage: Some(usage(12, 6)),
            iteration_count: Some(1),
            paused: false,
            tool_calls: vec![],
        },
    ]
}

/// The frames a weft server sends for these events in `dialect`.
fn frames(dialect: Dialect, run_id: &str, events: Vec<Event>) -> Vec<String> {
    let mut seq = Sequencer::new(Some("sess-1".into()), run_id);
    let mut enc = Encoder::new(dialect, 7);
    events
        .into_iter()
        .flat_map(|e| enc.encode(&seq.stamp(e)))
        .collect()
}

fn feed(c: &mut Connection, frames: &[String]) -> Vec<Output> {
    for f in frames {
        c.frame(f.as_bytes(), 1.0);
    }
    drain(c)
}

fn texts(out: &[Output]) -> String {
    out.iter()
        .filter_map(|o| match o {
            Output::Text { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

fn event_kinds(out: &[Output]) -> Vec<String> {
    out.iter()
        .filter_map(|o| match o {
            Output::Event { event, .. } => Some(event.event.kind().to_string()),
            _ => None,
        })
        .collect()
}

fn done(out: &[Output]) -> Vec<&Result<RunResult, Error>> {
    out.iter()
        .filter_map(|o| match o {
            Output::RunDone { result, .. } => Some(result),
            _ => None,
        })
        .collect()
}

#[test]
fn a_run_streams_text_and_resolves_in_every_dialect() {
    for dialect in Dialect::ALL {
        let mut c = connected(dialect);
        let h = c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
        let out = drain(&mut c);
        let req = &sent(&out)[0];
        assert!(
            req.to_string().contains(RUN),
            "{dialect}: the run frame carries the client's run id: {req}"
        );
        let out = feed(&mut c, &frames(dialect, RUN, plain_run(RUN)));
        assert_eq!(texts(&out), "Hi there!", "{dialect}: onText deltas");
        let results = done(&out);
        assert_eq!(results.len(), 1, "{dialect}");
        let r = results[0].as_ref().unwrap();
        assert_eq!(r.reply, "Hi there!", "{dialect}");
        assert_eq!(r.run_id, RUN);
        assert_eq!(r.total_usage, usage(12, 6), "{dialect}");
        assert!(out.iter().all(|o| match o {
            Output::Event { run, .. } => *run == Some(h),
            _ => true,
        }));
        assert!(
            c.run_id(h).is_none(),
            "{dialect}: a finished run is forgotten"
        );
    }
}

#[test]
fn agentchat_text_comes_whole_and_still_reaches_on_text() {
    let mut c = connected(Dialect::Agentchat);
    c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    let out = feed(&mut c, &frames(Dialect::Agentchat, RUN, plain_run(RUN)));
    assert_eq!(texts(&out), "Hi there!");
}

#[test]
fn a_drop_reconnects_with_backoff_and_resumes_without_loss_or_duplicates() {
    for dialect in Dialect::ALL {
        let mut c = connected(dialect);
        c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
        drain(&mut c);
        let all = frames(dialect, RUN, plain_run(RUN));
        let cut = all.len() / 2;
        let mut seen = event_kinds(&feed(&mut c, &all[..cut]));
        let last = c.last_event_id(RUN);
        assert!(last > 0);

        c.closed(1006, "", 100.0, 0.0);
        let out = drain(&mut c);
        assert!(out.iter().any(|o| matches!(o, Output::Status(s) if s.state == "reconnecting" && s.attempt == Some(1) && s.retry_in_ms == Some(250.0))));
        c.tick(300.0, 0.0);
        assert!(drain(&mut c).is_empty(), "{dialect}: waits out the backoff");
        c.tick(350.0, 0.0);
        assert!(matches!(drain(&mut c)[..], [Output::Open { .. }]));
        c.opened(400.0);
        let out = drain(&mut c);
        assert_eq!(
            sent(&out),
            vec![json!({"type": "resume", "run_id": RUN, "after_event_id": last})],
            "{dialect}"
        );
        assert!(out.contains(&Output::Connected));

        // The server replays from the resume point; a frame or two of the old socket arrive
        // late as well.
        let out = feed(&mut c, &all[cut - 2..]);
        seen.extend(event_kinds(&out));
        let mut direct = connected(dialect);
        direct.run(opts("Hello"), RUN.into(), 0.0).unwrap();
        drain(&mut direct);
        let want = event_kinds(&feed(&mut direct, &all));
        assert_eq!(seen, want, "{dialect}: every event once, in order");
        assert_eq!(done(&out).len(), 1);
        assert_eq!(c.transcript(), direct.transcript(), "{dialect}");
    }
}

#[test]
fn a_gap_on_a_live_socket_asks_for_a_resume_once() {
    let mut c = connected(Dialect::Loom);
    c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    let all = frames(Dialect::Loom, RUN, plain_run(RUN));
    feed(&mut c, &all[..2]);
    let out = feed(&mut c, &all[3..5]);
    assert_eq!(
        sent(&out),
        vec![json!({"type": "resume", "run_id": RUN, "after_event_id": 2})]
    );
    assert!(
        event_kinds(&out).is_empty(),
        "frames after the gap are held"
    );
    let out = feed(&mut c, &all[2..]);
    assert_eq!(event_kinds(&out).len(), all.len() - 2);
}

#[test]
fn heartbeats_ping_and_a_silent_socket_is_abandoned() {
    let mut c = connected(Dialect::Cueso);
    assert_eq!(c.deadline(), Some(15_000.0));
    c.tick(15_000.0, 0.0);
    let ping = sent(&drain(&mut c));
    assert_eq!(ping[0]["type"], "ping");
    assert_eq!(c.deadline(), Some(25_000.0));

    // A pong (any frame) in time keeps the socket.
    let pong = format!(r#"{{"type":"pong","id":{}}}"#, ping[0]["id"]);
    c.frame(pong.as_bytes(), 16_000.0);
    assert!(
        drain(&mut c).is_empty(),
        "a heartbeat pong is not an app event"
    );
    c.tick(25_000.0, 0.0);
    assert!(drain(&mut c).is_empty());

    c.tick(30_000.0, 0.0);
    drain(&mut c);
    c.tick(40_000.0, 0.0);
    let out = drain(&mut c);
    assert!(
        matches!(
            out[0],
            Output::Close {
                code: CLOSE_DEAD,
                ..
            }
        ),
        "{out:?}"
    );
    assert!(out
        .iter()
        .any(|o| matches!(o, Output::Status(s) if s.state == "reconnecting")));
}

#[test]
fn replies_are_correlated_by_request_id() {
    let mut c = connected(Dialect::Loom);
    let ping = c.ping(1_000.0).unwrap();
    let tools = c.tools_list(1_000.0).unwrap();
    drain(&mut c);
    c.frame(
        format!(r#"{{"type":"tools_list","id":"{tools}","tools":[{{"name":"read","input_schema":{{"type":"object"}}}}]}}"#).as_bytes(),
        1_010.0,
    );
    c.frame(
        format!(r#"{{"type":"pong","id":"{ping}"}}"#).as_bytes(),
        1_042.0,
    );
    let out = drain(&mut c);
    assert_eq!(
        out,
        vec![
            Output::Reply {
                id: tools,
                kind: RequestKind::ToolsList,
                result: Ok(Reply::Tools(vec![ToolDefinition {
                    name: "read".into(),
                    description: None,
                    input_schema: Some(json!({"type": "object"})),
                    read_only: false,
                }])),
            },
            Output::Reply {
                id: ping,
                kind: RequestKind::Ping,
                result: Ok(Reply::Pong(42.0)),
            },
        ]
    );
}

#[test]
fn an_error_reply_rejects_its_request_and_leaves_the_run_alone() {
    let mut c = connected(Dialect::Loom);
    c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    let all = frames(Dialect::Loom, RUN, plain_run(RUN));
    feed(&mut c, &all[..3]);
    let id = c.tool_show("nope", true, 0.0).unwrap();
    drain(&mut c);
    c.frame(
        format!(
            r#"{{"type":"error","id":"{id}","error":"no tool named nope","code":"not_found"}}"#
        )
        .as_bytes(),
        0.0,
    );
    let out = drain(&mut c);
    assert!(matches!(&out[..], [Output::Reply { result: Err(e), .. }] if e.code() == "not_found"));
    let out = feed(&mut c, &all[3..]);
    assert!(
        done(&out)[0].is_ok(),
        "the run was not failed by the request's error"
    );
}

#[test]
fn methods_a_dialect_cannot_serve_fail_naming_the_dialect() {
    let mut c = connected(Dialect::Cueso);
    let e = c.tools_list(0.0).unwrap_err();
    assert_eq!(e.code(), "unsupported");
    assert!(
        e.message().contains("toolsList()") && e.message().contains("cueso"),
        "{e}"
    );
    assert!(e.message().contains("loom"), "{e}");
    assert!(drain(&mut c).is_empty(), "nothing was sent");
}

#[test]
fn requests_time_out_and_drops_reject_what_was_sent() {
    let mut c = connected(Dialect::Loom);
    c.ping(0.0).unwrap();
    drain(&mut c);
    c.tick(30_000.0, 0.0);
    let out = drain(&mut c);
    assert!(out
        .iter()
        .any(|o| matches!(o, Output::Reply { result: Err(e), .. } if e.code() == "timeout")));

    c.ping(31_000.0).unwrap();
    drain(&mut c);
    c.closed(1006, "", 31_001.0, 0.5);
    let out = drain(&mut c);
    assert!(out
        .iter()
        .any(|o| matches!(o, Output::Reply { result: Err(e), .. } if e.code() == "disconnected")));

    // While down, a request waits for the next socket.
    let id = c.ping(31_002.0).unwrap();
    assert!(drain(&mut c).is_empty());
    c.tick(40_000.0, 0.0);
    drain(&mut c);
    c.opened(40_001.0);
    let out = sent(&drain(&mut c));
    assert_eq!(out, vec![json!({"type": "ping", "id": id})]);
}

fn approval_run() -> Vec<Event> {
    vec![
        Event::RunStart {
            run_id: Some(RUN.into()),
            message: Some("write it".into()),
            agent: None,
        },
        Event::ToolCall {
            call_id: Some("call_w".into()),
            name: "write".into(),
            arguments: json!({"path": "a.txt", "content": "hi"}),
        },
        Event::ToolApproval {
            call_id: Some("call_w".into()),
            name: "write".into(),
            arguments: json!({"path": "a.txt", "content": "hi"}),
        },
    ]
}

#[test]
fn approvals_reach_the_app_and_answers_go_out_in_the_dialects_own_message() {
    for dialect in Dialect::ALL {
        let mut c = connected(dialect);
        c.set_approver(true);
        let declared = sent(&drain(&mut c));
        if matches!(dialect, Dialect::Agentchat | Dialect::Cueso) {
            assert_eq!(
                declared,
                vec![json!({"type": "client_tools", "tools": [], "approvals": true})],
                "{dialect}"
            );
        } else {
            assert!(
                declared.is_empty(),
                "{dialect}: approvals need no declaration"
            );
        }
        c.run(opts("write it"), RUN.into(), 0.0).unwrap();
        drain(&mut c);
        let out = feed(&mut c, &frames(dialect, RUN, approval_run()));
        let asked: Vec<_> = out
            .iter()
            .filter_map(|o| match o {
                Output::Approval(a) => Some(a.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(asked.len(), 1, "{dialect}: {out:?}");
        assert_eq!(asked[0].call_id.as_deref(), Some("call_w"));
        assert_eq!(asked[0].arguments["path"], "a.txt");

        let answer = ApprovalAnswer {
            review: "no-continue".into(),
            message: Some("not now".into()),
        };
        c.answer(asked[0].call_id.clone(), answer, 0.0).unwrap();
        let frame = &sent(&drain(&mut c))[0];
        let want = Dialect::parse(dialect.as_str())
            .unwrap()
            .encode_request(
                &Command::ApprovalResponse(ApprovalDecision {
                    call_id: Some("call_w".into()),
                    review: Review::NoContinue,
                    custom_deny_message: Some("not now".into()),
                    explanation: None,
                }),
                "x",
            )
            .unwrap();
        let mut want: Value = serde_json::from_str(&want).unwrap();
        if dialect == Dialect::Agentloop {
            want["id"] = frame["id"].clone();
        }
        assert_eq!(frame, &want, "{dialect}");

        // The socket dies before the server acknowledged: the answer goes out again.
        c.closed(1006, "", 1.0, 0.0);
        c.tick(10_000.0, 0.0);
        drain(&mut c);
        c.opened(10_000.0);
        let again = sent(&drain(&mut c));
        assert!(again.contains(frame), "{dialect}: {again:?}");
    }
}

#[test]
fn an_acknowledged_answer_is_not_sent_again() {
    let mut c = connected(Dialect::Loom);
    c.run(opts("write it"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    let mut events = approval_run();
    feed(&mut c, &frames(Dialect::Loom, RUN, events.clone()));
    let yes = ApprovalAnswer {
        review: "yes".into(),
        message: None,
    };
    c.answer(Some("call_w".into()), yes, 0.0).unwrap();
    drain(&mut c);
    events.push(Event::ApprovalResolved {
        call_id: Some("call_w".into()),
        name: Some("write".into()),
        review: Review::Yes,
        message: None,
    });
    feed(&mut c, &frames(Dialect::Loom, RUN, events));
    c.closed(1001, "going away", 1.0, 0.0);
    c.tick(10_000.0, 0.0);
    drain(&mut c);
    c.opened(10_000.0);
    let out = sent(&drain(&mut c));
    assert_eq!(
        out,
        vec![json!({"type": "resume", "run_id": RUN, "after_event_id": 4})]
    );
}

#[test]
fn an_answer_given_while_disconnected_goes_out_once_on_the_next_socket() {
    for dialect in Dialect::ALL {
        let mut c = connected(dialect);
        c.set_approver(true);
        c.run(opts("write it"), RUN.into(), 0.0).unwrap();
        drain(&mut c);
        feed(&mut c, &frames(dialect, RUN, approval_run()));
        // The network drops while the user decides; the answer and a tool result come
        // before the next socket opens.
        c.closed(1006, "", 1.0, 0.0);
        drain(&mut c);
        let yes = ApprovalAnswer {
            review: "yes".into(),
            message: None,
        };
        c.answer(Some("call_w".into()), yes, 2.0).unwrap();
        c.tool_result("call_t".into(), "42".into(), false).unwrap();
        assert!(sent(&drain(&mut c)).is_empty(), "{dialect}: no socket");
        c.tick(10_000.0, 0.0);
        drain(&mut c);
        c.opened(10_000.0);
        let out = sent(&drain(&mut c));
        let answers = out
            .iter()
            .filter(|f| f["type"] == "approval_response")
            .count();
        let results = out.iter().filter(|f| f["type"] == "tool_result").count();
        assert_eq!((answers, results), (1, 1), "{dialect}: {out:?}");
    }
}

#[test]
fn a_bad_review_is_an_argument_error() {
    let mut c = connected(Dialect::Loom);
    let e = c
        .answer(
            Some("c".into()),
            ApprovalAnswer {
                review: "maybe".into(),
                message: None,
            },
            0.0,
        )
        .unwrap_err();
    assert_eq!(e.code(), "invalid_argument");
    assert!(e.message().contains("no-continue"), "{e}");
}

#[test]
fn a_client_tool_runs_once_when_the_server_starts_it() {
    let mut c = connected(Dialect::Loom);
    c.set_tools(vec![ToolSpec {
        name: "shell".into(),
        description: None,
        input_schema: json!({"type": "object"}),
        read_only: true,
    }]);
    let declared = sent(&drain(&mut c));
    assert_eq!(declared[0]["type"], "client_tools");
    assert_eq!(declared[0]["tools"][0]["name"], "shell");
    c.run(opts("ls"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    let call = Event::ToolCall {
        call_id: Some("call_s".into()),
        name: "shell".into(),
        arguments: json!({"cmd": "ls"}),
    };
    let start = Event::ToolStart {
        call_id: Some("call_s".into()),
        name: "shell".into(),
    };
    let events = vec![
        Event::RunStart {
            run_id: Some(RUN.into()),
            message: None,
            agent: None,
        },
        call.clone(),
        start,
        call,
    ];
    let out = feed(&mut c, &frames(Dialect::Loom, RUN, events));
    let calls: Vec<_> = out
        .iter()
        .filter(|o| matches!(o, Output::ClientTool { .. }))
        .collect();
    assert_eq!(
        calls,
        vec![&Output::ClientTool {
            call_id: "call_s".into(),
            name: "shell".into(),
            arguments: json!({"cmd": "ls"}),
        }]
    );
    c.tool_result("call_s".into(), "a.txt".into(), false)
        .unwrap();
    assert_eq!(
        sent(&drain(&mut c)),
        vec![
            json!({"type": "tool_result", "call_id": "call_s", "result": "a.txt", "is_error": false})
        ]
    );
}

#[test]
fn a_first_connect_that_fails_rejects_and_settles_what_waited() {
    let mut c = Connection::new(config(Dialect::Loom));
    let h = c.run(opts("early"), RUN.into(), 0.0).unwrap();
    c.connect();
    drain(&mut c);
    c.closed(1006, "", 5.0, 0.0);
    let out = drain(&mut c);
    assert!(out.iter().any(|o| matches!(o, Output::ConnectFailed(e) if e.code() == "connect_failed" && e.message().contains("ws://127.0.0.1:8080/?session_id=sess-1"))));
    assert!(out
        .iter()
        .any(|o| matches!(o, Output::RunDone { run, result: Err(_) } if *run == h)));
    // connect() may be tried again.
    c.connect();
    assert!(matches!(
        drain(&mut c)[..],
        [Output::Status(_), Output::Open { .. }]
    ));
}

#[test]
fn a_refusal_is_not_retried() {
    let mut c = connected(Dialect::Loom);
    c.run(opts("x"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    c.closed(4003, "origin not allowed", 1.0, 0.0);
    let out = drain(&mut c);
    assert!(out.iter().any(|o| matches!(o, Output::RunDone { result: Err(e), .. } if e.code() == "disconnected" && e.message().contains("origin not allowed"))));
    assert!(out
        .iter()
        .any(|o| matches!(o, Output::Status(s) if s.state == "closed")));
    assert_eq!(c.deadline(), None);
}

#[test]
fn giving_up_after_max_attempts_settles_the_runs() {
    let mut cfg = config(Dialect::Loom);
    cfg.reconnect = Some(Backoff {
        max_attempts: Some(1),
        ..Backoff::default()
    });
    let mut c = Connection::new(cfg);
    c.connect();
    c.opened(0.0);
    c.run(opts("x"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    c.closed(1006, "", 1.0, 0.0);
    c.tick(1_000.0, 0.0);
    drain(&mut c);
    c.closed(1006, "", 1_001.0, 0.0);
    let out = drain(&mut c);
    assert!(out.iter().any(
        |o| matches!(o, Output::RunDone { result: Err(e), .. } if e.message().contains("gave up"))
    ));
}

#[test]
fn close_settles_everything_and_later_calls_fail() {
    let mut c = connected(Dialect::Loom);
    let h = c.run(opts("x"), RUN.into(), 0.0).unwrap();
    c.ping(0.0).unwrap();
    drain(&mut c);
    c.close();
    let out = drain(&mut c);
    assert!(matches!(
        out[0],
        Output::Close {
            code: CLOSE_NORMAL,
            ..
        }
    ));
    assert!(out.iter().any(|o| matches!(o, Output::RunDone { run, result: Err(e) } if *run == h && e.code() == "closed")));
    assert!(out
        .iter()
        .any(|o| matches!(o, Output::Reply { result: Err(e), .. } if e.code() == "closed")));
    assert_eq!(c.ping(0.0).unwrap_err().code(), "closed");
    c.closed(1000, "", 0.0, 0.0);
    assert!(drain(&mut c).is_empty());
}

#[test]
fn a_run_refused_before_it_starts_rejects() {
    let mut c = connected(Dialect::Loom);
    c.run(opts("x"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    c.frame(
        format!(
            r#"{{"type":"error","id":"{RUN}","error":"a run is already streaming","code":"busy"}}"#
        )
        .as_bytes(),
        0.0,
    );
    let out = drain(&mut c);
    assert!(matches!(done(&out)[..], [Err(e)] if e.code() == "busy"));
}

#[test]
fn a_run_refused_while_another_streams_rejects_in_every_dialect() {
    for d in Dialect::ALL {
        let mut c = connected(d);
        let first = c.run(opts("count"), RUN.into(), 0.0).unwrap();
        let second = c.run(opts("me too"), "run-b".into(), 0.0).unwrap();
        drain(&mut c);
        let mut run = frames(d, RUN, plain_run(RUN));
        let end = run.pop().unwrap();
        let mut out = feed(&mut c, &run);
        // The server refuses the second run while the first streams, naming the request.
        let busy = Sequenced::bare(Event::Error {
            message: "a run is already in progress (run-a)".into(),
            code: Some("busy".into()),
            id: Some("run-b".into()),
            details: None,
        });
        out.extend(feed(&mut c, &Encoder::new(d, 7).encode(&busy)));
        out.extend(feed(&mut c, &[end]));
        let settled: Vec<(RunHandle, Result<String, String>)> = out
            .iter()
            .filter_map(|o| match o {
                Output::RunDone { run, result } => Some((
                    *run,
                    result
                        .as_ref()
                        .map(|r| r.reply.clone())
                        .map_err(|e| format!("{}: {}", e.code(), e.message())),
                )),
                _ => None,
            })
            .collect();
        assert_eq!(
            settled,
            [
                (
                    second,
                    Err("busy: a run is already in progress (run-a)".into())
                ),
                (first, Ok("Hi there!".into())),
            ],
            "{d}"
        );
    }
}

#[test]
fn cancel_before_the_frame_left_settles_locally() {
    let mut c = Connection::new(config(Dialect::Loom));
    let h = c.run(opts("x"), RUN.into(), 0.0).unwrap();
    c.cancel(h, 0.0).unwrap();
    let out = drain(&mut c);
    assert!(matches!(done(&out)[..], [Err(e)] if e.code() == "cancelled"));
    c.connect();
    c.opened(0.0);
    assert!(
        sent(&drain(&mut c)).is_empty(),
        "the run frame never leaves"
    );
}

#[test]
fn cancel_goes_out_and_the_cancelled_error_rejects_the_run() {
    let mut c = connected(Dialect::Cueso);
    let h = c.run(opts("x"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    c.cancel(h, 0.0).unwrap();
    assert_eq!(
        sent(&drain(&mut c)),
        vec![json!({"type": "cancel", "id": RUN})]
    );
    let events = vec![
        Event::RunStart {
            run_id: Some(RUN.into()),
            message: Some("x".into()),
            agent: None,
        },
        Event::Error {
            message: "cancelled".into(),
            code: Some("cancelled".into()),
            id: None,
            details: None,
        },
    ];
    let out = feed(&mut c, &frames(Dialect::Cueso, RUN, events));
    assert!(matches!(done(&out)[..], [Err(e)] if e.code() == "cancelled"));
}

#[test]
fn a_server_that_names_runs_itself_is_followed() {
    let mut c = connected(Dialect::Loom);
    let h = c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    let out = feed(&mut c, &frames(Dialect::Loom, "srv-9", plain_run("srv-9")));
    assert!(matches!(done(&out)[..], [Ok(r)] if r.run_id == "srv-9"));
    assert!(out
        .iter()
        .all(|o| !matches!(o, Output::Event { run, .. } if *run != Some(h))));
}

#[test]
fn runs_of_other_sockets_reach_the_app_without_a_handle() {
    let mut c = connected(Dialect::Loom);
    let out = feed(&mut c, &frames(Dialect::Loom, "other", plain_run("other")));
    assert!(out
        .iter()
        .any(|o| matches!(o, Output::Event { run: None, .. })));
    assert!(done(&out).is_empty());
    assert_eq!(c.transcript().runs.len(), 1);
}

fn handles(out: &[Output]) -> Vec<Option<RunHandle>> {
    out.iter()
        .filter_map(|o| match o {
            Output::Event { run, .. } => Some(*run),
            _ => None,
        })
        .collect()
}

#[test]
fn a_followed_run_is_replayed_from_its_start_and_settles_in_every_dialect() {
    for dialect in Dialect::ALL {
        let mut c = connected(dialect);
        let h = c.follow(RUN.into()).unwrap();
        assert_eq!(
            sent(&drain(&mut c)),
            vec![json!({"type": "resume", "run_id": RUN, "after_event_id": 0})],
            "{dialect}"
        );
        let out = feed(&mut c, &frames(dialect, RUN, plain_run(RUN)));
        assert!(
            handles(&out).iter().all(|r| *r == Some(h)),
            "{dialect}: every event is the followed run's"
        );
        assert_eq!(texts(&out), "Hi there!", "{dialect}");
        assert!(
            matches!(done(&out)[..], [Ok(r)] if r.reply == "Hi there!" && r.run_id == RUN),
            "{dialect}: {out:?}"
        );
        assert_eq!(
            c.follow(RUN.into()).map(|h2| h2 == h),
            Ok(false),
            "{dialect}: ended, a new handle"
        );
    }
}

#[test]
fn a_run_followed_before_connecting_is_resumed_when_the_socket_opens() {
    let mut c = Connection::new(config(Dialect::Cueso));
    let h = c.follow(RUN.into()).unwrap();
    assert_eq!(c.follow(RUN.into()), Ok(h), "following twice: the same run");
    assert!(sent(&drain(&mut c)).is_empty());
    c.connect();
    c.opened(0.0);
    assert_eq!(
        sent(&drain(&mut c)),
        vec![json!({"type": "resume", "run_id": RUN, "after_event_id": 0})]
    );
}

#[test]
fn following_a_run_the_server_does_not_know_rejects_with_unknown_run() {
    let mut c = connected(Dialect::Loom);
    c.follow("nope".into()).unwrap();
    drain(&mut c);
    c.frame(
        br#"{"type":"error","id":"nope","error":"unknown run nope in this session","code":"unknown_run"}"#,
        0.0,
    );
    let out = drain(&mut c);
    assert!(
        matches!(done(&out)[..], [Err(e)] if e.code() == "unknown_run"),
        "{out:?}"
    );
    assert_eq!(
        c.follow("".into()).map_err(|e| e.code().to_string()),
        Err("invalid_argument".into())
    );
}

#[test]
fn following_a_run_already_held_whole_settles_at_once() {
    let mut c = connected(Dialect::Loom);
    feed(&mut c, &frames(Dialect::Loom, RUN, plain_run(RUN)));
    c.follow(RUN.into()).unwrap();
    let out = drain(&mut c);
    assert!(sent(&out).is_empty(), "nothing to ask the server");
    assert!(
        matches!(done(&out)[..], [Ok(r)] if r.reply == "Hi there!" && r.total_usage == usage(12, 6))
    );

    let mut events = plain_run("r2");
    events.truncate(3);
    events.push(Event::Error {
        message: "cancelled by the user".into(),
        code: Some("cancelled".into()),
        id: None,
        details: None,
    });
    feed(&mut c, &frames(Dialect::Loom, "r2", events));
    c.follow("r2".into()).unwrap();
    assert!(matches!(done(&drain(&mut c))[..], [Err(e)] if e.code() == "cancelled"));
}

#[test]
fn a_run_followed_midway_continues_after_what_was_applied() {
    // This socket saw the first half live (another socket started the run), then follows it.
    let mut c = connected(Dialect::Loom);
    let all = frames(Dialect::Loom, RUN, plain_run(RUN));
    let out = feed(&mut c, &all[..4]);
    assert_eq!(handles(&out), vec![None; 4]);
    let h = c.follow(RUN.into()).unwrap();
    assert_eq!(
        sent(&drain(&mut c)),
        vec![json!({"type": "resume", "run_id": RUN, "after_event_id": 4})]
    );
    // The resume overlaps what arrived live: nothing twice, text continues where it was.
    let out = feed(&mut c, &all[2..]);
    assert_eq!(handles(&out), vec![Some(h); all.len() - 4]);
    assert_eq!(texts(&out), "!");
    assert_eq!(done(&out).len(), 1);
}

#[test]
fn a_followed_run_never_takes_the_events_of_another() {
    let mut c = connected(Dialect::Loom);
    let h = c.follow("elsewhere".into()).unwrap();
    drain(&mut c);
    // A run of another socket starts while the follow waits for its replay.
    let out = feed(&mut c, &frames(Dialect::Loom, "srv-9", plain_run("srv-9")));
    assert!(handles(&out).iter().all(Option::is_none), "{out:?}");
    assert!(done(&out).is_empty());
    assert_eq!(c.run_id(h), Some("elsewhere"));
}

#[test]
fn an_approval_settled_without_this_client_is_withdrawn_and_its_answer_not_sent() {
    let mut c = connected(Dialect::Loom);
    c.set_approver(true);
    c.follow(RUN.into()).unwrap();
    drain(&mut c);
    let mut events = approval_run();
    events.push(Event::ApprovalResolved {
        call_id: Some("call_w".into()),
        name: Some("write".into()),
        review: Review::Yes,
        message: None,
    });
    // The replay holds the request and, two frames on, its answer from another tab.
    let out = feed(&mut c, &frames(Dialect::Loom, RUN, events));
    let asked = out
        .iter()
        .position(|o| matches!(o, Output::Approval(a) if a.call_id.as_deref() == Some("call_w")));
    let withdrawn = out
        .iter()
        .position(|o| matches!(o, Output::ApprovalWithdrawn { call_id } if call_id == "call_w"));
    assert!(
        matches!((asked, withdrawn), (Some(a), Some(w)) if a < w),
        "{out:?}"
    );
    let yes = ApprovalAnswer {
        review: "yes".into(),
        message: None,
    };
    assert_eq!(c.answer(Some("call_w".into()), yes, 0.0), Ok(()));
    assert!(sent(&drain(&mut c)).is_empty(), "a stale answer stays here");
}

#[test]
fn undecodable_frames_are_reported_not_fatal() {
    let mut c = connected(Dialect::Loom);
    c.frame(b"{not json", 0.0);
    c.frame(&[0xff, 0xfe], 0.0);
    c.frame(br#"{"type":"run_stream_event"}"#, 0.0);
    let codes: Vec<String> = drain(&mut c)
        .into_iter()
        .map(|o| match o {
            Output::Error(e) => e.code().to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(codes, ["invalid_json", "invalid_utf8", "invalid_field"]);
}

#[test]
fn urls_and_subprotocols() {
    let u = |url: &str, d| endpoint_url(url, d, None);
    assert_eq!(
        u("wss://h.example", Dialect::Cueso).unwrap(),
        "wss://h.example/ws/chat"
    );
    assert_eq!(
        u("https://h.example/", Dialect::Agentloop).unwrap(),
        "wss://h.example/agentloop"
    );
    assert_eq!(
        u("ws://h:8080/custom?x=1#f", Dialect::Loom).unwrap(),
        "ws://h:8080/custom?x=1"
    );
    assert_eq!(
        endpoint_url("ws://h?a=b", Dialect::Agentchat, Some("s 1/é")).unwrap(),
        "ws://h/ws?a=b&session_id=s%201%2F%C3%A9"
    );
    for bad in ["h.example", "ftp://h", "ws://", ""] {
        assert_eq!(
            u(bad, Dialect::Loom).unwrap_err().code(),
            "invalid_argument",
            "{bad}"
        );
    }
    assert_eq!(
        subprotocols(Dialect::Cueso, Some("a.b-c_~1")).unwrap(),
        ["weft.cueso", "weft.token.a.b-c_~1"]
    );
    assert_eq!(subprotocols(Dialect::Loom, None).unwrap(), ["weft.loom"]);
    for bad in ["", "has space", "semi;colon", "é"] {
        assert!(subprotocols(Dialect::Loom, Some(bad)).is_err(), "{bad:?}");
    }
}

fn client_tool_run(review: Option<Review>) -> Vec<Event> {
    let call = "call_n";
    let mut events = vec![
        Event::RunStart {
            run_id: Some(RUN.into()),
            message: Some("notes".into()),
            agent: None,
        },
        Event::ToolCallChunk {
            call_id: Some(call.into()),
            name: Some("notes".into()),
            arguments_delta: String::new(),
        },
        Event::ToolCallChunk {
            call_id: Some(call.into()),
            name: Some("notes".into()),
            arguments_delta: r#"{"topic":"groceries"}"#.into(),
        },
        Event::ToolCall {
            call_id: Some(call.into()),
            name: "notes".into(),
            arguments: json!({"topic": "groceries"}),
        },
        Event::Usage(usage(30, 5)),
        Event::LlmComplete {
            content: String::new(),
            tool_calls: vec!["notes".into()],
            finish_reason: weft_protocol::FinishReason::ToolCalls,
        },
    ];
    if let Some(review) = review {
        events.push(Event::ToolApproval {
            call_id: Some(call.into()),
            name: "notes".into(),
            arguments: json!({"topic": "groceries"}),
        });
        events.push(Event::ApprovalResolved {
            call_id: Some(call.into()),
            name: Some("notes".into()),
            review,
            message: None,
        });
    }
    events
}

fn with_notes_tool(dialect: Dialect, read_only: bool) -> Connection {
    let mut c = connected(dialect);
    c.set_tools(vec![ToolSpec {
        name: "notes".into(),
        description: None,
        input_schema: json!({"type": "object"}),
        read_only,
    }]);
    c.run(opts("notes"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    c
}

fn tool_calls(out: &[Output]) -> Vec<(String, Value)> {
    out.iter()
        .filter_map(|o| match o {
            Output::ClientTool {
                call_id, arguments, ..
            } => Some((call_id.clone(), arguments.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_read_only_client_tool_runs_when_the_response_ends_in_every_dialect() {
    for dialect in Dialect::ALL {
        let mut c = with_notes_tool(dialect, true);
        let mut events = client_tool_run(None);
        let end = events.split_off(4);
        let before = feed(&mut c, &frames(dialect, RUN, events.clone()));
        assert!(
            tool_calls(&before).is_empty(),
            "{dialect}: not while the response streams"
        );
        events.extend(end);
        let all = frames(dialect, RUN, events);
        let out = feed(&mut c, &all);
        assert_eq!(
            tool_calls(&out),
            vec![("call_n".into(), json!({"topic": "groceries"}))],
            "{dialect}"
        );
    }
}

#[test]
fn a_client_tool_that_needs_approval_runs_only_once_approved() {
    for dialect in Dialect::ALL {
        for (review, runs) in [
            (Review::Yes, true),
            (Review::Always, true),
            (Review::NoContinue, false),
            (Review::NoExit, false),
        ] {
            let mut c = with_notes_tool(dialect, false);
            let all = frames(dialect, RUN, client_tool_run(Some(review)));
            let out = feed(&mut c, &all);
            let calls = tool_calls(&out);
            assert_eq!(
                calls.len(),
                usize::from(runs),
                "{dialect} {review:?}: {out:?}"
            );
            if runs {
                // It came with the approval, not before it.
                let at = out
                    .iter()
                    .position(|o| matches!(o, Output::ClientTool { .. }))
                    .unwrap();
                let before = out[..at]
                    .iter()
                    .rev()
                    .find(|o| matches!(o, Output::Event { .. }));
                assert!(
                    matches!(before, Some(Output::Event { event, .. }) if matches!(event.event, Event::ApprovalResolved { .. }))
                );
            }
        }
    }
}

#[test]
fn after_always_the_tool_runs_without_asking_again() {
    let mut c = with_notes_tool(Dialect::Cueso, false);
    feed(
        &mut c,
        &frames(Dialect::Cueso, RUN, client_tool_run(Some(Review::Always))),
    );
    let second = "run-b";
    c.run(opts("again"), second.into(), 0.0).unwrap();
    drain(&mut c);
    let events: Vec<Event> = client_tool_run(None)
        .into_iter()
        .map(|e| match e {
            Event::RunStart { .. } => Event::RunStart {
                run_id: Some(second.into()),
                message: None,
                agent: None,
            },
            Event::ToolCallChunk {
                name,
                arguments_delta,
                ..
            } => Event::ToolCallChunk {
                call_id: Some("call_m".into()),
                name,
                arguments_delta,
            },
            Event::ToolCall {
                name, arguments, ..
            } => Event::ToolCall {
                call_id: Some("call_m".into()),
                name,
                arguments,
            },
            other => other,
        })
        .collect();
    let out = feed(&mut c, &frames(Dialect::Cueso, second, events));
    assert_eq!(tool_calls(&out).len(), 1);
}

/// The frames a weft server sends outside any run (a reply to one socket).
fn bare(dialect: Dialect, event: Event) -> Vec<String> {
    Encoder::new(dialect, 7).encode(&Sequenced::bare(event))
}

fn context_event(tokens: u64) -> Event {
    Event::ContextInfo {
        token_count: tokens,
        usage_percent: 1.5,
        transcript_length: 4,
        max_tokens: 8000,
        strategy: "ThresholdContextManager".into(),
    }
}

fn compacted_event() -> Event {
    Event::ContextCompacted {
        old_token_count: 900,
        new_token_count: 300,
        reduction_percent: 66.7,
        strategy: "ThresholdContextManager".into(),
    }
}

fn replies(out: &[Output]) -> Vec<(&RequestKind, &Result<Reply, Error>)> {
    out.iter()
        .filter_map(|o| match o {
            Output::Reply { kind, result, .. } => Some((kind, result)),
            _ => None,
        })
        .collect()
}

#[test]
fn context_info_is_answered_by_the_next_context_info_outside_a_run() {
    let mut c = connected(Dialect::Agentloop);
    c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    let id = c.context_info(0.0).unwrap();
    let out = sent(&drain(&mut c));
    assert_eq!(out, vec![json!({"id": id, "type": "get_context_info"})]);

    // A run's own context_info is the run's, not the answer.
    let run = frames(
        Dialect::Agentloop,
        RUN,
        vec![
            Event::RunStart {
                run_id: Some(RUN.into()),
                message: Some("Hello".into()),
                agent: None,
            },
            context_event(100),
        ],
    );
    let out = feed(&mut c, &run);
    assert!(replies(&out).is_empty(), "{out:?}");
    assert!(event_kinds(&out).contains(&"context_info".to_string()));

    let out = feed(&mut c, &bare(Dialect::Agentloop, context_event(870)));
    assert_eq!(
        out,
        vec![Output::Reply {
            id,
            kind: RequestKind::ContextInfo,
            result: Ok(Reply::Context(ContextInfo {
                token_count: 870,
                usage_percent: 1.5,
                transcript_length: 4,
                max_tokens: 8000,
                strategy: "ThresholdContextManager".into(),
            })),
        }]
    );
}

#[test]
fn compact_resolves_with_the_compaction_run_and_rejects_with_its_error() {
    let mut c = connected(Dialect::Agentloop);
    let id = c.compact(0.0).unwrap();
    let out = sent(&drain(&mut c));
    assert_eq!(out, vec![json!({"id": id, "type": "manual_compact"})]);

    // The server compacts in a run of its own: its first event is the outcome, and every
    // listener of the client sees it too.
    let out = feed(
        &mut c,
        &frames(Dialect::Agentloop, "compact-1", vec![compacted_event()]),
    );
    assert_eq!(
        replies(&out),
        vec![(
            &RequestKind::Compact,
            &Ok(Reply::Compacted(CompactResult {
                old_token_count: 900,
                new_token_count: 300,
                reduction_percent: 66.7,
                strategy: "ThresholdContextManager".into(),
            }))
        )]
    );
    assert_eq!(event_kinds(&out), ["context_compacted"]);

    // Nothing to compact: the compaction run's only event is an error.
    c.compact(0.0).unwrap();
    drain(&mut c);
    let empty = Event::Error {
        message: "Cannot compact empty transcript".into(),
        code: Some("empty_transcript".into()),
        id: None,
        details: None,
    };
    let out = feed(
        &mut c,
        &frames(Dialect::Agentloop, "compact-2", vec![empty]),
    );
    assert!(
        matches!(&replies(&out)[..], [(RequestKind::Compact, Err(e))] if e.code() == "empty_transcript"),
        "{out:?}"
    );

    // A run is streaming: the refusal belongs to no run, and that run goes on.
    c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    let run = frames(Dialect::Agentloop, RUN, plain_run(RUN));
    feed(&mut c, &run[..2]);
    c.compact(0.0).unwrap();
    drain(&mut c);
    let busy = Event::Error {
        message: "a run is in progress; compact after it ends".into(),
        code: Some("busy".into()),
        id: None,
        details: None,
    };
    let out = feed(&mut c, &bare(Dialect::Agentloop, busy));
    assert!(
        matches!(&replies(&out)[..], [(RequestKind::Compact, Err(e))] if e.code() == "busy"),
        "{out:?}"
    );
    let out = feed(&mut c, &run[2..]);
    assert!(done(&out)[0].is_ok(), "the refusal did not fail the run");
    assert_eq!(
        c.transcript().run(RUN).unwrap().status,
        RunStatus::Completed
    );
}

#[test]
fn a_compaction_inside_a_run_does_not_answer_compact() {
    let mut c = connected(Dialect::Agentloop);
    c.compact(0.0).unwrap();
    drain(&mut c);
    // Another socket's run compacts before its model call: not the answer.
    let other = frames(
        Dialect::Agentloop,
        "run-other",
        vec![
            Event::RunStart {
                run_id: Some("run-other".into()),
                message: Some("Hello".into()),
                agent: None,
            },
            compacted_event(),
        ],
    );
    let out = feed(&mut c, &other);
    assert!(replies(&out).is_empty(), "{out:?}");
    // Nor does an app's own run compacting.
    c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
    drain(&mut c);
    let own = frames(
        Dialect::Agentloop,
        RUN,
        vec![
            Event::RunStart {
                run_id: Some(RUN.into()),
                message: Some("Hello".into()),
                agent: None,
            },
            compacted_event(),
        ],
    );
    let out = feed(&mut c, &own);
    assert!(replies(&out).is_empty(), "{out:?}");
}

#[test]
fn context_info_and_compact_are_agentloop_only() {
    for dialect in [Dialect::Loom, Dialect::Agentchat, Dialect::Cueso] {
        let mut c = connected(dialect);
        for e in [
            c.context_info(0.0).unwrap_err(),
            c.compact(0.0).unwrap_err(),
        ] {
            assert_eq!(e.code(), "unsupported");
            assert!(
                e.message().contains(dialect.as_str()) && e.message().contains("agentloop"),
                "{e}"
            );
        }
        assert!(drain(&mut c).is_empty(), "nothing was sent");
    }
}

mod originals;

#[test]
fn a_fresh_token_replaces_the_last_on_every_open() {
    let weft = subprotocols(Dialect::Cueso, Some("old")).unwrap();
    let (url, protocols) = with_token("ws://h/ws/chat?session_id=s", &weft, "new.jwt-x_y").unwrap();
    assert_eq!(url, "ws://h/ws/chat?session_id=s");
    assert_eq!(protocols, ["weft.cueso", "weft.token.new.jwt-x_y"]);
    // An original server: in the query, as its own clients send it.
    let (url, protocols) = with_token("ws://h/ws/chat?session_id=s", &[], "a b").unwrap();
    assert_eq!(url, "ws://h/ws/chat?session_id=s&token=a%20b");
    assert!(protocols.is_empty());
    let bad = with_token("ws://h/", &weft, "not a token").unwrap_err();
    assert_eq!(bad.code(), "invalid_argument");
    assert!(with_token("ws://h/", &weft, "").is_err());
}
