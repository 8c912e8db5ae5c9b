//! Hand-made streams: what the fixtures do not show.

use super::*;

/// One text event "ok" in each provider's format.
fn ok_event(provider: Provider) -> &'static str {
    match provider {
        Provider::OpenAi => {
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\n"
        }
        Provider::OpenAiResponses => {
            "data: {\"type\":\"response.output_text.delta\",\"delta\":\"ok\"}\n\n"
        }
        Provider::Anthropic => {
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\
             \"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n"
        }
        Provider::Gemini => {
            "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"ok\"}]}}]}\n\n"
        }
        Provider::WorkersAi => "data: {\"response\":\"ok\",\"p\":\"abc\"}\n\n",
    }
}

#[test]
fn malformed_json_is_an_error_naming_the_provider_and_decoding_goes_on() {
    for provider in Provider::ALL {
        let body = format!(
            "{}data: {{\"choices\": [oops\n\n{}",
            ok_event(provider),
            ok_event(provider)
        );
        let mut decoder = StreamDecoder::new(provider);
        let error = decoder
            .push(body.as_bytes())
            .expect_err("bad JSON is an error");
        assert!(
            matches!(&error, ProviderError::Malformed { provider: p, .. } if *p == provider),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(message.contains(provider.display_name()), "{message}");
        assert!(message.contains("not valid JSON"), "{message}");
        let mut texts = Vec::new();
        while let Some(delta) = decoder.poll() {
            texts.push(delta);
        }
        assert_eq!(
            texts,
            vec![Delta::Text("ok".into()), Delta::Text("ok".into())],
            "{provider}: the events around the bad one are decoded"
        );
    }
}

#[test]
fn a_known_event_with_a_bad_body_is_an_error() {
    let mut decoder = StreamDecoder::new(Provider::Anthropic);
    let error = decoder
        .push(b"data: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\"}}\n\n")
        .expect_err("content_block_delta needs an index");
    assert!(error.to_string().contains("content_block_delta"), "{error}");
}

#[test]
fn unknown_events_are_skipped() {
    let bodies = [
        (
            Provider::OpenAi,
            "event: brand_new\ndata: {\"whatever\": 1}\n\n\
             data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"audio\":{\"id\":\"a\"}},\"future\":true}]}\n\n",
        ),
        (
            Provider::OpenAiResponses,
            "event: response.web_search_call.searching\ndata: {\"type\":\"response.web_search_call.searching\",\"item_id\":\"ws_1\"}\n\n\
             data: {\"type\":\"response.output_item.added\",\"item\":{\"type\":\"web_search_call\",\"id\":\"ws_1\"}}\n\n",
        ),
        (
            Provider::Anthropic,
            "event: brand_new\ndata: {\"type\":\"brand_new\",\"x\":[1,2]}\n\n\
             event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\",\"input\":{}}}\n\n\
             event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"citations_delta\",\"citation\":{}}}\n\n",
        ),
        (
            Provider::Gemini,
            "data: {\"candidates\":[{\"content\":{\"parts\":[{\"executableCode\":{\"language\":\"PYTHON\",\"code\":\"1\"}}]}}],\"futureField\":{}}\n\n",
        ),
    ];
    for (provider, body) in bodies {
        let mut decoder = StreamDecoder::new(provider);
        assert_eq!(decoder.push(body.as_bytes()), Ok(()), "{provider}");
        assert_eq!(decoder.poll(), None, "{provider}");
    }
}

#[test]
fn anthropic_overloaded_error_mid_tool_call_leaves_the_call_unended() {
    // The envelope SOURCES.md quotes from real logs; no recorded file exists.
    let body = "event: message_start\n\
        data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}\n\n\
        event: content_block_start\n\
        data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"write\",\"input\":{}}}\n\n\
        event: content_block_delta\n\
        data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \\\"a\"}}\n\n\
        event: error\n\
        data: {\"type\":\"error\",\"error\":{\"details\":null,\"type\":\"overloaded_error\",\"message\":\"Overloaded\"},\"request_id\":\"req_011\"}\n\n";
    let decoded = decode_whole(Provider::Anthropic, body.as_bytes());
    assert_eq!(decoded.end, Ok(()), "the error explains the end");
    let s = summarize(&decoded.deltas);
    assert_eq!(s.calls.len(), 1);
    assert!(!s.calls[0].ended, "a call cut short must not be run");
    assert_eq!(s.calls[0].arguments, "{\"path\": \"a");
    assert_eq!(s.errors.len(), 1);
    let (status, code, message) = stream_error(&s.errors[0]);
    assert_eq!(
        (status, code, message),
        (None, Some("overloaded_error"), "Overloaded")
    );
    assert!(s.errors[0].is_retryable());
    assert_eq!(
        s.errors[0].to_string(),
        "Anthropic reported an error mid-stream (overloaded_error): Overloaded. The reply is \
         incomplete; this is temporary: retry in a moment."
    );
}

#[test]
fn openai_error_chunk_in_the_stream() {
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n\
        data: {\"error\":{\"message\":\"The server had an error while processing your request.\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n";
    let decoded = decode_whole(Provider::OpenAi, body.as_bytes());
    assert_eq!(decoded.end, Ok(()));
    let s = summarize(&decoded.deltas);
    assert_eq!(s.text, "Hi");
    let (status, code, _) = stream_error(&s.errors[0]);
    assert_eq!((status, code), (None, Some("server_error")));
    assert!(s.errors[0].is_retryable());
}

fn tool_chunk(calls: Value) -> String {
    format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {"tool_calls": calls}}]})
    )
}

