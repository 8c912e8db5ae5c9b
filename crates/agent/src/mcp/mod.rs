//! A sans-IO client for remote MCP servers (the Model Context Protocol, Streamable HTTP).
//!
//! One [`Operation`] is one logical thing the host wants from one server — every tool it offers
//! ([`Operation::list_tools`]) or one tool call ([`Operation::call_tool`]) — with every HTTP
//! exchange that takes: era detection, the 2025 handshake, pages, a re-initialization when the
//! server forgot the session, answers to the server's pings. The host sends what
//! [`Operation::poll`] asks for and feeds each response back (`on_head`, `on_body` in any
//! split, `on_end`, or `on_failed`), until `poll` gives [`Action::Done`]; then it persists
//! [`Operation::state`] for the next operation on that server.
//!
//! ```text
//! let mut op = Operation::call_tool(&server, state, Limits::default(), &tool, call_id, args);
//! loop {
//!     match op.poll() {
//!         Some(Action::Send(request)) => /* send it; feed on_head / on_body / on_end / on_failed */,
//!         Some(Action::Progress { .. }) => /* a tool_output event */,
//!         Some(Action::Done(outcome)) => break outcome,
//!         None => /* wait for the next piece of a response */,
//!     }
//! }
//! save(op.state());
//! // Giving up instead (the host's timeout): `if let Some(r) = op.cancel(why) { send(r) }`.
//! ```
//!
//! Both eras of the specification are spoken, because a client that speaks one fails against a
//! server that speaks only the other:
//!
//! - the current revision ([`MODERN_VERSION`], 2026-07-28): no session, every request carries
//!   its protocol version, client info and capabilities in `params._meta`, mirrored into the
//!   `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` headers;
//! - the 2025 revisions ([`LEGACY_VERSIONS`]): an `initialize` handshake, then
//!   `notifications/initialized`, a session in `Mcp-Session-Id` and the negotiated version in
//!   `MCP-Protocol-Version`.
//!
//! A server whose era is not known yet is probed with `server/discover`, the one request a
//! current-revision server must answer and a 2025 server cannot (a tool call as the probe
//! could run on a sessionless 2025 server and be mistaken for a current answer). One of the
//! current revision's own errors (`-32020`…`-32022`) proves the current era; anything else
//! falls back to `initialize` — but a refused credential (401, 403) or a cut connection is
//! reported as it is, since no other era would fix it. The [`ServerState`] remembers the
//! answer, so the probe costs one round trip per server, ever — until a remembered assumption
//! fails, which probes once more.
//!
//! Recoveries the spec asks for are taken once each and never for a call that may have run: a
//! forgotten 2025 session (404, or the 400 some servers send) is initialized again and the
//! request repeated; a current-era `HeaderMismatch` lists the tools again and calls with the
//! tool's new `x-mcp-header` parameters. A stream that breaks during `tools/call` is reported.
//!
//! Nothing here does I/O or reads a clock: the host owns the sockets and the timeout (it calls
//! [`Operation::on_failed`] when its timer fires). Tests replay recorded exchanges.

pub mod auth;
mod error;
mod exchange;
mod fuzz;
mod names;
mod operation;
mod request;
mod tool;

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde::{Deserialize, Serialize};

pub use auth::fuzz_mcp_auth;
pub use error::McpError;
pub use fuzz::fuzz_mcp_response;
pub use names::{model_tool_names, MAX_MODEL_TOOL_NAME};
pub use operation::Operation;
pub use tool::{Catalog, RejectedTool, Tool, ToolAnnotations, ToolResult};

/// The current revision of the specification, the one tried first.
pub const MODERN_VERSION: &str = "2026-07-28";

/// The session-based revisions spoken after a fallback, newest first: the first is offered in
/// `initialize`, and a server may answer with any of them.
pub const LEGACY_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// One configured MCP server, as the host resolved it (secrets already substituted into the
/// header values).
///
/// Its [`Debug`] output prints header names only: values are credentials.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The operator's name for the server; the prefix of its tools' model names, and what
    /// errors name.
    pub name: String,
    /// The MCP endpoint (`https://example.com/mcp`).
    pub url: String,
    /// Extra headers sent with every request (`Authorization`). Headers the protocol manages
    /// (`Accept`, `Content-Type`, `Mcp-*`, `MCP-Protocol-Version`) are never taken from here.
    pub headers: Vec<(String, String)>,
}

impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("ServerConfig")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("headers", &names)
            .finish()
    }
}

/// Which era of the specification a server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Era {
    /// The current, stateless revision ([`MODERN_VERSION`]).
    Modern,
    /// A session-based 2025 revision ([`LEGACY_VERSIONS`]).
    Legacy,
}

