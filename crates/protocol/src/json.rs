//! JSON text to a tree that borrows from it: the one reader of every frame.
//!
//! serde_json's `Value` owns every key and string, sorts each object into a `BTreeMap`, and
//! brings its deserializer (about 24 KB of the SDK's wasm) into any build that parses. A frame
//! is read once and dropped, so this tree borrows every string without an escape from the frame
//! and keeps an object's members in a vector. It accepts exactly what serde_json accepts and
//! means the same by it: numbers split into unsigned, negative and float as serde_json splits
//! them, the last of repeated keys wins, nesting stops at 128 levels. [`Json::to_serde`] gives
//! the `serde_json::Value` serde_json would have parsed (the tests and the fuzz target
//! `json_reader` hold the two equal), for the few fields that carry arbitrary JSON.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

mod canonical;
mod float;
pub mod patch;
mod raw;
mod write;

pub use float::parse_f64;
pub use raw::RawJson;
pub use write::{float, objects, ObjectWriter};

/// A JSON value whose strings borrow from the text they were read from where they could.
#[derive(Debug, Clone, PartialEq)]
pub enum Json<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    Object(Object<'a>),
}

/// A number as serde_json keeps it: a whole number without a sign that fits a `u64`, a negative
/// one that fits an `i64`, else a (finite) float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    PosInt(u64),
    NegInt(i64),
    Float(f64),
}

/// An object's members in the order written. A key written twice is there twice; every lookup
/// finds the last, as serde_json's map keeps the last.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Object<'a>(Vec<(Cow<'a, str>, Json<'a>)>);

/// Why a text is not JSON: what was wrong, and the line and column where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    what: &'static str,
    line: usize,
    column: usize,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::text::concat(&[
            self.what,
            " at line ",
            &crate::text::uint(self.line as u64),
            " column ",
            &crate::text::uint(self.column as u64),
        ]))
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ParseError {}

/// Nesting at which serde_json stops with "recursion limit exceeded"; a tree this reader
/// returns is at most one level shallower, so dropping it cannot exhaust the stack either.
const DEPTH_LIMIT: usize = 128;

/// Reads one JSON value that is the whole of `text` (whitespace around it aside).
pub fn parse(text: &str) -> Result<Json<'_>, ParseError> {
    let mut r = Reader { t: text, at: 0 };
    let value = r.value(0).map_err(|what| r.error(what))?;
    r.ws();
    if r.at != text.len() {
        return Err(r.error("trailing characters"));
    }
    Ok(value)
}

impl<'a> Json<'a> {
    /// The JSON type's name as error messages say it: "a string", "an object", ….
    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Number(_) => "a number",
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// An unsigned whole number, as serde_json's `as_u64` (a float never is one).
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Number(Number::PosInt(n)) => Some(*n),
            _ => None,
        }
    }

    /// A whole number that fits an `i64`, as serde_json's `as_i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Json::Number(Number::PosInt(n)) => i64::try_from(*n).ok(),
            Json::Number(Number::NegInt(n)) => Some(*n),
            _ => None,
        }
    }

    /// Any number as a float, as serde_json's `as_f64`.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Number(Number::PosInt(n)) => Some(*n as f64),
            Json::Number(Number::NegInt(n)) => Some(*n as f64),
            Json::Number(Number::Float(f)) => Some(*f),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Json<'a>]> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The member `key` of an object (`None` for anything else), as serde_json's `get`.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.as_object()?.get(key)
    }

    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The `serde_json::Value` serde_json parses the same text to.
    pub fn to_serde(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(Number::PosInt(n)) => Value::from(*n),
            Json::Number(Number::NegInt(n)) => Value::from(*n),
            // The reader keeps only finite floats, so this is never `Null`.
            Json::Number(Number::Float(f)) => Value::from(*f),
            Json::String(s) => Value::String(String::from(s.as_ref())),
            Json::Array(items) => Value::Array(items.iter().map(Json::to_serde).collect()),
            Json::Object(o) => Value::Object(o.to_serde()),
        }
    }

    /// The tree of a `serde_json::Value`, borrowing its strings: how values that arrive through
    /// serde (stored events) reach the same readers as frames.
    pub fn from_serde(v: &'a serde_json::Value) -> Json<'a> {
        use serde_json::Value;
        match v {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) => Json::Number(match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => Number::PosInt(u),
                (None, Some(i), _) => Number::NegInt(i),
                (None, None, f) => Number::Float(f.unwrap_or(0.0)),
            }),
            Value::String(s) => Json::String(Cow::Borrowed(s)),
            Value::Array(items) => Json::Array(items.iter().map(Json::from_serde).collect()),
            Value::Object(map) => Json::Object(Object::from_serde(map)),
        }
    }
}

impl<'a> Object<'a> {
    /// The value of the last member named `key`.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The members in the order written, a repeated key as often as written.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Json<'a>)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), v))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The map serde_json parses the same text to (the last of repeated keys kept).
    pub fn to_serde(&self) -> serde_json::Map<String, serde_json::Value> {
        // Inserted one by one rather than collected: collecting sorts the members and bulk-builds
        // the map, a second copy of the map's code in the SDK's wasm (5 KB) for objects of a
        // few keys.
        let mut map = serde_json::Map::new();
        for (k, v) in &self.0 {
            map.insert(String::from(k.as_ref()), v.to_serde());
        }
        map
    }

