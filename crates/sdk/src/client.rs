//! `Client`: the JavaScript class that carries out what [`Connection`] decides.
//!
//! The shell owns the socket, the one timer, the promises and the callbacks; every decision is
//! the core's. Calls into the core borrow it briefly and queue [`Output`]s; [`Shared::drive`]
//! then carries them out one by one with no borrow held, so an app callback that calls back
//! into the client (starts a run from `onEvent`, closes from `onStatus`) only queues more work
//! behind the current item — callbacks never re-enter a borrowed state and always see outputs
//! in order (STYLE 9).

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use weft_protocol::sorted::SortedMap;
use weft_protocol::text;

use js_sys::{Function, Promise};
use tsify::Ts;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use web_sys::AbortController;
use weft_protocol::event::ToolSpec;
use weft_protocol::json::RawJson;
use weft_protocol::Transcript;

use crate::backoff::Backoff;
use crate::connection::{
    agui_over_http, endpoint_url, original_url, status_url, subprotocols, Config, Connection,
    RunHandle, ServerChoice,
};
use crate::error::{report, Error, ErrorCode};
use crate::listeners::{Listeners, Slot};
use crate::marshal;
use crate::reassembler::spoken_dialect;
use crate::run::{Run, RunState};
use crate::socket::Socket;
use crate::types::{
    ClientOptions, McpServerOptions, Reconnect, RunOptions, ToolDefinition, UserMessagesOptions,
};
use drive::random_uuid;

/// A connection to a weft server, or to the original server of one of the four dialects, for
/// one session (see the `server` option).
///
/// ```js
/// const client = new Client({ url: "wss://weft.example.com", dialect: "loom", sessionId });
/// await client.connect();
/// const run = client.run({ message: "hi" });
/// run.onText((delta) => render(delta));
/// const { reply } = await run.result;
/// client.close();
/// ```
#[wasm_bindgen]
#[derive(Debug)]
pub struct Client {
    shared: Rc<Shared>,
}

/// The state shared by the client object, its socket handlers, its timer and its runs.
pub(crate) struct Shared {
    core: RefCell<Connection>,
    socket: RefCell<Option<Socket>>,
    /// Where the socket's frames are copied into wasm; taken while one is handled.
    frame_buf: RefCell<marshal::FrameBuf>,
    timer: Timer,
    draining: Cell<bool>,
    connect_waiters: RefCell<Vec<Deferred>>,
    requests: RefCell<SortedMap<String, Deferred>>,
    runs: RefCell<SortedMap<RunHandle, Rc<RunState>>>,
    events: Rc<Listeners>,
    errors: Rc<Listeners>,
    status: Rc<Listeners>,
    /// `onAuthorization`'s callbacks.
    authorizations: Rc<Listeners>,
    approver: Rc<Slot>,
    /// The approvals the app's callback is deciding, to abort when one is withdrawn.
    asked: RefCell<SortedMap<String, AbortController>>,
    tools: RefCell<SortedMap<String, (u32, ToolSpec, Function)>>,
    next_tool: Cell<u32>,
    /// `token` given as a function: called before each socket opens.
    token_source: Option<Function>,
    /// `token` given as a string.
    token: Option<String>,
    /// The socket's URL, which `agents()` finds the server's `/status` beside.
    endpoint: String,
    /// Counts socket openings and closes, so a token that arrives after the client closed or
    /// opened again is dropped instead of opening a stale socket.
    opening: Cell<u64>,
    /// Over HTTP (`client/http.rs`): the request in flight, and a count of aborts, so a
    /// request whose token arrives after it was aborted is not sent.
    post_abort: RefCell<Option<AbortController>>,
    posting: Cell<u64>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

/// The resolve and reject functions of a promise handed to the app.
#[derive(Debug, Clone)]
pub(crate) struct Deferred {
    resolve: Function,
    reject: Function,
}

impl Deferred {
    /// A pending promise and the functions that settle it.
    pub(crate) fn new() -> (Promise, Deferred) {
        let mut slot = None;
        let promise =
            Promise::new(&mut |resolve, reject| slot = Some(Deferred { resolve, reject }));
        // The executor runs synchronously inside `new Promise`, so the slot is filled; fall back
        // to inert functions rather than panic if a host ever broke that.
        let d = slot.unwrap_or_else(|| Deferred {
            resolve: JsValue::UNDEFINED.unchecked_into(),
            reject: JsValue::UNDEFINED.unchecked_into(),
        });
        (promise, d)
    }

