//! The built-in tools, the workspace, the registry and the YAML emitter, natively.

use serde_json::{json, Value};
use weft_agent::tools::{
    apply_patch, builtin_specs, check_url, checked_url, evaluate, fetch_result, format_time_offset,
    fuzz_check_url, needs_approval, normalize_path, redirect_target, run_builtin, spec_json,
    spec_yaml, to_yaml, Builtin, MemoryWorkspace, RegistryError, ToolHost, ToolRegistry, ToolRun,
    Workspace, FETCH_MAX_BYTES, FETCH_TIMEOUT_MS, MAX_EXPRESSION_LEN, MAX_FILE_BYTES,
    MAX_LS_ENTRIES, MAX_NESTING,
};
use weft_protocol::event::ToolSpec;

/// 2024-02-29T13:45:30.250Z, a Thursday in a leap year.
const NOW: i64 = 1_709_214_330_250;

struct Host {
    ws: MemoryWorkspace,
    now: i64,
}

impl Host {
    fn new() -> Self {
        Host {
            ws: MemoryWorkspace::new(),
            now: NOW,
        }
    }

    fn with_files(files: &[(&str, &str)]) -> Self {
        Host {
            ws: MemoryWorkspace::with_files(files.iter().copied()),
            now: NOW,
        }
    }

    fn run(&mut self, name: &str, args: Value) -> ToolRun {
        run_builtin(name, &args, self)
    }

    fn ok(&mut self, name: &str, args: Value) -> String {
        match self.run(name, args.clone()) {
            ToolRun::Done {
                result,
                is_error: false,
            } => result,
            other => panic!("{name} {args}: expected success, got {other:?}"),
        }
    }

    fn err(&mut self, name: &str, args: Value) -> String {
        match self.run(name, args.clone()) {
            ToolRun::Done {
                result,
                is_error: true,
            } => result,
            other => panic!("{name} {args}: expected an error, got {other:?}"),
        }
    }

    fn file(&self, path: &str) -> Option<&str> {
        self.ws.files.get(path).map(String::as_str)
    }
}

impl ToolHost for Host {
    fn workspace(&mut self) -> &mut dyn Workspace {
        &mut self.ws
    }

    fn now_ms(&self) -> i64 {
        self.now
    }
}

/// A host with a runtime URL parser that maps two non-ASCII hosts (as a WHATWG parser with
/// IDNA does), and counts its calls.
struct ParsingHost(Host, std::cell::Cell<u32>);

impl ToolHost for ParsingHost {
    fn workspace(&mut self) -> &mut dyn Workspace {
        &mut self.0.ws
    }
    fn now_ms(&self) -> i64 {
        self.0.now
    }
    fn parse_url(&self, url: &str) -> Option<String> {
        self.1.set(self.1.get() + 1);
        match url {
            "http://ｌｏｃａｌｈｏｓｔ:8080/healthz" => {
                Some("http://localhost:8080/healthz".into())
            }
            "https://bücher.example/a" => Some("https://xn--bcher-kva.example/a".into()),
            _ => None,
        }
    }
}

#[test]
fn non_ascii_urls_are_mapped_by_the_hosts_parser_before_the_check() {
    let mut host = ParsingHost(Host::new(), std::cell::Cell::new(0));
    let fetch =
        |host: &mut ParsingHost, url: &str| run_builtin("web_fetch", &json!({ "url": url }), host);
    assert_eq!(
        fetch(&mut host, "https://bücher.example/a"),
        ToolRun::Fetch {
            url: "https://xn--bcher-kva.example/a".into(),
            max_bytes: FETCH_MAX_BYTES,
            timeout_ms: FETCH_TIMEOUT_MS,
        }
    );
    assert!(matches!(
        fetch(&mut host, "http://ｌｏｃａｌｈｏｓｔ:8080/healthz"),
        ToolRun::Done { result, is_error: true } if result.contains("its host localhost is a local name")
    ));
    // Not mapped by the host: the check's own parse decides (and refuses what it cannot map).
    assert!(matches!(
        fetch(&mut host, "http://127。0。0。1/"),
        ToolRun::Done { is_error: true, .. }
    ));
    assert_eq!(host.1.get(), 3);
    // ASCII urls never go through the host's parser.
    assert!(matches!(
        fetch(&mut host, "https://example.com/"),
        ToolRun::Fetch { .. }
    ));
    assert_eq!(host.1.get(), 3);
}

/// A host whose clock is JS-like: it knows one IANA zone.
struct IntlHost(Host);

impl ToolHost for IntlHost {
    fn workspace(&mut self) -> &mut dyn Workspace {
        &mut self.0.ws
    }

    fn now_ms(&self) -> i64 {
        self.0.now
    }

    fn format_time(&self, now_ms: i64, timezone: &str) -> Result<String, String> {
        if timezone == "Europe/Paris" {
            format_time_offset(now_ms, "+01:00")
        } else {
            format_time_offset(now_ms, timezone)
        }
    }
}

fn calc(expression: &str) -> String {
    evaluate(expression).unwrap_or_else(|e| panic!("{expression}: {e}"))
}

fn calc_err(expression: &str) -> String {
    match evaluate(expression) {
        Ok(v) => panic!("{expression}: expected an error, got {v}"),
        Err(e) => e,
    }
}

// ---------------------------------------------------------------------------------------------
// Specs and approval

#[test]
fn builtin_specs_are_sorted_with_the_documented_schemas() {
    let specs = builtin_specs();
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "apply_patch",
            "calculator",
            "get_time",
            "ls",
            "read",
            "web_fetch",
            "write"
        ]
    );
    let schema = |name: &str| {
        let spec = specs.iter().find(|s| s.name == name).unwrap();
        assert!(spec.description.as_ref().is_some_and(|d| d.len() > 40));
        let s = &spec.input_schema;
        assert_eq!(s["type"], "object", "{name}");
        let mut props: Vec<(String, String)> = s["properties"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v["type"].as_str().unwrap().to_string()))
            .collect();
        props.sort();
        let required = s.get("required").cloned().unwrap_or(json!([]));
        (props, required)
    };
    let p = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(
        schema("get_time"),
        (p(&[("timezone", "string")]), json!([]))
    );
    assert_eq!(
        schema("calculator"),
        (p(&[("expression", "string")]), json!(["expression"]))
    );
    assert_eq!(
        schema("web_fetch"),
        (p(&[("url", "string")]), json!(["url"]))
    );
    assert_eq!(schema("read"), (p(&[("path", "string")]), json!(["path"])));
    assert_eq!(schema("ls"), (p(&[("path", "string")]), json!([])));
    assert_eq!(
        schema("write"),
        (
            p(&[("content", "string"), ("path", "string")]),
            json!(["path", "content"])
        )
    );
    assert_eq!(
        schema("apply_patch"),
        (p(&[("patch", "string")]), json!(["patch"]))
    );
}

#[test]
fn only_tools_that_change_the_workspace_need_approval() {
    for spec in builtin_specs() {
        let mutating = matches!(spec.name.as_str(), "write" | "apply_patch");
        assert_eq!(needs_approval(&spec.name), mutating, "{}", spec.name);
        assert_eq!(spec.read_only, !mutating, "{}", spec.name);
        let builtin = Builtin::from_name(&spec.name).unwrap();
        assert_eq!(builtin.name(), spec.name);
        assert_eq!(builtin.needs_approval(), mutating);
    }
    assert!(needs_approval("shell"), "unknown tools fail closed");
    assert_eq!(Builtin::from_name("Read"), None);
}

#[test]
fn unknown_tools_and_bad_arguments_are_clear_errors() {
    let mut host = Host::new();
    assert_eq!(host.err("shell", json!({})), "unknown tool: shell");
    assert_eq!(
        host.err("read", json!([1])),
        "arguments must be a JSON object, got an array"
    );
    assert_eq!(
        host.err("calculator", json!("1+1")),
        "arguments must be a JSON object, got a string"
    );
    assert_eq!(
        host.err("calculator", json!({})),
        "missing required field \"expression\" (a string)"
    );
    assert_eq!(
        host.err("calculator", Value::Null),
        "missing required field \"expression\" (a string)"
    );
    assert_eq!(
        host.err("calculator", json!({"expression": 12})),
        "field \"expression\" must be a string, got a number"
    );
    assert_eq!(
        host.err("write", json!({"path": "a.txt"})),
        "missing required field \"content\" (a string)"
    );
    assert_eq!(
        host.err("write", json!({"path": "a.txt", "content": null})),
        "missing required field \"content\" (a string)"
    );
    assert_eq!(
        host.err("get_time", json!({"timezone": true})),
        "field \"timezone\" must be a string, got a boolean"
    );
    assert_eq!(
        host.err("ls", json!({"path": {}})),
        "field \"path\" must be a string, got an object"
    );
    assert_eq!(
        host.err("web_fetch", json!({"url": ["x"]})),
        "field \"url\" must be a string, got an array"
    );
    assert_eq!(
        host.err("apply_patch", json!({"diff": "x"})),
        "missing required field \"patch\" (a string)"
    );
    // Unknown fields are ignored.
    assert_eq!(
        host.ok("calculator", json!({"expression": "1+1", "x": 1})),
        "2"
    );
}

// ---------------------------------------------------------------------------------------------
// get_time

#[test]
fn get_time_defaults_to_utc_with_the_weekday() {
    let mut host = Host::new();
    assert_eq!(
        host.ok("get_time", json!({})),
        "2024-02-29T13:45:30Z (Thursday, UTC)"
    );
    assert_eq!(
        host.ok("get_time", Value::Null),
        "2024-02-29T13:45:30Z (Thursday, UTC)"
    );
    assert_eq!(
        host.ok("get_time", json!({"timezone": " "})),
        "2024-02-29T13:45:30Z (Thursday, UTC)"
    );
    assert_eq!(
        host.ok("get_time", json!({"timezone": null})),
        "2024-02-29T13:45:30Z (Thursday, UTC)"
    );
}

