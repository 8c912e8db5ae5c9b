//! The fuzzing entry point: arbitrary bytes as every answer an operation reads.

use alloc::string::String;
use alloc::vec::Vec;

use serde_json::Value;

use super::tool::Tool;
use super::LEGACY_VERSIONS;
use super::{Action, Era, Limits, Operation, ServerConfig, ServerState, ToolAnnotations};

/// Fuzzing entry point: `data` as the response body of every step, as an event stream and as
/// JSON, cut where its first byte says. Nothing may panic, and the operation must always end
/// or keep waiting for more (it never asks for a request it does not track).
#[doc(hidden)]
pub fn fuzz_mcp_response(data: &[u8]) {
    let Some((&cut, body)) = data.split_first() else {
        return;
    };
    let cut = usize::from(cut).min(body.len());
    let server = ServerConfig {
        name: "fuzz".into(),
        url: "http://127.0.0.1/mcp".into(),
        headers: Vec::new(),
    };
    let tool = Tool {
        name: "t".into(),
        title: None,
        description: String::new(),
        input_schema: serde_json::json!({"type": "object"}),
        annotations: ToolAnnotations::default(),
        header_params: Vec::new(),
    };
    let eras = [
        ServerState::default(),
        ServerState {
            era: Some(Era::Legacy),
            protocol_version: Some(LEGACY_VERSIONS[0].into()),
            session_id: Some("s".into()),
            initialized: true,
        },
    ];
    for state in eras {
        for content_type in ["text/event-stream", "application/json"] {
            for status in [200u16, 400, 404] {
                let limits = Limits::default();
                let ops = [
                    Operation::list_tools(&server, state.clone(), limits),
                    Operation::call_tool(&server, state.clone(), limits, &tool, "c", Value::Null),
                ];
                for mut op in ops {
                    drive_fuzz(&mut op, status, content_type, body, cut);
                }
            }
        }
    }
}

fn drive_fuzz(op: &mut Operation, status: u16, content_type: &str, body: &[u8], cut: usize) {
    let headers = [(String::from("content-type"), String::from(content_type))];
    // Each step gets the same answer; a bounded number of steps (pages, re-initialization).
    for _ in 0..64 {
        let mut sent = Vec::new();
        while let Some(action) = op.poll() {
            match action {
                Action::Send(request) if request.wants_response => sent.push(request.id),
                Action::Send(_) | Action::Progress { .. } => {}
                Action::Done(_) => return,
            }
        }
        let Some(&request) = sent.last() else { return };
        op.on_head(request, status, &headers);
        let (a, b) = body.split_at(cut);
        op.on_body(request, a);
        op.on_body(request, b);
        op.on_end(request);
    }
}
