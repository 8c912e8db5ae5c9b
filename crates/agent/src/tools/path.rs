//! Workspace paths: every path a model gives is normalised and confined to the workspace.

/// The longest path accepted, in bytes after normalisation: far beyond any real project, short
/// enough that a path can never be the bulk of a storage row.
pub const MAX_PATH_LEN: usize = 1024;

/// Normalises a path the model gave into the workspace's canonical form: relative,
/// `/`-separated, without empty or `.` segments (`./a//b/` → `a/b`; `\` counts as `/`).
///
/// Refused, with a message saying why: `..` segments (even ones that would stay inside, like
/// `a/../b`: the model should name the file it means), absolute paths (`/x`, `\x`, `\\server\x`,
/// `C:\x`, `C:x`), control characters including NUL, and paths longer than [`MAX_PATH_LEN`].
/// The empty path (or `.`) is returned as `""`, meaning the workspace root; tools that need a
/// file refuse it themselves.
pub fn normalize_path(path: &str) -> Result<String, String> {
    if path.chars().any(char::is_control) {
        return Err(format!(
            "invalid path {}: it contains a control character",
            quote(path)
        ));
    }
    if path.starts_with('/') || path.starts_with('\\') {
        return Err(format!(
            "invalid path {}: absolute paths are not allowed; paths are relative to the \
             workspace root",
            quote(path)
        ));
    }
    let bytes = path.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err(format!(
            "invalid path {}: drive letters are not allowed; paths are relative to the \
             workspace root",
            quote(path)
        ));
    }
    let mut segments = Vec::new();
    for segment in path.split(['/', '\\']) {
        match segment {
            "" | "." => {}
            ".." => {
                return Err(format!(
                    "invalid path {}: \"..\" segments are not allowed; paths are relative to \
                     the workspace root",
                    quote(path)
                ))
            }
            s => segments.push(s),
        }
    }
    let normalized = segments.join("/");
    if normalized.len() > MAX_PATH_LEN {
        return Err(format!(
            "invalid path: it is {} bytes long; the limit is {MAX_PATH_LEN}",
            normalized.len()
        ));
    }
    Ok(normalized)
}

/// A path that must name a file: normalised, and not the workspace root.
pub(crate) fn file_path(path: &str) -> Result<String, String> {
    let normalized = normalize_path(path)?;
    if normalized.is_empty() {
        return Err(format!(
            "invalid path {}: a file name is required",
            quote(path)
        ));
    }
    Ok(normalized)
}

/// A path quoted for an error message, with control characters escaped and long ones cut, so
/// the message itself stays readable.
pub(crate) fn quote(path: &str) -> String {
    const SHOWN: usize = 200;
    let mut out = String::from("\"");
    for (i, c) in path.chars().enumerate() {
        if i == SHOWN {
            out.push('…');
            break;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
