// Builds what the bench measures: the weft-sdk package (as scripts/build-sdk does, into a
// folder of the bench's own so pkg/ is left alone) and the native bench binary
// (tests/bench/native: the stream generator and the native measurements).

import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { benchDir, root, run, targetDir, toolchainEnv } from './env.mjs';

/** The packages of weft-sdk besides its root, each a folder of it (scripts/build-sdk's names). */
export const SUBPACKAGES = ['with-agui', 'loom', 'agentloop', 'agentchat', 'cueso', 'agui-client'];

/**
 * The SDK package to measure. `mode` "build": release build + wasm-bindgen + wasm-opt (the
 * published build) into `out`; "pkg": the repo's pkg/ as it is (scripts/build-sdk's output).
 */
export async function sdkPackage(mode, out) {
  if (mode === 'pkg') {
    if (!existsSync(join(root, 'pkg/weft_sdk_bg.wasm'))) throw new Error('pkg/ is not built: run scripts/build-sdk first');
    return { dir: join(root, 'pkg'), how: 'pkg/ as built by scripts/build-sdk' };
  }
  // scripts/build-sdk's own recipe (the published build), once as published and once keeping
  // its function names for profiles (wasm-opt -g: the same code bytes); the second reuses the
  // first's cargo build.
  const env = toolchainEnv({ CARGO_TARGET_DIR: targetDir() });
  const named = `${out}-named`;
  await run(join(root, 'scripts/build-sdk'), ['--out', out], { env });
  await run(join(root, 'scripts/build-sdk'), ['--out', named, '--keep-names'], { env });
  for (const dir of [out, named]) {
    for (const f of ['index.mjs', 'node.mjs', 'index.d.mts', 'ai.mjs', 'ai.d.mts', 'package.json']) copyFileSync(join(root, 'pkg', f), join(dir, f));
  }
  // The other packages, each in its folder as in pkg/ (build-sdk copies the entry modules);
  // loom's once more with its names, for the one-dialect profile.
  for (const name of SUBPACKAGES) await run(join(root, 'scripts/build-sdk'), ['--only', name, '--out', join(out, name)], { env });
  await run(join(root, 'scripts/build-sdk'), ['--only', 'loom', '--out', join(named, 'loom'), '--keep-names'], { env });
  return {
    dir: out,
    named,
    how: 'scripts/build-sdk (cargo build --release -Zbuild-std with immediate-abort panics, wasm32; wasm-bindgen --target web; wasm-opt --flatten --rereloop -Oz -Oz)',
  };
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
  await run(bin, [
    'gen',
    '--out',
    dir,
    '--steps',
    String(steps),
    '--steps-per-message',
    String(stepsPerMessage),
    '--deltas',
    String(deltas),
    '--fragments',
    String(fragments),
  ]);
  return JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8'));
}
