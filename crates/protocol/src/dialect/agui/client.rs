//! The client side of AG-UI over HTTP, sans IO: what a client of any AG-UI backend (weft's
//! `POST /agui`, ag-ui-langgraph, Mastra …) keeps between the runs of one thread, and how it
//! reads a run's stream into canonical events a [`Reassembler`](crate::Reassembler) applies.
//!
//! The caller POSTs [`Thread::begin`]'s body, feeds the response's bytes to [`Thread::push`]
//! as they come, and calls [`Thread::finish`] when the body ends. The rules:
//!
//! - **One client run may take several AG-UI runs.** A run that stops for the page (an
//!   interrupt, a frontend tool's call) goes on in the next input, so every event of the
//!   continuation carries the run id of the input that started it: the transcript shows one
//!   run from the user's message to the reply.
//! - **History is the client's.** AG-UI servers are free to keep none, so every input carries
//!   the whole conversation as AG-UI messages: the user's, the assistant's text and calls as
//!   they streamed, `TOOL_CALL_RESULT`s, and the page's tool results; a `MESSAGES_SNAPSHOT`
//!   replaces it (the server knows best). The state goes back too, as the last
//!   `STATE_SNAPSHOT` with every `STATE_DELTA` since applied.
//! - **Approvals are interrupts.** `RUN_FINISHED` with an interrupt outcome ends the AG-UI run
//!   and asks for each interrupt (an approval of the call it names in `toolCallId`, else of
//!   the interrupt itself); [`Answer`]s go back in the next input's `resume` under the
//!   interrupt's own id (which a server like ag-ui-langgraph does not make the call's).
//! - **Frontend tools end the AG-UI run.** A `RUN_FINISHED` after a call of one of the input's
//!   `tools` with no result is not the end of the client run: the page runs the call and the
//!   next input carries its `tool` message ([`Thread::waiting_calls`]).
//! - **A call streamed again is applied once.** A server may stream the calls of an earlier
//!   AG-UI run again when it resumes (ag-ui-langgraph does, before their results): a call
//!   already complete is not started a second time.
//! - **A stream that ends before `RUN_FINISHED` or `RUN_ERROR` failed** ([`Thread::finish`]: an `error`, code `disconnected`):
//!   the server died or the connection was cut mid-run; a client run is never re-sent.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{json, Value};

use super::{
    decode_event, AguiEvent, Decoder, FunctionCall, Message, Outcome, ResumeEntry, RunAgentInput,
    Tool, ToolCall,
};
use crate::event::{Envelope, Event, Sequenced};
use crate::json::{ObjectWriter, RawJson};
use crate::names::Review;
use crate::text::{concat, uint};
use crate::{Error, Limits};

/// Server-sent events read as they arrive, cut anywhere: the `data` of each complete event.
/// AG-UI uses `data:` lines only; comments, `event:`, `id:` and `retry:` are passed by. Lines
/// end with `\n` (a `\r` before it is dropped).
#[derive(Debug, Clone, Default)]
pub struct SseReader {
    line: Vec<u8>,
    data: String,
    has_data: bool,
}

impl SseReader {
    pub fn new() -> Self {
        SseReader::default()
    }

    /// The data of every event these bytes complete, in order.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<String>, Error> {
        let mut out = Vec::new();
        for &b in bytes {
            if b != b'\n' {
                self.line.push(b);
                continue;
            }
            if self.line.last() == Some(&b'\r') {
                self.line.pop();
            }
            let line = core::mem::take(&mut self.line);
            // A line ends at an ASCII byte, so a whole line is whole UTF-8 if it is UTF-8 at all.
            let line = core::str::from_utf8(&line).map_err(|e| Error::InvalidUtf8 {
                valid_up_to: e.valid_up_to(),
            })?;
            if line.is_empty() {
                if core::mem::take(&mut self.has_data) {
                    out.push(core::mem::take(&mut self.data));
                }
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line, ""),
            };
            if field == "data" {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
        }
        Ok(out)
    }

    /// Whether an event was cut off: bytes after the last complete one.
    pub fn is_mid_event(&self) -> bool {
        self.has_data || !self.line.is_empty()
    }
}

