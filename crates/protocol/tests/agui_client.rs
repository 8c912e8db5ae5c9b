//! weft as a client of an AG-UI backend it did not write: streams recorded from ag-ui-langgraph
//! serving tests/agui/langgraph/agent.py (its model the scripted LLM) — `fixtures/agui-langgraph/`,
//! one file per AG-UI run — read by [`Thread`] in pieces cut anywhere, into a reassembler. The
//! live server is driven by the Node suite in tests/agui/langgraph/.

use serde_json::{json, Value};
use weft_protocol::dialect::agui::{Answer, RunAgentInput, SseReader, Thread, Tool, Turn};
use weft_protocol::reassembler::{RunStatus, ToolStatus};
use weft_protocol::{Dialect, Event, Reassembler, Sequenced};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/agui-langgraph/{name}.sse",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

struct Client {
    thread: Thread,
    r: Reassembler,
}

impl Client {
    fn new(thread: &str) -> Self {
        Client {
            thread: Thread::new(thread),
            r: Reassembler::new(Dialect::Loom),
        }
    }

    fn apply(&mut self, events: Vec<Sequenced>) {
        for e in events {
            assert!(self.r.push_event(e).rejected.is_none());
        }
    }

    /// Begins an AG-UI run: its input, as sent.
    fn begin(&mut self, run_id: &str, turn: Turn) -> Value {
        let (body, local) = self.thread.begin(run_id, turn).unwrap();
        self.apply(local);
        let sent: Value = serde_json::from_str(&body).unwrap();
        // Written by the crate's own writer: what serde's derive would write of the same input.
        let input: RunAgentInput = serde_json::from_str(&body).unwrap();
        assert_eq!(serde_json::to_value(&input).unwrap(), sent);
        sent
    }

    /// Feeds a recorded response in pieces of `step` bytes; then the end of the body.
    fn stream(&mut self, name: &str, step: usize) {
        for piece in fixture(name).chunks(step) {
            let events = self.thread.push(piece).unwrap();
            self.apply(events);
        }
        let end = self.thread.finish();
        assert!(end.is_empty(), "{name} finished its run: {end:?}");
    }
}

fn say(text: &str) -> Turn {
    Turn {
        message: Some(text.into()),
        ..Turn::default()
    }
}

fn pick_color() -> Tool {
    Tool {
        name: "pick_color".into(),
        description: "Ask the page for a colour".into(),
        parameters: Some(json!({"type": "object", "properties": {"hint": {"type": "string"}}})),
    }
}

#[test]
fn sse_events_are_read_across_any_cut() {
    let text =
        b"data: {\"a\":1}\r\n\r\n: a comment\nevent: x\ndata: one\ndata: two\n\ndata:three\n\n";
    for step in 1..text.len() {
        let mut r = SseReader::new();
        let mut got = Vec::new();
        for piece in text.chunks(step) {
            got.extend(r.push(piece).unwrap());
        }
        assert_eq!(got, ["{\"a\":1}", "one\ntwo", "three"]);
        assert!(!r.is_mid_event());
    }
    let mut r = SseReader::new();
    assert!(r.push(b"data: {\"cut").unwrap().is_empty());
    assert!(r.is_mid_event());
    assert!(SseReader::new().push(b"data: \xff\n\n").is_err());
}

