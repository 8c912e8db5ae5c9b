//! The registry: built-ins and client tools, and the rules for declaring one.

use super::*;

fn client_tool(name: &str, read_only: bool) -> ToolSpec {
    ToolSpec {
        name: name.to_string(),
        description: Some(format!("client tool {name}")),
        input_schema: json!({"type": "object", "properties": {"cmd": {"type": "string"}}}).into(),
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
    bad_schema.input_schema = json!("string").into();
    let err = registry.add_client_tool(bad_schema.clone()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid input_schema of tool \"bad\": it must be a JSON object"
    );
    bad_schema.input_schema = json!({"type": "array"}).into();
    assert_eq!(
        registry
            .add_client_tool(bad_schema)
            .unwrap_err()
            .to_string(),
        "invalid input_schema of tool \"bad\": its \"type\" must be \"object\": a tool takes an \
         object of named arguments"
    );
    let mut untyped = client_tool("untyped", true);
    untyped.input_schema = json!({}).into();
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
