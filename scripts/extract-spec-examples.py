#!/usr/bin/env python3
"""Collects every JSON example of the five spec documents into one JSONL file of test vectors.

Usage: scripts/extract-spec-examples.py <specs-dir> > crates/protocol/tests/fixtures/spec-examples.jsonl

Examples are the ```json blocks (one object per block, or one per line for NDJSON blocks) and
the `Client: {...}` / `Server: {...}` lines of the example flows. Each output line is
{"doc": <file>, "line": <line in the doc>, "frame": <the example>}.
"""
import json
import pathlib
import re
import sys

DOCS = [
    "loom-websocket-api.md",
    "loom-stream-protocol.md",
    "agentloop-websocket.md",
    "agentchat-websocket.md",
    "cueso-websocket.md",
]


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
    for doc in DOCS:
        for line, frame in examples((root / doc).read_text()):
            print(json.dumps({"doc": doc, "line": line, "frame": frame}, ensure_ascii=False))


if __name__ == "__main__":
    main()
