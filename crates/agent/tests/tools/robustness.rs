//! No input makes a tool panic, and a failed patch never writes.

use super::*;

/// A small deterministic generator (xorshift64), so failures reproduce without a dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn text(&mut self, pieces: &[&str], max: usize) -> String {
        let len = self.below(max + 1);
        (0..len).map(|_| pieces[self.below(pieces.len())]).collect()
    }
}

#[test]
fn random_expressions_never_panic() {
    let pieces = [
        "1", "2.5", "1e3", "0", ".", "e", "pi", "+", "-", "*", "/", "%", "^", "**", "(", ")", ",",
        " ", "sqrt", "min", "max", "ln", "x", "é", "\0", "1e308", "9",
    ];
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for _ in 0..20_000 {
        let expression = rng.text(&pieces, 30);
        let _ = evaluate(&expression);
    }
    for piece in ["(", "-", "sqrt(", "2^"] {
        let _ = evaluate(&piece.repeat(MAX_EXPRESSION_LEN / piece.len()));
    }
}

#[test]
fn random_urls_and_html_never_panic() {
    let url_pieces = [
        "http",
        "https",
        "://",
        ":",
        "/",
        "@",
        "[",
        "]",
        "::1",
        "0x",
        "0",
        "127",
        ".",
        "1",
        "255",
        "%",
        "?",
        "#",
        "a",
        "é",
        "localhost",
        "\\",
        " ",
        "ffff",
    ];
    let html_pieces = [
        "<", ">", "/", "p", "pre", "script", "SCRIPT", "br", "li", "!--", "-->", "&", "#", "x41",
        ";", "amp", "\"", "'", " ", "\n", "é", "a", "=", "?",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..20_000 {
        fuzz_check_url(&rng.text(&url_pieces, 12));
        let html = rng.text(&html_pieces, 40);
        let max = rng.below(50);
        let _ = fetch_result(200, "text/html", html.as_bytes(), max);
        let bytes: Vec<u8> = (0..rng.below(20)).map(|_| rng.below(256) as u8).collect();
        let _ = fetch_result(200, "", &bytes, rng.below(20));
    }
}

#[test]
fn random_patches_never_panic_and_fail_atomically() {
    let lines = [
        "*** Begin Patch",
        "*** End Patch",
        "*** Add File: a.txt",
        "*** Add File: new.txt",
        "*** Delete File: a.txt",
        "*** Delete File: b/c.txt",
        "*** Update File: a.txt",
        "*** Update File: b/c.txt",
        "*** Move to: d.txt",
        "*** Move to: a.txt",
        "*** End of File",
        "@@",
        "@@ two",
        "@@ -1,2 +1,2 @@",
        " one",
        " two",
        "-two",
        "-three",
        "+TWO",
        "+",
        "",
        "x",
    ];
    let start = MemoryWorkspace::with_files([("a.txt", "one\ntwo\nthree\n"), ("b/c.txt", "two\n")]);
    let mut rng = Rng(0xdead_beef_cafe_f00d);
    let mut applied = 0;
    for _ in 0..20_000 {
        let mut text = String::from("*** Begin Patch\n");
        for _ in 0..rng.below(8) {
            text.push_str(lines[rng.below(lines.len())]);
            text.push('\n');
        }
        if rng.below(4) > 0 {
            text.push_str("*** End Patch");
        }
        let mut ws = start.clone();
        match apply_patch(&text, &mut ws) {
            Ok(_) => applied += 1,
            Err(_) => assert_eq!(ws, start, "a failed patch wrote something:\n{text}"),
        }
    }
    assert!(
        applied > 100,
        "the generator should produce valid patches too: {applied}"
    );
}

#[test]
fn random_arguments_never_panic() {
    let values = [
        json!(null),
        json!(1),
        json!("../x"),
        json!("a.txt"),
        json!(""),
        json!("*** Begin Patch\n*** End Patch"),
        json!("1+"),
        json!("https://example.com"),
        json!("+05:30"),
        json!(["x"]),
        json!({"x": 1}),
    ];
    let keys = [
        "path",
        "content",
        "expression",
        "url",
        "patch",
        "timezone",
        "x",
    ];
    let names = [
        "get_time",
        "calculator",
        "web_fetch",
        "read",
        "ls",
        "write",
        "apply_patch",
        "nope",
    ];
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut host = Host::with_files(&[("a.txt", "x\n")]);
    for _ in 0..5_000 {
        let mut args = serde_json::Map::new();
        for _ in 0..rng.below(4) {
            args.insert(
                keys[rng.below(keys.len())].to_string(),
                values[rng.below(values.len())].clone(),
            );
        }
        let name = names[rng.below(names.len())];
        let _ = host.run(name, Value::Object(args));
    }
}
