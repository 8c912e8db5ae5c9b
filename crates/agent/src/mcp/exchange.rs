//! One HTTP response being read: a single JSON body, or an SSE stream of JSON-RPC messages
//! (priming events with empty data, notifications and server requests, then the response),
//! fed in pieces split anywhere.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::Value;

use crate::provider::sse::{SseItem, SseParser};

/// How the body is being read.
#[derive(Debug)]
enum Body {
    /// Kept whole and read at the end: JSON, an error body, anything not an event stream.
    Whole(Vec<u8>),
    /// Read event by event, so progress and pings surface before the stream ends.
    Stream(SseParser),
}

/// What reading a piece of the body found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Found {
    /// A JSON-RPC message (or anything JSON: the operation sorts it out).
    Message(Value),
    /// An event or body that is not JSON.
    Garbage(String),
    /// The body grew past the limit; nothing more is read.
    TooLarge,
}

/// The response to one request.
#[derive(Debug)]
pub(crate) struct Exchange {
    /// The status, once the head came.
    pub(crate) status: Option<u16>,
    /// The `Mcp-Session-Id` the response carried.
    pub(crate) session_id: Option<String>,
    body: Body,
    items: Vec<SseItem>,
    read: usize,
    limit: usize,
    over: bool,
}

impl Exchange {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            status: None,
            session_id: None,
            body: Body::Whole(Vec::new()),
            items: Vec::new(),
            read: 0,
            limit,
            over: false,
        }
    }

    /// Whether the body is read as an event stream.
    pub(crate) fn is_stream(&self) -> bool {
        matches!(self.body, Body::Stream(_))
    }

    /// Whether the status is 2xx.
    pub(crate) fn ok(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }

    pub(crate) fn on_head(&mut self, status: u16, headers: &[(String, String)]) {
        self.status = Some(status);
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.trim())
        };
        self.session_id = header("mcp-session-id")
            .filter(|v| !v.is_empty())
            .map(String::from);
        let event_stream = header("content-type").is_some_and(|t| {
            t.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("text/event-stream"))
        });
        if event_stream && self.ok() {
            self.body = Body::Stream(SseParser::default());
        }
    }

    /// Reads a piece of the body; messages complete in it go to `found`.
    pub(crate) fn on_body(&mut self, chunk: &[u8], found: &mut Vec<Found>) {
        if self.over {
            return;
        }
        self.read = self.read.saturating_add(chunk.len());
        if self.read > self.limit {
            self.over = true;
            self.body = Body::Whole(Vec::new());
            found.push(Found::TooLarge);
            return;
        }
        match &mut self.body {
            Body::Whole(bytes) => bytes.extend_from_slice(chunk),
            Body::Stream(parser) => {
                parser.push(chunk, &mut self.items);
                self.drain(found);
            }
        }
    }

    /// The body ended: what was held back is read.
    pub(crate) fn on_end(&mut self, found: &mut Vec<Found>) {
        if self.over {
            return;
        }
        match &mut self.body {
            Body::Whole(bytes) => {
                let bytes = core::mem::take(bytes);
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    return;
                }
                match serde_json::from_slice::<Value>(&bytes) {
                    // A 2025-03-26 server may batch.
                    Ok(Value::Array(messages)) => {
                        found.extend(messages.into_iter().map(Found::Message));
                    }
                    Ok(message) => found.push(Found::Message(message)),
                    Err(_) => found.push(Found::Garbage(snippet(&bytes))),
                }
            }
            Body::Stream(parser) => {
                parser.finish(&mut self.items);
                self.drain(found);
            }
        }
    }

    fn drain(&mut self, found: &mut Vec<Found>) {
        for item in self.items.drain(..) {
            match item {
                SseItem::Event { data, .. } => {
                    // A priming event (an id and empty data) only sets up resumption.
                    if data.trim().is_empty() {
                        continue;
                    }
                    match serde_json::from_str::<Value>(&data) {
                        Ok(message) => found.push(Found::Message(message)),
                        Err(_) => found.push(Found::Garbage(snippet(data.as_bytes()))),
                    }
                }
                SseItem::Stray(text) => found.push(Found::Garbage(snippet(text.as_bytes()))),
                SseItem::Oversized => found.push(Found::TooLarge),
            }
        }
    }
}

/// The start of a body that is not JSON, for an error message.
pub(crate) fn snippet(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    match text.char_indices().nth(160) {
        Some((cut, _)) => {
            let mut short = text[..cut].to_string();
            short.push('…');
            short
        }
        None => text.to_string(),
    }
}
