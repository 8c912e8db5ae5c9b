//! Which socket gets which frames of a run: each kind of socket (dialect, and whether it opted
//! in to weft's extensions) has one encoder per run, so every socket of a kind sees the same
//! dense numbering, encoded once; a socket that has not resumed a run it found streaming gets
//! none of its frames; a replay re-encodes the log with the live encoder's salt, so it
//! reproduces the frames a live socket got.
//!
//! Plain data, no runtime: `publish.rs` logs the events and sends what this decides.

use weft_protocol::{Dialect, Encoder, Sequenced};

use super::socket::SocketInfo;

/// A kind of socket: its dialect, and whether it opted in to weft's extensions.
pub(super) type Kind = (Dialect, bool);

/// Salt for the agentloop frame ids of every run. One constant, so that a replay — in another
/// isolate, after a restart, with nothing stored — reproduces the ids the live frames had; the
/// ids of different runs differ because they hash the run id. `Encoder::new` says why no value
/// per session is needed (replies outside runs get a random salt each: `Session::reply`).
pub(super) fn salt() -> u64 {
    0x7765_6674 // "weft"
}

/// An event as the log holds it (its JSON line), back as the run's event.
pub(super) fn decode_logged(run_id: &str, json: &str) -> Option<Sequenced> {
    let mut ev: Sequenced = serde_json::from_str(json).ok()?;
    ev.envelope.run_id = Some(run_id.into());
    Some(ev)
}

/// One run's frames for one kind of socket, as they go out, with the last event id it encoded.
#[derive(Debug)]
struct LiveEncoder {
    run_id: String,
    kind: Kind,
    last: u64,
    encoder: Encoder,
}

/// The encoders of the runs streaming now: a session has one run at a time, times the kinds of
/// its sockets. They are looked up without building a key per event, and a run's are dropped
/// with its last event, so a long session does not keep one per run it ever had.
#[derive(Debug, Default)]
pub(super) struct Encoders {
    live: Vec<LiveEncoder>,
}

/// One event's frames for one kind of socket, and the sockets (their places in the list
/// [`Encoders::fan_out`] was given) that get them, in order.
#[derive(Debug, PartialEq)]
pub(super) struct Delivery {
    pub(super) run_id: String,
    pub(super) frames: Vec<String>,
    pub(super) to: Vec<usize>,
}

impl Encoders {
    /// The frames of a batch of published events for the session's sockets, in the order they
    /// go out: event by event, kind by kind. Every kind present encodes every event, whether or
    /// not any socket of it follows the run, so its numbering stays that of the run.
    ///
    /// `logged` gives a run's events as its clients were sent them (JSON lines): an encoder that
    /// did not see the previous event (after a wake-up, or a kind's first socket) is rebuilt
    /// from them. A log that cannot be read (`Err`, which the caller logs) is not an empty one:
    /// an encoder built from nothing would number the run's frames from 1 again, so that kind
    /// of socket gets nothing of the event, sees the gap at the next one it gets, and resumes.
    pub(super) fn fan_out<W, E>(
        &mut self,
        sockets: &[(W, SocketInfo)],
        events: &[Sequenced],
        mut logged: impl FnMut(&str) -> Result<Vec<String>, E>,
    ) -> Vec<Delivery> {
        let mut kinds: Vec<Kind> = sockets.iter().map(|(_, i)| (i.dialect, i.weft)).collect();
        kinds.sort();
        kinds.dedup();
        let mut out = Vec::new();
        for ev in events {
            let Some(run_id) = ev.envelope.run_id.as_deref() else {
                continue;
            };
            for &kind in &kinds {
                let frames = self.encode_live(run_id, kind, ev, &mut logged);
                let to: Vec<usize> = sockets
                    .iter()
                    .enumerate()
                    .filter(|(_, (_, i))| (i.dialect, i.weft) == kind && i.follows(run_id))
                    .map(|(n, _)| n)
                    .collect();
                if !to.is_empty() && !frames.is_empty() {
                    out.push(Delivery {
                        run_id: run_id.to_string(),
                        frames,
                        to,
                    });
                }
            }
        }
        out
    }

