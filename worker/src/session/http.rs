//! The HTTP stream track in the session (`crate::http`): a turn is an HTTP request whose
//! answer streams the run's events, in the request's dialect (the AI SDK's `useChat`: UI
//! message chunks as server-sent events).
//!
//! A request's stream is a client of the session like a socket: it approves (the AI SDK has
//! approvals) and runs the tools its page declared, and it gets the run's events as they are
//! published, written by an encoder of its own ([`HttpEncoder`]). It ends with the run, or
//! when the run waits for the page (an approval, a client tool's output: the drive loop has
//! nothing left to do), with the dialect's pause; the page answers in its next request, whose
//! stream carries on the same message. A replay (the AI SDK's `GET /api/chat/{id}/stream`)
//! sends the running turn from its start (the AI SDK resets the message it streams into, then
//! applies the replay), then follows it live.
//!
//! The run is driven by the session's alarm, set to fire at once: a request hands its answer
//! to the runtime before the run it starts has streamed anything, and the drive loop lives
//! beyond any one request. A dropped request never stops the run (a disconnect never cancels);
//! the page's next message does (`Session::supersede`): that is what the AI SDK's `stop()` means.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::task::{Poll, Waker};
use std::time::Duration;

use weft_agent::engine::Input;
use weft_protocol::command::RunCommand;
use weft_protocol::event::ToolSpec;
use weft_protocol::{Command, Event, Limits, Sequenced};
use worker::{Headers, Request, Response, Result};

use super::fanout::decode_logged;
use super::url::HttpCall;
use super::Session;
use crate::http::{Action, HttpDialect, HttpEncoder, Turn as HttpTurn};

/// How long a new message waits for the run it supersedes to wind down.
const SUPERSEDE_WAIT: Duration = Duration::from_secs(2);

/// The body of one response: bytes queued by the session, read by the runtime.
#[derive(Debug, Default)]
struct Pipe {
    queue: VecDeque<Vec<u8>>,
    closed: bool,
    waker: Option<Waker>,
}

/// One request's stream, open while the session has something to tell it.
#[derive(Debug)]
pub(super) struct Stream {
    pipe: Rc<RefCell<Pipe>>,
    encoder: Box<dyn HttpEncoder>,
    run_id: String,
    /// The tools the page runs itself, declared with the request.
    pub(super) tools: Vec<ToolSpec>,
}

