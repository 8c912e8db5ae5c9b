// Section 1 of the bench: client stream processing in headless Chromium (playwright-core).
// Serves the page (client/page.mjs bundled with the peers by esbuild), the weft-sdk package and
// the generated frames, then has the page measure every contestant on every dataset, the
// contestants of one repetition back to back (their order rotated between repetitions), so
// ratios can be taken pair by pair within a repetition.

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';

import { build } from 'esbuild';
import { chromium } from 'playwright-core';

import { benchDir, log, root } from './lib/env.mjs';
import { cpuProfile, selfTimes } from './lib/profile.mjs';

const TYPES = {
  '.mjs': 'text/javascript',
  '.js': 'text/javascript',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.jsonl': 'text/plain; charset=utf-8',
};

const PAGE = (js) => `<!doctype html><meta charset="utf-8"><title>weft bench</title><script type="module" src="/${js}"></script>`;

/**
 * `WeftAgent` (pkg/agui.mjs, bundled into the page) takes `@ag-ui/client` and `rxjs` as peers:
 * the app's copies, here the bench's, which `HttpAgent` runs on too — one copy of each.
 */
const aguiPeers = {
  name: 'agui-peers',
  setup(b) {
    b.onResolve({ filter: /^(@ag-ui\/|rxjs$)/ }, (args) =>
      args.importer.startsWith(join(root, 'pkg')) ? b.resolve(args.path, { kind: args.kind, resolveDir: benchDir }) : undefined,
    );
  },
};

/** The page bundled with the peers; `minify` false keeps every function's name (for profiles). */
async function bundlePage(minify = true) {
  const r = await build({
    entryPoints: [join(benchDir, 'client/page.mjs')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify,
    write: false,
    external: ['/sdk/*', '/sdk-named/*'],
    plugins: [aguiPeers],
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
    absWorkingDir: benchDir,
  });
  return r.outputFiles[0].contents;
}

function serve({ sdkDir, namedSdkDir, dataDir, pageJs, namedPageJs }) {
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const path = decodeURIComponent(url.pathname);
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end(PAGE(url.searchParams.has('named') ? 'named/page.js' : 'page.js'));
    }
    if (path === '/page.js') {
      res.writeHead(200, { 'content-type': TYPES['.js'] });
      return res.end(pageJs);
    }
    if (path === '/named/page.js' && namedPageJs) {
      res.writeHead(200, { 'content-type': TYPES['.js'] });
      return res.end(namedPageJs);
    }
    if (path === '/favicon.ico') {
      res.writeHead(204);
      return res.end();
    }
    let base;
    let rel;
    if (path.startsWith('/sdk/')) {
      base = sdkDir;
      rel = path.slice(5);
    } else if (path.startsWith('/sdk-named/') && namedSdkDir) {
      base = namedSdkDir;
      rel = path.slice(11);
    } else if (path.startsWith('/data/')) {
      base = dataDir;
      rel = path.slice(6);
    } else {
      res.writeHead(404);
      return res.end();
    }
    const file = normalize(join(base, rel));
    if (!file.startsWith(normalize(base))) {
      res.writeHead(403);
      return res.end();
    }
    try {
      if (!statSync(file).isFile()) throw new Error('not a file');
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
      res.end(readFileSync(file));
    } catch {
      res.writeHead(404);
      res.end();
    }
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        close: () =>
          new Promise((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      }),
    ),
  );
}

async function launch() {
  const profile = mkdtempSync(join(tmpdir(), 'weft-bench-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--js-flags=--expose-gc',
    ],
  });
  const version = context.browser()?.version() ?? (await context.pages()[0]?.evaluate(() => navigator.userAgent));
  return {
    context,
    version,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * @param {{sdkDir: string, dataDir: string, datasets: Array<{name: string, contestants: string[]}>,
 *   dialects: string[], runs: number}} opts
 * @returns results[dataset][contestant] = [{ms, units, summary}, ...] (one per repetition), plus
 *   loaded[dataset] (frame counts) and the browser version.
 */
export async function clientBench({ sdkDir, namedSdkDir, dataDir, datasets, dialects, runs, profile }) {
  const pageJs = await bundlePage();
  const namedPageJs = profile ? await bundlePage(false) : null;
  const web = await serve({ sdkDir, namedSdkDir, dataDir, pageJs, namedPageJs });
  const browser = await launch();
  const errors = [];
  try {
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(`${web.url}/`);
    await page.waitForFunction(() => window.benchReady === true, null, { timeout: 60_000 });
    await page.evaluate(() => window.bench.init());
    const results = {};
    const loaded = {};
    for (const ds of datasets) {
      log(`client: loading ${ds.name}`);
      loaded[ds.name] = await page.evaluate(([n, d]) => window.bench.load(n, d), [ds.name, dialects]);
      results[ds.name] = Object.fromEntries(ds.contestants.map((c) => [c, []]));
      // One warm-up pass (JIT, wasm tier-up), not recorded.
      for (const c of ds.contestants) await page.evaluate(([c, n]) => window.bench.measure(c, n), [c, ds.name]);
      for (let rep = 0; rep < runs; rep++) {
        const order = ds.contestants.map((_, i) => ds.contestants[(i + rep) % ds.contestants.length]);
        for (const c of order) {
          const r = await page.evaluate(([c, n]) => window.bench.measure(c, n), [c, ds.name]);
          results[ds.name][c].push(r);
        }
        log(`client: ${ds.name} run ${rep + 1}/${runs}: ${ds.contestants.map((c) => `${c} ${results[ds.name][c].at(-1).ms.toFixed(0)} ms`).join(', ')}`);
      }
      await page.evaluate((n) => window.bench.drop(n), ds.name);
    }
    // Where weft's time goes: a CPU profile of each contestant named, on a build that keeps its
    // function names (same code: the same wasm-opt passes with -g) and the page not minified, in a fresh page.
    let prof = null;
    if (profile && namedSdkDir) {
      const p2 = await browser.context.newPage();
      await p2.goto(`${web.url}/?named`);
      await p2.waitForFunction(() => window.benchReady === true, null, { timeout: 60_000 });
      await p2.evaluate(() => window.bench.init('/sdk-named/'));
      await p2.evaluate(([n, d]) => window.bench.load(n, d), [profile.dataset, dialects]);
      prof = {};
      for (const c of profile.contestants) {
        await p2.evaluate(([c, n]) => window.bench.measure(c, n), [c, profile.dataset]);
        const cdp = await browser.context.newCDPSession(p2);
        const { value, profile: pr } = await cpuProfile(cdp, () => p2.evaluate(([c, n]) => window.bench.measure(c, n), [c, profile.dataset]), 100);
        await cdp.detach();
        const st = selfTimes(pr);
        prof[c] = { ms: value.ms, units: value.units, self: { total: st.total, fns: st.fns.slice(0, 80) } };
      }
      await p2.close();
    }
    if (errors.length) log(`client: page errors: ${errors.slice(0, 5).join(' | ')}`);
    return { results, loaded, browser: browser.version, errors, profile: prof };
  } finally {
    await browser.close();
    await web.close();
  }
}
