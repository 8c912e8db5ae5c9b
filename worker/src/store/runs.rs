//! Runs and their event logs: a run's row with its checkpoint and status, the log a row per
//! batch of events (log_row.rs), and the retention that deletes a finished run's log.

use worker::SqlStorageValue;

use super::log_row::{self, Logged, Memory, Stored};
use super::{i, int, rows, s, text, Store, INLINE_MAX};

/// The run [`Store::append_events`] wrote last, as it remembers it between rows.
#[derive(Debug)]
pub(super) struct LogWriter {
    run_id: String,
    log: i64,
    memory: Memory,
}

/// The keys of a run's rows in `event_batches`: from the first, up to the end (excluded). A
/// key is the run's log number, then the row's last event id in the low 32 bits.
fn log_keys(log: i64) -> (i64, i64) {
    (log << 32, (log + 1) << 32)
}

#[derive(Debug, Clone)]
pub struct RunRow {
    pub run_id: String,
    /// The engine checkpoint (JSON).
    pub checkpoint: String,
}

/// A run's `status` column. A session has at most one `running` run, the active one; the end
/// of any other starts its retention clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    Running,
    Done,
    /// Ended without a checkpoint to resume from (it could not be read back).
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Done => "done",
            RunStatus::Failed => "failed",
        }
    }
}

impl Store {
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
    /// `expired`. A run whose log cannot be deleted keeps it, whole, and the others go on; the
    /// first such error is returned.
    pub fn drop_event_logs(&self, before_ms: i64) -> worker::Result<()> {
        let runs = rows(
            &self.sql,
            "SELECT run_id, log FROM runs WHERE logged = 1 AND ended IS NOT NULL AND ended < ?",
            vec![i(before_ms)],
        )?;
        let mut first_error = None;
        for mut row in runs {
            let Some(run_id) = text(&mut row, 0) else {
                continue;
            };
            if let Err(e) = self.drop_event_log(&run_id, int(&row, 1)) {
                first_error.get_or_insert(worker::Error::RustError(format!("run {run_id}: {e}")));
            }
        }
        self.logs_failed_at
            .set(first_error.is_some().then(|| js_sys::Date::now() as i64));
        first_error.map_or(Ok(()), Err)
    }

    /// When [`Store::drop_event_logs`] last failed to delete a log, if its last call did (ms):
    /// the alarm waits a while before it tries again.
    pub fn event_logs_failed_at(&self) -> Option<i64> {
        self.logs_failed_at.get()
    }

