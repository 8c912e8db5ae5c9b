//! The client's logic, sans IO: what to send, when to reconnect, which reply answers which
//! request, which run an event belongs to.
//!
//! [`Connection`] owns no socket, timer or promise. The shell ([`crate::client`]) feeds it what
//! happened — `opened`, `frame`, `closed`, `tick` with the time, app calls — and carries out
//! the [`Output`]s it [`poll`](Connection::poll)s: open a socket, send a frame, resolve a
//! promise, call a callback. So every rule here (backoff, resume after a drop, heartbeats,
//! request correlation, approvals, client tools) is tested natively, without a browser or a
//! server (STYLE 1).
//!
//! Guarantees the app relies on:
//! - every event of a run reaches it once and in order across drops: on every reopen the
//!   client sends `resume {run_id, after_event_id}` for each unfinished run, the protocol
//!   [`Reassembler`] drops what was already applied and holds what skips ahead; a gap seen on a
//!   live socket asks for a resume at once;
//! - answers the server may not have received when a socket died (approval responses, tool
//!   results) are sent again on the next socket until the server acknowledges them
//!   (`approval_resolved` / `tool_end` for that call);
//! - nothing waits forever without saying so: a request is rejected when its socket drops or
//!   its timeout passes, a run when the client gives up reconnecting or is closed.
//!
//! The first two hold on a weft server. The client may be talking to the original server of
//! its dialect instead (`connection/peer.rs` says how it finds out, and what that server serves): there it
//! sends only what the dialect's document has, shapes the original's turns into runs
//! (`original.rs`), and fails a run cut by a drop with `resume_unsupported`, since nothing can
//! resume it. Every difference is asked of [`Peer`], never of the dialect here.

use std::collections::VecDeque;

use weft_protocol::sorted::{SortedMap, SortedSet};

use serde_json::{Map, Value};
use weft_protocol::command::{
    ApprovalDecision, ClientTools, Resume, RunCommand, ToolFormat, ToolResult, ToolShowQuery,
    ToolsQuery, UserMessagesQuery,
};
use weft_protocol::event::{Sequenced, ToolSpec};
use weft_protocol::reassembler::{Gap, RunStatus, ToolStatus};
use weft_protocol::{
    Agent, Command, Dialect, Event, Limits, Reassembler, Review, Role, Transcript,
};

use crate::backoff::Backoff;
use crate::error::Error;
use crate::types::{
    ApprovalAnswer, ApprovalRequest, ClientStatus, CompactResult, ContextInfo, RunOptions,
    RunResult, ToolDefinition, UserMessagesOptions, UserMessagesPage,
};
pub use peer::{Peer, ServerChoice, ServerKind};

/// The app's handle on one run it started (stable even before the server names the run).
pub type RunHandle = u32;

/// Close code the client uses for its own normal close.
pub const CLOSE_NORMAL: u16 = 1000;
/// Close code the client uses when it abandons a socket that stopped answering heartbeats.
pub const CLOSE_DEAD: u16 = 4000;

/// Everything fixed for the life of a client.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The wire protocol.
    pub dialect: Dialect,
    /// The endpoint URL (see [`endpoint_url`]).
    pub url: String,
    /// WebSocket subprotocols: `weft.<dialect>`, and `weft.token.<t>` with a token.
    pub protocols: Vec<String>,
    /// Which server to expect (`server` option).
    pub server: ServerChoice,
    /// The URL for an original server, which takes no subprotocol: [`Config::url`] with the
    /// token, if any, as the `token` query parameter (see [`original_url`]).
    pub original_url: String,
    /// Default thread of runs.
    pub session_id: Option<String>,
    /// The reconnect policy; `None` stays down after a drop.
    pub reconnect: Option<Backoff>,
    /// Heartbeat ping period in ms; 0 disables heartbeats.
    pub heartbeat_interval_ms: f64,
    /// How long after a heartbeat ping some frame must arrive, in ms.
    pub heartbeat_timeout_ms: f64,
    /// How long a request waits for its reply, in ms.
    pub request_timeout_ms: f64,
    /// Prefix of request ids, random per client so ids never collide within a session.
    pub id_prefix: String,
}

/// What kind of reply a request waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// `ping()`.
    Ping,
    /// `toolsList()`.
    ToolsList,
    /// `toolShow()`.
    ToolShow,
    /// `userMessages()`.
    UserMessages,
    /// `contextInfo()`.
    ContextInfo,
    /// `compact()`.
    Compact,
}

impl RequestKind {
    /// The method that asks it, for errors.
    pub fn method(self) -> &'static str {
        match self {
            RequestKind::Ping => "ping()",
            RequestKind::ToolsList => "toolsList()",
            RequestKind::ToolShow => "toolShow()",
            RequestKind::UserMessages => "userMessages()",
            RequestKind::ContextInfo => "contextInfo()",
            RequestKind::Compact => "compact()",
        }
    }
}

/// A reply, decoded for the request that asked for it.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `ping()`: the round trip in ms.
    Pong(f64),
    /// `toolsList()`.
    Tools(Vec<ToolDefinition>),
    /// `toolShow()`: the JSON definition, or the YAML text as a string.
    Tool(Value),
    /// `userMessages()`.
    Messages(UserMessagesPage),
    /// `contextInfo()`.
    Context(ContextInfo),
    /// `compact()`.
    Compacted(CompactResult),
}

/// Work for the shell, in the order it must be done.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Open a new socket (dropping any previous one).
    Open {
        /// Endpoint URL.
        url: String,
        /// Subprotocols to offer.
        protocols: Vec<String>,
    },
    /// Close the current socket and ignore anything more from it.
    Close {
        /// Close code.
        code: u16,
        /// Close reason.
        reason: String,
    },
    /// Send this frame on the current socket.
    Send(String),
    /// Tell `onStatus` listeners.
    Status(ClientStatus),
    /// Resolve the promises of `connect()`.
    Connected,
    /// Reject the promises of `connect()`.
    ConnectFailed(Error),
    /// An applied event: to `client.onEvent`, and to its run's listeners and iterators.
    Event {
        /// The app's run it belongs to, if the app started it.
        run: Option<RunHandle>,
        /// The event.
        event: Sequenced,
    },
    /// New assistant text of a run, for `run.onText`.
    Text {
        /// The run.
        run: RunHandle,
        /// The text added.
        delta: String,
    },
    /// A run ended: settle `run.result`, end its iterators.
    RunDone {
        /// The run.
        run: RunHandle,
        /// Its result, or why it failed.
        result: Result<RunResult, Error>,
    },
    /// Settle the promise of a request.
    Reply {
        /// Request id.
        id: String,
        /// What was asked.
        kind: RequestKind,
        /// The reply or the failure.
        result: Result<Reply, Error>,
    },
    /// Ask the app's `onApproval` callback; answer with [`Connection::answer`].
    Approval(ApprovalRequest),
    /// An approval asked for was settled without this client (another tab answered, or the
    /// request came from a replay of a run whose approval was answered long ago): abort the
    /// request's `signal`; the callback's answer, if it still comes, is not sent.
    ApprovalWithdrawn {
        /// The call.
        call_id: String,
    },
    /// Run the app's handler of a client tool; answer with [`Connection::tool_result`].
    ClientTool {
        /// The call to answer.
        call_id: String,
        /// The tool.
        name: String,
        /// Its arguments.
        arguments: Value,
    },
    /// A problem not tied to a call the app made (an undecodable frame, an error frame
    /// answering nothing), for `onError` listeners.
    Error(Error),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// Not connected and not trying: before `connect()`, after a failed first attempt, after
    /// giving up reconnecting.
    Idle,
    /// A socket is opening; `first` when no socket of this client has opened yet.
    Connecting { first: bool },
    /// A socket is open.
    Open,
    /// Waiting to reconnect; `first` when no socket of this client has opened yet (the second
    /// try of a first connect, without the subprotocol an original server refuses).
    Waiting { until: f64, first: bool },
    /// `close()` was called: final.
    Closed,
}