    /// Encodes the run's next event for one kind of socket, rebuilding its encoder from the
    /// log when it did not see the previous event.
    fn encode_live<E>(
        &mut self,
        run_id: &str,
        kind: Kind,
        ev: &Sequenced,
        logged: &mut impl FnMut(&str) -> Result<Vec<String>, E>,
    ) -> Vec<String> {
        let event_id = ev.envelope.event_id.unwrap_or(0);
        let found = self
            .live
            .iter()
            .position(|e| e.kind == kind && e.run_id == run_id);
        let at = match found {
            Some(i) if self.live[i].last + 1 == event_id => i,
            _ => {
                let Ok(log) = logged(run_id) else {
                    return Vec::new();
                };
                let mut encoder = Encoder::for_socket(kind.0, salt(), kind.1);
                for line in log {
                    if let Some(prev) = decode_logged(run_id, &line) {
                        if prev.envelope.event_id >= Some(event_id) {
                            break;
                        }
                        // Only the encoder's state matters here: these frames went out before.
                        encoder.encode(&prev);
                    }
                }
                let live = LiveEncoder {
                    run_id: run_id.into(),
                    kind,
                    last: event_id.saturating_sub(1),
                    encoder,
                };
                match found {
                    Some(i) => {
                        self.live[i] = live;
                        i
                    }
                    None => {
                        self.live.push(live);
                        self.live.len() - 1
                    }
                }
            }
        };
        let live = &mut self.live[at];
        live.last = event_id;
        let frames = live.encoder.encode(ev);
        if ev.event.is_terminal() {
            self.live.swap_remove(at);
        }
        frames
    }
}