#[test]
fn get_time_understands_fixed_offsets_and_names_the_local_weekday() {
    let mut host = Host::new();
    assert_eq!(
        host.ok("get_time", json!({"timezone": "+05:30"})),
        "2024-02-29T19:15:30+05:30 (Thursday, +05:30)"
    );
    assert_eq!(
        host.ok("get_time", json!({"timezone": "UTC+11"})),
        "2024-03-01T00:45:30+11:00 (Friday, UTC+11)"
    );
    assert_eq!(
        host.ok("get_time", json!({"timezone": "UTC-3"})),
        "2024-02-29T10:45:30-03:00 (Thursday, UTC-3)"
    );
    assert_eq!(
        host.err("get_time", json!({"timezone": "Europe/Paris"})),
        "unknown timezone: Europe/Paris"
    );
}

#[test]
fn get_time_uses_the_hosts_formatter() {
    let mut host = IntlHost(Host::new());
    let ToolRun::Done { result, is_error } =
        run_builtin("get_time", &json!({"timezone": "Europe/Paris"}), &mut host)
    else {
        panic!("not done")
    };
    assert!(!is_error);
    assert_eq!(result, "2024-02-29T14:45:30+01:00 (Thursday, Europe/Paris)");
}

#[test]
fn format_time_offset_forms() {
    let t = |zone: &str| format_time_offset(NOW, zone);
    for utc in [
        "UTC", "utc", "GMT", "Z", "Etc/UTC", "etc/gmt", "Zulu", "", "+00:00", "-0",
    ] {
        assert_eq!(t(utc).as_deref(), Ok("2024-02-29T13:45:30Z"), "{utc:?}");
    }
    assert_eq!(t("+0530").as_deref(), Ok("2024-02-29T19:15:30+05:30"));
    assert_eq!(t("+5:30").as_deref(), Ok("2024-02-29T19:15:30+05:30"));
    assert_eq!(t("-09:30").as_deref(), Ok("2024-02-29T04:15:30-09:30"));
    assert_eq!(t("GMT+2").as_deref(), Ok("2024-02-29T15:45:30+02:00"));
    assert_eq!(t("utc-12").as_deref(), Ok("2024-02-29T01:45:30-12:00"));
    assert_eq!(t("+14").as_deref(), Ok("2024-03-01T03:45:30+14:00"));
    // POSIX sign inversion of the Etc/GMT zones.
    assert_eq!(t("Etc/GMT+3").as_deref(), Ok("2024-02-29T10:45:30-03:00"));
    assert_eq!(t("Etc/GMT-14").as_deref(), Ok("2024-03-01T03:45:30+14:00"));
    for bad in [
        "Europe/Paris",
        "5",
        "+5:3",
        "+05:60",
        "+19",
        "+123",
        "UTC+",
        "+aa",
        "Etc/GMT+15",
        "Etc/GMT+1:30",
        "Mars/Olympus",
    ] {
        assert_eq!(t(bad), Err(format!("unknown timezone: {bad}")), "{bad:?}");
    }
}

#[test]
fn format_time_offset_dates_across_eras() {
    assert_eq!(
        format_time_offset(0, "UTC").as_deref(),
        Ok("1970-01-01T00:00:00Z")
    );
    assert_eq!(
        format_time_offset(-1, "UTC").as_deref(),
        Ok("1969-12-31T23:59:59Z")
    );
    assert_eq!(
        format_time_offset(951_782_400_000, "UTC").as_deref(),
        Ok("2000-02-29T00:00:00Z")
    );
    assert_eq!(
        format_time_offset(4_107_542_399_000, "UTC").as_deref(),
        Ok("2100-02-28T23:59:59Z")
    );
    assert_eq!(
        format_time_offset(4_107_542_400_000, "UTC").as_deref(),
        Ok("2100-03-01T00:00:00Z")
    );
    assert_eq!(
        format_time_offset(-62_167_219_200_000, "UTC").as_deref(),
        Ok("0000-01-01T00:00:00Z")
    );
    assert_eq!(
        format_time_offset(253_402_300_799_000, "UTC").as_deref(),
        Ok("9999-12-31T23:59:59Z")
    );
    let out_of_range = Err("the time is out of range".to_string());
    assert_eq!(format_time_offset(253_402_300_800_000, "UTC"), out_of_range);
    assert_eq!(format_time_offset(i64::MAX, "+01:00"), out_of_range);
    assert_eq!(format_time_offset(i64::MIN, "UTC"), out_of_range);
}

#[test]
fn get_time_weekdays() {
    let mut host = Host::new();
    for (ms, expected) in [
        (0, "1970-01-01T00:00:00Z (Thursday, UTC)"),
        (-86_400_000, "1969-12-31T00:00:00Z (Wednesday, UTC)"),
        (951_782_400_000, "2000-02-29T00:00:00Z (Tuesday, UTC)"),
        (1_704_067_200_000, "2024-01-01T00:00:00Z (Monday, UTC)"),
        (1_735_603_200_000, "2024-12-31T00:00:00Z (Tuesday, UTC)"),
    ] {
        host.now = ms;
        assert_eq!(host.ok("get_time", json!({})), expected);
    }
    host.now = i64::MAX;
    assert_eq!(host.err("get_time", json!({})), "the time is out of range");
}

// ---------------------------------------------------------------------------------------------
// calculator

#[test]
fn calculator_precedence_and_associativity() {
    for (expression, expected) in [
        ("1 + 2 * 3", "7"),
        ("(1 + 2) * 3", "9"),
        ("10 - 4 - 3", "3"),
        ("100 / 10 / 5", "2"),
        ("2 ^ 3 ^ 2", "512"),
        ("2 ** 3 ** 2", "512"),
        ("(2 ^ 3) ^ 2", "64"),
        ("-2 ^ 2", "-4"),
        ("(-2) ^ 2", "4"),
        ("2 ^ -1", "0.5"),
        ("-3 * -3", "9"),
        ("--3", "3"),
        ("+-+3", "-3"),
        ("2 * 3 % 4", "2"),
        ("7 % 3", "1"),
        ("-7 % 3", "-1"),
        ("7.5 % 2", "1.5"),
        ("1 - -1", "2"),
        ("2 ^ 10 - 1", "1023"),
        ("8 / 2 * 4", "16"),
        ("1 + 2 ^ 2 * 3", "13"),
    ] {
        assert_eq!(calc(expression), expected, "{expression}");
    }
}

#[test]
fn calculator_numbers_functions_and_constants() {
    for (expression, expected) in [
        ("42", "42"),
        ("1e3", "1000"),
        ("1.5E-3 * 2", "0.003"),
        ("2.5e+2", "250"),
        (".5 + 5.", "5.5"),
        ("0.1 + 0.2", "0.3"),
        ("1 / 3", "0.333333333333"),
        ("2 / 3", "0.666666666667"),
        ("-1 / 3", "-0.333333333333"),
        ("sqrt(16)", "4"),
        ("sqrt(2)", "1.41421356237"),
        ("abs(-3.5)", "3.5"),
        ("sin(0)", "0"),
        ("sin(pi / 2)", "1"),
        ("cos(pi)", "-1"),
        ("sin(pi)", "0"),
        ("cos(pi / 2)", "0"),
        ("tan(pi)", "0"),
        ("sin(1e-20)", "1e-20"),
        ("0.1 + 0.2 - 0.3", "0"),
        ("1 - 0.9 - 0.1", "0"),
        ("1e-20 - 0", "1e-20"),
        ("1e-20 + 1e-20", "2e-20"),
        ("tan(pi / 4)", "1"),
        ("asin(1) * 2", "3.14159265359"),
        ("acos(1)", "0"),
        ("atan(1) * 4", "3.14159265359"),
        ("ln(e)", "1"),
        ("ln(1)", "0"),
        ("log(1000)", "3"),
        ("log2(1024)", "10"),
        ("exp(0)", "1"),
        ("exp(1)", "2.71828182846"),
        ("floor(-2.5)", "-3"),
        ("ceil(2.1)", "3"),
        ("round(2.5)", "3"),
        ("round(-2.5)", "-3"),
        ("min(3, 1, 2)", "1"),
        ("max(3, 1, 2)", "3"),
        ("max(4)", "4"),
        ("min(2, max(5, 1 + 9))", "2"),
        ("PI", "3.14159265359"),
        ("Sqrt(9)", "3"),
        ("e", "2.71828182846"),
        ("1e21", "1e21"),
        ("2 ^ 64", "1.84467440737e19"),
        ("2 ^ 53", "9.00719925474e15"),
        ("2 ^ 52", "4503599627370496"),
        ("123456789012345", "123456789012345"),
        ("1e-10 * 1.5", "1.5e-10"),
        ("0.000001", "0.000001"),
        ("-0", "0"),
        ("0 * -1", "0"),
        ("1e308 * 1", "1e308"),
        (" ( 1 ) ", "1"),
    ] {
        assert_eq!(calc(expression), expected, "{expression}");
    }
}

