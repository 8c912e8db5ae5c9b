//! [`RawJson`]: the fields that carry arbitrary JSON, kept as text.

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::String;
use core::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{parse, Json, Number, Object};
use crate::sorted::SortedMap;

/// Any JSON value — tool arguments, agent state, error details, a tool's input schema, the body
/// of an event of an unknown type — kept as its text in one canonical form: the text serde_json
/// writes for the value serde_json reads (compact, keys sorted with the last of repeated ones
/// kept, numbers as serde_json writes them). So two values are equal exactly when their texts
/// are, and it serializes to the same bytes a `serde_json::Value` would.
///
/// Why not `serde_json::Value`: a client only passes these values through — to the app, as JSON
/// — and building a `Value` costs a `BTreeMap` per object and the map's code (5.7 KB gzip of the
/// browser SDK's wasm, measured when this replaced it). Servers that look inside convert with
/// [`RawJson::to_value`].
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RawJson(Box<str>);

impl RawJson {
    pub fn null() -> Self {
        RawJson(Box::from("null"))
    }

    pub fn empty_object() -> Self {
        RawJson(Box::from("{}"))
    }

    /// The JSON string holding `text`.
    pub fn string(text: &str) -> Self {
        let mut out = String::with_capacity(text.len() + 2);
        write_str(&mut out, text);
        RawJson(out.into_boxed_str())
    }

    /// The canonical text of a value read by [`parse`].
    pub fn from_tree(value: &Json<'_>) -> Self {
        let mut out = String::new();
        write(&mut out, value);
        RawJson(out.into_boxed_str())
    }

    /// The canonical text of an object read by [`parse`], but for the members named in `skip`.
    pub fn from_object(object: &Object<'_>, skip: &[&str]) -> Self {
        let mut out = String::new();
        write_object(&mut out, object, skip);
        RawJson(out.into_boxed_str())
    }

    /// The text of `text` if it is JSON, in canonical form.
    pub fn parse(text: &str) -> Option<Self> {
        // Text a weft server wrote is canonical already: kept, not read and written again.
        if super::canonical::is_canonical(text) {
            return Some(RawJson(Box::from(text)));
        }
        parse(text).ok().map(|tree| RawJson::from_tree(&tree))
    }

    /// serde_json's text of `value`, which is the canonical form.
    pub fn from_value(value: &serde_json::Value) -> Self {
        RawJson::from_tree(&Json::from_serde(value))
    }

    /// The value as serde_json's `Value`, for code that looks inside.
    pub fn to_value(&self) -> serde_json::Value {
        self.tree().to_serde()
    }

    /// The value as a tree borrowing from the text.
    pub fn tree(&self) -> Json<'_> {
        // Every constructor writes JSON the reader accepts (tests hold writer and reader to
        // each other), so the fallback is never taken.
        parse(&self.0).unwrap_or(Json::Null)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_null(&self) -> bool {
        &*self.0 == "null"
    }
}

impl Default for RawJson {
    fn default() -> Self {
        RawJson::null()
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<serde_json::Value> for RawJson {
    fn from(value: serde_json::Value) -> Self {
        RawJson::from_value(&value)
    }
}

impl From<&serde_json::Value> for RawJson {
    fn from(value: &serde_json::Value) -> Self {
        RawJson::from_value(value)
    }
}

/// Written as the value it holds, not as a string.
impl Serialize for RawJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.tree().serialize(s)
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde_json::Value::deserialize(d).map(|v| RawJson::from_value(&v))
    }
}

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(Number::PosInt(n)) => s.serialize_u64(*n),
            Json::Number(Number::NegInt(n)) => s.serialize_i64(*n),
            Json::Number(Number::Float(f)) => s.serialize_f64(*f),
            Json::String(text) => s.serialize_str(text),
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(o) => {
                let members = o.canonical();
                let mut map = s.serialize_map(Some(members.len()))?;
                for (k, v) in members {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'a> Object<'a> {
    /// The members as serde_json's map holds them: sorted by key, the last of repeated keys.
    pub(crate) fn canonical(&self) -> SortedMap<&str, &Json<'a>> {
        let mut members = SortedMap::new();
        for (k, v) in &self.0 {
            members.insert(k.as_ref(), v);
        }
        members
    }
}

/// Appends the canonical text of `value`.
fn write(out: &mut String, value: &Json<'_>) {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(true) => out.push_str("true"),
        Json::Bool(false) => out.push_str("false"),
        Json::Number(Number::PosInt(n)) => out.push_str(&crate::text::uint(*n)),
        Json::Number(Number::NegInt(n)) => out.push_str(&crate::text::int(*n)),
        Json::Number(Number::Float(f)) => out.push_str(&super::float(*f)),
        Json::String(text) => write_str(out, text),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(out, item);
            }
            out.push(']');
        }
        Json::Object(o) => write_object(out, o, &[]),
    }
}

fn write_object(out: &mut String, object: &Object<'_>, skip: &[&str]) {
    out.push('{');
    let members = object
        .canonical()
        .into_iter()
        .filter(|(k, _)| !skip.contains(k));
    for (i, (k, v)) in members.enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_str(out, k);
        out.push(':');
        write(out, v);
    }
    out.push('}');
}

/// A JSON string as serde_json escapes it: the quote, the backslash and control characters,
/// nothing else.
pub(crate) fn write_str(out: &mut String, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let mut run = 0;
    for (i, b) in text.bytes().enumerate() {
        let escape: Cow<'static, str> = match b {
            b'"' => Cow::Borrowed("\\\""),
            b'\\' => Cow::Borrowed("\\\\"),
            b'\n' => Cow::Borrowed("\\n"),
            b'\r' => Cow::Borrowed("\\r"),
            b'\t' => Cow::Borrowed("\\t"),
            0x08 => Cow::Borrowed("\\b"),
            0x0c => Cow::Borrowed("\\f"),
            0..=0x1f => {
                let hex = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 0xf)],
                ];
                Cow::Owned(hex.iter().map(|&c| char::from(c)).collect())
            }
            _ => continue,
        };
        out.push_str(&text[run..i]);
        out.push_str(&escape);
        run = i + 1;
    }
    out.push_str(&text[run..]);
    out.push('"');
}
