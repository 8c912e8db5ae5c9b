//! The order events leave a run in: one model response at a time (see the module docs of
//! `engine`, "Lanes").
//!
//! The [`Outbox`] stamps events and queues them with the effects for [`Run::poll`]. Whichever
//! model call produces an event first while no response streams becomes *live*; its events go
//! out at once, every other event waits in `held`, tagged with the call whose input produced it
//! (`ctx`), and goes out in order once the live response ends. Held events and the live call
//! are part of the checkpoint, so a restart knows what its clients saw.
//!
//! [`Run::poll`]: super::Run::poll

use std::collections::VecDeque;

use serde::ser::{Error as _, SerializeStruct};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{json, Value};
use weft_protocol::json::Object;
use weft_protocol::{Event, Sequencer};

use super::{Effect, LlmCall, Output, Phase, Run};
use crate::read::{Fields, FromValue, Read};

/// The stamping, holding and queueing of a run's events. `seq`, `live` and `held` go into the
/// run's checkpoint (at its top level, as they always did: `checkpoint.rs`).
#[derive(Debug, Clone)]
pub(super) struct Outbox {
    pub(super) seq: Sequencer,
    /// The call whose response is streaming out.
    live: Option<u64>,
    /// Events waiting for the live response to end.
    held: VecDeque<Held>,
    /// The model call whose input is being taken (tags the events it causes).
    pub(super) ctx: Option<u64>,
    out: VecDeque<Output>,
}

/// An event waiting for the live response to end, tagged with the model call whose input
/// produced it (`None`: a tool result, an approval, a restart). `event: None` marks the end of
/// that call's response.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct Held {
    call: Option<u64>,
    #[serde(default)]
    event: Option<Event>,
}

impl Outbox {
    pub(super) fn new(seq: Sequencer) -> Self {
        Outbox {
            seq,
            live: None,
            held: VecDeque::new(),
            ctx: None,
            out: VecDeque::new(),
        }
    }

    /// An outbox as a checkpoint left it: nothing queued, no input being taken.
    pub(super) fn restored(seq: Sequencer, live: Option<u64>, held: VecDeque<Held>) -> Self {
        Outbox {
            live,
            held,
            ..Outbox::new(seq)
        }
    }

    /// What a checkpoint keeps besides `seq`.
    pub(super) fn checkpointed(&self) -> (Option<u64>, &VecDeque<Held>) {
        (self.live, &self.held)
    }