/// The user's answer to an approval the run asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The call id of the approval ([`Event::ToolApproval`]'s `call_id`).
    pub call_id: String,
    pub approved: bool,
    /// Why, when denied (sent as the payload's `message`).
    pub message: Option<String>,
}

/// What one input carries besides the history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Turn {
    /// The user's message: a new client run. Without one, the input goes on with the run that
    /// stopped for the page.
    pub message: Option<String>,
    /// The page's tools, declared on every input (AG-UI servers keep nothing of them).
    pub tools: Vec<Tool>,
    /// Answers to the approvals the last AG-UI run asked.
    pub answers: Vec<Answer>,
    /// Results of the page's tool calls: call id, the result's text.
    pub tool_results: Vec<(String, String)>,
    pub forwarded_props: Option<Value>,
}

/// One AG-UI thread as its client keeps it (see the module docs).
#[derive(Debug, Clone)]
pub struct Thread {
    thread_id: String,
    messages: Vec<Message>,
    state: Option<RawJson>,
    /// Interrupts the last AG-UI run finished with, not yet answered.
    interrupts: Vec<super::Interrupt>,
    /// The client run being read or waiting for the page, with its decoder (which knows the
    /// run's calls by id, across its AG-UI runs).
    run: Option<(String, Decoder)>,
    /// Calls of the client run whose arguments are complete: one streamed again is skipped.
    complete: Vec<String>,
    /// A call being skipped.
    replaying: Option<String>,
    /// Names of the page's tools in the current input.
    frontend: Vec<String>,
    /// The reply so far: the text of the run's last assistant message.
    reply: String,
    sse: SseReader,
    /// The history as the current input carried it: what a run cut mid-stream leaves.
    sent: Vec<Message>,
    /// The current AG-UI run finished (`RUN_FINISHED` or `RUN_ERROR` read).
    finished: bool,
    limits: Limits,
}

impl Thread {
    pub fn new(thread_id: &str) -> Self {
        Thread {
            thread_id: thread_id.to_string(),
            messages: Vec::new(),
            state: None,
            interrupts: Vec::new(),
            run: None,
            complete: Vec::new(),
            replaying: None,
            frontend: Vec::new(),
            reply: String::new(),
            sse: SseReader::new(),
            sent: Vec::new(),
            finished: true,
            limits: Limits::default(),
        }
    }

    /// A thread whose conversation and state so far are kept by someone else (a weft session,
    /// whose remote agent gets them in the next input: `messages`, `state`).
    pub fn with_history(thread_id: &str, messages: Vec<Message>, state: Option<RawJson>) -> Self {
        let mut thread = Thread::new(thread_id);
        thread.messages = messages;
        thread.state = state;
        thread
    }

    pub fn thread_id(&self) -> &str {
        &self.thread_id
    }

    /// The conversation as the next input will carry it.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// An AG-UI run's response is being read: its `RUN_FINISHED` / `RUN_ERROR` has not come.
    pub fn is_streaming(&self) -> bool {
        !self.finished
    }

    /// The client run under way (waiting for the page included).
    pub fn run_id(&self) -> Option<&str> {
        self.run.as_ref().map(|(id, _)| id.as_str())
    }

