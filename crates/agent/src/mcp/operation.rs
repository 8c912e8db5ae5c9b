//! One logical operation against one server, as a state machine: the host moves the bytes,
//! this decides which request comes next.
//!
//! The steps: `server/discover` when the era is unknown; in the 2025 era `initialize` and
//! `notifications/initialized` when there is no session; then the goal (`tools/list` page by
//! page, or `tools/call`). One request that decides the next step is in flight at a time; the
//! answers to the server's pings go out beside it.

use alloc::collections::VecDeque;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value};

use super::error::McpError;
use super::exchange::{snippet, Exchange, Found};
use super::request::{self, Message};
use super::tool::{self, Catalog, HeaderParam, Tool};
use super::{Action, Era, HttpRequest, Limits, Outcome, ServerConfig, ServerState};
use super::{LEGACY_VERSIONS, MODERN_VERSION};

/// The current revision's own error codes: `HeaderMismatch`, `MissingRequiredClientCapability`,
/// `UnsupportedProtocolVersion`. A server that answers with one speaks the current revision.
const MODERN_ERRORS: [i64; 3] = [-32020, -32021, -32022];
const UNSUPPORTED_VERSION: i64 = -32022;

/// One logical operation against one MCP server: list every tool, or call one. See the
/// [module docs](super) for the loop that drives it.
///
/// Every `on_*` call names the request it is about; calls about requests the operation no
/// longer waits on (a stream left open after its answer, a ping's answer) change nothing,
/// and so does anything after [`Action::Done`]. The operation moves on as soon as a stream
/// carried the answer, so the host may stop reading (and drop) a response once the next
/// [`Action`] no longer concerns it.
#[derive(Debug)]
pub struct Operation {
    server: ServerConfig,
    state: ServerState,
    limits: Limits,
    goal: Goal,
    step: Step,
    /// Prefix of JSON-RPC ids and the progress token: unique per operation on the host's side.
    key: String,
    next_request: u64,
    next_rpc: u64,
    /// The request that decides the next step: its HTTP id, JSON-RPC id and response.
    current: Option<Current>,
    out: VecDeque<Action>,
    finished: bool,
    /// The one re-initialization after the server forgot the session was spent.
    reinitialized: bool,
    /// The one new probe after a remembered era stopped working was spent.
    reprobed: bool,
}

#[derive(Debug)]
struct Current {
    request: u64,
    rpc_id: Option<Value>,
    method: &'static str,
    /// The request carried a session id (a 404 or 400 then means the session is gone).
    with_session: bool,
    exchange: Exchange,
    /// The first event of the stream that was not JSON.
    garbage: Option<String>,
}

#[derive(Debug)]
enum Goal {
    List {
        cursor: Option<String>,
        pages: u32,
        catalog: Catalog,
    },
    Call {
        name: String,
        arguments: Value,
        header_params: Vec<HeaderParam>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Discover,
    Initialize,
    Initialized,
    Goal,
}

/// How the request that decides the next step ended.
#[derive(Debug)]
enum Reply {
    /// A JSON-RPC result.
    Result(Map<String, Value>),
    /// A JSON-RPC error, with the HTTP status it came with.
    Error {
        status: u16,
        code: i64,
        message: String,
        data: Option<Value>,
    },
    /// A non-2xx status without a JSON-RPC error in its body.
    Status {
        status: u16,
        text: String,
    },
    /// A 2xx without a response in it (what a notification gets).
    Empty,
    /// The response broke off: `began` says whether the head had come.
    Failed {
        began: bool,
        reason: String,
    },
    Garbage(String),
    TooLarge,
}

impl Operation {
    /// Lists every tool of the server, following `nextCursor` within the `limits`.
    #[must_use]
    pub fn list_tools(server: &ServerConfig, state: ServerState, limits: Limits) -> Self {
        let goal = Goal::List {
            cursor: None,
            pages: 0,
            catalog: Catalog::default(),
        };
        Self::start(server, state, limits, goal, String::from("weft-list"))
    }

