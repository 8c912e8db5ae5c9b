//! The MCP authorization flow's records (session/oauth.rs): the clients weft registered at
//! each authorization server (keyed by issuer and redirect URI), the grant each server's
//! tokens came from (keyed by server and holder: session/oauth.rs `grant_key`), and the flows
//! under way, keyed by their `state`. They live in the
//! session's SQLite and nowhere else: never in a frame, a log line or `/status`.

use super::{i, int, rows, s, text, Store};

impl Store {
    /// The clients registered for `redirect_uri` (JSON), by issuer.
    pub fn oauth_clients(&self, redirect_uri: &str) -> worker::Result<Vec<(String, String)>> {
        let found = rows(
            &self.sql,
            "SELECT issuer, client FROM mcp_oauth_clients WHERE redirect_uri = ?",
            vec![s(redirect_uri)],
        )?;
        Ok(found
            .into_iter()
            .filter_map(|mut r| Some((text(&mut r, 0)?, text(&mut r, 1)?)))
            .collect())
    }

    pub fn save_oauth_client(
        &self,
        issuer: &str,
        redirect_uri: &str,
        client: &str,
    ) -> worker::Result<()> {
        self.exec(
            "INSERT INTO mcp_oauth_clients (issuer, redirect_uri, client) VALUES (?, ?, ?) \
             ON CONFLICT(issuer, redirect_uri) DO UPDATE SET client = excluded.client",
            vec![s(issuer), s(redirect_uri), s(client)],
        )?;
        Ok(())
    }

    /// The grant (JSON) kept under `key` (a server and its holder), if there is one.
    pub fn oauth_grant(&self, key: &str) -> worker::Result<Option<String>> {
        let found = rows(
            &self.sql,
            "SELECT grant_row FROM mcp_oauth_tokens WHERE grant_key = ?",
            vec![s(key)],
        )?;
        Ok(found.into_iter().next().and_then(|mut r| text(&mut r, 0)))
    }

    pub fn save_oauth_grant(&self, key: &str, grant: &str) -> worker::Result<()> {
        self.exec(
            "INSERT INTO mcp_oauth_tokens (grant_key, grant_row) VALUES (?, ?) \
             ON CONFLICT(grant_key) DO UPDATE SET grant_row = excluded.grant_row",
            vec![s(key), s(grant)],
        )?;
        Ok(())
    }

    pub fn drop_oauth_grant(&self, key: &str) -> worker::Result<()> {
        self.exec(
            "DELETE FROM mcp_oauth_tokens WHERE grant_key = ?",
            vec![s(key)],
        )?;
        Ok(())
    }

    /// Keeps a flow under its `state`; flows older than `expired_before` (ms) go at the same
    /// time, so abandoned ones do not pile up.
    pub fn save_oauth_flow(
        &self,
        state: &str,
        server: &str,
        now_ms: i64,
        expired_before: i64,
        flow: &str,
    ) -> worker::Result<()> {
        self.exec(
            "DELETE FROM mcp_oauth_flows WHERE created < ?",
            vec![i(expired_before)],
        )?;
        self.exec(
            "INSERT INTO mcp_oauth_flows (state, server, created, flow) VALUES (?, ?, ?, ?)",
            vec![s(state), s(server), i(now_ms), s(flow)],
        )?;
        Ok(())
    }

    /// Takes the flow of `state` out (a `state` is good once): its server, when it was made,
    /// and the flow (JSON). `None`: no flow has that state (forged, or used already).
    pub fn take_oauth_flow(&self, state: &str) -> worker::Result<Option<(String, i64, String)>> {
        let found = rows(
            &self.sql,
            "SELECT server, created, flow FROM mcp_oauth_flows WHERE state = ?",
            vec![s(state)],
        )?;
        let Some(mut row) = found.into_iter().next() else {
            return Ok(None);
        };
        self.exec(
            "DELETE FROM mcp_oauth_flows WHERE state = ?",
            vec![s(state)],
        )?;
        let created = int(&row, 1).unwrap_or(0);
        Ok(match (text(&mut row, 0), text(&mut row, 2)) {
            (Some(server), Some(flow)) => Some((server, created, flow)),
            _ => None,
        })
    }
}
