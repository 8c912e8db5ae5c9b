// The browser side of the SDK's end-to-end suite (browser.test.mjs): the real server
// (tests/e2e/server.mjs), a static server for pkg/ and a test page, a TCP relay between the
// page and the server that the test can cut (a dropped network, as the browser sees one: close
// code 1006), and headless Chromium through playwright-core.

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createConnection, createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('../..', import.meta.url));

const TYPES = {
  '.mjs': 'text/javascript',
  '.js': 'text/javascript',
  '.wasm': 'application/wasm',
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json',
};

/**
 * Serves `/pkg/*` from the package folder, and `routes` (path → HTML text, or a `URL` of a
 * file to serve). Returns `{url, close}`.
 * @param {Record<string, string | URL>} routes
 */
export async function serveStatic(routes) {
  const pkg = join(root, 'pkg');
  const server = createHttpServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
    if (typeof route === 'string') {
      res.writeHead(200, { 'content-type': TYPES['.html'], 'cache-control': 'no-store' });
      return res.end(route);
    }
    const file = route ? fileURLToPath(route) : normalize(join(root, path));
    if (!route && (!path.startsWith('/pkg/') || !file.startsWith(pkg + '/'))) {
      res.writeHead(404).end('not found');
      return;
    }
    try {
      if (!statSync(file).isFile()) throw new Error('not a file');
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
      res.end(readFileSync(file));
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  return {
    url: `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  };
}

/**
 * A TCP relay to `target` (`{host, port}`). `cut()` destroys every connection it carries, both
 * sides, without a WebSocket close handshake — to the browser, the network went away.
 * `connections` counts the connections accepted so far.
 */
export async function relay(target) {
  const live = new Set();
  let connections = 0;
  const server = createTcpServer((down) => {
    connections++;
    const up = createConnection(target);
    const pair = { down, up };
    live.add(pair);
    const end = () => {
      live.delete(pair);
      down.destroy();
      up.destroy();
    };
    down.on('error', end).on('close', end);
    up.on('error', end).on('close', end);
    down.pipe(up);
    up.pipe(down);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  return {
    port: /** @type {import('node:net').AddressInfo} */ (server.address()).port,
    get connections() {
      return connections;
    },
    get open() {
      return live.size;
    },
    /** Cuts every live connection; returns how many there were. */
    cut() {
      const n = live.size;
      for (const { down, up } of [...live]) {
        down.resetAndDestroy();
        up.destroy();
      }
      live.clear();
      return n;
    },
    close: () =>
      new Promise((resolve) => {
        for (const { down, up } of live) {
          down.destroy();
          up.destroy();
        }
        server.close(() => resolve(undefined));
      }),
  };
}

/** Headless Chromium (the machine's /usr/bin/chromium) with a fresh profile. */
export async function launchChromium() {
  const profile = mkdtempSync(join(tmpdir(), 'weft-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
