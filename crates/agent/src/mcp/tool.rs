//! The two things a server's answers carry for weft: tool definitions (`tools/list`) and tool
//! results (`tools/call`), read leniently where the spec allows and strictly where it must.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One tool a server offers, as the host caches it and offers it to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tool {
    /// The server's name for the tool: what a `tools/call` sends (the model sees another one;
    /// see [`model_tool_names`](super::model_tool_names)).
    pub name: String,
    /// A display name: the tool's `title`, else its annotations' `title`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model; empty when the server gave none.
    #[serde(default)]
    pub description: String,
    /// The JSON Schema of the arguments (an `object` schema).
    pub input_schema: Value,
    /// The server's claims about the tool. Hints only: a server that is not trusted may say
    /// anything here.
    #[serde(default)]
    pub annotations: ToolAnnotations,
    /// Arguments the current revision mirrors into `Mcp-Param-*` headers (`x-mcp-header`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) header_params: Vec<HeaderParam>,
}

/// The server's hints about a tool (`annotations`); `None` where it said nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolAnnotations {
    /// The tool does not modify its environment (spec default: false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy things (spec default: true, when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling it again with the same arguments changes nothing more (spec default: false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// It reaches an open world of outside entities (spec default: true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// One `x-mcp-header` parameter: the header's name part and the `properties` path to the
/// argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct HeaderParam {
    pub(crate) header: String,
    pub(crate) path: Vec<String>,
}

impl HeaderParam {
    /// The header value for these arguments, or `None` when the argument is absent or null
    /// (the header is then omitted, as the spec says). A value of the wrong type is omitted
    /// too: the server's validation answers that better than a guess here.
    pub(crate) fn value_in(&self, arguments: &Value) -> Option<String> {
        let mut value = arguments;
        for key in &self.path {
            value = value.get(key)?;
        }
        let text = match value {
            Value::String(text) => text.clone(),
            Value::Bool(flag) => flag.to_string(),
            Value::Number(n) => {
                const SAFE: i64 = (1 << 53) - 1;
                let n = n.as_i64().filter(|n| (-SAFE..=SAFE).contains(n))?;
                n.to_string()
            }
            _ => return None,
        };
        Some(super::request::header_value(&text))
    }
}

/// What `tools/list` gave, across its pages.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    /// The usable tools, in the server's order.
    pub tools: Vec<Tool>,
    /// Tools left out because their definition is invalid (the spec requires a client to drop
    /// a tool whose `x-mcp-header` annotations break its rules), with the reason: for the log.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejected: Vec<RejectedTool>,
    /// The page or tool cap of the [`Limits`](super::Limits) cut the list short.
    #[serde(default)]
    pub truncated: bool,
    /// How long the server says the list may be cached (`ttlMs`, current revision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
}

/// A tool left out of a [`Catalog`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RejectedTool {
    /// Its name (may be empty when the name itself was missing).
    pub name: String,
    /// Why.
    pub reason: String,
}

/// A tool call's result as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// Text content as it is, structured content as JSON, other content described.
    pub text: String,
    /// The tool reported a failure (`isError`): the model sees it as a tool error and may
    /// correct itself.
    pub is_error: bool,
}

/// Reads one entry of `tools` into a tool, or says why it cannot be used. `modern` turns on
/// the current revision's `x-mcp-header` rules.
pub(crate) fn parse_tool(value: &Value, modern: bool) -> Result<Tool, RejectedTool> {
    let name = value
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let reject = |reason: String| RejectedTool {
        name: name.into(),
        reason,
    };
    if name.is_empty() {
        return Err(reject("it has no name".into()));
    }
    let text = |object: Option<&Value>, key: &str| {
        object
            .and_then(|o| o.get(key))
            .and_then(Value::as_str)
            .map(String::from)
    };
    let annotations_value = value.get("annotations");
    let flag = |key: &str| {
        annotations_value
            .and_then(|a| a.get(key))
            .and_then(Value::as_bool)
    };
    let input_schema = match value.get("inputSchema") {
        Some(schema @ Value::Object(_)) => schema.clone(),
        None | Some(Value::Null) => serde_json::json!({"type": "object", "properties": {}}),
        Some(_) => return Err(reject("its inputSchema is not an object".into())),
    };
    let header_params = if modern {
        header_params(&input_schema).map_err(reject)?
    } else {
        Vec::new()
    };
    Ok(Tool {
        name: name.into(),
        title: text(Some(value), "title").or_else(|| text(annotations_value, "title")),
        description: text(Some(value), "description").unwrap_or_default(),
        input_schema,
        annotations: ToolAnnotations {
            read_only_hint: flag("readOnlyHint"),
            destructive_hint: flag("destructiveHint"),
            idempotent_hint: flag("idempotentHint"),
            open_world_hint: flag("openWorldHint"),
        },
        header_params,
    })
}

