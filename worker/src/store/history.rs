//! The conversation, stored once: `history` holds one row per message, written when the message
//! is new; a run's checkpoint, the session state and a logged state snapshot hold
//! `history_rows` (or `messages_rows`), ranges of those rows, in place of the messages.
//!
//! A reply is streamed before it is a message: while its run's event log is kept, the log holds
//! its text already, as the pieces it was sent in (log_row.rs). Its history row points at those
//! pieces instead of holding the text again ([`IN_LOG`]); the retention that deletes the log
//! writes the text into the row first ([`Store::take_back_history_text`]). Every reader of a
//! history row goes through [`Store::history_row`], which reads either back into the same JSON.

use serde_json::Value;
use weft_agent::engine::{Run, Session as SessionState};

use super::{i, int, json_error, rows, s, text, Store, INLINE_MAX};

/// A stored history message: its row and a hash of its JSON.
pub(super) type HistoryRow = (i64, u64);

/// How a history row says its message's text is in an event log: the marker, then
/// `<log> <from> <to> <length> <at>`, a newline, and the message's JSON with its text (the JSON
/// string of the pieces `from..=to` of run log `log`, `length` bytes unquoted) cut out at byte
/// `at`. JSON holds no raw newline, and a row's JSON never starts with a NUL (see `SPILLED`).
const IN_LOG: &str = "\0log:";

/// The shortest reply a history row points at rather than holds: below it, the pointer and the
/// read of the log are not worth the bytes saved.
const POINT_MIN: usize = 256;

impl Store {
    /// The session's engine state (history, iterations), with the remembered approvals.
    pub fn session_state(&self) -> worker::Result<SessionState> {
        let mut state: SessionState = match self.meta("session")? {
            // A state that no longer reads (corrupt, or of a shape this build does not know) is
            // an error, never an empty session: a run saving one over it would delete its
            // history rows.
            Some(json) => {
                let value = serde_json::from_str(&json).map_err(json_error)?;
                SessionState::from_json(&self.with_history(value)?)
                    .map_err(worker::Error::RustError)?
            }
            None => SessionState::default(),
        };
        let rows = rows(&self.sql, "SELECT tool FROM approvals", None)?;
        state.always_allowed = rows
            .into_iter()
            .filter_map(|mut r| text(&mut r, 0))
            .collect();
        Ok(state)
    }

    /// Stores the session's engine state after a run: its history as rows (the new messages
    /// only), the rest with a pointer to them. Rows no state points at any more (a compaction
    /// replaced them) are deleted.
    pub fn save_session_state(&self, state: &SessionState) -> worker::Result<()> {
        let value = serde_json::to_value(state).map_err(json_error)?;
        let value = self.without_history(value)?;
        self.set_meta("session", &value.to_string())?;
        if let Some(first) = self
            .history
            .borrow()
            .as_ref()
            .and_then(|rows| rows.first().map(|(seq, _)| *seq))
        {
            self.keep_listed_text(first)?;
            self.exec("DELETE FROM history WHERE seq < ?", vec![i(first)])?;
        }
        for tool in &state.always_allowed {
            self.exec(
                "INSERT OR IGNORE INTO approvals (tool) VALUES (?)",
                vec![s(tool)],
            )?;
        }
        Ok(())
    }

    /// A run's checkpoint as stored: the run without its session's history, which
    /// [`Store::save_session_state`]'s rows hold (only the messages new since the last save
    /// are written).
    pub fn run_checkpoint(&self, run: &Run) -> worker::Result<String> {
        let value = serde_json::to_value(run).map_err(json_error)?;
        Ok(self.without_history(value)?.to_string())
    }

    /// A run from its stored checkpoint (with or without its history inline: checkpoints of
    /// builds before 2026-11-24 hold it).
    pub fn restore_run(&self, checkpoint: &str) -> Result<Run, String> {
        let value: Value = serde_json::from_str(checkpoint).map_err(|e| e.to_string())?;
        let value = self.with_history(value).map_err(|e| e.to_string())?;
        Run::from_checkpoint(&value)
    }

