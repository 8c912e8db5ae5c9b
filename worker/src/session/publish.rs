//! Publishing a run's events: logged, then encoded for each kind of socket (dialect and
//! opt-in) and sent to every socket that follows the run (who gets what: fanout.rs).
//!
//! # Streamed text is logged in batches, after it is sent
//!
//! Durable Objects bill every row written, and the output gate holds a socket message until the
//! writes before it are durable. Logging each streamed piece before sending it cost a row and a
//! commit per token, and every token waited for its commit. So deltas ([`Event::is_delta`]) go
//! out as they come and wait in [`Unlogged`]; they are written as one row when
//! [`MAX_UNLOGGED`] have gathered, when the oldest has waited [`LOG_WITHIN_MS`], and before any
//! other event, which is logged with them before it is sent. Only the frame after a write waits
//! for a commit.
//!
//! What a crash can cost, then: up to [`MAX_UNLOGGED`] − 1 deltas that clients were sent and
//! the log never got. A restarted run therefore numbers on past them: it logs
//! [`Event::EventsLost`] for the [`MAX_UNLOGGED`] ids after the log's last event
//! (commands.rs, `load_active_run`), so no client that saw some of them gets a different event
//! under the same id, and none waits for frames that are gone; the cut response is then closed
//! as `interrupted` and asked for again (the engine's `Run::resume`). Nothing sent is
//! contradicted; nothing lost is silently mended.

use weft_protocol::{Event, Sequenced};

use super::Session;
use crate::store::log_row::{Delta, Logged};
use crate::store::Store;

/// Deltas that may be sent before they are logged, at most (minus one): the log is written
/// when this many have gathered. A restart passes over this many ids.
pub(super) const MAX_UNLOGGED: u64 = 16;

/// The longest a sent delta waits to be logged (ms), when the stream pauses. What a crash can
/// cost is bounded by [`MAX_UNLOGGED`], not by this: it only keeps the tail of a stream that
/// stalled from waiting in memory for long. At a model's usual pace (20 ms a token) the count
/// fills first (a shorter bound, 100 ms, wrote a row per 5 tokens).
pub(super) const LOG_WITHIN_MS: f64 = 1000.0;

/// Deltas sent and not yet in the log, in order, and when the first of them was sent.
#[derive(Debug, Default)]
pub(super) struct Unlogged {
    events: Vec<Logged>,
    since: f64,
}

impl Session {
    /// Logs a batch of events as the module docs say (deltas may wait), then sends them to
    /// every socket of the session in its own dialect, as fanout.rs decides.
    ///
    /// Returns the log's error when the batch could not be written. Nothing of it is sent
    /// then — a frame a resume could not replay would break the promise that every frame
    /// comes once — except the events that end a run, which its clients must hear.
    pub(super) fn publish(&self, events: &[Sequenced]) -> Result<(), String> {
        let store = self.store();
        let mut logged: Vec<Logged> = Vec::with_capacity(events.len());
        let mut written = Ok(());
        for ev in events {
            let Some(run_id) = ev.envelope.run_id.clone() else {
                continue;
            };
            match self.log_line(&store, ev) {
                Ok(json) => logged.push(Logged {
                    run_id,
                    event_id: ev.envelope.event_id.unwrap_or(0),
                    json,
                    delta: Delta::of(ev),
                }),
                Err(e) => {
                    worker::console_error!("run {run_id}: event not logged: {e}");
                    written = Err(e);
                    break;
                }
            }
        }
        if logged.is_empty() && written.is_ok() {
            return Ok(());
        }
        if written.is_ok() {
            let write_now = {
                let mut unlogged = self.unlogged.borrow_mut();
                if unlogged.events.is_empty() {
                    unlogged.since = js_sys::Date::now();
                }
                unlogged.events.extend(logged);
                events.iter().any(|ev| !ev.event.is_delta())
                    || unlogged.events.len() as u64 >= MAX_UNLOGGED
            };
            if write_now {
                written = self.write_log(&store);
            }
        }
        let terminal: Vec<Sequenced>;
        let events = match &written {
            Ok(()) => events,
            Err(_) => {
                terminal = events
                    .iter()
                    .filter(|ev| ev.event.is_terminal())
                    .cloned()
                    .collect();
                &terminal[..]
            }
        };
        let sockets = self.sockets();
        let deliveries = self
            .encoders
            .borrow_mut()
            .fan_out(&sockets, events, |run_id| {
                self.logged_events(&store, run_id).inspect_err(|e| {
                    self.log_unreadable(&format!("the event log of run {run_id}"), e);
                })
            });
        for delivery in &deliveries {
            for &n in &delivery.to {
                let ws = &sockets[n].0;
                for frame in &delivery.frames {
                    if let Err(e) = ws.send_with_str(frame) {
                        // A socket that is closing; it resumes from the log if it returns.
                        worker::console_warn!("frame of {} not sent: {e}", delivery.run_id);
                        break;
                    }
                }
            }
        }
        self.stream_events(events);
        written
    }

    /// An event's line in the log: its JSON, with a state snapshot's messages pointing at the
    /// history rows (`Store::event_for_log`).
    fn log_line(&self, store: &Store, ev: &Sequenced) -> Result<String, String> {
        if matches!(
            ev.event,
            Event::Checkpoint { .. } | Event::Values { .. } | Event::Updates { .. }
        ) {
            // Through text rather than `to_value`: these events are rare, and a serializer of
            // events into values of their own would be code the Worker carries for them alone.
            let value = serde_json::from_str(&ev.to_json()).map_err(|e| e.to_string())?;
            let value = store.event_for_log(value).map_err(|e| e.to_string())?;
            Ok(value.to_string())
        } else {
            Ok(ev.to_json())
        }
    }

    /// Writes the deltas still waiting (see the module docs); the stream's timer calls it when
    /// the oldest has waited [`LOG_WITHIN_MS`], and a model call's end does. On an error they
    /// are dropped from memory too: a resume could not replay them either way, and the run
    /// stops with a storage error.
    pub(super) fn write_log(&self, store: &Store) -> Result<(), String> {
        let events = std::mem::take(&mut self.unlogged.borrow_mut().events);
        if events.is_empty() {
            return Ok(());
        }
        store.append_events(&events).map_err(|e| {
            let run = &events[0].run_id;
            worker::console_error!(
                "run {run}: event log write failed ({} events): {e}",
                events.len()
            );
            e.to_string()
        })
    }

    /// How long the oldest delta waiting to be logged has waited (ms), if any waits.
    pub(super) fn log_waited(&self, now: f64) -> Option<f64> {
        let unlogged = self.unlogged.borrow();
        (!unlogged.events.is_empty()).then(|| now - unlogged.since)
    }

    /// A run's events as its clients were sent them: the log, then what waits to be logged.
    pub(super) fn logged_events(&self, store: &Store, run_id: &str) -> worker::Result<Vec<String>> {
        let mut events = store.events(run_id)?;
        events.extend(self.unlogged_events(run_id));
        Ok(events)
    }

    /// What of a run waits to be logged, oldest first.
    fn unlogged_events(&self, run_id: &str) -> Vec<String> {
        self.unlogged
            .borrow()
            .events
            .iter()
            .filter(|l| l.run_id == run_id)
            .map(|l| l.json.clone())
            .collect()
    }
}
