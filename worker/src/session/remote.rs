//! A remote agent's run (agents.rs, `Runs::Remote`): the Worker as an AG-UI client of it. The
//! engine's remote room asks for the call ([`Effect::CallRemote`](weft_agent::engine::Effect));
//! this room carries it out — the input built and the stream read by the protocol crate's
//! [`Thread`], its canonical events fed to the run as [`Input::Remote`], which stamps, logs and
//! sends them like any run's — and turns every way the call can fail into the run's `error`.
//!
//! Each AG-UI run is one request, never sent again: a stream cut mid-run fails the run
//! (`stream_cut`) with the history as it was before, and a new run is the user's choice. A run
//! that stops for the page keeps its thread in memory and in the session's `meta` table, so
//! that the answer goes on in it after the Durable Object was evicted or restarted. The
//! request is aborted when the run ends without it (cancel, in any dialect): the future that
//! holds it is dropped, and with it the [`Abort`] guard.

use std::time::Duration;

use futures_util::{FutureExt, StreamExt};
use weft_agent::engine::Input;
use weft_agent::provider::ChatMessage;
use weft_protocol::dialect::agui::{Message, Thread, Tool, Turn};
use weft_protocol::json::RawJson;
use weft_protocol::{Event, Sequenced};
use worker::{AbortController, Fetch, Headers};

use super::Session;

/// The session's `meta` entry holding the thread of a remote run that waits for the page.
const THREAD_KEY: &str = "remote_thread";

/// The most of an error answer's body quoted in the run's error.
const QUOTED_BODY: usize = 300;

/// Aborts the request when dropped before [`Abort::done`].
struct Abort(Option<AbortController>);

impl Abort {
    fn done(mut self) {
        self.0 = None;
    }
}

impl Drop for Abort {
    fn drop(&mut self) {
        if let Some(controller) = self.0.take() {
            controller.abort();
        }
    }
}

