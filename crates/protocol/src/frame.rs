//! Turning raw WebSocket frames into JSON objects, within limits.
//!
//! Both text and binary frames carry UTF-8 JSON (loom §2); binary ones are validated here so a
//! bad byte is a typed error, not a panic or a lossy replacement. Nesting depth is bounded at 128
//! levels (serde_json's limit), which also bounds the recursion of dropping the tree.

use alloc::string::{String, ToString};

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

/// The `id` of a request that did not decode, so the error refusing it names the request it
/// answers (a client matches replies by it). Every dialect's requests that expect an answer
/// carry their id as a top-level string `id`; a frame that is not a JSON object, or has no such
/// `id`, has nothing to name.
pub fn request_id(frame: &[u8], limits: Limits) -> Option<String> {
    // A frame that does not parse is refused for that, by the caller; it names no request.
    let Ok(obj) = parse_object(frame, limits) else {
        return None;
    };
    match obj.get("id") {
        Some(Json::String(id)) if !id.is_empty() => Some(id.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_request_is_named_by_its_id() {
        let limits = Limits::default();
        let id = |frame: &str| request_id(frame.as_bytes(), limits);
        assert_eq!(
            id(r#"{"type":"user_messages","id":"u3","thread_id":""}"#).as_deref(),
            Some("u3")
        );
        assert_eq!(id(r#"{"type":"user_messages","id":7}"#), None);
        assert_eq!(id(r#"{"type":"ping","id":""}"#), None);
        assert_eq!(id("not json"), None);
        assert_eq!(id("[1]"), None);
    }
}