    /// Replaces `session.history` (in a run) or `history` (in a session state) with
    /// `history_rows`, the ranges of history rows holding it, writing the messages that are
    /// not stored yet.
    fn without_history(&self, mut value: Value) -> worker::Result<Value> {
        let Some(holder) = history_holder(&mut value) else {
            return Ok(value);
        };
        if let Some(Value::Array(messages)) = holder.remove("history") {
            holder.insert("history_rows".into(), self.store_messages(&messages)?);
        }
        Ok(value)
    }

    /// The inverse of [`Store::without_history`]: `history_rows` read back into `history`.
    fn with_history(&self, mut value: Value) -> worker::Result<Value> {
        let Some(holder) = history_holder(&mut value) else {
            return Ok(value);
        };
        if let Some(pointer) = holder.remove("history_rows") {
            let messages = self.load_messages(&pointer, true)?.ok_or_else(|| {
                worker::Error::RustError("a history row of the session state is missing".into())
            })?;
            holder.insert("history".into(), Value::Array(messages));
        }
        Ok(value)
    }

    /// Writes the messages of a history that are not stored yet; returns the ranges of rows
    /// that hold it, in order.
    fn store_messages(&self, messages: &[Value]) -> worker::Result<Value> {
        let jsons: Vec<String> = messages.iter().map(Value::to_string).collect();
        let stored = self.history_rows_in_memory()?;
        let common = stored
            .iter()
            .zip(&jsons)
            .take_while(|((_, hash), json)| *hash == fnv(json))
            .count();
        let mut rows: Vec<HistoryRow> = stored[..common].to_vec();
        let new = jsons[common..].iter().zip(&messages[common..]);
        for (seq, (json, value)) in (self.next_history_seq()?..).zip(new) {
            let key = format!("history:{seq}");
            let message = match self.pointer_into_log(value, json) {
                Some(pointer) => {
                    // What `pack` would clear: the parts of an earlier value of the key.
                    self.exec("DELETE FROM spill WHERE key = ?", vec![s(&key)])?;
                    pointer
                }
                None => self.pack(&key, json)?,
            };
            self.exec(
                "INSERT OR REPLACE INTO history (seq, message) VALUES (?, ?)",
                vec![i(seq), s(&message)],
            )?;
            rows.push((seq, fnv(json)));
        }
        let pointer = ranges(&rows);
        *self.history.borrow_mut() = Some(rows);
        Ok(pointer)
    }

