//! The AG-UI backend over HTTP + server-sent events: weft-sdk as a client of any AG-UI agent
//! (weft's `POST /agui`, ag-ui-langgraph, Mastra …), the room of the one kind of connection
//! that has no socket.
//!
//! `dialect: "agui"` with an `http(s)://` URL: the URL is the agent's endpoint as it is, and
//! the session is an AG-UI thread ([`Thread`] keeps it: the history each input carries, the
//! state, one client run across the AG-UI runs an interrupt or a frontend tool splits it
//! into). Each run is one `POST` whose response the shell streams into [`Connection::http_chunk`]
//! and ends with [`Connection::http_end`] (or [`Connection::http_failed`]); one request is in
//! flight at a time. What differs from a socket:
//! - `connect()` opens nothing: there is nothing to open until a run.
//! - An approval is an interrupt: the run's AG-UI run finishes asking it, and the answers go
//!   back in the next input's `resume` once the app has answered every approval asked.
//! - The app's tools are the input's `tools` (AG-UI's frontend tools): a call ends the AG-UI
//!   run, the app's handler runs it, and its result goes back as a `tool` message in the next
//!   input, once every call the run waits for has its result.
//! - Nothing resumes: a stream cut mid-run fails the run (`disconnected`) and is never sent
//!   again; the history stays as the last input carried it. `cancel()` aborts the request.
//! - The other requests (`agents()`, `userMessages()` …) are weft's own and are refused.

use weft_protocol::dialect::agui::{Answer, Thread, Tool, Turn};
use weft_protocol::event::Sequenced;
use weft_protocol::json::{ObjectWriter, RawJson};
use weft_protocol::text;
use weft_protocol::{Dialect, Event};

use super::{Connection, Output, Phase, RunHandle, RunSlot};
use crate::error::{Error, ErrorCode};
use crate::types::RunOptions;

/// The AG-UI endpoint to POST to, when `dialect` and `url` ask for AG-UI over HTTP: AG-UI with
/// an `http(s)://` URL (with `ws(s)://` it is weft's AG-UI socket).
pub fn agui_over_http(dialect: Dialect, url: &str) -> Option<String> {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    let http = lower.starts_with("http://") || lower.starts_with("https://");
    (dialect == Dialect::Agui && http).then(|| url.split('#').next().unwrap_or(url).into())
}

/// The HTTP side of a connection (see the module docs).
#[derive(Debug)]
pub(super) struct Http {
    url: String,
    thread: Thread,
    /// The app's run whose request is in flight.
    streaming: Option<RunHandle>,
    /// The run waiting for the app's answers: approvals and tool results, sent together.
    waiting: Option<RunHandle>,
    answers: Vec<Answer>,
    results: Vec<(String, String)>,
}

impl Http {
    pub(super) fn new(url: &str, thread_id: &str) -> Http {
        Http {
            url: url.into(),
            thread: Thread::new(thread_id),
            streaming: None,
            waiting: None,
            answers: Vec::new(),
            results: Vec::new(),
        }
    }
}

impl Connection {
    /// `connect()` over HTTP: ready at once.
    pub(super) fn http_connect(&mut self) {
        if self.phase == Phase::Idle {
            self.phase = Phase::Open;
            self.status("open", None, None, None);
        }
        self.out.push_back(Output::Connected);
    }

    /// `run()` over HTTP: the first input of a new thread run.
    pub(super) fn http_run(
        &mut self,
        opts: RunOptions,
        run_id: String,
    ) -> Result<RunHandle, Error> {
        let tools = self.agui_tools();
        let Some(http) = self.http.as_mut() else {
            return Err(Error::new(ErrorCode::Internal, "not an HTTP connection"));
        };
        if http.streaming.is_some() || http.waiting.is_some() {
            return Err(Error::new(
                ErrorCode::Busy,
                "run(): a run of this AG-UI thread is still under way (one at a time over HTTP)",
            ));
        }
        let turn = Turn {
            message: Some(opts.message.clone()),
            tools,
            // weft's own extension of `forwardedProps` (the agent by name); others ignore it.
            forwarded_props: opts.agent.as_deref().and_then(|a| {
                RawJson::parse(&ObjectWriter::new().str("agent", a).finish()).map(|r| r.to_value())
            }),
            ..Turn::default()
        };
        let (body, local) = http
            .thread
            .begin(&run_id, turn)
            .map_err(|e| Error::from_protocol(&e, "run()"))?;
        let url = http.url.clone();
        let handle = self.new_handle();
        if let Some(http) = self.http.as_mut() {
            http.streaming = Some(handle);
        }
        self.runs.insert(
            handle,
            RunSlot {
                run_id,
                sent: true,
                followed: false,
                started: true,
                text: String::new(),
                message: opts.message,
                frame: String::new(),
            },
        );
        self.out.push_back(Output::Post { url, body });
        self.http_apply(local);
        Ok(handle)
    }

    /// A piece of the response body of the request in flight.
    pub fn http_chunk(&mut self, bytes: &[u8]) {
        let Some(http) = self.http.as_mut() else {
            return;
        };
        match http.thread.push(bytes) {
            Ok(events) => {
                self.http_apply(events);
                // The AG-UI run has finished: whatever else the body holds counts for nothing,
                // and the next run must not wait for the server to close it.
                let done = self.http.as_ref().is_some_and(|h| !h.thread.is_streaming());
                if done {
                    self.out.push_back(Output::Abort);
                    self.http_end_with(None);
                }
            }
            Err(e) => {
                let message = text::concat(&[
                    "the agent sent an event the SDK cannot read: ",
                    &e.message(),
                ]);
                self.out.push_back(Output::Abort);
                self.http_end_with(Some(("run_failed", message)));
            }
        }
    }

