//! Values across the boundary: frames in from JavaScript, transcripts, events and results out.
//!
//! Outgoing values travel as JSON text parsed by `JSON.parse`, not field by field through
//! serde-wasm-bindgen: the shapes are exactly the protocol's JSON (the golden transcripts), a
//! number beyond 2^53 from a server rounds as in any JS JSON consumer instead of failing the
//! whole value, maps become plain objects, and one boundary crossing carries the whole value.
//! The TypeScript types still come from tsify: `Ts<T>` only tags the parsed value.

use js_sys::{Array, Object, Reflect, Uint8Array};
use tsify::{Ts, Tsify};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use weft_protocol::event::{Event, Sequenced};
use weft_protocol::json::RawJson;
use weft_protocol::text;

use crate::error::{Error, ErrorCode};
use crate::read::FromJs;

/// JSON text — a value's `to_json`, which writes what its `Serialize` would — as a plain JS
/// value.
pub fn parse(json: &str) -> Result<JsValue, Error> {
    js_sys::JSON::parse(json).map_err(|e| parse_failed(&e))
}

fn parse_failed(thrown: &JsValue) -> Error {
    Error::new(
        ErrorCode::Internal,
        text::concat(&["JSON.parse failed: ", &crate::error::describe(thrown)]),
    )
}

/// A JSON value kept as text, parsed by JavaScript's own `JSON.parse`.
pub fn raw(value: &RawJson) -> Result<JsValue, Error> {
    parse(value.as_str())
}

/// A number as JavaScript writes it, for messages: through the protocol's float writer, which
/// the SDK links anyway, instead of `f64`'s `Display` (14 KB of core's float formatting).
pub fn number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    // A whole number prints without the `.0` JSON writers add.
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        return text::int(n as i64);
    }
    weft_protocol::json::float(n)
}

/// `s` in double quotes, escaped as JSON escapes it, for messages that quote what the app
/// passed: so that no message of the SDK needs `{:?}` and core's `Debug` escaping.
pub fn quoted(s: &str) -> String {
    String::from(RawJson::string(s).as_str())
}

/// JSON text of a value typed with its tsify declaration.
pub fn to_ts<T: Tsify>(json: &str) -> Result<Ts<T>, Error> {
    parse(json).map(Ts::new_unchecked)
}

/// Reads an app-supplied value of a declared type; `what` is its TypeScript name, so the
/// message matches what the app's editor shows.
pub fn from_ts<T: Tsify + FromJs>(value: &Ts<T>, what: &str) -> Result<T, Error> {
    T::read(&value.js_value()).map_err(|why| invalid(what, &why))
}

/// Out of line, so that each of [`from_ts`]'s instantiations carries only its reader.
#[inline(never)]
fn invalid(what: &str, why: &str) -> Error {
    Error::argument(text::concat(&["invalid ", what, ": ", why]))
}

/// An event as the app sees it (`RunEvent`): the loom JSON object of the event with its
/// envelope (the protocol's `Serialize` for `Sequenced`, as a loom frame carries it), plus
/// `run_id` so a listener knows which run it belongs to.
///
/// Written straight to JSON text (`Sequenced::to_json`), `run_id` last as a member of its own
/// unless the event has one, and parsed once: one string out of the wasm per event. Each
/// string out is a `TextDecoder` call, which costs Chromium more than the `JSON.parse` of a
/// short event does; the run id as a second string was a tenth of the `Client`'s own time per
/// frame in a profile of the bench's `Client` row.
pub fn event(seq: &Sequenced) -> Result<JsValue, Error> {
    let Some(run_id) = seq.envelope.run_id.as_deref() else {
        return parse(&seq.to_json());
    };
    match &seq.event {
        // Its own run id.
        Event::RunStart {
            run_id: Some(_), ..
        } => parse(&seq.to_json()),
        // Members only its JSON knows: JavaScript looks for one.
        Event::Unknown(_) => {
            event_object(&seq.to_json(), Some(run_id)).map_err(|e| parse_failed(&e))
        }
        _ => {
            let mut json = seq.to_json();
            // An event's object always has members (`type` first), so it ends `…}`.
            json.pop();
            json.push_str(",\"run_id\":");
            json.push_str(RawJson::string(run_id).as_str());
            json.push('}');
            parse(&json)
        }
    }
}

#[wasm_bindgen(inline_js = r#"
export function eventObject(json, run_id) {
  const o = JSON.parse(json);
  if (run_id !== undefined && !("run_id" in o)) o.run_id = run_id;
  return o;
}
"#)]
extern "C" {
    /// The event's JSON parsed, with `run_id` set where the event has none of its own.
    #[wasm_bindgen(js_name = eventObject, catch)]
    fn event_object(json: &str, run_id: Option<&str>) -> Result<JsValue, JsValue>;
}

