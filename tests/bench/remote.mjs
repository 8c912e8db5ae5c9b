// Section 7 of the bench: a remote AG-UI agent behind weft (issue 38). ag-ui-langgraph serving
// tests/agui/langgraph's graph on 127.0.0.1 (its model the scripted LLM, no delay), and the
// Worker under `wrangler dev` with it in AGENTS. Each repetition reads the same reply ("count to
// N") twice, in alternating order: straight from the agent (a `RunAgentInput` POSTed, its
// server-sent events read as they come) and through weft (loom's socket, a run naming the
// agent). Measured at the client: the first token (request sent → first `TEXT_MESSAGE_CONTENT`
// / `message_chunk`) and the whole reply (→ `RUN_FINISHED` / `run_end`); what weft adds per
// event is (weft's whole − the agent's whole) ÷ the agent's text events, pair by pair.

import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

import { startLangGraphAgent } from '../agui/langgraph/server.mjs';
import { Conn } from '../e2e/client.mjs';
import { log, root } from './lib/env.mjs';
import { startWrangler } from './server.mjs';

const now = () => performance.now();

/** The agent read directly: a RunAgentInput POSTed to it, its SSE read as it streams. */
async function direct(url, message) {
  const body = {
    threadId: `bench-${randomUUID()}`,
    runId: randomUUID(),
    state: {},
    messages: [{ id: 'u', role: 'user', content: message }],
    tools: [],
    context: [],
    forwardedProps: {},
  };
  const t0 = now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(120_000),
  });
  if (!res.ok || !res.body) throw new Error(`the agent answered HTTP ${res.status}`);
  const decoder = new TextDecoder();
  let buf = '';
  let first = null;
  let events = 0;
  for await (const chunk of res.body) {
    buf += decoder.decode(chunk, { stream: true });
    let cut;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const data = frame.split('\n').find((l) => l.startsWith('data:'));
      if (!data) continue;
      const ev = JSON.parse(data.slice(5));
      if (ev.type === 'TEXT_MESSAGE_CONTENT') {
        first ??= now() - t0;
        events++;
      }
      if (ev.type === 'RUN_ERROR') throw new Error(`the agent failed: ${ev.message}`);
      if (ev.type === 'RUN_FINISHED') return { firstToken: first, total: now() - t0, events };
    }
  }
  throw new Error('the agent ended its stream before RUN_FINISHED');
}

/** The same through weft: a loom run naming the remote agent. */
async function viaWeft(c, message) {
  const id = `bench-${randomUUID()}`;
  const from = c.frames.length;
  const t0 = now();
  let first = null;
  const prev = Conn.onFrame;
  Conn.onFrame = (f) => {
    if (f.id === id && f.event?.type === 'message_chunk') first ??= now() - t0;
  };
  try {
    c.send({ type: 'run', id, message, agent: 'lg' });
    const end = await c.wait((f) => f.id === id && (f.type === 'run_end' || f.type === 'error'), { from, timeout: 120_000 });
    if (end.type === 'error') throw new Error(`through weft: ${end.error ?? JSON.stringify(end)}`);
    const events = c.frames.slice(from).filter((f) => f.id === id && f.event?.type === 'message_chunk').length;
    return { firstToken: first, total: now() - t0, events };
  } finally {
    Conn.onFrame = prev;
  }
}

/** @param {{ runs: number, reps: number, words: number }} opts */
export async function remoteBench(opts) {
  const lg = await startLangGraphAgent({ delayMs: 0 });
  const message = `count to ${opts.words}`;
  const out = { opts, runs: [] };
  let worker = null;
  try {
    log('remote: wrangler dev with the agent in AGENTS');
    worker = await startWrangler('remote', join(root, 'worker'), {
      AGENTS: JSON.stringify({ lg: { url: lg.url, description: 'LangGraph, over AG-UI' } }),
    });
    const c = await Conn.open(`${worker.ws}/?session_id=bench-remote-${randomUUID()}`, ['weft.loom']);
    try {
      // Warm-up: the isolate, the agent's graph, both paths.
      await direct(lg.url, message);
      await viaWeft(c, message);
      for (let r = 0; r < opts.runs; r++) {
        const rep = { direct: [], weft: [] };
        for (let i = 0; i < opts.reps; i++) {
          const order = (i + r) % 2 === 0 ? ['direct', 'weft'] : ['weft', 'direct'];
          for (const kind of order) {
            rep[kind].push(kind === 'direct' ? await direct(lg.url, message) : await viaWeft(c, message));
          }
        }
        out.runs.push(rep);
        log(`remote: run ${r + 1}/${opts.runs} done`);
      }
    } finally {
      c.close();
    }
  } finally {
    await worker?.stop();
    await lg.stop();
  }
  return out;
}
