#!/usr/bin/env node
// `npm run soak`: what the server and its clients survive — load, faults, bad input, restarts
// and security probes — against the real Worker under `wrangler dev` and the scripted LLM,
// with figures printed at the end and RELIABILITY.md rewritten. `--short` is the version
// `npm test` runs (same checks, small counts). Every generator targets 127.0.0.1 only, is
// bounded in count and time, and stops by itself.

import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';

import { Conn, mintToken } from '../e2e/client.mjs';
import { startServer } from '../e2e/server.mjs';
import { corpus as urlCorpus, reachesLocalHost } from '../urls/local.mjs';
import { corpus, MUTATION_NAMES } from './corpus.mjs';

const KEY = 'sk-soak-never-leak-9f8e7d6c5b4a';
const TOKEN = 'soak-token';
const SECRET = 'soak-secret-for-per-user-tokens';
const DIALECT_PATHS = { loom: '/', agentloop: '/agentloop', agentchat: '/ws', cueso: '/ws/chat' };

export const FULL = { sessions: 200, approvalSessions: 20, tokens: 500, faultRuns: 100, killRuns: 100, restarts: 10, badPerDialect: 1000, localUrls: 2000 };
export const SHORT = { sessions: 12, approvalSessions: 3, tokens: 60, faultRuns: 8, killRuns: 6, restarts: 1, badPerDialect: 120, localUrls: 60 };

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The body the AI SDK's `DefaultChatTransport` sends for a first message in chat `id`. */
const aisdkBody = (id) => JSON.stringify({ id, trigger: 'submit-message', messages: [{ id: `${id}-u`, role: 'user', parts: [{ type: 'text', text: 'hi' }] }] });

/** Resident memory of the workerd processes (the Worker's runtime under wrangler dev), in MiB. */
function workerdRss() {
  try {
    const out = execFileSync('ps', ['-C', 'workerd', '-o', 'rss='], { encoding: 'utf8' });
    return (
      out
        .split('\n')
        .map((l) => Number(l.trim()))
        .filter((n) => n > 0)
        .reduce((a, b) => a + b, 0) / 1024
    );
  } catch {
    return NaN;
  }
}