    /// Deletes one run's event log ([`Store::drop_event_logs`]); `log`: its number in
    /// `event_batches`, if it has one.
    fn drop_event_log(&self, run_id: &str, log: Option<i64>) -> worker::Result<()> {
        if let Some(log) = log {
            // First, so that there is never a moment with neither: a history row that cannot
            // take its text back keeps the log it points into.
            self.take_back_history_text(log)?;
            let (first, end) = log_keys(log);
            self.exec(
                "DELETE FROM event_batches WHERE key >= ? AND key < ?",
                vec![i(first), i(end)],
            )?;
            // The writer's memory of the log is of rows that are gone: nothing may point at
            // them.
            let mut writer = self.log_writer.borrow_mut();
            if writer.as_ref().is_some_and(|w| w.log == log) {
                *writer = None;
            }
        }
        if self.legacy_log {
            self.exec("DELETE FROM event_log WHERE run_id = ?", vec![s(run_id)])?;
        }
        if self.legacy_events {
            self.exec("DELETE FROM events WHERE run_id = ?", vec![s(run_id)])?;
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
        // A checkpoint left by a build that kept them for finished runs.
        self.exec(
            "DELETE FROM spill WHERE key = ?",
            vec![s(&format!("run:{run_id}"))],
        )?;
        self.exec(
            "UPDATE runs SET logged = 0, checkpoint = '' WHERE run_id = ?",
            vec![s(run_id)],
        )?;
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

    /// Appends events to the log: a row per run and run of consecutive ids, in the form
    /// log_row.rs describes, keyed by the run's log number and the row's last event id.
    ///
    /// A row per event made the log most of what a turn wrote; a row per batch is what the
    /// session's batching of streamed text (session/publish.rs) pays for. The rows of the
    /// layout before this one (`event_log`, still read) held each event's whole JSON, ~150
    /// bytes around a few characters of text, and, over ~1 KB, left most of an overflow page
    /// empty (a WITHOUT ROWID table keeps at most a quarter page of a row in its b-tree); its
    /// keys, a run id first, also put a run's rows among another's. Keys that grow with every
    /// row append to the end of a rowid table, whose rows stay in its pages up to ~4 KB.
    pub fn append_events(&self, events: &[Logged]) -> worker::Result<()> {
        let mut rest = events;
        while let Some(first) = rest.first() {
            let same = 1 + rest
                .windows(2)
                .take_while(|w| w[1].run_id == first.run_id && w[1].event_id == w[0].event_id + 1)
                .count();
            let (row, after) = rest.split_at(same);
            rest = after;
            let last = row.last().map_or(0, |l| l.event_id);
            let written = self.append_row(&first.run_id, last, row);
            if written.is_err() {
                // The writer's memory may no longer match the rows: it starts afresh.
                *self.log_writer.borrow_mut() = None;
            }
            written?;
        }
        Ok(())
    }

    /// Writes one row of [`Store::append_events`].
    fn append_row(&self, run_id: &str, last: u64, row: &[Logged]) -> worker::Result<()> {
        let (log, memory) = match self.log_writer.borrow().as_ref() {
            Some(w) if w.run_id == run_id => (w.log, w.memory.clone()),
            _ => (self.run_log(run_id)?, Memory::default()),
        };
        let key = u32::try_from(last)
            .map(|id| log_keys(log).0 + i64::from(id))
            .map_err(|_| worker::Error::RustError(format!("event id {last} is out of range")))?;
        let (body, memory) = log_row::encode(row, &memory);
        let body = if body.len() > INLINE_MAX || body.starts_with('\0') {
            self.pack(&format!("event:{run_id}:{last}"), &body)?
        } else {
            body
        };
        self.exec(
            "INSERT OR REPLACE INTO event_batches (key, body) VALUES (?, ?)",
            vec![i(key), s(&body)],
        )?;
        *self.log_writer.borrow_mut() = Some(LogWriter {
            run_id: run_id.to_string(),
            log,
            memory,
        });
        Ok(())
    }

    /// A run's number in the keys of `event_batches`: given when its row is written
    /// ([`Store::save_run`]), or, for a run that started before the upgrade, when it first logs.
    /// A run that logs before it has a row (a manual compaction saves its row when it ends) gets
    /// one here, not `running` (only a running run is restored, from a checkpoint it does not
    /// have yet); its end, when it is saved, starts its retention clock.
    fn run_log(&self, run_id: &str) -> worker::Result<i64> {
        if let Some(log) = self.logged_as(run_id)? {
            return Ok(log);
        }
        self.exec(
            "INSERT INTO runs (run_id, status, checkpoint, created, log) \
             VALUES (?, 'done', '', ?, (SELECT COALESCE(MAX(log), 0) + 1 FROM runs)) \
             ON CONFLICT(run_id) DO UPDATE SET log = COALESCE(runs.log, excluded.log)",
            vec![s(run_id), i(js_sys::Date::now() as i64)],
        )?;
        self.logged_as(run_id)?.ok_or_else(|| {
            worker::Error::RustError(format!("run {run_id} has no row to number its log by"))
        })
    }

    /// The run's log number, if it has one (it has logged in `event_batches`).
    fn logged_as(&self, run_id: &str) -> worker::Result<Option<i64>> {
        let found = rows(
            &self.sql,
            "SELECT log FROM runs WHERE run_id = ?",
            vec![s(run_id)],
        )?;
        Ok(found.first().and_then(|r| int(r, 0)))
    }

    /// Where the log holds `text` as the pieces of the message it was written last: the run's
    /// log number and the pieces' first and last event ids. The writer's memory knows (a
    /// restart forgets it, and the history then keeps the text itself).
    pub(super) fn text_in_log(&self, text: &str) -> Option<(i64, u64, u64)> {
        let writer = self.log_writer.borrow();
        let w = writer.as_ref()?;
        let (from, to) = w.memory.message_holding(text)?;
        Some((w.log, from, to))
    }

    /// The text of the message pieces with event ids `from..=to` in run log `log`
    /// ([`Store::text_in_log`]): only the rows that hold them are read.
    pub(super) fn logged_text(&self, log: i64, from: u64, to: u64) -> worker::Result<String> {
        let (first, end) = log_keys(log);
        let key = |id: u64| {
            i64::try_from(id)
                .ok()
                .filter(|id| *id < 1 << 32)
                .map(|id| first + id)
                .ok_or_else(|| worker::Error::RustError(format!("event id {id} is out of range")))
        };
        // The rows from the first whose last id reaches `from` to the first whose reaches `to`.
        let found = rows(
            &self.sql,
            "SELECT key, body FROM event_batches WHERE key >= ?1 AND key < ?3 AND key <= \
             COALESCE((SELECT MIN(key) FROM event_batches WHERE key >= ?2 AND key < ?3), ?3) \
             ORDER BY key",
            vec![i(key(from)?), i(key(to)?), i(end)],
        )?;
        let mut stored = Vec::with_capacity(found.len());
        for mut row in found {
            let last = (int(&row, 0).unwrap_or(0) - first).max(0) as u64;
            stored.push((last, self.unpack(text(&mut row, 1).unwrap_or_default())?));
        }
        log_row::message_text(&stored, from, to)
            .map_err(|e| worker::Error::RustError(format!("run log {log}: {e}")))
    }

    /// The run's logged events, in order: the rows of `event_batches` read back into lines
    /// (log_row.rs), and those of the layouts before it (`event_log`: a row per batch of JSON
    /// lines; `events`: a row per event) for a session that predates it. A run resumed across
    /// the upgrade has rows in both; event ids order them.
    pub fn events(&self, run_id: &str) -> worker::Result<Vec<String>> {
        let mut stored = Vec::new();
        if let Some(log) = self.logged_as(run_id)? {
            let (first, end) = log_keys(log);
            let found = rows(
                &self.sql,
                "SELECT key, body FROM event_batches WHERE key >= ? AND key < ? ORDER BY key",
                vec![i(first), i(end)],
            )?;
            for mut row in found {
                stored.push(Stored::Batch {
                    last: (int(&row, 0).unwrap_or(0) - first).max(0) as u64,
                    body: self.unpack(text(&mut row, 1).unwrap_or_default())?,
                });
            }
        }
        if self.legacy_log || self.legacy_events {
            let query = match (self.legacy_log, self.legacy_events) {
                (true, true) => {
                    "SELECT event_id, json FROM events WHERE run_id = ?1 UNION ALL \
                     SELECT event_id, json FROM event_log WHERE run_id = ?1"
                }
                (true, false) => "SELECT event_id, json FROM event_log WHERE run_id = ?",
                _ => "SELECT event_id, json FROM events WHERE run_id = ?",
            };
            for mut row in rows(&self.sql, query, vec![s(run_id)])? {
                stored.push(Stored::Lines {
                    last: int(&row, 0).unwrap_or(0).max(0) as u64,
                    json: self.unpack(text(&mut row, 1).unwrap_or_default())?,
                });
            }
        }
        let lines = log_row::read_run(stored)
            .map_err(|e| worker::Error::RustError(format!("run {run_id}: {e}")))?;
        lines.iter().map(|line| self.event_from_log(line)).collect()
    }

    /// The last logged event id of a run (0 if none).
    pub fn last_event_id(&self, run_id: &str) -> worker::Result<u64> {
        let mut last = 0;
        if let Some(log) = self.logged_as(run_id)? {
            let (first, end) = log_keys(log);
            let found = rows(
                &self.sql,
                "SELECT MAX(key) FROM event_batches WHERE key >= ? AND key < ?",
                vec![i(first), i(end)],
            )?;
            if let Some(key) = found.first().and_then(|r| int(r, 0)) {
                last = (key - first).max(0);
            }
        }
        for (present, table) in [
            (self.legacy_log, "event_log"),
            (self.legacy_events, "events"),
        ] {
            if present {
                let found = rows(
                    &self.sql,
                    &format!("SELECT MAX(event_id) FROM {table} WHERE run_id = ?"),
                    vec![s(run_id)],
                )?;
                last = last.max(found.first().and_then(|r| int(r, 0)).unwrap_or(0));
            }
        }
        Ok(last.max(0) as u64)
    }

    /// Creates or updates a run's row with its latest checkpoint. A finished run's is not
    /// kept: only a running run is ever restored, and resume and the history need its row's
    /// id, status and times alone (a checkpoint is some 7 KB: the engine's configuration and
    /// tools ride along).
    pub fn save_run(
        &self,
        run_id: &str,
        status: RunStatus,
        checkpoint: &str,
        now_ms: i64,
    ) -> worker::Result<()> {
        let checkpoint = if status == RunStatus::Running {
            checkpoint
        } else {
            ""
        };
        let checkpoint = self.pack(&format!("run:{run_id}"), checkpoint)?;
        // A new run takes the next log number (`event_batches`' keys) as its row is written,
        // rather than with a write of its own when it first logs.
        self.exec(
            "INSERT INTO runs (run_id, status, checkpoint, created, log) \
             VALUES (?, ?, ?, ?, (SELECT COALESCE(MAX(log), 0) + 1 FROM runs))
             ON CONFLICT(run_id) DO UPDATE SET status = excluded.status, checkpoint = excluded.checkpoint",
            vec![s(run_id), s(status.as_str()), s(&checkpoint), i(now_ms)],
        )?;
        if status != RunStatus::Running {
            self.mark_ended(run_id, now_ms)?;
        }
        Ok(())
    }

    /// Sets a run's status and nothing else: a small write that still works when its
    /// checkpoint cannot be stored. A run it ends drops its checkpoint, as in
    /// [`Store::save_run`].
    pub fn set_run_status(&self, run_id: &str, status: RunStatus) -> worker::Result<()> {
        self.exec(
            "UPDATE runs SET status = ? WHERE run_id = ?",
            vec![s(status.as_str()), s(run_id)],
        )?;
        if status != RunStatus::Running {
            self.pack(&format!("run:{run_id}"), "")?;
            self.exec(
                "UPDATE runs SET checkpoint = '' WHERE run_id = ? AND checkpoint != ''",
                vec![s(run_id)],
            )?;
            self.mark_ended(run_id, js_sys::Date::now() as i64)?;
        }
        Ok(())
    }

    /// Drops the checkpoints that finished runs kept before [`Store::save_run`] stopped keeping
    /// them (once, with the migration that numbers runs' logs). Nothing reads them: only a
    /// running run is restored.
    pub(super) fn drop_finished_checkpoints(&self) -> worker::Result<()> {
        self.exec(
            "DELETE FROM spill WHERE key IN \
             (SELECT 'run:' || run_id FROM runs WHERE status != 'running')",
            None,
        )?;
        self.exec(
            "UPDATE runs SET checkpoint = '' WHERE status != 'running' AND checkpoint != ''",
            None,
        )?;
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

    pub fn run(&self, run_id: &str) -> worker::Result<Option<RunRow>> {
        let rows = rows(
            &self.sql,
            "SELECT run_id, checkpoint FROM runs WHERE run_id = ?",
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
            "SELECT run_id, checkpoint FROM runs WHERE status = 'running' ORDER BY created DESC LIMIT 1",
            None,
        )?;
        rows.into_iter()
            .next()
            .map(|row| self.run_row(row))
            .transpose()
    }

    /// A `SELECT run_id, checkpoint` row.
    fn run_row(&self, mut row: Vec<SqlStorageValue>) -> worker::Result<RunRow> {
        Ok(RunRow {
            run_id: text(&mut row, 0).unwrap_or_default(),
            checkpoint: self.unpack(text(&mut row, 1).unwrap_or_default())?,
        })
    }
}
