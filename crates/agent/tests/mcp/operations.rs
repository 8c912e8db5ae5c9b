//! Whole operations that succeed, in both eras, on the recorded exchanges.

use super::*;

#[test]
fn a_current_server_is_probed_once_then_listed() {
    let run = run_whole(
        Operation::list_tools(&server(), ServerState::default(), Limits::default()),
        &recorded(&["modern-discover", "modern-list"]),
    );
    let methods: Vec<&str> = run.requests.iter().map(Sent::method).collect();
    assert_eq!(methods, ["server/discover", "tools/list"]);
    assert_eq!(run.state.era(), Some(Era::Modern));
    assert_eq!(run.state.protocol_version(), Some("2026-07-28"));
    let Some(Ok(Outcome::Tools(catalog))) = &run.outcome else {
        panic!("{:?}", run.outcome);
    };
    let names: Vec<&str> = catalog.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["echo", "fail", "math.add", "slow", "regional"]);
    assert!(!catalog.truncated);
    assert_eq!(catalog.ttl_ms, Some(0));
    assert!(catalog.rejected.is_empty());
    let echo = &catalog.tools[0];
    assert_eq!(echo.description, "Echoes the message");
    assert_eq!(echo.annotations.read_only_hint, Some(true));
    assert_eq!(echo.input_schema["required"], json!(["message"]));
    assert_eq!(catalog.tools[2].title.as_deref(), Some("Add"));

    // Known now: the next listing goes straight to tools/list.
    let again = run_whole(
        Operation::list_tools(&server(), run.state.clone(), Limits::default()),
        &[Response::recorded("modern-list").renumbered("weft-list#2", "weft-list#1")],
    );
    assert_eq!(again.requests.len(), 1);
    assert_eq!(again.requests[0].method(), "tools/list");
    assert_eq!(again.outcome, run.outcome);
}

#[test]
fn a_2025_server_is_detected_initialized_and_listed() {
    let run = run_whole(
        Operation::list_tools(&server(), ServerState::default(), Limits::default()),
        &recorded(&[
            "legacy-discover",
            "legacy-initialize",
            "legacy-initialized",
            "legacy-list",
        ]),
    );
    let methods: Vec<&str> = run.requests.iter().map(Sent::method).collect();
    assert_eq!(
        methods,
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list"
        ]
    );
    let session = Response::recorded("legacy-initialize")
        .header("mcp-session-id")
        .expect("server-everything assigns a session")
        .to_string();
    // The handshake's own requests carry no session; everything after it does.
    assert_eq!(run.requests[1].header("mcp-session-id"), None);
    assert_eq!(
        run.requests[2].header("mcp-session-id"),
        Some(session.as_str())
    );
    assert_eq!(
        run.requests[3].header("mcp-session-id"),
        Some(session.as_str())
    );
    assert_eq!(
        run.requests[3].header("mcp-protocol-version"),
        Some("2025-11-25")
    );
    assert_eq!(run.state.era(), Some(Era::Legacy));
    assert!(run.state.has_session());
    let Some(Ok(Outcome::Tools(catalog))) = &run.outcome else {
        panic!("{:?}", run.outcome);
    };
    assert!(catalog.tools.iter().any(|t| t.name == "get-sum"));
    assert!(catalog
        .tools
        .iter()
        .any(|t| t.name == "trigger-long-running-operation"));
    let echo = catalog
        .tools
        .iter()
        .find(|t| t.name == "echo")
        .expect("echo");
    assert_eq!(echo.title.as_deref(), Some("Echo Tool"));
    assert_eq!(echo.annotations.destructive_hint, Some(false));

    // A woken host with the persisted state calls at once: no probe, no handshake.
    let call = run_whole(
        call(
            Era::Legacy,
            run.state.clone(),
            "echo",
            "call-1",
            json!({"message": "hi"}),
        ),
        &recorded(&["legacy-call-echo"]),
    );
    assert_eq!(call.requests.len(), 1);
    assert_eq!(called(&call).text, "Echo: hi");
}