    /// The input of the next AG-UI run, as the body to POST, and the events it means for the
    /// transcript at once (the user's message; the answers given). `run_id` names a new client
    /// run (it is used only when `turn` has a message). An answer to an approval that was not
    /// asked, or a second message while a run stops for the page, is an error that changes
    /// nothing.
    pub fn begin(&mut self, run_id: &str, turn: Turn) -> Result<(String, Vec<Sequenced>), Error> {
        if !self.finished {
            return Err(Error::invalid(
                "agui",
                "a run of this thread is still streaming",
            ));
        }
        let mut resume = Vec::new();
        for a in &turn.answers {
            let Some(i) = self
                .interrupts
                .iter()
                .find(|i| i.tool_call_id.as_deref().unwrap_or(&i.id) == a.call_id)
            else {
                return Err(Error::invalid(
                    "agui",
                    concat(&["no approval of `", &a.call_id, "` is waiting"]),
                ));
            };
            let mut payload = json!({ "approved": a.approved });
            if let Some(m) = &a.message {
                payload["message"] = Value::String(m.clone());
            }
            resume.push(ResumeEntry {
                interrupt_id: i.id.clone(),
                status: "resolved".into(),
                payload: Some(payload),
            });
        }
        let mut local = Vec::new();
        match (&turn.message, &self.run) {
            (Some(_), Some((waiting, _))) => {
                return Err(Error::invalid(
                    "agui",
                    concat(&["run `", waiting, "` waits for the page's answers"]),
                ))
            }
            (Some(text), None) => {
                self.run = Some((run_id.to_string(), Decoder::new()));
                self.complete.clear();
                self.reply.clear();
                self.messages.push(Message {
                    id: concat(&[run_id, "-user"]),
                    role: "user".into(),
                    content: Some(Value::String(text.clone())),
                    name: None,
                    tool_calls: None,
                    tool_call_id: None,
                    error: None,
                    activity_type: None,
                });
                local.push(Event::RunStart {
                    run_id: Some(run_id.to_string()),
                    message: Some(text.clone()),
                    agent: None,
                });
            }
            (None, None) => {
                return Err(Error::invalid(
                    "agui",
                    "no run waits for answers: send a message",
                ))
            }
            (None, Some(_)) => {}
        }
        let run_id = self.run_id().unwrap_or(run_id).to_string();
        for (call_id, result) in &turn.tool_results {
            self.messages.push(Message {
                id: concat(&["result-", call_id]),
                role: "tool".into(),
                content: Some(Value::String(result.clone())),
                name: None,
                tool_calls: None,
                tool_call_id: Some(call_id.clone()),
                error: None,
                activity_type: None,
            });
        }
        for a in &turn.answers {
            local.push(Event::ApprovalResolved {
                call_id: Some(a.call_id.clone()),
                name: None,
                review: if a.approved {
                    Review::Yes
                } else {
                    Review::NoContinue
                },
                message: a.message.clone(),
            });
        }
        self.interrupts.retain(|i| {
            !turn
                .answers
                .iter()
                .any(|a| Some(&a.call_id) == i.tool_call_id.as_ref() || a.call_id == i.id)
        });
        self.frontend = turn.tools.iter().map(|t| t.name.clone()).collect();
        let input = RunAgentInput {
            thread_id: self.thread_id.clone(),
            // Each AG-UI run gets its own id; the client run's id is the first one's.
            run_id: match turn.message {
                Some(_) => run_id.clone(),
                None => concat(&[&run_id, "-", &uint(self.messages.len() as u64)]),
            },
            protocol_version: None,
            parent_run_id: None,
            state: Some(
                self.state
                    .as_ref()
                    .map_or_else(|| json!({}), RawJson::to_value),
            ),
            messages: self.messages.clone(),
            tools: turn.tools,
            context: Vec::new(),
            forwarded_props: Some(turn.forwarded_props.unwrap_or_else(|| json!({}))),
            resume: (!resume.is_empty()).then_some(resume),
        };
        let body = write_input(&input);
        self.sse = SseReader::new();
        self.sent.clone_from(&self.messages);
        self.finished = false;
        Ok((body, local.into_iter().map(|e| self.sequenced(e)).collect()))
    }

    /// The events these bytes of the response complete, in canonical form. A malformed event
    /// is an error (the caller fails the run).
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Sequenced>, Error> {
        let mut out = Vec::new();
        for data in self.sse.push(bytes)? {
            if self.finished {
                // Nothing of a finished AG-UI run counts, whatever a server sends after it.
                continue;
            }
            let ev = decode_event(data.as_bytes(), self.limits)?;
            self.read(ev, &mut out)?;
        }
        Ok(out)
    }

    /// The response ended. Before `RUN_FINISHED` / `RUN_ERROR` that is the run's failure
    /// ([`Thread::fail`] with code `disconnected`).
    pub fn finish(&mut self) -> Vec<Sequenced> {
        self.finish_with("disconnected")
    }

    /// [`Thread::finish`] with the error's `code` the caller's own (a weft session running a
    /// remote agent says `stream_cut`, its code for a model's stream cut short).
    pub fn finish_with(&mut self, code: &str) -> Vec<Sequenced> {
        if self.finished {
            return Vec::new();
        }
        let message = if self.sse.is_mid_event() {
            "the agent's event stream broke off in the middle of an event"
        } else {
            "the agent's event stream ended before the run finished"
        };
        self.fail(code, message)
    }

