//! The fast path against the general one: wherever the fast path answers, its answer is the
//! general path's; where the general path refuses a frame, the fast path does not answer.

use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use super::decode_server as fast;
use crate::dialect::Dialect;
use crate::frame::Limits;

/// Checks one frame; returns whether the fast path answered.
fn agree(dialect: Dialect, frame: &str) -> bool {
    let general = dialect.decode_server_general(frame.as_bytes(), Limits::default());
    match fast(dialect, frame.as_bytes()) {
        Some(seq) => {
            assert_eq!(
                general.as_ref().ok(),
                Some(&std::vec![seq]),
                "{dialect}: the fast path disagrees on {frame}"
            );
            true
        }
        None => false,
    }
}

fn golden_frames(dialect: Dialect) -> Vec<String> {
    let dir = format!(
        "{}/tests/fixtures/{}",
        env!("CARGO_MANIFEST_DIR"),
        dialect.as_str()
    );
    let mut frames = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("golden fixtures") {
        let path = entry.expect("fixture entry").path();
        if path.extension().is_some_and(|e| e == "jsonl") {
            let text = std::fs::read_to_string(&path).expect("fixture text");
            frames.extend(text.lines().map(ToString::to_string));
        }
    }
    assert!(!frames.is_empty(), "{dir} has golden transcripts");
    frames
}

#[test]
fn every_golden_frame_agrees_and_the_stream_takes_the_fast_path() {
    for dialect in Dialect::ALL {
        let mut streamed = 0;
        for frame in golden_frames(dialect) {
            let answered = agree(dialect, &frame);
            // The deltas a reply is made of, in each dialect (tool calls, results and node
            // spans take the general path).
            let is_stream = [
                "\"message_chunk\"",
                "\"tool_call_chunk\"",
                "\"content_delta\"",
                "\"tool_call_delta\"",
                "\"agent_message\"",
                "\"agent_thinking\"",
                "{\"type\":\"usage\"",
                "\"TEXT_MESSAGE_CONTENT\"",
                "\"REASONING_MESSAGE_CONTENT\"",
                "\"TOOL_CALL_ARGS\"",
            ]
            .iter()
            .any(|t| frame.contains(t))
                || (frame.contains("\"response_item\"")
                    && (frame.contains("\"role\":\"assistant\"")
                        || frame.contains("{\"type\":\"reasoning\"")));
            if is_stream {
                streamed += 1;
                assert!(
                    answered,
                    "{dialect}: a stream frame took the general path: {frame}"
                );
            }
        }
        assert!(streamed > 0, "{dialect}");
    }
}

#[test]
fn agentchat_calls_and_results_take_the_fast_path() {
    let mut answered = 0;
    for frame in golden_frames(Dialect::Agentchat) {
        if frame.starts_with("{\"type\":\"tool_call\"")
            || frame.starts_with("{\"type\":\"tool_result\"")
        {
            assert!(agree(Dialect::Agentchat, &frame), "{frame}");
            answered += 1;
        }
    }
    assert!(answered > 0);
}

/// What else goes in a string field, beside the JSON reader's string cases: values of other
/// types, which the fast path must decline.
const NOT_STRINGS: &[&str] = &["null", "12", "true", "{}", "[\"a\"]"];

/// Values to put in `event_id`.
const NUMBERS: &[&str] = &[
    "7",
    "0",
    "007",
    "7.0",
    "7.5",
    "-7",
    "1e3",
    "18446744073709551615",
    "18446744073709551616",
    "9007199254740993",
    "null",
    "\"7\"",
    "",
];

