//! Cloudflare Workers AI, through a deployed Worker's `AI` binding or through its REST API.
//!
//! Both take the same input — Chat Completions `messages` and `tools`, plus `stream: true` — and
//! answer with the same server-sent events, in one of two shapes depending on the model:
//!
//! - the native shape: one `{"response": "Hel", "p": "…"}` per piece of text (`p` is padding),
//!   `tool_calls` at the top level — whole (`{"name", "arguments": {…}}`) or as Chat Completions
//!   fragments with `index` and `id`, closed by an all-null fragment — a top-level
//!   `finish_reason`, and a last `{"response": "", "usage": {…}}`;
//! - Chat Completions chunks (`choices[0].delta`, `reasoning_content` included), which repeat
//!   the running `usage` on every chunk.
//!
//! Either ends with `data: [DONE]`, often without any finish reason. A model that cannot stream
//! answers with one whole object instead; the host frames it as a single event, and its
//! `choices[0].message` reads as a delta. Errors the binding throws carry a Workers AI code in
//! their message (`3040: Capacity temporarily exceeded`), mapped to the HTTP status Cloudflare
//! documents for it by [`ProviderError::from_workers_ai`].

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::decoder::{parse_json, DeltaQueue};
use super::delta::FinishReason;
use super::error::{scrub_secrets, snippet, ProviderError};
use super::openai::{messages_json, tools_json, ChatStream, Chunk, FunctionDelta, ToolCallDelta};
use super::request::{temperature_json, ChatRequest, HttpRequest};
use super::{json_headers, Provider, ProviderConfig};

const PROVIDER: Provider = Provider::WorkersAi;

/// The model when none is configured: one of the Workers AI models that call tools, fast
/// enough for chat.
pub const WORKERS_AI_DEFAULT_MODEL: &str = "@cf/meta/llama-3.3-70b-instruct-fp8-fast";

/// Workers AI stops text models at 256 tokens unless asked for more: too short for an answer
/// with a tool call in it.
pub const WORKERS_AI_DEFAULT_MAX_TOKENS: u32 = 2048;

/// The REST endpoint's base for an account; the model's name is the rest of the path.
#[must_use]
pub fn workers_ai_rest_base(account_id: &str) -> String {
    format!(
        "https://api.cloudflare.com/client/v4/accounts/{}/ai/run",
        account_id.trim()
    )
}

/// `POST {base}/{model}`; the body is also what the binding's `run(model, inputs)` takes.
pub(crate) fn build_request(config: &ProviderConfig, request: &ChatRequest) -> HttpRequest {
    let mut body = Map::new();
    body.insert("messages".into(), Value::Array(messages_json(request)));
    if let Some(tools) = tools_json(request) {
        body.insert("tools".into(), tools);
    }
    let max_tokens = request.max_tokens.unwrap_or(WORKERS_AI_DEFAULT_MAX_TOKENS);
    body.insert("max_tokens".into(), max_tokens.into());
    if let Some(t) = request.temperature.and_then(temperature_json) {
        body.insert("temperature".into(), t);
    }
    body.insert("stream".into(), true.into());
    let mut headers = json_headers();
    if !config.api_key.is_empty() {
        headers.push(("authorization".into(), format!("Bearer {}", config.api_key)));
    }
    HttpRequest {
        method: "POST".into(),
        url: format!("{}/{}", config.base(), config.model_for(request)),
        headers,
        body: Value::Object(body).to_string(),
    }
}

/// One event of either shape; the Chat Completions fields are read by [`ChatStream`].
#[derive(Deserialize)]
struct Event {
    response: Option<Value>,
    tool_calls: Option<Vec<NativeCall>>,
    finish_reason: Option<String>,
    errors: Option<Value>,
    #[serde(flatten)]
    chat: Chunk,
}

/// A top-level tool call: whole (`name`, `arguments`) or a Chat Completions fragment.
#[derive(Deserialize)]
struct NativeCall {
    index: Option<u32>,
    id: Option<String>,
    name: Option<String>,
    arguments: Option<Value>,
    function: Option<FunctionDelta>,
}

/// Decoder state for one Workers AI stream.
#[derive(Debug)]
pub(crate) struct WorkersAiStream {
    chat: ChatStream,
    /// The latest `usage`: Chat Completions-shaped streams repeat the running total on every
    /// chunk, so it is reported once, at the end.
    usage: Option<(u64, u64, Option<u64>)>,
}

impl Default for WorkersAiStream {
    fn default() -> Self {
        Self {
            chat: ChatStream::of(PROVIDER),
            usage: None,
        }
    }
}

