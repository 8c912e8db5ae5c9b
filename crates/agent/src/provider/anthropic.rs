//! Anthropic Messages: content blocks, `tool_use` / `tool_result`, a top-level system prompt.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::decoder::{parse_json, DeltaQueue};
use super::delta::{FinishReason, REDACTED_REASONING};
use super::error::ProviderError;
use super::request::{temperature_json, ChatMessage, ChatRequest, HttpRequest};
use super::{json_headers, Provider, ProviderConfig, ANTHROPIC_DEFAULT_MAX_TOKENS};

const PROVIDER: Provider = Provider::Anthropic;

/// The API version this codec speaks; Anthropic keeps old versions stable, so pinning it keeps
/// the stream format stable.
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";

/// `POST {base}/messages` with `x-api-key`, `anthropic-version` and `stream: true`.
///
/// Consecutive messages of one role are merged into one message of several blocks, as the API
/// expects: tool results answering one assistant turn go back as one user message.
pub(crate) fn build_request(config: &ProviderConfig, request: &ChatRequest) -> HttpRequest {
    let turns = request.messages.iter().map(|message| match message {
        ChatMessage::User { content } => ("user", text_block(content)),
        ChatMessage::Assistant {
            content,
            tool_calls,
        } => {
            let mut blocks = text_block(content);
            for call in tool_calls {
                blocks.push(json!({
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.name,
                    "input": arguments_object(&call.arguments),
                }));
            }
            ("assistant", blocks)
        }
        ChatMessage::Tool(result) => {
            let mut block = Map::new();
            block.insert("type".into(), "tool_result".into());
            block.insert("tool_use_id".into(), result.call_id.as_str().into());
            block.insert("content".into(), result.content.as_str().into());
            if result.is_error {
                block.insert("is_error".into(), true.into());
            }
            ("user", alloc::vec![Value::Object(block)])
        }
    });
    let messages = super::merge_turns(turns, "content");

    let mut body = Map::new();
    body.insert("model".into(), config.model_for(request).into());
    body.insert(
        "max_tokens".into(),
        request
            .max_tokens
            .unwrap_or(ANTHROPIC_DEFAULT_MAX_TOKENS)
            .into(),
    );
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        body.insert("system".into(), system.into());
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.input_schema,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(t) = request.temperature.and_then(temperature_json) {
        body.insert("temperature".into(), t);
    }
    body.insert("stream".into(), true.into());

    let mut headers = json_headers();
    if !config.api_key.is_empty() {
        headers.push(("x-api-key".into(), config.api_key.clone()));
    }
    headers.push(("anthropic-version".into(), ANTHROPIC_VERSION.into()));
    HttpRequest {
        method: "POST".into(),
        url: format!("{}/messages", config.base()),
        headers,
        body: Value::Object(body).to_string(),
    }
}

/// The API rejects empty text blocks, so empty text becomes no block.
fn text_block(text: &str) -> Vec<Value> {
    if text.is_empty() {
        Vec::new()
    } else {
        alloc::vec![json!({"type": "text", "text": text})]
    }
}

/// `tool_use.input` must be an object; arguments the model garbled become `{}` rather than a
/// request the API refuses (the tool result already told the model what went wrong).
pub(crate) fn arguments_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::Object(Map::new()),
    }
}

#[derive(Deserialize)]
struct MessageStart {
    message: Option<StartMessage>,
}

