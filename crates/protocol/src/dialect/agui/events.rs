//! Every AG-UI 1.0 event, and reading one.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::field::{Fields, FromJson, Lenient};
use crate::frame::{parse_object, Limits};
use crate::json::{Json, Object};
use crate::Error;

use super::Message;

/// Every event type of AG-UI 1.0, with the fields `@ag-ui/core`'s schemas define (the common
/// `timestamp`, `rawEvent`, `metadata` and `subagentRunId` are passed over when read).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AguiEvent {
    #[serde(rename_all = "camelCase")]
    TextMessageStart {
        message_id: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        role: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
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
        #[serde(skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        role: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        delta: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    ToolCallStart {
        tool_call_id: String,
        tool_call_name: String,
        #[serde(skip_serializing_if = "Option::is_none")]
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
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_call_id: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_call_name: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_message_id: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        delta: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    ToolCallResult {
        message_id: String,
        tool_call_id: String,
        /// Text, or an array of content parts.
        content: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
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
        #[serde(skip_serializing_if = "Option::is_none")]
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
        #[serde(skip_serializing_if = "Option::is_none")]
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
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        input: Option<Value>,
    },
    #[serde(rename_all = "camelCase")]
    RunFinished {
        thread_id: String,
        run_id: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        outcome: Option<Outcome>,
        #[serde(skip_serializing_if = "Option::is_none")]
        usage: Option<Vec<Value>>,
    },
    RunError {
        message: String,
        #[serde(skip_serializing_if = "Option::is_none")]
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
        #[serde(skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Outcome {
    #[serde(rename_all = "camelCase")]
    Success {
        #[serde(skip_serializing_if = "Option::is_none")]
        pending_tool_call_ids: Option<Vec<String>>,
    },
    Interrupt {
        interrupts: Vec<Interrupt>,
    },
    Cancelled,
}

/// What a run waits for (`InterruptSchema`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Interrupt {
    pub id: String,
    /// weft writes `tool_call`.
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
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
        String::from(self.type_name())
    }

    /// The event's `type`, borrowed.
    pub fn type_name(&self) -> &str {
        match self {
            AguiEvent::TextMessageStart { .. } => "TEXT_MESSAGE_START",
            AguiEvent::TextMessageContent { .. } => "TEXT_MESSAGE_CONTENT",
            AguiEvent::TextMessageEnd { .. } => "TEXT_MESSAGE_END",
            AguiEvent::TextMessageChunk { .. } => "TEXT_MESSAGE_CHUNK",
            AguiEvent::ToolCallStart { .. } => "TOOL_CALL_START",
            AguiEvent::ToolCallArgs { .. } => "TOOL_CALL_ARGS",
            AguiEvent::ToolCallEnd { .. } => "TOOL_CALL_END",
            AguiEvent::ToolCallChunk { .. } => "TOOL_CALL_CHUNK",
            AguiEvent::ToolCallResult { .. } => "TOOL_CALL_RESULT",
            AguiEvent::StateSnapshot { .. } => "STATE_SNAPSHOT",
            AguiEvent::StateDelta { .. } => "STATE_DELTA",
            AguiEvent::MessagesSnapshot { .. } => "MESSAGES_SNAPSHOT",
            AguiEvent::ActivitySnapshot { .. } => "ACTIVITY_SNAPSHOT",
            AguiEvent::ActivityDelta { .. } => "ACTIVITY_DELTA",
            AguiEvent::Raw { .. } => "RAW",
            AguiEvent::Custom { .. } => "CUSTOM",
            AguiEvent::RunStarted { .. } => "RUN_STARTED",
            AguiEvent::RunFinished { .. } => "RUN_FINISHED",
            AguiEvent::RunError { .. } => "RUN_ERROR",
            AguiEvent::StepStarted { .. } => "STEP_STARTED",
            AguiEvent::StepFinished { .. } => "STEP_FINISHED",
            AguiEvent::ReasoningStart { .. } => "REASONING_START",
            AguiEvent::ReasoningMessageStart { .. } => "REASONING_MESSAGE_START",
            AguiEvent::ReasoningMessageContent { .. } => "REASONING_MESSAGE_CONTENT",
            AguiEvent::ReasoningMessageEnd { .. } => "REASONING_MESSAGE_END",
            AguiEvent::ReasoningMessageChunk { .. } => "REASONING_MESSAGE_CHUNK",
            AguiEvent::ReasoningEnd { .. } => "REASONING_END",
            AguiEvent::ReasoningEncryptedValue { .. } => "REASONING_ENCRYPTED_VALUE",
            AguiEvent::Unknown { kind, .. } => kind,
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
        Some(Json::String(t)) => t.as_ref(),
        _ => return Err(Error::MissingType),
    };
    from_object(kind, &obj)
}

