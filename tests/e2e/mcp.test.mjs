// MCP servers as tools, against the real Worker under `wrangler dev` and real MCP servers on
// 127.0.0.1 (tests/e2e/mcp/servers.mjs): one of the current revision made with
// `@modelcontextprotocol/server`'s `createMcpHandler` (stateless, JSON), the same behind a
// bearer token, and `@modelcontextprotocol/server-everything` (2025 revisions, sessions, SSE).
// The scripted model calls their tools through weft ("use <tool> with {json}").

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';

import { Conn } from './client.mjs';
import { startDocsServer, startEverythingServer } from './mcp/servers.mjs';
import { freePort, startServer } from './server.mjs';

const TOKEN = 'mcp-secret-token-42';
const TIMEOUT_MS = 4000;

let server;
let docs;
let priv;
let every;

/** A port nothing listens on: the server that is down. */
const closedPort = freePort;

before(
  async () => {
    docs = await startDocsServer({ slowMs: 60_000 });
    priv = await startDocsServer({ token: TOKEN });
    every = await startEverythingServer();
    const servers = [
      // Not trusted, no `approval`: every call asks, its read-only hints notwithstanding.
      { name: 'docs', url: docs.url },
      { name: 'private', url: priv.url, headers: { Authorization: 'Bearer ${secret:PRIVATE_MCP_TOKEN}' }, approval: 'never' },
      { name: 'nokey', url: priv.url, approval: 'never' },
      // Trusted: its read-only tools run without asking. Only three of its tools are offered.
      { name: 'every', url: every.url, trusted: true, tools: ['echo', 'get-sum', 'trigger-long-running-operation'] },
      { name: 'down', url: `http://127.0.0.1:${await closedPort()}/mcp` },
      { name: 'broken', url: 'http://127.0.0.1:9/mcp', headers: { 'X-Key': '${secret:NOT_SET_ANYWHERE}' } },
    ];
    server = await startServer({
      vars: {
        MCP_SERVERS: JSON.stringify(servers),
        PRIVATE_MCP_TOKEN: TOKEN,
        MCP_CALL_TIMEOUT_MS: String(TIMEOUT_MS),
      },
    });
  },
  { timeout: 900_000 },
);

after(async () => {
  await server?.stop();
  await docs?.close();
  await priv?.close();
  await every?.close();
});

const open = (sid) => Conn.open(`${server.url}/?session_id=${sid}`, ['weft.loom']);

/**
 * Runs `message` to its end, answering each approval request with `review`; the run's frames.
 * @param {Conn} c
 */
async function run(c, message, { review = 'yes', id = `run-${randomUUID()}` } = {}) {
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
    c.send({ type: 'approval_response', call_id: f.event.call_id, review, custom_deny_message: review === 'yes' ? undefined : 'not this one' });
  }
  const frames = c.frames.slice(from).filter((x) => x.id === id);
  const events = frames.map((x) => x.event).filter(Boolean);
  return {
    frames,
    /** @type {any} the run's `run_end` (a run that failed has none: its assertions then fail) */
    end: frames.find((x) => x.type === 'run_end'),
    asked: events.filter((e) => e.type === 'tool_approval'),
    ends: events.filter((e) => e.type === 'tool_end'),
    outputs: events.filter((e) => e.type === 'tool_output'),
  };
}

