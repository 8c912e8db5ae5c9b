// Deploying: what `npm run deploy` would upload (built offline with `wrangler deploy --dry-run`),
// what it says without a Cloudflare account, that every setting is reachable the same way
// everywhere, and what a deployed Worker without any model does.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { Conn } from '../e2e/client.mjs';
import { startServer, toolchainEnv } from '../e2e/server.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const read = (path) => readFileSync(join(root, path), 'utf8');

/** Names of the settings in worker/.dev.vars.example (`NAME=` lines). */
function exampleNames() {
  return [...read('worker/.dev.vars.example').matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]);
}

/** The upload budget the benchmark report sets (BENCHMARKS.md, "Bundle: Worker upload ≤ N KB gzip"). */
function uploadBudgetKb() {
  const m = read('BENCHMARKS.md').match(/Bundle: Worker upload ≤ (\d+) KB gzip/);
  assert.ok(m, 'BENCHMARKS.md states the Worker upload budget');
  return Number(m[1]);
}

describe('npm run deploy', () => {
  test('the dry-run bundle has the AI and SESSIONS bindings, no local model, and fits the budget', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'weft-deploy-'));
    const run = spawnSync('scripts/deploy', ['--dry-run', '--outdir', outdir], {
      cwd: root,
      env: toolchainEnv(),
      encoding: 'utf8',
      timeout: 900_000,
    });
    const out = `${run.stdout}\n${run.stderr}`;
    assert.equal(run.status, 0, out.slice(-3000));
    assert.match(out, /env\.SESSIONS \(Session\)\s+Durable Object/);
    assert.match(out, /env\.AI\s+AI/);
    assert.match(out, /env\.ASSETS\s+Assets/);
    // Nothing local-only: no variable at all is deployed from wrangler.toml (settings are
    // secrets or the user's own vars), so no scripted model's URL either.
    assert.doesNotMatch(out, /Environment Variable/);
    assert.doesNotMatch(out, /SCRIPTED_LLM_URL|127\.0\.0\.1:8787/);
    for (const file of readdirSync(outdir)) {
      const bytes = readFileSync(join(outdir, file));
      assert.equal(bytes.indexOf('127.0.0.1:8787'), -1, `${file} holds the scripted model's URL`);
    }
    const total = out.match(/Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/);
    assert.ok(total, out.slice(-2000));
    const gzipKb = (Number(total[2]) * 1024) / 1000;
    const budget = uploadBudgetKb();
    assert.ok(gzipKb <= budget, `upload ${gzipKb.toFixed(1)} KB gzip is over the ${budget} KB budget`);
    const wasm = readdirSync(outdir).find((f) => f.endsWith('.wasm'));
    assert.ok(wasm && statSync(join(outdir, wasm)).size > 100_000, 'the Worker wasm is in the bundle');
  });

  test('without a Cloudflare login or token it says what to do, and builds nothing', () => {
    const home = mkdtempSync(join(tmpdir(), 'weft-nologin-'));
    const env = { ...toolchainEnv(), HOME: home, XDG_CONFIG_HOME: join(home, '.config') };
    delete env.CLOUDFLARE_API_TOKEN;
    // PATH keeps the real toolchain: only the login is taken away.
    const run = spawnSync('scripts/deploy', [], { cwd: root, env, encoding: 'utf8', timeout: 120_000 });
    assert.equal(run.status, 1, run.stdout + run.stderr);
    assert.match(run.stderr, /needs a Cloudflare account/);
    assert.match(run.stderr, /npx wrangler login/);
    assert.match(run.stderr, /CLOUDFLARE_API_TOKEN=/);
    assert.doesNotMatch(run.stdout, /building/);
  });
});

