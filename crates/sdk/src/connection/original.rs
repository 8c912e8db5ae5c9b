//! Talking to an original server: finding out that it is one, shaping its turns into runs, and
//! what a dropped socket costs there.
//!
//! weft marks every run frame with `run_id` and `event_id` and ends every run with the
//! dialect's end of run, so the client's rules need nothing more. An original server does not
//! (`specs/ORIGINALS.md`); [`Connection::shape`] rewrites what it sends into the events weft
//! would have sent for the same turn, so the rest of the client — the reassembler, run
//! correlation, `onText`, results — runs the same code for both. What differs by dialect comes
//! from [`Peer::turn_end`] and the dialect's capability methods, never from tests of the
//! dialect here.

use weft_protocol::dialect::TurnEnd;
use weft_protocol::event::Envelope;
use weft_protocol::reassembler::RunStatus;
use weft_protocol::text;
use weft_protocol::{Event, Limits, Role, Sequenced};

use super::{Connection, Output, RunHandle, ServerKind};
use crate::error::{Error, ErrorCode};

impl Connection {
    /// A frame while the probe `ping` waits for its answer (see `peer.rs`). weft's
    /// `pong` to it, or any frame with weft's run id, proves weft; an `error` (the original's
    /// "Unknown message type: ping") proves the original. Anything else is the original's
    /// leftover of an earlier connection's loop, and dropped.
    pub(super) fn probe_frame(&mut self, bytes: &[u8], now: f64) {
        let Some((probe, _)) = &self.probe else {
            return;
        };
        let Ok(events) = self.dialect().decode_server(bytes, Limits::default()) else {
            return;
        };
        let mut ours = false;
        let mut kind = None;
        for ev in &events {
            match &ev.event {
                Event::Pong { id } if id == probe => {
                    ours = true;
                    kind = Some(ServerKind::Weft);
                }
                Event::Error { .. } if ev.envelope.run_id.is_none() => {
                    kind = Some(ServerKind::Original)
                }
                _ if ev.envelope.run_id.is_some() => kind = Some(ServerKind::Weft),
                _ => {}
            }
        }
        let Some(kind) = kind else { return };
        self.found(kind, now);
        if kind == ServerKind::Weft && !ours {
            // A run frame of the session, which the client must not lose.
            self.frame(bytes, now);
        }
    }

    /// The server just found is an original: refuse at once what waited for a socket and it
    /// does not serve (so nothing waits for a timeout), and say so of client tools.
    pub(super) fn refuse_unserved(&mut self) {
        let peer = self.peer();
        let refused: Vec<String> = self
            .requests
            .iter()
            .filter(|(_, r)| !peer.serves(&r.command))
            .map(|(id, _)| id.clone())
            .collect();
        for id in refused {
            self.outbox
                .retain(|(_, tag)| !matches!(tag, super::Tag::Request(r) if *r == id));
            if let Some(r) = self.requests.remove(&id) {
                self.out.push_back(Output::Reply {
                    id,
                    kind: r.kind,
                    result: Err(Error::new(
                        ErrorCode::Unsupported,
                        peer.why_not(r.kind.method()),
                    )),
                });
            }
        }
        if !peer.resumes() {
            let followed: Vec<RunHandle> = self
                .runs
                .iter()
                .filter(|(_, r)| r.followed)
                .map(|(h, _)| *h)
                .collect();
            for run in followed {
                self.runs.remove(&run);
                self.out.push_back(Output::RunDone {
                    run,
                    result: Err(Error::new(ErrorCode::Unsupported, peer.why_not("follow()"))),
                });
            }
        }
        self.tools_unserved();
    }

    /// Client tools registered while the server takes none: tell `onError`, since nothing
    /// else would (their handlers are simply never called).
    pub(super) fn tools_unserved(&mut self) {
        let peer = self.peer();
        if !peer.takes_client_tools() && !self.tools.is_empty() {
            self.out.push_back(Output::Error(Error::new(
                ErrorCode::Unsupported,
                peer.why_not("registerTool()"),
            )));
        }
    }

