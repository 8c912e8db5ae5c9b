//! The session's Durable Object SQLite storage: messages, the event log, runs with their
//! checkpoints, remembered approvals, session state, and the workspace files.
//!
//! Every write is synchronous (Durable Object SQLite), and the output gate holds a socket
//! message until the writes before it are durable: a checkpoint is durable before the next
//! step starts, and every event but a streamed delta is in the log before it is sent. Deltas
//! are sent first and logged in batches, one row each (session/publish.rs). What a crash can
//! cost, then, is the model response in flight, and at most 15 of its deltas from the log: the
//! run resumes from its last checkpoint (session/alarm.rs), passes over the ids it may have
//! sent unlogged (`events_lost`), closes the cut response as `interrupted` and asks for it
//! again. Nothing a client was sent is contradicted, and nothing lost is silently mended.
//!
//! The conversation is stored once: `history` holds one row per message, written when the
//! message is new; a run's checkpoint and the session state hold `history_rows`, ranges of
//! those rows, in place of the messages ([`Store::run_checkpoint`], [`Store::restore_run`]); the
//! listing clients read (`messages`, `user_messages`) points at the same rows where it can
//! ([`Store::add_message`]), and takes the text back before a compaction deletes them. Once a
//! finished run's event log is deleted (`EVENT_RETENTION_HOURS`), its checkpoint goes too.
//!
//! A row holds at most 2 MB. Values that can outgrow that — an event, a checkpoint, the session
//! state, a message — are written through [`Store::pack`]: one over [`INLINE_MAX`] bytes goes to
//! the `spill` table in parts, and its row holds a marker naming them, which [`Store::unpack`]
//! reads back. Files need none: the tools cap them at 1 MiB.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde_json::Value;
use weft_agent::engine::{Run, Session as SessionState};
use weft_agent::tools::Workspace;
use weft_protocol::event::StoredMessage;
use weft_protocol::Role;
use worker::{SqlCursor, SqlStorage, SqlStorageValue};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS messages (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  role TEXT NOT NULL,
  content TEXT NOT NULL,
  run_id TEXT
);
CREATE TABLE IF NOT EXISTS event_log (
  run_id TEXT NOT NULL,
  event_id INTEGER NOT NULL,
  json TEXT NOT NULL,
  PRIMARY KEY (run_id, event_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY,
  status TEXT NOT NULL,
  checkpoint TEXT NOT NULL,
  created INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS history (seq INTEGER PRIMARY KEY, message TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS approvals (tool TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, content TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS spill (
  key TEXT NOT NULL,
  part INTEGER NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (key, part)
) WITHOUT ROWID;
";

/// The longest value kept in its own row; longer ones are spilled (Durable Object SQLite
/// refuses a row over 2 MB).
pub const INLINE_MAX: usize = 1_800_000;

/// The size of a spilled value's parts.
const PART_MAX: usize = 1_000_000;

/// How a row says its value was spilled: the marker, then the value's spill key. Text that
/// starts with a NUL is spilled too, so a stored value starting like this is always a marker.
const SPILLED: &str = "\0spill:";

/// How a listed message (`messages`) says its text is its history row's: the marker, then the
/// row's seq. `IN_HISTORY_END` bounds the range of such values.
const IN_HISTORY: &str = "\0history:";
const IN_HISTORY_END: &str = "\0history;";

/// A run as stored.
#[derive(Debug, Clone)]
pub struct RunRow {
    /// The run id.
    pub run_id: String,
    /// `running` or `done`.
    pub status: String,
    /// The engine checkpoint (JSON).
    pub checkpoint: String,
}

/// A stored history message: its row and a hash of its JSON.
type HistoryRow = (i64, u64);

/// The session's storage.
#[derive(Debug, Clone)]
pub struct Store {
    sql: SqlStorage,
    /// The history rows the last saved state points at, with a hash of each message, so a
    /// save writes only the messages that are new since.
    history: Rc<RefCell<Option<Vec<HistoryRow>>>>,
    /// The session predates `event_log` and may still hold runs in `events`, read alongside
    /// until retention empties it. (`events` was a rowid table keyed by (run, id): every event
    /// wrote its row and its key's index, two rows billed where `event_log` writes one.)
    legacy_events: bool,
    /// Rows written since the object started (what Durable Objects bill, index entries
    /// included), for `WEFT_STORAGE_STATS`.
    written: Rc<Cell<u64>>,
}

fn s(v: &str) -> SqlStorageValue {
    SqlStorageValue::String(v.to_string())
}

fn i(v: i64) -> SqlStorageValue {
    SqlStorageValue::Integer(v)
}

/// The rows of a query, each its columns' values in the order the `SELECT` names them.
///
/// Rows are read as plain values rather than deserialized into a struct per query
/// (`SqlCursor::to_array`): that built a serde-wasm-bindgen deserializer for every row type,
/// code the upload carried nine times over.
fn rows(
    sql: &SqlStorage,
    query: &str,
    params: impl Into<Option<Vec<SqlStorageValue>>>,
) -> worker::Result<Vec<Vec<SqlStorageValue>>> {
    sql.exec(query, params)?.raw().collect()
}

/// Column `n` of a row as text (`None`: missing, NULL or not text).
fn text(row: &mut [SqlStorageValue], n: usize) -> Option<String> {
    match row.get_mut(n)? {
        SqlStorageValue::String(v) => Some(core::mem::take(v)),
        _ => None,
    }
}

/// Column `n` of a row as an integer (`None`: missing, NULL or not a number).
fn int(row: &[SqlStorageValue], n: usize) -> Option<i64> {
    match row.get(n)? {
        SqlStorageValue::Integer(v) => Some(*v),
        SqlStorageValue::Float(v) => Some(*v as i64),
        _ => None,
    }
}

impl Store {
    /// Runs a statement that writes, counting the rows it wrote.
    fn exec(
        &self,
        query: &str,
        params: impl Into<Option<Vec<SqlStorageValue>>>,
    ) -> worker::Result<SqlCursor> {
        let cursor = self.sql.exec(query, params)?;
        self.written
            .set(self.written.get() + cursor.rows_written() as u64);
        Ok(cursor)
    }

    /// Rows written by this object since it started, and the database's size in bytes.
    pub fn usage(&self) -> (u64, usize) {
        (self.written.get(), self.sql.database_size())
    }

    /// The text to store in a row for `value`: the value itself, or, for one over
    /// [`INLINE_MAX`], a marker after its parts are written to `spill` under `key`. Parts
    /// left by an earlier, longer value of the key are removed first.
    fn pack(&self, key: &str, value: &str) -> worker::Result<String> {
        self.exec("DELETE FROM spill WHERE key = ?", vec![s(key)])?;
        if value.len() <= INLINE_MAX && !value.starts_with('\0') {
            return Ok(value.to_string());
        }
        let mut rest = value;
        let mut part = 0;
        while !rest.is_empty() {
            let mut cut = rest.len().min(PART_MAX);
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            let (head, tail) = rest.split_at(cut);
            self.exec(
                "INSERT INTO spill (key, part, data) VALUES (?, ?, ?)",
                vec![s(key), i(part), s(head)],
            )?;
            rest = tail;
            part += 1;
        }
        Ok(format!("{SPILLED}{key}"))
    }

    /// A stored value as it was written: a spilled one read back from its parts.
    fn unpack(&self, stored: String) -> worker::Result<String> {
        let Some(key) = stored.strip_prefix(SPILLED) else {
            return Ok(stored);
        };
        let parts = rows(
            &self.sql,
            "SELECT data FROM spill WHERE key = ? ORDER BY part",
            vec![s(key)],
        )?;
        Ok(parts
            .into_iter()
            .filter_map(|mut r| text(&mut r, 0))
            .collect())
    }

    /// Opens the storage, creating the tables on first use. A failure is logged, not fatal:
    /// every later query reports its own error instead.
    pub fn open(sql: SqlStorage) -> Self {
        for stmt in SCHEMA.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            if let Err(e) = sql.exec(stmt, None) {
                worker::console_error!("weft: could not create the session tables: {e}");
            }
        }
        let legacy_events = rows(
            &sql,
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'",
            None,
        )
        .is_ok_and(|r| !r.is_empty());
        let store = Store {
            sql,
            history: Rc::default(),
            legacy_events,
            written: Rc::default(),
        };
        if let Err(e) = store.migrate() {
            worker::console_error!("weft: could not update the session tables: {e}");
        }
        store
    }

    /// Columns added after the first release, to tables that may predate them: a run's end
    /// time and whether its event log is still kept (retention).
    fn migrate(&self) -> worker::Result<()> {
        let columns: Vec<String> = rows(&self.sql, "PRAGMA table_info(runs)", None)?
            .into_iter()
            .filter_map(|mut r| text(&mut r, 1))
            .collect();
        if !columns.iter().any(|c| c == "ended") {
            self.exec("ALTER TABLE runs ADD COLUMN ended INTEGER", None)?;
            // Runs finished before retention existed start their clock now.
            self.exec(
                "UPDATE runs SET ended = ? WHERE status != 'running'",
                vec![i(js_sys::Date::now() as i64)],
            )?;
        }
        if !columns.iter().any(|c| c == "logged") {
            self.exec(
                "ALTER TABLE runs ADD COLUMN logged INTEGER NOT NULL DEFAULT 1",
                None,
            )?;
        }
        Ok(())
    }

    /// When the session was last used (ms), for `SESSION_TTL_DAYS`.
    pub fn touched(&self) -> worker::Result<Option<i64>> {
        Ok(self.meta("touched")?.and_then(|v| v.parse().ok()))
    }

    /// Records a use of the session at `now_ms`.
    pub fn touch(&self, now_ms: i64) -> worker::Result<()> {
        self.set_meta("touched", &now_ms.to_string())
    }

    /// When the longest-finished run that still has an event log ended (ms).
    pub fn oldest_logged_run_end(&self) -> worker::Result<Option<i64>> {
        let rows = rows(
            &self.sql,
            "SELECT MIN(ended) FROM runs WHERE ended IS NOT NULL AND logged = 1",
            None,
        )?;
        Ok(rows.first().and_then(|r| int(r, 0)))
    }

    /// Deletes the event logs of runs that ended before `before_ms`; the runs, their
    /// messages, the workspace and the approvals stay. A resume of such a run is answered
    /// `expired`.
    pub fn drop_event_logs(&self, before_ms: i64) -> worker::Result<()> {
        let runs = rows(
            &self.sql,
            "SELECT run_id FROM runs WHERE logged = 1 AND ended IS NOT NULL AND ended < ?",
            vec![i(before_ms)],
        )?;
        for mut row in runs {
            let Some(run_id) = text(&mut row, 0) else {
                continue;
            };
            self.exec("DELETE FROM event_log WHERE run_id = ?", vec![s(&run_id)])?;
            if self.legacy_events {
                self.exec("DELETE FROM events WHERE run_id = ?", vec![s(&run_id)])?;
            }
            // The run's spilled events: keys `event:<run>:<id>`, a range (LIKE patterns are
            // capped at 50 bytes, run ids are not).
            self.exec(
                "DELETE FROM spill WHERE key >= ? AND key < ?",
                vec![
                    s(&format!("event:{run_id}:")),
                    s(&format!("event:{run_id};")),
                ],
            )?;
            // A finished run's checkpoint is read by nothing (only a running run is restored):
            // it goes with the log.
            self.exec(
                "DELETE FROM spill WHERE key = ?",
                vec![s(&format!("run:{run_id}"))],
            )?;
            self.exec(
                "UPDATE runs SET logged = 0, checkpoint = '' WHERE run_id = ?",
                vec![s(&run_id)],
            )?;
        }
        Ok(())
    }

    /// Whether a run's event log was deleted after its retention time.
    pub fn log_expired(&self, run_id: &str) -> worker::Result<bool> {
        let rows = rows(
            &self.sql,
            "SELECT logged FROM runs WHERE run_id = ?",
            vec![s(run_id)],
        )?;
        Ok(rows.first().and_then(|r| int(r, 0)) == Some(0))
    }

    /// A value of the session's own key/value metadata.
    pub fn meta(&self, key: &str) -> worker::Result<Option<String>> {
        let rows = rows(
            &self.sql,
            "SELECT value FROM meta WHERE key = ?",
            vec![s(key)],
        )?;
        rows.into_iter()
            .next()
            .and_then(|mut r| text(&mut r, 0))
            .map(|v| self.unpack(v))
            .transpose()
    }

    /// Sets a metadata value.
    pub fn set_meta(&self, key: &str, value: &str) -> worker::Result<()> {
        let value = self.pack(&format!("meta:{key}"), value)?;
        self.exec(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            vec![s(key), s(&value)],
        )?;
        Ok(())
    }

    /// The session's engine state (history, iterations), with the remembered approvals.
    pub fn session_state(&self) -> worker::Result<SessionState> {
        let mut state: SessionState = match self.meta("session")? {
            Some(json) => {
                let value = serde_json::from_str(&json).unwrap_or(Value::Null);
                serde_json::from_value(self.with_history(value)?).unwrap_or_default()
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
        serde_json::from_value(value).map_err(|e| e.to_string())
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
            let messages = self.load_messages(&pointer, true)?;
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
        for (seq, json) in (self.next_history_seq()?..).zip(&jsons[common..]) {
            let message = self.pack(&format!("history:{seq}"), json)?;
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

    /// The messages of [`Store::store_messages`]' ranges. `state`: the pointer is a saved
    /// state's, which stays the reference for the next save if none is yet.
    fn load_messages(&self, pointer: &Value, state: bool) -> worker::Result<Vec<Value>> {
        let mut messages = Vec::new();
        let mut rows_seen = Vec::new();
        for seq in seqs(pointer) {
            let json = self.history_row(seq)?;
            rows_seen.push((seq, fnv(&json)));
            messages.push(serde_json::from_str::<Value>(&json).map_err(json_error)?);
        }
        if state {
            // What was saved last stays the reference: a read of an older state (the
            // session's, while a run has added to it) must not make the next save write rows
            // twice.
            self.history.borrow_mut().get_or_insert(rows_seen);
        }
        Ok(messages)
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
    fn event_from_log(&self, line: &str) -> worker::Result<String> {
        if !line.contains("\"messages_rows\"") {
            return Ok(line.to_string());
        }
        let mut event: Value = serde_json::from_str(line).map_err(json_error)?;
        if let Some(state) = event.get_mut("state").and_then(Value::as_object_mut) {
            if let Some(pointer) = state.remove("messages_rows") {
                let messages = self.load_messages(&pointer, false).unwrap_or_else(|_| {
                    state.insert("messages_compacted".into(), Value::Bool(true));
                    Vec::new()
                });
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
            let value = serde_json::from_str(&json).unwrap_or(Value::Null);
            self.with_history(value)?;
        }
        Ok(self.history.borrow().clone().unwrap_or_default())
    }

    fn next_history_seq(&self) -> worker::Result<i64> {
        let found = rows(&self.sql, "SELECT MAX(seq) FROM history", None)?;
        Ok(found.first().and_then(|r| int(r, 0)).unwrap_or(0) + 1)
    }

    /// Appends a message to the thread's listing (`user_messages`). The engine's history row
    /// of the same message holds its text already (it is written first, with the run's
    /// checkpoint), so the listing's row points at it instead of holding the text again.
    pub fn add_message(&self, role: &str, content: &str, run_id: &str) -> worker::Result<()> {
        let content = match self.history_row_of(role, content)? {
            Some(seq) => format!("{IN_HISTORY}{seq}"),
            // A run adds one message per role, so the pair names it.
            None => self.pack(&format!("message:{run_id}:{role}"), content)?,
        };
        self.exec(
            "INSERT INTO messages (role, content, run_id) VALUES (?, ?, ?)",
            vec![s(role), s(&content), s(run_id)],
        )?;
        Ok(())
    }

    /// The newest history row holding exactly this message, if any.
    fn history_row_of(&self, role: &str, content: &str) -> worker::Result<Option<i64>> {
        if !matches!(role, "user" | "assistant") {
            return Ok(None);
        }
        // As the engine's message serializes: its role and its text, nothing else.
        let json = serde_json::json!({ "role": role, "content": content }).to_string();
        let found = rows(
            &self.sql,
            "SELECT seq FROM history WHERE message = ? ORDER BY seq DESC LIMIT 1",
            vec![s(&json)],
        )?;
        Ok(found.first().and_then(|r| int(r, 0)))
    }

    /// History row `seq`'s message JSON.
    fn history_row(&self, seq: i64) -> worker::Result<String> {
        let found = rows(
            &self.sql,
            "SELECT message FROM history WHERE seq = ?",
            vec![i(seq)],
        )?;
        let Some(json) = found.into_iter().next().and_then(|mut r| text(&mut r, 0)) else {
            return Err(worker::Error::RustError(format!(
                "history row {seq} is missing"
            )));
        };
        self.unpack(json)
    }

    /// The text of history row `seq` (a message of [`Store::history_row_of`]'s shape).
    fn history_text(&self, seq: i64) -> worker::Result<String> {
        let value: Value = serde_json::from_str(&self.history_row(seq)?).map_err(json_error)?;
        Ok(value
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string())
    }

    /// A listed message's text: its own, or its history row's.
    fn message_text(&self, stored: String) -> worker::Result<String> {
        match stored
            .strip_prefix(IN_HISTORY)
            .and_then(|seq| seq.parse().ok())
        {
            Some(seq) => self.history_text(seq),
            None => self.unpack(stored),
        }
    }

    /// Before history rows older than `first` are deleted (a compaction replaced them), the
    /// listed messages that point at them take their text back.
    fn keep_listed_text(&self, first: i64) -> worker::Result<()> {
        let pointing = rows(
            &self.sql,
            "SELECT seq, role, run_id, content FROM messages WHERE content >= ? AND content < ?",
            vec![s(IN_HISTORY), s(IN_HISTORY_END)],
        )?;
        for mut row in pointing {
            let (Some(seq), Some(role), run_id, Some(content)) = (
                int(&row, 0),
                text(&mut row, 1),
                text(&mut row, 2).unwrap_or_default(),
                text(&mut row, 3),
            ) else {
                continue;
            };
            let Some(target) = content
                .strip_prefix(IN_HISTORY)
                .and_then(|t| t.parse::<i64>().ok())
            else {
                continue;
            };
            if target >= first {
                continue;
            }
            let text = self.history_text(target)?;
            let text = self.pack(&format!("message:{run_id}:{role}"), &text)?;
            self.exec(
                "UPDATE messages SET content = ? WHERE seq = ?",
                vec![s(&text), i(seq)],
            )?;
        }
        Ok(())
    }

    /// The newest `limit` messages older than `before`, oldest first, and whether older remain.
    pub fn messages(
        &self,
        before: Option<u64>,
        limit: u64,
    ) -> worker::Result<(Vec<StoredMessage>, bool)> {
        let before = before.map_or(i64::MAX, |b| b.min(i64::MAX as u64) as i64);
        let mut rows = rows(
            &self.sql,
            "SELECT seq, role, content FROM messages WHERE seq < ? ORDER BY seq DESC LIMIT ?",
            vec![i(before), i(limit as i64 + 1)],
        )?;
        let has_more = rows.len() as u64 > limit;
        rows.truncate(limit as usize);
        rows.reverse();
        let messages = rows
            .into_iter()
            .map(|mut r| {
                Ok(StoredMessage {
                    id: int(&r, 0).map(|seq| seq as u64),
                    role: Role::from(text(&mut r, 1).unwrap_or_default().as_str()),
                    content: self.message_text(text(&mut r, 2).unwrap_or_default())?,
                })
            })
            .collect::<worker::Result<Vec<_>>>()?;
        Ok((messages, has_more))
    }

    /// Appends events to the log, one row per run: the events' JSON, one per line (JSON text
    /// holds no raw newline), under the id of the row's last event. A row per event made the
    /// log most of what a turn wrote; a row per batch is what the session's batching of
    /// streamed text (session/publish.rs) pays for.
    pub fn append_events(&self, events: &[(String, u64, String)]) -> worker::Result<()> {
        let mut rest = events;
        while let Some((run_id, _, _)) = rest.first() {
            let same = rest.iter().take_while(|(r, _, _)| r == run_id).count();
            let (row, after) = rest.split_at(same);
            rest = after;
            let last = row.last().map_or(0, |(_, id, _)| *id);
            let lines: Vec<&str> = row.iter().map(|(_, _, json)| json.as_str()).collect();
            let mut json = lines.join("\n");
            if json.len() > INLINE_MAX {
                json = self.pack(&format!("event:{run_id}:{last}"), &json)?;
            }
            self.exec(
                "INSERT OR REPLACE INTO event_log (run_id, event_id, json) VALUES (?, ?, ?)",
                vec![s(run_id), i(last as i64), s(&json)],
            )?;
        }
        Ok(())
    }

    /// The run's logged events, in order (rows of one event, from builds before the batching,
    /// and rows of many alike).
    pub fn events(&self, run_id: &str) -> worker::Result<Vec<String>> {
        let rows = rows(
            &self.sql,
            if self.legacy_events {
                "SELECT json, event_id FROM events WHERE run_id = ?1 UNION ALL \
                 SELECT json, event_id FROM event_log WHERE run_id = ?1 ORDER BY event_id"
            } else {
                "SELECT json FROM event_log WHERE run_id = ? ORDER BY event_id"
            },
            vec![s(run_id)],
        )?;
        let mut events = Vec::new();
        for json in rows.into_iter().filter_map(|mut r| text(&mut r, 0)) {
            for line in self.unpack(json)?.split('\n') {
                events.push(self.event_from_log(line)?);
            }
        }
        Ok(events)
    }

    /// The last logged event id of a run (0 if none).
    pub fn last_event_id(&self, run_id: &str) -> worker::Result<u64> {
        let rows = rows(
            &self.sql,
            if self.legacy_events {
                "SELECT MAX(event_id) FROM (SELECT event_id FROM events WHERE run_id = ?1 \
                 UNION ALL SELECT event_id FROM event_log WHERE run_id = ?1)"
            } else {
                "SELECT MAX(event_id) FROM event_log WHERE run_id = ?"
            },
            vec![s(run_id)],
        )?;
        Ok(rows.first().and_then(|r| int(r, 0)).unwrap_or(0).max(0) as u64)
    }

    /// Creates or updates a run's row with its latest checkpoint.
    pub fn save_run(
        &self,
        run_id: &str,
        status: &str,
        checkpoint: &str,
        now_ms: i64,
    ) -> worker::Result<()> {
        let checkpoint = self.pack(&format!("run:{run_id}"), checkpoint)?;
        self.exec(
            "INSERT INTO runs (run_id, status, checkpoint, created) VALUES (?, ?, ?, ?)
             ON CONFLICT(run_id) DO UPDATE SET status = excluded.status, checkpoint = excluded.checkpoint",
            vec![s(run_id), s(status), s(&checkpoint), i(now_ms)],
        )?;
        if status != "running" {
            self.mark_ended(run_id, now_ms)?;
        }
        Ok(())
    }

    /// Sets a run's status and nothing else: a small write that still works when its
    /// checkpoint cannot be stored.
    pub fn set_run_status(&self, run_id: &str, status: &str) -> worker::Result<()> {
        self.exec(
            "UPDATE runs SET status = ? WHERE run_id = ?",
            vec![s(status), s(run_id)],
        )?;
        if status != "running" {
            self.mark_ended(run_id, js_sys::Date::now() as i64)?;
        }
        Ok(())
    }

    /// Starts a finished run's retention clock (once: the first end counts).
    fn mark_ended(&self, run_id: &str, now_ms: i64) -> worker::Result<()> {
        self.exec(
            "UPDATE runs SET ended = ? WHERE run_id = ? AND ended IS NULL",
            vec![i(now_ms), s(run_id)],
        )?;
        Ok(())
    }

    /// A run's row.
    pub fn run(&self, run_id: &str) -> worker::Result<Option<RunRow>> {
        let rows = rows(
            &self.sql,
            "SELECT run_id, status, checkpoint FROM runs WHERE run_id = ?",
            vec![s(run_id)],
        )?;
        rows.into_iter()
            .next()
            .map(|row| self.run_row(row))
            .transpose()
    }

    /// The run still in progress, if any (at most one per session).
    pub fn active_run(&self) -> worker::Result<Option<RunRow>> {
        let rows = rows(
            &self.sql,
            "SELECT run_id, status, checkpoint FROM runs WHERE status = 'running' ORDER BY created DESC LIMIT 1",
            None,
        )?;
        rows.into_iter()
            .next()
            .map(|row| self.run_row(row))
            .transpose()
    }

    /// A `SELECT run_id, status, checkpoint` row.
    fn run_row(&self, mut row: Vec<SqlStorageValue>) -> worker::Result<RunRow> {
        Ok(RunRow {
            run_id: text(&mut row, 0).unwrap_or_default(),
            status: text(&mut row, 1).unwrap_or_default(),
            checkpoint: self.unpack(text(&mut row, 2).unwrap_or_default())?,
        })
    }
}

/// The session workspace over the `files` table; `root` (a run's `working_folder`, normalized,
/// possibly empty) is the folder the tools see as their top.
#[derive(Debug)]
pub struct SqlWorkspace<'a> {
    /// The storage.
    pub store: &'a Store,
    /// Folder prefix, without a trailing slash ("" for the workspace root).
    pub root: String,
}

impl SqlWorkspace<'_> {
    fn full(&self, path: &str) -> String {
        if self.root.is_empty() {
            path.to_string()
        } else {
            format!("{}/{path}", self.root)
        }
    }
}

impl Workspace for SqlWorkspace<'_> {
    fn read(&self, path: &str) -> Option<String> {
        let path = &self.full(path);
        let rows = rows(
            &self.store.sql,
            "SELECT content FROM files WHERE path = ?",
            vec![s(path)],
        )
        .ok()?;
        rows.into_iter().next().and_then(|mut r| text(&mut r, 0))
    }

    fn write(&mut self, path: &str, content: &str) -> Result<(), String> {
        let path = &self.full(path);
        self.store.exec(
                "INSERT INTO files (path, content) VALUES (?, ?) ON CONFLICT(path) DO UPDATE SET content = excluded.content",
                vec![s(path), s(content)],
            )
            .map(|_| ())
            .map_err(|e| format!("could not store {path}: {e}"))
    }

    fn delete(&mut self, path: &str) -> bool {
        let path = &self.full(path);
        self.store
            .exec("DELETE FROM files WHERE path = ?", vec![s(path)])
            .map(|c| c.rows_written() > 0)
            .unwrap_or(false)
    }

    fn list(&self) -> Vec<(String, usize)> {
        let prefix = if self.root.is_empty() {
            String::new()
        } else {
            format!("{}/", self.root)
        };
        rows(
            &self.store.sql,
            "SELECT path, length(CAST(content AS BLOB)) AS size FROM files ORDER BY path",
            None,
        )
        .map(|rows| {
            rows.into_iter()
                .filter_map(|mut r| {
                    let path = text(&mut r, 0)?.strip_prefix(&prefix)?.to_string();
                    Some((path, int(&r, 1).unwrap_or(0).max(0) as usize))
                })
                .collect()
        })
        .unwrap_or_default()
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
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn json_error(e: serde_json::Error) -> worker::Error {
    worker::Error::RustError(e.to_string())
}
