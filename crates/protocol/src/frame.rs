//! Turning raw WebSocket frames into JSON objects, within limits.
//!
//! Both text and binary frames carry UTF-8 JSON (loom §2); binary ones are validated here so a
//! bad byte is a typed error, not a panic or a lossy replacement. Nesting depth is bounded at 128
//! levels (serde_json's limit), which also bounds the recursion of dropping the tree.

use alloc::string::ToString;

use crate::json::{self, Json, Object};
use crate::Error;

/// Bounds on what a peer may send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted frame, in bytes. Default 1 MiB.
    pub max_frame_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_frame_bytes: 1024 * 1024,
        }
    }
}

/// Parses one frame (text, or binary holding UTF-8) into its JSON object, borrowing its
/// strings from the frame.
pub fn parse_object(frame: &[u8], limits: Limits) -> Result<Object<'_>, Error> {
    if frame.len() > limits.max_frame_bytes {
        return Err(Error::TooLarge {
            len: frame.len(),
            max: limits.max_frame_bytes,
        });
    }
    let text = core::str::from_utf8(frame).map_err(|e| Error::InvalidUtf8 {
        valid_up_to: e.valid_up_to(),
    })?;
    let value = json::parse(text).map_err(|e| Error::InvalidJson {
        message: e.to_string(),
    })?;
    match value {
        Json::Object(map) => Ok(map),
        other => Err(Error::NotAnObject {
            found: other.type_name(),
        }),
    }
}
