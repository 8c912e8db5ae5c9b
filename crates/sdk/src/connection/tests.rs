//! The client's rules, natively: runs in every dialect, reconnect and resume, heartbeats,
//! request correlation, approvals and client tools. Server frames are made with the protocol's
//! own `Sequencer` + `Encoder`, exactly as the worker makes them. The helpers are here, the
//! tests in rooms that follow the connection's own.

use serde_json::{json, Value};
use weft_protocol::command::ApprovalDecision;
use weft_protocol::event::NodeResult;
use weft_protocol::reassembler::RunStatus;
use weft_protocol::{Agent, Encoder, Event, Review, Role, Sequencer, Usage};

use super::*;
use crate::types::{
    ApprovalAnswer, CompactResult, ContextInfo, McpServerOptions, RunOptions, ToolDefinition,
};

const RUN: &str = "run-a";

fn config(dialect: Dialect) -> Config {
    Config {
        dialect,
        url: endpoint_url("ws://127.0.0.1:8080", dialect, Some("sess-1")).unwrap(),
        protocols: subprotocols(dialect, Some("t0k")).unwrap(),
        server: ServerChoice::Weft,
        original_url: original_url(
            &endpoint_url("ws://127.0.0.1:8080", dialect, Some("sess-1")).unwrap(),
            Some("t0k"),
        ),
        session_id: Some("sess-1".into()),
        reconnect: Some(Backoff::default()),
        heartbeat_interval_ms: 15_000.0,
        heartbeat_timeout_ms: 10_000.0,
        request_timeout_ms: 30_000.0,
        id_prefix: "c1".into(),
        agui_http: None,
    }
}

fn opts(message: &str) -> RunOptions {
    RunOptions {
        message: message.into(),
        agent: None,
        thread_id: None,
        working_folder: None,
        got_adaptive: None,
        verbose: None,
    }
}

fn drain(c: &mut Connection) -> Vec<Output> {
    std::iter::from_fn(|| c.poll()).collect()
}

fn sent(out: &[Output]) -> Vec<Value> {
    out.iter()
        .filter_map(|o| match o {
            Output::Send(f) => Some(serde_json::from_str(f).unwrap()),
            _ => None,
        })
        .collect()
}

/// A connected client with nothing pending.
fn connected(dialect: Dialect) -> Connection {
    let mut c = Connection::new(config(dialect));
    c.connect();
    c.opened(0.0);
    drain(&mut c);
    c
}

fn usage(p: u64, c: u64) -> Usage {
    Usage {
        prompt_tokens: p,
        completion_tokens: c,
        total_tokens: p + c,
    }
}

fn text(s: &str) -> Event {
    Event::MessageChunk {
        content: s.into(),
        id: "think".into(),
    }
}

/// A plain reply, streamed in three chunks.
fn plain_run(run_id: &str) -> Vec<Event> {
    vec![
        Event::RunStart {
            run_id: Some(run_id.into()),
            message: Some("Hello".into()),
            agent: Some(Agent::React),
        },
        Event::NodeEnter { id: "think".into() },
        text("Hi"),
        text(" there"),
        text("!"),
        Event::Usage(usage(12, 6)),
        Event::LlmComplete {
            content: "Hi there!".into(),
            tool_calls: vec![],
            finish_reason: weft_protocol::FinishReason::Stop,
        },
        Event::NodeExit {
            id: "think".into(),
            result: NodeResult::Ok,
        },
        Event::RunEnd {
            reply: "Hi there!".into(),
            usage: Some(usage(12, 6)),
            total_usage: Some(usage(12, 6)),
            iteration_count: Some(1),
            paused: false,
            tool_calls: vec![],
        },
    ]
}

/// The frames a weft server sends for these events in `dialect`.
fn frames(dialect: Dialect, run_id: &str, events: Vec<Event>) -> Vec<String> {
    let mut seq = Sequencer::new(Some("sess-1".into()), run_id);
    let mut enc = Encoder::new(dialect, 7);
    events
        .into_iter()
        .flat_map(|e| enc.encode(&seq.stamp(e)))
        .collect()
}

fn feed(c: &mut Connection, frames: &[String]) -> Vec<Output> {
    for f in frames {
        c.frame(f.as_bytes(), 1.0);
    }
    drain(c)
}

fn texts(out: &[Output]) -> String {
    out.iter()
        .filter_map(|o| match o {
            Output::Text { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

fn event_kinds(out: &[Output]) -> Vec<String> {
    out.iter()
        .filter_map(|o| match o {
            Output::Event { event, .. } => Some(event.event.kind().to_string()),
            _ => None,
        })
        .collect()
}

fn done(out: &[Output]) -> Vec<&Result<RunResult, Error>> {
    out.iter()
        .filter_map(|o| match o {
            Output::RunDone { result, .. } => Some(result),
            _ => None,
        })
        .collect()
}
fn replies(out: &[Output]) -> Vec<(&RequestKind, &Result<Reply, Error>)> {
    out.iter()
        .filter_map(|o| match o {
            Output::Reply { kind, result, .. } => Some((kind, result)),
            _ => None,
        })
        .collect()
}

fn handles(out: &[Output]) -> Vec<Option<RunHandle>> {
    out.iter()
        .filter_map(|o| match o {
            Output::Event { run, .. } => Some(*run),
            _ => None,
        })
        .collect()
}

mod approvals;
mod endpoint;
#[cfg(feature = "agui")]
mod http;
mod lifecycle;
mod originals;
mod requests;
mod runs;
