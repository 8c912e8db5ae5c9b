//! MCP servers behind OAuth, in this session (crate::mcp::oauth has the shell, the agent
//! crate's `mcp::auth` the steps): a server that answers 401 gets an authorization flow whose
//! URL goes to the client that asked (an event, `mcp_authorization`); the callback
//! (`/mcp/oauth/callback`, routed here by the object id its `state` starts with) exchanges the
//! code, keeps the tokens with the session and asks the server for its tools at once, so the
//! next run has them with no reload. An expired token is refreshed before it is used, a
//! refused one once more after a 401; a refresh the server refuses asks the user again.
//!
//! Everything the flow holds (verifier, tokens, client) is in the session's SQLite; a `state`
//! is single-use, expires after [`FLOW_TTL_MS`], and names this object, so a forged, replayed,
//! expired or other session's `state` finds nothing and harms no live flow.

use weft_agent::mcp::auth::{self, AuthServer, Authorize, Callback, Discovery, Tokens};
use weft_protocol::json::RawJson;
use weft_protocol::Event;
use worker::Response;

use super::Session;
use crate::mcp::oauth::{self, Flow, Grant, FLOW_TTL_MS};
use crate::mcp::ServerSettings;

/// Where the Worker hands a session an authorization callback.
pub const CALLBACK_PATH: &str = "/oauth/callback";

fn now() -> i64 {
    js_sys::Date::now() as i64
}

/// The meta key of the client whose run is active (whose grants its MCP calls carry).
const RUN_CLIENT: &str = "mcp_run_client";

impl Session {
    /// Remembers whose run starts (a socket's client), for its MCP calls: kept in storage, so
    /// a run that a restart resumed still calls with its user's tokens.
    pub(super) fn set_run_client(&self, client: &str) -> worker::Result<()> {
        self.store().set_meta(RUN_CLIENT, client)
    }

    /// The client whose run is active; empty when none is known (the HTTP track's runs, or
    /// storage unreadable: logged), which calls with the session's grants only.
    pub(super) fn run_client(&self) -> String {
        match self.store().meta(RUN_CLIENT) {
            Ok(client) => client.unwrap_or_default(),
            Err(e) => {
                worker::console_error!("the client of the active run unreadable: {e}");
                String::new()
            }
        }
    }

    /// Where `user`'s grant for `server` is kept: a per-user token's holder (`sub:…`) has
    /// their own, which nobody else in the session uses, unless `MCP_OAUTH_SHARED`; everyone
    /// else (a shared token, no token) shares the session's.
    fn grant_key(&self, server: &str, user: &str) -> String {
        let holder = if !self.mcp.oauth_shared && user.starts_with("sub:") {
            user
        } else {
            ""
        };
        format!("{server}\n{holder}")
    }

    /// `server` as its requests for `user` (a socket's client) go out: with their access
    /// token for it, refreshed first when it has expired. Without a grant (or when the
    /// refresh failed: logged) it goes as configured, and answers 401.
    pub(super) async fn mcp_with_token(
        &self,
        server: &ServerSettings,
        user: &str,
    ) -> ServerSettings {
        let mut server = server.clone();
        if !server.oauth() {
            return server;
        }
        let key = self.grant_key(&server.name, user);
        let grant = match self.mcp_grant(&key) {
            Ok(Some(grant)) => grant,
            Ok(None) => return server,
            Err(e) => {
                worker::console_error!("MCP server {:?}: its grant unreadable: {e}", server.name);
                return server;
            }
        };
        let grant = if grant.tokens.fresh(now() as u64) {
            grant
        } else {
            match self.mcp_refresh_grant(&key, grant).await {
                Ok(grant) => grant,
                Err(e) => {
                    worker::console_warn!("MCP server {:?}: token not refreshed: {e}", server.name);
                    return server;
                }
            }
        };
        server.headers.push((
            "Authorization".into(),
            format!("Bearer {}", grant.tokens.access_token),
        ));
        server
    }

    fn mcp_grant(&self, key: &str) -> Result<Option<Grant>, String> {
        let Some(text) = self.store().oauth_grant(key).map_err(|e| e.to_string())? else {
            return Ok(None);
        };
        Grant::parse(&text)
            .map(Some)
            .ok_or_else(|| String::from("the stored grant does not parse"))
    }

    /// After a 401 with a token: refreshes it once, if it can be. Whether to try again.
    pub(super) async fn mcp_refresh_after_401(&self, server: &ServerSettings, user: &str) -> bool {
        let key = self.grant_key(&server.name, user);
        let grant = match self.mcp_grant(&key) {
            Ok(Some(grant)) if grant.tokens.refresh_token.is_some() => grant,
            Ok(_) => return false,
            Err(e) => {
                worker::console_error!("MCP server {:?}: its grant unreadable: {e}", server.name);
                return false;
            }
        };
        match self.mcp_refresh_grant(&key, grant).await {
            Ok(_) => true,
            Err(e) => {
                worker::console_warn!("MCP server {:?}: token not refreshed: {e}", server.name);
                false
            }
        }
    }

