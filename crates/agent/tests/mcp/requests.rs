//! The requests the codec builds, in each era, against the specification's shapes.

use super::*;

fn first_request(op: &mut Operation) -> HttpRequest {
    match op.poll() {
        Some(Action::Send(request)) => request,
        other => panic!("a request first: {other:?}"),
    }
}

#[test]
fn current_era_requests_carry_meta_and_mirror_it_in_headers() {
    let state = known(Era::Modern);
    let regional = tool(Era::Modern, "regional");
    let mut op = Operation::call_tool(
        &server(),
        state,
        Limits::default(),
        &regional,
        "call-9",
        json!({"region": "Zürich", "query": "q"}),
    );
    let request = first_request(&mut op);
    assert_eq!(request.method, "POST");
    assert_eq!(request.url, "http://127.0.0.1:37611/mcp");
    assert!(request.wants_response);
    assert_eq!(request.header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(request.header("mcp-method"), Some("tools/call"));
    assert_eq!(request.header("mcp-name"), Some("regional"));
    // Not plain ASCII: the spec's base64 form.
    assert_eq!(
        request.header("mcp-param-region"),
        Some("=?base64?WsO8cmljaA==?=")
    );
    assert_eq!(
        request.header("accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.header("authorization"), Some("Bearer secret-token"));
    assert_eq!(request.header("mcp-session-id"), None);
    let body: Value = serde_json::from_str(request.body.as_deref().expect("a body")).expect("JSON");
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["id"], "call-9#1");
    assert_eq!(body["method"], "tools/call");
    assert_eq!(body["params"]["name"], "regional");
    assert_eq!(body["params"]["arguments"]["region"], "Zürich");
    let meta = &body["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({})
    );
    assert_eq!(meta["io.modelcontextprotocol/clientInfo"]["name"], "weft");
    assert_eq!(meta["progressToken"], "call-9");

    // A name outside the header alphabet is encoded too; a missing argument sends no header.
    let mut odd = regional;
    odd.name = "météo".into();
    let mut op = Operation::call_tool(
        &server(),
        known(Era::Modern),
        Limits::default(),
        &odd,
        "call-10",
        json!({"query": "q"}),
    );
    let request = first_request(&mut op);
    assert_eq!(request.header("mcp-name"), Some("=?base64?bcOpdMOpbw==?="));
    assert_eq!(request.header("mcp-param-region"), None);
}

#[test]
fn the_probe_is_server_discover_in_the_current_shape() {
    let mut op = Operation::list_tools(&server(), ServerState::default(), Limits::default());
    let request = first_request(&mut op);
    assert_eq!(request.header("mcp-method"), Some("server/discover"));
    assert_eq!(request.header("mcp-name"), None);
    let body: Value = serde_json::from_str(request.body.as_deref().expect("a body")).expect("JSON");
    assert_eq!(body["method"], "server/discover");
    assert_eq!(
        body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
}

#[test]
fn legacy_requests_carry_the_session_and_the_negotiated_version() {
    let run = run_whole(
        Operation::list_tools(&server(), ServerState::default(), Limits::default()),
        &recorded(&[
            "legacy-discover",
            "legacy-initialize",
            "legacy-initialized",
            "legacy-list",
        ]),
    );
    let initialize = &run.requests[1];
    assert_eq!(initialize.body["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(initialize.body["params"]["capabilities"], json!({}));
    assert_eq!(initialize.body["params"]["clientInfo"]["name"], "weft");
    assert_eq!(initialize.header("mcp-protocol-version"), None);
    let initialized = &run.requests[2];
    assert_eq!(
        initialized.body,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    );
    let list = &run.requests[3];
    assert_eq!(list.header("mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(
        list.header("mcp-method"),
        None,
        "no current-revision headers"
    );
    assert!(
        list.body["params"].get("_meta").is_none(),
        "no current-revision _meta"
    );
    assert_eq!(list.header("authorization"), Some("Bearer secret-token"));
}

#[test]
fn configured_headers_cannot_replace_the_protocols_and_are_never_printed() {
    let mut config = server();
    config.headers.push(("Accept".into(), "text/html".into()));
    config
        .headers
        .push(("mcp-session-id".into(), "stolen".into()));
    let mut op = Operation::list_tools(&config, known(Era::Legacy), Limits::default());
    let request = first_request(&mut op);
    let accepts: Vec<&str> = request
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("accept"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(accepts, ["application/json, text/event-stream"]);
    assert_ne!(request.header("mcp-session-id"), Some("stolen"));
    let printed = format!("{request:?} {config:?}");
    assert!(!printed.contains("secret-token"), "{printed}");
    let session = known(Era::Legacy);
    assert!(!format!("{op:?}").contains("secret-token"));
    assert!(session.has_session());
}
