//! The SDK as JavaScript sees it, in headless Chromium: the `Reassembler` on the protocol's
//! golden transcripts (frame by frame, in one batch, with duplicates, with a gap), the errors
//! JS receives, callbacks that unsubscribe and never re-enter, and the parts of `Client` that
//! need no server (option checks, dialect limits, a refused connection, `close()`).
//!
//! Run from crates/sdk: `cargo test --target wasm32-unknown-unknown --test browser` (the
//! runner is set in crates/sdk/.cargo/config.toml).

#![cfg(target_arch = "wasm32")]

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Function, Promise, Reflect, Uint8Array};
use serde_json::Value;
use tsify::Ts;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};
use weft_sdk::{Client, Reassembler};

wasm_bindgen_test_configure!(run_in_browser);

macro_rules! golden {
    ($($dialect:literal: [$($name:literal),*]),* $(,)?) => {
        &[$($((
            $dialect,
            $name,
            include_str!(concat!("../../protocol/tests/fixtures/", $dialect, "/", $name, ".jsonl")),
            include_str!(concat!("../../protocol/tests/fixtures/", $dialect, "/", $name, ".transcript.json")),
        ),)*)*]
    };
}

/// (dialect, scenario, frames, transcript) for every golden transcript of the protocol crate.
const GOLDEN: &[(&str, &str, &str, &str)] = golden! {
    "loom": ["plain-reply", "tool-call", "approval-granted", "approval-denied", "provider-error", "cancelled"],
    "agentloop": ["plain-reply", "tool-call", "approval-granted", "approval-denied", "provider-error", "cancelled"],
    "agentchat": ["plain-reply", "tool-call", "approval-granted", "approval-denied", "provider-error", "cancelled"],
    "cueso": ["plain-reply", "tool-call", "approval-granted", "approval-denied", "provider-error", "cancelled"],
};

fn frames(jsonl: &str) -> Vec<String> {
    jsonl.lines().map(String::from).collect()
}

/// Frames as the JS array `pushMany` takes.
fn array(frames: &[String]) -> JsValue {
    frames
        .iter()
        .map(|f| JsValue::from_str(f))
        .collect::<js_sys::Array>()
        .into()
}

/// A JS value as JSON, to compare with the fixtures (what `JSON.stringify` shows the app).
fn json(v: &JsValue) -> Value {
    let text: String = js_sys::JSON::stringify(v).unwrap().into();
    serde_json::from_str(&text).unwrap()
}

fn transcript(r: &Reassembler) -> Value {
    json(&r.transcript().unwrap().into())
}

fn prop(v: &JsValue, name: &str) -> JsValue {
    Reflect::get(v, &name.into()).unwrap()
}

/// Asserts a thrown value is a `WeftError` with this code, and returns its message.
fn weft_error(thrown: &JsValue, code: &str) -> String {
    let e = thrown
        .dyn_ref::<js_sys::Error>()
        .unwrap_or_else(|| panic!("not an Error: {thrown:?}"));
    assert_eq!(String::from(e.name()), "WeftError");
    assert_eq!(
        prop(thrown, "code").as_string().as_deref(),
        Some(code),
        "{:?}",
        e.message()
    );
    e.message().into()
}

#[wasm_bindgen_test]
fn every_golden_transcript_reassembles_frame_by_frame() {
    assert_eq!(GOLDEN.len(), 24);
    for (dialect, name, jsonl, want) in GOLDEN {
        let r = Reassembler::new(Some(dialect.to_string())).unwrap();
        for f in frames(jsonl) {
            let pushed = json(&r.push(f.into()).unwrap().into());
            assert_eq!(pushed["duplicate"], false, "{dialect}/{name}");
            assert!(pushed.get("gap").is_none(), "{dialect}/{name}");
        }
        let want: Value = serde_json::from_str(want).unwrap();
        assert_eq!(transcript(&r), want, "{dialect}/{name}");
    }
}

