//! Bad input: every malformed frame is a typed error that says what is wrong, nothing panics,
//! unknown event types survive whole, and a failed push changes nothing.

use serde_json::json;
use weft_protocol::{Dialect, Error, Event, Limits, Reassembler};

fn request(d: Dialect, frame: &str) -> Result<weft_protocol::Command, Error> {
    d.decode_request(frame.as_bytes(), Limits::default())
}

#[test]
fn invalid_json_is_a_typed_error_in_every_dialect_and_direction() {
    for d in Dialect::ALL {
        for frame in ["{", "not json", "{\"type\":\"run\",}", ""] {
            let e = request(d, frame).unwrap_err();
            assert_eq!(e.code(), "invalid_json", "{d} {frame:?}: {e}");
            let e = d
                .decode_server(frame.as_bytes(), Limits::default())
                .unwrap_err();
            assert!(matches!(e, Error::InvalidJson { .. }), "{d}: {e}");
        }
    }
}

#[test]
fn deep_nesting_is_refused_without_overflowing_the_stack() {
    let deep = "[".repeat(100_000) + &"]".repeat(100_000);
    let frame = format!("{{\"type\":\"run\",\"message\":{deep},\"agent\":\"react\"}}");
    for d in Dialect::ALL {
        let e = request(d, &frame).unwrap_err();
        assert!(
            matches!(e, Error::InvalidJson { ref message } if message.contains("recursion")),
            "{e}"
        );
    }
}

