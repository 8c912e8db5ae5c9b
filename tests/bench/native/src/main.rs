//! The native half of `npm run bench` (tests/bench/run.mjs).
//!
//! `weft-bench gen --out DIR [--steps N] [--steps-per-message S] [--deltas D] [--fragments F]`
//!   builds one synthetic assistant stream as canonical events — runs ("messages") of S react
//!   steps, each step D text deltas of 4–8 characters and one tool call whose JSON arguments
//!   arrive in F fragments, then the tool's start and end — stamps it with weft's `Sequencer`
//!   and encodes it with weft's own `Encoder` into every dialect: `DIR/<dialect>.jsonl`, one
//!   frame a line, and `DIR/meta.json` with the counts.
//!
//! `weft-bench native --frames DIR [--providers DIR] [--runs N] [--min-ms M]`
//!   measures, natively, the reassembler on those frames per dialect (decode only, and decode +
//!   reassemble) and the provider stream decoders on the bodies in `--providers`
//!   (`<provider>.<name>` files: openai, openai-responses, anthropic, gemini), and prints JSON.

#![allow(clippy::print_stdout)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{json, Value};
use weft_agent::provider::{Provider, StreamDecoder};
use weft_protocol::event::NodeResult;
use weft_protocol::{
    Agent, Dialect, Encoder, Event, FinishReason, Limits, Reassembler, Sequencer, Usage,
};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("gen") => gen(&args[1..]),
        Some("native") => native(&args[1..]),
        _ => Err(
            "usage: weft-bench gen --out DIR [...] | weft-bench native --frames DIR [...]".into(),
        ),
    };
    if let Err(e) = result {
        eprintln!("weft-bench: {e}");
        std::process::exit(2);
    }
}

