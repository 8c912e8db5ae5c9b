//! Entry points for the fuzzers in `fuzz/` and for the regression tests that replay their
//! crashers (STYLE 8). Each runs every decoder it can on the input and must never panic; the
//! assertions are that the fast decode path agrees with the general one, and the JSON reader
//! with serde_json.

use alloc::vec::Vec;

use crate::dialect::{Dialect, Encoder};
use crate::frame::Limits;
use crate::reassembler::Reassembler;

/// Decodes `data` in every direction and reassembles it: the first byte picks the dialect, the
/// rest is split into frames on `\n`. Re-encodes whatever decodes and decodes that again (also
/// as the AI SDK's chunks and AG-UI events, and each frame as an AI SDK request body, an AG-UI
/// `RunAgentInput` and an AG-UI event). A
/// second reassembler, asked for no events, applies deltas in place: it must agree with the
/// first push by push.
pub fn decode_reassemble(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let dialect = Dialect::ALL[usize::from(pick) % Dialect::ALL.len()];
    let limits = Limits::default();
    let mut reassembler = Reassembler::new(dialect).with_events();
    let mut in_place = Reassembler::new(dialect);
    let mut encoder = Encoder::new(dialect, u64::from(pick));
    let mut chunks = crate::dialect::aisdk::Encoder::new();
    let mut agui = crate::dialect::agui::Encoder::new();
    let mut agui_back = crate::dialect::agui::Decoder::new();
    for frame in rest.split(|&b| b == b'\n') {
        let _ = crate::dialect::aisdk::decode_request(frame, limits);
        let _ = crate::dialect::agui::decode_request(frame, limits);
        if let Ok(read) = crate::dialect::agui::decode_event(frame, limits) {
            let _ = agui_back.decode(&read);
        }
        if let Ok(command) = dialect.decode_request(frame, limits) {
            if let Ok(text) = dialect.encode_request(&command, "fuzz") {
                let _ = dialect.decode_request(text.as_bytes(), limits);
            }
        }
        // The fast path answers only as the general one does (dialect::fast).
        if let Some(seq) = crate::dialect::fast::decode_server(dialect, frame) {
            let general = dialect.decode_server_general(frame, limits);
            assert_eq!(general.ok(), Some(alloc::vec![seq]), "fast path disagrees");
        }
        if let Ok(events) = dialect.decode_server(frame, limits) {
            let mut frames: Vec<alloc::string::String> = Vec::new();
            for ev in &events {
                frames.extend(encoder.encode(ev));
                for chunk in chunks.encode(ev) {
                    let parsed: Result<serde_json::Value, _> = serde_json::from_str(&chunk);
                    assert!(parsed.is_ok(), "a chunk that is not JSON: {chunk}");
                }
                // Every AG-UI event weft writes reads back as what it wrote.
                for event in agui.encode(ev) {
                    let text = event.to_json();
                    let read = crate::dialect::agui::decode_event(text.as_bytes(), limits);
                    assert_eq!(
                        read.ok(),
                        Some(event),
                        "an AG-UI event that does not read back"
                    );
                }
            }
            for f in &frames {
                let _ = dialect.decode_server(f.as_bytes(), limits);
            }
        }
        let pushed = reassembler.push_frame(frame);
        while reassembler.poll().is_some() {}
        let same = match (&pushed, in_place.push_frame(frame)) {
            (Ok(a), Ok(b)) => *a == b,
            (Err(a), Err(b)) => a.code() == b.code(),
            _ => false,
        };
        assert!(same, "the in-place path disagrees on a push");
        assert!(
            reassembler.transcript() == in_place.transcript(),
            "the in-place path disagrees on the transcript"
        );
    }
    let _ = reassembler.transcript().total_usage();
    // The same bytes as the body of an AG-UI response, read by a client of the thread; and each
    // frame as a JSON Patch on a small state, which applies whole or leaves it as it was.
    let mut thread = crate::dialect::agui::Thread::new("fuzz");
    let turn = crate::dialect::agui::Turn {
        message: Some("fuzz".into()),
        ..Default::default()
    };
    if thread.begin("fuzz", turn).is_ok() {
        let _ = thread.push(rest);
        let _ = thread.finish();
        let _ = thread.waiting_calls();
    }
    let state = crate::json::RawJson::parse(r#"{"a":[1,{"b":null}],"c":"d"}"#);
    for frame in rest.split(|&b| b == b'\n') {
        let patch = core::str::from_utf8(frame)
            .ok()
            .and_then(crate::json::RawJson::parse);
        if let (Some(state), Some(patch)) = (&state, patch) {
            let _ = state.patched(&patch);
        }
    }
}

/// The JSON reader on arbitrary bytes: where serde_json reads a value, the reader reads the same
/// one (floats to the bit); where serde_json refuses the text, so does the reader.
pub fn json_reader(data: &[u8]) {
    let Ok(text) = core::str::from_utf8(data) else {
        return;
    };
    let tree = crate::json::parse(text).ok();
    // `RawJson::parse` keeps text it finds canonical as it is: that must be the text it would
    // write from the tree.
    assert!(
        crate::json::RawJson::parse(text) == tree.as_ref().map(crate::json::RawJson::from_tree),
        "RawJson::parse disagrees with reading the tree and writing it"
    );
    let ours = tree.map(|j| j.to_serde());
    let theirs: Option<serde_json::Value> = serde_json::from_str(text).ok();
    let write = |v: Option<serde_json::Value>| v.map(|v| serde_json::to_string(&v).ok());
    assert!(
        write(ours) == write(theirs),
        "the JSON reader disagrees with serde_json"
    );
}
