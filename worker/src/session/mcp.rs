//! The operator's MCP servers in this session's runs (crate::mcp has the rules): what the
//! session knows of each server, read from its storage once per wake-up, so an object woken
//! from hibernation or restarted offers their tools at once, without asking the servers;
//! a discovery before a run only for a server the session has no tools of yet; a refresh of
//! a stale catalog after a run, never before one; and the calls, with their progress, their
//! timeout and their errors told to the model.
//!
//! The servers a client added (`add_mcp_server`, where `MCP_CLIENT_SERVERS` allows it) join
//! the operator's here: stored with the session, read back on wake-up and checked against the
//! operator's settings of the moment, then used exactly as the operator's servers are.

use std::collections::BTreeMap;

use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use weft_agent::engine::Input;
use weft_agent::mcp::{Operation, Outcome, ServerState};
use weft_agent::tools;
use weft_protocol::command::AddMcpServer;
use weft_protocol::Event;
use worker::WebSocket;

use super::socket::SocketInfo;
use super::{error_event, toolbox, Session};
use crate::mcp::catalog::{self, Due, Entry, McpTool};
use crate::mcp::config::MAX_CLIENT_SERVERS;
use crate::mcp::{discover, limits, transport, McpSettings, ServerSettings};

/// A server a client added, as the session stores it.
#[derive(Serialize, Deserialize)]
struct ClientServer {
    url: String,
    headers: BTreeMap<String, String>,
}

impl Session {
    /// The stored entries, read once after a wake-up. A store that cannot be read is logged
    /// and taken for one with no entries: the servers are then asked again, and what they say
    /// is written back — a catalog is a cache of what the servers say, so nothing is lost.
    fn mcp_entries(&self) -> BTreeMap<String, Entry> {
        if let Some(entries) = self.mcp_entries.borrow().as_ref() {
            return entries.clone();
        }
        let rows = match self.store().mcp_entries() {
            Ok(rows) => rows,
            Err(e) => {
                worker::console_error!(
                    "MCP catalogs unreadable ({e}): the servers are asked again"
                );
                return BTreeMap::new();
            }
        };
        let mut entries = BTreeMap::new();
        for (name, json) in rows {
            match serde_json::from_str::<Entry>(&json) {
                Ok(entry) => {
                    entries.insert(name, entry);
                }
                Err(e) => worker::console_error!(
                    "MCP catalog of {name:?} unreadable ({e}): the server is asked again"
                ),
            }
        }
        *self.mcp_entries.borrow_mut() = Some(entries.clone());
        entries
    }

    /// Keeps a server's entry, in memory and in storage (a write that fails is logged: the
    /// entry is then asked for again after the next wake-up).
    fn mcp_save(&self, name: &str, entry: Entry) {
        let stored = serde_json::to_string(&entry)
            .map_err(|e| e.to_string())
            .and_then(|json| {
                self.store()
                    .save_mcp_entry(name, &json)
                    .map_err(|e| e.to_string())
            });
        if let Err(e) = stored {
            worker::console_error!("MCP catalog of {name:?} not stored: {e}");
        }
        // The others are read first, if they were not yet (a server added before any run of
        // a woken object): a cache of this entry alone would send the others' servers asking
        // again.
        let mut entries = self.mcp_entries();
        entries.insert(name.to_string(), entry);
        *self.mcp_entries.borrow_mut() = Some(entries);
    }

    /// The servers clients added, read once after a wake-up and checked against the
    /// operator's settings of now: one they no longer allow (`MCP_CLIENT_SERVERS` changed, a
    /// name the operator took since) is left out, and logged by name.
    fn client_servers(&self) -> Vec<ServerSettings> {
        if let Some(servers) = self.mcp_client_servers.borrow().as_ref() {
            return servers.clone();
        }
        let rows = match self.store().mcp_client_servers() {
            Ok(rows) => rows,
            Err(e) => {
                // Not cached: read again next time.
                worker::console_error!("MCP servers added by clients unreadable: {e}");
                return Vec::new();
            }
        };
        let mut servers = Vec::new();
        for (name, json) in rows {
            let server = serde_json::from_str::<ClientServer>(&json)
                .map_err(|e| e.to_string())
                .and_then(|c| self.mcp.client_server(&name, &c.url, &c.headers));
            match server {
                Ok(server) => servers.push(server),
                Err(why) => {
                    worker::console_warn!("MCP server {name:?} added by a client unused: {why}")
                }
            }
        }
        *self.mcp_client_servers.borrow_mut() = Some(servers.clone());
        servers
    }

    /// The operator's servers, then those clients added.
    pub(super) fn mcp_all(&self) -> McpSettings {
        let mut all = self.mcp.clone();
        all.servers.extend(self.client_servers());
        all
    }

    /// The MCP tools offered now, named as the model sees them. A built-in tool's name is
    /// never given to one.
    pub(super) fn mcp_tools(&self) -> Vec<McpTool> {
        let all = self.mcp_all();
        if all.servers.is_empty() {
            return Vec::new();
        }
        let builtins: Vec<String> = tools::builtin_specs().into_iter().map(|s| s.name).collect();
        catalog::tools(&all, &self.mcp_entries(), |name| {
            builtins.iter().any(|b| b == name)
        })
    }

