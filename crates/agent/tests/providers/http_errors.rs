//! HTTP errors.

use super::*;

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
