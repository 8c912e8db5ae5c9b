// Starts the real server for the end-to-end suites: the scripted LLM in-process and the Worker
// under `wrangler dev` (workerd, Durable Object SQLite persisted to a temporary folder), on
// free loopback ports. `restart()` kills wrangler and starts it again on the same storage.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { startScriptedLlm } from '../scripted-llm/server.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** @returns {Promise<number>} a loopback port free a moment ago */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (srv.address());
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** The environment worker-build and wrangler need on this kind of machine (scripts/env.sh). */
export function toolchainEnv(extra) {
  const bin = join(root, 'node_modules/.bin');
  const home = process.env.HOME ?? '/root';
  return {
    ...process.env,
    PATH: `${bin}:${home}/.cargo/bin:${process.env.PATH}`,
    WASM_BINDGEN_BIN: `${home}/.cargo/bin/wasm-bindgen`,
    WASM_OPT_BIN: join(bin, 'wasm-opt'),
    ESBUILD_BIN: join(bin, 'esbuild'),
    WRANGLER_SEND_METRICS: 'false',
    CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    CI: 'true',
    ...extra,
  };
}

/**
 * `noModel`: neither the scripted model nor the Workers AI binding (whose `--local` stand-in
 * only says it must run remotely) — a deployed Worker without a key or `[ai]`. Its wrangler
 * config is worker/wrangler.toml without the `[ai]` table, written beside it for the run (its
 * paths are relative to its folder).
 * `logLevel`: wrangler's (`warn` by default); `debug` also shows the Worker's `console.debug`.
 *
 * `toml`: text added at the end of that config (a `[vars]` table, as an operator writes it).
 * `envFile`: the text of a settings file in `.dev.vars` syntax (dotenv: quoting, `\n` in double
 * quotes, `$NAME` expansion), passed as `--env-file` — the way an operator's `.dev.vars` reaches
 * the Worker, as secrets; `vars` go as `--var`, as `[vars]` would.
 * `port`: the port to listen on (a free one by default), for a setting that names the Worker's URL.
 * @param {{delayMs?: number, vars?: Record<string,string>, envFile?: string, toml?: string, useKey?: string, noModel?: boolean, readyTimeoutMs?: number, logLevel?: string, port?: number}} opts
 */
export async function startServer(opts = {}) {
  const llm = await startScriptedLlm({ port: 0, host: '127.0.0.1', delayMs: opts.delayMs ?? 0 });
  const port = opts.port ?? (await freePort());
  const inspector = await freePort();
  const persist = mkdtempSync(join(tmpdir(), 'weft-e2e-'));
  // `noModel`: no scripted model either, as a deployed Worker without a key or binding is.
  const vars = { ...(opts.noModel ? {} : { SCRIPTED_LLM_URL: `${llm.url}/v1` }), ...(opts.vars ?? {}) };
  if (opts.useKey) Object.assign(vars, { OPENAI_API_KEY: opts.useKey, OPENAI_BASE_URL: `${llm.url}/v1` });
  let child;
  let log = '';
  let config = null;
  if (opts.noModel || opts.toml) {
    const toml = readFileSync(join(root, 'worker/wrangler.toml'), 'utf8');
    let changed = toml;
    if (opts.noModel) {
      changed = toml.replace(/^\[ai\]\nbinding = "AI"\n/m, '');
      if (changed === toml) throw new Error('worker/wrangler.toml has no [ai] table to leave out');
    }
    config = join(root, 'worker', `wrangler.e2e-${process.pid}-${port}.toml`);
    writeFileSync(config, `${changed}\n${opts.toml ?? ''}`);
  }

  async function launch() {
    // `--local`: the AI binding is remote-only, and wrangler refuses to start it offline.
    const args = [
      'wrangler',
      'dev',
      '--local',
      '--port',
      String(port),
      '--ip',
      '127.0.0.1',
      '--inspector-port',
      String(inspector),
      '--persist-to',
      persist,
      '--log-level',
      opts.logLevel ?? 'warn',
    ];
    if (config) args.push('--config', config);
    if (opts.envFile !== undefined) {
      const file = join(persist, 'settings.env');
      writeFileSync(file, opts.envFile);
      args.push('--env-file', file);
    }
    for (const [k, v] of Object.entries(vars)) args.push('--var', `${k}:${v}`);
    child = spawn('npx', args, { cwd: join(root, 'worker'), env: toolchainEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    log = '';
    const onData = (d) => {
      log += d.toString();
      if (log.length > 200_000) log = log.slice(-100_000);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const deadline = Date.now() + (opts.readyTimeoutMs ?? 600_000);
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`wrangler dev exited (${child.exitCode}):\n${log.slice(-4000)}`);
      try {
        const r = await fetch(`http://127.0.0.1:${port}/healthz`);
        if (r.ok) return;
      } catch {
        /* not up yet */
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`wrangler dev did not become ready:\n${log.slice(-4000)}`);
  }

  function kill() {
    return new Promise((resolve) => {
      // A child killed by a signal has a signalCode and no exitCode; its 'exit' has been emitted
      // already, and waiting for another would wait forever.
      if (!child || child.exitCode !== null || child.signalCode !== null) return resolve(undefined);
      child.once('exit', () => resolve(undefined));
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        resolve(undefined);
      }
    });
  }

  // The scripted LLM's pace for the requests that follow, in place of `delayMs` (through its
  // own `x-scripted-delay-ms` header, set before its handler reads it); null restores it.
  let pace = null;
  llm.server.prependListener('request', (req) => {
    if (pace !== null) req.headers['x-scripted-delay-ms'] = String(pace);
  });

  try {
    await launch();
  } catch (e) {
    if (config) rmSync(config, { force: true });
    throw e;
  }
  return {
    url: `ws://127.0.0.1:${port}`,
    http: `http://127.0.0.1:${port}`,
    llm,
    /** Sets the delay between streamed chunks (ms) of the following model requests; null: the default. */
    pace(ms) {
      pace = ms;
    },
    log: () => log,
    /** Where the Durable Objects' SQLite files are, for tests that inspect or damage them. */
    persist,
    /** Kills wrangler and starts it again on the same storage; `between` runs while it is down. */
    async restart(between) {
      await kill();
      await between?.();
      await launch();
    },
    async stop() {
      await kill();
      await llm.close();
      rmSync(persist, { recursive: true, force: true });
      if (config) rmSync(config, { force: true });
    },
  };
}
