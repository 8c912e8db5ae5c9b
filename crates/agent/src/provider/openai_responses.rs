//! The OpenAI Responses API: typed `response.*` events over output items (messages, reasoning,
//! function calls), with usage on `response.completed`.

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

const PROVIDER: Provider = Provider::OpenAiResponses;

/// `POST {base}/responses` with `stream: true` and `store: false`: the engine keeps the history
/// itself and resends it, so nothing needs to live on OpenAI's side.
pub(crate) fn build_request(config: &ProviderConfig, request: &ChatRequest) -> HttpRequest {
    let mut input = Vec::new();
    for message in &request.messages {
        match message {
            ChatMessage::User { content } => {
                input.push(json!({"role": "user", "content": content}));
            }
            ChatMessage::Assistant {
                content,
                tool_calls,
            } => {
                if !content.is_empty() {
                    input.push(json!({"role": "assistant", "content": content}));
                }
                for call in tool_calls {
                    input.push(json!({
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": call.arguments,
                    }));
                }
            }
            ChatMessage::Tool(result) => input.push(json!({
                "type": "function_call_output",
                "call_id": result.call_id,
                "output": result.content_marking_errors(),
            })),
        }
    }

    let mut body = Map::new();
    body.insert("model".into(), config.model_for(request).into());
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        body.insert("instructions".into(), system.into());
    }
    body.insert("input".into(), Value::Array(input));
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.input_schema,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(max) = request.max_tokens {
        body.insert("max_output_tokens".into(), max.into());
    }
    if let Some(t) = request.temperature.and_then(temperature_json) {
        body.insert("temperature".into(), t);
    }
    body.insert("stream".into(), true.into());
    body.insert("store".into(), false.into());

    let mut headers = json_headers();
    if !config.api_key.is_empty() {
        headers.push(("authorization".into(), format!("Bearer {}", config.api_key)));
    }
    HttpRequest {
        method: "POST".into(),
        url: format!("{}/responses", config.base()),
        headers,
        body: Value::Object(body).to_string(),
    }
}

#[derive(Deserialize)]
struct TextDelta {
    delta: Option<String>,
}

#[derive(Deserialize)]
struct ItemEvent {
    item: Item,
    output_index: Option<u32>,
}

