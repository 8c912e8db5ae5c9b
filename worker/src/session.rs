//! The Session Durable Object: one per session, holding its sockets (hibernatable), its SQLite
//! storage, and at most one active run, driven through the agent engine's effects.
//!
//! Its sockets are the clients that connected to it and the links other sessions' objects
//! opened to it for messages that named this session (relay.rs); both are served alike. Each
//! socket's frames come from an encoder for its dialect and its opt-in to weft's extensions,
//! so original clients and weft clients of one dialect each get a dense numbering of their
//! own. Approvals go to the sockets that can answer them; with none, or with nobody answering
//! within `APPROVAL_TIMEOUT_MS` (the object's alarm), the call is refused and the run goes on.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::task::{Poll, Waker};
use std::time::Duration;

use futures_util::future::LocalBoxFuture;
use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_bindgen::JsCast;
use weft_agent::engine::{self, Effect, Input, Output, Run, Start, ToolInfo};
use weft_agent::provider::{ProviderError, ToolDef};
use weft_agent::tools::{self, ToolHost, ToolRun, Workspace};
use weft_protocol::command::{ApprovalDecision, ClientTools, Command, RunCommand};
use weft_protocol::event::ToolSpec;
use weft_protocol::{Agent, Dialect, Encoder, Event, Limits, Sequenced};
use worker::{
    durable_object, DurableObject, Env, Fetch, Request, Response, Result, State, WebSocket,
    WebSocketIncomingMessage, WebSocketPair,
};

use crate::batch::{Batching, Step, QUIET_GAP_MS};
use crate::relay::{self, Links, Route};
use crate::settings::Settings;
use crate::store::{SqlWorkspace, Store};

/// What the DO remembers about each socket across hibernation (its attachment).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct SocketInfo {
    dialect: String,
    session_id: String,
    /// Whether the client offered `weft.<dialect>`: it gets weft's extensions, and may answer
    /// approvals in any dialect. Without it, only what the dialect's documents define
    /// (`Encoder::original`).
    #[serde(default)]
    weft: bool,
    /// The session a message that names none goes to: the last one a message on this socket
    /// named (see relay.rs); `None` is the socket's own.
    #[serde(default)]
    current: Option<String>,
    /// Whether this socket said it answers approval requests (`client_tools` with
    /// `approvals: true`).
    approvals: bool,
    /// Tools this socket runs itself.
    tools: Vec<ClientTool>,
    /// Rate limiting: the current window's start (ms) and frames seen in it.
    window_start: f64,
    window_frames: u32,
    /// Runs that were already streaming when this socket connected: it gets their frames only
    /// once it resumes them, so a reconnecting client sees the missing frames, then the live
    /// ones, each once and in order.
    #[serde(default)]
    not_following: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct ClientTool {
    name: String,
    description: Option<String>,
    input_schema: Value,
    read_only: bool,
}

impl SocketInfo {
    fn dialect(&self) -> Dialect {
        Dialect::parse(&self.dialect).unwrap_or(Dialect::Loom)
    }
    /// specs/README, "Approvals": a socket whose protocol lets it answer.
    fn can_approve(&self) -> bool {
        self.weft || self.approvals || self.dialect().documents_approvals()
    }
    fn encoder(&self) -> Encoder {
        Encoder::for_socket(self.dialect(), salt(), self.weft)
    }
}

/// The Session Durable Object.
#[durable_object]
pub struct Session {
    state: State,
    settings: Settings,
    store: RefCell<Option<Store>>,
    /// The active run, loaded lazily from its checkpoint after a wake-up.
    run: RefCell<Option<Run>>,
    /// Effects the engine asked for that are not carried out yet.
    pending: RefCell<VecDeque<Effect>>,
    /// A run is being driven (an await is in flight).
    driving: Cell<bool>,
    /// `cancel` arrived while an LLM stream was in flight.
    cancel: Cell<bool>,
    /// Wakes the drive loop while it waits on model calls: an effect was queued, or a cancel.
    waker: RefCell<Option<Waker>>,
    /// The encoder of each (run, dialect, opt-in) streaming now, with the last event id it
    /// encoded.
    encoders: RefCell<Vec<LiveEncoder>>,
    env: Env,
    /// Links to the other sessions messages on this object's sockets named (relay.rs).
    links: Links,
}

/// One run's frames in one dialect, as they go out (see [`Session::encode_live`]).
#[derive(Debug)]
struct LiveEncoder {
    run_id: String,
    dialect: Dialect,
    weft: bool,
    last: u64,
    encoder: Encoder,
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
        Session {
            settings: Settings::from_env(&env),
            state,
            store: RefCell::new(None),
            run: RefCell::new(None),
            pending: RefCell::new(VecDeque::new()),
            driving: Cell::new(false),
            cancel: Cell::new(false),
            waker: RefCell::new(None),
            encoders: RefCell::new(Vec::new()),
            env,
            links: Links::default(),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        let url = req.inner().url();
        let dialect = crate::query::get(&url, "dialect")
            .and_then(|d| Dialect::parse(&d))
            .unwrap_or(Dialect::Loom);
        let session_id = crate::query::get(&url, "session").unwrap_or_default();
        let protocol = crate::query::get(&url, "protocol");
        let weft = crate::query::get(&url, "weft").is_some_and(|w| w == "1");
        let pair = WebSocketPair::new()?;
        self.state.accept_web_socket(&pair.server);
        let active = self.store().active_run().ok().flatten().map(|r| r.run_id);
        let info = SocketInfo {
            dialect: dialect.as_str().into(),
            session_id,
            weft,
            not_following: active.into_iter().collect(),
            ..SocketInfo::default()
        };
        pair.server.serialize_attachment(&info)?;
        crate::with_protocol(Response::from_websocket(pair.client)?, protocol.as_deref())
    }

