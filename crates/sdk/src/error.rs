//! The SDK's one error type, and the one place errors become JavaScript values.
//!
//! Every failure the app can see is a JS `Error` named `WeftError` whose `code` is a short
//! stable string, one [`ErrorCode`] — the protocol's own codes (`invalid_json`, `invalid_field`,
//! `unsupported`, …), the SDK's (`invalid_argument`, `connect_failed`, `disconnected`, `closed`,
//! `timeout`, `callback_failed`, `run_failed` and `server_error` when the server gave no code,
//! `busy` for a re-entrant call), or the server's own (`cancelled`, `busy`, `stale`, …) — and
//! whose message says what to change. Nothing else in the crate builds a `js_sys::Error`
//! (STYLE 3), so the shape cannot drift between methods.

use core::fmt;

use tsify::Tsify;
use wasm_bindgen::{JsCast, JsValue};
use weft_protocol::text;
use weft_protocol::{Command, Dialect};

/// The `code` of a `WeftError`: what went wrong, to branch on. A server may send a code of its
/// own that is not listed here; it reaches the app as the server wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Tsify)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// The app passed an option or value the SDK cannot use; the message names it.
    InvalidArgument,
    /// The first connect failed (wrong URL, server down, token refused).
    ConnectFailed,
    /// The socket dropped before the reply came, or the client gave up reconnecting.
    Disconnected,
    /// The client was closed before this finished, or called after `close()`.
    Closed,
    /// No reply within `requestTimeoutMs`.
    Timeout,
    /// One of the app's callbacks threw or rejected.
    CallbackFailed,
    /// The run failed and the server gave no code.
    RunFailed,
    /// A request failed and the server gave no code.
    ServerError,
    /// A re-entrant call, or the server is busy with another run or compaction.
    Busy,
    /// The SDK could not turn a value into JavaScript: a bug to report.
    Internal,
    /// This dialect, or the original server found, does not serve what was asked.
    Unsupported,
    /// A run on an original server was cut by a drop, and nothing can resume it there.
    ResumeUnsupported,
    /// Another client's turn streamed at the same time as this run on an original server
    /// whose turns carry no ids (agentchat): the reply that arrived may be theirs.
    AmbiguousReply,
    /// The run was cancelled.
    Cancelled,
    /// `follow()` named a run the server does not know.
    UnknownRun,
    /// An answer to an approval that was settled meanwhile.
    Stale,
    /// `compact()` with nothing to compact.
    EmptyTranscript,
    /// A frame over the size limit.
    FrameTooLarge,
    /// A binary frame that is not UTF-8.
    InvalidUtf8,
    /// A frame that is not JSON.
    InvalidJson,
    /// A frame that is JSON but not an object.
    NotAnObject,
    /// A frame without its `type`.
    MissingType,
    /// A frame of a type the dialect does not have.
    UnknownType,
    /// A field of a known frame type is missing or malformed.
    InvalidField,
    /// A request that decodes but cannot be carried out as given.
    InvalidRequest,
    /// A code of the server's own not listed above, as it sent it.
    #[serde(skip)]
    Other(String),
}

impl ErrorCode {
    const KNOWN: [ErrorCode; 25] = [
        ErrorCode::InvalidArgument,
        ErrorCode::ConnectFailed,
        ErrorCode::Disconnected,
        ErrorCode::Closed,
        ErrorCode::Timeout,
        ErrorCode::CallbackFailed,
        ErrorCode::RunFailed,
        ErrorCode::ServerError,
        ErrorCode::Busy,
        ErrorCode::Internal,
        ErrorCode::Unsupported,
        ErrorCode::ResumeUnsupported,
        ErrorCode::AmbiguousReply,
        ErrorCode::Cancelled,
        ErrorCode::UnknownRun,
        ErrorCode::Stale,
        ErrorCode::EmptyTranscript,
        ErrorCode::FrameTooLarge,
        ErrorCode::InvalidUtf8,
        ErrorCode::InvalidJson,
        ErrorCode::NotAnObject,
        ErrorCode::MissingType,
        ErrorCode::UnknownType,
        ErrorCode::InvalidField,
        ErrorCode::InvalidRequest,
    ];

    /// A code as the protocol or a server writes it; one not listed stays as it came.
    pub fn parse(code: &str) -> ErrorCode {
        ErrorCode::KNOWN
            .into_iter()
            .find(|c| c.as_str() == code)
            .unwrap_or_else(|| ErrorCode::Other(code.into()))
    }

    /// The code as the app sees it.
    pub fn as_str(&self) -> &str {
        match self {
            ErrorCode::InvalidArgument => "invalid_argument",
            ErrorCode::ConnectFailed => "connect_failed",
            ErrorCode::Disconnected => "disconnected",
            ErrorCode::Closed => "closed",
            ErrorCode::Timeout => "timeout",
            ErrorCode::CallbackFailed => "callback_failed",
            ErrorCode::RunFailed => "run_failed",
            ErrorCode::ServerError => "server_error",
            ErrorCode::Busy => "busy",
            ErrorCode::Internal => "internal",
            ErrorCode::Unsupported => "unsupported",
            ErrorCode::ResumeUnsupported => "resume_unsupported",
            ErrorCode::AmbiguousReply => "ambiguous_reply",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::UnknownRun => "unknown_run",
            ErrorCode::Stale => "stale",
            ErrorCode::EmptyTranscript => "empty_transcript",
            ErrorCode::FrameTooLarge => "frame_too_large",
            ErrorCode::InvalidUtf8 => "invalid_utf8",
            ErrorCode::InvalidJson => "invalid_json",
            ErrorCode::NotAnObject => "not_an_object",
            ErrorCode::MissingType => "missing_type",
            ErrorCode::UnknownType => "unknown_type",
            ErrorCode::InvalidField => "invalid_field",
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::Other(code) => code,
        }
    }
}

