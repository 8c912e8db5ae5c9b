//! The session's Durable Object SQLite storage: messages, the event log, runs with their
//! checkpoints, remembered approvals, session state, the workspace files, and the MCP
//! servers' catalogs.
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
//! ([`Store::add_message`]), and takes the text back before a compaction deletes them. A run's
//! checkpoint is kept while it runs: a finished run keeps its status, times and log number, and
//! its event log until `EVENT_RETENTION_HOURS` has passed. Until then the log holds the text of
//! the replies it streamed, and their history rows point at it; the retention writes the text
//! into those rows before it deletes the log (history.rs).
//!
//! A row holds at most 2 MB. Values that can outgrow that — an event, a checkpoint, the session
//! state, a message — are written through [`Store::pack`]: one over [`INLINE_MAX`] bytes goes to
//! the `spill` table in parts, and its row holds a marker naming them, which [`Store::unpack`]
//! reads back. Files need none: the tools cap them at 1 MiB.
//!
//! Its rooms: this file the tables, spilling and the session's metadata; `runs.rs` runs, their
//! event logs and retention; `log_row.rs` how a row of the event log holds its events;
//! `history.rs` the conversation stored once (checkpoints, session state, logged snapshots);
//! `listing.rs` the messages clients list; `workspace.rs` the files; `mcp.rs` what the session
//! knows of its MCP servers.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use worker::{SqlCursor, SqlStorage, SqlStorageValue};

mod history;
mod listing;
pub mod log_row;
mod mcp;
mod oauth;
mod runs;
mod workspace;

pub use runs::{RunRow, RunStatus};
pub use workspace::SqlWorkspace;

use history::HistoryRow;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS messages (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  role TEXT NOT NULL,
  content TEXT NOT NULL,
  run_id TEXT
);
CREATE TABLE IF NOT EXISTS event_batches (key INTEGER PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY,
  status TEXT NOT NULL,
  checkpoint TEXT NOT NULL,
  created INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS history (seq INTEGER PRIMARY KEY, message TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS approvals (tool TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, content TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS mcp_servers (name TEXT PRIMARY KEY, entry TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS mcp_client_servers (name TEXT PRIMARY KEY, server TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS mcp_oauth_clients (
  issuer TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  client TEXT NOT NULL,
  PRIMARY KEY (issuer, redirect_uri)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS mcp_oauth_tokens (grant_key TEXT PRIMARY KEY, grant_row TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS mcp_oauth_flows (
  state TEXT PRIMARY KEY,
  server TEXT NOT NULL,
  created INTEGER NOT NULL,
  flow TEXT NOT NULL
) WITHOUT ROWID;
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
    /// The session predates `event_batches` and may still hold runs in `event_log`, one row per
    /// batch of JSON lines, read alongside until retention empties it (runs.rs says why it
    /// was replaced).
    legacy_log: bool,
    /// The run whose log rows were written last: its number in their keys and what the writer
    /// remembers between its rows (log_row.rs).
    log_writer: Rc<RefCell<Option<runs::LogWriter>>>,
    /// When the last deletion of old event logs failed, if it did ([`Store::drop_event_logs`]).
    logs_failed_at: Rc<Cell<Option<i64>>>,
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
        let exists = |table: &str| {
            rows(
                &sql,
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                vec![s(table)],
            )
            .is_ok_and(|r| !r.is_empty())
        };
        let (legacy_events, legacy_log) = (exists("events"), exists("event_log"));
        let store = Store {
            sql,
            history: Rc::default(),
            legacy_events,
            legacy_log,
            log_writer: Rc::default(),
            logs_failed_at: Rc::default(),
            written: Rc::default(),
        };
        if let Err(e) = store.migrate() {
            worker::console_error!("weft: could not update the session tables: {e}");
        }
        store
    }

    /// Columns added after the first release, to tables that may predate them: a run's end
    /// time, whether its event log is still kept (retention), and its number in the keys of
    /// `event_batches`.
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
        if !columns.iter().any(|c| c == "log") {
            self.exec("ALTER TABLE runs ADD COLUMN log INTEGER", None)?;
            // Runs that predate it get theirs when they next log (a run resumed across the
            // upgrade); finished ones keep no checkpoint any more (runs.rs, `save_run`).
            self.drop_finished_checkpoints()?;
        }
        Ok(())
    }

    /// When the session was last used (ms), for `SESSION_TTL_DAYS`.
    pub fn touched(&self) -> worker::Result<Option<i64>> {
        Ok(self.meta("touched")?.and_then(|v| v.parse().ok()))
    }

    pub fn touch(&self, now_ms: i64) -> worker::Result<()> {
        self.set_meta("touched", &now_ms.to_string())
    }

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

    pub fn set_meta(&self, key: &str, value: &str) -> worker::Result<()> {
        let value = self.pack(&format!("meta:{key}"), value)?;
        self.exec(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            vec![s(key), s(&value)],
        )?;
        Ok(())
    }
}

fn json_error(e: serde_json::Error) -> worker::Error {
    worker::Error::RustError(e.to_string())
}
