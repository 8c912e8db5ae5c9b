//! What a session knows of each MCP server between runs — its tools, its era and session, how
//! its last discovery went — and what follows from it: the tools the model is offered, when to
//! ask a server again, and a server's line in a status.
//!
//! Plain data with unit tests; the session stores an [`Entry`] per server (store/mcp.rs) and
//! carries out the discoveries and calls (session/mcp.rs).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use weft_agent::engine::ToolInfo;
use weft_agent::mcp::{model_tool_names, Catalog, ServerState, Tool};
use weft_agent::provider::ToolDef;

use super::config::{McpSettings, ServerSettings};

/// How long a catalog is used before it is asked for again (after a run, never before one),
/// unless the server says otherwise (its `ttlMs`, within [`MIN_TTL_MS`] and [`MAX_TTL_MS`]).
pub const DEFAULT_TTL_MS: i64 = 3_600_000;
/// The shortest time a catalog is kept, whatever the server says (`ttlMs: 0` would otherwise
/// ask after every run).
pub const MIN_TTL_MS: i64 = 60_000;
/// The longest time a catalog is kept, whatever the server says.
pub const MAX_TTL_MS: i64 = 86_400_000;
/// A server whose discovery failed is not asked again before this long has passed, so a
/// server that is down does not hold up every run of the session.
pub const RETRY_AFTER_MS: i64 = 30_000;

/// One server's entry in the session's storage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The configuration it was made for ([`ServerSettings::fingerprint`]): another one starts
    /// afresh.
    pub fingerprint: String,
    /// The client's memory of the server (era, session).
    #[serde(default)]
    pub state: ServerState,
    /// Its tools, once a discovery succeeded (kept when a later one fails).
    #[serde(default)]
    pub catalog: Option<Catalog>,
    /// When `catalog` was fetched (ms).
    #[serde(default)]
    pub fetched_ms: i64,
    /// When a discovery was last tried (ms).
    #[serde(default)]
    pub tried_ms: i64,
    /// Why the last discovery or call failed; `None` once one succeeds.
    #[serde(default)]
    pub error: Option<String>,
}

/// When a server's catalog should be asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Before the run: the session has no tools of it for this configuration (a fresh session,
    /// or a failed discovery whose retry time has come).
    Now,
    /// After the run: the catalog is stale, but the run uses the one it has.
    Later,
    /// Not now.
    No,
}

/// Whether `server`'s catalog should be asked for at `now_ms`, given its stored entry.
pub fn due(server: &ServerSettings, entry: Option<&Entry>, now_ms: i64) -> Due {
    let Some(entry) = entry.filter(|e| e.fingerprint == server.fingerprint) else {
        return Due::Now;
    };
    let retry_due = now_ms - entry.tried_ms >= RETRY_AFTER_MS;
    match &entry.catalog {
        None if retry_due => Due::Now,
        None => Due::No,
        Some(catalog) => {
            let ttl = catalog.ttl_ms.map_or(DEFAULT_TTL_MS, |t| {
                i64::try_from(t)
                    .unwrap_or(MAX_TTL_MS)
                    .clamp(MIN_TTL_MS, MAX_TTL_MS)
            });
            let stale = now_ms - entry.fetched_ms >= ttl;
            let failed_lately = entry.error.is_some() && !retry_due;
            if stale && !failed_lately {
                Due::Later
            } else {
                Due::No
            }
        }
    }
}

/// An MCP tool as the session offers it: the model's name for it and where it goes.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    /// The model's name (`<server>_<tool>`, see [`model_tool_names`]).
    pub model_name: String,
    /// The configured server's name.
    pub server: String,
    /// The tool as the server described it (its own name is what a call sends).
    pub tool: Tool,
    /// Whether a call waits for the user's approval.
    pub needs_approval: bool,
}

