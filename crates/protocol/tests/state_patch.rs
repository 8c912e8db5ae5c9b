//! AG-UI's state as the reassembler keeps it: `STATE_SNAPSHOT` sets a run's state and
//! `STATE_DELTA` (a JSON Patch, RFC 6902) changes it — every operation, and every way a patch
//! can fail to apply, which is an error that changes nothing.

use serde_json::{json, Value};
use weft_protocol::dialect::agui::{decode_event, Decoder};
use weft_protocol::json::RawJson;
use weft_protocol::{Dialect, Error, Limits, Reassembler};

fn raw(v: Value) -> RawJson {
    RawJson::from_value(&v)
}

/// The document after `patch`, or the error.
fn patch(doc: Value, patch: Value) -> Result<Value, Error> {
    raw(doc).patched(&raw(patch)).map(|r| r.to_value())
}

/// The index of the failing operation and the error's code, asserting it failed.
fn fails(doc: Value, ops: Value) -> (Option<usize>, String) {
    match patch(doc, ops) {
        Err(e @ Error::Patch { op, .. }) => {
            assert_eq!(e.code(), "invalid_patch");
            assert!(
                e.message().ends_with("the state is unchanged"),
                "{}",
                e.message()
            );
            (op, e.message())
        }
        other => panic!("expected a patch error, got {other:?}"),
    }
}

#[test]
fn add() {
    let doc = json!({"a": 1, "list": [1, 3]});
    assert_eq!(
        patch(
            doc.clone(),
            json!([{"op": "add", "path": "/b", "value": {"c": true}}])
        )
        .unwrap(),
        json!({"a": 1, "b": {"c": true}, "list": [1, 3]})
    );
    // An existing member is replaced; an array index inserts; `-` appends.
    assert_eq!(
        patch(
            doc.clone(),
            json!([
                {"op": "add", "path": "/a", "value": 2},
                {"op": "add", "path": "/list/1", "value": 2},
                {"op": "add", "path": "/list/-", "value": 4},
                {"op": "add", "path": "/list/4", "value": 5},
            ])
        )
        .unwrap(),
        json!({"a": 2, "list": [1, 2, 3, 4, 5]})
    );
    // The empty path is the whole document.
    assert_eq!(
        patch(doc, json!([{"op": "add", "path": "", "value": [1]}])).unwrap(),
        json!([1])
    );
}

#[test]
fn remove() {
    assert_eq!(
        patch(
            json!({"a": 1, "b": 2, "list": ["x", "y", "z"]}),
            json!([{"op": "remove", "path": "/a"}, {"op": "remove", "path": "/list/1"}])
        )
        .unwrap(),
        json!({"b": 2, "list": ["x", "z"]})
    );
}

#[test]
fn replace() {
    assert_eq!(
        patch(
            json!({"a": {"b": 1}, "list": [1, 2]}),
            json!([
                {"op": "replace", "path": "/a/b", "value": null},
                {"op": "replace", "path": "/list/0", "value": "one"},
            ])
        )
        .unwrap(),
        json!({"a": {"b": null}, "list": ["one", 2]})
    );
    assert_eq!(
        patch(
            json!({"a": 1}),
            json!([{"op": "replace", "path": "", "value": 7}])
        )
        .unwrap(),
        json!(7)
    );
}

#[test]
fn move_and_copy() {
    assert_eq!(
        patch(
            json!({"a": {"b": 1}, "list": [1, 2, 3]}),
            json!([
                {"op": "move", "from": "/a/b", "path": "/c"},
                {"op": "move", "from": "/list/0", "path": "/list/-"},
            ])
        )
        .unwrap(),
        json!({"a": {}, "c": 1, "list": [2, 3, 1]})
    );
    assert_eq!(
        patch(
            json!({"a": {"b": [1]}}),
            json!([
                {"op": "copy", "from": "/a", "path": "/copy"},
                {"op": "add", "path": "/copy/b/-", "value": 2},
            ])
        )
        .unwrap(),
        json!({"a": {"b": [1]}, "copy": {"b": [1, 2]}}),
        "a copy is a copy: changing it leaves the original"
    );
}