    /// The resolve function alone (an iterator's `next()` never rejects).
    pub(crate) fn resolve_fn(&self) -> Function {
        self.resolve.clone()
    }

    /// A promise's resolving functions never throw; the inert ones above would, and what they
    /// throw is reported rather than lost.
    pub(crate) fn resolve(&self, value: &JsValue) {
        if let Err(thrown) = self.resolve.call1(&JsValue::UNDEFINED, value) {
            report(&thrown);
        }
    }

    pub(crate) fn reject(&self, e: Error) {
        if let Err(thrown) = self.reject.call1(&JsValue::UNDEFINED, &e.into_js()) {
            report(&thrown);
        }
    }

    pub(crate) fn settle(&self, result: Result<JsValue, Error>) {
        match result {
            Ok(v) => self.resolve(&v),
            Err(e) => self.reject(e),
        }
    }
}

/// The client's one timer: set for the core's next deadline, reset when that changes.
struct Timer {
    callback: RefCell<Option<Closure<dyn FnMut()>>>,
    id: RefCell<Option<JsValue>>,
    at: Cell<Option<f64>>,
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &Function, ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(id: &JsValue);
}

fn now() -> f64 {
    js_sys::Date::now()
}

fn random() -> f64 {
    js_sys::Math::random()
}

/// Calls the app's token function (on a later microtask) and hands `then` what it gives,
/// awaited if it is a promise.
fn fresh_token(source: &Function, then: impl FnOnce(Result<String, Error>) + 'static) {
    drive::call_later(source, &[], move |outcome| {
        then(
            outcome
                .map_err(|thrown| Error::from_callback("the token function", &thrown))
                .and_then(|value| {
                    value.as_string().ok_or_else(|| {
                        Error::argument(
                            "the token function must return a string (or a promise of one)",
                        )
                    })
                }),
        )
    });
}

#[wasm_bindgen]
impl Client {
    /// A client for one session; nothing is opened until `connect()`. Throws
    /// `invalid_argument` for options it cannot use (unknown dialect, a URL that is not
    /// `ws(s)://` or `http(s)://`, a token a subprotocol cannot carry, a negative delay).
    #[wasm_bindgen(constructor)]
    pub fn new(options: Ts<ClientOptions>) -> Result<Client, JsValue> {
        let o = marshal::from_ts(&options, "ClientOptions")?;
        let token_source = js_sys::Reflect::get(&options.js_value(), &"token".into())
            .ok()
            .and_then(|t| t.dyn_into::<Function>().ok());
        let dialect = spoken_dialect(o.dialect.as_deref())?;
        let ms = |v: Option<f64>, default: f64, name: &str| -> Result<f64, Error> {
            match v {
                None => Ok(default),
                Some(v) if v.is_finite() && v >= 0.0 => Ok(v),
                Some(v) => Err(Error::argument(text::concat(&[
                    name,
                    " must be a number of milliseconds, 0 or more (got ",
                    &marshal::number(v),
                    ")",
                ]))),
            }
        };
        let reconnect = match o.reconnect {
            None | Some(Reconnect::Enabled(true)) => Some(Backoff::default()),
            Some(Reconnect::Enabled(false)) => None,
            Some(Reconnect::Backoff(b)) => {
                let d = Backoff::default();
                Some(Backoff {
                    initial_ms: ms(b.initial_delay_ms, d.initial_ms, "reconnect.initialDelayMs")?,
                    max_ms: ms(b.max_delay_ms, d.max_ms, "reconnect.maxDelayMs")?,
                    max_attempts: b.max_attempts,
                })
            }
        };
        let server = match o.server.as_deref() {
            None => ServerChoice::Auto,
            Some(s) => ServerChoice::parse(s).ok_or_else(|| {
                Error::argument(text::concat(&[
                    "server must be \"auto\", \"weft\" or \"original\" (got ",
                    &marshal::quoted(s),
                    ")",
                ]))
            })?,
        };
        // An AG-UI agent's HTTP endpoint (connection/http.rs): the URL as given, the session
        // the AG-UI thread (a fresh one without a session id).
        let agui_http = agui_over_http(dialect, &o.url);
        let session_id = match &agui_http {
            Some(_) => Some(o.session_id.clone().unwrap_or_else(random_uuid)),
            None => o.session_id.clone(),
        };
        let url = endpoint_url(&o.url, dialect, o.session_id.as_deref())?;
        // The token travels as a subprotocol only to weft, which must be able to carry it.
        let protocols = match server {
            ServerChoice::Original => subprotocols(dialect, None)?,
            _ => subprotocols(dialect, o.token.as_deref())?,
        };
        let endpoint = url.clone();
        let token = o.token.clone();
        let cfg = Config {
            dialect,
            original_url: original_url(&url, o.token.as_deref()),
            url,
            protocols,
            server,
            session_id,
            agui_http,
            reconnect,
            heartbeat_interval_ms: ms(o.heartbeat_interval_ms, 15_000.0, "heartbeatIntervalMs")?,
            heartbeat_timeout_ms: ms(o.heartbeat_timeout_ms, 10_000.0, "heartbeatTimeoutMs")?,
            request_timeout_ms: ms(o.request_timeout_ms, 30_000.0, "requestTimeoutMs")?,
            id_prefix: random_uuid().chars().take(8).collect(),
        };
        let shared = Rc::new_cyclic(|weak: &Weak<Shared>| {
            let weak = weak.clone();
            Shared {
                core: RefCell::new(Connection::new(cfg)),
                socket: RefCell::new(None),
                frame_buf: RefCell::default(),
                timer: Timer {
                    callback: RefCell::new(Some(Closure::<dyn FnMut()>::new(move || {
                        if let Some(s) = weak.upgrade() {
                            s.on_timer();
                        }
                    }))),
                    id: RefCell::new(None),
                    at: Cell::new(None),
                },
                draining: Cell::new(false),
                connect_waiters: RefCell::new(Vec::new()),
                requests: RefCell::new(SortedMap::new()),
                runs: RefCell::new(SortedMap::new()),
                events: Listeners::new(),
                errors: Listeners::new(),
                status: Listeners::new(),
                authorizations: Listeners::new(),
                approver: Rc::new(Slot::default()),
                asked: RefCell::new(SortedMap::new()),
                tools: RefCell::new(SortedMap::new()),
                next_tool: Cell::new(0),
                token_source,
                token,
                endpoint,
                opening: Cell::new(0),
                post_abort: RefCell::new(None),
                posting: Cell::new(0),
            }
        });
        Ok(Client { shared })
    }