/// Templates of the fast shapes; `S` is replaced by each string, `N` by each number.
const LOOM: &[&str] = &[
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"message_chunk","content":S,"id":"think","session_id":"s","node_id":"run-think-0","event_id":N}}"#,
    r#"{"type":"run_stream_event","id":S,"event":{"type":"reasoning_chunk","content":"x","id":"think","event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"tool_call_chunk","call_id":S,"name":"calc","arguments_delta":"{\"a\":","event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"tool_call_chunk","arguments_delta":S,"event_id":N}}"#,
    r#"{"event":{"event_id":N,"id":S,"content":"x","type":"message_chunk"},"id":"run-1","type":"run_stream_event"}"#,
    r#"  { "type" : "run_stream_event" , "id" : "run-1" , "event" : { "type" : "message_chunk" , "content" : S , "id" : "t" , "event_id" : N } }  "#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"message_chunk","content":S,"id":"t","event_id":N},"extra":1}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"message_chunk","content":S,"content":"again","id":"t","event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"message_chunk","content":S,"event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"message_chunk","content":S,"id":"t","call_id":"c","event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"node_enter","id":S,"event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"message_chunk","content":S,"id":"t","event_id":N}} trailing"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"message_chunk","content":S,"id":"t","event_id":N}"#,
    r#"{"type":"run_end","id":"run-1","reply":S,"event_id":N}"#,
    r#"{"type":"run_stream_event","id":S,"event":{"type":"usage","prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"session_id":"s","node_id":"n","event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"usage","prompt_tokens":1,"completion_tokens":2,"id":S,"total_tokens":3,"event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"message_chunk","content":S,"id":"t","total_tokens":3,"event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"node_enter","id":S,"session_id":"s","node_id":"run-think-0","event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"node_exit","id":"think","result":"Ok","event_id":N,"node_id":S}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"node_exit","id":"think","result":{"Err":S},"event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"node_exit","id":"think","result":S,"event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"node_exit","id":"think","result":{"Err":S,"more":1},"event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"tool_start","call_id":S,"name":"read","event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"tool_start","name":S,"event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"tool_end","call_id":"c","name":"read","result":S,"is_error":false,"event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"tool_end","name":"read","result":"r","is_error":S,"event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"tool_call","call_id":"c","name":"read","arguments":{"path":S,"line":N,"flags":[true,S,{"x":N}]},"event_id":1}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"tool_call","name":"read","arguments":S,"event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"tool_call","name":S,"arguments":N,"event_id":1}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"tool_call","name":S,"event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"tool_call","name":"n","arguments":{"a":S,"a":N},"event_id":1}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"llm_complete","content":S,"tool_calls":[],"finish_reason":"stop","event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"llm_complete","content":"x","tool_calls":[S,"b"],"finish_reason":"tool_calls","event_id":N}}"#,
    r#"{"type":"run_stream_event","id":"run-1","event":{"type":"llm_complete","content":"x","finish_reason":S,"event_id":N}}"#,
];

const CUESO: &[&str] = &[
    r#"{"type":"content_delta","content":S,"role":"assistant","run_id":"run-1","event_id":N}"#,
    r#"{"type":"content_delta","content":S}"#,
    r#"{"event_id":N,"run_id":S,"content":"x","type":"content_delta"}"#,
    r#"{"type":"tool_call_delta","tool_call":{"id":S,"name":"calc","input":null},"run_id":"run-1","event_id":N}"#,
    r#"{"type":"tool_call_delta","tool_call":{"id":"c","name":"calc","input_json":S},"run_id":"run-1","event_id":N}"#,
    r#"{"type":"tool_call_delta","tool_call":{"input_json":S},"event_id":N}"#,
    r#"{"type":"tool_call_delta","tool_call":{"id":"c","input":{"a":1}},"run_id":"run-1","event_id":N}"#,
    r#"{"type":"tool_call_delta","tool_call":S,"run_id":"run-1","event_id":N}"#,
    r#"{"type":"content_delta","content":S,"run_id":"run-1","event_id":N,"call_id":"c"}"#,
    r#"{"type":"content_delta","content":S,"usage":"not usage","event_id":N}"#,
    r#"{"type":"content_delta","content":S,"tool_call":{"id":"c"},"event_id":N}"#,
    r#"{"type":"message_complete","content":S,"run_id":"run-1","event_id":N}"#,
    r#"{"type":"content_delta","run_id":"run-1","event_id":N}"#,
];

