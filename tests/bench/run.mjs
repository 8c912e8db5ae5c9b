#!/usr/bin/env node
// `npm run bench`: weft against its peers, measured in the same run on the same machine. Prints a
// table and rewrites BENCHMARKS.md at the repository root (medians with min–max over the runs,
// ratios computed pair by pair within a repetition, machine, versions and commands recorded).
// Raw results go to tests/bench/.out/results.json; `--report-only` rewrites the report from it.
//
//   node tests/bench/run.mjs [--runs 5] [--sections client,bundle,server,native,storage,mcp,remote]
//                            [--quick] [--out FILE] [--json FILE] [--report-only] [--only REGEX]
//                            [--sdk DIR]
//
// --quick is the smoke run (`npm run bench:smoke`, tests/bench/smoke.mjs): a tiny input (the golden
// fixtures of crates/protocol as the stream), one run, pkg/ as built, no Rust build, no weft
// Worker (the peers' worker only), no report at the root unless --out says where. --sdk measures
// a weft-sdk package built already (scripts/build-sdk --out DIR, the entry modules beside it;
// DIR-named, if there, for the profiles): another commit's, to compare in the same bench.

import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, freemem, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';

import { bundleParts, bundleSizes, workerUpload } from './bundle.mjs';
import { clientBench } from './client.mjs';
import { mcpBench } from './mcp.mjs';
import { remoteBench } from './remote.mjs';
import { generate, nativeBinary, sdkPackage } from './lib/build.mjs';
import { benchDir, log, root, run, targetDir, toolchainEnv } from './lib/env.mjs';
import { mergeReports, report } from './lib/report.mjs';
import { wasmProfile } from './lib/wasm-profile.mjs';
import { serverBench } from './server.mjs';
import { storageBench } from './storage.mjs';

const DIALECTS = ['loom', 'agentloop', 'agentchat', 'cueso'];
/** The frames the page loads: the chat dialects', and AG-UI's (the WeftAgent / HttpAgent rows). */
const LOADED = [...DIALECTS, 'agui'];

function parseArgs(argv) {
  const o = {
    runs: 5,
    sections: ['client', 'bundle', 'server', 'native', 'storage', 'mcp', 'remote'],
    quick: false,
    out: join(root, 'BENCHMARKS.md'),
    json: join(benchDir, '.out/results.json'),
    reportOnly: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === '--runs') o.runs = Number(v());
    else if (a === '--sections') o.sections = v().split(',');
    else if (a === '--quick') o.quick = true;
    else if (a === '--out') o.out = v();
    else if (a === '--json') o.json = v();
    else if (a === '--report-only') o.reportOnly = true;
    else if (a === '--merge') o.merge = true;
    else if (a === '--only') o.only = new RegExp(v());
    else if (a === '--sdk') o.sdk = v();
    else throw new Error(`unknown argument ${a}`);
  }
  if (o.quick) o.runs = Math.min(o.runs, 1);
  return o;
}

function tryRun(cmd, args, opts) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], ...opts }).trim();
  } catch {
    return null;
  }
}

function pkgVersion(name) {
  for (const base of [join(benchDir, 'node_modules'), join(root, 'node_modules')]) {
    const p = join(base, name, 'package.json');
    if (existsSync(p)) return JSON.parse(readFileSync(p, 'utf8')).version;
  }
  return null;
}

