//! Canonical runs shared by the golden, cross-dialect and property tests: what the react agent
//! emits for a plain reply, a tool call with streamed arguments, an approval (granted and
//! denied), a provider error, and a cancel.

#![allow(dead_code)]

use serde_json::json;
use weft_protocol::event::NodeResult;
use weft_protocol::{Agent, Event, FinishReason, Review, Sequenced, Sequencer, Usage};

pub const SESSION: &str = "sess-7f3a";

fn usage(p: u64, c: u64) -> Usage {
    Usage {
        prompt_tokens: p,
        completion_tokens: c,
        total_tokens: p + c,
    }
}

fn start(run: &str, message: &str) -> (Sequencer, Vec<Sequenced>) {
    let mut s = Sequencer::new(Some(SESSION.into()), run);
    let first = s.stamp(Event::RunStart {
        run_id: Some(run.into()),
        message: Some(message.into()),
        agent: Some(Agent::React),
    });
    (s, vec![first])
}

fn text(content: &str) -> Event {
    Event::MessageChunk {
        content: content.into(),
        id: "think".into(),
    }
}

fn enter(id: &str) -> Event {
    Event::NodeEnter { id: id.into() }
}

fn exit(id: &str) -> Event {
    Event::NodeExit {
        id: id.into(),
        result: NodeResult::Ok,
    }
}

fn complete(content: &str, tools: &[&str]) -> Event {
    Event::LlmComplete {
        content: content.into(),
        tool_calls: tools.iter().map(|t| t.to_string()).collect(),
        finish_reason: if tools.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        },
    }
}

/// The events of a streamed tool call: announce, fragments, then the whole call.
fn call(id: &str, name: &str, fragments: &[&str]) -> Vec<Event> {
    let mut events = vec![Event::ToolCallChunk {
        call_id: Some(id.into()),
        name: Some(name.into()),
        arguments_delta: String::new(),
    }];
    for f in fragments {
        events.push(Event::ToolCallChunk {
            call_id: Some(id.into()),
            name: Some(name.into()),
            arguments_delta: (*f).into(),
        });
    }
    let args: serde_json::Value = serde_json::from_str(&fragments.concat()).unwrap();
    events.push(Event::ToolCall {
        call_id: Some(id.into()),
        name: name.into(),
        arguments: args.into(),
    });
    events
}

fn end(reply: &str, last: Usage, total: Usage, iterations: u64) -> Event {
    Event::RunEnd {
        reply: reply.into(),
        usage: Some(last),
        total_usage: Some(total),
        iteration_count: Some(iterations),
        paused: false,
        tool_calls: Vec::new(),
    }
}

fn finish(mut s: Sequencer, mut out: Vec<Sequenced>, events: Vec<Event>) -> Vec<Sequenced> {
    out.extend(events.into_iter().map(|e| s.stamp(e)));
    out
}

pub fn plain_reply() -> Vec<Sequenced> {
    let (s, out) = start("run-plain", "Hello");
    let u = usage(12, 6);
    finish(
        s,
        out,
        vec![
            enter("think"),
            Event::ReasoningChunk {
                content: "A greeting; answer briefly.".into(),
                id: "think".into(),
            },
            text("Hi"),
            text(" there"),
            text("! How can I help?"),
            Event::Usage(u),
            complete("Hi there! How can I help?", &[]),
            exit("think"),
            end("Hi there! How can I help?", u, u, 1),
        ],
    )
}

pub fn tool_call() -> Vec<Sequenced> {
    let (s, out) = start("run-tool", "What time is it?");
    let (u1, u2) = (usage(40, 9), usage(62, 11));
    let mut total = u1;
    total.add(&u2);
    let mut events = vec![enter("think")];
    events.extend(call(
        "call_1",
        "get_time",
        &["{\"time", "zone\":\"", "UTC\"}"],
    ));
    events.extend([
        Event::Usage(u1),
        complete("", &["get_time"]),
        exit("think"),
        enter("act"),
        Event::ToolStart {
            call_id: Some("call_1".into()),
            name: "get_time".into(),
        },
        Event::ToolEnd {
            call_id: Some("call_1".into()),
            name: "get_time".into(),
            result: "2026-11-22T10:00:00Z".into(),
            is_error: false,
        },
        exit("act"),
        enter("think"),
        text("It is 10:00 UTC."),
        Event::Usage(u2),
        complete("It is 10:00 UTC.", &[]),
        exit("think"),
        end("It is 10:00 UTC.", u2, total, 2),
    ]);
    finish(s, out, events)
}