    /// `add_mcp_server`: checks the server against the operator's settings, asks it for its
    /// tools, and only then keeps it (its headers with the session, nowhere else). The answer
    /// is a `tools_list` of its tools under the request's id, or an `error` carrying that id
    /// — neither ever holds a header value.
    pub(super) async fn add_mcp_server(
        &self,
        ws: &WebSocket,
        info: &SocketInfo,
        add: AddMcpServer,
    ) {
        let id = add.id.clone();
        let refuse = |why: &str| error_event(why, "mcp_refused", Some(id.clone()));
        let server = match self.mcp.client_server(&add.name, &add.url, &add.headers) {
            Ok(server) => server,
            Err(why) => return self.reply(ws, info, refuse(&why)),
        };
        let others = self.client_servers();
        if others.len() >= MAX_CLIENT_SERVERS && !others.iter().any(|s| s.name == server.name) {
            let why = format!(
                "a session holds at most {MAX_CLIENT_SERVERS} MCP servers added by clients"
            );
            return self.reply(ws, info, refuse(&why));
        }
        let (catalog, state, _) =
            discover(&server, ServerState::default(), self.mcp.result_max_bytes).await;
        let catalog = match catalog {
            Ok(catalog) => catalog,
            Err(why) => {
                let why = format!("the MCP server {:?} was not added: {why}", server.name);
                return self.reply(ws, info, error_event(&why, "mcp_unavailable", Some(id)));
            }
        };
        let stored = serde_json::to_string(&ClientServer {
            url: add.url,
            headers: add.headers,
        })
        .map_err(|e| e.to_string())
        .and_then(|json| {
            self.store()
                .save_mcp_client_server(&server.name, &json)
                .map_err(|e| e.to_string())
        });
        if let Err(e) = stored {
            worker::console_error!(
                "MCP server {:?} added by a client not stored: {e}",
                server.name
            );
            let why = format!(
                "the MCP server {:?} was not added: the session could not store it",
                server.name
            );
            return self.reply(ws, info, error_event(&why, "storage", Some(id)));
        }
        let now = js_sys::Date::now() as i64;
        self.mcp_save(
            &server.name,
            Entry {
                fingerprint: server.fingerprint.clone(),
                state,
                catalog: Some(catalog),
                fetched_ms: now,
                tried_ms: now,
                error: None,
            },
        );
        let name = server.name.clone();
        {
            let mut cell = self.mcp_client_servers.borrow_mut();
            let servers = cell.get_or_insert_with(Vec::new);
            servers.retain(|s| s.name != name);
            servers.push(server);
        }
        let infos = self
            .mcp_tools()
            .iter()
            .filter(|t| t.server == name)
            .map(McpTool::info)
            .collect();
        let tools = toolbox::tool_specs(infos);
        self.reply(ws, info, Event::ToolsList { id, tools });
    }

    /// Before a run: asks the servers the session has no tools of yet (or whose discovery
    /// failed long enough ago) for them, side by side, each within
    /// [`DISCOVERY_TIMEOUT_MS`](crate::mcp::DISCOVERY_TIMEOUT_MS). Others are not asked: the
    /// run starts on the stored catalogs.
    /// `asker` (a socket's client) is told where to authorize a server that asks for it.
    pub(super) async fn mcp_prepare(&self, asker: Option<&str>) {
        self.mcp_discover_due(Due::Now, asker).await;
    }

    /// After a run: asks again the servers whose catalog is stale, for the next run.
    pub(super) async fn mcp_refresh(&self) {
        self.mcp_discover_due(Due::Later, None).await;
    }

    /// The stored entry of `name`, if it is for the server as configured now.
    pub(super) fn mcp_entry(&self, server: &ServerSettings) -> Option<Entry> {
        self.mcp_entries()
            .get(&server.name)
            .filter(|e| e.fingerprint == server.fingerprint)
            .cloned()
    }

    async fn mcp_discover_due(&self, wanted: Due, asker: Option<&str>) {
        let all = self.mcp_all();
        if all.servers.is_empty() {
            return;
        }
        let entries = self.mcp_entries();
        let now = js_sys::Date::now() as i64;
        let due: Vec<&ServerSettings> = all
            .servers
            .iter()
            .filter(|s| catalog::due(s, entries.get(&s.name), now) == wanted)
            .collect();
        let discoveries = due.into_iter().map(|server| {
            let old = entries
                .get(&server.name)
                .filter(|e| e.fingerprint == server.fingerprint)
                .cloned();
            self.mcp_discover(server, old, asker, asker.unwrap_or_default())
        });
        join_all(discoveries).await;
    }