    /// The row to store for a message (`json`, of `value`) whose text the event log holds
    /// ([`Store::text_in_log`]): an [`IN_LOG`] pointer, checked to read back into `json`.
    fn pointer_into_log(&self, value: &Value, json: &str) -> Option<String> {
        let text = value.get("content")?.as_str()?;
        if text.len() < POINT_MIN {
            return None;
        }
        let (log, from, to) = self.text_in_log(text)?;
        let mut emptied = value.clone();
        *emptied.get_mut("content")? = Value::String(String::new());
        let emptied = emptied.to_string();
        let at = emptied.find(r#""content":"""#)? + r#""content":"#.len();
        let rest = format!("{}{}", &emptied[..at], &emptied[at + 2..]);
        let quoted = serde_json::to_string(text).ok()?;
        if rest.len() > INLINE_MAX || format!("{}{quoted}{}", &rest[..at], &rest[at..]) != json {
            return None;
        }
        Some(format!(
            "{IN_LOG}{log} {from} {to} {} {at}\n{rest}",
            text.len()
        ))
    }

    /// The JSON an [`IN_LOG`] pointer (after the marker) stands for, its text read from the log.
    fn message_from_log(&self, seq: i64, pointer: &str) -> worker::Result<String> {
        let bad = |why: &str| {
            worker::Error::RustError(format!(
                "history row {seq} points into an event log, but {why}"
            ))
        };
        let unreadable = || bad("the pointer does not read");
        let (numbers, rest) = pointer.split_once('\n').ok_or_else(unreadable)?;
        let n: Vec<u64> = numbers
            .split(' ')
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map_err(|_| unreadable())?;
        let &[log, from, to, length, at] = &n[..] else {
            return Err(unreadable());
        };
        let (Ok(log), Ok(at)) = (i64::try_from(log), usize::try_from(at)) else {
            return Err(unreadable());
        };
        if !rest.is_char_boundary(at) {
            return Err(unreadable());
        }
        let text = self.logged_text(log, from, to)?;
        if text.len() as u64 != length {
            return Err(bad(&format!(
                "run log {log}'s pieces {from}–{to} hold {} bytes of text, not {length}",
                text.len()
            )));
        }
        let quoted = serde_json::to_string(&text).map_err(json_error)?;
        Ok(format!("{}{quoted}{}", &rest[..at], &rest[at..]))
    }

    /// Before run log `log` is deleted (retention), the history rows that point into it take
    /// their text back. An error leaves the log where it is: the caller deletes it after.
    pub(super) fn take_back_history_text(&self, log: i64) -> worker::Result<()> {
        // The pointers into this log, a range of text (`<log> ` sorts before `<log>!`).
        let pointing = rows(
            &self.sql,
            "SELECT seq, message FROM history WHERE message >= ? AND message < ?",
            vec![s(&format!("{IN_LOG}{log} ")), s(&format!("{IN_LOG}{log}!"))],
        )?;
        for mut row in pointing {
            let (Some(seq), Some(stored)) = (int(&row, 0), text(&mut row, 1)) else {
                return Err(worker::Error::RustError(
                    "a history row pointing into an event log does not read".into(),
                ));
            };
            let json = self.history_json(seq, stored)?;
            let message = self.pack(&format!("history:{seq}"), &json)?;
            self.exec(
                "UPDATE history SET message = ? WHERE seq = ?",
                vec![s(&message), i(seq)],
            )?;
        }
        Ok(())
    }

    /// The messages of [`Store::store_messages`]' ranges. `state`: the pointer is a saved
    /// state's, which stays the reference for the next save if none is yet.
    /// `None` when a row it points at is gone (a compaction deleted it); a row that cannot be
    /// read is an error.
    fn load_messages(&self, pointer: &Value, state: bool) -> worker::Result<Option<Vec<Value>>> {
        let mut messages = Vec::new();
        let mut rows_seen = Vec::new();
        for seq in seqs(pointer) {
            let Some(json) = self.history_row_if_kept(seq)? else {
                return Ok(None);
            };
            rows_seen.push((seq, fnv(&json)));
            messages.push(serde_json::from_str::<Value>(&json).map_err(json_error)?);
        }
        if state {
            // What was saved last stays the reference: a read of an older state (the
            // session's, while a run has added to it) must not make the next save write rows
            // twice.
            self.history.borrow_mut().get_or_insert(rows_seen);
        }
        Ok(Some(messages))
    }

    /// An event as logged: a state snapshot's messages (loom `checkpoint`, and `values` /
    /// `updates` with `verbose`) become a pointer to the history rows, so a run that sends
    /// the whole conversation does not store it again.
    pub fn event_for_log(&self, mut event: Value) -> worker::Result<Value> {
        if let Some(state) = event.get_mut("state").and_then(Value::as_object_mut) {
            if let Some(Value::Array(messages)) = state.remove("messages") {
                state.insert("messages_rows".into(), self.store_messages(&messages)?);
            }
        }
        Ok(event)
    }

    /// The inverse of [`Store::event_for_log`]. A snapshot whose rows a later compaction
    /// deleted keeps what is left: `messages` empty and `messages_compacted: true`.
    pub(super) fn event_from_log(&self, line: &str) -> worker::Result<String> {
        if !line.contains("\"messages_rows\"") {
            return Ok(line.to_string());
        }
        let mut event: Value = serde_json::from_str(line).map_err(json_error)?;
        if let Some(state) = event.get_mut("state").and_then(Value::as_object_mut) {
            if let Some(pointer) = state.remove("messages_rows") {
                // Rows a compaction deleted are "compacted"; a failed read fails the replay.
                let messages = match self.load_messages(&pointer, false)? {
                    Some(messages) => messages,
                    None => {
                        state.insert("messages_compacted".into(), Value::Bool(true));
                        Vec::new()
                    }
                };
                state.insert("messages".into(), Value::Array(messages));
            }
        }
        Ok(event.to_string())
    }

    /// The rows the last saved state points at; after a wake-up, those of the first state
    /// read back, else the session's.
    fn history_rows_in_memory(&self) -> worker::Result<Vec<HistoryRow>> {
        if let Some(rows) = self.history.borrow().as_ref() {
            return Ok(rows.clone());
        }
        if let Some(json) = self.meta("session")? {
            let value = serde_json::from_str(&json).map_err(json_error)?;
            self.with_history(value)?;
        }
        Ok(self.history.borrow().clone().unwrap_or_default())
    }

    fn next_history_seq(&self) -> worker::Result<i64> {
        let found = rows(&self.sql, "SELECT MAX(seq) FROM history", None)?;
        Ok(found.first().and_then(|r| int(r, 0)).unwrap_or(0) + 1)
    }

    /// History row `seq`'s message JSON.
    pub(super) fn history_row(&self, seq: i64) -> worker::Result<String> {
        self.history_row_if_kept(seq)?
            .ok_or_else(|| worker::Error::RustError(format!("history row {seq} is missing")))
    }

    /// History row `seq`'s message JSON, or `None` when there is no such row.
    fn history_row_if_kept(&self, seq: i64) -> worker::Result<Option<String>> {
        let found = rows(
            &self.sql,
            "SELECT message FROM history WHERE seq = ?",
            vec![i(seq)],
        )?;
        match found.into_iter().next().and_then(|mut r| text(&mut r, 0)) {
            Some(json) => self.history_json(seq, json).map(Some),
            None => Ok(None),
        }
    }

    /// A history row's message JSON from what the row holds: the JSON, its spill marker, or a
    /// pointer into an event log.
    fn history_json(&self, seq: i64, stored: String) -> worker::Result<String> {
        match stored.strip_prefix(IN_LOG) {
            Some(pointer) => self.message_from_log(seq, pointer),
            None => self.unpack(stored),
        }
    }
}

/// The object holding the history: a run's `session`, or a session state itself.
fn history_holder(value: &mut Value) -> Option<&mut serde_json::Map<String, Value>> {
    let object = value.as_object_mut()?;
    if object.contains_key("session") {
        object.get_mut("session")?.as_object_mut()
    } else {
        Some(object)
    }
}

/// Row seqs as `[[first, last], …]` ranges: a history is mostly one run of consecutive rows.
fn ranges(rows: &[HistoryRow]) -> Value {
    let mut out: Vec<(i64, i64)> = Vec::new();
    for &(seq, _) in rows {
        match out.last_mut() {
            Some((_, last)) if *last + 1 == seq => *last = seq,
            _ => out.push((seq, seq)),
        }
    }
    Value::Array(
        out.into_iter()
            .map(|(a, b)| Value::Array(vec![a.into(), b.into()]))
            .collect(),
    )
}

/// The seqs of [`ranges`]' output, in order.
fn seqs(pointer: &Value) -> Vec<i64> {
    let mut out = Vec::new();
    for range in pointer.as_array().into_iter().flatten() {
        let first = range.get(0).and_then(Value::as_i64);
        let last = range.get(1).and_then(Value::as_i64);
        if let (Some(first), Some(last)) = (first, last) {
            out.extend(first..=last.min(first.saturating_add(1_000_000)));
        }
    }
    out
}

/// FNV-1a, to tell a stored message from a changed one without keeping its text.
pub(super) fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_history_is_pointed_at_by_ranges_of_rows() {
        let rows: Vec<HistoryRow> = [1, 2, 3, 7, 9, 10].iter().map(|&s| (s, 0)).collect();
        let pointer = ranges(&rows);
        assert_eq!(pointer, json!([[1, 3], [7, 7], [9, 10]]));
        assert_eq!(seqs(&pointer), [1, 2, 3, 7, 9, 10]);
        assert_eq!(ranges(&[]), json!([]));
        // What a pointer cannot mean is passed over, and a range is bounded.
        assert_eq!(seqs(&json!([[5], "x", [4, 3], [2, 2]])), [2]);
        assert_eq!(seqs(&json!([[0, i64::MAX]])).len(), 1_000_001);
    }

    #[test]
    fn the_history_is_a_runs_sessions_or_a_states_own() {
        let mut run = json!({"run_id": "r", "session": {"history": [], "iterations": 1}});
        assert!(history_holder(&mut run).unwrap().contains_key("iterations"));
        let mut state = json!({"history": [], "iterations": 2});
        assert_eq!(history_holder(&mut state).unwrap()["iterations"], 2);
        assert!(history_holder(&mut json!("text")).is_none());
        assert_ne!(
            fnv(r#"{"role":"user","content":"a"}"#),
            fnv(r#"{"role":"user","content":"b"}"#)
        );
    }
}
