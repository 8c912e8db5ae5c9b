//! The JSON object form of events (the loom event shape): read field by field with errors that
//! name the field, written by serde.

use alloc::string::String;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::{Envelope, Event, NodeResult, Sequenced, StoredMessage, ToolSpec, UnknownEvent, Usage};
use crate::field::Fields;
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
    /// The JSON object form (`type` plus payload), the loom event shape.
    pub fn to_json(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map,
            // Every variant serializes to an object: the enum is internally tagged and its
            // payloads are structs or maps with string keys. Keep the type at least.
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
        Ok(match kind {
            "run_start" => Event::RunStart {
                run_id: f.opt("run_id")?,
                message: f.opt("message")?,
                agent: f.opt::<String>("agent")?.map(|a| Agent::from(a.as_str())),
            },
            "node_enter" => Event::NodeEnter { id: f.req("id")? },
            "node_exit" => Event::NodeExit {
                id: f.req("id")?,
                result: match f.raw("result") {
                    Some(v) => NodeResult::from_value(kind, v)?,
                    None => {
                        return Err(f.err("result", "is required (\"Ok\" or {\"Err\": string})"))
                    }
                },
            },
            "message_chunk" => Event::MessageChunk {
                content: f.req("content")?,
                id: f.req("id")?,
            },
            "usage" => Event::Usage(Usage::read(f)?),
            "values" => Event::Values {
                state: f.opt("state")?.unwrap_or_default(),
            },
            "updates" => Event::Updates {
                id: f.req("id")?,
                state: f.opt("state")?.unwrap_or_default(),
            },
            "custom" => Event::Custom {
                value: f.opt("value")?.unwrap_or_default(),
            },
            "checkpoint" => Event::Checkpoint {
                checkpoint_id: f.req("checkpoint_id")?,
                timestamp: f.req("timestamp")?,
                step: f.req("step")?,
                state: f.opt("state")?.unwrap_or_default(),
                thread_id: f.opt("thread_id")?,
                checkpoint_ns: f.opt("checkpoint_ns")?,
            },
            "tot_expand" => Event::TotExpand {
                candidates: f.req("candidates")?,
            },
            "tot_evaluate" => Event::TotEvaluate {
                chosen: f.req("chosen")?,
                scores: f.req("scores")?,
            },
            "tot_backtrack" => Event::TotBacktrack {
                reason: f.req("reason")?,
                to_depth: f.req("to_depth")?,
            },
            "got_plan" => Event::GotPlan {
                node_count: f.req("node_count")?,
                edge_count: f.req("edge_count")?,
                node_ids: f.req("node_ids")?,
            },
            "got_node_start" => Event::GotNodeStart { id: f.req("id")? },
            "got_node_complete" => Event::GotNodeComplete {
                id: f.req("id")?,
                result_summary: f.req("result_summary")?,
            },
            "got_node_failed" => Event::GotNodeFailed {
                id: f.req("id")?,
                error: f.req("error")?,
            },
            "got_expand" => Event::GotExpand {
                node_id: f.req("node_id")?,
                nodes_added: f.req("nodes_added")?,
                edges_added: f.req("edges_added")?,
            },
            "tool_call_chunk" => Event::ToolCallChunk {
                call_id: f.opt("call_id")?,
                name: f.opt("name")?,
                arguments_delta: f.req("arguments_delta")?,
            },
            "tool_call" => Event::ToolCall {
                call_id: f.opt("call_id")?,
                name: f.req("name")?,
                arguments: f.opt("arguments")?.unwrap_or_default(),
            },
            "tool_start" => Event::ToolStart {
                call_id: f.opt("call_id")?,
                name: f.req("name")?,
            },
            "tool_output" => Event::ToolOutput {
                call_id: f.opt("call_id")?,
                name: f.req("name")?,
                content: f.req("content")?,
            },
            "tool_end" => Event::ToolEnd {
                call_id: f.opt("call_id")?,
                name: f.req("name")?,
                result: f.req("result")?,
                is_error: f.req("is_error")?,
            },
            "tool_approval" => Event::ToolApproval {
                call_id: f.opt("call_id")?,
                name: f.req("name")?,
                arguments: f.opt("arguments")?.unwrap_or_default(),
            },
            "reasoning_chunk" => Event::ReasoningChunk {
                content: f.req("content")?,
                id: f.req("id")?,
            },
            "llm_complete" => Event::LlmComplete {
                content: f.req("content")?,
                tool_calls: f.opt("tool_calls")?.unwrap_or_default(),
                finish_reason: FinishReason::from(f.req::<String>("finish_reason")?.as_str()),
            },
            "approval_resolved" => Event::ApprovalResolved {
                call_id: f.opt("call_id")?,
                name: f.opt("name")?,
                review: Review::read(&f, "review")?,
                message: f.opt("message")?,
            },
            "context_info" => Event::ContextInfo {
                token_count: f.req("token_count")?,
                usage_percent: f.req("usage_percent")?,
                transcript_length: f.req("transcript_length")?,
                max_tokens: f.req("max_tokens")?,
                strategy: f.req("strategy")?,
            },
            "context_compacted" => Event::ContextCompacted {
                old_token_count: f.req("old_token_count")?,
                new_token_count: f.req("new_token_count")?,
                reduction_percent: f.req("reduction_percent")?,
                strategy: f.req("strategy")?,
            },
            "user_message" => Event::UserMessage {
                content: f.req("content")?,
            },
            "events_lost" => Event::EventsLost {
                from: f.req("from")?,
            },
            "run_end" => Event::RunEnd {
                reply: f.req("reply")?,
                usage: f.opt_object("usage", Usage::read)?,
                total_usage: f.opt_object("total_usage", Usage::read)?,
                iteration_count: f.opt("iteration_count")?,
                paused: f.opt("paused")?.unwrap_or(false),
                tool_calls: f.opt("tool_calls")?.unwrap_or_default(),
            },
            "error" => Event::Error {
                message: f.req("message")?,
                code: f.opt("code")?,
                id: f.opt("id")?,
                details: f.opt("details")?,
            },
            "pong" => Event::Pong { id: f.req("id")? },
            "tools_list" => Event::ToolsList {
                id: f.req("id")?,
                tools: f.objects("tools", ToolSpec::read)?,
            },
            "tool_show" => Event::ToolShow {
                id: f.req("id")?,
                tool: f.opt("tool")?,
                tool_yaml: f.opt("tool_yaml")?,
            },
            "user_messages" => Event::UserMessages {
                id: f.req("id")?,
                thread_id: f.req("thread_id")?,
                messages: f.objects("messages", StoredMessage::read)?,
                has_more: f.opt("has_more")?,
                active_run_id: f.opt("active_run_id")?,
            },
            _ => Event::Unknown(UnknownEvent {
                kind: kind.into(),
                data: RawJson::from_object(map, &NOT_DATA),
            }),
        })
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
