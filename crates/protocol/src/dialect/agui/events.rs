//! Every AG-UI 1.0 event, and reading one.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::frame::{parse_object, Limits};
use crate::json::Json;
use crate::Error;

use super::{bad, Message};

/// Every event type of AG-UI 1.0, with the fields `@ag-ui/core`'s schemas define (the common
/// `timestamp`, `rawEvent`, `metadata` and `subagentRunId` are passed over when read).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AguiEvent {
    #[serde(rename_all = "camelCase")]
    TextMessageStart {
        message_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    TextMessageContent {
        message_id: String,
        delta: String,
    },
    #[serde(rename_all = "camelCase")]
    TextMessageEnd {
        message_id: String,
    },
    #[serde(rename_all = "camelCase")]
    TextMessageChunk {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delta: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    ToolCallStart {
        tool_call_id: String,
        tool_call_name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_message_id: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    ToolCallArgs {
        tool_call_id: String,
        delta: String,
    },
    #[serde(rename_all = "camelCase")]
    ToolCallEnd {
        tool_call_id: String,
    },
    #[serde(rename_all = "camelCase")]
    ToolCallChunk {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_call_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_call_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_message_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delta: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    ToolCallResult {
        message_id: String,
        tool_call_id: String,
        /// Text, or an array of content parts.
        content: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
    },
    StateSnapshot {
        snapshot: Value,
    },
    /// An RFC 6902 JSON Patch.
    StateDelta {
        delta: Vec<Value>,
    },
    MessagesSnapshot {
        messages: Vec<Message>,
    },
    #[serde(rename_all = "camelCase")]
    ActivitySnapshot {
        message_id: String,
        activity_type: String,
        content: Map<String, Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replace: Option<bool>,
    },
    #[serde(rename_all = "camelCase")]
    ActivityDelta {
        message_id: String,
        activity_type: String,
        patch: Vec<Value>,
    },
    Raw {
        event: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source: Option<String>,
    },
    Custom {
        name: String,
        value: Value,
    },
    #[serde(rename_all = "camelCase")]
    RunStarted {
        thread_id: String,
        run_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        input: Option<Value>,
    },
    #[serde(rename_all = "camelCase")]
    RunFinished {
        thread_id: String,
        run_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<Outcome>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Vec<Value>>,
    },
    RunError {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    StepStarted {
        step_name: String,
    },
    #[serde(rename_all = "camelCase")]
    StepFinished {
        step_name: String,
    },
    #[serde(rename_all = "camelCase")]
    ReasoningStart {
        message_id: String,
    },
    #[serde(rename_all = "camelCase")]
    ReasoningMessageStart {
        message_id: String,
        role: String,
    },
    #[serde(rename_all = "camelCase")]
    ReasoningMessageContent {
        message_id: String,
        delta: String,
    },
    #[serde(rename_all = "camelCase")]
    ReasoningMessageEnd {
        message_id: String,
    },
    #[serde(rename_all = "camelCase")]
    ReasoningMessageChunk {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delta: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    ReasoningEnd {
        message_id: String,
    },
    #[serde(rename_all = "camelCase")]
    ReasoningEncryptedValue {
        /// `tool-call` or `message`.
        subtype: String,
        entity_id: String,
        encrypted_value: String,
    },
    /// A type this version does not know, kept whole: `data` is every field but `type`.
    #[serde(skip)]
    Unknown {
        kind: String,
        data: Map<String, Value>,
    },
}

/// How a run finished (`RunFinishedOutcomeSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Outcome {
    #[serde(rename_all = "camelCase")]
    Success {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pending_tool_call_ids: Option<Vec<String>>,
    },
    Interrupt {
        interrupts: Vec<Interrupt>,
    },
    Cancelled,
}

/// What a run waits for (`InterruptSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Interrupt {
    pub id: String,
    /// weft writes `tool_call`.
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// The `type`s of [`AguiEvent`]'s known variants.
pub const KNOWN_TYPES: [&str; 28] = [
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "TEXT_MESSAGE_CHUNK",
    "TOOL_CALL_START",
    "TOOL_CALL_ARGS",
    "TOOL_CALL_END",
    "TOOL_CALL_CHUNK",
    "TOOL_CALL_RESULT",
    "STATE_SNAPSHOT",
    "STATE_DELTA",
    "MESSAGES_SNAPSHOT",
    "ACTIVITY_SNAPSHOT",
    "ACTIVITY_DELTA",
    "RAW",
    "CUSTOM",
    "RUN_STARTED",
    "RUN_FINISHED",
    "RUN_ERROR",
    "STEP_STARTED",
    "STEP_FINISHED",
    "REASONING_START",
    "REASONING_MESSAGE_START",
    "REASONING_MESSAGE_CONTENT",
    "REASONING_MESSAGE_END",
    "REASONING_MESSAGE_CHUNK",
    "REASONING_END",
    "REASONING_ENCRYPTED_VALUE",
];

impl AguiEvent {
    /// The event's `type`.
    pub fn kind(&self) -> String {
        match self {
            AguiEvent::Unknown { kind, .. } => kind.clone(),
            other => match serde_json::to_value(other) {
                Ok(Value::Object(m)) => m
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                _ => String::new(),
            },
        }
    }

    /// The event as its JSON object.
    pub fn to_value(&self) -> Value {
        match self {
            AguiEvent::Unknown { kind, data } => {
                let mut m = data.clone();
                m.insert("type".into(), Value::String(kind.clone()));
                Value::Object(m)
            }
            // Our own variants serialize to objects with string keys: this cannot fail.
            other => serde_json::to_value(other).unwrap_or(Value::Null),
        }
    }

    /// The event as JSON text.
    pub fn to_json(&self) -> String {
        self.to_value().to_string()
    }
}

/// Reads one event: an unknown type is kept, a known type with a bad body is an error.
pub fn decode_event(frame: &[u8], limits: Limits) -> Result<AguiEvent, Error> {
    let obj = parse_object(frame, limits)?;
    let kind = match obj.get("type") {
        Some(Json::String(t)) => t.to_string(),
        _ => return Err(Error::MissingType),
    };
    from_map(&kind, obj.to_serde())
}

/// An event from its object (`type` included), as [`decode_event`] reads it.
pub(crate) fn from_map(kind: &str, mut data: Map<String, Value>) -> Result<AguiEvent, Error> {
    if !KNOWN_TYPES.contains(&kind) {
        data.remove("type");
        return Ok(AguiEvent::Unknown {
            kind: kind.to_string(),
            data,
        });
    }
    serde_json::from_value(Value::Object(data)).map_err(|e| bad(kind, &e))
}
