//! Why an MCP operation failed, in words an operator (and a model asking for a tool) can act on.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::LEGACY_VERSIONS;
use super::MODERN_VERSION;

/// An MCP operation that did not produce its outcome.
///
/// A tool that ran and failed is not one of these: it is a [`ToolResult`](super::ToolResult)
/// with `is_error`, which the model sees like any tool output.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpError {
    /// The request got no response at all (connection refused, DNS, the host's timeout before
    /// the answer began). For a tool call the server may or may not have received it, so it is
    /// not retried.
    Unreachable {
        /// The server's configured name.
        server: String,
        /// What the host said went wrong.
        reason: String,
    },
    /// The server answered with an HTTP status the protocol gives no other meaning to.
    Http {
        /// The server's configured name.
        server: String,
        /// The status.
        status: u16,
        /// The server's own message (a JSON-RPC error's, or the start of the body).
        message: String,
    },
    /// The server answered 401: it wants a token it was not given, or refused the one it got.
    /// The host authorizes (see [`auth`](super::auth)) from the challenge, and tries again.
    Unauthorized {
        /// The server's configured name.
        server: String,
        /// The response's `WWW-Authenticate`, when it had one.
        challenge: Option<String>,
        /// The server's own message.
        message: String,
    },
    /// The server answered the request with a JSON-RPC error (an unknown tool, invalid
    /// arguments, a method it does not offer).
    Rpc {
        /// The server's configured name.
        server: String,
        /// The JSON-RPC method that failed.
        method: String,
        /// The JSON-RPC error code.
        code: i64,
        /// The server's message.
        message: String,
    },
    /// The server speaks no protocol version this client does.
    UnsupportedVersion {
        /// The server's configured name.
        server: String,
        /// The versions the server offered.
        offered: Vec<String>,
    },
    /// The response began and then broke off (connection cut, the host's timeout, the stream
    /// ended) before the answer came. A tool call is not retried: it may have run.
    Interrupted {
        /// The server's configured name.
        server: String,
        /// The JSON-RPC method whose answer never came.
        method: String,
        /// What the host said, or that the stream ended.
        reason: String,
    },
    /// The server forgot the session again right after a fresh `initialize`.
    SessionLost {
        /// The server's configured name.
        server: String,
    },
    /// The server answered with something that is not what the protocol says it sends.
    Malformed {
        /// The server's configured name.
        server: String,
        /// What was wrong.
        detail: String,
    },
    /// A response body grew past [`Limits::max_response_bytes`](super::Limits).
    TooLarge {
        /// The server's configured name.
        server: String,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The server asked for input weft does not give (sampling, elicitation, roots): the
    /// current revision's `input_required` result.
    InputRequired {
        /// The server's configured name.
        server: String,
    },
}

impl McpError {
    /// The configured name of the server that failed.
    #[must_use]
    pub fn server(&self) -> &str {
        match self {
            Self::Unreachable { server, .. }
            | Self::Http { server, .. }
            | Self::Unauthorized { server, .. }
            | Self::Rpc { server, .. }
            | Self::UnsupportedVersion { server, .. }
            | Self::Interrupted { server, .. }
            | Self::SessionLost { server }
            | Self::Malformed { server, .. }
            | Self::TooLarge { server, .. }
            | Self::InputRequired { server } => server,
        }
    }
}

impl fmt::Display for McpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unreachable { server, reason } => write!(
                f,
                "MCP server `{server}` could not be reached ({reason}); check its URL and that \
                 it is up."
            ),
            Self::Http {
                server,
                status,
                message,
            } => {
                write!(f, "MCP server `{server}` answered HTTP {status}")?;
                if !message.is_empty() {
                    write!(f, ": {message}")?;
                }
                let hint = match status {
                    403 => " Check the headers configured for it (its token).",
                    404 | 405 => " Check its URL: it should be the server's MCP endpoint.",
                    408 | 429 | 500..=599 => " This may be temporary.",
                    _ => "",
                };
                write!(f, ".{hint}")
            }
            Self::Unauthorized {
                server, message, ..
            } => {
                write!(f, "MCP server `{server}` needs authorization (HTTP 401")?;
                if !message.is_empty() {
                    write!(f, ": {message}")?;
                }
                f.write_str("). Check the headers configured for it (its token), or authorize it.")
            }
            Self::Rpc {
                server,
                method,
                code,
                message,
            } => write!(
                f,
                "MCP server `{server}` refused `{method}` (error {code}): {message}"
            ),
            Self::UnsupportedVersion { server, offered } => write!(
                f,
                "MCP server `{server}` speaks protocol versions {offered:?}; weft speaks {} and \
                 {}.",
                MODERN_VERSION,
                LEGACY_VERSIONS.join(", ")
            ),
            Self::Interrupted {
                server,
                method,
                reason,
            } => {
                write!(
                    f,
                    "The answer of MCP server `{server}` to `{method}` broke off ({reason})"
                )?;
                if method == "tools/call" {
                    f.write_str("; the tool may or may not have run, so it was not called again.")
                } else {
                    f.write_str(".")
                }
            }
            Self::SessionLost { server } => write!(
                f,
                "MCP server `{server}` rejected its session right after a new `initialize`; it \
                 may be restarting, or a proxy in front of it drops the Mcp-Session-Id header."
            ),
            Self::Malformed { server, detail } => write!(
                f,
                "MCP server `{server}` sent an answer that is not valid MCP ({detail}); check \
                 that its URL is an MCP endpoint."
            ),
            Self::TooLarge { server, limit } => write!(
                f,
                "The answer of MCP server `{server}` is larger than {limit} bytes and was not \
                 read to the end."
            ),
            Self::InputRequired { server } => write!(
                f,
                "MCP server `{server}` asked for input weft does not provide (sampling, \
                 elicitation or roots)."
            ),
        }
    }
}

impl core::error::Error for McpError {}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn every_error_names_the_server_and_what_to_do() {
        let server = String::from("linear");
        let cases = [
            (
                McpError::Unauthorized {
                    server: server.clone(),
                    challenge: None,
                    message: "invalid_token".into(),
                },
                "authorize",
            ),
            (
                McpError::Http {
                    server: server.clone(),
                    status: 404,
                    message: String::new(),
                },
                "MCP endpoint",
            ),
            (
                McpError::Interrupted {
                    server: server.clone(),
                    method: "tools/call".into(),
                    reason: "timed out".into(),
                },
                "may or may not have run",
            ),
            (
                McpError::UnsupportedVersion {
                    server: server.clone(),
                    offered: alloc::vec!["2024-11-05".into()],
                },
                "2025-11-25",
            ),
            (
                McpError::SessionLost {
                    server: server.clone(),
                },
                "Mcp-Session-Id",
            ),
            (
                McpError::TooLarge {
                    server: server.clone(),
                    limit: 10,
                },
                "10 bytes",
            ),
            (
                McpError::InputRequired {
                    server: server.clone(),
                },
                "elicitation",
            ),
        ];
        for (error, hint) in cases {
            let text = error.to_string();
            assert!(text.contains("`linear`"), "{text}");
            assert!(text.contains(hint), "{text}");
            assert_eq!(error.server(), "linear");
        }
    }
}
