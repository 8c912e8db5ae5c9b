//! The built-in tools and the session workspace: a library the host calls when the engine asks
//! it to run a tool.
//!
//! The engine is sans-IO, so it never runs a tool itself: it emits "run tool X with these
//! arguments" and waits for the result. The host (the worker, or a test) answers by calling
//! [`run_builtin`] with a [`ToolHost`] that gives access to the session's [`Workspace`] and the
//! clock. Everything a tool needs from the outside world comes through that trait, so every tool
//! is deterministic and testable natively.
//!
//! | tool | input | approval |
//! |---|---|---|
//! | `get_time` | `{ timezone?: string }` | no |
//! | `calculator` | `{ expression: string }` | no |
//! | `web_fetch` | `{ url: string }` | no |
//! | `read` | `{ path: string }` | no |
//! | `ls` | `{ path?: string }` | no |
//! | `write` | `{ path: string, content: string }` | yes |
//! | `apply_patch` | `{ patch: string }` (the Codex patch format) | yes |
//!
//! One tool cannot finish inside the call: `web_fetch` needs the network, so [`run_builtin`]
//! returns [`ToolRun::Fetch`] and the host performs the request (with [`FETCH_TIMEOUT_MS`] and at
//! most `max_bytes + 1` body bytes), then turns the answer into the model's text with
//! [`fetch_result`]. A host follows redirects itself, checking each with [`redirect_target`].
//!
//! ```text
//! match tools::run_builtin(&name, &arguments, &mut host) {
//!     ToolRun::Done { result, is_error } => engine.tool_result(call_id, result, is_error),
//!     ToolRun::Fetch { url, max_bytes, timeout_ms } => {
//!         // host: GET url with the timeout, read at most max_bytes + 1 bytes of the body
//!         let (result, is_error) = tools::fetch_result(status, &content_type, &body, max_bytes);
//!         engine.tool_result(call_id, result, is_error)
//!     }
//! }
//! ```
//!
//! Every failure — unknown tool, missing or mistyped argument, bad path, unmatched patch — is a
//! [`ToolRun::Done`] with `is_error: true` and a message the model can act on; nothing here
//! panics on any input.
//!
//! [`ToolRegistry`] holds the built-in tools plus the tools a client declared (`client_tools`),
//! answers "does this call need approval?", and renders a tool for loom's `tool_show`
//! ([`spec_yaml`], [`spec_json`]).

mod args;
mod builtin;
mod calculator;
mod fetch;
mod patch;
mod path;
mod registry;
mod time;
mod workspace;
mod yaml;

pub use builtin::{builtin_specs, needs_approval, Builtin};
pub use calculator::{evaluate, MAX_EXPRESSION_LEN, MAX_NESTING};
pub use fetch::{
    check_url, checked_url, fetch_result, fuzz_check_url, redirect_target, FETCH_MAX_BYTES,
    FETCH_TIMEOUT_MS, MAX_REDIRECTS, MAX_URL_LEN,
};
pub use patch::apply_patch;
pub use path::{normalize_path, MAX_PATH_LEN};
pub use registry::{RegistryError, ToolRegistry, MAX_TOOL_NAME_LEN};
pub use time::format_time_offset;
pub use workspace::{MemoryWorkspace, Workspace, MAX_FILE_BYTES, MAX_LS_ENTRIES};
pub use yaml::{spec_json, spec_yaml, to_yaml};

use serde_json::Value;

/// What the host gives the tools: the session's files and the time.
///
/// The worker implements it over the Durable Object (SQLite storage, `Date.now()`, JS `Intl`);
/// tests implement it over a [`MemoryWorkspace`] and a fixed clock.
pub trait ToolHost {
    /// The session's workspace, which `read`, `ls`, `write` and `apply_patch` work on.
    fn workspace(&mut self) -> &mut dyn Workspace;

    /// The current time in milliseconds since the Unix epoch, for `get_time`.
    fn now_ms(&self) -> i64;

