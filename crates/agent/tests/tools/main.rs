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

mod calculator;
mod fetch;
mod patch;
mod registry;
mod robustness;
mod specs;
mod time;
mod workspace;
mod yaml;

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
