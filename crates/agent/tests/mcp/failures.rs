//! Operations that fail, or recover: each says what happened and never retries a tool call that
//! may have run.

use super::*;

#[test]
fn a_stream_broken_mid_call_is_reported_not_retried() {
    let state = known(Era::Legacy);
    let whole = Response::recorded("legacy-call-progress");
    let text = String::from_utf8(whole.body.clone()).expect("UTF-8");
    // Cut after the second progress event: the connection dropped mid-call.
    let second = text
        .match_indices("notifications/progress")
        .nth(1)
        .expect("two")
        .0;
    let cut = second + text[second..].find("\n\n").expect("event end") + 2;
    let broken = Response {
        body: whole.body[..cut].to_vec(),
        ..whole
    };
    let arguments = json!({"duration": 0.3, "steps": 3});
    let ended = run_whole(
        call(
            Era::Legacy,
            state.clone(),
            "trigger-long-running-operation",
            "call-2",
            arguments.clone(),
        ),
        std::slice::from_ref(&broken),
    );
    assert_eq!(ended.requests.len(), 1, "never sent again");
    assert_eq!(
        ended.progress.len(),
        2,
        "what came before the break is shown"
    );
    let error = failed(&ended);
    assert!(matches!(error, McpError::Interrupted { method, .. } if method == "tools/call"));
    assert!(
        error.to_string().contains("may or may not have run"),
        "{error}"
    );

    // The host's timeout or a transport error mid-body: the same, with its reason.
    let mut op = call(
        Era::Legacy,
        state,
        "trigger-long-running-operation",
        "call-2",
        arguments,
    );
    let Some(Action::Send(request)) = op.poll() else {
        panic!("a request first");
    };
    op.on_head(request.id, broken.status, &broken.headers);
    op.on_body(request.id, &broken.body);
    op.on_failed(request.id, "timed out after 300000 ms");
    let mut actions = Vec::new();
    while let Some(action) = op.poll() {
        actions.push(action);
    }
    assert_eq!(
        actions
            .iter()
            .filter(|a| matches!(a, Action::Progress { .. }))
            .count(),
        2
    );
    let Some(Action::Done(Err(McpError::Interrupted { reason, .. }))) = actions.last() else {
        panic!("{actions:?}");
    };
    assert_eq!(reason, "timed out after 300000 ms");
    assert!(!actions.iter().any(|a| matches!(a, Action::Send(_))));
}

#[test]
fn a_session_lost_again_after_initialize_is_an_error() {
    let run = run_whole(
        call(
            Era::Legacy,
            known(Era::Legacy),
            "echo",
            "call-6",
            json!({"message": "again"}),
        ),
        &recorded(&[
            "legacy-call-stale-session",
            "legacy-reinitialize",
            "legacy-reinitialized",
            "legacy-call-stale-session",
        ]),
    );
    assert_eq!(run.requests.len(), 4);
    assert!(matches!(failed(&run), McpError::SessionLost { .. }));
}

#[test]
fn the_current_revisions_own_errors_do_not_fall_back() {
    let run = run_whole(
        Operation::list_tools(&server(), ServerState::default(), Limits::default()),
        &recorded(&["modern-unsupported-version"]),
    );
    assert_eq!(
        run.requests.len(),
        1,
        "no initialize after a current-revision error"
    );
    assert!(matches!(
        failed(&run),
        McpError::UnsupportedVersion { offered, .. } if offered == &["2026-07-28"]
    ));
    assert_eq!(run.state.era(), None);

    // HeaderMismatch: the tool is listed again (the spec's advice), found unchanged, called
    // once more, refused again: the server's error, and no new probe.
    let mismatch = run_whole(
        call(
            Era::Modern,
            known(Era::Modern),
            "echo",
            "call-6",
            json!({"message": "hi"}),
        ),
        &[
            Response::recorded("modern-header-mismatch"),
            Response::recorded("modern-list").renumbered("weft-list#2", "call-6#2"),
            Response::recorded("modern-header-mismatch").renumbered("call-6#1", "call-6#3"),
        ],
    );
    let methods: Vec<&str> = mismatch.requests.iter().map(Sent::method).collect();
    assert_eq!(methods, ["tools/call", "tools/list", "tools/call"]);
    assert!(matches!(
        failed(&mismatch),
        McpError::Rpc { code: -32020, .. }
    ));
    assert_eq!(mismatch.state.era(), Some(Era::Modern));
}

