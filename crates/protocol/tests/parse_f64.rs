//! `json::parse_f64` against `str::parse::<f64>`, bit for bit, on the whole of core's grammar
//! and on text that is only close to it: the agent and the Worker call it where they called
//! core's parser, on text from settings, model replies and tool calls, so it must accept, refuse
//! and round exactly as core does. (The JSON-grammar half, the rounding itself, is held to core
//! on 1.2 M inputs by the unit tests of `json/float.rs`.)

#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use weft_protocol::json::parse_f64;

fn core(text: &str) -> Option<u64> {
    text.parse::<f64>().ok().map(f64::to_bits)
}

fn ours(text: &str) -> Option<u64> {
    parse_f64(text).map(f64::to_bits)
}

#[test]
fn the_edges_of_cores_grammar() {
    for text in [
        "",
        "+",
        "-",
        ".",
        "+.",
        "-.",
        "e",
        "e5",
        ".e5",
        "5e",
        "5e+",
        "5e-",
        "5.e3",
        ".5e-3",
        "5.",
        ".5",
        "+.5",
        "-5.",
        "007",
        "-0",
        "+0",
        "0.0e0",
        "1e400",
        "-1e400",
        "1e-400",
        "-1e-400",
        "1.7976931348623157e308",
        "1.7976931348623159e308",
        "4.9e-324",
        "2.4e-324",
        "2.5e-324",
        "1e99999999999999999999",
        "1e-99999999999999999999",
        "0e99999999999999999999",
        "1..2",
        "1.2.3",
        "--1",
        "+-1",
        "-+1",
        "++1",
        " 1",
        "1 ",
        "1_000",
        "0x10",
        "1e5.5",
        "1E5",
        "1e+05",
        "inf",
        "-inf",
        "+inf",
        "INF",
        "Inf",
        "infinity",
        "-Infinity",
        "INFINITY",
        "infinit",
        "infinityy",
        "in",
        "nan",
        "NaN",
        "-nan",
        "+NAN",
        "nan0",
        "nanx",
        "-",
        "١",
        "１",
        "1\u{0}",
        "0.30000000000000004",
        "9007199254740993",
        "123456789012345678901234567890",
    ] {
        assert_eq!(ours(text), core(text), "{text:?}");
    }
}

/// Text in core's grammar, every part optional so that the refused shapes come too.
fn near_grammar() -> impl Strategy<Value = String> {
    (
        "[+-]?",
        "0{0,3}[0-9]{0,25}",
        prop::option::of("\\.[0-9]{0,25}"),
        prop::option::of("[eE][+-]?[0-9]{0,4}"),
    )
        .prop_map(|(sign, whole, fraction, exponent)| {
            format!(
                "{sign}{whole}{}{}",
                fraction.unwrap_or_default(),
                exponent.unwrap_or_default()
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn agrees_with_core_near_its_grammar(text in near_grammar()) {
        prop_assert_eq!(ours(&text), core(&text), "{:?}", text);
    }

    #[test]
    fn agrees_with_core_on_soup(text in "[-+.0-9eEinfatyINFATY \u{e9}_x]{0,12}") {
        prop_assert_eq!(ours(&text), core(&text), "{:?}", text);
    }

    #[test]
    fn reads_back_what_rust_writes(x in any::<f64>()) {
        for text in [format!("{x}"), format!("{x:e}"), format!("{x:?}"), format!("{x:.11e}"), format!("{x:+}")] {
            prop_assert_eq!(ours(&text), core(&text), "{:?}", text);
        }
    }
}
