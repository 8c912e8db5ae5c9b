// MCP servers a client adds to its own session (`add_mcp_server`), against the real Worker
// under `wrangler dev` and a real MCP server made with `@modelcontextprotocol/server`'s
// `createMcpHandler`, behind a bearer token the client gives (tests/e2e/mcp/servers.mjs).
// `MCP_CLIENT_SERVERS` lists the server's exact `127.0.0.1:<port>` (the operator's choice of
// that one endpoint, which the URL guard lets through) and `localhost` without a port (which
// the guard refuses: a local host is refused even when listed). Refused when the setting is
// unset: mcp.test.mjs, whose Worker has none. The SDK's `client.addMcpServer` is driven in
// Node from the built package (scripts/build-sdk first).

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import init, { Client } from 'weft-sdk';

import { Conn } from './client.mjs';
import { startDocsServer } from './mcp/servers.mjs';
import { startServer } from './server.mjs';

const TOKEN = 'client-mcp-token-77';

let server;
let docs;

before(
  async () => {
    await init();
    docs = await startDocsServer({ token: TOKEN });
    const { port } = new URL(docs.url);
    server = await startServer({
      vars: { MCP_CLIENT_SERVERS: `mcp.example.com, 127.0.0.1:${port}, localhost` },
    });
  },
  { timeout: 900_000 },
);

after(async () => {
  await server?.stop();
  await docs?.close();
});

const open = (sid, dialect = 'loom') => Conn.open(`${server.url}/?session_id=${sid}`, [`weft.${dialect}`]);

/** The request's answer: its `tools_list`, or its `error` (found by the request's id). */
async function add(c, { id = `add-${randomUUID()}`, name = 'mine', url = docs.url, headers = { Authorization: `Bearer ${TOKEN}` } } = {}) {
  c.send({ type: 'add_mcp_server', id, name, url, headers });
  return c.wait((f) => (f.type === 'tools_list' && f.id === id) || (f.type === 'error' && (f.id === id || f.request_id === id)), { timeout: 30_000 });
}

/** Runs `message`, approving every call; the run's tool ends and approval requests. */
async function run(c, message) {
  const id = `run-${randomUUID()}`;
  const from = c.frames.length;
  c.send({ type: 'run', message, agent: 'react', id });
  const answered = new Set();
  for (;;) {
    const f = await c.wait(
      (x) => x.id === id && (x.type === 'run_end' || x.type === 'error' || (x.event?.type === 'tool_approval' && !answered.has(x.event.call_id))),
      { from, timeout: 60_000 },
    );
    if (f.type === 'run_end' || f.type === 'error') break;
    answered.add(f.event.call_id);
    c.send({ type: 'approval_response', call_id: f.event.call_id, review: 'yes' });
  }
  const events = c.frames
    .slice(from)
    .filter((x) => x.id === id)
    .map((x) => x.event)
    .filter(Boolean);
  return {
    asked: events.filter((e) => e.type === 'tool_approval'),
    ends: events.filter((e) => e.type === 'tool_end'),
  };
}

/** No frame the client received holds the token. */
function tokenNeverShown(c) {
  for (const f of c.frames) assert.ok(!JSON.stringify(f).includes(TOKEN), JSON.stringify(f));
}