    /// Ends the client run here, streaming or waiting for the page (the request failed, an
    /// event could not be read, the user cancelled: the caller aborts the request): an `error`
    /// event with `code`, and the history is what the last input carried (nothing of a reply
    /// cut short). Nothing when no run is under way.
    pub fn fail(&mut self, code: &str, message: &str) -> Vec<Sequenced> {
        if self.run.is_none() {
            self.finished = true;
            return Vec::new();
        }
        let error = self.sequenced(Event::Error {
            message: message.into(),
            code: Some(code.into()),
            id: None,
            details: None,
        });
        if !self.finished {
            self.messages = core::mem::take(&mut self.sent);
        }
        self.finished = true;
        self.run = None;
        self.interrupts.clear();
        self.replaying = None;
        alloc::vec![error]
    }

    /// The page's calls the run waits for: call id, tool name, arguments (once the AG-UI run
    /// has finished; empty otherwise).
    pub fn waiting_calls(&self) -> Vec<(String, String, RawJson)> {
        if !self.finished || self.run.is_none() {
            return Vec::new();
        }
        self.unanswered_frontend_calls()
    }

    fn unanswered_frontend_calls(&self) -> Vec<(String, String, RawJson)> {
        let answered = |id: &str| {
            self.messages
                .iter()
                .any(|m| m.role == "tool" && m.tool_call_id.as_deref() == Some(id))
        };
        self.messages
            .iter()
            .flat_map(|m| m.tool_calls.iter().flatten())
            .filter(|c| self.frontend.contains(&c.function.name) && !answered(&c.id))
            .map(|c| {
                let args = RawJson::parse(&c.function.arguments)
                    .unwrap_or_else(|| RawJson::string(&c.function.arguments));
                (c.id.clone(), c.function.name.clone(), args)
            })
            .collect()
    }

    /// The thread as JSON text while its client run waits for the page (`None` otherwise:
    /// while a response is read, or with no run under way), for a host that must outlive its
    /// memory — a weft session stores it, so that an answer given after a restart goes on in
    /// the same thread ([`Thread::from_snapshot`]).
    pub fn to_snapshot(&self) -> Option<String> {
        let (run_id, decoder) = self.run.as_ref()?;
        if !self.finished {
            return None;
        }
        let list = |values: Vec<Value>| RawJson::from_value(&Value::Array(values));
        let (agui_run, calls) = decoder.parts();
        let mut w = ObjectWriter::new();
        w.str("threadId", &self.thread_id)
            .str("runId", run_id)
            .opt_str("aguiRunId", agui_run)
            .raw(
                "messages",
                &list(self.messages.iter().map(super::message_value).collect()),
            )
            .raw(
                "interrupts",
                &list(
                    self.interrupts
                        .iter()
                        .map(super::Interrupt::to_value)
                        .collect(),
                ),
            )
            .objects("calls", calls, |(id, name, arguments), w| {
                w.str("id", id)
                    .str("name", name)
                    .str("arguments", arguments);
            })
            .strings("complete", &self.complete)
            .strings("frontend", &self.frontend)
            .str("reply", &self.reply);
        if let Some(state) = &self.state {
            w.raw("state", state);
        }
        Some(w.finish())
    }

    /// A thread [`Thread::to_snapshot`] wrote, waiting for the page as it was.
    pub fn from_snapshot(text: &str) -> Result<Thread, Error> {
        // A snapshot holds the whole conversation: no frame's limit applies.
        let limits = Limits {
            max_frame_bytes: usize::MAX,
        };
        let obj = crate::frame::parse_object(text.as_bytes(), limits)?;
        let f = crate::field::Fields::new("thread snapshot", &obj);
        let thread_id: String = f.req("threadId")?;
        let run_id: String = f.req("runId")?;
        let calls = f.objects("calls", |f| {
            Ok((f.req("id")?, f.req("name")?, f.req("arguments")?))
        })?;
        let decoder = Decoder::from_parts(f.opt("aguiRunId")?, calls);
        let mut thread = Thread::new(&thread_id);
        thread.messages = f.objects("messages", super::message)?;
        thread.state = f.opt("state")?;
        thread.interrupts = f.objects("interrupts", super::events::interrupt)?;
        thread.run = Some((run_id, decoder));
        thread.complete = f.req("complete")?;
        thread.frontend = f.req("frontend")?;
        thread.reply = f.req("reply")?;
        thread.sent = thread.messages.clone();
        Ok(thread)
    }

