// Section 3 of the bench: the server under `wrangler dev`, with the scripted LLM streaming a
// fixed reply ("long reply N": exactly N word tokens) with no delay. Four systems, each driven
// by a plain WebSocket / HTTP client in this process that parses every frame:
//
//   weft        the Worker (worker/) — tests/e2e/server.mjs starts it and the scripted LLM;
//   weft-relayed  the same Worker, reached as the original clients reach it: a socket opened
//               without `?session_id=` whose `run` names its session in `thread_id`, so every
//               frame crosses a link between two Durable Objects (worker/src/relay.rs);
//   cf-agents   Cloudflare Agents AIChatAgent + @ai-sdk/openai (tests/bench/peers, same wrangler);
//   relay       a bare JS Durable Object relaying the scripted stream to its socket (floor);
//   direct      the scripted LLM streamed straight to a Node client (floor).
//
// Per system: 1 session (time to first token, total, tokens/s) and N concurrent sessions
// (aggregate tokens/s, median first token), and frames lost; then a paced phase (the LLM sends
// a token every `paceMs`) for the latency each system adds per token: the arrival time of token
// i at the client minus the time the scripted LLM wrote it (both clocks are this process's).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import WebSocket from 'ws';

import { startScriptedLlm } from '../scripted-llm/server.mjs';
import { benchDir, freePort, log, root, toolchainEnv } from './lib/env.mjs';
import { connectInspector, cpuProfile, selfTimes } from './lib/profile.mjs';

const now = () => performance.now();

// ---- the scripted LLM: pacing switch and write timestamps -----------------------------------

/**
 * Hooks the in-process scripted LLM: `pace(ms)` sets the delay between streamed chunks of the
 * following requests (through its own `x-scripted-delay-ms` header, set before its handler
 * reads it), and `capture()` records when each content token was written.
 */
export function hookLlm(llm) {
  const state = { pace: 0, writes: null };
  llm.server.prependListener('request', (req, res) => {
    if (state.pace > 0) req.headers['x-scripted-delay-ms'] = String(state.pace);
    if (!state.writes) return;
    const mine = [];
    state.writes.push(mine);
    const write = res.write.bind(res);
    res.write = (chunk, ...rest) => {
      const t = now();
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
      for (const m of text.matchAll(/"content":"((?:[^"\\]|\\.)+)"/g)) if (m[1]) mine.push(t);
      return write(chunk, ...rest);
    };
  });
  return {
    pace(ms) {
      state.pace = ms;
    },
    capture() {
      state.writes = [];
    },
    /** Write times of the content tokens of the responses since capture(), one array each. */
    take() {
      const w = state.writes ?? [];
      state.writes = null;
      return w;
    },
  };
}

// ---- wrangler dev -----------------------------------------------------------------------------

/**
 * `wrangler dev` in `cwd` (weft: worker/, its build runs worker-build; the peers: tests/bench/peers).
 * `onOutput(text)` sees everything it prints as it comes (the Worker's console.log needs
 * `logLevel: 'log'`).
 */
export async function startWrangler(name, cwd, vars, { onOutput, logLevel = 'warn' } = {}) {
  const port = await freePort();
  const inspector = await freePort();
  const persist = mkdtempSync(join(tmpdir(), `weft-bench-${name}-`));
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
    logLevel,
  ];
  for (const [k, v] of Object.entries(vars)) args.push('--var', `${k}:${v}`);
  // Function names stay in the Worker's wasm here (the upload strips them): the CPU profile
  // attributes time to functions by them. The code is the same.
  const env = { ...toolchainEnv(), WEFT_KEEP_WASM_NAMES: '1' };
  const child = spawn('npx', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  const onData = (d) => {
    out += d;
    if (out.length > 200_000) out = out.slice(-100_000);
    onOutput?.(String(d));
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const deadline = Date.now() + 900_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name}: wrangler dev exited (${child.exitCode}):\n${out.slice(-4000)}`);
    if (Date.now() > deadline) throw new Error(`${name}: wrangler dev not ready:\n${out.slice(-4000)}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    ws: `ws://127.0.0.1:${port}`,
    http: `http://127.0.0.1:${port}`,
    persist,
    inspector,
    log: () => out,
    stop: () =>
      new Promise((resolve) => {
        const done = () => {
          rmSync(persist, { recursive: true, force: true });
          resolve();
        };
        if (child.exitCode !== null) return done();
        child.once('exit', done);
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          done();
        }
      }),
  };
}

