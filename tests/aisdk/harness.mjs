// The pieces of the AI SDK harness (aisdk.test.mjs): the React app (app/) bundled by esbuild
// into a temporary folder, a static server for it that forwards /api/* to the server under test
// (so the page and the API share an origin, as an app deployed beside its API does) and records
// every exchange it forwards — request bodies, response headers, the SSE chunks, whether the
// browser hung up first — and the probe that tells whether a server speaks POST /api/chat.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

const root = fileURLToPath(new URL('../..', import.meta.url));
const here = fileURLToPath(new URL('.', import.meta.url));

const PAGE = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<title>AI SDK useChat against weft</title>
<link rel="icon" href="data:,">
<style>
  body { font: 14px/1.45 system-ui, sans-serif; margin: 16px; max-width: 900px; }
  header { margin-bottom: 12px; } #status { font-weight: bold; }
  .msg { border: 1px solid #ccc; border-radius: 6px; padding: 6px 10px; margin: 6px 0; }
  .msg[data-role=user] { background: #eef4ff; } .role { font-size: 11px; color: #666; }
  .text { white-space: pre-wrap; } .reasoning { color: #777; font-style: italic; }
  .tool { border-left: 3px solid #999; padding: 2px 8px; margin: 4px 0; background: #fafafa; }
  .tool[data-state=output-available] { border-color: #2a2; } .tool[data-state=output-denied] { border-color: #c33; }
  .tool[data-state=approval-requested] { border-color: #e90; }
  pre { margin: 2px 0; white-space: pre-wrap; font-size: 12px; }
  #error { color: #b00; } form { margin-top: 12px; } #input { width: 60%; }
</style>
<div id="root"></div>
<script type="module" src="/app.js"></script>
</html>`;

/**
 * Bundles app/main.jsx with esbuild into a fresh temporary folder; returns `{dir, file, close}`.
 * Packages come from the repository's own node_modules (the root package.json pins them), never
 * from tests/bench's.
 */
export async function bundleApp() {
  const dir = mkdtempSync(join(tmpdir(), 'weft-aisdk-'));
  const result = await build({
    entryPoints: [join(here, 'app/main.jsx')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    outfile: join(dir, 'app.js'),
    absWorkingDir: root,
    nodePaths: [],
    metafile: true,
    logLevel: 'silent',
  });
  const foreign = Object.keys(result.metafile.inputs).filter((f) => f.includes('tests/bench/'));
  if (foreign.length) throw new Error(`the aisdk app bundled files from tests/bench: ${foreign.slice(0, 3).join(', ')}`);
  return { dir, file: join(dir, 'app.js'), close: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The `data:` payloads of an SSE text: parsed JSON, or the string `[DONE]`. */
export function sseData(text) {
  const out = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''))
      .join('\n');
    if (!data) continue;
    try {
      out.push(data === '[DONE]' ? data : JSON.parse(data));
    } catch {
      out.push({ unparsable: data });
    }
  }
  return out;
}

/**
 * Serves the page (`/`), the bundle (`/app.js`) and forwards `/api/*` to `target` (an origin,
 * `http://host:port`), streaming both ways; when the browser hangs up, the forwarded request is
 * dropped too. `exchanges` holds one record per forwarded request:
 * `{method, path, body, status, headers, text, chunks, done, clientClosed}` (`done`: the server
 * ended the response; `clientClosed`: the browser hung up before that).
 */
export async function serveApp({ bundle, target }) {
  const upstream = new URL(target);
  const exchanges = [];
  const waiters = new Set();
  const changed = () => {
    for (const w of [...waiters]) w();
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (!url.pathname.startsWith('/api/')) {
      if (url.pathname === '/' || url.pathname === '/index.html') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        return res.end(PAGE);
      }
      if (url.pathname === '/weft_sdk_bg.wasm') {
        // weft-sdk finds its wasm beside the module that loads it: the bundle.
        res.writeHead(200, { 'content-type': 'application/wasm', 'cache-control': 'no-store' });
        return res.end(readFileSync(join(root, 'pkg/weft_sdk_bg.wasm')));
      }
      if (url.pathname === '/app.js') {
        res.writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'no-store' });
        return res.end(readFileSync(bundle.file));
      }
      return res.writeHead(404).end('not found');
    }
    /** @type {Json} one exchange, as the tests read it */
    const ex = {
      method: req.method,
      path: url.pathname + url.search,
      rawBody: '',
      body: undefined,
      status: undefined,
      headers: undefined,
      text: '',
      done: false,
      clientClosed: false,
      at: Date.now(),
    };
    Object.defineProperty(ex, 'chunks', { enumerable: true, get: () => sseData(ex.text) });
    exchanges.push(ex);
    // Identity bodies, so what is recorded is what was sent (and is passed on byte for byte).
    const { 'accept-encoding': _, ...headers } = { ...req.headers, host: upstream.host };
    const up = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: ex.path, headers }, (upRes) => {
      ex.status = upRes.statusCode;
      ex.headers = upRes.headers;
      changed();
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      const decoder = new TextDecoder();
      upRes.on('data', (d) => {
        ex.text += decoder.decode(d, { stream: true });
        res.write(d);
        changed();
      });
      upRes.on('end', () => {
        ex.done = true;
        res.end();
        changed();
      });
      upRes.on('error', () => {
        res.destroy();
        changed();
      });
    });
    up.on('error', (e) => {
      ex.error = String(e);
      if (!res.headersSent) res.writeHead(502).end(String(e));
      else res.destroy();
      changed();
    });
    const bodyDecoder = new TextDecoder();
    req.on('data', (d) => {
      ex.rawBody += bodyDecoder.decode(d, { stream: true });
      up.write(d);
    });
    req.on('end', () => {
      try {
        ex.body = ex.rawBody ? JSON.parse(ex.rawBody) : undefined;
      } catch {
        ex.body = ex.rawBody;
      }
      up.end();
      changed();
    });
    res.on('close', () => {
      if (!ex.done) {
        ex.clientClosed = true;
        up.destroy();
        changed();
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  return {
    url: `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`,
    exchanges,
    /** The exchanges of chat `id`: its POSTs (by body id) and its GETs …/{id}/stream. */
    of(id) {
      return exchanges.filter((e) => (e.method === 'POST' ? e.body?.id === id : e.path.includes(`/${encodeURIComponent(id)}/`)));
    },
    /** Resolves with `pred()`'s first truthy value, checked on every change; rejects after `ms`. */
    waitFor(pred, ms = 10_000, what = 'a forwarded exchange') {
      return new Promise((resolve, reject) => {
        const check = () => {
          const v = pred();
          if (v) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(v);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  };
}

/**
 * POSTs the smallest body `DefaultChatTransport` sends to `${origin}/api/chat` and returns the
 * status (the body is dropped unread: a server that speaks the protocol has started a turn).
 */
export async function probeApiChat(origin) {
  const id = `aisdk-probe-${crypto.randomUUID()}`;
  const body = {
    id,
    messages: [{ id: `${id}-u`, role: 'user', parts: [{ type: 'text', text: 'hello' }] }],
    trigger: 'submit-message',
  };
  const r = await fetch(`${origin}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await r.body?.cancel().catch(() => {});
  return r.status;
}