/// A run's frames after frame `after` of this socket's numbering, from its logged events: what
/// a `resume` is sent before the live frames. None it already has, even where one event was
/// several frames and it saw some of them.
pub(super) fn replay(
    socket: &SocketInfo,
    run_id: &str,
    logged: &[String],
    after: u64,
) -> Vec<String> {
    let mut encoder = socket.encoder();
    let mut out = Vec::new();
    for line in logged {
        let Some(ev) = decode_logged(run_id, line) else {
            continue;
        };
        let before = encoder.frames_sent();
        let frames = encoder.encode(&ev);
        let sent = encoder.frames_sent();
        if sent > after {
            // An event of several frames (AG-UI's: a message's start and its first text) that
            // the socket saw part of: when each of its frames claimed an id, the first
            // `after - before` are the ones it has, and are not sent twice.
            let seen = match before < after && frames.len() as u64 == sent - before {
                true => (after - before) as usize,
                false => 0,
            };
            out.extend(frames.into_iter().skip(seen));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_protocol::{Envelope, Event};

    fn ev(run: &str, id: u64, event: Event) -> Sequenced {
        Sequenced {
            envelope: Envelope {
                run_id: Some(run.into()),
                event_id: Some(id),
                ..Envelope::default()
            },
            event,
        }
    }

    fn run(id: &str) -> Vec<Sequenced> {
        let chunk = |n: u64, text: &str| {
            ev(
                id,
                n,
                Event::MessageChunk {
                    content: text.into(),
                    id: "m1".into(),
                },
            )
        };
        vec![
            ev(
                id,
                1,
                Event::RunStart {
                    run_id: Some(id.into()),
                    message: Some("hi".into()),
                    agent: None,
                },
            ),
            chunk(2, "Hel"),
            chunk(3, "lo"),
            ev(
                id,
                4,
                Event::RunEnd {
                    reply: "Hello".into(),
                    usage: None,
                    total_usage: None,
                    iteration_count: None,
                    paused: false,
                    tool_calls: Vec::new(),
                },
            ),
        ]
    }

    fn socket(dialect: Dialect, weft: bool) -> ((), SocketInfo) {
        ((), SocketInfo::new(dialect, "s".into(), weft))
    }

    /// Every frame of `events` for one kind of socket, encoded by one encoder from the start.
    fn reference(kind: Kind, events: &[Sequenced]) -> Vec<String> {
        let mut encoder = Encoder::for_socket(kind.0, salt(), kind.1);
        events.iter().flat_map(|e| encoder.encode(e)).collect()
    }

    /// What each socket was sent, in order.
    fn received(n: usize, deliveries: &[Delivery]) -> Vec<Vec<String>> {
        let mut out = vec![Vec::new(); n];
        for d in deliveries {
            for &i in &d.to {
                out[i].extend(d.frames.iter().cloned());
            }
        }
        out
    }

    fn logged(events: &[Sequenced]) -> Vec<String> {
        events
            .iter()
            .map(|e| serde_json::to_string(e).unwrap())
            .collect()
    }

    #[test]
    fn each_socket_gets_its_kinds_frames_and_sockets_of_a_kind_the_same() {
        let sockets = [
            socket(Dialect::Loom, true),
            socket(Dialect::Cueso, false),
            socket(Dialect::Loom, true),
            socket(Dialect::Agentloop, true),
            socket(Dialect::Agentloop, false),
        ];
        let events = run("r1");
        let mut encoders = Encoders::default();
        let mut asked = 0;
        let out = encoders.fan_out(&sockets, &events, |_| {
            asked += 1;
            Ok::<_, ()>(Vec::new())
        });
        let got = received(sockets.len(), &out);
        for (n, (_, info)) in sockets.iter().enumerate() {
            let want = reference((info.dialect, info.weft), &events);
            assert!(!want.is_empty());
            assert_eq!(got[n], want, "socket {n}");
        }
        assert_eq!(got[0], got[2]);
        assert_ne!(got[3], got[4], "weft and original agentloop clients differ");
        // One encoder per kind, made once (at the run's first event), gone with its last.
        assert_eq!(asked, 4);
        assert!(encoders.live.is_empty());
    }

    #[test]
    fn a_socket_that_found_the_run_streaming_gets_nothing_until_it_resumes() {
        let mut late = socket(Dialect::Loom, true);
        late.1.not_following.push("r1".into());
        let sockets = [socket(Dialect::Loom, true), late];
        let out = Encoders::default().fan_out(&sockets, &run("r1"), |_| Ok::<_, ()>(Vec::new()));
        let got = received(2, &out);
        assert_eq!(got[0].len(), 4);
        assert!(got[1].is_empty());
        // Another run's frames it gets.
        let out = Encoders::default().fan_out(&sockets, &run("r2"), |_| Ok::<_, ()>(Vec::new()));
        assert_eq!(received(2, &out)[1].len(), 4);
    }

    #[test]
    fn an_encoder_that_missed_events_is_rebuilt_from_the_log() {
        let events = run("r1");
        let mut encoders = Encoders::default();
        let loom = [socket(Dialect::Loom, true)];
        encoders.fan_out(&loom, &events[..2], |_| Ok::<_, ()>(Vec::new()));
        // An agentloop socket joins mid-run (it resumed): its encoder is built from what the
        // log holds before the next event, so its numbering is the run's.
        let both = [
            socket(Dialect::Loom, true),
            socket(Dialect::Agentloop, true),
        ];
        let log = logged(&events[..2]);
        let mut asked = Vec::new();
        let out = encoders.fan_out(&both, &events[2..], |run| {
            asked.push(run.to_string());
            Ok::<_, ()>(log.clone())
        });
        assert_eq!(asked, ["r1"], "only the new kind's encoder is rebuilt");
        let got = received(2, &out);
        let loom_all = reference((Dialect::Loom, true), &events);
        assert_eq!(got[0], loom_all[loom_all.len() - got[0].len()..]);
        let agentloop_all = reference((Dialect::Agentloop, true), &events);
        let agentloop_before = reference((Dialect::Agentloop, true), &events[..2]).len();
        assert_eq!(got[1], agentloop_all[agentloop_before..]);
        // After a wake-up (no encoders in memory) alike.
        let mut woken = Encoders::default();
        let out = woken.fan_out(&loom, &events[3..], |_| Ok::<_, ()>(logged(&events[..3])));
        assert_eq!(received(1, &out)[0], loom_all[loom_all.len() - 1..]);
    }

    #[test]
    fn an_encoder_whose_log_cannot_be_read_sends_nothing_until_it_can() {
        let events = run("r1");
        let loom = [socket(Dialect::Loom, true)];
        let loom_all = reference((Dialect::Loom, true), &events);
        // Woken mid-run with the log unreadable: nothing rather than frames numbered from 1.
        let mut woken = Encoders::default();
        let out = woken.fan_out(&loom, &events[2..3], |_| Err("disk I/O error"));
        assert!(received(1, &out)[0].is_empty());
        assert!(woken.live.is_empty());
        // The next event, with the log readable again, goes out with the run's own numbering:
        // the client sees the gap (the event it missed) and resumes.
        let out = woken.fan_out(&loom, &events[3..], |_| Ok::<_, &str>(logged(&events[..3])));
        assert_eq!(received(1, &out)[0], loom_all[loom_all.len() - 1..]);
    }

    #[test]
    fn a_resume_replays_the_frames_after_the_ones_the_socket_saw() {
        let events = run("r1");
        let log = logged(&events);
        for (dialect, weft) in [
            (Dialect::Loom, true),
            (Dialect::Cueso, true),
            (Dialect::Agui, true),
        ] {
            let (_, info) = socket(dialect, weft);
            let all = reference((dialect, weft), &events);
            assert_eq!(replay(&info, "r1", &log, 0), all);
            assert_eq!(replay(&info, "r1", &log, 2), all[2..]);
            assert!(replay(&info, "r1", &log, all.len() as u64).is_empty());
        }
        let mut unreadable = log.clone();
        unreadable.insert(1, "not json".into());
        let (_, info) = socket(Dialect::Loom, true);
        assert_eq!(
            replay(&info, "r1", &unreadable, 0),
            replay(&info, "r1", &log, 0)
        );
    }
}
