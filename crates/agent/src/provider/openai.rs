//! OpenAI Chat Completions, spoken by OpenAI and by most other servers (Ollama, vLLM,
//! OpenRouter, Groq, DeepSeek, Azure), each with its own quirks tolerated here.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::decoder::{parse_json, DeltaQueue};
use super::delta::FinishReason;
use super::error::ProviderError;
use super::request::{temperature_json, ChatMessage, ChatRequest, HttpRequest};
use super::{json_headers, Provider, ProviderConfig};

const PROVIDER: Provider = Provider::OpenAi;

/// `POST {base}/chat/completions` with `stream: true` and `stream_options.include_usage`, so the
/// last chunk reports token usage.
pub(crate) fn build_request(config: &ProviderConfig, request: &ChatRequest) -> HttpRequest {
    let mut body = Map::new();
    body.insert("model".into(), config.model_for(request).into());
    body.insert("messages".into(), Value::Array(messages_json(request)));
    if let Some(tools) = tools_json(request) {
        body.insert("tools".into(), tools);
    }
    if let Some(max) = request.max_tokens {
        // OpenAI's reasoning models refuse `max_tokens`; most compatible servers only know it.
        let field = if is_openai_itself(config.base()) {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(field.into(), max.into());
    }
    if let Some(t) = request.temperature.and_then(temperature_json) {
        body.insert("temperature".into(), t);
    }
    body.insert("stream".into(), true.into());
    body.insert("stream_options".into(), json!({"include_usage": true}));

    let mut headers = json_headers();
    if !config.api_key.is_empty() {
        headers.push(("authorization".into(), format!("Bearer {}", config.api_key)));
    }
    HttpRequest {
        method: "POST".into(),
        url: format!("{}/chat/completions", config.base()),
        headers,
        body: Value::Object(body).to_string(),
    }
}

/// The conversation as Chat Completions messages, which Workers AI takes too.
pub(super) fn messages_json(request: &ChatRequest) -> Vec<Value> {
    let mut messages = Vec::new();
    if let Some(system) = &request.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in &request.messages {
        messages.push(match message {
            ChatMessage::User { content } => json!({"role": "user", "content": content}),
            ChatMessage::Assistant {
                content,
                tool_calls,
            } => {
                let mut m = Map::new();
                m.insert("role".into(), "assistant".into());
                // A turn that only called tools has `content: null`; `""` confuses some servers.
                m.insert(
                    "content".into(),
                    if content.is_empty() && !tool_calls.is_empty() {
                        Value::Null
                    } else {
                        content.as_str().into()
                    },
                );
                if !tool_calls.is_empty() {
                    let calls = tool_calls
                        .iter()
                        .map(|call| {
                            json!({
                                "id": call.id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": call.arguments},
                            })
                        })
                        .collect();
                    m.insert("tool_calls".into(), Value::Array(calls));
                }
                Value::Object(m)
            }
            ChatMessage::Tool(result) => json!({
                "role": "tool",
                "tool_call_id": result.call_id,
                "content": result.content_marking_errors(),
            }),
        });
    }

    messages
}

/// The tools in Chat Completions form; `None` when there are none (an empty list is refused by
/// some servers).
pub(super) fn tools_json(request: &ChatRequest) -> Option<Value> {
    if request.tools.is_empty() {
        return None;
    }
    let tools = request
        .tools
        .iter()
        .map(|tool| {
            json!({
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.input_schema,
                },
            })
        })
        .collect();
    Some(Value::Array(tools))
}

fn is_openai_itself(base: &str) -> bool {
    let host = base.split("://").nth(1).unwrap_or(base);
    let host = host.split('/').next().unwrap_or(host);
    host.eq_ignore_ascii_case("api.openai.com")
}

/// One `chat.completion.chunk`. Everything is optional: Azure's first chunk has no choices,
/// DeepSeek sends `"usage": null` on every chunk, OpenRouter adds `error` to a chunk.
#[derive(Deserialize, Default)]
pub(super) struct Chunk {
    pub(super) choices: Option<Vec<Choice>>,
    pub(super) usage: Option<WireUsage>,
    x_groq: Option<GroqExtra>,
    pub(super) error: Option<Value>,
}