impl WorkersAiStream {
    pub(crate) fn on_event(
        &mut self,
        data: &str,
        out: &mut DeltaQueue,
    ) -> Result<(), ProviderError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.chat.on_done(out);
            self.on_end(out);
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let mut event: Event = parse_json(PROVIDER, data)?;
        if let Some(usage) = event.chat.usage.take() {
            self.usage = Some((
                usage.prompt_tokens.unwrap_or(0),
                usage.completion_tokens.unwrap_or(0),
                usage.total_tokens,
            ));
        }
        match event.response {
            Some(Value::String(text)) => out.text(&text),
            None | Some(Value::Null) => {}
            // A model asked for JSON output answers with the object itself.
            Some(other) => out.text(&other.to_string()),
        }
        let mut result = self.chat.on_chunk(event.chat, out);
        for call in event.tool_calls.unwrap_or_default() {
            let Some(fragment) = fragment(call, out.call_count()) else {
                continue;
            };
            if let Err(e) = self.chat.on_tool_call(fragment, out) {
                result = Err(e);
            }
        }
        if let Some(reason) = event.finish_reason.filter(|r| !r.is_empty()) {
            self.chat.on_finish(&reason, out);
        }
        if let Some(errors) = event
            .errors
            .filter(|e| e.as_array().is_some_and(|a| !a.is_empty()))
        {
            out.error(ProviderError::from_stream_value(PROVIDER, &errors));
        }
        result
    }

    /// At `[DONE]` or the end of the body: the usage, and the finish reason a stream that
    /// ended properly left out (tool calls if any were made).
    pub(crate) fn on_end(&mut self, out: &mut DeltaQueue) {
        if out.error_reported() {
            return;
        }
        if let Some((prompt, completion, total)) = self.usage.take() {
            out.usage(prompt, completion, total);
        }
        if self.chat.is_complete() {
            out.finish(if out.call_count() > 0 {
                FinishReason::ToolCalls
            } else {
                FinishReason::Stop
            });
        }
    }

    pub(crate) fn is_complete(&self) -> bool {
        self.chat.is_complete()
    }
}

/// The Chat Completions fragment a top-level call amounts to; `None` for the all-null fragment
/// that only closes the previous call (the next call, or the end, closes it anyway).
fn fragment(call: NativeCall, calls_so_far: usize) -> Option<ToolCallDelta> {
    if let Some(function) = call.function {
        let empty = call.id.as_deref().is_none_or(str::is_empty)
            && function.name.as_deref().is_none_or(str::is_empty)
            && function
                .arguments
                .as_ref()
                .is_none_or(|a| a.is_null() || a.as_str() == Some(""));
        return (!empty).then_some(ToolCallDelta {
            index: call.index,
            id: call.id,
            function: Some(function),
        });
    }
    if call.name.as_deref().is_some_and(|n| !n.is_empty()) {
        // A whole call: it is a call of its own even without an index.
        let index = call.index.or_else(|| u32::try_from(calls_so_far).ok());
        return Some(ToolCallDelta {
            index,
            id: call.id,
            function: Some(FunctionDelta {
                name: call.name,
                arguments: call.arguments,
            }),
        });
    }
    call.arguments
        .filter(|a| !a.is_null())
        .map(|arguments| ToolCallDelta {
            index: call.index,
            id: call.id,
            function: Some(FunctionDelta {
                name: None,
                arguments: Some(arguments),
            }),
        })
}

impl ProviderError {
    /// An error the `AI` binding threw, from its message. Workers AI puts its own code in it
    /// (`AiError: 3040: Capacity temporarily exceeded`); the status is the one Cloudflare
    /// documents for that code, so retries and hints work as for an HTTP answer.
    #[must_use]
    pub fn from_workers_ai(message: &str) -> Self {
        let code = workers_ai_code(message);
        Self::Http {
            provider: PROVIDER,
            status: code.map_or(500, status_of_code),
            code: code.map(|c| c.to_string()),
            message: scrub_secrets(&snippet(message)),
            retry_after_secs: None,
        }
    }
}

/// The first four-digit number followed by `:` (Workers AI codes are 3xxx and 5xxx).
fn workers_ai_code(message: &str) -> Option<u16> {
    let bytes = message.as_bytes();
    (0..bytes.len().saturating_sub(4)).find_map(|i| {
        let digits = bytes.get(i..i + 4)?;
        let before_ok = i == 0 || !bytes[i - 1].is_ascii_digit();
        let code_ok = digits.iter().all(u8::is_ascii_digit) && matches!(digits[0], b'3' | b'5');
        (before_ok && code_ok && bytes.get(i + 4) == Some(&b':'))
            .then(|| core::str::from_utf8(digits).ok()?.parse().ok())
            .flatten()
    })
}

/// Cloudflare's table of Workers AI errors: internal code to HTTP status.
fn status_of_code(code: u16) -> u16 {
    match code {
        3003 | 3039 | 5004 | 5006 | 5007 => 400,
        3023 | 3041 | 5016 | 5018 => 403,
        3042 => 404,
        5005 | 5019 => 405,
        3007 | 3008 => 408,
        3006 => 413,
        3036 | 3040 => 429,
        _ => 500,
    }
}