    /// Calls `tool` (as listed by the server: its own name is sent, and in the current era
    /// its `x-mcp-header` arguments are mirrored into headers) with `arguments`.
    ///
    /// `call_id` must be unique among the calls in flight to this server (the model's tool
    /// call id is): it prefixes the JSON-RPC ids and is the progress token.
    #[must_use]
    pub fn call_tool(
        server: &ServerConfig,
        state: ServerState,
        limits: Limits,
        tool: &Tool,
        call_id: &str,
        arguments: Value,
    ) -> Self {
        let goal = Goal::Call {
            name: tool.name.clone(),
            arguments,
            header_params: tool.header_params.clone(),
        };
        Self::start(server, state, limits, goal, String::from(call_id))
    }

    fn start(
        server: &ServerConfig,
        state: ServerState,
        limits: Limits,
        goal: Goal,
        key: String,
    ) -> Self {
        let mut op = Self {
            server: server.clone(),
            state,
            limits,
            goal,
            step: Step::Discover,
            key,
            next_request: 0,
            next_rpc: 0,
            current: None,
            out: VecDeque::new(),
            finished: false,
            reinitialized: false,
            reprobed: false,
        };
        op.begin();
        op
    }

    /// The next thing to do; `None` while waiting for a response.
    #[must_use]
    pub fn poll(&mut self) -> Option<Action> {
        self.out.pop_front()
    }

    /// What the client knows about the server now; persist it after [`Action::Done`].
    #[must_use]
    pub fn state(&self) -> &ServerState {
        &self.state
    }

    /// The response's status and headers arrived.
    pub fn on_head(&mut self, request: u64, status: u16, headers: &[(String, String)]) {
        if let Some(current) = self.current_for(request) {
            current.exchange.on_head(status, headers);
        }
    }

    /// A piece of the response body arrived (split anywhere).
    pub fn on_body(&mut self, request: u64, chunk: &[u8]) {
        let mut found = Vec::new();
        match self.current_for(request) {
            Some(current) => current.exchange.on_body(chunk, &mut found),
            None => return,
        }
        self.take(found);
    }

    /// The response body ended.
    pub fn on_end(&mut self, request: u64) {
        let mut found = Vec::new();
        let status = match self.current_for(request) {
            Some(current) => {
                current.exchange.on_end(&mut found);
                current.exchange.status
            }
            None => return,
        };
        self.take(found);
        if self.current.as_ref().is_some_and(|c| c.request == request) {
            let reply = match status {
                None => Reply::Failed {
                    began: false,
                    reason: "the response ended before its head".into(),
                },
                Some(status) if (200..300).contains(&status) => {
                    let waits = self.current.as_ref().is_some_and(|c| c.rpc_id.is_some());
                    let garbage = self.current.as_mut().and_then(|c| c.garbage.take());
                    if let (true, Some(text)) = (waits, garbage) {
                        // What was not JSON was likely the answer.
                        Reply::Garbage(text)
                    } else if waits {
                        Reply::Failed {
                            began: true,
                            reason: "the stream ended without the answer".into(),
                        }
                    } else {
                        Reply::Empty
                    }
                }
                Some(status) => Reply::Status {
                    status,
                    text: String::new(),
                },
            };
            self.settle(reply);
        }
    }

    /// The host gives up on the operation (its timeout, the run cancelled): the operation ends
    /// with nothing more to poll, and the request to send so the server stops working on a
    /// 2025-era tool call, whose servers do not take a closed stream as a cancellation
    /// (`notifications/cancelled`; send it without waiting). The current revision needs none:
    /// closing the stream is the cancellation there.
    #[must_use]
    pub fn cancel(&mut self, reason: &str) -> Option<HttpRequest> {
        if self.finished {
            return None;
        }
        self.finished = true;
        self.out.clear();
        let current = self.current.take()?;
        let legacy = self.era_in_use() == Era::Legacy;
        let id = current
            .rpc_id
            .filter(|_| legacy && current.method == "tools/call")?;
        let request = self.next_request();
        let message = Message::Cancelled { id: &id, reason };
        Some(request::http_request(
            request,
            &self.server,
            &self.state,
            Era::Legacy,
            &message,
            &[],
        ))
    }