    pub fn from_serde(map: &'a serde_json::Map<String, serde_json::Value>) -> Object<'a> {
        Object(
            map.iter()
                .map(|(k, v)| (Cow::Borrowed(k.as_str()), Json::from_serde(v)))
                .collect(),
        )
    }
}

impl<'a> FromIterator<(Cow<'a, str>, Json<'a>)> for Object<'a> {
    fn from_iter<I: IntoIterator<Item = (Cow<'a, str>, Json<'a>)>>(members: I) -> Self {
        Object(members.into_iter().collect())
    }
}

/// A cursor over JSON text. The text is valid UTF-8 and every cut falls on an ASCII byte, so
/// its slices are strings without a second check. The fast path reads its shapes with the same
/// cursor, so a string or a number means the same on both paths.
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    pub(crate) t: &'a str,
    pub(crate) at: usize,
}

/// What went wrong, for [`ParseError`]; where is the reader's position.
type Fail = &'static str;

impl<'a> Reader<'a> {
    pub(crate) fn new(t: &'a str) -> Self {
        Reader { t, at: 0 }
    }

    fn error(&self, what: Fail) -> ParseError {
        let upto = &self.t.as_bytes()[..self.at.min(self.t.len())];
        let line = 1 + upto.iter().filter(|&&b| b == b'\n').count();
        // 1-based, in bytes: the byte where the problem was found (one past the end at EOF).
        let column = 1 + upto.iter().rev().take_while(|&&b| b != b'\n').count();
        ParseError { what, line, column }
    }

    /// The byte at `i`, if any.
    #[inline(always)]
    pub(crate) fn byte(&self, i: usize) -> Option<u8> {
        self.t.as_bytes().get(i).copied()
    }

    /// Skips whitespace. The check inline, the loop not: frames are compact, so nearly every
    /// call finds none, and a call per token cost more than the check.
    #[inline(always)]
    pub(crate) fn ws(&mut self) {
        if let Some(b' ' | b'\n' | b'\r' | b'\t') = self.byte(self.at) {
            self.skip_ws();
        }
    }

