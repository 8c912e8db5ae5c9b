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
//!
//! The rooms: this file holds the state and what every room shares (sending, ids, status);
//! `lifecycle.rs` the socket's life and heartbeats, `requests.rs` app calls and which reply
//! answers which, `runs.rs` runs and their results, `approvals.rs` approvals and client tools,
//! `endpoint.rs` the URL helpers; `peer.rs` and `original.rs` the original servers; `http.rs`
//! an AG-UI agent over HTTP + server-sent events, the one kind of connection without a socket.

use std::collections::VecDeque;

use weft_protocol::event::{Sequenced, ToolSpec};
use weft_protocol::json::RawJson;
use weft_protocol::sorted::{SortedMap, SortedSet};
use weft_protocol::text;
use weft_protocol::{Command, Dialect, Reassembler, Transcript};

use crate::backoff::Backoff;
use crate::error::Error;
use crate::types::{ApprovalRequest, ClientStatus, McpAuthorization, RunResult};
pub use endpoint::{endpoint_url, original_url, status_url, subprotocols, with_token};
pub use http::agui_over_http;
pub use peer::{Peer, ServerChoice, ServerKind};
pub use requests::{Reply, RequestKind};

/// The app's handle on one run it started (stable even before the server names the run).
pub type RunHandle = u32;

/// Close code the client uses for its own normal close.
pub const CLOSE_NORMAL: u16 = 1000;
/// Close code the client uses when it abandons a socket that stopped answering heartbeats.
pub const CLOSE_DEAD: u16 = 4000;

/// How long the client waits for an original server to close the socket it said it closes
/// (cueso after its `error`) before closing it itself. The original closes within milliseconds
/// where it closes at all; with the dependencies its lockfile pins it never does, and the
/// next run must not wait for that forever.
pub const CLOSE_GRACE_MS: f64 = 1000.0;

/// Everything fixed for the life of a client.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
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
    /// Default thread of runs. Without one, on a server that names sessions (cueso's
    /// original), the session it named for the first run (`original.rs`).
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
    /// An AG-UI agent's HTTP endpoint: runs are `POST`s to it with server-sent events back,
    /// and there is no socket (`connection/http.rs`); the session id is the AG-UI thread.
    pub agui_http: Option<String>,
}

/// Work for the shell, in the order it must be done.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Open a new socket (dropping any previous one).
    Open { url: String, protocols: Vec<String> },
    /// POST this JSON body to the AG-UI agent at `url` (`Accept: text/event-stream`) and
    /// stream the response into [`Connection::http_chunk`], then [`Connection::http_end`] —
    /// or [`Connection::http_failed`] when it cannot be had or breaks off.
    #[cfg_attr(not(feature = "agui"), allow(dead_code))]
    Post { url: String, body: String },
    /// Abort the request in flight and pass nothing more of it to the core.
    #[cfg_attr(not(feature = "agui"), allow(dead_code))]
    Abort,
    /// Close the current socket and ignore anything more from it.
    Close { code: u16, reason: String },
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
        event: Sequenced,
    },
    /// New assistant text of a run, for `run.onText`.
    Text { run: RunHandle, delta: String },
    /// A run ended: settle `run.result`, end its iterators.
    RunDone {
        run: RunHandle,
        result: Result<RunResult, Error>,
    },
    /// Settle the promise of a request.
    Reply {
        id: String,
        kind: RequestKind,
        result: Result<Reply, Error>,
    },
    /// Ask the app's `onApproval` callback; answer with [`Connection::answer`].
    Approval(ApprovalRequest),
    /// An approval asked for was settled without this client (another tab answered, or the
    /// request came from a replay of a run whose approval was answered long ago): abort the
    /// request's `signal`; the callback's answer, if it still comes, is not sent.
    ApprovalWithdrawn { call_id: String },
    /// Tell `onAuthorization` listeners: an MCP server needs the user's authorization, or got
    /// it.
    Authorization(McpAuthorization),
    /// Run the app's handler of a client tool; answer with [`Connection::tool_result`].
    ClientTool {
        call_id: String,
        name: String,
        arguments: RawJson,
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
    Connecting {
        first: bool,
    },
    Open,
    /// Waiting to reconnect; `first` when no socket of this client has opened yet (the second
    /// try of a first connect, without the subprotocol an original server refuses).
    Waiting {
        until: f64,
        first: bool,
    },
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
    /// Our own run's frame, sent once more if the server answers its resume with
    /// `unknown_run` (the frame went out on a socket that was already dead); emptied then, so
    /// it is sent again at most once. Empty for a followed run.
    frame: String,
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
    /// Other clients' turns a broadcasting original has started here and not ended
    /// (`original.rs`): their frames are dropped until they end.
    foreign_turns: u32,
    /// Another client's turn streamed at the same time as our open turn: which reply is
    /// ours cannot be told (`original.rs`).
    overlapped: bool,
    /// No turn on this socket has had an item of its own yet: what an original's earlier
    /// loop still sends may arrive now (`original.rs`).
    old_loop_may_send: bool,
    /// The server sent what says it closes this socket: frames wait for the next one, and at
    /// this time the client closes it if the server has not ([`CLOSE_GRACE_MS`]).
    closing: Option<f64>,
    next_ping: Option<f64>,
    pong_deadline: Option<f64>,
    /// Over HTTP to an AG-UI agent instead of a socket (`connection/http.rs`).
    http: Option<http::Http>,
    out: VecDeque<Output>,
}

