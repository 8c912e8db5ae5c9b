//! `events_lost`: a server that logs streamed text after sending it may lose the last frames it
//! sent in a restart. It then numbers on past every frame it may have sent, announcing the hole
//! with `events_lost`, and every client — whatever part of the hole it saw — carries on in
//! order, without waiting for a resume that cannot fill it.

mod common;

use weft_protocol::reassembler::RunStatus;
use weft_protocol::{Dialect, Encoder, Envelope, Event, Reassembler, Sequenced};

const DIALECTS: [Dialect; 4] = [
    Dialect::Loom,
    Dialect::Agentloop,
    Dialect::Agentchat,
    Dialect::Cueso,
];

/// What a server's log may lag its sockets by: at most this many deltas go out unlogged.
const MAX_UNLOGGED: u64 = 16;

fn chunk(n: u64) -> Event {
    Event::MessageChunk {
        content: format!("w{n} "),
        id: "think".into(),
    }
}

fn at(run: &str, id: u64, event: Event) -> Sequenced {
    Sequenced {
        envelope: Envelope {
            session_id: Some(common::SESSION.into()),
            run_id: Some(run.into()),
            event_id: Some(id),
            node_id: Some("run-think-0".into()),
        },
        event,
    }
}

/// A run that streamed `sent` chunks before the restart, of which the first `logged` reached
/// the log: the frames live sockets got, and the log the server restarts from with what it
/// sends after (the hole, then the cut response closed and the run ended).
fn restart(run: &str, sent: u64, logged: u64) -> (Vec<Sequenced>, Vec<Sequenced>) {
    let mut live = vec![
        at(
            run,
            1,
            Event::RunStart {
                run_id: Some(run.into()),
                message: Some("hi".into()),
                agent: None,
            },
        ),
        at(run, 2, Event::NodeEnter { id: "think".into() }),
    ];
    live.extend((1..=sent).map(|n| at(run, 2 + n, chunk(n))));
    let mut log: Vec<Sequenced> = live[..(2 + logged) as usize].to_vec();
    let lost_at = 2 + logged + MAX_UNLOGGED + 1;
    log.push(at(run, lost_at, Event::EventsLost { from: 3 + logged }));
    for (n, event) in [
        Event::LlmComplete {
            content: String::new(),
            tool_calls: Vec::new(),
            finish_reason: "interrupted".into(),
        },
        Event::NodeExit {
            id: "think".into(),
            result: weft_protocol::event::NodeResult::Ok,
        },
        Event::MessageChunk {
            content: "again".into(),
            id: "think".into(),
        },
        Event::RunEnd {
            reply: "again".into(),
            usage: None,
            total_usage: None,
            iteration_count: None,
            paused: false,
            tool_calls: Vec::new(),
        },
    ]
    .into_iter()
    .enumerate()
    {
        log.push(at(run, lost_at + 1 + n as u64, event));
    }
    (live, log)
}

#[test]
fn every_delta_is_at_most_one_frame_for_a_weft_client() {
    // The bound the hole's size rests on.
    for dialect in DIALECTS {
        for (name, run) in common::scenarios() {
            let mut enc = Encoder::new(dialect, 7);
            for ev in &run {
                let frames = enc.encode(ev);
                if ev.event.is_delta() {
                    assert!(
                        frames.len() <= 1,
                        "{dialect:?} {name}: {} frames for {:?}",
                        frames.len(),
                        ev.event
                    );
                }
            }
        }
    }
}