#[wasm_bindgen_test]
fn push_many_is_the_same_as_pushing_one_by_one() {
    for (dialect, name, jsonl, want) in GOLDEN {
        let one = Reassembler::new(Some(dialect.to_string())).unwrap();
        let mut applied = 0;
        for f in frames(jsonl) {
            applied += json(&one.push(f.into()).unwrap().into())["applied"]
                .as_u64()
                .unwrap();
        }
        let many = Reassembler::new(Some(dialect.to_string())).unwrap();
        let pushed = json(&many.push_many(array(&frames(jsonl))).unwrap().into());
        assert_eq!(
            pushed["applied"].as_u64(),
            Some(applied),
            "{dialect}/{name}"
        );
        assert_eq!(pushed["duplicate"], false);
        let want: Value = serde_json::from_str(want).unwrap();
        assert_eq!(transcript(&many), want, "{dialect}/{name}");
    }
}

#[wasm_bindgen_test]
fn duplicates_are_dropped_and_change_nothing() {
    for (dialect, name, jsonl, want) in GOLDEN {
        let r = Reassembler::new(Some(dialect.to_string())).unwrap();
        r.push_many(array(&frames(jsonl))).unwrap();
        for f in frames(jsonl) {
            let pushed = json(&r.push(f.clone().into()).unwrap().into());
            // Every frame of a weft server carries an event id: a second copy is a duplicate
            // (frames that decode to no event apply nothing either way).
            assert_eq!(pushed["applied"], 0, "{dialect}/{name}: {f}");
        }
        let again = json(&r.push_many(array(&frames(jsonl))).unwrap().into());
        assert_eq!(again["applied"], 0);
        assert_eq!(again["duplicate"], true, "{dialect}/{name}");
        let want: Value = serde_json::from_str(want).unwrap();
        assert_eq!(transcript(&r), want, "{dialect}/{name}");
    }
}

#[wasm_bindgen_test]
fn a_gap_is_reported_held_and_filled() {
    let (_, _, jsonl, want) = GOLDEN
        .iter()
        .find(|(d, n, _, _)| *d == "loom" && *n == "tool-call")
        .unwrap();
    let f = frames(jsonl);
    let r = Reassembler::new(Some("loom".into())).unwrap();
    r.push(f[0].clone().into()).unwrap();
    let pushed = json(&r.push(f[2].clone().into()).unwrap().into());
    assert_eq!(pushed["applied"], 0);
    assert_eq!(
        pushed["gap"],
        serde_json::json!({"run_id": "run-tool", "after_event_id": 1, "received": 3})
    );
    assert_eq!(r.last_event_id("run-tool"), 1.0);
    assert_eq!(r.last_event_id("no-such-run"), 0.0);
    let filled = json(&r.push(f[1].clone().into()).unwrap().into());
    assert_eq!(
        filled["applied"], 2,
        "the held frame is released with the one that fills the gap"
    );
    assert_eq!(r.last_event_id("run-tool"), 3.0);
    r.push_many(array(&f[3..])).unwrap();
    let want: Value = serde_json::from_str(want).unwrap();
    assert_eq!(transcript(&r), want);
}

#[wasm_bindgen_test]
fn frames_may_be_bytes() {
    let (_, _, jsonl, want) = GOLDEN[0];
    let r = Reassembler::new(Some("loom".into())).unwrap();
    for (i, f) in frames(jsonl).iter().enumerate() {
        let bytes = Uint8Array::from(f.as_bytes());
        let frame: JsValue = if i % 2 == 0 {
            bytes.into()
        } else {
            bytes.buffer().into()
        };
        r.push(frame).unwrap();
    }
    assert_eq!(transcript(&r), serde_json::from_str::<Value>(want).unwrap());
}