impl PartialEq<str> for ErrorCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What went wrong, as the app will see it: a stable `code` to branch on and a message to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: ErrorCode,
    message: String,
}

impl Error {
    /// An error with this code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
        }
    }

    /// The app passed a value the SDK cannot use; `message` names the value and what it takes.
    pub fn argument(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidArgument, message)
    }

    /// The app called a method of a client it has closed.
    pub fn closed(method: &str) -> Self {
        Error::new(
            ErrorCode::Closed,
            text::concat(&[
                method,
                " was called after close(); create a new Client to talk to the server again",
            ]),
        )
    }

    /// The machine-readable code.
    pub fn code(&self) -> &ErrorCode {
        &self.code
    }

    /// The message for a person.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Prefixes the message with where it happened (`"push(): "`), keeping the code.
    pub fn context(mut self, what: &str) -> Self {
        self.message = text::concat(&[what, ": ", &self.message]);
        self
    }

    /// A protocol error met while serving `method`. `Unsupported` is reworded around the
    /// method, because "cannot carry this command" does not tell a web developer what to do.
    pub fn from_protocol(e: &weft_protocol::Error, method: &str) -> Self {
        match e {
            weft_protocol::Error::Unsupported { dialect, what } => Error::new(
                ErrorCode::parse(e.code()),
                text::concat(&[
                    method,
                    " is not available on the ",
                    dialect.as_str(),
                    " dialect: it cannot carry ",
                    what,
                ]),
            ),
            _ => Error::new(
                ErrorCode::parse(e.code()),
                text::concat(&[method, ": ", &e.message()]),
            ),
        }
    }

    /// Adds advice after the message (`"; only the loom dialect serves it"`).
    pub fn hint(mut self, advice: &str) -> Self {
        self.message.push_str(advice);
        self
    }

    /// A method only some dialects serve, called on another: the message names those that
    /// serve `command` ([`Dialect::serves`]).
    pub fn unsupported(method: &str, dialect: Dialect, command: &Command) -> Self {
        let served: Vec<&str> = Dialect::ALL
            .into_iter()
            .filter(|d| d.serves(command))
            .map(Dialect::as_str)
            .collect();
        let served_by = match served.as_slice() {
            [] => String::from("no dialect serves it"),
            [one] => text::concat(&["only the ", one, " dialect serves it"]),
            [first @ .., last] => text::concat(&[
                "only the ",
                &first.join(", "),
                " and ",
                last,
                " dialects serve it",
            ]),
        };
        Error::new(
            ErrorCode::Unsupported,
            text::concat(&[
                method,
                " is not available on the ",
                dialect.as_str(),
                " dialect; ",
                &served_by,
            ]),
        )
    }

    /// An exception thrown (or a rejection raised) by one of the app's callbacks.
    pub fn from_callback(what: &str, thrown: &JsValue) -> Self {
        Error::new(
            ErrorCode::CallbackFailed,
            text::concat(&[what, " threw: ", &describe(thrown)]),
        )
    }

    /// Converts into the JS `Error` the app receives: `name` "WeftError", `message`, `code`.
    pub fn into_js(self) -> JsValue {
        let e = js_sys::Error::new(&self.message);
        e.set_name("WeftError");
        // Setting a property on a fresh Error object cannot fail; if it ever did, the error
        // would still carry its message.
        let _ = js_sys::Reflect::set(&e, &"code".into(), &self.code.as_str().into());
        e.into()
    }
}

impl From<Error> for JsValue {
    fn from(e: Error) -> JsValue {
        e.into_js()
    }
}

impl From<weft_protocol::Error> for Error {
    fn from(e: weft_protocol::Error) -> Self {
        Error::new(ErrorCode::parse(e.code()), e.message())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for Error {}

/// A thrown JS value as text: an `Error`'s message, a string as is, anything else as JSON
/// where it has a JSON form (`42`, `{"code":1}`), else as `String(value)` shows it
/// (`undefined`, `Symbol(x)`).
pub fn describe(thrown: &JsValue) -> String {
    if let Some(e) = thrown.dyn_ref::<js_sys::Error>() {
        return String::from(e.message());
    }
    if let Some(s) = thrown.as_string() {
        return s;
    }
    if let Some(json) = js_sys::JSON::stringify(thrown)
        .ok()
        .and_then(|t| t.as_string())
    {
        return json;
    }
    string_of(thrown).unwrap_or_else(|_| "a value that cannot be shown as text".into())
}

/// Reports an exception thrown by an app callback without interrupting the SDK or the other
/// callbacks: through `reportError` where the platform has it (as the DOM does for event
/// listeners), else `console.error`.
pub fn report(thrown: &JsValue) {
    if report_error(thrown).is_err() {
        console_error(thrown);
    }
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = reportError, catch)]
    fn report_error(e: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(js_namespace = console, js_name = error)]
    fn console_error(e: &JsValue);
    /// `String(value)`: throws only for an object whose `toString` throws.
    #[wasm_bindgen(js_name = String, catch)]
    fn string_of(value: &JsValue) -> Result<String, JsValue>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_read_back_as_written_and_a_servers_own_stays_as_sent() {
        for code in ErrorCode::KNOWN {
            assert_eq!(ErrorCode::parse(code.as_str()), code);
        }
        let own = ErrorCode::parse("model_not_configured");
        assert_eq!(own, ErrorCode::Other("model_not_configured".into()));
        assert_eq!(own.as_str(), "model_not_configured");
        let e = Error::from(weft_protocol::Error::MissingType);
        assert_eq!(*e.code(), ErrorCode::MissingType);
    }
}
