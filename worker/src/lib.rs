//! # weft-worker
//!
//! The edge server: routes each request, checks auth and origin before any upgrade, and hands
//! WebSockets to the session's Durable Object ([`session::Session`]), which speaks the
//! socket's dialect, runs the agent, and keeps everything in its SQLite storage.
//!
//! | route | what |
//! |---|---|
//! | `GET /` (upgrade) | loom |
//! | `GET /agentloop` (upgrade) | agentloop |
//! | `GET /ws` (upgrade) | agentchat |
//! | `GET /ws/chat` (upgrade) | cueso |
//! | `GET /agui` (upgrade) | AG-UI over a WebSocket (`weft_protocol::dialect::agui::socket`) |
//! | any of them with `Sec-WebSocket-Protocol: weft.<dialect>` | that dialect |
//! | `POST /v1/chat/completions` | OpenAI-compatible streaming proxy to the configured provider |
//! | `POST /api/chat`, `GET /api/chat/{id}/stream` | the AI SDK's `useChat`: a turn as a UI message stream, and the running turn again (the HTTP track: [`http`], `session/http.rs`) |
//! | `POST /agui`, `GET /agui/{threadId}/stream` | AG-UI's `HttpAgent`: a `RunAgentInput` in, its events out as server-sent events, and the running run again (the HTTP track) |
//! | `GET /healthz` | `ok` |
//! | `GET /mcp/oauth/callback` | an MCP server's authorization server sends the user back (`session/oauth.rs`) |
//! | `GET /` and any other `GET` / `HEAD` | the demo app (`www/`, built by `scripts/build-www`), served from the `ASSETS` binding |
//!
//! A socket belongs to the Durable Object of its `?session_id=` (or of a fresh session); a
//! message naming another session is carried to that session's object over a link
//! ([`relay`]). A socket that did not offer `weft.<dialect>` gets only what its dialect's
//! documents define (`weft_protocol::Encoder::original`).
//!
//! Who may do what: `WEFT_AUTH_TOKEN`, or per-user tokens limited to their sessions
//! ([`access`]); how much: limits per socket, per session and per client ([`limiter`],
//! `session/limits.rs`).
//!
//! Its rooms: this file routes and checks; [`session`] is the Durable Object (a plain-data core
//! with unit tests, and the object that carries it out: its module docs list them), [`store`] its
//! SQLite storage, [`relay`] the links between sessions, [`http`] the dialects and routes of the
//! HTTP stream track, [`access`] the tokens and the session a request may use, [`proxy`]
//! `/v1/chat/completions`, [`llm`] the model calls, [`mcp`] the operator's MCP servers,
//! [`batch`] when a stream's reads are published, [`limiter`] and [`settings`] the limits and
//! the environment.
//!
//! `wrangler.toml` routes every request to this code first (`run_worker_first`), so a WebSocket
//! upgrade on `/` still reaches the session; what is not a route here goes to the assets. When
//! the app is not built, `GET /` answers with a small page listing the endpoints.

pub mod access;
pub mod agents;
pub mod batch;
pub mod http;
pub mod limiter;
pub mod llm;
pub mod mcp;
pub mod outbound;
pub mod proxy;
pub mod query;
pub mod relay;
pub mod session;
pub mod settings;
pub mod store;

use weft_protocol::Dialect;
use worker::{event, Context, Env, Headers, Method, Request, Response, Result, WebSocketPair};

use access::{Access, Naming};
use settings::Settings;

const DEMO_PAGE: &str = include_str!("demo.html");

