// The original projects' own clients, played as ../shared/specs/ORIGINALS.md describes them,
// against the real server (`wrangler dev`): plain sockets with no subprotocol, the clients' own
// session ids in their messages, reconnecting on fresh sockets. Each test checks the reply, the
// history reused across sockets, and that every frame is of a type its dialect's documents
// define (specs/README: "Sessions named in a message", "Original clients see only their own
// protocol").
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';

import { Conn } from '../e2e/client.mjs';
import { startServer } from '../e2e/server.mjs';
import { decodeServerResponse } from './loom-types.mjs';
import * as web from './loom-web.mjs';

/** Server frame types each dialect's documents define. */
const DOCUMENTED = {
  loom: ['run_stream_event', 'run_end', 'error', 'pong', 'tools_list', 'tool_show', 'user_messages'],
  agentloop: ['response_item', 'loading_state', 'approval_request', 'agent_finished', 'context_info', 'context_compacted', 'error'],
  agentchat: ['user_message', 'agent_thinking', 'tool_call', 'tool_result', 'agent_message', 'error'],
  cueso: ['session_created', 'content_delta', 'tool_call_delta', 'message_complete', 'tool_result', 'final', 'error'],
};
const APPROVAL_TIMEOUT_MS = 4000;
let server;
before(
  async () => {
    // `debug`: workers-rs reports an SQL parameter outside JavaScript's safe integers there.
    server = await startServer({ vars: { APPROVAL_TIMEOUT_MS: String(APPROVAL_TIMEOUT_MS) }, logLevel: 'debug' });
  },
  { timeout: 900_000 },
);
after(async () => {
  await server?.stop();
});

/** A socket as the original clients open it: no subprotocol, no query string. */
const plain = (path) => Conn.open(`${server.url}${path}`);

function assertDocumented(dialect, frames) {
  for (const f of frames) {
    assert.ok(DOCUMENTED[dialect].includes(f.type), `${dialect}: undocumented frame ${JSON.stringify(f).slice(0, 300)}`);
    // What an original loom client decodes with: loom's own types (./loom-types.mjs).
    if (dialect === 'loom') decodeServerResponse(f);
  }
}

describe('the cueso CLI', () => {
  test('its own session id in every message, on fresh sockets without a query string', async () => {
    const sid = randomUUID();
    const first = await plain('/ws/chat');
    first.send({ message: 'What time is it?', session_id: sid });
    const fin = await first.wait((f) => f.type === 'final');
    assert.match(fin.content, /^It is /);
    assert.equal(first.frames[0].type, 'session_created');
    assert.equal(first.frames[0].session_id, sid);
    first.send({ message: 'calculate 6*7', session_id: sid });
    assert.equal((await first.wait((f) => f.type === 'final', { from: first.frames.indexOf(fin) + 1 })).content, '6*7 = 42.');
    assertDocumented('cueso', first.frames);
    first.close();

    // The CLI again, later: a fresh socket, the same id — the same history.
    const again = await plain('/ws/chat');
    again.send({ message: 'summarize', session_id: sid });
    const summary = await again.wait((f) => f.type === 'final');
    assert.equal(again.frames[0].session_id, sid);
    assert.match(summary.content, /"What time is it\?"; "calculate 6\*7"/);
    assert.ok(summary.iteration_count > 2, 'iteration_count counts the whole life of the session');
    assertDocumented('cueso', again.frames);
    again.close();
  });
});

describe('the cueso web app', () => {
  test('session_id null first, then the id it was given, and again after its own reconnect', async () => {
    const app = await plain('/ws/chat');
    app.send({ message: 'hello there', session_id: null });
    await app.wait((f) => f.type === 'final');
    const sid = app.frames[0].session_id;
    assert.ok(sid, 'session_created names the new session');
    app.send({ message: 'what is 2+2', session_id: sid });
    const second = await app.wait((f) => f.type === 'final' && /2\+2/.test(f.content));
    assert.equal(second.content, '2+2 = 4.');
    assertDocumented('cueso', app.frames);
    app.kill(); // the page loses its socket

    const reconnected = await plain('/ws/chat');
    reconnected.send({ message: 'summarize', session_id: sid });
    const summary = await reconnected.wait((f) => f.type === 'final');
    assert.equal(reconnected.frames[0].session_id, sid);
    assert.match(summary.content, /"hello there"; "what is 2\+2"/);
    assertDocumented('cueso', reconnected.frames);
    reconnected.close();
  });
});

