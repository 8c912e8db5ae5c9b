//! What a client asks of its session: each command, a new run and its checks, approvals,
//! tool results, cancel and resume — and the active run loaded back from its checkpoint.

use weft_agent::engine::{self, Input, Run, Start};
use weft_agent::provider::ToolDef;
use weft_agent::tools::{self, Workspace};
use weft_protocol::command::{ApprovalDecision, RunCommand};
use weft_protocol::{Command, Envelope, Event, Role, Sequenced};
use worker::WebSocket;

use super::publish::MAX_UNLOGGED;
use super::socket::SocketInfo;
use super::{error_event, fanout, toolbox, uuid, Session};
use crate::store::{RunStatus, SqlWorkspace, Store};

impl Session {
    /// Carries out one decoded command of a socket in this session (relay.rs routed it here).
    pub(super) async fn command(&self, ws: &WebSocket, info: &mut SocketInfo, command: Command) {
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
                // No run named: the session's running one (a page reloaded mid-run knows no
                // run; AG-UI's `connect()` reattaches so).
                let run_id = match resume.run_id.as_str() {
                    "" => match self.store().active_run() {
                        Ok(Some(row)) => row.run_id,
                        Ok(None) => {
                            let msg = "no run is active in this session";
                            return self.reply(ws, info, error_event(msg, "no_active_run", None));
                        }
                        Err(e) => return self.reply(ws, info, unreadable(ACTIVE_RUN, &e, None)),
                    },
                    named => named.to_string(),
                };
                info.not_following.retain(|r| *r != run_id);
                self.remember(ws, info);
                self.resume(ws, info, &run_id, resume.after_event_id);
            }
            Command::Cancel { run_id } => self.cancel(ws, info, &run_id).await,
            Command::ToolsList(q) => {
                // A session asked before its first run lists the MCP tools it will offer.
                self.mcp_prepare(Some(&info.client)).await;
                let tools = self.tool_specs();
                self.reply(ws, info, Event::ToolsList { id: q.id, tools });
            }
            Command::AddMcpServer(add) => self.add_mcp_server(ws, info, add).await,
            Command::ToolShow(q) => {
                self.mcp_prepare(Some(&info.client)).await;
                let event = toolbox::tool_show(self.tool_specs(), q);
                self.reply(ws, info, event);
            }
            Command::UserMessages(q) => {
                // relay.rs routed it here: its thread is this session.
                let limit = q.limit.unwrap_or(100).clamp(1, 1000);
                let store = self.store();
                let read = || -> worker::Result<_> {
                    Ok((store.messages(q.before, limit)?, store.active_run()?))
                };
                let event = match read() {
                    Ok(((messages, has_more), active)) => Event::UserMessages {
                        id: q.id,
                        thread_id: q.thread_id,
                        messages,
                        has_more: Some(has_more),
                        active_run_id: active.map(|r| r.run_id),
                    },
                    Err(e) => unreadable("the history", &e, Some(q.id)),
                };
                self.reply(ws, info, event);
            }
            Command::ContextInfo { .. } => {
                let state = match self.store().session_state() {
                    Ok(state) => state,
                    Err(e) => return self.reply(ws, info, unreadable(HISTORY, &e, None)),
                };
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
                let state = match self.store().session_state() {
                    Ok(state) => state,
                    Err(e) => return self.reply(ws, info, unreadable(HISTORY, &e, id)),
                };
                if state.history.is_empty() {
                    // specs/README (agentloop): the error alone, no run around it.
                    let msg = "Cannot compact empty transcript";
                    return self.reply(ws, info, error_event(msg, "empty_transcript", id));
                }
                // A compaction calls the default agent's model.
                if let Err(refusal) = self.settings.agents.choose(None) {
                    let event = error_event(&refusal.message, refusal.code, id);
                    return self.reply(ws, info, event);
                }
                match self.running() {
                    Ok(false) => {}
                    Ok(true) => {
                        let msg = "a run is in progress; compact after it ends";
                        return self.reply(ws, info, error_event(msg, "busy", id));
                    }
                    Err(e) => return self.reply(ws, info, unreadable(RUNS, &e, id)),
                }
                let run_id = match uuid() {
                    Ok(uuid) => format!("compact-{uuid}"),
                    Err(e) => return self.reply(ws, info, error_event(&e, "internal", id)),
                };
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
            Command::LoomApp(q) => self.loom_app(ws, info, q).await,
            // An AG-UI input that asks several things (inbound.rs took its tools): in order.
            Command::Batch { commands } => {
                for c in commands {
                    Box::pin(self.command(ws, info, c)).await;
                }
            }
            _ => self.reply(
                ws,
                info,
                error_event("this request is not supported here", "unsupported", None),
            ),
        }
    }

    pub(super) async fn start_run(&self, ws: &WebSocket, info: &SocketInfo, run: RunCommand) {
        // relay.rs routed it here: a thread it names is this session.
        match self
            .begin_run(self.session_id(info), run, Some(&info.client))
            .await
        {
            Ok(_) => self.drive().await,
            Err(refusal) => self.reply(ws, info, refusal),
        }
    }

    /// Checks and stores a new run and makes it the active one, ready to drive; the run id,
    /// or the `error` that refuses it.
    pub(super) async fn begin_run(
        &self,
        session_id: String,
        run: RunCommand,
        asker: Option<&str>,
    ) -> Result<String, Event> {
        // The agent it names (none: the operator's default), with its model and its key.
        let agent = match self.settings.agents.choose(run.agent.as_ref()) {
            Ok(agent) => agent,
            Err(refusal) => return Err(error_event(&refusal.message, refusal.code, run.id)),
        };
        // The tools of MCP servers this session has none of yet (its first run, mostly). Here,
        // before the checks below: from the busy check to the stored run nothing awaits, so
        // no second run slips in between.
        self.mcp_prepare(asker).await;
        let running = self.running().and_then(|on| match on {
            true => Ok(Some(self.store().active_run()?)),
            false => Ok(None),
        });
        let active = match running {
            Ok(None) => None,
            Ok(Some(row)) => Some(row.map(|r| r.run_id).unwrap_or_default()),
            Err(e) => return Err(unreadable(RUNS, &e, run.id)),
        };
        if let Some(active) = active {
            let msg =
                format!("a run is already in progress ({active}): wait for it to end or cancel it");
            return Err(error_event(&msg, "busy", run.id));
        }
        if let Err(msg) = self.take_run() {
            return Err(error_event(&msg, "rate_limited", run.id));
        }
        let run_id = match &run.id {
            Some(id) => id.clone(),
            None => format!(
                "run-{}",
                uuid().map_err(|e| error_event(&e, "internal", None))?
            ),
        };
        let store = self.store();
        // Whose tokens its calls of MCP servers behind OAuth carry (session/oauth.rs); written
        // only where such servers can be, since every row written is billed.
        if self.mcp.oauth_redirect.is_some() {
            if let Err(e) = self.set_run_client(asker.unwrap_or_default()) {
                return Err(error_event(&e.to_string(), "storage", Some(run_id)));
            }
        }
        // A store that cannot be read refuses the run: a duplicate id would go unnoticed, and a
        // run on a history read as empty would save it back empty.
        match store.run(&run_id) {
            Ok(None) => {}
            Ok(Some(_)) => {
                let msg = format!("run id {run_id} was already used in this session");
                return Err(error_event(&msg, "duplicate_run_id", Some(run_id)));
            }
            Err(e) => return Err(unreadable(RUNS, &e, Some(run_id))),
        }
        let state = store
            .session_state()
            .map_err(|e| unreadable(HISTORY, &e, Some(run_id.clone())))?;
        let folder = match working_folder(run.working_folder.as_deref()) {
            Ok(folder) => folder,
            Err(why) => return Err(error_event(&why, "invalid_request", run.id)),
        };
        // loom: a SOUL.md in the working folder sets the persona, before the agent's own
        // (agents::persona says the order).
        let soul = SqlWorkspace {
            store: &store,
            root: folder.clone().unwrap_or_default(),
        }
        .read("SOUL.md")
        // A persona that could not be read is not "none": the run would speak as another.
        .map_err(|e| error_event(&e, "storage", Some(run_id.clone())))?;
        let config = agent.config(
            self.settings.base_config(),
            self.settings.agents.system_prompt(),
            soul.as_deref(),
        );
        let start = Start {
            run_id: run_id.clone(),
            session_id,
            message: run.message.clone(),
            agent: agent.agent(),
            thread_id: run.thread_id.clone(),
            verbose: run.verbose.unwrap_or(false),
            working_folder: folder,
            got_adaptive: run.got_adaptive.unwrap_or(false),
        };
        let mut engine_run = Run::new(config, self.tool_infos(), state, &start);
        engine_run.set_clock(js_sys::Date::now() as i64);
        // A run that cannot be stored is not started: it could not be resumed or listed.
        let stored = store
            .run_checkpoint(&engine_run)
            .map_err(|e| e.to_string())
            .and_then(|checkpoint| {
                store
                    .add_message(&Role::User, &run.message, &run_id)
                    .and_then(|()| {
                        store.save_run(
                            &run_id,
                            RunStatus::Running,
                            &checkpoint,
                            js_sys::Date::now() as i64,
                        )
                    })
                    .map_err(|e| e.to_string())
            });
        if let Err(e) = stored {
            let msg = format!("could not store the run: {e}");
            return Err(error_event(&msg, "storage", Some(run_id)));
        }
        engine_run.start();
        *self.run.borrow_mut() = Some(engine_run);
        self.arm_alarm().await;
        Ok(run_id)
    }

    /// Whether a run is on, in memory or (after a wake-up) in storage. `Err` when storage could
    /// not say: a caller answers it as a `storage` error, or logs it, and never reads it as
    /// "idle" (a second run would start beside the stored one).
    pub(super) fn running(&self) -> worker::Result<bool> {
        if self.run.borrow().as_ref().is_some_and(|r| !r.is_finished()) {
            return Ok(true);
        }
        Ok(self.store().active_run()?.is_some())
    }

    /// Logs a storage read that failed where nobody waits for an answer, naming the session.
    pub(super) fn log_unreadable(&self, what: &str, e: &impl core::fmt::Display) {
        worker::console_error!("session {}: could not read {what}: {e}", self.state.id());
    }

    /// [`Session::load_active`] where nobody waits for an answer: storage that cannot be read
    /// is logged, and there is no run to go on with now (the alarm's watchdog, set while the
    /// run state cannot be read, tries again).
    pub(super) fn load_active_run(&self) -> bool {
        self.load_active().unwrap_or_else(|e| {
            self.log_unreadable("the active run", &e);
            false
        })
    }

    /// Loads the active run from its checkpoint if it is not in memory (after hibernation or a
    /// restart). Returns whether there is one; `Err` when storage could not say.
    pub(super) fn load_active(&self) -> worker::Result<bool> {
        if self.run.borrow().as_ref().is_some_and(|r| !r.is_finished()) {
            return Ok(true);
        }
        let store = self.store();
        let Some(row) = store.active_run()? else {
            return Ok(false);
        };
        // Numbering on from 0 would give the run's next events ids its clients already have.
        let last = store.last_event_id(&row.run_id)?;
        let mut run = match store.restore_run(&row.checkpoint) {
            Ok(run) => run,
            Err(e) => {
                self.fail_unrestorable(&store, &row.run_id, last, &e.to_string());
                return Ok(false);
            }
        };
        // Deltas it streamed may have gone out unlogged (publish.rs): number on past them.
        let last = if run.awaits_model() {
            self.log_lost(&row.run_id, last)
        } else {
            last
        };
        run.resume(last);
        *self.run.borrow_mut() = Some(run);
        Ok(true)
    }

    /// Logs and sends [`Event::EventsLost`] for the ids after `last` that a restart may have
    /// cost a run (publish.rs, "Streamed text is logged in batches"); returns its id, the
    /// last one the run has used.
    fn log_lost(&self, run_id: &str, last: u64) -> u64 {
        let at = last + MAX_UNLOGGED + 1;
        let lost = Sequenced {
            envelope: Envelope {
                run_id: Some(run_id.into()),
                event_id: Some(at),
                ..Envelope::default()
            },
            event: Event::EventsLost { from: last + 1 },
        };
        if let Err(e) = self.publish(&[lost]) {
            // The run goes on; its next event's write fails the same way and stops it.
            worker::console_error!("run {run_id}: its lost events could not be logged: {e}");
        }
        at
    }

    /// A run whose checkpoint cannot be read back (corrupted, or written by a format this
    /// build does not know) is ended where its log ends: marked failed so the session is free
    /// for the next run, with a terminal `error` logged and sent so its clients and a later
    /// resume see how it ended.
    fn fail_unrestorable(&self, store: &Store, run_id: &str, last: u64, why: &str) {
        worker::console_error!("run {run_id}: checkpoint unreadable, run failed: {why}");
        if let Err(e) = store.set_run_status(run_id, RunStatus::Failed) {
            worker::console_error!("run {run_id}: not marked failed: {e}");
        }
        // Whether it was streaming is unknowable here: pass over what it may have sent.
        let last = self.log_lost(run_id, last);
        let error = Sequenced {
            envelope: Envelope {
                run_id: Some(run_id.into()),
                event_id: Some(last + 1),
                ..Envelope::default()
            },
            event: error_event(
                &format!(
                    "this run could not be resumed (its saved state is unreadable: {why}); start a new one"
                ),
                "unrestorable",
                Some(run_id.into()),
            ),
        };
        // Sent even if it cannot be logged: it ends the run (publish says so in the log).
        if let Err(e) = self.publish(&[error]) {
            worker::console_error!("run {run_id}: its failure was sent but not logged: {e}");
        }
    }

    pub(super) async fn approve(
        &self,
        ws: &WebSocket,
        info: &SocketInfo,
        decision: ApprovalDecision,
    ) {
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
        let loaded = match self.load_active() {
            Ok(loaded) => loaded,
            Err(e) => return self.reply(ws, info, unreadable(ACTIVE_RUN, &e, None)),
        };
        let pending = loaded
            && self
                .run
                .borrow()
                .as_ref()
                .is_some_and(|r| r.waiting_approvals().next().is_some());
        if !pending {
            let msg = info.dialect.no_pending_approval_text();
            return self.reply(ws, info, error_event(msg, "no_pending_approval", None));
        }
        self.feed(ws, info, Input::Approval(decision)).await;
    }

    /// Feeds an input to the active run and drives it; a refused input (forged or stale call
    /// id, nothing pending) is answered with an error and changes nothing.
    pub(super) async fn feed(&self, ws: &WebSocket, info: &SocketInfo, input: Input) {
        match self.load_active() {
            Ok(true) => {}
            Ok(false) => {
                let msg = "no run is waiting for that";
                return self.reply(ws, info, error_event(msg, "no_active_run", None));
            }
            Err(e) => return self.reply(ws, info, unreadable(ACTIVE_RUN, &e, None)),
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

    /// Whether `run_id` is the session's active run (loaded from its checkpoint if it is not
    /// in memory); an error when the store cannot say.
    pub(super) fn is_active(&self, run_id: &str) -> worker::Result<bool> {
        Ok(self.load_active()?
            && self
                .run
                .borrow()
                .as_ref()
                .is_some_and(|r| r.run_id() == run_id))
    }

    pub(super) async fn cancel(&self, ws: &WebSocket, info: &SocketInfo, run_id: &str) {
        let active = match self.is_active(run_id) {
            Ok(active) => active,
            Err(e) => return self.reply(ws, info, unreadable(ACTIVE_RUN, &e, Some(run_id.into()))),
        };
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
    pub(super) fn resume(&self, ws: &WebSocket, info: &SocketInfo, run_id: &str, after: u64) {
        let store = self.store();
        // Only a run the store says it has not is unknown: the client sends an unknown run of
        // its own again, which a run merely unreadable now must not be.
        let known = match store.run(run_id) {
            Ok(run) => run.is_some(),
            Err(e) => {
                let what = format!("run {run_id}");
                return self.reply(ws, info, unreadable(&what, &e, Some(run_id.into())));
            }
        };
        if !known {
            let msg = format!("unknown run {run_id} in this session");
            return self.reply(
                ws,
                info,
                error_event(&msg, "unknown_run", Some(run_id.into())),
            );
        }
        let expired = match store.log_expired(run_id) {
            Ok(expired) => expired,
            Err(e) => {
                let what = format!("the event log of run {run_id}");
                return self.reply(ws, info, unreadable(&what, &e, Some(run_id.into())));
            }
        };
        if expired {
            let hours = self.settings.event_retention_ms as f64 / 3_600_000.0;
            let msg = format!(
                "the events of run {run_id} were deleted {hours} h after it ended \
                 (EVENT_RETENTION_HOURS); its messages are still in the history"
            );
            return self.reply(ws, info, error_event(&msg, "expired", Some(run_id.into())));
        }
        let logged = match self.logged_events(&store, run_id) {
            Ok(logged) => logged,
            Err(e) => {
                let what = format!("the event log of run {run_id}");
                return self.reply(ws, info, unreadable(&what, &e, Some(run_id.into())));
            }
        };
        for frame in fanout::replay(info, run_id, &logged, after) {
            if let Err(e) = ws.send_with_str(frame) {
                // The socket closed mid-replay: it resumes again when it returns.
                worker::console_warn!("resume of {run_id} cut short: {e}");
                return;
            }
        }
    }
}

/// The working folder a run asks for, as the tools see it: normalized, and none for the
/// workspace's root however it is written (empty, `.` or `/`). `Err` says why it cannot be one.
fn working_folder(asked: Option<&str>) -> Result<Option<String>, String> {
    match asked
        .map(str::trim)
        .filter(|f| !f.is_empty() && *f != "." && *f != "/")
    {
        None => Ok(None),
        Some(f) => tools::normalize_path(f)
            .map(Some)
            .map_err(|e| format!("working_folder: {e}")),
    }
}

const HISTORY: &str = "the session's history";
const RUNS: &str = "the session's runs";
pub(super) const ACTIVE_RUN: &str = "the session's active run";

/// The `storage` error of a request refused because `what` could not be read.
pub(super) fn unreadable(what: &str, e: &impl core::fmt::Display, id: Option<String>) -> Event {
    error_event(&format!("could not read {what}: {e}"), "storage", id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_working_folder_is_normalized_and_the_root_is_none() {
        for root in [None, Some(""), Some("  "), Some("."), Some("/")] {
            assert_eq!(working_folder(root), Ok(None), "{root:?}");
        }
        assert_eq!(
            working_folder(Some(" notes/./a ")),
            Ok(Some("notes/a".into()))
        );
        let outside = working_folder(Some("../etc")).unwrap_err();
        assert!(outside.starts_with("working_folder: "), "{outside}");
        assert!(working_folder(Some("/etc")).is_err());
    }
}
