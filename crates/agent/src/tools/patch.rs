//! `apply_patch`: the Codex patch format, parsed and applied to the workspace all or nothing.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: notes.txt
//! +first line
//! *** Delete File: old.txt
//! *** Update File: src/app.ts
//! *** Move to: src/main.ts
//! @@ function main() {
//!  context
//! -removed
//! +added
//! *** End of File
//! *** End Patch
//! ```
//!
//! A hunk's optional `@@ text` header is a line to find first (the hunk is searched after it);
//! a unified-diff range header (`@@ -1,3 +1,4 @@`) carries no such line and is read as a bare
//! `@@`. Hunks are searched in file order, each after the previous one, matching the context
//! and removed lines exactly, then ignoring trailing whitespace. `*** End of File` anchors a
//! hunk at the end of the file. A hunk without context or removed lines inserts its lines after
//! its `@@` line, or at the end of the file without one. Within a hunk, an empty line stands
//! for an empty context line (models drop the space).
//!
//! Choices where Codex is silent or lenient: adding a file that exists, moving onto one, and
//! updating or deleting one that does not are errors (a patch is written against a known state;
//! clobbering is what `write` is for). Files keep their line endings (`\r\n` if they had them)
//! and their final newline or its absence; new files end with a newline. The patch may be
//! wrapped in a heredoc (`apply_patch <<'EOF'` … `EOF`), as models sometimes copy it from a
//! shell command.

use weft_protocol::sorted::{SortedMap, SortedSet};

use super::path::file_path;
use super::workspace::{bytes, tree_conflict, Workspace, MAX_FILE_BYTES};

/// Applies a Codex-format `patch` to `ws`: every change, or — if any file operation or hunk
/// fails — none, with an error naming the file, the patch line or the first line that did not
/// match. On success, a summary like Codex's: `Success. Updated the following files:` then
/// `A path`, `M path`, `D path`, one line per operation.
///
/// "None" holds as far as the workspace's own writes succeed: every check happens before the
/// first write, so only a storage failure during the writes leaves a patch half applied (and
/// the error says so). A host with transactions can wrap the call in one.
pub fn apply_patch(patch: &str, ws: &mut dyn Workspace) -> Result<String, String> {
    let ops = parse(patch)?;
    let mut staged = Staged {
        changes: SortedMap::new(),
        paths: ws.list()?.into_iter().map(|(p, _)| p).collect(),
    };
    let mut summary = String::from("Success. Updated the following files:");
    for op in ops {
        let line = match op {
            Op::Add { path, lines } => {
                let path = file_path(&path)?;
                if staged.paths.contains(&path) {
                    return Err(format!(
                        "cannot add {path}: the file already exists (use '{UPDATE}' to change \
                         it)"
                    ));
                }
                let content = if lines.is_empty() {
                    String::new()
                } else {
                    lines.join("\n") + "\n"
                };
                check_size(&path, &content)?;
                staged.create(&path, content)?;
                format!("A {path}")
            }
            Op::Delete { path } => {
                let path = file_path(&path)?;
                if !staged.paths.contains(&path) {
                    return Err(format!("cannot delete {path}: no such file"));
                }
                staged.remove(&path);
                format!("D {path}")
            }
            Op::Update {
                path,
                move_to,
                hunks,
            } => {
                let path = file_path(&path)?;
                let Some(content) = staged.read(ws, &path)? else {
                    return Err(format!("cannot update {path}: no such file"));
                };
                let updated = apply_hunks(&path, &content, &hunks)?;
                match move_to.map(|to| file_path(&to)).transpose()? {
                    Some(to) if to != path => {
                        if staged.paths.contains(&to) {
                            return Err(format!("cannot move {path} to {to}: {to} already exists"));
                        }
                        check_size(&to, &updated)?;
                        staged.remove(&path);
                        staged.create(&to, updated)?;
                        format!("M {to} (moved from {path})")
                    }
                    _ => {
                        check_size(&path, &updated)?;
                        staged.changes.insert(path.clone(), Some(updated));
                        format!("M {path}")
                    }
                }
            }
        };
        summary.push('\n');
        summary.push_str(&line);
    }
    // Everything checked: write. Deletions first, so a quota-bound store has room.
    let mut done = Vec::new();
    for (path, _) in staged.changes.iter().filter(|(_, c)| c.is_none()) {
        if let Err(e) = ws.delete(path) {
            return Err(in_part(&["cannot delete ", path, ": ", &e], &done));
        }
        done.push(path.as_str());
    }
    for (path, content) in staged
        .changes
        .iter()
        .filter_map(|(p, c)| c.as_ref().map(|c| (p, c)))
    {
        if let Err(e) = ws.write(path, content) {
            return Err(in_part(&["cannot write ", path, ": ", &e], &done));
        }
        done.push(path.as_str());
    }
    Ok(summary)
}