/// A buffer that frames are copied into on their way into wasm, kept by its owner so that
/// frames after the first reuse its memory.
///
/// A string is written straight into this buffer, with no allocation per frame. A long one (a
/// `pushMany` batch) goes through `TextEncoder.encodeInto`, a native copy: wasm-bindgen's own
/// string passing copies an ASCII string one character at a time in JavaScript, which was a
/// sixth of `pushMany`'s time on loom frames in Node. A short one is copied by such a loop all
/// the same, because each call of `encodeInto` costs Chromium more than copying a frame of a
/// few hundred characters (loom `push` in headless Chromium, in one run: 1.68 µs/frame with
/// wasm-bindgen's loop, 1.88 with `encodeInto`).
#[derive(Debug, Default)]
pub struct FrameBuf(Vec<u8>);

impl FrameBuf {
    /// The bytes of one frame given as a string, a `Uint8Array` or an `ArrayBuffer` (what a
    /// WebSocket hands out with `binaryType = "arraybuffer"`).
    pub fn frame(&mut self, value: &JsValue) -> Result<&[u8], Error> {
        if value.is_string() {
            return Ok(self.text(value));
        }
        let bytes = if let Some(bytes) = value.dyn_ref::<Uint8Array>() {
            bytes.clone()
        } else if let Some(buf) = value.dyn_ref::<js_sys::ArrayBuffer>() {
            Uint8Array::new(buf)
        } else {
            return Err(Error::argument(text::concat(&[
                "a frame must be a string, a Uint8Array or an ArrayBuffer, not ",
                &type_of(value),
            ])));
        };
        self.0.resize(bytes.length() as usize, 0);
        bytes.copy_to(&mut self.0);
        Ok(&self.0)
    }

    /// A JavaScript string as UTF-8 (lone surrogates become U+FFFD, as with any string passed
    /// into wasm).
    pub fn text(&mut self, s: &JsValue) -> &[u8] {
        let mut written = self.write(s);
        if written < 0.0 {
            // Three bytes of UTF-8 at most per UTF-16 unit: the second call fits. Every buffer
            // starts empty, so any text but "" comes here first, and hands over the memory
            // before anything is written into it.
            self.0.resize(-written as usize, 0);
            use_memory(&wasm_bindgen::memory());
            written = self.write(s);
        }
        &self.0[..written.max(0.0) as usize]
    }

    /// JavaScript writes into the buffer through its address: exposed, so the write is seen.
    fn write(&mut self, s: &JsValue) -> f64 {
        utf8_into(s, self.0.as_mut_ptr().expose_provenance(), self.0.len())
    }
}

#[wasm_bindgen(inline_js = r#"
const encoder = new TextEncoder();
let memory;
let bytes = new Uint8Array(0);
export function useMemory(m) {
  memory = m;
  bytes = new Uint8Array(m.buffer);
}
export function utf8Into(s, at, cap) {
  const n = s.length;
  if (n === 0) return 0;
  if (n * 3 > cap) return -n * 3;
  // A view of the whole memory, made again only when growing the memory detached the last.
  if (bytes.byteLength === 0) bytes = new Uint8Array(memory.buffer);
  let i = 0;
  if (n <= 256) {
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c > 0x7f) break;
      bytes[at + i] = c;
    }
    if (i === n) return i;
  }
  return i + encoder.encodeInto(i === 0 ? s : s.slice(i), bytes.subarray(at + i, at + cap)).written;
}
"#)]
extern "C" {
    /// Writes string `s` as UTF-8 into this module's memory, `cap` bytes from address `at`, and
    /// returns the bytes written; minus the size it needs when `cap` may be too small. A view
    /// of the memory kept across calls instead of wasm-bindgen's view of a slice made for each:
    /// making that view was a third of copying a loom frame in headless Chromium (0.56 against
    /// 0.37 µs/frame for the copy alone, in one run).
    #[wasm_bindgen(js_name = utf8Into)]
    fn utf8_into(s: &JsValue, at: usize, cap: usize) -> f64;

    /// Gives [`utf8_into`] the memory it writes to.
    #[wasm_bindgen(js_name = useMemory)]
    fn use_memory(memory: &JsValue);
}

/// `typeof value`, with `null` and arrays told apart, for error messages.
pub fn type_of(value: &JsValue) -> String {
    if value.is_null() {
        return "null".into();
    }
    if Array::is_array(value) {
        return "an array".into();
    }
    value
        .js_typeof()
        .as_string()
        .unwrap_or_else(|| "unknown".into())
}

/// `{ value, done }`, what an async iterator's `next()` resolves to.
pub fn iter_result(value: &JsValue, done: bool) -> JsValue {
    let obj = Object::new();
    // Defining properties on a fresh plain object cannot fail.
    let _ = Reflect::set(&obj, &"value".into(), value);
    let _ = Reflect::set(&obj, &"done".into(), &done.into());
    obj.into()
}

#[cfg(test)]
mod tests {
    use super::{number, quoted};

    #[test]
    fn quoting_escapes_what_would_break_the_quotes() {
        assert_eq!(quoted("klingon"), "\"klingon\"");
        assert_eq!(quoted("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
    }

    #[test]
    fn numbers_read_as_javascript_writes_them() {
        assert_eq!(number(30000.0), "30000");
        assert_eq!(number(-1.0), "-1");
        assert_eq!(number(1.5), "1.5");
        assert_eq!(number(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(f64::INFINITY), "Infinity");
        assert_eq!(number(f64::NEG_INFINITY), "-Infinity");
    }
}
