//! The built-in tools: their names, schemas, descriptions and approval policy.

use serde_json::{json, Value};
use weft_protocol::event::ToolSpec;

use super::{FETCH_MAX_BYTES, MAX_FILE_BYTES};

/// A built-in tool, executed by the host through [`run_builtin`](super::run_builtin).
///
/// A closed enum rather than strings so that the engine and the worker cannot disagree on which
/// tools exist or which of them need approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Builtin {
    /// `get_time`: the current time in a time zone.
    GetTime,
    /// `calculator`: evaluates an arithmetic expression.
    Calculator,
    /// `web_fetch`: GETs a URL (performed by the host).
    WebFetch,
    /// `read`: a workspace file's content.
    Read,
    /// `ls`: the workspace's files with their sizes.
    Ls,
    /// `write`: creates or overwrites a workspace file.
    Write,
    /// `apply_patch`: edits workspace files with a Codex-format patch.
    ApplyPatch,
}

impl Builtin {
    /// Every built-in tool, sorted by name.
    pub const ALL: [Builtin; 7] = [
        Builtin::ApplyPatch,
        Builtin::Calculator,
        Builtin::GetTime,
        Builtin::Ls,
        Builtin::Read,
        Builtin::WebFetch,
        Builtin::Write,
    ];

    /// The tool's name as the model calls it.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::GetTime => "get_time",
            Builtin::Calculator => "calculator",
            Builtin::WebFetch => "web_fetch",
            Builtin::Read => "read",
            Builtin::Ls => "ls",
            Builtin::Write => "write",
            Builtin::ApplyPatch => "apply_patch",
        }
    }

    /// The built-in tool called `name`, if there is one (names are case-sensitive).
    pub fn from_name(name: &str) -> Option<Builtin> {
        Builtin::ALL.into_iter().find(|b| b.name() == name)
    }

    /// Whether a call must be approved by the user first: yes for the tools that change the
    /// workspace (`write`, `apply_patch`), no for the ones that only look.
    pub fn needs_approval(self) -> bool {
        matches!(self, Builtin::Write | Builtin::ApplyPatch)
    }

    /// The tool as the model sees it. `read_only` is set on the tools that run without
    /// approval, so a client listing the tools learns the policy the same way it declares it
    /// for its own tools.
    pub fn spec(self) -> ToolSpec {
        let (description, input_schema) = match self {
            Builtin::GetTime => (
                "Get the current date and time as an RFC 3339 timestamp with the weekday. \
                 Use it whenever the answer depends on today's date or the current time."
                    .to_string(),
                object(
                    json!({
                        "timezone": {
                            "type": "string",
                            "description": "IANA time zone name such as \"Europe/Paris\" or \
                                            \"America/New_York\", or a UTC offset such as \
                                            \"+05:30\". Defaults to UTC."
                        }
                    }),
                    &[],
                ),
            ),
            Builtin::Calculator => (
                "Evaluate an arithmetic expression exactly instead of computing it in your \
                 head. Supports + - * / % ^ (power), parentheses, unary minus, the functions \
                 sqrt abs sin cos tan asin acos atan (radians) ln log (base 10) log2 exp floor \
                 ceil round min max, and the constants pi and e. Example: \
                 \"sqrt(2) * (3 + 4)^2 / 7\"."
                    .to_string(),
                object(
                    json!({
                        "expression": {
                            "type": "string",
                            "description": "The expression to evaluate, e.g. \"(1 + 2) * 3\"."
                        }
                    }),
                    &["expression"],
                ),
            ),
            Builtin::WebFetch => (
                format!(
                    "Fetch a web page or document with an HTTP GET and return its text (HTML \
                     is reduced to its text). Only public http:// and https:// URLs; the \
                     answer is cut after {} KB and the request is abandoned after {} s.",
                    FETCH_MAX_BYTES / 1000,
                    super::FETCH_TIMEOUT_MS / 1000
                ),
                object(
                    json!({
                        "url": {
                            "type": "string",
                            "description": "The absolute http:// or https:// URL to fetch."
                        }
                    }),
                    &["url"],
                ),
            ),
            Builtin::Read => (
                "Read a file of the session workspace and return its content. Paths are \
                 relative to the workspace root, e.g. \"notes.txt\" or \"src/app.ts\"; use ls \
                 to see which files exist."
                    .to_string(),
                object(
                    json!({
                        "path": {
                            "type": "string",
                            "description": "Path of the file, relative to the workspace root."
                        }
                    }),
                    &["path"],
                ),
            ),
            Builtin::Ls => (
                "List the files of the session workspace, one per line with its size in \
                 bytes, sorted by path. Give a directory to list only the files under it."
                    .to_string(),
                object(
                    json!({
                        "path": {
                            "type": "string",
                            "description": "Directory to list, relative to the workspace root. \
                                            Defaults to the whole workspace."
                        }
                    }),
                    &[],
                ),
            ),
            Builtin::Write => (
                format!(
                    "Create a file in the session workspace, or replace its whole content. \
                     Directories are implicit. To change part of an existing file, prefer \
                     apply_patch. Files are limited to {} bytes. The user must approve the call.",
                    MAX_FILE_BYTES
                ),
                object(
                    json!({
                        "path": {
                            "type": "string",
                            "description": "Path of the file, relative to the workspace root."
                        },
                        "content": {
                            "type": "string",
                            "description": "The complete new content of the file."
                        }
                    }),
                    &["path", "content"],
                ),
            ),
            Builtin::ApplyPatch => (
                PATCH_DESCRIPTION.to_string(),
                object(
                    json!({
                        "patch": {
                            "type": "string",
                            "description": "The patch, from \"*** Begin Patch\" to \
                                            \"*** End Patch\"."
                        }
                    }),
                    &["patch"],
                ),
            ),
        };
        ToolSpec {
            name: self.name().to_string(),
            description: Some(description),
            input_schema: input_schema.into(),
            read_only: !self.needs_approval(),
        }
    }
}

