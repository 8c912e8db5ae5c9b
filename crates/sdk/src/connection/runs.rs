//! Runs: starting, following and cancelling them, which run each applied event belongs to,
//! the text `onText` gets, and the result a run settles with.

use weft_protocol::command::RunCommand;
use weft_protocol::event::Sequenced;
use weft_protocol::reassembler::RunStatus;
use weft_protocol::{Agent, Command, Event, Role};

use super::{Connection, Output, Phase, RunHandle, RunSlot, ServerKind, Tag};
use crate::error::{Error, ErrorCode};
use crate::types::{ApprovalRequest, McpAuthorization, RunOptions, RunResult};

impl Connection {
    /// `run()`: starts a run with the id the shell chose (a UUID: run ids are session-wide).
    pub fn run(&mut self, opts: RunOptions, run_id: String, now: f64) -> Result<RunHandle, Error> {
        self.usable("run()")?;
        if opts.message.trim().is_empty() {
            return Err(Error::argument("run(): message must not be empty"));
        }
        if self.http.is_some() {
            return self.http_run(opts, run_id);
        }
        let message = opts.message.clone();
        let cmd = Command::Run(RunCommand {
            message: opts.message,
            agent: opts.agent.as_deref().map(Agent::from),
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
                frame: frame.clone(),
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
            return Err(Error::new(ErrorCode::Unsupported, peer.why_not("follow()")));
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
                        ErrorCode::Cancelled
                    } else {
                        ErrorCode::RunFailed
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
                frame: String::new(),
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
        if self.http.is_some() {
            self.http_cancel(run);
            return Ok(());
        }
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
                    ErrorCode::Cancelled,
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
            return Err(Error::new(ErrorCode::Unsupported, peer.why_not("cancel()")));
        }
        let frame = self.encode(&cmd, &run_id, "cancel()")?;
        self.send(frame, Tag::None, now);
        Ok(())
    }

    /// An `error` naming our run `run_id` outside the run's own stream: the server refused to
    /// start it (`busy`, a bad agent name, …) or to resume it (`unknown_run`, `expired`, a
    /// storage error). A run it does not know that it should have is sent again
    /// ([`Connection::start_again`]); any other ends with the server's error — one that had
    /// started ends in the transcript too, failed with that error, so `result` never waits
    /// for frames that will not come.
    pub(super) fn run_refused(&mut self, run_id: &str, ev: Sequenced, now: f64) {
        let Some((run, started)) = self
            .runs
            .iter()
            .find(|(_, r)| r.run_id == run_id)
            .map(|(h, r)| (*h, r.started))
        else {
            return;
        };
        let Event::Error { message, code, .. } = &ev.event else {
            return;
        };
        if !started && code.as_deref() == Some("unknown_run") && self.start_again(run, now) {
            return;
        }
        if started {
            let mut ended = ev;
            ended.envelope.run_id = Some(run_id.into());
            self.reassembler.push_event(ended);
            while let Some(ev) = self.reassembler.poll() {
                self.route(ev);
            }
            return;
        }
        let e = Error::new(
            code.as_deref()
                .map_or(ErrorCode::RunFailed, ErrorCode::parse),
            message.clone(),
        );
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

    /// The server answered the resume of our run `run` with `unknown_run`: its frame went out
    /// on a socket that was already dead (a frame sent while the browser still thought it
    /// open is lost without an error), so the run never began. Sends the frame again, once;
    /// `false` if there is nothing to send (a followed run, or one already sent twice), and
    /// the run fails with the server's error.
    pub(super) fn start_again(&mut self, run: RunHandle, now: f64) -> bool {
        let Some(slot) = self.runs.get_mut(&run) else {
            return false;
        };
        let frame = core::mem::take(&mut slot.frame);
        if frame.is_empty() {
            return false;
        }
        self.send(frame, Tag::Run(run), now);
        true
    }

    /// An applied event: to its run, to the app, and to whatever it asks of this client.
    pub(super) fn route(&mut self, ev: Sequenced) {
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
            Event::Custom { value } => {
                then.extend(McpAuthorization::from_custom(value).map(Output::Authorization));
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
                code.as_deref()
                    .map_or(ErrorCode::RunFailed, ErrorCode::parse),
                message.clone(),
            )),
            _ => Err(Error::new(
                ErrorCode::RunFailed,
                "the run ended without a reply",
            )),
        }
    }
}