describe('MCP servers a client adds', () => {
  test('a host MCP_CLIENT_SERVERS does not list is refused, with the request id', async () => {
    const c = await open(`mcpc-${randomUUID()}`);
    const r = await add(c, { id: 'a1', url: 'https://other.example/mcp' });
    assert.deepEqual([r.type, r.id, r.code], ['error', 'a1', 'mcp_refused']);
    assert.match(r.error, /other\.example is not one whose MCP servers clients may add/);
    c.close();
  });

  test('a listed local host is refused by the URL guard; another port of a listed host:port too', async () => {
    const c = await open(`mcpc-${randomUUID()}`);
    const { port } = new URL(docs.url);
    const guarded = await add(c, { id: 'a2', url: `http://localhost:${port}/mcp` });
    assert.deepEqual([guarded.type, guarded.id, guarded.code], ['error', 'a2', 'mcp_refused']);
    assert.match(guarded.error, /only public hosts can be fetched/);
    const other = await add(c, { id: 'a3', url: `http://127.0.0.1:${Number(port) + 1}/mcp` });
    assert.match(other.error, /is not one whose/);
    const badName = await add(c, { id: 'a4', name: 'has.dot' });
    assert.match(badName.error, /may contain only/);
    tokenNeverShown(c);
    c.close();
  });

  test('a server that refuses the headers is not added: the reason, never the header', async () => {
    const c = await open(`mcpc-${randomUUID()}`);
    const r = await add(c, { id: 'a5', headers: { Authorization: `Bearer not-${TOKEN}` } });
    assert.deepEqual([r.type, r.id, r.code], ['error', 'a5', 'mcp_unavailable']);
    assert.match(r.error, /HTTP 401/);
    c.send({ type: 'tools_list', id: 'l' });
    const { tools } = await c.wait((f) => f.type === 'tools_list' && f.id === 'l');
    assert.ok(!tools.some((t) => t.name.startsWith('mine_')), 'nothing of it was kept');
    tokenNeverShown(c);
    c.close();
  });

  test('allowed: its tools answer, the next run calls one with approval, and it survives a restart', async () => {
    const sid = `mcpc-${randomUUID()}`;
    let c = await open(sid);
    const added = await add(c, { id: 'a6' });
    assert.equal(added.type, 'tools_list', JSON.stringify(added));
    const names = added.tools.map((t) => t.name);
    assert.ok(names.includes('mine_lookup'), names.join(','));
    assert.ok(
      names.every((n) => n.startsWith('mine_')),
      names.join(','),
    );
    assert.deepEqual(added.tools.find((t) => t.name === 'mine_lookup').input_schema.required, ['term']);
    assert.ok(
      added.tools.every((t) => !t.read_only),
      "a client's server is never trusted: every call asks",
    );

    const r = await run(c, 'use mine_lookup with {"term": "weft"}');
    assert.equal(r.asked.length, 1, 'the call waited for approval');
    assert.equal(r.ends[0].result, 'weft: a word the docs define');
    const call = docs.log.findLast((l) => l.method === 'tools/call');
    assert.equal(call.auth, true, "the client's header went to its server");

    // Another client of the session sees the tools; the token is in no frame of either.
    const other = await open(sid, 'agentchat');
    other.send({ type: 'ping', id: 'p' });
    await other.wait((f) => f.type === 'pong');
    c.send({ type: 'tools_list', id: 'l' });
    const { tools } = await c.wait((f) => f.type === 'tools_list' && f.id === 'l');
    assert.ok(tools.some((t) => t.name === 'mine_lookup'));
    tokenNeverShown(c);
    tokenNeverShown(other);
    other.close();
    c.close();

    const status = await (await fetch(`${server.http}/status`)).text();
    assert.ok(!status.includes(TOKEN), status);

    await server.restart();
    const mark = docs.log.length;
    c = await open(sid);
    const again = await run(c, 'use mine_lookup with {"term": "after"}');
    assert.equal(again.ends[0].result, 'after: a word the docs define');
    const first = docs.log.slice(mark)[0];
    assert.deepEqual([first.method, first.auth], ['tools/call', true], 'no discovery before the call');
    tokenNeverShown(c);
    c.close();
  });

  test('the SDK: client.addMcpServer resolves with the tools, or rejects with the reason', async () => {
    const sessionId = `mcpc-${randomUUID()}`;
    const client = new Client({ url: server.url, dialect: 'loom', sessionId });
    try {
      await client.connect();
      assert.equal(client.server, 'weft');
      const tools = await client.addMcpServer({ name: 'sdk', url: docs.url, headers: { Authorization: `Bearer ${TOKEN}` } });
      const lookup = tools.find((t) => t.name === 'sdk_lookup');
      assert.ok(lookup, tools.map((t) => t.name).join(','));
      assert.deepEqual(/** @type {any} */ (lookup.inputSchema).required, ['term']);
      assert.ok(!lookup.readOnly);
      assert.ok((await client.toolsList()).some((t) => t.name === 'sdk_lookup'));
      await assert.rejects(
        client.addMcpServer({ name: 'sdk2', url: 'https://other.example/mcp' }),
        (/** @type {any} */ e) => e.name === 'WeftError' && e.code === 'mcp_refused' && /MCP_CLIENT_SERVERS/.test(e.message),
      );
      await assert.rejects(
        // @ts-expect-error: a header that is not text, on purpose
        client.addMcpServer({ name: 'sdk3', url: docs.url, headers: { Authorization: 42 } }),
        (/** @type {any} */ e) => e.code === 'invalid_argument' && /headers\.Authorization/.test(e.message),
      );
    } finally {
      client.close();
    }
  });
});