describe('the Nova dashboard (agentchat)', () => {
  test('the stored session id in every chat; each thought one card; history across sockets', async () => {
    const sid = `nova-${randomUUID()}`; // kept in localStorage by useAgentChat
    const tab = await plain('/ws');
    tab.send({ type: 'chat', message: 'think: what time is it?', session_id: sid });
    const reply = await tab.wait((f) => f.type === 'agent_message' && /^It is /.test(f.message));
    assert.ok(reply);
    const thoughts = tab.frames.filter((f) => f.type === 'agent_thinking');
    assert.equal(thoughts.length, 1, 'one card per thought, not one per token');
    assert.match(thoughts[0].reasoning, /^The user wrote: "think: what time is it\?"\. To answer I need to call get_time\./);
    const order = tab.frames.map((f) => f.type).filter((t) => t !== 'agent_message');
    assert.deepEqual(order.slice(0, 2), ['user_message', 'agent_thinking']);
    assertDocumented('agentchat', tab.frames);
    tab.close();

    const reload = await plain('/ws');
    reload.send({ type: 'chat', message: 'summarize', session_id: sid });
    const summary = await reload.wait((f) => f.type === 'agent_message');
    assert.match(summary.message, /The user asked: "think: what time is it\?"\./);
    reload.send({ type: 'shout', session_id: sid });
    assert.equal((await reload.wait((f) => f.type === 'error')).error, 'Unknown message type: shout');
    reload.send({ type: 'chat', message: ' ', session_id: sid });
    assert.equal((await reload.wait((f) => f.type === 'error' && f.error !== 'Unknown message type: shout')).error, 'Empty message received');
    assertDocumented('agentchat', reload.frames);
    reload.close();
  });
});

describe('a loom client with thread_id', () => {
  test('run with its thread_id, then user_messages for it on another socket', async () => {
    const thread = `thread-${randomUUID()}`;
    const c = await plain('/');
    c.send({ type: 'run', message: 'think about the time', agent: 'react', thread_id: thread });
    const end = await c.wait((f) => f.type === 'run_end');
    assert.match(end.reply, /^It is /);
    const kinds = c.frames.filter((f) => f.type === 'run_stream_event').map((f) => f.event.type);
    assert.ok(kinds.includes('checkpoint'), 'a thread_id run closes with its checkpoint');
    assertDocumented('loom', c.frames);
    c.send({ type: 'ping', id: 'p1' });
    assert.equal((await c.wait((f) => f.type === 'pong')).id, 'p1');
    c.close();

    const history = await plain('/');
    history.send({ type: 'user_messages', id: 'h1', thread_id: thread });
    const page = await history.wait((f) => f.type === 'user_messages');
    assert.equal(page.thread_id, thread);
    assert.deepEqual(
      page.messages.map((m) => [m.role, m.content]),
      [
        ['user', 'think about the time'],
        ['assistant', end.reply],
      ],
    );
    assertDocumented('loom', history.frames);
    history.close();
  });

  test('a tool needing approval, on a socket that cannot approve, is refused at once; the next run works', async () => {
    const thread = `thread-${randomUUID()}`;
    const c = await plain('/');
    const started = Date.now();
    c.send({ type: 'run', message: 'write hi to notes.txt', agent: 'react', thread_id: thread });
    const end = await c.wait((f) => f.type === 'run_end', { timeout: 15_000 });
    assert.ok(Date.now() - started < 15_000);
    const toolEnd = c.frames.find((f) => f.event?.type === 'tool_end')?.event;
    assert.equal(toolEnd.is_error, true);
    assert.equal(toolEnd.result, 'no connected client can approve apply_patch');
    assert.equal(end.reply, 'Understood: writing notes.txt was denied, so I left it unchanged.');
    assertDocumented('loom', c.frames);
    // Its documents have no answer to tool_approval: an original loom socket is no approver.
    c.send({ type: 'approval_response', call_id: toolEnd.call_id, review: 'yes' });
    assert.equal((await c.wait((f) => f.type === 'error' && f.code === 'not_allowed')).code, 'not_allowed');
    c.send({ type: 'run', message: 'hello again', agent: 'react', thread_id: thread });
    const next = await c.wait((f) => f.type === 'run_end' && f !== end);
    assert.equal(next.reply, 'You said: hello again');
    c.close();
  });
});