#[derive(Debug, Clone)]
struct RunSlot {
    run_id: String,
    /// Its `run` frame went out on a socket, or it is followed ([`Connection::follow`]): either
    /// way a reopened socket resumes it.
    sent: bool,
    /// Started elsewhere and followed here: never the run a nameless event or a run start
    /// named by the server belongs to.
    followed: bool,
    /// An event of it arrived.
    started: bool,
    /// Text already given to `onText` for the response being streamed.
    text: String,
    /// The user message, for the transcript where an original server does not echo it.
    message: String,
}

#[derive(Debug, Clone)]
struct Request {
    kind: RequestKind,
    /// What was asked, to refuse it at once if the server found turns out not to serve it.
    command: Command,
    sent: bool,
    sent_at: f64,
    deadline: f64,
    thread_id: String,
}

#[derive(Debug, Clone)]
enum Tag {
    None,
    Request(String),
    Run(RunHandle),
}

/// The client's state across sockets. See the module docs.
#[derive(Debug)]
pub struct Connection {
    cfg: Config,
    reassembler: Reassembler,
    phase: Phase,
    /// Failed attempts in a row.
    attempt: u32,
    outbox: VecDeque<(String, Tag)>,
    requests: SortedMap<String, Request>,
    heartbeats: SortedSet<String>,
    runs: SortedMap<RunHandle, RunSlot>,
    next_run: RunHandle,
    next_id: u64,
    tools: Vec<ToolSpec>,
    approvals: bool,
    /// `client_tools` went out on the current socket (so an empty list must be sent to retract).
    declared: bool,
    unacked_approvals: SortedMap<String, String>,
    unacked_results: SortedMap<String, String>,
    /// Calls whose approval the app is being asked for and has not answered.
    asking: SortedSet<String>,
    dispatched: SortedSet<String>,
    /// Tools a user answered `always` for: the server runs their calls without asking again.
    always: SortedSet<String>,
    /// Resumes asked on this socket, by run: the `after_event_id` asked for.
    resuming: SortedMap<String, u64>,
    /// Some frame carried weft's run id: this is a weft server, so a frame without one belongs
    /// to no run.
    weft_server: bool,
    /// The server found (or fixed by the `server` option); `None` until the first socket
    /// says which.
    server: Option<ServerKind>,
    /// The socket being opened offers `weft.<dialect>`.
    offered_weft: bool,
    /// The first connect offered `weft.<dialect>` and failed: try once without it.
    try_original: bool,
    /// The `ping` asking a server that selected the subprotocol whether it is weft, and when
    /// to stop waiting for its answer (see `connection/peer.rs`).
    probe: Option<(String, f64)>,
    next_ping: Option<f64>,
    pong_deadline: Option<f64>,
    out: VecDeque<Output>,
}

impl Connection {
    /// A client that has not connected yet.
    pub fn new(cfg: Config) -> Self {
        Connection {
            reassembler: Reassembler::new(cfg.dialect).with_events(),
            server: cfg.server.known(),
            cfg,
            phase: Phase::Idle,
            attempt: 0,
            outbox: VecDeque::new(),
            requests: SortedMap::new(),
            heartbeats: SortedSet::new(),
            runs: SortedMap::new(),
            next_run: 1,
            next_id: 0,
            tools: Vec::new(),
            approvals: false,
            declared: false,
            unacked_approvals: SortedMap::new(),
            unacked_results: SortedMap::new(),
            asking: SortedSet::new(),
            dispatched: SortedSet::new(),
            always: SortedSet::new(),
            resuming: SortedMap::new(),
            weft_server: false,
            offered_weft: false,
            try_original: false,
            probe: None,
            next_ping: None,
            pong_deadline: None,
            out: VecDeque::new(),
        }
    }

    /// The dialect spoken.
    pub fn dialect(&self) -> Dialect {
        self.cfg.dialect
    }

    /// The server found, once a socket has opened (or as the `server` option fixed it).
    pub fn server(&self) -> Option<ServerKind> {
        self.server
    }

    /// The server as the client's rules see it: weft until found otherwise (requests made
    /// before are queued, and refused when the server found does not serve them).
    pub fn peer(&self) -> Peer {
        Peer {
            dialect: self.cfg.dialect,
            kind: self.server.unwrap_or(ServerKind::Weft),
        }
    }