#[test]
fn test_op() {
    let doc = json!({"n": 1, "o": {"x": [1, "a"], "y": null}, "s": "v"});
    // Numbers by value, objects whatever their order.
    let ok = json!([
        {"op": "test", "path": "/n", "value": 1.0},
        {"op": "test", "path": "/o", "value": {"y": null, "x": [1, "a"]}},
        {"op": "test", "path": "/s", "value": "v"},
        {"op": "test", "path": "", "value": doc.clone()},
    ]);
    assert_eq!(patch(doc.clone(), ok).unwrap(), doc);
    let (op, message) = fails(
        doc,
        json!([{"op": "test", "path": "/n", "value": 1}, {"op": "test", "path": "/s", "value": "w"}]),
    );
    assert_eq!(op, Some(1));
    assert!(message.contains("`test` failed"), "{message}");
}

#[test]
fn pointer_escapes() {
    assert_eq!(
        patch(
            json!({"a/b": 1, "m~n": 2}),
            json!([
                {"op": "replace", "path": "/a~1b", "value": 10},
                {"op": "remove", "path": "/m~0n"},
                {"op": "add", "path": "/~01", "value": 3},
            ])
        )
        .unwrap(),
        json!({"a/b": 10, "~1": 3})
    );
}

#[test]
fn a_patch_that_fails_anywhere_changes_nothing() {
    let doc = json!({"a": 1, "list": [1, 2]});
    let bad = [
        // A failing test after a change that would have applied.
        (
            json!([{"op": "add", "path": "/b", "value": 2}, {"op": "test", "path": "/a", "value": 2}]),
            Some(1),
        ),
        // Paths that name nothing.
        (json!([{"op": "remove", "path": "/missing"}]), Some(0)),
        (
            json!([{"op": "replace", "path": "/missing/deeper", "value": 1}]),
            Some(0),
        ),
        (
            json!([{"op": "add", "path": "/missing/deeper", "value": 1}]),
            Some(0),
        ),
        (json!([{"op": "add", "path": "/a/b", "value": 1}]), Some(0)),
        (
            json!([{"op": "test", "path": "/nothing", "value": null}]),
            Some(0),
        ),
        (
            json!([{"op": "copy", "from": "/nothing", "path": "/b"}]),
            Some(0),
        ),
        (
            json!([{"op": "move", "from": "/nothing", "path": "/b"}]),
            Some(0),
        ),
        // Array indexes: past the end, a leading zero, a sign, `-` where nothing is there yet.
        (
            json!([{"op": "add", "path": "/list/3", "value": 1}]),
            Some(0),
        ),
        (json!([{"op": "remove", "path": "/list/2"}]), Some(0)),
        (
            json!([{"op": "replace", "path": "/list/01", "value": 1}]),
            Some(0),
        ),
        (
            json!([{"op": "replace", "path": "/list/+1", "value": 1}]),
            Some(0),
        ),
        (json!([{"op": "remove", "path": "/list/-"}]), Some(0)),
        // Malformed pointers and operations.
        (json!([{"op": "add", "path": "a", "value": 1}]), Some(0)),
        (json!([{"op": "add", "path": "/a~2", "value": 1}]), Some(0)),
        (json!([{"op": "remove", "path": ""}]), Some(0)),
        (
            json!([{"op": "move", "from": "/list", "path": "/list/0"}]),
            Some(0),
        ),
        (json!([{"op": "add", "path": "/b"}]), Some(0)),
        (json!([{"op": "copy", "path": "/b"}]), Some(0)),
        (json!([{"path": "/b", "value": 1}]), Some(0)),
        (json!([{"op": "add", "path": 3, "value": 1}]), Some(0)),
        (json!([{"op": "merge", "path": "/a", "value": 1}]), Some(0)),
        (json!(["add"]), Some(0)),
        (json!({"op": "add", "path": "/b", "value": 1}), None),
    ];
    for (ops, at) in bad {
        assert_eq!(fails(doc.clone(), ops.clone()).0, at, "{ops}");
    }
}

/// AG-UI frames through the AG-UI decoder into a reassembler, as a client of an AG-UI backend
/// reads them.
struct Client {
    decoder: Decoder,
    reassembler: Reassembler,
}

impl Client {
    fn new() -> Self {
        Client {
            decoder: Decoder::new(),
            reassembler: Reassembler::new(Dialect::Loom).with_events(),
        }
    }

    /// Pushes one AG-UI event; the first error a patch raised, if any.
    fn push(&mut self, event: Value) -> Result<(), Error> {
        let ev = decode_event(event.to_string().as_bytes(), Limits::default()).unwrap();
        for canonical in self.decoder.decode(&ev).unwrap() {
            if let Some(e) = self.reassembler.push_event(canonical).rejected {
                return Err(e);
            }
        }
        Ok(())
    }

