// What the browser SDK's wasm must not carry: the server's half of the protocol crate, the JSON
// parser, writer and formatting the client has smaller ones for, and panic messages. Checked on
// the published build itself (scripts/build-sdk, wasm-opt included) built once more keeping its
// function names (`--keep-names`: the same code, demangled names in a name section); the cargo
// build is the one scripts/build-sdk already made, so this costs wasm-bindgen and wasm-opt only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseWasm } from '../../scripts/wasm-sections.mjs';

const root = new URL('../..', import.meta.url).pathname;

/** Functions, by demangled path, and why the SDK has no use for them. */
/** @type {[RegExp, string][]} */
const FORBIDDEN = [
  [/serde_json::/, 'serde_json: frames are read by weft_protocol::json, values written by its ObjectWriter, arbitrary JSON kept as RawJson text'],
  [/serde::ser::|as serde_core::ser::Serialize>/, "serde's serializers: what goes to JavaScript is written by to_json methods"],
  [/core::num::dec2flt/, "core's float parser (15 KB of tables): weft_protocol::json reads floats itself"],
  [/^core::fmt::write$|^alloc::fmt::format|core::fmt::Formatter>::pad/, 'the formatting engine: messages are joined by concatenation'],
  [/core::panicking::panic_fmt|rust_begin_unwind/, 'panic messages: the build aborts at once'],
  [/decode_request/, "server side: a client's frame to a command"],
  [/weft_protocol::dialect::Encoder>::encode|weft_protocol::sequencer::/, "server side: events to a dialect's frames"],
  // The AI SDK's encoder (`dialect::aisdk`) is not here: `weft-sdk/ai` takes its UI message
  // chunks from it (issue 42), so it is the client's too.
  [/weft_protocol::dialect::aisdk::(ChatRequest|sse)/, "server side: the AI SDK endpoint's requests and its SSE framing"],
];

test("the SDK's wasm links no server-side protocol code, no second JSON parser and no formatting", () => {
  const out = mkdtempSync(join(tmpdir(), 'weft-sdk-names-'));
  try {
    execFileSync(join(root, 'scripts/build-sdk'), ['--out', out, '--keep-names'], { cwd: root, stdio: 'pipe' });
    const { bodies } = parseWasm(readFileSync(join(out, 'weft_sdk_bg.wasm')));
    // Crate disambiguators (`core[c5930c85]`) and symbol hashes (`::h0123…`) left out.
    const names = bodies.map((b) => ({ ...b, name: b.name.replace(/\[[0-9a-f]+\]/g, '').replace(/::h[0-9a-f]{16}$/, '') }));
    assert.ok(names.filter((b) => !b.name.startsWith('func')).length > 500, 'the build keeps its function names');
    assert.ok(
      names.some((b) => /weft_protocol::json::Reader/.test(b.name)),
      'the names are demangled paths',
    );
    const found = [];
    for (const [re, why] of FORBIDDEN) {
      for (const b of names.filter((b) => re.test(b.name))) found.push(`${b.name} (${b.size} bytes): ${why}`);
    }
    assert.deepEqual(found, []);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

// Each dialect's codec inlines into the decoder that calls it, so its functions have no names of
// their own in the wasm; the frame types only its decoder reads do, as strings in the data.
/** A frame type (or envelope) only that dialect's decoder reads. */
const MARKS = { loom: 'run_stream_event', agentloop: 'response_item', agentchat: 'agent_thinking', cueso: 'content_delta', agui: 'TEXT_MESSAGE_CONTENT' };
/** The packages (folders of pkg/, as scripts/build-sdk writes them) and the dialects each speaks. */
const PACKAGES = {
  '.': ['loom', 'agentloop', 'agentchat', 'cueso'],
  'with-agui': Object.keys(MARKS),
  loom: ['loom'],
  agentloop: ['agentloop'],
  agentchat: ['agentchat'],
  cueso: ['cueso'],
  'agui-client': ['agui'],
};

test('each package links the decoders of its dialects and of no other', () => {
  for (const [dir, dialects] of Object.entries(PACKAGES)) {
    const wasm = readFileSync(join(root, 'pkg', dir, 'weft_sdk_bg.wasm')).toString('latin1');
    const linked = Object.keys(MARKS).filter((d) => wasm.includes(MARKS[d]));
    assert.deepEqual(linked, dialects, `pkg/${dir}`);
  }
});