    fn sequenced(&self, event: Event) -> Sequenced {
        Sequenced {
            envelope: Envelope {
                run_id: self.run_id().map(String::from),
                ..Envelope::default()
            },
            event,
        }
    }

    fn read(&mut self, ev: AguiEvent, out: &mut Vec<Sequenced>) -> Result<(), Error> {
        if let Some(skipped) = &self.replaying {
            match &ev {
                AguiEvent::ToolCallArgs { tool_call_id, .. } if tool_call_id == skipped => {
                    return Ok(())
                }
                AguiEvent::ToolCallEnd { tool_call_id } if tool_call_id == skipped => {
                    self.replaying = None;
                    return Ok(());
                }
                _ => {}
            }
        }
        self.remember(&ev)?;
        let finished_for_page = match &ev {
            AguiEvent::ToolCallStart { tool_call_id, .. }
                if self.complete.contains(tool_call_id) =>
            {
                self.replaying = Some(tool_call_id.clone());
                return Ok(());
            }
            AguiEvent::ToolCallEnd { tool_call_id } => {
                self.complete.push(tool_call_id.clone());
                false
            }
            AguiEvent::RunFinished { outcome, .. } => {
                self.finished = true;
                match outcome {
                    Some(Outcome::Interrupt { interrupts }) => {
                        self.interrupts.clone_from(interrupts);
                        true
                    }
                    Some(Outcome::Cancelled) => false,
                    _ => !self.unanswered_frontend_calls().is_empty(),
                }
            }
            AguiEvent::RunError { .. } => {
                self.finished = true;
                false
            }
            _ => false,
        };
        let Some((_, decoder)) = self.run.as_mut() else {
            return Ok(());
        };
        for mut e in decoder.decode(&ev)? {
            match &mut e.event {
                // [`Thread::begin`] started the client run, with its message.
                Event::RunStart { .. } => continue,
                // The run stops for the page and goes on in the next input; the interrupt's
                // approvals are what the decoder made of it.
                Event::RunEnd { .. } if finished_for_page => continue,
                Event::RunEnd { reply, .. } if reply.is_empty() => reply.clone_from(&self.reply),
                _ => {}
            }
            out.push(self.sequenced(e.event));
        }
        if self.finished && !finished_for_page {
            self.run = None;
            self.interrupts.clear();
        }
        Ok(())
    }

    /// Keeps the history and the state as the event changes them.
    fn remember(&mut self, ev: &AguiEvent) -> Result<(), Error> {
        match ev {
            AguiEvent::TextMessageStart {
                message_id, role, ..
            } => {
                let role = role.clone().unwrap_or_else(|| "assistant".into());
                self.message(message_id, &role);
                self.reply.clear();
            }
            AguiEvent::TextMessageContent { message_id, delta } => {
                self.append_text(message_id, delta);
            }
            AguiEvent::TextMessageChunk {
                message_id, delta, ..
            } => {
                let id = message_id.clone().unwrap_or_else(|| "assistant".into());
                self.append_text(&id, delta.as_deref().unwrap_or(""));
            }
            AguiEvent::ToolCallStart {
                tool_call_id,
                tool_call_name,
                parent_message_id,
            } if !self.complete.contains(tool_call_id) => {
                let owner = parent_message_id.as_deref().unwrap_or(tool_call_id);
                let i = self.message(owner, "assistant");
                self.messages[i]
                    .tool_calls
                    .get_or_insert_with(Vec::new)
                    .push(ToolCall {
                        id: tool_call_id.clone(),
                        kind: "function".into(),
                        function: FunctionCall {
                            name: tool_call_name.clone(),
                            arguments: String::new(),
                        },
                    });
            }
            AguiEvent::ToolCallArgs {
                tool_call_id,
                delta,
            } => {
                if let Some(c) = self.call_mut(tool_call_id) {
                    c.function.arguments.push_str(delta);
                }
            }
            AguiEvent::ToolCallResult {
                message_id,
                tool_call_id,
                content,
                ..
            } => {
                self.messages.retain(|m| {
                    !(m.role == "tool" && m.tool_call_id.as_deref() == Some(tool_call_id))
                });
                self.messages.push(Message {
                    id: message_id.clone(),
                    role: "tool".into(),
                    content: Some(content.clone()),
                    name: None,
                    tool_calls: None,
                    tool_call_id: Some(tool_call_id.clone()),
                    error: None,
                    activity_type: None,
                });
            }
            AguiEvent::MessagesSnapshot { messages } => self.messages.clone_from(messages),
            AguiEvent::StateSnapshot { snapshot } => {
                self.state = Some(RawJson::from_value(snapshot));
            }
            AguiEvent::StateDelta { delta } => {
                let base = self.state.clone().unwrap_or_else(RawJson::empty_object);
                self.state =
                    Some(base.patched(&RawJson::from_value(&Value::Array(delta.clone())))?);
            }
            _ => {}
        }
        Ok(())
    }