#[test]
fn a_client_that_saw_any_part_of_the_hole_carries_on_in_order() {
    for dialect in DIALECTS {
        for saw in 0..=10u64 {
            let (live, log) = restart("run-r", 10, 4);
            // Live frames up to what this client saw (`saw` chunks), before its socket dropped.
            let mut enc = Encoder::new(dialect, 7);
            let mut client = Reassembler::new(dialect);
            for ev in &live[..(2 + saw) as usize] {
                for frame in enc.encode(ev) {
                    let pushed = client.push_frame(frame.as_bytes()).unwrap();
                    assert!(pushed.gap.is_none());
                }
            }
            let after = client.last_event_id("run-r");
            // The restarted server replays its log in this dialect after the client's id.
            let mut replay = Encoder::new(dialect, 7);
            for ev in &log {
                for frame in replay.encode(ev) {
                    if replay.frames_sent() > after {
                        let pushed = client.push_frame(frame.as_bytes()).unwrap();
                        assert!(
                            pushed.gap.is_none(),
                            "{dialect:?}, saw {saw}: a gap after the restart: {frame}"
                        );
                    }
                }
            }
            let run = client.transcript().run("run-r").expect("the run");
            assert_eq!(run.status, RunStatus::Completed, "{dialect:?}, saw {saw}");
            assert!(
                replay.frames_sent() > enc.frames_sent(),
                "{dialect:?}: the restarted numbering passes every frame sent live"
            );
        }
    }
}

#[test]
fn frames_held_inside_the_hole_are_dropped_with_it() {
    let dialect = Dialect::Loom;
    let (live, log) = restart("run-h", 8, 2);
    let mut enc = Encoder::new(dialect, 7);
    let frames: Vec<String> = live.iter().flat_map(|ev| enc.encode(ev)).collect();
    let mut client = Reassembler::new(dialect);
    // It got everything up to chunk 3, then chunk 6 out of order (held, waiting for 4 and 5).
    for frame in &frames[..5] {
        client.push_frame(frame.as_bytes()).unwrap();
    }
    assert!(client
        .push_frame(frames[7].as_bytes())
        .unwrap()
        .gap
        .is_some());
    let after = client.last_event_id("run-h");
    let mut replay = Encoder::new(dialect, 7);
    for ev in &log {
        for frame in replay.encode(ev) {
            if replay.frames_sent() > after {
                assert!(client.push_frame(frame.as_bytes()).unwrap().gap.is_none());
            }
        }
    }
    let transcript = client.transcript();
    assert_eq!(
        transcript.run("run-h").unwrap().status,
        RunStatus::Completed
    );
    // Chunk 6 was never applied: what a user saw is never mended from a hole.
    let text: String = transcript.messages.iter().map(|m| m.text.clone()).collect();
    assert!(!text.contains("w6"), "{text}");
}

#[test]
fn an_original_client_never_gets_it_and_stays_dense() {
    for dialect in DIALECTS {
        let (_, log) = restart("run-o", 6, 6);
        let mut enc = Encoder::original(dialect, 7);
        let mut ids = Vec::new();
        for ev in &log {
            let frames = enc.encode(ev);
            if matches!(ev.event, Event::EventsLost { .. }) {
                assert!(frames.is_empty(), "{dialect:?}");
            }
            for frame in frames {
                let v: serde_json::Value = serde_json::from_str(&frame).unwrap();
                assert!(!frame.contains("events_lost"), "{dialect:?}: {frame}");
                // loom numbers its stream events inside `event`, the others at the top.
                let id = v
                    .get("event_id")
                    .or_else(|| v.get("event")?.get("event_id"));
                if let Some(id) = id.and_then(|i| i.as_u64()) {
                    ids.push(id);
                }
            }
        }
        let dense: Vec<u64> = (1..=ids.len() as u64).collect();
        assert_eq!(ids, dense, "{dialect:?}");
    }
}

#[test]
fn a_forged_hole_cannot_stall_a_client() {
    // A hostile or broken server declares a hole up to u64::MAX: the client moves on at once.
    let mut client = Reassembler::new(Dialect::Cueso);
    let frame = r#"{"type":"events_lost","from":1,"run_id":"r","event_id":18446744073709551615}"#;
    assert!(client.push_frame(frame.as_bytes()).unwrap().gap.is_none());
    assert_eq!(client.last_event_id("r"), u64::MAX);
}
