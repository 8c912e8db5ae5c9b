//! The session workspace and the tools that use it: `read`, `ls`, `write`.

use std::collections::BTreeMap;

use super::args::Args;
use super::path::{file_path, normalize_path};

/// The largest file the tools will write, in bytes: enough for any source file a model should
/// be editing, small enough that one file cannot fill a Durable Object's storage or a model's
/// context.
pub const MAX_FILE_BYTES: usize = 1024 * 1024;

/// The most lines `ls` prints; the rest are counted, so a huge workspace cannot flood the
/// model's context.
pub const MAX_LS_ENTRIES: usize = 1000;

/// A session's files, implemented by the host over its storage (the worker: the Durable
/// Object's SQLite, which is synchronous, hence no `async` here).
///
/// The workspace is flat: a map from normalised paths (see
/// [`normalize_path`](super::normalize_path)) to UTF-8 contents, where directories exist only
/// as prefixes of file paths. The tools only ever pass normalised, non-empty paths, and they
/// keep the map tree-shaped (no file is also the directory of another). Storage can refuse
/// (quota, I/O), hence the `Result` on [`write`](Workspace::write).
pub trait Workspace {
    /// The content of the file at `path`, or `None` if there is none. `Err` when the store
    /// could not be read (shown to the model as is): a failed read is not a missing file.
    fn read(&self, path: &str) -> Result<Option<String>, String>;

    /// Creates or replaces the file at `path`. The error is shown to the model as is.
    fn write(&mut self, path: &str, content: &str) -> Result<(), String>;

    /// Removes the file at `path`; `false` if there was none. The error is shown to the model
    /// as is.
    fn delete(&mut self, path: &str) -> Result<bool, String>;

    /// Every file with its size in bytes, in any order. `Err` when the store could not be
    /// read: a failed listing is not an empty workspace.
    fn list(&self) -> Result<Vec<(String, usize)>, String>;
}

/// A workspace in memory: for tests, and for hosts that keep no files between runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryWorkspace {
    /// Path → content, standing in for the session's stored files.
    pub files: BTreeMap<String, String>,
}

impl MemoryWorkspace {
    /// With no files; tests fill [`MemoryWorkspace::files`] directly.
    pub fn new() -> Self {
        Self::default()
    }

    /// A workspace holding these files, for tests.
    pub fn with_files<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        MemoryWorkspace {
            files: files
                .into_iter()
                .map(|(p, c)| (p.to_string(), c.to_string()))
                .collect(),
        }
    }
}

impl Workspace for MemoryWorkspace {
    fn read(&self, path: &str) -> Result<Option<String>, String> {
        Ok(self.files.get(path).cloned())
    }

    fn write(&mut self, path: &str, content: &str) -> Result<(), String> {
        self.files.insert(path.to_string(), content.to_string());
        Ok(())
    }

    fn delete(&mut self, path: &str) -> Result<bool, String> {
        Ok(self.files.remove(path).is_some())
    }

    fn list(&self) -> Result<Vec<(String, usize)>, String> {
        Ok(self
            .files
            .iter()
            .map(|(p, c)| (p.clone(), c.len()))
            .collect())
    }
}

/// Why a file cannot be created at `path` given the other paths of the workspace, if it cannot:
/// a file cannot sit where a directory is, nor under a file.
pub(crate) fn tree_conflict<'a>(
    path: &str,
    mut others: impl Iterator<Item = &'a str>,
) -> Option<String> {
    others.find_map(|other| {
        if other.len() > path.len()
            && other.starts_with(path)
            && other.as_bytes()[path.len()] == b'/'
        {
            Some(format!("{path} is a directory (it holds {other})"))
        } else if path.len() > other.len()
            && path.starts_with(other)
            && path.as_bytes()[other.len()] == b'/'
        {
            Some(format!("{other} is a file, not a directory"))
        } else {
            None
        }
    })
}

/// `1 byte`, `2 bytes`.
pub(crate) fn bytes(n: usize) -> String {
    if n == 1 {
        "1 byte".to_string()
    } else {
        format!("{n} bytes")
    }
}

/// `read { path }`.
pub(crate) fn read(args: &Args<'_>, ws: &mut dyn Workspace) -> Result<String, String> {
    let path = file_path(args.str("path")?)?;
    match ws.read(&path)? {
        Some(content) if content.is_empty() => Ok(format!("(the file {path} is empty)")),
        Some(mut content) => {
            if content.len() > MAX_FILE_BYTES {
                let total = content.len();
                let mut cut = MAX_FILE_BYTES;
                while !content.is_char_boundary(cut) {
                    cut -= 1;
                }
                content.truncate(cut);
                content.push_str(&format!(
                    "\n[truncated: showing the first {} of {}]",
                    bytes(cut),
                    bytes(total)
                ));
            }
            Ok(content)
        }
        None => {
            let dir = format!("{path}/");
            if ws.list()?.iter().any(|(p, _)| p.starts_with(&dir)) {
                Err(format!(
                    "no such file: {path} (it is a directory; use ls to see its files)"
                ))
            } else {
                Err(format!("no such file: {path}"))
            }
        }
    }
}

/// `ls { path? }`.
pub(crate) fn ls(args: &Args<'_>, ws: &mut dyn Workspace) -> Result<String, String> {
    let dir = normalize_path(args.opt_str("path")?.unwrap_or(""))?;
    let prefix = format!("{dir}/");
    let mut entries: Vec<(String, usize)> = ws
        .list()?
        .into_iter()
        .filter(|(p, _)| dir.is_empty() || *p == dir || p.starts_with(&prefix))
        .collect();
    if entries.is_empty() {
        return if dir.is_empty() {
            Ok("(the workspace is empty)".to_string())
        } else {
            Err(format!("no such file or directory: {dir}"))
        };
    }
    entries.sort();
    let mut out = String::new();
    for (path, size) in entries.iter().take(MAX_LS_ENTRIES) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("{path} ({})", bytes(*size)));
    }
    if entries.len() > MAX_LS_ENTRIES {
        out.push_str(&format!(
            "\n… and {} more files",
            entries.len() - MAX_LS_ENTRIES
        ));
    }
    Ok(out)
}

/// `write { path, content }`.
pub(crate) fn write(args: &Args<'_>, ws: &mut dyn Workspace) -> Result<String, String> {
    let path = file_path(args.str("path")?)?;
    let content = args.str("content")?;
    if content.len() > MAX_FILE_BYTES {
        return Err(format!(
            "cannot write {path}: the content is {}; the limit per file is {}",
            bytes(content.len()),
            bytes(MAX_FILE_BYTES)
        ));
    }
    let files = ws.list()?;
    if let Some(conflict) = tree_conflict(&path, files.iter().map(|(p, _)| p.as_str())) {
        return Err(format!("cannot write {path}: {conflict}"));
    }
    let existed = files.iter().any(|(p, _)| *p == path);
    ws.write(&path, content)
        .map_err(|e| format!("cannot write {path}: {e}"))?;
    Ok(format!(
        "{} {path} ({})",
        if existed { "overwrote" } else { "created" },
        bytes(content.len())
    ))
}