impl McpTool {
    /// The tool as the engine sees it: run by the host, not by a client.
    pub fn info(&self) -> ToolInfo {
        let title = self.tool.title.as_deref().filter(|t| !t.is_empty());
        let description = match (title, self.tool.description.is_empty()) {
            (Some(title), true) => title.to_string(),
            _ => self.tool.description.clone(),
        };
        ToolInfo {
            def: ToolDef {
                name: self.model_name.clone(),
                description,
                input_schema: self.tool.input_schema.clone(),
            },
            needs_approval: self.needs_approval,
            client: false,
        }
    }
}

/// Every tool the configured servers offer the model, from their stored entries, in the
/// configured order of servers and each server's order of tools. `reserved` names a tool
/// that is taken (a built-in one): no MCP tool gets its name.
pub fn tools(
    settings: &McpSettings,
    entries: &BTreeMap<String, Entry>,
    reserved: impl Fn(&str) -> bool,
) -> Vec<McpTool> {
    let mut offered: Vec<(&ServerSettings, &Tool)> = Vec::new();
    for server in &settings.servers {
        let Some(entry) = entries
            .get(&server.name)
            .filter(|e| e.fingerprint == server.fingerprint)
        else {
            continue;
        };
        let Some(catalog) = &entry.catalog else {
            continue;
        };
        for tool in &catalog.tools {
            if server.offers(&tool.name) {
                offered.push((server, tool));
            }
        }
    }
    let pairs: Vec<(&str, &str)> = offered
        .iter()
        .map(|(s, t)| (s.name.as_str(), t.name.as_str()))
        .collect();
    let names = model_tool_names(&pairs, reserved);
    offered
        .into_iter()
        .zip(names)
        .map(|((server, tool), model_name)| McpTool {
            model_name,
            server: server.name.clone(),
            needs_approval: server
                .needs_approval(&tool.name, tool.annotations.read_only_hint == Some(true)),
            tool: tool.clone(),
        })
        .collect()
}

