//! The provider codecs against real recorded provider streams (`tests/fixtures/providers/`, copied from the shared fixtures;
//! see its SOURCES.md), split at every kind of byte boundary, plus request building and HTTP
//! error mapping.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{json, Value};
use weft_agent::provider::workers_ai_rest_base;
use weft_agent::provider::{
    fuzz_stream_decoder, ChatMessage, ChatRequest, Delta, FinishReason, HttpRequest, Provider,
    ProviderConfig, ProviderError, StreamDecoder, ToolCall, ToolDef, ToolResult,
    REDACTED_REASONING, WORKERS_AI_DEFAULT_MAX_TOKENS, WORKERS_AI_DEFAULT_MODEL,
};

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/providers");

/// Every fixture and the codec that reads it. `every_fixture_is_listed` keeps this complete.
const ALL_FIXTURES: &[(&str, Provider)] = &[
    ("openai/chat-text-usage.gpt-4o.sse", Provider::OpenAi),
    (
        "openai/chat-parallel-tool-calls.gpt-4o.sse",
        Provider::OpenAi,
    ),
    (
        "openai/chat-parallel-tool-calls-obfuscation.gpt-4o.sse",
        Provider::OpenAi,
    ),
    (
        "openai/chat-multiple-choices-n3.gpt-4o.sse",
        Provider::OpenAi,
    ),
    ("openai/chat-refusal.gpt-4o.sse", Provider::OpenAi),
    ("openai/chat-max-tokens-length.gpt-4o.sse", Provider::OpenAi),
    ("openai/azure-model-router.1.chunks.txt", Provider::OpenAi),
    (
        "openai/responses-reasoning-text-function-call.gpt-5.5.sse",
        Provider::OpenAiResponses,
    ),
    (
        "openai/responses-text.gpt-4o.sse",
        Provider::OpenAiResponses,
    ),
    (
        "openai/openai-error.1.chunks.txt",
        Provider::OpenAiResponses,
    ),
    (
        "anthropic/text-only.claude-haiku-4-5.sse",
        Provider::Anthropic,
    ),
    ("anthropic/tool_use_response.txt", Provider::Anthropic),
    (
        "anthropic/thinking-text.claude-sonnet-4.sse",
        Provider::Anthropic,
    ),
    (
        "anthropic/thinking-then-tool-use.claude-haiku-4-5.sse",
        Provider::Anthropic,
    ),
    ("anthropic/redacted-thinking.sse", Provider::Anthropic),
    (
        "gemini/streaming-success-thinking-function-call-thought-summary-signature.txt",
        Provider::Gemini,
    ),
    (
        "gemini/streaming-success-basic-reply-short.txt",
        Provider::Gemini,
    ),
    (
        "gemini/google-stream-no-args-tool-call.chunks.txt",
        Provider::Gemini,
    ),
    (
        "gemini/streaming-failure-error-mid-stream.txt",
        Provider::Gemini,
    ),
    (
        "openai-compatible/openrouter-reasoning-midstream-error.sse",
        Provider::OpenAi,
    ),
    (
        "openai-compatible/groq-reasoning-event-error.gpt-oss-120b.sse",
        Provider::OpenAi,
    ),
    (
        "openai-compatible/groq-tool-call-usage.gpt-oss-120b.sse",
        Provider::OpenAi,
    ),
    (
        "openai-compatible/deepseek-tool-call.chunks.txt",
        Provider::OpenAi,
    ),
    (
        "openai-compatible/anthropic-fallback-tool-call.sse",
        Provider::OpenAi,
    ),
    (
        "workers-ai/native-text-usage.llama-3.3-70b.sse",
        Provider::WorkersAi,
    ),
    (
        "workers-ai/native-whole-tool-calls.llama-3.3-70b.sse",
        Provider::WorkersAi,
    ),
    (
        "workers-ai/native-fragment-tool-call.llama-4-scout.sse",
        Provider::WorkersAi,
    ),
    (
        "workers-ai/chat-chunks-reasoning-usage.qwen3-30b.sse",
        Provider::WorkersAi,
    ),
    (
        "workers-ai/chat-chunks-parallel-tool-calls.llama-4-scout.sse",
        Provider::WorkersAi,
    ),
    (
        "workers-ai/native-error-mid-stream.sse",
        Provider::WorkersAi,
    ),
    ("workers-ai/native-cut-off.sse", Provider::WorkersAi),
];

fn provider_of(name: &str) -> Provider {
    ALL_FIXTURES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, p)| *p)
        .unwrap_or_else(|| panic!("{name} is not in ALL_FIXTURES"))
}

/// The fixture as the provider sent it. JSONL fixtures (`*.chunks.txt`, vercel/ai's format) are
/// rewrapped as SSE, as SOURCES.md says: `data: <line>\n\n`, plus `event: <type>` for Anthropic.
fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(FIXTURES).join(name);
    let raw = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if !name.ends_with(".chunks.txt") {
        return raw;
    }
    let text = String::from_utf8(raw).expect("JSONL fixtures are UTF-8");
    let mut sse = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if provider_of(name) == Provider::Anthropic {
            let value: Value = serde_json::from_str(line).expect("JSONL line is JSON");
            let kind = value["type"].as_str().unwrap_or("message");
            sse.push_str(&format!("event: {kind}\n"));
        }
        sse.push_str(&format!("data: {line}\n\n"));
    }
    sse.into_bytes()
}

/// Everything one decode produced.
#[derive(Debug, Clone, PartialEq)]
struct Decoded {
    deltas: Vec<Delta>,
    push_errors: Vec<ProviderError>,
    end: Result<(), ProviderError>,
}

fn decode_pieces<'a>(provider: Provider, pieces: impl IntoIterator<Item = &'a [u8]>) -> Decoded {
    let mut decoder = StreamDecoder::new(provider);
    let mut deltas = Vec::new();
    let mut push_errors = Vec::new();
    for piece in pieces {
        if let Err(e) = decoder.push(piece) {
            push_errors.push(e);
        }
        while let Some(delta) = decoder.poll() {
            deltas.push(delta);
        }
    }
    let end = decoder.finish();
    while let Some(delta) = decoder.poll() {
        deltas.push(delta);
    }
    assert_eq!(decoder.finish(), Ok(()), "finish is idempotent");
    assert_eq!(decoder.poll(), None);
    Decoded {
        deltas,
        push_errors,
        end,
    }
}

fn decode_whole(provider: Provider, body: &[u8]) -> Decoded {
    decode_pieces(provider, [body])
}

/// A deterministic xorshift generator: reproducible random splits without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Splits `body` at random places: many tiny pieces, some large ones, some empty.
fn random_pieces(body: &[u8], seed: u64) -> Vec<&[u8]> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let max_piece = [1, 2, 3, 7, 64, 1024][rng.below(6)];
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let len = rng.below(max_piece + 1).min(body.len() - at);
        pieces.push(&body[at..at + len]);
        at += len;
    }
    pieces
}

/// Merges what splitting may legitimately change: adjacent text, reasoning or argument
/// fragments. (The codecs emit one delta per provider event, so in fact nothing changes.)
fn merged(deltas: &[Delta]) -> Vec<Delta> {
    let mut out: Vec<Delta> = Vec::new();
    for delta in deltas {
        match (out.last_mut(), delta) {
            (Some(Delta::Text(a)), Delta::Text(b))
            | (Some(Delta::Reasoning(a)), Delta::Reasoning(b)) => a.push_str(b),
            (
                Some(Delta::ToolCallArgs {
                    index: i,
                    fragment: a,
                }),
                Delta::ToolCallArgs {
                    index: j,
                    fragment: b,
                },
            ) if i == j => a.push_str(b),
            _ => out.push(delta.clone()),
        }
    }
    out
}

/// One reassembled tool call.
#[derive(Debug, Clone, PartialEq)]
struct Call {
    id: String,
    name: String,
    arguments: String,
    signature: Option<String>,
    ended: bool,
}

impl Call {
    fn args_json(&self) -> Value {
        serde_json::from_str(&self.arguments).unwrap_or_else(|e| {
            panic!(
                "arguments of {} are not JSON ({e}): {}",
                self.name, self.arguments
            )
        })
    }
}

/// What a consumer reassembles from the deltas; building it also checks the invariants the
/// `Delta` docs promise.
#[derive(Debug, Default)]
struct Summary {
    text: String,
    reasoning: String,
    calls: Vec<Call>,
    usage: Option<(u64, u64, u64)>,
    finish: Option<FinishReason>,
    errors: Vec<ProviderError>,
}

fn summarize(deltas: &[Delta]) -> Summary {
    let mut s = Summary::default();
    let mut finished = false;
    for delta in deltas {
        match delta {
            Delta::Text(t) => {
                assert!(!t.is_empty(), "empty text delta");
                s.text.push_str(t);
            }
            Delta::Reasoning(t) => {
                assert!(!t.is_empty(), "empty reasoning delta");
                s.reasoning.push_str(t);
            }
            Delta::ToolCallStart { index, id, name } => {
                assert_eq!(*index as usize, s.calls.len(), "dense call indices");
                assert!(!finished, "call started after Finish");
                s.calls.push(Call {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: String::new(),
                    signature: None,
                    ended: false,
                });
            }
            Delta::ToolCallArgs { index, fragment } => {
                assert!(!fragment.is_empty(), "empty argument fragment");
                let call = &mut s.calls[*index as usize];
                assert!(!call.ended, "arguments after the end of call {index}");
                call.arguments.push_str(fragment);
            }
            Delta::ToolCallSignature { index, signature } => {
                let call = &mut s.calls[*index as usize];
                assert!(!call.ended, "signature after the end of call {index}");
                call.signature = Some(signature.clone());
            }
            Delta::ToolCallEnd { index, id } => {
                let call = &mut s.calls[*index as usize];
                assert!(!call.ended, "call {index} ended twice");
                assert_eq!(&call.id, id, "end repeats the call id");
                call.ended = true;
            }
            Delta::Usage {
                prompt_tokens,
                completion_tokens,
                total_tokens,
            } => {
                assert!(s.usage.is_none(), "usage reported twice");
                s.usage = Some((*prompt_tokens, *completion_tokens, *total_tokens));
            }
            Delta::Finish(reason) => {
                assert!(s.finish.is_none(), "finish reported twice");
                assert!(s.calls.iter().all(|c| c.ended), "a call is open at Finish");
                s.finish = Some(reason.clone());
                finished = true;
            }
            Delta::Error(e) => s.errors.push(e.clone()),
        }
    }
    s
}

