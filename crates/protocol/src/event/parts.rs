//! The structured values events carry: usage counts, a node's result, tool specs, stored
//! messages.

use alloc::string::String;
use serde::{Deserialize, Serialize, Serializer};

use crate::field::Fields;
use crate::json::{Json, ObjectWriter, RawJson};
use crate::names::Role;
use crate::Error;

/// Token usage of one LLM call, or of a whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
pub struct Usage {
    /// Input tokens.
    pub prompt_tokens: u64,
    /// Output tokens.
    pub completion_tokens: u64,
    /// `prompt_tokens + completion_tokens`, as the provider reported it.
    pub total_tokens: u64,
}

impl Usage {
    pub(crate) fn read(f: Fields<'_>) -> Result<Self, Error> {
        Ok(Usage {
            prompt_tokens: f.req("prompt_tokens")?,
            completion_tokens: f.req("completion_tokens")?,
            total_tokens: f.req("total_tokens")?,
        })
    }

    /// Adds another call's usage to this total (saturating: counts never wrap).
    pub fn add(&mut self, other: &Usage) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self
            .completion_tokens
            .saturating_add(other.completion_tokens);
        self.total_tokens = self.total_tokens.saturating_add(other.total_tokens);
    }
}

/// How a node span ended: loom writes `"Ok"` or `{"Err": "message"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(
    feature = "tsify",
    derive(tsify::Tsify),
    tsify(type = "\"Ok\" | { Err: string }")
)]
pub enum NodeResult {
    /// The node finished normally.
    Ok,
    /// The node failed with this message.
    Err(String),
}

impl Serialize for NodeResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            NodeResult::Ok => s.serialize_str("Ok"),
            NodeResult::Err(e) => {
                use serde::ser::SerializeMap;
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("Err", e)?;
                m.end()
            }
        }
    }
}

impl NodeResult {
    pub(super) fn from_value(kind: &str, v: &Json<'_>) -> Result<Self, Error> {
        match v {
            Json::String(s) if s == "Ok" => Ok(NodeResult::Ok),
            Json::Object(m) => match m.get("Err") {
                Some(Json::String(e)) => Ok(NodeResult::Err(String::from(e.as_ref()))),
                _ => Err(Error::field(kind, "result.Err", "must be a string")),
            },
            _ => Err(Error::field(
                kind,
                "result",
                "must be \"Ok\" or {\"Err\": string}",
            )),
        }
    }
}

/// A tool as the model sees it: loom's `ToolSpec` (`loom-websocket-api.md` §4.3).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
pub struct ToolSpec {
    /// Tool name, unique within a session.
    pub name: String,
    /// What the tool does, for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments object.
    #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
    pub input_schema: RawJson,
    /// weft extension for client-side tools: a read-only tool runs without asking for approval.
    #[serde(skip_serializing_if = "core::ops::Not::not")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub read_only: bool,
}

impl ToolSpec {
    pub(crate) fn read(f: Fields<'_>) -> Result<Self, Error> {
        Ok(ToolSpec {
            name: f.req("name")?,
            description: f.opt("description")?,
            input_schema: f.opt("input_schema")?.unwrap_or_else(RawJson::empty_object),
            read_only: f.opt("read_only")?.unwrap_or(false),
        })
    }

    /// Its members, into an object being written.
    pub fn write_members(&self, w: &mut ObjectWriter) {
        w.str("name", &self.name)
            .opt_str("description", self.description.as_deref())
            .raw("input_schema", &self.input_schema);
        if self.read_only {
            w.bool("read_only", true);
        }
    }
}

/// One stored message of a thread (loom `UserMessageItem`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
pub struct StoredMessage {
    /// weft extension: the message's sequence number within its thread, the `before` cursor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// Who said it.
    pub role: Role,
    /// What was said.
    pub content: String,
}

impl StoredMessage {
    pub(crate) fn read(f: Fields<'_>) -> Result<Self, Error> {
        Ok(StoredMessage {
            id: f.opt("id")?,
            role: Role::from(f.req::<String>("role")?.as_str()),
            content: f.req("content")?,
        })
    }
}