#[test]
fn a_header_mismatch_relists_the_tool_and_calls_with_its_new_headers() {
    // The host's cached `regional` predates its `x-mcp-header`: the call goes without it.
    let current = tool(Era::Modern, "regional");
    let mut cached = serde_json::to_value(&current).expect("serializes");
    cached["input_schema"]["properties"]["region"] = json!({"type": "string"});
    cached
        .as_object_mut()
        .expect("object")
        .remove("header_params");
    let stale: Tool = serde_json::from_value(cached).expect("deserializes");
    let mut op = Operation::call_tool(
        &server(),
        known(Era::Modern),
        Limits::default(),
        &stale,
        "call-5",
        json!({"region": "us-west1", "query": "q"}),
    );
    let mut responses = vec![
        Response::recorded("modern-header-mismatch").renumbered("call-6#1", "call-5#1"),
        Response::recorded("modern-list").renumbered("weft-list#2", "call-5#2"),
        Response::recorded("modern-call-regional").renumbered("call-5#1", "call-5#3"),
    ]
    .into_iter();
    let mut sent = Vec::new();
    let outcome = loop {
        match op.poll() {
            Some(Action::Send(request)) => {
                let response = responses.next().expect("a response for each request");
                sent.push(request.clone());
                op.on_head(request.id, response.status, &response.headers);
                op.on_body(request.id, &response.body);
                op.on_end(request.id);
            }
            Some(Action::Done(outcome)) => break outcome,
            Some(Action::Progress { .. }) => {}
            None => panic!("waiting on nothing"),
        }
    };
    assert_eq!(sent[0].header("mcp-param-region"), None);
    assert_eq!(sent[2].header("mcp-param-region"), Some("us-west1"));
    assert!(
        matches!(&outcome, Ok(Outcome::Called(result)) if result.text == "q in us-west1"),
        "{outcome:?}"
    );
    assert_eq!(op.refreshed_tool(), Some(&current));
}

#[test]
fn a_remembered_era_that_stopped_working_is_probed_again() {
    // The server behind the URL now speaks 2025: its answer to a sessionless request.
    let run = run_whole(
        Operation::list_tools(&server(), known(Era::Modern), Limits::default()),
        &[
            Response::recorded("legacy-discover"),
            Response::recorded("legacy-discover"),
            Response::recorded("legacy-initialize").renumbered("weft-list#2", "weft-list#3"),
            Response::recorded("legacy-initialized"),
            Response::recorded("legacy-list").renumbered("weft-list#3", "weft-list#4"),
        ],
    );
    let methods: Vec<&str> = run.requests.iter().map(Sent::method).collect();
    assert_eq!(
        methods,
        [
            "tools/list",
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list"
        ]
    );
    assert_eq!(run.state.era(), Some(Era::Legacy));
    assert!(matches!(run.outcome, Some(Ok(Outcome::Tools(_)))));
}