/// Decodes a fixture whole, checks that every other way of splitting it gives the same deltas,
/// and summarizes it.
fn decode_fixture(name: &str) -> (Decoded, Summary) {
    let provider = provider_of(name);
    let body = fixture(name);
    let whole = decode_whole(provider, &body);
    let summary = summarize(&whole.deltas);
    (whole, summary)
}

fn ok_fixture(name: &str) -> Summary {
    let (decoded, summary) = decode_fixture(name);
    assert_eq!(decoded.push_errors, vec![], "{name}: push errors");
    assert_eq!(decoded.end, Ok(()), "{name}: finish");
    assert!(summary.errors.is_empty(), "{name}: {:?}", summary.errors);
    summary
}

fn stream_error(error: &ProviderError) -> (Option<u16>, Option<&str>, &str) {
    match error {
        ProviderError::Stream {
            status,
            code,
            message,
            ..
        } => (*status, code.as_deref(), message.as_str()),
        other => panic!("expected an in-stream error, got {other:?}"),
    }
}

fn call(s: &Summary, index: usize) -> &Call {
    let call = &s.calls[index];
    assert!(call.ended, "call {index} ({}) never ended", call.name);
    call
}

/// Position of the first delta matching `pred`, for ordering checks.
fn position(deltas: &[Delta], pred: impl Fn(&Delta) -> bool) -> usize {
    deltas.iter().position(pred).expect("a matching delta")
}

// ---------------------------------------------------------------------------------------------
// Every fixture, however it is split
// ---------------------------------------------------------------------------------------------