impl Session {
    /// Calls the run's remote agent — the run's first call: the session's conversation and
    /// state and the turn's message; a later one: the page's answers on the same thread — and
    /// feeds the run what it streams, until its end, its error, or the run's.
    pub(super) async fn call_remote(
        &self,
        history: Vec<ChatMessage>,
        state: Option<RawJson>,
        mut turn: Turn,
    ) {
        let found = self.run.borrow().as_ref().map(|run| {
            (
                run.config().agent.clone(),
                run.run_id().to_string(),
                run.session_id().map(String::from),
            )
        });
        let Some((name, run_id, session_id)) = found else {
            return;
        };
        let Some(remote) = self
            .settings
            .agents
            .find(&name)
            .and_then(|p| p.remote())
            .cloned()
        else {
            let why = format!("agent {name} is no longer a remote agent in AGENTS");
            return self.remote_failed("agent_unavailable", why);
        };
        let host = remote.host().to_string();
        let thread_id = session_id.unwrap_or_else(|| self.state.id().to_string());
        let kept = self.remote.borrow_mut().take();
        let mut thread = match (kept, &turn.message) {
            (_, Some(_)) => Thread::with_history(&thread_id, messages(&history), state),
            (Some(thread), None) => thread,
            // The server restarted while the run waited for the page: the thread it stored.
            (None, None) => match self.stored_thread(&run_id) {
                Ok(Some(thread)) => thread,
                Ok(None) => {
                    let why = "the thread with the remote agent was lost (the server restarted \
                               while its answer streamed): send the message again for a new run";
                    return self.remote_failed("stream_cut", why.into());
                }
                Err(why) => return self.remote_failed("stream_cut", why),
            },
        };
        turn.tools = self.page_tools();
        let body = match thread.begin(&run_id, turn) {
            // Its events (the user's message) are the run's own `run_start`.
            Ok((body, _)) => body,
            Err(e) => return self.remote_failed("remote", format!("the input: {e}")),
        };
        // The stored thread is this call's from now on: a restart while it streams fails the
        // run (the call is never made twice), not an answer given in an older thread.
        if let Err(e) = self.store().set_meta(THREAD_KEY, "") {
            let why = format!("the thread with the remote agent could not be stored: {e}");
            return self.remote_failed("storage", why);
        }
        let headers = Headers::new();
        let set = [
            ("content-type", "application/json"),
            ("accept", "text/event-stream"),
        ]
        .into_iter()
        .chain(remote.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())))
        .try_for_each(|(n, v)| headers.set(n, v));
        if let Err(e) = set {
            return self.remote_failed("remote", format!("a header of {name}: {e}"));
        }
        let controller = AbortController::default();
        let signal = controller.signal();
        let abort = Abort(Some(controller));
        let idle_ms = self.settings.llm_idle_timeout_ms;
        let silent = || {
            format!(
                "the remote agent {name} sent nothing for {} s",
                idle_ms / 1000
            )
        };
        let response = match crate::outbound::remote(&remote.url, &headers, &body) {
            // An agent that never answers is as stalled as one that stops streaming.
            Ok(req) => {
                let fetch = Fetch::Request(req);
                futures_util::select! {
                    sent = fetch.send_with_signal(&signal).fuse() => sent,
                    () = worker::Delay::from(Duration::from_millis(idle_ms)).fuse() => {
                        return self.remote_failed("remote_timeout", silent());
                    }
                }
            }
            Err(e) => Err(e),
        };
        let mut response = match response {
            Ok(r) => r,
            Err(e) => {
                let why = format!("could not reach the remote agent {name} at {host}: {e}");
                return self.remote_failed("remote_unavailable", why);
            }
        };
        let status = response.status_code();
        if status != 200 {
            let quoted = match response.stream() {
                Ok(stream) => quote(stream).await,
                Err(e) => format!("(its body could not be read: {e})"),
            };
            let why = if (300..400).contains(&status) {
                format!("the remote agent {name} answered with a redirect ({status}), which weft does not follow")
            } else {
                format!("the remote agent {name} answered HTTP {status}: {quoted}")
            };
            return self.remote_failed("remote_error", why);
        }
        let mut stream = match response.stream() {
            Ok(s) => s,
            Err(e) => {
                let why = format!("could not read the remote agent {name}'s answer: {e}");
                return self.remote_failed("remote_unavailable", why);
            }
        };
        loop {
            let idle = worker::Delay::from(Duration::from_millis(idle_ms)).fuse();
            let chunk = futures_util::select! {
                chunk = stream.next().fuse() => chunk,
                () = { idle } => return self.remote_failed("remote_timeout", silent()),
            };
            let pushed = match chunk {
                Some(Ok(bytes)) => thread.push(&bytes),
                // The body ended, or broke: before the AG-UI run finished, that is the run's
                // failure (`stream_cut`), which finish says.
                Some(Err(_)) | None => {
                    let events = thread.finish_with("stream_cut");
                    if self.feed_remote(events) {
                        // It stopped for the page: the next call goes on with this thread,
                        // kept with the session too, so that an answer given after a restart
                        // finds it.
                        if let Some(snapshot) = thread.to_snapshot() {
                            if let Err(e) = self.store().set_meta(THREAD_KEY, &snapshot) {
                                let why = format!(
                                    "the thread with the remote agent could not be stored: {e}"
                                );
                                return self.remote_failed("storage", why);
                            }
                        }
                        *self.remote.borrow_mut() = Some(thread);
                        self.handle(Input::RemoteEnded);
                    }
                    break;
                }
            };
            match pushed {
                Ok(events) => {
                    if !self.feed_remote(events) {
                        break;
                    }
                }
                Err(e) => {
                    let why = format!("the remote agent {name} sent what is not AG-UI: {e}");
                    return self.remote_failed("remote_protocol", why);
                }
            }
        }
        abort.done();
    }

    /// The thread the session stored when run `run_id` stopped for the page (`None`: it has
    /// none, or one of another run).
    fn stored_thread(&self, run_id: &str) -> Result<Option<Thread>, String> {
        let stored = self
            .store()
            .meta(THREAD_KEY)
            .map_err(|e| format!("the thread with the remote agent could not be read: {e}"))?;
        let Some(text) = stored.filter(|t| !t.is_empty()) else {
            return Ok(None);
        };
        let thread = Thread::from_snapshot(&text)
            .map_err(|e| format!("the stored thread with the remote agent is damaged: {e}"))?;
        Ok((thread.run_id() == Some(run_id)).then_some(thread))
    }

    /// Feeds the run the remote agent's events and writes them to the log at once (deltas
    /// too: a restart fails a remote run rather than going on, so nothing it sent may be
    /// missing from the log). False when the run no longer takes them.
    fn feed_remote(&self, events: Vec<Sequenced>) -> bool {
        if events.is_empty() {
            return true;
        }
        let events: Vec<Event> = events.into_iter().map(|s| s.event).collect();
        if !self.handle(Input::Remote { events }) {
            return false;
        }
        if let Err(e) = self.write_log(&self.store()) {
            self.handle(Input::HostFailed {
                code: "storage".into(),
                message: format!(
                    "the run's events could not be stored ({e}), so it stops here: a resume \
                     could not replay them"
                ),
            });
            return false;
        }
        self.run.borrow().as_ref().is_some_and(|r| !r.is_finished())
    }

    /// Ends the run with an `error` of `code`: what the remote agent sent so far stays sent
    /// and logged; the history keeps nothing of this run's reply.
    fn remote_failed(&self, code: &str, message: String) {
        self.handle(Input::Remote {
            events: vec![Event::Error {
                message,
                code: Some(code.into()),
                id: None,
                details: None,
            }],
        });
    }

    /// The tools the session's clients run, as the remote agent's frontend tools.
    fn page_tools(&self) -> Vec<Tool> {
        self.tool_infos()
            .into_iter()
            .filter(|t| t.client)
            .map(|t| Tool {
                name: t.def.name,
                description: t.def.description,
                parameters: Some(t.def.input_schema),
            })
            .collect()
    }
}

/// The start of an error answer's body, for the run's error: read only as far as is quoted
/// (the rest is never fetched: the request is aborted when the call returns).
async fn quote(mut stream: worker::ByteStream) -> String {
    let mut bytes = Vec::new();
    while bytes.len() < QUOTED_BODY * 4 {
        match stream.next().await {
            Some(Ok(chunk)) => bytes.extend_from_slice(&chunk),
            Some(Err(e)) => return format!("(its body broke off: {e})"),
            None => break,
        }
    }
    String::from_utf8_lossy(&bytes)
        .chars()
        .take(QUOTED_BODY)
        .collect()
}

/// The session's conversation as AG-UI messages: what was said, and the calls and results
/// of weft's own agents' runs as the text around them.
fn messages(history: &[ChatMessage]) -> Vec<Message> {
    history
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let (role, text) = match m {
                ChatMessage::User { content } => ("user", content),
                ChatMessage::Assistant { content, .. } if !content.is_empty() => {
                    ("assistant", content)
                }
                _ => return None,
            };
            Some(Message {
                id: format!("history-{i}"),
                role: role.into(),
                content: Some(serde_json::Value::String(text.clone())),
                name: None,
                tool_calls: None,
                tool_call_id: None,
                error: None,
                activity_type: None,
            })
        })
        .collect()
}
