//! Golden streams of the AI SDK dialect: for every shared scenario,
//! `tests/fixtures/aisdk/<name>.jsonl` holds the UI message chunks its requests get, one per
//! line, `[DONE]` where one request's stream ends. A run that asks for an approval ends its
//! stream there ([`aisdk::Encoder::pause`]); the answer's request carries on with a fresh
//! encoder, as the server does. `WEFT_BLESS=1` rewrites them; tests/aisdk feeds them to the AI
//! SDK's own stream reader.

mod common;

use std::path::PathBuf;

use weft_protocol::dialect::aisdk;
use weft_protocol::{Event, Sequenced};

fn streams_of(run: &[Sequenced]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut enc = aisdk::Encoder::new();
    for ev in run {
        lines.extend(enc.encode(ev));
        if matches!(ev.event, Event::ToolApproval { .. }) {
            lines.extend(enc.pause());
            lines.push("[DONE]".into());
            enc = aisdk::Encoder::new();
        }
    }
    lines.push("[DONE]".into());
    lines
}

#[test]
fn golden_streams() {
    let bless = std::env::var_os("WEFT_BLESS").is_some();
    for (name, run) in common::scenarios() {
        let jsonl = streams_of(&run).join("\n") + "\n";
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/aisdk")
            .join(format!("{name}.jsonl"));
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &jsonl).unwrap();
        }
        let recorded = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (run with WEFT_BLESS=1)", path.display()));
        assert_eq!(jsonl, recorded, "aisdk/{name}: encoding changed");
    }
}

#[test]
fn every_stream_opens_what_it_closes_and_ends_once() {
    for (name, run) in common::scenarios() {
        let lines = streams_of(&run);
        for stream in lines.split(|l| l == "[DONE]").filter(|s| !s.is_empty()) {
            let chunks: Vec<serde_json::Value> = stream
                .iter()
                .map(|c| serde_json::from_str(c).unwrap())
                .collect();
            let kinds: Vec<&str> = chunks.iter().map(|c| c["type"].as_str().unwrap()).collect();
            assert_eq!(kinds[0], "start", "{name}: {kinds:?}");
            let ends = kinds
                .iter()
                .filter(|k| ["finish", "error", "abort"].contains(k))
                .count();
            assert_eq!(ends, 1, "{name}: one end per stream: {kinds:?}");
            for (open, close) in [
                ("text-start", "text-end"),
                ("reasoning-start", "reasoning-end"),
                ("start-step", "finish-step"),
            ] {
                let opened = kinds.iter().filter(|k| **k == open).count();
                let closed = kinds.iter().filter(|k| **k == close).count();
                assert_eq!(opened, closed, "{name}: {open}/{close} in {kinds:?}");
            }
            // Every delta belongs to an open part of its kind.
            let mut open: Vec<String> = Vec::new();
            for c in &chunks {
                let kind = c["type"].as_str().unwrap();
                let id = c["id"].as_str().unwrap_or_default().to_string();
                if kind.ends_with("-start") && kind != "tool-input-start" {
                    open.push(id);
                } else if kind.ends_with("-delta") && kind != "tool-input-delta" {
                    assert!(open.contains(&id), "{name}: {c} outside its part");
                } else if kind.ends_with("-end") {
                    open.retain(|o| *o != id);
                }
            }
        }
    }
}
