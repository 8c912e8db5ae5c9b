//! One logical operation against one server, as a state machine: the host moves the bytes,
//! this decides which request comes next.
//!
//! The steps: `server/discover` when the era is unknown; in the 2025 era `initialize` and
//! `notifications/initialized` when there is no session; then the goal (`tools/list` page by
//! page, or `tools/call`). One request that decides the next step is in flight at a time; the
//! answers to the server's pings go out beside it.

use alloc::collections::VecDeque;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value};

use super::error::McpError;
use super::exchange::{snippet, Exchange, Found};
use super::request::{self, Message};
use super::tool::{Catalog, HeaderParam, Tool};
use super::{Action, Era, HttpRequest, Limits, ServerConfig, ServerState};

mod steps;

/// The current revision's own error codes: `HeaderMismatch`, `MissingRequiredClientCapability`,
/// `UnsupportedProtocolVersion`. A server that answers with one speaks the current revision.
const MODERN_ERRORS: [i64; 3] = [-32020, -32021, -32022];
const UNSUPPORTED_VERSION: i64 = -32022;
const HEADER_MISMATCH: i64 = -32020;

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
    /// The tool's definition as listed again after the server said the call's headers do not
    /// match its body (`HeaderMismatch`): the spec's way back from a changed `x-mcp-header`.
    refreshed: Option<Tool>,
    /// That listing is under way (its cursor and pages) after this error.
    relisting: Option<Relist>,
    /// The `WWW-Authenticate` of the last 401, which [`McpError::Unauthorized`] carries.
    challenge: Option<String>,
    /// The operation ended on a 401.
    unauthorized: bool,
}

#[derive(Debug)]
struct Relist {
    cursor: Option<String>,
    pages: u32,
    mismatch: McpError,
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
    /// `tools/list` in search of the called tool's new definition.
    Relist,
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
            refreshed: None,
            relisting: None,
            challenge: None,
            unauthorized: false,
        };
        op.begin();
        op
    }

    /// The next thing to do; `None` while waiting for a response.
    #[must_use]
    pub fn poll(&mut self) -> Option<Action> {
        self.out.pop_front()
    }

    /// Whether the operation failed because the server answered 401, and with which
    /// `WWW-Authenticate` challenge: the host then authorizes ([`auth`](super::auth)) and
    /// starts the operation again.
    #[must_use]
    pub fn unauthorized(&self) -> Option<Option<&str>> {
        self.unauthorized.then_some(self.challenge.as_deref())
    }

    /// The called tool's definition as the server listed it again during the call, after it
    /// refused the call's headers (`HeaderMismatch`): the host's cached copy is out of date and
    /// should be replaced with this one.
    #[must_use]
    pub fn refreshed_tool(&self) -> Option<&Tool> {
        self.refreshed.as_ref()
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
            if status == 401 {
                self.challenge = headers
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case("www-authenticate"))
                    .map(|(_, v)| v.clone());
            }
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
            Step::Goal | Step::Relist => self.state.era.unwrap_or(Era::Modern),
        }
    }

    fn next_request(&mut self) -> u64 {
        self.next_request += 1;
        self.next_request
    }
}
