//! Whether a JSON text is already in [`RawJson`](super::RawJson)'s canonical form.
//!
//! A weft server writes tool arguments canonically, and a client receives them as a JSON string
//! to read into a `RawJson`: reading that text into a tree and writing the tree again only gives
//! back the same bytes. This walk says so without building anything, with the reader's own
//! steps for strings and numbers, so it accepts nothing the reader refuses.

use super::{Number, Reader, DEPTH_LIMIT};

/// Whether `text` is JSON exactly as [`RawJson`](super::RawJson) writes it: compact, every
/// object's keys in ascending order and none repeated, strings escaped and numbers spelled as
/// serde_json writes them. `false` means only "not known to be": the caller then reads and
/// writes it, and that decides.
pub(super) fn is_canonical(text: &str) -> bool {
    let mut r = Reader::new(text);
    value(&mut r, 0) && r.at == text.len()
}

fn value(r: &mut Reader<'_>, depth: usize) -> bool {
    match r.byte(r.at) {
        Some(b'"') => string(r).is_some(),
        Some(b'-' | b'0'..=b'9') => number(r),
        // The byte was checked: `word` skips no whitespace here.
        Some(b'n') => r.word(b"null"),
        Some(b't') => r.word(b"true"),
        Some(b'f') => r.word(b"false"),
        // Where the reader stops with an error: that is the reader's to report.
        Some(b'[' | b'{') if depth + 1 >= DEPTH_LIMIT => false,
        Some(open @ (b'[' | b'{')) => {
            // `]` and `}` come two after their openers in ASCII.
            let close = open + 2;
            r.at += 1;
            if next(r, close) {
                return true;
            }
            let mut last = None;
            loop {
                if open == b'{' {
                    let Some(key) = string(r) else {
                        return false;
                    };
                    // Strictly ascending: a repeated key is written once, in sorted place.
                    if last.is_some_and(|last| last >= key) || !next(r, b':') {
                        return false;
                    }
                    last = Some(key);
                }
                if !value(r, depth + 1) {
                    return false;
                }
                if next(r, close) {
                    return true;
                }
                if !next(r, b',') {
                    return false;
                }
            }
        }
        _ => false,
    }
}

/// Consumes `c` if it is the very next byte (canonical text has no whitespace).
fn next(r: &mut Reader<'_>, c: u8) -> bool {
    let found = r.byte(r.at) == Some(c);
    if found {
        r.at += 1;
    }
    found
}

/// A string's decoded text, if it is written as RawJson writes it. Without a backslash it is:
/// the reader refuses raw control characters, and only they, the quote and the backslash are
/// escaped. With one, only writing it again tells (`\/` and `\u00e9` are not canonical).
fn string<'a>(r: &mut Reader<'a>) -> Option<alloc::borrow::Cow<'a, str>> {
    let start = r.at;
    let s = r.string().ok()?;
    if let alloc::borrow::Cow::Owned(decoded) = &s {
        let mut again = alloc::string::String::with_capacity(r.at - start);
        super::raw::write_str(&mut again, decoded);
        if again != r.t[start..r.at] {
            return None;
        }
    }
    Some(s)
}

/// Whether a number is spelled as it is written back. A whole number the reader keeps as one
/// has no sign but `-`, no leading zero, fraction or exponent: its digits are the written ones.
/// A float (`-0` included) is compared with the float writer's spelling.
fn number(r: &mut Reader<'_>) -> bool {
    let start = r.at;
    match r.number() {
        Ok(Number::PosInt(_) | Number::NegInt(_)) => true,
        Ok(Number::Float(f)) => super::float(f) == r.t[start..r.at],
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use std::format;
    use std::string::String;
    use std::vec::Vec;

    use super::is_canonical;
    use crate::json::{parse, RawJson};

    /// The canonical text by the long way: read into a tree, written again.
    fn rewritten(text: &str) -> Option<String> {
        parse(text)
            .ok()
            .map(|tree| String::from(RawJson::from_tree(&tree).as_str()))
    }

    /// Wherever the check says canonical, the long way gives the text back; and every text the
    /// long way writes, the check recognises (so it is taken, not merely safe).
    fn holds(text: &str) -> bool {
        let canonical = is_canonical(text);
        if canonical {
            assert_eq!(rewritten(text).as_deref(), Some(text), "{text:?}");
        }
        if let Some(again) = rewritten(text) {
            assert!(is_canonical(&again), "{again:?}, written for {text:?}");
        }
        canonical
    }

    #[test]
    fn canonical_text_is_recognised_and_nothing_else() {
        let mut texts: Vec<String> = crate::json::tests::STRINGS
            .iter()
            .map(|s| String::from(*s))
            .collect();
        for n in [
            "0",
            "-0",
            "7",
            "-7",
            "007",
            "1.0",
            "1.5",
            "-1.5",
            "1e3",
            "1000.0",
            "1e300",
            "1E300",
            "1e+300",
            "0.1",
            "1e-7",
            "1e-07",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "1e400",
            "-",
        ] {
            texts.push(String::from(n));
        }
        for s in texts.clone() {
            texts.push(format!("[{s}]"));
            texts.push(format!("{{\"k\":{s}}}"));
            texts.push(format!("{{{s}:1}}"));
        }
        for t in [
            "",
            " ",
            "null",
            "nul",
            "true",
            "false",
            "[]",
            "{}",
            "[ ]",
            "{ }",
            " {}",
            "{} ",
            "[1,2]",
            "[1, 2]",
            "[1,]",
            r#"{"a":1,"b":2}"#,
            r#"{"b":1,"a":2}"#,
            r#"{"a":1,"a":1}"#,
            r#"{"a":1 ,"b":2}"#,
            r#"{"a":{"c":[true,null],"b":"x"}}"#,
            r#"{"a":{"b":"x","c":[true,null]}}"#,
            r#"{"":0,"\u0000":1}"#,
            r#"{"":0,"\n":1}"#,
            r#"{"é":1,"z":2}"#,
            r#"{"z":1,"é":2}"#,
            "[1]x",
            "[1]]",
        ] {
            texts.push(String::from(t));
        }
        for depth in [126, 127, 128] {
            texts.push("[".repeat(depth) + &"]".repeat(depth));
        }
        let kept = texts.iter().filter(|t| holds(t)).count();
        // Both answers are exercised, so the agreement above is not vacuous.
        assert!(
            kept > 20 && kept < texts.len() - 20,
            "{kept} of {}",
            texts.len()
        );
    }
}
