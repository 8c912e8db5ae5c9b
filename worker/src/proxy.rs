//! `POST /v1/chat/completions`: an OpenAI-compatible endpoint in front of whichever provider is
//! configured, so browser code written for OpenAI works unchanged while the key stays here.
//!
//! The request is read as OpenAI Chat Completions, turned into the provider-neutral
//! [`ChatRequest`], sent with the provider's own codec, and the provider's stream is decoded to
//! [`Delta`]s and written back as OpenAI `chat.completion.chunk`s (or one `chat.completion`).

use futures_util::StreamExt;
use serde_json::{json, Map, Value};
use weft_agent::provider::{
    ChatMessage, ChatRequest, Delta, ProviderError, StreamDecoder, ToolCall, ToolDef, ToolResult,
};
use worker::{ByteStream, Env, Headers, Request, Response, Result};

use crate::settings::{Model, Settings};

/// Largest accepted request body.
const MAX_BODY: usize = 4 * 1024 * 1024;

/// An OpenAI-shaped error response.
fn error(status: u16, message: &str, kind: &str) -> Result<Response> {
    let body =
        json!({ "error": { "message": message, "type": kind, "param": null, "code": null } });
    Ok(Response::from_json(&body)?.with_status(status))
}

fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// Reads an OpenAI Chat Completions request body.
pub fn parse_request(
    body: &Value,
    default_model: &str,
) -> std::result::Result<(ChatRequest, bool, bool), String> {
    let obj = body
        .as_object()
        .ok_or("the request body must be a JSON object")?;
    let messages = obj
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("'messages' is required and must be an array")?;
    if messages.is_empty() {
        return Err("'messages' must not be empty".into());
    }
    let mut system = Vec::new();
    let mut out = Vec::new();
    let mut names: Map<String, Value> = Map::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m
            .get("role")
            .and_then(Value::as_str)
            .ok_or(format!("messages[{i}].role is required"))?;
        let content = text_of(m.get("content"));
        match role {
            "system" | "developer" => system.push(content),
            "user" => out.push(ChatMessage::user(content)),
            "assistant" => {
                let mut calls = Vec::new();
                for (j, c) in m
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    let id = c
                        .get("id")
                        .and_then(Value::as_str)
                        .ok_or(format!("messages[{i}].tool_calls[{j}].id is required"))?;
                    let f = c.get("function").ok_or(format!(
                        "messages[{i}].tool_calls[{j}].function is required"
                    ))?;
                    let name = f.get("name").and_then(Value::as_str).ok_or(format!(
                        "messages[{i}].tool_calls[{j}].function.name is required"
                    ))?;
                    let arguments = f.get("arguments").and_then(Value::as_str).unwrap_or("{}");
                    names.insert(id.into(), Value::String(name.into()));
                    calls.push(ToolCall {
                        id: id.into(),
                        name: name.into(),
                        arguments: arguments.into(),
                        signature: None,
                    });
                }
                out.push(ChatMessage::Assistant {
                    content,
                    tool_calls: calls,
                });
            }
            "tool" => {
                let call_id = m
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .ok_or(format!("messages[{i}].tool_call_id is required"))?;
                let name = names
                    .get(call_id)
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                out.push(ChatMessage::Tool(ToolResult {
                    call_id: call_id.into(),
                    name: name.into(),
                    content,
                    is_error: false,
                }));
            }
            other => return Err(format!("messages[{i}].role '{other}' is not supported")),
        }
    }
    let mut tools = Vec::new();
    for (i, t) in obj
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let f = t
            .get("function")
            .ok_or(format!("tools[{i}].function is required"))?;
        tools.push(ToolDef {
            name: f
                .get("name")
                .and_then(Value::as_str)
                .ok_or(format!("tools[{i}].function.name is required"))?
                .into(),
            description: f
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .into(),
            input_schema: f
                .get("parameters")
                .cloned()
                .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
        });
    }
    let model = match obj.get("model").and_then(Value::as_str) {
        Some(m) if !m.is_empty() && m != "default" => m.to_string(),
        _ => default_model.to_string(),
    };
    let max_tokens = obj
        .get("max_completion_tokens")
        .or_else(|| obj.get("max_tokens"))
        .and_then(Value::as_u64)
        .map(|n| n.min(u64::from(u32::MAX)) as u32);
    let stream = obj.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let include_usage = obj
        .get("stream_options")
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let request = ChatRequest {
        model,
        system: (!system.is_empty()).then(|| system.join("\n\n")),
        messages: out,
        tools,
        max_tokens,
        temperature: obj
            .get("temperature")
            .and_then(Value::as_f64)
            .map(|t| t as f32),
    };
    Ok((request, stream, include_usage))
}