const AGENTLOOP: &[&str] = &[
    r#"{"id":"f-1","type":"response_item","payload":{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"input_text","text":S}]},"run_id":"run-1","event_id":N}"#,
    r#"{"id":"f-1","type":"response_item","payload":{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":S},{"type":"output_text","text":"more"},{"type":"image"}]},"run_id":"run-1","event_id":N}"#,
    r#"{"type":"response_item","payload":{"type":"message","content":[S]},"event_id":N}"#,
    r#"{"type":"response_item","payload":{"type":"message","content":S},"run_id":"run-1","event_id":N}"#,
    r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[]},"run_id":S,"event_id":N}"#,
    r#"{"type":"response_item","payload":{"type":"message","role":"assistant"},"run_id":"run-1","event_id":N}"#,
    r#"{"type":"response_item","payload":{"type":"message","role":S,"content":[{"type":"input_text","text":"x"}]},"event_id":N}"#,
    r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":S}]},"event_id":N}"#,
    r#"{"id":"f-2","type":"response_item","payload":{"type":"reasoning","id":"rs_1","content":[{"type":"reasoning_text","text":S}],"duration_ms":N},"run_id":"run-1"}"#,
    r#"{"id":"f-2","type":"response_item","payload":{"type":"reasoning","id":"rs_1","content":[{"type":"reasoning_text","text":S}]},"run_id":"run-1","event_id":N}"#,
    r#"{"type":"response_item","payload":{"type":"reasoning","role":"assistant","content":[{"text":S}]},"event_id":N}"#,
    r#"{"type":"response_item","payload":{"type":"function_call","name":S,"arguments":"{}"},"event_id":N}"#,
    r#"{"type":"response_item","payload":{"type":"message","content":[{"type":"t","text":S,"text":"again"}]},"event_id":N}"#,
    r#"{"type":"response_item","payload":{"type":"message","content":[{"type":"t","text":S}],"extra":1},"event_id":N}"#,
    r#"{"type":"response_item","payload":S,"event_id":N}"#,
    r#"{"type":"response_item","payload":{"type":"message","content":[{"type":"t","text":S}]},"event_id":N,"tool":"x"}"#,
    r#"{"type":"loading_state","payload":{"loading":true},"run_id":S,"event_id":N}"#,
    r#"{"type":"usage","prompt_tokens":N,"completion_tokens":2,"total_tokens":3,"run_id":S,"event_id":4}"#,
    r#"{"type":"usage","prompt_tokens":1,"completion_tokens":2,"total_tokens":N,"run_id":S}"#,
    r#"{"type":"usage","prompt_tokens":1,"completion_tokens":N,"run_id":S}"#,
    r#"{"id":S,"type":"usage","prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"event_id":N}"#,
    r#"{"type":S,"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"event_id":N}"#,
    r#"{"id":"f-3","type":"response_item","payload":{"type":"function_call","id":"call_1","call_id":"call_1","name":"read","arguments":S},"run_id":"run-1","event_id":N}"#,
    r#"{"id":"f-3","type":"response_item","payload":{"type":"function_call","id":"call_1","name":S},"run_id":"run-1","event_id":N}"#,
    r#"{"id":"f-3","type":"response_item","payload":{"type":"function_call","id":N,"name":"read","arguments":S},"run_id":"run-1"}"#,
    r#"{"id":"f-4","type":"response_item","payload":{"type":"function_call_output","id":"output_1","call_id":"call_1","output":S},"run_id":"run-1","event_id":N,"tool":"read"}"#,
    r#"{"id":"f-4","type":"response_item","payload":{"type":"function_call_output","id":"output_1","output":"o"},"run_id":S,"event_id":N,"tool":"read","is_error":true}"#,
    r#"{"id":"f-4","type":"response_item","payload":{"type":"function_call_output","id":"output_1","output":"o"},"run_id":"run-1","is_error":S,"event_id":N}"#,
    r#"{"id":"f-5","type":"agent_finished","payload":{"responseId":S},"run_id":"run-1","event_id":N}"#,
    r#"{"id":"f-5","type":"agent_finished","payload":{"responseId":"m","other":S},"run_id":"run-1","event_id":N}"#,
];