    /// Asks `server` for its tools, with `user`'s token for it if the session holds one
    /// (session/oauth.rs). A 401 refreshes the token once; past that, `asker` is sent where
    /// to authorize (nobody is when no client asked: after a run, after a callback).
    pub(super) async fn mcp_discover(
        &self,
        server: &ServerSettings,
        old: Option<Entry>,
        asker: Option<&str>,
        user: &str,
    ) {
        let mut entry = old.unwrap_or_else(|| Entry {
            fingerprint: server.fingerprint.clone(),
            ..Entry::default()
        });
        let max = self.mcp.result_max_bytes;
        let mut found = discover(
            &self.mcp_with_token(server, user).await,
            entry.state.clone(),
            max,
        )
        .await;
        if found.2.is_some() && server.oauth() && self.mcp_refresh_after_401(server, user).await {
            found = discover(&self.mcp_with_token(server, user).await, found.1, max).await;
        }
        let (mut catalog, state, unauthorized) = found;
        if let (Some(challenge), Some(asker), true) = (&unauthorized, asker, server.oauth()) {
            catalog = Err(self
                .mcp_needs_authorization(server, challenge.as_deref(), asker)
                .await);
        }
        let now = js_sys::Date::now() as i64;
        entry.state = state;
        entry.tried_ms = now;
        match catalog {
            Ok(catalog) => {
                for rejected in &catalog.rejected {
                    worker::console_warn!(
                        "MCP server {:?}: tool {:?} left out: {}",
                        server.name,
                        rejected.name,
                        rejected.reason
                    );
                }
                entry.catalog = Some(catalog);
                entry.fetched_ms = now;
                entry.error = None;
            }
            Err(e) => {
                worker::console_warn!("MCP server {:?}: no tools: {e}", server.name);
                entry.error = Some(e);
            }
        }
        self.mcp_save(&server.name, entry);
    }

    /// The MCP tool the model knows as `name`, if one is offered.
    pub(super) fn mcp_tool(&self, name: &str) -> Option<McpTool> {
        self.mcp_tools().into_iter().find(|t| t.model_name == name)
    }

    /// Calls MCP tool `name` for call `call_id` and feeds the run its result: the tool's text
    /// (an `isError` result as a tool error), or why the call failed. Progress the server
    /// reports goes out as `tool_output` events meanwhile.
    pub(super) async fn call_mcp(&self, call_id: String, name: String, arguments: Value) {
        let (result, is_error) = match self.mcp_call(&call_id, &name, arguments).await {
            Ok(done) => done,
            Err(why) => (why, true),
        };
        self.handle(Input::ToolResult {
            call_id,
            result,
            is_error,
        });
    }

    async fn mcp_call(
        &self,
        call_id: &str,
        name: &str,
        arguments: Value,
    ) -> Result<(String, bool), String> {
        let tool = self.mcp_tool(name).ok_or_else(|| {
            format!("{name} is no longer offered: its MCP server's tools changed")
        })?;
        let all = self.mcp_all();
        let server = all
            .server(&tool.server)
            .ok_or_else(|| format!("the MCP server {:?} is no longer configured", tool.server))?;
        let entry = self.mcp_entries().remove(&server.name).unwrap_or_default();
        // Whose tokens the call carries, and who is asked after a 401: the run's client.
        let owner = self.run_client();
        let mut retried = false;
        let (op, outcome) = loop {
            let mut op = Operation::call_tool(
                &self.mcp_with_token(server, &owner).await.codec(),
                entry.state.clone(),
                limits(self.mcp.result_max_bytes),
                &tool.tool,
                call_id,
                arguments.clone(),
            );
            // One line per report: clients append a call's outputs (the Reassembler does).
            let outcome = transport::drive(&mut op, self.mcp.call_timeout_ms, |line| {
                self.handle(Input::ToolOutput {
                    call_id: call_id.to_string(),
                    content: format!("{line}\n"),
                });
            })
            .await;
            // A 401 means the call did not run: once more with a refreshed token.
            if op.unauthorized().is_some()
                && server.oauth()
                && !retried
                && self.mcp_refresh_after_401(server, &owner).await
            {
                retried = true;
                continue;
            }
            break (op, outcome);
        };
        let outcome = match (op.unauthorized(), server.oauth()) {
            (Some(challenge), true) => Err(self
                .mcp_needs_authorization(server, challenge, &owner)
                .await),
            _ => outcome,
        };
        let state = op.state().clone();
        let error = outcome.as_ref().err().cloned();
        // The server listed the tool again during the call (its headers changed): the stored
        // definition gives way to the new one.
        let refreshed = op.refreshed_tool().cloned();
        if state != entry.state || error != entry.error || refreshed.is_some() {
            let mut entry = Entry {
                state,
                error,
                ..entry
            };
            if let (Some(new), Some(catalog)) = (refreshed, entry.catalog.as_mut()) {
                if let Some(old) = catalog.tools.iter_mut().find(|t| t.name == new.name) {
                    *old = new;
                }
            }
            self.mcp_save(&server.name, entry);
        }
        match outcome? {
            Outcome::Called(result) => Ok((result.text, result.is_error)),
            _ => Err(format!(
                "the MCP server {:?} answered the call of {} with something else",
                server.name, tool.tool.name
            )),
        }
    }
}