fn opt(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn num(args: &[String], name: &str, default: u64) -> Result<u64, String> {
    match opt(args, name) {
        None => Ok(default),
        Some(v) => v.parse().map_err(|_| format!("{name}: not a number: {v}")),
    }
}

// ---- the synthetic stream -------------------------------------------------------------------

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: &[&str] = &[
    "the", "stream", "frame", "tool", "call", "reply", "agent", "model", "token", "socket", "weft",
    "loom", "delta", "value", "state", "queue", "alpha", "bravo", "kilo", "echo",
];

/// A text delta of 4–8 characters (a leading space and a word piece, as models stream).
fn delta(rng: &mut Rng) -> String {
    let len = 4 + rng.below(5) as usize;
    let mut s = String::with_capacity(len);
    s.push(' ');
    while s.len() < len {
        let w = WORDS[rng.below(WORDS.len() as u64) as usize];
        for c in w.chars() {
            if s.len() == len {
                break;
            }
            s.push(c);
        }
    }
    s
}

/// JSON arguments of a tool call, and their split into `n` fragments at arbitrary places.
fn arguments(rng: &mut Rng, call: u64, n: usize) -> (Value, Vec<String>) {
    let words: Vec<&str> = (0..6)
        .map(|_| WORDS[rng.below(WORDS.len() as u64) as usize])
        .collect();
    let args = json!({
        "path": format!("src/module_{call}/file_{}.rs", rng.below(1000)),
        "query": words.join(" "),
        "line": rng.below(5000),
        "context": true,
    });
    let text = serde_json::to_string(&args).unwrap_or_default();
    let chars: Vec<char> = text.chars().collect();
    let mut cuts: Vec<usize> = Vec::new();
    // n fragments: n - 1 distinct cut points, roughly even with jitter.
    for i in 1..n {
        let even = i * chars.len() / n;
        let jitter = rng.below(3) as usize;
        let c = (even + jitter).clamp(1, chars.len() - 1);
        if cuts.last().is_none_or(|&l| c > l) {
            cuts.push(c);
        } else {
            cuts.push(cuts.last().copied().unwrap_or(0) + 1);
        }
    }
    let mut frags = Vec::with_capacity(n);
    let mut prev = 0;
    for c in cuts.into_iter().chain([chars.len()]) {
        frags.push(chars[prev..c].iter().collect());
        prev = c;
    }
    (args, frags)
}

struct Spec {
    steps: u64,
    steps_per_message: u64,
    deltas: u64,
    fragments: usize,
}

/// The canonical events of one run ("message") of `steps` react steps.
fn run_events(rng: &mut Rng, run: u64, steps: u64, first_call: u64, spec: &Spec) -> Vec<Event> {
    let mut ev = vec![Event::RunStart {
        run_id: Some(format!("run-{run}")),
        message: Some(format!(
            "Benchmark message {run}: work through {steps} steps."
        )),
        agent: Some(Agent::React),
    }];
    let mut total = Usage::default();
    let mut last_text = String::new();
    for s in 0..steps {
        let call = first_call + s;
        let call_id = format!("call_{call}");
        let name = if call.is_multiple_of(2) {
            "read"
        } else {
            "calculator"
        };
        ev.push(Event::NodeEnter { id: "think".into() });
        let mut text = String::new();
        for _ in 0..spec.deltas {
            let d = delta(rng);
            text.push_str(&d);
            ev.push(Event::MessageChunk {
                content: d,
                id: "think".into(),
            });
        }
        let (args, frags) = arguments(rng, call, spec.fragments);
        ev.push(Event::ToolCallChunk {
            call_id: Some(call_id.clone()),
            name: Some(name.into()),
            arguments_delta: String::new(),
        });
        for f in frags {
            ev.push(Event::ToolCallChunk {
                call_id: Some(call_id.clone()),
                name: Some(name.into()),
                arguments_delta: f,
            });
        }
        ev.push(Event::ToolCall {
            call_id: Some(call_id.clone()),
            name: name.into(),
            arguments: args.into(),
        });
        let u = Usage {
            prompt_tokens: 1000 + 10 * s,
            completion_tokens: spec.deltas + 20,
            total_tokens: 1000 + 10 * s + spec.deltas + 20,
        };
        total.add(&u);
        ev.push(Event::Usage(u));
        ev.push(Event::LlmComplete {
            content: text.clone(),
            tool_calls: vec![name.into()],
            finish_reason: FinishReason::ToolCalls,
        });
        ev.push(Event::NodeExit {
            id: "think".into(),
            result: NodeResult::Ok,
        });
        ev.push(Event::NodeEnter { id: "act".into() });
        ev.push(Event::ToolStart {
            call_id: Some(call_id.clone()),
            name: name.into(),
        });
        ev.push(Event::ToolEnd {
            call_id: Some(call_id),
            name: name.into(),
            result: format!("result of call {call}: ok ({} bytes)", rng.below(10_000)),
            is_error: false,
        });
        ev.push(Event::NodeExit {
            id: "act".into(),
            result: NodeResult::Ok,
        });
        last_text = text;
    }
    ev.push(Event::RunEnd {
        reply: last_text,
        usage: None,
        total_usage: Some(total),
        iteration_count: Some(steps),
        paused: false,
        tool_calls: Vec::new(),
    });
    ev
}

fn gen(args: &[String]) -> Result<(), String> {
    let out = PathBuf::from(opt(args, "--out").ok_or("gen: --out DIR is required")?);
    let spec = Spec {
        steps: num(args, "--steps", 2000)?,
        steps_per_message: num(args, "--steps-per-message", 10)?.max(1),
        deltas: num(args, "--deltas", 100)?,
        fragments: num(args, "--fragments", 10)?.max(1) as usize,
    };
    let seed = num(args, "--seed", 0x5eed_f00d)?;
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;

    // One canonical stream (the same for every dialect), runs of `steps_per_message` steps.
    let mut rng = Rng(seed | 1);
    let mut runs: Vec<(String, Vec<Event>)> = Vec::new();
    let mut done = 0;
    let mut run = 0;
    while done < spec.steps {
        let steps = spec.steps_per_message.min(spec.steps - done);
        runs.push((
            format!("run-{run}"),
            run_events(&mut rng, run, steps, done, &spec),
        ));
        done += steps;
        run += 1;
    }
    let events: usize = runs.iter().map(|(_, e)| e.len()).sum();

    let mut meta = json!({
        "steps": spec.steps,
        "steps_per_message": spec.steps_per_message,
        "messages": runs.len(),
        "text_deltas": spec.steps * spec.deltas,
        "tool_calls": spec.steps,
        "fragments_per_call": spec.fragments,
        "canonical_events": events,
        "dialects": {},
    });
    for dialect in Dialect::ALL {
        let mut text = String::new();
        let mut frames = 0u64;
        for (run_id, evs) in &runs {
            // One sequencer and one encoder per run, as the server keeps them.
            let mut seq = Sequencer::new(Some("sess-bench".into()), run_id.clone());
            let mut enc = Encoder::new(dialect, seed);
            for e in evs {
                for f in enc.encode(&seq.stamp(e.clone())) {
                    debug_assert!(!f.contains('\n'));
                    text.push_str(&f);
                    text.push('\n');
                    frames += 1;
                }
            }
        }
        let path = out.join(format!("{dialect}.jsonl"));
        std::fs::write(&path, &text).map_err(|e| format!("{}: {e}", path.display()))?;
        meta["dialects"][dialect.as_str()] =
            json!({ "frames": frames, "bytes": text.len() - frames as usize });
    }
    let path = out.join("meta.json");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&meta).unwrap_or_default(),
    )
    .map_err(|e| format!("{}: {e}", path.display()))?;
    println!("{}", serde_json::to_string(&meta).unwrap_or_default());
    Ok(())
}

