//! A row of the event log: a batch of one run's events with consecutive ids, stored without
//! repeating what they share, and read back into the very lines the session logged.
//!
//! A streamed piece carries a few characters of text in some 150 bytes of JSON, most of it
//! the same from piece to piece (`type`, the message `id`, `session_id`, `node_id`, the event
//! id). A row keeps its pieces as their text alone: what they share (their *shape*: the event
//! with its text emptied and no event id) is written once, when it changes, and each piece's
//! event id is its place in the row (the row's key holds the last one, and its ids are
//! consecutive). The shape carries over from row to row of a run, so a paced stream writes it
//! once per response, not once per row. Any other event is kept as its line, except that the
//! full text a response streamed (`llm_complete`'s `content`, `run_end`'s `reply`) is not
//! written again: the line says which pieces hold it.
//!
//! The body is a list of records joined by [`RS`], each an event unless it says otherwise by
//! its first character:
//! - [`SHAPE`] and the shape's JSON: the pieces after it have this shape (not an event);
//! - [`LINE`] and an event's line, as it is;
//! - [`CUT`], `<from> <to> <at>`, [`LINE`] and an event's line with the JSON string of the
//!   text of the message pieces with ids `from..=to` cut out at byte `at`;
//! - anything else: a piece's text, of the current shape.
//!
//! Lines are JSON, which holds no raw control character, so they never contain these
//! markers; a piece whose text does is kept as its line. Every piece written as text is
//! checked to read back as its line, byte for byte, or it too is kept as its line.
//!
//! Reading a row needs what the rows before it set (the shape, the message pieces), so a run's
//! rows are read in order, from its first, by one [`Reader`] ([`Store::events`] does). The
//! writer remembers the same between rows in a [`Memory`], which a restart loses: the next
//! row then starts with its shape again, and cuts only text it wrote itself.
//!
//! [`Store::events`]: super::Store::events

use weft_protocol::{Event, Sequenced};

/// Between records.
pub const RS: char = '\u{1e}';
/// A shape record.
const SHAPE: char = '\u{1d}';
/// A line record, and the end of a cut record's numbers.
const LINE: char = '\u{1c}';
/// A line with a message's text cut out.
const CUT: char = '\u{1f}';

/// The shortest text (as a JSON string) worth a cut record instead of itself.
const CUT_MIN: usize = 32;

/// An event on its way into the log.
#[derive(Debug, Clone)]
pub struct Logged {
    pub run_id: String,
    pub event_id: u64,
    /// The event's line: what the log's readers get back.
    pub json: String,
    /// For a streamed piece, its text apart from its shape.
    pub delta: Option<Delta>,
}

/// A streamed piece taken apart: its shape (and the shape's JSON, what tells one shape from
/// another) and its text.
#[derive(Debug, Clone)]
pub struct Delta {
    shape: Sequenced,
    shape_json: String,
    text: String,
}

impl Delta {
    /// `None` for an event that is not a streamed piece ([`Event::is_delta`]).
    pub fn of(ev: &Sequenced) -> Option<Delta> {
        if !ev.event.is_delta() {
            return None;
        }
        let mut shape = ev.clone();
        shape.envelope.event_id = None;
        shape.envelope.run_id = None;
        let text = core::mem::take(text_of(&mut shape.event)?);
        let shape_json = shape.to_json();
        Some(Delta {
            shape,
            shape_json,
            text,
        })
    }
}

/// The text field of a streamed piece.
fn text_of(event: &mut Event) -> Option<&mut String> {
    match event {
        Event::MessageChunk { content, .. } | Event::ReasoningChunk { content, .. } => {
            Some(content)
        }
        Event::ToolCallChunk {
            arguments_delta, ..
        } => Some(arguments_delta),
        _ => None,
    }
}

/// A piece's line: its shape with its text and event id put back.
fn expand(shape: &Sequenced, text: &str, event_id: u64) -> Result<String, String> {
    let mut ev = shape.clone();
    ev.envelope.event_id = Some(event_id);
    match text_of(&mut ev.event) {
        Some(slot) => text.clone_into(slot),
        None => return Err("a log row's shape is not a streamed piece".into()),
    }
    Ok(ev.to_json())
}

/// The text of a message's pieces written as text, and their first and last event ids.
#[derive(Debug, Clone)]
struct Message {
    id: String,
    from: u64,
    to: u64,
    text: String,
}

