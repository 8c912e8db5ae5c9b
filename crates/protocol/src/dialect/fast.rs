//! The fast path for the frames a stream is made of: text, reasoning and tool-argument deltas,
//! whole replies and usage counts.
//!
//! Nearly every frame of a reply is one of a few small, flat shapes (loom `message_chunk`,
//! `reasoning_chunk` and `tool_call_chunk` inside `run_stream_event`; cueso `content_delta` and
//! `tool_call_delta`; agentloop `response_item` messages and reasoning; agentchat
//! `agent_message` and `agent_thinking`; the `usage` extension frame of the three that have
//! one). The general decoder parses every frame into a `serde_json::Value` tree — a map
//! allocated per object, a string per key — only to read three or four fields out of it and
//! drop the rest; on a client that is most of the cost of a frame. This module reads those
//! shapes in one pass over the bytes, borrowing every string that has no escape, and builds the
//! event directly.
//!
//! It only ever answers for a frame it understands completely: anything else — another type,
//! an unknown or repeated key, a `null`, a number that is not a plain whole number, a string
//! serde_json would reject, invalid UTF-8 — returns `None` and the frame takes the general
//! path, which decides what it means or which error it is. So the two paths cannot disagree:
//! where this one answers, the answer is what the general one gives (the tests hold every
//! frame of the golden transcripts and a corpus of variations to that, and so does the fuzz
//! target `decode_reassemble`).

use alloc::borrow::Cow;
use alloc::string::String;

use super::Dialect;
use crate::event::{Envelope, Event, Sequenced, Usage};
use crate::names::FinishReason;

/// Decodes `frame` if it is one of the shapes this path knows; `None` sends it down the general
/// path.
pub(crate) fn decode_server(dialect: Dialect, frame: &[u8]) -> Option<Sequenced> {
    read(dialect, frame).map(|d| d.to_sequenced())
}

/// Reads `frame` in place if it is one of the shapes this path knows. The reassembler applies
/// such a delta without building its event when nobody asked for events: then nothing of the
/// frame is copied but the text it appends.
pub(crate) fn read(dialect: Dialect, frame: &[u8]) -> Option<Delta<'_>> {
    let text = core::str::from_utf8(frame).ok()?;
    let mut s = Scan { t: text, at: 0 };
    let delta = match dialect {
        Dialect::Loom => loom(&mut s)?,
        Dialect::Cueso => cueso(&mut s)?,
        Dialect::Agentloop => agentloop(&mut s)?,
        Dialect::Agentchat => agentchat(&mut s)?,
    };
    s.ws();
    (s.at == s.t.len()).then_some(delta)
}

/// One delta frame, its strings borrowed from the frame wherever they had no escapes.
#[derive(Debug)]
pub(crate) struct Delta<'a> {
    pub run_id: Option<Cow<'a, str>>,
    pub event_id: Option<u64>,
    session_id: Option<Cow<'a, str>>,
    node_id: Option<Cow<'a, str>>,
    pub body: Body<'a>,
}

/// What a [`Delta`] adds: text (or reasoning) to the open message, or arguments to a call —
/// applied in place — or a whole reply or a usage count, which the reassembler applies as
/// their events.
#[derive(Debug)]
pub(crate) enum Body<'a> {
    Text {
        content: Cow<'a, str>,
        /// The message id (loom); empty where the dialect has none.
        id: Cow<'a, str>,
        reasoning: bool,
    },
    Arguments {
        call_id: Option<Cow<'a, str>>,
        name: Option<Cow<'a, str>>,
        delta: Cow<'a, str>,
    },
    /// A whole model response (agentchat `agent_message`): [`Event::LlmComplete`].
    Reply {
        content: Cow<'a, str>,
    },
    Usage(Usage),
}

impl Delta<'_> {
    /// The canonical event, exactly as the general path decodes the frame.
    pub fn to_sequenced(&self) -> Sequenced {
        let event = match &self.body {
            Body::Text {
                content,
                id,
                reasoning: false,
            } => Event::MessageChunk {
                content: String::from(content.as_ref()),
                id: String::from(id.as_ref()),
            },
            Body::Text {
                content,
                id,
                reasoning: true,
            } => Event::ReasoningChunk {
                content: String::from(content.as_ref()),
                id: String::from(id.as_ref()),
            },
            Body::Arguments {
                call_id,
                name,
                delta,
            } => Event::ToolCallChunk {
                call_id: owned(call_id),
                name: owned(name),
                arguments_delta: String::from(delta.as_ref()),
            },
            Body::Reply { content } => Event::LlmComplete {
                content: String::from(content.as_ref()),
                tool_calls: alloc::vec::Vec::new(),
                finish_reason: FinishReason::Stop,
            },
            Body::Usage(usage) => Event::Usage(*usage),
        };
        Sequenced {
            envelope: Envelope {
                session_id: owned(&self.session_id),
                node_id: owned(&self.node_id),
                event_id: self.event_id,
                run_id: owned(&self.run_id),
            },
            event,
        }
    }
}