    /// Refreshes the grant's access token and keeps the new one. A refusal that only the
    /// user can mend (the refresh token expired or was revoked) drops the grant: the next
    /// 401 then asks the user.
    async fn mcp_refresh_grant(&self, key: &str, mut grant: Grant) -> Result<Grant, String> {
        let Some(refresh_token) = grant.tokens.refresh_token.clone() else {
            self.mcp_drop_grant(key);
            return Err("the access token expired and there is no refresh token".into());
        };
        let issuer =
            AuthServer::parse(&grant.issuer, &grant.metadata).map_err(|e| e.to_string())?;
        let request = auth::token_request(
            &issuer,
            &grant.client,
            auth::Grant::Refresh {
                refresh_token: &refresh_token,
            },
            &grant.resource,
        );
        let (status, body) = oauth::send(&request).await?;
        match Tokens::parse(status, &body, now() as u64) {
            Ok(mut tokens) => {
                tokens.refresh_token = tokens.refresh_token.or(Some(refresh_token));
                grant.tokens = tokens;
                self.store()
                    .save_oauth_grant(key, &grant.to_json())
                    .map_err(|e| format!("the refreshed token could not be stored: {e}"))?;
                Ok(grant)
            }
            Err(e) => {
                if e.needs_user() {
                    self.mcp_drop_grant(key);
                }
                Err(e.to_string())
            }
        }
    }

    fn mcp_drop_grant(&self, key: &str) {
        if let Err(e) = self.store().drop_oauth_grant(key) {
            worker::console_error!("MCP grant {key:?}: refused, and not dropped: {e}");
        }
    }

    /// The server answered 401 and no token of the session mends it: starts a flow for
    /// `owner` and tells their sockets where to authorize. What to tell the model (or a tool
    /// call's caller): where to authorize, or why weft cannot.
    pub(super) async fn mcp_needs_authorization(
        &self,
        server: &ServerSettings,
        challenge: Option<&str>,
        owner: &str,
    ) -> String {
        match self.mcp_authorize(server, challenge, owner).await {
            Ok(url) => {
                let event = authorization_event(&server.name, &url);
                // Nobody known (a call whose grant is gone): every socket of the session.
                self.mcp_tell((!owner.is_empty()).then_some(owner), event);
                format!(
                    "the MCP server {:?} needs the user's authorization: open {url} to \
                     authorize it, then ask again",
                    server.name
                )
            }
            Err(why) => {
                worker::console_warn!("MCP server {:?}: not authorized: {why}", server.name);
                format!(
                    "the MCP server {:?} needs authorization, and weft could not start it: \
                     {why}",
                    server.name
                )
            }
        }
    }

    /// Sends `event` to the sockets of `owner` (all, with `None`).
    fn mcp_tell(&self, owner: Option<&str>, event: Event) {
        for (ws, info) in self.sockets() {
            if owner.is_none_or(|o| o == info.client) {
                self.reply(&ws, &info, event.clone());
            }
        }
    }

    /// Discovery, the client, and a new flow: the authorization URL.
    async fn mcp_authorize(
        &self,
        server: &ServerSettings,
        challenge: Option<&str>,
        owner: &str,
    ) -> Result<String, String> {
        let redirect_uri =
            self.mcp.oauth_redirect.clone().ok_or(
                "set MCP_OAUTH_REDIRECT_URL to this Worker's public /mcp/oauth/callback URL",
            )?;
        let store = self.store();
        let known = store
            .oauth_clients(&redirect_uri)
            .map_err(|e| e.to_string())?
            .into_iter()
            .filter_map(|(issuer, json)| {
                let doc = weft_protocol::json::parse(&json).ok()?;
                Some((issuer, oauth::client_from(&doc)?))
            })
            .collect();
        let discovery = Discovery::new(
            &server.url,
            challenge,
            &redirect_uri,
            server.oauth_client.clone(),
            known,
        )
        .map_err(|e| e.to_string())?;
        let found = oauth::discover(discovery).await?;
        let client = found.client;
        let issuer = found.server.issuer.clone();
        if found.registered {
            store
                .save_oauth_client(&issuer, &redirect_uri, &oauth::client_json(&client))
                .map_err(|e| format!("the client could not be stored: {e}"))?;
        }
        let verifier = oauth::random(32)?;
        let code_challenge = oauth::challenge(&verifier).await?;
        // The object's id first: the Worker routes the callback by it.
        let state = format!("{}.{}", self.state.id(), oauth::random(24)?);
        let url = auth::authorization_url(
            &found.server,
            &Authorize {
                client_id: &client.client_id,
                redirect_uri: &redirect_uri,
                state: &state,
                code_challenge: &code_challenge,
                resource: &found.resource.resource,
                scope: found.scope.as_deref(),
            },
        );
        let flow = Flow {
            owner: owner.to_string(),
            issuer,
            resource: found.resource.resource,
            redirect_uri,
            verifier,
            client,
            metadata: found.metadata,
        };
        let now = now();
        store
            .save_oauth_flow(
                &state,
                &server.name,
                now,
                now - FLOW_TTL_MS,
                &flow.to_json(),
            )
            .map_err(|e| format!("the flow could not be stored: {e}"))?;
        Ok(url)
    }