function machine() {
  const cpu = cpus();
  const env = toolchainEnv();
  return {
    date: new Date().toISOString(),
    cpu: `${cpu[0]?.model ?? '?'} × ${cpu.length}`,
    memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB (${(freemem() / 2 ** 30).toFixed(1)} GiB free at start)`,
    os: `${process.platform} ${release()}`,
    load: tryRun('cat', ['/proc/loadavg'])?.split(' ').slice(0, 3).join(' '),
    node: process.version,
    rustc: tryRun('rustc', ['--version'], { env }),
    wrangler: pkgVersion('wrangler'),
    esbuild: pkgVersion('esbuild'),
    playwright: pkgVersion('playwright-core'),
    weft: `${tryRun('git', ['rev-parse', '--short', 'HEAD'], { cwd: root }) ?? '?'}${tryRun('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root }) ? ' (with uncommitted changes)' : ''}`,
    peers: Object.fromEntries(
      ['ai', '@ai-sdk/react', '@ai-sdk/openai', 'agents', '@cloudflare/ai-chat', '@langchain/langgraph-sdk', '@ag-ui/client', 'react', 'react-dom', 'zod'].map(
        (n) => [n, pkgVersion(n)],
      ),
    ),
  };
}

/** The tiny input of --quick: the golden fixtures of every dialect, one stream. */
function goldenDataset(dir) {
  const fixtures = join(root, 'crates/protocol/tests/fixtures');
  for (const d of LOADED) {
    mkdirSync(join(dir, 'tiny'), { recursive: true });
    const text = ['plain-reply', 'tool-call', 'approval-granted'].map((n) => readFileSync(join(fixtures, d, `${n}.jsonl`), 'utf8').trim()).join('\n');
    writeFileSync(join(dir, 'tiny', `${d}.jsonl`), `${text}\n`);
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.reportOnly) {
    const results = JSON.parse(readFileSync(o.json, 'utf8'));
    const { markdown, table } = report(results);
    writeFileSync(o.out, markdown);
    process.stdout.write(`${table}\n`);
    log(`report rewritten: ${o.out}`);
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'weft-bench-'));
  let measured = [];
  const results = { quick: o.quick, runs: o.runs, machine: machine(), commands: [], sections: {} };
  const cmd = (c) => results.commands.push(c);
  const t0 = performance.now();
  try {
    // What to measure: the SDK as published (or pkg/ as built, for --quick).
    let sdk = null;
    if (o.sections.includes('client') || o.sections.includes('bundle')) {
      log(o.sdk ? `using ${o.sdk}` : o.quick ? 'using pkg/ as built' : 'building weft-sdk (release, scripts/build-sdk) into a folder of the bench');
      sdk = o.sdk
        ? { dir: o.sdk, named: existsSync(`${o.sdk}-named`) ? `${o.sdk}-named` : undefined, how: `${o.sdk} as given (--sdk)` }
        : await sdkPackage(o.quick ? 'pkg' : 'build', join(work, 'sdk'));
      cmd(`weft-sdk: ${sdk.how}`);
    }
    let bin = null;
    if (!o.quick && (o.sections.includes('client') || o.sections.includes('native'))) {
      log('building tests/bench/native (release)');
      bin = await nativeBinary({ release: true });
      cmd(
        `cargo build --release --locked --manifest-path tests/bench/native/Cargo.toml (CARGO_TARGET_DIR=${targetDir().startsWith(root) ? `./${targetDir().slice(root.length)}` : targetDir()})`,
      );
    }

    // 1. client stream processing
    if (o.sections.includes('client')) {
      const data = join(work, 'data');
      const main = [
        ...DIALECTS.flatMap((d) => [`floor:${d}`, `weft-push:${d}`, `weft-pushMany:${d}`]),
        'ai-objects',
        'ai-sse',
        'tasks',
        'cf-agents',
        'weft-client',
        'weft-ai',
        'weft-ai-replay',
        'tasks-paced',
        'cf-agents-paced',
        'weft-ai-paced:0',
        'weft-ai-paced:4',
        'weft-ai-paced',
        'weft-ai-paced:50',
        'agui-socket',
        'agui-sse',
      ];
      const growth = [
        'floor:loom',
        'weft-push:loom',
        'weft-pushMany:loom',
        'floor:cueso',
        'weft-push:cueso',
        'weft-pushMany:cueso',
        'ai-objects',
        'ai-sse',
        'cf-agents',
        'weft-client',
        'weft-ai',
      ];
      // --only <regex>: measure just the contestants it matches (while working on one of them).
      if (o.only) for (const list of [main, growth]) list.splice(0, list.length, ...list.filter((c) => o.only.test(c)));
      let datasets;
      const meta = {};
      if (o.quick) {
        goldenDataset(data);
        datasets = [{ name: 'tiny', contestants: main }];
      } else {
        const full = { steps: 2000, stepsPerMessage: 10 };
        meta.full = await generate(bin, join(data, 'full'), full);
        cmd(`weft-bench gen --steps ${full.steps} --steps-per-message ${full.stepsPerMessage} --deltas 100 --fragments 10`);
        datasets = [{ name: 'full', contestants: main, kind: 'main' }];
        for (const s of [10, 100, 200]) {
          meta[`growth-${s}`] = await generate(bin, join(data, `growth-${s}`), { steps: 200, stepsPerMessage: s });
          cmd(`weft-bench gen --steps 200 --steps-per-message ${s} --deltas 100 --fragments 10`);
          datasets.push({ name: `growth-${s}`, contestants: growth, kind: 'growth', steps: s });
        }
      }
      datasets = datasets.filter((d) => d.contestants.length);
      log('client: headless Chromium');
      const r = await clientBench({
        sdkDir: sdk.dir,
        namedSdkDir: sdk.named,
        dataDir: data,
        datasets,
        dialects: LOADED,
        runs: o.runs,
        profile: o.quick ? null : { dataset: 'full', contestants: ['weft-push:loom', 'weft-pushMany:loom', 'weft-client', 'weft-ai'] },
      });
      results.sections.client = { ...r, meta, datasets: datasets.map(({ name, kind, steps }) => ({ name, kind, steps })) };
      cmd(
        `headless Chromium ${r.browser} (playwright-core), page tests/bench/client/page.mjs bundled by esbuild; ${o.runs} runs after one warm-up, order rotated per run`,
      );
    }

    // 2. bundle sizes
    if (o.sections.includes('bundle')) {
      log('bundle: esbuild');
      const b = { apps: await bundleSizes({ sdkDir: sdk.dir }), parts: await bundleParts({ sdkDir: sdk.dir }) };
      cmd(
        'esbuild --bundle --minify --format=esm --platform=browser --target=es2022 tests/bench/bundle/<app> (React apps: react, react-dom external; also with them); gzip level 9, brotli quality 11',
      );
      if (!o.quick) {
        b.weftWasm = wasmProfile(join(sdk.named, 'weft_sdk_bg.wasm'), 15);
        if (existsSync(join(sdk.named, 'loom/weft_sdk_bg.wasm'))) b.loomWasm = wasmProfile(join(sdk.named, 'loom/weft_sdk_bg.wasm'), 15);
        const env = { CARGO_TARGET_DIR: targetDir() };
        b.worker = await workerUpload(join(root, 'worker'), join(work, 'dry-weft'), env);
        cmd('cd worker && npx wrangler deploy --dry-run --outdir <tmp> (environment of scripts/env.sh; no network needed)');
        b.peersWorker = await workerUpload(join(benchDir, 'peers'), join(work, 'dry-peers'), env);
        cmd('cd tests/bench/peers && npx wrangler deploy --dry-run --outdir <tmp>');
        // Where the Worker's bytes go: its raw cargo output through wasm-opt -Oz -g (names kept).
        const raw = join(targetDir(), 'wasm32-unknown-unknown/release/weft_worker.wasm');
        if (existsSync(raw)) {
          const named = join(work, 'worker-named.wasm');
          try {
            await run(join(root, 'node_modules/.bin/wasm-opt'), [
              '-Oz',
              '-g',
              '--strip-dwarf',
              '--enable-bulk-memory',
              '--enable-nontrapping-float-to-int',
              '--enable-sign-ext',
              '--enable-reference-types',
              '--enable-multivalue',
              '--enable-mutable-globals',
              '--enable-exception-handling',
              raw,
              '-o',
              named,
            ]);
            b.workerWasm = wasmProfile(named, 15);
          } catch (e) {
            b.workerWasm = { error: String(e.message).slice(0, 300) };
          }
        }
      }
      results.sections.bundle = b;
    }

    // 3. the server
    if (o.sections.includes('server')) {
      const opts = o.quick
        ? { runs: 1, tokens: 50, concurrency: 2, paceMs: 5, paceTokens: 5, systems: ['cf-agents', 'relay', 'direct'] }
        : { runs: o.runs, tokens: 2000, concurrency: 50, paceMs: 20, paceTokens: 100, profileSessions: 10 };
      if (o.only) opts.systems = (opts.systems ?? ['weft', 'weft-relayed', 'cf-agents', 'relay', 'direct']).filter((s) => o.only.test(s));
      results.sections.server = { opts, ...(await serverBench(opts)) };
      cmd(
        `wrangler dev (worker/ and tests/bench/peers/), scripted LLM in-process: "long reply ${opts.tokens}" with no delay, 1 and ${opts.concurrency} sessions; paced ${opts.paceMs} ms/token × ${opts.paceTokens}`,
      );
    }

    // 4. native
    if (o.sections.includes('native') && !o.quick) {
      const data = join(work, 'data', 'full');
      if (!existsSync(join(data, 'loom.jsonl'))) await generate(bin, data, { steps: 2000, stepsPerMessage: 10 });
      const providers = join(work, 'providers');
      mkdirSync(providers, { recursive: true });
      await providerBodies(providers);
      const r = await run(bin, ['native', '--frames', data, '--providers', providers, '--runs', String(o.runs), '--min-ms', '300']);
      results.sections.native = JSON.parse(r.stdout);
      cmd(
        `weft-bench native --runs ${o.runs} --min-ms 300 (frames of the client stream; provider bodies from the scripted LLM, "long reply 20000", and a recorded OpenAI Responses stream)`,
      );
    }

    // 5. storage: rows written per turn and bytes per session (Durable Object SQLite)
    if (o.sections.includes('storage')) {
      const opts = o.quick
        ? {
            turns: 1,
            tokens: 20,
            paceMs: 5,
            idleMs: 0,
            curveTurns: 3,
            curveTokens: 20,
            windowTurns: 2,
            windowTokens: 20,
            checkpoints: [1, 3],
            retentionHours: 0.0005,
            systems: ['cf-agents'],
          }
        : {
            turns: o.runs,
            tokens: 2000,
            paceMs: 20,
            idleMs: 30_000,
            curveTurns: 50,
            curveTokens: 2000,
            windowTurns: 50,
            windowTokens: 400,
            checkpoints: [1, 10, 50],
            retentionHours: 0.0005,
          };
      if (o.only) opts.systems = (opts.systems ?? ['weft', 'cf-agents']).filter((s) => o.only.test(s));
      log('storage: Durable Object SQLite, rows written and bytes');
      results.sections.storage = { opts, ...(await storageBench(opts)) };
      cmd(
        `storage: wrangler dev (worker/ with WEFT_STORAGE_STATS=1 and CONTEXT_WINDOW=100000000, then again with EVENT_RETENTION_HOURS=${opts.retentionHours}; tests/bench/peers), scripted LLM in-process: "long reply ${opts.tokens}" paced ${opts.paceMs} ms/piece, ${opts.turns} turns after one${opts.idleMs ? `, one more after ${opts.idleMs / 1000} s idle` : ''}; "long reply ${opts.curveTokens}" unpaced × ${opts.curveTurns} turns in one session; weft: "long reply ${opts.windowTokens}" paced × ${opts.windowTurns} turns in one session`,
      );
    }

    // 6. MCP tools: what a call adds over a built-in tool's, and the first token with and without
    if (o.sections.includes('mcp') && !o.quick) {
      const opts = { runs: o.runs, calls: 5 };
      log('mcp: MCP tool calls and the first token, with and without MCP servers');
      results.sections.mcp = await mcpBench(opts);
      cmd(
        `mcp: wrangler dev (worker/) with MCP_SERVERS (the createMcpHandler fixture of tests/e2e/mcp/servers.mjs, @modelcontextprotocol/server-everything streamableHttp) and without; scripted LLM in-process, no delay; per run one session × ${opts.calls} calls of each tool in rotated order, then "long reply 20" without MCP, in a new session with MCP, and in a session with its catalog stored`,
      );
    }

    // 7. A remote AG-UI agent behind weft: what weft adds to its first token and per event
    if (o.sections.includes('remote') && !o.quick) {
      const opts = { runs: o.runs, reps: 5, words: 200 };
      log('remote: an AG-UI agent read directly and through weft');
      results.sections.remote = await remoteBench(opts);
      cmd(
        `remote: ag-ui-langgraph (tests/agui/langgraph, its model the scripted LLM, no delay) and wrangler dev (worker/) with it in AGENTS; per run ${opts.reps} × "count to ${opts.words}" read from the agent's own SSE and through weft's loom socket, in alternating order`,
      );
    }
  } finally {
    results.seconds = (performance.now() - t0) / 1000;
    measured = Object.keys(results.sections);
    // What each section was measured with, so that a merge keeps it with the section.
    results.sectionMeta = Object.fromEntries(measured.map((k) => [k, { runs: o.runs, weft: results.machine.weft }]));
    // --merge: keep the sections of the previous results that this run did not measure.
    if (o.merge && existsSync(o.json)) {
      const prev = JSON.parse(readFileSync(o.json, 'utf8'));
      for (const [k, v] of Object.entries(prev.sections ?? {})) {
        if (k in results.sections) continue;
        results.sections[k] = v;
        results.sectionMeta[k] = prev.sectionMeta?.[k] ?? { runs: prev.runs, weft: prev.machine?.weft };
      }
      results.commands = [...new Set([...(prev.commands ?? []), ...results.commands])];
      results.seconds += prev.seconds ?? 0;
    }
    mkdirSync(join(o.json, '..'), { recursive: true });
    writeFileSync(o.json, JSON.stringify(results));
    rmSync(work, { recursive: true, force: true });
  }
  const { markdown, table } = report(results);
  // --merge, and the report has sections the raw results do not (they are not committed): the
  // report keeps its text for those, and this run's sections take their places in it.
  const old = o.merge && existsSync(o.out) ? readFileSync(o.out, 'utf8') : null;
  const NUM = { client: 1, bundle: 2, server: 3, native: 4, storage: 5, mcp: 6, remote: 7 };
  const missing = old ? Object.keys(NUM).filter((k) => !(k in results.sections) && new RegExp(`^## ${NUM[k]}\\. `, 'm').test(old)) : [];
  if (missing.length) {
    const note = `Sections re-measured since by \`run.mjs --sections ${measured.join(',')} --merge\` (on ${results.machine.date.slice(0, 16).replace('T', ' ')} UTC, weft ${results.machine.weft}, load average at start ${results.machine.load}, ${o.runs} runs${results.sections.client?.browser ? `, Chromium ${results.sections.client.browser}` : ''}): ${measured.map((k) => NUM[k]).join(', ')}; the raw results of the others were not at hand, so their text is kept as it was.`;
    writeFileSync(o.out, mergeReports(old, markdown, Object.keys(results.sections), note));
    log(`--merge: kept sections ${missing.join(', ')} as ${o.out} had them (no raw results for them)`);
  } else {
    writeFileSync(o.out, markdown);
  }
  process.stdout.write(`${table}\n`);
  log(`done in ${results.seconds.toFixed(0)} s; wrote ${o.out} and ${o.json}`);
}

/** Streamed bodies of each provider for the native decoders, from the scripted LLM. */
async function providerBodies(dir) {
  const { startScriptedLlm } = await import('../scripted-llm/server.mjs');
  const llm = await startScriptedLlm({ port: 0 });
  const text = 'long reply 20000';
  try {
    const reqs = {
      'openai.long-reply.sse': [
        `${llm.url}/v1/chat/completions`,
        { authorization: 'Bearer x' },
        { model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: text }] },
      ],
      'anthropic.long-reply.sse': [
        `${llm.url}/v1/messages`,
        { 'x-api-key': 'x', 'anthropic-version': '2023-06-01' },
        { model: 'claude-haiku-4-5', max_tokens: 64000, stream: true, messages: [{ role: 'user', content: text }] },
      ],
      'gemini.long-reply.sse': [
        `${llm.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`,
        { 'x-goog-api-key': 'x' },
        { contents: [{ role: 'user', parts: [{ text }] }] },
      ],
    };
    for (const [name, [url, headers, body]] of Object.entries(reqs)) {
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      if (!r.ok) throw new Error(`${name}: HTTP ${r.status} ${await r.text()}`);
      writeFileSync(join(dir, name), Buffer.from(await r.arrayBuffer()));
    }
  } finally {
    await llm.close();
  }
  // The OpenAI Responses API is not in the scripted LLM: its recorded stream, repeated.
  const rec = join(root, 'crates/agent/tests/fixtures/providers/openai/responses-text.gpt-4o.sse');
  if (existsSync(rec)) cpSync(rec, join(dir, 'openai-responses.recorded.sse'));
}

main().catch((e) => {
  process.stderr.write(`bench: FAILED: ${e?.stack ?? e}\n`);
  process.exit(1);
});