#[test]
fn every_fixture_is_listed() {
    let mut on_disk = BTreeSet::new();
    for dir in std::fs::read_dir(FIXTURES).expect("fixtures folder") {
        let dir = dir.expect("entry").path();
        if !dir.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&dir).expect("provider folder") {
            let file = file.expect("entry").path();
            let rel = file.strip_prefix(FIXTURES).expect("under fixtures");
            on_disk.insert(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    let listed: BTreeSet<String> = ALL_FIXTURES.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(on_disk, listed, "ALL_FIXTURES must name every fixture file");
}

#[test]
fn every_fixture_decodes_the_same_however_it_is_split() {
    for (name, provider) in ALL_FIXTURES {
        let body = fixture(name);
        let whole = decode_whole(*provider, &body);
        let whole_merged = merged(&whole.deltas);
        let bytewise = decode_pieces(*provider, body.chunks(1));
        assert_eq!(
            merged(&bytewise.deltas),
            whole_merged,
            "{name}: byte by byte"
        );
        assert_eq!(bytewise.end, whole.end, "{name}: byte by byte");
        assert_eq!(
            bytewise.push_errors, whole.push_errors,
            "{name}: byte by byte"
        );
        for seed in 1..=64 {
            let split = decode_pieces(*provider, random_pieces(&body, seed));
            assert_eq!(merged(&split.deltas), whole_merged, "{name}: seed {seed}");
            assert_eq!(split.end, whole.end, "{name}: seed {seed}");
            assert_eq!(split.push_errors, whole.push_errors, "{name}: seed {seed}");
        }
    }
}

/// `poll_merged` after each push: the deltas of every read, each read's merged.
fn decode_reads_merged<'a>(
    provider: Provider,
    pieces: impl IntoIterator<Item = &'a [u8]>,
) -> Vec<Vec<Delta>> {
    let mut decoder = StreamDecoder::new(provider);
    let mut reads = Vec::new();
    for piece in pieces {
        let _ = decoder.push(piece);
        reads.push(std::iter::from_fn(|| decoder.poll_merged()).collect::<Vec<_>>());
    }
    let _ = decoder.finish();
    reads.push(std::iter::from_fn(|| decoder.poll_merged()).collect());
    assert_eq!(decoder.poll_merged(), None);
    reads
}

#[test]
fn poll_merged_gives_one_delta_per_kind_per_read_and_loses_nothing() {
    for (name, provider) in ALL_FIXTURES {
        let body = fixture(name);
        let whole = decode_whole(*provider, &body);
        // One read: exactly the merge of everything.
        let one: Vec<Delta> = decode_reads_merged(*provider, [&body[..]])
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(one, merged(&whole.deltas), "{name}: one read");
        for seed in 1..=16 {
            let reads = decode_reads_merged(*provider, random_pieces(&body, seed));
            for read in &reads {
                assert_eq!(
                    read,
                    &merged(read),
                    "{name}: seed {seed}: a read left a merge"
                );
            }
            let all: Vec<Delta> = reads.into_iter().flatten().collect();
            assert_eq!(merged(&all), merged(&whole.deltas), "{name}: seed {seed}");
        }
    }
}

#[test]
fn small_fixtures_decode_the_same_when_cut_at_every_byte() {
    for (name, provider) in ALL_FIXTURES {
        let body = fixture(name);
        if body.len() > 6000 {
            continue;
        }
        let whole = decode_whole(*provider, &body);
        for cut in 0..=body.len() {
            let (a, b) = body.split_at(cut);
            let split = decode_pieces(*provider, [a, b]);
            assert_eq!(
                merged(&split.deltas),
                merged(&whole.deltas),
                "{name}: cut at {cut}"
            );
            assert_eq!(split.end, whole.end, "{name}: cut at {cut}");
        }
    }
}

#[test]
fn a_fixture_cut_in_half_is_reported_as_truncated() {
    for (name, provider) in ALL_FIXTURES {
        let body = fixture(name);
        let whole = decode_whole(*provider, &body);
        if whole.end.is_err() || whole.deltas.iter().any(|d| matches!(d, Delta::Error(_))) {
            continue;
        }
        let half = decode_whole(*provider, &body[..body.len() / 2]);
        assert_eq!(
            half.end,
            Err(ProviderError::Truncated {
                provider: *provider
            }),
            "{name}"
        );
        // What did arrive is still consistent, and no call cut short was ended.
        let summary = summarize(&half.deltas);
        assert_eq!(summary.finish, None, "{name}");
        let full = summarize(&whole.deltas);
        for (cut, complete) in summary.calls.iter().zip(&full.calls) {
            if cut.ended {
                assert_eq!(cut.arguments, complete.arguments, "{name}: {}", cut.name);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// openai/: Chat Completions
// ---------------------------------------------------------------------------------------------

#[test]
fn openai_text_with_usage_chunk() {
    let s = ok_fixture("openai/chat-text-usage.gpt-4o.sse");
    assert_eq!(
        s.text,
        "I'm unable to provide real-time weather updates. To get the current weather in San \
         Francisco, I recommend checking a reliable weather website or a weather app."
    );
    assert_eq!(s.reasoning, "");
    assert!(s.calls.is_empty());
    assert_eq!(s.usage, Some((14, 30, 44)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
}

#[test]
fn openai_parallel_tool_calls_keep_their_ids_and_end_one_by_one() {
    let name = "openai/chat-parallel-tool-calls.gpt-4o.sse";
    let (decoded, _) = decode_fixture(name);
    let s = ok_fixture(name);
    assert_eq!(s.text, "");
    assert_eq!(s.calls.len(), 2);
    let weather = call(&s, 0);
    assert_eq!(weather.id, "call_JMW1whyEaYG438VE1OIflxA2");
    assert_eq!(weather.name, "GetWeatherArgs");
    assert_eq!(
        weather.arguments,
        r#"{"city": "Edinburgh", "country": "GB", "units": "c"}"#
    );
    assert_eq!(
        weather.args_json(),
        json!({"city": "Edinburgh", "country": "GB", "units": "c"})
    );
    let stock = call(&s, 1);
    assert_eq!(stock.id, "call_DNYTawLBoN8fj3KN6qU9N1Ou");
    assert_eq!(stock.name, "get_stock_price");
    assert_eq!(
        stock.args_json(),
        json!({"ticker": "AAPL", "exchange": "NASDAQ"})
    );
    assert_eq!(s.usage, Some((149, 60, 209)));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
    // The next index ends the previous call, before the finish reason arrives.
    let end0 = position(&decoded.deltas, |d| {
        matches!(d, Delta::ToolCallEnd { index: 0, .. })
    });
    let start1 = position(&decoded.deltas, |d| {
        matches!(d, Delta::ToolCallStart { index: 1, .. })
    });
    assert!(end0 < start1);
}

#[test]
fn openai_parallel_tool_calls_in_the_obfuscated_chunk_format() {
    let s = ok_fixture("openai/chat-parallel-tool-calls-obfuscation.gpt-4o.sse");
    assert_eq!(s.calls.len(), 2);
    let weather = call(&s, 0);
    assert_eq!(weather.id, "call_NS4iQj14cDFwc0BnrKqDHavt");
    assert_eq!(weather.name, "get_weather");
    assert_eq!(weather.arguments, r#"{"city": "Mexico City"}"#);
    assert_eq!(weather.args_json(), json!({"city": "Mexico City"}));
    let product = call(&s, 1);
    assert_eq!(product.id, "call_SkGkkGDvHQEEk0CGbnAh2AQw");
    assert_eq!(product.name, "get_product_name");
    assert_eq!(product.arguments, "{}");
    assert_eq!(s.usage, Some((417, 44, 461)));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn openai_n3_stream_keeps_only_choice_zero() {
    let s = ok_fixture("openai/chat-multiple-choices-n3.gpt-4o.sse");
    // Choices 1 and 2 say 61 and 59 degrees; only choice 0's 65 is the reply.
    assert_eq!(
        s.text,
        r#"{"city":"San Francisco","temperature":65,"units":"f"}"#
    );
    assert_eq!(s.usage, Some((79, 42, 121)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
}

#[test]
fn openai_refusal_is_shown_as_text() {
    let s = ok_fixture("openai/chat-refusal.gpt-4o.sse");
    assert_eq!(s.text, "I'm sorry, I can't assist with that request.");
    assert_eq!(s.usage, Some((79, 11, 90)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
}

#[test]
fn openai_max_tokens_gives_length() {
    let s = ok_fixture("openai/chat-max-tokens-length.gpt-4o.sse");
    assert_eq!(s.text, "{\"");
    assert_eq!(s.usage, Some((79, 1, 80)));
    assert_eq!(s.finish, Some(FinishReason::Length));
}

#[test]
fn azure_prompt_filter_chunk_and_null_fields_are_tolerated() {
    let s = ok_fixture("openai/azure-model-router.1.chunks.txt");
    assert_eq!(s.text, "Capital of Denmark.");
    assert_eq!(s.usage, Some((15, 78, 93)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
}

// ---------------------------------------------------------------------------------------------
// openai/: Responses API
// ---------------------------------------------------------------------------------------------

#[test]
fn responses_text_then_function_call() {
    let s = ok_fixture("openai/responses-reasoning-text-function-call.gpt-5.5.sse");
    assert_eq!(
        s.text,
        "I\u{2019}ll check the capital lookup tool for \u{201c}PotatoLand.\u{201d}"
    );
    // The reasoning item is encrypted: nothing readable to show.
    assert_eq!(s.reasoning, "");
    assert_eq!(s.calls.len(), 1);
    let capital = call(&s, 0);
    assert_eq!(capital.id, "call_LabG58Uhrq9kZvR52BYKjToD");
    assert_eq!(capital.name, "get_capital");
    assert_eq!(capital.arguments, r#"{"country":"PotatoLand"}"#);
    assert_eq!(capital.args_json(), json!({"country": "PotatoLand"}));
    assert_eq!(s.usage, Some((63, 69, 132)));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn responses_text_without_sequence_numbers() {
    let s = ok_fixture("openai/responses-text.gpt-4o.sse");
    assert_eq!(s.text, "The capital of France is Paris.");
    assert!(s.calls.is_empty());
    assert_eq!(s.usage, Some((278, 9, 287)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
}

#[test]
fn responses_error_event_is_reported_once() {
    let (decoded, s) = decode_fixture("openai/openai-error.1.chunks.txt");
    assert_eq!(decoded.push_errors, vec![]);
    // The error ends the reply: no truncation on top of it.
    assert_eq!(decoded.end, Ok(()));
    assert_eq!(s.text, "");
    assert_eq!(s.finish, None);
    assert_eq!(s.usage, None);
    // `error` and then `response.failed` say the same thing; one Error delta.
    assert_eq!(s.errors.len(), 1);
    let (status, code, message) = stream_error(&s.errors[0]);
    assert_eq!(status, None);
    assert_eq!(code, Some("insufficient_quota"));
    assert!(message.starts_with("You exceeded your current quota"));
    assert!(
        !s.errors[0].is_retryable(),
        "an exhausted quota does not come back"
    );
    assert_eq!(s.errors[0].provider(), Provider::OpenAiResponses);
}

// ---------------------------------------------------------------------------------------------
// anthropic/
// ---------------------------------------------------------------------------------------------

#[test]
fn anthropic_minimal_text() {
    let s = ok_fixture("anthropic/text-only.claude-haiku-4-5.sse");
    assert_eq!(s.text, "Hello");
    assert_eq!(s.reasoning, "");
    // input_tokens 10 (+0 cache) from the stream, output_tokens 4 from message_delta.
    assert_eq!(s.usage, Some((10, 4, 14)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
}

#[test]
fn anthropic_text_then_tool_use() {
    let name = "anthropic/tool_use_response.txt";
    let (decoded, _) = decode_fixture(name);
    let s = ok_fixture(name);
    assert_eq!(s.text, "I'll check the current weather in Paris for you.");
    assert_eq!(s.calls.len(), 1);
    let weather = call(&s, 0);
    assert_eq!(weather.id, "toolu_01NRLabsLyVHZPKxbKvkfSMn");
    assert_eq!(weather.name, "get_weather");
    assert_eq!(weather.arguments, r#"{"location": "Paris"}"#);
    assert_eq!(weather.args_json(), json!({"location": "Paris"}));
    // message_start has input_tokens 377; message_delta only output_tokens 65.
    assert_eq!(s.usage, Some((377, 65, 442)));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
    // content_block_stop ends the call, before message_delta.
    let end = position(&decoded.deltas, |d| matches!(d, Delta::ToolCallEnd { .. }));
    let usage = position(&decoded.deltas, |d| matches!(d, Delta::Usage { .. }));
    assert!(end < usage);
}

#[test]
fn anthropic_thinking_then_text() {
    let s = ok_fixture("anthropic/thinking-text.claude-sonnet-4.sse");
    assert_eq!(
        s.reasoning,
        "This is a straightforward question about pedestrian safety. I should provide clear, \
         helpful advice about how to safely cross a street. This is basic safety information \
         that could help prevent accidents."
    );
    assert!(s.text.starts_with(
        "Here are the basic steps for safely crossing the street:\n\n**At intersections"
    ));
    assert!(s
        .text
        .ends_with("Always prioritize safety over speed when crossing streets."));
    assert_eq!(s.text.len(), 1021);
    assert!(!s.text.contains("EvMCCk"), "the signature is not text");
    assert_eq!(s.usage, Some((43, 282, 325)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
}

#[test]
fn anthropic_thinking_then_tool_without_arguments() {
    let s = ok_fixture("anthropic/thinking-then-tool-use.claude-haiku-4-5.sse");
    assert_eq!(
        s.reasoning,
        "The user wants me to:\n1. Use the fixed_version tool\n2. Tell them the version\n3. Make a \
         short joke about it\n\nLet me first call the fixed_version tool to see what version it \
         returns."
    );
    assert_eq!(s.text, "");
    let fixed = call(&s, 0);
    assert_eq!(fixed.id, "toolu_01825dXWLSoJwCst1qTsiWdb");
    assert_eq!(fixed.name, "fixed_version");
    // A single empty input_json_delta: the arguments become `{}`.
    assert_eq!(fixed.arguments, "{}");
    assert_eq!(fixed.args_json(), json!({}));
    assert_eq!(s.usage, Some((598, 92, 690)));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn anthropic_redacted_thinking_is_shown_as_such() {
    let s = ok_fixture("anthropic/redacted-thinking.sse");
    assert_eq!(s.reasoning, REDACTED_REASONING.repeat(2));
    assert!(s
        .text
        .starts_with("I notice that you've sent what appears to be some kind of test string"));
    assert!(s
        .text
        .ends_with("How can I assist you today with a legitimate task or question?"));
    assert_eq!(s.usage, Some((92, 189, 281)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
}

// ---------------------------------------------------------------------------------------------
// gemini/
// ---------------------------------------------------------------------------------------------

#[test]
fn gemini_thought_summaries_and_a_signed_function_call() {
    let s =
        ok_fixture("gemini/streaming-success-thinking-function-call-thought-summary-signature.txt");
    assert!(s.reasoning.starts_with("**Calculating the Days**\n\n"));
    assert!(s
        .reasoning
        .contains("\n\n\n**Determining the Approach**\n\n"));
    assert!(s
        .reasoning
        .ends_with("I'll calculate this myself after getting today's date.\n\n\n"));
    assert_eq!(s.text, "");
    assert_eq!(s.calls.len(), 1);
    let now = call(&s, 0);
    assert_eq!(now.name, "now");
    // Gemini has no call ids: a synthetic one, stable and unique to this response.
    assert_eq!(now.id, "call_0_48SHaPHpHKbG-8YPtZCawAk");
    assert_eq!(now.arguments, "{}");
    let signature = now.signature.as_deref().expect("the thoughtSignature");
    assert!(signature.starts_with("CiIBVKhc7vB+vaaq6rA/"));
    assert!(signature.ends_with("MlLleEs0"));
    // prompt 38; completion = candidates 6 + thoughts 168; total as Gemini says.
    assert_eq!(s.usage, Some((38, 174, 212)));
    // Gemini says STOP; with a function call pending that is ToolCalls.
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn gemini_crlf_text_reply() {
    let s = ok_fixture("gemini/streaming-success-basic-reply-short.txt");
    assert_eq!(s.text, "The capital of Wyoming is **Cheyenne**.\n");
    assert_eq!(s.usage, Some((7, 10, 17)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
}

#[test]
fn gemini_parallel_and_streamed_function_call_arguments() {
    let s = ok_fixture("gemini/google-stream-no-args-tool-call.chunks.txt");
    assert!(s.reasoning.starts_with("**Processing User Requests**"));
    assert_eq!(s.text, "");
    let names: Vec<&str> = s.calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["read_theme", "read_screen", "read_screen", "read_screen"]
    );
    let theme = call(&s, 0);
    assert_eq!(theme.id, "call_0__vr4aYiWEJnYodAPkujX0QM");
    assert_eq!(theme.arguments, "{}");
    assert!(theme
        .signature
        .as_deref()
        .is_some_and(|sig| sig.starts_with("AY89a18a8/")));
    // partialArgs at `$.id`, string pieces ("A" then "") and an empty terminator part.
    for (i, screen) in ["A", "B", "C"].iter().enumerate() {
        let c = call(&s, i + 1);
        assert_eq!(c.id, format!("call_{}__vr4aYiWEJnYodAPkujX0QM", i + 1));
        assert_eq!(c.args_json(), json!({"id": screen}));
        assert_eq!(c.signature, None, "only the first parallel call is signed");
    }
    let ids: BTreeSet<&str> = s.calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), 4, "ids are distinct");
    // candidates 58 + thoughts 183; total 490.
    assert_eq!(s.usage, Some((249, 241, 490)));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn gemini_bare_error_object_after_the_stream() {
    let (decoded, s) = decode_fixture("gemini/streaming-failure-error-mid-stream.txt");
    assert_eq!(decoded.push_errors, vec![]);
    assert_eq!(decoded.end, Ok(()), "the error explains the end");
    assert_eq!(s.text, "First Second ");
    // The error ends the reply: no Finish (the STOPs before it were premature), no usage.
    assert_eq!(s.finish, None);
    assert_eq!(s.usage, None);
    assert_eq!(s.errors.len(), 1);
    let (status, code, message) = stream_error(&s.errors[0]);
    assert_eq!(status, Some(499));
    assert_eq!(code, Some("CANCELLED"));
    assert_eq!(message, "The operation was cancelled.");
    assert!(s.errors[0].to_string().starts_with(
        "Gemini reported an error mid-stream (499 CANCELLED): The operation was cancelled."
    ));
}

// ---------------------------------------------------------------------------------------------
// openai-compatible/
// ---------------------------------------------------------------------------------------------

#[test]
fn openrouter_keepalives_reasoning_and_error_chunk() {
    let (decoded, s) = decode_fixture("openai-compatible/openrouter-reasoning-midstream-error.sse");
    assert_eq!(decoded.push_errors, vec![]);
    assert_eq!(decoded.end, Ok(()));
    assert_eq!(s.reasoning, "We need to respond to a greeting. The user");
    assert_eq!(s.text, "");
    // finish_reason "length" twice: one Finish.
    assert_eq!(s.finish, Some(FinishReason::Length));
    assert_eq!(s.usage, Some((43, 10, 53)));
    assert_eq!(s.errors.len(), 1);
    let (status, code, message) = stream_error(&s.errors[0]);
    assert_eq!(
        (status, code, message),
        (Some(400), None, "Token limit reached")
    );
    assert!(!s.errors[0].is_retryable());
}

#[test]
fn groq_named_error_event_ends_the_stream() {
    let (decoded, s) =
        decode_fixture("openai-compatible/groq-reasoning-event-error.gpt-oss-120b.sse");
    assert_eq!(decoded.push_errors, vec![]);
    assert_eq!(
        decoded.end,
        Ok(()),
        "no [DONE], but the error explains the end"
    );
    assert!(s
        .reasoning
        .starts_with("We need to call the tool with invalid parameters first"));
    assert!(s
        .reasoning
        .ends_with("Then second call with name: \"test\". Let's do that."));
    assert_eq!(s.reasoning.len(), 412);
    assert!(s.calls.is_empty());
    assert_eq!(s.finish, None);
    assert_eq!(s.errors.len(), 1);
    let (status, code, message) = stream_error(&s.errors[0]);
    assert_eq!(status, Some(400));
    assert_eq!(code, Some("tool_use_failed"));
    assert!(message.starts_with("Tool call validation failed"));
}

#[test]
fn groq_whole_tool_call_and_usage_in_two_places() {
    let s = ok_fixture("openai-compatible/groq-tool-call-usage.gpt-oss-120b.sse");
    assert_eq!(
        s.reasoning,
        "We need to call the function with correct parameter \"name\". Provide a name, e.g., \
         \"example\"."
    );
    let c = call(&s, 0);
    assert_eq!(c.id, "fc_bfb39741-3748-4def-9886-a93fc9c64a90");
    assert_eq!(c.name, "get_something_by_name");
    assert_eq!(c.arguments, r#"{"name":"example"}"#);
    // Both `x_groq.usage` and `usage`: reported once.
    assert_eq!(s.usage, Some((304, 49, 353)));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn deepseek_reasoning_content_and_character_by_character_arguments() {
    let s = ok_fixture("openai-compatible/deepseek-tool-call.chunks.txt");
    assert_eq!(
        s.reasoning,
        "The user is asking for the weather in San Francisco. I need to use the weather tool to \
         get this information. Let me invoke the weather tool with the location parameter set to \
         \"San Francisco\"."
    );
    assert_eq!(s.text, "");
    let c = call(&s, 0);
    assert_eq!(c.id, "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF");
    assert_eq!(c.name, "weather");
    assert_eq!(c.arguments, r#"{"location": "San Francisco"}"#);
    assert_eq!(s.usage, Some((339, 83, 422)));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn gateway_tool_call_starting_at_index_one() {
    let s = ok_fixture("openai-compatible/anthropic-fallback-tool-call.sse");
    assert_eq!(s.text, "Reading it.");
    assert_eq!(s.calls.len(), 1);
    let c = call(&s, 0);
    assert_eq!(c.id, "toolu_sanitized");
    assert_eq!(c.name, "read_file");
    assert_eq!(c.arguments, r#"{"path": "a.txt"}"#);
    assert_eq!(s.usage, None, "this gateway sends no usage");
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

// ---------------------------------------------------------------------------------------------
// Workers AI (streams written from Cloudflare's documented shapes: see SOURCES.md)
// ---------------------------------------------------------------------------------------------

#[test]
fn workers_ai_native_text_with_padding_and_usage() {
    let s = ok_fixture("workers-ai/native-text-usage.llama-3.3-70b.sse");
    assert_eq!(s.text, "The weather in Lisbon is mild — 19 °C.");
    assert_eq!(s.usage, Some((41, 12, 53)));
    assert_eq!(
        s.finish,
        Some(FinishReason::Stop),
        "[DONE] without a finish reason is a finished reply"
    );
}

#[test]
fn workers_ai_whole_tool_calls_are_calls_of_their_own() {
    let s = ok_fixture("workers-ai/native-whole-tool-calls.llama-3.3-70b.sse");
    assert_eq!(s.calls.len(), 2);
    assert_eq!(call(&s, 0).name, "get_weather");
    assert_eq!(call(&s, 0).args_json(), json!({"city": "Lisbon"}));
    assert_eq!(call(&s, 1).name, "local_time");
    assert_eq!(
        call(&s, 1).args_json(),
        json!({"timezone": "Europe/Lisbon"})
    );
    assert_ne!(
        call(&s, 0).id,
        call(&s, 1).id,
        "ids are made up, and distinct"
    );
    assert_eq!(s.text, "");
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
    assert_eq!(s.usage, Some((212, 38, 250)));
}

#[test]
fn workers_ai_fragmented_tool_call_and_its_closing_null_fragment() {
    let s = ok_fixture("workers-ai/native-fragment-tool-call.llama-4-scout.sse");
    assert_eq!(s.calls.len(), 1, "the all-null fragment starts no call");
    let c = call(&s, 0);
    assert_eq!(c.id, "chatcmpl-tool-8d2f");
    assert_eq!(c.name, "get_weather");
    assert_eq!(c.args_json(), json!({"city": "Lisbon"}));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn workers_ai_chat_chunks_report_the_last_running_usage_once() {
    let (decoded, s) = decode_fixture("workers-ai/chat-chunks-reasoning-usage.qwen3-30b.sse");
    assert_eq!(decoded.end, Ok(()));
    assert_eq!(s.reasoning, "The user greets me.");
    assert_eq!(s.text, "Hello there!");
    assert_eq!(s.finish, Some(FinishReason::Stop));
    assert_eq!(s.usage, Some((18, 9, 27)), "not the first chunk's zeros");
    let usages = decoded
        .deltas
        .iter()
        .filter(|d| matches!(d, Delta::Usage { .. }))
        .count();
    assert_eq!(usages, 1);
}

#[test]
fn workers_ai_chat_chunks_parallel_tool_calls() {
    let s = ok_fixture("workers-ai/chat-chunks-parallel-tool-calls.llama-4-scout.sse");
    assert_eq!(s.calls.len(), 2);
    assert_eq!(call(&s, 0).id, "chatcmpl-tool-a1");
    assert_eq!(call(&s, 0).args_json(), json!({"city": "Lisbon"}));
    assert_eq!(call(&s, 1).name, "local_time");
    assert_eq!(call(&s, 1).args_json(), json!({}));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
    assert_eq!(s.usage, Some((300, 31, 331)));
}

#[test]
fn workers_ai_error_mid_stream_keeps_the_text_and_names_the_code() {
    let (decoded, s) = decode_fixture("workers-ai/native-error-mid-stream.sse");
    assert_eq!(s.text, "Once upon a time");
    assert_eq!(s.errors.len(), 1);
    let (_, code, message) = stream_error(&s.errors[0]);
    assert_eq!(code, Some("3040"));
    assert_eq!(message, "Capacity temporarily exceeded, please try again.");
    assert_eq!(s.finish, None, "an error is no finished reply");
    assert_eq!(decoded.end, Ok(()), "the error explains the end");
    assert!(s.errors[0]
        .to_string()
        .starts_with("Workers AI reported an error mid-stream"));
}

#[test]
fn workers_ai_stream_cut_off_before_done_is_truncated() {
    let (decoded, s) = decode_fixture("workers-ai/native-cut-off.sse");
    assert_eq!(s.text, "Half an answer");
    assert_eq!(s.finish, None);
    assert_eq!(
        decoded.end,
        Err(ProviderError::Truncated {
            provider: Provider::WorkersAi
        })
    );
}

#[test]
fn workers_ai_whole_answer_of_a_model_that_cannot_stream() {
    // Framed by the host as one event: the Chat Completions shape with `message`, and the
    // native shape with whole calls.
    let chat = concat!(
        "data: {\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":",
        "\"Sunny.\",\"tool_calls\":[]},\"finish_reason\":\"stop\"}],",
        "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"total_tokens\":7}}\n\n",
        "data: [DONE]\n\n"
    );
    let s = summarize(&decode_whole(Provider::WorkersAi, chat.as_bytes()).deltas);
    assert_eq!(s.text, "Sunny.");
    assert_eq!(s.usage, Some((5, 2, 7)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
    let native = concat!(
        "data: {\"response\":null,\"tool_calls\":[{\"name\":\"get_weather\",",
        "\"arguments\":{\"city\":\"Oslo\"}}],\"usage\":{\"prompt_tokens\":9,",
        "\"completion_tokens\":4,\"total_tokens\":13}}\n\ndata: [DONE]\n\n"
    );
    let s = summarize(&decode_whole(Provider::WorkersAi, native.as_bytes()).deltas);
    assert_eq!(call(&s, 0).args_json(), json!({"city": "Oslo"}));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn workers_ai_binding_errors_map_to_the_documented_statuses() {
    for (thrown, status, code, retryable) in [
        ("AiError: 3040: Capacity temporarily exceeded, please try again.", 429, "3040", true),
        ("5007: No such model @cf/nobody/nothing or task", 400, "5007", false),
        ("InferenceUpstreamError: 3036: You have used up your daily free allocation of 10,000 neurons.", 429, "3036", false),
        ("3007: Request timeout", 408, "3007", true),
        ("3042: The model name is invalid", 404, "3042", false),
    ] {
        let error = ProviderError::from_workers_ai(thrown);
        assert_eq!(error.status(), Some(status), "{thrown}");
        assert_eq!(error.is_retryable(), retryable, "{thrown}");
        match &error {
            ProviderError::Http { code: c, provider, .. } => {
                assert_eq!(c.as_deref(), Some(code));
                assert_eq!(*provider, Provider::WorkersAi);
            }
            other => panic!("{other:?}"),
        }
        assert!(error.to_string().starts_with(&format!("Workers AI answered HTTP {status} ({code})")));
    }
    let quota = ProviderError::from_workers_ai("3036: daily free allocation used up");
    assert!(quota.to_string().contains("out of quota"), "{quota}");
    let unknown = ProviderError::from_workers_ai("network connection lost 12345: x");
    assert_eq!(unknown.status(), Some(500));
    assert!(unknown.is_retryable());
}

#[test]
fn workers_ai_rest_error_envelope() {
    let body = br#"{"errors":[{"message":"No such model @cf/x/y or task","code":5007}],"success":false,"result":null,"messages":[]}"#;
    let error = ProviderError::from_http(Provider::WorkersAi, 400, NO_HEADERS, body);
    match &error {
        ProviderError::Http { code, message, .. } => {
            assert_eq!(code.as_deref(), Some("5007"));
            assert_eq!(message, "No such model @cf/x/y or task");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn workers_ai_request_is_what_the_binding_and_the_rest_api_take() {
    let config = ProviderConfig::new(Provider::WorkersAi, "", WORKERS_AI_DEFAULT_MODEL)
        .with_base_url(workers_ai_rest_base("0123abcd"));
    let request = config.build_request(&sample_request(""));
    assert_eq!(
        request.url,
        format!(
            "https://api.cloudflare.com/client/v4/accounts/0123abcd/ai/run/{WORKERS_AI_DEFAULT_MODEL}"
        )
    );
    assert_eq!(
        request.header("authorization"),
        None,
        "the binding needs no key"
    );
    let body: Value = serde_json::from_str(&request.body).expect("JSON");
    assert_eq!(body["stream"], json!(true));
    assert_eq!(
        body.get("model"),
        None,
        "the model is the path, not the body"
    );
    assert_eq!(body["max_tokens"], json!(256), "the request's own limit");
    let mut unlimited = sample_request("");
    unlimited.max_tokens = None;
    let body: Value = serde_json::from_str(&config.build_request(&unlimited).body).expect("JSON");
    assert_eq!(
        body["max_tokens"],
        json!(WORKERS_AI_DEFAULT_MAX_TOKENS),
        "not Workers AI's own 256"
    );
    assert_eq!(body["messages"][0]["role"], json!("system"));
    assert_eq!(body["tools"][0]["type"], json!("function"));
    assert_eq!(
        body["messages"][2]["tool_calls"][0]["function"]["name"],
        json!("get_weather")
    );
    let with_token =
        ProviderConfig::new(Provider::WorkersAi, KEY, "@cf/m").build_request(&sample_request(""));
    assert_eq!(
        with_token.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

// ---------------------------------------------------------------------------------------------
// Hand-made streams: what the fixtures do not show
// ---------------------------------------------------------------------------------------------

/// One text event "ok" in each provider's format.
fn ok_event(provider: Provider) -> &'static str {
    match provider {
        Provider::OpenAi => {
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\n"
        }
        Provider::OpenAiResponses => {
            "data: {\"type\":\"response.output_text.delta\",\"delta\":\"ok\"}\n\n"
        }
        Provider::Anthropic => {
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\
             \"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n"
        }
        Provider::Gemini => {
            "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"ok\"}]}}]}\n\n"
        }
        Provider::WorkersAi => "data: {\"response\":\"ok\",\"p\":\"abc\"}\n\n",
    }
}

#[test]
fn malformed_json_is_an_error_naming_the_provider_and_decoding_goes_on() {
    for provider in Provider::ALL {
        let body = format!(
            "{}data: {{\"choices\": [oops\n\n{}",
            ok_event(provider),
            ok_event(provider)
        );
        let mut decoder = StreamDecoder::new(provider);
        let error = decoder
            .push(body.as_bytes())
            .expect_err("bad JSON is an error");
        assert!(
            matches!(&error, ProviderError::Malformed { provider: p, .. } if *p == provider),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(message.contains(provider.display_name()), "{message}");
        assert!(message.contains("not valid JSON"), "{message}");
        let mut texts = Vec::new();
        while let Some(delta) = decoder.poll() {
            texts.push(delta);
        }
        assert_eq!(
            texts,
            vec![Delta::Text("ok".into()), Delta::Text("ok".into())],
            "{provider}: the events around the bad one are decoded"
        );
    }
}

#[test]
fn a_known_event_with_a_bad_body_is_an_error() {
    let mut decoder = StreamDecoder::new(Provider::Anthropic);
    let error = decoder
        .push(b"data: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\"}}\n\n")
        .expect_err("content_block_delta needs an index");
    assert!(error.to_string().contains("content_block_delta"), "{error}");
}

#[test]
fn unknown_events_are_skipped() {
    let bodies = [
        (
            Provider::OpenAi,
            "event: brand_new\ndata: {\"whatever\": 1}\n\n\
             data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"audio\":{\"id\":\"a\"}},\"future\":true}]}\n\n",
        ),
        (
            Provider::OpenAiResponses,
            "event: response.web_search_call.searching\ndata: {\"type\":\"response.web_search_call.searching\",\"item_id\":\"ws_1\"}\n\n\
             data: {\"type\":\"response.output_item.added\",\"item\":{\"type\":\"web_search_call\",\"id\":\"ws_1\"}}\n\n",
        ),
        (
            Provider::Anthropic,
            "event: brand_new\ndata: {\"type\":\"brand_new\",\"x\":[1,2]}\n\n\
             event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\",\"input\":{}}}\n\n\
             event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"citations_delta\",\"citation\":{}}}\n\n",
        ),
        (
            Provider::Gemini,
            "data: {\"candidates\":[{\"content\":{\"parts\":[{\"executableCode\":{\"language\":\"PYTHON\",\"code\":\"1\"}}]}}],\"futureField\":{}}\n\n",
        ),
    ];
    for (provider, body) in bodies {
        let mut decoder = StreamDecoder::new(provider);
        assert_eq!(decoder.push(body.as_bytes()), Ok(()), "{provider}");
        assert_eq!(decoder.poll(), None, "{provider}");
    }
}

#[test]
fn anthropic_overloaded_error_mid_tool_call_leaves_the_call_unended() {
    // The envelope SOURCES.md quotes from real logs; no recorded file exists.
    let body = "event: message_start\n\
        data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}\n\n\
        event: content_block_start\n\
        data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"write\",\"input\":{}}}\n\n\
        event: content_block_delta\n\
        data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \\\"a\"}}\n\n\
        event: error\n\
        data: {\"type\":\"error\",\"error\":{\"details\":null,\"type\":\"overloaded_error\",\"message\":\"Overloaded\"},\"request_id\":\"req_011\"}\n\n";
    let decoded = decode_whole(Provider::Anthropic, body.as_bytes());
    assert_eq!(decoded.end, Ok(()), "the error explains the end");
    let s = summarize(&decoded.deltas);
    assert_eq!(s.calls.len(), 1);
    assert!(!s.calls[0].ended, "a call cut short must not be run");
    assert_eq!(s.calls[0].arguments, "{\"path\": \"a");
    assert_eq!(s.errors.len(), 1);
    let (status, code, message) = stream_error(&s.errors[0]);
    assert_eq!(
        (status, code, message),
        (None, Some("overloaded_error"), "Overloaded")
    );
    assert!(s.errors[0].is_retryable());
    assert_eq!(
        s.errors[0].to_string(),
        "Anthropic reported an error mid-stream (overloaded_error): Overloaded. The reply is \
         incomplete; this is temporary: retry in a moment."
    );
}

#[test]
fn openai_error_chunk_in_the_stream() {
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n\
        data: {\"error\":{\"message\":\"The server had an error while processing your request.\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n";
    let decoded = decode_whole(Provider::OpenAi, body.as_bytes());
    assert_eq!(decoded.end, Ok(()));
    let s = summarize(&decoded.deltas);
    assert_eq!(s.text, "Hi");
    let (status, code, _) = stream_error(&s.errors[0]);
    assert_eq!((status, code), (None, Some("server_error")));
    assert!(s.errors[0].is_retryable());
}

fn tool_chunk(calls: Value) -> String {
    format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {"tool_calls": calls}}]})
    )
}

#[test]
fn openai_whole_parallel_calls_in_one_chunk() {
    // Ollama and vLLM send each call whole, sometimes several in one chunk.
    let body = tool_chunk(json!([
        {"index": 0, "id": "call_a", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
        {"index": 1, "id": "call_b", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"x\"}"}},
    ])) + "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    let decoded = decode_whole(Provider::OpenAi, body.as_bytes());
    assert_eq!(decoded.end, Ok(()));
    let s = summarize(&decoded.deltas);
    assert_eq!(s.calls.len(), 2);
    assert_eq!(
        (call(&s, 0).id.as_str(), call(&s, 0).arguments.as_str()),
        ("call_a", "{}")
    );
    assert_eq!(
        (call(&s, 1).id.as_str(), call(&s, 1).arguments.as_str()),
        ("call_b", "{\"path\":\"x\"}")
    );
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn openai_fragments_without_index_continue_the_current_call() {
    let body =
        tool_chunk(json!([{"id": "call_a", "function": {"name": "calc", "arguments": "{\"ex"}}]))
            + &tool_chunk(json!([{"function": {"arguments": "pression\":\"1+1\"}"}}]))
            + &tool_chunk(
                json!([{"id": "call_b", "function": {"name": "calc", "arguments": "{}"}}]),
            )
            + "data: [DONE]\n\n";
    let decoded = decode_whole(Provider::OpenAi, body.as_bytes());
    assert_eq!(decoded.push_errors, vec![]);
    assert_eq!(decoded.end, Ok(()));
    let s = summarize(&decoded.deltas);
    assert_eq!(s.calls.len(), 2);
    assert_eq!(call(&s, 0).args_json(), json!({"expression": "1+1"}));
    assert_eq!(call(&s, 1).id, "call_b");
    assert_eq!(
        s.finish, None,
        "[DONE] without a finish reason ends the calls, reports none"
    );
}

#[test]
fn openai_interleaved_calls_are_reported_not_misassigned() {
    let body = tool_chunk(
        json!([{"index": 0, "id": "call_a", "function": {"name": "a", "arguments": "{"}}]),
    ) + &tool_chunk(
        json!([{"index": 1, "id": "call_b", "function": {"name": "b", "arguments": "{}"}}]),
    ) + &tool_chunk(json!([{"index": 0, "function": {"arguments": "}"}}]));
    let mut decoder = StreamDecoder::new(Provider::OpenAi);
    let error = decoder
        .push(body.as_bytes())
        .expect_err("interleaving is reported");
    assert!(error.to_string().contains("tool call 0"), "{error}");
}

#[test]
fn multibyte_text_and_crlf_survive_every_cut() {
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"h\u{e9}llo \u{1f600} \u{2713}\"}}]}\r\n\r\n\
                data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" \u{65e5}\u{672c}\"},\"finish_reason\":\"stop\"}]}\r\r\
                data: [DONE]\r\n\r\n";
    let bytes = body.as_bytes();
    let expected = vec![
        Delta::Text("h\u{e9}llo \u{1f600} \u{2713}".into()),
        Delta::Text(" \u{65e5}\u{672c}".into()),
        Delta::Finish(FinishReason::Stop),
    ];
    for a in 0..=bytes.len() {
        for b in a..=bytes.len() {
            let decoded = decode_pieces(Provider::OpenAi, [&bytes[..a], &bytes[a..b], &bytes[b..]]);
            assert_eq!(decoded.deltas, expected, "cuts at {a} and {b}");
            assert_eq!(decoded.end, Ok(()));
        }
    }
}

#[test]
fn gemini_blocked_prompt_is_a_content_filter_finish() {
    let body = "data: {\"promptFeedback\":{\"blockReason\":\"SAFETY\"},\"usageMetadata\":{\"promptTokenCount\":9,\"totalTokenCount\":9}}\n\n";
    let decoded = decode_whole(Provider::Gemini, body.as_bytes());
    assert_eq!(decoded.end, Ok(()));
    assert_eq!(
        decoded.deltas,
        vec![
            Delta::Usage {
                prompt_tokens: 9,
                completion_tokens: 0,
                total_tokens: 9
            },
            Delta::Finish(FinishReason::ContentFilter)
        ]
    );
}

#[test]
fn gemini_error_sent_as_an_sse_event() {
    let body = format!(
        "{}data: {{\"error\": {{\"code\": 503, \"message\": \"The model is overloaded.\", \"status\": \"UNAVAILABLE\"}}}}\n\n",
        ok_event(Provider::Gemini)
    );
    let decoded = decode_whole(Provider::Gemini, body.as_bytes());
    assert_eq!(decoded.end, Ok(()));
    let s = summarize(&decoded.deltas);
    assert_eq!(s.text, "ok");
    assert_eq!(s.finish, None);
    let (status, code, message) = stream_error(&s.errors[0]);
    assert_eq!(
        (status, code, message),
        (Some(503), Some("UNAVAILABLE"), "The model is overloaded.")
    );
    assert!(s.errors[0].is_retryable());
}

#[test]
fn gemini_call_still_streaming_at_a_cut_is_not_ended() {
    let body = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"write\",\"willContinue\":true}}]}}]}\n\n\
                data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"partialArgs\":[{\"jsonPath\":\"$.path\",\"stringValue\":\"a\",\"willContinue\":true}],\"willContinue\":true}}]}}]}\n\n";
    let decoded = decode_whole(Provider::Gemini, body.as_bytes());
    assert_eq!(
        decoded.end,
        Err(ProviderError::Truncated {
            provider: Provider::Gemini
        })
    );
    let s = summarize(&decoded.deltas);
    assert_eq!(s.calls.len(), 1);
    assert!(!s.calls[0].ended);
    assert_eq!(s.calls[0].id, "call_0", "no responseId: ids are numbered");
    assert_eq!(
        decoded.end.unwrap_err().to_string(),
        "The Gemini stream ended before the reply was complete (the connection was cut); retry \
         the request."
    );
}

#[test]
fn a_body_that_is_not_a_stream_is_truncated_not_a_panic() {
    for provider in Provider::ALL {
        let html = b"<html>\r\n<body>502 Bad Gateway</body>\r\n</html>";
        let decoded = decode_whole(provider, html);
        assert_eq!(decoded.deltas, vec![]);
        assert_eq!(decoded.end, Err(ProviderError::Truncated { provider }));
        // An error JSON answered with status 200 and no SSE framing still surfaces.
        let json = br#"{"error": {"message": "Invalid model", "code": 400}}"#;
        let decoded = decode_whole(provider, json);
        assert_eq!(decoded.end, Ok(()), "{provider}");
        let s = summarize(&decoded.deltas);
        assert_eq!(stream_error(&s.errors[0]).2, "Invalid model");
    }
}

#[test]
fn bytes_after_finish_are_ignored() {
    let mut decoder = StreamDecoder::new(Provider::OpenAi);
    decoder.push(b"data: [DONE]\n\n").expect("valid");
    assert!(decoder.is_complete());
    assert_eq!(decoder.finish(), Ok(()));
    assert_eq!(decoder.push(ok_event(Provider::OpenAi).as_bytes()), Ok(()));
    assert_eq!(decoder.poll(), None);
}

#[test]
fn mangled_fixtures_never_panic_and_keep_the_invariants() {
    for (name, provider) in ALL_FIXTURES {
        let body = fixture(name);
        for seed in 1..=40u64 {
            let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
            let mut mangled = body.clone();
            for _ in 0..1 + rng.below(12) {
                let at = rng.below(mangled.len());
                match rng.below(3) {
                    0 => mangled[at] = rng.next() as u8,
                    1 => {
                        mangled.remove(at);
                    }
                    _ => mangled.truncate(at),
                }
                if mangled.is_empty() {
                    break;
                }
            }
            let decoded = decode_pieces(*provider, random_pieces(&mangled, seed));
            summarize(&decoded.deltas);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Request building
// ---------------------------------------------------------------------------------------------

const KEY: &str = "sk-test-0123456789abcdef0123456789";

fn weather_tool() -> ToolDef {
    ToolDef {
        name: "get_weather".into(),
        description: "Current weather of a city.".into(),
        input_schema: json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": false,
        }),
    }
}

/// A conversation with every kind of message: system, user, assistant text with two parallel
/// tool calls (one signed), a result and a failed result, and a follow-up.
fn sample_request(model: &str) -> ChatRequest {
    ChatRequest {
        model: model.into(),
        system: Some("Be brief.".into()),
        messages: vec![
            ChatMessage::user("Weather in Paris and Rome?"),
            ChatMessage::Assistant {
                content: "Checking.".into(),
                tool_calls: vec![
                    ToolCall {
                        id: "call_1".into(),
                        name: "get_weather".into(),
                        arguments: r#"{"city":"Paris"}"#.into(),
                        signature: Some("sig-1".into()),
                    },
                    ToolCall {
                        id: "call_2".into(),
                        name: "get_weather".into(),
                        arguments: r#"{"city":"Rome"}"#.into(),
                        signature: None,
                    },
                ],
            },
            ChatMessage::Tool(ToolResult {
                call_id: "call_1".into(),
                name: "get_weather".into(),
                content: "18°C".into(),
                is_error: false,
            }),
            ChatMessage::Tool(ToolResult {
                call_id: "call_2".into(),
                name: "get_weather".into(),
                content: "timeout".into(),
                is_error: true,
            }),
            ChatMessage::user("Thanks"),
        ],
        tools: vec![weather_tool()],
        max_tokens: Some(256),
        temperature: Some(0.7),
    }
}

fn body(request: &HttpRequest) -> Value {
    serde_json::from_str(&request.body).expect("the body is JSON")
}

#[test]
fn openai_request() {
    let config = ProviderConfig::new(Provider::OpenAi, KEY, "unused");
    let request = config.build_request(&sample_request("gpt-4o"));
    assert_eq!(request.method, "POST");
    assert_eq!(request.url, "https://api.openai.com/v1/chat/completions");
    assert_eq!(
        request.header("Authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    assert_eq!(
        body(&request),
        json!({
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Paris and Rome?"},
                {"role": "assistant", "content": "Checking.", "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
                    {"id": "call_2", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"city\":\"Rome\"}"}},
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "18°C"},
                {"role": "tool", "tool_call_id": "call_2", "content": "Error: timeout"},
                {"role": "user", "content": "Thanks"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "get_weather",
                "description": "Current weather of a city.",
                "parameters": weather_tool().input_schema,
            }}],
            "max_completion_tokens": 256,
            "temperature": 0.7,
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
}

#[test]
fn openai_compatible_server_without_key() {
    // A local Ollama: its own base URL, no key, the classic `max_tokens`, and the configured model.
    let config = ProviderConfig::new(Provider::OpenAi, "", "llama3.2")
        .with_base_url("http://localhost:11434/v1/");
    let request = config.build_request(&ChatRequest {
        messages: vec![ChatMessage::Assistant {
            content: String::new(),
            tool_calls: vec![ToolCall {
                id: "c".into(),
                name: "ls".into(),
                arguments: "{}".into(),
                signature: None,
            }],
        }],
        max_tokens: Some(100),
        ..ChatRequest::default()
    });
    assert_eq!(request.url, "http://localhost:11434/v1/chat/completions");
    assert_eq!(request.header("authorization"), None);
    let body = body(&request);
    assert_eq!(body["model"], "llama3.2");
    assert_eq!(body["max_tokens"], 100);
    assert!(body.get("max_completion_tokens").is_none());
    assert!(body.get("tools").is_none());
    assert_eq!(
        body["messages"][0]["content"],
        Value::Null,
        "a tools-only turn has null content"
    );
}

#[test]
fn responses_request() {
    let config = ProviderConfig::new(Provider::OpenAiResponses, KEY, "gpt-5");
    let request = config.build_request(&sample_request(""));
    assert_eq!(request.url, "https://api.openai.com/v1/responses");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(
        body(&request),
        json!({
            "model": "gpt-5",
            "instructions": "Be brief.",
            "input": [
                {"role": "user", "content": "Weather in Paris and Rome?"},
                {"role": "assistant", "content": "Checking."},
                {"type": "function_call", "call_id": "call_1", "name": "get_weather",
                 "arguments": "{\"city\":\"Paris\"}"},
                {"type": "function_call", "call_id": "call_2", "name": "get_weather",
                 "arguments": "{\"city\":\"Rome\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "18°C"},
                {"type": "function_call_output", "call_id": "call_2", "output": "Error: timeout"},
                {"role": "user", "content": "Thanks"},
            ],
            "tools": [{"type": "function", "name": "get_weather",
                       "description": "Current weather of a city.",
                       "parameters": weather_tool().input_schema}],
            "max_output_tokens": 256,
            "temperature": 0.7,
            "stream": true,
            "store": false,
        })
    );
}

#[test]
fn anthropic_request() {
    let config = ProviderConfig::new(Provider::Anthropic, KEY, "claude-haiku-4-5");
    let request = config.build_request(&sample_request(""));
    assert_eq!(request.url, "https://api.anthropic.com/v1/messages");
    assert_eq!(request.header("x-api-key"), Some(KEY));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("authorization"), None);
    assert_eq!(
        body(&request),
        json!({
            "model": "claude-haiku-4-5",
            "max_tokens": 256,
            "system": "Be brief.",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "call_2", "name": "get_weather", "input": {"city": "Rome"}},
                ]},
                // Both results and the follow-up form one user turn, results first.
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "call_1", "content": "18°C"},
                    {"type": "tool_result", "tool_use_id": "call_2", "content": "timeout", "is_error": true},
                    {"type": "text", "text": "Thanks"},
                ]},
            ],
            "tools": [{"name": "get_weather", "description": "Current weather of a city.",
                       "input_schema": weather_tool().input_schema}],
            "temperature": 0.7,
            "stream": true,
        })
    );
}

#[test]
fn anthropic_defaults_max_tokens_and_repairs_bad_arguments() {
    let config = ProviderConfig::new(Provider::Anthropic, KEY, "claude-haiku-4-5");
    let request = config.build_request(&ChatRequest {
        messages: vec![
            ChatMessage::user("hi"),
            ChatMessage::Assistant {
                content: String::new(),
                tool_calls: vec![ToolCall {
                    id: "toolu_1".into(),
                    name: "calc".into(),
                    arguments: "{\"expression\": \"1+".into(),
                    signature: None,
                }],
            },
        ],
        ..ChatRequest::default()
    });
    let body = body(&request);
    assert_eq!(body["max_tokens"], 4096);
    assert!(body.get("system").is_none());
    assert!(body.get("temperature").is_none());
    assert_eq!(
        body["messages"][1]["content"],
        json!([{"type": "tool_use", "id": "toolu_1", "name": "calc", "input": {}}]),
        "no empty text block; unparsable input becomes an empty object"
    );
}

#[test]
fn gemini_request() {
    let config = ProviderConfig::new(Provider::Gemini, KEY, "gemini-2.5-flash");
    let request = config.build_request(&sample_request(""));
    assert_eq!(
        request.url,
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(request.header("x-goog-api-key"), Some(KEY));
    assert!(
        !request.url.contains(KEY),
        "the key travels in a header, not the URL"
    );
    assert_eq!(
        body(&request),
        json!({
            "contents": [
                {"role": "user", "parts": [{"text": "Weather in Paris and Rome?"}]},
                {"role": "model", "parts": [
                    {"text": "Checking."},
                    {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                     "thoughtSignature": "sig-1"},
                    {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}},
                ]},
                // No ids: results are matched by name and order.
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "get_weather", "response": {"output": "18°C"}}},
                    {"functionResponse": {"name": "get_weather", "response": {"error": "timeout"}}},
                    {"text": "Thanks"},
                ]},
            ],
            "systemInstruction": {"parts": [{"text": "Be brief."}]},
            "tools": [{"functionDeclarations": [{
                "name": "get_weather",
                "description": "Current weather of a city.",
                "parametersJsonSchema": weather_tool().input_schema,
            }]}],
            "generationConfig": {"maxOutputTokens": 256, "temperature": 0.7},
        })
    );
}

#[test]
fn gemini_model_names_are_normalized_and_encoded() {
    let config = ProviderConfig::new(Provider::Gemini, KEY, "models/gemini-2.0-flash")
        .with_base_url("https://proxy.example/gemini/v1beta/");
    let request = config.build_request(&ChatRequest::default());
    assert_eq!(
        request.url,
        "https://proxy.example/gemini/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse"
    );
    assert!(body(&request).get("generationConfig").is_none());
    let odd =
        ProviderConfig::new(Provider::Gemini, KEY, "../x?y").build_request(&ChatRequest::default());
    assert!(
        odd.url.contains("/models/..%2Fx%3Fy:streamGenerateContent"),
        "{}",
        odd.url
    );
}

#[test]
fn the_key_never_appears_in_debug_output() {
    for provider in Provider::ALL {
        let config = ProviderConfig::new(provider, KEY, "m");
        let printed = format!("{config:?} {config:#?}");
        assert!(!printed.contains(KEY), "{printed}");
        assert!(printed.contains("api_key: \"***\""), "{printed}");
        let request = config.build_request(&sample_request(""));
        let printed = format!("{request:?} {request:#?}");
        assert!(!printed.contains(KEY), "{printed}");
        assert!(printed.contains("***"), "{printed}");
        assert!(
            printed.contains("content-type"),
            "other headers still show: {printed}"
        );
    }
}

#[test]
fn messages_round_trip_through_json_for_checkpoints() {
    let request = sample_request("m");
    let text = serde_json::to_string(&request).expect("serializes");
    let back: ChatRequest = serde_json::from_str(&text).expect("deserializes");
    assert_eq!(back, request);
    let message: Value = serde_json::to_value(&request.messages[2]).expect("serializes");
    assert_eq!(
        message,
        json!({"role": "tool", "call_id": "call_1", "name": "get_weather", "content": "18°C", "is_error": false})
    );
}

#[test]
fn names_round_trip() {
    for provider in Provider::ALL {
        assert_eq!(Provider::from_name(provider.as_str()), Some(provider));
        let json = serde_json::to_string(&provider).expect("serializes");
        assert_eq!(json, format!("\"{}\"", provider.as_str()));
    }
    assert_eq!(
        Provider::from_name(" Anthropic "),
        Some(Provider::Anthropic)
    );
    assert_eq!(Provider::from_name("cohere"), None);
    for reason in [
        FinishReason::Stop,
        FinishReason::Length,
        FinishReason::ToolCalls,
        FinishReason::ContentFilter,
        FinishReason::Unknown("pause_turn".into()),
    ] {
        assert_eq!(FinishReason::from_openai(reason.as_str()), reason);
        assert_eq!(reason.to_string(), reason.as_str());
    }
}

// ---------------------------------------------------------------------------------------------
// HTTP errors
// ---------------------------------------------------------------------------------------------

const NO_HEADERS: [(&str, &str); 0] = [];

#[test]
fn http_401_says_check_the_key_and_never_shows_it() {
    let body = r#"{"error": {"message": "Incorrect API key provided: sk-proj-abc*********************xyz9. You can find your API key at https://platform.openai.com/account/api-keys.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}"#;
    let error = ProviderError::from_http(Provider::OpenAi, 401, NO_HEADERS, body);
    let message = error.to_string();
    assert!(message.starts_with("OpenAI-compatible API answered HTTP 401 (invalid_api_key): Incorrect API key provided: ***."), "{message}");
    assert!(
        message.ends_with("Check the API key (and that it may use this model and endpoint)."),
        "{message}"
    );
    assert!(!message.contains("sk-"), "{message}");
    assert!(
        !format!("{error:?}").contains("sk-proj"),
        "Debug is scrubbed too"
    );
    assert!(!error.is_retryable());
    assert_eq!(error.status(), Some(401));
}

#[test]
fn http_403_and_404_point_at_key_and_model() {
    let forbidden = ProviderError::from_http(
        Provider::Anthropic,
        403,
        NO_HEADERS,
        r#"{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}"#,
    );
    assert!(forbidden.to_string().contains("(permission_error)"));
    assert!(forbidden.to_string().contains("Check the API key"));
    let missing = ProviderError::from_http(
        Provider::OpenAi,
        404,
        NO_HEADERS,
        r#"{"error":{"message":"The model `gpt-9` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}"#,
    );
    let text = missing.to_string();
    assert!(text.contains("The model `gpt-9` does not exist"), "{text}");
    assert!(
        text.ends_with("Check the model name and the base URL."),
        "{text}"
    );
    // Ollama's error is a bare string.
    let ollama = ProviderError::from_http(
        Provider::OpenAi,
        404,
        NO_HEADERS,
        r#"{"error":"model \"llama9\" not found, try pulling it first"}"#,
    );
    assert!(ollama.to_string().contains("model \"llama9\" not found"));
    assert!(ollama.to_string().contains("Check the model name"));
}

#[test]
fn http_429_is_retryable_after_the_given_delay() {
    let error = ProviderError::from_http(
        Provider::OpenAi,
        429,
        [("Retry-After", "20"), ("x-request-id", "req_1")],
        r#"{"error":{"message":"Rate limit reached for gpt-4o.","type":"requests","code":"rate_limit_exceeded"}}"#,
    );
    assert!(error.is_retryable());
    assert_eq!(error.retry_after_secs(), Some(20));
    assert!(
        error
            .to_string()
            .ends_with("This is temporary: retry in 20 s."),
        "{error}"
    );
    let ms = ProviderError::from_http(
        Provider::Anthropic,
        429,
        vec![("retry-after-ms".to_string(), "1500".to_string())],
        "",
    );
    assert_eq!(ms.retry_after_secs(), Some(2), "rounded up");
    let date = ProviderError::from_http(
        Provider::OpenAi,
        429,
        [("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")],
        "",
    );
    assert_eq!(
        date.retry_after_secs(),
        None,
        "no clock to read a date with"
    );
    assert!(date.is_retryable());
}

#[test]
fn http_429_for_an_empty_quota_is_not_retryable() {
    let error = ProviderError::from_http(
        Provider::OpenAi,
        429,
        NO_HEADERS,
        r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#,
    );
    assert!(!error.is_retryable());
    assert!(
        error
            .to_string()
            .ends_with("The account is out of quota: check its plan and billing."),
        "{error}"
    );
}

#[test]
fn gemini_429_reads_the_retry_delay_from_the_body() {
    let body = r#"[{"error": {"code": 429, "message": "You exceeded your current quota.", "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure"}, {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}]}}]"#;
    let error = ProviderError::from_http(Provider::Gemini, 429, NO_HEADERS, body);
    assert!(error.is_retryable());
    assert_eq!(error.retry_after_secs(), Some(37));
    assert_eq!(
        error.to_string(),
        "Gemini answered HTTP 429 (RESOURCE_EXHAUSTED): You exceeded your current quota. This is \
         temporary: retry in 37 s."
    );
}

#[test]
fn gemini_400_for_a_bad_key_carries_googles_own_words() {
    let body = r#"{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}]}}"#;
    let error = ProviderError::from_http(Provider::Gemini, 400, NO_HEADERS, body);
    assert!(!error.is_retryable());
    assert_eq!(
        error.to_string(),
        "Gemini answered HTTP 400 (INVALID_ARGUMENT): API key not valid. Please pass a valid API key."
    );
}

#[test]
fn server_errors_and_overload_are_retryable() {
    let overloaded = ProviderError::from_http(
        Provider::Anthropic,
        529,
        NO_HEADERS,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}"#,
    );
    assert!(overloaded.is_retryable());
    assert_eq!(
        overloaded.to_string(),
        "Anthropic answered HTTP 529 (overloaded_error): Overloaded. This is temporary: retry in a \
         moment."
    );
    for status in [500, 502, 503, 504, 408] {
        assert!(ProviderError::from_http(Provider::OpenAi, status, NO_HEADERS, "").is_retryable());
    }
    for status in [400, 401, 403, 404, 413, 422] {
        assert!(!ProviderError::from_http(Provider::OpenAi, status, NO_HEADERS, "").is_retryable());
    }
}

#[test]
fn bodies_that_are_not_json_still_give_a_message() {
    let html = ProviderError::from_http(
        Provider::OpenAi,
        502,
        NO_HEADERS,
        "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>cloudflare</body>\n</html>",
    );
    assert_eq!(
        html.to_string(),
        "OpenAI-compatible API answered HTTP 502: <html> <head><title>502 Bad \
         Gateway</title></head> <body>cloudflare</body> </html>. This is temporary: retry in a \
         moment."
    );
    let empty = ProviderError::from_http(Provider::Gemini, 503, NO_HEADERS, b"");
    assert_eq!(
        empty.to_string(),
        "Gemini answered HTTP 503 without an error message. This is temporary: retry in a moment."
    );
    let huge = "x".repeat(100_000);
    let long = ProviderError::from_http(
        Provider::Gemini,
        500,
        NO_HEADERS,
        format!("{{\"error\":{{\"message\":\"{huge}\"}}}}"),
    );
    assert!(long.to_string().len() < 800, "messages are capped");
    let invalid =
        ProviderError::from_http(Provider::Gemini, 500, NO_HEADERS, [0xff_u8, 0xfe, b'{']);
    assert!(invalid.is_retryable());
}

#[test]
fn the_fuzz_entry_point_survives_fixtures_and_noise() {
    for (i, (name, provider)) in ALL_FIXTURES.iter().enumerate() {
        let pick = Provider::ALL
            .iter()
            .position(|p| p == provider)
            .expect("listed") as u8;
        for step in [1u8, 5, 255] {
            let mut input = vec![pick, step];
            input.extend(fixture(name));
            fuzz_stream_decoder(&input);
        }
        // The wrong decoder for the body: still no panic.
        let mut input = vec![pick + 1, 3];
        input.extend(fixture(name));
        fuzz_stream_decoder(&input);
        let mut rng = Rng(i as u64 + 7);
        let noise: Vec<u8> = (0..4096).map(|_| rng.next() as u8).collect();
        fuzz_stream_decoder(&noise);
    }
    fuzz_stream_decoder(&[]);
    fuzz_stream_decoder(&[0]);
}

#[test]
fn an_error_event_in_plain_text_is_still_an_error() {
    let decoded = decode_whole(
        Provider::OpenAi,
        b"event: error\ndata: upstream connect error\n\n",
    );
    assert_eq!(decoded.end, Ok(()));
    let s = summarize(&decoded.deltas);
    assert_eq!(stream_error(&s.errors[0]).2, "upstream connect error");
}
