//! The socket's life: opening (and finding the server on the first socket), resuming what a
//! drop cut, heartbeats, reconnecting with backoff, and settling what waits when the client
//! gives up or is closed.

use weft_protocol::command::Resume;
use weft_protocol::reassembler::{Gap, RunStatus};
use weft_protocol::text;
use weft_protocol::{Command, Limits};

use super::{Connection, Output, Phase, ServerKind, CLOSE_DEAD, CLOSE_NORMAL};
use crate::error::{Error, ErrorCode};

impl Connection {
    /// `connect()`: opens the first socket (or reports that one is open).
    pub fn connect(&mut self) {
        if self.http.is_some() && self.phase != Phase::Closed {
            return self.http_connect();
        }
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
    /// selected (if one was offered). The shell always says what was selected
    /// ([`Connection::opened_as`]); the tests open sockets this shorter way.
    #[cfg(test)]
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
            None if self.dialect().original().selects_offered_subprotocol => {
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
    pub(super) fn found(&mut self, kind: ServerKind, now: f64) {
        self.probe = None;
        self.old_loop_may_send = true;
        // Other clients' turns streamed on the old socket do not continue on this one.
        self.foreign_turns = 0;
        self.overlapped = false;
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
        let code_text = text::uint(code.into());
        let why = if reason.is_empty() {
            text::concat(&["close code ", &code_text])
        } else {
            text::concat(&["close code ", &code_text, ": ", reason])
        };
        self.next_ping = None;
        self.pong_deadline = None;
        self.heartbeats.clear();
        self.probe = None;
        self.closing = None;
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
                    ErrorCode::ConnectFailed,
                    text::concat(&[
                        "could not connect to ",
                        &self.cfg.url,
                        " (",
                        &why,
                        "); check the URL, that the server is running, and the token",
                    ]),
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
            ErrorCode::Disconnected,
            text::concat(&[
                "the connection dropped (",
                &why,
                ") before the reply arrived; ask again",
            ]),
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
                    ErrorCode::Disconnected,
                    text::concat(&[
                        "the connection to ",
                        &self.cfg.url,
                        " closed (",
                        &why,
                        "); ",
                        advice,
                    ]),
                );
                self.give_up(e, why);
            }
        }
    }

    /// A run of this client's own (not one it follows) is on the server.
    fn running(&self) -> bool {
        self.runs.values().any(|r| r.sent && !r.followed)
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
        if self.phase == Phase::Open && self.closing.is_some_and(|d| now >= d) {
            // The server said it closes this socket and did not: close it here, so what
            // waits for the next socket goes out.
            let reason = "the server said it closes the socket and did not";
            self.out.push_back(Output::Close {
                code: CLOSE_NORMAL,
                reason: reason.into(),
            });
            self.closed(CLOSE_NORMAL, reason, now, random);
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
                let ping = Command::Ping { id: id.clone() };
                let frame = match self.peer().heartbeat(self.running()) {
                    true => self.dialect().encode_request(&ping, &id).ok(),
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
        if self.peer().answers_after_runs() && self.running() {
            let after = now + self.cfg.request_timeout_ms;
            for r in self.requests.values_mut() {
                r.deadline = r.deadline.max(after);
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
                    ErrorCode::Timeout,
                    text::concat(&[
                        "no reply from the server within ",
                        &crate::marshal::number(self.cfg.request_timeout_ms),
                        " ms; ask again, or raise requestTimeoutMs",
                    ]),
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
        let mut events = match self.dialect().decode_server(bytes, Limits::default()) {
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
            for ev in self.shape(events, now) {
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
        let had_socket =
            self.http.is_none() && matches!(self.phase, Phase::Open | Phase::Connecting { .. });
        self.http_close();
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
        let e = Error::new(
            ErrorCode::Closed,
            "the client was closed before this finished",
        );
        self.fail_all(&e);
        self.out.push_back(Output::ConnectFailed(e));
        self.status("closed", None, None, Some("client closed".into()));
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

    pub(super) fn send_resume(&mut self, run_id: String, after_event_id: u64) {
        let cmd = Command::Resume(Resume {
            run_id: run_id.clone(),
            after_event_id,
        });
        if let Ok(frame) = self.dialect().encode_request(&cmd, &run_id) {
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
