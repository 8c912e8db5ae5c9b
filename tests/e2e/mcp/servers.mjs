// Real MCP servers on 127.0.0.1 for the MCP suite, one of each era:
//
// - `startDocsServer`: a server made with `@modelcontextprotocol/server` v2's `createMcpHandler`
//   (the current revision, 2026-07-28: stateless, JSON answers; 2025-era requests refused, so a
//   client that cannot speak the current revision fails against it). Its tools are the ones the
//   scenarios need: a plain one, one that fails with `isError`, a slow one, one whose name has a
//   dot, one the operator puts behind approval. With `token`, every request without
//   `Authorization: Bearer <token>` is answered 401.
// - `startEverythingServer`: `@modelcontextprotocol/server-everything` (the 2025 revisions:
//   sessions, SSE answers) as its own CLI runs it (`streamableHttp`), in a child process behind
//   a pass-through proxy that logs each request. `dropSessions()` restarts the child on the same
//   port: every session it gave out is forgotten.
//
// Both keep `log`: one `{ method, tool, … }` per JSON-RPC message received, in order, so a test
// can show which requests weft sent (no `tools/list` after a restart, a fresh `initialize` after
// the sessions were dropped).

import { spawn } from 'node:child_process';
import { createServer, request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

import { freePort } from '../server.mjs';

const require = createRequire(import.meta.url);

/** The JSON-RPC messages of a request body (one message, or a batch): each one's method (or
 * `response`) and, for a tool call, the tool's name. */
function messagesOf(body) {
  try {
    const parsed = JSON.parse(body);
    return (Array.isArray(parsed) ? parsed : [parsed]).map((m) => ({
      method: m?.method ?? (m?.result !== undefined || m?.error ? 'response' : '?'),
      tool: m?.method === 'tools/call' ? (m.params?.name ?? null) : null,
    }));
  } catch {
    return [{ method: 'unparsable', tool: null }];
  }
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function listen(server, port = 0) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server.address().port));
  });
}

/** The tools of the docs server (current revision). */
function docsServer(slowMs) {
  const server = new McpServer({ name: 'weft-docs-fixture', version: '1.0.0' });
  server.registerTool(
    'lookup',
    {
      description: 'Looks a term up in the docs.',
      inputSchema: z.object({ term: z.string().describe('The term to look up') }),
      annotations: { readOnlyHint: true },
    },
    async ({ term }) => ({ content: [{ type: 'text', text: `${term}: a word the docs define` }] }),
  );
  server.registerTool(
    'delete_page',
    {
      description: 'Deletes a page of the docs.',
      inputSchema: z.object({ page: z.string() }),
      annotations: { destructiveHint: true },
    },
    async ({ page }) => ({ content: [{ type: 'text', text: `deleted ${page}` }] }),
  );
  server.registerTool(
    'locked',
    {
      description: 'Edits a locked page (always fails).',
      inputSchema: z.object({}),
    },
    async () => ({ content: [{ type: 'text', text: 'the page is locked' }], isError: true }),
  );
  server.registerTool(
    'slow',
    {
      description: 'Takes a long time.',
      inputSchema: z.object({}),
    },
    async () => {
      await new Promise((r) => setTimeout(r, slowMs));
      return { content: [{ type: 'text', text: 'finally done' }] };
    },
  );
  server.registerTool(
    'notes.search',
    {
      description: 'Searches the notes.',
      inputSchema: z.object({ query: z.string() }),
      annotations: { readOnlyHint: true },
    },
    async ({ query }) => ({
      content: [{ type: 'text', text: `1 note matches ${query}` }],
      structuredContent: { matches: 1, query },
    }),
  );
  return server;
}

/**
 * The current-revision server on a free port.
 * @param {{ token?: string, slowMs?: number }} [opts]
 */
export async function startDocsServer(opts = {}) {
  const handler = createMcpHandler(() => docsServer(opts.slowMs ?? 60_000), { legacy: 'reject', responseMode: 'json' });
  const log = [];
  const sockets = new Set();
  const http = createServer(async (req, res) => {
    try {
      const body = await readBody(req);
      for (const m of messagesOf(body.toString())) {
        log.push({ ...m, header: req.headers['mcp-method'] ?? null, auth: Boolean(req.headers.authorization) });
      }
      if (opts.token && req.headers.authorization !== `Bearer ${opts.token}`) {
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
        res.end(JSON.stringify({ error: 'invalid_token' }));
        return;
      }
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
      const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
      });
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) {
        for await (const chunk of /** @type {AsyncIterable<Uint8Array>} */ (/** @type {unknown} */ (response.body))) res.write(chunk);
      }
      res.end();
    } catch (e) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(e?.stack ?? e));
    }
  });
  http.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const port = await listen(http);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    log,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => http.close(r));
      await handler.close();
    },
  };
}

/** Starts the everything server's own CLI on `port`; resolves once it listens. */
function spawnEverything(port) {
  const pkg = dirname(require.resolve('@modelcontextprotocol/server-everything/package.json'));
  const child = spawn(process.execPath, [join(pkg, 'dist/index.js'), 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d) => {
      out += d.toString();
      if (/listening on port/.test(out)) resolve(child);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}):\n${out}`)));
  });
}

/** The 2025-era server, behind a logging proxy on a free port. */
export async function startEverythingServer() {
  const inner = await freePort();
  let child = await spawnEverything(inner);
  const log = [];
  const sockets = new Set();
  let down = false;
  const proxy = createServer(async (req, res) => {
    const body = await readBody(req);
    const session = req.headers['mcp-session-id'] ?? null;
    if (req.method === 'POST') {
      for (const m of messagesOf(body.toString())) log.push({ ...m, session });
    } else {
      log.push({ method: `HTTP ${req.method}`, tool: null, session });
    }
    if (down) {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('the server is down for maintenance');
      return;
    }
    const out = httpRequest({ host: '127.0.0.1', port: inner, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', (e) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(String(e));
    });
    out.end(body);
  });
  proxy.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const port = await listen(proxy);
  const stop = () =>
    new Promise((/** @type {(v?: unknown) => void} */ resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    log,
    /** While down, every request is answered 503 (and still logged). */
    setDown(value) {
      down = value;
    },
    /** Restarts the server behind the proxy: every session it gave out is gone. */
    async dropSessions() {
      await stop();
      child = await spawnEverything(inner);
    },
    async close() {
      await stop();
      for (const s of sockets) s.destroy();
      await new Promise((r) => proxy.close(r));
    },
  };
}
