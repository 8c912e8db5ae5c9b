//! The sans-IO reassembler: frames (or canonical events) in, a transcript out.
//!
//! It does what every chat client otherwise hand-writes: accumulate streamed text and tool
//! arguments in order, parse arguments once complete, follow each tool call through approval
//! and execution, total the usage — and, because frames arrive over sockets that drop, it
//! delivers each run's frames exactly once and in order: a frame whose `event_id` was already
//! applied is dropped, and a frame that skips ahead is held back and reported as a [`Gap`] so the
//! client can `resume` from the last contiguous id. Frames without an envelope (original
//! servers, loom §7.2) are applied as they come.

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;
use serde::Serialize;
use serde_json::Value;

use crate::dialect::fast::{self, Body, Delta};
use crate::dialect::Dialect;
use crate::event::{Event, Sequenced, Usage};
use crate::frame::Limits;
use crate::names::{Agent, Review, Role};
use crate::sorted::SortedMap;
use crate::Error;

/// Frames held back per run while waiting for a gap to be filled; beyond this they are dropped
/// (the resume that fills the gap sends them again).
const MAX_HELD_FRAMES: usize = 4096;

/// Everything reassembled so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Transcript {
    /// User and assistant messages, in order.
    pub messages: Vec<Message>,
    /// Tool calls, in the order they were first seen.
    pub tool_calls: Vec<ToolCall>,
    /// Runs, in the order they started.
    #[cfg_attr(feature = "tsify", tsify(type = "TranscriptRun[]"))]
    pub runs: Vec<Run>,
}

impl Transcript {
    /// Usage summed over every run (each run's total as last reported).
    pub fn total_usage(&self) -> Usage {
        let mut total = Usage::default();
        for run in &self.runs {
            total.add(&run.total_usage);
        }
        total
    }

    /// The tool call with this id.
    pub fn tool_call(&self, call_id: &str) -> Option<&ToolCall> {
        self.tool_calls.iter().find(|c| c.call_id == call_id)
    }

    /// The run with this id.
    pub fn run(&self, run_id: &str) -> Option<&Run> {
        self.runs
            .iter()
            .find(|r| r.run_id.as_deref() == Some(run_id))
    }
}

/// One message.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// Its text, accumulated in order.
    pub text: String,
    /// The model's reasoning before or while writing it.
    #[serde(skip_serializing_if = "String::is_empty")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub reasoning: String,
    /// The run it belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Tool calls the message made.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub tool_call_ids: Vec<String>,
    /// No more text will be added.
    pub complete: bool,
}

/// Where a tool call is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
pub enum ToolStatus {
    /// Arguments are still arriving.
    Streaming,
    /// Arguments are complete; the call has not started.
    Pending,
    /// Waiting for the user's decision.
    AwaitingApproval,
    /// The user allowed it.
    Approved,
    /// The user refused it; it will not run.
    Denied,
    /// Running.
    Running,
    /// Finished with a result.
    Done,
    /// Finished with an error.
    Error,
}

/// One tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct ToolCall {
    /// Call id (`call-<n>` when the server gave none).
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as streamed (JSON text).
    pub arguments_text: String,
    /// Arguments parsed, once complete and valid.
    #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
    pub arguments: Option<Value>,
    /// Where it is.
    pub status: ToolStatus,
    /// The user's last decision on it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<Review>,
    /// Deny message or explanation given with the decision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review_message: Option<String>,
    /// Output streamed while it ran.
    #[serde(skip_serializing_if = "String::is_empty")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub output: String,
    /// Its result.
    pub result: Option<String>,
    /// Whether the result is an error.
    pub is_error: bool,
    /// The run it belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// How a run ended, or that it has not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
pub enum RunStatus {
    /// Still streaming.
    Running,
    /// Finished with a reply.
    Completed,
    /// Failed with an error.
    Failed,
    /// Stopped by `cancel`.
    Cancelled,
}

/// One run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(
    feature = "tsify",
    derive(tsify::Tsify),
    tsify(missing_as_null, rename = "TranscriptRun")
)]
pub struct Run {
    /// Run id, when the server gave one.
    pub run_id: Option<String>,
    /// The agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<Agent>,
    /// Where it is.
    pub status: RunStatus,
    /// The final reply.
    pub reply: Option<String>,
    /// Usage of the last LLM call.
    pub usage: Option<Usage>,
    /// Usage of each LLM call, in order.
    pub call_usage: Vec<Usage>,
    /// Usage of the whole run so far.
    pub total_usage: Usage,
    /// The error, when it failed.
    pub error: Option<String>,
    /// It paused after a `pause_after` tool.
    pub paused: bool,
}

