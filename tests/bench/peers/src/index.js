// The peers of the server benchmark: Cloudflare Agents' AIChatAgent, and a bare relay.

import { createOpenAI } from '@ai-sdk/openai';
import { AIChatAgent } from '@cloudflare/ai-chat';
import { routeAgentRequest } from 'agents';
import { convertToModelMessages, streamText } from 'ai';
import { DurableObject } from 'cloudflare:workers';

/**
 * Rows written to a Durable Object's SQLite storage, counted as Cloudflare bills them: the
 * `rowsWritten` of every `sql.exec` cursor (index entries included), plus one row per key the KV
 * API writes or deletes (its hidden `__cf_kv` table). A cursor's count grows while it is read, so
 * the cursors are kept and summed when asked. For the storage section of the bench
 * (tests/bench/storage.mjs); the agent's own code is unchanged, only `exec`, `put` and `delete`
 * are wrapped.
 */
function countWrites(storage) {
  const sql = storage.sql;
  if (storage.sql !== sql) throw new Error('ctx.storage.sql is not one object: its exec cannot be wrapped');
  // Per statement text (its first 80 characters): the cursors it made; per KV key: rows.
  const cursors = new Map();
  const kv = new Map();
  const exec = sql.exec;
  sql.exec = function countedExec(query, ...bindings) {
    const cursor = exec.call(this, query, ...bindings);
    const key = String(query).replace(/\s+/g, ' ').trim().slice(0, 80);
    if (!cursors.has(key)) cursors.set(key, []);
    cursors.get(key).push(cursor);
    return cursor;
  };
  const count = (op, k) => {
    for (const key of Array.isArray(k) ? k : typeof k === 'object' && k !== null ? Object.keys(k) : [k]) {
      const name = `KV ${op} ${String(key).slice(0, 60)}`;
      kv.set(name, (kv.get(name) ?? 0) + 1);
    }
  };
  const put = storage.put;
  storage.put = function countedPut(k, ...rest) {
    count('put', k);
    return put.call(this, k, ...rest);
  };
  const del = storage.delete;
  storage.delete = function countedDelete(k, ...rest) {
    count('delete', k);
    return del.call(this, k, ...rest);
  };
  // Which instance answers: the counts start again when the object does (after it hibernates).
  const instance = crypto.randomUUID();
  return {
    sql,
    stats: () => {
      const byStatement = [...cursors]
        .map(([statement, cs]) => ({ statement, calls: cs.length, rows: cs.reduce((a, c) => a + c.rowsWritten, 0) }))
        .concat([...kv].map(([statement, rows]) => ({ statement, calls: rows, rows })))
        .filter((x) => x.rows > 0);
      const sqlRows = byStatement.filter((x) => !x.statement.startsWith('KV ')).reduce((a, x) => a + x.rows, 0);
      const kvRows = [...kv.values()].reduce((a, n) => a + n, 0);
      return { instance, sqlRows, kvRows, statements: [...cursors.values()].reduce((a, cs) => a + cs.length, 0), bytes: sql.databaseSize, byStatement };
    },
  };
}

/** The chat agent as its documentation writes one: the AI SDK's streamText, streamed back. */
export class Chat extends AIChatAgent {
  constructor(ctx, env) {
    // Wrapped before the agent's constructor runs, so the tables it creates are counted too
    // (weft's count starts with the object as well).
    const writes = countWrites(ctx.storage);
    super(ctx, env);
    this.benchWrites = writes;
  }

  /** GET /agents/chat/<name>/bench-storage: rows written since this instance started, bytes. */
  async onRequest(request) {
    if (new URL(request.url).pathname.endsWith('/bench-storage')) {
      const s = this.benchWrites.stats();
      return Response.json({ ...s, rowsWritten: s.sqlRows + s.kvRows });
    }
    return super.onRequest(request);
  }

  async onChatMessage(onFinish) {
    const openai = createOpenAI({ baseURL: this.env.SCRIPTED_LLM_URL, apiKey: 'bench' });
    const result = streamText({
      model: openai.chat('scripted'),
      messages: await convertToModelMessages(this.messages),
      onFinish,
    });
    return result.toUIMessageStreamResponse();
  }
}

/**
 * The floor: a hibernatable WebSocket; a message `{"message": …}` fetches the scripted LLM's
 * stream and sends every piece of its body to the socket as it arrives, then `{"done":true}`.
 */
export class Relay extends DurableObject {
  async fetch() {
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server);
    return new Response(null, { status: 101, webSocket: client });
  }

  async webSocketMessage(ws, message) {
    const { message: text } = JSON.parse(message);
    const resp = await fetch(`${this.env.SCRIPTED_LLM_URL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
      body: JSON.stringify({ model: 'scripted', stream: true, messages: [{ role: 'user', content: text }] }),
    });
    const decoder = new TextDecoder();
    for await (const piece of resp.body) ws.send(decoder.decode(piece, { stream: true }));
    ws.send('{"done":true}');
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/healthz') return new Response('ok');
    if (url.pathname === '/relay') {
      const stub = env.RELAY.get(env.RELAY.idFromName(url.searchParams.get('session') ?? 'default'));
      return stub.fetch(request);
    }
    return (await routeAgentRequest(request, env)) ?? new Response('not found', { status: 404 });
  },
};
