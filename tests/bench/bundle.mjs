// Section 2 of the bench: bundle sizes. The smallest app holding a streaming chat with approvals
// (tests/bench/bundle/*) bundled by esbuild (minified, ESM, browser, production), then measured
// raw, gzip level 9 and brotli quality 11. weft-sdk counts its glue JS and its .wasm; React apps
// are measured with React and react-dom left out (every React app pays for them; a weft app needs
// no framework) and, separately, with them in. Also the Worker's own upload
// (`wrangler deploy --dry-run --outdir`), and the Cloudflare Agents peer worker's for reference.

import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

import { build } from 'esbuild';

import { benchDir, log, root, run, toolchainEnv } from './lib/env.mjs';
import { parseWasm } from './lib/wasm-profile.mjs';

export function sizes(buf) {
  return {
    raw: buf.length,
    gzip: gzipSync(buf, { level: 9 }).length,
    brotli: brotliCompressSync(buf, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: buf.length } }).length,
  };
}

const add = (a, b) => ({ raw: a.raw + b.raw, gzip: a.gzip + b.gzip, brotli: a.brotli + b.brotli });

/** `pkg`: the package folder `weft-sdk` stands for (a one-dialect app's `weft-sdk/<dialect>`). */
async function bundle(entry, { sdkDir, external = [], pkg = '.' }) {
  const r = await build({
    entryPoints: [join(benchDir, 'bundle', entry)],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    outfile: join(benchDir, '.out', 'bundle.js'),
    external,
    alias: sdkDir ? { 'weft-sdk': join(sdkDir, pkg, 'index.mjs'), 'weft-sdk/ai': join(sdkDir, 'ai.mjs') } : {},
    define: { 'process.env.NODE_ENV': '"production"' },
    jsx: 'automatic',
    logLevel: 'silent',
    absWorkingDir: benchDir,
    metafile: true,
  });
  const js = r.outputFiles.find((f) => f.path.endsWith('.js'));
  return Buffer.from(js.contents);
}

export const APPS = [
  { name: 'weft-sdk (glue JS + wasm)', entry: 'weft.mjs', key: 'weft', wasm: true },
  // The same app on each one-dialect package (`weft-sdk/<dialect>`: its dialect unasked), and on
  // the five-dialect one.
  ...['loom', 'agentloop', 'agentchat', 'cueso', 'agui-client'].map((pkg) => ({
    name: `weft-sdk/${pkg} (one dialect; glue JS + wasm)`,
    entry: 'weft-one.mjs',
    key: `weft-${pkg}`,
    wasm: true,
    pkg,
  })),
  { name: 'weft-sdk/with-agui (all five dialects; glue JS + wasm)', entry: 'weft.mjs', key: 'weft-with-agui', wasm: true, pkg: 'with-agui' },
  { name: '@ai-sdk/react useChat', entry: 'ai-sdk-react.jsx', key: 'ai-sdk-react', react: true },
  {
    name: '@ai-sdk/react useChat over weft-sdk/ai `WeftChatTransport` (JS + weft-sdk wasm)',
    entry: 'weft-ai-react.jsx',
    key: 'weft-ai-react',
    react: true,
    wasm: true,
  },
  { name: 'Cloudflare Agents useAgentChat (@cloudflare/ai-chat/react + agents/react)', entry: 'cf-agents.jsx', key: 'cf-agents', react: true },
  { name: '@langchain/langgraph-sdk Client', entry: 'langgraph.mjs', key: 'langgraph' },
];

const REACT = ['react', 'react-dom', 'react-dom/client', 'react/jsx-runtime'];

/** Sizes of every app; `apps` limits which (keys). */
export async function bundleSizes({ sdkDir, apps = APPS.map((a) => a.key) }) {
  const out = {};
  for (const app of APPS.filter((a) => apps.includes(a.key))) {
    const pkg = app.pkg ?? '.';
    const js = await bundle(app.entry, { sdkDir, pkg, external: app.react ? REACT : [] });
    const r = { js: sizes(js) };
    if (app.wasm) {
      r.wasm = sizes(readFileSync(join(sdkDir, pkg, 'weft_sdk_bg.wasm')));
      r.total = add(r.js, r.wasm);
    } else r.total = r.js;
    if (app.react) {
      r.withReact = sizes(await bundle(app.entry, { sdkDir, pkg }));
      if (r.wasm) r.withReact = add(r.withReact, r.wasm);
    }
    out[app.key] = { name: app.name, ...r };
  }
  return out;
}

/**
 * Pieces that are not apps: weft-sdk/ai alone, every export, minified (it imports nothing, so
 * this is what the subpath adds to an app that has weft-sdk and the AI SDK already).
 */
export async function bundleParts({ sdkDir }) {
  return { 'weft-ai': { name: 'weft-sdk/ai (every export)', js: sizes(await bundle('weft-ai-subpath.mjs', { sdkDir })) } };
}

function dirSizes(dir) {
  const files = [];
  const walk = (d) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else {
        const buf = readFileSync(p);
        const entry = { file: p.slice(dir.length + 1), ...sizes(buf) };
        // A wasm's sections, with what each weighs compressed on its own.
        if (p.endsWith('.wasm'))
          entry.sections = parseWasm(buf)
            .sections.filter((x) => x.size > 1000)
            .map((x) => ({ section: x.name, bytes: x.size }));
        files.push(entry);
      }
    }
  };
  walk(dir);
  return files;
}

/**
 * `wrangler deploy --dry-run --outdir` in `cwd`; returns wrangler's own "Total Upload" line and
 * our measure of the files it wrote. Needs no network (checked: it runs offline here).
 */
export async function workerUpload(cwd, outdir, env = {}) {
  mkdirSync(outdir, { recursive: true });
  const t0 = performance.now();
  const r = await run('npx', ['wrangler', 'deploy', '--dry-run', '--outdir', outdir], { cwd, env: toolchainEnv(env) });
  const ms = performance.now() - t0;
  const text = r.stdout + r.stderr;
  const m = text.match(/Total Upload:\s*([\d.]+)\s*KiB\s*\/\s*gzip:\s*([\d.]+)\s*KiB/);
  const files = dirSizes(outdir);
  const total = files.reduce((a, f) => add(a, f), { raw: 0, gzip: 0, brotli: 0 });
  log(`bundle: dry-run in ${cwd.slice(root.length) || '.'}: ${m ? m[0] : 'no Total Upload line'} (${(ms / 1000).toFixed(0)} s)`);
  return { wrangler: m ? { rawKiB: Number(m[1]), gzipKiB: Number(m[2]), line: m[0] } : null, files, total };
}