    pub(super) fn pop(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    /// Effects are never held: only the display of events waits, never the work.
    pub(super) fn effect(&mut self, effect: Effect) {
        self.out.push_back(Output::Effect(effect));
    }

    pub(super) fn live(&self) -> Option<u64> {
        self.live
    }

    /// Whether events wait for a response to end.
    pub(super) fn holds_any(&self) -> bool {
        !self.held.is_empty()
    }

    /// Sends an event now if it does not cut into another call's response, else holds it.
    /// `llm`: the model calls in flight.
    pub(super) fn put(&mut self, event: Event, llm: &[LlmCall]) {
        let now = match self.live {
            None => self.held.is_empty(),
            Some(live) => self.ctx == Some(live),
        };
        if now {
            if self.live.is_none() && self.ctx.is_some() {
                self.live = self.ctx;
                self.went_live(llm);
            }
            let stamped = self.seq.stamp(event);
            self.out.push_back(Output::Event(stamped));
        } else {
            self.held.push_back(Held {
                call: self.ctx,
                event: Some(event),
            });
            self.flush(llm);
        }
    }

    /// Sends held events in order, as far as the live response allows.
    fn flush(&mut self, llm: &[LlmCall]) {
        loop {
            let live = self.live;
            let Some(pos) = self
                .held
                .iter()
                .position(|h| live.is_none() || h.call == live)
            else {
                return;
            };
            let Some(h) = self.held.remove(pos) else {
                return;
            };
            match h.event {
                None => {
                    if self.live == h.call {
                        self.live = None;
                    }
                }
                Some(event) => {
                    if self.live.is_none() && h.call.is_some() {
                        self.live = h.call;
                        self.went_live(llm);
                    }
                    let stamped = self.seq.stamp(event);
                    self.out.push_back(Output::Event(stamped));
                }
            }
        }
    }

    /// A sub-task's response started to stream out: checkpoint, so that a restart knows whose
    /// span to close (the run's own responses open their spans before their checkpoint).
    fn went_live(&mut self, llm: &[LlmCall]) {
        let node = self
            .live
            .is_some_and(|l| llm.iter().any(|c| c.id == l && c.lane.is_some()));
        if node {
            self.effect(Effect::Checkpoint);
        }
    }

    /// After an input of model call `call`: when the call is over (no longer in `llm`), its
    /// response no longer holds the stream. Returns whether that released events that were
    /// waiting (the run then checkpoints: held events are part of its checkpoint).
    pub(super) fn settle(&mut self, call: u64, llm: &[LlmCall]) -> bool {
        if llm.iter().any(|c| c.id == call) {
            return false;
        }
        let waiting = !self.held.is_empty();
        if self.live == Some(call) {
            self.live = None;
        } else if self
            .held
            .iter()
            .rev()
            .find(|h| h.call == Some(call))
            .is_some_and(|h| h.event.is_some())
        {
            // (Unless its end is marked already: `response_over` may have settled it.)
            self.held.push_back(Held {
                call: Some(call),
                event: None,
            });
        } else {
            return false;
        }
        self.flush(llm);
        waiting
    }

    /// The response of the call being handled is closed and the call is over: settles it now
    /// (see [`Run::response_over`]). Returns what [`Outbox::settle`] does.
    pub(super) fn response_over(&mut self, llm: &[LlmCall]) -> bool {
        let Some(call) = self.ctx else {
            return false;
        };
        if llm.iter().any(|c| c.id == call) {
            return false;
        }
        self.ctx = None;
        self.settle(call, llm)
    }

    /// The calls `cut` end without their responses: what they held is dropped (it was never
    /// sent), nothing is live any more, and every other held event goes out.
    pub(super) fn cut(&mut self, cut: &[LlmCall], llm: &[LlmCall]) {
        self.held
            .retain(|h| !h.call.is_some_and(|c| cut.iter().any(|l| l.id == c)));
        self.live = None;
        self.flush(llm);
    }
}

impl Run {
    pub(super) fn emit(&mut self, event: Event) {
        let exited = match &event {
            Event::NodeExit { id, .. } => Some(id.clone()),
            _ => None,
        };
        self.outbox.put(event, &self.llm);
        // specs/README (loom): with `verbose`, `values` then `updates` follow each `node_exit`.
        if let (true, Some(node)) = (self.verbose, exited) {
            let state = self.state_snapshot();
            self.outbox.put(
                Event::Values {
                    state: state.clone().into(),
                },
                &self.llm,
            );
            self.outbox.put(
                Event::Updates {
                    id: node,
                    state: state.into(),
                },
                &self.llm,
            );
        }
    }

    pub(super) fn effect(&mut self, effect: Effect) {
        self.outbox.effect(effect);
    }

    /// After an input of model call `call`: when the call is over, its response no longer
    /// holds the stream.
    pub(super) fn settle(&mut self, call: u64) {
        if self.outbox.settle(call, &self.llm) && self.phase != Phase::Done {
            self.effect(Effect::Checkpoint);
        }
    }

    /// The response of the call being handled is closed (its `llm_complete` and span are out)
    /// and the call is over, so what the handler emits next — a node's completion, the next
    /// node's start — belongs to no response. Settled now, it queues behind what other calls
    /// held while this one streamed, instead of going out with this call's own events ahead of
    /// them: a node's start could otherwise overtake the completion of a node it depends on.
    pub(super) fn response_over(&mut self) {
        if self.outbox.response_over(&self.llm) && self.phase != Phase::Done {
            self.effect(Effect::Checkpoint);
        }
    }

    /// The run's state as the `values`/`updates` snapshots show it.
    pub(super) fn state_snapshot(&self) -> Value {
        let mut state = json!({
            "messages": self.session.history,
            "iteration": self.iteration,
            "usage": self.total,
        });
        self.steps().snapshot(self, &mut state);
        state
    }
}

/// As a derived `Serialize` writes it, the event by the protocol's own writer (which its
/// tests hold to the event's `Serialize`): serde's serializer of events into a checkpoint's
/// `Value` would be code the Worker carries for this alone.
impl Serialize for Held {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let event = match &self.event {
            Some(event) => serde_json::from_str(&event.write_json()).map_err(S::Error::custom)?,
            None => Value::Null,
        };
        let mut st = s.serialize_struct("Held", 2)?;
        st.serialize_field("call", &self.call)?;
        st.serialize_field("event", &event)?;
        st.end()
    }
}

