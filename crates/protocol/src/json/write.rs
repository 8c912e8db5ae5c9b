//! JSON objects written member by member, in the order given: how a client writes its requests
//! and the values it hands to JavaScript (events, the transcript, results).
//!
//! serde's derives and serde_json's serializer are generic code instantiated once per type and
//! field; these shapes are small, and this writes them with a handful of functions shared by
//! all of them. Measured on the browser SDK's wasm: requests 1.6 KB gzip less, then events,
//! the transcript and results another 2.4 KB, serde_json's serializer gone from the build. The
//! text is what serde_json writes for the same members in the same order: compact, strings
//! escaped as [`RawJson::string`] escapes them, floats as [`float`] writes them. Each writer is
//! held byte for byte to its type's derived `Serialize`, which stays as the reference.

use alloc::string::String;

use super::raw::write_str;
use super::RawJson;
use crate::text;

/// An object being written; [`ObjectWriter::finish`] closes it. Nested objects and arrays of
/// them are written into the same text ([`ObjectWriter::object`], [`ObjectWriter::objects`]),
/// not built apart and copied in.
#[derive(Debug)]
pub struct ObjectWriter {
    out: String,
    empty: bool,
}

impl Default for ObjectWriter {
    fn default() -> Self {
        ObjectWriter::new()
    }
}

impl ObjectWriter {
    pub fn new() -> Self {
        ObjectWriter::within(String::new())
    }

    /// An object opened at the end of `out`.
    fn within(mut out: String) -> Self {
        out.push('{');
        ObjectWriter { out, empty: true }
    }

    /// An object whose first member is `"type":kind`, as every request of these dialects but
    /// cueso's message starts.
    pub fn typed(kind: &str) -> Self {
        let mut w = ObjectWriter::new();
        w.str("type", kind);
        w
    }

    fn key(&mut self, key: &str) -> &mut String {
        if !self.empty {
            self.out.push(',');
        }
        self.empty = false;
        write_str(&mut self.out, key);
        self.out.push(':');
        &mut self.out
    }

    pub fn str(&mut self, key: &str, value: &str) -> &mut Self {
        write_str(self.key(key), value);
        self
    }

    pub fn opt_str(&mut self, key: &str, value: Option<&str>) -> &mut Self {
        if let Some(v) = value {
            self.str(key, v);
        }
        self
    }

    /// A string member that is `null` when absent (cueso's `session_id`).
    pub fn str_or_null(&mut self, key: &str, value: Option<&str>) -> &mut Self {
        match value {
            Some(v) => self.str(key, v),
            None => self.json(key, "null"),
        }
    }

    pub fn uint(&mut self, key: &str, value: u64) -> &mut Self {
        self.json(key, &text::uint(value))
    }

    pub fn opt_uint(&mut self, key: &str, value: Option<u64>) -> &mut Self {
        if let Some(v) = value {
            self.uint(key, v);
        }
        self
    }

    pub fn int(&mut self, key: &str, value: i64) -> &mut Self {
        self.json(key, &text::int(value))
    }

    pub fn float(&mut self, key: &str, value: f64) -> &mut Self {
        self.json(key, &float(value))
    }