#[test]
fn oversized_frames_and_bad_utf8_are_refused() {
    let huge = format!(
        "{{\"type\":\"run\",\"message\":\"{}\",\"agent\":\"react\"}}",
        "x".repeat(2 << 20)
    );
    let e = request(Dialect::Loom, &huge).unwrap_err();
    assert_eq!(
        e,
        Error::TooLarge {
            len: huge.len(),
            max: 1 << 20
        }
    );
    let small = Limits {
        max_frame_bytes: 64,
    };
    assert!(Dialect::Cueso.decode_request(&[b' '; 65], small).is_err());

    let mut bytes = br#"{"type":"chat","message":"caf"#.to_vec();
    bytes.extend([0xC3, 0x28]); // a broken two-byte sequence
    bytes.extend(br#""}"#);
    let e = Dialect::Agentchat
        .decode_request(&bytes, Limits::default())
        .unwrap_err();
    assert_eq!(e, Error::InvalidUtf8 { valid_up_to: 29 });
    assert!(e.to_string().contains("offset 29"));
}

#[test]
fn non_objects_and_missing_types_are_named() {
    assert_eq!(
        request(Dialect::Loom, "[1,2]").unwrap_err(),
        Error::NotAnObject { found: "an array" }
    );
    assert_eq!(
        request(Dialect::Loom, "{\"message\":\"hi\"}").unwrap_err(),
        Error::MissingType
    );
    assert_eq!(
        request(Dialect::Agentloop, "{\"type\":7}").unwrap_err(),
        Error::MissingType
    );
}

#[test]
fn malformed_known_types_name_the_type_and_the_field() {
    let e = request(Dialect::Loom, r#"{"type":"run","agent":"react"}"#).unwrap_err();
    assert_eq!(
        e.to_string(),
        "malformed `run`: field `message` is required (a string)"
    );
    let e = request(
        Dialect::Loom,
        r#"{"type":"run","message":5,"agent":"react"}"#,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "malformed `run`: field `message` must be a string, found a number"
    );
    let e = request(
        Dialect::Cueso,
        r#"{"type":"client_tools","tools":[{"name":"a"},{"name":3}]}"#,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "malformed `client_tools`: field `tools[1].name` must be a string, found a number"
    );
    let e = request(
        Dialect::Cueso,
        r#"{"type":"client_tools","tools":[{"name":"a"},{"name":"b"},[]]}"#,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "malformed `client_tools`: field `tools[2]` must be an object, found an array"
    );
    let e = Dialect::Loom
        .decode_server(
            br#"{"type":"run_stream_event","id":"r","event":{"type":"tot_evaluate","chosen":0,"scores":[1,"x"]}}"#,
            Limits::default(),
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "malformed `tot_evaluate`: field `event.scores` [1] must be a number, found a string"
    );
    let e = request(
        Dialect::Agentloop,
        r#"{"id":"1","type":"approval_response","payload":{"review":"maybe"}}"#,
    )
    .unwrap_err();
    assert!(
        matches!(e, Error::Field { ref kind, ref field, .. } if kind == "approval_response" && field == "payload.review"),
        "{e}"
    );
    let e = Dialect::Loom
        .decode_server(
            br#"{"type":"run_stream_event","id":"r","event":{"type":"message_chunk","content":5,"id":"think"}}"#,
            Limits::default(),
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "malformed `message_chunk`: field `event.content` must be a string, found a number"
    );
    let e = request(
        Dialect::Loom,
        r#"{"type":"resume","run_id":"r","after_event_id":-1}"#,
    )
    .unwrap_err();
    assert!(e.to_string().contains("after_event_id"), "{e}");
}

#[test]
fn rejected_content_says_why() {
    let e = request(Dialect::Agentchat, r#"{"type":"chat","message":"   "}"#).unwrap_err();
    assert_eq!(e.to_string(), "invalid `chat`: Empty message received");
    let e = request(
        Dialect::Loom,
        r#"{"type":"user_messages","id":"1","thread_id":""}"#,
    )
    .unwrap_err();
    assert!(e.to_string().contains("thread_id is required"));
    let long = "r".repeat(129);
    let e = request(
        Dialect::Loom,
        &format!(r#"{{"type":"run","message":"m","agent":"react","id":"{long}"}}"#),
    )
    .unwrap_err();
    assert!(e.to_string().contains("at most 128"), "{e}");
    let e = request(Dialect::Agentchat, r#"{"type":"shout","message":"hi"}"#).unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown message type `shout` for the agentchat endpoint"
    );
}

#[test]
fn unknown_event_types_are_kept_whole() {
    let frame = json!({
        "type": "run_stream_event",
        "id": "run-1",
        "event": {"type": "mood_swing", "mood": "sunny", "nested": {"a": [1, 2]}, "event_id": 3}
    });
    let events = Dialect::Loom
        .decode_server(frame.to_string().as_bytes(), Limits::default())
        .unwrap();
    let Event::Unknown(u) = &events[0].event else {
        panic!("expected Unknown, got {:?}", events[0].event);
    };
    assert_eq!(u.kind, "mood_swing");
    assert_eq!(
        json!(u.data),
        json!({"mood": "sunny", "nested": {"a": [1, 2]}})
    );
    assert_eq!(events[0].envelope.event_id, Some(3));
    // And it goes back out unchanged.
    let mut enc = weft_protocol::Encoder::new(Dialect::Loom, 0);
    let out: serde_json::Value = serde_json::from_str(&enc.encode(&events[0])[0]).unwrap();
    assert_eq!(
        out["event"],
        json!({"type": "mood_swing", "mood": "sunny", "nested": {"a": [1, 2]}, "event_id": 1})
    );
    // Unknown frame types of the other dialects are kept too.
    let events = Dialect::Cueso
        .decode_server(br#"{"type":"voice_level","db":-3}"#, Limits::default())
        .unwrap();
    assert!(
        matches!(&events[0].event, Event::Unknown(u) if u.kind == "voice_level" && u.data.to_value()["db"] == -3)
    );
}

#[test]
fn a_frame_that_fails_changes_nothing() {
    let mut r = Reassembler::new(Dialect::Cueso);
    r.push_frame(br#"{"type":"content_delta","content":"Hel","role":"assistant"}"#)
        .unwrap();
    let before = r.transcript().clone();
    for bad in [
        &br#"{"type":"content_delta","content":7}"#[..],
        b"\xff\xfe",
        b"{{{{",
        br#"{"type":"tool_call_delta","tool_call":"nope"}"#,
    ] {
        assert!(r.push_frame(bad).is_err());
        assert_eq!(r.transcript(), &before);
    }
    r.push_frame(br#"{"type":"content_delta","content":"lo","role":"assistant"}"#)
        .unwrap();
    assert_eq!(r.transcript().messages[0].text, "Hello");
}

#[test]
fn a_request_error_during_a_run_does_not_end_the_run() {
    let mut r = Reassembler::new(Dialect::Loom);
    r.push_frame(br#"{"type":"run_stream_event","id":"r1","event":{"type":"run_start","run_id":"r1","event_id":1}}"#)
        .unwrap();
    // The reply to a bad tool_show sent meanwhile: an error with the request's id, no run.
    r.push_frame(br#"{"type":"error","id":"req-7","error":"tool not found: nope"}"#)
        .unwrap();
    let run = r.transcript().run("r1").unwrap();
    assert_eq!(run.status, weft_protocol::reassembler::RunStatus::Running);
    // The run's own error ends it.
    r.push_frame(
        br#"{"type":"error","id":"r1","error":"cancelled","code":"cancelled","event_id":2}"#,
    )
    .unwrap();
    assert_eq!(
        r.transcript().run("r1").unwrap().status,
        weft_protocol::reassembler::RunStatus::Cancelled
    );
}

#[test]
fn a_refused_request_during_a_run_does_not_end_the_run_in_any_dialect() {
    use weft_protocol::{Encoder, Sequenced, Sequencer};
    for d in Dialect::ALL {
        let mut seq = Sequencer::new(Some("s".into()), "r1");
        let mut enc = Encoder::new(d, 1);
        let mut r = Reassembler::new(d);
        let start = seq.stamp(Event::RunStart {
            run_id: Some("r1".into()),
            message: Some("count".into()),
            agent: None,
        });
        for f in enc.encode(&start) {
            r.push_frame(f.as_bytes()).unwrap();
        }
        // A second `run` sent meanwhile is refused: the error names that request (loom in its
        // `id`, the others in the extension field `request_id`), not the streaming run.
        let busy = Sequenced::bare(Event::Error {
            message: "a run is already in progress (r1)".into(),
            code: Some("busy".into()),
            id: Some("r2".into()),
            details: None,
        });
        let frames = enc.encode(&busy);
        assert_eq!(frames.len(), 1, "{d}");
        if d != Dialect::Loom {
            let frame: serde_json::Value = serde_json::from_str(&frames[0]).unwrap();
            assert_eq!(frame["request_id"], "r2", "{d}: {frame}");
        }
        r.push_frame(frames[0].as_bytes()).unwrap();
        let run = r.transcript().run("r1").unwrap();
        assert_eq!(
            run.status,
            weft_protocol::reassembler::RunStatus::Running,
            "{d}"
        );
    }
}

#[test]
fn serde_names_the_field_a_malformed_event_lacks() {
    let err = serde_json::from_str::<Event>(r#"{"type":"tool_end","name":"x"}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("tool_end") && err.contains("result"), "{err}");
    assert!(serde_json::from_str::<Event>("[1]").is_err());
    let unknown: Event = serde_json::from_str(r#"{"type":"from_the_future","x":1}"#).unwrap();
    assert_eq!(unknown.kind(), "from_the_future");
}
