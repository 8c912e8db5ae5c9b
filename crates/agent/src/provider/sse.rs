//! Server-sent events framing (the WHATWG `text/event-stream` rules), sans-IO.
//!
//! Bytes arrive in arbitrary pieces; a line is only decoded once it is complete, so a piece
//! that ends inside a multi-byte UTF-8 character or between the `\r` and `\n` of a line break
//! changes nothing. All three line breaks (`\n`, `\r\n`, lone `\r`) are honoured, as the spec
//! requires and as Google's CRLF streams need.

use alloc::string::String;
use alloc::vec::Vec;

/// One thing the framing layer found in the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SseItem {
    /// A dispatched event: its `event:` name (empty when none was given) and its `data:` lines
    /// joined with `\n`.
    Event { event: String, data: String },
    /// Lines that are not SSE fields at all, joined with `\n`. The spec ignores them, but
    /// Gemini appends a bare pretty-printed JSON error object to a stream this way, and a
    /// server that ignored `stream: true` answers with bare JSON; the decoders look inside.
    Stray(String),
    /// An event grew past [`MAX_EVENT_BYTES`] and was dropped.
    Oversized,
}

/// The largest event (or run of stray lines) kept, so a hostile or broken body cannot make the
/// isolate run out of memory. Far above any real provider event.
pub(crate) const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// Incremental SSE parser: [`SseParser::push`] bytes, get [`SseItem`]s.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    /// The bytes of the line being read, not yet decoded.
    line: Vec<u8>,
    /// The last piece ended on `\r`; a `\n` at the start of the next piece belongs to it.
    pending_cr: bool,
    /// At least one line was read, so a leading BOM has been dealt with.
    started: bool,
    /// The current line overflowed and is being skipped up to its end.
    skipping: bool,
    event: String,
    data: String,
    has_data: bool,
    stray: String,
}

impl SseParser {
    /// Feeds the next piece of the body; complete events are appended to `items`.
    pub(crate) fn push(&mut self, bytes: &[u8], items: &mut Vec<SseItem>) {
        let mut rest = bytes;
        loop {
            if self.pending_cr {
                match rest.split_first() {
                    Some((b'\n', tail)) => {
                        self.pending_cr = false;
                        rest = tail;
                    }
                    Some(_) => self.pending_cr = false,
                    None => return,
                }
            }
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(pos) => {
                    let (head, tail) = rest.split_at(pos);
                    self.append(head, items);
                    if let Some((&brk, tail)) = tail.split_first() {
                        self.pending_cr = brk == b'\r';
                        rest = tail;
                    } else {
                        rest = tail;
                    }
                    self.end_line(items);
                }
                None => {
                    self.append(rest, items);
                    return;
                }
            }
        }
    }

    /// The body ended: an unterminated last line still counts (Anthropic's SDK fixtures end
    /// without a newline), and a last event without its blank line is still dispatched.
    pub(crate) fn finish(&mut self, items: &mut Vec<SseItem>) {
        if !self.line.is_empty() || self.skipping {
            self.end_line(items);
        }
        self.dispatch(items);
    }

    fn append(&mut self, bytes: &[u8], items: &mut Vec<SseItem>) {
        if self.skipping {
            return;
        }
        let pending = self.line.len() + self.data.len() + self.stray.len();
        if pending.saturating_add(bytes.len()) > MAX_EVENT_BYTES {
            self.line.clear();
            self.reset_event();
            self.skipping = true;
            items.push(SseItem::Oversized);
            return;
        }
        self.line.extend_from_slice(bytes);
    }

    fn end_line(&mut self, items: &mut Vec<SseItem>) {
        if self.skipping {
            self.skipping = false;
            self.line.clear();
            return;
        }
        let raw = core::mem::take(&mut self.line);
        let decoded = String::from_utf8_lossy(&raw);
        let mut line: &str = &decoded;
        if !self.started {
            self.started = true;
            line = line.strip_prefix('\u{feff}').unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch(items);
        } else if line.starts_with(':') {
            // A comment: keep-alives such as OpenRouter's `: OPENROUTER PROCESSING`.
        } else {
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line, ""),
            };
            match field {
                "data" => {
                    self.flush_stray(items);
                    if self.has_data {
                        self.data.push('\n');
                    }
                    self.data.push_str(value);
                    self.has_data = true;
                }
                "event" => {
                    self.flush_stray(items);
                    self.event.clear();
                    self.event.push_str(value);
                }
                "id" | "retry" => self.flush_stray(items),
                _ => {
                    if !self.stray.is_empty() {
                        self.stray.push('\n');
                    }
                    self.stray.push_str(line);
                }
            }
        }
        // Reuse the line's allocation for the next one.
        self.line = raw;
        self.line.clear();
    }

    fn dispatch(&mut self, items: &mut Vec<SseItem>) {
        self.flush_stray(items);
        if self.has_data {
            items.push(SseItem::Event {
                event: core::mem::take(&mut self.event),
                data: core::mem::take(&mut self.data),
            });
        }
        self.reset_event();
    }

    fn flush_stray(&mut self, items: &mut Vec<SseItem>) {
        if !self.stray.is_empty() {
            items.push(SseItem::Stray(core::mem::take(&mut self.stray)));
        }
    }

    fn reset_event(&mut self) {
        self.event.clear();
        self.data.clear();
        self.has_data = false;
        self.stray.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    fn parse_in_pieces(body: &[u8], cut: usize) -> Vec<SseItem> {
        let mut parser = SseParser::default();
        let mut items = Vec::new();
        let (a, b) = body.split_at(cut);
        parser.push(a, &mut items);
        parser.push(b, &mut items);
        parser.finish(&mut items);
        items
    }

    fn event(event: &str, data: &str) -> SseItem {
        SseItem::Event {
            event: event.to_string(),
            data: data.to_string(),
        }
    }

    #[test]
    fn every_line_break_and_every_cut_gives_the_same_events() {
        let body = "\u{feff}event: a\r\ndata: h\u{e9}llo \u{1f600}\r\n\r\n: comment\rdata:x\rdata: y\r\rdata: last\n\n";
        let expected = vec![
            event("a", "h\u{e9}llo \u{1f600}"),
            event("", "x\ny"),
            event("", "last"),
        ];
        for cut in 0..=body.len() {
            assert_eq!(
                parse_in_pieces(body.as_bytes(), cut),
                expected,
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn an_unterminated_last_line_is_dispatched_at_the_end() {
        assert_eq!(
            parse_in_pieces(b"event: message_stop\ndata: {}", 5),
            vec![event("message_stop", "{}")]
        );
    }

    #[test]
    fn lines_that_are_not_fields_come_out_as_stray_text() {
        let body = b"data: 1\n\n{\n  \"error\": {\"code\": 499}\n}\n";
        assert_eq!(
            parse_in_pieces(body, 12),
            vec![
                event("", "1"),
                SseItem::Stray("{\n  \"error\": {\"code\": 499}\n}".to_string())
            ]
        );
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        assert_eq!(
            parse_in_pieces(b"data: \xff\xfe\n\n", 7),
            vec![event("", "\u{fffd}\u{fffd}")]
        );
    }
}