/// Frames of a run that were skipped: resume after `after_event_id` to get them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
pub struct Gap {
    /// The run.
    pub run_id: String,
    /// The last event id received without a hole before it.
    pub after_event_id: u64,
    /// The event id that arrived instead of `after_event_id + 1`.
    pub received: u64,
}

/// What one push did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pushed {
    /// Canonical events applied to the transcript (held frames released by this one included).
    pub applied: usize,
    /// The frame repeated one already applied, and was dropped.
    pub duplicate: bool,
    /// The frame skipped ahead, and is held until the gap is filled.
    pub gap: Option<Gap>,
}

/// Why a frame is not applied now (see [`Reassembler::admit`]).
enum NotNext {
    /// Its event id was applied (or is held) already.
    Duplicate,
    /// It skips ahead of the run's last contiguous id.
    Gap(Gap),
}

#[derive(Debug, Clone, Default)]
struct RunOrder {
    /// Every event id up to this one has been applied.
    contiguous: u64,
    /// Frames that arrived ahead of a gap, by event id.
    held: SortedMap<u64, Vec<Sequenced>>,
}

/// Turns frames of one dialect (or canonical events) into a [`Transcript`].
#[derive(Debug, Clone)]
pub struct Reassembler {
    dialect: Dialect,
    limits: Limits,
    transcript: Transcript,
    order: SortedMap<String, RunOrder>,
    /// Index in `messages` of each run's open assistant message (one per streaming run: a
    /// list is quicker to search than a map, and is searched by a borrowed run id).
    open: Vec<(Option<String>, usize)>,
    queue: Option<VecDeque<Sequenced>>,
}

impl Reassembler {
    /// A reassembler for frames of `dialect`.
    pub fn new(dialect: Dialect) -> Self {
        Reassembler {
            dialect,
            limits: Limits::default(),
            transcript: Transcript::default(),
            order: SortedMap::new(),
            open: Vec::new(),
            queue: None,
        }
    }

    /// Also queue every applied event for [`Reassembler::poll`] (off by default, so a
    /// transcript-only consumer pays nothing for events it never reads).
    pub fn with_events(mut self) -> Self {
        self.queue = Some(VecDeque::new());
        self
    }

    /// Turns the event queue of [`Reassembler::with_events`] on or off; off drops events not
    /// yet polled. For a host whose listeners come and go: while nobody listens, deltas take
    /// the in-place path.
    pub fn set_events(&mut self, on: bool) {
        match (on, self.queue.is_some()) {
            (true, false) => self.queue = Some(VecDeque::new()),
            (false, true) => self.queue = None,
            _ => {}
        }
    }

    /// Changes the frame size limit.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The dialect it decodes.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The transcript so far.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// The next applied event, in order (only with [`Reassembler::with_events`]).
    #[must_use]
    pub fn poll(&mut self) -> Option<Sequenced> {
        self.queue.as_mut()?.pop_front()
    }

    /// The last event id of `run_id` applied with nothing missing before it: what to send as
    /// `after_event_id` when resuming.
    pub fn last_event_id(&self, run_id: &str) -> u64 {
        self.order.get(run_id).map_or(0, |o| o.contiguous)
    }

    /// Pushes one server frame. A frame that does not decode is an error and changes nothing.
    pub fn push_frame(&mut self, frame: &[u8]) -> Result<Pushed, Error> {
        // Nearly every frame of a reply is a delta. When no one reads events, one is applied
        // straight from the frame's bytes: no event, no copies of its ids, only its text
        // appended (dialect::fast reads it exactly as the general path would).
        if self.queue.is_none() && frame.len() <= self.limits.max_frame_bytes {
            if let Some(delta) = fast::read(self.dialect, frame) {
                return Ok(self.push_delta(delta));
            }
        }
        let events = self.dialect.decode_server(frame, self.limits)?;
        Ok(self.push_group(events))
    }