impl FromValue for Held {
    fn from_value(v: &Value) -> Read<Self> {
        let f = Fields::of("held", v)?;
        let event = match f.get("event") {
            None | Some(Value::Null) => None,
            Some(Value::Object(map)) => Some(
                Event::from_json(&Object::from_serde(map))
                    .map_err(|e| f.err("event", &e.to_string()))?,
            ),
            Some(_) => return Err(f.err("event", "expected an object")),
        };
        Ok(Held {
            call: f.req("call")?,
            event,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outbox() -> Outbox {
        Outbox::new(Sequencer::new(Some("s".into()), "r"))
    }

    fn chunk(text: &str) -> Event {
        Event::MessageChunk {
            content: text.into(),
            id: "n".into(),
        }
    }

    fn run_call(id: u64) -> LlmCall {
        LlmCall { id, lane: None }
    }

    fn node_call(id: u64, node: &str) -> LlmCall {
        LlmCall {
            id,
            lane: Some(node.into()),
        }
    }

    /// `call` produces `event`, as `Run::handle` tags it.
    fn put_as(o: &mut Outbox, call: Option<u64>, event: Event, llm: &[LlmCall]) {
        o.ctx = call;
        o.put(event, llm);
        o.ctx = None;
    }

    /// What went out since the last drain: event texts (with their ids), and `checkpoint` for
    /// each checkpoint effect.
    fn drain(o: &mut Outbox) -> Vec<String> {
        std::iter::from_fn(|| o.pop())
            .map(|out| match out {
                Output::Event(s) => match s.event {
                    Event::MessageChunk { content, .. } => {
                        format!("{}:{content}", s.envelope.event_id.unwrap_or_default())
                    }
                    other => format!("{other:?}"),
                },
                Output::Effect(Effect::Checkpoint) => "checkpoint".into(),
                Output::Effect(other) => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_second_response_waits_for_the_live_one_to_end() {
        let mut o = outbox();
        let llm = [run_call(1), run_call(2)];
        put_as(&mut o, Some(1), chunk("a1"), &llm);
        put_as(&mut o, Some(2), chunk("b1"), &llm);
        put_as(&mut o, Some(1), chunk("a2"), &llm);
        put_as(&mut o, Some(2), chunk("b2"), &llm);
        assert_eq!(drain(&mut o), ["1:a1", "2:a2"]);
        assert_eq!(o.live(), Some(1));
        // Call 1 ends: what call 2 held goes out, in order, and call 2 is live now.
        let after = [run_call(2)];
        assert!(o.settle(1, &after), "held events were released");
        assert_eq!(drain(&mut o), ["3:b1", "4:b2"]);
        assert_eq!(o.live(), Some(2));
        // Call 2 streams on directly.
        put_as(&mut o, Some(2), chunk("b3"), &after);
        assert_eq!(drain(&mut o), ["5:b3"]);
    }

    #[test]
    fn a_call_still_in_flight_does_not_settle() {
        let mut o = outbox();
        let llm = [run_call(1)];
        put_as(&mut o, Some(1), chunk("a"), &llm);
        assert!(!o.settle(1, &llm));
        assert_eq!(o.live(), Some(1));
        // Nothing was waiting when it ended: no reason to checkpoint.
        assert!(!o.settle(1, &[]));
        assert_eq!(o.live(), None);
    }

    #[test]
    fn an_event_of_no_call_follows_the_live_response() {
        let mut o = outbox();
        let llm = [run_call(1)];
        put_as(&mut o, Some(1), chunk("a1"), &llm);
        // A tool result of another lane arrives mid-response.
        put_as(&mut o, None, chunk("tool"), &llm);
        put_as(&mut o, Some(1), chunk("a2"), &llm);
        assert_eq!(drain(&mut o), ["1:a1", "2:a2"]);
        assert!(o.holds_any());
        assert!(o.settle(1, &[]));
        assert_eq!(drain(&mut o), ["3:tool"]);
        assert!(!o.holds_any());
        // With nothing live and nothing held, an event of no call goes straight out.
        put_as(&mut o, None, chunk("now"), &[]);
        assert_eq!(drain(&mut o), ["4:now"]);
    }

    #[test]
    fn a_sub_task_response_going_live_asks_for_a_checkpoint_first() {
        let mut o = outbox();
        let llm = [node_call(1, "a"), run_call(2)];
        put_as(&mut o, Some(1), chunk("node"), &llm);
        assert_eq!(drain(&mut o), ["checkpoint", "1:node"]);
        // The run's own response going live (once the node's ends) does not.
        put_as(&mut o, Some(2), chunk("own"), &llm);
        assert!(o.settle(1, &[run_call(2)]));
        assert_eq!(drain(&mut o), ["2:own"]);
    }

    #[test]
    fn what_follows_a_closed_response_queues_behind_what_others_held() {
        let mut o = outbox();
        let llm = [node_call(1, "a"), node_call(2, "b")];
        put_as(&mut o, Some(1), chunk("a"), &llm);
        put_as(&mut o, Some(2), chunk("b-done"), &llm);
        drain(&mut o);
        // Call 1's response closes within its own input; its call is over.
        let after = [node_call(2, "b")];
        o.ctx = Some(1);
        o.put(chunk("a-complete"), &after);
        assert!(o.response_over(&after));
        // What call 1's handler emits next (the next node's start) is no longer its response's.
        o.put(chunk("c-start"), &after);
        o.ctx = None;
        assert_eq!(
            drain(&mut o),
            ["2:a-complete", "checkpoint", "3:b-done"],
            "call 2 went live at once; the next start waits behind it"
        );
        // Settling call 1 again (as `Run::handle` does) changes nothing.
        assert!(!o.settle(1, &after));
        assert_eq!(drain(&mut o), Vec::<String>::new());
        assert!(o.settle(2, &[]));
        assert_eq!(drain(&mut o), ["4:c-start"]);
    }

    #[test]
    fn an_ended_call_with_held_events_is_marked_and_its_successor_goes_live_after() {
        let mut o = outbox();
        let llm = [run_call(1), run_call(2), run_call(3)];
        put_as(&mut o, Some(1), chunk("a"), &llm);
        put_as(&mut o, Some(2), chunk("b"), &llm);
        put_as(&mut o, Some(3), chunk("c"), &llm);
        // Call 2 ends while call 1 is still live: its end is marked behind its events.
        assert!(o.settle(2, &[run_call(1), run_call(3)]));
        drain(&mut o);
        // Call 1 ends: call 2's events go out, then its end frees the stream for call 3.
        assert!(o.settle(1, &[run_call(3)]));
        assert_eq!(drain(&mut o), ["2:b", "3:c"]);
        assert_eq!(o.live(), Some(3));
    }

    #[test]
    fn cut_calls_drop_what_they_held_and_release_the_rest() {
        let mut o = outbox();
        let llm = [run_call(1), run_call(2)];
        put_as(&mut o, Some(1), chunk("a"), &llm);
        put_as(&mut o, Some(2), chunk("never sent"), &llm);
        put_as(&mut o, None, chunk("tool"), &llm);
        drain(&mut o);
        o.cut(&llm, &[]);
        assert_eq!(drain(&mut o), ["2:tool"]);
        assert_eq!(o.live(), None);
        assert!(!o.holds_any());
    }

    #[test]
    fn held_events_survive_a_checkpoint() {
        let mut o = outbox();
        let llm = [run_call(1), run_call(2)];
        put_as(&mut o, Some(1), chunk("a"), &llm);
        put_as(&mut o, Some(2), chunk("b"), &llm);
        assert!(o.settle(2, &[run_call(1)]));
        drain(&mut o);
        // What the run's checkpoint writes of it, through JSON and back.
        let (live, held) = o.checkpointed();
        let json = serde_json::to_string(&(&o.seq, live, held)).expect("an outbox serializes");
        let (seq, live, held): (Sequencer, Option<u64>, VecDeque<Held>) =
            serde_json::from_str(&json).expect("and reads back");
        // Each written as its derived `Serialize` wrote it, the event by the protocol's writer.
        assert!(held.iter().any(|h| h.event.is_some()) && held.iter().any(|h| h.event.is_none()));
        for h in &held {
            let event = h
                .event
                .as_ref()
                .map(|e| serde_json::to_value(e).expect("an event"));
            assert_eq!(
                serde_json::to_value(h).expect("held"),
                json!({"call": h.call, "event": event})
            );
        }
        let mut back = Outbox::restored(seq, live, held);
        assert_eq!(back.live(), Some(1));
        assert_eq!(back.held, o.held);
        assert!(back.settle(1, &[]));
        assert_eq!(drain(&mut back), ["2:b"]);
        assert_eq!(back.live(), None, "call 2's end mark came back too");
    }
}