/// A write or deletion that failed after others were done: what failed, and what was done.
fn in_part(what: &[&str], done: &[&str]) -> String {
    format!(
        "{}; the patch was applied only in part (done: {})",
        what.concat(),
        if done.is_empty() {
            "nothing".to_string()
        } else {
            done.join(", ")
        }
    )
}

/// The patch's changes, not yet written, over the workspace.
struct Staged {
    /// Path → new content, or `None` for a deletion.
    changes: SortedMap<String, Option<String>>,
    /// Every path that exists once the staged changes are applied.
    paths: SortedSet<String>,
}

impl Staged {
    fn read(&self, ws: &dyn Workspace, path: &str) -> Result<Option<String>, String> {
        match self.changes.get(path) {
            Some(change) => Ok(change.clone()),
            None => ws.read(path),
        }
    }

    /// Stages a new file, keeping the workspace tree-shaped.
    fn create(&mut self, path: &str, content: String) -> Result<(), String> {
        if let Some(conflict) = tree_conflict(path, self.paths.iter().map(String::as_str)) {
            return Err(format!("cannot create {path}: {conflict}"));
        }
        self.paths.insert(path.to_string());
        self.changes.insert(path.to_string(), Some(content));
        Ok(())
    }

    fn remove(&mut self, path: &str) {
        self.paths.remove(path);
        self.changes.insert(path.to_string(), None);
    }
}

fn check_size(path: &str, content: &str) -> Result<(), String> {
    if content.len() > MAX_FILE_BYTES {
        return Err(format!(
            "cannot write {path}: the result would be {}; the limit per file is {}",
            bytes(content.len()),
            bytes(MAX_FILE_BYTES)
        ));
    }
    Ok(())
}

#[derive(Debug)]
enum Op {
    Add {
        path: String,
        lines: Vec<String>,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        hunks: Vec<Hunk>,
    },
}

#[derive(Debug, Default)]
struct Hunk {
    /// The `@@ text` line to find before the hunk.
    anchor: Option<String>,
    lines: Vec<HunkLine>,
    /// `*** End of File`: the hunk ends at the end of the file.
    end_of_file: bool,
}