    /// Pushes one canonical event (for hosts that decode themselves, or hold the event log).
    pub fn push_event(&mut self, event: Sequenced) -> Pushed {
        self.push_group(alloc::vec![event])
    }

    /// Applies the events of one frame as a unit: they share its run and event id.
    fn push_group(&mut self, events: Vec<Sequenced>) -> Pushed {
        let Some(first) = events.first() else {
            return Pushed::default();
        };
        let (Some(run_id), Some(id)) = (first.envelope.run_id.as_deref(), first.envelope.event_id)
        else {
            return self.apply_all(events, Vec::new());
        };
        // A hole the server declared lost is passed over, however much of it this client saw.
        let from = match first.event {
            Event::EventsLost { from } => from.min(id),
            _ => id,
        };
        match self.admit(run_id, from, id) {
            Ok(released) => self.apply_all(events, released),
            Err(not) => self.set_aside(not, || events),
        }
    }

    /// [`Reassembler::push_group`] for a delta read in place (only while no events are queued:
    /// it is applied without becoming one).
    fn push_delta(&mut self, delta: Delta<'_>) -> Pushed {
        let (Some(run_id), Some(id)) = (delta.run_id.as_deref(), delta.event_id) else {
            self.apply_delta(&delta);
            return Pushed {
                applied: 1,
                ..Pushed::default()
            };
        };
        match self.admit(run_id, id, id) {
            Ok(released) => {
                self.apply_delta(&delta);
                let mut pushed = self.apply_all(Vec::new(), released);
                pushed.applied += 1;
                pushed
            }
            Err(not) => self.set_aside(not, || alloc::vec![delta.into_sequenced()]),
        }
    }

    /// Where frame `id` of `run_id` stands in its run's order. When it is the next one — or,
    /// for a declared hole (`from` < `id`), when it reaches past what was applied — the frames
    /// held for the ids right after it are released (returned, in order) with it; frames held
    /// inside a declared hole are dropped with it.
    fn admit(&mut self, run_id: &str, from: u64, id: u64) -> Result<Vec<Sequenced>, NotNext> {
        let order = match self.order.get_mut(run_id) {
            Some(order) => order,
            None => self
                .order
                .get_or_insert_with(run_id.into(), RunOrder::default),
        };
        if id <= order.contiguous || order.held.contains_key(&id) {
            return Err(NotNext::Duplicate);
        }
        if from > order.contiguous + 1 {
            return Err(NotNext::Gap(Gap {
                run_id: run_id.into(),
                after_event_id: order.contiguous,
                received: id,
            }));
        }
        if from < id {
            order.held.retain(|held, _| *held > id);
        }
        order.contiguous = id;
        let mut released = Vec::new();
        let mut next = id;
        while let Some(more) = next.checked_add(1).and_then(|n| order.held.remove(&n)) {
            next += 1;
            order.contiguous = next;
            released.extend(more);
        }
        Ok(released)
    }

    /// What becomes of a frame that is not the next of its run: a duplicate is dropped; one
    /// past a gap is held (its `events`, while there is room) until the gap is filled.
    fn set_aside(&mut self, not: NotNext, events: impl FnOnce() -> Vec<Sequenced>) -> Pushed {
        match not {
            NotNext::Duplicate => Pushed {
                duplicate: true,
                ..Pushed::default()
            },
            NotNext::Gap(gap) => {
                if let Some(order) = self.order.get_mut(&gap.run_id) {
                    if order.held.len() < MAX_HELD_FRAMES {
                        order.held.insert(gap.received, events());
                    }
                }
                Pushed {
                    gap: Some(gap),
                    ..Pushed::default()
                }
            }
        }
    }

    /// Applies `events` then `released`, in order.
    fn apply_all(&mut self, events: Vec<Sequenced>, released: Vec<Sequenced>) -> Pushed {
        let applied = events.len() + released.len();
        events
            .into_iter()
            .chain(released)
            .for_each(|e| self.apply(e));
        Pushed {
            applied,
            ..Pushed::default()
        }
    }

    /// Applies a delta read in place, as [`Reassembler::apply`] applies its event.
    fn apply_delta(&mut self, delta: &Delta<'_>) {
        let mut running = None;
        let run = self.run_or_running(delta.run_id.as_deref(), &mut running);
        match &delta.body {
            Body::Text {
                content, reasoning, ..
            } => self.append_text(run, content, *reasoning),
            Body::Arguments {
                call_id,
                name,
                delta,
            } => self.append_arguments(run, call_id.as_deref(), name.as_deref(), delta),
        }
    }

