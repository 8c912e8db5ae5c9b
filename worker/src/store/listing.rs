//! The listing clients read (`messages`, `user_messages`): a row per message, pointing at the
//! message's history row where it can, its text taken back before a compaction deletes the row.

use serde_json::Value;
use weft_protocol::event::StoredMessage;
use weft_protocol::Role;

use super::history::fnv;
use super::{i, int, json_error, rows, s, text, Store};

/// How a listed message (`messages`) says its text is its history row's: the marker, then the
/// row's seq. `IN_HISTORY_END` bounds the range of such values.
const IN_HISTORY: &str = "\0history:";
const IN_HISTORY_END: &str = "\0history;";

/// The largest integer a JavaScript number holds exactly (`Number.MAX_SAFE_INTEGER`).
const JS_SAFE_INTEGER: u64 = (1 << 53) - 1;

impl Store {
    /// Appends a message to the thread's listing (`user_messages`). The engine's history row
    /// of the same message holds its text already (it is written first, with the run's
    /// checkpoint), so the listing's row points at it instead of holding the text again.
    pub fn add_message(&self, role: &Role, content: &str, run_id: &str) -> worker::Result<()> {
        let content = match self.history_row_of(role, content)? {
            Some(seq) => format!("{IN_HISTORY}{seq}"),
            // A run adds one message per role, so the pair names it.
            None => self.pack(&format!("message:{run_id}:{role}"), content)?,
        };
        self.exec(
            "INSERT INTO messages (role, content, run_id) VALUES (?, ?, ?)",
            vec![s(role.as_str()), s(&content), s(run_id)],
        )?;
        Ok(())
    }

    /// The newest history row holding exactly this message, if any.
    fn history_row_of(&self, role: &Role, content: &str) -> worker::Result<Option<i64>> {
        if !matches!(role, Role::User | Role::Assistant) {
            return Ok(None);
        }
        // As the engine's message serializes: its role and its text, nothing else.
        let json = serde_json::json!({ "role": role.as_str(), "content": content }).to_string();
        let found = rows(
            &self.sql,
            "SELECT seq FROM history WHERE message = ? ORDER BY seq DESC LIMIT 1",
            vec![s(&json)],
        )?;
        if let Some(seq) = found.first().and_then(|r| int(r, 0)) {
            return Ok(Some(seq));
        }
        // A reply whose row points into the event log (history.rs) does not hold its JSON: the
        // newest of the rows the last save wrote with this JSON's hash, read back to be sure.
        let hash = fnv(&json);
        let newest = self
            .history
            .borrow()
            .iter()
            .flatten()
            .rev()
            .find(|(_, h)| *h == hash)
            .map(|(seq, _)| *seq);
        match newest {
            Some(seq) if self.history_row(seq)? == json => Ok(Some(seq)),
            _ => Ok(None),
        }
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
    pub(super) fn keep_listed_text(&self, first: i64) -> worker::Result<()> {
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
        let page = i(limit as i64 + 1);
        let mut rows = match cursor(before) {
            Some(before) => rows(
                &self.sql,
                "SELECT seq, role, content FROM messages WHERE seq < ? ORDER BY seq DESC LIMIT ?",
                vec![i(before), page],
            )?,
            None => rows(
                &self.sql,
                "SELECT seq, role, content FROM messages ORDER BY seq DESC LIMIT ?",
                vec![page],
            )?,
        };
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
}

/// The `seq` bound of a `user_messages` cursor, if it bounds anything. No cursor, or one past
/// any seq (they count up from 1), reads from the newest, and is never bound as a number: SQL
/// parameters travel as JavaScript numbers, which hold no integer above 2^53 exactly
/// (workers-rs logs "outside the JavaScript safe-integer range" for each).
fn cursor(before: Option<u64>) -> Option<i64> {
    before.filter(|b| *b <= JS_SAFE_INTEGER).map(|b| b as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_is_bound_only_within_javascript_s_safe_integers() {
        assert_eq!(cursor(None), None);
        assert_eq!(cursor(Some(12)), Some(12));
        assert_eq!(cursor(Some(JS_SAFE_INTEGER)), Some(JS_SAFE_INTEGER as i64));
        assert_eq!(cursor(Some(JS_SAFE_INTEGER + 1)), None);
        assert_eq!(cursor(Some(u64::MAX)), None);
    }
}