    /// The response body ended.
    pub fn http_end(&mut self) {
        self.http_end_with(None);
    }

    /// The request failed: the agent could not be reached, answered an HTTP error, or the
    /// body broke off. The run fails with `message` (code `disconnected`).
    pub fn http_failed(&mut self, message: String) {
        self.http_end_with(Some(("disconnected", message)));
    }

    fn http_end_with(&mut self, failure: Option<(&str, String)>) {
        let Some(http) = self.http.as_mut() else {
            return;
        };
        let Some(run) = http.streaming.take() else {
            return;
        };
        // A response that stops before its run finished leaves no half reply behind.
        if http.thread.is_streaming() {
            if let Some(run_id) = http.thread.run_id() {
                self.reassembler.discard_partial(run_id);
            }
        }
        let Some(http) = self.http.as_mut() else {
            return;
        };
        let events = match &failure {
            Some((code, message)) => http.thread.fail(code, message),
            None => http.thread.finish(),
        };
        // A run that stops for the app: its approvals were asked as its events came; its
        // calls of the app's tools are due now, when the AG-UI run has finished.
        let calls = http.thread.waiting_calls();
        if http.thread.run_id().is_some() {
            http.waiting = Some(run);
        }
        self.http_apply(events);
        for (call_id, name, arguments) in calls {
            if self.tools.iter().any(|t| t.name == name) && self.dispatched.insert(call_id.clone())
            {
                self.out.push_back(Output::ClientTool {
                    call_id,
                    name,
                    arguments,
                });
            }
        }
        self.http_continue();
    }

    /// The app's decision on an interrupt.
    pub(super) fn http_answer(
        &mut self,
        call_id: Option<String>,
        approved: bool,
        message: Option<String>,
    ) {
        let Some(call_id) = call_id else {
            return;
        };
        if !self.asking.remove(&call_id) {
            return;
        }
        if let Some(http) = self.http.as_mut() {
            http.answers.push(Answer {
                call_id,
                approved,
                message,
            });
        }
        self.http_continue();
    }

    /// The result of a call of the app's tool.
    pub(super) fn http_tool_result(&mut self, call_id: String, result: String, is_error: bool) {
        if let Some(http) = self.http.as_mut() {
            // AG-UI's `tool` message has no error flag: an error says so in its text.
            let result = match is_error {
                true => text::concat(&["error: ", &result]),
                false => result,
            };
            http.results.push((call_id, result));
        }
        self.http_continue();
    }

    /// Sends the next input of the run waiting for the app once the app has answered all it
    /// was asked: every approval and every call of its tools.
    fn http_continue(&mut self) {
        let tools = self.agui_tools();
        let asking = !self.asking.is_empty();
        let Some(http) = self.http.as_mut() else {
            return;
        };
        let Some(run) = http.waiting else {
            return;
        };
        let calls = http.thread.waiting_calls();
        let unanswered = calls
            .iter()
            .any(|(id, _, _)| !http.results.iter().any(|(r, _)| r == id));
        if asking || unanswered {
            return;
        }
        let turn = Turn {
            tools,
            answers: core::mem::take(&mut http.answers),
            tool_results: core::mem::take(&mut http.results),
            ..Turn::default()
        };
        let begun = http.thread.begin("", turn);
        let url = http.url.clone();
        http.waiting = None;
        match begun {
            Ok((body, local)) => {
                if let Some(http) = self.http.as_mut() {
                    http.streaming = Some(run);
                }
                self.out.push_back(Output::Post { url, body });
                self.http_apply(local);
            }
            Err(e) => {
                let message = e.message();
                let events = match self.http.as_mut() {
                    Some(http) => http.thread.fail("run_failed", &message),
                    None => Vec::new(),
                };
                self.http_apply(events);
            }
        }
    }

    /// `run.cancel()` over HTTP: the request aborted, the run ended here.
    pub(super) fn http_cancel(&mut self, run: RunHandle) {
        let Some(http) = self.http.as_mut() else {
            return;
        };
        if http.streaming != Some(run) && http.waiting != Some(run) {
            return;
        }
        if http.streaming.take().is_some() {
            self.out.push_back(Output::Abort);
        }
        if let Some(http) = self.http.as_mut() {
            http.waiting = None;
            http.answers.clear();
            http.results.clear();
            let events = http.thread.fail("cancelled", "the run was cancelled");
            self.http_apply(events);
        }
    }

    /// `close()` over HTTP: the request in flight aborted; the run fails as `close()` fails
    /// every run.
    pub(super) fn http_close(&mut self) {
        if let Some(http) = self.http.as_mut() {
            if http.streaming.take().is_some() {
                self.out.push_back(Output::Abort);
            }
            http.waiting = None;
        }
    }

    /// Applies events to the transcript and routes them to the app.
    fn http_apply(&mut self, events: Vec<Sequenced>) {
        for ev in events {
            if let Some(e) = self.reassembler.push_event(ev).rejected {
                let e = Error::from(e).context("the agent's state patch does not apply");
                self.out.push_back(Output::Error(e));
            }
            while let Some(ev) = self.reassembler.poll() {
                // A run that ends (its error or its reply) waits for nothing more.
                if matches!(ev.event, Event::RunEnd { .. } | Event::Error { .. }) {
                    if let Some(http) = self.http.as_mut() {
                        if http.thread.run_id().is_none() {
                            http.waiting = None;
                        }
                    }
                }
                self.route(ev);
            }
        }
    }

    /// The app's tools as AG-UI's frontend tools.
    fn agui_tools(&self) -> Vec<Tool> {
        self.tools
            .iter()
            .map(|t| Tool {
                name: t.name.clone(),
                description: t.description.clone().unwrap_or_default(),
                parameters: Some(t.input_schema.to_value()),
            })
            .collect()
    }
}