    fn append_text(&mut self, run: Option<&str>, content: &str, reasoning: bool) {
        let i = self.open_message(run);
        let message = &mut self.transcript.messages[i];
        if reasoning {
            message.reasoning.push_str(content);
        } else {
            message.text.push_str(content);
        }
    }

    fn append_arguments(
        &mut self,
        run: Option<&str>,
        call_id: Option<&str>,
        name: Option<&str>,
        delta: &str,
    ) {
        let i = self.tool_call(run, call_id, name);
        self.transcript.tool_calls[i].arguments_text.push_str(delta);
    }

    /// Applies one event to the transcript.
    fn apply(&mut self, ev: Sequenced) {
        let mut running = None;
        let run_id = self.run_or_running(ev.envelope.run_id.as_deref(), &mut running);
        match &ev.event {
            Event::RunStart { message, agent, .. } => {
                self.ensure_run(run_id, agent.clone());
                if let Some(m) = message {
                    self.user_message(run_id, m);
                }
            }
            Event::UserMessage { content } => {
                self.ensure_run(run_id, None);
                self.user_message(run_id, content);
            }
            Event::MessageChunk { content, .. } => self.append_text(run_id, content, false),
            Event::ReasoningChunk { content, .. } => self.append_text(run_id, content, true),
            Event::ToolCallChunk {
                call_id,
                name,
                arguments_delta,
            } => {
                self.append_arguments(run_id, call_id.as_deref(), name.as_deref(), arguments_delta)
            }
            Event::ToolCall {
                call_id,
                name,
                arguments,
            } => {
                let i = self.tool_call(run_id, call_id.as_deref(), Some(name));
                let call = &mut self.transcript.tool_calls[i];
                call.set_arguments(arguments);
                if call.status == ToolStatus::Streaming {
                    call.status = ToolStatus::Pending;
                }
            }
            Event::ToolApproval {
                call_id,
                name,
                arguments,
            } => {
                self.close_message(run_id);
                let i = self.tool_call(run_id, call_id.as_deref(), Some(name));
                let call = &mut self.transcript.tool_calls[i];
                call.set_arguments(arguments);
                call.status = ToolStatus::AwaitingApproval;
            }
            Event::ApprovalResolved {
                call_id,
                name,
                review,
                message,
            } => {
                let i = self.tool_call(run_id, call_id.as_deref(), name.as_deref());
                let call = &mut self.transcript.tool_calls[i];
                call.review = Some(*review);
                call.review_message.clone_from(message);
                call.status = match review {
                    Review::Yes | Review::Always => ToolStatus::Approved,
                    Review::NoContinue | Review::NoExit => ToolStatus::Denied,
                    Review::Explain => ToolStatus::AwaitingApproval,
                };
            }
            Event::ToolStart { call_id, name } => {
                self.close_message(run_id);
                let i = self.tool_call(run_id, call_id.as_deref(), Some(name));
                let call = &mut self.transcript.tool_calls[i];
                call.finish_arguments();
                call.status = ToolStatus::Running;
            }
            Event::ToolOutput {
                call_id,
                name,
                content,
            } => {
                self.close_message(run_id);
                let i = self.tool_call(run_id, call_id.as_deref(), Some(name));
                self.transcript.tool_calls[i].output.push_str(content);
            }
            Event::ToolEnd {
                call_id,
                name,
                result,
                is_error,
            } => {
                // Tools run after the response that called them is complete.
                self.close_message(run_id);
                let i = self.tool_call(run_id, call_id.as_deref(), Some(name));
                let call = &mut self.transcript.tool_calls[i];
                call.finish_arguments();
                call.result = Some(result.clone());
                call.is_error = *is_error;
                if call.status != ToolStatus::Denied {
                    call.status = if *is_error {
                        ToolStatus::Error
                    } else {
                        ToolStatus::Done
                    };
                }
            }
            Event::LlmComplete {
                content,
                tool_calls,
                ..
            } => {
                let open = self.open_index(run_id);
                let i = match open {
                    Some(i) => Some(i),
                    None if !content.is_empty() || !tool_calls.is_empty() => {
                        Some(self.open_message(run_id))
                    }
                    None => None,
                };
                if let Some(i) = i {
                    let msg = &mut self.transcript.messages[i];
                    // The complete text is authoritative: it heals a chunk lost by a lossy
                    // transport, and is all a dialect without chunks (agentchat) sends.
                    if !content.is_empty() {
                        msg.text.clone_from(content);
                    }
                    let ids = msg.tool_call_ids.clone();
                    for id in ids {
                        if let Some(call) = self
                            .transcript
                            .tool_calls
                            .iter_mut()
                            .find(|c| c.call_id == id)
                        {
                            call.finish_arguments();
                        }
                    }
                }
                self.close_message(run_id);
            }
            Event::NodeExit { .. } => self.close_message(run_id),
            Event::Usage(u) => {
                let run = self.ensure_run(run_id, None);
                run.usage = Some(*u);
                run.call_usage.push(*u);
                run.total_usage.add(u);
            }
            Event::RunEnd {
                reply,
                usage,
                total_usage,
                paused,
                ..
            } => {
                self.close_message(run_id);
                let run = self.ensure_run(run_id, None);
                // A failed run's dialect may still close the turn (agentloop sends
                // `loading_state: false` after its `error`); the failure stands.
                if run.status != RunStatus::Running {
                    return self.emit(ev);
                }
                run.status = RunStatus::Completed;
                run.reply = Some(reply.clone());
                if usage.is_some() {
                    run.usage = *usage;
                }
                if let Some(t) = total_usage {
                    run.total_usage = *t;
                }
                run.paused = *paused;
            }
            // An error with a request `id` and no run answers a request (a bad frame, an
            // unknown tool): it does not end the run that may be streaming meanwhile.
            Event::Error {
                message, code, id, ..
            } if ev.envelope.run_id.is_some() || (id.is_none() && self.is_running(run_id)) => {
                self.close_message(run_id);
                let run = self.ensure_run(run_id, None);
                run.status = if code.as_deref() == Some("cancelled") {
                    RunStatus::Cancelled
                } else {
                    RunStatus::Failed
                };
                run.error = Some(message.clone());
            }
            _ => {}
        }
        self.emit(ev);
    }