impl Stream {
    fn new(
        dialect: &HttpDialect,
        session: &str,
        run_id: &str,
        tools: Vec<ToolSpec>,
    ) -> Result<(Stream, Response)> {
        let pipe = Rc::new(RefCell::new(Pipe::default()));
        let reader = pipe.clone();
        let body = futures_util::stream::poll_fn(move |cx| {
            let mut pipe = reader.borrow_mut();
            match pipe.queue.pop_front() {
                Some(bytes) => Poll::Ready(Some(Ok::<Vec<u8>, worker::Error>(bytes))),
                None if pipe.closed => Poll::Ready(None),
                None => {
                    pipe.waker = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        });
        let stream = Stream {
            pipe,
            encoder: (dialect.encoder)(session),
            run_id: run_id.to_string(),
            tools,
        };
        let headers = Headers::new();
        for (name, value) in dialect.headers {
            headers.set(name, value)?;
        }
        let response = Response::from_stream(body)?.with_headers(headers);
        Ok((stream, response))
    }

    /// Queues bytes; false once the page has gone (the runtime dropped the body's reader).
    fn send(&self, bytes: Vec<u8>) -> bool {
        if Rc::strong_count(&self.pipe) < 2 {
            return false;
        }
        if bytes.is_empty() {
            return true;
        }
        let mut pipe = self.pipe.borrow_mut();
        pipe.queue.push_back(bytes);
        if let Some(w) = pipe.waker.take() {
            w.wake();
        }
        true
    }

    /// Sends one event of the run; false when the stream is over (the page gone).
    fn event(&mut self, ev: &Sequenced) -> bool {
        let bytes = self.encoder.encode(ev);
        self.send(bytes)
    }

    /// Ends the turn while the run waits for the page, and the stream with it.
    fn pause(mut self) {
        let bytes = self.encoder.pause();
        self.send(bytes);
        self.close();
    }

    fn close(&self) {
        let mut pipe = self.pipe.borrow_mut();
        if !pipe.closed {
            let end = self.encoder.end();
            if !end.is_empty() {
                pipe.queue.push_back(end.to_vec());
            }
            pipe.closed = true;
        }
        if let Some(w) = pipe.waker.take() {
            w.wake();
        }
    }
}

/// A page's request, sorted: the tools it runs itself, the message that starts a run, and its
/// answers to what the run waits for (the AI SDK sends every earlier answer again, too).
#[derive(Debug, Default)]
struct Turn {
    tools: Vec<ToolSpec>,
    run: Option<RunCommand>,
    answers: Vec<Input>,
}

impl Turn {
    fn of(commands: Vec<Command>) -> Turn {
        let mut turn = Turn::default();
        for command in commands {
            match command {
                Command::ClientTools(declared) => turn.tools = declared.tools,
                Command::Run(r) => turn.run = Some(r),
                Command::ApprovalResponse(d) => turn.answers.push(Input::Approval(d)),
                Command::ToolResult(r) => turn.answers.push(Input::ToolResult {
                    call_id: r.call_id,
                    result: r.result,
                    is_error: r.is_error,
                }),
                _ => {}
            }
        }
        turn
    }
}

/// A refused run as the page's HTTP answer: the error's message, and a status by its code.
fn refusal_response(refusal: Event) -> (String, u16) {
    let (message, code) = match refusal {
        Event::Error { message, code, .. } => (message, code.unwrap_or_default()),
        other => (other.kind().to_string(), String::new()),
    };
    let status = match code.as_str() {
        "busy" | "duplicate_run_id" => 409,
        "rate_limited" => 429,
        // The operator's to fix: no model, or settings (AGENTS) the Worker refuses.
        "model_not_configured" | "settings_invalid" => 503,
        "storage" => 500,
        _ => 400,
    };
    (message, status)
}

impl Session {
    /// A request of the HTTP track, as the Worker handed it on (`crate::http`).
    pub(super) async fn http(&self, mut req: Request) -> Result<Response> {
        let call = match HttpCall::parse(&req.inner().url()) {
            Ok(call) => call,
            Err(why) => return Response::error(why, 500),
        };
        match call.action {
            Action::Turn => {
                let text = req.text().await?;
                let limits = Limits {
                    max_frame_bytes: call.dialect.max_body_bytes,
                };
                let commands = match HttpTurn::decode_commands(&text, limits) {
                    Ok(commands) => commands,
                    Err(e) => return Response::error(e.to_string(), 400),
                };
                self.http_turn(call.dialect, &call.session, commands, &call.client)
                    .await
            }
            Action::Replay => self.http_replay(call.dialect, &call.session).await,
        }
    }

    /// The page's turn (a new message, or its answers to what the run asked).
    async fn http_turn(
        &self,
        dialect: &HttpDialect,
        session: &str,
        commands: Vec<Command>,
        client: &str,
    ) -> Result<Response> {
        if let Err(why) = self.admit(client).await {
            return Response::error(why, 429);
        }
        self.wake_orphan().await;
        self.touch().await;
        let Turn {
            tools,
            run,
            answers,
        } = Turn::of(commands);
        if let Some(run) = run {
            return self.http_run(dialect, session, run, tools).await;
        }
        // Answers: those for calls that still wait go to the run; the AI SDK sends every
        // earlier answer again, which the run refuses and nobody needs to hear about.
        let run_id = match self.active_run_id() {
            Ok(Some(run_id)) => run_id,
            Ok(None) => {
                return Response::error("no run of this chat is waiting for an answer", 409)
            }
            Err(e) => {
                let msg = format!("could not read the session's active run: {e}");
                return Response::error(msg, 503);
            }
        };
        // The stream is open before the answers go in, so it carries what they cause.
        let (stream, response) = Stream::new(dialect, session, &run_id, tools)?;
        self.streams.borrow_mut().push(stream);
        let mut fed = 0;
        for input in answers {
            if let Some(run) = self.run.borrow_mut().as_mut() {
                run.set_clock(js_sys::Date::now() as i64);
                if run.handle(input).is_ok() {
                    fed += 1;
                }
            }
        }
        if fed == 0 && !self.driving.get() {
            self.streams.borrow_mut().pop();
            return Response::error("nothing the run waits for was answered", 409);
        }
        self.drain_run();
        self.kick().await;
        Ok(response)
    }

    /// Starts a run for the page's message; its stream follows it.
    async fn http_run(
        &self,
        dialect: &HttpDialect,
        session: &str,
        run: RunCommand,
        tools: Vec<ToolSpec>,
    ) -> Result<Response> {
        if self.busy() {
            self.supersede().await;
        }
        // The page's tools count from the start: the run lists them to the model.
        let (stream, response) = Stream::new(dialect, session, "", tools)?;
        self.streams.borrow_mut().push(stream);
        match self.begin_run(session.to_string(), run, None).await {
            Ok(run_id) => {
                if let Some(s) = self.streams.borrow_mut().last_mut() {
                    s.run_id = run_id;
                }
                self.kick().await;
                Ok(response)
            }
            Err(refusal) => {
                self.streams.borrow_mut().pop();
                let (message, status) = refusal_response(refusal);
                Response::error(message, status)
            }
        }
    }

    /// A new message from the page while a run is on: the page has moved on from it. The AI
    /// SDK's `stop()` only drops its request, and a page does not answer an approval it has
    /// left behind, so the run is cancelled (what it said so far stays in the history) and the
    /// message starts the next one. Waits (a bounded while) for the run to wind down: the
    /// drive loop carries out the cancel when it wakes, and says when it has stopped.
    async fn supersede(&self) {
        if !self.load_active_run() {
            return;
        }
        if !self.driving.get() {
            self.handle(Input::Cancel);
            self.drive().await;
            return;
        }
        self.cancel.set(true);
        self.wake();
        let stopped = self.stops.wait(|| self.driving.get());
        let bound = worker::Delay::from(SUPERSEDE_WAIT);
        futures_util::future::select(std::pin::pin!(stopped), bound).await;
    }

    /// The running turn replayed from its start, then live; 204 when none runs.
    async fn http_replay(&self, dialect: &HttpDialect, session: &str) -> Result<Response> {
        // A page waits for this answer: storage that cannot say is a 503, not "no run".
        let run_id = match self.active_run_id() {
            Ok(Some(run_id)) => run_id,
            Ok(None) => return Ok(Response::empty()?.with_status(204)),
            Err(e) => {
                let msg = format!("could not read the session's active run: {e}");
                return Response::error(msg, 503);
            }
        };
        let (mut stream, response) = Stream::new(dialect, session, &run_id, Vec::new())?;
        let store = self.store();
        let events = match self.logged_events(&store, &run_id) {
            Ok(events) => events,
            Err(e) => {
                let msg = format!("could not read the event log of run {run_id}: {e}");
                return Response::error(msg, 503);
            }
        };
        for json in events {
            if let Some(ev) = decode_logged(&run_id, &json) {
                stream.event(&ev);
            }
        }
        if stream.encoder.is_finished() {
            stream.close();
            return Ok(response);
        }
        if !self.driving.get() {
            // It waits for the page: the replay ends where the first request's stream did.
            stream.pause();
            return Ok(response);
        }
        self.streams.borrow_mut().push(stream);
        Ok(response)
    }

    /// The run still on, loaded from its checkpoint if need be.
    fn active_run_id(&self) -> Result<Option<String>> {
        if !self.load_active()? {
            return Ok(None);
        }
        Ok(self.run.borrow().as_ref().map(|r| r.run_id().to_string()))
    }

    /// Drives the run from the alarm, at once (see the module docs).
    async fn kick(&self) {
        if self.driving.get() {
            return;
        }
        if let Err(e) = self.state.storage().set_alarm(1_i64).await {
            worker::console_error!("run not started: the session alarm could not be set: {e}");
            let streams = std::mem::take(&mut *self.streams.borrow_mut());
            for mut s in streams {
                let bytes = s
                    .encoder
                    .error(&format!("the run could not be started: {e}"));
                s.send(bytes);
                s.close();
            }
        }
    }

    /// Sends published events to the open streams; a stream whose run ended is closed.
    pub(super) fn stream_events(&self, events: &[Sequenced]) {
        let mut streams = self.streams.borrow_mut();
        if streams.is_empty() {
            return;
        }
        streams.retain_mut(|s| {
            for ev in events {
                if ev.envelope.run_id.as_deref() != Some(s.run_id.as_str()) {
                    continue;
                }
                if !s.event(ev) {
                    return false;
                }
            }
            if s.encoder.is_finished() {
                s.close();
                return false;
            }
            true
        });
    }

    /// The drive loop stopped with the run still on: it waits for an answer only the page can
    /// give, in its next request. Every open stream ends its turn here.
    pub(super) fn pause_streams(&self) {
        let waiting = self.run.borrow().as_ref().is_some_and(|r| !r.is_finished());
        if !waiting {
            return;
        }
        let streams = std::mem::take(&mut *self.streams.borrow_mut());
        for s in streams {
            s.pause();
        }
    }

    /// Whether a page's request is open: it can answer approvals.
    pub(super) fn page_listening(&self) -> bool {
        !self.streams.borrow().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_protocol::command::{ApprovalDecision, ClientTools, ToolResult};
    use weft_protocol::Review;

    #[test]
    fn a_pages_request_is_sorted_into_tools_a_run_and_answers() {
        let tool = ToolSpec {
            name: "pick_color".into(),
            description: None,
            input_schema: serde_json::json!({"type": "object"}).into(),
            read_only: true,
        };
        let turn = Turn::of(vec![
            Command::ClientTools(ClientTools {
                tools: vec![tool.clone()],
                approvals: true,
            }),
            Command::ApprovalResponse(ApprovalDecision {
                call_id: Some("c1".into()),
                review: Review::Yes,
                custom_deny_message: None,
                explanation: None,
            }),
            Command::ToolResult(ToolResult {
                call_id: "c2".into(),
                result: "red".into(),
                is_error: false,
            }),
            Command::Ping { id: "p".into() },
        ]);
        assert_eq!(turn.tools, [tool]);
        assert!(turn.run.is_none());
        assert!(matches!(
            &turn.answers[..],
            [Input::Approval(a), Input::ToolResult { call_id, .. }]
                if a.call_id.as_deref() == Some("c1") && call_id == "c2"
        ));
        let turn = Turn::of(vec![Command::Run(RunCommand {
            message: "hi".into(),
            ..RunCommand::default()
        })]);
        assert_eq!(turn.run.map(|r| r.message).as_deref(), Some("hi"));
    }

    #[test]
    fn a_refused_run_answers_with_the_status_its_code_means() {
        let refused = |code: &str| refusal_response(super::super::error_event("why", code, None));
        assert_eq!(refused("busy"), ("why".to_string(), 409));
        assert_eq!(refused("duplicate_run_id").1, 409);
        assert_eq!(refused("rate_limited").1, 429);
        assert_eq!(refused("model_not_configured").1, 503);
        assert_eq!(refused("settings_invalid").1, 503);
        assert_eq!(refused("storage").1, 500);
        assert_eq!(refused("agent_unavailable").1, 400);
        assert_eq!(refused("invalid_request").1, 400);
    }
}