fn approval(run: &str, review: Review) -> Vec<Sequenced> {
    let (s, out) = start(run, "write hello to notes.txt");
    let (u1, u2) = (usage(50, 20), usage(90, 8));
    let mut total = u1;
    total.add(&u2);
    let patch = "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch";
    let args = serde_json::to_string(&json!({ "patch": patch })).unwrap();
    let (head, tail) = args.split_at(20);
    let mut events = vec![enter("think"), text("I'll write it.")];
    events.extend(call("call_w", "apply_patch", &[head, tail]));
    let approved = review.approves();
    let (result, reply) = if approved {
        ("Done: added notes.txt", "Wrote hello to notes.txt.")
    } else {
        (
            "denied by the user: not now",
            "OK, I did not write the file.",
        )
    };
    events.extend([
        Event::Usage(u1),
        complete("I'll write it.", &["apply_patch"]),
        exit("think"),
        enter("act"),
        Event::ToolApproval {
            call_id: Some("call_w".into()),
            name: "apply_patch".into(),
            arguments: json!({ "patch": patch }).into(),
        },
        Event::ApprovalResolved {
            call_id: Some("call_w".into()),
            name: Some("apply_patch".into()),
            review,
            message: (!approved).then(|| "not now".to_string()),
        },
    ]);
    if approved {
        events.push(Event::ToolStart {
            call_id: Some("call_w".into()),
            name: "apply_patch".into(),
        });
    }
    events.extend([
        Event::ToolEnd {
            call_id: Some("call_w".into()),
            name: "apply_patch".into(),
            result: result.into(),
            is_error: !approved,
        },
        exit("act"),
        enter("think"),
        text(reply),
        Event::Usage(u2),
        complete(reply, &[]),
        exit("think"),
        end(reply, u2, total, 2),
    ]);
    finish(s, out, events)
}

pub fn approval_granted() -> Vec<Sequenced> {
    approval("run-approve", Review::Yes)
}

pub fn approval_denied() -> Vec<Sequenced> {
    approval("run-deny", Review::NoContinue)
}

pub fn provider_error() -> Vec<Sequenced> {
    let (s, out) = start("run-error", "Tell me a story");
    finish(
        s,
        out,
        vec![
            enter("think"),
            text("Once upon"),
            // A response cut short still ends with llm_complete, so dialects that only send
            // whole messages (agentchat) show what the others streamed.
            Event::LlmComplete {
                content: "Once upon".into(),
                tool_calls: Vec::new(),
                finish_reason: FinishReason::from("error"),
            },
            Event::Error {
                message: "provider error: 500 Internal Server Error (retry in a moment)".into(),
                code: Some("provider".into()),
                id: None,
                details: Some(json!({ "status": 500 }).into()),
            },
        ],
    )
}

pub fn cancelled() -> Vec<Sequenced> {
    let (s, out) = start("run-cancel", "Count to a million");
    finish(
        s,
        out,
        vec![
            enter("think"),
            text("1, 2, 3"),
            Event::LlmComplete {
                content: "1, 2, 3".into(),
                tool_calls: Vec::new(),
                finish_reason: FinishReason::from("cancelled"),
            },
            Event::Error {
                message: "cancelled".into(),
                code: Some("cancelled".into()),
                id: None,
                details: None,
            },
        ],
    )
}

/// Every scenario, by file name.
pub fn scenarios() -> Vec<(&'static str, Vec<Sequenced>)> {
    vec![
        ("plain-reply", plain_reply()),
        ("tool-call", tool_call()),
        ("approval-granted", approval_granted()),
        ("approval-denied", approval_denied()),
        ("provider-error", provider_error()),
        ("cancelled", cancelled()),
    ]
}

/// Holds `text` equal to the fixture `tests/fixtures/<dir>/<name>.jsonl`, or writes it there
/// under `WEFT_BLESS=1` (then review the diff).
pub fn golden(dir: &str, name: &str, text: &str) {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir)
        .join(format!("{name}.jsonl"));
    if std::env::var_os("WEFT_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }
    let recorded = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with WEFT_BLESS=1)", path.display()));
    assert_eq!(text, recorded, "{dir}/{name}: encoding changed");
}