/// Writes deltas as OpenAI chunks.
struct ChunkWriter {
    id: String,
    created: u64,
    model: String,
    include_usage: bool,
    usage: Option<Value>,
}

impl ChunkWriter {
    fn chunk(&self, delta: Value, finish: Option<&str>) -> String {
        let c = json!({
            "id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
            "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }],
        });
        format!("data: {c}\n\n")
    }

    fn write(&mut self, delta: Delta, out: &mut String) {
        match delta {
            Delta::Text(t) => out.push_str(&self.chunk(json!({ "content": t }), None)),
            Delta::Reasoning(t) => out.push_str(&self.chunk(json!({ "reasoning_content": t }), None)),
            Delta::ToolCallStart { index, id, name } => out.push_str(&self.chunk(
                json!({ "tool_calls": [{ "index": index, "id": id, "type": "function", "function": { "name": name, "arguments": "" } }] }),
                None,
            )),
            Delta::ToolCallArgs { index, fragment } => out.push_str(
                &self.chunk(json!({ "tool_calls": [{ "index": index, "function": { "arguments": fragment } }] }), None),
            ),
            Delta::Finish(reason) => out.push_str(&self.chunk(json!({}), Some(reason.as_str()))),
            Delta::Usage {
                prompt_tokens,
                completion_tokens,
                total_tokens,
            } => {
                self.usage = Some(json!({ "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": total_tokens }));
            }
            Delta::Error(e) => out.push_str(&format!("data: {}\n\n", json!({ "error": { "message": e.to_string(), "type": "provider_error" } }))),
            _ => {}
        }
    }

