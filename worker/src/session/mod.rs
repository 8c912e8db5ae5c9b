//! The Session Durable Object: one per session, holding its sockets (hibernatable), its SQLite
//! storage, and at most one active run, driven through the agent engine's effects.
//!
//! Its sockets are the clients that connected to it and the links other sessions' objects
//! opened to it for messages that named this session (relay.rs); both are served alike. Each
//! socket's frames come from an encoder for its dialect and its opt-in to weft's extensions,
//! so original clients and weft clients of one dialect each get a dense numbering of their
//! own. Approvals go to the sockets that can answer them; with none, or with nobody answering
//! within `APPROVAL_TIMEOUT_MS` (the object's alarm), the call is refused and the run goes on.
//!
//! Its rooms. The decisions, plain data with their own unit tests (no runtime): `socket.rs`
//! what a socket's attachment holds and who may approve; `inbound.rs` a frame on its way in
//! (decoded, checked, routed); `fanout.rs` which socket gets which frames; `toolbox.rs` the
//! tools a run may call; `url.rs` the internal URLs a session is reached at. The object that
//! carries them out: this file its sockets' lifecycle; `commands.rs` what clients ask of it;
//! `drive.rs` the drive loop over a run's effects; `llm.rs` a model call streamed into the run;
//! `publish.rs` logging and sending the run's events; `host.rs` what the tools run against;
//! `http.rs` the HTTP track's requests (the AI SDK's); `loom_app.rs` loom's web app's requests;
//! `mcp.rs` the operator's MCP servers (their catalogs, discoveries and calls); `alarm.rs` its
//! one alarm; `limits.rs` its limits.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::task::Waker;

use weft_agent::engine::{self, Effect, Input, Run, ToolInfo};
use weft_protocol::event::ToolSpec;
use weft_protocol::{Event, Limits};
use worker::{
    durable_object, DurableObject, Env, Request, Response, Result, State, WebSocket,
    WebSocketIncomingMessage, WebSocketPair,
};

mod alarm;
mod commands;
mod drive;
mod fanout;
mod host;
mod http;
mod inbound;
mod limits;
mod llm;
mod loom_app;
mod mcp;
mod oauth;
mod publish;
mod remote;
mod socket;
mod toolbox;
mod url;

pub use oauth::CALLBACK_PATH;
pub use url::{connect_url, http_url, HTTP_PATH};

use fanout::Encoders;
use inbound::Inbound;
use publish::Unlogged;
use socket::{Allowance, ClientTool, SocketInfo};
use url::Connect;

use crate::limiter::Window;
use crate::mcp::{catalog, McpSettings};
use crate::relay::{self, Links};
use crate::settings::Settings;
use crate::store::Store;

#[durable_object]
pub struct Session {
    state: State,
    settings: Settings,
    /// The operator's MCP servers (`MCP_SERVERS`) and their limits.
    mcp: McpSettings,
    /// What the session knows of each MCP server, read from storage once per wake-up
    /// (session/mcp.rs).
    mcp_entries: RefCell<Option<BTreeMap<String, catalog::Entry>>>,
    /// The MCP servers this session's clients added, read from storage once per wake-up
    /// (session/mcp.rs).
    mcp_client_servers: RefCell<Option<Vec<crate::mcp::ServerSettings>>>,
    store: RefCell<Option<Store>>,
    /// The active run, loaded lazily from its checkpoint after a wake-up.
    run: RefCell<Option<Run>>,
    /// The active run's thread with its remote agent (remote.rs), between the calls of a run
    /// that waits for the page (stored too: remote.rs reads it back after a restart).
    remote: RefCell<Option<weft_protocol::dialect::agui::Thread>>,
    /// Effects the engine asked for that are not carried out yet.
    pending: RefCell<VecDeque<Effect>>,
    /// A run is being driven (an await is in flight).
    driving: Cell<bool>,
    /// `cancel` arrived while an LLM stream was in flight.
    cancel: Cell<bool>,
    /// Wakes the drive loop while it waits on model calls: an effect was queued, or a cancel.
    waker: RefCell<Option<Waker>>,
    /// What waits for the drive loop to stop (drive.rs).
    stops: drive::Stops,
    /// The encoder of each (run, kind of socket) streaming now (fanout.rs).
    encoders: RefCell<Encoders>,
    /// Streamed deltas sent but not yet logged, with when the oldest was sent (publish.rs).
    unlogged: RefCell<Unlogged>,
    /// The HTTP requests streaming this session's run (http.rs).
    streams: RefCell<Vec<http::Stream>>,
    env: Env,
    /// Links to the other sessions messages on this object's sockets named (relay.rs).
    links: Links,
    /// Frames from all sockets this minute (`SESSION_FRAMES_PER_MINUTE`).
    frames: Cell<Window>,
    /// Runs started this minute (`SESSION_RUNS_PER_MINUTE`).
    runs: Cell<Window>,
    /// This session's `SESSIONS_PER_MINUTE` check while it is new and asked (limits.rs).
    creating: limits::Creating,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("settings", &self.settings)
            .field("driving", &self.driving.get())
            .finish_non_exhaustive()
    }
}

