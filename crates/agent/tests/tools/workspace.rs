//! Paths, and the tools on the session workspace: read, ls, write.

use super::*;

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
    fn read(&self, path: &str) -> Result<Option<String>, String> {
        self.0.read(path)
    }
    fn write(&mut self, _: &str, _: &str) -> Result<(), String> {
        Err("storage quota exceeded".into())
    }
    fn delete(&mut self, path: &str) -> Result<bool, String> {
        self.0.delete(path)
    }
    fn list(&self) -> Result<Vec<(String, usize)>, String> {
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

/// A store that cannot be read or deleted from, like a Durable Object whose SQLite fails.
struct BrokenStore;

impl Workspace for BrokenStore {
    fn read(&self, path: &str) -> Result<Option<String>, String> {
        Err(format!("could not read {path}: disk I/O error"))
    }
    fn write(&mut self, _: &str, _: &str) -> Result<(), String> {
        Ok(())
    }
    fn delete(&mut self, path: &str) -> Result<bool, String> {
        Err(format!("could not delete {path}: disk I/O error"))
    }
    fn list(&self) -> Result<Vec<(String, usize)>, String> {
        Err("could not list the files: disk I/O error".into())
    }
}

struct BrokenHost(BrokenStore);

impl ToolHost for BrokenHost {
    fn workspace(&mut self) -> &mut dyn Workspace {
        &mut self.0
    }
    fn now_ms(&self) -> i64 {
        0
    }
}

/// A failed read is not a missing file nor an empty workspace: the model is told it failed.
#[test]
fn a_store_that_cannot_be_read_is_not_an_empty_one() {
    let mut host = BrokenHost(BrokenStore);
    let listing = ToolRun::error("could not list the files: disk I/O error");
    assert_eq!(
        run_builtin("read", &json!({"path": "a"}), &mut host),
        ToolRun::error("could not read a: disk I/O error")
    );
    assert_eq!(run_builtin("ls", &json!({}), &mut host), listing);
    assert_eq!(
        run_builtin("write", &json!({"path": "a", "content": "x"}), &mut host),
        listing
    );
    let patch = "*** Begin Patch\n*** Add File: new\n+x\n*** End Patch";
    assert_eq!(
        run_builtin("apply_patch", &json!({ "patch": patch }), &mut host),
        listing
    );
}

/// A deletion that fails mid-patch is reported, with what was done, instead of passing for done.
#[test]
fn a_deletion_that_fails_stops_the_patch_and_says_so() {
    struct NoDelete(MemoryWorkspace);
    impl Workspace for NoDelete {
        fn read(&self, path: &str) -> Result<Option<String>, String> {
            self.0.read(path)
        }
        fn write(&mut self, path: &str, content: &str) -> Result<(), String> {
            self.0.write(path, content)
        }
        fn delete(&mut self, path: &str) -> Result<bool, String> {
            Err(format!("could not delete {path}: disk I/O error"))
        }
        fn list(&self) -> Result<Vec<(String, usize)>, String> {
            self.0.list()
        }
    }
    struct Host(NoDelete);
    impl ToolHost for Host {
        fn workspace(&mut self) -> &mut dyn Workspace {
            &mut self.0
        }
        fn now_ms(&self) -> i64 {
            0
        }
    }
    let mut host = Host(NoDelete(MemoryWorkspace::with_files([("old", "x\n")])));
    let patch = "*** Begin Patch\n*** Delete File: old\n*** Add File: new\n+x\n*** End Patch";
    assert_eq!(
        run_builtin("apply_patch", &json!({ "patch": patch }), &mut host),
        ToolRun::error(
            "cannot delete old: could not delete old: disk I/O error; the patch was applied \
             only in part (done: nothing)"
        )
    );
    assert!(host.0 .0.files.contains_key("old") && !host.0 .0.files.contains_key("new"));
}