    fn end(&mut self, out: &mut String) {
        if let (true, Some(u)) = (self.include_usage, self.usage.take()) {
            let c = json!({ "id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model, "choices": [], "usage": u });
            out.push_str(&format!("data: {c}\n\n"));
        }
        out.push_str("data: [DONE]\n\n");
    }
}

fn provider_error_response(e: &ProviderError) -> Result<Response> {
    let status = e.status().filter(|s| (400..600).contains(s)).unwrap_or(502);
    let mut response = error(status, &e.to_string(), "provider_error")?;
    if let Some(secs) = e.retry_after_secs() {
        let headers = Headers::new();
        headers.set("retry-after", &secs.to_string())?;
        headers.set("content-type", "application/json")?;
        response = response.with_headers(headers);
    }
    Ok(response)
}

/// Serves one `POST /v1/chat/completions`.
pub async fn chat_completions(
    mut req: Request,
    env: &Env,
    settings: &Settings,
) -> Result<Response> {
    let bytes = req.bytes().await?;
    if bytes.len() > MAX_BODY {
        return error(
            413,
            "the request body is too large",
            "invalid_request_error",
        );
    }
    // Through `from_str`, as everywhere else, so the JSON reader is linked once (a `from_slice`
    // is a second copy of it).
    let parsed = core::str::from_utf8(&bytes)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str::<Value>(text).map_err(|e| e.to_string()));
    let body = match parsed {
        Ok(v) => v,
        Err(e) => {
            return error(
                400,
                &format!("the request body is not valid JSON: {e}"),
                "invalid_request_error",
            )
        }
    };
    let default_model = match &settings.model {
        Model::Missing(why) => return error(503, why, "model_not_configured"),
        model => model.config().map(|c| c.model.as_str()).unwrap_or_default(),
    };
    let (request, stream, include_usage) = match parse_request(&body, default_model) {
        Ok(r) => r,
        Err(msg) => return error(400, &msg, "invalid_request_error"),
    };
    let (body, config) = match crate::llm::open(env, &settings.model, &request).await {
        Ok(opened) => opened,
        Err(e) => return provider_error_response(&e),
    };
    let writer = ChunkWriter {
        id: format!("chatcmpl-{}", crate::session::uuid().replace('-', "")),
        created: (js_sys::Date::now() / 1000.0) as u64,
        model: request.model.clone(),
        include_usage,
        usage: None,
    };
    let decoder = config.decoder();
    if stream {
        let sse = futures_util::stream::unfold(
            Some((body, decoder, writer, true)),
            |state| async move {
                let (mut body, mut decoder, mut writer, first) = state?;
                let mut out = String::new();
                if first {
                    out.push_str(
                        &writer.chunk(json!({ "role": "assistant", "content": "" }), None),
                    );
                }
                loop {
                    match body.next().await {
                        Some(Ok(bytes)) => {
                            let pushed = decoder.push(&bytes);
                            while let Some(d) = decoder.poll() {
                                writer.write(d, &mut out);
                            }
                            if let Err(e) = pushed {
                                writer.write(Delta::Error(e), &mut out);
                                return Some((
                                    Ok::<Vec<u8>, worker::Error>(out.into_bytes()),
                                    None,
                                ));
                            }
                            if !out.is_empty() {
                                return Some((
                                    Ok(out.into_bytes()),
                                    Some((body, decoder, writer, false)),
                                ));
                            }
                        }
                        Some(Err(e)) => {
                            let err = format!(
                                "data: {}\n\n",
                                json!({ "error": { "message": format!("the model's stream broke: {e}"), "type": "provider_error" } })
                            );
                            out.push_str(&err);
                            return Some((Ok(out.into_bytes()), None));
                        }
                        None => {
                            let finished = decoder.finish();
                            while let Some(d) = decoder.poll() {
                                writer.write(d, &mut out);
                            }
                            match finished {
                                Ok(()) => writer.end(&mut out),
                                Err(e) => writer.write(Delta::Error(e), &mut out),
                            }
                            return Some((Ok(out.into_bytes()), None));
                        }
                    }
                }
            },
        );
        let headers = Headers::new();
        headers.set("content-type", "text/event-stream")?;
        headers.set("cache-control", "no-cache")?;
        return Ok(Response::from_stream(sse)?.with_headers(headers));
    }
    collect(body, decoder, writer).await
}

/// The non-streamed answer: the whole stream folded into one `chat.completion`.
async fn collect(
    mut body: ByteStream,
    mut decoder: StreamDecoder,
    writer: ChunkWriter,
) -> Result<Response> {
    let mut content = String::new();
    let mut reasoning = String::new();
    let mut calls: Vec<Value> = Vec::new();
    let mut finish = String::from("stop");
    let mut usage = Value::Null;
    let mut deltas = Vec::new();
    while let Some(chunk) = body.next().await {
        let pushed = decoder.push(&chunk?);
        deltas.extend(std::iter::from_fn(|| decoder.poll()));
        if let Err(e) = pushed {
            return provider_error_response(&e);
        }
    }
    let finished = decoder.finish();
    deltas.extend(std::iter::from_fn(|| decoder.poll()));
    if let Err(e) = finished {
        return provider_error_response(&e);
    }
    for d in deltas {
        match d {
            Delta::Text(t) => content.push_str(&t),
            Delta::Reasoning(t) => reasoning.push_str(&t),
            Delta::ToolCallStart { id, name, .. } => {
                calls.push(json!({ "id": id, "type": "function", "function": { "name": name, "arguments": "" } }))
            }
            Delta::ToolCallArgs { index, fragment } => {
                if let Some(args) = calls.get_mut(index as usize).and_then(|c| c["function"]["arguments"].as_str().map(String::from)) {
                    calls[index as usize]["function"]["arguments"] = Value::String(args + &fragment);
                }
            }
            Delta::Finish(r) => finish = r.as_str().into(),
            Delta::Usage {
                prompt_tokens,
                completion_tokens,
                total_tokens,
            } => usage = json!({ "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": total_tokens }),
            Delta::Error(e) => return provider_error_response(&e),
            _ => {}
        }
    }
    let mut message = json!({ "role": "assistant", "content": content });
    if !reasoning.is_empty() {
        message["reasoning_content"] = Value::String(reasoning);
    }
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    let body = json!({
        "id": writer.id, "object": "chat.completion", "created": writer.created, "model": writer.model,
        "choices": [{ "index": 0, "message": message, "logprobs": null, "finish_reason": finish }],
        "usage": usage,
    });
    Response::from_json(&body)
}