    /// The next thing for the shell to do.
    #[must_use]
    pub fn poll(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    /// Everything reassembled so far, from every run the session streamed to this client.
    pub fn transcript(&self) -> &Transcript {
        self.reassembler.transcript()
    }

    /// The resume point of a run.
    pub fn last_event_id(&self, run_id: &str) -> u64 {
        self.reassembler.last_event_id(run_id)
    }

    /// The run id of a run the app started (until it ends).
    pub fn run_id(&self, run: RunHandle) -> Option<&str> {
        self.runs.get(&run).map(|r| r.run_id.as_str())
    }

    /// When [`Connection::tick`] must next be called, if ever.
    pub fn deadline(&self) -> Option<f64> {
        let waiting = match self.phase {
            Phase::Waiting { until, .. } => Some(until),
            _ => None,
        };
        let probe = self.probe.as_ref().map(|(_, until)| *until);
        [waiting, probe, self.next_ping, self.pong_deadline]
            .into_iter()
            .flatten()
            .chain(self.requests.values().map(|r| r.deadline))
            .reduce(f64::min)
    }

    // ----- the socket's life -----

    /// `connect()`: opens the first socket (or reports that one is open).
    pub fn connect(&mut self) {
        match self.phase {
            Phase::Open => self.out.push_back(Output::Connected),
            Phase::Connecting { .. } | Phase::Waiting { .. } => {}
            Phase::Idle => {
                self.phase = Phase::Connecting { first: true };
                self.attempt = 0;
                self.status("connecting", None, None, None);
                self.open();
            }
            Phase::Closed => self
                .out
                .push_back(Output::ConnectFailed(Error::closed("connect()"))),
        }
    }

    /// The socket asked for by the last [`Output::Open`] opened, with the subprotocol offered
    /// selected (if one was offered).
    pub fn opened(&mut self, now: f64) {
        let selected = match self.offered_weft {
            true => self.cfg.protocols.first().cloned().unwrap_or_default(),
            false => String::new(),
        };
        self.opened_as(now, &selected);
    }

    /// The socket asked for by the last [`Output::Open`] opened and the server selected this
    /// subprotocol (`""` for none). On the first socket this finds the server (see `connection/peer.rs`):
    /// no subprotocol is an original; `weft.<dialect>` is weft, but where the original selects
    /// any offered protocol the client first asks with a `ping` that only weft answers with
    /// `pong`, and holds everything else until the answer.
    pub fn opened_as(&mut self, now: f64, selected: &str) {
        if !matches!(self.phase, Phase::Connecting { .. }) || self.probe.is_some() {
            return;
        }
        let kind = match self.server {
            Some(kind) => kind,
            None if !self.offered_weft || selected.is_empty() => ServerKind::Original,
            None if self.cfg.dialect.original_selects_offered_subprotocol() => {
                let id = self.new_id("probe");
                match self
                    .cfg
                    .dialect
                    .encode_request(&Command::Ping { id: id.clone() }, &id)
                {
                    Ok(frame) => {
                        self.probe = Some((id, now + self.cfg.heartbeat_timeout_ms));
                        self.out.push_back(Output::Send(frame));
                        return;
                    }
                    // Every dialect carries weft's ping; were it ever refused, the selected
                    // subprotocol is the best evidence left.
                    Err(_) => ServerKind::Weft,
                }
            }
            None => ServerKind::Weft,
        };
        self.found(kind, now);
    }

    /// The server of the socket just opened is known: the socket is usable.
    fn found(&mut self, kind: ServerKind, now: f64) {
        self.probe = None;
        self.try_original = false;
        self.phase = Phase::Open;
        self.attempt = 0;
        self.resuming.clear();
        self.declared = false;
        self.status("open", None, None, None);
        if self.server.is_none() {
            self.server = Some(kind);
            self.refuse_unserved();
        }
        let peer = self.peer();
        if peer.takes_client_tools() && (!self.tools.is_empty() || self.approvals) {
            self.declare_tools();
        }
        if !peer.resumes() {
            return self.established(now);
        }
        // Every run still streaming, and every run of ours not heard of yet: resume it, so a
        // drop loses and doubles nothing (resuming a run that never started replays it whole).
        let mut resume: Vec<String> = self
            .reassembler
            .transcript()
            .runs
            .iter()
            .filter(|r| r.status == RunStatus::Running)
            .filter_map(|r| r.run_id.clone())
            .collect();
        for slot in self.runs.values() {
            if slot.sent && !resume.contains(&slot.run_id) {
                resume.push(slot.run_id.clone());
            }
        }
        for run_id in resume {
            let after_event_id = self.reassembler.last_event_id(&run_id);
            self.send_resume(run_id, after_event_id);
        }
        self.established(now);
    }

    /// The last steps of opening a socket: send what waited, start the heartbeat, resolve
    /// `connect()`.
    fn established(&mut self, now: f64) {
        let resend: Vec<String> = match self.peer().acknowledges_answers() {
            true => self
                .unacked_approvals
                .values()
                .chain(self.unacked_results.values())
                .cloned()
                .collect(),
            false => Vec::new(),
        };
        for frame in resend {
            self.out.push_back(Output::Send(frame));
        }
        while let Some((frame, tag)) = self.outbox.pop_front() {
            self.mark_sent(&tag, now);
            self.out.push_back(Output::Send(frame));
        }
        let ping = Command::Ping { id: String::new() };
        if self.cfg.heartbeat_interval_ms > 0.0 && self.peer().serves(&ping) {
            self.next_ping = Some(now + self.cfg.heartbeat_interval_ms);
        }
        self.pong_deadline = None;
        self.out.push_back(Output::Connected);
    }

    /// The current socket closed (or could not open) with this code and reason. `random` in
    /// `[0, 1)` jitters the reconnect delay.
    pub fn closed(&mut self, code: u16, reason: &str, now: f64, random: f64) {
        let why = if reason.is_empty() {
            format!("close code {code}")
        } else {
            format!("close code {code}: {reason}")
        };
        self.next_ping = None;
        self.pong_deadline = None;
        self.heartbeats.clear();
        self.probe = None;
        match self.phase {
            Phase::Idle | Phase::Closed | Phase::Waiting { .. } => return,
            Phase::Connecting { first: true } => {
                if self.server.is_none() && self.offered_weft && !self.try_original {
                    // Perhaps an original server, which refuses a handshake offering a
                    // subprotocol: try again at once without it. (On the next turn of the
                    // event loop: the shell is inside the failed socket's handler.)
                    self.try_original = true;
                    self.phase = Phase::Waiting {
                        until: now,
                        first: true,
                    };
                    return;
                }
                self.try_original = false;
                self.phase = Phase::Idle;
                let e = Error::new(
                    "connect_failed",
                    format!(
                        "could not connect to {} ({why}); check the URL, that the server is \
                         running, and the token",
                        self.cfg.url
                    ),
                );
                self.give_up(e, why);
                return;
            }
            Phase::Open | Phase::Connecting { first: false } => {}
        }
        if !self.peer().resumes() {
            self.cut_runs(&why);
        }
        self.fail_sent_requests(&Error::new(
            "disconnected",
            format!("the connection dropped ({why}) before the reply arrived; ask again"),
        ));
        // 1008 and 4000-4999 are the server refusing this client (auth, origin, policy):
        // trying again would only be refused again.
        let refused = code == 1008 || (4000..=4999).contains(&code);
        match self.cfg.reconnect {
            Some(b) if !refused && b.allows(self.attempt + 1) => {
                self.attempt += 1;
                let delay = b.delay(self.attempt, random);
                self.phase = Phase::Waiting {
                    until: now + delay,
                    first: false,
                };
                self.status("reconnecting", Some(self.attempt), Some(delay), Some(why));
            }
            _ => {
                self.phase = Phase::Idle;
                let advice = if refused {
                    "the server refused the connection"
                } else if self.cfg.reconnect.is_some() {
                    "gave up reconnecting"
                } else {
                    "reconnect is off"
                };
                let e = Error::new(
                    "disconnected",
                    format!(
                        "the connection to {} closed ({why}); {advice}",
                        self.cfg.url
                    ),
                );
                self.give_up(e, why);
            }
        }
    }

    /// Time passed: reconnect when the wait is over, ping, notice a dead socket, expire
    /// requests.
    pub fn tick(&mut self, now: f64, random: f64) {
        if let Phase::Waiting { until, first } = self.phase {
            if now >= until {
                self.phase = Phase::Connecting { first };
                self.open();
            }
        }
        let probing = matches!(self.phase, Phase::Connecting { .. });
        if probing && self.probe.as_ref().is_some_and(|(_, until)| now >= *until) {
            // weft answers a ping at once; silence is not weft.
            self.found(ServerKind::Original, now);
        }
        if self.phase == Phase::Open {
            if self.pong_deadline.is_some_and(|d| now >= d) {
                self.out.push_back(Output::Close {
                    code: CLOSE_DEAD,
                    reason: "no reply to a heartbeat".into(),
                });
                self.closed(1006, "no reply to a heartbeat ping", now, random);
            } else if self.next_ping.is_some_and(|t| now >= t) {
                let id = self.new_id("hb");
                let running = self.runs.values().any(|r| r.sent && !r.followed);
                let ping = Command::Ping { id: id.clone() };
                let frame = match self.peer().heartbeat(running) {
                    true => self.cfg.dialect.encode_request(&ping, &id).ok(),
                    false => None,
                };
                if let Some(frame) = frame {
                    self.heartbeats.insert(id);
                    self.out.push_back(Output::Send(frame));
                    self.pong_deadline = Some(now + self.cfg.heartbeat_timeout_ms);
                }
                self.next_ping = Some(now + self.cfg.heartbeat_interval_ms);
            }
        }
        let expired: Vec<String> = self
            .requests
            .iter()
            .filter(|(_, r)| r.deadline <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            if let Some(r) = self.requests.remove(&id) {
                let e = Error::new(
                    "timeout",
                    format!(
                        "no reply from the server within {} ms; ask again, or raise requestTimeoutMs",
                        crate::marshal::number(self.cfg.request_timeout_ms)
                    ),
                );
                self.out.push_back(Output::Reply {
                    id,
                    kind: r.kind,
                    result: Err(e),
                });
            }
        }
    }

    /// A frame arrived on the current socket.
    pub fn frame(&mut self, bytes: &[u8], now: f64) {
        if self.probe.is_some() {
            return self.probe_frame(bytes, now);
        }
        if self.phase != Phase::Open {
            return;
        }
        // Any frame proves the socket alive.
        self.pong_deadline = None;
        let mut events = match self.cfg.dialect.decode_server(bytes, Limits::default()) {
            Ok(events) => events,
            Err(e) => {
                let e = Error::from(e).context("the server sent a frame the SDK cannot decode");
                self.out.push_back(Output::Error(e));
                return;
            }
        };
        if events.len() == 1 && self.is_reply(&events[0]) {
            if let Some(ev) = events.pop() {
                self.reply(ev, now);
            }
            return;
        }
        if self.peer().turn_end().is_some() {
            // An original server: nothing to resume or reorder, one event at a time, each
            // shaped into the run weft would have sent ([`Connection::shape`]).
            for ev in self.shape(events) {
                self.reassembler.push_event(ev);
            }
            while let Some(ev) = self.reassembler.poll() {
                self.route(ev);
            }
            return;
        }
        let pushed = match events.len() {
            0 => return,
            1 => match events.pop() {
                Some(ev) => self.reassembler.push_event(ev),
                None => return,
            },
            // Several events share the frame's event id: the reassembler applies them as a unit.
            _ => match self.reassembler.push_frame(bytes) {
                Ok(p) => p,
                Err(e) => {
                    self.out.push_back(Output::Error(e.into()));
                    return;
                }
            },
        };
        if let Some(gap) = pushed.gap {
            self.resume_gap(gap);
        }
        while let Some(ev) = self.reassembler.poll() {
            self.route(ev);
        }
    }

    /// `close()`: closes the socket for good and settles everything still waiting.
    pub fn close(&mut self) {
        if self.phase == Phase::Closed {
            return;
        }
        let had_socket = matches!(self.phase, Phase::Open | Phase::Connecting { .. });
        self.phase = Phase::Closed;
        self.next_ping = None;
        self.pong_deadline = None;
        self.probe = None;
        if had_socket {
            self.out.push_back(Output::Close {
                code: CLOSE_NORMAL,
                reason: "client closed".into(),
            });
        }
        let e = Error::new("closed", "the client was closed before this finished");
        self.fail_all(&e);
        self.out.push_back(Output::ConnectFailed(e));
        self.status("closed", None, None, Some("client closed".into()));
    }

    // ----- what the app asks -----

    /// `run()`: starts a run with the id the shell chose (a UUID: run ids are session-wide).
    pub fn run(&mut self, opts: RunOptions, run_id: String, now: f64) -> Result<RunHandle, Error> {
        self.usable("run()")?;
        if opts.message.trim().is_empty() {
            return Err(Error::argument("run(): message must not be empty"));
        }
        let message = opts.message.clone();
        let cmd = Command::Run(RunCommand {
            message: opts.message,
            agent: opts.agent.as_deref().map(Agent::from).unwrap_or_default(),
            id: Some(run_id.clone()),
            thread_id: opts.thread_id.or_else(|| self.cfg.session_id.clone()),
            working_folder: opts.working_folder,
            got_adaptive: opts.got_adaptive,
            verbose: opts.verbose,
            previous_response_id: None,
        });
        let frame = self.encode(&cmd, &run_id, "run()")?;
        let handle = self.new_handle();
        self.runs.insert(
            handle,
            RunSlot {
                run_id,
                sent: false,
                followed: false,
                started: false,
                text: String::new(),
                message,
            },
        );
        self.send(frame, Tag::Run(handle), now);
        Ok(handle)
    }

    /// `follow()`: attaches to a run this client did not start (one started before the page
    /// was reloaded, or from another tab or device: `userMessages()` names the session's
    /// active run). The server replays what this client has not applied of it, then streams
    /// the rest live, through the same `resume` that mends a dropped socket; a run the server
    /// does not know fails with `unknown_run`. A run this client already holds whole settles at
    /// once from the transcript. Following a run twice gives the same handle.
    pub fn follow(&mut self, run_id: String) -> Result<RunHandle, Error> {
        self.usable("follow()")?;
        if run_id.trim().is_empty() {
            return Err(Error::argument("follow(): runId must not be empty"));
        }
        let peer = self.peer();
        if !peer.resumes() {
            return Err(Error::new("unsupported", peer.why_not("follow()")));
        }
        if let Some((h, _)) = self.runs.iter().find(|(_, r)| r.run_id == run_id) {
            return Ok(*h);
        }
        let handle = self.new_handle();
        let seen = self.reassembler.transcript().run(&run_id);
        let over = match seen {
            Some(r) if r.status != RunStatus::Running => Some(match r.status {
                RunStatus::Completed => Ok(RunResult {
                    reply: r.reply.clone().unwrap_or_default(),
                    usage: r.usage,
                    total_usage: r.total_usage,
                    run_id: run_id.clone(),
                }),
                status => Err(Error::new(
                    if status == RunStatus::Cancelled {
                        "cancelled"
                    } else {
                        "run_failed"
                    },
                    r.error.clone().unwrap_or_else(|| "the run failed".into()),
                )),
            }),
            _ => None,
        };
        if let Some(result) = over {
            self.out.push_back(Output::RunDone {
                run: handle,
                result,
            });
            return Ok(handle);
        }
        // Text of the response streaming now, already applied: `onText` continues after it.
        let text = self
            .reassembler
            .transcript()
            .messages
            .iter()
            .rev()
            .find(|m| m.run_id.as_deref() == Some(run_id.as_str()))
            .filter(|m| m.role == Role::Assistant && !m.complete)
            .map(|m| m.text.clone())
            .unwrap_or_default();
        self.runs.insert(
            handle,
            RunSlot {
                run_id: run_id.clone(),
                sent: true,
                followed: true,
                started: seen.is_some(),
                text,
                message: String::new(),
            },
        );
        if self.phase == Phase::Open {
            let after_event_id = self.reassembler.last_event_id(&run_id);
            self.send_resume(run_id, after_event_id);
        }
        Ok(handle)
    }

    /// `run.cancel()`: asks the server to stop the run (a run whose frame never left is
    /// cancelled here). Its result then rejects with code `cancelled`.
    pub fn cancel(&mut self, run: RunHandle, now: f64) -> Result<(), Error> {
        self.usable("cancel()")?;
        let Some(slot) = self.runs.get(&run) else {
            return Ok(());
        };
        if !slot.sent {
            self.outbox
                .retain(|(_, tag)| !matches!(tag, Tag::Run(h) if *h == run));
            self.runs.remove(&run);
            self.out.push_back(Output::RunDone {
                run,
                result: Err(Error::new(
                    "cancelled",
                    "the run was cancelled before it started",
                )),
            });
            return Ok(());
        }
        let run_id = slot.run_id.clone();
        let cmd = Command::Cancel {
            run_id: run_id.clone(),
        };
        let peer = self.peer();
        if !peer.serves(&cmd) {
            return Err(Error::new("unsupported", peer.why_not("cancel()")));
        }
        let frame = self.encode(&cmd, &run_id, "cancel()")?;
        self.send(frame, Tag::None, now);
        Ok(())
    }

    /// `ping()`: returns the request id; the reply is the round trip in ms.
    pub fn ping(&mut self, now: f64) -> Result<String, Error> {
        let id = self.new_id("ping");
        let cmd = Command::Ping { id: id.clone() };
        self.request(cmd, id, RequestKind::Ping, String::new(), "ping()", now)
    }

    /// `toolsList()`.
    pub fn tools_list(&mut self, now: f64) -> Result<String, Error> {
        let id = self.new_id("tools");
        let cmd = Command::ToolsList(ToolsQuery {
            id: id.clone(),
            working_folder: None,
            thread_id: self.cfg.session_id.clone(),
        });
        self.request(
            cmd,
            id,
            RequestKind::ToolsList,
            String::new(),
            "toolsList()",
            now,
        )
    }

    /// `toolShow()`.
    pub fn tool_show(&mut self, name: &str, json: bool, now: f64) -> Result<String, Error> {
        let id = self.new_id("tool");
        let cmd = Command::ToolShow(ToolShowQuery {
            id: id.clone(),
            name: name.into(),
            output: Some(if json {
                ToolFormat::Json
            } else {
                ToolFormat::Yaml
            }),
            working_folder: None,
            thread_id: self.cfg.session_id.clone(),
        });
        self.request(
            cmd,
            id,
            RequestKind::ToolShow,
            String::new(),
            "toolShow()",
            now,
        )
    }

    /// `userMessages()`.
    pub fn user_messages(
        &mut self,
        thread_id: &str,
        opts: UserMessagesOptions,
        now: f64,
    ) -> Result<String, Error> {
        if thread_id.is_empty() {
            return Err(Error::argument(
                "userMessages(): threadId must not be empty",
            ));
        }
        let id = self.new_id("messages");
        let cmd = Command::UserMessages(UserMessagesQuery {
            id: id.clone(),
            thread_id: thread_id.into(),
            before: opts.before,
            limit: opts.limit,
        });
        let thread = String::from(thread_id);
        self.request(
            cmd,
            id,
            RequestKind::UserMessages,
            thread,
            "userMessages()",
            now,
        )
    }

    /// `contextInfo()` (agentloop `get_context_info`). The reply names no request: it is the
    /// next `context_info` outside a run.
    pub fn context_info(&mut self, now: f64) -> Result<String, Error> {
        let id = self.new_id("context");
        let cmd = Command::ContextInfo {
            id: Some(id.clone()),
        };
        self.request(
            cmd,
            id,
            RequestKind::ContextInfo,
            String::new(),
            "contextInfo()",
            now,
        )
    }

    /// `compact()` (agentloop `manual_compact`). The server answers with a compaction of its
    /// own, which names no request either: its `context_compacted` (or `error`) is the first
    /// event of a run the app did not start (see [`Connection::compaction`]).
    pub fn compact(&mut self, now: f64) -> Result<String, Error> {
        let id = self.new_id("compact");
        let cmd = Command::Compact {
            id: Some(id.clone()),
        };
        self.request(
            cmd,
            id,
            RequestKind::Compact,
            String::new(),
            "compact()",
            now,
        )
    }

    /// The app's decision on an approval request, sent in the dialect's own message.
    pub fn answer(
        &mut self,
        call_id: Option<String>,
        answer: ApprovalAnswer,
        now: f64,
    ) -> Result<(), Error> {
        self.usable("onApproval")?;
        let review = Review::parse(&answer.review).ok_or_else(|| {
            Error::argument(format!(
                "onApproval: the callback answered review {:?}; use \"yes\", \"no-continue\", \
                 \"no-exit\", \"always\" or \"explain\"",
                answer.review
            ))
        })?;
        let (custom_deny_message, explanation) = if review.approves() || review == Review::Explain {
            (None, answer.message)
        } else {
            (answer.message, None)
        };
        let cmd = Command::ApprovalResponse(ApprovalDecision {
            call_id: call_id.clone(),
            review,
            custom_deny_message,
            explanation,
        });
        if let Some(c) = &call_id {
            if !self.asking.remove(c) {
                // Settled meanwhile without this client (the request was withdrawn): the
                // server would refuse the answer as stale.
                return Ok(());
            }
        }
        let peer = self.peer();
        if !peer.serves(&cmd) {
            return Err(Error::new("unsupported", peer.why_not("onApproval")));
        }
        let frame_id = self.new_id("approval");
        let frame = self.encode(&cmd, &frame_id, "onApproval")?;
        match call_id {
            Some(call_id) if peer.acknowledges_answers() => {
                self.unacked_approvals.insert(call_id, frame.clone());
                self.send_unacked(frame);
            }
            // An original agentloop server approves its oldest pending call: nothing to
            // acknowledge it by, so it waits in the outbox like any request.
            _ => self.send(frame, Tag::None, now),
        }
        Ok(())
    }

    /// The outcome of a client tool the app ran.
    pub fn tool_result(
        &mut self,
        call_id: String,
        result: String,
        is_error: bool,
    ) -> Result<(), Error> {
        self.usable("registerTool")?;
        let cmd = Command::ToolResult(ToolResult {
            call_id: call_id.clone(),
            result,
            is_error,
        });
        let peer = self.peer();
        if !peer.serves(&cmd) {
            return Err(Error::new("unsupported", peer.why_not("registerTool()")));
        }
        let frame = self.encode(&cmd, &call_id, "registerTool")?;
        self.unacked_results.insert(call_id, frame.clone());
        self.send_unacked(frame);
        Ok(())
    }

    /// The tools the app runs itself changed: declare the new list on the open socket (and on
    /// every socket after it).
    pub fn set_tools(&mut self, tools: Vec<ToolSpec>) {
        self.tools = tools;
        if self.server.is_some() {
            self.tools_unserved();
        }
        self.redeclare();
    }

    /// Whether the app answers approvals. agentchat and cueso sockets must say so with
    /// `client_tools {approvals: true}` to be asked at all; loom and agentloop always are.
    pub fn set_approver(&mut self, on: bool) {
        let approvals = on && matches!(self.cfg.dialect, Dialect::Agentchat | Dialect::Cueso);
        if approvals != self.approvals {
            self.approvals = approvals;
            self.redeclare();
        }
    }

    // ----- inside -----

    fn usable(&self, method: &str) -> Result<(), Error> {
        if self.phase == Phase::Closed {
            return Err(Error::closed(method));
        }
        Ok(())
    }

    fn new_handle(&mut self) -> RunHandle {
        let handle = self.next_run;
        self.next_run = self.next_run.wrapping_add(1);
        handle
    }

    fn new_id(&mut self, what: &str) -> String {
        self.next_id += 1;
        format!("{}-{what}-{}", self.cfg.id_prefix, self.next_id)
    }

    fn encode(&self, cmd: &Command, frame_id: &str, method: &str) -> Result<String, Error> {
        self.cfg
            .dialect
            .encode_request(cmd, frame_id)
            .map_err(|e| Error::from_protocol(&e, method))
    }

    fn request(
        &mut self,
        cmd: Command,
        id: String,
        kind: RequestKind,
        thread_id: String,
        method: &str,
        now: f64,
    ) -> Result<String, Error> {
        self.usable(method)?;
        let frame = self
            .cfg
            .dialect
            .encode_request(&cmd, &id)
            .map_err(|e| match e {
                weft_protocol::Error::Unsupported { .. } => {
                    let only = match kind {
                        RequestKind::ContextInfo | RequestKind::Compact => {
                            "only the agentloop dialect serves it"
                        }
                        _ => "only the loom dialect serves it",
                    };
                    Error::unsupported(method, self.cfg.dialect, only)
                }
                e => Error::from_protocol(&e, method),
            })?;
        let peer = self.peer();
        if !peer.serves(&cmd) {
            return Err(Error::new("unsupported", peer.why_not(method)));
        }
        self.requests.insert(
            id.clone(),
            Request {
                kind,
                command: cmd,
                sent: false,
                sent_at: now,
                deadline: now + self.cfg.request_timeout_ms,
                thread_id,
            },
        );
        self.send(frame, Tag::Request(id.clone()), now);
        Ok(id)
    }

    fn send(&mut self, frame: String, tag: Tag, now: f64) {
        if self.phase == Phase::Open {
            self.mark_sent(&tag, now);
            self.out.push_back(Output::Send(frame));
        } else {
            self.outbox.push_back((frame, tag));
        }
    }

    /// Sends an answer kept until the server acknowledges it: now if a socket is open; else
    /// [`Connection::opened`] sends it with the other unacknowledged answers (putting it in the
    /// outbox as well would send it twice).
    fn send_unacked(&mut self, frame: String) {
        if self.phase == Phase::Open {
            self.out.push_back(Output::Send(frame));
        }
    }

    fn mark_sent(&mut self, tag: &Tag, now: f64) {
        match tag {
            Tag::Request(id) => {
                if let Some(r) = self.requests.get_mut(id) {
                    r.sent = true;
                    r.sent_at = now;
                }
            }
            Tag::Run(h) => {
                if let Some(r) = self.runs.get_mut(h) {
                    r.sent = true;
                }
            }
            Tag::None => {}
        }
    }

    /// Opens a socket: offering `weft.<dialect>` unless the server is, or may be, an original.
    fn open(&mut self) {
        self.offered_weft = match self.server {
            Some(kind) => kind == ServerKind::Weft,
            None => !self.try_original,
        };
        let (url, protocols) = match self.offered_weft {
            true => (self.cfg.url.clone(), self.cfg.protocols.clone()),
            false => (self.cfg.original_url.clone(), Vec::new()),
        };
        self.out.push_back(Output::Open { url, protocols });
    }

    fn status(
        &mut self,
        state: &'static str,
        attempt: Option<u32>,
        retry_in_ms: Option<f64>,
        reason: Option<String>,
    ) {
        self.out.push_back(Output::Status(ClientStatus {
            state,
            attempt,
            retry_in_ms,
            reason,
        }));
    }

    fn redeclare(&mut self) {
        if self.phase == Phase::Open
            && self.peer().takes_client_tools()
            && (self.declared || !self.tools.is_empty() || self.approvals)
        {
            self.declare_tools();
        }
    }

    fn declare_tools(&mut self) {
        let cmd = Command::ClientTools(ClientTools {
            tools: self.tools.clone(),
            approvals: self.approvals,
        });
        if let Ok(frame) = self.cfg.dialect.encode_request(&cmd, "client_tools") {
            self.declared = true;
            self.out.push_back(Output::Send(frame));
        }
    }

    fn send_resume(&mut self, run_id: String, after_event_id: u64) {
        let cmd = Command::Resume(Resume {
            run_id: run_id.clone(),
            after_event_id,
        });
        if let Ok(frame) = self.cfg.dialect.encode_request(&cmd, &run_id) {
            self.resuming.insert(run_id, after_event_id);
            self.out.push_back(Output::Send(frame));
        }
    }

    /// A live socket skipped frames (the server dropped some under load, or a resume raced
    /// the live stream): ask for them once per resume point.
    fn resume_gap(&mut self, gap: Gap) {
        if self.peer().resumes() && self.resuming.get(&gap.run_id) != Some(&gap.after_event_id) {
            self.send_resume(gap.run_id, gap.after_event_id);
        }
    }

    /// A reply to a request of this client (rather than an event to reassemble).
    fn is_reply(&self, ev: &Sequenced) -> bool {
        if ev.envelope.run_id.is_some() {
            return false;
        }
        match &ev.event {
            Event::Pong { id }
            | Event::ToolsList { id, .. }
            | Event::ToolShow { id, .. }
            | Event::UserMessages { id, .. } => {
                self.requests.contains_key(id) || self.heartbeats.contains(id)
            }
            Event::Error { id: Some(id), .. } => {
                self.requests.contains_key(id)
                    || self.heartbeats.contains(id)
                    || self.unstarted_run(id).is_some()
            }
            Event::ContextInfo { .. } => self.oldest_sent(RequestKind::ContextInfo).is_some(),
            // A weft server's error outside any run that names no request: the refusal of a
            // `compact()` (`busy`), not the end of the run streaming meanwhile.
            Event::Error { id: None, .. } => {
                self.weft_server && self.oldest_sent(RequestKind::Compact).is_some()
            }
            _ => false,
        }
    }

    /// The request of this kind sent first and still waiting: what a reply that names no
    /// request answers.
    fn oldest_sent(&self, kind: RequestKind) -> Option<String> {
        self.requests
            .iter()
            .filter(|(_, r)| r.kind == kind && r.sent)
            .min_by(|a, b| a.1.sent_at.total_cmp(&b.1.sent_at))
            .map(|(id, _)| id.clone())
    }

    /// A pending `compact()` answered by this event: the `context_compacted` or `error` that
    /// opens a run the app did not start (the server compacts in a run of its own, whose first
    /// event is the outcome; a compaction in the middle of a run is not an answer). A refusal
    /// outside any run (`busy`) is a reply ([`Connection::reply`]).
    fn compaction(&mut self, run: Option<RunHandle>, ev: &Sequenced) {
        let first = run.is_none() && ev.envelope.event_id.is_none_or(|id| id <= 1);
        let result = match &ev.event {
            Event::ContextCompacted {
                old_token_count,
                new_token_count,
                reduction_percent,
                strategy,
            } if first => Ok(Reply::Compacted(CompactResult {
                old_token_count: *old_token_count,
                new_token_count: *new_token_count,
                reduction_percent: *reduction_percent,
                strategy: strategy.clone(),
            })),
            Event::Error {
                message,
                code,
                id: None,
                ..
            } if first => Err(Error::new(
                code.as_deref().unwrap_or("server_error"),
                message.clone(),
            )),
            _ => return,
        };
        let Some(id) = self.oldest_sent(RequestKind::Compact) else {
            return;
        };
        self.requests.remove(&id);
        self.out.push_back(Output::Reply {
            id,
            kind: RequestKind::Compact,
            result,
        });
    }

    fn unstarted_run(&self, run_id: &str) -> Option<RunHandle> {
        self.runs
            .iter()
            .find(|(_, r)| r.run_id == run_id && !r.started)
            .map(|(h, _)| *h)
    }

    fn reply(&mut self, ev: Sequenced, now: f64) {
        let id = match &ev.event {
            Event::Pong { id }
            | Event::ToolsList { id, .. }
            | Event::ToolShow { id, .. }
            | Event::UserMessages { id, .. }
            | Event::Error { id: Some(id), .. } => id.clone(),
            Event::ContextInfo { .. } => match self.oldest_sent(RequestKind::ContextInfo) {
                Some(id) => id,
                None => return,
            },
            Event::Error { id: None, .. } => match self.oldest_sent(RequestKind::Compact) {
                Some(id) => id,
                None => return,
            },
            _ => return,
        };
        if self.heartbeats.remove(&id) {
            return;
        }
        let Some(req) = self.requests.remove(&id) else {
            // The server refused a run before it started (`busy`, a bad agent name, …).
            if let (Some(run), Event::Error { message, code, .. }) =
                (self.unstarted_run(&id), &ev.event)
            {
                let e = Error::new(code.as_deref().unwrap_or("run_failed"), message.clone());
                self.runs.remove(&run);
                self.out.push_back(Output::Event {
                    run: Some(run),
                    event: ev,
                });
                self.out.push_back(Output::RunDone {
                    run,
                    result: Err(e),
                });
            }
            return;
        };
        let result = match ev.event {
            Event::Error { message, code, .. } => Err(Error::new(
                code.unwrap_or_else(|| "server_error".into()),
                message,
            )),
            Event::Pong { .. } => Ok(Reply::Pong((now - req.sent_at).max(0.0))),
            Event::ToolsList { tools, .. } => Ok(Reply::Tools(
                tools
                    .into_iter()
                    .map(|t| ToolDefinition {
                        name: t.name,
                        description: t.description,
                        input_schema: Some(t.input_schema),
                        read_only: t.read_only,
                    })
                    .collect(),
            )),
            Event::ToolShow {
                tool, tool_yaml, ..
            } => Ok(Reply::Tool(
                tool.or(tool_yaml.map(Value::String)).unwrap_or(Value::Null),
            )),
            Event::UserMessages {
                thread_id,
                messages,
                has_more,
                active_run_id,
                ..
            } => Ok(Reply::Messages(UserMessagesPage {
                thread_id: if thread_id.is_empty() {
                    req.thread_id
                } else {
                    thread_id
                },
                messages,
                has_more: has_more.unwrap_or(false),
                active_run_id,
            })),
            Event::ContextInfo {
                token_count,
                usage_percent,
                transcript_length,
                max_tokens,
                strategy,
            } => Ok(Reply::Context(ContextInfo {
                token_count,
                usage_percent,
                transcript_length,
                max_tokens,
                strategy,
            })),
            _ => return,
        };
        self.out.push_back(Output::Reply {
            id,
            kind: req.kind,
            result,
        });
    }

    /// An applied event: to its run, to the app, and to whatever it asks of this client.
    fn route(&mut self, ev: Sequenced) {
        if ev.envelope.run_id.is_some() && self.peer().kind == ServerKind::Weft {
            self.weft_server = true;
        }
        let run = self.run_of(&ev);
        let delta = run.and_then(|h| self.text_delta(h, &ev.event));
        self.compaction(run, &ev);
        let mut then = Vec::new();
        match &ev.event {
            Event::ToolApproval {
                call_id,
                name,
                arguments,
            } => {
                self.asking.extend(call_id.clone());
                then.push(Output::Approval(ApprovalRequest {
                    call_id: call_id.clone(),
                    name: name.clone(),
                    arguments: arguments.clone(),
                    run_id: ev.envelope.run_id.clone(),
                    signal: (),
                }));
            }
            Event::ApprovalResolved {
                call_id: Some(c), ..
            } => {
                self.unacked_approvals.remove(c);
                if self.asking.remove(c) {
                    then.push(Output::ApprovalWithdrawn { call_id: c.clone() });
                }
            }
            Event::ToolEnd {
                call_id: Some(c), ..
            } => {
                self.unacked_results.remove(c);
            }
            _ => {}
        }
        then.extend(self.client_tool_calls(&ev));
        if let (Some(h), true) = (run, ev.event.is_terminal()) {
            let result = self.result_of(h, &ev);
            self.runs.remove(&h);
            then.push(Output::RunDone { run: h, result });
        }
        self.out.push_back(Output::Event { run, event: ev });
        if let (Some(run), Some(delta)) = (run, delta) {
            self.out.push_back(Output::Text { run, delta });
        }
        self.out.extend(then);
    }

    /// Which of the app's runs an event belongs to.
    fn run_of(&mut self, ev: &Sequenced) -> Option<RunHandle> {
        let handle = match &ev.envelope.run_id {
            Some(run_id) => self
                .runs
                .iter()
                .find(|(_, r)| &r.run_id == run_id)
                .map(|(h, _)| *h)
                .or_else(|| {
                    // A server that named the run itself: the one run of ours waiting to start
                    // is the one that started.
                    if !matches!(ev.event, Event::RunStart { .. })
                        && !self.peer().adopts_any_first_event()
                    {
                        return None;
                    }
                    let mut waiting = self
                        .runs
                        .iter()
                        .filter(|(_, r)| r.sent && !r.started && !r.followed);
                    match (waiting.next(), waiting.next()) {
                        (Some((h, _)), None) => Some(*h),
                        // Several: only a server that takes requests in order says which.
                        (Some((h, _)), Some(_)) if self.peer().answers_in_order() => Some(*h),
                        _ => None,
                    }
                })
                .inspect(|h| {
                    if let Some(slot) = self.runs.get_mut(h) {
                        slot.run_id.clone_from(run_id);
                    }
                }),
            // An original server names no runs and takes one message at a time, in order: the
            // oldest of ours still open.
            None if self.peer().answers_in_order() => self
                .runs
                .iter()
                .find(|(_, r)| r.sent && !r.followed)
                .map(|(h, _)| *h),
            // A server that has not named a run yet streams one at a time: the latest of ours.
            None if !self.weft_server => self
                .runs
                .iter()
                .rev()
                .find(|(_, r)| r.sent && !r.followed)
                .map(|(h, _)| *h),
            None => None,
        };
        if let Some(slot) = handle.and_then(|h| self.runs.get_mut(&h)) {
            slot.started = true;
        }
        handle
    }

    /// New assistant text for `onText`. Chunks are passed on as they come; a dialect that
    /// sends a response whole (agentchat) or a completion that extends the chunks yields the
    /// part not yet passed on.
    fn text_delta(&mut self, run: RunHandle, event: &Event) -> Option<String> {
        let slot = self.runs.get_mut(&run)?;
        match event {
            Event::MessageChunk { content, .. } if !content.is_empty() => {
                slot.text.push_str(content);
                Some(content.clone())
            }
            Event::LlmComplete { content, .. } => {
                let rest = content
                    .strip_prefix(slot.text.as_str())
                    .filter(|rest| !rest.is_empty())
                    .map(String::from);
                slot.text.clear();
                rest
            }
            Event::NodeExit { .. } | Event::RunEnd { .. } | Event::Error { .. } => {
                slot.text.clear();
                None
            }
            _ => None,
        }
    }

    /// Calls of tools the app registered that are now due to run here, each once. A call is
    /// due when the server has started it, which every dialect shows one way or another:
    /// - its `tool_start` (loom carries it);
    /// - an approving `approval_resolved` for it (the server starts it right after);
    /// - the end of the LLM response that made it (`usage` or `llm_complete`), when it needs no
    ///   approval: the app declared the tool read-only, or a user answered `always` for it;
    /// - a `tool_call` outside the run's numbered stream, sent to this socket alone.
    ///
    /// The server takes a `tool_result` only for a call it has started, so none of these is
    /// early; and a refused call never becomes due.
    fn client_tool_calls(&mut self, ev: &Sequenced) -> Vec<Output> {
        if self.tools.is_empty() || !self.peer().takes_client_tools() {
            return Vec::new();
        }
        let transcript = self.reassembler.transcript();
        let mut due: Vec<String> = Vec::new();
        match &ev.event {
            Event::ToolStart {
                call_id: Some(c), ..
            } => due.push(c.clone()),
            Event::ApprovalResolved {
                call_id: Some(c),
                name,
                review,
                ..
            } if review.approves() => {
                if *review == Review::Always {
                    let name = name
                        .clone()
                        .or_else(|| transcript.tool_call(c).map(|t| t.name.clone()));
                    self.always.extend(name);
                }
                due.push(c.clone());
            }
            // The server reports a response's usage and its completion in the step that starts
            // its calls; agentchat carries only the usage when the response has no text.
            Event::LlmComplete { .. } | Event::Usage(_) if ev.envelope.run_id.is_some() => {
                due.extend(
                    transcript
                        .tool_calls
                        .iter()
                        .filter(|t| t.run_id == ev.envelope.run_id)
                        .filter(|t| t.status == ToolStatus::Pending)
                        .filter(|t| {
                            self.always.contains(&t.name)
                                || self.tools.iter().any(|s| s.name == t.name && s.read_only)
                        })
                        .map(|t| t.call_id.clone()),
                );
            }
            Event::ToolCall {
                call_id: Some(c), ..
            } if ev.envelope.event_id.is_none() && self.weft_server => due.push(c.clone()),
            _ => {}
        }
        let mut out = Vec::new();
        for call_id in due {
            let Some(call) = transcript.tool_call(&call_id) else {
                continue;
            };
            if !self.tools.iter().any(|t| t.name == call.name) {
                continue;
            }
            if !self.dispatched.insert(call_id.clone()) {
                continue;
            }
            out.push(Output::ClientTool {
                call_id,
                name: call.name.clone(),
                arguments: call
                    .arguments
                    .clone()
                    .unwrap_or_else(|| Value::Object(Map::new())),
            });
        }
        out
    }

    fn result_of(&self, run: RunHandle, ev: &Sequenced) -> Result<RunResult, Error> {
        let run_id = self
            .runs
            .get(&run)
            .map(|r| r.run_id.clone())
            .unwrap_or_default();
        match &ev.event {
            Event::RunEnd {
                reply,
                usage,
                total_usage,
                ..
            } => {
                let seen = self.reassembler.transcript().run(&run_id);
                Ok(RunResult {
                    reply: seen
                        .and_then(|r| r.reply.clone())
                        .unwrap_or_else(|| reply.clone()),
                    usage: seen.and_then(|r| r.usage).or(*usage),
                    total_usage: seen
                        .map(|r| r.total_usage)
                        .or(*total_usage)
                        .unwrap_or_default(),
                    run_id,
                })
            }
            Event::Error { message, code, .. } => Err(Error::new(
                code.as_deref().unwrap_or("run_failed"),
                message.clone(),
            )),
            _ => Err(Error::new("run_failed", "the run ended without a reply")),
        }
    }

    fn fail_sent_requests(&mut self, e: &Error) {
        let sent: Vec<String> = self
            .requests
            .iter()
            .filter(|(_, r)| r.sent)
            .map(|(id, _)| id.clone())
            .collect();
        for id in sent {
            if let Some(r) = self.requests.remove(&id) {
                self.out.push_back(Output::Reply {
                    id,
                    kind: r.kind,
                    result: Err(e.clone()),
                });
            }
        }
    }

    fn fail_all(&mut self, e: &Error) {
        self.outbox.clear();
        self.heartbeats.clear();
        for (id, r) in std::mem::take(&mut self.requests) {
            self.out.push_back(Output::Reply {
                id,
                kind: r.kind,
                result: Err(e.clone()),
            });
        }
        for (run, _) in std::mem::take(&mut self.runs) {
            self.out.push_back(Output::RunDone {
                run,
                result: Err(e.clone()),
            });
        }
    }

    fn give_up(&mut self, e: Error, why: String) {
        self.fail_all(&e);
        self.out.push_back(Output::ConnectFailed(e));
        self.status("closed", None, None, Some(why));
    }
}

/// The URL to open: `ws(s)://` (from `http(s)://` too), the dialect's endpoint path when the
/// URL has none, and `session_id` as a query parameter.
pub fn endpoint_url(
    url: &str,
    dialect: Dialect,
    session_id: Option<&str>,
) -> Result<String, Error> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| bad_url(url, "it has no scheme"))?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "ws" | "http" => "ws",
        "wss" | "https" => "wss",
        other => {
            return Err(bad_url(
                url,
                &format!("the scheme {other:?} is not ws, wss, http or https"),
            ))
        }
    };
    // WebSocket URLs have no fragment.
    let rest = rest.split('#').next().unwrap_or_default();
    let split = rest.find(['/', '?']).unwrap_or(rest.len());
    let (host, tail) = rest.split_at(split);
    if host.is_empty() {
        return Err(bad_url(url, "it has no host"));
    }
    let (path, query) = match tail.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (tail, None),
    };
    let path = if path.is_empty() || path == "/" {
        dialect.endpoint()
    } else {
        path
    };
    let mut out = format!("{scheme}://{host}{path}");
    let mut params: Vec<String> = query
        .filter(|q| !q.is_empty())
        .map(|q| vec![q.to_string()])
        .unwrap_or_default();
    if let Some(s) = session_id {
        params.push(format!("session_id={}", percent_encode(s)));
    }
    if !params.is_empty() {
        out.push('?');
        out.push_str(&params.join("&"));
    }
    Ok(out)
}

