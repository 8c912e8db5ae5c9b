//! The frame reader (`weft_protocol::json`) against serde_json on generated texts: every
//! value serde_json writes reads back the same, and on text that is only mostly JSON the two
//! accept and refuse the same inputs with the same values; `RawJson`'s text is the text
//! serde_json writes for the value it reads.

#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use serde_json::Value;
use weft_protocol::json;

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "\\PC{0,8}".prop_map(Value::from),
        "[\"\\\\\u{0}-\u{1f}\u{7f}\u{e9}\u{1F600}a]{0,6}".prop_map(Value::from),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(6, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-c\"\\\\]{0,3}", inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// `RawJson`'s canonical text of `text`, and serde_json's writing of what it reads there.
fn canonical(text: &str) -> (Option<String>, Option<String>) {
    (
        json::RawJson::parse(text).map(|raw| raw.as_str().to_owned()),
        serde(text),
    )
}

/// What `text` reads to, written back so floats compare to the bit; `None` if refused.
fn ours(text: &str) -> Option<String> {
    json::parse(text).ok().map(|j| j.to_serde().to_string())
}

fn serde(text: &str) -> Option<String> {
    serde_json::from_str::<Value>(text)
        .ok()
        .map(|v| v.to_string())
}

/// Pieces of JSON text, put together at random: mostly JSON, often not.
fn soup() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        " ",
        "\n",
        "\"",
        "\"k\"",
        "\"v\"",
        "\\",
        "\\u",
        "d83d",
        "\\ude00",
        "\\n",
        "null",
        "true",
        "fals",
        "0",
        "-",
        "1",
        "12",
        ".",
        "5",
        "e",
        "E",
        "+",
        "-0",
        "1e400",
        "18446744073709551616",
        "\u{1}",
        "\u{e9}",
        "x",
    ]);
    prop::collection::vec(piece, 0..24).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn every_value_serde_json_writes_reads_back_the_same(v in value()) {
        for text in [serde_json::to_string(&v).unwrap(), serde_json::to_string_pretty(&v).unwrap()] {
            prop_assert_eq!(ours(&text), Some(v.to_string()), "{}", text);
            let (raw, theirs) = canonical(&text);
            prop_assert_eq!(raw, theirs, "{}", text);
        }
    }

    #[test]
    fn mostly_json_is_accepted_and_refused_as_serde_json_does(text in soup()) {
        prop_assert_eq!(ours(&text), serde(&text), "{:?}", text);
        let (raw, theirs) = canonical(&text);
        prop_assert_eq!(raw, theirs, "{:?}", text);
    }
}
