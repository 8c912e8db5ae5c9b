//! The drive loop: carries out a run's effects (model calls side by side, tools, approvals,
//! checkpoints, the end) and publishes the events the run produces, until the run waits for
//! something outside.

use std::cell::RefCell;
use std::future::Future;
use std::task::{Poll, Waker};

use futures_util::future::LocalBoxFuture;
use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, StreamExt};
use weft_agent::engine::{Effect, Input, Output, Run};
use weft_agent::tools::{self, ToolRun};
use weft_protocol::dialect::agui::Turn;
use weft_protocol::Role;

use super::host::{web_fetch, Host};
use super::socket::someone_can_approve;
use super::{last_reply, Session};
use crate::store::{RunStatus, SqlWorkspace};

/// What waits for the drive loop to stop (a page's new message, for the run it supersedes):
/// woken when it does, rather than looking again and again.
#[derive(Debug, Default)]
pub(super) struct Stops {
    waiting: RefCell<Vec<Waker>>,
}

impl Stops {
    /// Ready once `running` says the loop is not running, looked at again whenever it stops.
    pub(super) fn wait<'a>(
        &'a self,
        running: impl Fn() -> bool + 'a,
    ) -> impl Future<Output = ()> + 'a {
        futures_util::future::poll_fn(move |cx| {
            if !running() {
                return Poll::Ready(());
            }
            self.waiting.borrow_mut().push(cx.waker().clone());
            Poll::Pending
        })
    }

    /// The loop stopped: everything waiting looks again.
    pub(super) fn stopped(&self) {
        let waiting = std::mem::take(&mut *self.waiting.borrow_mut());
        for w in waiting {
            w.wake();
        }
    }
}

impl Session {
    /// Carries out the active run's events and effects until it waits for something outside.
    ///
    /// Model calls run concurrently: a GoT run may have several outstanding (one per running
    /// sub-task, at most `got_max_parallel`), each a future in `calls`, feeding its stream into
    /// the run under its own call id. The other effects are carried out one at a time, in
    /// order, between polls of the calls; a call's input or a socket's (an approval, a client
    /// tool's result) that queues an effect wakes the loop. Once the run is over, calls still
    /// streaming are dropped, so nothing of it reaches a later run.
    pub(super) async fn drive(&self) {
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
                    // Model calls and a remote agent's call run beside the loop, so a cancel
                    // drops them (and aborts their requests).
                    effect @ (Effect::CallLlm { .. } | Effect::CallRemote { .. }) => {
                        calls.push(self.effect(effect).boxed_local());
                    }
                    // MCP calls run beside the model calls: a slow tool holds neither a
                    // cancel nor the other calls of its step.
                    Effect::RunTool {
                        call_id,
                        name,
                        arguments,
                        client: false,
                    } if self.mcp_tool(&name).is_some() => {
                        calls.push(self.call_mcp(call_id, name, arguments).boxed_local());
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
        self.stops.stopped();
        self.pause_streams();
    }

    pub(super) fn wake(&self) {
        let waker = self.waker.borrow_mut().take();
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Publishes the run's queued events (as one batch), saves its checkpoint if it asked for
    /// one, and queues its other effects.
    ///
    /// The checkpoint is written here, in the same synchronous turn as the batch's log rows,
    /// not queued behind effects that await: the Durable Object commits a turn's writes
    /// together and holds the turn's frames until they are stored, so no client sees an event
    /// (an approval asked, say) that a restart would not find. Queued, it waited behind
    /// `AwaitApproval`'s alarm, and a server killed in that gap lost the waiting approval.
    pub(super) fn drain_run(&self) {
        loop {
            let mut events = Vec::new();
            let mut checkpoint = false;
            loop {
                let out = self.run.borrow_mut().as_mut().and_then(Run::poll);
                match out {
                    Some(Output::Event(ev)) => events.push(ev),
                    Some(Output::Effect(Effect::Checkpoint)) => checkpoint = true,
                    Some(Output::Effect(e)) => {
                        self.pending.borrow_mut().push_back(e);
                        self.wake();
                    }
                    None => break,
                }
            }
            let Err(e) = self.publish(&events) else {
                if checkpoint {
                    self.checkpoint(RunStatus::Running);
                }
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
    pub(super) fn handle(&self, input: Input) -> bool {
        let accepted = self.feed_run(input);
        self.drain_run();
        accepted
    }

    /// Feeds the active run without publishing: a model read feeds all its deltas, then
    /// publishes their events together.
    pub(super) fn feed_run(&self, input: Input) -> bool {
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
            Effect::CallRemote {
                history,
                message,
                state,
                answers,
                tool_results,
            } => {
                let turn = Turn {
                    message,
                    answers,
                    tool_results,
                    ..Turn::default()
                };
                self.call_remote(history, state, turn).await;
            }
            Effect::RunTool {
                call_id,
                name,
                arguments,
                client,
            } => {
                if client {
                    // The socket that declared it saw the tool_call event and answers with
                    // tool_result; if it is gone, the model is told.
                    let present = self.sockets().iter().any(|(_, i)| i.runs_tool(&name))
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
                let sockets = self.sockets();
                if !someone_can_approve(sockets.iter().map(|(_, i)| i), self.page_listening()) {
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
            // Saved as the run's events are published (`drain_run`); never queued.
            Effect::Checkpoint => self.checkpoint(RunStatus::Running),
            Effect::Finished => {
                self.checkpoint(RunStatus::Done);
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
                        if let Err(e) = store.add_message(&Role::Assistant, &reply, run.run_id()) {
                            worker::console_error!(
                                "run {}: reply not added to the history: {e}",
                                run.run_id()
                            );
                        }
                    }
                    // For the next run: stale catalogs are asked for now, after this run's
                    // end went out, so no run waits on them.
                    self.mcp_refresh().await;
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
    fn checkpoint(&self, status: RunStatus) {
        let saved = {
            let cell = self.run.borrow();
            let Some(run) = cell.as_ref() else {
                return;
            };
            let status = if run.is_finished() {
                RunStatus::Done
            } else {
                status
            };
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
            if let Err(e) = self.store().set_run_status(&run_id, RunStatus::Done) {
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

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::pin::pin;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Wake};

    use super::*;

    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_waiter_is_woken_when_the_loop_stops_and_not_before() {
        let stops = Stops::default();
        let running = Cell::new(true);
        let count = Arc::new(Count::default());
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let mut waiting = pin!(stops.wait(|| running.get()));
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        // The loop goes round without stopping: nobody is woken.
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
        running.set(false);
        stops.stopped();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert!(waiting.as_mut().poll(&mut cx).is_ready());
        // Woken once: a later stop finds nobody waiting.
        stops.stopped();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_loop_already_stopped_is_not_waited_for() {
        let stops = Stops::default();
        let waker = Waker::from(Arc::new(Count::default()));
        let mut cx = Context::from_waker(&waker);
        assert!(pin!(stops.wait(|| false)).poll(&mut cx).is_ready());
        assert!(stops.waiting.borrow().is_empty());
    }
}
