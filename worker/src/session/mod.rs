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
//! Its rooms: this file holds the object, its sockets and the drive loop that carries out a
//! run's effects; `commands.rs` what clients ask of it; `stream.rs` a model call streamed into the
//! run; `publish.rs` logging and sending the run's events; `host.rs` what the tools run against.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::task::{Poll, Waker};

use futures_util::future::LocalBoxFuture;
use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use weft_agent::engine::{self, Effect, Input, Output, Run, Start, ToolInfo};
use weft_agent::provider::ToolDef;
use weft_agent::tools::{self, ToolRun, Workspace};
use weft_protocol::command::{ApprovalDecision, ClientTools, Command, RunCommand};
use weft_protocol::event::ToolSpec;
use weft_protocol::{Agent, Dialect, Encoder, Event, Limits, Sequenced};
use worker::{
    durable_object, DurableObject, Env, Request, Response, Result, State, WebSocket,
    WebSocketIncomingMessage, WebSocketPair,
};

mod aisdk;
mod alarm;
pub use aisdk::AISDK_MAX_BODY_BYTES;
mod commands;
mod host;
mod limits;
mod publish;
mod stream;

use host::{web_fetch, Host};
use publish::{LiveEncoder, Unlogged};

use crate::access::Grant;
use crate::limiter::Window;
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
    /// A per-user token's sessions: the only ones a message on this socket may name. `None`:
    /// any (no per-user token).
    #[serde(default)]
    grant: Option<Grant>,
    /// Whom the sessions this socket creates count against (`SESSIONS_PER_MINUTE`), for the
    /// links it opens.
    #[serde(default)]
    client: String,
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
    /// Streamed deltas sent but not yet logged, with when the oldest was sent
    /// (session/publish.rs).
    unlogged: RefCell<Unlogged>,
    /// The AI SDK requests streaming this session's run (aisdk.rs).
    streams: RefCell<Vec<aisdk::Stream>>,
    env: Env,
    /// Links to the other sessions messages on this object's sockets named (relay.rs).
    links: Links,
    /// Frames from all sockets this minute (`SESSION_FRAMES_PER_MINUTE`).
    frames: Cell<Window>,
    /// Runs started this minute (`SESSION_RUNS_PER_MINUTE`).
    runs: Cell<Window>,
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
            unlogged: RefCell::new(Unlogged::default()),
            streams: RefCell::new(Vec::new()),
            env,
            links: Links::default(),
            frames: Cell::new(Window::default()),
            runs: Cell::new(Window::default()),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        let url = req.inner().url();
        match req.path().as_str() {
            AISDK_CHAT_PATH => {
                let client = crate::query::get(&url, "client").unwrap_or_default();
                return self.aisdk_post(req, &client).await;
            }
            AISDK_STREAM_PATH => return self.aisdk_resume().await,
            _ => {}
        }
        let dialect = crate::query::get(&url, "dialect")
            .and_then(|d| Dialect::parse(&d))
            .unwrap_or(Dialect::Loom);
        let session_id = crate::query::get(&url, "session").unwrap_or_default();
        let protocol = crate::query::get(&url, "protocol");
        let weft = crate::query::get(&url, "weft").is_some_and(|w| w == "1");
        let grant = match crate::query::get(&url, "grant") {
            Some(json) => match serde_json::from_str::<Grant>(&json) {
                Ok(grant) => Some(grant),
                // Never open a limited socket as an unlimited one.
                Err(e) => return Response::error(format!("unreadable grant: {e}"), 500),
            },
            None => None,
        };
        let client = crate::query::get(&url, "client").unwrap_or_default();
        if let Err(why) = self.admit(&client).await {
            if crate::query::get(&url, "link").is_some() {
                return Response::error(why, 429);
            }
            // Accepted, then closed, so that a browser sees the reason (as for 4003).
            let pair = WebSocketPair::new()?;
            pair.server.accept()?;
            pair.server.close(Some(limits::CLOSE_LIMITED), Some(why))?;
            return crate::with_protocol(
                Response::from_websocket(pair.client)?,
                protocol.as_deref(),
            );
        }
        let pair = WebSocketPair::new()?;
        self.state.accept_web_socket(&pair.server);
        let active = self.store().active_run().ok().flatten().map(|r| r.run_id);
        let info = SocketInfo {
            dialect: dialect.as_str().into(),
            session_id,
            weft,
            grant,
            client,
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
        if let (Route::There(named), Some(grant)) = (&route, &info.grant) {
            if !grant.allows(named) {
                let message = format!("this token ({}) may not use session {named}", grant.sub);
                self.reply(&ws, &info, error_event(&message, "forbidden", None));
                return Ok(());
            }
        }
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
                    grant: info.grant.as_ref(),
                    client: &info.client,
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

    /// See alarm.rs.
    async fn alarm(&self) -> Result<Response> {
        self.on_alarm().await;
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
        let page_tools: Vec<ClientTool> = self
            .streams
            .borrow()
            .iter()
            .flat_map(|s| s.tools.iter().cloned().map(client_tool))
            .collect();
        let socket_tools = self.sockets().into_iter().flat_map(|(_, info)| info.tools);
        for t in socket_tools.chain(page_tools) {
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
        self.pause_streams();
    }

    fn wake(&self) {
        let waker = self.waker.borrow_mut().take();
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Publishes the run's queued events (as one batch) and queues its effects.
    fn drain_run(&self) {
        loop {
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
            let Err(e) = self.publish(&events) else {
                return;
            };
            // A run whose log cannot be written stops: its error is the next batch (sent even
            // if it cannot be logged either, since it ends the run).
            if self.run.borrow().as_ref().is_none_or(Run::is_finished) {
                return;
            }
            self.feed_run(Input::HostFailed {
                code: "storage".into(),
                message: format!(
                    "the run's events could not be stored ({e}), so it stops here: a resume \
                     could not replay them"
                ),
            });
        }
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
                        .any(|(_, i)| i.tools.iter().any(|t| t.name == name))
                        || self
                            .streams
                            .borrow()
                            .iter()
                            .any(|s| s.tools.iter().any(|t| t.name == name));
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
                if !self.sockets().iter().any(|(_, i)| i.can_approve()) && !self.page_listening() {
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
                    self.arm_alarm().await;
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
                    if self.settings.storage_stats {
                        let (rows, bytes) = store.usage();
                        worker::console_log!(
                            "weft-storage session={} run={} rows_written={rows} bytes={bytes}",
                            self.state.id(),
                            run.run_id()
                        );
                    }
                }
            }
        }
    }

    /// Saves the run's checkpoint. A run whose checkpoint cannot be saved ends with a
    /// `storage` error: going on would leave a restart to resume it from an older step, which
    /// could run a tool twice. A finished run whose last checkpoint fails is still marked done,
    /// so it never holds the session busy.
    fn checkpoint(&self, status: &str) {
        let saved = {
            let cell = self.run.borrow();
            let Some(run) = cell.as_ref() else {
                return;
            };
            let status = if run.is_finished() { "done" } else { status };
            let store = self.store();
            let stored = store
                .run_checkpoint(run)
                .map_err(|e| format!("the run could not be saved ({e})"))
                .and_then(|checkpoint| {
                    store
                        .save_run(
                            run.run_id(),
                            status,
                            &checkpoint,
                            js_sys::Date::now() as i64,
                        )
                        .map_err(|e| e.to_string())
                });
            match stored {
                Ok(()) => return,
                Err(e) => (run.run_id().to_string(), run.is_finished(), e),
            }
        };
        let (run_id, finished, error) = saved;
        worker::console_error!("run {run_id}: checkpoint not saved: {error}");
        if finished {
            if let Err(e) = self.store().set_run_status(&run_id, "done") {
                worker::console_error!("run {run_id}: not marked done either: {e}");
            }
            return;
        }
        self.handle(Input::HostFailed {
            code: "storage".into(),
            message: format!("the run could not be saved, so it stops here: {error}"),
        });
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

/// Where the Worker hands a session an AI SDK turn (`POST /api/chat`).
pub const AISDK_CHAT_PATH: &str = "/aisdk/chat";

/// Where the Worker asks a session for its running turn again (`GET /api/chat/{id}/stream`).
pub const AISDK_STREAM_PATH: &str = "/aisdk/stream";

/// The internal URL a session's AI SDK requests go to.
pub fn aisdk_url(path: &str, client: &str) -> String {
    let mut target = format!("https://session.internal{path}?");
    crate::query::append(&mut target, "client", client);
    target
}

/// The internal URL a socket's Durable Object is reached at: by the Worker for a client, by
/// another session's object for a link (relay.rs). `weft` says the client offered
/// `weft.<dialect>`; `protocol` is the subprotocol the handshake answers with.
/// `grant` limits the socket to a token's sessions; it travels as JSON in the URL, which only
/// this Worker builds (a Durable Object is not reachable from outside). `client` is whom a
/// new session counts against (`SESSIONS_PER_MINUTE`); `link` says another session's object
/// is connecting (relay.rs), which is refused with an HTTP status rather than a close.
pub fn connect_url(
    dialect: Dialect,
    session: &str,
    weft: bool,
    protocol: Option<&str>,
    grant: Option<&Grant>,
    client: &str,
    link: bool,
) -> String {
    let mut target = String::from("https://session.internal/connect?");
    crate::query::append(&mut target, "client", client);
    if link {
        crate::query::append(&mut target, "link", "1");
    }
    crate::query::append(&mut target, "dialect", dialect.as_str());
    crate::query::append(&mut target, "session", session);
    if weft {
        crate::query::append(&mut target, "weft", "1");
    }
    if let Some(p) = protocol {
        crate::query::append(&mut target, "protocol", p);
    }
    if let Some(grant) = grant {
        // A grant is strings only: serializing it cannot fail.
        if let Ok(json) = serde_json::to_string(grant) {
            crate::query::append(&mut target, "grant", &json);
        }
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
