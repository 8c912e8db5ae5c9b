//! Reading a stored run (its checkpoint) and a session's state from a `serde_json::Value` by
//! hand, as serde's derives would read them: the same fields, the same defaults for fields an
//! older build did not write, unknown fields ignored, a wrong type an error naming the field.
//! Serde's derives, read through serde_json's `Value` deserializer, cost the Worker 33.8 KiB
//! of its compressed upload for these types; these readers cost half of that (measured
//! 2026-11-28). The derives stay, as the reference the tests hold these readers to.

use std::collections::{BTreeSet, VecDeque};

use serde_json::{Map, Value};

/// A read that failed: what and where.
pub(crate) type Read<T> = Result<T, String>;

/// A value read from its JSON, as its `Deserialize` reads it.
pub(crate) trait FromValue: Sized {
    fn from_value(v: &Value) -> Read<Self>;

    /// The value of a field that is not there: serde's derives take `None` for an `Option`,
    /// and refuse anything else.
    fn missing() -> Option<Self> {
        None
    }
}

fn wrong(want: &str, v: &Value) -> String {
    let got = match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    format!("expected {want}, found {got}")
}

impl FromValue for String {
    fn from_value(v: &Value) -> Read<Self> {
        v.as_str()
            .map(str::to_owned)
            .ok_or_else(|| wrong("a string", v))
    }
}

impl FromValue for bool {
    fn from_value(v: &Value) -> Read<Self> {
        v.as_bool().ok_or_else(|| wrong("a boolean", v))
    }
}

impl FromValue for u64 {
    fn from_value(v: &Value) -> Read<Self> {
        v.as_u64().ok_or_else(|| wrong("an unsigned integer", v))
    }
}

impl FromValue for u32 {
    fn from_value(v: &Value) -> Read<Self> {
        u32::try_from(u64::from_value(v)?).map_err(|_| "integer out of range".to_owned())
    }
}

impl FromValue for usize {
    fn from_value(v: &Value) -> Read<Self> {
        usize::try_from(u64::from_value(v)?).map_err(|_| "integer out of range".to_owned())
    }
}

impl FromValue for i64 {
    fn from_value(v: &Value) -> Read<Self> {
        v.as_i64().ok_or_else(|| wrong("an integer", v))
    }
}

impl FromValue for f64 {
    fn from_value(v: &Value) -> Read<Self> {
        v.as_f64().ok_or_else(|| wrong("a number", v))
    }
}

impl FromValue for f32 {
    fn from_value(v: &Value) -> Read<Self> {
        // As serde reads an `f32` from a JSON number: the nearest `f32` to it.
        #[allow(clippy::cast_possible_truncation)]
        f64::from_value(v).map(|n| n as f32)
    }
}

impl FromValue for Value {
    fn from_value(v: &Value) -> Read<Self> {
        Ok(v.clone())
    }
}

impl FromValue for weft_protocol::json::RawJson {
    fn from_value(v: &Value) -> Read<Self> {
        Ok(weft_protocol::json::RawJson::from_value(v))
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Read<Self> {
        match v {
            Value::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }

    fn missing() -> Option<Self> {
        Some(None)
    }
}

/// The items of an array, the first that does not read named by its index.
fn items<T: FromValue>(v: &Value) -> Read<impl Iterator<Item = Read<T>> + '_> {
    let items = v.as_array().ok_or_else(|| wrong("an array", v))?;
    Ok(items
        .iter()
        .enumerate()
        .map(|(n, item)| T::from_value(item).map_err(|e| format!("[{n}]: {e}"))))
}

impl<T: FromValue> FromValue for Vec<T> {
    fn from_value(v: &Value) -> Read<Self> {
        items(v)?.collect()
    }
}

impl<T: FromValue> FromValue for VecDeque<T> {
    fn from_value(v: &Value) -> Read<Self> {
        items(v)?.collect()
    }
}

impl FromValue for BTreeSet<String> {
    fn from_value(v: &Value) -> Read<Self> {
        items(v)?.collect()
    }
}

impl FromValue for (usize, usize) {
    fn from_value(v: &Value) -> Read<Self> {
        match v.as_array().map(Vec::as_slice) {
            Some([a, b]) => Ok((usize::from_value(a)?, usize::from_value(b)?)),
            _ => Err(wrong("an array of two", v)),
        }
    }
}

/// The fields of a JSON object being read into `kind`.
pub(crate) struct Fields<'a> {
    kind: &'static str,
    map: &'a Map<String, Value>,
}

impl<'a> Fields<'a> {
    pub(crate) fn of(kind: &'static str, v: &'a Value) -> Read<Self> {
        match v {
            Value::Object(map) => Ok(Fields { kind, map }),
            v => Err(format!("{kind}: {}", wrong("an object", v))),
        }
    }

    pub(crate) fn get(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name)
    }

    /// A field without a default: there (or an `Option`), and of its type.
    pub(crate) fn req<T: FromValue>(&self, name: &str) -> Read<T> {
        match self.map.get(name) {
            Some(v) => T::from_value(v).map_err(|e| self.err(name, &e)),
            None => T::missing().ok_or_else(|| format!("{}: missing field `{name}`", self.kind)),
        }
    }

    /// A field with `#[serde(default)]`: its type's default when it is not there.
    pub(crate) fn or_default<T: FromValue + Default>(&self, name: &str) -> Read<T> {
        self.or(name, T::default())
    }

    /// A field that takes `default` when it is not there.
    pub(crate) fn or<T: FromValue>(&self, name: &str, default: T) -> Read<T> {
        match self.map.get(name) {
            Some(v) => T::from_value(v).map_err(|e| self.err(name, &e)),
            None => Ok(default),
        }
    }

    pub(crate) fn err(&self, name: &str, problem: &str) -> String {
        format!("{}.{name}: {problem}", self.kind)
    }
}

/// An enum as serde writes one by default: a unit variant as its name, a variant with fields
/// as `{"Name": {fields}}`. The variant's name, and its fields when it has them.
pub(crate) fn variant<'a>(kind: &str, v: &'a Value) -> Read<(&'a str, Option<&'a Value>)> {
    match v {
        Value::String(name) => Ok((name, None)),
        Value::Object(map) if map.len() == 1 => {
            let (name, fields) = map.iter().next().ok_or_else(|| format!("{kind}: empty"))?;
            // `{"Name": null}` is a unit variant too, as serde reads it.
            Ok((name, Some(fields).filter(|f| !f.is_null())))
        }
        v => Err(format!(
            "{kind}: {}",
            wrong("a variant name or {name: fields}", v)
        )),
    }
}

/// A variant name this build does not know.
pub(crate) fn unknown_variant(kind: &str, name: &str) -> String {
    format!("{kind}: unknown variant `{name}`")
}

impl FromValue for weft_protocol::Usage {
    fn from_value(v: &Value) -> Read<Self> {
        let f = Fields::of("usage", v)?;
        Ok(weft_protocol::Usage {
            prompt_tokens: f.req("prompt_tokens")?,
            completion_tokens: f.req("completion_tokens")?,
            total_tokens: f.req("total_tokens")?,
        })
    }
}

impl FromValue for weft_protocol::Sequencer {
    fn from_value(v: &Value) -> Read<Self> {
        let f = Fields::of("seq", v)?;
        Ok(weft_protocol::Sequencer {
            session_id: f.req("session_id")?,
            run_id: f.req("run_id")?,
            last_event_id: f.req("last_event_id")?,
            spans: f.req("spans")?,
            node_id: f.req("node_id")?,
        })
    }
}
