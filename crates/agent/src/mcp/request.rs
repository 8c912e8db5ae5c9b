//! The requests each era sends: the JSON-RPC message, and the HTTP headers that carry the era's
//! metadata (the current revision mirrors body fields into headers; 2025 carries the session).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use super::tool::HeaderParam;
use super::{Era, HttpRequest, ServerConfig, ServerState};

/// How weft introduces itself (`clientInfo`).
const CLIENT_NAME: &str = "weft";

/// Headers this module writes; the configured ones never override them.
pub(crate) fn is_protocol_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "accept" | "content-type" | "mcp-protocol-version" | "mcp-session-id" | "last-event-id"
    ) || lower.starts_with("mcp-")
}

/// One JSON-RPC message the client sends.
#[derive(Debug, Clone)]
pub(crate) enum Message<'a> {
    /// A request the client waits on.
    Request {
        id: &'a Value,
        method: &'a str,
        params: Map<String, Value>,
    },
    /// A notification (`notifications/initialized`).
    Notification { method: &'a str },
    /// The answer to the server's `ping`.
    Pong { id: &'a Value },
    /// The refusal of a server request this client does not serve.
    Refusal { id: &'a Value, method: &'a str },
    /// The 2025 era's cancellation of a request the client gave up on.
    Cancelled { id: &'a Value, reason: &'a str },
}

/// The HTTP request for one message in the server's era.
///
/// `header_params` are the called tool's `x-mcp-header` parameters, mirrored into
/// `Mcp-Param-*` in the current era.
pub(crate) fn http_request(
    id: u64,
    server: &ServerConfig,
    state: &ServerState,
    era: Era,
    message: &Message<'_>,
    header_params: &[HeaderParam],
) -> HttpRequest {
    let mut headers: Vec<(String, String)> = server
        .headers
        .iter()
        .filter(|(name, _)| !is_protocol_header(name))
        .cloned()
        .collect();
    headers.push(("Content-Type".into(), "application/json".into()));
    headers.push((
        "Accept".into(),
        "application/json, text/event-stream".into(),
    ));
    let body = match era {
        Era::Modern => modern(message, &mut headers, header_params),
        Era::Legacy => legacy(message, state, &mut headers),
    };
    let wants_response = !matches!(
        message,
        Message::Pong { .. } | Message::Refusal { .. } | Message::Cancelled { .. }
    );
    HttpRequest {
        id,
        method: "POST",
        url: server.url.clone(),
        headers,
        body: Some(body.to_string()),
        wants_response,
    }
}

fn modern(
    message: &Message<'_>,
    headers: &mut Vec<(String, String)>,
    header_params: &[HeaderParam],
) -> Value {
    headers.push(("MCP-Protocol-Version".into(), super::MODERN_VERSION.into()));
    match message {
        Message::Request { id, method, params } => {
            let mut params = params.clone();
            let meta = params
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(meta) = meta {
                meta.insert(
                    "io.modelcontextprotocol/protocolVersion".into(),
                    super::MODERN_VERSION.into(),
                );
                meta.insert("io.modelcontextprotocol/clientInfo".into(), client_info());
                meta.insert(
                    "io.modelcontextprotocol/clientCapabilities".into(),
                    json!({}),
                );
            }
            headers.push(("Mcp-Method".into(), (*method).into()));
            // The spec requires `Mcp-Name` on exactly these three methods.
            let name = match *method {
                "tools/call" | "prompts/get" => params.get("name"),
                "resources/read" => params.get("uri"),
                _ => None,
            };
            if let Some(Value::String(name)) = name {
                headers.push(("Mcp-Name".into(), header_value(name)));
            }
            if *method == "tools/call" {
                let arguments = params.get("arguments");
                for param in header_params {
                    if let Some(value) = arguments.and_then(|a| param.value_in(a)) {
                        headers.push((format!("Mcp-Param-{}", param.header), value));
                    }
                }
            }
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        }
        // The current revision defines no client notification or response over HTTP; the
        // operation never builds these in that era, but they stay well-formed if it did.
        other => plain(other),
    }
}

fn legacy(
    message: &Message<'_>,
    state: &ServerState,
    headers: &mut Vec<(String, String)>,
) -> Value {
    let initializing = matches!(
        message,
        Message::Request {
            method: "initialize",
            ..
        }
    );
    if !initializing {
        if let Some(version) = &state.protocol_version {
            headers.push(("MCP-Protocol-Version".into(), version.clone()));
        }
        if let Some(session) = &state.session_id {
            headers.push(("Mcp-Session-Id".into(), session.clone()));
        }
    }
    plain(message)
}

/// The message as the 2025 revisions write it (no `_meta` of the current revision).
fn plain(message: &Message<'_>) -> Value {
    match message {
        Message::Request { id, method, params } => {
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        }
        Message::Notification { method } => json!({"jsonrpc": "2.0", "method": method}),
        Message::Pong { id } => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
        Message::Cancelled { id, reason } => json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": reason},
        }),
        Message::Refusal { id, method } => json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {
                "code": -32601,
                "message": format!("weft does not serve `{method}` (it declared no such capability)"),
            },
        }),
    }
}

/// The `params` of `initialize`: the newest 2025 revision, no capabilities (weft serves no
/// sampling, elicitation or roots), and who we are.
pub(crate) fn initialize_params() -> Map<String, Value> {
    let mut params = Map::new();
    params.insert("protocolVersion".into(), super::LEGACY_VERSIONS[0].into());
    params.insert("capabilities".into(), json!({}));
    params.insert("clientInfo".into(), client_info());
    params
}

fn client_info() -> Value {
    json!({"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")})
}

/// A value as an `Mcp-Name` / `Mcp-Param-*` header: as it is when it is plain visible ASCII
/// with no surrounding whitespace, else the spec's `=?base64?…?=` form (which a plain value
/// that merely looks like that form also takes, so it cannot be misread).
pub(crate) fn header_value(value: &str) -> String {
    let plain = value
        .bytes()
        .all(|b| b == b' ' || b == b'\t' || (0x21..=0x7e).contains(&b));
    let padded = value.starts_with([' ', '\t']) || value.ends_with([' ', '\t']);
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    if plain && !padded && !sentinel {
        value.into()
    } else {
        format!("=?base64?{}?=", base64(value.as_bytes()))
    }
}

/// Standard base64 with padding (RFC 4648 §4).
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                let index = usize::try_from((n >> shift) & 63).unwrap_or(0);
                out.push(char::from(ALPHABET[index]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_follow_the_spec_examples() {
        assert_eq!(header_value("us-west1"), "us-west1");
        assert_eq!(
            header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(header_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn base64_pads_every_length() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foob"), "Zm9vYg==");
    }
}