/// An event from its object (`type` included), as [`decode_event`] reads it.
///
/// Read field by field on the protocol's own tree rather than by serde's derive: an
/// internally tagged enum's derived reader buffers every event through serde's `Content` and
/// brings its own copy of every field's reader, which made the Worker's AG-UI client 55 KB of
/// gzip (its call of a remote agent alone 98 KB of code). It accepts what that derive accepted
/// from an object — unknown fields passed over, an optional field absent or `null`, a field of
/// any JSON (`content`, `snapshot`, `value`, `event`) required but `null` allowed — and names
/// the field that is wrong.
pub(crate) fn from_object(kind: &str, obj: &Object<'_>) -> Result<AguiEvent, Error> {
    if !KNOWN_TYPES.contains(&kind) {
        let mut data = obj.to_serde();
        data.remove("type");
        return Ok(AguiEvent::Unknown {
            kind: kind.to_string(),
            data,
        });
    }
    let f = Fields::new(kind, obj);
    let l = Lenient::new(f);
    let s = |name: &str| l.req::<String>(name);
    let o = |name: &str| l.opt::<String>(name);
    let any = |name: &str| l.keep(present(f, name));
    let event = match kind {
        "TEXT_MESSAGE_START" => AguiEvent::TextMessageStart {
            message_id: s("messageId"),
            role: o("role"),
            name: o("name"),
        },
        "TEXT_MESSAGE_CONTENT" => AguiEvent::TextMessageContent {
            message_id: s("messageId"),
            delta: s("delta"),
        },
        "TEXT_MESSAGE_END" => AguiEvent::TextMessageEnd {
            message_id: s("messageId"),
        },
        "TEXT_MESSAGE_CHUNK" => AguiEvent::TextMessageChunk {
            message_id: o("messageId"),
            role: o("role"),
            delta: o("delta"),
            name: o("name"),
        },
        "TOOL_CALL_START" => AguiEvent::ToolCallStart {
            tool_call_id: s("toolCallId"),
            tool_call_name: s("toolCallName"),
            parent_message_id: o("parentMessageId"),
        },
        "TOOL_CALL_ARGS" => AguiEvent::ToolCallArgs {
            tool_call_id: s("toolCallId"),
            delta: s("delta"),
        },
        "TOOL_CALL_END" => AguiEvent::ToolCallEnd {
            tool_call_id: s("toolCallId"),
        },
        "TOOL_CALL_CHUNK" => AguiEvent::ToolCallChunk {
            tool_call_id: o("toolCallId"),
            tool_call_name: o("toolCallName"),
            parent_message_id: o("parentMessageId"),
            delta: o("delta"),
        },
        "TOOL_CALL_RESULT" => AguiEvent::ToolCallResult {
            message_id: s("messageId"),
            tool_call_id: s("toolCallId"),
            content: any("content"),
            role: o("role"),
        },
        "STATE_SNAPSHOT" => AguiEvent::StateSnapshot {
            snapshot: any("snapshot"),
        },
        "STATE_DELTA" => AguiEvent::StateDelta {
            delta: l.req("delta"),
        },
        "MESSAGES_SNAPSHOT" => AguiEvent::MessagesSnapshot {
            messages: l.keep(messages(f)),
        },
        "ACTIVITY_SNAPSHOT" => AguiEvent::ActivitySnapshot {
            message_id: s("messageId"),
            activity_type: s("activityType"),
            content: l.req("content"),
            replace: l.opt("replace"),
        },
        "ACTIVITY_DELTA" => AguiEvent::ActivityDelta {
            message_id: s("messageId"),
            activity_type: s("activityType"),
            patch: l.req("patch"),
        },
        "RAW" => AguiEvent::Raw {
            event: any("event"),
            source: o("source"),
        },
        "CUSTOM" => AguiEvent::Custom {
            name: s("name"),
            value: any("value"),
        },
        "RUN_STARTED" => AguiEvent::RunStarted {
            thread_id: s("threadId"),
            run_id: s("runId"),
            parent_run_id: o("parentRunId"),
            input: l.opt("input"),
        },
        "RUN_FINISHED" => AguiEvent::RunFinished {
            thread_id: s("threadId"),
            run_id: s("runId"),
            result: l.opt("result"),
            outcome: l.opt_object("outcome", outcome),
            usage: l.opt("usage"),
        },
        "RUN_ERROR" => AguiEvent::RunError {
            message: s("message"),
            code: o("code"),
        },
        "STEP_STARTED" => AguiEvent::StepStarted {
            step_name: s("stepName"),
        },
        "STEP_FINISHED" => AguiEvent::StepFinished {
            step_name: s("stepName"),
        },
        "REASONING_START" => AguiEvent::ReasoningStart {
            message_id: s("messageId"),
        },
        "REASONING_MESSAGE_START" => AguiEvent::ReasoningMessageStart {
            message_id: s("messageId"),
            role: s("role"),
        },
        "REASONING_MESSAGE_CONTENT" => AguiEvent::ReasoningMessageContent {
            message_id: s("messageId"),
            delta: s("delta"),
        },
        "REASONING_MESSAGE_END" => AguiEvent::ReasoningMessageEnd {
            message_id: s("messageId"),
        },
        "REASONING_MESSAGE_CHUNK" => AguiEvent::ReasoningMessageChunk {
            message_id: o("messageId"),
            delta: o("delta"),
        },
        "REASONING_END" => AguiEvent::ReasoningEnd {
            message_id: s("messageId"),
        },
        // KNOWN_TYPES holds nothing else.
        _ => AguiEvent::ReasoningEncryptedValue {
            subtype: s("subtype"),
            entity_id: s("entityId"),
            encrypted_value: s("encryptedValue"),
        },
    };
    l.finish(event)
}