/// The fields these shapes may carry, each read at most once.
#[derive(Default)]
struct Slots<'a> {
    kind: Option<Cow<'a, str>>,
    content: Option<Cow<'a, str>>,
    id: Option<Cow<'a, str>>,
    run_id: Option<Cow<'a, str>>,
    session_id: Option<Cow<'a, str>>,
    node_id: Option<Cow<'a, str>>,
    event_id: Option<u64>,
    call_id: Option<Cow<'a, str>>,
    name: Option<Cow<'a, str>>,
    arguments_delta: Option<Cow<'a, str>>,
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    total_tokens: Option<u64>,
}

impl Slots<'_> {
    /// Reads a member of the `usage` extension frame; `None` for any other key.
    fn usage_member(&mut self, s: &mut Scan<'_>, key: &str) -> Option<()> {
        match key {
            "prompt_tokens" => put(&mut self.prompt_tokens, s.uint()?),
            "completion_tokens" => put(&mut self.completion_tokens, s.uint()?),
            "total_tokens" => put(&mut self.total_tokens, s.uint()?),
            _ => None,
        }
    }

    /// The usage counts, when all three were read and nothing of another shape was.
    fn usage(&self) -> Option<Usage> {
        if self.content.is_some()
            || self.id.is_some()
            || self.call_id.is_some()
            || self.name.is_some()
            || self.arguments_delta.is_some()
        {
            return None;
        }
        Some(Usage {
            prompt_tokens: self.prompt_tokens?,
            completion_tokens: self.completion_tokens?,
            total_tokens: self.total_tokens?,
        })
    }

    /// Whether a member of the usage frame was read (so the frame is no other shape).
    fn has_usage(&self) -> bool {
        self.prompt_tokens.is_some()
            || self.completion_tokens.is_some()
            || self.total_tokens.is_some()
    }
}

/// Stores a value in an empty slot; a repeated key declines the frame (the general path decides
/// which occurrence counts).
fn put<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value);
    Some(())
}

fn owned(s: &Option<Cow<'_, str>>) -> Option<String> {
    s.as_deref().map(String::from)
}

/// `{"type":"run_stream_event","id":…,"event":{"type":"message_chunk"|"reasoning_chunk"|
/// "tool_call_chunk"|"usage",…}}`.
fn loom<'a>(s: &mut Scan<'a>) -> Option<Delta<'a>> {
    let mut kind = None;
    let mut run_id = None;
    let mut inner = None;
    s.object(|s, key| match key {
        "type" => put(&mut kind, s.string()?),
        "id" => put(&mut run_id, s.string()?),
        "event" => {
            let mut slots = Slots::default();
            s.object(|s, key| match key {
                "type" => put(&mut slots.kind, s.string()?),
                "content" => put(&mut slots.content, s.string()?),
                "id" => put(&mut slots.id, s.string()?),
                "session_id" => put(&mut slots.session_id, s.string()?),
                "node_id" => put(&mut slots.node_id, s.string()?),
                "event_id" => put(&mut slots.event_id, s.uint()?),
                "call_id" => put(&mut slots.call_id, s.string()?),
                "name" => put(&mut slots.name, s.string()?),
                "arguments_delta" => put(&mut slots.arguments_delta, s.string()?),
                k => slots.usage_member(s, k),
            })?;
            put(&mut inner, slots)
        }
        _ => None,
    })?;
    if kind.as_deref() != Some("run_stream_event") {
        return None;
    }
    let e = inner?;
    let body = match e.kind.as_deref()? {
        "usage" => Body::Usage(e.usage()?),
        _ if e.has_usage() => return None,
        k @ ("message_chunk" | "reasoning_chunk") => {
            if e.call_id.is_some() || e.name.is_some() || e.arguments_delta.is_some() {
                return None;
            }
            Body::Text {
                reasoning: k == "reasoning_chunk",
                content: e.content?,
                id: e.id?,
            }
        }
        "tool_call_chunk" => {
            if e.content.is_some() || e.id.is_some() {
                return None;
            }
            Body::Arguments {
                call_id: e.call_id,
                name: e.name,
                delta: e.arguments_delta?,
            }
        }
        _ => return None,
    };
    Some(Delta {
        run_id: Some(run_id?),
        event_id: e.event_id,
        session_id: e.session_id,
        node_id: e.node_id,
        body,
    })
}