describe("loom's own client types", () => {
  /** A plain socket's run of `agent`; every frame it got, up to its end. */
  async function run(c, frame) {
    const from = c.frames.length;
    c.send({ type: 'run', ...frame });
    await c.wait((f) => f.type === 'run_end' || (f.type === 'error' && f.event_id !== undefined), { from, timeout: 60_000 });
    return c.frames.slice(from);
  }

  test('decode every frame of every agent and every request; refusals carry the request id', async () => {
    const thread = `thread-${randomUUID()}`;
    const c = await plain('/');
    const runs = {
      react: await run(c, { message: 'What time is it?', agent: 'react', thread_id: thread }),
      dup: await run(c, { message: 'What time is it?', agent: 'dup' }),
      tot: await run(c, { message: 'What time is it?', agent: 'tot' }),
      got: await run(c, { message: 'What time is it in UTC and what time is it in Asia/Tokyo', agent: 'got', got_adaptive: true }),
    };
    for (const [agent, frames] of Object.entries(runs)) {
      assert.equal(frames.at(-1).type, 'run_end', `${agent}: ${JSON.stringify(frames.at(-1))}`);
      const kinds = frames.filter((f) => f.type === 'run_stream_event').map((f) => f.event.type);
      assert.ok(!kinds.includes('run_start'), `${agent}: the original never sent run_start`);
      assert.ok(kinds.includes('node_enter') && kinds.includes('message_chunk'), `${agent}: ${kinds}`);
    }
    assert.ok(runs.tot.some((f) => f.event?.type === 'tot_evaluate'));
    assert.ok(runs.got.some((f) => f.event?.type === 'got_plan'));
    assert.ok(runs.react.some((f) => f.event?.type === 'checkpoint'));

    c.send({ type: 'tools_list', id: 't1' });
    c.send({ type: 'tool_show', id: 't2', name: 'read' });
    c.send({ type: 'tool_show', id: 't3', name: 'read', output: 'json' });
    c.send({ type: 'tool_show', id: 't4', name: 'nothing' });
    c.send({ type: 'user_messages', id: 'u1', thread_id: thread });
    const listed = await c.wait((f) => f.id === 'u1');
    // Listing without a cursor bound no SQL parameter JavaScript cannot hold (workers-rs
    // logs "Converting 9223372036854775807 to JsValue … outside the safe-integer range").
    assert.doesNotMatch(server.log(), /safe-integer range/);
    c.send({ type: 'user_messages', id: 'u2', thread_id: thread, before: listed.messages[1].id, limit: 1 });
    c.send({ type: 'user_messages', id: 'u3', thread_id: '' });
    c.send({ type: 'ping', id: 'p1' });
    const pong = await c.wait((f) => f.type === 'pong');
    assert.equal(pong.id, 'p1');
    /** @type {(id: string) => any} */
    const answer = (id) => c.frames.find((f) => f.id === id && f.type !== 'run_stream_event');
    assert.equal(answer('t1').type, 'tools_list');
    assert.match(answer('t2').tool_yaml, /name: read/);
    assert.equal(answer('t3').tool.name, 'read');
    assert.deepEqual([answer('t4').type, answer('t4').error], ['error', 'tool not found: nothing']);
    // The socket follows the thread it named: the four runs are the thread's.
    assert.deepEqual(
      answer('u1').messages.map((m) => m.role),
      ['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant'],
    );
    assert.deepEqual(
      answer('u2').messages.map((m) => m.role),
      ['user'],
    );
    // The original: {"type":"error","id":"u3","error":"thread_id is required"}.
    const refused = answer('u3');
    assert.equal(refused?.type, 'error', JSON.stringify(c.frames.slice(-3)));
    assert.match(refused.error, /thread_id is required$/);

    for (const f of c.frames) {
      try {
        decodeServerResponse(f);
      } catch (e) {
        assert.fail(`${e.message}\n${JSON.stringify(f).slice(0, 300)}`);
      }
    }
    assert.doesNotMatch(server.log(), /safe-integer range/);
    c.close();
  });
});