#[test]
fn calculator_errors_say_what_and_where() {
    for (expression, expected) in [
        ("", "the expression is empty"),
        ("   ", "the expression is empty"),
        ("1 / 0", "division by zero at position 3"),
        ("1 / (2 - 2)", "division by zero at position 3"),
        ("5 % 0", "remainder of a division by zero at position 3"),
        ("0 ^ -1", "division by zero at position 3 (0 ^ negative)"),
        ("1 +", "syntax error at position 4: expected a number, a name or '('"),
        ("(1 + 2", "syntax error at position 7: expected ')'"),
        ("1 + 2)", "syntax error at position 6: unexpected ')'"),
        ("1 2", "syntax error at position 3: unexpected number 2"),
        ("2 pi", "syntax error at position 3: unexpected name 'pi'"),
        ("2e", "syntax error at position 2: unexpected name 'e'"),
        ("* 3", "syntax error at position 1: expected a number, a name or '(', found '*'"),
        ("1 + * 3", "syntax error at position 5: expected a number, a name or '(', found '*'"),
        ("()", "syntax error at position 2: expected a number, a name or '(', found ')'"),
        ("3 $ 4", "syntax error at position 3: unexpected character '$'"),
        ("1 + \u{0}", "syntax error at position 5: unexpected character '\\u{0}'"),
        ("1..2", "syntax error at position 1: invalid number '1..2'"),
        ("1.2.3 + 1", "syntax error at position 1: invalid number '1.2.3'"),
        (".", "syntax error at position 1: invalid number '.'"),
        ("1e999", "the number at position 1 is too large"),
        ("x + 1", "unknown name 'x' at position 1 (the constants are pi and e)"),
        ("1 + foo(2)", "unknown function 'foo' at position 5 (the functions are sqrt abs sin cos tan asin acos atan ln log log2 exp floor ceil round min max)"),
        ("sqrt", "'sqrt' at position 1 is a function: write sqrt(...)"),
        ("pi(2)", "'pi' at position 1 is a constant, not a function"),
        ("sqrt(1, 2)", "sqrt() takes 1 argument, got 2 (at position 1)"),
        ("max()", "syntax error at position 5: expected a number, a name or '(', found ')'"),
        ("max(1,)", "syntax error at position 7: expected a number, a name or '(', found ')'"),
        ("max(1 2)", "syntax error at position 7: expected ',' or ')', found number 2"),
        ("sqrt(-1)", "sqrt(-1) is not a real number"),
        ("ln(0)", "ln(0) is infinite"),
        ("log(-1)", "log(-1) is not a real number"),
        ("asin(2)", "asin(2) is not a real number"),
        ("exp(1000)", "overflow: exp(1000) is too large"),
        ("(-8) ^ (1/3)", "-8 ^ 0.333333333333 is not a real number (at position 6)"),
        ("10 ^ 400", "overflow at position 4: the result is too large"),
        ("1e308 * 10", "overflow at position 7: the result is too large"),
        ("1e308 + 1e308", "overflow at position 7: the result is too large"),
    ] {
        assert_eq!(calc_err(expression), expected, "{expression}");
    }
}

#[test]
fn calculator_limits() {
    let nested = |n: usize| format!("{}1{}", "(".repeat(n), ")".repeat(n));
    assert_eq!(calc(&nested(MAX_NESTING)), "1");
    let too_deep = "the expression is nested too deeply (the limit is 64 levels)";
    assert_eq!(calc_err(&nested(MAX_NESTING + 1)), too_deep);
    assert_eq!(calc_err(&"-".repeat(200)), too_deep);
    assert_eq!(calc_err(&format!("{}1", "sqrt(".repeat(100))), too_deep);
    assert_eq!(calc_err(&vec!["2"; 100].join("^")), too_deep);
    // Long but flat is fine.
    let flat = vec!["1"; 500].join("+");
    assert_eq!(flat.len(), 999);
    assert_eq!(calc(&flat), "500");
    let long = "1".repeat(MAX_EXPRESSION_LEN + 1);
    assert_eq!(
        calc_err(&long),
        "the expression is too long: 1001 characters; the limit is 1000"
    );
    // Positions count characters, not bytes.
    assert_eq!(
        calc_err("π + x"),
        "unknown name 'π' at position 1 (the constants are pi and e)"
    );
    assert_eq!(
        calc_err("é+1+"),
        "unknown name 'é' at position 1 (the constants are pi and e)"
    );
    assert_eq!(
        calc_err("1+1+ü"),
        "unknown name 'ü' at position 5 (the constants are pi and e)"
    );
}

#[test]
fn calculator_tool() {
    let mut host = Host::new();
    assert_eq!(host.ok("calculator", json!({"expression": "6 * 7"})), "42");
    assert_eq!(
        host.err("calculator", json!({"expression": "1/0"})),
        "division by zero at position 2"
    );
}

// ---------------------------------------------------------------------------------------------
// Paths

#[test]
fn paths_are_normalised() {
    for (path, expected) in [
        ("a.txt", "a.txt"),
        ("./a//b", "a/b"),
        ("a/./b/", "a/b"),
        ("a\\b", "a/b"),
        ("src/app.ts", "src/app.ts"),
        ("dir/ spaced name.txt", "dir/ spaced name.txt"),
        ("...", "..."),
        ("a/..b", "a/..b"),
        ("", ""),
        (".", ""),
        ("./", ""),
        ("ünïcode/文件.md", "ünïcode/文件.md"),
    ] {
        assert_eq!(normalize_path(path).as_deref(), Ok(expected), "{path:?}");
    }
}

#[test]
fn path_traversal_is_refused() {
    let dots = |p: &str| {
        format!(
            "invalid path {p}: \"..\" segments are not allowed; paths are relative to the \
             workspace root"
        )
    };
    let absolute = |p: &str| {
        format!(
            "invalid path {p}: absolute paths are not allowed; paths are relative to the \
             workspace root"
        )
    };
    let drive = |p: &str| {
        format!(
            "invalid path {p}: drive letters are not allowed; paths are relative to the \
             workspace root"
        )
    };
    for (path, expected) in [
        ("../x", dots("\"../x\"")),
        ("..", dots("\"..\"")),
        ("a/../../b", dots("\"a/../../b\"")),
        ("a/../b", dots("\"a/../b\"")),
        ("a\\..\\..\\b", dots("\"a\\\\..\\\\..\\\\b\"")),
        ("/etc/passwd", absolute("\"/etc/passwd\"")),
        ("\\\\server\\share", absolute("\"\\\\\\\\server\\\\share\"")),
        ("\\x", absolute("\"\\\\x\"")),
        ("C:\\x", drive("\"C:\\\\x\"")),
        ("c:/x", drive("\"c:/x\"")),
        ("C:x", drive("\"C:x\"")),
        (
            "a\0b",
            "invalid path \"a\\u{0}b\": it contains a control character".to_string(),
        ),
        (
            "a\nb",
            "invalid path \"a\\u{a}b\": it contains a control character".to_string(),
        ),
        (
            "a\u{7f}",
            "invalid path \"a\\u{7f}\": it contains a control character".to_string(),
        ),
    ] {
        assert_eq!(normalize_path(path), Err(expected), "{path:?}");
    }
    let long = "a/".repeat(600);
    assert_eq!(
        normalize_path(&long),
        Err("invalid path: it is 1199 bytes long; the limit is 1024".to_string())
    );
}

#[test]
fn every_workspace_tool_refuses_traversal() {
    let mut host = Host::with_files(&[("a.txt", "x\n")]);
    for bad in ["../x", "/etc/passwd", "a/../../b", "a\0b", "C:\\x"] {
        let expected = normalize_path(bad).unwrap_err();
        assert_eq!(host.err("read", json!({"path": bad})), expected);
        assert_eq!(host.err("ls", json!({"path": bad})), expected);
        assert_eq!(
            host.err("write", json!({"path": bad, "content": "pwned"})),
            expected
        );
        let patch = format!("*** Begin Patch\n*** Add File: {bad}\n+pwned\n*** End Patch");
        assert_eq!(host.err("apply_patch", json!({ "patch": patch })), expected);
        let patch = format!(
            "*** Begin Patch\n*** Update File: a.txt\n*** Move to: {bad}\n@@\n-x\n+y\n*** End Patch"
        );
        assert_eq!(host.err("apply_patch", json!({ "patch": patch })), expected);
    }
    assert_eq!(host.ws.files.len(), 1);
    assert_eq!(host.file("a.txt"), Some("x\n"));
}

// ---------------------------------------------------------------------------------------------
// read / ls / write

#[test]
fn read_returns_the_content_or_says_why_not() {
    let mut host = Host::with_files(&[
        ("notes.txt", "hello\nworld\n"),
        ("empty.txt", ""),
        ("src/app.ts", "let x = 1;\n"),
    ]);
    assert_eq!(
        host.ok("read", json!({"path": "notes.txt"})),
        "hello\nworld\n"
    );
    assert_eq!(
        host.ok("read", json!({"path": "./src//app.ts"})),
        "let x = 1;\n"
    );
    assert_eq!(
        host.ok("read", json!({"path": "empty.txt"})),
        "(the file empty.txt is empty)"
    );
    assert_eq!(
        host.err("read", json!({"path": "missing.txt"})),
        "no such file: missing.txt"
    );
    assert_eq!(
        host.err("read", json!({"path": "src"})),
        "no such file: src (it is a directory; use ls to see its files)"
    );
    assert_eq!(
        host.err("read", json!({"path": ""})),
        "invalid path \"\": a file name is required"
    );
    assert_eq!(
        host.err("read", json!({"path": "./"})),
        "invalid path \"./\": a file name is required"
    );
}

#[test]
fn read_truncates_an_oversized_file_from_the_host() {
    let big = "é".repeat(MAX_FILE_BYTES / 2 + 10);
    let mut host = Host::with_files(&[("big.txt", &big)]);
    let out = host.ok("read", json!({"path": "big.txt"}));
    let marker = format!(
        "\n[truncated: showing the first {MAX_FILE_BYTES} bytes of {} bytes]",
        big.len()
    );
    assert!(out.ends_with(&marker), "{}", &out[out.len() - 100..]);
    assert_eq!(out.len() - marker.len(), MAX_FILE_BYTES);
}

#[test]
fn ls_lists_files_with_sizes_sorted() {
    let mut host = Host::new();
    assert_eq!(host.ok("ls", json!({})), "(the workspace is empty)");
    assert_eq!(
        host.err("ls", json!({"path": "src"})),
        "no such file or directory: src"
    );
    host.ws = MemoryWorkspace::with_files([
        ("src/b.ts", "bb"),
        ("README.md", "# hi\n"),
        ("src/a.ts", "a"),
        ("src/lib/c.ts", ""),
        ("srcx.txt", "x"),
    ]);
    let all = "README.md (5 bytes)\nsrc/a.ts (1 byte)\nsrc/b.ts (2 bytes)\nsrc/lib/c.ts (0 bytes)\nsrcx.txt (1 byte)";
    assert_eq!(host.ok("ls", json!({})), all);
    assert_eq!(host.ok("ls", json!({"path": null})), all);
    assert_eq!(host.ok("ls", json!({"path": "."})), all);
    assert_eq!(host.ok("ls", json!({"path": ""})), all);
    assert_eq!(
        host.ok("ls", json!({"path": "src"})),
        "src/a.ts (1 byte)\nsrc/b.ts (2 bytes)\nsrc/lib/c.ts (0 bytes)"
    );
    assert_eq!(
        host.ok("ls", json!({"path": "./src/lib/"})),
        "src/lib/c.ts (0 bytes)"
    );
    assert_eq!(
        host.ok("ls", json!({"path": "srcx.txt"})),
        "srcx.txt (1 byte)"
    );
    assert_eq!(
        host.err("ls", json!({"path": "sr"})),
        "no such file or directory: sr"
    );
}

