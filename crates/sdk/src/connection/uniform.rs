//! What weft's events carry and an original server's leave out, filled in so that the app's
//! code is the same on every server (`original.rs` calls it for each event it keeps):
//!
//! - every event of a turn names its run: the run id the app sees in `run.runId` (an original
//!   that names no runs gets the client's own), so the transcript's messages, tool calls and
//!   runs carry it as they do on weft;
//! - every tool call has an id (agentchat's have none: `call-<n>`, as the reassembler names
//!   one) and its name on every event (agentloop's `function_call_output` has none);
//! - an approval request names the call it is about (agentloop's names none: it is the turn's
//!   call still waiting), and the app's decision is recorded on that call
//!   (`approvals.rs`), since no original acknowledges it;
//! - `tool_call` comes before a call's result, once its arguments are whole (cueso streams
//!   them and sends none), and `tool_end` after it: a call the original never reports a
//!   result for ends with its run, with an empty result.

use weft_protocol::json::RawJson;
use weft_protocol::reassembler::{RunStatus, ToolCall, ToolStatus};
use weft_protocol::text;
use weft_protocol::{Event, Sequenced};

use super::Connection;

impl Connection {
    /// Pushes `ev` to `out` with what it lacks filled in, preceded by the `tool_call` or
    /// `tool_end` events weft would have sent before it.
    pub(super) fn uniform(&self, mut ev: Sequenced, out: &mut Vec<Sequenced>) {
        if ev.envelope.run_id.is_none() {
            ev.envelope.run_id = self.run_id_for(&ev.event);
        }
        let run = ev.envelope.run_id.clone();
        let run = run.as_deref();
        let unfinished = |c: &&ToolCall| c.run_id.as_deref() == run && c.result.is_none();
        let calls = &self.reassembler.transcript().tool_calls;
        let envelope = ev.envelope.clone();
        let ends = self.ends_turn(&ev.event, run);
        let before = |event: Event| Sequenced {
            envelope: envelope.clone(),
            event,
        };
        let announce = |call: &ToolCall, out: &mut Vec<Sequenced>| {
            if call.status == ToolStatus::Streaming {
                out.push(before(Event::ToolCall {
                    call_id: Some(call.call_id.clone()),
                    name: call.name.clone(),
                    arguments: whole(&call.arguments_text),
                }));
            }
        };
        match &mut ev.event {
            Event::RunStart { run_id, .. } if run_id.is_none() => {
                run_id.clone_from(&envelope.run_id)
            }
            Event::ToolCall { call_id, .. } if call_id.is_none() => {
                *call_id = Some(text::concat(&["call-", &text::uint(calls.len() as u64)]));
            }
            Event::ToolApproval { call_id, name, .. } if call_id.is_none() => {
                let mut waiting = calls.iter().rev().filter(unfinished);
                let named = waiting.clone().find(|c| c.name == *name);
                *call_id = named.or_else(|| waiting.next()).map(|c| c.call_id.clone());
            }
            Event::ToolStart { call_id, name } | Event::ToolEnd { call_id, name, .. } => {
                let call = match call_id.as_deref() {
                    Some(id) => calls.iter().rev().find(|c| c.call_id == id),
                    None => calls
                        .iter()
                        .rev()
                        .filter(unfinished)
                        .find(|c| name.is_empty() || c.name == *name),
                };
                if let Some(call) = call {
                    call_id.get_or_insert_with(|| call.call_id.clone());
                    if name.is_empty() {
                        name.clone_from(&call.name);
                    }
                    announce(call, out);
                }
            }
            // The end of the response that made the calls: their arguments are whole.
            Event::LlmComplete { .. } => {
                for call in calls.iter().filter(unfinished) {
                    announce(call, out);
                }
            }
            Event::RunEnd { .. } | Event::Error { .. } if ends => {
                for call in calls.iter().filter(unfinished) {
                    announce(call, out);
                    out.push(before(Event::ToolEnd {
                        call_id: Some(call.call_id.clone()),
                        name: call.name.clone(),
                        result: String::new(),
                        is_error: false,
                    }));
                }
            }
            _ => {}
        }
        out.push(ev);
    }

    /// The run an event of an original that names no runs belongs to: for a turn's start, our
    /// oldest run sent and not started; else the turn streaming, or (an error before the
    /// turn began) our oldest run sent — as `run_of` picks it.
    fn run_id_for(&self, event: &Event) -> Option<String> {
        let starting = matches!(event, Event::RunStart { .. });
        if !starting {
            let streaming = self
                .reassembler
                .transcript()
                .runs
                .last()
                .filter(|r| r.status == RunStatus::Running);
            if let Some(run) = streaming {
                return run.run_id.clone();
            }
        }
        self.runs
            .values()
            .find(|r| r.sent && !r.followed && !(starting && r.started))
            .map(|r| r.run_id.clone())
    }

    /// Whether `event` ends the run `run` that is streaming (an `error` answering a request
    /// does not).
    fn ends_turn(&self, event: &Event, run: Option<&str>) -> bool {
        let streaming = run.and_then(|id| self.reassembler.transcript().run(id));
        let request = matches!(event, Event::Error { id: Some(_), .. });
        !request && streaming.is_some_and(|r| r.status == RunStatus::Running)
    }
}

/// A call's streamed arguments as one JSON value (an empty object for none; the text as it
/// came, as a JSON string, if it is not JSON).
fn whole(text: &str) -> RawJson {
    let text = text.trim();
    if text.is_empty() {
        return RawJson::empty_object();
    }
    RawJson::parse(text).unwrap_or_else(|| RawJson::string(text))
}