describe("loom's current web UI (web/ at the repository's head)", () => {
  test('what it asks before enabling its composer, a run, set_model, cancel_run — answered as its own types expect', async () => {
    const c = await plain('/');
    const ask = async (frame) => {
      c.send(frame);
      return c.wait((f) => f.id === frame.id && f.type !== 'run_stream_event');
    };
    const models = web.expect.listModels(await ask(web.requests.listModels('m1')), 'm1');
    assert.equal(models.length, 1, 'the configured model');
    assert.equal(models[0].provider, 'openai');
    const agents = web.expect.agentList(await ask(web.requests.agentList('a1')), 'a1');
    assert.deepEqual(
      agents.map((a) => a.name),
      ['react', 'dup', 'tot', 'got'],
    );
    assert.ok(agents.every((a) => a.description.length > 0));
    const [workspace] = web.expect.workspaceList(await ask(web.requests.workspaceList('w1')), 'w1');
    assert.equal(web.expect.workspaceCreate(await ask(web.requests.workspaceCreate('w2', 'mine')), 'w2'), workspace.id, "a session's one workspace is its own");
    const threads = web.expect.workspaceThreadList(await ask(web.requests.workspaceThreadList('w3', workspace.id)), 'w3');
    assert.deepEqual(
      threads.map((t) => t.thread_id),
      [workspace.id],
    );
    web.expect.resolved(await ask(web.requests.workspaceThreadAdd('w4', workspace.id, workspace.id)), 'w4');
    web.expect.resolved(await ask(web.requests.workspaceThreadRemove('w5', workspace.id, 'other')), 'w5');
    const elsewhere = await ask(web.requests.workspaceThreadList('w6', 'nowhere'));
    assert.deepEqual([elsewhere.type, elsewhere.id], ['error', 'w6']);

    // Its composer is enabled: it sends with the first agent listed and the first model.
    const sessionId = randomUUID();
    const from = c.frames.length;
    c.send(web.requests.run('r1', 'hello there', { agent: agents[0].name, sessionId, model: models[0].id }));
    await c.wait((f) => f.id === 'r1' && (f.type === 'run_end' || f.type === 'error'), { from });
    const { reply, streamed } = web.expect.run(c.frames.slice(from), 'r1');
    assert.equal(reply, 'You said: hello there');
    assert.equal(streamed, reply);
    assert.equal(web.expect.setModel(await ask(web.requests.setModel('s1', models[0].id, sessionId)), 's1'), true);
    assert.equal(web.expect.setModel(await ask(web.requests.setModel('s2', 'gpt-elsewhere', sessionId)), 's2'), false);
    const history = web.expect.userMessages(await ask(web.requests.userMessages('h1', sessionId, 10)), 'h1');
    assert.deepEqual(
      history.map((m) => m.content),
      ['hello there', reply],
    );

    // cancel_run stops the run: the newer server's acknowledgement, and the run's error.
    const at = c.frames.length;
    c.send(web.requests.run('r2', 'What time is it?', { agent: 'tot', sessionId, model: models[0].id }));
    await c.wait((f) => f.id === 'r2' && f.type === 'run_stream_event', { from: at });
    const ack = await ask(web.requests.cancelRun('k1', 'r2'));
    assert.deepEqual(ack, { type: 'cancel_run', id: 'k1', run_id: 'r2' });
    const stopped = await c.wait((f) => f.id === 'r2' && (f.type === 'error' || f.type === 'run_end'), { from: at });
    assert.deepEqual([stopped.type, stopped.error], ['error', 'cancelled']);
    const late = await ask(web.requests.cancelRun('k2', 'r2'));
    assert.deepEqual([late.type, late.error], ['error', 'Run r2 not found or already completed']);
    c.close();
  });
});

