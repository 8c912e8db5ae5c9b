//! Reading a tool's arguments object, with errors that name the field.

use serde_json::{Map, Value};

/// The model's arguments object. Unknown fields are ignored: models add fields the schema does
/// not have, and refusing them would only cost a retry.
pub(crate) struct Args<'a> {
    fields: Option<&'a Map<String, Value>>,
}

impl<'a> Args<'a> {
    /// Accepts an object, or `null` for a call without arguments.
    pub(crate) fn new(value: &'a Value) -> Result<Self, String> {
        match value {
            Value::Object(map) => Ok(Args { fields: Some(map) }),
            Value::Null => Ok(Args { fields: None }),
            other => Err(format!(
                "arguments must be a JSON object, got {}",
                kind(other)
            )),
        }
    }

    /// A required string field.
    pub(crate) fn str(&self, name: &str) -> Result<&'a str, String> {
        self.opt_str(name)?
            .ok_or_else(|| format!("missing required field \"{name}\" (a string)"))
    }

    /// An optional string field; `null` counts as absent.
    pub(crate) fn opt_str(&self, name: &str) -> Result<Option<&'a str>, String> {
        match self.fields.and_then(|f| f.get(name)) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(format!(
                "field \"{name}\" must be a string, got {}",
                kind(other)
            )),
        }
    }
}

/// The JSON type of a value, for error messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