    fn state(&self, run: usize) -> Option<Value> {
        self.reassembler.transcript().runs[run]
            .state
            .as_ref()
            .map(RawJson::to_value)
    }
}

#[test]
fn the_reassembler_keeps_a_runs_state_from_snapshot_and_deltas() {
    let mut c = Client::new();
    c.push(json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r1"}))
        .unwrap();
    assert_eq!(c.state(0), None);
    c.push(json!({"type": "STATE_SNAPSHOT", "snapshot": {"todos": ["a"], "done": 0}}))
        .unwrap();
    c.push(json!({"type": "STATE_DELTA", "delta": [
        {"op": "add", "path": "/todos/-", "value": "b"},
        {"op": "replace", "path": "/done", "value": 1},
    ]}))
    .unwrap();
    assert_eq!(c.state(0), Some(json!({"todos": ["a", "b"], "done": 1})));
    // The canonical event is queued like any other, the patch as it came.
    let kinds: Vec<String> = std::iter::from_fn(|| c.reassembler.poll())
        .map(|e| e.event.kind().to_owned())
        .collect();
    assert_eq!(kinds, ["run_start", "values", "state_delta"]);

    // A patch that does not apply: an error naming the operation; the transcript as it was,
    // and nothing queued.
    let before = c.reassembler.transcript().to_json();
    let err = c
        .push(json!({"type": "STATE_DELTA", "delta": [
            {"op": "replace", "path": "/done", "value": 2},
            {"op": "test", "path": "/todos/0", "value": "z"},
        ]}))
        .unwrap_err();
    assert_eq!(err.code(), "invalid_patch");
    assert!(matches!(err, Error::Patch { op: Some(1), .. }), "{err:?}");
    assert_eq!(c.reassembler.transcript().to_json(), before);
    assert!(c.reassembler.poll().is_none());

    // The transcript writes the state the way serde does.
    let t = c.reassembler.transcript();
    assert_eq!(t.to_json(), serde_json::to_string(t).unwrap());
    let runs = serde_json::from_str::<Value>(&t.to_json()).unwrap()["runs"].clone();
    assert_eq!(runs[0]["state"], json!({"todos": ["a", "b"], "done": 1}));

    // The next run starts from it; a delta with no snapshot before it patches that.
    c.push(json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"}))
        .unwrap();
    c.push(json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r2"}))
        .unwrap();
    c.push(json!({"type": "STATE_DELTA", "delta": [{"op": "remove", "path": "/todos/0"}]}))
        .unwrap();
    assert_eq!(c.state(1), Some(json!({"todos": ["b"], "done": 1})));
    assert_eq!(c.state(0), Some(json!({"todos": ["a", "b"], "done": 1})));
}

#[test]
fn a_delta_before_any_snapshot_patches_an_empty_object() {
    let mut c = Client::new();
    c.push(json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}))
        .unwrap();
    c.push(json!({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/x", "value": 1}]}))
        .unwrap();
    assert_eq!(c.state(0), Some(json!({"x": 1})));
}

#[test]
fn push_frame_returns_a_patch_that_does_not_apply_as_its_error() {
    // A weft dialect carries the canonical event too.
    let mut r = Reassembler::new(Dialect::Loom);
    let frame = |v: Value| v.to_string().into_bytes();
    r.push_frame(&frame(
        json!({"type": "run_start", "run_id": "r", "event_id": 1}),
    ))
    .unwrap();
    r.push_frame(&frame(
        json!({"type": "values", "state": {"a": 1}, "run_id": "r", "event_id": 2}),
    ))
    .unwrap();
    let before = r.transcript().clone();
    let err = r
        .push_frame(&frame(json!({"type": "state_delta", "delta": [{"op": "remove", "path": "/b"}], "run_id": "r", "event_id": 3})))
        .unwrap_err();
    assert!(matches!(err, Error::Patch { op: Some(0), .. }), "{err:?}");
    assert_eq!(r.transcript(), &before);
    // A state_delta without its patch is a malformed event, not an empty patch.
    assert!(r
        .push_frame(&frame(
            json!({"type": "state_delta", "run_id": "r", "event_id": 4})
        ))
        .is_err());
}