#[derive(Deserialize)]
pub(super) struct Choice {
    index: Option<u32>,
    /// `message` in a whole (non-streamed) reply, which Workers AI sends when a model cannot
    /// stream.
    #[serde(alias = "message")]
    delta: Option<ChoiceDelta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ChoiceDelta {
    content: Option<String>,
    refusal: Option<String>,
    reasoning: Option<String>,
    reasoning_content: Option<String>,
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
pub(super) struct ToolCallDelta {
    pub(super) index: Option<u32>,
    pub(super) id: Option<String>,
    pub(super) function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
pub(super) struct FunctionDelta {
    pub(super) name: Option<String>,
    /// A string by the spec; a few servers send the object itself.
    pub(super) arguments: Option<Value>,
}

#[derive(Deserialize, Clone, Copy)]
pub(super) struct WireUsage {
    pub(super) prompt_tokens: Option<u64>,
    pub(super) completion_tokens: Option<u64>,
    pub(super) total_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct GroqExtra {
    usage: Option<WireUsage>,
}

/// Decoder state for one Chat Completions stream.
///
/// With `n > 1` the stream interleaves several choices; only choice 0 is the reply (the engine
/// never asks for more, and a second answer has no place in a conversation), so the others are
/// skipped.
#[derive(Debug)]
pub(crate) struct ChatStream {
    /// Whose stream this is, for errors: Workers AI streams Chat Completions chunks too.
    provider: Provider,
    /// The call receiving argument fragments: the provider's index and id for it, and our
    /// dense index.
    current: Option<OpenCall>,
    /// Provider indices of calls already ended, to catch a server interleaving calls.
    ended: Vec<Option<u32>>,
    done: bool,
    finished: bool,
}

#[derive(Debug)]
struct OpenCall {
    key: Option<u32>,
    id: String,
    index: u32,
}

impl Default for ChatStream {
    fn default() -> Self {
        Self::of(PROVIDER)
    }
}

impl ChatStream {
    pub(super) fn of(provider: Provider) -> Self {
        Self {
            provider,
            current: None,
            ended: Vec::new(),
            done: false,
            finished: false,
        }
    }

    pub(crate) fn on_event(
        &mut self,
        event: &str,
        data: &str,
        out: &mut DeltaQueue,
    ) -> Result<(), ProviderError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.on_done(out);
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        if event == "error" {
            // Groq ends a failed stream with `event: error` and `{"error": {...}}`; a server
            // that says it in plain text is understood too.
            let error = match serde_json::from_str::<Value>(data) {
                Ok(value) => ProviderError::from_stream_value(self.provider, &value),
                Err(_) => ProviderError::from_stream_text(self.provider, data),
            };
            out.error(error);
            return Ok(());
        }
        let chunk: Chunk = parse_json(self.provider, data)?;
        self.on_chunk(chunk, out)
    }

    pub(super) fn on_finish(&mut self, reason: &str, out: &mut DeltaQueue) {
        self.end_current(out);
        self.finished = true;
        out.finish(FinishReason::from_openai(reason));
    }

    /// `[DONE]`: the end of the reply.
    pub(super) fn on_done(&mut self, out: &mut DeltaQueue) {
        self.done = true;
        self.end_current(out);
    }

    pub(super) fn on_chunk(
        &mut self,
        chunk: Chunk,
        out: &mut DeltaQueue,
    ) -> Result<(), ProviderError> {
        let mut result = Ok(());
        for choice in chunk.choices.unwrap_or_default() {
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.delta {
                if let Err(e) = self.on_delta(delta, out) {
                    result = Err(e);
                }
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.on_finish(&reason, out);
            }
        }
        let usage = chunk.usage.or_else(|| chunk.x_groq.and_then(|x| x.usage));
        if let Some(usage) = usage {
            out.usage(
                usage.prompt_tokens.unwrap_or(0),
                usage.completion_tokens.unwrap_or(0),
                usage.total_tokens,
            );
        }
        if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
            out.error(ProviderError::from_stream_value(self.provider, &error));
        }
        result
    }

    fn on_delta(&mut self, delta: ChoiceDelta, out: &mut DeltaQueue) -> Result<(), ProviderError> {
        if let Some(reasoning) = delta.reasoning.or(delta.reasoning_content) {
            out.reasoning(&reasoning);
        }
        if let Some(text) = &delta.content {
            out.text(text);
        }
        if let Some(refusal) = &delta.refusal {
            out.text(refusal);
        }
        for call in delta.tool_calls.unwrap_or_default() {
            self.on_tool_call(call, out)?;
        }
        Ok(())
    }

    /// Calls arrive one after another: a fragment with a new index or a new id starts the next
    /// call and so ends the previous one. A fragment without an index continues the current
    /// call (gateways that drop indices).
    pub(super) fn on_tool_call(
        &mut self,
        call: ToolCallDelta,
        out: &mut DeltaQueue,
    ) -> Result<(), ProviderError> {
        let id = call.id.filter(|id| !id.is_empty());
        let (name, arguments) = match call.function {
            Some(f) => (f.name.filter(|n| !n.is_empty()), f.arguments),
            None => (None, None),
        };
        let continues = self.current.as_ref().is_some_and(|cur| {
            (call.index.is_none() || call.index == cur.key)
                && id.as_ref().is_none_or(|id| *id == cur.id)
        });
        if !continues {
            if id.is_none() && call.index.is_some() && self.ended.contains(&call.index) {
                return Err(ProviderError::malformed(
                    self.provider,
                    format_args!(
                        "tool call {} was continued after the next call had started",
                        call.index.unwrap_or(0)
                    ),
                ));
            }
            self.end_current(out);
            let id = id.unwrap_or_else(|| format!("call_{}", out.call_count()));
            let index = out.start_call(id.clone(), name.unwrap_or_default());
            self.current = Some(OpenCall {
                key: call.index,
                id,
                index,
            });
        }
        if let (Some(current), Some(arguments)) = (&self.current, arguments) {
            match arguments {
                Value::String(fragment) => out.call_args(current.index, &fragment),
                Value::Null => {}
                other => out.call_args(current.index, &other.to_string()),
            }
        }
        Ok(())
    }

    pub(super) fn end_current(&mut self, out: &mut DeltaQueue) {
        if let Some(current) = self.current.take() {
            out.end_call(current.index);
            self.ended.push(current.key);
        }
    }

    /// `[DONE]` or a finish reason for choice 0 ends the reply; the usage chunk after the finish
    /// reason is welcome but not required (a server may not support `stream_options`).
    pub(crate) fn is_complete(&self) -> bool {
        self.done || self.finished
    }
}