    /// The socket dropped and the server cannot resume: the run streaming fails with
    /// `resume_unsupported` — in the transcript too, where its text so far stays — and so do
    /// the other runs of ours whose request went out. Runs not sent yet wait for the next
    /// socket, which the client opens as after any drop.
    pub(super) fn cut_runs(&mut self, why: &str) {
        let message = text::concat(&[
            "the connection dropped (",
            why,
            ") during the run, and the original ",
            self.dialect().as_str(),
            " server cannot resume a run: what arrived is in transcript(); start the run again \
             (the client reconnects for it)",
        ]);
        let streaming = self
            .reassembler
            .transcript()
            .runs
            .last()
            .filter(|r| r.status == RunStatus::Running)
            .map(|r| r.run_id.clone());
        let ours = self.runs.values().any(|r| r.sent && !r.followed);
        if let (Some(run_id), true) = (streaming, ours) {
            self.reassembler.push_event(Sequenced {
                envelope: Envelope {
                    run_id,
                    ..Envelope::default()
                },
                event: Event::Error {
                    message: message.clone(),
                    code: Some("resume_unsupported".into()),
                    id: None,
                    details: None,
                },
            });
            while let Some(ev) = self.reassembler.poll() {
                self.route(ev);
            }
        }
        let sent: Vec<RunHandle> = self
            .runs
            .iter()
            .filter(|(_, r)| r.sent)
            .map(|(h, _)| *h)
            .collect();
        for run in sent {
            self.runs.remove(&run);
            self.out.push_back(Output::RunDone {
                run,
                result: Err(Error::new(ErrorCode::ResumeUnsupported, message.clone())),
            });
        }
    }

    /// The events of one frame of an original server, as weft would have sent the same turn:
    /// - the turn opens with the user's message (which loom, agentloop and cueso do not echo),
    ///   and loom's first event of the run it named itself is preceded by that `run_start`;
    /// - it closes with one `run_end` carrying the reply: agentchat's is synthesized after
    ///   its one `agent_message`; agentloop's first `loading_state: false` of the turn gets
    ///   the turn's last assistant message as its reply. A repeat outside a turn is dropped,
    ///   and so is what the loop a new socket killed still sends on it (`agent_finished`,
    ///   `context_info`, `loading_state: false`) outside a turn, or in the socket's first turn
    ///   before its first item: it neither starts our run nor ends it. (Only the first turn:
    ///   a later turn whose model answered nothing at all must still end.)
    /// - a session the server named for a client that has none becomes the client's, so its
    ///   later runs stay in that conversation (cueso);
    /// - another client's turn, which a broadcasting original streams here too, is dropped
    ///   (agentchat);
    /// - after an original's error that closes the socket (cueso), nothing more is sent on it;
    ///   if the server has not closed it [`super::CLOSE_GRACE_MS`] later, the client does.
    pub(super) fn shape(&mut self, events: Vec<Sequenced>, now: f64) -> Vec<Sequenced> {
        let Some(end) = self.peer().turn_end() else {
            return events;
        };
        let peer = self.peer();
        let adopts = peer.adopts_any_first_event();
        let broadcasts = peer.broadcasts_turns();
        let names_sessions = peer.names_sessions();
        let closes_after_error = peer.closes_after_error();
        let mut out = Vec::with_capacity(events.len() + 1);
        for mut ev in events {
            // loom numbers a run's events but may repeat the last number on its `run_end`
            // (the document makes it optional); with no resume there is nothing to order
            // across sockets, and one socket delivers in order.
            ev.envelope.event_id = None;
            if broadcasts && self.foreign(&ev, end) {
                continue;
            }
            if closes_after_error
                && matches!(ev.event, Event::Error { .. })
                && self.closing.is_none()
            {
                self.closing = Some(now + super::CLOSE_GRACE_MS);
            }
            if !matches!(
                ev.event,
                Event::RunStart { .. }
                    | Event::RunEnd { .. }
                    | Event::LlmComplete { .. }
                    | Event::ContextInfo { .. }
            ) {
                self.old_loop_may_send = false;
            }
            if names_sessions
                && self.cfg.session_id.is_none()
                && matches!(ev.event, Event::RunStart { .. })
            {
                self.cfg.session_id.clone_from(&ev.envelope.session_id);
            }
            match (&mut ev.event, end) {
                (Event::RunStart { message, .. }, _) if message.is_none() => {
                    *message = self.waiting_message();
                }
                (
                    Event::RunEnd { .. } | Event::LlmComplete { .. } | Event::ContextInfo { .. },
                    TurnEnd::LoadingStateOff,
                ) if !self.turn_open() || self.old_loop_may_send => continue,
                (Event::RunEnd { reply, .. }, TurnEnd::LoadingStateOff) if reply.is_empty() => {
                    *reply = self.turn_reply();
                }
                _ => {}
            }
            if adopts && !matches!(ev.event, Event::RunStart { .. }) {
                let unknown = ev
                    .envelope
                    .run_id
                    .as_deref()
                    .is_some_and(|id| self.reassembler.transcript().run(id).is_none());
                if let (true, Some(message)) = (unknown, self.waiting_message()) {
                    out.push(Sequenced {
                        envelope: Envelope {
                            run_id: ev.envelope.run_id.clone(),
                            session_id: ev.envelope.session_id.clone(),
                            ..Envelope::default()
                        },
                        event: Event::RunStart {
                            run_id: ev.envelope.run_id.clone(),
                            message: Some(message),
                            agent: None,
                        },
                    });
                }
            }
            let reply = closing_reply(&ev.event, end).map(String::from);
            let envelope = ev.envelope.clone();
            self.uniform(ev, &mut out);
            if let Some(reply) = reply {
                let event = match core::mem::take(&mut self.overlapped) {
                    false => Event::RunEnd {
                        reply,
                        usage: None,
                        total_usage: None,
                        iteration_count: None,
                        paused: false,
                        tool_calls: Vec::new(),
                    },
                    true => Event::Error {
                        message: text::concat(&[
                            "another client's turn streamed at the same time as this run on \
                             the original ",
                            self.dialect().as_str(),
                            " server, whose turns carry no ids: the reply that arrived may be \
                             theirs (it is in transcript()); run it again to be sure",
                        ]),
                        code: Some(ErrorCode::AmbiguousReply.as_str().into()),
                        id: None,
                        details: None,
                    },
                };
                self.uniform(Sequenced { envelope, event }, &mut out);
            }
        }
        out
    }

