// Section 6 of the bench: MCP tools. The Worker under `wrangler dev` twice in the same run — with
// `MCP_SERVERS` naming two real MCP servers on 127.0.0.1 (tests/e2e/mcp/servers.mjs: the
// current-revision `createMcpHandler` fixture, and `@modelcontextprotocol/server-everything`, 2025
// revisions with sessions and SSE), and without any — and the scripted LLM with no delay.
//
// - The call: a run that calls one tool and answers, for a built-in tool (`calculator`) and an MCP
//   tool of each era, in the same session, in rotated order each repetition. Measured at the
//   client: `tool_start` → `tool_end`, and the whole run (`run` sent → `run_end`). What an MCP call
//   adds = its figure − the built-in's, pair by pair within a repetition.
// - The first token (`run` sent → first `message_chunk`, "long reply 20"): without MCP servers; with
//   them, a new session (its first run discovers their tools); with them, a session whose
//   catalog is stored (its second run: no request to the servers before the run).

import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

import { Conn } from '../e2e/client.mjs';
import { startDocsServer, startEverythingServer } from '../e2e/mcp/servers.mjs';
import { startScriptedLlm } from '../scripted-llm/server.mjs';
import { log, root } from './lib/env.mjs';
import { startWrangler } from './server.mjs';

const now = () => performance.now();

/** One run on `c`; the times (ms) of its milestones after `run` was sent. */
async function timedRun(c, message) {
  const id = `bench-${randomUUID()}`;
  const from = c.frames.length;
  const t0 = now();
  const at = {};
  const prev = Conn.onFrame;
  Conn.onFrame = (f) => {
    if (f.id !== id) return;
    const kind = f.event?.type ?? f.type;
    if (!(kind in at)) at[kind] = now() - t0;
  };
  try {
    c.send({ type: 'run', message, agent: 'react', id });
    const end = await c.wait((f) => f.id === id && (f.type === 'run_end' || f.type === 'error'), { from, timeout: 120_000 });
    if (end.type === 'error') throw new Error(`${message}: ${end.error ?? JSON.stringify(end)}`);
    const toolEnd = c.frames.slice(from).find((f) => f.id === id && f.event?.type === 'tool_end')?.event;
    if (message.startsWith('use ') && (!toolEnd || toolEnd.is_error)) throw new Error(`${message}: ${JSON.stringify(toolEnd)}`);
  } finally {
    Conn.onFrame = prev;
  }
  return { tool: at.tool_end - at.tool_start, total: at.run_end, firstToken: at.message_chunk };
}

/** @param {{ runs: number, calls: number }} opts */
export async function mcpBench(opts) {
  const llm = await startScriptedLlm({ port: 0, host: '127.0.0.1', delayMs: 0 });
  const docs = await startDocsServer();
  const every = await startEverythingServer();
  const servers = [
    { name: 'docs', url: docs.url, approval: 'never' },
    { name: 'every', url: every.url, trusted: true, tools: ['echo', 'get-sum'] },
  ];
  const base = { SCRIPTED_LLM_URL: `${llm.url}/v1` };
  const worker = join(root, 'worker');
  const calls = [
    ['builtin', 'use calculator with {"expression": "6*7"}'],
    ['modern', 'use docs_lookup with {"term": "weft"}'],
    ['legacy', 'use every_echo with {"message": "weft"}'],
  ];
  const out = { opts, calls: [], firstToken: [] };
  let withMcp = null;
  let without = null;
  try {
    log('mcp: wrangler dev with MCP_SERVERS, and without');
    withMcp = await startWrangler('mcp', worker, { ...base, MCP_SERVERS: JSON.stringify(servers) });
    without = await startWrangler('no-mcp', worker, base);
    const open = (w) => Conn.open(`${w.ws}/?session_id=bench-mcp-${randomUUID()}`, ['weft.loom']);
    // Warm-up: both isolates, the servers, and a session whose catalog is stored.
    const warm = await open(withMcp);
    for (const [, message] of calls) await timedRun(warm, message);
    warm.close();
    const cold = await open(without);
    await timedRun(cold, 'long reply 20');
    cold.close();
    for (let r = 0; r < opts.runs; r++) {
      // The call: one session per repetition (its catalog discovered by a first run), each tool
      // `calls` times, in rotated order.
      const c = await open(withMcp);
      await timedRun(c, 'long reply 5');
      const rep = Object.fromEntries(calls.map(([k]) => [k, { tool: [], total: [] }]));
      for (let i = 0; i < opts.calls; i++) {
        for (let j = 0; j < calls.length; j++) {
          const [kind, message] = calls[(i + j + r) % calls.length];
          const t = await timedRun(c, message);
          rep[kind].tool.push(t.tool);
          rep[kind].total.push(t.total);
        }
      }
      c.close();
      out.calls.push(rep);
      // The first token: without MCP, with MCP in a new session, with MCP in a session that has
      // its catalog (its second run).
      const ft = {};
      const order = ['without', 'fresh', 'stored'];
      for (let j = 0; j < order.length; j++) {
        const kind = order[(j + r) % order.length];
        if (kind === 'without') {
          const s = await open(without);
          ft.without = (await timedRun(s, 'long reply 20')).firstToken;
          s.close();
        } else if (kind === 'fresh') {
          const s = await open(withMcp);
          ft.fresh = (await timedRun(s, 'long reply 20')).firstToken;
          s.close();
        } else {
          const s = await open(withMcp);
          await timedRun(s, 'long reply 5');
          ft.stored = (await timedRun(s, 'long reply 20')).firstToken;
          s.close();
        }
      }
      out.firstToken.push(ft);
      log(`mcp: run ${r + 1}/${opts.runs} done`);
    }
  } finally {
    await withMcp?.stop();
    await without?.stop();
    await docs.close();
    await every.close();
    await llm.close();
  }
  return out;
}
