// End to end, a remote agent (README, "Bring your own agent"): an AG-UI agent weft did not
// write — ag-ui-langgraph serving the LangGraph graph of tests/agui/langgraph, its model the
// scripted LLM — behind a weft session, as an `AGENTS` entry with a `url`. Driven through the
// real Worker under `wrangler dev` from a loom client (text, the agent's own tool, its
// interrupt approved and denied), an agentloop client (the operator's default agent; the
// interrupt as its approval_request), `POST /api/chat`, and weft-sdk in Node whose socket is cut
// mid-run and resumed (every event once); the remote agent killed mid-run and restarted; an
// agent that answers garbage (a tiny SSE server of this file) and one that is not there; a
// cancel that aborts the remote request.
//
// node --test tests/e2e/remote.test.mjs (the venv of scripts/setup must exist; weft-sdk built
// by scripts/build-sdk).

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Chat } from '@ai-sdk/react';
import { DefaultChatTransport } from 'ai';

import init, { Client } from 'weft-sdk';

import { startLangGraphAgent } from '../agui/langgraph/server.mjs';
import { launchChromium, relay, serveStatic } from '../sdk/harness.mjs';
import { Conn } from './client.mjs';
import { freePort, startServer } from './server.mjs';

const TOKEN = 'remote-e2e-secret-token';

let server;
let lg;
/** A TCP relay in front of the Worker, which a test cuts: a dropped network. */
let net;
/** @type {import('node:http').Server} */
let junk;
/** What the garbage server answers next: set by each test that uses it. `junkStatus`: its HTTP
 * status; `junkHangs`: it sends the body and then nothing, never ending it (a stalled agent). */
let junkBody = '';
let junkStatus = 200;
let junkHangs = false;
/** The garbage server takes the request and never answers it. */
let junkMute = false;
/** The requests the garbage server got: headers and the body (a RunAgentInput). */
const junkSeen = [];

before(
  async () => {
    // A pause between the scripted model's chunks, so a run can be cut while it streams.
    lg = await startLangGraphAgent({ delayMs: 20 });
    junk = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        junkSeen.push({ headers: req.headers, input: JSON.parse(body) });
        if (junkMute) return;
        res.writeHead(junkStatus, { 'content-type': junkStatus === 200 ? 'text/event-stream' : 'text/plain' });
        if (junkHangs) res.write(junkBody);
        else res.end(junkBody);
      });
    });
    await new Promise((r) => junk.listen(0, '127.0.0.1', () => r(undefined)));
    await init();
    const junkUrl = `http://127.0.0.1:${/** @type {any} */ (junk.address()).port}/`;
    const downUrl = `http://127.0.0.1:${await freePort()}/`;
    const AGENTS = {
      lg: { url: lg.url, description: 'LangGraph, over AG-UI' },
      junk: { url: junkUrl, headers: { Authorization: 'Bearer ${secret:JUNK_TOKEN}' } },
      down: { url: downUrl },
    };
    server = await startServer({
      vars: { AGENTS: JSON.stringify(AGENTS), DEFAULT_AGENT: 'lg', LLM_IDLE_TIMEOUT_MS: '10000' },
      envFile: `JUNK_TOKEN=${TOKEN}\n`,
    });
    net = await relay({ host: '127.0.0.1', port: Number(new URL(server.http).port) });
  },
  { timeout: 900_000 },
);
after(async () => {
  await net?.close();
  await server?.stop();
  await lg?.stop();
  junk?.closeAllConnections();
  await new Promise((r) => (junk ? junk.close(() => r(undefined)) : r(undefined)));
});

const session = () => `remote-${randomUUID()}`;

/** Waits (30 s at most) until a session's SQLite holds the thread of remote run `runId` (its
 * `meta` `remote_thread`), read-only while the server runs. */
