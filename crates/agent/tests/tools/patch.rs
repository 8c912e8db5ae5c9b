//! apply_patch, in the Codex patch format.

use super::*;

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
