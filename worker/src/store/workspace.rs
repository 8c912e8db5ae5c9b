//! The session's workspace: the files the tools read and write, in the `files` table.

use weft_agent::tools::Workspace;

use super::{int, rows, s, text, Store};

/// The session workspace over the `files` table; `root` (a run's `working_folder`, normalized,
/// possibly empty) is the folder the tools see as their top.
#[derive(Debug)]
pub struct SqlWorkspace<'a> {
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
    fn read(&self, path: &str) -> Result<Option<String>, String> {
        let path = &self.full(path);
        let rows = rows(
            &self.store.sql,
            "SELECT content FROM files WHERE path = ?",
            vec![s(path)],
        )
        .map_err(|e| format!("could not read {path}: {e}"))?;
        Ok(rows.into_iter().next().and_then(|mut r| text(&mut r, 0)))
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

    fn delete(&mut self, path: &str) -> Result<bool, String> {
        let path = &self.full(path);
        self.store
            .exec("DELETE FROM files WHERE path = ?", vec![s(path)])
            .map(|c| c.rows_written() > 0)
            .map_err(|e| format!("could not delete {path}: {e}"))
    }

    fn list(&self) -> Result<Vec<(String, usize)>, String> {
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
        .map_err(|e| format!("could not list the files: {e}"))
    }
}