impl DurableObject for Session {
    fn new(state: State, env: Env) -> Self {
        let mcp = McpSettings::from_env(&env);
        for problem in mcp.problems() {
            worker::console_error!("weft: {problem}");
        }
        Session {
            settings: Settings::from_env(&env),
            mcp,
            mcp_entries: RefCell::new(None),
            mcp_client_servers: RefCell::new(None),
            state,
            store: RefCell::new(None),
            run: RefCell::new(None),
            remote: RefCell::new(None),
            pending: RefCell::new(VecDeque::new()),
            driving: Cell::new(false),
            cancel: Cell::new(false),
            waker: RefCell::new(None),
            stops: drive::Stops::default(),
            encoders: RefCell::new(Encoders::default()),
            unlogged: RefCell::new(Unlogged::default()),
            streams: RefCell::new(Vec::new()),
            env,
            links: Links::default(),
            frames: Cell::new(Window::default()),
            runs: Cell::new(Window::default()),
            creating: limits::Creating::default(),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        if req.path() == HTTP_PATH {
            return self.http(req).await;
        }
        if req.path() == CALLBACK_PATH {
            return self.mcp_callback(&req.inner().url()).await;
        }
        let url = req.inner().url();
        let connect = match Connect::parse(&url) {
            Ok(connect) => connect,
            // Never open a limited socket as an unlimited one.
            Err(why) => return Response::error(why, 500),
        };
        let protocol = connect.protocol.as_deref();
        if let Err(why) = self.admit(&connect.client).await {
            if connect.link {
                return Response::error(why, 429);
            }
            // Accepted, then closed, so that a browser sees the reason (as for 4003).
            let pair = WebSocketPair::new()?;
            pair.server.accept()?;
            pair.server.close(Some(limits::CLOSE_LIMITED), Some(why))?;
            return crate::with_protocol(Response::from_websocket(pair.client)?, protocol);
        }
        let pair = WebSocketPair::new()?;
        self.state.accept_web_socket(&pair.server);
        // Unreadable, the socket follows every run: one streaming now reaches it mid-way, and
        // the client, seeing the gap, resumes it.
        let active = match self.store().active_run() {
            Ok(row) => row.map(|r| r.run_id),
            Err(e) => {
                self.log_unreadable("the active run of a joining socket", &e);
                None
            }
        };
        let info = SocketInfo {
            grant: connect.grant.clone(),
            client: connect.client.clone(),
            not_following: active.into_iter().collect(),
            ..SocketInfo::new(connect.dialect, connect.session.clone(), connect.weft)
        };
        pair.server.serialize_attachment(&info)?;
        crate::with_protocol(Response::from_websocket(pair.client)?, protocol)
    }

    async fn websocket_message(
        &self,
        ws: WebSocket,
        message: WebSocketIncomingMessage,
    ) -> Result<()> {
        let Some(mut info) = self.attachment(&ws) else {
            return Ok(());
        };
        let bytes = match message {
            WebSocketIncomingMessage::String(s) => s.into_bytes(),
            WebSocketIncomingMessage::Binary(b) => b,
        };
        if self.rate_limited(&ws, &mut info) || self.session_rate_limited(&ws, &info) {
            return Ok(());
        }
        // A run interrupted by a restart continues at once (in the alarm, so this message
        // does not wait for it).
        self.wake_orphan().await;
        self.touch().await;
        let limits = Limits {
            max_frame_bytes: self.settings.max_frame_bytes,
        };
        let home = self.session_id(&info);
        let (inbound, changed) = inbound::read(&mut info, &home, &bytes, limits);
        if changed {
            self.remember(&ws, &info);
        }
        match inbound {
            Inbound::Refuse(error) => self.reply(&ws, &info, error),
            Inbound::Declared => self.links.broadcast(&ws, &bytes),
            Inbound::Here(command) => self.command(&ws, &mut info, command).await,
            Inbound::There(session) => {
                let client = relay::Client {
                    socket: &ws,
                    dialect: info.dialect,
                    weft: info.weft,
                    tools: info.declared_tools(),
                    grant: info.grant.as_ref(),
                    client: &info.client,
                };
                if let Err(message) = self.links.send(&self.env, client, &session, bytes).await {
                    let error = error_event(&message, "session_unreachable", None);
                    self.reply(&ws, &info, error);
                }
            }
        }
        Ok(())
    }

    async fn websocket_close(
        &self,
        ws: WebSocket,
        code: usize,
        reason: String,
        _was_clean: bool,
    ) -> Result<()> {
        self.links.close_all(&ws);
        if let Some(info) = self.attachment(&ws) {
            self.orphan_client_calls(&ws, &info).await;
        }
        // Echoing 1005/1006/1015 throws (TOOLCHAIN.md): close normally instead. A disconnect
        // never cancels a run.
        let code = match code {
            1005 | 1006 | 1015 => 1000,
            c => c as u16,
        };
        if let Err(e) = ws.close(Some(code), Some(reason)) {
            // Already closed on the other side: nothing is lost.
            worker::console_warn!("closing a socket: {e}");
        }
        Ok(())
    }

    async fn websocket_error(&self, ws: WebSocket, _error: worker::Error) -> Result<()> {
        self.links.close_all(&ws);
        Ok(())
    }

    /// See alarm.rs.
    async fn alarm(&self) -> Result<Response> {
        self.on_alarm().await;
        Response::ok("")
    }
}

impl Session {
    /// The storage, opened (its tables created) on first use after a wake-up.
    fn store(&self) -> Store {
        if let Some(s) = self.store.borrow().as_ref() {
            return s.clone();
        }
        let store = Store::open(self.state.storage().sql());
        *self.store.borrow_mut() = Some(store.clone());
        store
    }