impl Connection {
    /// A client that has not connected yet.
    pub fn new(cfg: Config) -> Self {
        #[cfg(feature = "agui")]
        let http = cfg
            .agui_http
            .as_deref()
            .map(|url| http::Http::new(url, cfg.session_id.as_deref().unwrap_or_default()));
        #[cfg(not(feature = "agui"))]
        let http: Option<http::Http> = None;
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
            foreign_turns: 0,
            overlapped: false,
            closing: None,
            old_loop_may_send: false,
            next_ping: None,
            pong_deadline: None,
            http,
            out: VecDeque::new(),
        }
    }

    /// The dialect spoken: in a one-dialect build a constant ([`Dialect::ONLY`]), so that the
    /// rules of the others are not linked.
    pub fn dialect(&self) -> Dialect {
        Dialect::ONLY.unwrap_or(self.cfg.dialect)
    }

    /// The server found, once a socket has opened (or as the `server` option fixed it).
    pub fn server(&self) -> Option<ServerKind> {
        self.server
    }

    /// The server as the client's rules see it: weft until found otherwise (requests made
    /// before are queued, and refused when the server found does not serve them).
    pub fn peer(&self) -> Peer {
        Peer {
            dialect: self.dialect(),
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

    /// The run id of a run the app started (until it ends). The shell learns it from
    /// [`Output::Event`]s; only the tests ask.
    #[cfg(test)]
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
        [
            waiting,
            probe,
            self.closing,
            self.next_ping,
            self.pong_deadline,
        ]
        .into_iter()
        .flatten()
        .chain(self.requests.values().map(|r| r.deadline))
        .reduce(f64::min)
    }

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
        text::concat(&[
            &self.cfg.id_prefix,
            "-",
            what,
            "-",
            &text::uint(self.next_id),
        ])
    }

    fn encode(&self, cmd: &Command, frame_id: &str, method: &str) -> Result<String, Error> {
        self.cfg
            .dialect
            .encode_request(cmd, frame_id)
            .map_err(|e| Error::from_protocol(&e, method))
    }

    fn send(&mut self, frame: String, tag: Tag, now: f64) {
        if self.phase == Phase::Open && self.closing.is_none() {
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
}

mod approvals;
mod endpoint;
#[cfg(feature = "agui")]
mod http;
#[cfg(not(feature = "agui"))]
#[path = "connection/http_off.rs"]
mod http;
mod lifecycle;
mod original;
mod peer;
mod requests;
mod runs;
#[cfg(test)]
mod tests;
mod uniform;