/// `{"type":"content_delta","content":…,"role":…}` and
/// `{"type":"tool_call_delta","tool_call":{"id":…,"name":…,"input_json":…}}`, with the
/// extension fields `run_id` and `event_id`.
fn cueso<'a>(s: &mut Scan<'a>) -> Option<Delta<'a>> {
    let mut slots = Slots::default();
    let mut role = None;
    let mut call = None;
    s.object(|s, key| match key {
        "type" => put(&mut slots.kind, s.string()?),
        "content" => put(&mut slots.content, s.string()?),
        "role" => put(&mut role, s.string()?),
        "run_id" => put(&mut slots.run_id, s.string()?),
        "event_id" => put(&mut slots.event_id, s.uint()?),
        "tool_call" => {
            let mut c = Slots::default();
            let mut input_null = None;
            s.object(|s, key| match key {
                "id" => put(&mut c.call_id, s.string()?),
                "name" => put(&mut c.name, s.string()?),
                "input_json" => put(&mut c.arguments_delta, s.string()?),
                // The first delta of a call announces it with `"input": null`; not read.
                "input" => put(&mut input_null, s.null()?),
                _ => None,
            })?;
            put(&mut call, c)
        }
        k => slots.usage_member(s, k),
    })?;
    if slots.has_usage() {
        return (slots.kind.as_deref()? == "usage" && role.is_none() && call.is_none())
            .then(|| usage_frame(&slots))
            .flatten();
    }
    let body = match slots.kind.as_deref()? {
        "content_delta" if call.is_none() => Body::Text {
            content: slots.content?,
            id: Cow::Borrowed(""),
            reasoning: false,
        },
        "tool_call_delta" if slots.content.is_none() && role.is_none() => {
            let c = call?;
            Body::Arguments {
                call_id: c.call_id,
                name: c.name,
                delta: c.arguments_delta.unwrap_or_default(),
            }
        }
        _ => return None,
    };
    Some(Delta {
        run_id: slots.run_id,
        event_id: slots.event_id,
        session_id: None,
        node_id: None,
        body,
    })
}

/// The `usage` extension frame, `{"type":"usage","prompt_tokens":…,"completion_tokens":…,
/// "total_tokens":…,"run_id":…,"event_id":…}`, from the slots its reader filled.
fn usage_frame<'a>(slots: &Slots<'a>) -> Option<Delta<'a>> {
    Some(Delta {
        run_id: slots.run_id.clone(),
        event_id: slots.event_id,
        session_id: None,
        node_id: None,
        body: Body::Usage(slots.usage()?),
    })
}

/// `{"id":…,"type":"response_item","payload":{"type":"message","id":…,"role":"assistant",
/// "content":[{"type":…,"text":…},…]},"run_id":…,"event_id":…}`, a `reasoning` item the same
/// without `role` (and with an optional `duration_ms`), and the `usage` extension frame.
fn agentloop<'a>(s: &mut Scan<'a>) -> Option<Delta<'a>> {
    let mut slots = Slots::default();
    let mut frame_id = None;
    let mut item = None;
    s.object(|s, key| match key {
        "type" => put(&mut slots.kind, s.string()?),
        // Every agentloop frame has a unique id; nothing reads it back.
        "id" => put(&mut frame_id, s.string()?),
        "run_id" => put(&mut slots.run_id, s.string()?),
        "event_id" => put(&mut slots.event_id, s.uint()?),
        "payload" => put(&mut item, response_item(s)?),
        k => slots.usage_member(s, k),
    })?;
    if slots.has_usage() {
        return (slots.kind.as_deref()? == "usage" && item.is_none() && frame_id.is_none())
            .then(|| usage_frame(&slots))
            .flatten();
    }
    if slots.kind.as_deref()? != "response_item" {
        return None;
    }
    let (reasoning, content) = item?;
    Some(Delta {
        run_id: slots.run_id,
        event_id: slots.event_id,
        session_id: None,
        node_id: None,
        body: Body::Text {
            content,
            id: Cow::Borrowed(""),
            reasoning,
        },
    })
}