describe('the agentloop example client', () => {
  /** The example client's `user_input` for `text`, with a fresh id. */
  const userInput = (text) => ({
    id: randomUUID(),
    type: 'user_input',
    payload: { input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }] },
  });

  /** A fresh socket whose turn for `text` waits at its approval_request. */
  async function asking(text) {
    const c = await plain('/agentloop');
    c.send(userInput(text));
    await c.wait((f) => f.type === 'approval_request');
    return c;
  }

  /** The example client's answer to the pending approval (it has no call id). */
  const answer = (review) => ({ id: randomUUID(), type: 'approval_response', payload: { review } });

  /** A turn: from the user_input to the last loading_state:false. */
  async function turn(c, text, from = c.frames.length) {
    c.send(userInput(text));
    await c.wait((f) => f.type === 'loading_state' && f.payload.loading === false, { from });
    return c.frames.slice(from);
  }

  test('a turn: fresh ids, one reasoning item per thought, only documented types', async () => {
    const c = await plain('/agentloop');
    const frames = await turn(c, 'think: what time is it?');
    const reasoning = frames.filter((f) => f.payload?.type === 'reasoning');
    assert.equal(reasoning.length, 1, 'one "Reasoning:" block per thought');
    const text = frames
      .filter((f) => f.payload?.type === 'message' && f.payload.role === 'assistant')
      .map((f) => f.payload.content[0].text)
      .join('');
    assert.match(text, /It is /);
    assert.deepEqual(
      frames.filter((f) => f.payload?.role === 'user'),
      [],
      'the original never echoes the input',
    );
    assert.equal(frames.at(-1).type, 'loading_state');
    c.send({ id: 'ctx-1', type: 'get_context_info' });
    c.send({ id: 'ctx-2', type: 'get_context_info' });
    await c.wait((f) => f.type === 'context_info' && c.frames.filter((g) => g.type === 'context_info').length >= 4);
    const ids = c.frames.map((f) => f.id);
    assert.ok(
      ids.every((id) => typeof id === 'string' && id.length > 0),
      'every frame has an id',
    );
    assert.equal(new Set(ids).size, ids.length, 'every frame has its own id');
    c.send({ id: 'x', type: 'ping' });
    assert.equal((await c.wait((f) => f.type === 'error')).payload.message, 'Unknown message type: ping');
    c.send('not json');
    assert.equal((await c.wait((f) => f.type === 'error' && f.payload.message !== 'Unknown message type: ping')).payload.message, 'Invalid message format');
    assertDocumented('agentloop', c.frames);
    c.close();
  });

  test('explain, then no-exit: the turn shapes its client expects', async () => {
    const c = await asking('write hi to a.txt');
    const asked = c.frames.length;
    c.send(answer('explain'));
    const again = await c.wait((f) => f.type === 'approval_request', { from: asked });
    const between = c.frames.slice(asked, c.frames.indexOf(again)).map((f) => f.type);
    assert.ok(between.length > 0 && between.every((t) => t === 'response_item'), `explanation only, got ${between}`);
    // It ends with a newline, as the original's does: its client clears the line the
    // repeated approval_request finds open.
    const explanation = c.frames
      .slice(asked, c.frames.indexOf(again))
      .map((f) => f.payload.content[0].text)
      .join('');
    assert.match(explanation, /\S\n$/);
    const answered = c.frames.length;
    c.send(answer('no-exit'));
    await c.wait((f) => f.type === 'loading_state' && f.payload.loading === false, { from: answered });
    const tail = c.frames.slice(answered).map((f) => f.type);
    assert.deepEqual(tail.slice(-2), ['agent_finished', 'loading_state']);
    c.send(answer('yes'));
    assert.equal((await c.wait((f) => f.type === 'error', { from: answered })).payload.message, 'No pending approval request');
    assertDocumented('agentloop', c.frames);
    c.close();
  });

  test('manual_compact on an empty transcript sends the error alone', async () => {
    const c = await plain('/agentloop');
    c.send({ id: randomUUID(), type: 'manual_compact' });
    const err = await c.wait((f) => f.type === 'error');
    assert.equal(err.payload.message, 'Cannot compact empty transcript');
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(
      c.frames.map((f) => f.type),
      ['error'],
    );
    c.close();
  });

  test('an approval nobody answers is refused after APPROVAL_TIMEOUT_MS, and the session is free again', async () => {
    const c = await asking('write x to late.txt');
    const asked = Date.now();
    await c.wait((f) => f.type === 'loading_state' && f.payload.loading === false, { timeout: APPROVAL_TIMEOUT_MS + 15_000 });
    assert.ok(Date.now() - asked >= APPROVAL_TIMEOUT_MS - 500, 'not refused before the timeout');
    const output = c.frames.find((f) => f.payload?.type === 'function_call_output');
    assert.match(output?.payload.output, /^nobody answered the approval of apply_patch within 4 s$/);
    const next = await turn(c, 'hello again');
    assert.ok(next.some((f) => f.payload?.role === 'assistant' && /You said: hello again/.test(f.payload.content[0].text)));
    assertDocumented('agentloop', c.frames);
    c.close();
  });
});