    /// The request failed: a transport error, or the host's timeout. `reason` is shown.
    pub fn on_failed(&mut self, request: u64, reason: &str) {
        let Some(current) = self.current_for(request) else {
            return;
        };
        let began = current.exchange.status.is_some();
        self.settle(Reply::Failed {
            began,
            reason: reason.into(),
        });
    }

    fn current_for(&mut self, request: u64) -> Option<&mut Current> {
        if self.finished {
            return None;
        }
        self.current.as_mut().filter(|c| c.request == request)
    }

    /// Sorts what the current exchange found: its answer settles it, progress goes out, the
    /// server's requests are answered.
    fn take(&mut self, found: Vec<Found>) {
        for item in found {
            if self.finished || self.current.is_none() {
                return;
            }
            let ok = self.current.as_ref().is_some_and(|c| c.exchange.ok());
            match item {
                Found::TooLarge => self.settle(Reply::TooLarge),
                Found::Garbage(text) => {
                    if !ok {
                        let status = self.current_status();
                        self.settle(Reply::Status { status, text });
                    } else if let Some(current) = self.current.as_mut() {
                        if current.exchange.is_stream() {
                            // Skipped, as SSE skips what it cannot read; kept to explain a
                            // stream that then ends without its answer.
                            current.garbage.get_or_insert(text);
                        } else {
                            self.settle(Reply::Garbage(text));
                        }
                    }
                }
                Found::Message(message) => self.message(message, ok),
            }
        }
    }

    fn current_status(&self) -> u16 {
        self.current
            .as_ref()
            .and_then(|c| c.exchange.status)
            .unwrap_or(0)
    }

    fn message(&mut self, message: Value, ok: bool) {
        let Value::Object(mut message) = message else {
            if ok {
                self.settle(Reply::Garbage(snippet(message.to_string().as_bytes())));
            }
            return;
        };
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(String::from);
        let id = message.get("id").cloned();
        match (method, id) {
            (Some(method), Some(id)) => self.server_request(&method, &id),
            (Some(method), None) => {
                if method == "notifications/progress" {
                    self.progress(message.get("params"));
                }
                // Other notifications (log messages, list changes) are not for the run.
            }
            (None, id) => {
                let waited = self.current.as_ref().and_then(|c| c.rpc_id.clone());
                // An error without an id is the server refusing the request as a whole.
                let ours = id.is_none_or(|id| id.is_null() || Some(&id) == waited.as_ref());
                if !ours {
                    return;
                }
                let status = self.current_status();
                if let Some(Value::Object(result)) = message.remove("result") {
                    if ok {
                        self.settle(Reply::Result(result));
                        return;
                    }
                }
                let error = message.get("error");
                match error.and_then(|e| e.get("code")).and_then(Value::as_i64) {
                    Some(code) => {
                        let text = error
                            .and_then(|e| e.get("message"))
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        self.settle(Reply::Error {
                            status,
                            code,
                            message: text.into(),
                            data: error.and_then(|e| e.get("data")).cloned(),
                        });
                    }
                    None if ok => self.settle(Reply::Garbage(
                        "a response with neither a result nor an error".into(),
                    )),
                    None => self.settle(Reply::Status {
                        status,
                        text: String::new(),
                    }),
                }
            }
        }
    }

