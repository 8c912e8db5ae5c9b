//! The OpenAI Chat Completions API served, the other way round from [`openai`](super::openai):
//! a request body from a client read into a provider-neutral [`ChatRequest`], and the
//! provider's [`Delta`]s written back as OpenAI `chat.completion.chunk` frames (or folded into
//! one `chat.completion`). The host's `POST /v1/chat/completions` moves the bytes; this decides
//! every one of them.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{json, Map, Value};

use super::delta::Delta;
use super::error::ProviderError;
use super::request::{ChatMessage, ChatRequest, ToolCall, ToolDef, ToolResult};

/// A Chat Completions request as read: what to ask the model, and how the client wants the
/// answer.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionsRequest {
    /// The conversation, provider-neutral; `model` is the client's, or the default when it
    /// named none (or `default`).
    pub request: ChatRequest,
    /// `stream`: chunks as they come, rather than one `chat.completion` at the end.
    pub stream: bool,
    /// `stream_options.include_usage`: a last chunk with the token usage.
    pub include_usage: bool,
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

/// Reads a Chat Completions request body. The error is a message for the client (an OpenAI
/// `invalid_request_error`), naming the field at fault.
pub fn parse_completions_request(
    body: &Value,
    default_model: &str,
) -> Result<CompletionsRequest, String> {
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
    // Tool results name only the call; the tool's name comes from the call that made it.
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
    Ok(CompletionsRequest {
        request,
        stream,
        include_usage,
    })
}

/// Writes one answer of the Chat Completions API: its chunks as server-sent events
/// ([`CompletionsWriter::write`], then [`CompletionsWriter::end`]), or the whole of it as one
/// `chat.completion` ([`CompletionsWriter::completion`]). Every chunk carries the same `id`,
/// `created` and `model`, as OpenAI's do.
#[derive(Debug, Clone)]
pub struct CompletionsWriter {
    id: String,
    created: u64,
    model: String,
    include_usage: bool,
    /// Usage is reported once, in a chunk of its own after the last choice (when asked for).
    usage: Option<Value>,
}

impl CompletionsWriter {
    /// A writer for the answer `id` (`chatcmpl-…`), made at `created` (Unix seconds) by
    /// `model`; `include_usage` as the request asked.
    pub fn new(id: String, created: u64, model: String, include_usage: bool) -> Self {
        CompletionsWriter {
            id,
            created,
            model,
            include_usage,
            usage: None,
        }
    }

    fn chunk(&self, delta: Value, finish: Option<&str>) -> String {
        let c = json!({
            "id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
            "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }],
        });
        format!("data: {c}\n\n")
    }

    /// The first chunk: the assistant's role, before any content.
    pub fn start(&self) -> String {
        self.chunk(json!({ "role": "assistant", "content": "" }), None)
    }