    /// The index of the message with this id, added with `role` if there is none.
    fn message(&mut self, id: &str, role: &str) -> usize {
        if let Some(i) = self.messages.iter().rposition(|m| m.id == id) {
            return i;
        }
        self.messages.push(Message {
            id: id.to_string(),
            role: role.to_string(),
            content: None,
            name: None,
            tool_calls: None,
            tool_call_id: None,
            error: None,
            activity_type: None,
        });
        self.messages.len() - 1
    }

    fn append_text(&mut self, id: &str, delta: &str) {
        let i = self.message(id, "assistant");
        match &mut self.messages[i].content {
            Some(Value::String(s)) => s.push_str(delta),
            other => *other = Some(Value::String(delta.to_string())),
        }
        self.reply.push_str(delta);
    }

    fn call_mut(&mut self, id: &str) -> Option<&mut ToolCall> {
        self.messages
            .iter_mut()
            .rev()
            .flat_map(|m| m.tool_calls.iter_mut().flatten())
            .find(|c| c.id == id)
    }
}

/// The input as JSON text, written member by member by the crate's own writer (as every
/// request of weft's clients is: the browser SDK links no serde serializer).
fn write_input(input: &RunAgentInput) -> String {
    let raw = |v: &Value| RawJson::from_value(v);
    let mut w = ObjectWriter::new();
    w.str("threadId", &input.thread_id)
        .str("runId", &input.run_id);
    if let Some(state) = &input.state {
        w.raw("state", &raw(state));
    }
    w.objects("messages", &input.messages, |m, w| {
        w.str("id", &m.id).str("role", &m.role);
        if let Some(content) = &m.content {
            w.raw("content", &raw(content));
        }
        w.opt_str("name", m.name.as_deref());
        if let Some(calls) = &m.tool_calls {
            w.objects("toolCalls", calls, |c, w| {
                w.str("id", &c.id)
                    .str("type", &c.kind)
                    .object("function", |w| {
                        w.str("name", &c.function.name)
                            .str("arguments", &c.function.arguments);
                    });
            });
        }
        w.opt_str("toolCallId", m.tool_call_id.as_deref())
            .opt_str("error", m.error.as_deref())
            .opt_str("activityType", m.activity_type.as_deref());
    })
    .objects("tools", &input.tools, |t, w| {
        w.str("name", &t.name).str("description", &t.description);
        if let Some(p) = &t.parameters {
            w.raw("parameters", &raw(p));
        }
    })
    .objects("context", &input.context, |c, w| {
        w.str("description", &c.description).str("value", &c.value);
    });
    if let Some(props) = &input.forwarded_props {
        w.raw("forwardedProps", &raw(props));
    }
    if let Some(resume) = &input.resume {
        w.objects("resume", resume, |r, w| {
            w.str("interruptId", &r.interrupt_id)
                .str("status", &r.status);
            if let Some(p) = &r.payload {
                w.raw("payload", &raw(p));
            }
        });
    }
    w.finish()
}
