//! Every AG-UI 1.0 event, and reading one.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value};

use crate::field::{Fields, FromJson, Lenient};
use crate::frame::{parse_object, Limits};
use crate::json::{Json, Object};
use crate::Error;

use super::Message;

/// Every event type of AG-UI 1.0, with the fields `@ag-ui/core`'s schemas define (the common
/// `timestamp`, `rawEvent`, `metadata` and `subagentRunId` are passed over when read).
#[derive(Debug, Clone, PartialEq)]
pub enum AguiEvent {
    TextMessageStart {
        message_id: String,
        role: Option<String>,
        name: Option<String>,
    },
    TextMessageContent {
        message_id: String,
        delta: String,
    },
    TextMessageEnd {
        message_id: String,
    },
    TextMessageChunk {
        message_id: Option<String>,
        role: Option<String>,
        delta: Option<String>,
        name: Option<String>,
    },
    ToolCallStart {
        tool_call_id: String,
        tool_call_name: String,
        parent_message_id: Option<String>,
    },
    ToolCallArgs {
        tool_call_id: String,
        delta: String,
    },
    ToolCallEnd {
        tool_call_id: String,
    },
    ToolCallChunk {
        tool_call_id: Option<String>,
        tool_call_name: Option<String>,
        parent_message_id: Option<String>,
        delta: Option<String>,
    },
    ToolCallResult {
        message_id: String,
        tool_call_id: String,
        /// Text, or an array of content parts.
        content: Value,
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
    ActivitySnapshot {
        message_id: String,
        activity_type: String,
        content: Map<String, Value>,
        replace: Option<bool>,
    },
    ActivityDelta {
        message_id: String,
        activity_type: String,
        patch: Vec<Value>,
    },
    Raw {
        event: Value,
        source: Option<String>,
    },
    Custom {
        name: String,
        value: Value,
    },
    RunStarted {
        thread_id: String,
        run_id: String,
        parent_run_id: Option<String>,
        input: Option<Value>,
    },
    RunFinished {
        thread_id: String,
        run_id: String,
        result: Option<Value>,
        outcome: Option<Outcome>,
        usage: Option<Vec<Value>>,
    },
    RunError {
        message: String,
        code: Option<String>,
    },
    StepStarted {
        step_name: String,
    },
    StepFinished {
        step_name: String,
    },
    ReasoningStart {
        message_id: String,
    },
    ReasoningMessageStart {
        message_id: String,
        role: String,
    },
    ReasoningMessageContent {
        message_id: String,
        delta: String,
    },
    ReasoningMessageEnd {
        message_id: String,
    },
    ReasoningMessageChunk {
        message_id: Option<String>,
        delta: Option<String>,
    },
    ReasoningEnd {
        message_id: String,
    },
    ReasoningEncryptedValue {
        /// `tool-call` or `message`.
        subtype: String,
        entity_id: String,
        encrypted_value: String,
    },
    /// A type this version does not know, kept whole: `data` is every field but `type`.
    Unknown {
        kind: String,
        data: Map<String, Value>,
    },
}

/// How a run finished (`RunFinishedOutcomeSchema`).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Success {
        pending_tool_call_ids: Option<Vec<String>>,
    },
    Interrupt {
        interrupts: Vec<Interrupt>,
    },
    Cancelled,
}

/// What a run waits for (`InterruptSchema`).
#[derive(Debug, Clone, PartialEq)]
pub struct Interrupt {
    pub id: String,
    /// weft writes `tool_call`.
    pub reason: String,
    pub message: Option<String>,
    pub tool_call_id: Option<String>,
    pub response_schema: Option<Value>,
    pub expires_at: Option<String>,
    pub metadata: Option<Value>,
}

impl Outcome {
    /// `{type, …}` as `RunFinishedOutcomeSchema` writes it.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        let kind = match self {
            Outcome::Success {
                pending_tool_call_ids,
            } => {
                if let Some(ids) = pending_tool_call_ids {
                    let ids = ids.iter().cloned().map(Value::String).collect();
                    m.insert("pendingToolCallIds".into(), Value::Array(ids));
                }
                "success"
            }
            Outcome::Interrupt { interrupts } => {
                let list = interrupts.iter().map(Interrupt::to_value).collect();
                m.insert("interrupts".into(), Value::Array(list));
                "interrupt"
            }
            Outcome::Cancelled => "cancelled",
        };
        m.insert("type".into(), Value::String(kind.into()));
        Value::Object(m)
    }
}