// ---- native measurements --------------------------------------------------------------------

fn read_lines(path: &Path) -> Result<Vec<Vec<u8>>, String> {
    let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(text
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect())
}

/// Runs `f` `runs` times (each at least `min_ms`, repeating the body), returns seconds per body.
fn measure(runs: u64, min_ms: f64, mut f: impl FnMut()) -> Vec<f64> {
    f(); // warm-up
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            let mut n = 0u64;
            loop {
                f();
                n += 1;
                let el = start.elapsed().as_secs_f64();
                if el * 1000.0 >= min_ms {
                    return el / n as f64;
                }
            }
        })
        .collect()
}

fn native(args: &[String]) -> Result<(), String> {
    let frames_dir =
        PathBuf::from(opt(args, "--frames").ok_or("native: --frames DIR is required")?);
    let runs = num(args, "--runs", 5)?.max(1);
    let min_ms = num(args, "--min-ms", 200)? as f64;
    let mut out = json!({ "reassembler": {}, "providers": {} });

    for dialect in Dialect::ALL {
        let frames = read_lines(&frames_dir.join(format!("{dialect}.jsonl")))?;
        let bytes: usize = frames.iter().map(Vec::len).sum();
        let mut check = Reassembler::new(dialect);
        for f in &frames {
            check
                .push_frame(f)
                .map_err(|e| format!("{dialect}: a generated frame does not reassemble: {e}"))?;
        }
        let messages = check.transcript().messages.len();
        let tool_calls = check.transcript().tool_calls.len();
        let decode = measure(runs, min_ms, || {
            for f in &frames {
                let _ = std::hint::black_box(dialect.decode_server(f, Limits::default()));
            }
        });
        let reassemble = measure(runs, min_ms, || {
            let mut r = Reassembler::new(dialect);
            for f in &frames {
                let _ = r.push_frame(f);
            }
            std::hint::black_box(r.transcript());
        });
        out["reassembler"][dialect.as_str()] = json!({
            "frames": frames.len(),
            "bytes": bytes,
            "messages": messages,
            "tool_calls": tool_calls,
            "decode_s": decode,
            "reassemble_s": reassemble,
        });
    }

    if let Some(dir) = opt(args, "--providers") {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| format!("{dir}: {e}"))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for path in entries {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_string();
            let provider = match name.split('.').next().unwrap_or_default() {
                "openai" => Provider::OpenAi,
                "openai-responses" => Provider::OpenAiResponses,
                "anthropic" => Provider::Anthropic,
                "gemini" => Provider::Gemini,
                _ => continue,
            };
            let body = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            // Count what one pass decodes, and check it decodes at all.
            let mut deltas = 0u64;
            let mut d = StreamDecoder::new(provider);
            for piece in body.chunks(1400) {
                d.push(piece).map_err(|e| format!("{name}: {e}"))?;
                while d.poll().is_some() {
                    deltas += 1;
                }
            }
            d.finish().map_err(|e| format!("{name}: {e}"))?;
            while d.poll().is_some() {
                deltas += 1;
            }
            // Pieces of 1400 bytes: what a TCP segment brings.
            let secs = measure(runs, min_ms, || {
                let mut d = StreamDecoder::new(provider);
                for piece in body.chunks(1400) {
                    let _ = d.push(piece);
                    while let Some(x) = d.poll() {
                        std::hint::black_box(x);
                    }
                }
                let _ = d.finish();
                while let Some(x) = d.poll() {
                    std::hint::black_box(x);
                }
            });
            out["providers"][&name] = json!({
                "provider": provider.as_str(),
                "bytes": body.len(),
                "deltas": deltas,
                "decode_s": secs,
            });
        }
    }
    let mut s = String::new();
    let _ = write!(s, "{}", out);
    println!("{s}");
    Ok(())
}