#[derive(Deserialize)]
struct StartMessage {
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct BlockStart {
    index: u32,
    content_block: Block,
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
    thinking: Option<String>,
    id: Option<String>,
    name: Option<String>,
    input: Option<Value>,
}

#[derive(Deserialize)]
struct BlockDelta {
    index: u32,
    delta: InnerDelta,
}

#[derive(Deserialize)]
struct InnerDelta {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
    thinking: Option<String>,
    partial_json: Option<String>,
}

#[derive(Deserialize)]
struct BlockStop {
    index: u32,
}

#[derive(Deserialize)]
struct MessageDelta {
    delta: Option<StopDelta>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct StopDelta {
    stop_reason: Option<String>,
}

/// Decoder state for one Messages stream.
#[derive(Debug, Default)]
pub(crate) struct MessagesStream {
    /// Content-block index → dense call index, for the `tool_use` blocks.
    tool_blocks: Vec<(u32, u32)>,
    /// From `message_start`: prompt tokens, cached ones included.
    prompt_tokens: Option<u64>,
    stopped: bool,
}

impl MessagesStream {
    /// Dispatches on the JSON `type` (the `event:` line repeats it); unknown types are skipped.
    pub(crate) fn on_event(
        &mut self,
        data: &str,
        out: &mut DeltaQueue,
    ) -> Result<(), ProviderError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        let value: Value = parse_json(PROVIDER, data)?;
        let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
        let bad_body =
            |e: serde_json::Error| ProviderError::malformed(PROVIDER, format_args!("{kind}: {e}"));
        match kind {
            "message_start" => {
                let start = MessageStart::deserialize(&value).map_err(bad_body)?;
                if let Some(usage) = start.message.and_then(|m| m.usage) {
                    self.prompt_tokens = Some(prompt_tokens(&usage));
                }
            }
            "content_block_start" => {
                let start = BlockStart::deserialize(&value).map_err(bad_body)?;
                self.on_block_start(start, out);
            }
            "content_block_delta" => {
                let delta = BlockDelta::deserialize(&value).map_err(bad_body)?;
                match delta.delta.kind.as_str() {
                    "text_delta" => out.text(delta.delta.text.as_deref().unwrap_or("")),
                    "thinking_delta" => {
                        out.reasoning(delta.delta.thinking.as_deref().unwrap_or(""))
                    }
                    "input_json_delta" => {
                        if let Some(call) = self.call_of(delta.index) {
                            out.call_args(call, delta.delta.partial_json.as_deref().unwrap_or(""));
                        }
                    }
                    // signature_delta, citations_delta, …: nothing to show.
                    _ => {}
                }
            }
            "content_block_stop" => {
                let stop = BlockStop::deserialize(&value).map_err(bad_body)?;
                if let Some(call) = self.call_of(stop.index) {
                    out.end_call(call);
                }
            }
            "message_delta" => {
                let delta = MessageDelta::deserialize(&value).map_err(bad_body)?;
                if let Some(usage) = &delta.usage {
                    // Newer streams repeat the input counts here; older ones only had them in
                    // message_start.
                    let prompt = if usage.input_tokens.is_some() {
                        prompt_tokens(usage)
                    } else {
                        self.prompt_tokens.unwrap_or(0)
                    };
                    out.usage(prompt, usage.output_tokens.unwrap_or(0), None);
                }
                if let Some(reason) = delta.delta.and_then(|d| d.stop_reason) {
                    self.stopped = true;
                    out.finish(map_stop_reason(&reason));
                }
            }
            "message_stop" => {
                self.stopped = true;
                out.end_open_calls();
            }
            "error" => out.error(ProviderError::from_stream_value(PROVIDER, &value)),
            // ping, and whatever Anthropic adds next.
            _ => {}
        }
        Ok(())
    }

    fn on_block_start(&mut self, start: BlockStart, out: &mut DeltaQueue) {
        let block = start.content_block;
        match block.kind.as_str() {
            "text" => out.text(block.text.as_deref().unwrap_or("")),
            "thinking" => out.reasoning(block.thinking.as_deref().unwrap_or("")),
            "redacted_thinking" => out.reasoning(REDACTED_REASONING),
            "tool_use" => {
                let id = block
                    .id
                    .filter(|id| !id.is_empty())
                    .unwrap_or_else(|| format!("toolu_{}", start.index));
                let call = out.start_call(id, block.name.unwrap_or_default());
                self.tool_blocks.push((start.index, call));
                // Streams start with `input: {}` and send the JSON as deltas; an input that is
                // already filled in is the whole of it.
                if let Some(input) = block
                    .input
                    .filter(|i| i.as_object().is_some_and(|o| !o.is_empty()))
                {
                    out.call_args(call, &input.to_string());
                }
            }
            // server_tool_use, web_search_tool_result, …: run by Anthropic, not by us.
            _ => {}
        }
    }

    fn call_of(&self, block: u32) -> Option<u32> {
        self.tool_blocks
            .iter()
            .rev()
            .find(|(b, _)| *b == block)
            .map(|(_, call)| *call)
    }

    /// `message_stop` ends the reply; a stream cut right after the stop reason lost nothing.
    pub(crate) fn is_complete(&self) -> bool {
        self.stopped
    }
}

/// Anthropic counts cached prompt tokens apart from `input_tokens`; the neutral usage counts the
/// whole prompt, as OpenAI does.
fn prompt_tokens(usage: &WireUsage) -> u64 {
    usage
        .input_tokens
        .unwrap_or(0)
        .saturating_add(usage.cache_creation_input_tokens.unwrap_or(0))
        .saturating_add(usage.cache_read_input_tokens.unwrap_or(0))
}

fn map_stop_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "tool_use" => FinishReason::ToolCalls,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Unknown(String::from(other)),
    }
}