/// The model needs the whole format to write a patch that applies, so the description teaches
/// it, with an example of every operation.
const PATCH_DESCRIPTION: &str = "Edit files of the session workspace with a patch: add, \
delete, update or rename several files at once. Either every change applies or none does. The \
user must approve the call. Format:

*** Begin Patch
*** Add File: path/of/new_file.txt
+every line of the new file,
+each prefixed with +
*** Delete File: path/of/old_file.txt
*** Update File: src/app.ts
*** Move to: src/main.ts
@@ function main() {
 a context line, unchanged (prefixed with a space)
-a line to remove
+a line to add
 another context line
*** End Patch

\"*** Move to:\" is optional and renames the updated file. Each change starts with @@, \
optionally followed by a line of the file that comes before it, to say where it is. Give about \
3 lines of context before and after each change; the context and removed lines must match the \
file exactly, in order. Several @@ sections in one file must be in file order. Paths are \
relative to the workspace root.";

/// An object schema with these properties and required fields.
fn object(properties: Value, required: &[&str]) -> Value {
    let mut schema = json!({ "type": "object", "properties": properties });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// The specs of every built-in tool, sorted by name: what the engine offers the model and what
/// `tools_list` shows.
pub fn builtin_specs() -> Vec<ToolSpec> {
    Builtin::ALL.into_iter().map(Builtin::spec).collect()
}

/// Whether the built-in tool `name` needs the user's approval before it runs. An unknown name
/// answers `true`: failing closed means a tool nobody classified never runs unasked. For client
/// tools, ask [`ToolRegistry::needs_approval`](super::ToolRegistry::needs_approval).
pub fn needs_approval(name: &str) -> bool {
    Builtin::from_name(name).is_none_or(Builtin::needs_approval)
}
