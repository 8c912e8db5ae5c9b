//! The socket's life, natively: reconnect and resume, heartbeats, giving up, closing.

use super::*;

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
fn a_run_sent_on_a_dead_socket_is_sent_again_when_the_server_does_not_know_it() {
    for dialect in Dialect::ALL {
        let mut c = connected(dialect);
        c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
        let first = sent(&drain(&mut c));
        assert_eq!(first.len(), 1, "{dialect}");
        // The socket was dead already: the frame never arrived, and the heartbeat notices.
        c.closed(1006, "", 100.0, 0.0);
        c.tick(400.0, 0.0);
        drain(&mut c);
        c.opened(450.0);
        assert_eq!(
            sent(&drain(&mut c)),
            vec![json!({"type": "resume", "run_id": RUN, "after_event_id": 0})],
            "{dialect}"
        );
        let unknown = Event::Error {
            message: "unknown run r1 in this session".into(),
            code: Some("unknown_run".into()),
            id: Some(RUN.into()),
            details: None,
        };
        let out = feed(&mut c, &reply(dialect, unknown.clone()));
        assert_eq!(
            sent(&out),
            first,
            "{dialect}: the run's own frame, once more"
        );
        assert!(done(&out).is_empty(), "{dialect}: the run goes on");

        let out = feed(&mut c, &frames(dialect, RUN, plain_run(RUN)));
        assert!(
            matches!(done(&out)[..], [Ok(r)] if r.reply == "Hi there!"),
            "{dialect}: {out:?}"
        );

        // Sent twice and still unknown: the server's error is the run's.
        c.run(opts("Again"), "r2".into(), 500.0).unwrap();
        drain(&mut c);
        let mut again = unknown.clone();
        if let Event::Error { id, .. } = &mut again {
            *id = Some("r2".into());
        }
        feed(&mut c, &reply(dialect, again.clone()));
        let out = feed(&mut c, &reply(dialect, again));
        assert!(
            matches!(done(&out)[..], [Err(e)] if e.code() == "unknown_run"),
            "{dialect}: {out:?}"
        );
    }
}

/// `event` as weft sends a reply outside any run.
fn reply(dialect: Dialect, event: Event) -> Vec<String> {
    Encoder::new(dialect, 7).encode(&Sequenced::bare(event))
}

#[test]
fn a_resume_the_server_refuses_ends_the_run_with_its_error() {
    for dialect in Dialect::ALL {
        let mut c = connected(dialect);
        let h = c.run(opts("Hello"), RUN.into(), 0.0).unwrap();
        drain(&mut c);
        let all = frames(dialect, RUN, plain_run(RUN));
        feed(&mut c, &all[..3]);
        c.closed(1006, "", 100.0, 0.0);
        c.tick(400.0, 0.0);
        drain(&mut c);
        c.opened(450.0);
        drain(&mut c);
        // The run ended long ago on the server, and its events are gone.
        let expired = Event::Error {
            message: "the events of run run-a were deleted 24 h after it ended".into(),
            code: Some("expired".into()),
            id: Some(RUN.into()),
            details: None,
        };
        let out = feed(&mut c, &reply(dialect, expired));
        assert!(
            matches!(done(&out)[..], [Err(e)] if e.code() == "expired"),
            "{dialect}: {out:?}"
        );
        assert_eq!(
            handles(&out),
            vec![Some(h)],
            "{dialect}: the run's own event"
        );
        let transcript = c.transcript();
        let run = transcript.run(RUN).unwrap();
        assert_eq!(run.status, RunStatus::Failed, "{dialect}");
    }
}
