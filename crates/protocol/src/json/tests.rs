//! The reader against serde_json, case by case: what one accepts the other accepts, with the
//! same value (floats to the bit); what one refuses the other refuses.

use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use super::{parse, Json, Number};

/// serde_json's reading of `text`, written back so floats compare to the bit (`-0.0`).
fn serde(text: &str) -> Option<String> {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .map(|v| v.to_string())
}

fn ours(text: &str) -> Option<String> {
    parse(text).ok().map(|j| j.to_serde().to_string())
}

fn same(text: &str) {
    assert_eq!(ours(text), serde(text), "{text:?}");
}

#[test]
fn numbers_split_as_serde_json_splits_them() {
    for text in [
        "0",
        "-0",
        "7",
        "-7",
        "007",
        "-",
        "+1",
        "1.",
        ".5",
        "1.0",
        "-1.0",
        "1e3",
        "1E3",
        "1e+3",
        "1e-3",
        "1e",
        "1e+",
        "1.5e",
        "0.0",
        "-0.0",
        "00",
        "01.5",
        "2.5E-3",
        "9007199254740993",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "-9223372036854775809",
        "-18446744073709551616",
        "1e308",
        "1.7976931348623157e308",
        "1.7976931348623159e308",
        "1e309",
        "-1e400",
        "1e-400",
        "4.9406564584124654e-324",
        "2.4703282292062328e-324",
        "123456789012345678901234567890",
        "0.1",
        "0.30000000000000004",
        "1e23",
        "-2.2250738585072011e-308",
    ] {
        same(text);
        same(&format!("[{text}]"));
        same(&format!("{{\"n\":{text}}}"));
    }
    assert_eq!(parse("7").unwrap(), Json::Number(Number::PosInt(7)));
    assert_eq!(parse("-7").unwrap(), Json::Number(Number::NegInt(-7)));
    assert!(
        matches!(parse("-0").unwrap(), Json::Number(Number::Float(f)) if f == 0.0 && f.is_sign_negative())
    );
}

/// Strings as JSON text, plain, escaped and broken: what the reader and the fast path's string
/// fields are both tried on.
pub(crate) const STRINGS: &[&str] = &[
    r#""hello""#,
    r#""""#,
    r#""a\"b\\c\/d""#,
    r#""line\nbreak\ttab\r\b\f""#,
    r#""caf\u00e9 \u00E9""#,
    r#""\ud83d\ude00 emoji""#,
    "\"\u{1F600} raw \u{e9}\"",
    r#""lone \ud83d high""#,
    r#""lone \ude00 low""#,
    r#""\ud83d\u0041 bad pair""#,
    r#""\ud83d\ud83d two highs""#,
    r#""\ud83d\n""#,
    r#""bad \x escape""#,
    r#""short \u12""#,
    r#""short \u12"#,
    "\"raw \u{1} control\"",
    "\"raw \n newline\"",
    "\"raw \u{7f} delete\"",
    r#""unterminated"#,
    r#""unterminated\"#,
    r#""\u0000 nul""#,
];

#[test]
fn strings_escape_as_serde_json_reads_them() {
    for text in STRINGS {
        same(text);
        same(&format!("{{{text}:1}}"));
    }
}

#[test]
fn structure_and_literals_read_as_serde_json_reads_them() {
    for text in [
        "",
        " ",
        "null",
        "nul",
        "nulll",
        "true",
        "tru",
        "false",
        "falsey",
        "[]",
        "[ ]",
        "[1,]",
        "[,1]",
        "[1 2]",
        "[1",
        "{}",
        "{ }",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{\"a\":}",
        "{1:2}",
        "{\"a\":1",
        "{\"a\":1 \"b\":2}",
        " {\"a\" : [ 1 , { } , \"x\" ] } \n\t\r",
        "{} {}",
        "{}x",
        "[]]",
        "{\"a\":1,\"a\":2}",
        "{\"b\":1,\"a\":2,\"b\":3}",
        "\u{feff}{}",
        "[null,true,false]",
        "{\"\":\"\"}",
    ] {
        same(text);
    }
}

#[test]
fn the_last_of_repeated_keys_wins() {
    let j = parse(r#"{"a":1,"b":2,"a":3}"#).unwrap();
    assert_eq!(j.get("a").and_then(Json::as_u64), Some(3));
    assert_eq!(j.as_object().map(|o| o.len()), Some(3));
}

#[test]
fn nesting_stops_where_serde_json_stops() {
    for depth in [1, 126, 127, 128, 129, 1000] {
        let arrays = "[".repeat(depth) + &"]".repeat(depth);
        same(&arrays);
        let objects = "{\"a\":".repeat(depth) + "1" + &"}".repeat(depth);
        same(&objects);
    }
    let e = parse(&("[".repeat(100_000) + &"]".repeat(100_000))).unwrap_err();
    assert!(e.to_string().contains("recursion limit exceeded"), "{e}");
}

#[test]
fn an_error_says_what_and_where() {
    let e = parse("{\n  \"a\": tru\n}").unwrap_err();
    assert_eq!(e.to_string(), "expected value at line 2 column 8");
    let e = parse("[1, 2").unwrap_err();
    assert_eq!(e.to_string(), "EOF while parsing at line 1 column 6");
}

#[test]
fn strings_without_escapes_are_borrowed() {
    let text = r#"{"plain":"abc","escaped":"a\nb"}"#;
    let j = parse(text).unwrap();
    let o = j.as_object().unwrap();
    assert!(matches!(
        o.get("plain"),
        Some(Json::String(std::borrow::Cow::Borrowed("abc")))
    ));
    assert!(
        matches!(o.get("escaped"), Some(Json::String(std::borrow::Cow::Owned(s))) if s == "a\nb")
    );
}

#[test]
fn a_serde_value_reads_back_to_the_same_tree() {
    let texts: Vec<&str> = std::vec![
        r#"{"a":[1,-2,3.5,"x",null,true,{"b":{}}],"c":"d"}"#,
        "[18446744073709551615,-9223372036854775808,1e300]",
    ];
    for text in texts {
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(Json::from_serde(&value).to_serde(), value, "{text}");
    }
}
