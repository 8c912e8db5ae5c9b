#!/usr/bin/env node
// Removes the `name` custom section (function names) from a wasm file, in place, and the two
// custom sections no runtime reads (`producers`: the toolchain's versions; `target_features`:
// what the compiler assumed, for wasm-bindgen and wasm-opt, which have run by then).
//
//   node scripts/strip-wasm-names.mjs worker/build/index_bg.wasm
//
// worker-build always runs wasm-opt with --debuginfo, so the Worker it builds ships a quarter
// of a megabyte of function names: wrangler's build step (worker/wrangler.toml) strips them
// from what is uploaded. Names only serve stack traces and profiles: set WEFT_KEEP_WASM_NAMES=1
// to keep them (the benchmark does, to attribute its CPU profile to functions).
import { readFileSync, writeFileSync } from 'node:fs';
import { sections } from './wasm-sections.mjs';

const file = process.argv[2];
if (!file) {
  console.error('usage: strip-wasm-names.mjs <file.wasm>');
  process.exit(2);
}
if (process.env.WEFT_KEEP_WASM_NAMES === '1') process.exit(0);

const UNUSED = new Set(['name', 'producers', 'target_features']);
const bytes = readFileSync(file);
const kept = [bytes.subarray(0, 8)];
let removed = 0;
try {
  for (const s of sections(bytes)) {
    if (s.name !== null && UNUSED.has(s.name)) removed += s.end - s.start;
    else kept.push(bytes.subarray(s.start, s.end));
  }
} catch (e) {
  console.error(`${file}: ${e instanceof Error ? e.message : e}`);
  process.exit(1);
}
if (removed) {
  writeFileSync(file, Buffer.concat(kept));
  console.log(`${file}: removed the name, producers and target_features sections (${(removed / 1000).toFixed(1)} KB)`);
}