#[test]
fn a_text_run() {
    for step in [1, 7, 4096] {
        let mut c = Client::new("thread-text");
        let input = c.begin("r1", say("count to 3"));
        assert_eq!(input["threadId"], "thread-text");
        assert_eq!(input["runId"], "r1");
        assert_eq!(
            input["messages"],
            json!([{"id": "r1-user", "role": "user", "content": "count to 3"}])
        );
        assert_eq!(input["state"], json!({}));
        assert!(input.get("resume").is_none());
        c.stream("text", step);

        let t = c.r.transcript();
        assert_eq!(t.runs.len(), 1);
        assert_eq!(t.runs[0].run_id.as_deref(), Some("r1"));
        assert_eq!(t.runs[0].status, RunStatus::Completed);
        assert_eq!(t.runs[0].reply.as_deref(), Some("1 2 3"));
        let texts: Vec<&str> = t.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["count to 3", "1 2 3"]);
        // The graph's state, as its last STATE_SNAPSHOT had it.
        let state = t.runs[0].state.as_ref().unwrap().to_value();
        assert_eq!(state["messages"].as_array().unwrap().len(), 2);
        assert_eq!(c.thread.run_id(), None);

        // The next input carries the history the server's MESSAGES_SNAPSHOT gave, and the state.
        let next = c.begin("r2", say("again"));
        let roles: Vec<&str> = next["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["user", "assistant", "user"]);
        assert_eq!(next["messages"][1]["content"], "1 2 3");
        assert_eq!(next["state"], state);
    }
}

#[test]
fn a_server_tool() {
    let mut c = Client::new("thread-tool");
    c.begin("r1", say("what time is it"));
    c.stream("tool", 5);
    let t = c.r.transcript();
    assert_eq!(t.tool_calls.len(), 1);
    let call = &t.tool_calls[0];
    assert_eq!(call.name, "get_time");
    assert_eq!(
        call.arguments.as_ref().unwrap().to_value(),
        json!({"timezone": "UTC"})
    );
    assert_eq!(call.status, ToolStatus::Done);
    assert_eq!(call.result.as_deref(), Some("2026-01-01T12:00:00Z (UTC)"));
    assert_eq!(
        t.runs[0].reply.as_deref(),
        Some("It is 2026-01-01T12:00:00Z (UTC).")
    );
}

#[test]
fn an_interrupt_is_an_approval_answered_by_resume_in_the_same_run() {
    let mut c = Client::new("thread-interrupt");
    c.begin("r1", say("write hello to notes.txt"));
    c.stream("interrupt-1", 11);
    let t = c.r.transcript();
    assert_eq!(
        t.runs[0].status,
        RunStatus::Running,
        "an interrupt is not the end of the run"
    );
    let call = t.tool_calls[0].clone();
    assert_eq!(call.name, "write");
    assert_eq!(call.status, ToolStatus::AwaitingApproval);
    assert_eq!(c.thread.run_id(), Some("r1"));

    // What cannot be sent now: an answer nobody asked for, a new message.
    let before = c.thread.messages().to_vec();
    let stray = Turn {
        answers: vec![Answer {
            call_id: "nope".into(),
            approved: true,
            message: None,
        }],
        ..Turn::default()
    };
    assert_eq!(
        c.thread.begin("x", stray).unwrap_err().code(),
        "invalid_request"
    );
    assert_eq!(
        c.thread.begin("x", say("hi")).unwrap_err().code(),
        "invalid_request"
    );
    assert_eq!(c.thread.messages(), &before[..]);

    let answer = Turn {
        answers: vec![Answer {
            call_id: call.call_id.clone(),
            approved: false,
            message: Some("not now".into()),
        }],
        ..Turn::default()
    };
    let input = c.begin("ignored", answer);
    let resume = input["resume"].as_array().unwrap();
    assert_eq!(resume.len(), 1);
    assert_ne!(
        resume[0]["interruptId"],
        json!(call.call_id),
        "the interrupt's own id"
    );
    assert_eq!(resume[0]["status"], "resolved");
    assert_eq!(
        resume[0]["payload"],
        json!({"approved": false, "message": "not now"})
    );
    assert_ne!(input["runId"], "r1", "each AG-UI run has its own id");

    // ag-ui-langgraph streams the call again before its result: one call, denied, one run.
    c.stream("interrupt-2-denied", 13);
    let t = c.r.transcript();
    assert_eq!(t.runs.len(), 1);
    assert_eq!(t.runs[0].status, RunStatus::Completed);
    assert_eq!(
        t.runs[0].reply.as_deref(),
        Some("Understood: writing notes.txt was denied, so I left it unchanged.")
    );
    assert_eq!(t.tool_calls.len(), 1);
    assert_eq!(t.tool_calls[0].status, ToolStatus::Denied);
    assert_eq!(t.tool_calls[0].arguments_text, call.arguments_text);
    assert_eq!(
        t.tool_calls[0].result.as_deref(),
        Some("denied: the user did not approve writing notes.txt")
    );
    assert_eq!(c.thread.run_id(), None);
}