    /// Writes one delta's chunk to `out` (usage is kept for [`CompletionsWriter::end`]; deltas
    /// the API has no chunk for write nothing).
    pub fn write(&mut self, delta: Delta, out: &mut String) {
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
            Delta::Error(e) => Self::error(&e.to_string(), out),
            _ => {}
        }
    }

    /// Writes an error event: the stream ends with it, without `[DONE]`.
    pub fn error(message: &str, out: &mut String) {
        let e = json!({ "error": { "message": message, "type": "provider_error" } });
        out.push_str(&format!("data: {e}\n\n"));
    }

    /// Writes the end of a stream that ended normally: the usage chunk, when asked for and
    /// known, then `[DONE]`.
    pub fn end(&mut self, out: &mut String) {
        if let (true, Some(u)) = (self.include_usage, self.usage.take()) {
            let c = json!({ "id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model, "choices": [], "usage": u });
            out.push_str(&format!("data: {c}\n\n"));
        }
        out.push_str("data: [DONE]\n\n");
    }

    /// The whole answer as one `chat.completion` body; a provider error among the deltas is
    /// the answer instead.
    pub fn completion(
        &self,
        deltas: impl IntoIterator<Item = Delta>,
    ) -> Result<Value, ProviderError> {
        let mut content = String::new();
        let mut reasoning = String::new();
        let mut calls: Vec<Value> = Vec::new();
        let mut finish = String::from("stop");
        let mut usage = Value::Null;
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
                Delta::Error(e) => return Err(e),
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
        Ok(json!({
            "id": self.id, "object": "chat.completion", "created": self.created, "model": self.model,
            "choices": [{ "index": 0, "message": message, "logprobs": null, "finish_reason": finish }],
            "usage": usage,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{FinishReason, Provider};

    fn parse(body: Value) -> Result<CompletionsRequest, String> {
        parse_completions_request(&body, "the-default")
    }

    #[test]
    fn a_full_request_reads_into_the_neutral_one() {
        let r = parse(json!({
            "model": "gpt-x",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "developer", "content": [{"type": "text", "text": "Use "}, {"type": "text", "text": "tools."}]},
                {"role": "user", "content": "Weather?"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}},
                    {"id": "c2", "type": "function", "function": {"name": "get_time"}}
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "rain"},
                {"role": "tool", "tool_call_id": "zz", "content": "?"}
            ],
            "tools": [
                {"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
                {"type": "function", "function": {"name": "get_time"}}
            ],
            "max_tokens": 50,
            "max_completion_tokens": 99_999_999_999_u64,
            "temperature": 0.5,
            "stream": true,
            "stream_options": {"include_usage": true}
        }))
        .unwrap();
        assert!(r.stream && r.include_usage);
        let q = r.request;
        assert_eq!(q.model, "gpt-x");
        assert_eq!(q.system.as_deref(), Some("Be brief.\n\nUse tools."));
        assert_eq!(
            q.max_tokens,
            Some(u32::MAX),
            "max_completion_tokens wins, capped"
        );
        assert_eq!(q.temperature, Some(0.5));
        assert_eq!(
            q.messages,
            [
                ChatMessage::user("Weather?"),
                ChatMessage::Assistant {
                    content: String::new(),
                    tool_calls: alloc::vec![
                        ToolCall {
                            id: "c1".into(),
                            name: "get_weather".into(),
                            arguments: "{\"city\":\"Oslo\"}".into(),
                            signature: None,
                        },
                        ToolCall {
                            id: "c2".into(),
                            name: "get_time".into(),
                            arguments: "{}".into(),
                            signature: None,
                        },
                    ],
                },
                ChatMessage::Tool(ToolResult {
                    call_id: "c1".into(),
                    name: "get_weather".into(),
                    content: "rain".into(),
                    is_error: false,
                }),
                ChatMessage::Tool(ToolResult {
                    call_id: "zz".into(),
                    name: String::new(),
                    content: "?".into(),
                    is_error: false,
                }),
            ]
        );
        assert_eq!(q.tools.len(), 2);
        assert_eq!(q.tools[0].description, "Weather.");
        assert_eq!(
            q.tools[1].input_schema,
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn a_minimal_request_takes_the_defaults() {
        for model in [json!(null), json!(""), json!("default")] {
            let r = parse(json!({"model": model, "messages": [{"role": "user", "content": "hi"}]}))
                .unwrap();
            assert_eq!(r.request.model, "the-default");
            assert!(!r.stream && !r.include_usage);
            assert_eq!(r.request.system, None);
            assert_eq!(r.request.max_tokens, None);
            assert_eq!(r.request.temperature, None);
            assert!(r.request.tools.is_empty());
        }
    }

    #[test]
    fn a_bad_request_says_which_field() {
        let err = |body: Value| parse(body).unwrap_err();
        let user = json!({"role": "user", "content": "hi"});
        assert_eq!(err(json!([])), "the request body must be a JSON object");
        assert_eq!(
            err(json!({})),
            "'messages' is required and must be an array"
        );
        assert_eq!(err(json!({"messages": []})), "'messages' must not be empty");
        assert_eq!(
            err(json!({"messages": [user, {"content": "x"}]})),
            "messages[1].role is required"
        );
        assert_eq!(
            err(json!({"messages": [{"role": "function", "content": "x"}]})),
            "messages[0].role 'function' is not supported"
        );
        assert_eq!(
            err(
                json!({"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}]})
            ),
            "messages[0].tool_calls[0].id is required"
        );
        assert_eq!(
            err(json!({"messages": [{"role": "assistant", "tool_calls": [{"id": "c"}]}]})),
            "messages[0].tool_calls[0].function is required"
        );
        assert_eq!(
            err(
                json!({"messages": [{"role": "assistant", "tool_calls": [{"id": "c", "function": {}}]}]})
            ),
            "messages[0].tool_calls[0].function.name is required"
        );
        assert_eq!(
            err(json!({"messages": [{"role": "tool", "content": "x"}]})),
            "messages[0].tool_call_id is required"
        );
        assert_eq!(
            err(json!({"messages": [user], "tools": [{"type": "function"}]})),
            "tools[0].function is required"
        );
        assert_eq!(
            err(json!({"messages": [user], "tools": [{"function": {"description": "d"}}]})),
            "tools[0].function.name is required"
        );
    }

    fn writer(include_usage: bool) -> CompletionsWriter {
        CompletionsWriter::new("chatcmpl-1".into(), 1700000000, "m".into(), include_usage)
    }

    fn written(w: &mut CompletionsWriter, deltas: Vec<Delta>) -> String {
        let mut out = String::new();
        for d in deltas {
            w.write(d, &mut out);
        }
        out
    }

    const HEAD: &str = r#"data: {"choices":[{"delta":"#;
    const TAIL: &str =
        r#","created":1700000000,"id":"chatcmpl-1","model":"m","object":"chat.completion.chunk"}"#;

    /// A chunk as OpenAI's clients read it, keys in serde_json's (sorted) order.
    fn chunk(delta: &str, finish: &str) -> String {
        format!(
            "{HEAD}{delta},\"finish_reason\":{finish},\"index\":0,\"logprobs\":null}}]{TAIL}\n\n"
        )
    }

    #[test]
    fn chunks_are_written_byte_for_byte() {
        let mut w = writer(true);
        assert_eq!(
            w.start(),
            chunk(r#"{"content":"","role":"assistant"}"#, "null")
        );
        let out = written(
            &mut w,
            alloc::vec![
                Delta::Text("Hi \"you\"".into()),
                Delta::Reasoning("hm".into()),
                Delta::ToolCallStart {
                    index: 0,
                    id: "c1".into(),
                    name: "f".into(),
                },
                Delta::ToolCallArgs {
                    index: 0,
                    fragment: "{\"a\":".into(),
                },
                Delta::ToolCallEnd {
                    index: 0,
                    id: "c1".into(),
                },
                Delta::Usage {
                    prompt_tokens: 3,
                    completion_tokens: 4,
                    total_tokens: 7,
                },
                Delta::Finish(FinishReason::ToolCalls),
            ],
        );
        let expected = [
            chunk(r#"{"content":"Hi \"you\""}"#, "null"),
            chunk(r#"{"reasoning_content":"hm"}"#, "null"),
            chunk(
                r#"{"tool_calls":[{"function":{"arguments":"","name":"f"},"id":"c1","index":0,"type":"function"}]}"#,
                "null",
            ),
            chunk(
                r#"{"tool_calls":[{"function":{"arguments":"{\"a\":"},"index":0}]}"#,
                "null",
            ),
            chunk("{}", r#""tool_calls""#),
        ]
        .concat();
        assert_eq!(out, expected, "usage and the call's end write nothing yet");
        let mut end = String::new();
        w.end(&mut end);
        assert_eq!(
            end,
            concat!(
                r#"data: {"choices":[],"created":1700000000,"id":"chatcmpl-1","model":"m","object":"chat.completion.chunk","usage":{"completion_tokens":4,"prompt_tokens":3,"total_tokens":7}}"#,
                "\n\ndata: [DONE]\n\n"
            )
        );
    }

    #[test]
    fn usage_is_written_only_when_asked_for() {
        let mut w = writer(false);
        let usage = Delta::Usage {
            prompt_tokens: 1,
            completion_tokens: 1,
            total_tokens: 2,
        };
        assert_eq!(written(&mut w, alloc::vec![usage]), "");
        let mut end = String::new();
        w.end(&mut end);
        assert_eq!(end, "data: [DONE]\n\n");
    }

    #[test]
    fn a_provider_error_is_an_error_event() {
        let mut w = writer(true);
        let e = ProviderError::Truncated {
            provider: Provider::Anthropic,
        };
        let out = written(&mut w, alloc::vec![Delta::Error(e.clone())]);
        let mut direct = String::new();
        CompletionsWriter::error(&e.to_string(), &mut direct);
        assert_eq!(out, direct);
        let message = serde_json::to_string(&e.to_string()).unwrap();
        assert_eq!(
            out,
            format!(
                "data: {{\"error\":{{\"message\":{message},\"type\":\"provider_error\"}}}}\n\n"
            )
        );
    }

    #[test]
    fn the_whole_answer_folds_into_one_completion() {
        let w = writer(false);
        let body = w
            .completion(alloc::vec![
                Delta::Reasoning("hm".into()),
                Delta::Text("It ".into()),
                Delta::Text("rains.".into()),
                Delta::ToolCallStart {
                    index: 0,
                    id: "c1".into(),
                    name: "f".into(),
                },
                Delta::ToolCallArgs {
                    index: 0,
                    fragment: "{\"a\":".into(),
                },
                Delta::ToolCallArgs {
                    index: 0,
                    fragment: "1}".into(),
                },
                Delta::ToolCallArgs {
                    index: 5,
                    fragment: "lost".into(),
                },
                Delta::Finish(FinishReason::ToolCalls),
                Delta::Usage {
                    prompt_tokens: 3,
                    completion_tokens: 4,
                    total_tokens: 7,
                },
            ])
            .unwrap();
        assert_eq!(
            body.to_string(),
            concat!(
                r#"{"choices":[{"finish_reason":"tool_calls","index":0,"logprobs":null,"message":{"content":"It rains.","reasoning_content":"hm","role":"assistant","#,
                r#""tool_calls":[{"function":{"arguments":"{\"a\":1}","name":"f"},"id":"c1","type":"function"}]}}],"#,
                r#""created":1700000000,"id":"chatcmpl-1","model":"m","object":"chat.completion","#,
                r#""usage":{"completion_tokens":4,"prompt_tokens":3,"total_tokens":7}}"#
            )
        );
        let plain = w.completion(alloc::vec![Delta::Text("ok".into())]).unwrap();
        assert_eq!(plain["choices"][0]["finish_reason"], "stop");
        assert_eq!(plain["usage"], Value::Null);
        assert!(plain["choices"][0]["message"].get("tool_calls").is_none());
        let e = ProviderError::Truncated {
            provider: Provider::OpenAi,
        };
        assert_eq!(
            w.completion(alloc::vec![
                Delta::Text("x".into()),
                Delta::Error(e.clone())
            ]),
            Err(e)
        );
    }
}