async function storedThread(runId) {
  const { DatabaseSync } = await import('node:sqlite');
  const deadline = Date.now() + 30_000;
  for (;;) {
    for (const file of readdirSync(server.persist, { recursive: true }).filter((f) => String(f).endsWith('.sqlite'))) {
      const db = new DatabaseSync(join(server.persist, String(file)), { readOnly: true });
      try {
        const hasMeta = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get();
        const row = hasMeta && db.prepare("SELECT instr(value, ?) AS at FROM meta WHERE key = 'remote_thread'").get(`"runId":"${runId}"`);
        if (row && Number(row.at) > 0) return;
      } finally {
        db.close();
      }
    }
    if (Date.now() > deadline) throw new Error('no remote thread was stored');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
const loom = (sid = session()) => Conn.open(`${server.url}/?session_id=${sid}`, ['weft.loom']);

/** One loom run to its end: the `run_end` frame or the `error` that ended it, and the run's frames. */
async function loomRun(c, run) {
  const id = run.id ?? randomUUID();
  const from = c.frames.length;
  c.send({ type: 'run', id, ...run });
  const end = await c.wait((f) => (f.type === 'run_end' || f.type === 'error') && f.id === id, { from, timeout: 60_000 });
  return { end, frames: c.frames.slice(from).filter((f) => f.id === id) };
}
const kinds = (frames) => frames.map((f) => f.event?.type ?? f.type);
const textOf = (frames) =>
  frames
    .filter((f) => f.event?.type === 'message_chunk')
    .map((f) => f.event.content)
    .join('');

describe('a remote AG-UI agent behind a weft session', () => {
  test('/status lists it with its host, never a header value', async () => {
    const text = await (await fetch(`${server.http}/status`)).text();
    assert.ok(!text.includes(TOKEN), 'a header value in /status');
    const status = JSON.parse(text);
    const by = Object.fromEntries(status.agents.map((a) => [a.name, a]));
    assert.deepEqual(by.lg, { name: 'lg', description: 'LangGraph, over AG-UI', agent: 'remote', remote: new URL(lg.url).host });
    assert.equal(by.junk.agent, 'remote');
    assert.deepEqual(status.problems, []);
    // weft-sdk's agents() reads the same list; loom's agent_list names it too.
    const client = new Client({ url: server.http, dialect: 'agentchat', sessionId: session() });
    try {
      const pick = (list) => list.map(({ name, description, agent, remote }) => ({ name, description, agent, remote: remote ?? null }));
      const listed = (await client.agents()).agents;
      assert.deepEqual(pick(listed), pick(status.agents));
      assert.equal(listed.find((a) => a.name === 'lg')?.remote, new URL(lg.url).host);
      assert.equal(listed.find((a) => a.name === 'react')?.remote, null);
    } finally {
      client.close();
    }
    const c = await loom();
    c.send({ type: 'agent_list', id: 'al' });
    const list = await c.wait((f) => f.type === 'agent_list' && f.id === 'al');
    assert.deepEqual(
      list.agents.find((a) => a.name === 'lg'),
      { name: 'lg', description: 'LangGraph, over AG-UI', source: 'project' },
    );
    assert.ok(!JSON.stringify(c.frames).includes(TOKEN));
    c.close();
  });

  test('loom: text, streamed as its own run, the reply in the history', async () => {
    const c = await loom();
    const { end, frames } = await loomRun(c, { message: 'count to 4', agent: 'lg' });
    assert.equal(end.type, 'run_end', JSON.stringify(end));
    assert.equal(end.reply, '1 2 3 4');
    assert.equal(textOf(frames), '1 2 3 4');
    assert.equal(kinds(frames)[0], 'run_start');
    const ids = frames.filter((f) => f.event).map((f) => f.event.event_id);
    assert.deepEqual(
      ids,
      ids.map((_, i) => i + 1),
    );
    c.close();
  });

  test('loom: the remote agent calls its own tool; the call and its result reach the client', async () => {
    const c = await loom();
    const { end, frames } = await loomRun(c, { message: 'what time is it', agent: 'lg' });
    assert.equal(end.reply, 'It is 2026-01-01T12:00:00Z (UTC).');
    const call = frames.find((f) => f.event?.type === 'tool_call')?.event;
    assert.equal(call?.name, 'get_time');
    assert.deepEqual(call.arguments, { timezone: 'UTC' });
    const result = frames.find((f) => f.event?.type === 'tool_end')?.event;
    assert.match(result?.result ?? '', /2026-01-01T12:00:00Z/);
    c.close();
  });

  test('the session keeps the thread: the next run sends it as history, the session as threadId', async () => {
    const sid = session();
    const c = await loom(sid);
    await loomRun(c, { message: 'count to 2', agent: 'lg' });
    junkBody = [
      { type: 'RUN_STARTED', threadId: sid, runId: 'r' },
      { type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant' },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'noted' },
      { type: 'TEXT_MESSAGE_END', messageId: 'm' },
      { type: 'RUN_FINISHED', threadId: sid, runId: 'r' },
    ]
      .map((e) => `data: ${JSON.stringify(e)}\n\n`)
      .join('');
    const { end } = await loomRun(c, { message: 'and now?', agent: 'junk' });
    assert.equal(end.reply, 'noted');
    const { input } = junkSeen.at(-1);
    assert.equal(input.threadId, sid);
    assert.deepEqual(
      input.messages.map((m) => [m.role, m.content]),
      [
        ['user', 'count to 2'],
        ['assistant', '1 2'],
        ['user', 'and now?'],
      ],
    );
    c.send({ type: 'user_messages', id: 'h', thread_id: sid });
    const history = await c.wait((f) => f.type === 'user_messages');
    assert.deepEqual(
      history.messages.map((m) => m.role),
      ['user', 'assistant', 'user', 'assistant'],
    );
    c.close();
  });

  test('an agent that is not there: a clear error, and the session goes on', async () => {
    const c = await loom();
    const { end } = await loomRun(c, { message: 'hi', agent: 'down' });
    assert.equal(end.type, 'error');
    assert.equal(end.code, 'remote_unavailable');
    assert.match(end.error, /could not reach the remote agent down/);
    const next = await loomRun(c, { message: 'count to 2', agent: 'lg' });
    assert.equal(next.end.reply, '1 2');
    c.close();
  });

  test('an agent answering malformed events: a clear error, nothing of it in the history', async () => {
    const sid = session();
    const c = await loom(sid);
    junkBody =
      'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n' +
      'data: {"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}\n\n' +
      'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"half"}\n\n' +
      'data: {this is not json\n\n';
    const { end } = await loomRun(c, { message: 'hi', agent: 'junk' });
    assert.equal(end.type, 'error');
    assert.equal(end.code, 'remote_protocol');
    assert.match(end.error, /the remote agent junk sent what is not AG-UI/);
    assert.equal(junkSeen.at(-1).headers.authorization, `Bearer ${TOKEN}`);
    c.send({ type: 'user_messages', id: 'h', thread_id: sid });
    const history = await c.wait((f) => f.type === 'user_messages');
    assert.deepEqual(
      history.messages.map((m) => m.role),
      ['user'],
    );
    assert.ok(!JSON.stringify(history).includes('half'), 'half a reply in the history');
    c.close();
  });

  test('the remote agent killed mid-run: a clear error, not run again; restarted, the next run works', async () => {
    const sid = session();
    const c = await loom(sid);
    const id = randomUUID();
    const from = c.frames.length;
    c.send({ type: 'run', id, message: 'count to 200', agent: 'lg' });
    await c.wait((f) => f.id === id && f.event?.type === 'message_chunk', { from, timeout: 60_000 });
    const asked = lg.llm.requests.length;
    await lg.kill();
    const end = await c.wait((f) => (f.type === 'run_end' || f.type === 'error') && f.id === id, { from, timeout: 60_000 });
    assert.equal(end.type, 'error');
    assert.equal(end.code, 'stream_cut');
    assert.match(end.error, /stream (ended|broke off)/);
    c.send({ type: 'user_messages', id: 'h', thread_id: sid });
    const history = await c.wait((f) => f.type === 'user_messages');
    assert.deepEqual(
      history.messages.map((m) => [m.role, m.content]),
      [['user', 'count to 200']],
      'the history keeps the message and nothing of the cut reply',
    );
    await lg.restart();
    const next = await loomRun(c, { message: 'count to 3', agent: 'lg' });
    assert.equal(next.end.reply, '1 2 3');
    // The cut run was not sent again: one model request for the next run only.
    assert.equal(lg.llm.requests.length, asked + 1);
    c.close();
  });

  test("loom: the agent's interrupt is weft's approval; yes runs the tool, no tells the agent", async () => {
    for (const [review, result, reply] of [
      ['yes', 'wrote 5 bytes to notes.txt', 'Done: I wrote notes.txt.'],
      ['no-continue', 'denied: the user did not approve writing notes.txt', 'Understood: writing notes.txt was denied, so I left it unchanged.'],
    ]) {
      const c = await loom();
      const id = randomUUID();
      const from = c.frames.length;
      c.send({ type: 'run', id, message: 'write hello to notes.txt', agent: 'lg' });
      const ask = (await c.wait((f) => f.id === id && f.event?.type === 'tool_approval', { from, timeout: 60_000 })).event;
      assert.equal(ask.name, 'write');
      assert.deepEqual(ask.arguments, { path: 'notes.txt', content: 'hello' });
      c.send({ type: 'approval_response', call_id: 'call_forged', review: 'yes' });
      await c.wait((f) => f.type === 'error' && /call_forged/.test(f.error ?? ''), { from });
      c.send({ type: 'approval_response', call_id: ask.call_id, review });
      const end = await c.wait((f) => (f.type === 'run_end' || f.type === 'error') && f.id === id, { from, timeout: 60_000 });
      assert.equal(end.type, 'run_end', JSON.stringify(end));
      assert.equal(end.reply, reply);
      const frames = c.frames.slice(from).filter((f) => f.id === id);
      const resolved = frames.find((f) => f.event?.type === 'approval_resolved')?.event;
      assert.equal(resolved?.review, review);
      const toolEnd = frames.find((f) => f.event?.type === 'tool_end' && f.event.call_id === ask.call_id)?.event;
      assert.equal(toolEnd?.result, result);
      // One run for the client, in one numbering, however many AG-UI runs it took.
      const ids = frames.filter((f) => f.event).map((f) => f.event.event_id);
      assert.deepEqual(
        ids,
        ids.map((_, i) => i + 1),
      );
      assert.equal(frames.filter((f) => f.event?.type === 'run_start').length, 1);
      c.close();
    }
  });

  test("agentloop: the operator's default is the remote agent; its interrupt is an approval_request", async () => {
    const c = await Conn.open(`${server.url}/agentloop?session_id=${session()}`, ['weft.agentloop']);
    const input = (text) => ({
      id: randomUUID(),
      type: 'user_input',
      payload: { input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }] },
    });
    c.send(input('write hi to hi.txt'));
    const ask = await c.wait((f) => f.type === 'approval_request', { timeout: 60_000 });
    assert.equal(ask.payload.command[0], 'write');
    c.send({ id: randomUUID(), type: 'approval_response', payload: { review: 'yes' } });
    await c.wait((f) => f.type === 'loading_state' && f.payload.loading === false, { timeout: 60_000 });
    const text = c.frames
      .filter((f) => f.type === 'response_item' && f.payload.type === 'message')
      .map((f) => f.payload.content?.[0]?.text ?? '')
      .join('');
    assert.match(text, /Done: I wrote hi\.txt\./);
    c.close();
  });

  test('POST /api/chat names the remote agent in its body', async () => {
    const body = { id: `remote-${randomUUID()}`, messages: [{ id: randomUUID(), role: 'user', parts: [{ type: 'text', text: 'count to 5' }] }], agent: 'lg' };
    const res = await fetch(`${server.http}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(res.status, 200);
    const chunks = (await res.text())
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)));
    const text = chunks
      .filter((c) => c.type === 'text-delta')
      .map((c) => c.delta)
      .join('');
    assert.equal(text, '1 2 3 4 5');
    assert.equal(chunks.at(-1).type, 'finish');
  });

  test("the AI SDK's own Chat (what useChat runs) over /api/chat: the remote agent's reply and its tool", async () => {
    const chat = new Chat({
      id: `remote-chat-${randomUUID()}`,
      transport: new DefaultChatTransport({ api: `${server.http}/api/chat`, body: { agent: 'lg' } }),
    });
    const text = (m) =>
      m.parts
        .filter((p) => p.type === 'text')
        .map((p) => p.text)
        .join('');
    await chat.sendMessage({ text: 'count to 4' });
    assert.equal(chat.status, 'ready', String(chat.error));
    assert.equal(text(chat.messages.at(-1)), '1 2 3 4');
    // The next message goes to the same weft session (the chat's id): the agent's own tool.
    await chat.sendMessage({ text: 'what time is it' });
    assert.equal(chat.status, 'ready', String(chat.error));
    const reply = chat.messages.at(-1);
    assert.ok(reply);
    assert.deepEqual(
      chat.messages.map((m) => m.role),
      ['user', 'assistant', 'user', 'assistant'],
    );
    const tool = /** @type {{ state?: string, output?: unknown } | undefined} */ (
      reply.parts.find((p) => p.type.startsWith('tool-') || p.type === 'dynamic-tool')
    );
    assert.ok(tool, `a tool part in ${JSON.stringify(reply.parts)}`);
    assert.equal(tool.state, 'output-available');
    assert.match(JSON.stringify(tool.output), /2026-01-01T12:00:00Z/);
    assert.match(text(reply), /It is 2026-01-01T12:00:00Z \(UTC\)\./);
  });

  test('weft-sdk in Node: a socket cut mid-run is resumed, every event once', async () => {
    const client = new Client({ url: `ws://127.0.0.1:${net.port}`, dialect: 'loom', sessionId: session() });
    await client.connect();
    try {
      const run = client.run({ message: 'count to 60', agent: 'lg' });
      const ids = [];
      let cut = 0;
      run.onEvent((ev) => {
        ids.push(ev.event_id);
        if (ev.type === 'message_chunk' && cut === 0) cut = net.cut();
      });
      const { reply } = await run.result;
      assert.equal(cut, 1, 'cut once, mid-run');
      assert.equal(reply, Array.from({ length: 60 }, (_, i) => i + 1).join(' '));
      assert.deepEqual(
        ids,
        ids.map((_, i) => i + 1),
        'every event once, in order',
      );
    } finally {
      client.close();
    }
  });

  test('weft-sdk in headless Chromium: the network cut mid-run, the socket resumed, every event once', async () => {
    const web = await serveStatic({
      '/': `<!doctype html><script type="module">
        import init, { Client } from '/pkg/index.mjs';
        await init();
        Object.assign(window, { Client, ready: true });
      </script>`,
    });
    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      await page.goto(`${web.url}/`);
      await page.waitForFunction(() => /** @type {any} */ (window).ready === true, null, { timeout: 30_000 });
      const before = net.connections;
      const running = page.evaluate(
        async (/** @type {any} */ { url, sessionId }) => {
          const w = /** @type {any} */ (window);
          const client = new w.Client({ url, dialect: 'loom', sessionId });
          await client.connect();
          const run = client.run({ message: 'count to 80', agent: 'lg' });
          const ids = [];
          w.chunks = 0;
          run.onEvent((/** @type {any} */ ev) => {
            ids.push(ev.event_id);
            if (ev.type === 'message_chunk') w.chunks++;
          });
          const { reply } = await run.result;
          client.close();
          return { ids, reply };
        },
        { url: `ws://127.0.0.1:${net.port}`, sessionId: session() },
      );
      await page.waitForFunction(() => /** @type {any} */ (window).chunks >= 5, null, { timeout: 60_000, polling: 10 });
      assert.ok(net.cut() > 0, 'the socket was cut mid-run');
      const { ids, reply } = await running;
      assert.ok(net.connections >= before + 2, 'the page opened a second socket');
      assert.equal(reply, Array.from({ length: 80 }, (_, i) => i + 1).join(' '));
      assert.deepEqual(
        ids,
        ids.map((_, i) => i + 1),
        'every event once, in order',
      );
    } finally {
      await browser.close();
      await web.close();
    }
  });

  test("the agent's interrupt survives a restart of weft: answered after it, the run goes on in the same thread", async () => {
    const sid = session();
    const a = await loom(sid);
    const id = randomUUID();
    a.send({ type: 'run', id, message: 'write hello to kept.txt', agent: 'lg' });
    const ask = (await a.wait((f) => f.id === id && f.event?.type === 'tool_approval', { timeout: 60_000 })).event;
    // weft goes down once the agent's response has ended and the session has stored the thread.
    await storedThread(id);
    const seen = a.frames.filter((f) => f.id === id && f.event).length;
    const asked = lg.llm.requests.length;
    a.kill();
    await server.restart();
    const b = await loom(sid);
    b.send({ type: 'approval_response', call_id: ask.call_id, review: 'yes' });
    b.send({ type: 'resume', run_id: id, after_event_id: seen });
    const end = await b.wait((f) => (f.type === 'run_end' || f.type === 'error') && f.id === id, { timeout: 60_000 });
    assert.equal(end.type, 'run_end', JSON.stringify(end));
    assert.equal(end.reply, 'Done: I wrote kept.txt.');
    const toolEnd = b.frames.find((f) => f.id === id && f.event?.type === 'tool_end' && f.event.call_id === ask.call_id)?.event;
    assert.equal(toolEnd?.result, 'wrote 5 bytes to kept.txt');
    // The agent was not asked the first half again: one model request, for the answer.
    assert.equal(lg.llm.requests.length, asked + 1);
    b.close();
  });

  test('cancel aborts the request to the remote agent; the next run works', async () => {
    const c = await loom();
    const id = randomUUID();
    const from = c.frames.length;
    c.send({ type: 'run', id, message: 'count to 400', agent: 'lg' });
    await c.wait((f) => f.id === id && f.event?.type === 'message_chunk', { from, timeout: 60_000 });
    const streaming = lg.llm.activeResponses;
    assert.equal(streaming, 1);
    c.send({ type: 'cancel', id });
    const end = await c.wait((f) => (f.type === 'run_end' || f.type === 'error') && f.id === id, { from, timeout: 60_000 });
    assert.equal(end.code, 'cancelled');
    // The agent saw its client go: its model call stops streaming too.
    for (let i = 0; i < 200 && lg.llm.activeResponses > 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(lg.llm.activeResponses, 0, 'the remote run went on after the cancel');
    const next = await loomRun(c, { message: 'count to 2', agent: 'lg' });
    assert.equal(next.end.reply, '1 2');
    c.close();
  });

  test("a page's tool the remote agent calls runs on the socket that declared it; its result goes back", async () => {
    const c = await loom();
    c.send({
      type: 'client_tools',
      tools: [
        {
          name: 'pick_color',
          description: 'Ask the page for a colour',
          input_schema: { type: 'object', properties: { hint: { type: 'string' } } },
          read_only: true,
        },
      ],
    });
    const id = randomUUID();
    const from = c.frames.length;
    c.send({ type: 'run', id, message: 'use pick_color with {"hint":"sky"}', agent: 'lg' });
    const start = (await c.wait((f) => f.id === id && f.event?.type === 'tool_start' && f.event.name === 'pick_color', { from, timeout: 60_000 })).event;
    const call = c.frames.find((f) => f.id === id && f.event?.type === 'tool_call' && f.event.call_id === start.call_id)?.event;
    assert.deepEqual(call?.arguments, { hint: 'sky' });
    c.send({ type: 'tool_result', call_id: 'call_forged', result: 'x', is_error: false });
    await c.wait((f) => f.type === 'error' && f.code === 'stale', { from });
    c.send({ type: 'tool_result', call_id: start.call_id, result: 'blue', is_error: false });
    const end = await c.wait((f) => (f.type === 'run_end' || f.type === 'error') && f.id === id, { from, timeout: 60_000 });
    assert.equal(end.type, 'run_end', JSON.stringify(end));
    assert.equal(end.reply, 'The pick_color tool returned: blue.');
    c.close();
  });

  test('AG-UI over HTTP names the remote agent in forwardedProps: weft between two AG-UI ends', async () => {
    const input = {
      threadId: session(),
      runId: randomUUID(),
      state: {},
      messages: [{ id: randomUUID(), role: 'user', content: 'count to 3' }],
      tools: [],
      context: [],
      forwardedProps: { agent: 'lg' },
    };
    const res = await fetch(`${server.http}/agui`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(input),
    });
    assert.equal(res.status, 200);
    const events = (await res.text())
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => JSON.parse(e.slice(6)));
    const text = events
      .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
      .map((e) => e.delta)
      .join('');
    assert.equal(text, '1 2 3');
    assert.equal(events[0].type, 'RUN_STARTED');
    assert.equal(events.at(-1).type, 'RUN_FINISHED');
  });

  test("the agent's state is the session's: the next run sends it back as the input's state", async () => {
    const sid = session();
    const c = await loom(sid);
    const sse = (events) => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('');
    junkBody = sse([
      { type: 'RUN_STARTED', threadId: sid, runId: 'r1' },
      { type: 'STATE_SNAPSHOT', snapshot: { count: 1, tags: ['a'] } },
      { type: 'STATE_DELTA', delta: [{ op: 'replace', path: '/count', value: 2 }] },
      { type: 'RUN_FINISHED', threadId: sid, runId: 'r1' },
    ]);
    const first = await loomRun(c, { message: 'one', agent: 'junk' });
    assert.equal(first.end.type, 'run_end', JSON.stringify(first.end));
    assert.deepEqual(junkSeen.at(-1).input.state, {});
    junkBody = sse([
      { type: 'RUN_STARTED', threadId: sid, runId: 'r2' },
      { type: 'RUN_FINISHED', threadId: sid, runId: 'r2' },
    ]);
    const second = await loomRun(c, { message: 'two', agent: 'junk' });
    assert.equal(second.end.type, 'run_end', JSON.stringify(second.end));
    assert.deepEqual(junkSeen.at(-1).input.state, { count: 2, tags: ['a'] });
    c.close();
  });

  test('an agent that answers an HTTP error, one that stalls mid-stream and one that never answers: clear errors', async () => {
    const c = await loom();
    try {
      junkStatus = 503;
      junkBody = 'overloaded';
      const refused = await loomRun(c, { message: 'hi', agent: 'junk' });
      assert.equal(refused.end.code, 'remote_error');
      assert.equal(refused.end.error, 'the remote agent junk answered HTTP 503: overloaded');
      junkStatus = 200;
      junkHangs = true;
      junkBody = `data: ${JSON.stringify({ type: 'RUN_STARTED', threadId: 't', runId: 'r' })}\n\n`;
      // LLM_IDLE_TIMEOUT_MS is 10 s in this file.
      const stalled = await loomRun(c, { message: 'hi', agent: 'junk' });
      assert.equal(stalled.end.code, 'remote_timeout');
      assert.equal(stalled.end.error, 'the remote agent junk sent nothing for 10 s');
      junkMute = true;
      const mute = await loomRun(c, { message: 'hi', agent: 'junk' });
      assert.equal(mute.end.code, 'remote_timeout');
      assert.equal(mute.end.error, 'the remote agent junk sent nothing for 10 s');
    } finally {
      junkStatus = 200;
      junkHangs = false;
      junkMute = false;
      c.close();
    }
  });
});