/// What the writer of a run's rows remembers from one row to the next (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct Memory {
    /// The last shape written: its JSON, and the shape as the reader reads it back.
    shape: Option<(String, Sequenced)>,
    message: Option<Message>,
}

impl Memory {
    /// The first and last event ids of the message pieces written as text last, if together
    /// they are `text`: where the history can point for a reply instead of holding it again
    /// ([`message_text`] reads it back).
    pub fn message_holding(&self, text: &str) -> Option<(u64, u64)> {
        self.message
            .as_ref()
            .filter(|m| m.text == text)
            .map(|m| (m.from, m.to))
    }
}

/// The body of a row holding `events` (one run's, with consecutive ids), and what the writer
/// remembers once it is written. `memory` is what it remembered after the run's last row.
pub fn encode(events: &[Logged], memory: &Memory) -> (String, Memory) {
    let mut memory = memory.clone();
    let mut records: Vec<String> = Vec::with_capacity(events.len() + 1);
    for ev in events {
        if let Some(delta) = ev.delta.as_ref().filter(|d| plain(&d.text)) {
            if memory.shape.as_ref().map(|(json, _)| json) != Some(&delta.shape_json) {
                if let Ok(read) = serde_json::from_str::<Sequenced>(&delta.shape_json) {
                    records.push(format!("{SHAPE}{}", delta.shape_json));
                    memory.shape = Some((delta.shape_json.clone(), read));
                }
            }
            // Checked as the reader will read it: a piece that does not expand to its line, from
            // the shape read back, is kept as its line.
            let expands = |(json, read): &(String, Sequenced)| {
                *json == delta.shape_json
                    && expand(read, &delta.text, ev.event_id).as_deref() == Ok(&ev.json)
            };
            if memory.shape.as_ref().is_some_and(expands) {
                records.push(delta.text.clone());
                remember_piece(&mut memory, &delta.shape, &delta.text, ev.event_id);
                continue;
            }
        }
        if matches!(&ev.delta, Some(d) if matches!(d.shape.event, Event::MessageChunk { .. })) {
            // A message piece kept as a line: no cut may span it.
            memory.message = None;
        }
        records.push(line_record(&ev.json, memory.message.as_ref()));
    }
    (records.join(&RS.to_string()), memory)
}

/// Whether a piece's text can be a record of its own.
fn plain(text: &str) -> bool {
    !text.contains([RS, SHAPE, LINE, CUT])
}

fn remember_piece(memory: &mut Memory, shape: &Sequenced, text: &str, event_id: u64) {
    let Event::MessageChunk { id, .. } = &shape.event else {
        return;
    };
    match &mut memory.message {
        // Other events may come between a message's pieces: its range spans them, and only
        // message pieces in it are read back.
        Some(m) if m.id == *id => {
            m.text.push_str(text);
            m.to = event_id;
        }
        _ => {
            memory.message = Some(Message {
                id: id.clone(),
                from: event_id,
                to: event_id,
                text: text.to_string(),
            })
        }
    }
}

/// A line's record: the line, or the line with the message's text cut out where it holds it.
fn line_record(line: &str, message: Option<&Message>) -> String {
    if let Some(m) = message {
        if let Ok(quoted) = serde_json::to_string(&m.text) {
            if quoted.len() >= CUT_MIN {
                if let Some(at) = line.find(&quoted) {
                    let rest = &line[at + quoted.len()..];
                    return format!("{CUT}{} {} {at}{LINE}{}{rest}", m.from, m.to, &line[..at]);
                }
            }
        }
    }
    format!("{LINE}{line}")
}

/// Reads a run's rows back into lines, in order (see the module docs).
#[derive(Debug, Default)]
pub struct Reader {
    shape: Option<Sequenced>,
    /// The message pieces read as text so far: event id and text, by id.
    pieces: Vec<(u64, String)>,
}

impl Reader {
    /// Appends the lines of the row whose last event id is `last` to `out`.
    pub fn row(&mut self, last: u64, body: &str, out: &mut Vec<String>) -> Result<(), String> {
        for record in records(last, body)? {
            let (id, record) = match record {
                Record::Shape(shape) => {
                    self.shape = Some(shape);
                    continue;
                }
                Record::Event(id, record) => (id, record),
            };
            if let Some(line) = record.strip_prefix(LINE) {
                out.push(line.to_string());
            } else if let Some(cut) = record.strip_prefix(CUT) {
                out.push(self.uncut(cut)?);
            } else {
                let Some(shape) = &self.shape else {
                    return Err(format!("log event {id} is text before any shape"));
                };
                out.push(expand(shape, record, id)?);
                if matches!(shape.event, Event::MessageChunk { .. }) {
                    self.pieces.push((id, record.to_string()));
                }
            }
        }
        Ok(())
    }