    #[inline(never)]
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.byte(self.at) {
            self.at += 1;
        }
    }

    /// Skips whitespace and consumes `c` if it comes next.
    pub(crate) fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.byte(self.at) == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// Skips whitespace and consumes `word` if it comes next.
    pub(crate) fn word(&mut self, word: &[u8]) -> bool {
        self.ws();
        let found = self.t.as_bytes()[self.at..].starts_with(word);
        if found {
            self.at += word.len();
        }
        found
    }

    /// Any JSON value; `depth` counts the arrays and objects around it.
    pub(crate) fn value(&mut self, depth: usize) -> Result<Json<'a>, Fail> {
        self.ws();
        match self.byte(self.at) {
            None => Err("EOF while parsing a value"),
            Some(b'"') => self.string().map(Json::String),
            Some(b'-' | b'0'..=b'9') => self.number().map(Json::Number),
            Some(b'n') if self.word(b"null") => Ok(Json::Null),
            Some(b't') if self.word(b"true") => Ok(Json::Bool(true)),
            Some(b'f') if self.word(b"false") => Ok(Json::Bool(false)),
            Some(b'[' | b'{') if depth + 1 >= DEPTH_LIMIT => Err("recursion limit exceeded"),
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                if self.eat(b']') {
                    return Ok(Json::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    if self.eat(b']') {
                        return Ok(Json::Array(items));
                    }
                    if !self.eat(b',') {
                        return Err(self.end_or("expected `,` or `]`"));
                    }
                }
            }
            Some(b'{') => {
                self.at += 1;
                let mut members = Vec::new();
                if self.eat(b'}') {
                    return Ok(Json::Object(Object(members)));
                }
                loop {
                    self.ws();
                    if self.byte(self.at) != Some(b'"') {
                        return Err(self.end_or("key must be a string"));
                    }
                    let key = self.string()?;
                    if !self.eat(b':') {
                        return Err(self.end_or("expected `:`"));
                    }
                    members.push((key, self.value(depth + 1)?));
                    if self.eat(b'}') {
                        return Ok(Json::Object(Object(members)));
                    }
                    if !self.eat(b',') {
                        return Err(self.end_or("expected `,` or `}`"));
                    }
                }
            }
            Some(_) => Err("expected value"),
        }
    }

    /// `what`, or the end-of-text error when the text ran out first.
    fn end_or(&self, what: Fail) -> Fail {
        if self.at >= self.t.len() {
            "EOF while parsing"
        } else {
            what
        }
    }

    /// A number, classified as serde_json classifies it.
    pub(crate) fn number(&mut self) -> Result<Number, Fail> {
        let start = self.at;
        let negative = self.byte(self.at) == Some(b'-');
        if negative {
            self.at += 1;
        }
        let digits = self.at;
        match self.byte(self.at) {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err("invalid number"),
        }
        if matches!(self.byte(self.at), Some(b'0'..=b'9')) {
            return Err("invalid number"); // a leading zero
        }
        let whole = self.at;
        let mut float = false;
        if self.byte(self.at) == Some(b'.') {
            self.at += 1;
            if !matches!(self.byte(self.at), Some(b'0'..=b'9')) {
                return Err("invalid number");
            }
            self.digits();
            float = true;
        }
        if let Some(b'e' | b'E') = self.byte(self.at) {
            self.at += 1;
            if let Some(b'+' | b'-') = self.byte(self.at) {
                self.at += 1;
            }
            if !matches!(self.byte(self.at), Some(b'0'..=b'9')) {
                return Err("invalid number");
            }
            self.digits();
            float = true;
        }
        if !float {
            if let Some(n) = whole_number(&self.t.as_bytes()[digits..whole]) {
                if !negative {
                    return Ok(Number::PosInt(n));
                }
                // serde_json's rule: a negative whole number that fits is an `i64`; `-0` and
                // those below `i64::MIN` are floats.
                let neg = (n as i64).wrapping_neg();
                return Ok(if neg >= 0 {
                    Number::Float(-(n as f64))
                } else {
                    Number::NegInt(neg)
                });
            }
        }
        // Floats, and whole numbers past u64: correctly rounded, as serde_json's
        // `float_roundtrip` reads them (by a parser of our own: core's tables are 15 KB of the
        // SDK's wasm); infinity is out of range there too.
        let f = float::parse(&self.t[start..self.at]);
        if f.is_finite() {
            Ok(Number::Float(f))
        } else {
            Err("number out of range")
        }
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.byte(self.at) {
            self.at += 1;
        }
    }

    /// A whole number without sign, fraction, exponent or leading zero, that fits a u64.
    pub(crate) fn uint(&mut self) -> Option<u64> {
        self.ws();
        let start = self.at;
        self.digits();
        let len = self.at - start;
        let leading_zero = len > 1 && self.byte(start) == Some(b'0');
        let more = matches!(self.byte(self.at), Some(b'.' | b'e' | b'E'));
        if len == 0 || leading_zero || more {
            return None;
        }
        whole_number(&self.t.as_bytes()[start..self.at])
    }

    /// A string (the cursor on its opening quote), borrowed when it has no escapes.
    pub(crate) fn string(&mut self) -> Result<Cow<'a, str>, Fail> {
        if self.byte(self.at) != Some(b'"') {
            return Err("expected a string");
        }
        self.at += 1;
        let start = self.at;
        // The plain run up to the first quote or backslash.
        loop {
            match self.byte(self.at) {
                None => return Err("EOF while parsing a string"),
                Some(b'"') => {
                    let s = &self.t[start..self.at];
                    self.at += 1;
                    return Ok(Cow::Borrowed(s));
                }
                Some(b'\\') => break,
                Some(c) if c < 0x20 => return Err(CONTROL),
                Some(_) => self.at += 1,
            }
        }
        let mut out = String::from(&self.t[start..self.at]);
        loop {
            let run = self.at;
            while let Some(c) = self.byte(self.at) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.at += 1;
            }
            out.push_str(&self.t[run..self.at]);
            match self.byte(self.at) {
                None => return Err("EOF while parsing a string"),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => {
                    self.at += 1;
                    let c = self.byte(self.at).ok_or("EOF while parsing a string")?;
                    self.at += 1;
                    out.push(match c {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return Err("invalid escape"),
                    });
                }
                Some(_) => return Err(CONTROL),
            }
        }
    }

    /// The character of a `\u` escape (its `\u` consumed), joining a surrogate pair.
    fn unicode_escape(&mut self) -> Result<char, Fail> {
        let hi = self.hex4()?;
        if (0xDC00..0xE000).contains(&hi) {
            return Err("lone trailing surrogate in hex escape");
        }
        if !(0xD800..0xDC00).contains(&hi) {
            return char::from_u32(hi).ok_or("invalid escape");
        }
        if self.t.as_bytes().get(self.at..self.at + 2) != Some(b"\\u") {
            return Err("lone leading surrogate in hex escape");
        }
        self.at += 2;
        let lo = self.hex4()?;
        if !(0xDC00..0xE000).contains(&lo) {
            return Err("lone leading surrogate in hex escape");
        }
        char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)).ok_or("invalid escape")
    }

    fn hex4(&mut self) -> Result<u32, Fail> {
        let digits = self
            .t
            .as_bytes()
            .get(self.at..self.at + 4)
            .ok_or("EOF while parsing a string")?;
        let mut n = 0;
        for &d in digits {
            n = n * 16 + char::from(d).to_digit(16).ok_or("invalid escape")?;
        }
        self.at += 4;
        Ok(n)
    }
}

const CONTROL: Fail = "control character (\\u0000-\\u001F) found while parsing a string";

/// The value of ASCII digits, if it fits a u64.
fn whole_number(digits: &[u8]) -> Option<u64> {
    digits.iter().try_fold(0u64, |n, d| {
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

#[cfg(test)]
pub(crate) mod tests;
