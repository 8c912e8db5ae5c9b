#!/usr/bin/env node
// Removes the `name` custom section (function names) from a wasm file, in place.
//
//   node scripts/strip-wasm-names.mjs worker/build/index_bg.wasm
//
// worker-build always runs wasm-opt with --debuginfo, so the Worker it builds ships a quarter
// of a megabyte of function names: wrangler's build step (worker/wrangler.toml) strips them
// from what is uploaded. Names only serve stack traces and profiles: set WEFT_KEEP_WASM_NAMES=1
// to keep them (the benchmark does, to attribute its CPU profile to functions).
//
// The wasm binary format: an 8-byte header, then sections, each one id byte and a LEB128 size;
// a custom section (id 0) starts with its name, a LEB128 length and UTF-8 bytes.
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) {
  console.error('usage: strip-wasm-names.mjs <file.wasm>');
  process.exit(2);
}
if (process.env.WEFT_KEEP_WASM_NAMES === '1') process.exit(0);

const bytes = readFileSync(file);
if (bytes.length < 8 || bytes.readUInt32LE(0) !== 0x6d736100) {
  console.error(`${file}: not a wasm module`);
  process.exit(1);
}

/** Reads an unsigned LEB128 at `at`: [value, position after it]. */
function leb(at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    if (at >= bytes.length) throw new Error(`${file}: truncated at byte ${at}`);
    const b = bytes[at++];
    value += (b & 0x7f) * 2 ** shift;
    if (!(b & 0x80)) return [value, at];
    shift += 7;
  }
}

const kept = [bytes.subarray(0, 8)];
let removed = 0;
let at = 8;
while (at < bytes.length) {
  const start = at;
  const id = bytes[at];
  const [size, body] = leb(at + 1);
  const end = body + size;
  if (end > bytes.length) throw new Error(`${file}: section at byte ${start} runs past the end`);
  let drop = false;
  if (id === 0) {
    const [len, nameAt] = leb(body);
    drop = bytes.toString('utf8', nameAt, nameAt + len) === 'name';
  }
  if (drop) removed += end - start;
  else kept.push(bytes.subarray(start, end));
  at = end;
}
if (removed) {
  writeFileSync(file, Buffer.concat(kept));
  console.log(`${file}: removed the name section (${(removed / 1000).toFixed(1)} KB)`);
}