    /// The dialect spoken.
    #[wasm_bindgen(getter, unchecked_return_type = "Dialect")]
    pub fn dialect(&self) -> String {
        self.shared
            .core
            .try_borrow()
            .map(|c| c.dialect().as_str())
            .unwrap_or_default()
            .into()
    }

    /// The server found: `"weft"`, or `"original"` for the dialect's original server, which
    /// is spoken to in its own document only; `undefined` until the first socket has opened
    /// (with `server: "auto"`).
    #[wasm_bindgen(getter, unchecked_return_type = "\"weft\" | \"original\" | undefined")]
    pub fn server(&self) -> Option<String> {
        self.shared
            .core
            .try_borrow()
            .ok()
            .and_then(|c| c.server())
            .map(|k| k.as_str().into())
    }

    /// Opens the socket. Resolves once it is open; rejects with `connect_failed` when the first
    /// attempt fails (wrong URL, server down, token refused) — call it again to retry — or with
    /// `closed` after `close()`. Runs and requests made before it resolves are queued.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn connect(&self) -> Promise {
        let (promise, d) = Deferred::new();
        self.shared.connect_waiters.borrow_mut().push(d);
        self.shared.update(|c| c.connect());
        promise
    }

    /// Starts a run of one user message. Returns at once; the run streams through its `Run`
    /// handle. Throws `invalid_argument` for an empty message, `closed` after `close()`.
    pub fn run(&self, options: Ts<RunOptions>) -> Result<Run, JsValue> {
        let opts = marshal::from_ts(&options, "RunOptions")?;
        let run_id = random_uuid();
        let handle = self
            .shared
            .with_core(|c| c.run(opts, run_id.clone(), now()))?;
        Ok(self.shared.run_object(handle, run_id))
    }

    /// Follows a run this client did not start, by its id: one started before the page was
    /// reloaded, or from another tab or device (`userMessages()` gives the session's
    /// `activeRunId`). The returned `Run` gets the run from its start (what this client has
    /// not seen yet is replayed), then live, and settles when it ends; its approvals reach
    /// `onApproval`, those answered already arriving withdrawn. Rejects `run.result` with
    /// `unknown_run` when the server has no such run; throws `closed` after `close()`. Needs a
    /// weft server: it asks with `resume`, weft's extension to every dialect (on an original
    /// server it throws `unsupported`).
    pub fn follow(&self, #[wasm_bindgen(js_name = runId)] run_id: String) -> Result<Run, JsValue> {
        let handle = self.shared.with_core(|c| c.follow(run_id.clone()))?;
        Ok(self.shared.run_object(handle, run_id))
    }