    fn session_id(&self, info: &SocketInfo) -> String {
        info.session_or(|| self.state.id().to_string())
    }

    /// A socket's attachment. One that cannot be read (none is written that way) leaves the
    /// socket unserved, as one without an attachment: the log says why.
    fn attachment(&self, ws: &WebSocket) -> Option<SocketInfo> {
        match ws.deserialize_attachment::<SocketInfo>() {
            Ok(info) => info,
            Err(e) => {
                worker::console_error!("socket attachment unreadable: {e}");
                None
            }
        }
    }

    /// Counts frames per socket per minute; over the limit, the frame is answered with an
    /// error (once a minute) and dropped. Other sockets and sessions are unaffected.
    fn rate_limited(&self, ws: &WebSocket, info: &mut SocketInfo) -> bool {
        let allowance = info.take_frame(js_sys::Date::now(), self.settings.rate_limit_per_minute);
        self.remember(ws, info);
        match allowance {
            Allowance::Within => false,
            Allowance::JustOver => {
                let error = error_event("too many messages: slow down", "rate_limited", None);
                self.reply(ws, info, error);
                true
            }
            Allowance::Over => true,
        }
    }

    /// Sends a reply (not part of a run) to one socket, in its dialect.
    fn reply(&self, ws: &WebSocket, info: &SocketInfo, event: Event) {
        let salt = (js_sys::Math::random() * 9_007_199_254_740_992.0) as u64;
        for frame in info.reply_frames(event, salt) {
            if let Err(e) = ws.send_with_str(frame) {
                // The socket is closing; its close handler cleans up after it.
                worker::console_warn!("reply not sent: {e}");
            }
        }
    }

