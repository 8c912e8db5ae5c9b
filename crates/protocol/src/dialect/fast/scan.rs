//! The cursor the fast path reads frames with.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

/// A cursor over JSON text that reads only what these shapes hold, strictly: whatever it does
/// not accept ends the fast path with `None`. The text is valid UTF-8 and every cut falls on
/// an ASCII byte, so slices of it are strings without a second check.
pub(super) struct Scan<'a> {
    pub(super) t: &'a str,
    pub(super) at: usize,
}

impl<'a> Scan<'a> {
    /// The byte at `i`, if any.
    pub(super) fn byte(&self, i: usize) -> Option<u8> {
        self.t.as_bytes().get(i).copied()
    }

    pub(super) fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.byte(self.at) {
            self.at += 1;
        }
    }

    /// Skips whitespace and consumes `c` if it comes next.
    pub(super) fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.byte(self.at) == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// An object whose every member `member` reads (it gets the key and reads the value).
    pub(super) fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, Cow<'a, str>) -> Option<()>,
    ) -> Option<()> {
        if !self.eat(b'{') {
            return None;
        }
        if self.eat(b'}') {
            return Some(());
        }
        loop {
            self.ws();
            let key = self.string()?;
            if !self.eat(b':') {
                return None;
            }
            member(self, key)?;
            if self.eat(b'}') {
                return Some(());
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    /// An array whose every element `element` reads.
    pub(super) fn array(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        if !self.eat(b'[') {
            return None;
        }
        if self.eat(b']') {
            return Some(());
        }
        loop {
            element(self)?;
            if self.eat(b']') {
                return Some(());
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    pub(super) fn null(&mut self) -> Option<()> {
        self.ws();
        let rest = self.t.as_bytes().get(self.at..)?;
        rest.starts_with(b"null").then(|| self.at += 4)
    }

    /// A whole number without sign, fraction, exponent or leading zero, that fits a u64.
    pub(super) fn uint(&mut self) -> Option<u64> {
        self.ws();
        let start = self.at;
        let mut n: u64 = 0;
        while let Some(d @ b'0'..=b'9') = self.byte(self.at) {
            n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
            self.at += 1;
        }
        let len = self.at - start;
        let leading_zero = len > 1 && self.byte(start) == Some(b'0');
        let more = matches!(self.byte(self.at), Some(b'.' | b'e' | b'E'));
        (len > 0 && !leading_zero && !more).then_some(n)
    }

    /// A string, borrowed when it has no escapes. Declines what JSON forbids in a string (raw
    /// control characters, bad escapes, lone surrogates).
    pub(super) fn string(&mut self) -> Option<Cow<'a, str>> {
        self.ws();
        if self.byte(self.at) != Some(b'"') {
            return None;
        }
        self.at += 1;
        let start = self.at;
        // The plain run up to the first quote or backslash.
        loop {
            match self.byte(self.at)? {
                b'"' => {
                    let s = self.t.get(start..self.at)?;
                    self.at += 1;
                    return Some(Cow::Borrowed(s));
                }
                b'\\' => break,
                c if c < 0x20 => return None,
                _ => self.at += 1,
            }
        }
        let mut out = String::from(self.t.get(start..self.at)?);
        loop {
            let run = self.at;
            while let Some(c) = self.byte(self.at) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.at += 1;
            }
            out.push_str(self.t.get(run..self.at)?);
            match self.byte(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(Cow::Owned(out));
                }
                b'\\' => {
                    self.at += 1;
                    let c = self.byte(self.at)?;
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
                        _ => return None,
                    });
                }
                _ => return None,
            }
        }
    }

    /// The character of a `\u` escape (its `\u` consumed), joining a surrogate pair.
    pub(super) fn unicode_escape(&mut self) -> Option<char> {
        let hi = self.hex4()?;
        if !(0xD800..0xDC00).contains(&hi) {
            return char::from_u32(hi); // None for a lone low surrogate
        }
        if self.t.as_bytes().get(self.at..self.at + 2)? != b"\\u" {
            return None;
        }
        self.at += 2;
        let lo = self.hex4()?;
        if !(0xDC00..0xE000).contains(&lo) {
            return None;
        }
        char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
    }

    pub(super) fn hex4(&mut self) -> Option<u32> {
        let digits = self.t.as_bytes().get(self.at..self.at + 4)?;
        let mut n = 0;
        for &d in digits {
            n = n * 16 + char::from(d).to_digit(16)?;
        }
        self.at += 4;
        Some(n)
    }
}

