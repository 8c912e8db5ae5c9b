//! A small YAML emitter for JSON values, for loom's `tool_show` (YAML by default).
//!
//! Block style only: mappings as `key: value`, sequences as `- item` (a collection inside a
//! sequence starts on the dash's line), empty collections as `{}` / `[]`. A string is written
//! plain when YAML 1.1 and 1.2 both read it back as that same string, as a literal block (`|`)
//! when it spans lines, and double-quoted otherwise (JSON escapes are valid YAML escapes). So
//! the output reads back to the same value in any YAML parser, which the tests check against
//! hand-written expectations.

use serde_json::{Map, Value};
use weft_protocol::event::ToolSpec;

/// `value` as a YAML document, ending with a newline.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => emit_node(&mut out, value, 0),
        Value::Array(items) if !items.is_empty() => emit_node(&mut out, value, 0),
        scalar => {
            // A top-level scalar has no parent to indent a block against: always inline.
            out.push(' ');
            emit_scalar(&mut out, scalar, None);
        }
    }
    // Every node starts with a line break or the space after `:`/`-`; drop the first.
    out.remove(0);
    out.push('\n');
    out
}

/// A tool as loom's `tool_show` prints it: `name`, `description`, `input_schema` in that order
/// (the order a reader wants; JSON maps here are sorted), plus `read_only` when set.
pub fn spec_yaml(spec: &ToolSpec) -> String {
    let mut out = String::new();
    let mut field = |key: &str, value: &Value| {
        out.push('\n');
        emit_scalar(&mut out, &Value::String(key.to_string()), None);
        out.push(':');
        emit_node(&mut out, value, 2);
    };
    field("name", &Value::String(spec.name.clone()));
    if let Some(description) = &spec.description {
        field("description", &Value::String(description.clone()));
    }
    field("input_schema", &spec.input_schema.to_value());
    if spec.read_only {
        field("read_only", &Value::Bool(true));
    }
    out.remove(0);
    out.push('\n');
    out
}

/// A tool as loom's `tool_show` with `output: "json"` returns it: the [`ToolSpec`] object,
/// with `description` and `read_only` only when present, as on the wire everywhere else.
pub fn spec_json(spec: &ToolSpec) -> Value {
    let mut map = Map::new();
    map.insert("name".to_string(), Value::String(spec.name.clone()));
    if let Some(description) = &spec.description {
        map.insert(
            "description".to_string(),
            Value::String(description.clone()),
        );
    }
    map.insert("input_schema".to_string(), spec.input_schema.to_value());
    if spec.read_only {
        map.insert("read_only".to_string(), Value::Bool(true));
    }
    Value::Object(map)
}

/// Writes `value` as the value of a mapping entry or sequence item whose key or dash `out`
/// has just written; nested lines are indented by `indent`.
fn emit_node(out: &mut String, value: &Value, indent: usize) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, value) in map {
                newline(out, indent);
                emit_scalar(out, &Value::String(key.clone()), None);
                out.push(':');
                emit_node(out, value, indent + 2);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                newline(out, indent);
                out.push('-');
                match item {
                    Value::Object(m) if !m.is_empty() => compact(out, item, indent + 2),
                    Value::Array(a) if !a.is_empty() => compact(out, item, indent + 2),
                    _ => emit_node(out, item, indent + 2),
                }
            }
        }
        scalar => {
            out.push(' ');
            emit_scalar(out, scalar, Some(indent));
        }
    }
}

/// A collection inside a sequence, its first line on the dash's line (`- a: 1`).
fn compact(out: &mut String, value: &Value, indent: usize) {
    let mut nested = String::new();
    emit_node(&mut nested, value, indent);
    // `nested` starts with "\n" and `indent` spaces, which "- " replaces.
    out.push(' ');
    out.push_str(nested.get(1 + indent..).unwrap_or_default());
}

fn newline(out: &mut String, indent: usize) {
    out.push('\n');
    out.extend(std::iter::repeat_n(' ', indent));
}

/// A scalar; `block_indent` allows a multi-line string as a literal block indented that much.
fn emit_scalar(out: &mut String, value: &Value, block_indent: Option<usize>) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&yaml_number(&n.to_string())),
        Value::String(s) if is_plain(s) => out.push_str(s),
        Value::String(s) => match block_indent {
            Some(indent) if indent > 0 && is_literal_block(s) => {
                out.push_str(if s.ends_with('\n') { "|" } else { "|-" });
                for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
                    if line.is_empty() {
                        out.push('\n');
                    } else {
                        newline(out, indent);
                        out.push_str(line);
                    }
                }
            }
            _ => quote(out, s),
        },
        // Collections reach here only when empty.
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

/// A JSON number as YAML 1.1 and 1.2 both read a number: YAML 1.1 wants a `.` in the
/// mantissa and a sign on the exponent (`1e300` would be a string there; `1.0e+300` is not).
fn yaml_number(json: &str) -> String {
    match json.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => {
            let dot = if mantissa.contains('.') { "" } else { ".0" };
            let sign = if exponent.starts_with(['+', '-']) {
                ""
            } else {
                "+"
            };
            format!("{mantissa}{dot}e{sign}{exponent}")
        }
        None => json.to_string(),
    }
}

/// Whether `s` can be written without quotes and read back as the same string.
fn is_plain(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let lower = s.to_ascii_lowercase();
    let reserved = matches!(
        lower.as_str(),
        "null" | "~" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "<<" | "="
    );
    // Anything that might be read as a number, date or time: quote it.
    let numeric = first.is_ascii_digit()
        || (matches!(first, '-' | '+' | '.')
            && s[1..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit() || c == '.'))
        || matches!(lower.as_str(), ".inf" | "-.inf" | "+.inf" | ".nan");
    !reserved
        && !numeric
        && !"-?:,[]{}#&*!|>'\"%@`".contains(first)
        && !first.is_whitespace()
        && !s.ends_with(char::is_whitespace)
        && !s.ends_with(':')
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.chars().any(needs_escape)
}

/// Whether `s` reads back exactly as a literal block: several lines, no characters a block
/// cannot hold, nothing a block would fold away or misread (indentation on the first non-empty
/// line, which sets the block's indentation; whitespace-only lines; more than one trailing
/// newline).
fn is_literal_block(s: &str) -> bool {
    let body = s.strip_suffix('\n').unwrap_or(s);
    body.contains('\n')
        && !body.ends_with('\n')
        && body
            .split('\n')
            .find(|line| !line.is_empty())
            .is_some_and(|line| !line.starts_with([' ', '\t']))
        && !s.chars().any(|c| c != '\n' && c != '\t' && needs_escape(c))
        && body
            .split('\n')
            .all(|line| line.is_empty() || !line.trim().is_empty())
}

/// Characters YAML cannot hold unescaped (or that would break a line).
fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}')
}

/// A double-quoted scalar.
fn quote(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if needs_escape(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}