    /// The server sent a request of its own on the stream: `ping` is answered, anything else
    /// refused (weft declares no sampling, elicitation or roots). The current revision lets
    /// the client send no response over HTTP, so there the request is only ignored.
    fn server_request(&mut self, method: &str, id: &Value) {
        if self.era_in_use() == Era::Modern {
            return;
        }
        let message = if method == "ping" {
            Message::Pong { id }
        } else {
            Message::Refusal { id, method }
        };
        let request = self.next_request();
        let http = request::http_request(
            request,
            &self.server,
            &self.state,
            Era::Legacy,
            &message,
            &[],
        );
        self.out.push_back(Action::Send(http));
    }

    fn progress(&mut self, params: Option<&Value>) {
        let Some(params) = params else { return };
        let token_matches =
            params.get("progressToken").and_then(Value::as_str) == Some(self.key.as_str());
        if !token_matches || !matches!(self.goal, Goal::Call { .. }) {
            return;
        }
        let Some(progress) = params.get("progress").and_then(Value::as_f64) else {
            return;
        };
        self.out.push_back(Action::Progress {
            progress,
            total: params.get("total").and_then(Value::as_f64),
            message: params
                .get("message")
                .and_then(Value::as_str)
                .map(String::from),
        });
    }

    fn era_in_use(&self) -> Era {
        match self.step {
            Step::Discover => Era::Modern,
            Step::Initialize | Step::Initialized => Era::Legacy,
            Step::Goal => self.state.era.unwrap_or(Era::Modern),
        }
    }

    fn next_request(&mut self) -> u64 {
        self.next_request += 1;
        self.next_request
    }

    /// Starts from what the state knows.
    fn begin(&mut self) {
        match (self.state.era, self.state.initialized) {
            (None, _) => self.send_discover(),
            (Some(Era::Modern), _) | (Some(Era::Legacy), true) => self.send_goal(),
            (Some(Era::Legacy), false) => self.send_initialize(),
        }
    }

    fn send_discover(&mut self) {
        self.step = Step::Discover;
        self.send(Era::Modern, "server/discover", Map::new(), &[]);
    }

    fn send_initialize(&mut self) {
        self.step = Step::Initialize;
        self.state.session_id = None;
        self.state.initialized = false;
        self.send(Era::Legacy, "initialize", request::initialize_params(), &[]);
    }

    fn send_initialized(&mut self) {
        self.step = Step::Initialized;
        let request = self.next_request();
        let message = Message::Notification {
            method: "notifications/initialized",
        };
        let http = request::http_request(
            request,
            &self.server,
            &self.state,
            Era::Legacy,
            &message,
            &[],
        );
        self.current = Some(Current {
            request,
            rpc_id: None,
            method: "notifications/initialized",
            with_session: self.state.session_id.is_some(),
            exchange: Exchange::new(self.limits.max_response_bytes),
            garbage: None,
        });
        self.out.push_back(Action::Send(http));
    }

    fn send_goal(&mut self) {
        self.step = Step::Goal;
        let era = self.state.era.unwrap_or(Era::Modern);
        match &self.goal {
            Goal::List { cursor, .. } => {
                let mut params = Map::new();
                if let Some(cursor) = cursor {
                    params.insert("cursor".into(), cursor.clone().into());
                }
                self.send(era, "tools/list", params, &[]);
            }
            Goal::Call {
                name,
                arguments,
                header_params,
            } => {
                let mut params = Map::new();
                params.insert("name".into(), name.clone().into());
                params.insert("arguments".into(), arguments.clone());
                let mut meta = Map::new();
                meta.insert("progressToken".into(), self.key.clone().into());
                params.insert("_meta".into(), Value::Object(meta));
                let header_params = header_params.clone();
                self.send(era, "tools/call", params, &header_params);
            }
        }
    }