describe('MCP servers as tools', () => {
  test('/status shows each server (era, tools, error) and never a header value', async () => {
    const r = await fetch(`${server.http}/status`);
    assert.equal(r.status, 200);
    const text = await r.text();
    assert.ok(!text.includes(TOKEN) && !text.includes('Bearer'), text);
    const { mcp } = JSON.parse(text);
    const by = Object.fromEntries(mcp.servers.map((s) => [s.name, s]));
    assert.equal(mcp.problem, null);
    assert.deepEqual([by.docs.era, by.docs.tools, by.docs.error], ['modern', 5, null]);
    assert.deepEqual([by.private.era, by.private.tools], ['modern', 5]);
    assert.equal(by.every.era, 'legacy');
    assert.ok(by.every.tools > 3, 'the server offers all its tools; the allow-list acts on what the model sees');
    assert.match(by.nokey.error, /HTTP 401/);
    assert.match(by.down.error, /could not be reached/);
    assert.match(by.broken.error, /NOT_SET_ANYWHERE is not set/);
    assert.equal(by.docs.host, new URL(docs.url).host);
  });

  test('tools_list shows the MCP tools with their schemas, named <server>_<tool>', async () => {
    const c = await open(`mcp-${randomUUID()}`);
    c.send({ type: 'tools_list', id: 'l' });
    const { tools } = await c.wait((f) => f.type === 'tools_list' && f.id === 'l');
    const by = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const name of [
      'docs_lookup',
      'docs_delete_page',
      'docs_locked',
      'docs_slow',
      'private_lookup',
      'every_echo',
      'every_get-sum',
      'every_trigger-long-running-operation',
    ]) {
      assert.ok(by[name], `missing ${name} in ${Object.keys(by)}`);
    }
    const dotted = tools.find((t) => t.name.startsWith('docs_notes_search'));
    assert.ok(dotted && /^[A-Za-z0-9_-]{1,64}$/.test(dotted.name), JSON.stringify(dotted));
    assert.ok(!tools.some((t) => t.name.startsWith('nokey_') || t.name.startsWith('down_')), 'no tools of a server that refused');
    assert.ok(!by['every_get-env'], 'the allow-list leaves the other tools out');
    assert.deepEqual(by.docs_lookup.input_schema.required, ['term']);
    // Hints of an untrusted server are not believed; a trusted server's are.
    assert.ok(!by.docs_lookup.read_only, 'read_only is left out when false');
    assert.equal(by.every_echo.read_only, true);
    assert.equal(by.private_lookup.read_only, true, 'approval: never');
    c.send({ type: 'tool_show', id: 's', name: dotted.name, output: 'json' });
    const shown = await c.wait((f) => f.type === 'tool_show' && f.id === 's');
    assert.match(JSON.stringify(shown.tool), /"query"/);
    c.close();
  });

  test('a call through a trusted 2025-era server runs without asking; its progress streams as tool_output', async () => {
    const c = await open(`mcp-${randomUUID()}`);
    const r = await run(c, 'use every_trigger-long-running-operation with {"duration": 0.4, "steps": 2}');
    assert.equal(r.asked.length, 0);
    assert.equal(r.ends.length, 1);
    assert.equal(r.ends[0].is_error, false, r.ends[0].result);
    assert.match(r.ends[0].result, /Long running operation completed/);
    assert.deepEqual(
      r.outputs.map((o) => o.content),
      ['progress 1/2\n', 'progress 2/2\n'],
    );
    assert.match(r.end.reply, /Long running operation completed/);
    c.close();
  });

  test("an untrusted server's call asks approval: approved it runs, denied it does not", async () => {
    const c = await open(`mcp-${randomUUID()}`);
    const yes = await run(c, 'use docs_delete_page with {"page": "intro"}');
    assert.equal(yes.asked.length, 1);
    assert.equal(yes.asked[0].name, 'docs_delete_page');
    assert.deepEqual([yes.ends[0].is_error, yes.ends[0].result], [false, 'deleted intro']);
    const calls = () => docs.log.filter((l) => l.method === 'tools/call' && l.tool === 'delete_page').length;
    const before = calls();
    const no = await run(c, 'use docs_delete_page with {"page": "outro"}', { review: 'no-continue' });
    assert.equal(no.asked.length, 1);
    assert.equal(no.ends[0].is_error, true);
    assert.match(no.ends[0].result, /denied by the user/);
    assert.equal(calls(), before, 'a denied call never reaches the server');
    c.close();
  });

  test('a plain call of the current revision, with its headers; isError is a tool error the model sees', async () => {
    const c = await open(`mcp-${randomUUID()}`);
    const ok = await run(c, 'use docs_lookup with {"term": "weft"}');
    assert.equal(ok.ends[0].result, 'weft: a word the docs define');
    assert.match(ok.end.reply, /weft: a word the docs define/);
    const call = docs.log.findLast((l) => l.method === 'tools/call' && l.tool === 'lookup');
    assert.equal(call.header, 'tools/call', 'Mcp-Method mirrors the body');
    const failed = await run(c, 'use docs_locked');
    assert.deepEqual([failed.ends[0].is_error, failed.ends[0].result], [true, 'the page is locked']);
    assert.match(failed.end.reply, /docs_locked .*Error: the page is locked/, 'the model reads it as an error');
    c.close();
  });

  test('a tool whose name has a dot is called by its own name; structured content reaches the model', async () => {
    const c = await open(`mcp-${randomUUID()}`);
    c.send({ type: 'tools_list', id: 'l' });
    const { tools } = await c.wait((f) => f.type === 'tools_list' && f.id === 'l');
    const dotted = tools.find((t) => t.name.startsWith('docs_notes_search')).name;
    const r = await run(c, `use ${dotted} with {"query": "hibernation"}`);
    assert.equal(r.ends[0].is_error, false, r.ends[0].result);
    assert.match(r.ends[0].result, /"matches":1/);
    assert.match(r.ends[0].result, /1 note matches hibernation/);
    assert.ok(docs.log.some((l) => l.method === 'tools/call' && l.tool === 'notes.search'));
    c.close();
  });

  test('a call slower than MCP_CALL_TIMEOUT_MS fails with a reason and the run goes on', async () => {
    const c = await open(`mcp-${randomUUID()}`);
    const r = await run(c, 'use docs_slow');
    assert.ok(r.end, 'the run ends');
    assert.equal(r.ends[0].is_error, true);
    assert.match(r.ends[0].result, new RegExp(`did not answer within ${TIMEOUT_MS} ms`));
    c.close();
  });

  test('a 2025-era call past the timeout is cancelled at the server (notifications/cancelled)', async () => {
    const c = await open(`mcp-${randomUUID()}`);
    const r = await run(c, 'use every_trigger-long-running-operation with {"duration": 60, "steps": 2}');
    assert.equal(r.ends[0].is_error, true);
    assert.match(r.ends[0].result, new RegExp(`did not answer within ${TIMEOUT_MS} ms`));
    // Sent on its own after the call gave up: wait for it to arrive.
    for (let i = 0; i < 100 && !every.log.some((l) => l.method === 'notifications/cancelled'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(
      every.log.some((l) => l.method === 'notifications/cancelled'),
      JSON.stringify(every.log.slice(-5)),
    );
    c.close();
  });

  test('a bearer header from a secret reaches the server; without it the server answers 401', async () => {
    const c = await open(`mcp-${randomUUID()}`);
    const r = await run(c, 'use private_lookup with {"term": "token"}');
    assert.equal(r.asked.length, 0, 'approval: never');
    assert.equal(r.ends[0].result, 'token: a word the docs define');
    const calls = priv.log.filter((l) => l.method === 'tools/call');
    assert.ok(calls.length >= 1 && calls.every((l) => l.auth));
    assert.ok(
      priv.log.some((l) => !l.auth),
      'nokey asked without the header (and got 401)',
    );
    c.close();
  });

  test('a server that is down or refusing: its call fails with why, the run goes on', async () => {
    const c = await open(`mcp-${randomUUID()}`);
    await run(c, 'use every_echo with {"message": "before"}');
    every.setDown(true);
    try {
      const r = await run(c, 'use every_echo with {"message": "while down"}');
      assert.ok(r.end, 'the run ends');
      assert.equal(r.ends[0].is_error, true);
      assert.match(r.ends[0].result, /`every`.*503/);
      assert.match(r.end.reply, /every_echo .*Error: MCP server `every` answered HTTP 503/, 'the model is told why');
    } finally {
      every.setDown(false);
    }
    c.close();
  });

  test('the server drops all its sessions mid-conversation: the next call initializes again and succeeds', async () => {
    const c = await open(`mcp-${randomUUID()}`);
    const first = await run(c, 'use every_echo with {"message": "one"}');
    assert.match(first.ends[0].result, /one/);
    const sessionBefore = every.log.findLast((l) => l.method === 'tools/call').session;
    await every.dropSessions();
    const mark = every.log.length;
    const second = await run(c, 'use every_echo with {"message": "two"}');
    assert.equal(second.ends[0].is_error, false, second.ends[0].result);
    assert.match(second.ends[0].result, /two/);
    const methods = every.log.slice(mark).map((l) => l.method);
    // The forgotten session is refused, then a fresh handshake, then the call again.
    assert.deepEqual(methods.slice(0, 2), ['tools/call', 'initialize'], methods.join(','));
    assert.ok(methods.includes('notifications/initialized'));
    assert.equal(methods.filter((m) => m === 'tools/call').length, 2);
    const retried = every.log.slice(mark).findLast((l) => l.method === 'tools/call');
    assert.notEqual(retried.session, sessionBefore);
    c.close();
  });

  test('add_mcp_server is refused where MCP_CLIENT_SERVERS is unset, with the request id', async () => {
    const c = await open(`mcp-${randomUUID()}`);
    c.send({ type: 'add_mcp_server', id: 'add-1', name: 'mine', url: docs.url, headers: { Authorization: `Bearer ${TOKEN}` } });
    const r = await c.wait((f) => f.type === 'error' && f.id === 'add-1');
    assert.equal(r.code, 'mcp_refused');
    assert.match(r.error, /MCP_CLIENT_SERVERS/);
    assert.ok(!JSON.stringify(r).includes(TOKEN));
    c.close();
  });

  test('wrangler dev restarted between two runs: the second calls MCP tools with no discovery first', async () => {
    const sid = `mcp-${randomUUID()}`;
    let c = await open(sid);
    const sum = await run(c, 'use every_get-sum with {"a": 2, "b": 3}');
    assert.equal(sum.ends[0]?.is_error, false, JSON.stringify(sum.ends));
    await run(c, 'use private_lookup with {"term": "before"}');
    c.close();
    await server.restart();
    const marks = { every: every.log.length, priv: priv.log.length };
    c = await open(sid);
    const modern = await run(c, 'use private_lookup with {"term": "after"}');
    assert.equal(modern.ends[0].result, 'after: a word the docs define');
    const legacy = await run(c, 'use every_get-sum with {"a": 4, "b": 5}');
    assert.equal(legacy.ends[0].is_error, false, legacy.ends[0].result);
    assert.match(legacy.ends[0].result, /9/);
    // Each server's first request after the restart is the call itself: no `tools/list`, no
    // `server/discover`, no `initialize` (the 2025 server's stored session is used as it is).
    // A catalog the server marked short-lived may be asked for again after a run, never before.
    // (`nokey` may ask the same server again meanwhile, without the header: not weft's call.)
    const everyAfter = every.log.slice(marks.every).map((l) => l.method);
    const privAfter = priv.log
      .slice(marks.priv)
      .filter((l) => l.auth)
      .map((l) => l.method);
    assert.equal(everyAfter[0], 'tools/call', everyAfter.join(','));
    assert.equal(privAfter[0], 'tools/call', privAfter.join(','));
    c.close();
  });
});
