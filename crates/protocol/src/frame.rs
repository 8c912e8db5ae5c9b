//! Turning raw WebSocket frames into JSON objects, within limits.
//!
//! Both text and binary frames carry UTF-8 JSON (loom §2); binary ones are validated here so a
//! bad byte is a typed error, not a panic or a lossy replacement. Nesting depth is bounded by
//! serde_json's recursion limit (128), which also bounds the recursion of dropping the value.

use alloc::string::ToString;
use serde_json::{Map, Value};

use crate::Error;

/// Bounds on what a peer may send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted frame, in bytes. Default 1 MiB.
    pub max_frame_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_frame_bytes: 1024 * 1024,
        }
    }
}

/// Parses one frame (text, or binary holding UTF-8) into its JSON object.
pub fn parse_object(
    frame: &[u8],
    limits: Limits,
) -> Result<Map<alloc::string::String, Value>, Error> {
    if frame.len() > limits.max_frame_bytes {
        return Err(Error::TooLarge {
            len: frame.len(),
            max: limits.max_frame_bytes,
        });
    }
    let text = core::str::from_utf8(frame).map_err(|e| Error::InvalidUtf8 {
        valid_up_to: e.valid_up_to(),
    })?;
    let value: Value = serde_json::from_str(text).map_err(|e| Error::InvalidJson {
        message: e.to_string(),
    })?;
    match value {
        Value::Object(map) => Ok(map),
        other => Err(Error::NotAnObject {
            found: json_type(&other),
        }),
    }
}

/// The JSON type name of a value, for error messages.
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
