//! An AG-UI agent over HTTP (`connection/http.rs`), natively: the requests the core asks the
//! shell to POST, and what it makes of responses recorded from ag-ui-langgraph
//! (weft-protocol's `tests/fixtures/agui-langgraph/`). The live agent is driven from Node
//! (tests/agui/langgraph/langgraph.test.mjs).

use super::*;

const AGENT: &str = "http://127.0.0.1:9/agent";

macro_rules! recorded {
    ($name:literal) => {
        include_bytes!(concat!(
            "../../../../protocol/tests/fixtures/agui-langgraph/",
            $name,
            ".sse"
        ))
    };
}

fn http_client() -> Connection {
    let mut c = Connection::new(Config {
        agui_http: agui_over_http(Dialect::Agui, AGENT),
        ..config(Dialect::Agui)
    });
    c.connect();
    c
}

fn posts(out: &[Output]) -> Vec<Value> {
    out.iter()
        .filter_map(|o| match o {
            Output::Post { url, body } => {
                assert_eq!(url, AGENT);
                Some(serde_json::from_str(body).unwrap())
            }
            _ => None,
        })
        .collect()
}

/// The response, in pieces, then its end.
fn respond(c: &mut Connection, body: &[u8]) -> Vec<Output> {
    for piece in body.chunks(64) {
        c.http_chunk(piece);
    }
    c.http_end();
    drain(c)
}

#[test]
fn only_agui_with_an_http_url_goes_over_http() {
    assert_eq!(
        agui_over_http(Dialect::Agui, "HTTPS://a/b#x").as_deref(),
        Some("HTTPS://a/b")
    );
    assert_eq!(agui_over_http(Dialect::Agui, "wss://a/b"), None);
    assert_eq!(agui_over_http(Dialect::Loom, "http://a/b"), None);
}

#[test]
fn connect_opens_nothing_and_a_run_is_a_post() {
    let mut c = http_client();
    let out = drain(&mut c);
    assert!(out.iter().any(|o| matches!(o, Output::Connected)));
    assert!(!out.iter().any(|o| matches!(o, Output::Open { .. })));
    let run = c.run(opts("count to 3"), "r1".into(), 0.0).unwrap();
    let out = drain(&mut c);
    let input = &posts(&out)[0];
    assert_eq!(input["threadId"], "sess-1");
    assert_eq!(input["runId"], "r1");
    assert_eq!(input["messages"][0]["content"], "count to 3");
    // One run at a time over HTTP.
    let busy = c.run(opts("again"), "r2".into(), 0.0).unwrap_err();
    assert_eq!(busy.code(), "busy");

    let out = respond(&mut c, recorded!("text"));
    assert_eq!(texts(&out), "1 2 3");
    let result = done(&out);
    assert_eq!(result.len(), 1);
    assert_eq!(result[0].as_ref().unwrap().reply, "1 2 3");
    assert!(handles(&out).contains(&Some(run)));
    // The run ended at RUN_FINISHED: the rest of the body is not waited for.
    assert!(out.iter().any(|o| matches!(o, Output::Abort)));
    // weft's own requests are not an AG-UI agent's.
    assert_eq!(c.ping(0.0).unwrap_err().code(), "unsupported");
}

#[test]
fn an_interrupt_is_asked_and_its_answer_is_the_next_inputs_resume() {
    let mut c = http_client();
    drain(&mut c);
    c.run(opts("write hello to notes.txt"), "r1".into(), 0.0)
        .unwrap();
    drain(&mut c);
    let out = respond(&mut c, recorded!("interrupt-1"));
    let asked: Vec<&ApprovalRequest> = out
        .iter()
        .filter_map(|o| match o {
            Output::Approval(a) => Some(a),
            _ => None,
        })
        .collect();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].name, "write");
    assert!(done(&out).is_empty(), "the run waits for the answer");
    assert!(posts(&out).is_empty());

    let answer = ApprovalAnswer {
        review: "no-continue".into(),
        message: None,
    };
    c.answer(asked[0].call_id.clone(), answer, 0.0).unwrap();
    let out = drain(&mut c);
    let input = &posts(&out)[0];
    assert_eq!(input["resume"][0]["status"], "resolved");
    assert_eq!(input["resume"][0]["payload"]["approved"], false);
    let out = respond(&mut c, recorded!("interrupt-2-denied"));
    let result = done(&out);
    assert_eq!(
        result[0].as_ref().unwrap().reply,
        "Understood: writing notes.txt was denied, so I left it unchanged."
    );
    assert_eq!(c.transcript().runs.len(), 1);
}

#[test]
fn a_frontend_tool_is_run_here_and_its_result_is_the_next_inputs_tool_message() {
    let mut c = http_client();
    drain(&mut c);
    c.set_tools(vec![ToolSpec {
        name: "pick_color".into(),
        description: Some("Ask the page for a colour".into()),
        input_schema: RawJson::parse(
            r#"{"type":"object","properties":{"hint":{"type":"string"}}}"#,
        )
        .unwrap(),
        read_only: true,
    }]);
    c.run(
        opts("use pick_color with {\"hint\":\"sky\"}"),
        "r1".into(),
        0.0,
    )
    .unwrap();
    let input = &posts(&drain(&mut c))[0];
    assert_eq!(input["tools"][0]["name"], "pick_color");
    let out = respond(&mut c, recorded!("frontend-1"));
    let calls: Vec<(&String, &String)> = out
        .iter()
        .filter_map(|o| match o {
            Output::ClientTool { call_id, name, .. } => Some((call_id, name)),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].1, "pick_color");
    let call_id = calls[0].0.clone();
    c.tool_result(call_id.clone(), "blue".into(), false)
        .unwrap();
    let input = &posts(&drain(&mut c))[0];
    let last = input["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["toolCallId"], json!(call_id));
    let out = respond(&mut c, recorded!("frontend-2"));
    assert_eq!(
        done(&out)[0].as_ref().unwrap().reply,
        "The pick_color tool returned: blue."
    );
}

#[test]
fn a_response_that_breaks_off_fails_the_run_and_cancel_aborts() {
    let mut c = http_client();
    drain(&mut c);
    c.run(opts("what time is it"), "r1".into(), 0.0).unwrap();
    drain(&mut c);
    let body = recorded!("tool");
    c.http_chunk(&body[..2300]);
    c.http_failed("the agent's response broke off: terminated".into());
    let out = drain(&mut c);
    let err = done(&out)[0].as_ref().unwrap_err();
    assert_eq!(err.code(), "disconnected");
    assert!(err.message().contains("broke off"));
    let t = c.transcript();
    assert_eq!(t.runs[0].status, RunStatus::Failed);
    assert!(t.messages.iter().all(|m| m.complete));

    let run = c.run(opts("count to 3"), "r2".into(), 0.0).unwrap();
    drain(&mut c);
    c.cancel(run, 0.0).unwrap();
    let out = drain(&mut c);
    assert!(out.iter().any(|o| matches!(o, Output::Abort)));
    assert_eq!(done(&out)[0].as_ref().unwrap_err().code(), "cancelled");
}