    /// An array of strings.
    pub fn strings(&mut self, key: &str, values: &[impl AsRef<str>]) -> &mut Self {
        let out = self.key(key);
        out.push('[');
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_str(out, v.as_ref());
        }
        out.push(']');
        self
    }

    /// An array of numbers, each as [`float`] writes it.
    pub fn floats(&mut self, key: &str, values: &[f64]) -> &mut Self {
        let out = self.key(key);
        out.push('[');
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&float(*v));
        }
        out.push(']');
        self
    }

    pub fn bool(&mut self, key: &str, value: bool) -> &mut Self {
        self.json(key, if value { "true" } else { "false" })
    }

    pub fn opt_bool(&mut self, key: &str, value: Option<bool>) -> &mut Self {
        if let Some(v) = value {
            self.bool(key, v);
        }
        self
    }

    pub fn raw(&mut self, key: &str, value: &RawJson) -> &mut Self {
        self.json(key, value.as_str())
    }

    /// A member whose value is JSON text already (`null`, a number, a [`RawJson`]).
    pub fn json(&mut self, key: &str, value: &str) -> &mut Self {
        self.key(key).push_str(value);
        self
    }

    /// A member whose value is an object `write` writes.
    pub fn object(&mut self, key: &str, write: impl FnOnce(&mut ObjectWriter)) -> &mut Self {
        self.key(key);
        self.nested(write);
        self
    }

    /// A member whose value is an array of objects, one per item, each written by `write` (an
    /// item's `write_members` fits).
    pub fn objects<I: IntoIterator>(
        &mut self,
        key: &str,
        items: I,
        mut write: impl FnMut(I::Item, &mut ObjectWriter),
    ) -> &mut Self {
        self.key(key).push('[');
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.nested(|w| write(item, w));
        }
        self.out.push(']');
        self
    }

    /// An object written at the end of this one's text (a member's key already written).
    fn nested(&mut self, write: impl FnOnce(&mut ObjectWriter)) {
        let mut inner = ObjectWriter::within(core::mem::take(&mut self.out));
        write(&mut inner);
        self.out = inner.finish();
    }

    pub fn finish(&mut self) -> String {
        let mut out = core::mem::take(&mut self.out);
        out.push('}');
        out
    }
}

/// A number as serde_json writes an `f64`: the shortest text that reads back as it, `null` for
/// NaN and the infinities (JSON has no text for them).
pub fn float(value: f64) -> String {
    if value.is_finite() {
        String::from(zmij::Buffer::new().format_finite(value))
    } else {
        String::from("null")
    }
}

/// A JSON array of objects, one per item, each written by `write`.
pub fn objects<I: IntoIterator>(
    items: I,
    mut write: impl FnMut(I::Item, &mut ObjectWriter),
) -> String {
    let mut out = String::from("[");
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let mut w = ObjectWriter::within(out);
        write(item, &mut w);
        out = w.finish();
    }
    out.push(']');
    out
}

#[cfg(test)]
mod tests {
    use super::{objects, ObjectWriter};
    use crate::json::RawJson;
    use serde_json::json;

    #[test]
    fn members_come_out_as_serde_json_writes_them_in_the_order_given() {
        let text = ObjectWriter::typed("run")
            .str("message", "say \"hi\"\n\u{1}é")
            .opt_str("id", None)
            .opt_str("thread_id", Some("t"))
            .uint("after", u64::MAX)
            .opt_uint("limit", None)
            .bool("is_error", false)
            .opt_bool("verbose", Some(true))
            .str_or_null("session_id", None)
            .raw(
                "input_schema",
                &RawJson::parse(r#"{"b":1,"a":[1.5]}"#).unwrap(),
            )
            .objects("parts", [1, 2], |n, w| {
                w.uint("n", n);
            })
            .object("empty", |_| {})
            .finish();
        let want = serde_json::to_string(&json!({
            "type": "run",
            "message": "say \"hi\"\n\u{1}é",
            "thread_id": "t",
            "after": u64::MAX,
            "is_error": false,
            "verbose": true,
            "session_id": null,
            "input_schema": {"a": [1.5], "b": 1},
            "parts": [{"n": 1}, {"n": 2}],
            "empty": {},
        }))
        .unwrap();
        // serde_json's map sorts keys; compare as values, and the bytes of one member each.
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            serde_json::from_str::<serde_json::Value>(&want).unwrap()
        );
        assert!(text.starts_with(r#"{"type":"run","message":"say \"hi\"\n\u0001é","#));
        assert!(text.ends_with(
            r#""input_schema":{"a":[1.5],"b":1},"parts":[{"n":1},{"n":2}],"empty":{}}"#
        ));
        assert_eq!(ObjectWriter::new().finish(), "{}");
        assert_eq!(objects([0; 0], |_: i32, _| {}), "[]");
        assert_eq!(
            objects(["a", "b"], |s, w| {
                w.str("s", s);
            }),
            r#"[{"s":"a"},{"s":"b"}]"#
        );
    }
}