#[test]
fn ls_caps_its_output() {
    let mut host = Host::new();
    for i in 0..MAX_LS_ENTRIES + 5 {
        host.ws.files.insert(format!("f{i:05}"), "x".into());
    }
    let out = host.ok("ls", json!({}));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), MAX_LS_ENTRIES + 1);
    assert_eq!(lines[0], "f00000 (1 byte)");
    assert_eq!(lines[MAX_LS_ENTRIES - 1], "f00999 (1 byte)");
    assert_eq!(lines[MAX_LS_ENTRIES], "… and 5 more files");
}

#[test]
fn write_creates_and_overwrites() {
    let mut host = Host::new();
    assert_eq!(
        host.ok(
            "write",
            json!({"path": "./notes//a.txt", "content": "hi\n"})
        ),
        "created notes/a.txt (3 bytes)"
    );
    assert_eq!(host.file("notes/a.txt"), Some("hi\n"));
    assert_eq!(
        host.ok("write", json!({"path": "notes/a.txt", "content": "x"})),
        "overwrote notes/a.txt (1 byte)"
    );
    assert_eq!(
        host.ok("write", json!({"path": "empty", "content": ""})),
        "created empty (0 bytes)"
    );
    assert_eq!(host.file("notes/a.txt"), Some("x"));
    assert_eq!(host.file("empty"), Some(""));
}

#[test]
fn write_refuses_what_would_break_the_tree_or_the_limit() {
    let mut host = Host::with_files(&[("a", "file"), ("dir/b", "file")]);
    assert_eq!(
        host.err("write", json!({"path": "a/x", "content": ""})),
        "cannot write a/x: a is a file, not a directory"
    );
    assert_eq!(
        host.err("write", json!({"path": "dir", "content": ""})),
        "cannot write dir: dir is a directory (it holds dir/b)"
    );
    assert_eq!(
        host.err("write", json!({"path": "", "content": ""})),
        "invalid path \"\": a file name is required"
    );
    let big = "x".repeat(MAX_FILE_BYTES + 1);
    assert_eq!(
        host.err("write", json!({"path": "big", "content": big})),
        "cannot write big: the content is 1048577 bytes; the limit per file is 1048576 bytes"
    );
    let fits = "x".repeat(MAX_FILE_BYTES);
    assert_eq!(
        host.ok("write", json!({"path": "big", "content": fits})),
        "created big (1048576 bytes)"
    );
    assert_eq!(host.ws.files.len(), 3);
}

/// A store that refuses every write, like a full Durable Object.
#[derive(Default)]
struct FullStore(MemoryWorkspace);

impl Workspace for FullStore {
    fn read(&self, path: &str) -> Option<String> {
        self.0.read(path)
    }
    fn write(&mut self, _: &str, _: &str) -> Result<(), String> {
        Err("storage quota exceeded".into())
    }
    fn delete(&mut self, path: &str) -> bool {
        self.0.delete(path)
    }
    fn list(&self) -> Vec<(String, usize)> {
        self.0.list()
    }
}

struct FullHost(FullStore);

impl ToolHost for FullHost {
    fn workspace(&mut self) -> &mut dyn Workspace {
        &mut self.0
    }
    fn now_ms(&self) -> i64 {
        0
    }
}

#[test]
fn storage_failures_reach_the_model() {
    let mut host = FullHost(FullStore(MemoryWorkspace::with_files([("old", "x\n")])));
    assert_eq!(
        run_builtin("write", &json!({"path": "a", "content": "x"}), &mut host),
        ToolRun::error("cannot write a: storage quota exceeded")
    );
    let patch = "*** Begin Patch\n*** Delete File: old\n*** Add File: new\n+x\n*** End Patch";
    assert_eq!(
        run_builtin("apply_patch", &json!({ "patch": patch }), &mut host),
        ToolRun::error(
            "cannot write new: storage quota exceeded; the patch was applied only in part \
             (done: old)"
        )
    );
}

// ---------------------------------------------------------------------------------------------
// web_fetch

#[test]
fn web_fetch_asks_the_host_to_fetch() {
    let mut host = Host::new();
    assert_eq!(
        host.run(
            "web_fetch",
            json!({"url": "  https://example.com/a?b=c#d "})
        ),
        ToolRun::Fetch {
            url: "https://example.com/a?b=c#d".into(),
            max_bytes: FETCH_MAX_BYTES,
            timeout_ms: FETCH_TIMEOUT_MS,
        }
    );
    assert_eq!(
        host.err("web_fetch", json!({"url": "file:///etc/passwd"})),
        "only http:// and https:// urls can be fetched, not file://"
    );
}

#[test]
fn check_url_accepts_public_http_urls() {
    for url in [
        "http://example.com",
        "https://example.com/",
        "HTTPS://Example.COM:8443/path?q=1#frag",
        "https://example.com:/x",
        "http://8.8.8.8/",
        "http://1.1.1.1:80",
        "http://[2606:4700:4700::1111]/",
        "http://[2606:4700:4700::1111]:8080/x",
        "https://sub.domain.example.org/a/b.html",
        "https://xn--bcher-kva.example/",
        "https://example.com/@user",
        "https://example.com/?next=http://127.0.0.1/",
        "http://localhost.example.com/",
        "http://172.32.0.1/",
        "http://100.128.0.1/",
    ] {
        assert_eq!(check_url(url), Ok(()), "{url}");
    }
}

#[test]
fn check_url_refuses_other_schemes_credentials_and_local_hosts() {
    for (url, expected) in [
        ("", "the url is empty".to_string()),
        (
            "example.com",
            "not an absolute url: example.com (it must start with http:// or https://)".to_string(),
        ),
        (
            "ftp://example.com/",
            "only http:// and https:// urls can be fetched, not ftp://".to_string(),
        ),
        (
            "javascript://alert(1)",
            "only http:// and https:// urls can be fetched, not javascript://".to_string(),
        ),
        (
            "https://user:pass@example.com/",
            "urls with credentials (user:password@host) are not allowed".to_string(),
        ),
        (
            "https://user@example.com/",
            "urls with credentials (user:password@host) are not allowed".to_string(),
        ),
        (
            "http://example.com@127.0.0.1/",
            "urls with credentials (user:password@host) are not allowed".to_string(),
        ),
        (
            "http://exa mple.com/",
            "the url contains whitespace or control characters".to_string(),
        ),
        (
            "http://example.com\\@evil/",
            "the url contains a backslash".to_string(),
        ),
        (
            "http://:80/",
            "invalid url http://:80/: empty host".to_string(),
        ),
        (
            "http://example.com:99999/",
            "invalid url http://example.com:99999/: invalid port number".to_string(),
        ),
        (
            "http://example.com:8o/",
            "invalid url http://example.com:8o/: invalid port number".to_string(),
        ),
        (
            "http://[::1/",
            "invalid url http://[::1/: invalid IPv6 address".to_string(),
        ),
        (
            "http://[zz::1]/",
            "invalid url http://[zz::1]/: invalid IPv6 address".to_string(),
        ),
        (
            "http://[fe80::1%25eth0]/",
            "invalid url http://[fe80::1%25eth0]/: invalid IPv6 address".to_string(),
        ),
        (
            "http://256.1.1.1/",
            "invalid url http://256.1.1.1/: invalid IPv4 address".to_string(),
        ),
        (
            "http://1.2.3.4.5/",
            "invalid url http://1.2.3.4.5/: invalid IPv4 address".to_string(),
        ),
        (
            "http://09.1.1.1/",
            "invalid url http://09.1.1.1/: invalid IPv4 address".to_string(),
        ),
        (
            "http://4294967296/",
            "invalid url http://4294967296/: invalid IPv4 address".to_string(),
        ),
    ] {
        assert_eq!(check_url(url), Err(expected), "{url}");
    }
    // Well-formed urls whose host is not public: the message names the host as the parser
    // read it, and what it is.
    for (url, host, why) in [
        ("http://localhost/", "localhost", "a local name"),
        ("http://LOCALHOST.:3000/", "localhost.", "a local name"),
        ("http:///path", "path", "a single-label (local) name"),
        (
            "http://intranet/",
            "intranet",
            "a single-label (local) name",
        ),
        (
            "http://router.localdomain/",
            "router.localdomain",
            "a local name",
        ),
        ("http://nas.home.arpa./", "nas.home.arpa.", "a local name"),
        ("http://%31%32%37.0.0.1/", "127.0.0.1", "a loopback address"),
        (
            "http://%6c%6f%63%61%6c%68%6f%73%74/",
            "localhost",
            "a local name",
        ),
        ("http://127.0.0.1./", "127.0.0.1", "a loopback address"),
        ("http://0x7f000001/", "127.0.0.1", "a loopback address"),
        ("http:/127.0.0.1/", "127.0.0.1", "a loopback address"),
        ("http:127.0.0.1", "127.0.0.1", "a loopback address"),
        ("http://example.com#@127.0.0.1/", "example.com", ""),
        ("http://app.localhost/", "app.localhost", "a local name"),
        ("http://printer.local/", "printer.local", "a local name"),
        (
            "http://metadata.google.internal/",
            "metadata.google.internal",
            "a local name",
        ),
        ("http://127.0.0.1/", "127.0.0.1", "a loopback address"),
        ("http://127.1/", "127.0.0.1", "a loopback address"),
        ("http://2130706433/", "127.0.0.1", "a loopback address"),
        ("http://0x7f.0.0.1/", "127.0.0.1", "a loopback address"),
        ("http://0177.0.0.1/", "127.0.0.1", "a loopback address"),
        ("http://10.0.0.1/", "10.0.0.1", "a private address"),
        ("http://172.16.5.4/", "172.16.5.4", "a private address"),
        (
            "http://192.168.1.1:8080/",
            "192.168.1.1",
            "a private address",
        ),
        (
            "http://169.254.169.254/latest/meta-data",
            "169.254.169.254",
            "a link-local address",
        ),
        ("http://0.0.0.0/", "0.0.0.0", "an unspecified address"),
        ("http://0/", "0.0.0.0", "an unspecified address"),
        (
            "http://100.64.0.1/",
            "100.64.0.1",
            "a shared (carrier-grade NAT) address",
        ),
        ("http://198.18.0.1/", "198.18.0.1", "a reserved address"),
        ("http://192.0.2.1/", "192.0.2.1", "a documentation address"),
        (
            "http://224.0.0.1/",
            "224.0.0.1",
            "a multicast, broadcast or reserved address",
        ),
        (
            "http://255.255.255.255/",
            "255.255.255.255",
            "a multicast, broadcast or reserved address",
        ),
        ("http://[::1]/", "[::1]", "a loopback address"),
        ("http://[::]/", "[::]", "an unspecified address"),
        (
            "http://[fd00::1]:80/",
            "[fd00::1]",
            "a private (unique local) address",
        ),
        ("http://[fe80::1]/", "[fe80::1]", "a link-local address"),
        (
            "http://[::ffff:127.0.0.1]/",
            "[::ffff:7f00:1]",
            "a loopback address",
        ),
        ("http://[::127.0.0.1]/", "[::7f00:1]", "a loopback address"),
        (
            "http://[::ffff:0:a9fe:a9fe]/",
            "[::ffff:0:a9fe:a9fe]",
            "a link-local address",
        ),
        (
            "http://[2002:c0a8:101::1]/",
            "[2002:c0a8:101::1]",
            "a private address",
        ),
        (
            "http://[2001:0:4136:e378::1]/",
            "[2001:0:4136:e378::1]",
            "a Teredo (tunnelled IPv4) address",
        ),
        (
            "http://[64:ff9b:1::a]/",
            "[64:ff9b:1::a]",
            "a local-use NAT64 address",
        ),
        (
            "http://[::ffff:a00:1]/",
            "[::ffff:a00:1]",
            "a private address",
        ),
        (
            "http://[64:ff9b::c0a8:101]/",
            "[64:ff9b::c0a8:101]",
            "a private address",
        ),
        ("http://[ff02::1]/", "[ff02::1]", "a multicast address"),
    ] {
        if why.is_empty() {
            // After `#` is the fragment: the host is the public one before it.
            assert_eq!(check_url(url), Ok(()), "{url}");
            continue;
        }
        let expected = format!(
            "refusing to fetch {url}: its host {host} is {why}; only public hosts can be fetched"
        );
        assert_eq!(check_url(url), Err(expected), "{url}");
    }
    let long = format!("https://example.com/{}", "a".repeat(2048));
    assert_eq!(
        check_url(&long),
        Err("the url is 2068 bytes long; the limit is 2048".to_string())
    );
}