    fn send(
        &mut self,
        era: Era,
        method: &'static str,
        params: Map<String, Value>,
        header_params: &[HeaderParam],
    ) {
        self.next_rpc += 1;
        let rpc_id = Value::String(format!("{}#{}", self.key, self.next_rpc));
        let request = self.next_request();
        let message = Message::Request {
            id: &rpc_id,
            method,
            params,
        };
        let http = request::http_request(
            request,
            &self.server,
            &self.state,
            era,
            &message,
            header_params,
        );
        self.current = Some(Current {
            request,
            rpc_id: Some(rpc_id),
            method,
            with_session: era == Era::Legacy && self.state.session_id.is_some(),
            exchange: Exchange::new(self.limits.max_response_bytes),
            garbage: None,
        });
        self.out.push_back(Action::Send(http));
    }

    fn finish(&mut self, outcome: Result<Outcome, McpError>) {
        self.finished = true;
        self.current = None;
        self.out.push_back(Action::Done(outcome));
    }

    fn fail(&mut self, error: McpError) {
        self.finish(Err(error));
    }

    /// The request that decides the next step has its answer: take the next step.
    fn settle(&mut self, reply: Reply) {
        let Some(current) = self.current.take() else {
            return;
        };
        let server = self.server.name.clone();
        let method = current.method;
        match self.step {
            Step::Discover => self.after_discover(reply),
            Step::Initialize => self.after_initialize(reply, current.exchange.session_id),
            Step::Initialized => match reply {
                Reply::Empty | Reply::Result(_) => {
                    self.state.initialized = true;
                    self.send_goal();
                }
                other => {
                    let error = self.error(other, method);
                    self.fail(error);
                }
            },
            Step::Goal => {
                let status = match &reply {
                    Reply::Error { status, .. } | Reply::Status { status, .. } => *status,
                    _ => 0,
                };
                let era = self.state.era.unwrap_or(Era::Modern);
                if era == Era::Legacy
                    && current.with_session
                    && matches!(status, 404 | 400)
                    && !is_plain_rpc_error(&reply)
                {
                    // The server forgot the session (404 says so; some servers say 400).
                    if self.reinitialized {
                        self.fail(McpError::SessionLost { server });
                    } else {
                        self.reinitialized = true;
                        self.send_initialize();
                    }
                    return;
                }
                if era == Era::Modern && !self.reprobed && stale_era(&reply) {
                    // The remembered era stopped working: probe again, once.
                    self.reprobed = true;
                    self.state = ServerState::default();
                    self.send_discover();
                    return;
                }
                self.after_goal(reply, method);
            }
        }
    }

    fn after_discover(&mut self, reply: Reply) {
        match reply {
            Reply::Result(result) => {
                let supported = strings(result.get("supportedVersions"));
                if supported.iter().any(|v| v == MODERN_VERSION) {
                    self.state.era = Some(Era::Modern);
                    self.state.protocol_version = Some(MODERN_VERSION.into());
                    self.state.session_id = None;
                    self.state.initialized = false;
                    self.send_goal();
                } else if supported.is_empty() || speaks_legacy(&supported) {
                    // No `supportedVersions`: not a current-revision answer.
                    self.send_initialize();
                } else {
                    self.fail(McpError::UnsupportedVersion {
                        server: self.server.name.clone(),
                        offered: supported,
                    });
                }
            }
            Reply::Error {
                code: UNSUPPORTED_VERSION,
                data,
                ..
            } => {
                let supported = strings(data.as_ref().and_then(|d| d.get("supported")));
                if speaks_legacy(&supported) {
                    self.send_initialize();
                } else {
                    self.fail(McpError::UnsupportedVersion {
                        server: self.server.name.clone(),
                        offered: supported,
                    });
                }
            }
            Reply::Error { code, .. } if MODERN_ERRORS.contains(&code) => {
                let error = self.error(reply, "server/discover");
                self.fail(error);
            }
            // Credentials do not get better in another era, and a cut or a flood is no
            // answer about the era at all.
            Reply::Error {
                status: 401 | 403, ..
            }
            | Reply::Status {
                status: 401 | 403, ..
            }
            | Reply::Failed { .. }
            | Reply::TooLarge => {
                let error = self.error(reply, "server/discover");
                self.fail(error);
            }
            // Anything else is not the current revision speaking: fall back to 2025.
            Reply::Error { .. } | Reply::Status { .. } | Reply::Empty | Reply::Garbage(_) => {
                self.send_initialize();
            }
        }
    }

