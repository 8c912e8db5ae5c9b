//! Runs and their event logs: a run's row with its checkpoint and status, the log a row per
//! batch of events, and the retention that deletes a finished run's log.

use worker::SqlStorageValue;

use super::{i, int, rows, s, text, Store, INLINE_MAX};

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
        status: RunStatus,
        checkpoint: &str,
        now_ms: i64,
    ) -> worker::Result<()> {
        let checkpoint = self.pack(&format!("run:{run_id}"), checkpoint)?;
        self.exec(
            "INSERT INTO runs (run_id, status, checkpoint, created) VALUES (?, ?, ?, ?)
             ON CONFLICT(run_id) DO UPDATE SET status = excluded.status, checkpoint = excluded.checkpoint",
            vec![s(run_id), s(status.as_str()), s(&checkpoint), i(now_ms)],
        )?;
        if status != RunStatus::Running {
            self.mark_ended(run_id, now_ms)?;
        }
        Ok(())
    }

    /// Sets a run's status and nothing else: a small write that still works when its
    /// checkpoint cannot be stored.
    pub fn set_run_status(&self, run_id: &str, status: RunStatus) -> worker::Result<()> {
        self.exec(
            "UPDATE runs SET status = ? WHERE run_id = ?",
            vec![s(status.as_str()), s(run_id)],
        )?;
        if status != RunStatus::Running {
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