#[test]
fn check_url_judges_the_url_the_fetch_reads() {
    // What is fetched is the parser's serialization of what was judged.
    for (url, fetched) in [
        (
            "HTTP://Example.COM:80/a/../b?x#y",
            "http://example.com/b?x#y",
        ),
        ("https:example.org", "https://example.org/"),
        ("http://8.8.8.8.", "http://8.8.8.8/"),
        ("http://0x08080808/", "http://8.8.8.8/"),
        (
            "http://[2606:4700:4700:0:0:0:0:1111]/",
            "http://[2606:4700:4700::1111]/",
        ),
        ("http://exa%6dple.com/", "http://example.com/"),
    ] {
        assert_eq!(checked_url(url), Ok(fetched.to_string()), "{url}");
    }
    // Spellings a WHATWG parser maps to a local host (ideographic and full-width full stops,
    // full-width and compatibility letters, the long s, a soft hyphen) are refused whether
    // this build's IDNA back end maps them (then the host is judged) or not (then the url
    // is refused as unmappable): never fetched.
    for url in [
        "http://127。0。0。1:8080/healthz",
        "http://127．0．0．1/",
        "http://127｡0｡0｡1/",
        "http://１２７.０.０.１/",
        "http://ｌｏｃａｌｈｏｓｔ:8080/healthz",
        "http://ＬＯＣＡＬＨＯＳＴ/",
        "http://localhoſt/",
        "http://local\u{ad}host/",
        "http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/",
        "http://[::ｆｆｆｆ:127.0.0.1]/",
    ] {
        assert!(checked_url(url).is_err(), "{url}");
    }
}

#[test]
fn the_check_agrees_with_the_url_crate_on_the_differential_corpus() {
    // tests/urls/corpus.json is what urls.test.mjs runs through Node's URL as well.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/urls/corpus.json");
    let corpus: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(path).expect("the corpus")).expect("json");
    assert!(corpus.len() > 500, "{} urls", corpus.len());
    for url in &corpus {
        fuzz_check_url(url);
    }
}

