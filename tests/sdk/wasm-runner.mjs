// The cargo runner for weft-sdk's wasm32 tests (crates/sdk/.cargo/config.toml): the wasm-bindgen
// test page, served by wasm-bindgen-test-runner, run in headless Chromium driven by
// playwright-core — the same launch as the SDK's other browser suites.
//
// Why not the runner's own chromedriver mode, and why the page's requests are relayed one at a
// time: the runner's HTTP server (rouille over tiny_http) now and then never answers one of the
// six script requests Chromium makes in parallel. The page then never reaches `load`;
// chromedriver reported that as "Timed out receiving message from renderer: 300" and the suite
// failed after five minutes (observed on Chromium 156, more often the more snippets the wasm has).
// Fetched one at a time over fresh connections, every request is answered at once.
//
// Usage (cargo calls it): node tests/sdk/wasm-runner.mjs <test.wasm> [harness args...]
// Exits 0 only when the page reports `test result: ok`.

import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';

import { launchChromium } from './harness.mjs';

/** How long the whole page may take, from navigation to the harness's summary line. */
const PAGE_TIMEOUT_MS = 300_000;

const [wasm, ...rest] = process.argv.slice(2);
if (!wasm) {
  console.error('usage: wasm-runner.mjs <test.wasm> [args...]');
  process.exit(2);
}

/** A free port on 127.0.0.1, chosen by the kernel. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const port = await freePort();
const address = `127.0.0.1:${port}`;
// NO_HEADLESS: the runner only serves the page (with the harness arguments baked in) and waits.
const server = spawn('wasm-bindgen-test-runner', [wasm, ...rest], {
  env: { ...process.env, NO_HEADLESS: '1', WASM_BINDGEN_TEST_ADDRESS: address },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let served = '';
const ready = new Promise((resolve, reject) => {
  server.stdout.on('data', (chunk) => {
    served += chunk;
    if (served.includes(`http://${address}`)) resolve(undefined);
  });
  server.once('error', reject);
  server.once('exit', (code, signal) => reject(new Error(`wasm-bindgen-test-runner exited (${code ?? signal}) before serving:\n${served}`)));
});

/** How long one relayed request may take before it is asked again, and how often. */
const REQUEST_TIMEOUT_MS = 20_000;
const REQUEST_ATTEMPTS = 3;

/**
 * One GET to the runner's server on its own connection.
 * @param {string} url
 * @returns {Promise<{status: number, headers: Record<string, string>, body: Buffer}>}
 */
function get(url) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false, headers: { connection: 'close' } }, (res) => {
      /** @type {Buffer[]} */
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        /** @type {Record<string, string>} */
        const headers = {};
        for (const [name, value] of Object.entries(res.headers)) {
          if (typeof value === 'string' && name !== 'connection') headers[name] = value;
        }
        resolve({ status: res.statusCode ?? 500, headers, body: Buffer.concat(chunks) });
      });
    });
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer in ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** The relay's queue: one request to the runner's server at a time. */
let queue = Promise.resolve();

/**
 * `get`, queued behind the requests before it and asked again when it gets no answer.
 * @param {string} url
 */
function relay(url) {
  const attempt = async () => {
    let last;
    for (let i = 0; i < REQUEST_ATTEMPTS; i++) {
      try {
        return await get(url);
      } catch (error) {
        last = error;
        console.error(`wasm-runner: ${url}: ${error instanceof Error ? error.message : error}`);
      }
    }
    throw last;
  };
  const answer = queue.then(attempt);
  queue = answer.then(
    () => undefined,
    () => undefined,
  );
  return answer;
}

let status = 1;
let browser;
try {
  await ready;
  browser = await launchChromium();
  const page = await browser.context.newPage();
  page.on('pageerror', (error) => console.error(`page error: ${error.message}`));
  await page.route(`http://${address}/**`, async (route) => {
    if (route.request().method() !== 'GET') return route.continue();
    try {
      await route.fulfill(await relay(route.request().url()));
    } catch (error) {
      console.error(`wasm-runner: ${error instanceof Error ? error.message : error}`);
      await route.abort();
    }
  });
  await page.goto(`http://${address}/`);
  const summary = await page.waitForFunction(
    () => {
      const text = document.getElementById('output')?.textContent ?? '';
      return /test result: (ok|FAILED)/.test(text) ? text : false;
    },
    undefined,
    { timeout: PAGE_TIMEOUT_MS, polling: 100 },
  );
  const output = String(await summary.jsonValue());
  process.stdout.write(output.endsWith('\n') ? output : `${output}\n`);
  status = /test result: ok/.test(output) ? 0 : 1;
} catch (error) {
  console.error(`wasm-runner: ${error instanceof Error ? error.message : String(error)}`);
  status = 1;
} finally {
  if (browser) await browser.close();
  server.kill();
}
process.exit(status);