    fn after_initialize(&mut self, reply: Reply, session_id: Option<String>) {
        match reply {
            Reply::Result(result) => {
                let version = result
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !LEGACY_VERSIONS.contains(&version) {
                    self.fail(McpError::UnsupportedVersion {
                        server: self.server.name.clone(),
                        offered: alloc::vec![version.to_string()],
                    });
                    return;
                }
                self.state.era = Some(Era::Legacy);
                self.state.protocol_version = Some(version.into());
                self.state.session_id = session_id;
                self.send_initialized();
            }
            other => {
                let error = self.error(other, "initialize");
                self.fail(error);
            }
        }
    }

    fn after_goal(&mut self, reply: Reply, method: &'static str) {
        let Reply::Result(result) = reply else {
            let error = self.error(reply, method);
            self.fail(error);
            return;
        };
        let modern = self.state.era == Some(Era::Modern);
        if modern {
            match result.get("resultType").and_then(Value::as_str) {
                None | Some("complete") => {}
                Some("input_required") => {
                    self.fail(McpError::InputRequired {
                        server: self.server.name.clone(),
                    });
                    return;
                }
                Some(other) => {
                    self.fail(McpError::Malformed {
                        server: self.server.name.clone(),
                        detail: format!("a result of unknown resultType `{other}`"),
                    });
                    return;
                }
            }
        }
        match &mut self.goal {
            Goal::Call { .. } => {
                self.finish(Ok(Outcome::Called(tool::tool_result(&result))));
            }
            Goal::List {
                cursor,
                pages,
                catalog,
            } => {
                *pages += 1;
                if *pages == 1 {
                    catalog.ttl_ms = result.get("ttlMs").and_then(Value::as_u64);
                }
                let listed = result
                    .get("tools")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                for entry in listed {
                    if catalog.tools.len() >= self.limits.max_tools {
                        catalog.truncated = true;
                        break;
                    }
                    match tool::parse_tool(entry, modern) {
                        Ok(tool) => catalog.tools.push(tool),
                        Err(rejected) => catalog.rejected.push(rejected),
                    }
                }
                let next = result
                    .get("nextCursor")
                    .and_then(Value::as_str)
                    .filter(|c| !c.is_empty())
                    .map(String::from);
                let more = next.is_some() && *cursor != next;
                let room = catalog.tools.len() < self.limits.max_tools;
                if more && room && !catalog.truncated && *pages < self.limits.max_pages {
                    *cursor = next;
                    self.send_goal();
                } else {
                    if more {
                        catalog.truncated = true;
                    }
                    let catalog = core::mem::take(catalog);
                    self.finish(Ok(Outcome::Tools(catalog)));
                }
            }
        }
    }