#[test]
fn refused_credentials_are_reported_without_a_fallback_with_the_servers_challenge() {
    let mut unauthorized = Response::made(401, "application/json", r#"{"error":"invalid_token"}"#);
    let challenge = r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource""#;
    unauthorized
        .headers
        .push(("WWW-Authenticate".into(), challenge.into()));
    let run = run_whole(
        Operation::list_tools(&server(), ServerState::default(), Limits::default()),
        &[unauthorized.clone()],
    );
    assert_eq!(run.requests.len(), 1);
    let error = failed(&run);
    let McpError::Unauthorized {
        challenge: Some(got),
        ..
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!(got, challenge);
    assert!(error.to_string().contains("authorize"), "{error}");
    assert_eq!(run.state.era(), None, "nothing learned about the era");
    let forbidden = Response::made(403, "application/json", r#"{"error":"nope"}"#);
    let run = run_whole(
        Operation::list_tools(&server(), ServerState::default(), Limits::default()),
        &[forbidden],
    );
    assert!(matches!(failed(&run), McpError::Http { status: 403, .. }));

    // The host reads the challenge from the operation to start authorizing.
    let mut op = Operation::list_tools(&server(), ServerState::default(), Limits::default());
    let Some(Action::Send(request)) = op.poll() else {
        panic!("a request first");
    };
    assert_eq!(op.unauthorized(), None);
    op.on_head(request.id, 401, &unauthorized.headers);
    op.on_body(request.id, &unauthorized.body);
    op.on_end(request.id);
    assert!(matches!(op.poll(), Some(Action::Done(Err(_)))));
    assert_eq!(op.unauthorized(), Some(Some(challenge)));
}

#[test]
fn an_unreachable_server_is_reported() {
    let mut op = Operation::list_tools(&server(), ServerState::default(), Limits::default());
    let Some(Action::Send(request)) = op.poll() else {
        panic!("a request first");
    };
    op.on_failed(request.id, "connection refused");
    let Some(Action::Done(Err(error))) = op.poll() else {
        panic!("done");
    };
    assert_eq!(
        error,
        McpError::Unreachable {
            server: "everything".into(),
            reason: "connection refused".into()
        }
    );
    assert!(error.to_string().contains("could not be reached"));
    // Late calls about the request change nothing.
    op.on_head(request.id, 200, &[]);
    op.on_end(request.id);
    assert!(op.poll().is_none());
}

#[test]
fn a_body_past_the_limit_is_not_read() {
    let limits = Limits {
        max_response_bytes: 100,
        ..Limits::default()
    };
    let run = run_whole(
        Operation::list_tools(&server(), known(Era::Modern), limits),
        &recorded(&["modern-list"]),
    );
    assert!(matches!(
        failed(&run),
        McpError::TooLarge { limit: 100, .. }
    ));
}

#[test]
fn answers_that_are_not_mcp_are_malformed() {
    let html = Response::made(200, "text/html", "<html>login</html>");
    let run = run_whole(
        Operation::list_tools(&server(), known(Era::Modern), Limits::default()),
        &[html],
    );
    assert!(matches!(failed(&run), McpError::Malformed { .. }));

    let input_required = Response::made(
        200,
        "application/json",
        r#"{"jsonrpc":"2.0","id":"call-9#1","result":{"resultType":"input_required","inputRequests":{}}}"#,
    );
    let run = run_whole(
        call(
            Era::Modern,
            known(Era::Modern),
            "echo",
            "call-9",
            json!({"message": "x"}),
        ),
        &[input_required],
    );
    assert!(matches!(failed(&run), McpError::InputRequired { .. }));

    let unknown_tool = Response::made(
        200,
        "application/json",
        r#"{"jsonrpc":"2.0","id":"call-9#1","error":{"code":-32602,"message":"Unknown tool: nope"}}"#,
    );
    let run = run_whole(
        call(Era::Modern, known(Era::Modern), "echo", "call-9", json!({})),
        &[unknown_tool],
    );
    let error = failed(&run);
    assert!(matches!(error, McpError::Rpc { code: -32602, .. }));
    assert!(error.to_string().contains("Unknown tool: nope"));

    // An event stream whose answer is not JSON: the stream's garbage explains the failure.
    let mangled = Response::made(
        200,
        "text/event-stream",
        "id: 1\ndata: \n\nevent: message\ndata: {\"result\": oops\n\n",
    );
    let run = run_whole(
        Operation::list_tools(&server(), known(Era::Modern), Limits::default()),
        &[mangled],
    );
    let error = failed(&run);
    assert!(matches!(error, McpError::Malformed { detail, .. } if detail.contains("oops")));
}

#[test]
fn a_call_given_up_on_is_cancelled_in_the_2025_era_only() {
    let mut op = call(
        Era::Legacy,
        known(Era::Legacy),
        "echo",
        "call-8",
        json!({"message": "x"}),
    );
    let Some(Action::Send(request)) = op.poll() else {
        panic!("a request first");
    };
    let cancel = op.cancel("timed out").expect("a cancellation");
    assert!(!cancel.wants_response);
    assert_eq!(
        cancel.header("mcp-session-id"),
        request.header("mcp-session-id")
    );
    let body: Value = serde_json::from_str(cancel.body.as_deref().expect("a body")).expect("JSON");
    assert_eq!(
        body,
        json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": "call-8#1", "reason": "timed out"}
        })
    );
    assert!(op.poll().is_none());
    assert!(op.cancel("again").is_none());
    // Nothing that arrives later changes anything.
    let late = Response::recorded("legacy-call-echo");
    op.on_head(request.id, late.status, &late.headers);
    op.on_body(request.id, &late.body);
    op.on_end(request.id);
    assert!(op.poll().is_none());

    let mut modern = call(
        Era::Modern,
        known(Era::Modern),
        "echo",
        "call-8",
        json!({"message": "x"}),
    );
    assert!(matches!(modern.poll(), Some(Action::Send(_))));
    assert!(
        modern.cancel("timed out").is_none(),
        "closing the stream is enough"
    );
    assert!(modern.poll().is_none());
}
