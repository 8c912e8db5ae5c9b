//! Recorded streams, provider by provider: OpenAI Chat Completions and Responses,
//! Anthropic, Gemini and the OpenAI-compatible servers.

use super::*;

// ---------------------------------------------------------------------------------------------
// openai/: Chat Completions
// ---------------------------------------------------------------------------------------------

#[test]
fn openai_text_with_usage_chunk() {
    let s = ok_fixture("openai/chat-text-usage.gpt-4o.sse");
    assert_eq!(
        s.text,
        "I'm unable to provide real-time weather updates. To get the current weather in San \
         Francisco, I recommend checking a reliable weather website or a weather app."
    );
    assert_eq!(s.reasoning, "");
    assert!(s.calls.is_empty());
    assert_eq!(s.usage, Some((14, 30, 44)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
}

#[test]
fn openai_parallel_tool_calls_keep_their_ids_and_end_one_by_one() {
    let name = "openai/chat-parallel-tool-calls.gpt-4o.sse";
    let (decoded, _) = decode_fixture(name);
    let s = ok_fixture(name);
    assert_eq!(s.text, "");
    assert_eq!(s.calls.len(), 2);
    let weather = call(&s, 0);
    assert_eq!(weather.id, "call_JMW1whyEaYG438VE1OIflxA2");
    assert_eq!(weather.name, "GetWeatherArgs");
    assert_eq!(
        weather.arguments,
        r#"{"city": "Edinburgh", "country": "GB", "units": "c"}"#
    );
    assert_eq!(
        weather.args_json(),
        json!({"city": "Edinburgh", "country": "GB", "units": "c"})
    );
    let stock = call(&s, 1);
    assert_eq!(stock.id, "call_DNYTawLBoN8fj3KN6qU9N1Ou");
    assert_eq!(stock.name, "get_stock_price");
    assert_eq!(
        stock.args_json(),
        json!({"ticker": "AAPL", "exchange": "NASDAQ"})
    );
    assert_eq!(s.usage, Some((149, 60, 209)));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
    // The next index ends the previous call, before the finish reason arrives.
    let end0 = position(&decoded.deltas, |d| {
        matches!(d, Delta::ToolCallEnd { index: 0, .. })
    });
    let start1 = position(&decoded.deltas, |d| {
        matches!(d, Delta::ToolCallStart { index: 1, .. })
    });
    assert!(end0 < start1);
}

#[test]
fn openai_parallel_tool_calls_in_the_obfuscated_chunk_format() {
    let s = ok_fixture("openai/chat-parallel-tool-calls-obfuscation.gpt-4o.sse");
    assert_eq!(s.calls.len(), 2);
    let weather = call(&s, 0);
    assert_eq!(weather.id, "call_NS4iQj14cDFwc0BnrKqDHavt");
    assert_eq!(weather.name, "get_weather");
    assert_eq!(weather.arguments, r#"{"city": "Mexico City"}"#);
    assert_eq!(weather.args_json(), json!({"city": "Mexico City"}));
    let product = call(&s, 1);
    assert_eq!(product.id, "call_SkGkkGDvHQEEk0CGbnAh2AQw");
    assert_eq!(product.name, "get_product_name");
    assert_eq!(product.arguments, "{}");
    assert_eq!(s.usage, Some((417, 44, 461)));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn openai_n3_stream_keeps_only_choice_zero() {
    let s = ok_fixture("openai/chat-multiple-choices-n3.gpt-4o.sse");
    // Choices 1 and 2 say 61 and 59 degrees; only choice 0's 65 is the reply.
    assert_eq!(
        s.text,
        r#"{"city":"San Francisco","temperature":65,"units":"f"}"#
    );
    assert_eq!(s.usage, Some((79, 42, 121)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
}

#[test]
fn openai_refusal_is_shown_as_text() {
    let s = ok_fixture("openai/chat-refusal.gpt-4o.sse");
    assert_eq!(s.text, "I'm sorry, I can't assist with that request.");
    assert_eq!(s.usage, Some((79, 11, 90)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
}

#[test]
fn openai_max_tokens_gives_length() {
    let s = ok_fixture("openai/chat-max-tokens-length.gpt-4o.sse");
    assert_eq!(s.text, "{\"");
    assert_eq!(s.usage, Some((79, 1, 80)));
    assert_eq!(s.finish, Some(FinishReason::Length));
}

#[test]
fn azure_prompt_filter_chunk_and_null_fields_are_tolerated() {
    let s = ok_fixture("openai/azure-model-router.1.chunks.txt");
    assert_eq!(s.text, "Capital of Denmark.");
    assert_eq!(s.usage, Some((15, 78, 93)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
}

// ---------------------------------------------------------------------------------------------
// openai/: Responses API
// ---------------------------------------------------------------------------------------------

#[test]
fn responses_text_then_function_call() {
    let s = ok_fixture("openai/responses-reasoning-text-function-call.gpt-5.5.sse");
    assert_eq!(
        s.text,
        "I\u{2019}ll check the capital lookup tool for \u{201c}PotatoLand.\u{201d}"
    );
    // The reasoning item is encrypted: nothing readable to show.
    assert_eq!(s.reasoning, "");
    assert_eq!(s.calls.len(), 1);
    let capital = call(&s, 0);
    assert_eq!(capital.id, "call_LabG58Uhrq9kZvR52BYKjToD");
    assert_eq!(capital.name, "get_capital");
    assert_eq!(capital.arguments, r#"{"country":"PotatoLand"}"#);
    assert_eq!(capital.args_json(), json!({"country": "PotatoLand"}));
    assert_eq!(s.usage, Some((63, 69, 132)));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn responses_text_without_sequence_numbers() {
    let s = ok_fixture("openai/responses-text.gpt-4o.sse");
    assert_eq!(s.text, "The capital of France is Paris.");
    assert!(s.calls.is_empty());
    assert_eq!(s.usage, Some((278, 9, 287)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
}

#[test]
fn responses_error_event_is_reported_once() {
    let (decoded, s) = decode_fixture("openai/openai-error.1.chunks.txt");
    assert_eq!(decoded.push_errors, vec![]);
    // The error ends the reply: no truncation on top of it.
    assert_eq!(decoded.end, Ok(()));
    assert_eq!(s.text, "");
    assert_eq!(s.finish, None);
    assert_eq!(s.usage, None);
    // `error` and then `response.failed` say the same thing; one Error delta.
    assert_eq!(s.errors.len(), 1);
    let (status, code, message) = stream_error(&s.errors[0]);
    assert_eq!(status, None);
    assert_eq!(code, Some("insufficient_quota"));
    assert!(message.starts_with("You exceeded your current quota"));
    assert!(
        !s.errors[0].is_retryable(),
        "an exhausted quota does not come back"
    );
    assert_eq!(s.errors[0].provider(), Provider::OpenAiResponses);
}

// ---------------------------------------------------------------------------------------------
// anthropic/
// ---------------------------------------------------------------------------------------------

#[test]
fn anthropic_minimal_text() {
    let s = ok_fixture("anthropic/text-only.claude-haiku-4-5.sse");
    assert_eq!(s.text, "Hello");
    assert_eq!(s.reasoning, "");
    // input_tokens 10 (+0 cache) from the stream, output_tokens 4 from message_delta.
    assert_eq!(s.usage, Some((10, 4, 14)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
}

#[test]
fn anthropic_text_then_tool_use() {
    let name = "anthropic/tool_use_response.txt";
    let (decoded, _) = decode_fixture(name);
    let s = ok_fixture(name);
    assert_eq!(s.text, "I'll check the current weather in Paris for you.");
    assert_eq!(s.calls.len(), 1);
    let weather = call(&s, 0);
    assert_eq!(weather.id, "toolu_01NRLabsLyVHZPKxbKvkfSMn");
    assert_eq!(weather.name, "get_weather");
    assert_eq!(weather.arguments, r#"{"location": "Paris"}"#);
    assert_eq!(weather.args_json(), json!({"location": "Paris"}));
    // message_start has input_tokens 377; message_delta only output_tokens 65.
    assert_eq!(s.usage, Some((377, 65, 442)));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
    // content_block_stop ends the call, before message_delta.
    let end = position(&decoded.deltas, |d| matches!(d, Delta::ToolCallEnd { .. }));
    let usage = position(&decoded.deltas, |d| matches!(d, Delta::Usage { .. }));
    assert!(end < usage);
}

#[test]
fn anthropic_thinking_then_text() {
    let s = ok_fixture("anthropic/thinking-text.claude-sonnet-4.sse");
    assert_eq!(
        s.reasoning,
        "This is a straightforward question about pedestrian safety. I should provide clear, \
         helpful advice about how to safely cross a street. This is basic safety information \
         that could help prevent accidents."
    );
    assert!(s.text.starts_with(
        "Here are the basic steps for safely crossing the street:\n\n**At intersections"
    ));
    assert!(s
        .text
        .ends_with("Always prioritize safety over speed when crossing streets."));
    assert_eq!(s.text.len(), 1021);
    assert!(!s.text.contains("EvMCCk"), "the signature is not text");
    assert_eq!(s.usage, Some((43, 282, 325)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
}

#[test]
fn anthropic_thinking_then_tool_without_arguments() {
    let s = ok_fixture("anthropic/thinking-then-tool-use.claude-haiku-4-5.sse");
    assert_eq!(
        s.reasoning,
        "The user wants me to:\n1. Use the fixed_version tool\n2. Tell them the version\n3. Make a \
         short joke about it\n\nLet me first call the fixed_version tool to see what version it \
         returns."
    );
    assert_eq!(s.text, "");
    let fixed = call(&s, 0);
    assert_eq!(fixed.id, "toolu_01825dXWLSoJwCst1qTsiWdb");
    assert_eq!(fixed.name, "fixed_version");
    // A single empty input_json_delta: the arguments become `{}`.
    assert_eq!(fixed.arguments, "{}");
    assert_eq!(fixed.args_json(), json!({}));
    assert_eq!(s.usage, Some((598, 92, 690)));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn anthropic_redacted_thinking_is_shown_as_such() {
    let s = ok_fixture("anthropic/redacted-thinking.sse");
    assert_eq!(s.reasoning, REDACTED_REASONING.repeat(2));
    assert!(s
        .text
        .starts_with("I notice that you've sent what appears to be some kind of test string"));
    assert!(s
        .text
        .ends_with("How can I assist you today with a legitimate task or question?"));
    assert_eq!(s.usage, Some((92, 189, 281)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
}

// ---------------------------------------------------------------------------------------------
// gemini/
// ---------------------------------------------------------------------------------------------

#[test]
fn gemini_thought_summaries_and_a_signed_function_call() {
    let s =
        ok_fixture("gemini/streaming-success-thinking-function-call-thought-summary-signature.txt");
    assert!(s.reasoning.starts_with("**Calculating the Days**\n\n"));
    assert!(s
        .reasoning
        .contains("\n\n\n**Determining the Approach**\n\n"));
    assert!(s
        .reasoning
        .ends_with("I'll calculate this myself after getting today's date.\n\n\n"));
    assert_eq!(s.text, "");
    assert_eq!(s.calls.len(), 1);
    let now = call(&s, 0);
    assert_eq!(now.name, "now");
    // Gemini has no call ids: a synthetic one, stable and unique to this response.
    assert_eq!(now.id, "call_0_48SHaPHpHKbG-8YPtZCawAk");
    assert_eq!(now.arguments, "{}");
    let signature = now.signature.as_deref().expect("the thoughtSignature");
    assert!(signature.starts_with("CiIBVKhc7vB+vaaq6rA/"));
    assert!(signature.ends_with("MlLleEs0"));
    // prompt 38; completion = candidates 6 + thoughts 168; total as Gemini says.
    assert_eq!(s.usage, Some((38, 174, 212)));
    // Gemini says STOP; with a function call pending that is ToolCalls.
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn gemini_crlf_text_reply() {
    let s = ok_fixture("gemini/streaming-success-basic-reply-short.txt");
    assert_eq!(s.text, "The capital of Wyoming is **Cheyenne**.\n");
    assert_eq!(s.usage, Some((7, 10, 17)));
    assert_eq!(s.finish, Some(FinishReason::Stop));
}

#[test]
fn gemini_parallel_and_streamed_function_call_arguments() {
    let s = ok_fixture("gemini/google-stream-no-args-tool-call.chunks.txt");
    assert!(s.reasoning.starts_with("**Processing User Requests**"));
    assert_eq!(s.text, "");
    let names: Vec<&str> = s.calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["read_theme", "read_screen", "read_screen", "read_screen"]
    );
    let theme = call(&s, 0);
    assert_eq!(theme.id, "call_0__vr4aYiWEJnYodAPkujX0QM");
    assert_eq!(theme.arguments, "{}");
    assert!(theme
        .signature
        .as_deref()
        .is_some_and(|sig| sig.starts_with("AY89a18a8/")));
    // partialArgs at `$.id`, string pieces ("A" then "") and an empty terminator part.
    for (i, screen) in ["A", "B", "C"].iter().enumerate() {
        let c = call(&s, i + 1);
        assert_eq!(c.id, format!("call_{}__vr4aYiWEJnYodAPkujX0QM", i + 1));
        assert_eq!(c.args_json(), json!({"id": screen}));
        assert_eq!(c.signature, None, "only the first parallel call is signed");
    }
    let ids: BTreeSet<&str> = s.calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), 4, "ids are distinct");
    // candidates 58 + thoughts 183; total 490.
    assert_eq!(s.usage, Some((249, 241, 490)));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn gemini_bare_error_object_after_the_stream() {
    let (decoded, s) = decode_fixture("gemini/streaming-failure-error-mid-stream.txt");
    assert_eq!(decoded.push_errors, vec![]);
    assert_eq!(decoded.end, Ok(()), "the error explains the end");
    assert_eq!(s.text, "First Second ");
    // The error ends the reply: no Finish (the STOPs before it were premature), no usage.
    assert_eq!(s.finish, None);
    assert_eq!(s.usage, None);
    assert_eq!(s.errors.len(), 1);
    let (status, code, message) = stream_error(&s.errors[0]);
    assert_eq!(status, Some(499));
    assert_eq!(code, Some("CANCELLED"));
    assert_eq!(message, "The operation was cancelled.");
    assert!(s.errors[0].to_string().starts_with(
        "Gemini reported an error mid-stream (499 CANCELLED): The operation was cancelled."
    ));
}

// ---------------------------------------------------------------------------------------------
// openai-compatible/
// ---------------------------------------------------------------------------------------------

#[test]
fn openrouter_keepalives_reasoning_and_error_chunk() {
    let (decoded, s) = decode_fixture("openai-compatible/openrouter-reasoning-midstream-error.sse");
    assert_eq!(decoded.push_errors, vec![]);
    assert_eq!(decoded.end, Ok(()));
    assert_eq!(s.reasoning, "We need to respond to a greeting. The user");
    assert_eq!(s.text, "");
    // finish_reason "length" twice: one Finish.
    assert_eq!(s.finish, Some(FinishReason::Length));
    assert_eq!(s.usage, Some((43, 10, 53)));
    assert_eq!(s.errors.len(), 1);
    let (status, code, message) = stream_error(&s.errors[0]);
    assert_eq!(
        (status, code, message),
        (Some(400), None, "Token limit reached")
    );
    assert!(!s.errors[0].is_retryable());
}

#[test]
fn groq_named_error_event_ends_the_stream() {
    let (decoded, s) =
        decode_fixture("openai-compatible/groq-reasoning-event-error.gpt-oss-120b.sse");
    assert_eq!(decoded.push_errors, vec![]);
    assert_eq!(
        decoded.end,
        Ok(()),
        "no [DONE], but the error explains the end"
    );
    assert!(s
        .reasoning
        .starts_with("We need to call the tool with invalid parameters first"));
    assert!(s
        .reasoning
        .ends_with("Then second call with name: \"test\". Let's do that."));
    assert_eq!(s.reasoning.len(), 412);
    assert!(s.calls.is_empty());
    assert_eq!(s.finish, None);
    assert_eq!(s.errors.len(), 1);
    let (status, code, message) = stream_error(&s.errors[0]);
    assert_eq!(status, Some(400));
    assert_eq!(code, Some("tool_use_failed"));
    assert!(message.starts_with("Tool call validation failed"));
}

#[test]
fn groq_whole_tool_call_and_usage_in_two_places() {
    let s = ok_fixture("openai-compatible/groq-tool-call-usage.gpt-oss-120b.sse");
    assert_eq!(
        s.reasoning,
        "We need to call the function with correct parameter \"name\". Provide a name, e.g., \
         \"example\"."
    );
    let c = call(&s, 0);
    assert_eq!(c.id, "fc_bfb39741-3748-4def-9886-a93fc9c64a90");
    assert_eq!(c.name, "get_something_by_name");
    assert_eq!(c.arguments, r#"{"name":"example"}"#);
    // Both `x_groq.usage` and `usage`: reported once.
    assert_eq!(s.usage, Some((304, 49, 353)));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn deepseek_reasoning_content_and_character_by_character_arguments() {
    let s = ok_fixture("openai-compatible/deepseek-tool-call.chunks.txt");
    assert_eq!(
        s.reasoning,
        "The user is asking for the weather in San Francisco. I need to use the weather tool to \
         get this information. Let me invoke the weather tool with the location parameter set to \
         \"San Francisco\"."
    );
    assert_eq!(s.text, "");
    let c = call(&s, 0);
    assert_eq!(c.id, "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF");
    assert_eq!(c.name, "weather");
    assert_eq!(c.arguments, r#"{"location": "San Francisco"}"#);
    assert_eq!(s.usage, Some((339, 83, 422)));
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}

#[test]
fn gateway_tool_call_starting_at_index_one() {
    let s = ok_fixture("openai-compatible/anthropic-fallback-tool-call.sse");
    assert_eq!(s.text, "Reading it.");
    assert_eq!(s.calls.len(), 1);
    let c = call(&s, 0);
    assert_eq!(c.id, "toolu_sanitized");
    assert_eq!(c.name, "read_file");
    assert_eq!(c.arguments, r#"{"path": "a.txt"}"#);
    assert_eq!(s.usage, None, "this gateway sends no usage");
    assert_eq!(s.finish, Some(FinishReason::ToolCalls));
}