    /// The authorization server sent the user back: a page saying how it went.
    pub(super) async fn mcp_callback(&self, url: &str) -> worker::Result<Response> {
        // Plain text: the page echoes the authorization server's words, never as markup.
        match self.mcp_complete(url).await {
            Ok(server) => Response::ok(format!(
                "The MCP server {server} is authorized: you can close this window."
            )),
            Err(why) => {
                worker::console_warn!("MCP authorization callback refused: {why}");
                Response::error(format!("Not authorized: {why}"), 400)
            }
        }
    }

    async fn mcp_complete(&self, url: &str) -> Result<String, String> {
        let callback = Callback::from_pairs(crate::query::pairs(url)).map_err(|e| e.to_string())?;
        let state = callback
            .state
            .as_deref()
            .ok_or("the callback has no state")?;
        // Taken out before anything else: a state is good once, whatever follows.
        let (name, created, flow) = self
            .store()
            .take_oauth_flow(state)
            .map_err(|e| format!("the session could not read its flows: {e}"))?
            .ok_or("no authorization of this session is waiting for that state")?;
        if now() - created > FLOW_TTL_MS {
            return Err("the authorization took too long: ask again".into());
        }
        let flow = Flow::parse(&flow).ok_or("the stored flow does not parse")?;
        let server = self
            .mcp_all()
            .server(&name)
            .cloned()
            .ok_or_else(|| format!("the MCP server {name:?} is no longer configured"))?;
        let issuer = AuthServer::parse(&flow.issuer, &flow.metadata).map_err(|e| e.to_string())?;
        let code = callback.code_from(&issuer).map_err(|e| e.to_string())?;
        let request = auth::token_request(
            &issuer,
            &flow.client,
            auth::Grant::Code {
                code,
                verifier: &flow.verifier,
                redirect_uri: &flow.redirect_uri,
            },
            &flow.resource,
        );
        let (status, body) = oauth::send(&request).await?;
        let tokens = Tokens::parse(status, &body, now() as u64).map_err(|e| e.to_string())?;
        let grant = Grant {
            owner: flow.owner.clone(),
            issuer: flow.issuer,
            resource: flow.resource,
            client: flow.client,
            metadata: flow.metadata,
            tokens,
        };
        self.store()
            .save_oauth_grant(&self.grant_key(&name, &flow.owner), &grant.to_json())
            .map_err(|e| format!("the tokens could not be stored: {e}"))?;
        // Its tools now, so the next run has them.
        let old = self.mcp_entry(&server);
        self.mcp_discover(&server, old, None, &flow.owner).await;
        let value = RawJson::from_value(&serde_json::json!({
            "type": "mcp_authorized", "server": name,
        }));
        self.mcp_tell(Some(&flow.owner), Event::Custom { value });
        Ok(name)
    }
}

/// The event that tells a client where to authorize `server`: weft's `custom` event, which
/// loom carries to a socket that asked for weft's extensions and AG-UI as a `CUSTOM` event;
/// the other dialects (and loom's original clients) have no frame for it here, and learn the
/// URL from a tool call of the server, which fails saying it.
fn authorization_event(server: &str, url: &str) -> Event {
    let value = RawJson::from_value(&serde_json::json!({
        "type": "mcp_authorization", "server": server, "url": url,
    }));
    Event::Custom { value }
}

#[cfg(test)]
mod tests {
    use weft_protocol::Dialect;

    use super::super::socket::SocketInfo;
    use super::authorization_event;

    #[test]
    fn the_authorization_url_reaches_weft_loom_and_agui_sockets_only() {
        let url = "https://auth.example.com/authorize?state=s";
        for dialect in Dialect::ALL {
            for weft in [false, true] {
                let socket = SocketInfo::new(dialect, String::new(), weft);
                let frames = socket.reply_frames(authorization_event("notes", url), 1);
                let carried = frames.iter().any(|f| f.contains(url));
                let expected =
                    matches!(dialect, Dialect::Agui) || matches!(dialect, Dialect::Loom) && weft;
                assert_eq!(carried, expected, "{dialect:?} weft={weft}: {frames:?}");
            }
        }
    }
}