fn bad_url(url: &str, why: &str) -> Error {
    Error::argument(format!(
        "url {url:?} is not a WebSocket URL ({why}); use e.g. \"wss://weft.example.com\""
    ))
}

fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The subprotocols to offer: `weft.<dialect>` names the dialect, `weft.token.<t>` carries the
/// token. A token must be a valid subprotocol token (RFC 6455 §4.1), or the browser throws.
pub fn subprotocols(dialect: Dialect, token: Option<&str>) -> Result<Vec<String>, Error> {
    let mut protocols = vec![format!("weft.{}", dialect.as_str())];
    if let Some(token) = token {
        check_token(token)?;
        protocols.push(format!("weft.token.{token}"));
    }
    Ok(protocols)
}

/// Where a fresh token from the app's token function goes on the socket about to open: weft
/// (it offered `weft.<dialect>`) takes it as the subprotocol `weft.token.<t>`, in place of any
/// earlier one; an original server in the `token` query parameter.
pub fn with_token(
    url: &str,
    protocols: &[String],
    token: &str,
) -> Result<(String, Vec<String>), Error> {
    let mut protocols: Vec<String> = protocols
        .iter()
        .filter(|p| !p.starts_with("weft.token."))
        .cloned()
        .collect();
    if protocols.iter().any(|p| p.starts_with("weft.")) {
        check_token(token)?;
        protocols.push(format!("weft.token.{token}"));
        Ok((url.to_string(), protocols))
    } else {
        Ok((original_url(url, Some(token)), protocols))
    }
}

/// A token must fit a WebSocket subprotocol (an HTTP token) to travel as one.
fn check_token(token: &str) -> Result<(), Error> {
    let ok = !token.is_empty()
        && token.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        });
    if !ok {
        return Err(Error::argument(
            "token must be non-empty and use only letters, digits and !#$%&'*+-.^_`|~ \
                 (it travels as a WebSocket subprotocol); base64url-encode other tokens",
        ));
    }
    Ok(())
}

/// The URL for an original server: `url` with the token, when the app gave one, as the `token`
/// query parameter — where the originals' own clients put it, as they take no subprotocol.
pub fn original_url(url: &str, token: Option<&str>) -> String {
    match token {
        Some(t) => {
            let sep = if url.contains('?') { '&' } else { '?' };
            format!("{url}{sep}token={}", percent_encode(t))
        }
        None => url.to_string(),
    }
}

mod original;
mod peer;
#[cfg(test)]
mod tests;