const AGENTCHAT: &[&str] = &[
    r#"{"type":"agent_message","message":S,"run_id":"run-1","event_id":N}"#,
    r#"{"type":"agent_message","message":S}"#,
    r#"{"event_id":N,"run_id":S,"message":"x","type":"agent_message"}"#,
    r#"{"type":"agent_thinking","reasoning":S,"run_id":"run-1","event_id":N}"#,
    r#"{"type":"agent_thinking","message":S,"run_id":"run-1","event_id":N}"#,
    r#"{"type":"agent_message","message":S,"reasoning":"x","event_id":N}"#,
    r#"{"type":"agent_message","message":S,"call_id":"c","event_id":N}"#,
    r#"{"type":"user_message","message":S,"run_id":"run-1","event_id":N}"#,
    r#"{"type":"agent_message","message":S,"total_tokens":3,"event_id":N}"#,
    r#"{"type":"usage","prompt_tokens":N,"completion_tokens":2,"total_tokens":3,"run_id":S,"event_id":4}"#,
    r#"{"type":"usage","prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"message":S,"event_id":N}"#,
    r#"{"type":"tool_call","tool_name":"read","tool_args":S,"run_id":"run-1","event_id":N,"call_id":"call_0"}"#,
    r#"{"type":"tool_call","tool_name":S,"tool_args":"{\"a\":1}","event_id":N}"#,
    r#"{"type":"tool_call","tool_name":"read","tool_args":N,"run_id":S}"#,
    r#"{"type":"tool_result","tool_name":"read","result":S,"success":true,"run_id":"run-1","event_id":N,"call_id":"call_0"}"#,
    r#"{"type":"tool_result","tool_name":"read","result":"r","success":S,"event_id":N}"#,
    r#"{"type":"tool_result","tool_name":S,"result":"r","success":false,"call_id":N}"#,
];

const CUESO_USAGE: &[&str] = &[
    r#"{"type":"usage","prompt_tokens":N,"completion_tokens":2,"total_tokens":3,"run_id":S,"event_id":4}"#,
    r#"{"type":"usage","prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"content":S,"event_id":N}"#,
    r#"{"type":"content_delta","content":S,"prompt_tokens":1,"event_id":N}"#,
    r#"{"type":"tool_result","tool_name":"read","tool_call_id":S,"result":"r","run_id":"run-1","event_id":N}"#,
    r#"{"type":"tool_result","tool_name":"read","result":S,"error":true,"event_id":N}"#,
    r#"{"type":"tool_result","tool_name":"read","result":"r","error":S,"event_id":N}"#,
    r#"{"type":"message_complete","content":S,"finish_reason":"tool_use","tool_calls":["read"],"run_id":"run-1","event_id":N}"#,
    r#"{"type":"message_complete","content":"c","finish_reason":S,"event_id":N}"#,
    r#"{"type":"message_complete","content":"c","tool_calls":[S],"event_id":N}"#,
];

#[test]
fn variations_of_the_fast_shapes_agree() {
    for (dialect, templates) in [
        (Dialect::Loom, LOOM),
        (Dialect::Cueso, CUESO),
        (Dialect::Cueso, CUESO_USAGE),
        (Dialect::Agentloop, AGENTLOOP),
        (Dialect::Agentchat, AGENTCHAT),
    ] {
        let mut answered = 0;
        let mut declined = 0;
        for template in templates {
            for s in crate::json::tests::STRINGS.iter().chain(NOT_STRINGS) {
                for n in NUMBERS {
                    let frame = template.replace('S', s).replace('N', n);
                    if agree(dialect, &frame) {
                        answered += 1;
                    } else {
                        declined += 1;
                    }
                }
            }
        }
        // Both outcomes are exercised, so the comparison above is not vacuous.
        assert!(
            answered > 20 && declined > 20,
            "{dialect}: {answered} / {declined}"
        );
    }
}