    async fn websocket_message(
        &self,
        ws: WebSocket,
        message: WebSocketIncomingMessage,
    ) -> Result<()> {
        let Some(mut info) = ws.deserialize_attachment::<SocketInfo>().ok().flatten() else {
            return Ok(());
        };
        let bytes = match message {
            WebSocketIncomingMessage::String(s) => s.into_bytes(),
            WebSocketIncomingMessage::Binary(b) => b,
        };
        if self.rate_limited(&ws, &mut info) {
            return Ok(());
        }
        // A run interrupted by a restart continues as soon as anyone talks to the session.
        self.resume_orphaned_run().await;
        let limits = Limits {
            max_frame_bytes: self.settings.max_frame_bytes,
        };
        let command = match info.dialect().decode_request(&bytes, limits) {
            Ok(command) => command,
            Err(e) => {
                let message = info.dialect().error_text(&e);
                self.reply(&ws, &info, error_event(&message, e.code(), None));
                return Ok(());
            }
        };
        if !info.weft
            && matches!(command, Command::Ping { .. })
            && !info.dialect().original_serves(&command)
        {
            // ping is a weft extension outside loom, and its pong an extension frame: a client
            // of the original protocol gets what the original server says to an unknown type.
            let unknown = weft_protocol::Error::UnknownType {
                dialect: info.dialect(),
                kind: "ping".into(),
            };
            let message = info.dialect().error_text(&unknown);
            self.reply(&ws, &info, error_event(&message, unknown.code(), None));
            return Ok(());
        }
        let home = self.session_id(&info);
        let route = match relay::route(&home, info.current.as_deref(), &command) {
            Ok(route) => route,
            Err(message) => {
                self.reply(&ws, &info, error_event(&message, "invalid_request", None));
                return Ok(());
            }
        };
        if let Some(named) = command.session() {
            let current = (named != home).then(|| named.to_string());
            if info.current != current {
                info.current = current;
                self.remember(&ws, &info);
            }
        }
        if let Command::ClientTools(tools) = command {
            // Declared on this socket, and to every session it reaches through a link (a link
            // opened later declares them first).
            self.links.broadcast(&ws, &bytes);
            info.approvals |= tools.approvals;
            info.tools = tools.tools.into_iter().map(client_tool).collect();
            self.remember(&ws, &info);
            return Ok(());
        }
        match route {
            Route::Here => self.command(&ws, &mut info, command).await,
            Route::There(session) => {
                let client = relay::Client {
                    socket: &ws,
                    dialect: info.dialect(),
                    weft: info.weft,
                    tools: declared_tools(&info),
                };
                if let Err(message) = self.links.send(&self.env, client, &session, bytes).await {
                    self.reply(
                        &ws,
                        &info,
                        error_event(&message, "session_unreachable", None),
                    );
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
        if let Some(info) = ws.deserialize_attachment::<SocketInfo>().ok().flatten() {
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

    /// An approval nobody answered within `APPROVAL_TIMEOUT_MS` is refused, so the run goes on
    /// and the session is never left busy by it.
    async fn alarm(&self) -> Result<Response> {
        if self.load_active_run() {
            let timeout = self.settings.approval_timeout_ms as i64;
            let now = js_sys::Date::now() as i64;
            let expired: Vec<(String, String)> = match self.run.borrow().as_ref() {
                Some(run) => run
                    .waiting_approvals()
                    .filter(|(_, _, at)| at.is_none_or(|at| at + timeout <= now))
                    .map(|(id, name, _)| (id.to_string(), name.to_string()))
                    .collect(),
                None => Vec::new(),
            };
            for (call_id, name) in expired {
                let secs = timeout / 1000;
                self.handle(Input::Refuse {
                    call_id,
                    reason: format!("nobody answered the approval of {name} within {secs} s"),
                });
            }
            self.drive().await;
            self.arm_approval_alarm().await;
        }
        Response::ok("")
    }
}

impl Session {
    fn store(&self) -> Store {
        if let Some(s) = self.store.borrow().as_ref() {
            return s.clone();
        }
        let store = Store::open(self.state.storage().sql());
        *self.store.borrow_mut() = Some(store.clone());
        store
    }

    fn session_id(&self, info: &SocketInfo) -> String {
        if info.session_id.is_empty() {
            self.state.id().to_string()
        } else {
            info.session_id.clone()
        }
    }

    /// Counts frames per socket per minute; over the limit, the frame is answered with an
    /// error and dropped. Other sockets and sessions are unaffected.
    fn rate_limited(&self, ws: &WebSocket, info: &mut SocketInfo) -> bool {
        let now = js_sys::Date::now();
        if now - info.window_start > 60_000.0 {
            info.window_start = now;
            info.window_frames = 0;
        }
        info.window_frames += 1;
        self.remember(ws, info);
        if info.window_frames > self.settings.rate_limit_per_minute {
            if info.window_frames == self.settings.rate_limit_per_minute + 1 {
                self.reply(
                    ws,
                    info,
                    error_event("too many messages: slow down", "rate_limited", None),
                );
            }
            return true;
        }
        false
    }

    /// Sends a reply (not part of a run) to one socket, in its dialect. Its salt is fresh, so
    /// every agentloop reply has an `id` of its own.
    fn reply(&self, ws: &WebSocket, info: &SocketInfo, event: Event) {
        let salt = (js_sys::Math::random() * 9_007_199_254_740_992.0) as u64;
        let mut encoder = Encoder::for_socket(info.dialect(), salt, info.weft);
        for frame in encoder.encode(&Sequenced::bare(event)) {
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
                let info = ws.deserialize_attachment::<SocketInfo>().ok().flatten()?;
                Some((ws, info))
            })
            .collect()
    }

    async fn command(&self, ws: &WebSocket, info: &mut SocketInfo, command: Command) {
        match command {
            Command::Ping { id } => self.reply(ws, info, Event::Pong { id }),
            Command::Run(run) => self.start_run(ws, info, run).await,
            Command::ApprovalResponse(decision) => self.approve(ws, info, decision).await,
            Command::ToolResult(result) => {
                let input = Input::ToolResult {
                    call_id: result.call_id,
                    result: result.result,
                    is_error: result.is_error,
                };
                self.feed(ws, info, input).await;
            }
            Command::Resume(resume) => {
                info.not_following.retain(|r| *r != resume.run_id);
                self.remember(ws, info);
                self.resume(ws, info, &resume.run_id, resume.after_event_id);
            }
            Command::Cancel { run_id } => self.cancel(ws, info, &run_id).await,
            Command::ToolsList(q) => {
                let tools = self.tool_specs();
                self.reply(ws, info, Event::ToolsList { id: q.id, tools });
            }
            Command::ToolShow(q) => {
                let spec = self.tool_specs().into_iter().find(|t| t.name == q.name);
                let event = match spec {
                    None => error_event(
                        &format!("tool not found: {}", q.name),
                        "tool_not_found",
                        Some(q.id),
                    ),
                    Some(spec) => match q.output {
                        Some(weft_protocol::command::ToolFormat::Json) => Event::ToolShow {
                            id: q.id,
                            tool: Some(tools::spec_json(&spec)),
                            tool_yaml: None,
                        },
                        _ => Event::ToolShow {
                            id: q.id,
                            tool: None,
                            tool_yaml: Some(tools::spec_yaml(&spec)),
                        },
                    },
                };
                self.reply(ws, info, event);
            }
            Command::UserMessages(q) => {
                // relay.rs routed it here: its thread is this session.
                let limit = q.limit.unwrap_or(100).clamp(1, 1000);
                let store = self.store();
                let event = match store.messages(q.before, limit) {
                    Ok((messages, has_more)) => Event::UserMessages {
                        id: q.id,
                        thread_id: q.thread_id,
                        messages,
                        has_more: Some(has_more),
                        active_run_id: store.active_run().ok().flatten().map(|r| r.run_id),
                    },
                    Err(e) => error_event(
                        &format!("could not read the history: {e}"),
                        "storage",
                        Some(q.id),
                    ),
                };
                self.reply(ws, info, event);
            }
            Command::ContextInfo { .. } => {
                let state = self.store().session_state().unwrap_or_default();
                let defs: Vec<ToolDef> = self.tool_infos().into_iter().map(|t| t.def).collect();
                let config = self.settings.engine_config();
                let tokens =
                    engine::context::estimate(&config.system_prompt, &state.history, &defs);
                self.reply(
                    ws,
                    info,
                    Event::ContextInfo {
                        token_count: tokens,
                        usage_percent: engine::context::percent(tokens, config.context_window),
                        transcript_length: state.history.len() as u64,
                        max_tokens: config.context_window,
                        strategy: engine::context::STRATEGY.into(),
                    },
                );
            }
            Command::Compact { id } => {
                if self
                    .store()
                    .session_state()
                    .unwrap_or_default()
                    .history
                    .is_empty()
                {
                    // specs/README (agentloop): the error alone, no run around it.
                    let msg = "Cannot compact empty transcript";
                    return self.reply(ws, info, error_event(msg, "empty_transcript", id));
                }
                if self.busy() {
                    self.reply(
                        ws,
                        info,
                        error_event("a run is in progress; compact after it ends", "busy", None),
                    );
                    return;
                }
                let state = self.store().session_state().unwrap_or_default();
                let run_id = format!("compact-{}", uuid());
                let run = Run::compact(
                    self.settings.engine_config(),
                    self.tool_infos(),
                    state,
                    &self.session_id(info),
                    &run_id,
                );
                *self.run.borrow_mut() = Some(run);
                self.drive().await;
            }
            _ => self.reply(
                ws,
                info,
                error_event("this request is not supported here", "unsupported", None),
            ),
        }
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
        let orphaned: Vec<(String, String)> = match self.run.borrow().as_ref() {
            Some(run) => run
                .running_calls()
                .into_iter()
                .filter(|(_, name)| info.tools.iter().any(|t| t.name == *name))
                .filter(|(_, name)| {
                    !others
                        .iter()
                        .any(|o| o.tools.iter().any(|t| t.name == *name))
                })
                .map(|(id, name)| (id.to_string(), name.to_string()))
                .collect(),
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

    fn busy(&self) -> bool {
        self.run.borrow().as_ref().is_some_and(|r| !r.is_finished())
            || self.store().active_run().ok().flatten().is_some()
    }

    fn tool_infos(&self) -> Vec<ToolInfo> {
        let mut infos: Vec<ToolInfo> = tools::builtin_specs()
            .into_iter()
            .map(|spec| ToolInfo {
                needs_approval: tools::needs_approval(&spec.name),
                def: def_of(&spec),
                client: false,
            })
            .collect();
        for (_, info) in self.sockets() {
            for t in info.tools {
                if infos.iter().any(|i| i.def.name == t.name) {
                    continue;
                }
                infos.push(ToolInfo {
                    def: ToolDef {
                        name: t.name.clone(),
                        description: t.description.clone().unwrap_or_default(),
                        input_schema: t.input_schema.clone(),
                    },
                    needs_approval: !t.read_only,
                    client: true,
                });
            }
        }
        infos
    }

    fn tool_specs(&self) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = self
            .tool_infos()
            .into_iter()
            .map(|i| ToolSpec {
                name: i.def.name,
                description: Some(i.def.description),
                input_schema: i.def.input_schema,
                read_only: !i.needs_approval,
            })
            .collect();
        specs.sort_by(|a, b| a.name.cmp(&b.name));
        specs
    }

    async fn start_run(&self, ws: &WebSocket, info: &SocketInfo, run: RunCommand) {
        // relay.rs routed it here: a thread it names is this session.
        let session_id = self.session_id(info);
        if let Agent::Unknown(name) = &run.agent {
            let msg = format!("unknown agent: {name} (react, dup, tot or got)");
            return self.reply(ws, info, error_event(&msg, "agent_unavailable", run.id));
        }
        if self.busy() {
            let active = self
                .store()
                .active_run()
                .ok()
                .flatten()
                .map(|r| r.run_id)
                .unwrap_or_default();
            let msg =
                format!("a run is already in progress ({active}): wait for it to end or cancel it");
            return self.reply(ws, info, error_event(&msg, "busy", run.id));
        }
        let run_id = run.id.clone().unwrap_or_else(|| format!("run-{}", uuid()));
        let store = self.store();
        if store.run(&run_id).ok().flatten().is_some() {
            let msg = format!("run id {run_id} was already used in this session");
            return self.reply(
                ws,
                info,
                error_event(&msg, "duplicate_run_id", Some(run_id)),
            );
        }
        let state = store.session_state().unwrap_or_default();
        let folder = match run
            .working_folder
            .as_deref()
            .map(str::trim)
            .filter(|f| !f.is_empty() && *f != "." && *f != "/")
        {
            None => None,
            Some(f) => match tools::normalize_path(f) {
                Ok(f) => Some(f),
                Err(e) => {
                    return self.reply(
                        ws,
                        info,
                        error_event(&format!("working_folder: {e}"), "invalid_request", run.id),
                    )
                }
            },
        };
        let mut config = self.settings.engine_config();
        // loom: a SOUL.md in the working folder sets the persona; else the built-in one.
        let soul = SqlWorkspace {
            store: &store,
            root: folder.clone().unwrap_or_default(),
        }
        .read("SOUL.md");
        if let Some(soul) = soul.filter(|s| !s.trim().is_empty()) {
            config.system_prompt = soul;
        }
        let start = Start {
            run_id: run_id.clone(),
            session_id,
            message: run.message.clone(),
            agent: run.agent,
            thread_id: run.thread_id.clone(),
            verbose: run.verbose.unwrap_or(false),
            working_folder: folder,
            got_adaptive: run.got_adaptive.unwrap_or(false),
        };
        let mut engine_run = Run::new(config, self.tool_infos(), state, &start);
        engine_run.set_clock(js_sys::Date::now() as i64);
        // A run that cannot be stored is not started: it could not be resumed or listed.
        let stored = store
            .add_message("user", &run.message, &run_id)
            .and_then(|()| {
                store.save_run(
                    &run_id,
                    "running",
                    &engine_run.checkpoint(),
                    js_sys::Date::now() as i64,
                )
            });
        if let Err(e) = stored {
            let msg = format!("could not store the run: {e}");
            return self.reply(ws, info, error_event(&msg, "storage", Some(run_id)));
        }
        engine_run.start();
        *self.run.borrow_mut() = Some(engine_run);
        self.drive().await;
    }

    /// Loads the active run from its checkpoint if it is not in memory (after hibernation or a
    /// restart). Returns whether there is one.
    fn load_active_run(&self) -> bool {
        if self.run.borrow().as_ref().is_some_and(|r| !r.is_finished()) {
            return true;
        }
        let store = self.store();
        let Some(row) = store.active_run().ok().flatten() else {
            return false;
        };
        let Ok(mut run) = Run::restore(&row.checkpoint) else {
            return false;
        };
        let last = store.last_event_id(&row.run_id).unwrap_or(0);
        run.resume(last);
        *self.run.borrow_mut() = Some(run);
        true
    }

    async fn resume_orphaned_run(&self) {
        if !self.driving.get() && self.run.borrow().is_none() && self.load_active_run() {
            self.drive().await;
        }
    }

    async fn approve(&self, ws: &WebSocket, info: &SocketInfo, decision: ApprovalDecision) {
        if !info.can_approve() {
            return self.reply(
                ws,
                info,
                error_event(
                    "this socket cannot approve: send client_tools with approvals: true first",
                    "not_allowed",
                    None,
                ),
            );
        }
        let pending = self.load_active_run()
            && self
                .run
                .borrow()
                .as_ref()
                .is_some_and(|r| r.waiting_approvals().next().is_some());
        if !pending {
            let msg = info.dialect().no_pending_approval_text();
            return self.reply(ws, info, error_event(msg, "no_pending_approval", None));
        }
        self.feed(ws, info, Input::Approval(decision)).await;
    }

    /// Feeds an input to the active run and drives it; a refused input (forged or stale call
    /// id, nothing pending) is answered with an error and changes nothing.
    async fn feed(&self, ws: &WebSocket, info: &SocketInfo, input: Input) {
        if !self.load_active_run() {
            return self.reply(
                ws,
                info,
                error_event("no run is waiting for that", "no_active_run", None),
            );
        }
        let result = match self.run.borrow_mut().as_mut() {
            Some(run) => {
                run.set_clock(js_sys::Date::now() as i64);
                run.handle(input)
            }
            None => return,
        };
        if let Err(e) = result {
            return self.reply(ws, info, error_event(&e.to_string(), "stale", None));
        }
        self.drive().await;
    }

    async fn cancel(&self, ws: &WebSocket, info: &SocketInfo, run_id: &str) {
        let active = self.load_active_run()
            && self
                .run
                .borrow()
                .as_ref()
                .is_some_and(|r| r.run_id() == run_id);
        if !active {
            let msg = format!("no active run {run_id} in this session");
            return self.reply(ws, info, error_event(&msg, "no_active_run", None));
        }
        if self.driving.get() {
            // The drive loop is waiting (on model streams, a tool): it cancels when it wakes.
            self.cancel.set(true);
            self.wake();
            return;
        }
        self.feed(ws, info, Input::Cancel).await;
    }

    /// Replays a run's frames after `after` in this socket's dialect; live frames follow as
    /// they are published (the replay is synchronous, so nothing slips in between).
    fn resume(&self, ws: &WebSocket, info: &SocketInfo, run_id: &str, after: u64) {
        let store = self.store();
        if store.run(run_id).ok().flatten().is_none() {
            let msg = format!("unknown run {run_id} in this session");
            return self.reply(
                ws,
                info,
                error_event(&msg, "unknown_run", Some(run_id.into())),
            );
        }
        let mut encoder = info.encoder();
        for json in store.events(run_id).unwrap_or_default() {
            let Some(ev) = decode_logged(run_id, &json) else {
                continue;
            };
            for frame in encoder.encode(&ev) {
                if encoder.frames_sent() > after {
                    if let Err(e) = ws.send_with_str(frame) {
                        // The socket closed mid-replay: it resumes again when it returns.
                        worker::console_warn!("resume of {run_id} cut short: {e}");
                        return;
                    }
                }
            }
        }
    }

    // --- driving a run -------------------------------------------------------------------

    /// Carries out the active run's events and effects until it waits for something outside.
    ///
    /// Model calls run concurrently: a GoT run may have several outstanding (one per running
    /// sub-task, at most `got_max_parallel`), each a future in `calls`, feeding its stream into
    /// the run under its own call id. The other effects are carried out one at a time, in
    /// order, between polls of the calls; a call's input or a socket's (an approval, a client
    /// tool's result) that queues an effect wakes the loop. Once the run is over, calls still
    /// streaming are dropped, so nothing of it reaches a later run.
    async fn drive(&self) {
        if self.driving.replace(true) {
            return; // the loop already running picks up the new outputs
        }
        let mut calls: FuturesUnordered<LocalBoxFuture<'_, ()>> = FuturesUnordered::new();
        loop {
            self.drain_run();
            if self.cancel.replace(false) {
                self.handle(Input::Cancel);
            }
            if self.run.borrow().as_ref().is_none_or(Run::is_finished) && !calls.is_empty() {
                calls = FuturesUnordered::new();
            }
            let next = self.pending.borrow_mut().pop_front();
            if let Some(effect) = next {
                match effect {
                    Effect::CallLlm { call, request } => {
                        calls.push(self.call_llm(call, request).boxed_local());
                    }
                    other => self.effect(other).await,
                }
                continue;
            }
            if calls.is_empty() {
                break;
            }
            let queued = futures_util::future::poll_fn(|cx| {
                if !self.pending.borrow().is_empty() || self.cancel.get() {
                    return Poll::Ready(());
                }
                *self.waker.borrow_mut() = Some(cx.waker().clone());
                Poll::Pending
            });
            futures_util::future::select(calls.next(), queued).await;
        }
        self.driving.set(false);
    }

    fn wake(&self) {
        let waker = self.waker.borrow_mut().take();
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Publishes the run's queued events (as one batch) and queues its effects.
    fn drain_run(&self) {
        let mut events = Vec::new();
        loop {
            let out = self.run.borrow_mut().as_mut().and_then(Run::poll);
            match out {
                Some(Output::Event(ev)) => events.push(ev),
                Some(Output::Effect(e)) => {
                    self.pending.borrow_mut().push_back(e);
                    self.wake();
                }
                None => break,
            }
        }
        self.publish(&events);
    }

    /// Feeds the active run and publishes what it produced; false when it refused the input
    /// (for a model stream: stop reading, the run no longer waits for that call).
    fn handle(&self, input: Input) -> bool {
        let accepted = self.feed_run(input);
        self.drain_run();
        accepted
    }

    /// Feeds the active run without publishing: a model read feeds all its deltas, then
    /// publishes their events together.
    fn feed_run(&self, input: Input) -> bool {
        match self.run.borrow_mut().as_mut() {
            Some(run) => {
                run.set_clock(js_sys::Date::now() as i64);
                run.handle(input).is_ok()
            }
            None => false,
        }
    }

    async fn effect(&self, effect: Effect) {
        match effect {
            Effect::CallLlm { call, request } => self.call_llm(call, request).await,
            Effect::RunTool {
                call_id,
                name,
                arguments,
                client,
            } => {
                if client {
                    // The socket that declared it saw the tool_call event and answers with
                    // tool_result; if it is gone, the model is told.
                    let present = self
                        .sockets()
                        .iter()
                        .any(|(_, i)| i.tools.iter().any(|t| t.name == name));
                    if !present {
                        self.handle(Input::ToolResult {
                            call_id,
                            result: format!("the client that runs {name} is not connected"),
                            is_error: true,
                        });
                    }
                    return;
                }
                let outcome = {
                    let store = self.store();
                    let root = self
                        .run
                        .borrow()
                        .as_ref()
                        .and_then(|r| r.working_folder().map(String::from))
                        .unwrap_or_default();
                    let mut host = Host {
                        workspace: SqlWorkspace {
                            store: &store,
                            root,
                        },
                    };
                    tools::run_builtin(&name, &arguments, &mut host)
                };
                let (result, is_error) = match outcome {
                    ToolRun::Done { result, is_error } => (result, is_error),
                    ToolRun::Fetch { url, max_bytes, .. } => web_fetch(&url, max_bytes).await,
                };
                self.handle(Input::ToolResult {
                    call_id,
                    result,
                    is_error,
                });
            }
            Effect::AwaitApproval { call_id } => {
                if !self.sockets().iter().any(|(_, i)| i.can_approve()) {
                    // Nobody can answer: refuse at once so no client is left hanging and
                    // nothing mutating runs behind anyone's back (specs/README, "Approvals").
                    let name = self
                        .run
                        .borrow()
                        .as_ref()
                        .and_then(|r| {
                            r.waiting_approvals()
                                .find(|(id, _, _)| *id == call_id)
                                .map(|(_, name, _)| name.to_string())
                        })
                        .unwrap_or_else(|| "this tool".into());
                    self.handle(Input::Refuse {
                        call_id,
                        reason: format!("no connected client can approve {name}"),
                    });
                } else {
                    self.arm_approval_alarm().await;
                }
            }
            Effect::Checkpoint => self.checkpoint("running"),
            Effect::Finished => {
                self.checkpoint("done");
                let run = self.run.borrow_mut().take();
                if let Some(run) = run {
                    let store = self.store();
                    // The run's frames went out and are logged; what failed here is the
                    // session's memory of it, which the log line names.
                    if let Err(e) = store.save_session_state(run.session()) {
                        worker::console_error!(
                            "run {}: session state not saved: {e}",
                            run.run_id()
                        );
                    }
                    if let Some(reply) = last_reply(run.session()) {
                        if let Err(e) = store.add_message("assistant", &reply, run.run_id()) {
                            worker::console_error!(
                                "run {}: reply not added to the history: {e}",
                                run.run_id()
                            );
                        }
                    }
                }
            }
        }
    }

    /// Sets the alarm for the first waiting approval's deadline (`APPROVAL_TIMEOUT_MS` after
    /// it was asked), or clears it when nothing waits.
    async fn arm_approval_alarm(&self) {
        let timeout = self.settings.approval_timeout_ms as i64;
        let first = self
            .run
            .borrow()
            .as_ref()
            .and_then(|r| r.waiting_approvals().filter_map(|(_, _, at)| at).min());
        let storage = self.state.storage();
        let now = js_sys::Date::now() as i64;
        let set = match first {
            // An i64 is an offset from now for set_alarm.
            Some(at) => storage.set_alarm((at + timeout - now).max(1)).await,
            None => storage.delete_alarm().await,
        };
        if let Err(e) = set {
            worker::console_error!("approval deadline not set: {e}");
        }
    }

    fn checkpoint(&self, status: &str) {
        let cell = self.run.borrow();
        if let Some(run) = cell.as_ref() {
            let status = if run.is_finished() { "done" } else { status };
            let saved = self.store().save_run(
                run.run_id(),
                status,
                &run.checkpoint(),
                js_sys::Date::now() as i64,
            );
            if let Err(e) = saved {
                // The run goes on from memory; a restart would resume it from the last
                // checkpoint that was saved.
                worker::console_error!("run {}: checkpoint not saved: {e}", run.run_id());
            }
        }
    }

    /// Logs a batch of events, then sends them to every socket of the session in its own
    /// dialect. Each dialect's frames are encoded once, by one encoder per (run, dialect), so
    /// every socket of a dialect sees the same numbering.
    ///
    /// One batch is what one input produced (for a model stream: one read of its body), so the
    /// log takes one statement and the sockets are listed once per read, not per event.
    fn publish(&self, events: &[Sequenced]) {
        let logged: Vec<(&str, u64, String)> = events
            .iter()
            .filter_map(|ev| {
                let run_id = ev.envelope.run_id.as_deref()?;
                let json = serde_json::to_string(ev).ok()?;
                Some((run_id, ev.envelope.event_id.unwrap_or(0), json))
            })
            .collect();
        if logged.is_empty() {
            return;
        }
        let store = self.store();
        if let Err(e) = store.append_events(&logged) {
            // The frames still go out (the clients are waiting); a resume after this point
            // may miss them, which the log line records.
            worker::console_error!("event log write failed ({} events): {e}", logged.len());
        }
        let sockets = self.sockets();
        // One encoder per (dialect, opt-in): weft clients and original clients of one dialect
        // see different frames, each densely numbered.
        let mut kinds: Vec<(Dialect, bool)> =
            sockets.iter().map(|(_, i)| (i.dialect(), i.weft)).collect();
        kinds.sort();
        kinds.dedup();
        for ev in events {
            let Some(run_id) = ev.envelope.run_id.as_deref() else {
                continue;
            };
            for &(dialect, weft) in &kinds {
                let frames = self.encode_live(&store, run_id, (dialect, weft), ev);
                for (ws, info) in &sockets {
                    if (info.dialect(), info.weft) != (dialect, weft)
                        || info.not_following.iter().any(|r| r == run_id)
                    {
                        continue;
                    }
                    for frame in &frames {
                        if let Err(e) = ws.send_with_str(frame) {
                            // A socket that is closing; it resumes from the log if it returns.
                            worker::console_warn!("frame of {run_id} not sent: {e}");
                            break;
                        }
                    }
                }
            }
        }
    }

    /// Encodes the run's next event for one dialect, rebuilding the encoder from the log when
    /// it did not see the previous event (after a wake-up, or a dialect's first socket).
    ///
    /// The encoders are a list of the runs streaming now (a session has one run at a time,
    /// times the dialects of its sockets), looked up without building a key per event; a run's
    /// encoders are dropped with its last event, so a long session does not keep one per run
    /// it ever had.
    fn encode_live(
        &self,
        store: &Store,
        run_id: &str,
        (dialect, weft): (Dialect, bool),
        ev: &Sequenced,
    ) -> Vec<String> {
        let event_id = ev.envelope.event_id.unwrap_or(0);
        let mut encoders = self.encoders.borrow_mut();
        let found = encoders
            .iter()
            .position(|e| e.dialect == dialect && e.weft == weft && e.run_id == run_id);
        let at = match found {
            Some(i) if encoders[i].last + 1 == event_id => i,
            _ => {
                let mut encoder = Encoder::for_socket(dialect, salt(), weft);
                for logged in store.events(run_id).unwrap_or_default() {
                    if let Some(prev) = decode_logged(run_id, &logged) {
                        if prev.envelope.event_id >= Some(event_id) {
                            break;
                        }
                        // Only the encoder's state matters here: these frames went out before.
                        encoder.encode(&prev);
                    }
                }
                let live = LiveEncoder {
                    run_id: run_id.into(),
                    dialect,
                    weft,
                    last: event_id.saturating_sub(1),
                    encoder,
                };
                match found {
                    Some(i) => {
                        encoders[i] = live;
                        i
                    }
                    None => {
                        encoders.push(live);
                        encoders.len() - 1
                    }
                }
            }
        };
        let live = &mut encoders[at];
        live.last = event_id;
        let frames = live.encoder.encode(ev);
        if ev.event.is_terminal() {
            encoders.swap_remove(at);
        }
        frames
    }

    /// Streams model call `call` into the run; returns when it ends, fails, is cancelled, or
    /// the run stops taking its input.
    async fn call_llm(&self, call: u64, request: weft_agent::provider::ChatRequest) {
        let config = &self.settings.provider;
        let http = config.build_request(&request);
        let response = match crate::outbound::provider(&http) {
            Ok(req) => Fetch::Request(req).send().await,
            Err(e) => Err(e),
        };
        let provider = config.provider;
        let mut response = match response {
            Ok(r) => r,
            Err(e) => {
                let err = network_error(provider, &format!("could not reach the model: {e}"));
                return self.failed(call, err);
            }
        };
        if response.status_code() != 200 {
            let status = response.status_code();
            let pairs: Vec<(String, String)> = response.headers().entries().collect();
            let body = response.text().await.unwrap_or_default();
            let err = ProviderError::from_http(
                provider,
                status,
                pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
                body.as_bytes(),
            );
            return self.failed(call, err);
        }
        let mut stream = match response.stream() {
            Ok(s) => s,
            Err(e) => {
                let err =
                    network_error(provider, &format!("could not read the model's answer: {e}"));
                return self.failed(call, err);
            }
        };
        let mut decoder = config.decoder();
        // The idle timeout: one timer per call, not one per chunk (setting and clearing a
        // timer per chunk was 5 % of the isolate's time in the server benchmark's profile).
        // When it fires early it is set again for what remains since the last chunk. (The byte
        // stream keeps its pending read across the re-arm, so no bytes are lost.)
        let idle_ms = self.settings.llm_idle_timeout_ms as f64;
        let delay = |ms: f64| Box::pin(worker::Delay::from(Duration::from_millis(ms as u64)));
        let mut timer = delay(idle_ms);
        let mut last_chunk = js_sys::Date::now();
        // Which reads are published at once and which wait to go out together: see batch.rs.
        // `flush` is the timer of its flush.
        let mut batching = Batching::new(
            self.settings.stream_batch_reads,
            self.settings.stream_batch_ms as f64,
        );
        let mut flush: Option<LocalBoxFuture<'static, ()>> = None;
        enum Wake<T> {
            Chunk(Option<T>),
            Flush,
            Idle,
        }
        loop {
            let wake = futures_util::future::poll_fn(|cx| {
                if let Some(f) = flush.as_mut() {
                    if f.poll_unpin(cx).is_ready() {
                        return Poll::Ready(Wake::Flush);
                    }
                }
                if let Poll::Ready(chunk) = stream.poll_next_unpin(cx) {
                    return Poll::Ready(Wake::Chunk(chunk));
                }
                match timer.poll_unpin(cx) {
                    Poll::Ready(()) => Poll::Ready(Wake::Idle),
                    Poll::Pending => Poll::Pending,
                }
            })
            .await;
            let chunk = match wake {
                Wake::Chunk(Some(chunk)) => chunk,
                Wake::Chunk(None) => break,
                Wake::Flush => {
                    flush = None;
                    match batching.flush(js_sys::Date::now()) {
                        Step::Publish => {
                            if !self.feed_decoded(call, &mut decoder) {
                                return;
                            }
                            flush = self.published(&mut batching, js_sys::Date::now());
                        }
                        Step::Wait => flush = Some(delay(QUIET_GAP_MS).boxed_local()),
                        Step::Hold | Step::Quiet => {}
                    }
                    continue;
                }
                Wake::Idle => {
                    let quiet = js_sys::Date::now() - last_chunk;
                    if quiet < idle_ms {
                        timer = delay(idle_ms - quiet + 1.0);
                        continue;
                    }
                    self.feed_decoded(call, &mut decoder);
                    let secs = idle_ms / 1000.0;
                    let err =
                        network_error(provider, &format!("the model sent nothing for {secs} s"));
                    return self.failed(call, err);
                }
            };
            last_chunk = js_sys::Date::now();
            if self.cancel.replace(false) {
                self.feed_decoded(call, &mut decoder);
                self.handle(Input::Cancel);
                return;
            }
            let bytes = match chunk {
                Ok(b) => b,
                Err(e) => {
                    self.feed_decoded(call, &mut decoder);
                    let err =
                        network_error(provider, &format!("the connection broke mid-stream ({e})"));
                    return self.failed(call, err);
                }
            };
            let pushed = decoder.push(&bytes);
            if pushed.is_ok() && batching.read(last_chunk) == Step::Hold {
                continue;
            }
            if !self.feed_decoded(call, &mut decoder) {
                return;
            }
            if let Err(e) = pushed {
                return self.failed(call, e);
            }
            flush = self.published(&mut batching, last_chunk);
        }
        if self.cancel.replace(false) {
            self.feed_decoded(call, &mut decoder);
            self.handle(Input::Cancel);
            return;
        }
        match decoder.finish() {
            Ok(()) => {
                if self.feed_decoded(call, &mut decoder) {
                    self.handle(Input::LlmEnd { call });
                }
            }
            Err(e) => {
                self.feed_decoded(call, &mut decoder);
                self.failed(call, e)
            }
        }
    }

    /// A model stream's reads were published at `now`: its next flush, when batching arms one.
    fn published(&self, batching: &mut Batching, now: f64) -> Option<LocalBoxFuture<'static, ()>> {
        batching.published(now);
        batching.is_armed().then(|| self.committed())
    }

    /// A model stream's flush (batch.rs): a quiet gap after the storage's pending writes are
    /// durable (the output gate has let the last publish's frames go). The gap starts only then,
    /// because while a commit is under way the stream's next read can only wait: a gap counted
    /// from the publish would call a busy stream quiet.
    fn committed(&self) -> LocalBoxFuture<'static, ()> {
        let gap = || worker::Delay::from(Duration::from_millis(QUIET_GAP_MS as u64));
        match self.state.as_raw().storage().and_then(|s| s.sync()) {
            Ok(promise) => wasm_bindgen_futures::JsFuture::from(promise)
                .then(move |_| gap())
                .boxed_local(),
            Err(_) => gap().boxed_local(),
        }
    }

    /// Feeds the run every delta the decoder holds (merged where they continue each other) and
    /// publishes what they produced as one batch. False when the call should stop: the run
    /// refused a delta (it no longer waits for this call) or is over.
    fn feed_decoded(&self, call: u64, decoder: &mut weft_agent::provider::StreamDecoder) -> bool {
        let mut accepted = true;
        while let Some(delta) = decoder.poll_merged() {
            accepted = self.feed_run(Input::Llm { call, delta });
            if !accepted {
                break;
            }
        }
        self.drain_run();
        accepted && self.run.borrow().as_ref().is_some_and(|r| !r.is_finished())
    }

    fn failed(&self, call: u64, error: ProviderError) {
        self.handle(Input::LlmFailed { call, error });
    }
}

/// The tool host of a session: its workspace and the clock.
struct Host<'a> {
    workspace: SqlWorkspace<'a>,
}

impl ToolHost for Host<'_> {
    fn workspace(&mut self) -> &mut dyn Workspace {
        &mut self.workspace
    }
    fn now_ms(&self) -> i64 {
        js_sys::Date::now() as i64
    }

    /// IANA zones through the runtime's `Intl` (the engine itself knows only UTC and fixed
    /// offsets): the local wall time in the zone, with its offset, as RFC 3339.
    fn format_time(&self, now_ms: i64, timezone: &str) -> std::result::Result<String, String> {
        if let Ok(s) = tools::format_time_offset(now_ms, timezone) {
            return Ok(s);
        }
        local_time(now_ms, timezone.trim())
            .ok_or_else(|| format!("unknown timezone: {}", timezone.trim()))
    }
}

/// `YYYY-MM-DDTHH:MM:SS±HH:MM` for `now_ms` in an IANA zone, or `None` if the runtime does not
/// know the zone. Calls go through `Reflect::apply`, which turns a thrown `RangeError` into an
/// `Err` instead of a trap.
fn local_time(now_ms: i64, zone: &str) -> Option<String> {
    use wasm_bindgen::JsValue;
    let date = js_sys::Date::new(&JsValue::from_f64(now_ms as f64));
    let options = js_sys::Object::new();
    js_sys::Reflect::set(&options, &"timeZone".into(), &zone.into()).ok()?;
    js_sys::Reflect::set(&options, &"hourCycle".into(), &"h23".into()).ok()?;
    let to_locale = js_sys::Reflect::get(&date, &"toLocaleString".into()).ok()?;
    let args = js_sys::Array::of2(&"sv-SE".into(), &options);
    let text = js_sys::Reflect::apply(to_locale.dyn_ref::<js_sys::Function>()?, &date, &args)
        .ok()?
        .as_string()?;
    // sv-SE writes "2026-11-22 19:00:00".
    let digits: Vec<i64> = text
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .filter_map(|p| p.parse().ok())
        .collect();
    let [y, mo, d, h, mi, s] = digits[..] else {
        return None;
    };
    let local_ms = js_sys::Date::utc(y as f64, (mo - 1) as f64) as i64
        + (d - 1) * 86_400_000
        + h * 3_600_000
        + mi * 60_000
        + s * 1000;
    let offset_min = ((local_ms - now_ms.div_euclid(1000) * 1000) as f64 / 60_000.0).round() as i64;
    let sign = if offset_min < 0 { '-' } else { '+' };
    let abs = offset_min.abs();
    Some(format!(
        "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{sign}{:02}:{:02}",
        abs / 60,
        abs % 60
    ))
}

/// GETs a page for the `web_fetch` tool, following at most `MAX_REDIRECTS` redirects, each
/// checked before it is followed (a public page must not lead the fetch to a private host).
async fn web_fetch(url: &str, max_bytes: usize) -> (String, bool) {
    let mut url = url.to_string();
    let mut redirects = 0;
    let mut response = loop {
        let response = match crate::outbound::page(&url) {
            Ok(req) => Fetch::Request(req).send().await,
            Err(e) => Err(e),
        };
        let response = match response {
            Ok(r) => r,
            Err(e) => return (format!("fetch failed: {e}"), true),
        };
        let location = response.headers().get("location").ok().flatten();
        match tools::redirect_target(&url, response.status_code(), location.as_deref()) {
            Ok(None) => break response,
            Ok(Some(next)) if redirects < tools::MAX_REDIRECTS => {
                redirects += 1;
                url = next;
            }
            Ok(Some(next)) => {
                let max = tools::MAX_REDIRECTS;
                return (
                    format!("fetch failed: more than {max} redirects (the next to {next})"),
                    true,
                );
            }
            Err(e) => return (format!("fetch failed: {e}"), true),
        }
    };
    let status = response.status_code();
    let content_type = response
        .headers()
        .get("content-type")
        .ok()
        .flatten()
        .unwrap_or_default();
    let mut body = Vec::new();
    if let Ok(mut stream) = response.stream() {
        while let Some(Ok(chunk)) = stream.next().await {
            body.extend_from_slice(&chunk);
            if body.len() > max_bytes {
                break;
            }
        }
    }
    tools::fetch_result(status, &content_type, &body, max_bytes)
}

fn network_error(provider: weft_agent::provider::Provider, message: &str) -> ProviderError {
    ProviderError::Stream {
        provider,
        status: None,
        code: Some("network".into()),
        message: message.into(),
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

fn client_tool(spec: ToolSpec) -> ClientTool {
    ClientTool {
        name: spec.name,
        description: spec.description,
        input_schema: spec.input_schema,
        read_only: spec.read_only,
    }
}

fn def_of(spec: &ToolSpec) -> ToolDef {
    ToolDef {
        name: spec.name.clone(),
        description: spec.description.clone().unwrap_or_default(),
        input_schema: spec.input_schema.clone(),
    }
}

fn decode_logged(run_id: &str, json: &str) -> Option<Sequenced> {
    let value: Value = serde_json::from_str(json).ok()?;
    let mut ev = Sequenced::from_json(value.as_object()?).ok()?;
    ev.envelope.run_id = Some(run_id.into());
    Some(ev)
}

fn last_reply(state: &engine::Session) -> Option<String> {
    state.history.iter().rev().find_map(|m| match m {
        weft_agent::provider::ChatMessage::Assistant { content, .. } if !content.is_empty() => {
            Some(content.clone())
        }
        _ => None,
    })
}

/// The internal URL a socket's Durable Object is reached at: by the Worker for a client, by
/// another session's object for a link (relay.rs). `weft` says the client offered
/// `weft.<dialect>`; `protocol` is the subprotocol the handshake answers with.
pub fn connect_url(dialect: Dialect, session: &str, weft: bool, protocol: Option<&str>) -> String {
    let mut target = String::from("https://session.internal/connect?");
    crate::query::append(&mut target, "dialect", dialect.as_str());
    crate::query::append(&mut target, "session", session);
    if weft {
        crate::query::append(&mut target, "weft", "1");
    }
    if let Some(p) = protocol {
        crate::query::append(&mut target, "protocol", p);
    }
    target
}

/// What the socket declared with `client_tools`, to declare again on a link.
fn declared_tools(info: &SocketInfo) -> Option<ClientTools> {
    (info.approvals || !info.tools.is_empty()).then(|| ClientTools {
        tools: info
            .tools
            .iter()
            .map(|t| ToolSpec {
                name: t.name.clone(),
                description: t.description.clone(),
                input_schema: t.input_schema.clone(),
                read_only: t.read_only,
            })
            .collect(),
        approvals: info.approvals,
    })
}

/// A random UUID v4 from the runtime's `crypto.randomUUID()`.
pub fn uuid() -> String {
    let global = js_sys::global();
    js_sys::Reflect::get(&global, &"crypto".into())
        .and_then(|crypto| {
            let f = js_sys::Reflect::get(&crypto, &"randomUUID".into())?;
            js_sys::Function::from(f).call0(&crypto)
        })
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_else(|| format!("{:x}", (js_sys::Math::random() * 1e16) as u64))
}

/// Salt for agentloop frame ids. Constant per deployment so a replay reproduces the ids a live
/// socket got; ids still differ between runs and sessions (they hash the run id).
fn salt() -> u64 {
    0x7765_6674 // "weft"
}