/// Schema keywords whose values are subschemas (or maps / arrays of them): where an
/// `x-mcp-header` could hide. Everything else (`enum`, `default`, `examples`…) is data.
const SUBSCHEMA_KEYWORDS: [&str; 17] = [
    "properties",
    "patternProperties",
    "additionalProperties",
    "items",
    "prefixItems",
    "contains",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "$defs",
    "definitions",
    "dependentSchemas",
    "unevaluatedProperties",
];

/// The `x-mcp-header` parameters of an input schema, checked against the spec's rules: a
/// header-token name, unique ignoring case, on a string, integer or boolean property reached
/// from the root through `properties` alone.
pub(crate) fn header_params(schema: &Value) -> Result<Vec<HeaderParam>, String> {
    let mut found = Vec::new();
    walk(schema, Some(&mut Vec::new()), &mut found)?;
    for (i, param) in found.iter().enumerate() {
        if found[..i]
            .iter()
            .any(|p: &HeaderParam| p.header.eq_ignore_ascii_case(&param.header))
        {
            return Err(format!("its x-mcp-header `{}` is used twice", param.header));
        }
    }
    Ok(found)
}

/// Visits one subschema; `path` is `Some` while the position is statically reachable.
fn walk(
    schema: &Value,
    path: Option<&mut Vec<String>>,
    found: &mut Vec<HeaderParam>,
) -> Result<(), String> {
    let Value::Object(object) = schema else {
        return Ok(());
    };
    if let Some(annotation) = object.get("x-mcp-header") {
        let Some(path) = path.as_deref() else {
            return Err("it has an x-mcp-header outside the plain `properties` chain".into());
        };
        if path.is_empty() {
            return Err("it has an x-mcp-header on the schema root".into());
        }
        let header = annotation
            .as_str()
            .filter(|h| !h.is_empty() && h.bytes().all(is_tchar))
            .ok_or_else(|| format!("its x-mcp-header {annotation} is not a header name"))?;
        let primitive = matches!(
            object.get("type").and_then(Value::as_str),
            Some("string" | "integer" | "boolean")
        );
        if !primitive {
            return Err(format!(
                "its x-mcp-header `{header}` is on a parameter that is not a string, integer or \
                 boolean"
            ));
        }
        found.push(HeaderParam {
            header: header.into(),
            path: path.clone(),
        });
    }
    let mut path = path;
    for (keyword, value) in object {
        if !SUBSCHEMA_KEYWORDS.contains(&keyword.as_str()) {
            continue;
        }
        match (keyword.as_str(), value, path.as_deref_mut()) {
            ("properties", Value::Object(properties), Some(reachable)) => {
                for (name, sub) in properties {
                    reachable.push(name.clone());
                    let result = walk(sub, Some(reachable), found);
                    reachable.pop();
                    result?;
                }
            }
            (
                "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas",
                Value::Object(map),
                _,
            ) => {
                for sub in map.values() {
                    walk(sub, None, found)?;
                }
            }
            (_, Value::Array(items), _) => {
                for sub in items {
                    walk(sub, None, found)?;
                }
            }
            (_, sub, _) => walk(sub, None, found)?,
        }
    }
    Ok(())
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A `CallToolResult` as the model's text.
pub(crate) fn tool_result(result: &Map<String, Value>) -> ToolResult {
    let structured = result.get("structuredContent").filter(|v| !v.is_null());
    let mut parts: Vec<String> = Vec::new();
    if let Some(structured) = structured {
        parts.push(structured.to_string());
    }
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for block in blocks {
        let kind = block
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let field = |key: &str| block.get(key).and_then(Value::as_str);
        match kind {
            "text" => {
                let text = field("text").unwrap_or_default();
                // A tool with structured content should also serialize it as text; the model
                // need not read it twice.
                let repeats = structured.is_some_and(|s| {
                    serde_json::from_str::<Value>(text).is_ok_and(|parsed| &parsed == s)
                });
                if !repeats {
                    parts.push(text.into());
                }
            }
            "image" | "audio" => parts.push(format!(
                "[{kind}: {}, {} bytes]",
                field("mimeType").unwrap_or("unknown type"),
                field("data").map_or(0, |d| d.len() / 4 * 3)
            )),
            "resource_link" => {
                let mut line = format!(
                    "[resource link: {} <{}>",
                    field("name").unwrap_or_default(),
                    field("uri").unwrap_or_default()
                );
                if let Some(mime) = field("mimeType") {
                    line.push_str(&format!(" ({mime})"));
                }
                if let Some(description) = field("description") {
                    line.push_str(&format!(": {description}"));
                }
                line.push(']');
                parts.push(line);
            }
            "resource" => {
                let resource = block.get("resource");
                let inner = |key: &str| resource.and_then(|r| r.get(key)).and_then(Value::as_str);
                let uri = inner("uri").unwrap_or_default();
                match inner("text") {
                    Some(text) => parts.push(format!("[resource {uri}]\n{text}")),
                    None => parts.push(format!(
                        "[resource {uri}: {}, {} bytes]",
                        inner("mimeType").unwrap_or("unknown type"),
                        inner("blob").map_or(0, |d| d.len() / 4 * 3)
                    )),
                }
            }
            other => parts.push(format!(
                "[{} content]",
                if other.is_empty() { "untyped" } else { other }
            )),
        }
    }
    ToolResult {
        text: parts.join("\n"),
        is_error: result
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn header_params_follow_the_properties_chain_only() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "deep": {"type": "object", "properties": {
                    "id": {"type": "integer", "x-mcp-header": "Id"}
                }},
                "x-mcp-header": {"type": "string"}
            }
        });
        let params = header_params(&schema).unwrap();
        assert_eq!(params.len(), 2);
        assert_eq!(params[0].path, ["deep", "id"]);
        assert_eq!(params[1].header, "Region");

        for bad in [
            json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"type": "object", "anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
            json!({"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A B"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
            json!({"type": "object", "properties": {
                "a": {"type": "string", "x-mcp-header": "Dup"},
                "b": {"type": "string", "x-mcp-header": "dup"}
            }}),
        ] {
            assert!(header_params(&bad).is_err(), "{bad}");
        }
        // Data keywords are not schemas.
        let data = json!({"type": "object", "default": {"x-mcp-header": "A"}});
        assert_eq!(header_params(&data).unwrap(), []);
    }

    #[test]
    fn header_values_come_from_the_arguments() {
        let param = HeaderParam {
            header: "Id".into(),
            path: alloc::vec!["deep".into(), "id".into()],
        };
        assert_eq!(
            param.value_in(&json!({"deep": {"id": 42}})).as_deref(),
            Some("42")
        );
        assert_eq!(param.value_in(&json!({"deep": {"id": null}})), None);
        assert_eq!(param.value_in(&json!({"deep": {}})), None);
        assert_eq!(param.value_in(&json!({"deep": {"id": 1e300}})), None);
    }

    #[test]
    fn results_read_as_the_model_needs_them() {
        let result = json!({
            "content": [
                {"type": "text", "text": "{\"a\":1}"},
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource_link", "uri": "file:///x", "name": "x", "mimeType": "text/plain"},
                {"type": "resource", "resource": {"uri": "file:///y", "text": "why"}},
                {"type": "hologram"}
            ],
            "structuredContent": {"a": 1},
            "isError": true
        });
        let read = tool_result(result.as_object().unwrap());
        assert!(read.is_error);
        assert_eq!(
            read.text,
            "{\"a\":1}\nhello\n[image: image/png, 3 bytes]\n[resource link: x <file:///x> (text/plain)]\n[resource file:///y]\nwhy\n[hologram content]"
        );
    }
}