#[test]
fn current_era_calls_read_text_errors_structure_and_progress() {
    let state = known(Era::Modern);
    let echo = run_whole(
        call(
            Era::Modern,
            state.clone(),
            "echo",
            "call-1",
            json!({"message": "hi"}),
        ),
        &recorded(&["modern-call-echo"]),
    );
    assert_eq!(
        called(&echo),
        &ToolResult {
            text: "Echo: hi".into(),
            is_error: false
        }
    );

    let fail = run_whole(
        call(Era::Modern, state.clone(), "fail", "call-2", json!({})),
        &recorded(&["modern-call-fail"]),
    );
    assert_eq!(
        called(&fail),
        &ToolResult {
            text: "the tool failed on purpose".into(),
            is_error: true
        }
    );

    let add = run_whole(
        call(
            Era::Modern,
            state.clone(),
            "math.add",
            "call-3",
            json!({"a": 2, "b": 3}),
        ),
        &recorded(&["modern-call-add"]),
    );
    // The text block repeats the structured content; the model reads it once.
    assert_eq!(called(&add).text, r#"{"sum":5}"#);

    let slow = run_whole(
        call(
            Era::Modern,
            state.clone(),
            "slow",
            "call-4",
            json!({"steps": 3}),
        ),
        &recorded(&["modern-call-slow"]),
    );
    assert_eq!(called(&slow).text, "done after 3 steps");
    assert_eq!(
        slow.progress,
        [
            (1.0, Some(3.0), Some("step 1".into())),
            (2.0, Some(3.0), Some("step 2".into())),
            (3.0, Some(3.0), Some("step 3".into())),
        ]
    );

    let regional = run_whole(
        call(
            Era::Modern,
            state,
            "regional",
            "call-5",
            json!({"region": "us-west1", "query": "q"}),
        ),
        &recorded(&["modern-call-regional"]),
    );
    assert_eq!(called(&regional).text, "q in us-west1");
    assert_eq!(
        regional.requests[0].header("mcp-param-region"),
        Some("us-west1")
    );
}

#[test]
fn legacy_calls_read_progress_validation_errors_images_and_structure() {
    let state = known(Era::Legacy);
    let progress = run_whole(
        call(
            Era::Legacy,
            state.clone(),
            "trigger-long-running-operation",
            "call-2",
            json!({"duration": 0.3, "steps": 3}),
        ),
        &recorded(&["legacy-call-progress"]),
    );
    assert!(called(&progress)
        .text
        .starts_with("Long running operation completed."));
    assert_eq!(
        progress.progress,
        [
            (1.0, Some(3.0), None),
            (2.0, Some(3.0), None),
            (3.0, Some(3.0), None)
        ]
    );

    let bad = run_whole(
        call(
            Era::Legacy,
            state.clone(),
            "get-sum",
            "call-3",
            json!({"a": "one"}),
        ),
        &recorded(&["legacy-call-bad-arguments"]),
    );
    assert!(called(&bad).is_error);
    assert!(called(&bad).text.contains("Input validation error"));

    let image = run_whole(
        call(
            Era::Legacy,
            state.clone(),
            "get-tiny-image",
            "call-4",
            json!({}),
        ),
        &recorded(&["legacy-call-image"]),
    );
    let text = &called(&image).text;
    assert!(
        text.starts_with("Here's the image you requested:\n[image: image/png, "),
        "{text}"
    );
    assert!(!text.contains("iVBOR"), "no base64 for the model: {text}");

    let structured = run_whole(
        call(
            Era::Legacy,
            state,
            "get-structured-content",
            "call-5",
            json!({"location": "New York"}),
        ),
        &recorded(&["legacy-call-structured"]),
    );
    let text = &called(&structured).text;
    let parsed: Value = serde_json::from_str(text).expect("structured content as JSON");
    assert_eq!(parsed["conditions"], "Cloudy");
}

#[test]
fn a_ping_from_the_server_is_answered_beside_the_stream() {
    let state = known(Era::Legacy);
    let run = run_whole(
        call(
            Era::Legacy,
            state,
            "echo",
            "call-1",
            json!({"message": "hi"}),
        ),
        &recorded(&["legacy-call-ping"]),
    );
    assert_eq!(called(&run).text, "Echo: hi");
    assert_eq!(run.side.len(), 1);
    let pong = &run.side[0];
    assert_eq!(pong.body, json!({"jsonrpc": "2.0", "id": 7, "result": {}}));
    assert_eq!(
        pong.header("mcp-session-id"),
        run.requests[0].header("mcp-session-id")
    );
    assert!(pong.header("mcp-session-id").is_some());
}

#[test]
fn a_server_request_weft_does_not_serve_is_refused() {
    let state = known(Era::Legacy);
    // The recording's session declared sampling so the server would offer the tool; weft's
    // catalog does not have it, so the tool is described by hand with the recorded name.
    let mut tool = tool(Era::Legacy, "echo");
    tool.name = "trigger-sampling-request".into();
    let op = Operation::call_tool(
        &server(),
        state,
        Limits::default(),
        &tool,
        "call-7",
        json!({"prompt": "hi", "maxTokens": 5}),
    );
    let run = run_whole(op, &recorded(&["legacy-call-sampling"]));
    assert_eq!(run.side.len(), 1);
    let refusal = &run.side[0].body;
    assert_eq!(refusal["id"], 0);
    assert_eq!(refusal["error"]["code"], -32601);
    assert!(refusal["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("sampling/createMessage")));
    // The server then reports the refusal as the tool's error, which the model sees.
    assert!(called(&run).is_error);
    assert!(called(&run).text.contains("weft does not serve"));
}

#[test]
fn a_forgotten_session_is_initialized_again_and_the_call_retried() {
    let mut state = known(Era::Legacy);
    // The server forgot every session (server-everything answers an unknown one with 400).
    let stale = run_whole(
        call(
            Era::Legacy,
            state.clone(),
            "echo",
            "call-6",
            json!({"message": "again"}),
        ),
        &recorded(&[
            "legacy-call-stale-session",
            "legacy-reinitialize",
            "legacy-reinitialized",
            "legacy-call-retried",
        ]),
    );
    let methods: Vec<&str> = stale.requests.iter().map(Sent::method).collect();
    assert_eq!(
        methods,
        [
            "tools/call",
            "initialize",
            "notifications/initialized",
            "tools/call"
        ]
    );
    let fresh = Response::recorded("legacy-reinitialize")
        .header("mcp-session-id")
        .expect("a new session")
        .to_string();
    assert_eq!(
        stale.requests[3].header("mcp-session-id"),
        Some(fresh.as_str())
    );
    assert_eq!(stale.requests[1].header("mcp-session-id"), None);
    assert_eq!(called(&stale).text, "Echo: again");
    state = stale.state.clone();
    assert!(state.has_session());

    // 404 is what the spec says a server answers; the same recovery follows.
    let not_found = Response::made(404, "text/plain", "Not Found");
    let mut responses = vec![not_found];
    responses.extend(recorded(&[
        "legacy-reinitialize",
        "legacy-reinitialized",
        "legacy-call-retried",
    ]));
    let run = run_whole(
        call(
            Era::Legacy,
            known(Era::Legacy),
            "echo",
            "call-6",
            json!({"message": "again"}),
        ),
        &responses,
    );
    assert_eq!(called(&run).text, "Echo: again");
}

#[test]
fn pages_are_followed_within_the_caps() {
    let state = known(Era::Modern);
    let recorded_list = Response::recorded("modern-list");
    let list: Value = serde_json::from_slice(&recorded_list.body).expect("JSON");
    let tools = list["result"]["tools"].as_array().expect("tools").clone();
    // The recorded tools served two per page, as a paginating server would.
    let pages: Vec<Response> = tools
        .chunks(2)
        .enumerate()
        .map(|(i, chunk)| {
            let mut result = json!({"tools": chunk, "resultType": "complete"});
            if (i + 1) * 2 < tools.len() {
                result["nextCursor"] = json!(format!("page-{}", i + 1));
            }
            let body =
                json!({"jsonrpc": "2.0", "id": format!("weft-list#{}", i + 1), "result": result});
            Response::made(200, "application/json", &body.to_string())
        })
        .collect();

    let all = run_whole(
        Operation::list_tools(&server(), state.clone(), Limits::default()),
        &pages,
    );
    let cursors: Vec<Value> = all
        .requests
        .iter()
        .map(|r| r.body["params"]["cursor"].clone())
        .collect();
    assert_eq!(cursors, [Value::Null, json!("page-1"), json!("page-2")]);
    let Some(Ok(Outcome::Tools(catalog))) = &all.outcome else {
        panic!("{:?}", all.outcome);
    };
    assert_eq!(catalog.tools.len(), 5);
    assert!(!catalog.truncated);

    let two_pages = Limits {
        max_pages: 2,
        ..Limits::default()
    };
    let capped = run_whole(
        Operation::list_tools(&server(), state.clone(), two_pages),
        &pages,
    );
    assert_eq!(capped.requests.len(), 2);
    let Some(Ok(Outcome::Tools(catalog))) = &capped.outcome else {
        panic!("{:?}", capped.outcome);
    };
    assert_eq!(catalog.tools.len(), 4);
    assert!(catalog.truncated);

    let three_tools = Limits {
        max_tools: 3,
        ..Limits::default()
    };
    let capped = run_whole(Operation::list_tools(&server(), state, three_tools), &pages);
    let Some(Ok(Outcome::Tools(catalog))) = &capped.outcome else {
        panic!("{:?}", capped.outcome);
    };
    assert_eq!(catalog.tools.len(), 3);
    assert!(catalog.truncated);
    assert_eq!(capped.requests.len(), 2, "no page after the cap is reached");
}