/** Runs `count` tasks with at most `width` at once. */
async function pool(count, width, task) {
  const results = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

function runFrames(frames, runId) {
  return frames.filter((f) => f.id === runId && ['run_stream_event', 'run_end', 'error'].includes(f.type));
}
const eventIdOf = (f) => f.event?.event_id ?? f.event_id;

/** Checks one loom run's frames: ids 1..n, no duplicate, text equal to the reply. */
function checkRun(frames, runId) {
  const fs = runFrames(frames, runId);
  const ids = fs.map(eventIdOf);
  const dense = ids.every((id, i) => id === i + 1);
  const end = fs.find((f) => f.type === 'run_end');
  const text = fs
    .filter((f) => f.event?.type === 'message_chunk')
    .map((f) => f.event.content)
    .join('');
  return { frames: fs.length, dense, duplicates: ids.length - new Set(ids).size, ended: !!end, textMatches: !!end && text === end.reply, reply: end?.reply };
}

export async function soak(sizes, { log = console.log } = {}) {
  const started = Date.now();
  const server = await startServer({
    delayMs: 3,
    useKey: KEY,
    vars: {
      WEFT_AUTH_TOKEN: TOKEN,
      WEFT_AUTH_SECRET: SECRET,
      // Every socket here comes from 127.0.0.1: the load creates sessions faster than one
      // client should (its own row below checks the cap per session instead).
      SESSIONS_PER_MINUTE: '100000',
      // Above the bad-input corpus per socket, below the flood.
      RATE_LIMIT_PER_MINUTE: String(sizes.badPerDialect + 200),
      LLM_IDLE_TIMEOUT_MS: '2000',
      ALLOWED_ORIGINS: 'http://allowed.example',
    },
  });
  const everyFrame = [];
  Conn.onFrame = (f) => everyFrame.push(f);
  // The soak drives weft's own features (approvals, resume), so its sockets opt in to weft.
  const dialectAt = { '/': 'loom', '/agentloop': 'agentloop', '/ws': 'agentchat', '/ws/chat': 'cueso' };
  const open = (path, sid, opts) => Conn.open(`${server.url}${path}?session_id=${sid}&token=${TOKEN}`, [`weft.${dialectAt[path]}`], opts);
  const rows = [];
  const record = (area, what, tried, held, detail) => {
    rows.push({ area, what, tried, held, ok: held === tried, detail });
    log(`${held === tried ? 'ok  ' : 'FAIL'} ${area}: ${what}: ${held}/${tried}${detail ? ` (${detail})` : ''}`);
  };
  try {
    // ---- load ------------------------------------------------------------------------------
    const memBefore = workerdRss();
    const loadStart = Date.now();
    const want = Array.from({ length: sizes.tokens }, (_, i) => i + 1).join(' ');
    const loads = await pool(sizes.sessions, sizes.sessions, async (i) => {
      const c = await open('/', `soak-load-${i}-${randomUUID()}`);
      c.send({ type: 'run', message: `count to ${sizes.tokens}`, agent: 'react', id: `load-${i}` });
      await c.wait((f) => f.type === 'run_end' || (f.type === 'error' && f.id === `load-${i}`), { timeout: 300_000 });
      const r = checkRun(c.frames, `load-${i}`);
      c.close();
      return r.dense && r.duplicates === 0 && r.textMatches && r.reply === want ? r.frames : -1;
    });
    const loadSecs = (Date.now() - loadStart) / 1000;
    const loadFrames = loads.filter((n) => n > 0).reduce((a, b) => a + b, 0);
    record(
      'load',
      `${sizes.sessions} concurrent sessions streaming ${sizes.tokens} tokens, each reassembled exactly (ids contiguous, no duplicate, no gap)`,
      sizes.sessions,
      loads.filter((n) => n > 0).length,
      `${Math.round(loadFrames / loadSecs)} frames/s over ${loadSecs.toFixed(1)} s`,
    );
    const approvals = await pool(sizes.approvalSessions, sizes.approvalSessions, async (i) => {
      const c = await open('/', `soak-approve-${i}-${randomUUID()}`);
      c.send({ type: 'run', message: `write soak ${i} to soak-${i}.txt`, agent: 'react', id: `ap-${i}` });
      const ask = (await c.wait((f) => f.event?.type === 'tool_approval', { timeout: 120_000 })).event;
      c.send({ type: 'approval_response', call_id: ask.call_id, review: 'yes' });
      await c.wait((f) => f.type === 'run_end', { timeout: 120_000 });
      const r = checkRun(c.frames, `ap-${i}`);
      const toolEnd = c.frames.find((f) => f.event?.type === 'tool_end')?.event;
      c.close();
      return r.dense && r.duplicates === 0 && toolEnd && !toolEnd.is_error;
    });
    record('load', `${sizes.approvalSessions} sessions with a tool call and an approval alongside`, sizes.approvalSessions, approvals.filter(Boolean).length);

    // ---- provider faults ---------------------------------------------------------------------
    const FAULTS = ['401', '429', '500', 'cut', 'malformed', 'stall', 'stream-error'];
    let clear = 0;
    let intact = 0;
    await pool(sizes.faultRuns, 8, async (i) => {
      const fault = FAULTS[i % FAULTS.length];
      const sid = `soak-fault-${i}-${randomUUID()}`;
      const c = await open('/', sid);
      c.send({ type: 'run', message: `story ${i} fault-${fault}`, agent: 'react', id: `f-${i}` });
      const err = await c.wait((f) => (f.type === 'error' || f.type === 'run_end') && f.id === `f-${i}`, { timeout: 60_000 });
      if (err.type === 'error' && err.code === 'provider' && err.error.length > 10) clear += 1;
      c.send({ type: 'run', message: 'after the fault', agent: 'react', id: `g-${i}` });
      const ok = await c.wait((f) => f.type === 'run_end' && f.id === `g-${i}`, { timeout: 60_000 });
      c.send({ type: 'user_messages', id: 'h', thread_id: sid });
      const h = await c.wait((f) => f.type === 'user_messages');
      if (ok.reply === 'You said: after the fault' && h.messages.filter((m) => m.role === 'user').length === 2) intact += 1;
      c.close();
    });
    record('faults', `provider ${FAULTS.join('/')} across runs: a clear error`, sizes.faultRuns, clear);
    record('faults', 'after each fault: history intact and the next run works', sizes.faultRuns, intact);

    // ---- sockets killed at random points, then resumed -------------------------------------------
    let exact = 0;
    let lost = 0;
    let doubled = 0;
    // Tokens slower than the Worker's quiet gap, one event each, so every kill point (up to
    // event 71 of about 208) lands mid-stream; a faster stream is published in batches (a
    // loaded machine merges pieces, hence the long reply).
    server.pace(10);
    try {
      await pool(sizes.killRuns, 8, async (i) => {
        const sid = `soak-kill-${i}-${randomUUID()}`;
        const a = await open('/', sid);
        const runId = `k-${i}`;
        a.send({ type: 'run', message: 'count to 200', agent: 'react', id: runId });
        const at = 2 + ((i * 7919) % 70);
        await a.wait((f) => (eventIdOf(f) ?? 0) >= at || f.type === 'run_end', { timeout: 60_000 });
        a.kill();
        const seen = runFrames(a.frames, runId);
        const last = seen.length ? eventIdOf(seen[seen.length - 1]) : 0;
        const b = await open('/', sid);
        b.send({ type: 'resume', run_id: runId, after_event_id: last });
        // A run that ended before the kill has nothing after its run_end to replay.
        if (!seen.some((f) => f.type === 'run_end')) await b.wait((f) => f.type === 'run_end' && f.id === runId, { timeout: 60_000 });
        const all = [...seen, ...runFrames(b.frames, runId)];
        const r = checkRun(all, runId);
        const ids = all.map(eventIdOf);
        lost += ids.length ? ids[ids.length - 1] - new Set(ids).size : 0;
        doubled += r.duplicates;
        if (r.dense && r.textMatches) exact += 1;
        b.close();
      });
    } finally {
      // The later phases stream at full speed, whatever happened here.
      server.pace(null);
    }
    record('faults', 'socket killed at a random point, then resumed: the reply exact', sizes.killRuns, exact, `frames lost ${lost}, doubled ${doubled}`);

    // ---- wrangler dev killed and restarted during runs and approval waits -------------------------
    let survived = 0;
    for (let i = 0; i < sizes.restarts; i++) {
      const sid = `soak-restart-${i}-${randomUUID()}`;
      const c = await open('/', sid);
      c.send({ type: 'run', message: `write r${i} to restart-${i}.txt`, agent: 'react', id: `rs-${i}` });
      const ask = (await c.wait((f) => f.event?.type === 'tool_approval', { timeout: 60_000 })).event;
      const seen = runFrames(c.frames, `rs-${i}`).length;
      const d = await open('/', `soak-restart-run-${i}-${randomUUID()}`);
      d.send({ type: 'run', message: 'count to 300', agent: 'react', id: `long-${i}` });
      await d.wait((f) => f.event?.type === 'message_chunk', { timeout: 60_000 });
      c.kill();
      d.kill();
      await server.restart();
      const c2 = await open('/', sid);
      c2.send({ type: 'approval_response', call_id: ask.call_id, review: 'yes' });
      c2.send({ type: 'resume', run_id: `rs-${i}`, after_event_id: seen });
      const end = await c2.wait((f) => f.type === 'run_end' && f.id === `rs-${i}`, { timeout: 60_000 });
      c2.send({ type: 'user_messages', id: 'h', thread_id: sid });
      const h = await c2.wait((f) => f.type === 'user_messages');
      if (end.reply.includes(`restart-${i}.txt`) && h.messages.length >= 1) survived += 1;
      c2.close();
    }
    record('restart', 'wrangler dev killed during a run and an approval wait: the run completes after the approval, history intact', sizes.restarts, survived);

    // ---- bad input ---------------------------------------------------------------------------------
    for (const [dialect, path] of Object.entries(DIALECT_PATHS)) {
      const frames = corpus(dialect, sizes.badPerDialect, 7);
      const c = await open(path, `soak-bad-${dialect}-${randomUUID()}`);
      for (const { frame } of frames) c.ws.send(frame);
      await c.wait(() => c.frames.length >= frames.length, { timeout: 120_000 }).catch(() => {});
      const answered = c.frames.slice(0, frames.length).filter((f) => f.type === 'error' && typeof f.code === 'string').length;
      const valid = {
        loom: { type: 'run', message: 'still serving?', agent: 'react' },
        agentloop: {
          id: randomUUID(),
          type: 'user_input',
          payload: { input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'still serving?' }] }] },
        },
        agentchat: { type: 'chat', message: 'still serving?' },
        cueso: { message: 'still serving?' },
      }[dialect];
      c.send(valid);
      const serving = await c
        .wait((f) => ['run_end', 'final', 'agent_message'].includes(f.type) || (f.type === 'loading_state' && f.payload?.loading === false), {
          timeout: 60_000,
        })
        .then(
          () => true,
          () => false,
        );
      record('bad input', `${dialect}: ${frames.length} malformed frames (${MUTATION_NAMES.join(', ')}), each answered with an error`, frames.length, answered);
      record('bad input', `${dialect}: the socket still serves a valid run afterwards`, 1, serving ? 1 : 0);
      c.close();
    }
    const health = await fetch(`${server.http}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    const crashes = (server.log().match(/panicked|Uncaught|RuntimeError: unreachable/g) ?? []).length;
    record('bad input', 'worker alive afterwards, no panic or uncaught error in its log', 1, health && crashes === 0 ? 1 : 0, `${crashes} crash lines`);

    // ---- security ------------------------------------------------------------------------------------
    const victim = `soak-victim-${randomUUID()}`;
    const v = await open('/', victim);
    v.send({ type: 'run', message: 'write secret to secret.txt', agent: 'react', id: 'victim-run' });
    const vAsk = (await v.wait((f) => f.event?.type === 'tool_approval')).event;
    const attacker = await open('/', `soak-attacker-${randomUUID()}`);
    /** @type {[Json, (reply: Json) => boolean][]} a frame, and whether its reply refused it */
    const probes = [
      [{ type: 'resume', run_id: 'victim-run', after_event_id: 0 }, (f) => f.type === 'error' && f.code === 'unknown_run'],
      [{ type: 'approval_response', call_id: vAsk.call_id, review: 'yes' }, (f) => f.type === 'error'],
      [{ type: 'cancel', id: 'victim-run' }, (f) => f.type === 'error' && f.code === 'no_active_run'],
      [{ type: 'tool_result', call_id: vAsk.call_id, result: 'forged' }, (f) => f.type === 'error'],
      // A session id is a capability (specs/README): without it, nothing of the victim's.
      [{ type: 'user_messages', id: 'peek', thread_id: `soak-victim-${randomUUID()}` }, (f) => f.type === 'user_messages' && f.messages.length === 0],
    ];
    let refused = 0;
    for (const [frame, ok] of probes) {
      const from = attacker.frames.length;
      attacker.send(frame);
      const reply = await attacker.wait(() => attacker.frames.length > from).then(() => attacker.frames[from]);
      if (ok(reply)) refused += 1;
    }
    await sleep(300);
    const stillWaiting = !v.frames.some((f) => f.event?.type === 'approval_resolved' || f.event?.type === 'tool_start');
    record(
      'security',
      'another session cannot resume, approve, cancel, answer tools of or read a live session (without its id)',
      probes.length,
      refused + 0,
      stillWaiting ? 'the victim run still waits: nothing ran' : 'THE VICTIM RUN MOVED',
    );
    record('security', 'a forged approval in another session ran nothing', 1, stillWaiting ? 1 : 0);
    const traversal = ['../x', '/etc/passwd', 'a/../../b', 'a\u0000b', 'C:\\\\x'];
    let confined = 0;
    v.send({ type: 'approval_response', call_id: vAsk.call_id, review: 'no-exit' });
    await v.wait((f) => f.type === 'run_end' && f.id === 'victim-run');
    for (const [j, p] of traversal.entries()) {
      v.send({ type: 'run', message: `use read with ${JSON.stringify({ path: p })}`, agent: 'react', id: `tr-${j}` });
      await v.wait((f) => (f.type === 'run_end' || f.type === 'error') && f.id === `tr-${j}`);
      const end = v.frames.find((f) => f.id === `tr-${j}` && f.event?.type === 'tool_end')?.event;
      if (end?.is_error && /invalid path|outside|not allowed|control/i.test(end.result)) confined += 1;
    }
    record('security', 'workspace path traversal (../, absolute, NUL, drive letters) refused', traversal.length, confined);
    const unauth = await Promise.all([
      Conn.open(`${server.url}/?session_id=x`).then(
        () => false,
        (e) => /401/.test(e.message),
      ),
      Conn.open(`${server.url}/ws/chat?session_id=x&token=wrong`).then(
        () => false,
        (e) => /401/.test(e.message),
      ),
      fetch(`${server.http}/v1/chat/completions`, { method: 'POST', body: '{}' }).then((r) => r.status === 401),
      fetch(`${server.http}/api/chat`, { method: 'POST', body: aisdkBody('soak-unauth') }).then((r) => r.status === 401),
      fetch(`${server.http}/api/chat/soak-unauth/stream`).then((r) => r.status === 401),
    ]);
    record('security', 'auth enforced on every endpoint (WebSocket, proxy, AI SDK chat and its resume)', unauth.length, unauth.filter(Boolean).length);
    const replayed = await (async () => {
      const sid = `soak-replay-${randomUUID()}`;
      const c = await open('/', sid);
      c.send({ type: 'run', message: 'write once to once.txt', agent: 'react', id: 'once' });
      const ask = (await c.wait((f) => f.event?.type === 'tool_approval')).event;
      c.send({ type: 'approval_response', call_id: ask.call_id, review: 'yes' });
      await c.wait((f) => f.type === 'run_end' && f.id === 'once');
      const from = c.frames.length;
      c.send({ type: 'approval_response', call_id: ask.call_id, review: 'yes' });
      const reply = await c.wait(() => c.frames.length > from).then(() => c.frames[from]);
      const starts = c.frames.filter((f) => f.event?.type === 'tool_start').length;
      c.close();
      return reply.type === 'error' && starts === 1;
    })();
    record('security', 'a replayed approval is refused and the tool ran once', 1, replayed ? 1 : 0);
    const evil = await Conn.open(`${server.url}/ws/chat?session_id=o&token=${TOKEN}`, undefined, { headers: { Origin: 'http://evil.example' } });
    const closed = await evil.waitClose();
    const proxyOrigin = await fetch(`${server.http}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, origin: 'http://evil.example', 'content-type': 'application/json' },
      body: '{"messages":[{"role":"user","content":"x"}]}',
    }).then((r) => r.status);
    const chatOrigin = await fetch(`${server.http}/api/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, origin: 'http://evil.example', 'content-type': 'application/json' },
      body: aisdkBody('soak-origin'),
    }).then((r) => r.status);
    record(
      'security',
      'origin enforced on every endpoint (WebSocket closed 4003, proxy and AI SDK chat 403)',
      3,
      (closed.code === 4003 ? 1 : 0) + (proxyOrigin === 403 ? 1 : 0) + (chatOrigin === 403 ? 1 : 0),
    );
    const flooder = await open('/ws', `soak-flood-${randomUUID()}`);
    const calm = await open('/ws', `soak-calm-${randomUUID()}`);
    const floodCount = sizes.badPerDialect + 400;
    for (let i = 0; i < floodCount; i++) flooder.send({ type: 'ping', id: `f${i}` });
    const limited = await flooder
      .wait((f) => f.code === 'rate_limited', { timeout: 60_000 })
      .then(
        () => true,
        () => false,
      );
    calm.send({ type: 'chat', message: 'unbothered?' });
    const calmOk = await calm
      .wait((f) => f.type === 'agent_message', { timeout: 30_000 })
      .then(
        (f) => f.message === 'You said: unbothered?',
        () => false,
      );
    record(
      'security',
      `a flood of ${floodCount} frames from one socket is rate-limited; another session is unaffected`,
      2,
      (limited ? 1 : 0) + (calmOk ? 1 : 0),
    );
    flooder.close();
    calm.close();
    await securityOfIssue23(server, open, sizes, record);
    const leaked = JSON.stringify(everyFrame).includes(KEY) || server.log().includes(KEY);
    record('security', `the provider key appears in none of the ${everyFrame.length} frames captured, nor the server log`, 1, leaked ? 0 : 1);
    v.close();
    attacker.close();
    const memAfter = workerdRss();
    rows.push({
      area: 'figures',
      what: 'worker (workerd) memory before the load / after everything',
      tried: 0,
      held: 0,
      ok: true,
      detail: `${memBefore.toFixed(0)} MiB / ${memAfter.toFixed(0)} MiB`,
    });
  } finally {
    Conn.onFrame = undefined;
    await server.stop();
  }
  return { rows, seconds: (Date.now() - started) / 1000 };
}

/**
 * Issue 23's rows: web_fetch refuses the URL corpus's local hosts through a real fetch; a
 * per-user token reaches nothing of another session; expired and tampered tokens are refused;
 * 200 sockets on one session are capped without hurting another.
 */
async function securityOfIssue23(server, open, sizes, record) {
  // Characters outside the BMP are left to the differential test (tests/urls): the scripted
  // model cuts its stream between the two halves of a surrogate pair, so no tool is called.
  const local = urlCorpus.filter((u) => reachesLocalHost(u) && !/[\u{10000}-\u{10FFFF}]/u.test(u));
  const step = Math.max(1, Math.floor(local.length / sizes.localUrls));
  const sample = local.filter((_, i) => i % step === 0).slice(0, sizes.localUrls);
  let refused = 0;
  const leaked = [];
  // 50 runs per session: under SESSION_RUNS_PER_MINUTE (60).
  await pool(Math.ceil(sample.length / 50), 4, async (k) => {
    const c = await open('/', `soak-fetch-${k}-${randomUUID()}`);
    for (const [j, url] of sample.slice(k * 50, k * 50 + 50).entries()) {
      const id = `fetch-${j}`;
      c.send({ type: 'run', id, agent: 'react', message: `use web_fetch with ${JSON.stringify({ url })}` });
      await c.wait((f) => (f.type === 'run_end' || f.type === 'error') && f.id === id, { timeout: 60_000 });
      const end = c.frames.find((f) => f.id === id && f.event?.type === 'tool_end')?.event;
      if (end?.is_error && !/^HTTP \d|fetch failed/.test(end.result)) refused += 1;
      else leaked.push(`${url} → ${end ? end.result.slice(0, 60) : 'no web_fetch call'}`);
    }
    c.close();
  });
  record(
    'security',
    `web_fetch refuses ${sample.length} of the ${local.length} corpus URLs whose host Node reads as local (full-width, ideographic, percent-encoded, octal/hex IPv4, embedded IPv4 in IPv6, …), through a real fetch`,
    sample.length,
    refused,
    leaked.length
      ? `not refused: ${leaked
          .slice(0, 3)
          .map((u) => JSON.stringify(u))
          .join(', ')}`
      : '',
  );

  const exp = Math.floor(Date.now() / 1000) + 3600;
  const victimId = `soak-victim2-${randomUUID()}`;
  const v = await open('/', victimId);
  v.send({ type: 'run', message: 'write secret to secret.txt', agent: 'react', id: 'victim2-run' });
  const ask = (await v.wait((f) => f.event?.type === 'tool_approval')).event;
  const user = `soak-user-${randomUUID()}`;
  const token = mintToken({ sub: user, exp, sessions: [`${user}/*`] }, SECRET);
  const held = [];
  held.push(
    await Conn.open(`${server.url}/?session_id=${victimId}&token=${token}`, ['weft.loom']).then(
      () => false,
      (e) => /HTTP 403/.test(e.message),
    ),
  );
  const c = await Conn.open(`${server.url}/?session_id=${encodeURIComponent(`${user}/a`)}&token=${token}`, ['weft.loom']);
  for (const [frame, ok] of /** @type {[Json, (reply: Json) => boolean][]} */ ([
    [{ type: 'run', id: 'steal', agent: 'react', message: 'hi', thread_id: victimId }, (f) => f.code === 'forbidden'],
    [{ type: 'user_messages', id: 'peek', thread_id: victimId }, (f) => f.code === 'forbidden'],
    [{ type: 'resume', run_id: 'victim2-run', after_event_id: 0 }, (f) => f.code === 'unknown_run'],
    [{ type: 'approval_response', call_id: ask.call_id, review: 'yes' }, (f) => f.type === 'error'],
    [{ type: 'cancel', id: 'victim2-run' }, (f) => f.type === 'error'],
    [{ type: 'tool_result', call_id: ask.call_id, result: 'forged' }, (f) => f.type === 'error'],
  ])) {
    const from = c.frames.length;
    c.send(frame);
    const reply = await c.wait(() => c.frames.length > from).then(() => c.frames[from]);
    held.push(reply.type === 'error' && ok(reply));
  }
  await sleep(300);
  const untouched = !v.frames.some((f) => f.event?.type === 'approval_resolved' || f.event?.type === 'tool_start');
  record(
    'security',
    'a per-user token scoped to its own sessions cannot open, run in, read, resume, approve, cancel or answer tools of another',
    held.length + 1,
    held.filter(Boolean).length + (untouched ? 1 : 0),
    untouched ? 'the victim run still waits' : 'THE VICTIM RUN MOVED',
  );
  c.close();
  v.send({ type: 'approval_response', call_id: ask.call_id, review: 'no-exit' });
  await v.wait((f) => f.type === 'run_end' && f.id === 'victim2-run');
  v.close();

  const good = mintToken({ sub: user, exp, sessions: [`${user}/*`] }, SECRET);
  const [h, , sig] = good.split('.');
  const widened = Buffer.from(JSON.stringify({ sub: user, exp, sessions: ['*'] })).toString('base64url');
  const bad = [
    mintToken({ sub: user, exp: Math.floor(Date.now() / 1000) - 1, sessions: [`${user}/*`] }, SECRET),
    `${h}.${widened}.${sig}`,
    mintToken({ sub: user, exp, sessions: ['*'] }, 'a guessed secret'),
    mintToken({ sub: user, exp, sessions: ['*'] }, SECRET, { alg: 'none' }),
  ];
  const refusals = await Promise.all(
    bad.flatMap((t) => [
      Conn.open(`${server.url}/?session_id=${encodeURIComponent(`${user}/b`)}&token=${t}`, ['weft.loom']).then(
        () => false,
        (e) => /HTTP 401/.test(e.message),
      ),
      fetch(`${server.http}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json' },
        body: '{"messages":[{"role":"user","content":"x"}]}',
      }).then((r) => r.status === 401),
    ]),
  );
  record(
    'security',
    'expired, tampered, wrongly signed and unsigned per-user tokens refused (WebSocket before the upgrade, proxy)',
    refusals.length,
    refusals.filter(Boolean).length,
  );

  const crowdId = `soak-crowd-${randomUUID()}`;
  const crowd = await Promise.all(Array.from({ length: 200 }, () => open('/', crowdId).catch(() => null)));
  await sleep(1500);
  const stayed = crowd.filter((s) => s && !s.closed).length;
  const capped = crowd.filter((s) => s?.closed?.code === 1013).length;
  const bystander = await open('/ws', `soak-bystander-${randomUUID()}`);
  bystander.send({ type: 'chat', message: 'unbothered?' });
  const fine = await bystander
    .wait((f) => f.type === 'agent_message', { timeout: 30_000 })
    .then(
      (f) => f.message === 'You said: unbothered?',
      () => false,
    );
  record(
    'security',
    '200 sockets on one session: 32 stay, 168 are closed with 1013; another session is unaffected',
    3,
    (stayed === 32 ? 1 : 0) + (capped === 168 ? 1 : 0) + (fine ? 1 : 0),
    `${stayed} stayed, ${capped} closed with 1013`,
  );
  bystander.close();
  for (const s of crowd) s?.close();
}

export function reliabilityMarkdown({ rows, seconds }, sizes, label) {
  const lines = [
    '# Reliability',
    '',
    `What the weft server and its clients were put through, and what held. Regenerated by \`npm run soak\`${label ? ` (${label})` : ''}`,
    `against the real Worker under \`wrangler dev\` and the scripted LLM, on ${new Date().toISOString().slice(0, 10)}, in ${seconds.toFixed(0)} s.`,
    '',
    `Sizes: ${Object.entries(sizes)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}.`,
    '',
    '| area | what was tried | held | result |',
    '|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.area} | ${r.what}${r.detail ? ` — ${r.detail}` : ''} | ${r.tried ? `${r.held}/${r.tried}` : ''} | ${r.tried ? (r.ok ? 'held' : '**failed**') : ''} |`,
    ),
    '',
  ];
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const short = process.argv.includes('--short');
  const sizes = short ? SHORT : FULL;
  const result = await soak(sizes);
  const failed = result.rows.filter((r) => !r.ok);
  console.log(`\nsoak: ${result.rows.length - failed.length}/${result.rows.length} held in ${result.seconds.toFixed(0)} s`);
  if (!short) writeFileSync(fileURLToPath(new URL('../../RELIABILITY.md', import.meta.url)), reliabilityMarkdown(result, sizes));
  process.exit(failed.length ? 1 : 0);
}
