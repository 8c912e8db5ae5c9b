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

use crate::dialect::fast::{self, Delta};
use crate::dialect::Dialect;
use crate::event::{Event, Sequenced};
use crate::frame::Limits;
use crate::sorted::SortedMap;
use crate::Error;

/// Frames held back per run while waiting for a gap to be filled; beyond this they are dropped
/// (the resume that fills the gap sends them again).
const MAX_HELD_FRAMES: usize = 4096;

mod apply;
mod transcript;

pub use transcript::{Message, Run, RunStatus, ToolCall, ToolStatus, Transcript};

/// Frames of a run that were skipped: resume after `after_event_id` to get them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
pub struct Gap {
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
    /// An event that was not applied because it cannot be: a state patch that does not apply
    /// to the run's state (the state is as it was). [`Reassembler::push_frame`] returns it as
    /// its error.
    pub rejected: Option<Error>,
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
    /// Index in `tool_calls` of each run's first call: a call id is looked up among its own
    /// run's calls, not the whole conversation's.
    first_call: SortedMap<String, usize>,
    queue: Option<VecDeque<Sequenced>>,
    /// What [`Pushed::rejected`] reports, set by the event that could not be applied.
    rejected: Option<Error>,
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
            first_call: SortedMap::new(),
            queue: None,
            rejected: None,
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

    /// Pushes one server frame. A frame that does not decode is an error and changes nothing;
    /// so is a state patch that does not apply to the run's state, which stays as it was (the
    /// frame's other events, if it has any, are applied).
    pub fn push_frame(&mut self, frame: &[u8]) -> Result<Pushed, Error> {
        let mut pushed = self.push_frame_unchecked(frame)?;
        match pushed.rejected.take() {
            Some(e) => Err(e),
            None => Ok(pushed),
        }
    }

    fn push_frame_unchecked(&mut self, frame: &[u8]) -> Result<Pushed, Error> {
        // Nearly every frame of a reply is a delta. When no one reads events, one is applied
        // straight from the frame's bytes: no event, no copies of its ids, only its text
        // appended (dialect::fast reads it exactly as the general path would).
        if self.queue.is_none() && frame.len() <= self.limits.max_frame_bytes {
            if let Some(delta) = fast::read(self.dialect, frame) {
                return Ok(self.push_delta(delta));
            }
            // Not a delta: the general path, without trying the fast one a second time.
            let events = self.dialect.decode_server_general(frame, self.limits)?;
            return Ok(self.push_group(events));
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
            self.apply_delta(delta);
            return Pushed {
                applied: 1,
                ..Pushed::default()
            };
        };
        match self.admit(run_id, id, id) {
            Ok(released) => {
                self.apply_delta(delta);
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
        let mut applied = 0;
        let mut rejected = None;
        for e in events.into_iter().chain(released) {
            self.apply(e);
            match self.rejected.take() {
                Some(e) => rejected = rejected.or(Some(e)),
                None => applied += 1,
            }
        }
        Pushed {
            applied,
            rejected,
            ..Pushed::default()
        }
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
}