#[test]
fn openai_whole_parallel_calls_in_one_chunk() {
    // Ollama and vLLM send each call whole, sometimes several in one chunk.
    let body = tool_chunk(json!([
        {"index": 0, "id": "call_a", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
        {"index": 1, "id": "call_b", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"x\"}"}},
    ])) + "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    let decoded = decode_whole(Provider::OpenAi, body.as_bytes());
    assert_eq!(decoded.end, Ok(()));
    let s = summarize(&decoded.deltas);
    assert_eq!(s.calls.len(), 2);
    assert_eq!(
        (call(&s, 0).id.as_str(), call(&s, 0).arguments.as_str()),
        ("call_a", "{}")
    );
    assert_eq!(
        (call(&s, 1).id.as_str(), call(&s, 1).arguments.as_str()),
        ("call_b", "{\"path\":\"x\"}")
    );
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn openai_fragments_without_index_continue_the_current_call() {
    let body =
        tool_chunk(json!([{"id": "call_a", "function": {"name": "calc", "arguments": "{\"ex"}}]))
            + &tool_chunk(json!([{"function": {"arguments": "pression\":\"1+1\"}"}}]))
            + &tool_chunk(
                json!([{"id": "call_b", "function": {"name": "calc", "arguments": "{}"}}]),
            )
            + "data: [DONE]\n\n";
    let decoded = decode_whole(Provider::OpenAi, body.as_bytes());
    assert_eq!(decoded.push_errors, vec![]);
    assert_eq!(decoded.end, Ok(()));
    let s = summarize(&decoded.deltas);
    assert_eq!(s.calls.len(), 2);
    assert_eq!(call(&s, 0).args_json(), json!({"expression": "1+1"}));
    assert_eq!(call(&s, 1).id, "call_b");
    assert_eq!(
        s.finish, None,
        "[DONE] without a finish reason ends the calls, reports none"
    );
}

#[test]
fn openai_interleaved_calls_are_reported_not_misassigned() {
    let body = tool_chunk(
        json!([{"index": 0, "id": "call_a", "function": {"name": "a", "arguments": "{"}}]),
    ) + &tool_chunk(
        json!([{"index": 1, "id": "call_b", "function": {"name": "b", "arguments": "{}"}}]),
    ) + &tool_chunk(json!([{"index": 0, "function": {"arguments": "}"}}]));
    let mut decoder = StreamDecoder::new(Provider::OpenAi);
    let error = decoder
        .push(body.as_bytes())
        .expect_err("interleaving is reported");
    assert!(error.to_string().contains("tool call 0"), "{error}");
}

#[test]
fn multibyte_text_and_crlf_survive_every_cut() {
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"h\u{e9}llo \u{1f600} \u{2713}\"}}]}\r\n\r\n\
                data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" \u{65e5}\u{672c}\"},\"finish_reason\":\"stop\"}]}\r\r\
                data: [DONE]\r\n\r\n";
    let bytes = body.as_bytes();
    let expected = vec![
        Delta::Text("h\u{e9}llo \u{1f600} \u{2713}".into()),
        Delta::Text(" \u{65e5}\u{672c}".into()),
        Delta::Finish(FinishReason::Stop),
    ];
    for a in 0..=bytes.len() {
        for b in a..=bytes.len() {
            let decoded = decode_pieces(Provider::OpenAi, [&bytes[..a], &bytes[a..b], &bytes[b..]]);
            assert_eq!(decoded.deltas, expected, "cuts at {a} and {b}");
            assert_eq!(decoded.end, Ok(()));
        }
    }
}

#[test]
fn gemini_blocked_prompt_is_a_content_filter_finish() {
    let body = "data: {\"promptFeedback\":{\"blockReason\":\"SAFETY\"},\"usageMetadata\":{\"promptTokenCount\":9,\"totalTokenCount\":9}}\n\n";
    let decoded = decode_whole(Provider::Gemini, body.as_bytes());
    assert_eq!(decoded.end, Ok(()));
    assert_eq!(
        decoded.deltas,
        vec![
            Delta::Usage {
                prompt_tokens: 9,
                completion_tokens: 0,
                total_tokens: 9
            },
            Delta::Finish(FinishReason::ContentFilter)
        ]
    );
}

#[test]
fn gemini_error_sent_as_an_sse_event() {
    let body = format!(
        "{}data: {{\"error\": {{\"code\": 503, \"message\": \"The model is overloaded.\", \"status\": \"UNAVAILABLE\"}}}}\n\n",
        ok_event(Provider::Gemini)
    );
    let decoded = decode_whole(Provider::Gemini, body.as_bytes());
    assert_eq!(decoded.end, Ok(()));
    let s = summarize(&decoded.deltas);
    assert_eq!(s.text, "ok");
    assert_eq!(s.finish, None);
    let (status, code, message) = stream_error(&s.errors[0]);
    assert_eq!(
        (status, code, message),
        (Some(503), Some("UNAVAILABLE"), "The model is overloaded.")
    );
    assert!(s.errors[0].is_retryable());
}

#[test]
fn gemini_call_still_streaming_at_a_cut_is_not_ended() {
    let body = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"write\",\"willContinue\":true}}]}}]}\n\n\
                data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"partialArgs\":[{\"jsonPath\":\"$.path\",\"stringValue\":\"a\",\"willContinue\":true}],\"willContinue\":true}}]}}]}\n\n";
    let decoded = decode_whole(Provider::Gemini, body.as_bytes());
    assert_eq!(
        decoded.end,
        Err(ProviderError::Truncated {
            provider: Provider::Gemini
        })
    );
    let s = summarize(&decoded.deltas);
    assert_eq!(s.calls.len(), 1);
    assert!(!s.calls[0].ended);
    assert_eq!(s.calls[0].id, "call_0", "no responseId: ids are numbered");
    assert_eq!(
        decoded.end.unwrap_err().to_string(),
        "The Gemini stream ended before the reply was complete (the connection was cut); retry \
         the request."
    );
}

#[test]
fn a_body_that_is_not_a_stream_is_truncated_not_a_panic() {
    for provider in Provider::ALL {
        let html = b"<html>\r\n<body>502 Bad Gateway</body>\r\n</html>";
        let decoded = decode_whole(provider, html);
        assert_eq!(decoded.deltas, vec![]);
        assert_eq!(decoded.end, Err(ProviderError::Truncated { provider }));
        // An error JSON answered with status 200 and no SSE framing still surfaces.
        let json = br#"{"error": {"message": "Invalid model", "code": 400}}"#;
        let decoded = decode_whole(provider, json);
        assert_eq!(decoded.end, Ok(()), "{provider}");
        let s = summarize(&decoded.deltas);
        assert_eq!(stream_error(&s.errors[0]).2, "Invalid model");
    }
}

#[test]
fn bytes_after_finish_are_ignored() {
    let mut decoder = StreamDecoder::new(Provider::OpenAi);
    decoder.push(b"data: [DONE]\n\n").expect("valid");
    assert!(decoder.is_complete());
    assert_eq!(decoder.finish(), Ok(()));
    assert_eq!(decoder.push(ok_event(Provider::OpenAi).as_bytes()), Ok(()));
    assert_eq!(decoder.poll(), None);
}

#[test]
fn mangled_fixtures_never_panic_and_keep_the_invariants() {
    for (name, provider) in ALL_FIXTURES {
        let body = fixture(name);
        for seed in 1..=40u64 {
            let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
            let mut mangled = body.clone();
            for _ in 0..1 + rng.below(12) {
                let at = rng.below(mangled.len());
                match rng.below(3) {
                    0 => mangled[at] = rng.next() as u8,
                    1 => {
                        mangled.remove(at);
                    }
                    _ => mangled.truncate(at),
                }
                if mangled.is_empty() {
                    break;
                }
            }
            let decoded = decode_pieces(*provider, random_pieces(&mangled, seed));
            summarize(&decoded.deltas);
        }
    }
}
