// Builds what the bench measures: the weft-sdk package (as scripts/build-sdk does, into a
// folder of the bench's own so pkg/ is left alone) and the native bench binary
// (tests/bench/native: the stream generator and the native measurements).

import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { benchDir, root, run, targetDir, toolchainEnv } from './env.mjs';

/**
 * The SDK package to measure. `mode` "build": release build + wasm-bindgen + wasm-opt -Oz (the
 * published build) into `out`; "pkg": the repo's pkg/ as it is (scripts/build-sdk's output).
 */
export async function sdkPackage(mode, out) {
  if (mode === 'pkg') {
    if (!existsSync(join(root, 'pkg/weft_sdk_bg.wasm'))) throw new Error('pkg/ is not built: run scripts/build-sdk first');
    return { dir: join(root, 'pkg'), how: 'pkg/ as built by scripts/build-sdk' };
  }
  const env = toolchainEnv({ CARGO_TARGET_DIR: targetDir() });
  await run('cargo', ['build', '--release', '--locked', '--target', 'wasm32-unknown-unknown', '-p', 'weft-sdk'], { env });
  mkdirSync(out, { recursive: true });
  const wasm = join(targetDir(), 'wasm32-unknown-unknown/release/weft_sdk.wasm');
  await run('wasm-bindgen', ['--target', 'web', '--out-dir', out, '--out-name', 'weft_sdk', wasm], { env });
  await run(join(root, 'node_modules/.bin/wasm-opt'), ['-Oz', '--strip-debug', '--strip-producers',
    '--enable-bulk-memory', '--enable-nontrapping-float-to-int', '--enable-sign-ext',
    '--enable-reference-types', '--enable-multivalue', '--enable-mutable-globals',
    join(out, 'weft_sdk_bg.wasm'), '-o', join(out, 'weft_sdk_bg.wasm')], { env });
  for (const f of ['index.mjs', 'node.mjs', 'index.d.mts', 'ai.mjs', 'ai.d.mts', 'package.json']) copyFileSync(join(root, 'pkg', f), join(out, f));
  // The same build keeping its function names (wasm-opt -g), for profiles: same code bytes.
  const named = `${out}-named`;
  await run('wasm-bindgen', ['--keep-debug', '--target', 'web', '--out-dir', named, '--out-name', 'weft_sdk', wasm], { env });
  await run(join(root, 'node_modules/.bin/wasm-opt'), ['-Oz', '-g', '--strip-dwarf', '--strip-producers',
    '--enable-bulk-memory', '--enable-nontrapping-float-to-int', '--enable-sign-ext',
    '--enable-reference-types', '--enable-multivalue', '--enable-mutable-globals',
    join(named, 'weft_sdk_bg.wasm'), '-o', join(named, 'weft_sdk_bg.wasm')], { env });
  for (const f of ['index.mjs', 'node.mjs', 'index.d.mts', 'ai.mjs', 'ai.d.mts', 'package.json']) copyFileSync(join(root, 'pkg', f), join(named, f));
  return { dir: out, named, how: 'cargo build --release -p weft-sdk (wasm32) + wasm-bindgen --target web + wasm-opt -Oz, as scripts/build-sdk' };
}

/** Builds tests/bench/native; returns the binary's path. `release` false: a debug build (smoke). */
export async function nativeBinary({ release = true } = {}) {
  const env = toolchainEnv({ CARGO_TARGET_DIR: targetDir() });
  const manifest = join(benchDir, 'native/Cargo.toml');
  await run('cargo', ['build', '--quiet', '--locked', '--manifest-path', manifest, ...(release ? ['--release'] : [])], { env });
  return join(targetDir(), release ? 'release' : 'debug', 'weft-bench');
}

/** Runs the generator into `dir`; returns its meta.json. */
export async function generate(bin, dir, { steps, stepsPerMessage, deltas = 100, fragments = 10 }) {
  await run(bin, ['gen', '--out', dir, '--steps', String(steps), '--steps-per-message', String(stepsPerMessage),
    '--deltas', String(deltas), '--fragments', String(fragments)]);
  return JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8'));
}
