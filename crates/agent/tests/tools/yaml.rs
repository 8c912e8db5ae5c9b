//! The YAML emitter that shows tool specs.

use super::*;

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
        input_schema: json!({}).into(),
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