/// agentchat's calls and results beside the other shapes' fields, which they must decline.
const AGENTCHAT_TOOLS: &[&str] = &[
    r#"{"type":"tool_call","tool_name":"read","tool_args":S,"call_id":"c","result":"r","event_id":N}"#,
    r#"{"type":"tool_call","tool_name":"read","tool_args":S,"success":true,"event_id":N}"#,
    r#"{"type":"tool_call","tool_name":"read","tool_args":S,"message":"m","event_id":N}"#,
    r#"{"type":"tool_call","tool_name":"read","tool_args":S,"total_tokens":3,"event_id":N}"#,
    r#"{"type":"tool_call","tool_name":"read","tool_args":S,"call_id":null,"event_id":N}"#,
    r#"{"type":"tool_call","tool_name":"read","tool_args":"{}","tool_args":S,"event_id":N}"#,
    r#"{"type":"tool_call","tool_args":S,"event_id":N}"#,
    r#"{"type":"tool_call","tool_name":S,"event_id":N}"#,
    r#"{"call_id":S,"event_id":N,"run_id":"run-1","tool_args":"[1, 2]","tool_name":"t","type":"tool_call"}"#,
    r#" { "type" : "tool_call" , "tool_name" : "t" , "tool_args" : S , "event_id" : N } "#,
    r#"{"type":"tool_result","tool_name":"read","result":S,"success":false,"tool_args":"{}","event_id":N}"#,
    r#"{"type":"tool_result","tool_name":"read","result":S,"success":true,"reasoning":"x","event_id":N}"#,
    r#"{"type":"tool_result","tool_name":"read","result":S,"event_id":N}"#,
    r#"{"type":"tool_result","tool_name":"read","success":true,"call_id":S,"event_id":N}"#,
    r#"{"type":"tool_result","tool_name":"read","result":"r","success":truex,"call_id":S,"event_id":N}"#,
    r#"{"type":"tool_result","tool_name":"read","result":"r","success":null,"call_id":S,"event_id":N}"#,
    r#"{"type":"usage","prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"success":true,"run_id":S,"event_id":N}"#,
    r#"{"type":"usage","prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"result":S,"event_id":N}"#,
    r#"{"type":"agent_message","message":S,"tool_name":"t","event_id":N}"#,
    r#"{"type":"agent_thinking","reasoning":S,"success":false,"event_id":N}"#,
    r#"{"type":"user_message","tool_name":"t","tool_args":S,"event_id":N}"#,
];

#[test]
fn variations_of_agentchat_calls_and_results_agree() {
    let mut answered = 0;
    let mut declined = 0;
    for template in AGENTCHAT_TOOLS {
        for s in crate::json::tests::STRINGS.iter().chain(NOT_STRINGS) {
            for n in NUMBERS {
                let frame = template.replace('S', s).replace('N', n);
                if agree(Dialect::Agentchat, &frame) {
                    answered += 1;
                } else {
                    declined += 1;
                }
            }
        }
    }
    assert!(answered > 20 && declined > 20, "{answered} / {declined}");
}

#[test]
fn escaped_text_is_decoded() {
    let frame = r#"{"type":"content_delta","content":"a\"b\n\u00e9\ud83d\ude00","run_id":"r","event_id":3}"#;
    let seq = fast(Dialect::Cueso, frame.as_bytes()).expect("a fast shape");
    assert_eq!(
        seq.event,
        crate::event::Event::MessageChunk {
            content: "a\"b\n\u{e9}\u{1F600}".into(),
            id: String::new(),
        }
    );
    assert_eq!(seq.envelope.event_id, Some(3));
    assert_eq!(seq.envelope.run_id.as_deref(), Some("r"));
}

#[test]
fn bytes_that_are_not_utf8_take_the_general_path() {
    let mut frame = br#"{"type":"content_delta","content":"x","event_id":1}"#.to_vec();
    frame[29] = 0xff;
    assert!(fast(Dialect::Cueso, &frame).is_none());
    assert!(Dialect::Cueso
        .decode_server(&frame, Limits::default())
        .is_err());
}