/// The payload of an assistant `message` or a `reasoning` item: whether it is reasoning, and
/// its text (the `text` of every content part, joined, as the general path reads it).
fn response_item<'a>(s: &mut Scan<'a>) -> Option<(bool, Cow<'a, str>)> {
    let mut kind = None;
    let mut id = None;
    let mut role = None;
    let mut duration = None;
    let mut content: Option<Cow<'a, str>> = None;
    s.object(|s, key| match key {
        "type" => put(&mut kind, s.string()?),
        "id" => put(&mut id, s.string()?),
        "role" => put(&mut role, s.string()?),
        "duration_ms" => put(&mut duration, s.uint()?),
        "content" => {
            let mut text: Option<Cow<'a, str>> = None;
            s.array(|s| {
                let mut part_type = None;
                let mut part_text = None;
                s.object(|s, key| match key {
                    "type" => put(&mut part_type, s.string()?),
                    "text" => put(&mut part_text, s.string()?),
                    _ => None,
                })?;
                if let Some(t) = part_text {
                    text = Some(match text.take() {
                        None => t,
                        Some(before) => Cow::Owned(before.into_owned() + &t),
                    });
                }
                Some(())
            })?;
            put(&mut content, text.unwrap_or_default())
        }
        _ => None,
    })?;
    let reasoning = match (kind.as_deref()?, role.as_deref()) {
        ("message", Some("assistant") | None) if duration.is_none() => false,
        ("reasoning", None) => true,
        _ => return None,
    };
    Some((reasoning, content.unwrap_or_default()))
}

/// `{"type":"agent_message","message":…}`, `{"type":"agent_thinking","reasoning":…}` and the
/// `usage` extension frame, each with `run_id` and `event_id`.
fn agentchat<'a>(s: &mut Scan<'a>) -> Option<Delta<'a>> {
    let mut slots = Slots::default();
    let mut message = None;
    let mut reasoning = None;
    s.object(|s, key| match key {
        "type" => put(&mut slots.kind, s.string()?),
        "message" => put(&mut message, s.string()?),
        "reasoning" => put(&mut reasoning, s.string()?),
        "run_id" => put(&mut slots.run_id, s.string()?),
        "event_id" => put(&mut slots.event_id, s.uint()?),
        k => slots.usage_member(s, k),
    })?;
    let body = match (slots.kind.as_deref()?, message, reasoning) {
        ("usage", None, None) => return usage_frame(&slots),
        _ if slots.has_usage() => return None,
        ("agent_message", Some(content), None) => Body::Reply { content },
        ("agent_thinking", None, Some(content)) => Body::Text {
            content,
            id: Cow::Borrowed(""),
            reasoning: true,
        },
        _ => return None,
    };
    Some(Delta {
        run_id: slots.run_id,
        event_id: slots.event_id,
        session_id: None,
        node_id: None,
        body,
    })
}

/// A cursor over JSON text that reads only what these shapes hold, strictly: whatever it does
/// not accept ends the fast path with `None`. The text is valid UTF-8 and every cut falls on
/// an ASCII byte, so slices of it are strings without a second check.
struct Scan<'a> {
    t: &'a str,
    at: usize,
}

impl<'a> Scan<'a> {
    /// The byte at `i`, if any.
    fn byte(&self, i: usize) -> Option<u8> {
        self.t.as_bytes().get(i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.byte(self.at) {
            self.at += 1;
        }
    }

    /// Skips whitespace and consumes `c` if it comes next.
    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.byte(self.at) == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// An object whose every member `member` reads (it gets the key and reads the value).
    fn object(&mut self, mut member: impl FnMut(&mut Self, &str) -> Option<()>) -> Option<()> {
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
            member(self, &key)?;
            if self.eat(b'}') {
                return Some(());
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    /// An array whose every element `element` reads.
    fn array(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
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

    fn null(&mut self) -> Option<()> {
        self.ws();
        let rest = self.t.as_bytes().get(self.at..)?;
        rest.starts_with(b"null").then(|| self.at += 4)
    }

    /// A whole number without sign, fraction, exponent or leading zero, that fits a u64.
    fn uint(&mut self) -> Option<u64> {
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
    fn string(&mut self) -> Option<Cow<'a, str>> {
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
    fn unicode_escape(&mut self) -> Option<char> {
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

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.t.as_bytes().get(self.at..self.at + 4)?;
        let mut n = 0;
        for &d in digits {
            n = n * 16 + char::from(d).to_digit(16)?;
        }
        self.at += 4;
        Some(n)
    }
}

#[cfg(test)]
mod tests;
