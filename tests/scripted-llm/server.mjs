#!/usr/bin/env node
// The scripted LLM: a local stand-in for the OpenAI, Anthropic and Gemini streaming APIs that
// answers deterministically (see rules.mjs) in each provider's exact wire format, validates
// requests like the real APIs, and can inject faults. Plain ESM, node:http only, no
// dependencies. See README.md beside this file.
//
//   node tests/scripted-llm/server.mjs [--port N] [--host 127.0.0.1] [--delay-ms N] [--verbose]
//
//   import { startScriptedLlm } from './tests/scripted-llm/server.mjs';
//   const llm = await startScriptedLlm({ port: 0 });   // llm.url, llm.port, await llm.close()

import http from 'node:http';
import { pathToFileURL } from 'node:url';
import * as openai from './providers/openai.mjs';
import * as anthropic from './providers/anthropic.mjs';
import * as gemini from './providers/gemini.mjs';
import { ApiError, idSource, malform } from './lib.mjs';
import { buildContext, planReply } from './rules.mjs';
import { shapeOutput } from './output.mjs';

export { rules } from './rules.mjs';

export const FAULTS = ['401', '429', '500', '529', 'cut', 'malformed', 'stall', 'stream-error'];
const HTTP_FAULTS = new Set(['401', '429', '500', '529']);
const FAULT_IN_MODEL = /(?:^|[^a-z0-9])fault-(401|429|500|529|cut|malformed|stall|stream-error)(?![a-z0-9])/i;
const MAX_BODY = 32 * 1024 * 1024;
const MAX_DELAY = 60000;

/** The fault selected by the `x-scripted-fault` header (wins) or by the model name. */
export function faultFor(model, header) {
  if (typeof header === 'string' && header.trim()) {
    const h = header
      .trim()
      .toLowerCase()
      .replace(/^fault-/, '');
    if (FAULTS.includes(h)) return h;
  }
  const m = typeof model === 'string' ? model.match(FAULT_IN_MODEL) : null;
  return m ? m[1].toLowerCase() : null;
}

function route(method, pathname) {
  if (pathname.endsWith('/chat/completions')) return { provider: openai };
  if (/\/v1\/messages$/.test(pathname)) return { provider: anthropic };
  const g = pathname.match(/^\/(?:v1beta|v1|v1alpha)\/models\/([^/:]+):(streamGenerateContent|generateContent)$/);
  if (g) return { provider: gemini, model: decodeURIComponent(g[1]), action: g[2] };
  return null;
}

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers':
    'authorization, content-type, x-api-key, anthropic-version, anthropic-beta, anthropic-dangerous-direct-browser-access, x-goog-api-key, x-scripted-fault, x-scripted-delay-ms, x-scripted-reasoning-field',
  'access-control-expose-headers': 'retry-after, x-request-id, request-id, x-scripted-rule',
};

function sendText(res, status, contentType, text, headers = {}) {
  res.writeHead(status, { ...CORS, ...headers, 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res, provider, err, headers = {}) {
  sendText(res, err.status, provider.jsonContentType, provider.formatError(err.body), { ...headers, ...err.headers });
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new ApiError(413, { error: { message: 'Request body too large.', type: 'invalid_request_error', param: null, code: null } }));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(undefined);
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve(undefined);
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

function untilAborted(signal) {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(undefined);
    signal.addEventListener('abort', () => resolve(undefined), { once: true });
  });
}

/** Write and wait until the bytes left this process (or the client went away). */
function writeFlushed(res, data, signal) {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(undefined);
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve(undefined);
    };
    signal.addEventListener('abort', done, { once: true });
    res.write(data, done);
  });
}

