//! Approvals and client tools, natively: asked, answered once, withdrawn; tools run when due.

use super::*;

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
            arguments: json!({"path": "a.txt", "content": "hi"}).into(),
        },
        Event::ToolApproval {
            call_id: Some("call_w".into()),
            name: "write".into(),
            arguments: json!({"path": "a.txt", "content": "hi"}).into(),
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
        assert_eq!(asked[0].arguments.to_value()["path"], "a.txt");

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
        input_schema: json!({"type": "object"}).into(),
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
        arguments: json!({"cmd": "ls"}).into(),
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
            arguments: json!({"cmd": "ls"}).into(),
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
            arguments: json!({"topic": "groceries"}).into(),
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
            arguments: json!({"topic": "groceries"}).into(),
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
        input_schema: json!({"type": "object"}).into(),
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
            } => Some((call_id.clone(), arguments.to_value())),
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
