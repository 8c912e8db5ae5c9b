//! Request building.

use super::*;

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