/// A field of any JSON that must be there, `null` included (as serde reads a `Value` field).
fn present(f: Fields<'_>, name: &str) -> Result<Value, Error> {
    match f.map().get(name) {
        Some(v) => Ok(v.to_serde()),
        None => Err(f.err(name, "is required (any JSON value)")),
    }
}

/// `MESSAGES_SNAPSHOT`'s messages, by the reader `RunAgentInput`'s messages already link.
fn messages(f: Fields<'_>) -> Result<Vec<Message>, Error> {
    let v = f.map().get("messages").map_or(Value::Null, Json::to_serde);
    serde_json::from_value(v).map_err(|e| f.err("messages", e.to_string()))
}

/// `RUN_FINISHED`'s `outcome`, tagged by its `type`.
fn outcome(f: Fields<'_>) -> Result<Outcome, Error> {
    let kind: String = f.req("type")?;
    match kind.as_str() {
        "success" => Ok(Outcome::Success {
            pending_tool_call_ids: f.opt("pendingToolCallIds")?,
        }),
        "interrupt" => Ok(Outcome::Interrupt {
            interrupts: f.objects("interrupts", interrupt)?,
        }),
        "cancelled" => Ok(Outcome::Cancelled),
        other => Err(f.err(
            "type",
            crate::text::concat(&[
                "is `",
                other,
                "`, not one of `success`, `interrupt`, `cancelled`",
            ]),
        )),
    }
}

fn interrupt(f: Fields<'_>) -> Result<Interrupt, Error> {
    let l = Lenient::new(f);
    let interrupt = Interrupt {
        id: l.req("id"),
        reason: l.req("reason"),
        message: l.opt("message"),
        tool_call_id: l.opt("toolCallId"),
        response_schema: l.opt("responseSchema"),
        expires_at: l.opt("expiresAt"),
        metadata: l.opt("metadata"),
    };
    l.finish(interrupt)
}

/// A field of any JSON, as serde_json's `Value` (what the event types carry).
impl FromJson for Value {
    const EXPECTED: &'static str = "any JSON value";
    fn from_json(v: &Json<'_>) -> Result<Self, String> {
        Ok(v.to_serde())
    }
}

impl FromJson for Map<String, Value> {
    const EXPECTED: &'static str = "an object";
    fn from_json(v: &Json<'_>) -> Result<Self, String> {
        match v {
            Json::Object(o) => Ok(o.to_serde()),
            other => Err(crate::text::concat(&[
                "must be an object, found ",
                other.type_name(),
            ])),
        }
    }
}