#[wasm_bindgen_test]
fn bad_input_throws_weft_errors_with_codes_and_changes_nothing() {
    let e = Reassembler::new(Some("klingon".into())).unwrap_err();
    let msg = weft_error(&e, "invalid_argument");
    assert!(msg.contains("klingon") && msg.contains("cueso"), "{msg}");

    let r = Reassembler::new(Some("loom".into())).unwrap();
    let cases: Vec<(JsValue, &str)> = vec![
        ("{not json".into(), "invalid_json"),
        ("[1, 2]".into(), "not_an_object"),
        ("{}".into(), "missing_type"),
        (
            r#"{"type":"run_stream_event","id":"r"}"#.into(),
            "invalid_field",
        ),
        (Uint8Array::from(&[0x7b, 0xff][..]).into(), "invalid_utf8"),
        (JsValue::from_f64(42.0), "invalid_argument"),
        (JsValue::NULL, "invalid_argument"),
    ];
    for (frame, code) in cases {
        let thrown = r.push(frame).unwrap_err();
        let msg = weft_error(&thrown, code);
        assert!(msg.starts_with("push()"), "{msg}");
    }
    let thrown = r
        .push_many(array(&[
            r#"{"type":"pong","id":"1"}"#.into(),
            "nope".into(),
        ]))
        .unwrap_err();
    let msg = weft_error(&thrown, "invalid_json");
    assert!(msg.contains("frame 1 of 2"), "{msg}");
    let empty = json(&r.transcript().unwrap().into());
    assert_eq!(
        empty,
        serde_json::json!({"messages": [], "tool_calls": [], "runs": []})
    );
}

/// A JS function recording what it is called with.
fn recorder(log: &Rc<RefCell<Vec<Value>>>) -> Function {
    let log = Rc::clone(log);
    Closure::<dyn FnMut(JsValue)>::new(move |v: JsValue| log.borrow_mut().push(json(&v)))
        .into_js_value()
        .unchecked_into()
}

