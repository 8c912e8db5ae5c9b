// weft-sdk as an app gets it: the package packed (`npm pack`), installed from its tarball into a
// fresh app, and every entry point imported there — in Node 22 (the `node` condition), and in
// apps built by Vite and by webpack and run in headless Chromium — each connecting to the real
// Worker (`wrangler dev`, the scripted LLM) and running a turn in its dialect. A one-dialect
// entry (`weft-sdk/loom`, …, `weft-sdk/agui-client`) speaks its dialect unasked and refuses
// another; `weft-sdk` refuses AG-UI; `weft-sdk/with-agui` speaks it. One `wrangler dev` for all.
// Needs scripts/build-sdk first (the packed package is pkg/ as built).

import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';

import { build as viteBuild } from 'vite';
import webpack from 'webpack';

import { startServer, toolchainEnv } from '../e2e/server.mjs';
import { launchChromium, serveStatic } from './harness.mjs';

const root = new URL('../..', import.meta.url).pathname;

/**
 * Every entry point with a Client: the dialect it runs its turn in, whether it speaks that one
 * unasked (a one-dialect package), and a dialect it must refuse (none for `with-agui`).
 * @type {{spec: string, dialect: string, one: boolean, other: string | null}[]}
 */
const ENTRIES = [
  { spec: 'weft-sdk/loom', dialect: 'loom', one: true, other: 'cueso' },
  { spec: 'weft-sdk/agentloop', dialect: 'agentloop', one: true, other: 'loom' },
  { spec: 'weft-sdk/agentchat', dialect: 'agentchat', one: true, other: 'agentloop' },
  { spec: 'weft-sdk/cueso', dialect: 'cueso', one: true, other: 'agentchat' },
  { spec: 'weft-sdk/agui-client', dialect: 'agui', one: true, other: 'loom' },
  { spec: 'weft-sdk', dialect: 'cueso', one: false, other: 'agui' },
  { spec: 'weft-sdk/with-agui', dialect: 'agui', one: false, other: null },
];

// The app's own module, the same for Node, Vite and webpack: each entry imported by its name
// (a literal, so bundlers see every one), its wasm loaded, a turn run, another dialect tried.
const MAIN = `const load = {
${ENTRIES.map((e) => `  '${e.spec}': () => import('${e.spec}'),`).join('\n')}
};

export async function turn({ spec, dialect, one, other }, url) {
  const sdk = await load[spec]();
  await sdk.default();
  const client = new sdk.Client(one ? { url, reconnect: false } : { url, dialect, reconnect: false });
  let reply;
  try {
    await client.connect();
    reply = (await client.run({ message: 'hello from ' + spec }).result).reply;
  } finally {
    client.close();
  }
  let refused = null;
  if (other) {
    try {
      new sdk.Client({ url, dialect: other });
    } catch (e) {
      refused = e.code + ': ' + e.message;
    }
  }
  return { reply, refused };
}
`;

const NODE = `import { turn } from './main.mjs';
const [entries, url] = JSON.parse(process.argv[2]);
const out = [];
for (const e of entries) out.push(await turn(e, url));
console.log(JSON.stringify(out));
`;

const PAGE = `import { turn } from './main.mjs';
window.turn = turn;
window.ready = true;
`;

const HTML = (script) => `<!doctype html>
<meta charset="utf-8">
<title>weft-sdk, installed from its tarball</title>
<h1>weft-sdk: every entry point, installed from npm pack</h1>
${script}`;

/** Checks one entry's turn. */
function assertTurn(entry, got, where) {
  assert.equal(got.reply, `You said: hello from ${entry.spec}`, `${entry.spec} in ${where}`);
  if (!entry.other) return assert.equal(got.refused, null);
  const pkg = entry.other === 'agui' ? 'agui-client' : entry.other;
  assert.match(
    got.refused,
    new RegExp(`^unsupported: dialect "${entry.other}" is not in this build, .*import weft-sdk/${pkg}\\b`),
    `${entry.spec} in ${where}`,
  );
}

