//! The JSON object form of events (the loom event shape): read field by field with errors that
//! name the field, written by serde.

use alloc::string::String;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::{Envelope, Event, NodeResult, Sequenced, StoredMessage, ToolSpec, UnknownEvent, Usage};
use crate::field::{Fields, Lenient};
use crate::json::{Json, Object, RawJson};
use crate::names::{Agent, FinishReason, Review};
use crate::Error;

impl Serialize for UnknownEvent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let data = self.data.tree();
        let members = data.as_object().map(|o| o.canonical()).unwrap_or_default();
        let mut m = s.serialize_map(Some(members.len() + 1))?;
        m.serialize_entry("type", &self.kind)?;
        for (k, v) in members {
            if k != "type" {
                m.serialize_entry(k, v)?;
            }
        }
        m.end()
    }
}

/// What an unknown event's data leaves out: its type, and the envelope fields, which live beside
/// the payload on the wire, so a round trip through [`Sequenced`] does not duplicate them.
const NOT_DATA: [&str; 4] = ["type", "session_id", "node_id", "event_id"];

impl Sequenced {
    /// Reads the loom JSON form back: the event's fields with the envelope fields beside them
    /// (§4.1), as its `Serialize` writes them.
    pub fn from_json(map: &Object<'_>) -> Result<Self, Error> {
        let mut envelope = Envelope::read(Fields::new("envelope", map))?;
        let event = Event::from_json(map)?;
        if matches!(event, Event::GotExpand { .. }) {
            envelope.node_id = None;
        }
        Ok(Sequenced { envelope, event })
    }
}

impl Event {
    /// The JSON object form (`type` plus payload), the loom event shape. Read from what
    /// [`Event::write_json`] writes: serde's serializer of events into values would be code a
    /// server carries for this alone.
    pub fn to_json(&self) -> Map<String, Value> {
        match serde_json::from_str(&self.write_json()) {
            Ok(Value::Object(map)) => map,
            // The writer writes an object, always. Keep the type at least.
            _ => {
                let mut map = Map::new();
                map.insert("type".into(), Value::String(self.kind().into()));
                map
            }
        }
    }