    /// Whether `ev` belongs to another client's turn, on a server that streams every client's
    /// turns (and errors) to every socket, each opened by its message and ended by its reply.
    /// A turn is ours when its message is the one our next run sent and no turn of ours is
    /// open; any other is another client's, and its frames are dropped until its reply.
    ///
    /// Turns carry no ids, so while another client's turn is open ours cannot be told from
    /// it: when the two overlap (either opened while the other streamed), the first reply
    /// after ours opened may be either's, and the run is marked [`Connection::overlapped`]
    /// instead of taking it for ours. Events in between that are not replies (tool calls,
    /// thoughts) go to our open turn.
    fn foreign(&mut self, ev: &Sequenced, end: TurnEnd) -> bool {
        let open = self.turn_open();
        // Its errors go to every socket too ("Empty message received" included); one of ours
        // comes after our message's echo, so one before it is another client's.
        if matches!(ev.event, Event::Error { .. }) && !open {
            return true;
        }
        if let Event::RunStart {
            message: Some(m), ..
        } = &ev.event
        {
            // Nova echoes the message stripped of surrounding whitespace.
            let ours = !open && self.waiting_message().as_deref().map(str::trim) == Some(m.trim());
            if ours {
                self.overlapped = self.foreign_turns > 0;
                return false;
            }
            self.foreign_turns += 1;
            self.overlapped |= open;
            return true;
        }
        if closing_reply(&ev.event, end).is_some() {
            if open {
                // Ours, or (overlapped) perhaps another's: the open turns are one fewer
                // either way, and ours ends here.
                return false;
            }
            // Another client's reply, or one with no turn open at all (never ours).
            self.foreign_turns = self.foreign_turns.saturating_sub(1);
            return true;
        }
        !open && self.foreign_turns > 0
    }

    /// The message of our run whose turn is about to start: the oldest sent and not started.
    fn waiting_message(&self) -> Option<String> {
        self.runs
            .values()
            .find(|r| r.sent && !r.started && !r.followed)
            .map(|r| r.message.clone())
    }

    /// A turn is streaming: the transcript's last run is still running.
    fn turn_open(&self) -> bool {
        self.reassembler
            .transcript()
            .runs
            .last()
            .is_some_and(|r| r.status == RunStatus::Running)
    }

    /// The reply of the turn streaming: its last assistant message with text (the items
    /// after the turn's user message).
    fn turn_reply(&self) -> String {
        self.reassembler
            .transcript()
            .messages
            .iter()
            .rev()
            .take_while(|m| m.role != Role::User)
            .find(|m| m.role == Role::Assistant && !m.text.is_empty())
            .map(|m| m.text.clone())
            .unwrap_or_default()
    }
}

/// The reply in `event` when it closes a turn that ends with its reply (agentchat's one
/// `agent_message`, an `LlmComplete` with text).
fn closing_reply(event: &Event, end: TurnEnd) -> Option<&str> {
    match (event, end) {
        (Event::LlmComplete { content, .. }, TurnEnd::Reply) if !content.is_empty() => {
            Some(content)
        }
        _ => None,
    }
}