/// A JSON value as [`Scan::value`] keeps it: strings, whole numbers, booleans, objects and
/// arrays. The frames the fast path reads hold nothing else; `null`, a negative or fractional
/// number, or nesting deeper than [`MAX_DEPTH`] sends the frame down the general path.
#[derive(Debug)]
pub(super) enum Val<'a> {
    Str(Cow<'a, str>),
    Uint(u64),
    Bool(bool),
    Obj(Obj<'a>),
    Arr(Vec<Val<'a>>),
}

/// How deep [`Scan::value`] follows objects and arrays (serde_json stops at 128).
const MAX_DEPTH: usize = 32;

/// An object's members in order, each key once.
#[derive(Debug, Default)]
pub(super) struct Obj<'a>(Vec<(Cow<'a, str>, Val<'a>)>);

impl<'a> Scan<'a> {
    pub(super) fn boolean(&mut self) -> Option<bool> {
        self.ws();
        let rest = self.t.as_bytes().get(self.at..)?;
        if rest.starts_with(b"true") {
            self.at += 4;
            Some(true)
        } else if rest.starts_with(b"false") {
            self.at += 5;
            Some(false)
        } else {
            None
        }
    }

    /// Any value [`Val`] can hold.
    pub(super) fn value(&mut self, depth: usize) -> Option<Val<'a>> {
        self.ws();
        match self.byte(self.at)? {
            b'"' => self.string().map(Val::Str),
            b'0'..=b'9' => self.uint().map(Val::Uint),
            b't' | b'f' => self.boolean().map(Val::Bool),
            b'{' if depth < MAX_DEPTH => {
                let mut obj = Obj::default();
                self.object(|s, key| {
                    if obj.get(&key).is_some() {
                        return None;
                    }
                    let v = s.value(depth + 1)?;
                    obj.0.push((key, v));
                    Some(())
                })?;
                Some(Val::Obj(obj))
            }
            b'[' if depth < MAX_DEPTH => {
                let mut items = Vec::new();
                self.array(|s| {
                    items.push(s.value(depth + 1)?);
                    Some(())
                })?;
                Some(Val::Arr(items))
            }
            _ => None,
        }
    }

    /// A whole frame that is an object.
    pub(super) fn frame_object(&mut self) -> Option<Obj<'a>> {
        match self.value(0)? {
            Val::Obj(obj) => {
                self.ws();
                (self.at == self.t.len()).then_some(obj)
            }
            _ => None,
        }
    }
}

impl<'a> Obj<'a> {
    pub(super) fn get(&self, key: &str) -> Option<&Val<'a>> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether every key is one of `keys` (a shape declines members it does not know).
    pub(super) fn keys_within(&self, keys: &[&str]) -> bool {
        self.keys().all(|k| keys.contains(&k))
    }

    pub(super) fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_ref())
    }

    /// Whether `key` holds a string (one the shape requires but does not read).
    pub(super) fn has_str(&self, key: &str) -> bool {
        matches!(self.get(key), Some(Val::Str(_)))
    }

    /// A required string, borrowed.
    pub(super) fn str(&self, key: &str) -> Option<&str> {
        match self.get(key)? {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    /// A required string.
    pub(super) fn string(&self, key: &str) -> Option<String> {
        match self.get(key)? {
            Val::Str(s) => Some(String::from(s.as_ref())),
            _ => None,
        }
    }

    /// An optional string: `Some(None)` when absent, `None` (decline) when not a string.
    pub(super) fn opt_string(&self, key: &str) -> Option<Option<String>> {
        match self.get(key) {
            None => Some(None),
            Some(Val::Str(s)) => Some(Some(String::from(s.as_ref()))),
            Some(_) => None,
        }
    }

    pub(super) fn boolean(&self, key: &str) -> Option<bool> {
        match self.get(key)? {
            Val::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// An optional boolean: `Some(None)` when absent, `None` (decline) when not a boolean.
    pub(super) fn opt_boolean(&self, key: &str) -> Option<Option<bool>> {
        match self.get(key) {
            None => Some(None),
            Some(Val::Bool(b)) => Some(Some(*b)),
            Some(_) => None,
        }
    }

    /// An optional whole number: `Some(None)` when absent, `None` (decline) otherwise.
    pub(super) fn opt_uint(&self, key: &str) -> Option<Option<u64>> {
        match self.get(key) {
            None => Some(None),
            Some(Val::Uint(n)) => Some(Some(*n)),
            Some(_) => None,
        }
    }

    pub(super) fn object(&self, key: &str) -> Option<&Obj<'a>> {
        match self.get(key)? {
            Val::Obj(o) => Some(o),
            _ => None,
        }
    }
}

impl Val<'_> {
    /// The `serde_json::Value` serde_json parses the same text to (every [`Val`] is a value
    /// whose parse has one meaning: no floats, no duplicate keys).
    pub(super) fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Val::Str(s) => Value::String(String::from(s.as_ref())),
            Val::Uint(n) => Value::from(*n),
            Val::Bool(b) => Value::Bool(*b),
            Val::Obj(o) => Value::Object(
                o.0.iter()
                    .map(|(k, v)| (String::from(k.as_ref()), v.to_json()))
                    .collect(),
            ),
            Val::Arr(items) => Value::Array(items.iter().map(Val::to_json).collect()),
        }
    }
}
