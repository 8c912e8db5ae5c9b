//! Workers AI (streams written from Cloudflare's documented shapes: see SOURCES.md).

use super::*;

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