#[derive(Deserialize)]
struct Item {
    #[serde(rename = "type")]
    kind: String,
    id: Option<String>,
    call_id: Option<String>,
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct ArgumentsEvent {
    item_id: Option<String>,
    output_index: Option<u32>,
    delta: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct ResponseEvent {
    response: Response,
}

#[derive(Deserialize)]
struct Response {
    usage: Option<WireUsage>,
    incomplete_details: Option<IncompleteDetails>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    total_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct IncompleteDetails {
    reason: Option<String>,
}

/// Decoder state for one Responses stream.
#[derive(Debug, Default)]
pub(crate) struct ResponsesStream {
    /// Function-call output items: item id, output index, dense call index.
    calls: Vec<(Option<String>, Option<u32>, u32)>,
    ended: bool,
}

impl ResponsesStream {
    /// Dispatches on the JSON `type`; the lifecycle events without content
    /// (`response.created`, `*.done` of text parts, …) and unknown ones are skipped.
    pub(crate) fn on_event(
        &mut self,
        data: &str,
        out: &mut DeltaQueue,
    ) -> Result<(), ProviderError> {
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(());
        }
        let value: Value = parse_json(PROVIDER, data)?;
        let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
        let bad_body =
            |e: serde_json::Error| ProviderError::malformed(PROVIDER, format_args!("{kind}: {e}"));
        match kind {
            "response.output_text.delta" | "response.refusal.delta" => {
                let delta = TextDelta::deserialize(&value).map_err(bad_body)?;
                out.text(delta.delta.as_deref().unwrap_or(""));
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let delta = TextDelta::deserialize(&value).map_err(bad_body)?;
                out.reasoning(delta.delta.as_deref().unwrap_or(""));
            }
            "response.output_item.added" => {
                let event = ItemEvent::deserialize(&value).map_err(bad_body)?;
                if event.item.kind == "function_call" {
                    let index = self.start(&event, out);
                    out.call_args(index, event.item.arguments.as_deref().unwrap_or(""));
                }
            }
            "response.function_call_arguments.delta" => {
                let event = ArgumentsEvent::deserialize(&value).map_err(bad_body)?;
                if let Some(index) = self.call_of(event.item_id.as_deref(), event.output_index) {
                    out.call_args(index, event.delta.as_deref().unwrap_or(""));
                }
            }
            "response.function_call_arguments.done" => {
                // The whole arguments again; only needed if no delta carried them.
                let event = ArgumentsEvent::deserialize(&value).map_err(bad_body)?;
                if let Some(index) = self.call_of(event.item_id.as_deref(), event.output_index) {
                    if !out.call_has_args(index) {
                        out.call_args(index, event.arguments.as_deref().unwrap_or(""));
                    }
                }
            }
            "response.output_item.done" => {
                let event = ItemEvent::deserialize(&value).map_err(bad_body)?;
                if event.item.kind == "function_call" {
                    let index = match self.call_of(event.item.id.as_deref(), event.output_index) {
                        Some(index) => index,
                        None => self.start(&event, out),
                    };
                    if !out.call_has_args(index) {
                        out.call_args(index, event.item.arguments.as_deref().unwrap_or(""));
                    }
                    out.end_call(index);
                }
            }
            "response.completed" | "response.incomplete" => {
                let event = ResponseEvent::deserialize(&value).map_err(bad_body)?;
                self.ended = true;
                out.end_open_calls();
                if let Some(usage) = event.response.usage {
                    out.usage(
                        usage.input_tokens.unwrap_or(0),
                        usage.output_tokens.unwrap_or(0),
                        usage.total_tokens,
                    );
                }
                let reason = match event.response.incomplete_details.and_then(|d| d.reason) {
                    Some(reason) => match reason.as_str() {
                        "max_output_tokens" => FinishReason::Length,
                        "content_filter" => FinishReason::ContentFilter,
                        _ => FinishReason::Unknown(reason),
                    },
                    None if out.call_count() > 0 => FinishReason::ToolCalls,
                    None => FinishReason::Stop,
                };
                out.finish(reason);
            }
            "response.failed" => {
                let event = ResponseEvent::deserialize(&value).map_err(bad_body)?;
                self.ended = true;
                // The `error` event before it usually said it already.
                if !out.error_reported() {
                    let error = event.response.error.unwrap_or(Value::Null);
                    out.error(ProviderError::from_stream_value(PROVIDER, &error));
                }
            }
            "error" => {
                self.ended = true;
                out.error(ProviderError::from_stream_value(PROVIDER, &value));
            }
            _ => {}
        }
        Ok(())
    }

    fn start(&mut self, event: &ItemEvent, out: &mut DeltaQueue) -> u32 {
        let item = &event.item;
        let id = item
            .call_id
            .clone()
            .or_else(|| item.id.clone())
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| format!("call_{}", out.call_count()));
        let index = out.start_call(id, item.name.clone().unwrap_or_default());
        self.calls
            .push((item.id.clone(), event.output_index, index));
        index
    }

    /// Finds a call by item id, else by output index (older events carry only one of them).
    fn call_of(&self, item_id: Option<&str>, output_index: Option<u32>) -> Option<u32> {
        if let Some(item_id) = item_id {
            if let Some((_, _, index)) = self
                .calls
                .iter()
                .find(|(id, _, _)| id.as_deref() == Some(item_id))
            {
                return Some(*index);
            }
        }
        let output_index = output_index?;
        self.calls
            .iter()
            .find(|(_, at, _)| *at == Some(output_index))
            .map(|(_, _, index)| *index)
    }

    pub(crate) fn is_complete(&self) -> bool {
        self.ended
    }
}