#[derive(Debug)]
enum HunkLine {
    Context(String),
    Remove(String),
    Add(String),
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";

fn parse(patch: &str) -> Result<Vec<Op>, String> {
    let lines: Vec<&str> = patch
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    // The non-blank span of the patch, as indices into `lines` (so errors can give line
    // numbers of the text the model wrote).
    let mut start = lines.iter().position(|l| !l.trim().is_empty()).unwrap_or(0);
    let mut end = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    if let Some(delimiter) = lines.get(start).and_then(|l| heredoc_delimiter(l)) {
        if end > start + 1 && lines[end - 1].trim() == delimiter {
            start += 1;
            end -= 1;
        }
    }
    if lines.get(start).map(|l| l.trim()) != Some(BEGIN) {
        return Err(format!("invalid patch: the first line must be '{BEGIN}'"));
    }
    if end <= start + 1 || lines[end - 1].trim() != END {
        return Err(format!("invalid patch: the last line must be '{END}'"));
    }
    let mut ops = Vec::new();
    let mut i = start + 1;
    let body_end = end - 1;
    while i < body_end {
        let line = lines[i].trim_end();
        let number = i + 1;
        i += 1;
        if let Some(path) = line.strip_prefix(ADD) {
            let mut content = Vec::new();
            while i < body_end && !is_file_header(lines[i]) {
                let Some(text) = lines[i].strip_prefix('+') else {
                    return Err(format!(
                        "invalid patch line {}: {}: every line of an added file starts with \
                         '+' (write '+' alone for an empty line)",
                        i + 1,
                        shown(lines[i])
                    ));
                };
                content.push(text.to_string());
                i += 1;
            }
            ops.push(Op::Add {
                path: path.trim().to_string(),
                lines: content,
            });
        } else if let Some(path) = line.strip_prefix(DELETE) {
            ops.push(Op::Delete {
                path: path.trim().to_string(),
            });
        } else if let Some(path) = line.strip_prefix(UPDATE) {
            let path = path.trim().to_string();
            let mut move_to = None;
            if let Some(to) = lines
                .get(i)
                .filter(|_| i < body_end)
                .and_then(|l| l.trim_end().strip_prefix(MOVE))
            {
                move_to = Some(to.trim().to_string());
                i += 1;
            }
            let mut hunks: Vec<Hunk> = Vec::new();
            while i < body_end && !is_file_header(lines[i]) {
                let raw = lines[i];
                let number = i + 1;
                i += 1;
                if raw.trim_end() == END_OF_FILE {
                    match hunks.last_mut() {
                        Some(hunk) if !hunk.lines.is_empty() => hunk.end_of_file = true,
                        _ => {
                            return Err(format!(
                                "invalid patch line {number}: '{END_OF_FILE}' must follow the \
                                 lines of a hunk"
                            ))
                        }
                    }
                    continue;
                }
                if let Some(header) = raw.strip_prefix("@@") {
                    if let Some(previous) = hunks.last() {
                        if previous.lines.is_empty() {
                            return Err(format!(
                                "invalid patch line {number}: the hunk before this @@ in {path} \
                                 has no lines"
                            ));
                        }
                    }
                    hunks.push(Hunk {
                        anchor: hunk_anchor(header),
                        ..Hunk::default()
                    });
                    continue;
                }
                let hunk_line = match raw.chars().next() {
                    Some(' ') => HunkLine::Context(raw[1..].to_string()),
                    Some('-') => HunkLine::Remove(raw[1..].to_string()),
                    Some('+') => HunkLine::Add(raw[1..].to_string()),
                    None => HunkLine::Context(String::new()),
                    Some(_) => {
                        return Err(format!(
                            "invalid patch line {number}: {} in the update of {path}: hunk \
                             lines start with ' ' (context), '-' (remove) or '+' (add), and \
                             hunks start with @@",
                            shown(raw)
                        ))
                    }
                };
                match hunks.last_mut() {
                    Some(hunk) if !hunk.end_of_file => hunk.lines.push(hunk_line),
                    Some(_) => {
                        return Err(format!(
                            "invalid patch line {number}: a hunk continues after \
                             '{END_OF_FILE}' in {path}; start a new hunk with @@"
                        ))
                    }
                    // Codex lets the first hunk of a file go without its @@.
                    None => hunks.push(Hunk {
                        lines: vec![hunk_line],
                        ..Hunk::default()
                    }),
                }
            }
            if hunks.last().is_some_and(|h| h.lines.is_empty()) {
                return Err(format!(
                    "invalid patch: the last hunk of {path} has no lines"
                ));
            }
            if hunks.is_empty() && move_to.is_none() {
                return Err(format!(
                    "invalid patch line {number}: '{UPDATE} {path}' has no hunks"
                ));
            }
            ops.push(Op::Update {
                path,
                move_to,
                hunks,
            });
        } else if line.trim().is_empty() {
            // Blank lines between file sections.
        } else {
            return Err(format!(
                "invalid patch line {number}: {}: expected '{ADD}', '{DELETE}', '{UPDATE}' or \
                 '{END}'",
                shown(line)
            ));
        }
    }
    if ops.is_empty() {
        return Err("invalid patch: it changes no file".to_string());
    }
    Ok(ops)
}

/// `apply_patch <<'EOF'` or `<<"EOF"` or `<<EOF` → `EOF`.
fn heredoc_delimiter(line: &str) -> Option<&str> {
    let line = line.trim();
    if !(line.starts_with("apply_patch") || line.starts_with("<<")) {
        return None;
    }
    let (_, after) = line.split_once("<<")?;
    let delimiter = after
        .trim()
        .trim_start_matches('-')
        .trim_matches(['\'', '"']);
    (!delimiter.is_empty()).then_some(delimiter)
}

fn is_file_header(line: &str) -> bool {
    let line = line.trim_end();
    line.starts_with(ADD) || line.starts_with(DELETE) || line.starts_with(UPDATE) || line == END
}

/// The line to find from a hunk header's text after `@@`, if it names one.
fn hunk_anchor(header: &str) -> Option<String> {
    let text = header.trim();
    if text.is_empty() || is_range_header(text) {
        None
    } else {
        Some(text.to_string())
    }
}

/// `-1,3 +1,4 @@` (possibly followed by text, as git writes it).
fn is_range_header(text: &str) -> bool {
    let mut parts = text.splitn(3, ' ');
    let range = |part: Option<&str>, sign: char| {
        part.and_then(|p| p.strip_prefix(sign)).is_some_and(|r| {
            !r.is_empty()
                && r.split(',')
                    .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    range(parts.next(), '-')
        && range(parts.next(), '+')
        && parts.next().is_some_and(|rest| rest.starts_with("@@"))
}

/// A line quoted for an error message, cut if long.
fn shown(line: &str) -> String {
    const SHOWN: usize = 120;
    let mut out: String = line.chars().take(SHOWN).collect();
    if line.chars().nth(SHOWN).is_some() {
        out.push('…');
    }
    format!("{out:?}")
}

/// How strictly lines are compared: exact first, then ignoring trailing whitespace (models
/// often drop it), then — for `@@` anchors only — ignoring leading whitespace too.
#[derive(Clone, Copy)]
enum Match {
    Exact,
    TrimEnd,
    Trim,
}

impl Match {
    fn eq(self, a: &str, b: &str) -> bool {
        match self {
            Match::Exact => a == b,
            Match::TrimEnd => a.trim_end() == b.trim_end(),
            Match::Trim => a.trim() == b.trim(),
        }
    }
}

fn apply_hunks(path: &str, content: &str, hunks: &[Hunk]) -> Result<String, String> {
    let crlf = content.contains("\r\n");
    let ends_with_newline = content.is_empty() || content.ends_with('\n');
    let lines: Vec<&str> = if content.is_empty() {
        Vec::new()
    } else {
        content
            .strip_suffix('\n')
            .unwrap_or(content)
            .split('\n')
            .map(|l| {
                if crlf {
                    l.strip_suffix('\r').unwrap_or(l)
                } else {
                    l
                }
            })
            .collect()
    };
    // (start, lines replaced, new lines), in file order, not overlapping.
    let mut replacements: Vec<(usize, usize, Vec<&str>)> = Vec::new();
    let mut cursor = 0;
    for (n, hunk) in hunks.iter().enumerate() {
        let n = n + 1;
        if let Some(anchor) = &hunk.anchor {
            let found = [Match::Exact, Match::TrimEnd, Match::Trim]
                .into_iter()
                .find_map(|m| (cursor..lines.len()).find(|&i| m.eq(lines[i], anchor)));
            let Some(i) = found else {
                return Err(format!(
                    "cannot apply hunk {n} to {path}: its @@ line {} was not found{}; nothing \
                     was changed",
                    shown(anchor),
                    after(cursor)
                ));
            };
            cursor = i + 1;
        }
        let old: Vec<&str> = hunk
            .lines
            .iter()
            .filter_map(|l| match l {
                HunkLine::Context(s) | HunkLine::Remove(s) => Some(s.as_str()),
                HunkLine::Add(_) => None,
            })
            .collect();
        let new: Vec<&str> = hunk
            .lines
            .iter()
            .filter_map(|l| match l {
                HunkLine::Context(s) | HunkLine::Add(s) => Some(s.as_str()),
                HunkLine::Remove(_) => None,
            })
            .collect();
        if old.is_empty() {
            let at = if hunk.anchor.is_some() && !hunk.end_of_file {
                cursor
            } else {
                lines.len()
            };
            replacements.push((at, 0, new));
            cursor = at;
            continue;
        }
        let matches_at = |start: usize, m: Match| {
            start + old.len() <= lines.len()
                && old.iter().zip(&lines[start..]).all(|(o, l)| m.eq(l, o))
        };
        let last_start = lines.len().checked_sub(old.len());
        let found = [Match::Exact, Match::TrimEnd].into_iter().find_map(|m| {
            if hunk.end_of_file {
                if let Some(s) = last_start.filter(|&s| s >= cursor && matches_at(s, m)) {
                    return Some(s);
                }
            }
            last_start.and_then(|last| (cursor..=last).find(|&s| matches_at(s, m)))
        });
        let Some(start) = found else {
            return Err(mismatch(path, n, &lines, &old, cursor));
        };
        replacements.push((start, old.len(), new));
        cursor = start + old.len();
    }
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    let mut next = 0;
    for (start, removed, new) in replacements {
        out.extend_from_slice(&lines[next..start]);
        out.extend(new);
        next = start + removed;
    }
    out.extend_from_slice(&lines[next..]);
    if out.is_empty() {
        return Ok(String::new());
    }
    let newline = if crlf { "\r\n" } else { "\n" };
    let mut result = out.join(newline);
    if ends_with_newline {
        result.push_str(newline);
    }
    Ok(result)
}

fn after(cursor: usize) -> String {
    if cursor == 0 {
        String::new()
    } else {
        format!(" after line {cursor}")
    }
}

/// The error for a hunk whose lines were not found: where the best partial match broke off,
/// so the model can see which of its lines is wrong.
fn mismatch(path: &str, n: usize, lines: &[&str], old: &[&str], cursor: usize) -> String {
    let mut best: Option<(usize, usize)> = None; // (start, lines matched)
    for start in cursor..lines.len() {
        let matched = old
            .iter()
            .zip(&lines[start..])
            .take_while(|(o, l)| Match::TrimEnd.eq(l, o))
            .count();
        if matched > 0 && best.is_none_or(|(_, m)| matched > m) {
            best = Some((start, matched));
        }
    }
    match best {
        None => format!(
            "cannot apply hunk {n} to {path}: the line {} was not found{}; nothing was changed",
            shown(old[0]),
            after(cursor)
        ),
        Some((start, matched)) => {
            let at = start + matched;
            let expected = old.get(matched).copied().unwrap_or_default();
            let found = lines
                .get(at)
                .map_or_else(|| "the end of the file".to_string(), |l| shown(l));
            format!(
                "cannot apply hunk {n} to {path}: the line {} does not match: line {} of the \
                 file is {found}; nothing was changed",
                shown(expected),
                at + 1
            )
        }
    }
}