#[wasm_bindgen_test]
fn events_reach_listeners_in_order_until_they_unsubscribe() {
    let (_, _, jsonl, _) = GOLDEN[0];
    let f = frames(jsonl);
    let r = Reassembler::new(Some("loom".into())).unwrap();
    let (a, b) = (Rc::default(), Rc::default());
    let off_a = r.on_event(recorder(&a));
    let _off_b = r.on_event(recorder(&b));
    r.push_many(array(&f[..3])).unwrap();
    off_a.call0(&JsValue::UNDEFINED).unwrap();
    off_a.call0(&JsValue::UNDEFINED).unwrap();
    r.push_many(array(&f[3..])).unwrap();
    let ids = |log: &Rc<RefCell<Vec<Value>>>| -> Vec<u64> {
        log.borrow()
            .iter()
            .map(|e| e["event_id"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(ids(&a), [1, 2, 3]);
    assert_eq!(ids(&b), (1..=f.len() as u64).collect::<Vec<_>>());
    let first = &b.borrow()[0];
    assert_eq!(first["type"], "run_start");
    assert_eq!(first["run_id"], "run-plain");
    assert_eq!(first["session_id"], "sess-7f3a");
}

/// What a listener gets is the loom event object with its envelope (`session_id`, `node_id`,
/// `event_id`) as the loom frame carries it, plus `run_id`: checked for every golden loom
/// frame that carries an event (`run_stream_event`), and for `run_end`, whose frame is the event
/// itself with the run's id as `id`.
#[wasm_bindgen_test]
fn listeners_get_the_loom_event_object_with_its_envelope() {
    for (dialect, name, jsonl, _) in GOLDEN.iter().filter(|g| g.0 == "loom") {
        let r = Reassembler::new(Some(dialect.to_string())).unwrap();
        let got: Rc<RefCell<Vec<Value>>> = Rc::default();
        let _off = r.on_event(recorder(&got));
        let mut want = Vec::new();
        for f in frames(jsonl) {
            let frame: Value = serde_json::from_str(&f).unwrap();
            let run = frame["id"].clone();
            let event = match (frame["type"].as_str(), &frame) {
                (Some("run_stream_event"), _) => frame["event"].as_object().cloned(),
                (Some("run_end"), Value::Object(end)) => {
                    let mut end = end.clone();
                    end.remove("id");
                    Some(end)
                }
                _ => None,
            };
            if let Some(mut ev) = event {
                ev.entry("run_id").or_insert(run);
                want.push(Value::Object(ev));
            }
            r.push(f.into()).unwrap();
        }
        let got: Vec<Value> = got
            .borrow()
            .iter()
            .filter(|e| e["type"] != "error")
            .cloned()
            .collect();
        assert!(want.len() >= 3, "{name}");
        assert_eq!(got, want, "{dialect}/{name}");
    }
}

#[wasm_bindgen_test]
fn a_listener_that_pushes_does_not_re_enter() {
    let (_, _, jsonl, want) = GOLDEN[0];
    let f = Rc::new(frames(jsonl));
    let r = Rc::new(Reassembler::new(Some("loom".into())).unwrap());
    let log: Rc<RefCell<Vec<String>>> = Rc::default();
    let depth = Rc::new(RefCell::new(0));
    let cb = {
        let (r, f, log, depth) = (
            Rc::clone(&r),
            Rc::clone(&f),
            Rc::clone(&log),
            Rc::clone(&depth),
        );
        Closure::<dyn FnMut(JsValue)>::new(move |ev: JsValue| {
            *depth.borrow_mut() += 1;
            let id = json(&ev)["event_id"].as_u64().unwrap() as usize;
            log.borrow_mut().push(format!("{id}@{}", depth.borrow()));
            // Feed the next frame from inside the callback, as a relay would; the transcript
            // must already include this event.
            assert!(r.transcript().is_ok());
            if id < f.len() {
                r.push(f[id].clone().into()).unwrap();
            }
            *depth.borrow_mut() -= 1;
        })
        .into_js_value()
        .unchecked_into::<Function>()
    };
    let _off = r.on_event(cb);
    r.push(f[0].clone().into()).unwrap();
    let want_log: Vec<String> = (1..=f.len()).map(|i| format!("{i}@1")).collect();
    assert_eq!(*log.borrow(), want_log, "in order, never nested");
    assert_eq!(transcript(&r), serde_json::from_str::<Value>(want).unwrap());
}

#[wasm_bindgen_test]
fn a_throwing_listener_does_not_stop_the_others() {
    let r = Reassembler::new(Some("cueso".into())).unwrap();
    let thrower: Function = Closure::<dyn FnMut(JsValue) -> Result<(), JsValue>>::new(|_| {
        Err(JsValue::from_str("listener bug"))
    })
    .into_js_value()
    .unchecked_into();
    // Keep the reported exception out of the test page's error handler.
    let window = js_sys::global();
    let report = Reflect::get(&window, &"reportError".into()).unwrap();
    Reflect::set(
        &window,
        &"reportError".into(),
        &Closure::<dyn FnMut(JsValue)>::new(|_| {}).into_js_value(),
    )
    .unwrap();
    let seen = Rc::default();
    let _a = r.on_event(thrower);
    let _b = r.on_event(recorder(&seen));
    r.push(r#"{"type":"content_delta","content":"Hi","role":"assistant"}"#.into())
        .unwrap();
    Reflect::set(&window, &"reportError".into(), &report).unwrap();
    assert_eq!(seen.borrow().len(), 1);
}

// ----- Client, without a server -----

fn options(v: Value) -> Ts<weft_sdk::types::ClientOptions> {
    Ts::new_unchecked(js_sys::JSON::parse(&v.to_string()).unwrap())
}

fn client(dialect: &str) -> Client {
    Client::new(options(serde_json::json!({
        "url": "ws://127.0.0.1:9",
        "dialect": dialect,
        "sessionId": "s-1",
        "reconnect": false,
    })))
    .unwrap()
}

async fn rejection(p: Promise) -> JsValue {
    JsFuture::from(p)
        .await
        .expect_err("the promise should reject")
}

#[wasm_bindgen_test]
fn client_options_are_checked() {
    let bad = [
        (
            serde_json::json!({"url": "ws://h", "dialect": "irc"}),
            "irc",
        ),
        (
            serde_json::json!({"url": "ftp://h", "dialect": "loom"}),
            "ftp",
        ),
        (
            serde_json::json!({"url": "ws://h", "dialect": "loom", "token": "a b"}),
            "token",
        ),
        (
            serde_json::json!({"url": "ws://h", "dialect": "loom", "requestTimeoutMs": -1}),
            "requestTimeoutMs",
        ),
        (serde_json::json!({"dialect": "loom"}), "url"),
        (
            serde_json::json!({"url": "ws://h", "dialect": "loom", "reconnect": "often"}),
            "ClientOptions",
        ),
        (
            serde_json::json!({"url": "ws://h", "dialect": "loom", "sessionId": 7}),
            "`sessionId` must be a string (got number)",
        ),
        (
            serde_json::json!({"url": "ws://h", "dialect": "loom", "reconnect": {"maxAttempts": 1.5}}),
            "`maxAttempts` must be a whole number",
        ),
        (
            serde_json::json!({"url": "ws://h", "dialect": "loom", "heartbeatIntervalMs": "1s"}),
            "`heartbeatIntervalMs` must be a number (got string)",
        ),
        (
            serde_json::json!("ws://h"),
            "invalid ClientOptions: expected an object (got string)",
        ),
        (
            serde_json::json!(["ws://h"]),
            "expected an object (got an array)",
        ),
    ];
    for (opts, mention) in bad {
        let thrown = Client::new(options(opts.clone())).unwrap_err();
        let msg = weft_error(&thrown, "invalid_argument");
        assert!(msg.contains(mention), "{opts}: {msg}");
    }
    let ok = Client::new(options(serde_json::json!({
        "url": "https://h.example",
        "dialect": "agentchat",
        "reconnect": {"initialDelayMs": 100, "maxAttempts": 3},
        "token": "abc.DEF-123",
        "sessionId": null,
        "somethingElse": true,
    })))
    .unwrap();
    assert_eq!(ok.dialect(), "agentchat");
    // The other options objects are read the same way.
    let run = |v: Value| {
        ok.run(Ts::new_unchecked(
            js_sys::JSON::parse(&v.to_string()).unwrap(),
        ))
    };
    let msg = weft_error(
        &run(serde_json::json!({"agent": "react"})).unwrap_err(),
        "invalid_argument",
    );
    assert!(
        msg.contains("invalid RunOptions: missing field `message`"),
        "{msg}"
    );
    let msg = weft_error(
        &run(serde_json::json!({"message": "hi", "verbose": "yes"})).unwrap_err(),
        "invalid_argument",
    );
    assert!(
        msg.contains("`verbose` must be a boolean (got string)"),
        "{msg}"
    );
    let tool = |v: Value| {
        ok.register_tool(
            Ts::new_unchecked(js_sys::JSON::parse(&v.to_string()).unwrap()),
            Function::new_no_args(""),
        )
    };
    let msg = weft_error(
        &tool(serde_json::json!({"name": "t", "readOnly": 1})).unwrap_err(),
        "invalid_argument",
    );
    assert!(
        msg.contains("invalid ToolDefinition: `readOnly` must be a boolean"),
        "{msg}"
    );
    tool(serde_json::json!({"name": "t", "inputSchema": {"type": "object"}, "readOnly": true}))
        .unwrap();
}

#[wasm_bindgen_test]
fn a_tool_schema_is_read_as_json_stringify_sees_it() {
    // Built in JavaScript: a Date (`toJSON`), an `undefined` field, a function, and numbers
    // whole, fractional, negative and beyond 2^53.
    let spec: JsValue = js_sys::eval(
        r#"({ name: "t", inputSchema: {
            type: "object",
            properties: { topic: { type: "string", enum: ["a", "b"] } },
            required: ["topic"],
            minimum: 1, step: 0.25, floor: -3, big: 2 ** 60, when: new Date(0),
            gone: undefined, fn() {}, list: [1, null, true, undefined],
        } })"#,
    )
    .unwrap();
    let def: weft_sdk::types::ToolDefinition =
        weft_sdk::marshal::from_ts(&Ts::new_unchecked(spec), "ToolDefinition").unwrap();
    assert_eq!(
        def.input_schema.unwrap().to_string(),
        serde_json::json!({
            "type": "object",
            "properties": {"topic": {"type": "string", "enum": ["a", "b"]}},
            "required": ["topic"],
            // 2^60 as JSON.stringify writes it (the shortest text that reads back as it).
            "minimum": 1, "step": 0.25, "floor": -3, "big": 1_152_921_504_606_847_000_u64,
            "when": "1970-01-01T00:00:00.000Z",
            "list": [1, null, true, null],
        })
        .to_string()
    );
    let cyclic = js_sys::eval(
        r#"(() => { const s = {}; s.self = s; return { name: "t", inputSchema: s }; })()"#,
    )
    .unwrap();
    let e = weft_sdk::marshal::from_ts::<weft_sdk::types::ToolDefinition>(
        &Ts::new_unchecked(cyclic),
        "ToolDefinition",
    )
    .unwrap_err();
    assert_eq!(
        e.message(),
        "invalid ToolDefinition: `inputSchema` must be a JSON value"
    );
}

#[wasm_bindgen_test]
async fn methods_a_dialect_cannot_serve_reject_naming_it() {
    let c = client("cueso");
    for p in [
        c.tools_list(),
        c.tool_show("read", None),
        c.user_messages("t", None),
    ] {
        let msg = weft_error(&rejection(p).await, "unsupported");
        assert!(msg.contains("cueso") && msg.contains("loom"), "{msg}");
    }
    let msg = weft_error(
        &rejection(c.tool_show("read", Some("xml".into()))).await,
        "invalid_argument",
    );
    assert!(msg.contains("xml"), "{msg}");
    for p in [c.context_info(), c.compact()] {
        let msg = weft_error(&rejection(p).await, "unsupported");
        assert!(msg.contains("cueso") && msg.contains("agentloop"), "{msg}");
    }
    c.close();
}

#[wasm_bindgen_test]
async fn a_refused_connection_rejects_connect_and_what_waited() {
    let c = client("loom");
    let statuses = Rc::default();
    let _off = c.on_status(recorder(&statuses));
    let run = c
        .run(Ts::new_unchecked(
            js_sys::JSON::parse(r#"{"message":"hi"}"#).unwrap(),
        ))
        .unwrap();
    assert!(!run.run_id().is_empty());
    let ping = c.ping();
    let msg = weft_error(&rejection(c.connect()).await, "connect_failed");
    assert!(msg.contains("ws://127.0.0.1:9/?session_id=s-1"), "{msg}");
    weft_error(&rejection(run.result()).await, "connect_failed");
    weft_error(&rejection(ping).await, "connect_failed");
    assert!(run.finished());
    let states: Vec<Value> = statuses
        .borrow()
        .iter()
        .map(|s| s["state"].clone())
        .collect();
    assert_eq!(states, ["connecting", "closed"]);
}

#[wasm_bindgen_test]
async fn a_thrown_value_that_is_not_an_error_reads_as_json_in_the_message() {
    let options = js_sys::eval(
        r#"({ url: "ws://127.0.0.1:9", dialect: "loom", reconnect: false,
              token: () => { throw { reason: "expired" }; } })"#,
    )
    .unwrap();
    let c = Client::new(Ts::new_unchecked(options)).unwrap();
    let msg = weft_error(&rejection(c.connect()).await, "connect_failed");
    assert!(
        msg.contains(r#"the token function threw: {"reason":"expired"}"#),
        "{msg}"
    );
}

#[wasm_bindgen_test]
async fn close_settles_everything_and_later_calls_fail() {
    let c = client("agentloop");
    let run = c
        .run(Ts::new_unchecked(
            js_sys::JSON::parse(r#"{"message":"hi"}"#).unwrap(),
        ))
        .unwrap();
    let events = run.events();
    let next = events.next();
    c.close();
    weft_error(&rejection(run.result()).await, "closed");
    let done = JsFuture::from(next).await.unwrap();
    assert_eq!(prop(&done, "done"), JsValue::TRUE);
    let thrown = c
        .run(Ts::new_unchecked(
            js_sys::JSON::parse(r#"{"message":"hi"}"#).unwrap(),
        ))
        .unwrap_err();
    weft_error(&thrown, "closed");
    weft_error(&rejection(c.ping()).await, "closed");
    weft_error(&rejection(c.connect()).await, "closed");
    let t = json(&c.transcript().unwrap().into());
    assert_eq!(t["runs"], serde_json::json!([]));
}

#[wasm_bindgen_test]
fn an_empty_message_is_refused() {
    let c = client("loom");
    let thrown = c
        .run(Ts::new_unchecked(
            js_sys::JSON::parse(r#"{"message":"  "}"#).unwrap(),
        ))
        .unwrap_err();
    weft_error(&thrown, "invalid_argument");
    let thrown = c
        .run(Ts::new_unchecked(
            js_sys::JSON::parse(r#"{"text":"hi"}"#).unwrap(),
        ))
        .unwrap_err();
    let msg = weft_error(&thrown, "invalid_argument");
    assert!(
        msg.contains("RunOptions") && msg.contains("message"),
        "{msg}"
    );
    c.close();
}