    /// Stores the socket's attachment (it outlives hibernation).
    fn remember(&self, ws: &WebSocket, info: &SocketInfo) {
        if let Err(e) = ws.serialize_attachment(info) {
            worker::console_error!("socket state not saved: {e}");
        }
    }

    fn sockets(&self) -> Vec<(WebSocket, SocketInfo)> {
        self.state
            .get_websockets()
            .into_iter()
            .filter_map(|ws| {
                let info = self.attachment(&ws)?;
                Some((ws, info))
            })
            .collect()
    }

    /// A socket that ran client-side tools is gone: calls of those tools that no other socket
    /// of the session can run get an error result, so the model hears why and the run goes on
    /// instead of waiting forever.
    async fn orphan_client_calls(&self, closing: &WebSocket, info: &SocketInfo) {
        if info.tools.is_empty() || !self.load_active_run() {
            return;
        }
        let others: Vec<SocketInfo> = self
            .sockets()
            .into_iter()
            .filter(|(ws, _)| ws != closing)
            .map(|(_, i)| i)
            .collect();
        let orphaned = match self.run.borrow().as_ref() {
            Some(run) => toolbox::orphaned_calls(run.running_calls(), &info.tools, |name| {
                others.iter().any(|o| o.runs_tool(name))
            }),
            None => return,
        };
        if orphaned.is_empty() {
            return;
        }
        for (call_id, name) in orphaned {
            self.handle(Input::ToolResult {
                call_id,
                result: format!("the client that runs {name} disconnected before answering"),
                is_error: true,
            });
        }
        self.drive().await;
    }

    /// [`Session::running`] where an unreadable run state is logged and counts as a run on:
    /// what waits for "idle" (a new run, a session's deletion) then waits, where reading it as
    /// idle could start a second run beside the stored one.
    fn busy(&self) -> bool {
        self.running().unwrap_or_else(|e| {
            self.log_unreadable("whether a run is on", &e);
            true
        })
    }

    /// The tools a run may call now: the built-in ones, the MCP servers', then the sockets'
    /// and the pages'.
    fn tool_infos(&self) -> Vec<ToolInfo> {
        let mcp_tools = self
            .mcp_tools()
            .iter()
            .map(catalog::McpTool::info)
            .collect();
        let page_tools: Vec<ClientTool> = self
            .streams
            .borrow()
            .iter()
            .flat_map(|s| s.tools.iter().cloned().map(ClientTool::from))
            .collect();
        let socket_tools = self.sockets().into_iter().flat_map(|(_, info)| info.tools);
        toolbox::tool_infos(mcp_tools, socket_tools.chain(page_tools))
    }

    fn tool_specs(&self) -> Vec<ToolSpec> {
        toolbox::tool_specs(self.tool_infos())
    }
}

fn error_event(message: &str, code: &str, id: Option<String>) -> Event {
    Event::Error {
        message: message.into(),
        code: Some(code.into()),
        id,
        details: None,
    }
}

/// The run's reply, for the history listing: its last assistant message with text.
fn last_reply(state: &engine::Session) -> Option<String> {
    state.history.iter().rev().find_map(|m| match m {
        weft_agent::provider::ChatMessage::Assistant { content, .. } if !content.is_empty() => {
            Some(content.clone())
        }
        _ => None,
    })
}

/// A random UUID v4 from the runtime's `crypto.randomUUID()`. A runtime that cannot give one
/// is an error the caller reports: an id made up from `Math.random` instead could repeat.
pub fn uuid() -> Result<String, String> {
    let global = js_sys::global();
    js_sys::Reflect::get(&global, &"crypto".into())
        .and_then(|crypto| {
            let f = js_sys::Reflect::get(&crypto, &"randomUUID".into())?;
            js_sys::Function::from(f).call0(&crypto)
        })
        .map_err(|e| format!("crypto.randomUUID() failed: {e:?}"))?
        .as_string()
        .ok_or_else(|| "crypto.randomUUID() gave no string".to_string())
}