    /// A cut record's line, the message's text put back.
    fn uncut(&self, cut: &str) -> Result<String, String> {
        let bad = || format!("a log row's cut record does not read: {cut:.40}");
        let (numbers, line) = cut.split_once(LINE).ok_or_else(bad)?;
        let mut n = numbers.split(' ').map(str::parse::<u64>);
        let (Some(Ok(from)), Some(Ok(to)), Some(Ok(at)), None) =
            (n.next(), n.next(), n.next(), n.next())
        else {
            return Err(bad());
        };
        let at = usize::try_from(at).map_err(|_| bad())?;
        if !line.is_char_boundary(at) {
            return Err(bad());
        }
        let start = self.pieces.partition_point(|(id, _)| *id < from);
        let text: String = self.pieces[start..]
            .iter()
            .take_while(|(id, _)| *id <= to)
            .map(|(_, text)| text.as_str())
            .collect();
        let quoted = serde_json::to_string(&text).map_err(|e| e.to_string())?;
        Ok(format!("{}{quoted}{}", &line[..at], &line[at..]))
    }
}

/// The text of the message pieces with event ids `from..=to`, read from the rows of a run's log
/// that hold them (each its last event id and body, in order): the range a [`Memory`] gave
/// ([`Memory::message_holding`]), which holds one message's pieces, written as text, and other
/// events. The shape in effect at `from` is a message's, so no row before these is needed:
/// only a shape record met on the way says that the text records after it are something else.
pub fn message_text(rows: &[(u64, String)], from: u64, to: u64) -> Result<String, String> {
    let mut text = String::new();
    let mut message = true;
    for (last, body) in rows {
        for record in records(*last, body)? {
            match record {
                Record::Shape(shape) => {
                    message = matches!(shape.event, Event::MessageChunk { .. });
                }
                Record::Event(id, record) => {
                    if message && (from..=to).contains(&id) && !record.starts_with([LINE, CUT]) {
                        text.push_str(record);
                    }
                }
            }
        }
    }
    Ok(text)
}

/// A record of a row: a shape, or an event's record with its event id.
enum Record<'a> {
    Shape(Sequenced),
    Event(u64, &'a str),
}

/// The records of the row whose last event id is `last`, each event's numbered (the shape
/// records carry none).
fn records(last: u64, body: &str) -> Result<Vec<Record<'_>>, String> {
    let raw: Vec<&str> = body.split(RS).collect();
    let events = raw.iter().filter(|r| !r.starts_with(SHAPE)).count() as u64;
    let Some(mut id) = (last + 1).checked_sub(events) else {
        return Err(format!("a log row of {events} events ends at id {last}"));
    };
    raw.into_iter()
        .map(|record| match record.strip_prefix(SHAPE) {
            Some(json) => serde_json::from_str(json)
                .map(Record::Shape)
                .map_err(|e| format!("a log row's shape does not read: {e}")),
            None => {
                id += 1;
                Ok(Record::Event(id - 1, record))
            }
        })
        .collect()
}

/// A row of a run's log as stored: its last event id and its text, in the layout it was
/// written in.
#[derive(Debug, Clone)]
pub enum Stored {
    /// A row of `event_batches`, in this module's form.
    Batch { last: u64, body: String },
    /// A row of the layouts before it: its events' lines joined by newlines (JSON text holds
    /// no raw newline); one line for a row of `events`.
    Lines { last: u64, json: String },
}

impl Stored {
    fn last(&self) -> u64 {
        match self {
            Stored::Batch { last, .. } | Stored::Lines { last, .. } => *last,
        }
    }
}

/// A run's lines from its rows, whatever their layout: a run resumed across the upgrade has
/// rows in both, which event ids order. The `Batch` rows must come in the order of their keys.
pub fn read_run(mut rows: Vec<Stored>) -> Result<Vec<String>, String> {
    // Stable: rows of one layout keep their order.
    rows.sort_by_key(Stored::last);
    let mut reader = Reader::default();
    let mut lines = Vec::new();
    for row in rows {
        match row {
            Stored::Batch { last, body } => reader.row(last, &body, &mut lines)?,
            Stored::Lines { json, .. } => lines.extend(json.split('\n').map(str::to_string)),
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests;