#[test]
fn fetch_result_shows_text() {
    assert_eq!(
        fetch_result(200, "text/plain; charset=utf-8", b"hello\nworld\n", 100),
        (
            "HTTP 200 OK (text/plain; charset=utf-8)\n\nhello\nworld\n".to_string(),
            false
        )
    );
    assert_eq!(
        fetch_result(200, "application/json", br#"{"a":1}"#, 100),
        (
            "HTTP 200 OK (application/json)\n\n{\"a\":1}".to_string(),
            false
        )
    );
    assert_eq!(
        fetch_result(200, "application/ld+json", b"[]", 100),
        ("HTTP 200 OK (application/ld+json)\n\n[]".to_string(), false)
    );
    assert_eq!(
        fetch_result(404, "text/plain", b"not here", 100),
        (
            "HTTP 404 Not Found (text/plain)\n\nnot here".to_string(),
            true
        )
    );
    assert_eq!(
        fetch_result(599, "", b"odd", 100),
        ("HTTP 599\n\nodd".to_string(), true)
    );
    assert_eq!(
        fetch_result(204, "", b"", 100),
        ("HTTP 204 No Content\n\n(empty body)".to_string(), false)
    );
    assert_eq!(
        fetch_result(200, "text/plain; charset=ISO-8859-1", b"caf\xe9", 100),
        (
            "HTTP 200 OK (text/plain; charset=ISO-8859-1)\n\ncafé".to_string(),
            false
        )
    );
    assert_eq!(
        fetch_result(200, "text/plain", b"bad \xff byte", 100),
        (
            "HTTP 200 OK (text/plain)\n\nbad \u{fffd} byte".to_string(),
            false
        )
    );
}

#[test]
fn fetch_result_truncates_with_a_marker() {
    let marker = "\n\n[truncated: only the first 10 bytes of the body are shown]";
    assert_eq!(
        fetch_result(200, "text/plain", b"0123456789abc", 10),
        (
            format!("HTTP 200 OK (text/plain)\n\n0123456789{marker}"),
            false
        )
    );
    // Exactly max_bytes: not truncated.
    assert_eq!(
        fetch_result(200, "text/plain", b"0123456789", 10),
        ("HTTP 200 OK (text/plain)\n\n0123456789".to_string(), false)
    );
    // A character cut in half is left out rather than mangled.
    let body = "12345678é€".as_bytes(); // 8 + 2 + 3 bytes
    assert_eq!(
        fetch_result(200, "text/plain", body, 9),
        (
            "HTTP 200 OK (text/plain)\n\n12345678\n\n[truncated: only the first 9 bytes of the body are shown]"
                .to_string(),
            false
        )
    );
    assert_eq!(
        fetch_result(200, "text/plain", body, 12),
        (
            "HTTP 200 OK (text/plain)\n\n12345678é\n\n[truncated: only the first 12 bytes of the body are shown]"
                .to_string(),
            false
        )
    );
}

#[test]
fn fetch_result_summarises_binary_bodies() {
    assert_eq!(
        fetch_result(200, "image/png", b"\x89PNG\r\n\x1a\n", 100),
        (
            "HTTP 200 OK (image/png)\n\n(binary content, 8 bytes: not shown; only text can be read)"
                .to_string(),
            false
        )
    );
    assert_eq!(
        fetch_result(200, "application/octet-stream", &[0u8; 20], 10),
        (
            "HTTP 200 OK (application/octet-stream)\n\n(binary content, more than 10 bytes: not shown; only text can be read)"
                .to_string(),
            false
        )
    );
    // Without a content type, the bytes decide.
    assert_eq!(
        fetch_result(200, "", b"a\0b", 100),
        (
            "HTTP 200 OK\n\n(binary content, 3 bytes: not shown; only text can be read)"
                .to_string(),
            false
        )
    );
    assert_eq!(
        fetch_result(200, "", "plain é".as_bytes(), 100),
        ("HTTP 200 OK\n\nplain é".to_string(), false)
    );
}

#[test]
fn fetch_result_reduces_html_to_text() {
    let html = r#"<!DOCTYPE html>
<html><head><title>Example Domain</title>
<meta charset="utf-8"><style>body { color: red; }</style>
<script type="text/javascript">if (a < b && c > d) { alert("</p>"); }</script>
</head>
<body>
<div>
    <h1>Example   Domain</h1>
    <p>This domain is for use in <a href="/x" title="a > b">illustrative</a> examples.<br>
    Second&nbsp;line &amp; more &lt;tags&gt; &#65;&#x42; &mdash; &bogus; AT&T</p>
    <!-- a comment <p>hidden</p> -->
    <ul><li>one</li><li>two</li></ul>
    <table><tr><td>a</td><td>b</td></tr></table>
    <pre>  keep
    this</pre>
    <SCRIPT>hidden()</SCRIPT>
    <p>1 < 2</p>
</div>
</body></html>"#;
    let (text, is_error) = fetch_result(200, "text/html; charset=UTF-8", html.as_bytes(), 10_000);
    assert!(!is_error);
    assert_eq!(
        text,
        "HTTP 200 OK (text/html; charset=UTF-8)\n\n\
         Example Domain\n\n\
         Example Domain\n\n\
         This domain is for use in illustrative examples.\n\
         Second line & more <tags> AB — &bogus; AT&T\n\n\
         - one\n\
         - two\n\n\
         a b\n\n\
         \x20 keep\n    this\n\n\
         1 < 2"
    );
}

#[test]
fn fetch_result_survives_broken_html() {
    for html in [
        "<",
        "<p",
        "<!--",
        "<script>",
        "<a href=\"",
        "&",
        "&#",
        "&#xZZ;",
        "&#99999999;",
        "<<>>",
        "</",
        "<p>\u{fffd}</p",
        "<style>x</style",
        "<pre></pre></pre>",
    ] {
        let (text, _) = fetch_result(200, "text/html", html.as_bytes(), 100);
        assert!(text.starts_with("HTTP 200 OK (text/html)"), "{html}");
    }
    assert_eq!(
        fetch_result(200, "text/html", b"&#99999999; &#x41;", 100).0,
        "HTTP 200 OK (text/html)\n\n\u{fffd} A"
    );
}

// ---------------------------------------------------------------------------------------------
// apply_patch

fn patch(host: &mut Host, patch: &str) -> Result<String, String> {
    match host.run("apply_patch", json!({ "patch": patch })) {
        ToolRun::Done {
            result,
            is_error: false,
        } => Ok(result),
        ToolRun::Done {
            result,
            is_error: true,
        } => Err(result),
        other => panic!("{other:?}"),
    }
}

#[test]
fn patch_adds_a_file() {
    let mut host = Host::new();
    let out = patch(
        &mut host,
        "*** Begin Patch\n*** Add File: notes/todo.txt\n+first\n+\n+third\n*** End Patch",
    );
    assert_eq!(
        out.as_deref(),
        Ok("Success. Updated the following files:\nA notes/todo.txt")
    );
    assert_eq!(host.file("notes/todo.txt"), Some("first\n\nthird\n"));
    patch(
        &mut host,
        "*** Begin Patch\n*** Add File: empty.txt\n*** End Patch",
    )
    .unwrap();
    assert_eq!(host.file("empty.txt"), Some(""));
}

#[test]
fn patch_updates_as_in_the_agentloop_spec() {
    // The example of agentloop-websocket.md, with its unified-diff range header.
    let mut host = Host::with_files(&[(
        "src/app.ts",
        "import express from 'express';\nconst app = express();\napp.listen(3000);\n",
    )]);
    let out = patch(
        &mut host,
        "*** Begin Patch\n*** Update File: src/app.ts\n@@ -1,3 +1,4 @@\n import express from 'express';\n+import cors from 'cors';\n const app = express();\n*** End Patch",
    );
    assert_eq!(
        out.as_deref(),
        Ok("Success. Updated the following files:\nM src/app.ts")
    );
    assert_eq!(
        host.file("src/app.ts"),
        Some("import express from 'express';\nimport cors from 'cors';\nconst app = express();\napp.listen(3000);\n")
    );
}

#[test]
fn patch_deletes_moves_and_summarises_like_codex() {
    let mut host = Host::with_files(&[
        ("old.txt", "bye\n"),
        ("src/a.rs", "fn a() {}\n"),
        ("keep.txt", "same\n"),
    ]);
    let out = patch(
        &mut host,
        "*** Begin Patch\n\
         *** Add File: notes.txt\n\
         +hi\n\
         *** Update File: src/a.rs\n\
         *** Move to: src/b.rs\n\
         @@\n\
         -fn a() {}\n\
         +fn b() {}\n\
         *** Delete File: old.txt\n\
         *** End Patch\n",
    );
    assert_eq!(
        out.as_deref(),
        Ok("Success. Updated the following files:\nA notes.txt\nM src/b.rs (moved from src/a.rs)\nD old.txt")
    );
    assert_eq!(
        host.ws,
        MemoryWorkspace::with_files([
            ("keep.txt", "same\n"),
            ("notes.txt", "hi\n"),
            ("src/b.rs", "fn b() {}\n"),
        ])
    );
    // A pure rename.
    let out = patch(
        &mut host,
        "*** Begin Patch\n*** Update File: keep.txt\n*** Move to: kept.txt\n*** End Patch",
    );
    assert_eq!(
        out.as_deref(),
        Ok("Success. Updated the following files:\nM kept.txt (moved from keep.txt)")
    );
    assert_eq!(host.file("kept.txt"), Some("same\n"));
    assert_eq!(host.file("keep.txt"), None);
}

const CODE: &str = "fn main() {
    let a = 1;
    let b = 2;
    println!(\"{}\", a + b);
}

fn helper() {
    let a = 1;
    let b = 2;
    todo!();
}
";

#[test]
fn patch_applies_several_hunks_in_order() {
    let mut host = Host::with_files(&[("main.rs", CODE)]);
    patch(
        &mut host,
        "*** Begin Patch
*** Update File: main.rs
@@ fn main() {
     let a = 1;
-    let b = 2;
+    let b = 3;
@@ fn helper() {
     let a = 1;
-    let b = 2;
-    todo!();
+    let b = 20;
+    a + b;
 }
*** End Patch",
    )
    .unwrap();
    assert_eq!(
        host.file("main.rs"),
        Some(
            "fn main() {
    let a = 1;
    let b = 3;
    println!(\"{}\", a + b);
}

fn helper() {
    let a = 1;
    let b = 20;
    a + b;
}
"
        )
    );
}

#[test]
fn patch_anchors_disambiguate_repeated_lines() {
    // Without the anchor the first `let b = 2;` would change; with it, the helper's does.
    let mut host = Host::with_files(&[("main.rs", CODE)]);
    patch(
        &mut host,
        "*** Begin Patch\n*** Update File: main.rs\n@@ fn helper() {\n-    let b = 2;\n+    let b = 9;\n*** End Patch",
    )
    .unwrap();
    let content = host.file("main.rs").unwrap();
    assert!(content.contains("    let a = 1;\n    let b = 2;\n    println"));
    assert!(content.contains("    let a = 1;\n    let b = 9;\n    todo!();"));
    // Anchors match ignoring surrounding whitespace.
    let mut host = Host::with_files(&[("main.rs", CODE)]);
    patch(
        &mut host,
        "*** Begin Patch\n*** Update File: main.rs\n@@ todo!();\n+    // inserted after the anchor\n*** End Patch",
    )
    .unwrap();
    assert!(host
        .file("main.rs")
        .unwrap()
        .ends_with("    todo!();\n    // inserted after the anchor\n}\n"));
}

#[test]
fn patch_hunk_without_at_at_and_end_of_file() {
    let mut host = Host::with_files(&[("list.txt", "a\nb\nx\nb\n")]);
    // The first hunk may omit @@; *** End of File anchors at the end.
    patch(
        &mut host,
        "*** Begin Patch\n*** Update File: list.txt\n b\n+c\n*** End of File\n*** End Patch",
    )
    .unwrap();
    assert_eq!(host.file("list.txt"), Some("a\nb\nx\nb\nc\n"));
    // A hunk with only additions and no anchor appends.
    patch(
        &mut host,
        "*** Begin Patch\n*** Update File: list.txt\n@@\n+d\n*** End Patch",
    )
    .unwrap();
    assert_eq!(host.file("list.txt"), Some("a\nb\nx\nb\nc\nd\n"));
}

#[test]
fn patch_matching_tolerates_trailing_whitespace_and_keeps_line_endings() {
    let mut host = Host::with_files(&[
        ("crlf.txt", "one\r\ntwo\r\nthree\r\n"),
        ("spaces.txt", "a   \nb\t\nc\n"),
        ("no-newline.txt", "x\ny"),
    ]);
    patch(
        &mut host,
        "*** Begin Patch\r\n*** Update File: crlf.txt\r\n@@\r\n one\r\n-two\r\n+TWO\r\n*** Update File: spaces.txt\n@@\n a\n-b\n+B\n*** Update File: no-newline.txt\n@@\n x\n-y\n+z\n*** End Patch",
    )
    .unwrap();
    assert_eq!(host.file("crlf.txt"), Some("one\r\nTWO\r\nthree\r\n"));
    assert_eq!(host.file("spaces.txt"), Some("a\nB\nc\n"));
    assert_eq!(host.file("no-newline.txt"), Some("x\nz"));
}

#[test]
fn patch_empty_lines_in_hunks_are_empty_context() {
    let mut host = Host::with_files(&[("f.txt", "a\n\nb\n")]);
    patch(
        &mut host,
        "*** Begin Patch\n*** Update File: f.txt\n@@\n a\n\n-b\n+c\n*** End Patch",
    )
    .unwrap();
    assert_eq!(host.file("f.txt"), Some("a\n\nc\n"));
}

#[test]
fn patch_can_empty_a_file_and_touch_one_file_twice() {
    let mut host = Host::with_files(&[("f.txt", "only\n")]);
    patch(
        &mut host,
        "*** Begin Patch\n*** Update File: f.txt\n-only\n*** Update File: f.txt\n@@\n+new\n*** Delete File: f.txt\n*** Add File: f.txt\n+again\n*** End Patch",
    )
    .unwrap();
    assert_eq!(host.file("f.txt"), Some("again\n"));
}

#[test]
fn patch_in_a_heredoc_is_unwrapped() {
    let mut host = Host::new();
    let out = patch(
        &mut host,
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\nEOF\n",
    );
    assert_eq!(
        out.as_deref(),
        Ok("Success. Updated the following files:\nA a.txt")
    );
}

#[test]
fn patch_mismatch_is_atomic_and_names_the_line() {
    let files = [
        ("main.rs", CODE),
        ("other.txt", "keep\n"),
        ("gone.txt", "still here\n"),
    ];
    let mut host = Host::with_files(&files);
    let before = host.ws.clone();
    let err = patch(
        &mut host,
        "*** Begin Patch
*** Add File: new.txt
+new
*** Delete File: gone.txt
*** Update File: other.txt
-keep
+changed
*** Update File: main.rs
@@
 fn main() {
     let a = 1;
-    let b = 5;
+    let b = 6;
*** End Patch",
    )
    .unwrap_err();
    assert_eq!(
        err,
        "cannot apply hunk 1 to main.rs: the line \"    let b = 5;\" does not match: line 3 \
         of the file is \"    let b = 2;\"; nothing was changed"
    );
    assert_eq!(host.ws, before, "nothing was written");

    let err = patch(
        &mut host,
        "*** Begin Patch\n*** Update File: main.rs\n@@\n-not in the file\n+x\n*** End Patch",
    )
    .unwrap_err();
    assert_eq!(
        err,
        "cannot apply hunk 1 to main.rs: the line \"not in the file\" was not found; nothing \
         was changed"
    );
    let err = patch(
        &mut host,
        "*** Begin Patch\n*** Update File: main.rs\n@@ fn nope() {\n-x\n*** End Patch",
    )
    .unwrap_err();
    assert_eq!(
        err,
        "cannot apply hunk 1 to main.rs: its @@ line \"fn nope() {\" was not found; nothing \
         was changed"
    );
    // Hunks must come in file order: the second is searched after the first.
    let err = patch(
        &mut host,
        "*** Begin Patch\n*** Update File: main.rs\n@@\n-    todo!();\n+    done();\n@@\n-fn main() {\n+fn start() {\n*** End Patch",
    )
    .unwrap_err();
    assert_eq!(
        err,
        "cannot apply hunk 2 to main.rs: the line \"fn main() {\" was not found after line 10; \
         nothing was changed"
    );
    // A hunk that runs off the end of the file.
    let err = patch(
        &mut host,
        "*** Begin Patch\n*** Update File: main.rs\n@@\n     todo!();\n }\n-extra\n*** End Patch",
    )
    .unwrap_err();
    assert_eq!(
        err,
        "cannot apply hunk 1 to main.rs: the line \"extra\" does not match: line 12 of the file \
         is the end of the file; nothing was changed"
    );
    assert_eq!(host.ws, before);
}

#[test]
fn patch_file_operation_errors() {
    let mut host = Host::with_files(&[("a.txt", "a\n"), ("b.txt", "b\n"), ("dir/c.txt", "c\n")]);
    let before = host.ws.clone();
    for (body, expected) in [
        (
            "*** Add File: a.txt\n+x",
            "cannot add a.txt: the file already exists (use '*** Update File:' to change it)",
        ),
        (
            "*** Delete File: nope.txt",
            "cannot delete nope.txt: no such file",
        ),
        (
            "*** Update File: nope.txt\n@@\n+x",
            "cannot update nope.txt: no such file",
        ),
        (
            "*** Update File: a.txt\n*** Move to: b.txt\n@@\n-a\n+A",
            "cannot move a.txt to b.txt: b.txt already exists",
        ),
        (
            "*** Add File: dir\n+x",
            "cannot create dir: dir is a directory (it holds dir/c.txt)",
        ),
        (
            "*** Add File: a.txt/x\n+x",
            "cannot create a.txt/x: a.txt is a file, not a directory",
        ),
        (
            "*** Delete File: a.txt\n*** Update File: a.txt\n@@\n+x",
            "cannot update a.txt: no such file",
        ),
        (
            "*** Add File: \n+x",
            "invalid path \"\": a file name is required",
        ),
    ] {
        let text = format!("*** Begin Patch\n{body}\n*** End Patch");
        assert_eq!(patch(&mut host, &text), Err(expected.to_string()), "{body}");
        assert_eq!(host.ws, before, "{body}");
    }
    let big = format!(
        "*** Begin Patch\n*** Add File: big.txt\n+{}\n*** End Patch",
        "x".repeat(MAX_FILE_BYTES)
    );
    assert_eq!(
        patch(&mut host, &big),
        Err(
            "cannot write big.txt: the result would be 1048577 bytes; the limit per file is \
             1048576 bytes"
                .to_string()
        )
    );
    assert_eq!(host.ws, before);
}

#[test]
fn patch_syntax_errors_give_the_line() {
    let mut host = Host::with_files(&[("a.txt", "a\n")]);
    for (text, expected) in [
        ("", "invalid patch: the first line must be '*** Begin Patch'"),
        ("just some text", "invalid patch: the first line must be '*** Begin Patch'"),
        ("*** Begin Patch\n*** Add File: x\n+x", "invalid patch: the last line must be '*** End Patch'"),
        ("*** Begin Patch", "invalid patch: the last line must be '*** End Patch'"),
        ("*** Begin Patch\n*** End Patch", "invalid patch: it changes no file"),
        (
            "*** Begin Patch\n*** Add File: x\nno plus\n*** End Patch",
            "invalid patch line 3: \"no plus\": every line of an added file starts with '+' (write '+' alone for an empty line)",
        ),
        (
            "*** Begin Patch\n*** Frobnicate File: x\n*** End Patch",
            "invalid patch line 2: \"*** Frobnicate File: x\": expected '*** Add File:', '*** Delete File:', '*** Update File:' or '*** End Patch'",
        ),
        (
            "*** Begin Patch\n*** Update File: a.txt\n*** End Patch",
            "invalid patch line 2: '*** Update File: a.txt' has no hunks",
        ),
        (
            "*** Begin Patch\n*** Update File: a.txt\n@@\n*** End Patch",
            "invalid patch: the last hunk of a.txt has no lines",
        ),
        (
            "*** Begin Patch\n*** Update File: a.txt\n@@\n@@\n-a\n*** End Patch",
            "invalid patch line 4: the hunk before this @@ in a.txt has no lines",
        ),
        (
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n~b\n*** End Patch",
            "invalid patch line 5: \"~b\" in the update of a.txt: hunk lines start with ' ' (context), '-' (remove) or '+' (add), and hunks start with @@",
        ),
        (
            "*** Begin Patch\n*** Update File: a.txt\n*** End of File\n*** End Patch",
            "invalid patch line 3: '*** End of File' must follow the lines of a hunk",
        ),
        (
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n*** End of File\n+b\n*** End Patch",
            "invalid patch line 6: a hunk continues after '*** End of File' in a.txt; start a new hunk with @@",
        ),
        (
            "\n\n*** Begin Patch\n*** Delete File: a.txt\nstray\n*** End Patch",
            "invalid patch line 5: \"stray\": expected '*** Add File:', '*** Delete File:', '*** Update File:' or '*** End Patch'",
        ),
        (
            "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\n*** Add File: b\n+b\n*** End Patch",
            "invalid patch line 3: \"*** End Patch\": expected '*** Add File:', '*** Delete File:', '*** Update File:' or '*** End Patch'",
        ),
    ] {
        assert_eq!(patch(&mut host, text), Err(expected.to_string()), "{text:?}");
    }
    assert_eq!(host.file("a.txt"), Some("a\n"));
}

#[test]
fn apply_patch_works_on_any_workspace() {
    let mut ws = MemoryWorkspace::with_files([("a", "1\n")]);
    assert_eq!(
        apply_patch(
            "*** Begin Patch\n*** Update File: a\n-1\n+2\n*** End Patch",
            &mut ws
        )
        .as_deref(),
        Ok("Success. Updated the following files:\nM a")
    );
    assert_eq!(ws.files["a"], "2\n");
}

// ---------------------------------------------------------------------------------------------
// Registry

fn client_tool(name: &str, read_only: bool) -> ToolSpec {
    ToolSpec {
        name: name.to_string(),
        description: Some(format!("client tool {name}")),
        input_schema: json!({"type": "object", "properties": {"cmd": {"type": "string"}}}),
        read_only,
    }
}

#[test]
fn registry_holds_builtins_and_client_tools_sorted() {
    let mut registry = ToolRegistry::new();
    assert_eq!(registry.specs(), builtin_specs());
    assert_eq!(
        registry.add_client_tool(client_tool("shell", false)),
        Ok(None)
    );
    assert_eq!(
        registry.add_client_tool(client_tool("clipboard", true)),
        Ok(None)
    );
    let names: Vec<String> = registry.specs().into_iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            "apply_patch",
            "calculator",
            "clipboard",
            "get_time",
            "ls",
            "read",
            "shell",
            "web_fetch",
            "write"
        ]
    );
    assert_eq!(
        registry
            .client_specs()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        ["clipboard", "shell"]
    );
    assert!(registry.is_client("shell"));
    assert!(!registry.is_client("read"));
    assert!(!registry.is_client("nope"));
    assert_eq!(registry.builtin("read"), Some(Builtin::Read));
    assert_eq!(registry.builtin("shell"), None);
    assert_eq!(registry.get("shell"), Some(&client_tool("shell", false)));
    assert_eq!(registry.get("read"), Some(&Builtin::Read.spec()));
    assert_eq!(registry.get("nope"), None);
}

#[test]
fn registry_approval_rules() {
    let mut registry = ToolRegistry::default();
    registry
        .add_client_tools([client_tool("shell", false), client_tool("clipboard", true)])
        .unwrap();
    assert!(registry.needs_approval("shell"));
    assert!(!registry.needs_approval("clipboard"));
    assert!(registry.needs_approval("write"));
    assert!(registry.needs_approval("apply_patch"));
    assert!(!registry.needs_approval("read"));
    assert!(!registry.needs_approval("web_fetch"));
    assert!(registry.needs_approval("nope"));
}

#[test]
fn registry_replaces_removes_and_refuses() {
    let mut registry = ToolRegistry::new();
    registry
        .add_client_tool(client_tool("shell", false))
        .unwrap();
    assert_eq!(
        registry.add_client_tool(client_tool("shell", true)),
        Ok(Some(client_tool("shell", false)))
    );
    assert!(!registry.needs_approval("shell"));
    assert_eq!(
        registry.add_client_tool(client_tool("read", true)),
        Err(RegistryError::ShadowsBuiltin {
            name: "read".into()
        })
    );
    assert_eq!(
        RegistryError::ShadowsBuiltin {
            name: "read".into()
        }
        .to_string(),
        "client tool \"read\" has the name of a built-in tool; choose another name"
    );
    for bad in ["", "has space", "dot.name", "ünï", &"x".repeat(65)] {
        let err = registry
            .add_client_tool(client_tool(bad, true))
            .unwrap_err();
        assert_eq!(
            err,
            RegistryError::InvalidName {
                name: bad.to_string()
            }
        );
    }
    assert_eq!(
        RegistryError::InvalidName { name: "a b".into() }.to_string(),
        "invalid tool name \"a b\": use 1 to 64 ASCII letters, digits, '_' or '-'"
    );
    registry
        .add_client_tool(client_tool(&"x".repeat(64), true))
        .unwrap();
    let mut bad_schema = client_tool("bad", true);
    bad_schema.input_schema = json!("string");
    let err = registry.add_client_tool(bad_schema.clone()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid input_schema of tool \"bad\": it must be a JSON object"
    );
    bad_schema.input_schema = json!({"type": "array"});
    assert_eq!(
        registry
            .add_client_tool(bad_schema)
            .unwrap_err()
            .to_string(),
        "invalid input_schema of tool \"bad\": its \"type\" must be \"object\": a tool takes an \
         object of named arguments"
    );
    let mut untyped = client_tool("untyped", true);
    untyped.input_schema = json!({});
    registry.add_client_tool(untyped).unwrap();

    // A batch is all or nothing.
    let before = registry.clone();
    assert_eq!(
        registry.add_client_tools([client_tool("ok1", true), client_tool("ls", true)]),
        Err(RegistryError::ShadowsBuiltin { name: "ls".into() })
    );
    assert_eq!(registry, before);

    assert_eq!(registry.remove_client_tool("read"), None);
    assert_eq!(
        registry.remove_client_tool("shell"),
        Some(client_tool("shell", true))
    );
    assert_eq!(registry.remove_client_tool("shell"), None);
    registry.clear_client_tools();
    assert_eq!(registry, ToolRegistry::new());
}

// ---------------------------------------------------------------------------------------------
// YAML

#[test]
fn yaml_scalars() {
    for (value, expected) in [
        (json!(null), "null\n"),
        (json!(true), "true\n"),
        (json!(42), "42\n"),
        (json!(-1.5), "-1.5\n"),
        (json!("plain text"), "plain text\n"),
        (json!(""), "\"\"\n"),
        (json!("true"), "\"true\"\n"),
        (json!("No"), "\"No\"\n"),
        (json!("null"), "\"null\"\n"),
        (json!("~"), "\"~\"\n"),
        (json!("123"), "\"123\"\n"),
        (json!("1.5"), "\"1.5\"\n"),
        (json!("-3"), "\"-3\"\n"),
        (json!(".5"), "\".5\"\n"),
        (json!(".inf"), "\".inf\"\n"),
        (json!("2024-01-01"), "\"2024-01-01\"\n"),
        (json!("- item"), "\"- item\"\n"),
        (json!("a: b"), "\"a: b\"\n"),
        (json!("key:"), "\"key:\"\n"),
        (json!("a #comment"), "\"a #comment\"\n"),
        (json!("#x"), "\"#x\"\n"),
        (json!("*alias"), "\"*alias\"\n"),
        (json!("&anchor"), "\"&anchor\"\n"),
        (json!("!tag"), "\"!tag\"\n"),
        (json!("{flow}"), "\"{flow}\"\n"),
        (json!("[flow]"), "\"[flow]\"\n"),
        (json!("'single'"), "\"'single'\"\n"),
        (json!("\"double\""), "\"\\\"double\\\"\"\n"),
        (json!("%directive"), "\"%directive\"\n"),
        (json!("@at"), "\"@at\"\n"),
        (json!("`tick"), "\"`tick\"\n"),
        (json!("|pipe"), "\"|pipe\"\n"),
        (json!(">fold"), "\">fold\"\n"),
        (json!(" lead"), "\" lead\"\n"),
        (json!("trail "), "\"trail \"\n"),
        (json!("tab\there"), "\"tab\\there\"\n"),
        (json!("back\\slash"), "back\\slash\n"),
        (json!("a\u{1}b"), "\"a\\u0001b\"\n"),
        (json!("line\u{2028}sep"), "\"line\\u2028sep\"\n"),
        (json!("two\nlines"), "\"two\\nlines\"\n"),
        (json!("url: http://x"), "\"url: http://x\"\n"),
        (json!("http://x.y/z?a=b"), "http://x.y/z?a=b\n"),
        (json!("a,b [c] {d}"), "a,b [c] {d}\n"),
        (json!("ünïcode ✓"), "ünïcode ✓\n"),
        (json!("it's"), "it's\n"),
    ] {
        assert_eq!(to_yaml(&value), expected, "{value}");
    }
}

#[test]
fn yaml_collections() {
    let value = json!({
        "name": "x",
        "list": [1, "two", [3, 4], {"a": 1, "b": [true]}, {}, []],
        "empty": {},
        "none": [],
        "nested": {"deep": {"deeper": "yes"}},
        "key with: colon": 1,
        "": "empty key"
    });
    assert_eq!(
        to_yaml(&value),
        "\"\": empty key
empty: {}
\"key with: colon\": 1
list:
  - 1
  - two
  - - 3
    - 4
  - a: 1
    b:
      - true
  - {}
  - []
name: x
nested:
  deep:
    deeper: \"yes\"
none: []
"
    );
    assert_eq!(to_yaml(&json!([])), "[]\n");
    assert_eq!(to_yaml(&json!({})), "{}\n");
    assert_eq!(to_yaml(&json!([[["x"]]])), "- - - x\n");
}

#[test]
fn yaml_multiline_strings_use_literal_blocks_when_they_read_back() {
    let value = json!({
        "clip": "line one\nline two\n",
        "strip": "line one\n\n  indented",
        "keep_many": "a\n\n\n",
        "leading_space": "  first\nsecond",
        "blank_first": "\n  x",
        "spaces_only": "a\n   \nb",
        "cr": "a\r\nb",
        "list": ["x\ny"]
    });
    assert_eq!(
        to_yaml(&value),
        "blank_first: \"\\n  x\"
clip: |
  line one
  line two
cr: \"a\\r\\nb\"
keep_many: \"a\\n\\n\\n\"
leading_space: \"  first\\nsecond\"
list:
  - |-
    x
    y
spaces_only: \"a\\n   \\nb\"
strip: |-
  line one

    indented
"
    );
}

#[test]
fn tool_show_yaml_and_json() {
    let spec = Builtin::Read.spec();
    assert_eq!(
        spec_yaml(&spec),
        "name: read
description: Read a file of the session workspace and return its content. Paths are relative to the workspace root, e.g. \"notes.txt\" or \"src/app.ts\"; use ls to see which files exist.
input_schema:
  properties:
    path:
      description: Path of the file, relative to the workspace root.
      type: string
  required:
    - path
  type: object
read_only: true
"
    );
    assert_eq!(
        spec_json(&spec),
        json!({
            "name": "read",
            "description": spec.description,
            "input_schema": spec.input_schema,
            "read_only": true
        })
    );
    let client = ToolSpec {
        name: "shell".into(),
        description: None,
        input_schema: json!({}),
        read_only: false,
    };
    assert_eq!(spec_yaml(&client), "name: shell\ninput_schema: {}\n");
    assert_eq!(
        spec_json(&client),
        json!({"name": "shell", "input_schema": {}})
    );
    // The multi-line description of apply_patch becomes a literal block.
    let yaml = spec_yaml(&Builtin::ApplyPatch.spec());
    assert!(
        yaml.starts_with(
            "name: apply_patch\ndescription: |-\n  Edit files of the session workspace"
        ),
        "{yaml}"
    );
    assert!(yaml.contains("\n  *** Begin Patch\n  *** Add File: path/of/new_file.txt\n"));
    assert!(yaml.contains("\n   a context line, unchanged (prefixed with a space)\n"));
}

// ---------------------------------------------------------------------------------------------
// No input makes a tool panic, and a failed patch never writes.

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

#[test]
fn redirects_resolve_against_the_page_and_each_target_is_checked() {
    let base = "https://example.com/docs/guide/intro.html?lang=en#top";
    for (location, want) in [
        ("https://www.example.com/", "https://www.example.com/"),
        ("//cdn.example.org/a.js", "https://cdn.example.org/a.js"),
        (
            "/login?next=%2Fdocs",
            "https://example.com/login?next=%2Fdocs",
        ),
        ("setup.html", "https://example.com/docs/guide/setup.html"),
        ("../api/", "https://example.com/docs/api/"),
        ("./../../x/./y/..", "https://example.com/x/"),
        ("../../../../up", "https://example.com/up"),
        (
            "?lang=de",
            "https://example.com/docs/guide/intro.html?lang=de",
        ),
        (
            "#part-2",
            "https://example.com/docs/guide/intro.html?lang=en#part-2",
        ),
        ("  /spaced  ", "https://example.com/spaced"),
    ] {
        for status in [301, 302, 303, 307, 308] {
            assert_eq!(
                redirect_target(base, status, Some(location)),
                Ok(Some(want.to_string())),
                "{status} {location}"
            );
        }
    }
    assert_eq!(
        redirect_target("http://example.com", 301, Some("next")),
        Ok(Some("http://example.com/next".to_string())),
        "a base without a path"
    );
}

#[test]
fn a_redirect_to_a_private_host_or_without_a_location_is_refused() {
    let base = "https://example.com/a";
    for location in [
        "http://127.0.0.1:8080/admin",
        "http://localhost/",
        "//10.0.0.7/metadata",
        "http://[::1]/",
        "http://169.254.169.254/latest/meta-data/",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "http://user:pw@example.com/",
        "/\\127.0.0.1/admin",
        "\\\\localhost/",
        "http://127。0。0。1/",
        "http://0x7f.1/",
        "http://[::ffff:10.0.0.1]/",
        "//%31%32%37.0.0.1/",
    ] {
        let refused = redirect_target(base, 302, Some(location));
        assert!(
            matches!(&refused, Err(e) if e.contains("which is refused")),
            "{location}: {refused:?}"
        );
    }
    for location in [None, Some(""), Some("   ")] {
        let refused = redirect_target(base, 301, location);
        assert!(
            matches!(&refused, Err(e) if e.contains("without a Location")),
            "{location:?}: {refused:?}"
        );
    }
}

#[test]
fn answers_that_are_not_redirects_are_the_page() {
    for status in [200, 204, 300, 304, 404, 500] {
        assert_eq!(
            redirect_target("https://example.com/", status, Some("http://127.0.0.1/")),
            Ok(None),
            "{status}"
        );
    }
}
