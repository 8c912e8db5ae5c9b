//! Publishing a run's events: logged once, then encoded for each kind of socket (dialect and
//! opt-in) and sent to every socket that follows the run.

use weft_protocol::{Dialect, Encoder, Sequenced};

use super::{decode_logged, salt, Session};
use crate::store::Store;

/// One run's frames for one kind of socket, as they go out (see [`Session::encode_live`]).
#[derive(Debug)]
pub(super) struct LiveEncoder {
    run_id: String,
    dialect: Dialect,
    weft: bool,
    last: u64,
    encoder: Encoder,
}

impl Session {
    /// Logs a batch of events, then sends them to every socket of the session in its own
    /// dialect. Each dialect's frames are encoded once, by one encoder per (run, dialect), so
    /// every socket of a dialect sees the same numbering.
    ///
    /// One batch is what one input produced (for a model stream: one read of its body), so the
    /// log takes one statement and the sockets are listed once per read, not per event.
    ///
    /// Returns the log's error when the batch could not be written. Nothing of it is sent
    /// then — a frame a resume could not replay would break the promise that every frame
    /// comes once — except the events that end a run, which its clients must hear.
    pub(super) fn publish(&self, events: &[Sequenced]) -> Result<(), String> {
        let logged: Vec<(&str, u64, String)> = events
            .iter()
            .filter_map(|ev| {
                let run_id = ev.envelope.run_id.as_deref()?;
                let json = serde_json::to_string(ev).ok()?;
                Some((run_id, ev.envelope.event_id.unwrap_or(0), json))
            })
            .collect();
        if logged.is_empty() {
            return Ok(());
        }
        let store = self.store();
        let (result, terminal);
        let events = match store.append_events(&logged) {
            Ok(()) => {
                result = Ok(());
                events
            }
            Err(e) => {
                worker::console_error!("event log write failed ({} events): {e}", logged.len());
                result = Err(e.to_string());
                terminal = events
                    .iter()
                    .filter(|ev| ev.event.is_terminal())
                    .cloned()
                    .collect::<Vec<_>>();
                &terminal[..]
            }
        };
        let sockets = self.sockets();
        // One encoder per (dialect, opt-in): weft clients and original clients of one dialect
        // see different frames, each densely numbered.
        let mut kinds: Vec<(Dialect, bool)> =
            sockets.iter().map(|(_, i)| (i.dialect(), i.weft)).collect();
        kinds.sort();
        kinds.dedup();
        for ev in events {
            let Some(run_id) = ev.envelope.run_id.as_deref() else {
                continue;
            };
            for &(dialect, weft) in &kinds {
                let frames = self.encode_live(&store, run_id, (dialect, weft), ev);
                for (ws, info) in &sockets {
                    if (info.dialect(), info.weft) != (dialect, weft)
                        || info.not_following.iter().any(|r| r == run_id)
                    {
                        continue;
                    }
                    for frame in &frames {
                        if let Err(e) = ws.send_with_str(frame) {
                            // A socket that is closing; it resumes from the log if it returns.
                            worker::console_warn!("frame of {run_id} not sent: {e}");
                            break;
                        }
                    }
                }
            }
        }
        result
    }

    /// Encodes the run's next event for one dialect, rebuilding the encoder from the log when
    /// it did not see the previous event (after a wake-up, or a dialect's first socket).
    ///
    /// The encoders are a list of the runs streaming now (a session has one run at a time,
    /// times the dialects of its sockets), looked up without building a key per event; a run's
    /// encoders are dropped with its last event, so a long session does not keep one per run
    /// it ever had.
    fn encode_live(
        &self,
        store: &Store,
        run_id: &str,
        (dialect, weft): (Dialect, bool),
        ev: &Sequenced,
    ) -> Vec<String> {
        let event_id = ev.envelope.event_id.unwrap_or(0);
        let mut encoders = self.encoders.borrow_mut();
        let found = encoders
            .iter()
            .position(|e| e.dialect == dialect && e.weft == weft && e.run_id == run_id);
        let at = match found {
            Some(i) if encoders[i].last + 1 == event_id => i,
            _ => {
                let mut encoder = Encoder::for_socket(dialect, salt(), weft);
                for logged in store.events(run_id).unwrap_or_default() {
                    if let Some(prev) = decode_logged(run_id, &logged) {
                        if prev.envelope.event_id >= Some(event_id) {
                            break;
                        }
                        // Only the encoder's state matters here: these frames went out before.
                        encoder.encode(&prev);
                    }
                }
                let live = LiveEncoder {
                    run_id: run_id.into(),
                    dialect,
                    weft,
                    last: event_id.saturating_sub(1),
                    encoder,
                };
                match found {
                    Some(i) => {
                        encoders[i] = live;
                        i
                    }
                    None => {
                        encoders.push(live);
                        encoders.len() - 1
                    }
                }
            }
        };
        let live = &mut encoders[at];
        live.last = event_id;
        let frames = live.encoder.encode(ev);
        if ev.event.is_terminal() {
            encoders.swap_remove(at);
        }
        frames
    }
}