#[event(start)]
fn start() {
    console_error_panic_hook::set_once();
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    let settings = Settings::from_env(&env);
    settings.log_problems_once();
    let url = req.inner().url();
    let path = req.path();
    let upgrade = req
        .headers()
        .get("Upgrade")?
        .is_some_and(|u| u.eq_ignore_ascii_case("websocket"));
    if !upgrade {
        if let Some((route, named)) = http::route(&req.method(), &path) {
            let response = http_request(req.clone()?, &env, &settings, &url, route, named).await?;
            return cors(&settings, &req, response);
        }
        return match (req.method(), path.as_str()) {
            (Method::Get, "/healthz") => Response::ok("ok"),
            // No weft token: the user's browser comes back from the authorization server.
            // The `state` is the credential, and its session checks it (session/oauth.rs).
            (Method::Get, "/mcp/oauth/callback") => oauth_callback(&env, &url).await,
            (Method::Get, "/status") => {
                // Any valid token may read it: it names no session.
                if let Err(refusal) = authorize(&settings, &req, &url, &[]).await? {
                    return Ok(refusal);
                }
                if origin_forbidden(&settings, &req)? {
                    return Response::error("origin not allowed", 403);
                }
                let mut report = status(&settings);
                report["mcp"] = mcp::status(&mcp::McpSettings::from_env(&env)).await;
                cors(&settings, &req, Response::from_json(&report)?)
            }
            (Method::Options, p) if http::is_route(p) => {
                cors(&settings, &req, Response::empty()?.with_status(204))
            }
            (Method::Get | Method::Head, _) => match assets(&env, req).await? {
                Some(response) => Ok(response),
                None if path == "/" => Response::from_html(DEMO_PAGE),
                None => Response::error("not found", 404),
            },
            (Method::Options, "/v1/chat/completions") => {
                cors(&settings, &req, Response::empty()?.with_status(204))
            }
            (Method::Post, "/v1/chat/completions") => {
                // Any valid token may call the proxy: it holds no session.
                if let Err(refusal) = authorize(&settings, &req, &url, &[]).await? {
                    return Ok(refusal);
                }
                if origin_forbidden(&settings, &req)? {
                    return Response::error("origin not allowed", 403);
                }
                let response = proxy::chat_completions(req.clone()?, &env, &settings).await?;
                cors(&settings, &req, response)
            }
            _ => Response::error("not found", 404),
        };
    }

    let protocols: Vec<String> = req
        .headers()
        .get("Sec-WebSocket-Protocol")?
        .map(|h| {
            h.split(',')
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let dialect = protocols
        .iter()
        .find_map(|p| Dialect::from_subprotocol(p))
        .or_else(|| Dialect::from_endpoint(&path));
    let Some(dialect) = dialect else {
        return Response::error(
            "no WebSocket endpoint here: use /, /agentloop, /ws, /ws/chat or /agui",
            404,
        );
    };

    let access = match authorize(&settings, &req, &url, &protocols).await? {
        Ok(access) => access,
        Err(refusal) => return Ok(refusal),
    };

    // Chrome fails the handshake if it offered protocols and none is echoed: echo the dialect's,
    // else the first offered.
    let echo = protocols
        .iter()
        .find(|p| Dialect::from_subprotocol(p).is_some())
        .or_else(|| protocols.first())
        .cloned();

    if origin_forbidden(&settings, &req)? {
        // cueso (specs/README): accept, then close with 4003 so the browser sees the reason.
        let pair = WebSocketPair::new()?;
        pair.server.accept()?;
        pair.server.close(Some(4003), Some("origin not allowed"))?;
        return with_protocol(Response::from_websocket(pair.client)?, echo.as_deref());
    }

    // An empty `?session_id=` asks for a new session, as no parameter does.
    let named = query::get(&url, "session_id").filter(|s| !s.is_empty());
    let session_id = match access.session_for(named.as_deref(), Naming::SessionId, session::uuid) {
        Ok(session_id) => session_id,
        Err(refusal) => return Response::error(refusal.message, refusal.status),
    };
    // Whether the client asked for weft's extensions (specs/README, "Original clients see only
    // their own protocol").
    let weft = protocols
        .iter()
        .any(|p| Dialect::from_subprotocol(p).is_some());
    let client = client_of(&access, &req)?;
    let target = session::connect_url(
        dialect,
        &session_id,
        weft,
        echo.as_deref(),
        access.grant(),
        &client,
        false,
    );
    let forwarded = outbound::request(&target, "GET", Some(req.headers()), None)?;
    let stub = env
        .durable_object("SESSIONS")?
        .id_from_name(&session_id)?
        .get_stub()?;
    stub.fetch_with_request(forwarded).await
}

/// Hands an MCP authorization callback to the session whose object id its `state` starts
/// with; a `state` that names no object is refused here.
async fn oauth_callback(env: &Env, url: &str) -> Result<Response> {
    let state = query::get(url, "state").unwrap_or_default();
    let object = state.split_once('.').map_or("", |(id, _)| id);
    let namespace = env.durable_object("SESSIONS")?;
    let Ok(id) = namespace.id_from_string(object) else {
        return Response::error("this authorization is not weft's", 400);
    };
    let query = url.split_once('?').map_or("", |(_, q)| q);
    let target = format!("https://session.internal{}?{query}", session::CALLBACK_PATH);
    let forwarded = outbound::request(&target, "GET", None, None)?;
    id.get_stub()?.fetch_with_request(forwarded).await
}

/// Who a request is, for `SESSIONS_PER_MINUTE`: a per-user token's holder, else the address
/// (every holder of the shared token is one client otherwise).
fn client_of(access: &Access, req: &Request) -> Result<String> {
    Ok(match access.grant() {
        Some(grant) => format!("sub:{}", grant.sub),
        None => format!(
            "ip:{}",
            req.headers()
                .get("CF-Connecting-IP")?
                .unwrap_or_else(|| "unknown".into())
        ),
    })
}

/// The checks every HTTP track request passes before it reaches its session: auth, origin,
/// and the session's id held to the rules a socket's session id is (`Access::session_for`).
/// The refusal, or who is asking.
async fn http_access(
    req: &Request,
    settings: &Settings,
    url: &str,
    session: &str,
) -> Result<std::result::Result<String, Response>> {
    let access = match authorize(settings, req, url, &[]).await? {
        Ok(access) => access,
        Err(refusal) => return Ok(Err(refusal)),
    };
    if origin_forbidden(settings, req)? {
        return Response::error("origin not allowed", 403).map(Err);
    }
    if let Err(refusal) = access.session_for(Some(session), Naming::Chat, || Ok(String::new())) {
        return Response::error(refusal.message, refusal.status).map(Err);
    }
    client_of(&access, req).map(Ok)
}

/// A request of the HTTP track (`http.rs`): a turn's body read (once: the session gets the
/// commands read from it), the checks passed, handed to the session it names.
async fn http_request(
    mut req: Request,
    env: &Env,
    settings: &Settings,
    url: &str,
    route: &http::Route,
    named: Option<&str>,
) -> Result<Response> {
    let dialect = route.dialect;
    let (session, method, body) = match route.action {
        http::Action::Turn => {
            let body = req.text().await?;
            let limits = weft_protocol::Limits {
                max_frame_bytes: dialect.max_body_bytes,
            };
            let turn = match (dialect.decode)(body.as_bytes(), limits) {
                Ok(turn) => turn,
                Err(e) => return Response::error(e.to_string(), 400),
            };
            let commands = match turn.encode(settings.agents.default_name()) {
                Ok(commands) => commands,
                Err(e) => return Response::error(e.to_string(), 400),
            };
            (turn.session, "POST", Some(commands))
        }
        http::Action::Replay => match named {
            Some(session) => (session.to_string(), "GET", None),
            None => return Response::error("not found", 404),
        },
    };
    let client = match http_access(&req, settings, url, &session).await? {
        Ok(client) => client,
        Err(refusal) => return Ok(refusal),
    };
    let target = session::http_url(route.action, dialect, &session, &client);
    let forwarded = outbound::request(&target, method, None, body.as_deref())?;
    env.durable_object("SESSIONS")?
        .id_from_name(&session)?
        .get_stub()?
        .fetch_with_request(forwarded)
        .await
}

/// What `GET /status` reports: which model runs use and how it is reached, the agents a run
/// may name, and what stops runs — never a key or a base URL (the REST API's holds the
/// account). The route adds `mcp`, each MCP server as probed now ([`mcp::status`]).
fn status(settings: &Settings) -> serde_json::Value {
    let config = settings.model.config();
    serde_json::json!({
        "version": env!("CARGO_PKG_VERSION"),
        "model": {
            "source": settings.model.source(),
            "provider": config.map(|c| c.provider.as_str()),
            "model": config.map(|c| c.model.as_str()),
            "problem": match &settings.model {
                settings::Model::Missing(why) => Some(why.as_str()),
                _ => None,
            },
        },
        "agents": settings.agents.list().iter().map(agent_status).collect::<Vec<_>>(),
        "default_agent": settings.agents.default_name(),
        "problems": settings.problems(),
        "auth": settings.auth_token.is_some(),
        "dialects": Dialect::ALL.iter().map(|d| d.as_str()).collect::<Vec<_>>(),
    })
}

/// One agent in `/status`: what a client names, what runs it, its model — never its prompt
/// (an operator's instructions are theirs) or its key.
fn agent_status(profile: &agents::Profile) -> serde_json::Value {
    if let Some(remote) = profile.remote() {
        // Its host only: the URL's path or query, and its headers, may carry a key.
        return serde_json::json!({
            "name": profile.name,
            "description": profile.description,
            "agent": profile.agent().as_str(),
            "remote": remote.host(),
        });
    }
    let config = profile.model.config();
    serde_json::json!({
        "name": profile.name,
        "description": profile.description,
        "agent": profile.agent().as_str(),
        "provider": config.map(|c| c.provider.as_str()),
        "model": config.map(|c| c.model.as_str()),
        "problem": match &profile.model {
            settings::Model::Missing(why) => Some(why.as_str()),
            _ => None,
        },
    })
}

/// The demo app's file for `req`, from the static assets (`[assets]` in wrangler.toml); `None`
/// when there is no `ASSETS` binding or no such file (the app is not built).
async fn assets(env: &Env, req: Request) -> Result<Option<Response>> {
    let Ok(assets) = env.assets("ASSETS") else {
        return Ok(None);
    };
    let response = assets.fetch_request(req).await?;
    Ok((response.status_code() != 404).then_some(response))
}

/// The auth check, before anything else happens: the credential (query `token=`, subprotocol
/// `weft.token.<t>`, or `Authorization: Bearer`) is the shared `WEFT_AUTH_TOKEN`, or a
/// per-user token signed with `WEFT_AUTH_SECRET` (access.rs). `Err` is the refusal to send,
/// with the reason (expired, bad signature, …).
async fn authorize(
    settings: &Settings,
    req: &Request,
    url: &str,
    protocols: &[String],
) -> Result<std::result::Result<Access, Response>> {
    if settings.auth_token.is_none() && settings.auth_secret.is_none() {
        return Ok(Ok(Access::Full));
    }
    let query_token = query::get(url, "token");
    let proto_token = protocols
        .iter()
        .find_map(|p| p.strip_prefix("weft.token.").map(String::from));
    let bearer = req
        .headers()
        .get("Authorization")?
        .and_then(|h| h.strip_prefix("Bearer ").map(|t| t.trim().to_string()));
    let Some(given) = query_token.or(proto_token).or(bearer) else {
        return Response::error("missing or wrong auth token", 401).map(Err);
    };
    if let Some(expected) = &settings.auth_token {
        if constant_time_eq(given.as_bytes(), expected.as_bytes()) {
            return Ok(Ok(Access::Full));
        }
    }
    let Some(secret) = &settings.auth_secret else {
        return Response::error("missing or wrong auth token", 401).map(Err);
    };
    let now_secs = js_sys::Date::now() / 1000.0;
    match access::verify(secret, &given, now_secs).await {
        Ok(grant) => Ok(Ok(Access::Scoped(grant))),
        Err(why) => Response::error(why, 401).map(Err),
    }
}

/// Whether a browser's `Origin` is outside `ALLOWED_ORIGINS` (requests without one, from
/// non-browser clients, are allowed).
fn origin_forbidden(settings: &Settings, req: &Request) -> Result<bool> {
    let origin = req.headers().get("Origin")?;
    Ok(match (&origin, settings.allowed_origins.is_empty()) {
        (Some(o), false) => !settings.allowed_origins.iter().any(|a| a == o || a == "*"),
        _ => false,
    })
}

/// CORS headers for browser calls to the proxy, from allowed origins only.
fn cors(settings: &Settings, req: &Request, response: Response) -> Result<Response> {
    let Some(origin) = req.headers().get("Origin")? else {
        return Ok(response);
    };
    if origin_forbidden(settings, req)? {
        return Ok(response);
    }
    let headers = response.headers().clone();
    headers.set("Access-Control-Allow-Origin", &origin)?;
    headers.set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")?;
    headers.set(
        "Access-Control-Allow-Headers",
        "authorization, content-type",
    )?;
    headers.set("Vary", "Origin")?;
    Ok(response.with_headers(headers))
}

/// Adds the `Sec-WebSocket-Protocol` the handshake answers with, when there is one.
pub fn with_protocol(response: Response, protocol: Option<&str>) -> Result<Response> {
    let Some(p) = protocol else {
        return Ok(response);
    };
    let headers = Headers::new();
    headers.set("Sec-WebSocket-Protocol", p)?;
    Ok(response.with_headers(headers))
}

/// Compares secrets without an early exit, so timing does not reveal a matching prefix.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