    /// Reads an event from its JSON object form. An unknown `type` is kept whole as
    /// [`Event::Unknown`]; a known type with a malformed body is an [`Error::Field`].
    pub fn from_json(map: &Object<'_>) -> Result<Self, Error> {
        let kind = match map.get("type") {
            Some(Json::String(k)) => k.as_ref(),
            _ => return Err(Error::MissingType),
        };
        let f = Fields::new(kind, map);
        let l = Lenient::new(f);
        let event = match kind {
            "run_start" => Event::RunStart {
                run_id: l.opt("run_id"),
                message: l.opt("message"),
                agent: l.opt::<String>("agent").map(|a| Agent::from(a.as_str())),
            },
            "node_enter" => Event::NodeEnter { id: l.req("id") },
            "node_exit" => Event::NodeExit {
                id: l.req("id"),
                result: match f.raw("result") {
                    Some(v) => NodeResult::from_value(kind, v)?,
                    None => {
                        return Err(f.err("result", "is required (\"Ok\" or {\"Err\": string})"))
                    }
                },
            },
            "message_chunk" => Event::MessageChunk {
                content: l.req("content"),
                id: l.req("id"),
            },
            "usage" => Event::Usage(Usage::read(f)?),
            "values" => Event::Values {
                state: l.opt("state").unwrap_or_default(),
            },
            "state_delta" => Event::StateDelta {
                delta: l.req("delta"),
            },
            "updates" => Event::Updates {
                id: l.req("id"),
                state: l.opt("state").unwrap_or_default(),
            },
            "custom" => Event::Custom {
                value: l.opt("value").unwrap_or_default(),
            },
            "checkpoint" => Event::Checkpoint {
                checkpoint_id: l.req("checkpoint_id"),
                timestamp: l.req("timestamp"),
                step: l.req("step"),
                state: l.opt("state").unwrap_or_default(),
                thread_id: l.opt("thread_id"),
                checkpoint_ns: l.opt("checkpoint_ns"),
            },
            "tot_expand" => Event::TotExpand {
                candidates: l.req("candidates"),
            },
            "tot_evaluate" => Event::TotEvaluate {
                chosen: l.req("chosen"),
                scores: l.req("scores"),
            },
            "tot_backtrack" => Event::TotBacktrack {
                reason: l.req("reason"),
                to_depth: l.req("to_depth"),
            },
            "got_plan" => Event::GotPlan {
                node_count: l.req("node_count"),
                edge_count: l.req("edge_count"),
                node_ids: l.req("node_ids"),
            },
            "got_node_start" => Event::GotNodeStart { id: l.req("id") },
            "got_node_complete" => Event::GotNodeComplete {
                id: l.req("id"),
                result_summary: l.req("result_summary"),
            },
            "got_node_failed" => Event::GotNodeFailed {
                id: l.req("id"),
                error: l.req("error"),
            },
            "got_expand" => Event::GotExpand {
                node_id: l.req("node_id"),
                nodes_added: l.req("nodes_added"),
                edges_added: l.req("edges_added"),
            },
            "tool_call_chunk" => Event::ToolCallChunk {
                call_id: l.opt("call_id"),
                name: l.opt("name"),
                arguments_delta: l.req("arguments_delta"),
            },
            "tool_call" => Event::ToolCall {
                call_id: l.opt("call_id"),
                name: l.req("name"),
                arguments: l.opt("arguments").unwrap_or_default(),
            },
            "tool_start" => Event::ToolStart {
                call_id: l.opt("call_id"),
                name: l.req("name"),
            },
            "tool_output" => Event::ToolOutput {
                call_id: l.opt("call_id"),
                name: l.req("name"),
                content: l.req("content"),
            },
            "tool_end" => Event::ToolEnd {
                call_id: l.opt("call_id"),
                name: l.req("name"),
                result: l.req("result"),
                is_error: l.req("is_error"),
            },
            "tool_approval" => Event::ToolApproval {
                call_id: l.opt("call_id"),
                name: l.req("name"),
                arguments: l.opt("arguments").unwrap_or_default(),
            },
            "reasoning_chunk" => Event::ReasoningChunk {
                content: l.req("content"),
                id: l.req("id"),
            },
            "llm_complete" => Event::LlmComplete {
                content: l.req("content"),
                tool_calls: l.opt("tool_calls").unwrap_or_default(),
                finish_reason: FinishReason::from(l.req::<String>("finish_reason").as_str()),
            },
            "approval_resolved" => Event::ApprovalResolved {
                call_id: l.opt("call_id"),
                name: l.opt("name"),
                review: Review::read(&f, "review")?,
                message: l.opt("message"),
            },
            "context_info" => Event::ContextInfo {
                token_count: l.req("token_count"),
                usage_percent: l.req("usage_percent"),
                transcript_length: l.req("transcript_length"),
                max_tokens: l.req("max_tokens"),
                strategy: l.req("strategy"),
            },
            "context_compacted" => Event::ContextCompacted {
                old_token_count: l.req("old_token_count"),
                new_token_count: l.req("new_token_count"),
                reduction_percent: l.req("reduction_percent"),
                strategy: l.req("strategy"),
            },
            "user_message" => Event::UserMessage {
                content: l.req("content"),
            },
            "events_lost" => Event::EventsLost {
                from: l.req("from"),
            },
            "run_end" => Event::RunEnd {
                reply: l.req("reply"),
                usage: l.opt_object("usage", Usage::read),
                total_usage: l.opt_object("total_usage", Usage::read),
                iteration_count: l.opt("iteration_count"),
                paused: l.opt("paused").unwrap_or(false),
                tool_calls: l.opt("tool_calls").unwrap_or_default(),
            },
            "error" => Event::Error {
                message: l.req("message"),
                code: l.opt("code"),
                id: l.opt("id"),
                details: l.opt("details"),
            },
            "pong" => Event::Pong { id: l.req("id") },
            "tools_list" => Event::ToolsList {
                id: l.req("id"),
                tools: l.objects("tools", ToolSpec::read),
            },
            "tool_show" => Event::ToolShow {
                id: l.req("id"),
                tool: l.opt("tool"),
                tool_yaml: l.opt("tool_yaml"),
            },
            "user_messages" => Event::UserMessages {
                id: l.req("id"),
                thread_id: l.req("thread_id"),
                messages: l.objects("messages", StoredMessage::read),
                has_more: l.opt("has_more"),
                active_run_id: l.opt("active_run_id"),
            },
            _ => Event::Unknown(UnknownEvent {
                kind: kind.into(),
                data: RawJson::from_object(map, &NOT_DATA),
            }),
        };
        l.finish(event)
    }
}

/// The loom form: event fields first, then the envelope fields.
impl Serialize for Sequenced {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Flat<'a> {
            #[serde(flatten)]
            event: &'a Event,
            #[serde(skip_serializing_if = "Option::is_none")]
            session_id: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            node_id: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            event_id: Option<u64>,
        }
        Flat {
            event: &self.event,
            session_id: self.envelope.session_id.as_deref(),
            node_id: self.envelope_node_id(),
            event_id: self.envelope.event_id,
        }
        .serialize(s)
    }
}

/// Reads the JSON object form through [`Event::from_json`], so the errors are that function's
/// (which field, what was wrong) and the two readers cannot disagree.
impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = Map::<String, Value>::deserialize(d)?;
        Event::from_json(&Object::from_serde(&map)).map_err(serde::de::Error::custom)
    }
}

/// Reads the loom form its `Serialize` writes (the envelope beside the event's fields), through
/// [`Sequenced::from_json`]; `run_id` is not on the wire and stays `None`.
impl<'de> Deserialize<'de> for Sequenced {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = Map::<String, Value>::deserialize(d)?;
        Sequenced::from_json(&Object::from_serde(&map)).map_err(serde::de::Error::custom)
    }
}
