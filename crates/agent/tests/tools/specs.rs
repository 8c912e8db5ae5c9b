//! Specs and approval: what the built-in tools declare, and which of them ask first.

use super::*;

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
        let s = &spec.input_schema.to_value();
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
