//! The one error type of the crate boundary.
//!
//! Every way a frame can be wrong has its own variant, and every message says what to change:
//! which frame kind, which field, what was expected. Nothing here panics; the decoders return
//! these instead.

use alloc::string::String;
use core::fmt;

use crate::dialect::Dialect;
use crate::text::{concat, uint};

/// Why a frame could not be decoded or a command could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The frame is larger than [`Limits::max_frame_bytes`](crate::Limits).
    TooLarge {
        /// Size of the frame in bytes.
        len: usize,
        /// The configured cap.
        max: usize,
    },
    /// A binary frame is not UTF-8.
    InvalidUtf8 {
        /// Bytes before the first invalid sequence.
        valid_up_to: usize,
    },
    /// The frame is not JSON, or nests deeper than the parser allows (128 levels).
    InvalidJson {
        /// The parser's own message, with line and column.
        message: String,
    },
    /// The frame is JSON but not an object.
    NotAnObject {
        /// The JSON type found instead (`array`, `string`, …).
        found: &'static str,
    },
    /// The frame has no string `type` field where the dialect requires one.
    MissingType,
    /// A request type the endpoint does not serve.
    UnknownType {
        /// The dialect whose endpoint received it.
        dialect: Dialect,
        /// The `type` value received.
        kind: String,
    },
    /// A known frame type whose body is malformed.
    Field {
        /// The frame or event type (`run`, `tool_call`, …).
        kind: String,
        /// The path of the offending field (`message`, `tools[2].name`, …).
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A well-formed frame whose content is rejected (empty message, over-long id, …).
    Invalid {
        kind: String,
        /// Why it is rejected.
        reason: String,
    },
    /// A state patch (JSON Patch, RFC 6902: AG-UI's `STATE_DELTA`) that does not apply to the
    /// run's state; the state is left as it was.
    Patch {
        /// The failing operation's index in the patch (none: the patch is not a list).
        op: Option<usize>,
        /// Why it does not apply.
        reason: String,
    },
    /// A command the dialect has no way to express.
    Unsupported {
        /// The dialect asked to carry it.
        dialect: Dialect,
        /// What was asked for.
        what: &'static str,
    },
}

impl Error {
    /// A short machine-readable code, stable across releases, for error frames and JS `Error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::TooLarge { .. } => "frame_too_large",
            Error::InvalidUtf8 { .. } => "invalid_utf8",
            Error::InvalidJson { .. } => "invalid_json",
            Error::NotAnObject { .. } => "not_an_object",
            Error::MissingType => "missing_type",
            Error::UnknownType { .. } => "unknown_type",
            Error::Field { .. } => "invalid_field",
            Error::Invalid { .. } => "invalid_request",
            Error::Patch { .. } => "invalid_patch",
            Error::Unsupported { .. } => "unsupported",
        }
    }

    pub(crate) fn field(kind: &str, field: &str, problem: impl Into<String>) -> Self {
        Error::Field {
            kind: kind.into(),
            field: field.into(),
            problem: problem.into(),
        }
    }

    pub(crate) fn invalid(kind: &str, reason: impl Into<String>) -> Self {
        Error::Invalid {
            kind: kind.into(),
            reason: reason.into(),
        }
    }
}

impl Error {
    /// What went wrong, in words (the `Display` text).
    pub fn message(&self) -> String {
        match self {
            Error::TooLarge { len, max } => concat(&[
                "frame of ",
                &uint(*len as u64),
                " bytes exceeds the limit of ",
                &uint(*max as u64),
                " bytes",
            ]),
            Error::InvalidUtf8 { valid_up_to } => concat(&[
                "binary frame is not valid UTF-8 (first bad byte at offset ",
                &uint(*valid_up_to as u64),
                ")",
            ]),
            Error::InvalidJson { message } => concat(&["frame is not valid JSON: ", message]),
            Error::NotAnObject { found } => concat(&["frame must be a JSON object, found ", found]),
            Error::MissingType => String::from("frame has no string field `type`"),
            Error::UnknownType { dialect, kind } => concat(&[
                "unknown message type `",
                kind,
                "` for the ",
                dialect.as_str(),
                " endpoint",
            ]),
            Error::Field {
                kind,
                field,
                problem,
            } => concat(&["malformed `", kind, "`: field `", field, "` ", problem]),
            Error::Invalid { kind, reason } => concat(&["invalid `", kind, "`: ", reason]),
            Error::Patch {
                op: Some(i),
                reason,
            } => concat(&[
                "state patch operation ",
                &uint(*i as u64),
                " does not apply (",
                reason,
                "); the state is unchanged",
            ]),
            Error::Patch { op: None, reason } => concat(&[
                "state patch does not apply (",
                reason,
                "); the state is unchanged",
            ]),
            Error::Unsupported { dialect, what } => {
                concat(&["the ", dialect.as_str(), " dialect cannot carry ", what])
            }
        }
    }
}

/// The [`Error::message`] text.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}