    /// `now_ms` as an RFC 3339 timestamp in `timezone` (an IANA name or a UTC offset), for
    /// `get_time`.
    ///
    /// The default knows only UTC and fixed offsets (see [`format_time_offset`]), because a full
    /// time-zone database does not belong in a wasm binary; the worker overrides this with JS
    /// `Intl.DateTimeFormat`, which knows every IANA zone. An unknown zone is an `Err` with a
    /// message for the model, e.g. `unknown timezone: Mars/Olympus`.
    fn format_time(&self, now_ms: i64, timezone: &str) -> Result<String, String> {
        format_time_offset(now_ms, timezone)
    }

    /// `url` as the host's own URL parser serializes it, for a `web_fetch` URL with non-ASCII
    /// characters: their IDNA mapping (`ｌｏｃａｌｈｏｓｔ` → `localhost`, `bücher.example` →
    /// `xn--bcher-kva.example`) is then the runtime's, done before [`check_url`] judges the
    /// host. `None` (the default, or a URL the parser rejects) leaves the URL to the check as
    /// is, which refuses hosts its own build cannot map.
    fn parse_url(&self, _url: &str) -> Option<String> {
        None
    }
}

/// The outcome of [`run_builtin`]: either the tool's result, or a request the host must perform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolRun {
    /// The tool finished; `result` is the text the model sees.
    Done {
        /// The text for the model: the output, or on error a message saying what went wrong.
        result: String,
        /// Whether the call failed; providers mark the tool result as an error for the model.
        is_error: bool,
    },
    /// `web_fetch`: the host must GET `url` (already checked by [`check_url`]) and pass the
    /// answer to [`fetch_result`].
    Fetch {
        /// The URL to fetch: the one the model gave, as [`checked_url`] serialized it after
        /// judging it (fetching anything else would fetch something unchecked).
        url: String,
        /// The most body bytes the model will see; the host should read at most one more, so
        /// [`fetch_result`] can tell a truncated body from one that fits exactly.
        max_bytes: usize,
        /// How long the host should wait for the whole answer before giving up.
        timeout_ms: u64,
    },
}

impl ToolRun {
    /// Not an error: `result` is what the model reads as the tool's answer.
    pub fn ok(result: impl Into<String>) -> Self {
        ToolRun::Done {
            result: result.into(),
            is_error: false,
        }
    }

    /// A failed call with a message for the model.
    pub fn error(message: impl Into<String>) -> Self {
        ToolRun::Done {
            result: message.into(),
            is_error: true,
        }
    }
}

/// Runs the built-in tool `name` with the model's `arguments` (a JSON object; `null` counts as
/// `{}`).
///
/// Never panics: an unknown tool, a missing or mistyped argument and every tool failure come
/// back as [`ToolRun::Done`] with `is_error: true`. Approval is not checked here — the engine
/// asks before it emits the call (see [`needs_approval`]).
pub fn run_builtin(name: &str, arguments: &Value, host: &mut dyn ToolHost) -> ToolRun {
    let Some(tool) = Builtin::from_name(name) else {
        return ToolRun::error(format!("unknown tool: {name}"));
    };
    let args = match args::Args::new(arguments) {
        Ok(args) => args,
        Err(message) => return ToolRun::error(message),
    };
    let outcome = match tool {
        Builtin::GetTime => time::run(&args, host),
        Builtin::Calculator => args.str("expression").and_then(evaluate),
        Builtin::WebFetch => {
            let url = args.str("url").map(|url| match url.is_ascii() {
                true => url.to_string(),
                false => host.parse_url(url).unwrap_or_else(|| url.to_string()),
            });
            return match url.and_then(|url| checked_url(&url)) {
                Ok(url) => ToolRun::Fetch {
                    url,
                    max_bytes: FETCH_MAX_BYTES,
                    timeout_ms: FETCH_TIMEOUT_MS,
                },
                Err(message) => ToolRun::error(message),
            };
        }
        Builtin::Read => workspace::read(&args, host.workspace()),
        Builtin::Ls => workspace::ls(&args, host.workspace()),
        Builtin::Write => workspace::write(&args, host.workspace()),
        Builtin::ApplyPatch => args
            .str("patch")
            .and_then(|patch| apply_patch(patch, host.workspace())),
    };
    match outcome {
        Ok(result) => ToolRun::ok(result),
        Err(message) => ToolRun::error(message),
    }
}