// ---- clients --------------------------------------------------------------------------------

export function open(url) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
    ws.once('unexpected-response', (_q, res) => reject(new Error(`${url}: HTTP ${res.statusCode}`)));
  });
}

/** SSE `data:` lines of an OpenAI stream → content tokens, across arbitrary piece boundaries. */
function sseTokens(onToken) {
  let buf = '';
  return (text) => {
    buf += text;
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const event = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
      const c = JSON.parse(event.slice(6)).choices?.[0]?.delta?.content;
      if (c) onToken(c);
    }
  };
}

/**
 * A session of one system, connected (not timed); `start()` sends the message and resolves
 * with {tSend, tFirst, tLast, tokens, text, arrivals, lost, frames} once the reply is complete.
 */
async function session(system, target, id, message, { keepArrivals = false } = {}) {
  const r = { tSend: 0, tFirst: 0, tLast: 0, tokens: 0, words: 0, frames: 0, arrivals: keepArrivals ? [] : null, problems: [] };
  // Counted in the reply's word tokens, not in frames: a server may merge the tokens that are
  // waiting when it sends (weft does under load), and a frame of three words delivers three.
  const token = (content) => {
    const t = now();
    const words = content.trim().split(/\s+/).filter(Boolean).length;
    if (!words) return;
    if (!r.tokens) r.tFirst = t;
    r.tLast = t;
    r.tokens += words;
    r.words += words;
    for (let i = 0; r.arrivals && i < words; i++) r.arrivals.push(t);
  };
  if (system === 'direct') {
    return {
      close() {},
      async start() {
        r.tSend = now();
        const resp = await fetch(`${target}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
          body: JSON.stringify({ model: 'scripted', stream: true, messages: [{ role: 'user', content: message }] }),
        });
        const feed = sseTokens(token);
        const dec = new TextDecoder();
        for await (const piece of resp.body) {
          r.frames++;
          feed(dec.decode(piece, { stream: true }));
        }
        return r;
      },
    };
  }
  const weftLike = system === 'weft' || system === 'weft-relayed';
  const url =
    system === 'weft'
      ? `${target}/?session_id=${id}`
      : system === 'weft-relayed'
        ? `${target}/`
        : system === 'cf-agents'
          ? `${target}/agents/chat/${id}`
          : `${target}/relay?session=${id}`;
  const ws = await open(url);
  let finish;
  let fail;
  let timer;
  const done = new Promise((res, rej) => {
    finish = res;
    fail = rej;
  }).finally(() => clearTimeout(timer));
  ws.on('close', () => fail(new Error(`${system} ${id}: socket closed mid-run`)));
  ws.on('error', (e) => fail(e));
  const requestId = `req-${id}`;
  const eventIds = [];
  let runId = null;
  let seqs = [];
  const relayFeed = sseTokens(token);
  ws.on('message', (data) => {
    const text = data.toString();
    if (system === 'relay') {
      if (text === '{"done":true}') return finish();
      r.frames++;
      return relayFeed(text);
    }
    const f = JSON.parse(text);
    if (weftLike) {
      if (f.type === 'error') return fail(new Error(`${system} ${id}: ${text}`));
      if (f.type !== 'run_stream_event' && f.type !== 'run_end') return;
      r.frames++;
      const ev = f.type === 'run_end' ? f : f.event;
      runId ??= f.id;
      eventIds.push(ev.event_id);
      if (ev.type === 'message_chunk') token(ev.content);
      if (f.type === 'run_end') finish();
      return;
    }
    // cf-agents
    if (f.type !== 'cf_agent_use_chat_response' || f.id !== requestId) return;
    r.frames++;
    if (f.error) return fail(new Error(`cf-agents ${id}: ${f.body}`));
    if (f.seq !== undefined) seqs.push(f.seq);
    if (f.body) {
      const c = JSON.parse(f.body);
      if (c.type === 'text-delta') token(c.delta);
    }
    if (f.done) finish();
  });
  return {
    close() {
      ws.removeAllListeners('close');
      ws.close();
    },
    async start() {
      r.tSend = now();
      if (system === 'weft') ws.send(JSON.stringify({ type: 'run', message, agent: 'react' }));
      else if (system === 'weft-relayed') ws.send(JSON.stringify({ type: 'run', message, agent: 'react', thread_id: id }));
      else if (system === 'relay') ws.send(JSON.stringify({ message }));
      else {
        ws.send(
          JSON.stringify({
            id: requestId,
            type: 'cf_agent_use_chat_request',
            init: {
              method: 'POST',
              body: JSON.stringify({ messages: [{ id: `u-${id}`, role: 'user', parts: [{ type: 'text', text: message }] }], trigger: 'submit-message' }),
            },
          }),
        );
      }
      timer = setTimeout(() => fail(new Error(`${system} ${id}: no complete reply within 10 min (${r.tokens} tokens so far)`)), 600_000);
      await done;
      if (weftLike) {
        r.runId = runId;
        const dense = eventIds.every((e, i) => e === i + 1);
        if (!dense) r.problems.push(`event ids not dense 1..${eventIds.length}`);
        r.eventIds = eventIds.length;
      }
      if (system === 'cf-agents' && seqs.length && !seqs.every((s, i) => s === seqs[0] + i)) r.problems.push('seq not dense');
      return r;
    },
  };
}

/** weft: every frame the run sent is in the session's event log (a resume from 0 replays it). */
async function weftLogCheck(target, id, runId, expected) {
  const ws = await open(`${target}/?session_id=${id}`);
  const got = [];
  const done = new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(), 15_000);
    ws.on('message', (data) => {
      const f = JSON.parse(data.toString());
      if (f.type === 'error') {
        clearTimeout(timer);
        reject(new Error(data.toString()));
      }
      if (f.type === 'run_stream_event' || f.type === 'run_end') got.push(f);
      if (f.type === 'run_end') {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  ws.send(JSON.stringify({ type: 'resume', run_id: runId, after_event_id: 0 }));
  await done;
  ws.close();
  return got.length === expected ? 0 : expected - got.length;
}

async function round(system, target, n, message, tag, opts = {}) {
  const ids = Array.from({ length: n }, (_, i) => `${tag}-${i}`);
  const sessions = await Promise.all(ids.map((id) => session(system, target, id, message, opts)));
  const t0 = now();
  const results = await Promise.all(sessions.map((s) => s.start()));
  const t1 = now();
  for (const s of sessions) s.close();
  results.forEach((r, i) => {
    r.id = ids[i];
  });
  return { results, wall: t1 - t0, t0 };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

function summarize(round, expectedTokens) {
  const { results, t0 } = round;
  const tokens = results.reduce((a, r) => a + r.tokens, 0);
  const end = Math.max(...results.map((r) => r.tLast));
  const ttfts = results.map((r) => r.tFirst - r.tSend);
  const lostTokens = results.reduce((a, r) => a + Math.max(0, expectedTokens - r.words), 0);
  return {
    sessions: results.length,
    ttftMs: median(ttfts),
    ttftMaxMs: Math.max(...ttfts),
    totalMs: end - t0,
    tokensPerS: tokens / ((end - t0) / 1000),
    perSessionTokensPerS: median(results.map((r) => r.tokens / ((r.tLast - r.tSend) / 1000))),
    tokens,
    lostTokens,
    framesPerSession: median(results.map((r) => r.frames)),
    problems: results.flatMap((r) => r.problems.map((p) => `${r.id}: ${p}`)),
  };
}

/**
 * @param {{runs: number, tokens: number, concurrency: number, paceMs: number, paceTokens: number,
 *   systems?: string[], logCheck?: boolean}} o
 */
export async function serverBench(o) {
  const systems = o.systems ?? ['weft', 'weft-relayed', 'cf-agents', 'relay', 'direct'];
  log('server: starting the scripted LLM and weft under wrangler dev');
  const llm = await startScriptedLlm({ port: 0, host: '127.0.0.1', delayMs: 0 });
  const hook = hookLlm(llm);
  let weft;
  let peers;
  const out = { systems, runs: [], paced: [], logCheck: null, profile: null, peerFailures: [] };
  // A peer's session that fails repeats its round, on new sessions, up to twice, and each
  // failure is reported (CF Agents once answered "An error occurred." to one of 50 concurrent
  // sessions, which ended a 19-minute run). weft gets no second try: a failed weft session
  // fails the bench.
  const measured = async (s, tgt, n, msg, tag, opts) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await round(s, tgt, n, msg, attempt === 1 ? tag : `${tag}-again${attempt}`, opts);
      } catch (e) {
        if (s.startsWith('weft') || attempt === 3) throw e;
        out.peerFailures.push({ system: s, round: tag, error: e.message });
        log(`server: ${s} round ${tag} failed (${e.message}); running it again (${attempt + 1} of 3)`);
      }
    }
  };
  try {
    weft = await startWrangler('weft', join(root, 'worker'), { SCRIPTED_LLM_URL: `${llm.url}/v1` });
    if (systems.some((s) => s === 'cf-agents' || s === 'relay')) {
      log('server: starting the peers worker under wrangler dev');
      peers = await startWrangler('peers', join(benchDir, 'peers'), { SCRIPTED_LLM_URL: `${llm.url}/v1` });
    }
    const target = { weft: weft.ws, 'weft-relayed': weft.ws, 'cf-agents': peers?.ws, relay: peers?.ws, direct: llm.url };
    const message = `long reply ${o.tokens}`;
    // Warm-up: each system once (isolate start, first compile, DO creation), not recorded.
    for (const s of systems) await round(s, target[s], 1, message, `warm-${s}`);
    let logMissing = 0;
    let logChecked = 0;
    for (let rep = 0; rep < o.runs; rep++) {
      const row = {};
      const order = systems.map((_, i) => systems[(i + rep) % systems.length]);
      for (const s of order) {
        const one = summarize(await measured(s, target[s], 1, message, `r${rep}-one-${s}`), o.tokens);
        const many = await measured(s, target[s], o.concurrency, message, `r${rep}-many-${s}`);
        row[s] = { one, many: summarize(many, o.tokens) };
        if (s === 'weft' && o.logCheck !== false) {
          for (const r of many.results) {
            logMissing += await weftLogCheck(target.weft, r.id, r.runId, r.eventIds);
            logChecked++;
          }
        }
      }
      out.runs.push(row);
      log(
        `server: run ${rep + 1}/${o.runs}: ${systems.map((s) => `${s} 1×${row[s].one.tokensPerS.toFixed(0)} tok/s ttft ${row[s].one.ttftMs.toFixed(1)} ms, ${o.concurrency}×${row[s].many.tokensPerS.toFixed(0)} tok/s ttft ${row[s].many.ttftMs.toFixed(0)} ms, lost ${row[s].one.lostTokens + row[s].many.lostTokens}`).join('; ')}`,
      );
    }
    out.logCheck = { sessions: logChecked, framesMissing: logMissing };

    // Paced: one session at a time, the LLM writing a token every paceMs.
    hook.pace(o.paceMs);
    const pacedMessage = `long reply ${o.paceTokens}`;
    for (let rep = 0; rep < o.runs; rep++) {
      const row = {};
      for (const s of systems) {
        hook.capture();
        const { results } = await measured(s, target[s], 1, pacedMessage, `p${rep}-${s}`, { keepArrivals: true });
        const writes = hook.take().find((w) => w.length === o.paceTokens) ?? [];
        const arr = results[0].arrivals;
        const lat = [];
        for (let i = 0; i < Math.min(arr.length, writes.length); i++) lat.push(arr[i] - writes[i]);
        row[s] = {
          p50: lat.length ? median(lat) : NaN,
          p95: lat.length ? [...lat].sort((a, b) => a - b)[Math.floor(lat.length * 0.95)] : NaN,
          tokens: arr.length,
          matched: lat.length,
        };
      }
      out.paced.push(row);
      log(`server: paced run ${rep + 1}/${o.runs}: ${systems.map((s) => `${s} p50 ${row[s].p50.toFixed(2)} ms`).join(', ')}`);
    }
    hook.pace(0);

    // Where weft's time goes: a CPU profile of its isolate over one concurrent round.
    if (o.profileSessions && systems.includes('weft')) {
      const inspector = await connectInspector(weft.inspector);
      try {
        const { value, profile } = await cpuProfile(inspector, () => round('weft', target.weft, o.profileSessions, message, 'prof'));
        out.profile = { sessions: o.profileSessions, tokensPerS: summarize(value, o.tokens).tokensPerS, self: selfTimes(profile) };
        out.profile.self.fns = out.profile.self.fns.slice(0, 60);
      } finally {
        inspector.close();
      }
    }
  } finally {
    await peers?.stop();
    await weft?.stop();
    await llm.close();
  }
  return out;
}