function drained(res, signal) {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve(undefined);
    };
    res.on('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Where cut / stream-error / malformed strike: after a few events, never at the end. */
const faultPoint = (n) => Math.max(1, Math.min(4, Math.floor(n / 2)));

function breakEvent(event) {
  const broken = malform(event);
  return broken !== event ? broken : event.slice(0, Math.max(1, Math.floor(event.length / 2)));
}

async function streamOut(res, { events, fault, errorEvent, delay, headers, state }) {
  const ac = new AbortController();
  const onClose = () => ac.abort();
  res.on('close', onClose);
  state.active.add(res);
  try {
    res.writeHead(200, { ...CORS, ...headers, 'cache-control': 'no-cache' });
    const k = faultPoint(events.length);
    let seq = events;
    if (fault === 'malformed') seq = [...events.slice(0, k), breakEvent(events[k]), ...events.slice(k)];
    else if (fault === 'cut' || fault === 'stream-error') seq = events.slice(0, k);
    else if (fault === 'stall') seq = events.slice(0, 1);
    for (let i = 0; i < seq.length; i++) {
      if (i > 0 && delay > 0) await sleep(delay, ac.signal);
      if (ac.signal.aborted) return;
      if (fault === 'cut' && i === seq.length - 1) await writeFlushed(res, seq[i], ac.signal);
      else if (!res.write(seq[i])) await drained(res, ac.signal);
    }
    if (ac.signal.aborted) return;
    if (fault === 'cut') {
      res.destroy();
      return;
    }
    if (fault === 'stall') {
      // Nothing more is sent; no timer is armed. The client (or close()) ends it.
      await untilAborted(ac.signal);
      return;
    }
    if (fault === 'stream-error') {
      if (delay > 0) await sleep(delay, ac.signal);
      if (ac.signal.aborted) return;
      res.end(errorEvent);
      return;
    }
    res.end();
  } finally {
    res.off('close', onClose);
    state.active.delete(res);
  }
}

async function jsonOut(res, { provider, body, fault, delay, headers, state }) {
  const ac = new AbortController();
  const onClose = () => ac.abort();
  res.on('close', onClose);
  state.active.add(res);
  try {
    if (delay > 0) await sleep(delay, ac.signal);
    if (ac.signal.aborted) return;
    const all = { ...CORS, ...headers, 'content-type': provider.jsonContentType };
    if (fault === 'stall') {
      await untilAborted(ac.signal);
      return;
    }
    if (fault === 'cut') {
      res.writeHead(200, { ...all, 'content-length': Buffer.byteLength(body) });
      await writeFlushed(res, body.slice(0, Math.floor(body.length / 2)), ac.signal);
      res.destroy();
      return;
    }
    if (fault === 'malformed') {
      const broken = body.slice(0, Math.floor(body.length / 2));
      res.writeHead(200, { ...all, 'content-length': Buffer.byteLength(broken) });
      res.end(broken);
      return;
    }
    res.writeHead(200, { ...all, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  } finally {
    res.off('close', onClose);
    state.active.delete(res);
  }
}

/** The most requests `requests` keeps (the oldest go first), so a long benchmark stays small. */
const MAX_RECORDED = 1000;

/** Keeps what a request asked for, for the request log (`llm.requests`). */
function record(state, entry) {
  state.requests.push(entry);
  if (state.requests.length > MAX_RECORDED) state.requests.shift();
}

async function handle(req, res, opts, state) {
  const url = new URL(req.url, 'http://scripted-llm.local');
  if (req.method === 'OPTIONS') {
    res.writeHead(204, CORS);
    res.end();
    return;
  }
  if (req.method === 'GET' && (url.pathname === '/healthz' || url.pathname === '/health')) {
    sendText(res, 200, 'text/plain; charset=utf-8', 'ok');
    return;
  }
  if (req.method === 'GET' && /\/v1\/models$/.test(url.pathname)) {
    const list = { object: 'list', data: [{ id: 'scripted', object: 'model', created: 0, owned_by: 'scripted-llm' }] };
    sendText(res, 200, openai.jsonContentType, `${JSON.stringify(list, null, 2)}\n`);
    return;
  }
  const r = req.method === 'POST' ? route(req.method, url.pathname) : null;
  if (!r) {
    const body = { error: { message: `Invalid URL (${req.method} ${url.pathname})`, type: 'invalid_request_error', param: null, code: null } };
    sendText(res, 404, openai.jsonContentType, openai.formatError(body));
    return;
  }
  const p = r.provider;
  const raw = await readBody(req).catch((e) => e);
  if (raw instanceof ApiError) {
    sendError(res, p, raw);
    return;
  }
  if (typeof raw !== 'string') return; // the request errored; nothing to answer
  const seed = `${p.name}\u0000${url.pathname}\u0000${raw}`;
  const id = idSource(seed);
  const requestId = p === openai ? id('req_', 32, '0123456789abcdef') : id('req_011C', 20);
  const baseHeaders = p === anthropic ? { 'request-id': requestId } : p === openai ? { 'x-request-id': requestId } : {};
  const log = (status, extra = '') => {
    if (opts.log) process.stderr.write(`[scripted-llm] ${req.method} ${url.pathname} -> ${status}${extra}\n`);
  };

  if (!p.authorized(req, url)) {
    sendError(res, p, p.authError(), baseHeaders);
    log(401, ' (no key)');
    return;
  }
  try {
    if ('checkHeaders' in p) p.checkHeaders(req);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    sendError(res, p, e, baseHeaders);
    log(e.status);
    return;
  }
  let body;
  try {
    body = JSON.parse(raw);
  } catch {
    sendError(res, p, p.badJson(), baseHeaders);
    log(400, ' (bad JSON)');
    return;
  }
  const model = r.model ?? body?.model;
  const fault = faultFor(model, req.headers['x-scripted-fault']);
  if (fault && HTTP_FAULTS.has(fault)) {
    const e = p.faultError(fault, { model: String(model ?? ''), key: p.apiKey(req, url), requestId });
    sendError(res, p, e, baseHeaders);
    log(e.status, ` (fault-${fault})`);
    return;
  }
  let parsed;
  try {
    parsed = p.parseRequest(body, { model: r.model, stream: r.action === 'streamGenerateContent', sse: url.searchParams.get('alt') === 'sse' });
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    sendError(res, p, e, baseHeaders);
    log(e.status, ` ${JSON.stringify(e.body)}`);
    return;
  }
  const ctx = buildContext(parsed.conv);
  record(state, {
    provider: p.name,
    path: url.pathname,
    model: String(model ?? ''),
    system: ctx.system,
    lastUser: ctx.lastUser,
    temperature: body?.temperature ?? body?.generationConfig?.temperature ?? null,
  });
  // A fault may also be asked for in the last user message ("... fault-429 ..."), so a test
  // can fail one run of a session without reconfiguring the server.
  const messageFault = fault ? null : faultFor(ctx.lastUser, null);
  if (messageFault && HTTP_FAULTS.has(messageFault)) {
    const e = p.faultError(messageFault, { model: String(model ?? ''), key: p.apiKey(req, url), requestId });
    sendError(res, p, e, baseHeaders);
    log(e.status, ` (fault-${messageFault} in the message)`);
    return;
  }
  const activeFault = fault ?? messageFault;
  const plan = planReply(ctx, opts.rules);
  // A rule may answer with an HTTP fault itself (`{ fault: '500' }`): e.g. one sub-task of an
  // agent's plan failing, where a keyword in the message would fail every request quoting it.
  if (plan.fault && HTTP_FAULTS.has(String(plan.fault))) {
    const e = p.faultError(String(plan.fault), { model: String(model ?? ''), key: p.apiKey(req, url), requestId });
    sendError(res, p, e, { ...baseHeaders, 'x-scripted-rule': plan.rule });
    log(e.status, ` (fault-${plan.fault} from rule ${plan.rule})`);
    return;
  }
  const out = shapeOutput(plan, parsed.conv, { maxTokens: parsed.maxTokens, reasoning: parsed.reasoning });
  const headerDelay = Number.parseInt(req.headers['x-scripted-delay-ms'] ?? '', 10);
  const delay = Math.min(MAX_DELAY, Math.max(0, Number.isFinite(headerDelay) ? headerDelay : opts.delayMs));
  const reasoningField = req.headers['x-scripted-reasoning-field'] === 'reasoning' ? 'reasoning' : 'reasoning_content';
  const meta = {
    model: parsed.model,
    id,
    seed,
    requestId,
    created: Math.floor(Date.now() / 1000),
    includeUsage: parsed.includeUsage,
    reasoningField,
    sse: parsed.sse,
  };
  const headers = { ...baseHeaders, 'x-scripted-rule': plan.rule };
  log(200, ` rule=${plan.rule}${activeFault ? ` fault-${activeFault}` : ''}${parsed.stream ? ' stream' : ''}`);

  if (parsed.stream) {
    const contentType = p === gemini && !parsed.sse ? p.jsonContentType : p.sseContentType;
    if (p === gemini && parsed.sse) headers['content-disposition'] = 'attachment';
    await streamOut(res, {
      events: p.streamEvents(out, meta),
      fault: activeFault,
      errorEvent: p.streamError(meta),
      delay,
      headers: { ...headers, 'content-type': contentType },
      state,
    });
    return;
  }
  if (activeFault === 'stream-error') {
    // No stream to break: answer the error the stream would have carried as an HTTP error.
    sendError(res, p, p.faultError(p === anthropic ? '529' : '500', { model, key: '', requestId }), baseHeaders);
    return;
  }
  await jsonOut(res, { provider: p, body: p.json(out, meta), fault: activeFault, delay, headers, state });
}

/**
 * Start the server in-process.
 * @param {{port?: number, host?: string, delayMs?: number, rules?: Array, log?: boolean}} options
 *   port 0 (the default) picks a free port; rules are tried before the built-in table.
 * @returns {Promise<{url: string, port: number, host: string, server: http.Server,
 *   activeResponses: number, requests: Array<{provider: string, path: string, model: string,
 *   system: string, lastUser: string, temperature: number | null}>, close: () => Promise<void>}>}
 */
export async function startScriptedLlm({ port = 0, host = '127.0.0.1', delayMs = 0, rules = [], log = false } = {}) {
  const opts = { delayMs: Math.max(0, Number(delayMs) || 0), rules, log };
  const state = { active: new Set(), requests: [] };
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    handle(req, res, opts, state).catch((err) => {
      process.stderr.write(`[scripted-llm] internal error: ${err?.stack ?? err}\n`);
      if (!res.headersSent)
        sendText(
          res,
          500,
          'application/json',
          JSON.stringify({ error: { message: String(err?.message ?? err), type: 'server_error', param: null, code: null } }),
        );
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(undefined);
    });
  });
  const actual = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  let closing = null;
  return {
    url: `http://${shownHost}:${actual}`,
    port: actual,
    host,
    server,
    /** Responses still being written (streams, stalls); 0 once every client has gone. */
    get activeResponses() {
      return state.active.size;
    },
    /**
     * The request log: every model request that got as far as the rules, oldest first (the
     * last 1000): `{provider, path, model, system, lastUser, temperature}`.
     * @type {Array<{provider: string, path: string, model: string, system: string, lastUser: string, temperature: number | null}>}
     */
    get requests() {
      return state.requests;
    },
    close() {
      if (!closing) {
        closing = new Promise((resolve) => {
          server.close(() => resolve(undefined));
          server.closeAllConnections?.();
          for (const s of sockets) s.destroy();
        });
      }
      return closing;
    },
  };
}

// ---- command line ------------------------------------------------------------------------

const USAGE = `usage: node tests/scripted-llm/server.mjs [--port N] [--host H] [--delay-ms N] [--verbose]

  --port N       port to listen on (default 8787; 0 picks a free port; env SCRIPTED_LLM_PORT or PORT)
  --host H       address to bind (default 127.0.0.1; env SCRIPTED_LLM_HOST)
  --delay-ms N   delay between streamed chunks in ms (default 0; env SCRIPTED_LLM_DELAY_MS)
  --verbose      log one line per request to stderr (env SCRIPTED_LLM_VERBOSE=1)
`;

/**
 * @param {string[]} argv
 * @param {NodeJS.ProcessEnv} env
 */
function parseCli(argv, env) {
  /** @type {{ port: string, host: string, delayMs: string, log: boolean, help?: boolean }} */
  const o = {
    port: env.SCRIPTED_LLM_PORT ?? env.PORT ?? '8787',
    host: env.SCRIPTED_LLM_HOST ?? '127.0.0.1',
    delayMs: env.SCRIPTED_LLM_DELAY_MS ?? '0',
    log: env.SCRIPTED_LLM_VERBOSE === '1' || env.SCRIPTED_LLM_VERBOSE === 'true',
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    const key = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const inline = arg.startsWith('--') && eq > 0 ? arg.slice(eq + 1) : undefined;
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${key} needs a value`);
      return v;
    };
    switch (key) {
      case '--port':
      case '-p':
        o.port = value();
        break;
      case '--host':
        o.host = value();
        break;
      case '--delay-ms':
      case '--delay':
        o.delayMs = value();
        break;
      case '--verbose':
      case '-v':
        o.log = true;
        break;
      case '--help':
      case '-h':
        o.help = true;
        break;
      default:
        throw new Error(`unknown argument: ${arg}`);
    }
  }
  const port = Number(o.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port: ${o.port}`);
  const delayMs = Number(o.delayMs);
  if (!Number.isFinite(delayMs) || delayMs < 0) throw new Error(`invalid delay: ${o.delayMs}`);
  return { ...o, port, delayMs };
}

async function main() {
  let cli;
  try {
    cli = parseCli(process.argv.slice(2), process.env);
  } catch (e) {
    process.stderr.write(`scripted-llm: ${e.message}\n${USAGE}`);
    process.exit(2);
  }
  if (cli.help) {
    process.stdout.write(USAGE);
    return;
  }
  let llm;
  try {
    llm = await startScriptedLlm(cli);
  } catch (e) {
    process.stderr.write(`scripted-llm: cannot listen on ${cli.host}:${cli.port}: ${e.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`scripted-llm listening on ${llm.url}\n`);
  const stop = () => {
    llm.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

const invokedDirectly = (() => {
  try {
    return Boolean(process.argv[1]) && import.meta.url === pathToFileURL(process.argv[1]).href;
  } catch {
    return false;
  }
})();

if (invokedDirectly) main();