    fn emit(&mut self, ev: Sequenced) {
        if let Some(q) = &mut self.queue {
            q.push_back(ev);
        }
    }

    /// Pushes several frames in order; stops at the first that does not decode.
    pub fn push_frames<'f>(
        &mut self,
        frames: impl IntoIterator<Item = &'f [u8]>,
    ) -> Result<Pushed, Error> {
        let mut total = Pushed::default();
        for frame in frames {
            let p = self.push_frame(frame)?;
            total.applied += p.applied;
            total.duplicate |= p.duplicate;
            if p.gap.is_some() {
                total.gap = p.gap;
            }
        }
        Ok(total)
    }

    /// The run a frame belongs to: its own run id, or for a frame without one (an original
    /// server's, which streams one run at a time) the run still running, kept in `running`;
    /// `None` when no run is running (a new anonymous run then starts).
    fn run_or_running<'a>(
        &self,
        run_id: Option<&'a str>,
        running: &'a mut Option<String>,
    ) -> Option<&'a str> {
        if run_id.is_some() {
            return run_id;
        }
        *running = match self.transcript.runs.last() {
            Some(r) if r.status == RunStatus::Running => r.run_id.clone(),
            _ => None,
        };
        running.as_deref()
    }

    fn is_running(&self, run_id: Option<&str>) -> bool {
        self.transcript
            .runs
            .iter()
            .rev()
            .any(|r| r.run_id.as_deref() == run_id && r.status == RunStatus::Running)
    }

    fn ensure_run(&mut self, run_id: Option<&str>, agent: Option<Agent>) -> &mut Run {
        let pos = self.transcript.runs.iter().rposition(|r| {
            r.run_id.as_deref() == run_id && (run_id.is_some() || r.status == RunStatus::Running)
        });
        let i = match pos {
            Some(i) => i,
            None => {
                self.transcript.runs.push(Run {
                    run_id: run_id.map(String::from),
                    agent: None,
                    status: RunStatus::Running,
                    reply: None,
                    usage: None,
                    call_usage: Vec::new(),
                    total_usage: Usage::default(),
                    error: None,
                    paused: false,
                });
                self.transcript.runs.len() - 1
            }
        };
        let run = &mut self.transcript.runs[i];
        if agent.is_some() {
            run.agent = agent;
        }
        run
    }

    fn user_message(&mut self, run_id: Option<&str>, text: &str) {
        // A dialect may send the user message both with the run start and on its own.
        let seen = self
            .transcript
            .messages
            .iter()
            .rev()
            .take_while(|m| m.run_id.as_deref() == run_id)
            .any(|m| m.role == Role::User && m.text == text);
        if run_id.is_some() && seen {
            return;
        }
        self.close_message(run_id);
        self.transcript.messages.push(Message {
            role: Role::User,
            text: text.into(),
            reasoning: String::new(),
            run_id: run_id.map(String::from),
            tool_call_ids: Vec::new(),
            complete: true,
        });
    }

    /// The index of the run's open assistant message, if one is open.
    fn open_index(&self, run_id: Option<&str>) -> Option<usize> {
        self.open
            .iter()
            .find(|(r, _)| r.as_deref() == run_id)
            .map(|&(_, i)| i)
    }

    fn open_message(&mut self, run_id: Option<&str>) -> usize {
        if let Some(i) = self.open_index(run_id) {
            return i;
        }
        self.ensure_run(run_id, None);
        self.transcript.messages.push(Message {
            role: Role::Assistant,
            text: String::new(),
            reasoning: String::new(),
            run_id: run_id.map(String::from),
            tool_call_ids: Vec::new(),
            complete: false,
        });
        let i = self.transcript.messages.len() - 1;
        self.open.push((run_id.map(String::from), i));
        i
    }

    fn close_message(&mut self, run_id: Option<&str>) {
        if let Some(at) = self.open.iter().position(|(r, _)| r.as_deref() == run_id) {
            let (_, i) = self.open.swap_remove(at);
            self.transcript.messages[i].complete = true;
        }
    }

    /// Finds the call an event is about, or starts it. Without a call id, the latest call of
    /// that name in the run that has not finished is meant.
    fn tool_call(
        &mut self,
        run_id: Option<&str>,
        call_id: Option<&str>,
        name: Option<&str>,
    ) -> usize {
        let calls = &self.transcript.tool_calls;
        let found = match call_id {
            Some(id) => calls.iter().rposition(|c| c.call_id == id),
            None => calls.iter().rposition(|c| {
                c.run_id.as_deref() == run_id
                    && name.is_none_or(|n| c.name == n)
                    && !matches!(c.status, ToolStatus::Done | ToolStatus::Error)
            }),
        };
        if let Some(i) = found {
            if let (Some(n), true) = (name, self.transcript.tool_calls[i].name.is_empty()) {
                self.transcript.tool_calls[i].name = n.into();
            }
            return i;
        }
        let call_id = match call_id {
            Some(id) => String::from(id),
            None => alloc::format!("call-{}", self.transcript.tool_calls.len()),
        };
        let m = self.open_message(run_id);
        self.transcript.messages[m]
            .tool_call_ids
            .push(call_id.clone());
        self.transcript.tool_calls.push(ToolCall {
            call_id,
            name: name.unwrap_or_default().into(),
            arguments_text: String::new(),
            arguments: None,
            status: ToolStatus::Streaming,
            review: None,
            review_message: None,
            output: String::new(),
            result: None,
            is_error: false,
            run_id: run_id.map(String::from),
        });
        self.transcript.tool_calls.len() - 1
    }
}

impl ToolCall {
    /// Takes complete arguments from a `tool_call`/`tool_approval` event.
    fn set_arguments(&mut self, arguments: &Value) {
        if arguments.is_null() {
            return self.finish_arguments();
        }
        if self.arguments_text.is_empty() {
            self.arguments_text = serde_json::to_string(arguments).unwrap_or_default();
        }
        self.arguments = Some(arguments.clone());
    }

    /// The streamed arguments are complete: parse them once.
    fn finish_arguments(&mut self) {
        if self.arguments.is_none() {
            let text = self.arguments_text.trim();
            self.arguments = if text.is_empty() {
                Some(Value::Object(serde_json::Map::new()))
            } else {
                serde_json::from_str(text).ok()
            };
        }
        if self.status == ToolStatus::Streaming {
            self.status = ToolStatus::Pending;
        }
    }
}