describe('settings', () => {
  test('every setting the Worker reads is in .dev.vars.example and the README table, and no other', () => {
    const source = readdirSync(join(root, 'worker/src'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.rs'))
      .map((f) => read(join('worker/src', f)))
      .join('\n');
    // `var(env, "X")` and its kin in settings.rs; `get("X")` where a setting is read through a
    // lookup (agents.rs, and the keys of a provider an agent names).
    const reads = /\b(?:var|number|float|list)\(env, "([A-Z][A-Z0-9_]*)"|\bget\("([A-Z][A-Z0-9_]*)"\)/g;
    const read_ = new Set([...source.matchAll(reads)].map((m) => m[1] ?? m[2]));
    // npm start's own: the scripted model's URL is passed by it and nothing else.
    read_.delete('SCRIPTED_LLM_URL');
    const example = new Set(exampleNames());
    assert.deepEqual([...example].sort(), [...read_].sort(), 'worker/.dev.vars.example lists what settings.rs reads');
    const table = read('README.md').split('## Configuration')[1]?.split('\n## ')[0] ?? '';
    for (const name of example) assert.match(table, new RegExp(`^\\| \`${name}\` \\|`, 'm'), `README table row for ${name}`);
  });

  test('npm start passes every setting of .dev.vars.example from its environment', () => {
    const start = read('scripts/start');
    assert.match(start, /worker\/\.dev\.vars\.example/, 'scripts/start reads the names from the example');
    // The same extraction scripts/start runs, on the example: every name comes out.
    const run = spawnSync('bash', ['-c', "sed -nE 's/^([A-Z][A-Z0-9_]*)=.*/\\1/p' worker/.dev.vars.example"], { cwd: root, encoding: 'utf8' });
    assert.deepEqual(run.stdout.trim().split('\n'), exampleNames());
    assert.match(start, /sed -nE 's\/\^\(\[A-Z\]\[A-Z0-9_\]\*\)=\.\*\/\\1\/p' worker\/\.dev\.vars\.example/);
  });
});

describe('a Worker with no model configured', () => {
  const TOKEN = 'deploy-test-token';
  let server;
  before(
    async () => {
      server = await startServer({ noModel: true, vars: { WEFT_AUTH_TOKEN: TOKEN } });
    },
    { timeout: 900_000 },
  );
  after(async () => {
    await server?.stop();
  });

  test('/healthz answers, and /status (behind the token) says what is missing', async () => {
    assert.equal((await fetch(`${server.http}/healthz`)).status, 200);
    assert.equal((await fetch(`${server.http}/status`)).status, 401);
    const r = await fetch(`${server.http}/status`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(r.status, 200);
    const status = await r.json();
    assert.equal(status.model.source, 'none');
    assert.equal(status.model.provider, null);
    assert.match(status.model.problem, /OPENAI_API_KEY/);
    assert.deepEqual(status.dialects, ['loom', 'agentloop', 'agentchat', 'cueso', 'agui']);
  });

  test('a run gets an error naming the settings to set, and the socket keeps serving', async () => {
    const ws = await Conn.open(`${server.url}/?session_id=nomodel-1&token=${TOKEN}`, ['weft.loom']);
    try {
      for (const id of ['r1', 'r2']) {
        ws.send({ type: 'run', id, message: 'hello', agent: 'react' });
        const error = await ws.wait((f) => f.type === 'error' && f.id === id);
        assert.equal(error.code, 'model_not_configured');
        assert.match(error.error, /wrangler secret put OPENAI_API_KEY/);
        assert.match(error.error, /\[ai\] binding = "AI"/);
      }
      ws.send({ type: 'ping', id: 'p' });
      assert.deepEqual(await ws.wait((f) => f.type === 'pong'), { type: 'pong', id: 'p' });
    } finally {
      ws.close();
    }
    assert.equal((await fetch(`${server.http}/healthz`)).status, 200);
  });

  test('the OpenAI-compatible proxy answers 503 with the same explanation', async () => {
    const r = await fetch(`${server.http}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'x', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(r.status, 503);
    const body = await r.json();
    assert.match(body.error.message, /OPENAI_API_KEY/);
  });
});

describe('PROVIDER=workers-ai under wrangler dev --local', () => {
  let server;
  before(
    async () => {
      server = await startServer({ vars: { PROVIDER: 'workers-ai' } });
    },
    { timeout: 900_000 },
  );
  after(async () => {
    await server?.stop();
  });

  test('the binding is called, and its local stand-in is a configuration error, not an outage', async () => {
    const status = await (await fetch(`${server.http}/status`)).json();
    assert.deepEqual(status.model, {
      source: 'binding',
      provider: 'workers-ai',
      model: '@cf/meta/llama-3.3-70b-instruct-fp8-fast',
      problem: null,
    });
    let asked = 0;
    server.llm.server.on('request', () => {
      asked += 1;
    });
    const ws = await Conn.open(`${server.url}/?session_id=local-ai`, ['weft.loom']);
    try {
      ws.send({ type: 'run', id: 'r', message: 'hello', agent: 'react' });
      const error = await ws.wait((f) => f.type === 'error' && f.id === 'r');
      assert.match(error.error, /binding_not_local/);
      assert.match(error.error, /runs only on Cloudflare/);
      assert.match(error.error, /WORKERS_AI_ACCOUNT_ID/);
      assert.equal(error.details?.retryable, false, JSON.stringify(error));
      assert.equal(asked, 0, 'the scripted model was not asked');
    } finally {
      ws.close();
    }
  });
});