/// A server's line in a status: its name and host, era, tools and last error — never a
/// header value or its URL's path (which may hold a key).
pub fn status_line(server: &ServerSettings, entry: Option<&Entry>) -> Value {
    let entry = entry.filter(|e| e.fingerprint == server.fingerprint);
    let state = entry.map(|e| &e.state);
    json!({
        "name": server.name,
        "host": server.host(),
        "era": state.and_then(ServerState::era).map(|e| e.as_str()),
        "protocol_version": state.and_then(ServerState::protocol_version),
        "tools": entry.and_then(|e| e.catalog.as_ref()).map(|c| c.tools.len()),
        "error": entry.and_then(|e| e.error.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings() -> McpSettings {
        let servers = r#"[{"name":"docs","url":"http://127.0.0.1:1/mcp","approval":["delete_page"]},
            {"name":"web","url":"https://mcp.example/k/SECRET","trusted":true,
             "headers":{"Authorization":"Bearer t0ken"},"tools":["fetch","search"]}]"#;
        let texts = crate::mcp::config::Texts {
            servers: Some(servers.into()),
            ..Default::default()
        };
        McpSettings::read(texts, |_| None)
    }

    fn tool(name: &str, read_only: Option<bool>) -> Tool {
        serde_json::from_value(json!({
            "name": name,
            "description": format!("{name} things"),
            "input_schema": {"type": "object"},
            "annotations": {"read_only_hint": read_only},
        }))
        .unwrap()
    }

    fn entry(server: &ServerSettings, tools: Vec<Tool>, at: i64) -> Entry {
        Entry {
            fingerprint: server.fingerprint.clone(),
            catalog: Some(Catalog {
                tools,
                ..Catalog::default()
            }),
            fetched_ms: at,
            tried_ms: at,
            ..Entry::default()
        }
    }

    #[test]
    fn a_fresh_session_discovers_before_the_run_a_stale_catalog_after_it() {
        let s = settings();
        let docs = &s.servers[0];
        assert_eq!(due(docs, None, 0), Due::Now);
        let mut e = entry(docs, vec![], 1_000);
        assert_eq!(due(docs, Some(&e), 2_000), Due::No);
        assert_eq!(due(docs, Some(&e), 1_000 + DEFAULT_TTL_MS), Due::Later);
        e.catalog.as_mut().unwrap().ttl_ms = Some(0);
        assert_eq!(due(docs, Some(&e), 1_000 + MIN_TTL_MS), Due::Later);
        // A stale catalog whose refresh just failed waits for the retry time.
        e.error = Some("down".into());
        e.tried_ms = 1_000 + MIN_TTL_MS;
        assert_eq!(due(docs, Some(&e), 1_001 + MIN_TTL_MS), Due::No);
        assert_eq!(
            due(docs, Some(&e), 1_000 + MIN_TTL_MS + RETRY_AFTER_MS),
            Due::Later
        );
        // A configuration changed since: asked again at once.
        let other = Entry {
            fingerprint: "older".into(),
            ..e.clone()
        };
        assert_eq!(due(docs, Some(&other), 2_000), Due::Now);
        // Never discovered: retried before a run, but not more often than RETRY_AFTER_MS.
        let failed = Entry {
            catalog: None,
            tried_ms: 5_000,
            error: Some("refused".into()),
            ..e
        };
        assert_eq!(due(docs, Some(&failed), 6_000), Due::No);
        assert_eq!(due(docs, Some(&failed), 5_000 + RETRY_AFTER_MS), Due::Now);
    }

    #[test]
    fn tools_are_named_by_server_filtered_and_ask_approval_as_configured() {
        let s = settings();
        let (docs, web) = (&s.servers[0], &s.servers[1]);
        let mut entries = BTreeMap::new();
        entries.insert(
            "docs".to_string(),
            entry(
                docs,
                vec![
                    tool("lookup", Some(true)),
                    tool("delete_page", None),
                    tool("notes.search", Some(true)),
                ],
                0,
            ),
        );
        entries.insert(
            "web".to_string(),
            entry(
                web,
                vec![
                    tool("fetch", Some(true)),
                    tool("search", Some(false)),
                    tool("post", None),
                ],
                0,
            ),
        );
        let tools = tools(&s, &entries, |name| name == "web_fetch");
        let seen: Vec<(&str, &str, &str, bool)> = tools
            .iter()
            .map(|t| {
                (
                    t.model_name.as_str(),
                    t.server.as_str(),
                    t.tool.name.as_str(),
                    t.needs_approval,
                )
            })
            .collect();
        assert_eq!(seen[0], ("docs_lookup", "docs", "lookup", false));
        assert_eq!(seen[1], ("docs_delete_page", "docs", "delete_page", true));
        assert_eq!(seen[2].2, "notes.search");
        assert!(seen[2].0.starts_with("docs_notes_search"), "{seen:?}");
        // The built-in web_fetch keeps its name; the allow-list leaves `post` out; the trusted
        // server's read-only tool asks no approval, its other tool does.
        assert_eq!(seen.len(), 5);
        assert_ne!(seen[3].0, "web_fetch");
        assert_eq!((seen[3].2, seen[3].3), ("fetch", false));
        assert_eq!(seen[4], ("web_search", "web", "search", true));
        let info = tools[0].info();
        assert_eq!(
            (info.def.name.as_str(), info.client, info.needs_approval),
            ("docs_lookup", false, false)
        );
    }

    #[test]
    fn a_status_line_names_era_tools_and_error_never_a_header_or_path() {
        let s = settings();
        let web = &s.servers[1];
        let line = status_line(web, None);
        assert_eq!(line["host"], "mcp.example");
        assert_eq!(line["tools"], Value::Null);
        let mut e = entry(web, vec![tool("fetch", None)], 0);
        e.error = Some("MCP server `web` answered HTTP 401".into());
        let line = status_line(web, Some(&e));
        assert_eq!(line["tools"], 1);
        assert_eq!(line["error"], "MCP server `web` answered HTTP 401");
        let text = line.to_string();
        assert!(
            !text.contains("t0ken") && !text.contains("SECRET"),
            "{text}"
        );
    }
}
