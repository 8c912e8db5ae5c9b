// What the browser SDK's wasm must not carry: the server's half of the protocol crate and the
// parsers the client has its own smaller ones for. Read from the names of the cargo build that
// scripts/build-sdk made (before wasm-bindgen and wasm-opt; the same functions, names kept).
// Rust mangles a path as length-prefixed segments (`10serde_json2de`) in both of its schemes,
// so a segment sequence names a module or function without demangling.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseWasm } from "../../scripts/wasm-sections.mjs";

const root = new URL("../..", import.meta.url).pathname;
const target = process.env.CARGO_TARGET_DIR ?? join(root, "target");
const wasm = join(target, "sdk/wasm32-unknown-unknown/release/weft_sdk.wasm");

/** Mangled segment sequences, and why the SDK has no use for what they name. */
const FORBIDDEN = [
  ["10serde_json2de", "serde_json's deserializer: frames are read by weft_protocol::json"],
  ["10serde_json4read", "serde_json's deserializer: frames are read by weft_protocol::json"],
  ["10serde_json5value", "serde_json's Value: arbitrary JSON is weft_protocol::json::RawJson"],
  ["7dec2flt", "core's float parser (15 KB of tables): weft_protocol::json reads floats itself"],
  ["14decode_request", "server side: a client's frame to a command"],
  ["7Encoder6encode", "server side: events to a dialect's frames"],
  ["9sequencer", "server side: stamping run events"],
  ["5aisdk", "server side: the AI SDK endpoint's codec"],
];

/** A mangled name's length-prefixed segments joined as a path, for the failure message. */
function segments(name) {
  const out = [];
  let i = 0;
  while (i < name.length) {
    const m = /^(\d+)_?/.exec(name.slice(i));
    const len = m ? Number(m[1]) : 0;
    const start = m ? i + m[0].length : i;
    if (m && len > 1 && /^[A-Za-z_]/.test(name[start] ?? "")) {
      out.push(name.slice(start, start + len));
      i = start + len;
    } else {
      i += m ? m[0].length : 1;
    }
  }
  return out.filter((s) => !/^h[0-9a-f]{16}$/.test(s)).join("::");
}

test("the SDK's wasm links no server-side protocol code and no second JSON parser", () => {
  assert.ok(existsSync(wasm), `${wasm} is missing: run scripts/build-sdk first`);
  const { bodies } = parseWasm(readFileSync(wasm));
  const named = bodies.filter((b) => !b.name.startsWith("func"));
  assert.ok(named.length > 1000, `the build keeps its function names (${named.length} named)`);
  const found = [];
  for (const [segment, why] of FORBIDDEN) {
    for (const b of named.filter((b) => b.name.includes(segment))) {
      found.push(`${segments(b.name)} (${b.size} bytes): ${why}`);
    }
  }
  assert.deepEqual(found, []);
});
