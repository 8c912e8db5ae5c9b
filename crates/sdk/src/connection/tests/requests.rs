//! Requests, natively: correlation by id, errors, timeouts, and the replies that name none.

use super::*;

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
                    input_schema: Some(json!({"type": "object"}).into()),
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
fn add_mcp_server_sends_its_headers_and_resolves_with_the_tools_or_rejects_on_every_dialect() {
    for dialect in Dialect::ALL {
        let mut c = connected(dialect);
        let server = |name: &str| McpServerOptions {
            name: name.into(),
            url: "https://mcp.example.com/mcp".into(),
            headers: Some([("Authorization".to_string(), "Bearer t".to_string())].into()),
        };
        let ok = c.add_mcp_server(server("docs"), 0.0).unwrap();
        let refused = c.add_mcp_server(server("other"), 0.0).unwrap();
        let frames = sent(&drain(&mut c));
        assert_eq!(frames[0]["type"], "add_mcp_server", "{dialect}");
        assert_eq!(frames[0]["id"], ok.as_str());
        assert_eq!(frames[0]["headers"]["Authorization"], "Bearer t");
        // The server's answers as a loom socket, or a weft socket of another dialect, has them.
        let mut encoder = Encoder::for_socket(dialect, 1, true);
        let answers = [
            Event::ToolsList {
                id: ok.clone(),
                tools: vec![ToolSpec {
                    name: "docs_lookup".into(),
                    description: None,
                    input_schema: json!({"type": "object"}).into(),
                    read_only: false,
                }],
            },
            Event::Error {
                message: "the host other.example is not listed".into(),
                code: Some("mcp_refused".into()),
                id: Some(refused.clone()),
                details: None,
            },
        ];
        for event in answers {
            for f in encoder.encode(&Sequenced::bare(event)) {
                c.frame(f.as_bytes(), 1.0);
            }
        }
        let out = drain(&mut c);
        assert!(
            out.iter().any(
                |o| matches!(o, Output::Reply { id, result: Ok(Reply::Tools(t)), .. }
                if *id == ok && t[0].name == "docs_lookup")
            ),
            "{dialect}: {out:?}"
        );
        assert!(
            out.iter()
                .any(|o| matches!(o, Output::Reply { id, result: Err(e), .. }
                if *id == refused && e.code() == "mcp_refused")),
            "{dialect}: {out:?}"
        );
    }
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

#[test]
fn each_dialect_serves_its_documents_requests_and_names_who_serves_the_rest() {
    let served = |d: Dialect| -> Vec<&str> {
        RequestKind::ALL
            .into_iter()
            .filter(|k| d.serves(&k.sample()))
            .map(RequestKind::name)
            .collect()
    };
    assert_eq!(
        served(Dialect::Loom),
        [
            "ping",
            "toolsList",
            "toolShow",
            "userMessages",
            "addMcpServer"
        ]
    );
    assert_eq!(
        served(Dialect::Agentloop),
        ["ping", "contextInfo", "compact", "addMcpServer"]
    );
    assert_eq!(served(Dialect::Agentchat), ["ping", "addMcpServer"]);
    assert_eq!(served(Dialect::Cueso), ["ping", "addMcpServer"]);
    let e = connected(Dialect::Cueso).tools_list(0.0).unwrap_err();
    assert_eq!(
        e.message(),
        "toolsList() is not available on the cueso dialect; only the loom dialect serves it"
    );
}
