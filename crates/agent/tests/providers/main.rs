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

mod fixtures;
mod hand_made;
mod http_errors;
mod recorded;
mod requests;
mod workers_ai;

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

const NO_HEADERS: [(&str, &str); 0] = [];