/** Every file under `dir` as routes of the static server (path → file URL). */
function routesOf(dir) {
  /** @type {Record<string, URL | string>} */
  const routes = { '/favicon.ico': '' };
  const walk = (d) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else routes[`/${relative(dir, p)}`] = pathToFileURL(p);
    }
  };
  walk(dir);
  routes['/'] = routes['/index.html'];
  return routes;
}

let server;
let work;
let app;
let browser;

before(
  async () => {
    server = await startServer();
    work = mkdtempSync(join(tmpdir(), 'weft-sdk-entries-'));
    const packed = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: join(root, 'pkg'), env: toolchainEnv(), encoding: 'utf8' }),
    );
    app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'weft-sdk-app', private: true, type: 'module' }));
    // The tarball alone: its peers are optional, so nothing else is fetched (--offline says so).
    execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', join(work, packed[0].filename)], { cwd: app, env: toolchainEnv(), stdio: 'pipe' });
    writeFileSync(join(app, 'main.mjs'), MAIN);
    writeFileSync(join(app, 'node.mjs'), NODE);
    writeFileSync(join(app, 'page.mjs'), PAGE);
    browser = await launchChromium();
  },
  { timeout: 600_000 },
);

after(async () => {
  await browser?.close();
  await server?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('weft-sdk installed from its tarball', () => {
  test('what npm pack ships: every entry and its wasm', () => {
    const pkg = join(app, 'node_modules/weft-sdk');
    for (const dir of ['', 'with-agui', 'loom', 'agentloop', 'agentchat', 'cueso', 'agui-client']) {
      for (const f of ['index.mjs', 'node.mjs', 'index.d.mts', 'weft_sdk.js', 'weft_sdk.d.ts', 'weft_sdk_bg.wasm']) {
        assert.ok(statSync(join(pkg, dir, f)).isFile(), `${dir}/${f}`);
      }
    }
  });

  test('Node 22: every entry point runs a turn against the Worker', async () => {
    // Not execFileSync: the scripted LLM answers from this process, which must keep running.
    const { stdout } = await promisify(execFile)(process.execPath, ['node.mjs', JSON.stringify([ENTRIES, server.url])], {
      cwd: app,
      encoding: 'utf8',
      timeout: 120_000,
    });
    const got = JSON.parse(stdout);
    ENTRIES.forEach((e, i) => assertTurn(e, got[i], 'Node'));
  });

  /** Serves `dist`, opens it in Chromium and runs every entry's turn there. */
  async function inChromium(dist, where) {
    const web = await serveStatic(routesOf(dist));
    const page = await browser.context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    try {
      await page.goto(`${web.url}/`);
      await page.waitForFunction(() => /** @type {any} */ (window).ready === true, null, { timeout: 30_000 });
      for (const e of ENTRIES) {
        const got = await page.evaluate(([e, url]) => /** @type {any} */ (window).turn(e, url), /** @type {const} */ ([e, server.url]));
        assertTurn(e, got, where);
      }
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
      await web.close();
    }
  }

  test('Vite: an app built with every entry point runs each in Chromium', async () => {
    writeFileSync(join(app, 'index.html'), HTML('<script type="module" src="./page.mjs"></script>'));
    const dist = join(work, 'vite');
    await viteBuild({ root: app, logLevel: 'silent', configFile: false, build: { outDir: dist, emptyOutDir: true } });
    // Each entry's wasm is its own asset.
    assert.equal(readdirSync(join(dist, 'assets')).filter((f) => f.endsWith('.wasm')).length, ENTRIES.length);
    await inChromium(dist, 'Vite');
  });

  test('webpack: an app built with every entry point runs each in Chromium', async () => {
    const dist = join(work, 'webpack');
    const stats = await new Promise((resolve, reject) =>
      webpack({ mode: 'production', context: app, entry: './page.mjs', output: { path: dist, filename: 'main.js' } }, (err, s) =>
        err ? reject(err) : resolve(s),
      ),
    );
    assert.ok(stats && !stats.hasErrors(), stats?.toString('errors-only'));
    writeFileSync(join(dist, 'index.html'), HTML('<script src="./main.js"></script>'));
    assert.equal(readdirSync(dist).filter((f) => f.endsWith('.wasm')).length, ENTRIES.length);
    await inChromium(dist, 'webpack');
  });
});
