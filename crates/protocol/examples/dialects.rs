//! `npm start` (until the server lands): one agent run — a tool call with streamed arguments —
//! encoded into all four dialects, then reassembled from each dialect's frames. It shows the
//! whole idea of weft-protocol in one screen: one canonical run, four wires, one transcript.
//!
//! `cargo run -p weft-protocol --example dialects [plain-reply|tool-call|approval-granted|...]`

#![allow(clippy::print_stdout)]

#[path = "../tests/common/mod.rs"]
mod common;

use weft_protocol::{Dialect, Encoder, Reassembler};

fn main() {
    let wanted = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "tool-call".into());
    let scenarios = common::scenarios();
    let Some((name, run)) = scenarios.iter().find(|(n, _)| *n == wanted) else {
        let names: Vec<_> = scenarios.iter().map(|(n, _)| *n).collect();
        eprintln!("unknown scenario {wanted:?}; try one of {names:?}");
        std::process::exit(2);
    };
    println!(
        "weft-protocol: the canonical run `{name}` ({} events) on each wire\n",
        run.len()
    );
    let mut transcripts = Vec::new();
    for dialect in Dialect::ALL {
        let mut encoder = Encoder::new(dialect, 1);
        let frames: Vec<String> = run.iter().flat_map(|e| encoder.encode(e)).collect();
        println!(
            "── {dialect} (endpoint {}) — {} frames",
            dialect.endpoint(),
            frames.len()
        );
        for f in &frames {
            println!("  {f}");
        }
        let mut r = Reassembler::new(dialect);
        for f in &frames {
            if let Err(e) = r.push_frame(f.as_bytes()) {
                println!("  !! {e}");
            }
        }
        transcripts.push(r.transcript().clone());
        println!();
    }
    let same = transcripts.windows(2).all(|w| w[0] == w[1]);
    println!("── reassembled transcript (identical from all four dialects: {same})");
    println!(
        "{}",
        serde_json::to_string_pretty(&transcripts[0]).unwrap_or_default()
    );
}