#[test]
fn a_frontend_tool_ends_the_agui_run_not_the_client_run() {
    let mut c = Client::new("thread-frontend");
    let turn = Turn {
        tools: vec![pick_color()],
        ..say("use pick_color with {\"hint\":\"sky\"}")
    };
    let input = c.begin("r1", turn);
    assert_eq!(input["tools"][0]["name"], "pick_color");
    c.stream("frontend-1", 9);
    let waiting = c.thread.waiting_calls();
    assert_eq!(waiting.len(), 1);
    let (call_id, name, args) = &waiting[0];
    assert_eq!(name, "pick_color");
    assert_eq!(args.to_value(), json!({"hint": "sky"}));
    assert_eq!(c.r.transcript().runs[0].status, RunStatus::Running);

    let input = c.begin(
        "ignored",
        Turn {
            tools: vec![pick_color()],
            tool_results: vec![(call_id.clone(), "blue".into())],
            ..Turn::default()
        },
    );
    let last = input["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "tool");
    assert_eq!(last["toolCallId"], json!(call_id));
    assert_eq!(last["content"], "blue");
    c.stream("frontend-2", 17);
    let t = c.r.transcript();
    assert_eq!(t.runs.len(), 1);
    assert_eq!(
        t.runs[0].reply.as_deref(),
        Some("The pick_color tool returned: blue.")
    );
    assert!(c.thread.waiting_calls().is_empty());
}

#[test]
fn a_stream_cut_mid_run_fails_the_run_and_leaves_the_history_as_sent() {
    let bytes = fixture("tool");
    // Before anything, in the first event, mid-tool call, in the middle of the reply's text,
    // after the reply but before RUN_FINISHED.
    let text = |needle: &[u8]| {
        bytes
            .windows(needle.len())
            .position(|w| w == needle)
            .unwrap()
    };
    let mid_reply = text(b"TEXT_MESSAGE_CONTENT") + 200;
    assert!(mid_reply < text(b"TEXT_MESSAGE_END"));
    let cuts = [0, 40, bytes.len() / 2, mid_reply, bytes.len() - 3];
    for (i, cut) in cuts.into_iter().enumerate() {
        let mut c = Client::new("thread-tool");
        c.begin("r1", say("what time is it"));
        let sent = c.thread.messages().to_vec();
        let events = c.thread.push(&bytes[..cut]).unwrap();
        c.apply(events);
        // What a client shows of a reply cut short: nothing kept as if it were whole.
        c.r.discard_partial("r1");
        let t = c.r.transcript();
        // A message finished before the cut stays (the tool call's; the reply once its step
        // ended); one cut in the middle goes.
        assert!(t.messages.iter().all(|m| m.complete), "{:?}", t.messages);
        assert!(t
            .messages
            .iter()
            .all(|m| m.role == weft_protocol::Role::User
                || m.text.is_empty()
                || m.text == "It is 2026-01-01T12:00:00Z (UTC)."));
        assert!(t
            .tool_calls
            .iter()
            .all(|call| call.status != ToolStatus::Streaming));
        // The error's code is the caller's when it names one (a weft session: `stream_cut`).
        let (end, said) = if i % 2 == 0 {
            (c.thread.finish(), "disconnected")
        } else {
            (c.thread.finish_with("stream_cut"), "stream_cut")
        };
        assert_eq!(end.len(), 1);
        assert!(matches!(&end[0].event, Event::Error { code: Some(code), .. } if code == said));
        c.apply(end);
        let run = &c.r.transcript().runs[0];
        assert_eq!(run.status, RunStatus::Failed);
        assert!(run.error.as_deref().unwrap().contains("event stream"));
        assert_eq!(
            c.thread.messages(),
            &sent[..],
            "nothing of the cut reply in the history"
        );
        assert_eq!(c.thread.run_id(), None);
        // A new run may start.
        c.begin("r2", say("again"));
    }
}

#[test]
fn a_run_waiting_for_the_page_can_be_ended_here() {
    let mut c = Client::new("thread-interrupt");
    c.begin("r1", say("write hello to notes.txt"));
    c.stream("interrupt-1", 4096);
    let end = c.thread.fail("cancelled", "the run was cancelled");
    c.apply(end);
    assert_eq!(c.r.transcript().runs[0].status, RunStatus::Cancelled);
    assert_eq!(c.thread.run_id(), None);
    assert!(c.thread.fail("cancelled", "again").is_empty());
    c.begin("r2", say("hi"));
}

#[test]
fn a_malformed_event_is_an_error() {
    let mut c = Client::new("t");
    c.begin("r1", say("hi"));
    assert!(c
        .thread
        .push(b"data: {\"type\":\"TEXT_MESSAGE_CONTENT\"}\n\n")
        .is_err());
    assert!(c.thread.push(b"data: not json\n\n").is_err());
}

#[test]
fn a_thread_kept_elsewhere_sends_its_conversation_before_the_message_and_its_state() {
    let before = serde_json::from_value(json!([
        {"id": "h-0", "role": "user", "content": "count to 2"},
        {"id": "h-1", "role": "assistant", "content": "1 2"}
    ]))
    .unwrap();
    let state = weft_protocol::json::RawJson::parse(r#"{"count":2}"#);
    let mut thread = Thread::with_history("session-1", before, state);
    let (body, _) = thread.begin("run-2", say("and now?")).unwrap();
    let input: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(input["threadId"], "session-1");
    assert_eq!(input["state"], json!({"count": 2}));
    let said: Vec<(&str, &str)> = input["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect();
    assert_eq!(
        said,
        [
            ("user", "count to 2"),
            ("assistant", "1 2"),
            ("user", "and now?")
        ]
    );
}

/// A thread waiting for the page, written out and read back (a host restarted meanwhile), goes
/// on exactly as the one it was written from: the same input, the same events.
#[test]
fn a_snapshot_of_a_waiting_thread_goes_on_as_the_thread() {
    let mut c = Client::new("thread-interrupt");
    c.begin("r1", say("write hello to notes.txt"));
    assert_eq!(
        c.thread.to_snapshot(),
        None,
        "not while its response streams"
    );
    c.stream("interrupt-1", 11);
    let text = c.thread.to_snapshot().expect("a run waiting for the page");
    let mut back = Thread::from_snapshot(&text).unwrap();
    assert_eq!(back.to_snapshot().as_deref(), Some(text.as_str()));
    assert_eq!(back.run_id(), Some("r1"));
    assert_eq!(back.messages(), c.thread.messages());
    let call = c.r.transcript().tool_calls[0].call_id.clone();
    let answer = || Turn {
        answers: vec![Answer {
            call_id: call.clone(),
            approved: false,
            message: Some("not now".into()),
        }],
        ..Turn::default()
    };
    let (body, local) = c.thread.begin("x", answer()).unwrap();
    let (body_back, local_back) = back.begin("x", answer()).unwrap();
    assert_eq!(body_back, body);
    assert_eq!(local_back, local);
    for piece in fixture("interrupt-2-denied").chunks(17) {
        assert_eq!(back.push(piece).unwrap(), c.thread.push(piece).unwrap());
    }
    assert_eq!(back.finish(), c.thread.finish());
    assert_eq!(back.run_id(), None);
    assert_eq!(back.to_snapshot(), None);
    // Not a snapshot: a clear error.
    for bad in [
        "{}",
        "[]",
        r#"{"threadId":"t","runId":"r","messages":[{"id":1}]}"#,
    ] {
        assert!(Thread::from_snapshot(bad).is_err(), "{bad}");
    }
}
