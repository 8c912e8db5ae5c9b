//! Runs, natively: in every dialect, refused, cancelled, named by the server, followed.

use super::*;

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

/// The authorizations among `out`, as `onAuthorization` gets them.
fn authorizations(out: &[Output]) -> Vec<McpAuthorization> {
    out.iter()
        .filter_map(|o| match o {
            Output::Authorization(a) => Some(a.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn an_mcp_authorization_reaches_on_authorization_where_the_dialect_carries_it() {
    let url = "https://auth.example.com/authorize?state=s";
    let custom = |value: Value| {
        Sequenced::bare(Event::Custom {
            value: RawJson::from_value(&value),
        })
    };
    for dialect in Dialect::ALL {
        let mut c = connected(dialect);
        // As the Worker sends it: a bare event, outside any run, to a weft socket.
        let mut enc = Encoder::for_socket(dialect, 7, true);
        let mut frames = Vec::new();
        for value in [
            json!({"type": "mcp_authorization", "server": "notes", "url": url}),
            json!({"type": "mcp_authorized", "server": "notes"}),
            // An agent's own custom events are not authorizations.
            json!({"type": "progress", "server": "notes", "url": url}),
            json!({"type": "mcp_authorization", "server": "notes"}),
        ] {
            frames.extend(enc.encode(&custom(value)));
        }
        let got = authorizations(&feed(&mut c, &frames));
        let carried = matches!(dialect, Dialect::Loom | Dialect::Agui);
        let expected = if carried {
            vec![
                McpAuthorization {
                    server: "notes".into(),
                    url: Some(url.into()),
                    authorized: false,
                },
                McpAuthorization {
                    server: "notes".into(),
                    url: None,
                    authorized: true,
                },
            ]
        } else {
            vec![]
        };
        assert_eq!(got, expected, "{dialect}: {frames:?}");
    }
}
