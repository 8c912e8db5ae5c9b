//! The SDK's one error type, and the one place errors become JavaScript values.
//!
//! Every failure the app can see is a JS `Error` named `WeftError` whose `code` is a short
//! stable string — the protocol's own codes (`invalid_json`, `invalid_field`, `unsupported`, …),
//! the SDK's (`invalid_argument`, `connect_failed`, `disconnected`, `closed`, `timeout`,
//! `callback_failed`, `run_failed` and `server_error` when the server gave no code, `busy` for a
//! re-entrant call), or the server's own (`cancelled`, `busy`, `stale`, …) — and whose message
//! says what to change. Nothing else in the crate builds a
//! `js_sys::Error` (STYLE 3), so the shape cannot drift between methods.

use core::fmt;

use wasm_bindgen::{JsCast, JsValue};
use weft_protocol::{Command, Dialect};

/// What went wrong, as the app will see it: a stable `code` to branch on and a message to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: String,
    message: String,
}

impl Error {
    /// An error with this code and message.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Error {
            code: code.into(),
            message: message.into(),
        }
    }

    /// The app passed a value the SDK cannot use; `message` names the value and what it takes.
    pub fn argument(message: impl Into<String>) -> Self {
        Error::new("invalid_argument", message)
    }

    /// The app called a method of a client it has closed.
    pub fn closed(method: &str) -> Self {
        Error::new(
            "closed",
            format!("{method} was called after close(); create a new Client to talk to the server again"),
        )
    }

    /// The machine-readable code.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The message for a person.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Prefixes the message with where it happened (`"push(): "`), keeping the code.
    pub fn context(mut self, what: &str) -> Self {
        self.message = format!("{what}: {}", self.message);
        self
    }

    /// A protocol error met while serving `method`. `Unsupported` is reworded around the
    /// method, because "cannot carry this command" does not tell a web developer what to do.
    pub fn from_protocol(e: &weft_protocol::Error, method: &str) -> Self {
        match e {
            weft_protocol::Error::Unsupported { dialect, what } => Error::new(
                e.code(),
                format!(
                    "{method} is not available on the {dialect} dialect: it cannot carry {what}"
                ),
            ),
            _ => Error::new(e.code(), format!("{method}: {e}")),
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
            [one] => format!("only the {one} dialect serves it"),
            [first @ .., last] => {
                format!("only the {} and {last} dialects serve it", first.join(", "))
            }
        };
        Error::new(
            "unsupported",
            format!("{method} is not available on the {dialect} dialect; {served_by}"),
        )
    }

    /// An exception thrown (or a rejection raised) by one of the app's callbacks.
    pub fn from_callback(what: &str, thrown: &JsValue) -> Self {
        Error::new(
            "callback_failed",
            format!("{what} threw: {}", describe(thrown)),
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
        Error::new(e.code(), e.to_string())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for Error {}

/// A thrown JS value as text: an `Error`'s message, a string as is, anything else as
/// `String(value)` would show it.
pub fn describe(thrown: &JsValue) -> String {
    if let Some(e) = thrown.dyn_ref::<js_sys::Error>() {
        return String::from(e.message());
    }
    if let Some(s) = thrown.as_string() {
        return s;
    }
    format!("{thrown:?}")
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
}
