//! The operator's MCP servers as tools: their configuration (`config.rs`), what a session keeps
//! of each and the tools that follow from it (`catalog.rs`), and the HTTP shell that carries
//! the agent crate's sans-IO MCP client over `fetch` (`transport.rs`). The session's object
//! uses them in session/mcp.rs; `/status` probes the servers with them ([`probe`]).

pub mod catalog;
pub mod config;
pub mod oauth;
pub mod transport;

use crate::settings::var;
use futures_util::future::join_all;
use serde_json::{json, Value};
use weft_agent::mcp::{Limits, Operation, Outcome, ServerState};
use worker::Env;

pub use config::{McpSettings, ServerSettings};

/// How long `/status` and a discovery wait for one server's tools.
pub const DISCOVERY_TIMEOUT_MS: u64 = 10_000;

impl McpSettings {
    /// The settings from the Worker's environment; `${secret:NAME}` is read the same way.
    pub fn from_env(env: &Env) -> McpSettings {
        let texts = config::Texts {
            servers: var(env, "MCP_SERVERS"),
            call_timeout_ms: var(env, "MCP_CALL_TIMEOUT_MS"),
            result_max_bytes: var(env, "MCP_RESULT_MAX_BYTES"),
            client_servers: var(env, "MCP_CLIENT_SERVERS"),
            oauth_redirect: var(env, "MCP_OAUTH_REDIRECT_URL"),
            oauth_shared: var(env, "MCP_OAUTH_SHARED"),
        };
        McpSettings::read(texts, |name| var(env, name))
    }
}

impl ServerSettings {
    /// The server as the MCP client codec takes it.
    pub fn codec(&self) -> weft_agent::mcp::ServerConfig {
        weft_agent::mcp::ServerConfig {
            name: self.name.clone(),
            url: self.url.clone(),
            headers: self.headers.clone(),
        }
    }
}

/// The limits of one operation: a response body read at most `max_bytes`.
pub fn limits(max_bytes: usize) -> Limits {
    Limits {
        max_response_bytes: max_bytes,
        ..Limits::default()
    }
}

/// What a discovery found: the catalog or why not, the state to keep, and — when the server
/// answered 401 — its `WWW-Authenticate` challenge (`Some(None)`: a 401 without one).
pub type Discovery = (
    Result<weft_agent::mcp::Catalog, String>,
    ServerState,
    Option<Option<String>>,
);

/// Asks `server` for its tools from `state`.
pub async fn discover(server: &ServerSettings, state: ServerState, max_bytes: usize) -> Discovery {
    let mut op = Operation::list_tools(&server.codec(), state, limits(max_bytes));
    let result = transport::drive(&mut op, DISCOVERY_TIMEOUT_MS, |_| {}).await;
    let state = op.state().clone();
    let unauthorized = op.unauthorized().map(|c| c.map(String::from));
    let catalog = match result {
        Ok(Outcome::Tools(catalog)) => Ok(catalog),
        Ok(_) => Err("the MCP server answered the tool list with something else".into()),
        Err(e) => Err(e),
    };
    (catalog, state, unauthorized)
}

/// `/status`'s `mcp`: the configuration's problems and each server as probed now (its era,
/// how many tools it offers, or its error) — never a header value or a URL's path.
pub async fn status(settings: &McpSettings) -> Value {
    let probes = settings.servers.iter().map(|server| async move {
        let (catalog, state, _) =
            discover(server, ServerState::default(), settings.result_max_bytes).await;
        let entry = catalog::Entry {
            fingerprint: server.fingerprint.clone(),
            state,
            error: catalog.as_ref().err().cloned(),
            catalog: catalog.ok(),
            ..catalog::Entry::default()
        };
        catalog::status_line(server, Some(&entry))
    });
    let mut servers = join_all(probes).await;
    servers.extend(
        settings
            .refused
            .iter()
            .map(|(name, why)| json!({ "name": name, "error": why })),
    );
    json!({
        "problem": settings.problem,
        "client_problem": settings.client_problem,
        "servers": servers,
        "call_timeout_ms": settings.call_timeout_ms,
    })
}