    /// Answers tool approvals with `callback(request)`, which returns (or resolves to)
    /// `{ review, message? }`. Works in every dialect on weft: on agentchat and cueso the
    /// client declares itself an approver (`client_tools` with `approvals: true`) while a
    /// callback is set. Of the original servers only agentloop asks (its request names no
    /// call: the client names it by the turn's one waiting call, and the answer applies to the
    /// original's one pending request). One callback answers at a
    /// time; a newer one replaces it. If the callback throws or answers something else, the
    /// call is denied (`no-continue`) and `onError` is told. Returns the function that removes
    /// the callback.
    #[wasm_bindgen(js_name = onApproval, unchecked_return_type = "() => void")]
    pub fn on_approval(
        &self,
        #[wasm_bindgen(
            unchecked_param_type = "(request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>"
        )]
        callback: Function,
    ) -> Function {
        let weak = Rc::downgrade(&self.shared);
        let on_change: Rc<dyn Fn(bool)> = Rc::new(move |on| {
            if let Some(s) = weak.upgrade() {
                s.update(|c| c.set_approver(on));
            }
        });
        self.shared.approver.set(callback, on_change)
    }

    /// Calls `callback` when an MCP server of the session needs this user's OAuth authorization,
    /// with `{ server, url, authorized: false }` — open `url` (a popup, a tab): the user approves
    /// at the server's authorization server, which sends the browser on to the Worker's callback
    /// — and once it is authorized, with `{ server, authorized: true }`: the server's tools are
    /// offered from the next run on, with no reload. Only the user whose run or `toolsList()`
    /// met the server is asked. Loom (on weft) and AG-UI carry it; agentchat, cueso, agentloop
    /// and the original servers have no frame for it, so there it never fires (a call of the
    /// server fails with a message saying where to authorize). Returns the function that
    /// unsubscribes.
    #[wasm_bindgen(js_name = onAuthorization, unchecked_return_type = "() => void")]
    pub fn on_authorization(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(authorization: McpAuthorization) => void")]
        callback: Function,
    ) -> Function {
        self.shared.authorizations.subscribe(callback)
    }

    /// Declares a tool this page runs itself and the handler that runs it: `handler(args,
    /// callId)` returns (or resolves to) the result — a string, or any value, sent as JSON. A throw or
    /// rejection is sent as an error result. The server asks for approval first unless the
    /// tool is `readOnly`. Registering a name again replaces the tool. Returns the function
    /// that unregisters it. Needs a weft server: an original one never calls the tool, and
    /// `onError` gets `unsupported` to say so.
    #[wasm_bindgen(js_name = registerTool, unchecked_return_type = "() => void")]
    pub fn register_tool(
        &self,
        spec: Ts<ToolDefinition>,
        #[wasm_bindgen(unchecked_param_type = "(args: any, callId: string) => unknown")]
        handler: Function,
    ) -> Result<Function, JsValue> {
        let def = marshal::from_ts(&spec, "ToolDefinition")?;
        if def.name.trim().is_empty() {
            return Err(Error::argument("registerTool(): name must not be empty").into());
        }
        let name = def.name.clone();
        let spec = ToolSpec {
            name: def.name,
            description: def.description,
            input_schema: def
                .input_schema
                .unwrap_or_else(|| RawJson::parse(r#"{"type":"object"}"#).unwrap_or_default()),
            read_only: def.read_only,
        };
        let id = self.shared.next_tool.get();
        self.shared.next_tool.set(id.wrapping_add(1));
        self.shared
            .tools
            .borrow_mut()
            .insert(name.clone(), (id, spec, handler));
        self.shared.declare_tools();
        let weak = Rc::downgrade(&self.shared);
        Ok(crate::listeners::unsubscribe_fn(move || {
            let Some(s) = weak.upgrade() else { return };
            let removed = {
                let mut tools = s.tools.borrow_mut();
                match tools.get(&name) {
                    Some((i, _, _)) if *i == id => tools.remove(&name).is_some(),
                    _ => false,
                }
            };
            if removed {
                s.declare_tools();
            }
        }))
    }

    /// Everything reassembled from every run this client has seen (its own and those other
    /// sockets of the session started): messages, tool calls, runs. A fresh copy per call.
    pub fn transcript(&self) -> Result<Ts<Transcript>, JsValue> {
        let core = self
            .shared
            .core
            .try_borrow()
            .map_err(|_| Error::new(ErrorCode::Busy, "transcript() was called re-entrantly"))?;
        Ok(marshal::to_ts(&core.transcript().to_json())?)
    }

    /// The last event id of a run received with nothing missing before it.
    #[wasm_bindgen(js_name = lastEventId)]
    pub fn last_event_id(&self, #[wasm_bindgen(js_name = runId)] run_id: &str) -> f64 {
        self.shared
            .core
            .try_borrow()
            .map_or(0.0, |c| c.last_event_id(run_id) as f64)
    }

    /// The tools the server offers (loom only; other dialects reject with `unsupported`).
    #[wasm_bindgen(js_name = toolsList, unchecked_return_type = "Promise<ToolDefinition[]>")]
    pub fn tools_list(&self) -> Promise {
        self.shared.request(|c, now| c.tools_list(now))
    }

    /// Adds a remote MCP server to this client's session, where the server's operator allows
    /// it (`MCP_CLIENT_SERVERS`): resolves with its tools as the model sees them
    /// (`<name>_<tool>`, every call asking approval), or rejects with why it was refused. The
    /// headers stay with the session; no reply, status or tool list shows them.
    #[wasm_bindgen(js_name = addMcpServer, unchecked_return_type = "Promise<ToolDefinition[]>")]
    pub fn add_mcp_server(&self, server: Ts<McpServerOptions>) -> Promise {
        match marshal::from_ts(&server, "McpServerOptions") {
            Ok(server) => self.shared.request(|c, now| c.add_mcp_server(server, now)),
            Err(e) => rejected(e),
        }
    }

    /// One tool's definition: a JSON object with `format` `"json"`, YAML text by default
    /// (loom only).
    #[wasm_bindgen(js_name = toolShow, unchecked_return_type = "Promise<unknown>")]
    pub fn tool_show(
        &self,
        name: &str,
        #[wasm_bindgen(unchecked_optional_param_type = "\"yaml\" | \"json\"")] format: Option<
            String,
        >,
    ) -> Promise {
        let json = match format.as_deref() {
            None | Some("yaml") => false,
            Some("json") => true,
            Some(other) => {
                return rejected(Error::argument(text::concat(&[
                    "toolShow(): format must be \"yaml\" or \"json\", not ",
                    &marshal::quoted(other),
                ])))
            }
        };
        self.shared.request(|c, now| c.tool_show(name, json, now))
    }

    /// A page of a thread's stored messages, oldest first (loom only).
    #[wasm_bindgen(js_name = userMessages, unchecked_return_type = "Promise<UserMessagesPage>")]
    pub fn user_messages(
        &self,
        #[wasm_bindgen(js_name = threadId)] thread_id: &str,
        #[wasm_bindgen(unchecked_optional_param_type = "UserMessagesOptions")] options: Option<
            Ts<UserMessagesOptions>,
        >,
    ) -> Promise {
        let opts = match options.map(|o| marshal::from_ts(&o, "UserMessagesOptions")) {
            None => UserMessagesOptions::default(),
            Some(Ok(o)) => o,
            Some(Err(e)) => return rejected(e),
        };
        self.shared
            .request(|c, now| c.user_messages(thread_id, opts, now))
    }

    /// How full the session's context window is: estimated tokens of its history, the window,
    /// the percentage (agentloop only; other dialects reject with `unsupported`). Runs report
    /// the same as `context_info` events in loom and agentloop.
    #[wasm_bindgen(js_name = contextInfo, unchecked_return_type = "Promise<ContextInfo>")]
    pub fn context_info(&self) -> Promise {
        self.shared.request(|c, now| c.context_info(now))
    }

    /// Summarises the session's older turns now, so later runs send fewer tokens (agentloop
    /// only; other dialects reject with `unsupported`). Resolves with the token counts before
    /// and after; rejects with the server's code when there is nothing to compact
    /// (`empty_transcript`) or a run is streaming (`busy`). Every socket of the session sees the
    /// `context_compacted` event. A client of another dialect can open an agentloop `Client`
    /// on the same `sessionId` for this.
    #[wasm_bindgen(unchecked_return_type = "Promise<CompactResult>")]
    pub fn compact(&self) -> Promise {
        self.shared.request(|c, now| c.compact(now))
    }

    /// Round trip to the server, in ms. weft answers it in every dialect; of the original
    /// servers only loom's does (the others reject with `unsupported` at once).
    #[wasm_bindgen(unchecked_return_type = "Promise<number>")]
    pub fn ping(&self) -> Promise {
        self.shared.request(|c, now| c.ping(now))
    }

    /// The agents the server offers — weft's four and the operator's own (`AGENTS`), each with
    /// its description, the weft agent that runs it and its model — and the one a run that
    /// names no `agent` gets. Read from the server's `GET /status` over HTTP (with the token),
    /// so it needs no open socket; rejects with `unsupported` where there is none (an original
    /// server) or it answers an error.
    #[wasm_bindgen(unchecked_return_type = "Promise<AgentList>")]
    pub fn agents(&self) -> Promise {
        let (promise, deferred) = Deferred::new();
        let endpoint = self.shared.endpoint.clone();
        let settle = deferred.clone();
        let fetch = move |token: Option<String>| {
            let url = status_url(&endpoint, token.as_deref());
            let then = Closure::once_into_js(move |ok: bool, value: JsValue| {
                settle.settle(if ok {
                    Ok(value)
                } else {
                    Err(Error::new(
                        ErrorCode::Unsupported,
                        text::concat(&[
                            "the server's agents could not be listed (GET /status): ",
                            &crate::error::describe(&value),
                        ]),
                    ))
                })
            });
            fetch_agents(&url, &then);
        };
        match &self.shared.token_source {
            Some(source) => fresh_token(source, move |token| match token {
                Ok(token) => fetch(Some(token)),
                Err(e) => deferred.reject(e),
            }),
            None => fetch(self.shared.token.clone()),
        }
        promise
    }

    /// Closes the socket for good. Runs still streaming and requests still waiting reject with
    /// `closed`; the server goes on with the runs (a disconnect never cancels one).
    pub fn close(&self) {
        self.shared.update(|c| c.close());
    }

    /// Calls `callback` with every event this client applies, of any run (its own, and those
    /// other sockets of the session started). Returns the function that unsubscribes.
    #[wasm_bindgen(js_name = onEvent, unchecked_return_type = "() => void")]
    pub fn on_event(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(event: RunEvent) => void")] callback: Function,
    ) -> Function {
        self.shared.events.subscribe(callback)
    }

    /// Calls `callback` with problems no call of the app is waiting on: a frame that does not
    /// decode, an approval callback that failed. Without a listener they go to the console.
    /// Returns the function that unsubscribes.
    #[wasm_bindgen(js_name = onError, unchecked_return_type = "() => void")]
    pub fn on_error(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(error: Error & { code: ErrorCode }) => void")]
        callback: Function,
    ) -> Function {
        self.shared.errors.subscribe(callback)
    }

    /// Calls `callback` when the connection changes state (`connecting`, `open`,
    /// `reconnecting` with the attempt and delay, `closed` with the reason). Returns the
    /// function that unsubscribes.
    #[wasm_bindgen(js_name = onStatus, unchecked_return_type = "() => void")]
    pub fn on_status(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(status: ClientStatus) => void")] callback: Function,
    ) -> Function {
        self.shared.status.subscribe(callback)
    }
}

// `GET /status`, shaped as `AgentList`: the one HTTP request of the SDK, so a few lines of
// JavaScript rather than web-sys' fetch bindings.
#[wasm_bindgen(inline_js = r#"
export function fetchAgents(url, then) {
  fetch(url)
    .then((res) => {
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      return res.json();
    })
    .then((status) => {
      if (!Array.isArray(status.agents)) throw new Error("the server lists no agents");
      const agents = status.agents.map(({ name, description, agent, provider, model, problem, remote }) =>
        ({ name, description, agent, provider: provider ?? null, model: model ?? null, problem: problem ?? null,
           remote: remote ?? null }));
      return { defaultAgent: status.default_agent, agents };
    })
    .then((list) => then(true, list), (thrown) => then(false, thrown));
}
"#)]
extern "C" {
    /// Fetches `url` (a server's `/status`) and calls `then(true, agentList)`, or
    /// `then(false, thrown)`.
    #[wasm_bindgen(js_name = fetchAgents)]
    fn fetch_agents(url: &str, then: &JsValue);
}

fn rejected(e: Error) -> Promise {
    Promise::reject(&e.into_js())
}

mod drive;
mod http;