impl Interrupt {
    /// The interrupt as `InterruptSchema` writes it (an unset field left out).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), Value::String(self.id.clone()));
        m.insert("reason".into(), Value::String(self.reason.clone()));
        let texts = [
            ("message", &self.message),
            ("toolCallId", &self.tool_call_id),
            ("expiresAt", &self.expires_at),
        ];
        for (key, value) in texts {
            if let Some(v) = value {
                m.insert(key.into(), Value::String(v.clone()));
            }
        }
        for (key, value) in [
            ("responseSchema", &self.response_schema),
            ("metadata", &self.metadata),
        ] {
            if let Some(v) = value {
                m.insert(key.into(), v.clone());
            }
        }
        Value::Object(m)
    }
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

    /// The event as its JSON object: `type` and its fields, an optional one only when set.
    /// Built member by member rather than by serde's derive (11 KB of the Worker's code for
    /// what a map's inserts say).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        let put = |m: &mut Map<String, Value>, key: &str, value: Value| {
            m.insert(String::from(key), value);
        };
        let text = |m: &mut Map<String, Value>, key: &str, value: &String| {
            put(m, key, Value::String(value.clone()));
        };
        let opt = |m: &mut Map<String, Value>, key: &str, value: &Option<String>| {
            if let Some(v) = value {
                text(m, key, v);
            }
        };
        let list = |values: &[Value]| Value::Array(values.to_vec());
        match self {
            AguiEvent::TextMessageStart {
                message_id,
                role,
                name,
            } => {
                text(&mut m, "messageId", message_id);
                opt(&mut m, "role", role);
                opt(&mut m, "name", name);
            }
            AguiEvent::TextMessageContent { message_id, delta }
            | AguiEvent::ReasoningMessageContent { message_id, delta } => {
                text(&mut m, "messageId", message_id);
                text(&mut m, "delta", delta);
            }
            AguiEvent::TextMessageEnd { message_id }
            | AguiEvent::ReasoningStart { message_id }
            | AguiEvent::ReasoningMessageEnd { message_id }
            | AguiEvent::ReasoningEnd { message_id } => text(&mut m, "messageId", message_id),
            AguiEvent::TextMessageChunk {
                message_id,
                role,
                delta,
                name,
            } => {
                opt(&mut m, "messageId", message_id);
                opt(&mut m, "role", role);
                opt(&mut m, "delta", delta);
                opt(&mut m, "name", name);
            }
            AguiEvent::ToolCallStart {
                tool_call_id,
                tool_call_name,
                parent_message_id,
            } => {
                text(&mut m, "toolCallId", tool_call_id);
                text(&mut m, "toolCallName", tool_call_name);
                opt(&mut m, "parentMessageId", parent_message_id);
            }
            AguiEvent::ToolCallArgs {
                tool_call_id,
                delta,
            } => {
                text(&mut m, "toolCallId", tool_call_id);
                text(&mut m, "delta", delta);
            }
            AguiEvent::ToolCallEnd { tool_call_id } => text(&mut m, "toolCallId", tool_call_id),
            AguiEvent::ToolCallChunk {
                tool_call_id,
                tool_call_name,
                parent_message_id,
                delta,
            } => {
                opt(&mut m, "toolCallId", tool_call_id);
                opt(&mut m, "toolCallName", tool_call_name);
                opt(&mut m, "parentMessageId", parent_message_id);
                opt(&mut m, "delta", delta);
            }
            AguiEvent::ToolCallResult {
                message_id,
                tool_call_id,
                content,
                role,
            } => {
                text(&mut m, "messageId", message_id);
                text(&mut m, "toolCallId", tool_call_id);
                put(&mut m, "content", content.clone());
                opt(&mut m, "role", role);
            }
            AguiEvent::StateSnapshot { snapshot } => put(&mut m, "snapshot", snapshot.clone()),
            AguiEvent::StateDelta { delta } => put(&mut m, "delta", list(delta)),
            AguiEvent::MessagesSnapshot { messages } => {
                let messages = messages.iter().map(super::message_value).collect();
                put(&mut m, "messages", Value::Array(messages));
            }
            AguiEvent::ActivitySnapshot {
                message_id,
                activity_type,
                content,
                replace,
            } => {
                text(&mut m, "messageId", message_id);
                text(&mut m, "activityType", activity_type);
                put(&mut m, "content", Value::Object(content.clone()));
                if let Some(r) = replace {
                    put(&mut m, "replace", Value::Bool(*r));
                }
            }
            AguiEvent::ActivityDelta {
                message_id,
                activity_type,
                patch,
            } => {
                text(&mut m, "messageId", message_id);
                text(&mut m, "activityType", activity_type);
                put(&mut m, "patch", list(patch));
            }
            AguiEvent::Raw { event, source } => {
                put(&mut m, "event", event.clone());
                opt(&mut m, "source", source);
            }
            AguiEvent::Custom { name, value } => {
                text(&mut m, "name", name);
                put(&mut m, "value", value.clone());
            }
            AguiEvent::RunStarted {
                thread_id,
                run_id,
                parent_run_id,
                input,
            } => {
                text(&mut m, "threadId", thread_id);
                text(&mut m, "runId", run_id);
                opt(&mut m, "parentRunId", parent_run_id);
                if let Some(i) = input {
                    put(&mut m, "input", i.clone());
                }
            }
            AguiEvent::RunFinished {
                thread_id,
                run_id,
                result,
                outcome,
                usage,
            } => {
                text(&mut m, "threadId", thread_id);
                text(&mut m, "runId", run_id);
                if let Some(r) = result {
                    put(&mut m, "result", r.clone());
                }
                if let Some(o) = outcome {
                    put(&mut m, "outcome", o.to_value());
                }
                if let Some(u) = usage {
                    put(&mut m, "usage", list(u));
                }
            }
            AguiEvent::RunError { message, code } => {
                text(&mut m, "message", message);
                opt(&mut m, "code", code);
            }
            AguiEvent::StepStarted { step_name } | AguiEvent::StepFinished { step_name } => {
                text(&mut m, "stepName", step_name);
            }
            AguiEvent::ReasoningMessageStart { message_id, role } => {
                text(&mut m, "messageId", message_id);
                text(&mut m, "role", role);
            }
            AguiEvent::ReasoningMessageChunk { message_id, delta } => {
                opt(&mut m, "messageId", message_id);
                opt(&mut m, "delta", delta);
            }
            AguiEvent::ReasoningEncryptedValue {
                subtype,
                entity_id,
                encrypted_value,
            } => {
                text(&mut m, "subtype", subtype);
                text(&mut m, "entityId", entity_id);
                text(&mut m, "encryptedValue", encrypted_value);
            }
            AguiEvent::Unknown { data, .. } => m.clone_from(data),
        }
        put(
            &mut m,
            "type",
            Value::String(String::from(self.type_name())),
        );
        Value::Object(m)
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
            messages: l.objects("messages", super::message),
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

pub(super) fn interrupt(f: Fields<'_>) -> Result<Interrupt, Error> {
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