    /// The error a failed step reports.
    fn error(&self, reply: Reply, method: &str) -> McpError {
        let server = self.server.name.clone();
        match reply {
            Reply::Error {
                code: UNSUPPORTED_VERSION,
                data,
                ..
            } => McpError::UnsupportedVersion {
                server,
                offered: strings(data.as_ref().and_then(|d| d.get("supported"))),
            },
            Reply::Error {
                status,
                code,
                message,
                ..
            } if (200..300).contains(&status) || MODERN_ERRORS.contains(&code) || status == 0 => {
                McpError::Rpc {
                    server,
                    method: method.into(),
                    code,
                    message,
                }
            }
            Reply::Error {
                status, message, ..
            }
            | Reply::Status {
                status,
                text: message,
            } => McpError::Http {
                server,
                status,
                message,
            },
            Reply::Failed {
                began: false,
                reason,
            } => McpError::Unreachable { server, reason },
            Reply::Failed {
                began: true,
                reason,
            } => McpError::Interrupted {
                server,
                method: method.into(),
                reason,
            },
            Reply::Garbage(text) => McpError::Malformed {
                server,
                detail: if text.is_empty() {
                    "an empty answer".into()
                } else {
                    format!("`{text}`")
                },
            },
            Reply::TooLarge => McpError::TooLarge {
                server,
                limit: self.limits.max_response_bytes,
            },
            Reply::Empty | Reply::Result(_) => McpError::Malformed {
                server,
                detail: "no answer in a successful response".into(),
            },
        }
    }
}

/// A JSON-RPC error about the request itself (bad params, unknown tool) rather than about the
/// session: such a 400 is not a forgotten session.
fn is_plain_rpc_error(reply: &Reply) -> bool {
    matches!(reply, Reply::Error { code, .. } if matches!(*code, -32602 | -32601 | -32700))
}

/// A remembered current-era server answered the way only a server of another era would.
fn stale_era(reply: &Reply) -> bool {
    match reply {
        Reply::Error { status, code, .. } => {
            !MODERN_ERRORS.contains(code) && matches!(status, 400 | 404 | 405) && *code != -32601
                || *code == UNSUPPORTED_VERSION
        }
        Reply::Status { status, .. } => matches!(status, 400 | 404 | 405),
        _ => false,
    }
}

fn speaks_legacy(versions: &[String]) -> bool {
    versions
        .iter()
        .any(|v| LEGACY_VERSIONS.contains(&v.as_str()))
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// Fuzzing entry point: `data` as the response body of every step, as an event stream and as
/// JSON, cut where its first byte says. Nothing may panic, and the operation must always end
/// or keep waiting for more (it never asks for a request it does not track).
#[doc(hidden)]
pub fn fuzz_mcp_response(data: &[u8]) {
    let Some((&cut, body)) = data.split_first() else {
        return;
    };
    let cut = usize::from(cut).min(body.len());
    let server = ServerConfig {
        name: "fuzz".into(),
        url: "http://127.0.0.1/mcp".into(),
        headers: Vec::new(),
    };
    let tool = Tool {
        name: "t".into(),
        title: None,
        description: String::new(),
        input_schema: serde_json::json!({"type": "object"}),
        annotations: super::ToolAnnotations::default(),
        header_params: Vec::new(),
    };
    let eras = [
        ServerState::default(),
        ServerState {
            era: Some(Era::Legacy),
            protocol_version: Some(LEGACY_VERSIONS[0].into()),
            session_id: Some("s".into()),
            initialized: true,
        },
    ];
    for state in eras {
        for content_type in ["text/event-stream", "application/json"] {
            for status in [200u16, 400, 404] {
                let limits = Limits::default();
                let ops = [
                    Operation::list_tools(&server, state.clone(), limits),
                    Operation::call_tool(&server, state.clone(), limits, &tool, "c", Value::Null),
                ];
                for mut op in ops {
                    drive_fuzz(&mut op, status, content_type, body, cut);
                }
            }
        }
    }
}

fn drive_fuzz(op: &mut Operation, status: u16, content_type: &str, body: &[u8], cut: usize) {
    let headers = [(String::from("content-type"), String::from(content_type))];
    // Each step gets the same answer; a bounded number of steps (pages, re-initialization).
    for _ in 0..64 {
        let mut sent = Vec::new();
        while let Some(action) = op.poll() {
            match action {
                Action::Send(request) if request.wants_response => sent.push(request.id),
                Action::Send(_) | Action::Progress { .. } => {}
                Action::Done(_) => return,
            }
        }
        let Some(&request) = sent.last() else { return };
        op.on_head(request, status, &headers);
        let (a, b) = body.split_at(cut);
        op.on_body(request, a);
        op.on_body(request, b);
        op.on_end(request);
    }
}
