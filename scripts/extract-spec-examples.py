#!/usr/bin/env python3
"""Collects every JSON example of the dialects' spec documents into one JSONL file of test vectors.

Usage: scripts/extract-spec-examples.py <specs-dir> > crates/protocol/tests/fixtures/spec-examples.jsonl

The documents are the ones each dialect's description lists (`documents` of the `DIALECT` const
in its module of crates/protocol/src/dialect), in the order of `DESCRIPTIONS`: a new dialect's
documents are collected without a change here, and the spec_examples test checks the vectors
cover exactly those documents.

Examples are the ```json blocks (one object per block, or one per line for NDJSON blocks) and
the `Client: {...}` / `Server: {...}` lines of the example flows. Each output line is
{"doc": <file>, "line": <line in the doc>, "frame": <the example>}.
"""
import json
import pathlib
import re
import sys

DIALECTS = pathlib.Path(__file__).resolve().parent.parent / "crates/protocol/src/dialect"


def documents():
    """The documents of every dialect, read from the descriptions in the Rust source."""
    listing = (DIALECTS / "description.rs").read_text()
    table = re.search(r"const DESCRIPTIONS: \[&?Description; \d+\] = \[(.*?)\];", listing, re.S)
    modules = re.findall(r"&?(\w+)::DIALECT", table.group(1))
    docs = []
    for module in modules:
        # The module is a file, or a folder whose const may sit in any of its files.
        path = DIALECTS / f"{module}.rs"
        paths = [path] if path.exists() else sorted((DIALECTS / module).glob("*.rs"))
        source = "".join(p.read_text() for p in paths)
        const = source[source.index("pub const DIALECT: Description") :]
        listed = re.search(r"documents: &\[(.*?)\]", const, re.S).group(1)
        docs += re.findall(r'"([^"]+)"', listed)
    if not docs:
        sys.exit("extract-spec-examples: no dialect lists a document")
    return docs


def examples(text):
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1), i + 1
        j = start
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        block = lines[start:j]
        if lang == "json":
            whole = "\n".join(block)
            try:
                yield start + 1, json.loads(whole)
            except json.JSONDecodeError:
                for k, line in enumerate(block):
                    if line.strip():
                        yield start + k + 1, json.loads(line)
        else:
            for k, line in enumerate(block):
                fm = re.match(r"^(Client|Server): (\{.*\})\s*$", line)
                if fm:
                    try:
                        yield start + k + 1, json.loads(fm.group(2))
                    except json.JSONDecodeError:
                        pass  # flow lines abbreviated with "..." are prose, not examples
        i = j + 1


def main():
    root = pathlib.Path(sys.argv[1])
    for doc in documents():
        for line, frame in examples((root / doc).read_text()):
            print(json.dumps({"doc": doc, "line": line, "frame": frame}, ensure_ascii=False))


if __name__ == "__main__":
    main()