impl Era {
    /// `modern` or `legacy`, as `/status` shows it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Modern => "modern",
            Self::Legacy => "legacy",
        }
    }
}

/// What the client remembers about one server between operations: its era, the version in
/// use, and (2025 era) the session. Serializable so the host persists it (a Durable Object
/// that wakes from hibernation neither probes nor re-initializes).
///
/// The default knows nothing: the next operation probes. The session id is a bearer of the
/// session, so [`Debug`] does not print it; [`ServerState::era`] and
/// [`ServerState::protocol_version`] are what a status page may show.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerState {
    /// `None` until a probe or a handshake told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) era: Option<Era>,
    /// The version sent in `MCP-Protocol-Version` (negotiated, in the 2025 era).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) protocol_version: Option<String>,
    /// The 2025 era's `Mcp-Session-Id`, when the server assigned one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) session_id: Option<String>,
    /// The 2025 era handshake completed (`initialize` answered, `initialized` accepted), so a
    /// sessionless 2025 server is not re-initialized for every operation.
    #[serde(default, skip_serializing_if = "core::ops::Not::not")]
    pub(crate) initialized: bool,
}

impl ServerState {
    /// The server's era, once known.
    #[must_use]
    pub fn era(&self) -> Option<Era> {
        self.era
    }

    /// The protocol version in use with the server, once known.
    #[must_use]
    pub fn protocol_version(&self) -> Option<&str> {
        self.protocol_version.as_deref()
    }

    /// Whether the client holds a 2025-era session with the server.
    #[must_use]
    pub fn has_session(&self) -> bool {
        self.session_id.is_some()
    }
}

impl fmt::Debug for ServerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerState")
            .field("era", &self.era)
            .field("protocol_version", &self.protocol_version)
            .field("session", &self.session_id.as_ref().map(|_| "***"))
            .field("initialized", &self.initialized)
            .finish()
    }
}

/// Caps that keep a broken or hostile server from making the host loop or run out of memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `tools/list` pages read at most; the catalog is then marked truncated.
    pub max_pages: u32,
    /// Tools kept at most; the rest are dropped and the catalog marked truncated.
    pub max_tools: usize,
    /// Bytes of one response body read at most (a JSON body, or the whole SSE stream); past
    /// it the operation fails with [`McpError::TooLarge`].
    pub max_response_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_pages: 20,
            max_tools: 500,
            max_response_bytes: 8 * 1024 * 1024,
        }
    }
}

/// An HTTP request for the host to send (always `POST` to the server's URL today).
///
/// Its [`Debug`] output masks every header value but the protocol's own: the server's
/// configured headers are credentials.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// Names this request in the `on_*` calls; unique within the operation.
    pub id: u64,
    /// The HTTP method.
    pub method: &'static str,
    /// The server's MCP endpoint.
    pub url: String,
    /// Header names and values, the configured ones included.
    pub headers: Vec<(String, String)>,
    /// The JSON-RPC message, serialized.
    pub body: Option<String>,
    /// `false` for a message the operation does not wait on (an answer to the server's
    /// `ping`): send it concurrently with the stream still being read, since the server may
    /// hold that stream until it hears back. Its `on_*` calls are accepted and change nothing.
    pub wants_response: bool,
}

impl HttpRequest {
    /// The value of the first header with this name, ignoring case.
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(n, v)| {
                let shown =
                    request::is_protocol_header(n) && !n.eq_ignore_ascii_case("mcp-session-id");
                (n.as_str(), if shown { v.as_str() } else { "***" })
            })
            .collect();
        f.debug_struct("HttpRequest")
            .field("id", &self.id)
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &headers)
            .field("body", &self.body)
            .field("wants_response", &self.wants_response)
            .finish()
    }
}

/// What an [`Operation`] asks of the host next.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Send this request and feed its response back.
    Send(HttpRequest),
    /// The server reported progress on the tool call (`notifications/progress`); the host
    /// shows it (a `tool_output` event) and waits on.
    Progress {
        /// How far along, in the server's units; grows with every notification.
        progress: f64,
        /// The total, when the server knows it.
        total: Option<f64>,
        /// The server's words for the step.
        message: Option<String>,
    },
    /// The operation is over; nothing more comes from `poll`. Requests still in flight (a
    /// stream the server did not close) may be dropped.
    Done(Result<Outcome, McpError>),
}

/// What a successful operation produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Every tool the server offers (within the [`Limits`]).
    Tools(Catalog),
    /// The tool call's result, for the model.
    Called(ToolResult),
}
