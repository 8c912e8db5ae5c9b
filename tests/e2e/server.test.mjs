// End to end: the real Worker under `wrangler dev`, the scripted LLM, real WebSocket clients,
// every dialect. Each test uses its own session.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Conn } from './client.mjs';
import { startServer } from './server.mjs';

// The suite runs the real-provider code path: an OpenAI key and base URL pointing at the
// scripted LLM. The key must never appear in any frame.
const KEY = 'sk-e2e-do-not-leak-0123456789';
const TOKEN = 'e2e-token';
const ALLOWED = 'http://allowed.example';

let server;
before(async () => {
  server = await startServer({
    delayMs: 2,
    useKey: KEY,
    vars: {
      WEFT_AUTH_TOKEN: TOKEN,
      ALLOWED_ORIGINS: ALLOWED,
      PAUSE_AFTER: 'calculator',
      RATE_LIMIT_PER_MINUTE: '300',
      LLM_IDLE_TIMEOUT_MS: '2000',
      // Room for the 3 MB client tool result of the storage-limit test.
      MAX_FRAME_BYTES: String(4 * 1024 * 1024),
      // Small enough that a session with two long replies compacts automatically; the other
      // tests' sessions stay far below it.
      CONTEXT_WINDOW: '8000',
    },
  });
}, { timeout: 900_000 });
after(async () => {
  await server?.stop();
});

const session = () => `e2e-${randomUUID()}`;
const DIALECT_AT = { '/': 'loom', '/agentloop': 'agentloop', '/ws': 'agentchat', '/ws/chat': 'cueso' };
/** A socket that opts in to weft (this suite tests weft's extensions; the original clients,
 * which do not, have tests/originals/). `protocols` given: exactly those. */
const open = (path, sid, protocols = [`weft.${DIALECT_AT[path]}`]) =>
  Conn.open(`${server.url}${path}?session_id=${sid}&token=${TOKEN}`, protocols);
/** Every frame any test received, to check that the provider key never leaks. */
const everyFrame = [];
Conn.onFrame = (f) => everyFrame.push(f);

/** Loom run frames of one run: the inner events with the envelope, then run_end/error. */
function loomRun(frames, runId) {
  return frames.filter((f) => f.id === runId && ['run_stream_event', 'run_end', 'error'].includes(f.type));
}

function assertDense(ids) {
  assert.deepEqual(ids, ids.map((_, i) => i + 1), `event ids not dense: ${ids}`);
}

describe('loom', () => {
  test('ping, then a run with a tool call streams every event and ends with run_end', async () => {
    const c = await open('/', session());
    c.send({ type: 'ping', id: 'p1' });
    assert.deepEqual(await c.wait((f) => f.type === 'pong'), { type: 'pong', id: 'p1' });
    c.ws.send(Buffer.from(JSON.stringify({ type: 'ping', id: 'binary' })));
    assert.deepEqual(await c.wait((f) => f.type === 'pong' && f.id === 'binary'), { type: 'pong', id: 'binary' });
    c.send({ type: 'run', message: 'What time is it?', agent: 'react', id: 'run-time' });
    const end = await c.wait((f) => f.type === 'run_end');
    assert.match(end.reply, /^It is \d{4}-\d\d-\d\dT/);
    assert.ok(end.total_usage.total_tokens > end.usage.total_tokens);
    const frames = loomRun(c.frames, 'run-time');
    const kinds = frames.map((f) => f.event?.type ?? f.type);
    assert.equal(kinds[0], 'run_start');
    for (const k of ['node_enter', 'tool_call_chunk', 'tool_call', 'tool_start', 'tool_end', 'message_chunk', 'usage', 'llm_complete', 'node_exit']) {
      assert.ok(kinds.includes(k), `missing ${k}`);
    }
    assertDense(frames.map((f) => f.event?.event_id ?? f.event_id));
    const call = frames.find((f) => f.event?.type === 'tool_call').event;
    assert.deepEqual([call.name, call.arguments], ['get_time', { timezone: 'UTC' }]);
    c.close();
  });

  test('approval: a forged call id is refused, the real one runs the tool', async () => {
    const c = await open('/', session());
    c.send({ type: 'run', message: 'write hello to notes.txt', agent: 'react', id: 'run-w' });
    const ask = (await c.wait((f) => f.event?.type === 'tool_approval')).event;
    assert.equal(ask.name, 'apply_patch');
    c.send({ type: 'approval_response', call_id: 'call_forged', review: 'yes' });
    const refused = await c.wait((f) => f.type === 'error' && f.code === 'stale');
    assert.match(refused.error, /call_forged/);
    c.send({ type: 'approval_response', call_id: ask.call_id, review: 'yes' });
    const end = await c.wait((f) => f.type === 'run_end');
    const toolEnd = c.frames.find((f) => f.event?.type === 'tool_end').event;
    assert.equal(toolEnd.is_error, false);
    assert.match(toolEnd.result, /notes\.txt/);
    assert.match(end.reply, /notes\.txt/);
    const resolved = c.frames.find((f) => f.event?.type === 'approval_resolved').event;
    assert.equal(resolved.review, 'yes');
    c.close();
  });

  test('approval: no-continue tells the model, which answers; always is remembered', async () => {
    const sid = session();
    const c = await open('/', sid);
    c.send({ type: 'run', message: 'write a to a.txt', agent: 'react', id: 'r1' });
    let ask = (await c.wait((f) => f.event?.type === 'tool_approval')).event;
    c.send({ type: 'approval_response', call_id: ask.call_id, review: 'no-continue', custom_deny_message: 'not now' });
    await c.wait((f) => f.type === 'run_end' && f.id === 'r1');
    const denied = c.frames.find((f) => f.id === 'r1' && f.event?.type === 'tool_end').event;
    assert.equal(denied.is_error, true);
    assert.equal(denied.result, 'denied by the user: not now');

    c.send({ type: 'run', message: 'write b to b.txt', agent: 'react', id: 'r2' });
    ask = (await c.wait((f) => f.id === 'r2' && f.event?.type === 'tool_approval')).event;
    c.send({ type: 'approval_response', call_id: ask.call_id, review: 'always' });
    await c.wait((f) => f.type === 'run_end' && f.id === 'r2');

    const from = c.frames.length;
    c.send({ type: 'run', message: 'write c to c.txt', agent: 'react', id: 'r3' });
    await c.wait((f) => f.type === 'run_end' && f.id === 'r3', { from });
    assert.ok(!c.frames.slice(from).some((f) => f.event?.type === 'tool_approval'), 'always: not asked again');
    c.close();
  });

  test('get_time knows IANA zones through the runtime; an unknown zone is a clear tool error', async () => {
    const c = await open('/', session());
    c.send({ type: 'run', message: 'What time is it in Asia/Tokyo?', agent: 'react', id: 'tokyo' });
    await c.wait((f) => f.type === 'run_end' && f.id === 'tokyo');
    const tokyo = c.frames.find((f) => f.id === 'tokyo' && f.event?.type === 'tool_end').event;
    assert.equal(tokyo.is_error, false);
    assert.match(tokyo.result, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+09:00/);
    c.send({ type: 'run', message: 'What time is it in Mars/Olympus_Mons?', agent: 'react', id: 'mars' });
    await c.wait((f) => f.type === 'run_end' && f.id === 'mars');
    const mars = c.frames.find((f) => f.id === 'mars' && f.event?.type === 'tool_end').event;
    assert.equal(mars.is_error, true);
    assert.match(mars.result, /unknown timezone: Mars\/Olympus_Mons/);
    c.close();
  });

  test('tools_list, tool_show (yaml, json, unknown), user_messages', async () => {
    const sid = session();
    const c = await open('/', sid);
    c.send({ type: 'tools_list', id: 't1' });
    const list = await c.wait((f) => f.type === 'tools_list');
    const names = list.tools.map((t) => t.name);
    for (const n of ['apply_patch', 'calculator', 'get_time', 'ls', 'read', 'web_fetch', 'write']) assert.ok(names.includes(n), n);
    c.send({ type: 'tool_show', id: 't2', name: 'read' });
    const yaml = await c.wait((f) => f.type === 'tool_show' && f.id === 't2');
    assert.match(yaml.tool_yaml, /name: read/);
    assert.equal(yaml.tool, undefined);
    c.send({ type: 'tool_show', id: 't3', name: 'read', output: 'json' });
    const json = await c.wait((f) => f.type === 'tool_show' && f.id === 't3');
    assert.equal(json.tool.name, 'read');
    c.send({ type: 'tool_show', id: 't4', name: 'nope' });
    const missing = await c.wait((f) => f.type === 'error' && f.id === 't4');
    assert.equal(missing.error, 'tool not found: nope');

    c.send({ type: 'run', message: 'hello there', agent: 'react', id: 'h1' });
    await c.wait((f) => f.type === 'run_end');
    c.send({ type: 'user_messages', id: 'u1', thread_id: sid });
    const history = await c.wait((f) => f.type === 'user_messages');
    assert.deepEqual(history.messages.map((m) => [m.role, m.content]), [['user', 'hello there'], ['assistant', 'You said: hello there']]);
    assert.equal(history.has_more, false);
    c.send({ type: 'user_messages', id: 'u2', thread_id: sid, limit: 1 });
    const page = await c.wait((f) => f.type === 'user_messages' && f.id === 'u2');
    assert.deepEqual([page.messages.length, page.has_more], [1, true]);
    c.send({ type: 'user_messages', id: 'u3' });
    const err = await c.wait((f) => f.type === 'error' && /thread_id is required/.test(f.error));
    assert.ok(err);
    c.close();
  });

  test('bad input gets a clear error and the socket keeps serving', async () => {
    const c = await open('/', session());
    c.send('{not json');
    c.send(JSON.stringify({ type: 'run', agent: 'react' }));
    c.send(JSON.stringify({ type: 'launch_missiles' }));
    c.ws.send(Buffer.from([0xff, 0xfe, 0x00]));
    await c.wait((f) => f.type === 'error' && f.code === 'invalid_utf8');
    const errors = c.frames.filter((f) => f.type === 'error').map((f) => f.code);
    assert.deepEqual(errors, ['invalid_json', 'invalid_field', 'unknown_type', 'invalid_utf8']);
    c.send({ type: 'run', message: 'still there?', agent: 'react' });
    const end = await c.wait((f) => f.type === 'run_end');
    assert.equal(end.reply, 'You said: still there?');
    c.close();
  });

  test('a second run while one streams is refused; an unknown agent says so', async () => {
    const c = await open('/', session());
    c.send({ type: 'run', message: 'count to 300', agent: 'react', id: 'long' });
    await c.wait((f) => f.event?.type === 'message_chunk');
    c.send({ type: 'run', message: 'me too', agent: 'react', id: 'second' });
    const busy = await c.wait((f) => f.type === 'error' && f.code === 'busy');
    assert.match(busy.error, /already in progress \(long\)/);
    c.send({ type: 'cancel', id: 'long' });
    const cancelled = await c.wait((f) => f.type === 'error' && f.id === 'long');
    assert.equal(cancelled.error, 'cancelled');
    c.send({ type: 'run', message: 'hi', agent: 'mcts', id: 'g' });
    const unavailable = await c.wait((f) => f.type === 'error' && f.code === 'agent_unavailable');
    assert.equal(unavailable.error, 'unknown agent: mcts (react, dup, tot or got)');
    c.close();
  });
});

describe('resume', () => {
  test('a socket killed mid-run resumes with every frame once, in order', async () => {
    const sid = session();
    const a = await open('/', sid);
    a.send({ type: 'run', message: 'count to 120', agent: 'react', id: 'rr' });
    await a.wait((f) => f.event?.type === 'message_chunk' && f.event.content.includes('10'));
    a.kill();
    const seen = loomRun(a.frames, 'rr').map((f) => f.event?.event_id ?? f.event_id);
    const last = seen[seen.length - 1];
    const b = await open('/', sid);
    b.send({ type: 'resume', run_id: 'rr', after_event_id: last });
    await b.wait((f) => f.type === 'run_end' && f.id === 'rr');
    const rest = loomRun(b.frames, 'rr').map((f) => f.event?.event_id ?? f.event_id);
    assertDense([...seen, ...rest]);
    const text = [...loomRun(a.frames, 'rr'), ...loomRun(b.frames, 'rr')]
      .filter((f) => f.event?.type === 'message_chunk').map((f) => f.event.content).join('');
    const end = b.frames.find((f) => f.type === 'run_end');
    assert.equal(text, end.reply);
    b.close();
  });

  test('resume of an unknown run is a clear error', async () => {
    const c = await open('/', session());
    c.send({ type: 'resume', run_id: 'nope', after_event_id: 0 });
    const err = await c.wait((f) => f.type === 'error');
    assert.equal(err.error, 'unknown run nope in this session');
    c.close();
  });

  test('events reach every socket of the session, each in its own dialect', async () => {
    const sid = session();
    const loom = await open('/', sid);
    const cueso = await open('/ws/chat', sid);
    const agentchat = await open('/ws', sid);
    loom.send({ type: 'run', message: 'hello everyone', agent: 'react', id: 'fan' });
    await loom.wait((f) => f.type === 'run_end');
    const fin = await cueso.wait((f) => f.type === 'final');
    assert.equal(fin.content, 'You said: hello everyone');
    const msg = await agentchat.wait((f) => f.type === 'agent_message');
    assert.equal(msg.message, 'You said: hello everyone');
    const other = await open('/', session());
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(other.frames.length, 0, 'another session hears nothing');
    for (const c of [loom, cueso, agentchat, other]) c.close();
  });
});

describe('agentloop', () => {
  const input = (text, id = randomUUID()) => ({ id, type: 'user_input', payload: { input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }] } });

  test('user_input streams response_items sharing one id, then loading_state false last', async () => {
    const c = await open('/agentloop', session());
    c.send(input('hello agentloop'));
    const done = await c.wait((f) => f.type === 'loading_state' && f.payload.loading === false);
    assert.equal(done.reply, 'You said: hello agentloop');
    const types = c.frames.map((f) => f.type);
    assert.equal(types[0], 'loading_state');
    assert.equal(c.frames[0].payload.loading, true);
    assert.equal(types[types.length - 1], 'loading_state');
    assert.ok(types.includes('agent_finished') && types.includes('context_info'));
    const chunks = c.frames.filter((f) => f.type === 'response_item' && f.payload.role === 'assistant');
    assert.ok(chunks.length > 1);
    assert.equal(new Set(chunks.map((f) => f.payload.id)).size, 1, 'one payload id per streamed message');
    assert.equal(chunks.map((f) => f.payload.content[0].text).join(''), 'You said: hello agentloop');
    const ids = c.frames.map((f) => f.id);
    assert.equal(new Set(ids).size, ids.length, 'every frame has a fresh id');
    c.close();
  });

  test('approval_request / approval_response, explain first', async () => {
    const c = await open('/agentloop', session());
    c.send(input('write hi to hi.txt'));
    const ask = await c.wait((f) => f.type === 'approval_request');
    assert.equal(ask.payload.command[0], 'apply_patch');
    assert.match(ask.payload.applyPatch.patch, /\*\*\* Add File: hi\.txt/);
    c.send({ id: randomUUID(), type: 'approval_response', payload: { review: 'explain' } });
    const from = c.frames.indexOf(ask) + 1;
    const again = await c.wait((f) => f.type === 'approval_request', { from });
    const explanation = c.frames.slice(from, c.frames.indexOf(again)).filter((f) => f.type === 'response_item').map((f) => f.payload.content?.[0]?.text ?? '').join('');
    assert.ok(explanation.length > 0, 'the explanation comes before the request is asked again');
    c.send({ id: randomUUID(), type: 'approval_response', payload: { review: 'yes' } });
    await c.wait((f) => f.type === 'loading_state' && f.payload.loading === false);
    const out = c.frames.find((f) => f.type === 'response_item' && f.payload.type === 'function_call_output');
    assert.match(out.payload.output, /hi\.txt/);
    c.close();
  });

  test('a full context compacts automatically before the model call; the summary stays', async () => {
    const sid = session();
    const c = await open('/agentloop', sid);
    for (const n of ['a', 'b']) {
      c.send(input('long reply 2000', `long-${n}`));
      await c.wait((f) => f.type === 'loading_state' && f.payload.loading === false && f.run_id === `long-${n}`);
    }
    c.send(input('and now?', 'after'));
    await c.wait((f) => f.type === 'loading_state' && f.payload.loading === false && f.run_id === 'after');
    const compacted = c.frames.filter((f) => f.type === 'context_compacted');
    assert.equal(compacted.length, 1);
    assert.equal(compacted[0].run_id, 'after');
    assert.ok(compacted[0].payload.newTokenCount < compacted[0].payload.oldTokenCount / 2);
    assert.equal(compacted[0].payload.strategy, 'ThresholdContextManager');
    c.send({ id: 'ci', type: 'get_context_info' });
    const info = await c.wait((f) => f.type === 'context_info' && f.run_id === undefined);
    assert.ok(info.payload.usagePercent < 80);
    c.close();
    // The listing keeps every message whole: the history rows it pointed at were replaced by
    // the summary, and their text moved back into it first.
    const loom = await open('/', sid);
    loom.send({ type: 'user_messages', id: 'h', thread_id: sid });
    const listed = (await loom.wait((f) => f.type === 'user_messages')).messages;
    assert.deepEqual(listed.map((m) => m.role), ['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    assert.equal(listed[0].content, 'long reply 2000');
    assert.equal(listed[1].content.split(' ').length, 2000, 'a reply compacted away in the history, whole in the listing');
    loom.close();
  });

  test('get_context_info, manual_compact, and compacting an empty transcript', async () => {
    const c = await open('/agentloop', session());
    c.send({ id: 'c0', type: 'manual_compact' });
    const empty = await c.wait((f) => f.type === 'error');
    assert.equal(empty.payload.message, 'Cannot compact empty transcript');
    c.send(input('remember the number 42', 'run-42'));
    await c.wait((f) => f.type === 'loading_state' && f.payload.loading === false && f.run_id === 'run-42');
    c.send({ id: 'c1', type: 'get_context_info' });
    const info = await c.wait((f) => f.type === 'context_info' && f.run_id === undefined);
    assert.equal(info.payload.strategy, 'ThresholdContextManager');
    assert.equal(info.payload.transcriptLength, 2);
    assert.ok(info.payload.tokenCount > 0 && info.payload.maxTokens === 8000);
    c.send({ id: 'c2', type: 'manual_compact' });
    const compacted = await c.wait((f) => f.type === 'context_compacted');
    assert.equal(compacted.payload.strategy, 'ThresholdContextManager');
    assert.ok(compacted.payload.oldTokenCount > 0);
    c.close();
  });
});

describe('agentchat', () => {
  test('chat: user_message, tool_call, tool_result, agent_message', async () => {
    const c = await open('/ws', session());
    c.send({ type: 'chat', message: 'What time is it?' });
    const msg = await c.wait((f) => f.type === 'agent_message');
    assert.match(msg.message, /^It is /);
    const types = c.frames.map((f) => f.type);
    assert.deepEqual(types.filter((t) => ['user_message', 'tool_call', 'tool_result', 'agent_message'].includes(t)),
      ['user_message', 'tool_call', 'tool_result', 'agent_message']);
    const call = c.frames.find((f) => f.type === 'tool_call');
    assert.deepEqual([call.tool_name, JSON.parse(call.tool_args)], ['get_time', { timezone: 'UTC' }]);
    assert.equal(c.frames.find((f) => f.type === 'tool_result').success, true);
    c.close();
  });

  test('empty message, unknown type and malformed JSON each get an error; the socket stays open', async () => {
    const c = await open('/ws', session());
    c.send({ type: 'chat', message: '   ' });
    c.send({ type: 'shout', message: 'hi' });
    c.send('{{');
    await c.wait((f) => f.type === 'error' && /JSON/.test(f.error));
    const errors = c.frames.filter((f) => f.type === 'error').map((f) => f.error);
    // The original server's wording (specs/README), which its clients match on.
    assert.equal(errors[0], 'Empty message received');
    assert.equal(errors[1], 'Unknown message type: shout');
    c.send({ type: 'chat', message: 'ok?' });
    assert.equal((await c.wait((f) => f.type === 'agent_message')).message, 'You said: ok?');
    c.close();
  });

  test('a tool that needs approval is refused at once when no socket can approve', async () => {
    // No subprotocol and no client_tools: an original client, which cannot answer approvals.
    const c = await open('/ws', session(), []);
    c.send({ type: 'chat', message: 'write x to x.txt' });
    await c.wait((f) => f.type === 'agent_message');
    const result = c.frames.find((f) => f.type === 'tool_result');
    assert.equal(result.success, false);
    assert.equal(result.result, 'no connected client can approve apply_patch');
    c.close();
  });
});

describe('cueso', () => {
  test('session_created first, tool_call_delta announces with input null, message_complete, final', async () => {
    const sid = session();
    const c = await open('/ws/chat', sid);
    c.send({ message: 'What time is it?', session_id: sid });
    const fin = await c.wait((f) => f.type === 'final');
    assert.equal(c.frames[0].type, 'session_created');
    assert.equal(c.frames[0].session_id, sid);
    const deltas = c.frames.filter((f) => f.type === 'tool_call_delta');
    assert.equal(deltas[0].tool_call.input, null);
    assert.equal(JSON.parse(deltas.slice(1).map((d) => d.tool_call.input_json).join('')).timezone, 'UTC');
    const completes = c.frames.filter((f) => f.type === 'message_complete');
    assert.deepEqual(completes.map((m) => m.finish_reason), ['tool_use', 'end_turn']);
    assert.equal(fin.iteration_count, 2);
    assert.equal(fin.paused, false);
    assert.match(fin.content, /^It is /);
    c.close();
  });

  test('with client_tools approvals:true a cueso socket can approve', async () => {
    const c = await open('/ws/chat', session());
    c.send({ type: 'client_tools', tools: [], approvals: true });
    c.send({ message: 'write y to y.txt' });
    const ask = await c.wait((f) => f.type === 'tool_approval');
    c.send({ type: 'approval_response', call_id: ask.call_id, review: 'yes' });
    await c.wait((f) => f.type === 'final');
    const result = c.frames.find((f) => f.type === 'tool_result');
    assert.equal(result.error, undefined);
    assert.match(result.result, /y\.txt/);
    c.close();
  });

  test('a client-side tool is called on the socket that declared it, and its result goes to the model', async () => {
    const c = await open('/ws/chat', session());
    c.send({ type: 'client_tools', tools: [{ name: 'local_notes', description: 'notes on this device', input_schema: { type: 'object' }, read_only: true }] });
    c.send({ message: 'use local_notes with {"topic":"groceries"}' });
    const announce = await c.wait((f) => f.type === 'tool_call_delta' && f.tool_call.name === 'local_notes');
    assert.equal(announce.tool_call.input, null);
    await c.wait((f) => f.type === 'message_complete');
    const args = c.frames.filter((f) => f.type === 'tool_call_delta').map((f) => f.tool_call.input_json ?? '').join('');
    assert.deepEqual(JSON.parse(args), { topic: 'groceries' });
    c.send({ type: 'tool_result', call_id: 'call_forged', result: 'x', is_error: false });
    assert.equal((await c.wait((f) => f.type === 'error')).code, 'stale');
    c.send({ type: 'tool_result', call_id: announce.tool_call.id, result: 'milk, eggs', is_error: false });
    const fin = await c.wait((f) => f.type === 'final');
    assert.equal(fin.content, 'The local_notes tool returned: milk, eggs.');
    c.close();
  });

  test('when the socket running a client-side tool goes away, the model hears why and the run ends', async () => {
    const sid = session();
    const d = await open('/', sid);
    d.send({ type: 'client_tools', tools: [{ name: 'gone_tool', input_schema: { type: 'object' }, read_only: true }] });
    d.send({ type: 'run', message: 'use gone_tool', agent: 'react', id: 'orphan' });
    await d.wait((f) => f.event?.type === 'tool_start');
    const seen = loomRun(d.frames, 'orphan').length;
    d.kill();
    const e = await open('/', sid);
    e.send({ type: 'resume', run_id: 'orphan', after_event_id: seen });
    const end = await e.wait((f) => f.type === 'run_end' && f.id === 'orphan');
    // OpenAI-format tool results carry no error flag: the failure travels as "Error: …" text.
    assert.equal(end.reply, 'The gone_tool tool returned: Error: the client that runs gone_tool disconnected before answering.');
    e.close();
  });
});

/** Overwrites a run's checkpoint with something that is not one, in whichever Durable Object's
 * SQLite file holds that run (the server must be down). */
async function damageCheckpoint(persist, runId) {
  const { DatabaseSync } = await import('node:sqlite');
  const files = readdirSync(persist, { recursive: true }).filter((f) => String(f).endsWith('.sqlite'));
  let damaged = 0;
  for (const file of files) {
    const db = new DatabaseSync(join(persist, String(file)));
    try {
      const hasRuns = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'").get();
      if (hasRuns) damaged += Number(db.prepare("UPDATE runs SET checkpoint = '{\"not\": \"a run\"' WHERE run_id = ?").run(runId).changes);
    } finally {
      db.close();
    }
  }
  assert.equal(damaged, 1, `run ${runId} found in one SQLite file of ${files.length}`);
}

/** The longest value stored in any column of any Durable Object's SQLite file (read while the
 * server runs, read-only). */
async function largestValue(persist) {
  const { DatabaseSync } = await import('node:sqlite');
  let largest = 0;
  let where = '';
  for (const file of readdirSync(persist, { recursive: true }).filter((f) => String(f).endsWith('.sqlite'))) {
    const db = new DatabaseSync(join(persist, String(file)), { readOnly: true });
    try {
      for (const { name: table } of db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'").all()) {
        for (const { name: column } of db.prepare(`PRAGMA table_info("${table}")`).all()) {
          const { n } = db.prepare(`SELECT max(length(CAST("${column}" AS BLOB))) AS n FROM "${table}"`).get();
          if ((n ?? 0) > largest) [largest, where] = [n, `${table}.${column}`];
        }
      }
    } finally {
      db.close();
    }
  }
  return { largest, where };
}

/** Moves a run's event log into `events`, the rowid table builds before 2026-11-24 wrote, as
 * a session stored by such a build holds it (the server must be down). */
async function moveToLegacyEventTable(persist, runId) {
  const { DatabaseSync } = await import('node:sqlite');
  let moved = 0;
  for (const file of readdirSync(persist, { recursive: true }).filter((f) => String(f).endsWith('.sqlite'))) {
    const db = new DatabaseSync(join(persist, String(file)));
    try {
      if (!db.prepare("SELECT 1 FROM event_log WHERE run_id = ? LIMIT 1").get(runId)) continue;
      db.exec('CREATE TABLE IF NOT EXISTS events (run_id TEXT NOT NULL, event_id INTEGER NOT NULL, json TEXT NOT NULL, PRIMARY KEY (run_id, event_id))');
      moved += Number(db.prepare('INSERT INTO events SELECT run_id, event_id, json FROM event_log WHERE run_id = ?').run(runId).changes);
      db.prepare('DELETE FROM event_log WHERE run_id = ?').run(runId);
    } catch (e) {
      if (!/no such table: event_log/.test(String(e))) throw e;
    } finally {
      db.close();
    }
  }
  assert.ok(moved > 0, `run ${runId}'s events moved`);
}

describe('persistence', () => {
  test('after a wrangler dev restart: history, remembered approvals, and a run waiting for approval', async () => {
    const remembered = session();
    const a = await open('/', remembered);
    a.send({ type: 'run', message: 'write one to one.txt', agent: 'react', id: 'p1' });
    const ask1 = (await a.wait((f) => f.event?.type === 'tool_approval')).event;
    a.send({ type: 'approval_response', call_id: ask1.call_id, review: 'always' });
    await a.wait((f) => f.type === 'run_end' && f.id === 'p1');
    a.close();

    const waiting = session();
    const b = await open('/', waiting);
    b.send({ type: 'run', message: 'write two to two.txt', agent: 'react', id: 'p2' });
    const ask2 = (await b.wait((f) => f.event?.type === 'tool_approval')).event;
    const seen = loomRun(b.frames, 'p2').length;
    b.kill();

    // A third session's waiting run whose checkpoint is damaged while the server is down.
    const damaged = session();
    const c = await open('/', damaged);
    c.send({ type: 'run', message: 'write four to four.txt', agent: 'react', id: 'p4' });
    await c.wait((f) => f.event?.type === 'tool_approval');
    c.kill();

    const p1Frames = loomRun(a.frames, 'p1').length;
    await server.restart(async () => {
      await damageCheckpoint(server.persist, 'p4');
      await moveToLegacyEventTable(server.persist, 'p1');
    });

    // The session is usable at once: the unreadable run is failed, and a new run starts; the
    // failed run's clients see how it ended when they resume it.
    const c2 = await open('/', damaged);
    c2.send({ type: 'run', message: 'What time is it?', agent: 'react', id: 'p5' });
    assert.match((await c2.wait((f) => f.type === 'run_end' && f.id === 'p5')).reply, /^It is /);
    c2.send({ type: 'resume', run_id: 'p4', after_event_id: 0 });
    const failed = await c2.wait((f) => f.type === 'error' && f.id === 'p4');
    assert.equal(failed.code, 'unrestorable');
    assert.match(failed.error, /could not be resumed/);
    c2.close();

    const a2 = await open('/', remembered);
    // p1's log now sits in the table of earlier builds: a resume still replays all of it.
    a2.send({ type: 'resume', run_id: 'p1', after_event_id: 0 });
    await a2.wait((f) => f.type === 'run_end' && f.id === 'p1');
    assert.equal(loomRun(a2.frames, 'p1').length, p1Frames);
    a2.send({ type: 'user_messages', id: 'h', thread_id: remembered });
    const history = await a2.wait((f) => f.type === 'user_messages');
    assert.deepEqual(history.messages.map((m) => m.role), ['user', 'assistant']);
    assert.equal(history.messages[0].content, 'write one to one.txt');
    a2.send({ type: 'run', message: 'write three to three.txt', agent: 'react', id: 'p3' });
    await a2.wait((f) => f.type === 'run_end' && f.id === 'p3');
    assert.ok(!loomRun(a2.frames, 'p3').some((f) => f.event?.type === 'tool_approval'), 'always survived the restart');
    a2.close();

    const b2 = await open('/', waiting);
    b2.send({ type: 'approval_response', call_id: ask2.call_id, review: 'yes' });
    b2.send({ type: 'resume', run_id: 'p2', after_event_id: seen });
    const end = await b2.wait((f) => f.type === 'run_end' && f.id === 'p2', { timeout: 30_000 });
    assert.match(end.reply, /two\.txt/);
    const ids = loomRun(b2.frames, 'p2').map((f) => f.event?.event_id ?? f.event_id);
    assert.equal(ids[0], seen + 1, 'the resume starts right after what was seen');
    b2.close();
  });
});

describe('values past the 2 MB row limit', () => {
  test('a 5 MB file write from the model: refused by the tool, the run ends well, its log replays whole', async () => {
    const sid = session();
    const c = await open('/', sid);
    c.send({ type: 'run', message: 'write 5000000 bytes to big.txt', agent: 'react', id: 'big' });
    const ask = (await c.wait((f) => f.event?.type === 'tool_approval' && f.id === 'big', { timeout: 60_000 })).event;
    c.send({ type: 'approval_response', call_id: ask.call_id, review: 'yes' });
    await c.wait((f) => f.type === 'run_end' && f.id === 'big', { timeout: 60_000 });
    const refused = c.frames.find((f) => f.event?.type === 'tool_end' && f.id === 'big').event;
    assert.equal(refused.is_error, true);
    assert.match(refused.result, /the limit per file is 1048576 bytes/);
    // The run's log holds the 5 MB call: a resume from the start gets it back, byte for byte.
    const from = c.frames.length;
    c.send({ type: 'resume', run_id: 'big', after_event_id: 0 });
    await c.wait((f) => f.type === 'run_end' && f.id === 'big', { from, timeout: 60_000 });
    const replayed = c.frames.slice(from).find((f) => f.event?.type === 'tool_approval');
    assert.deepEqual(replayed.event, ask);
    c.send({ type: 'user_messages', id: 'h', thread_id: sid });
    const history = await c.wait((f) => f.type === 'user_messages');
    assert.deepEqual(history.messages.map((m) => m.role), ['user', 'assistant']);
    c.close();
    // workerd's local SQLite takes longer rows than Cloudflare's (2 MB): look at the rows.
    const { largest, where } = await largestValue(server.persist);
    assert.ok(largest < 2_000_000, `a ${largest}-byte value in ${where}`);
  });

  test('a 3 MB client tool result reaches the model cut to 1 MiB, marked, and the run goes on', async () => {
    const c = await open('/ws/chat', session());
    c.send({ type: 'client_tools', tools: [{ name: 'local_notes', description: 'notes on this device', input_schema: { type: 'object' }, read_only: true }] });
    c.send({ message: 'use local_notes with {"topic":"everything"}' });
    const announce = await c.wait((f) => f.type === 'tool_call_delta' && f.tool_call.name === 'local_notes');
    await c.wait((f) => f.type === 'message_complete');
    c.send({ type: 'tool_result', call_id: announce.tool_call.id, result: 'y'.repeat(3_000_000), is_error: false });
    const fin = await c.wait((f) => f.type === 'final', { timeout: 60_000 });
    assert.match(fin.content, /\[truncated: the tool returned 3000000 bytes; the first 1048576 are shown\]\.$/);
    assert.ok(fin.content.length < 1_100_000, `${fin.content.length}`);
    // The session goes on: its state, past 2 MB with both calls in it, was stored.
    c.send({ message: 'count to 3' });
    const next = await c.wait((f) => f.type === 'final', { from: c.frames.indexOf(fin) + 1, timeout: 60_000 });
    assert.equal(next.content, '1 2 3');
    c.close();
  });
});

describe('a session named in a message (relayed to its Durable Object)', () => {
  test('approvals, cancel, resume and history work as for ?session_id=', async (t) => {
    const sid = session();
    // No ?session_id=: the socket's own session is a fresh one; every run names `sid`.
    const c = await Conn.open(`${server.url}/?token=${TOKEN}`, ['weft.loom']);
    c.send({ type: 'run', message: 'write hi to relayed.txt', agent: 'react', id: 'r-approve', thread_id: sid });
    const ask = (await c.wait((f) => f.event?.type === 'tool_approval')).event;
    // An answer names no session: it goes to the session the socket last named.
    c.send({ type: 'approval_response', call_id: ask.call_id, review: 'yes' });
    const end = await c.wait((f) => f.type === 'run_end' && f.id === 'r-approve');
    assert.equal(end.reply, 'Done: I wrote relayed.txt.');
    const frames = loomRun(c.frames, 'r-approve');
    assertDense(frames.map((f) => f.event?.event_id ?? f.event_id));

    server.pace(20);
    t.after(() => server.pace(null));
    c.send({ type: 'run', message: 'long reply 300', agent: 'react', id: 'r-cancel', thread_id: sid });
    await c.wait((f) => f.id === 'r-cancel' && f.event?.type === 'message_chunk');
    c.send({ type: 'cancel', id: 'r-cancel' });
    assert.equal((await c.wait((f) => f.type === 'error' && f.id === 'r-cancel')).error, 'cancelled');
    server.pace(null);

    // Another socket, also without ?session_id=: naming the session reaches its runs.
    const d = await Conn.open(`${server.url}/?token=${TOKEN}`, ['weft.loom']);
    d.send({ type: 'user_messages', id: 'h', thread_id: sid });
    const page = await d.wait((f) => f.type === 'user_messages');
    assert.deepEqual(page.messages.filter((m) => m.role === 'user').map((m) => m.content),
      ['write hi to relayed.txt', 'long reply 300']);
    d.send({ type: 'resume', run_id: 'r-approve', after_event_id: 3 });
    await d.wait((f) => f.type === 'run_end' && f.id === 'r-approve');
    const replayed = loomRun(d.frames, 'r-approve');
    assert.deepEqual(replayed, frames.slice(3), 'the missing frames, each once');
    c.close();
    d.close();
  });
  test('a socket naming more sessions than it keeps links to still reaches each of them', async () => {
    // worker/src/relay.rs keeps 8 links per socket; a 9th session closes the least recently used.
    const c = await Conn.open(`${server.url}/ws/chat?token=${TOKEN}`, []);
    const sids = Array.from({ length: 10 }, () => session());
    for (const [i, sid] of sids.entries()) {
      const from = c.frames.length;
      c.send({ message: `hello ${i}`, session_id: sid });
      assert.equal((await c.wait((f) => f.type === 'final', { from })).content, `You said: hello ${i}`);
    }
    // The first link was closed; naming its session again opens a new one, history intact.
    const from = c.frames.length;
    c.send({ message: 'summarize', session_id: sids[0] });
    const summary = await c.wait((f) => f.type === 'final', { from });
    assert.equal(c.frames[from].session_id, sids[0]);
    assert.match(summary.content, /The user asked: "hello 0"\./);
    c.close();
  });
});

describe('security and limits', () => {
  test('auth: missing or wrong token is refused before the upgrade; query, subprotocol and bearer work', async () => {
    const sid = session();
    await assert.rejects(Conn.open(`${server.url}/?session_id=${sid}`), /HTTP 401/);
    await assert.rejects(Conn.open(`${server.url}/?session_id=${sid}&token=nope`), /HTTP 401/);
    const viaProtocol = await Conn.open(`${server.url}/ws/chat?session_id=${sid}`, ['weft.cueso', `weft.token.${TOKEN}`]);
    assert.equal(viaProtocol.ws.protocol, 'weft.cueso');
    const viaBearer = await Conn.open(`${server.url}/agentloop?session_id=${sid}`, ['weft.agentloop'], { headers: { Authorization: `Bearer ${TOKEN}` } });
    viaBearer.send({ type: 'ping', id: 'b' });
    assert.deepEqual(await viaBearer.wait((f) => f.type === 'pong'), { type: 'pong', id: 'b' });
    // The subprotocol picks the dialect on any path: agentchat frames on `/`.
    const chat = await Conn.open(`${server.url}/?session_id=${sid}&token=${TOKEN}`, ['weft.agentchat']);
    chat.send({ type: 'chat', message: 'which dialect?' });
    assert.equal((await chat.wait((f) => f.type === 'agent_message')).message, 'You said: which dialect?');
    for (const c of [viaProtocol, viaBearer, chat]) c.close();
  });

  test('/status is behind the token and names the provider and model, never the key or base URL', async () => {
    assert.equal((await fetch(`${server.http}/status`)).status, 401);
    const r = await fetch(`${server.http}/status?token=${TOKEN}`);
    assert.equal(r.status, 200);
    const text = await r.text();
    assert.ok(!text.includes(KEY) && !text.includes(server.llm.url), text);
    const status = JSON.parse(text);
    assert.deepEqual(status.model, { source: 'api', provider: 'openai', model: 'gpt-4o-mini', problem: null });
    assert.equal(status.auth, true);
  });

  test('origin: a disallowed browser origin is accepted then closed with 4003; an allowed one works', async () => {
    const sid = session();
    const evil = await Conn.open(`${server.url}/ws/chat?session_id=${sid}&token=${TOKEN}`, [], { headers: { Origin: 'http://evil.example' } });
    assert.deepEqual(await evil.waitClose(), { code: 4003, reason: 'origin not allowed' });
    const good = await Conn.open(`${server.url}/ws/chat?session_id=${sid}&token=${TOKEN}`, [], { headers: { Origin: ALLOWED } });
    good.send({ message: 'hi' });
    assert.equal((await good.wait((f) => f.type === 'final')).content, 'You said: hi');
    good.close();
  });

  test("a session's runs and messages are reached only by naming it (session ids are capabilities)", async () => {
    const mine = session();
    const a = await open('/', mine);
    a.send({ type: 'run', message: 'a secret plan', agent: 'react', id: 'secret-run' });
    await a.wait((f) => f.type === 'run_end');
    const b = await open('/', session());
    b.send({ type: 'resume', run_id: 'secret-run', after_event_id: 0 });
    assert.equal((await b.wait((f) => f.type === 'error')).error, 'unknown run secret-run in this session');
    b.send({ type: 'cancel', id: 'secret-run' });
    assert.match((await b.wait((f) => f.type === 'error' && /secret-run/.test(f.error) && f !== b.frames[0])).error, /no active run secret-run/);
    b.send({ type: 'user_messages', id: 'guess', thread_id: session() });
    assert.deepEqual((await b.wait((f) => f.type === 'user_messages' && f.id === 'guess')).messages, []);
    // Whoever knows the id may use it, as with ?session_id= (specs/README).
    b.send({ type: 'user_messages', id: 'known', thread_id: mine });
    const known = await b.wait((f) => f.type === 'user_messages' && f.id === 'known');
    assert.deepEqual(known.messages.map((m) => m.content), ['a secret plan', 'You said: a secret plan']);
    a.close();
    b.close();
  });

  test('an oversized frame gets an error and the socket keeps serving', async () => {
    const c = await open('/', session());
    c.send({ type: 'run', message: 'x'.repeat(4_300_000), agent: 'react' });
    const err = await c.wait((f) => f.type === 'error');
    assert.equal(err.code, 'frame_too_large');
    c.send({ type: 'ping', id: 'after' });
    assert.equal((await c.wait((f) => f.type === 'pong')).id, 'after');
    c.close();
  });

  test('a flood from one socket is rate-limited without hurting another session', async () => {
    const flooder = await open('/ws', session());
    const calm = await open('/ws', session());
    for (let i = 0; i < 320; i++) flooder.send({ type: 'ping', id: `f${i}` });
    const limited = await flooder.wait((f) => f.type === 'error' && f.code === 'rate_limited');
    assert.equal(limited.error, 'too many messages: slow down');
    assert.equal(flooder.frames.filter((f) => f.type === 'pong').length, 300);
    calm.send({ type: 'chat', message: 'still fine?' });
    assert.equal((await calm.wait((f) => f.type === 'agent_message')).message, 'You said: still fine?');
    flooder.close();
    calm.close();
  });

  test('ping is answered while a run streams', async () => {
    const c = await open('/', session());
    c.send({ type: 'run', message: 'count to 400', agent: 'react', id: 'busy' });
    await c.wait((f) => f.event?.type === 'message_chunk');
    c.send({ type: 'ping', id: 'mid' });
    await c.wait((f) => f.type === 'pong');
    const pongAt = c.frames.findIndex((f) => f.type === 'pong');
    const end = await c.wait((f) => f.type === 'run_end');
    assert.ok(pongAt < c.frames.indexOf(end), 'the pong came before the run ended');
    c.close();
  });
});

describe('provider faults', () => {
  for (const [fault, pattern] of [
    ['401', /401.*API key/i],
    ['429', /429.*retry/i],
    ['500', /500/],
    ['cut', /broke mid-stream|ended before|truncat/i],
    ['malformed', /malformed|not valid JSON|invalid/i],
    ['stall', /sent nothing for 2 s/],
    ['stream-error', /overloaded|error/i],
  ]) {
    test(`${fault}: a clear error, the history intact, and the next run works`, async () => {
      const sid = session();
      const c = await open('/', sid);
      c.send({ type: 'run', message: 'first message', agent: 'react', id: 'ok1' });
      await c.wait((f) => f.type === 'run_end' && f.id === 'ok1');
      c.send({ type: 'run', message: `tell me a story fault-${fault}`, agent: 'react', id: 'bad' });
      const err = await c.wait((f) => f.type === 'error' && f.id === 'bad', { timeout: 30_000 });
      assert.match(err.error, pattern);
      assert.equal(err.code, 'provider');
      c.send({ type: 'run', message: 'are you back?', agent: 'react', id: 'ok2' });
      assert.equal((await c.wait((f) => f.type === 'run_end' && f.id === 'ok2')).reply, 'You said: are you back?');
      c.send({ type: 'user_messages', id: 'h', thread_id: sid });
      const history = await c.wait((f) => f.type === 'user_messages');
      const users = history.messages.filter((m) => m.role === 'user').map((m) => m.content);
      assert.deepEqual(users, ['first message', `tell me a story fault-${fault}`, 'are you back?']);
      c.close();
    });
  }
});

describe('cueso pause_after and the iteration cap', () => {
  test('a PAUSE_AFTER tool pauses the loop: final.paused is true', async () => {
    const c = await open('/ws/chat', session());
    c.send({ message: 'calculate 2+3' });
    const fin = await c.wait((f) => f.type === 'final');
    assert.equal(fin.paused, true);
    assert.deepEqual(fin.tool_calls, ['calculator']);
    assert.equal(c.frames.find((f) => f.type === 'tool_result').result, '5');
    c.close();
  });

  test('a runaway tool loop ends with a final after 10 iterations, not an error', async () => {
    const c = await open('/ws/chat', session());
    c.send({ message: 'loop forever' });
    const fin = await c.wait((f) => f.type === 'final', { timeout: 30_000 });
    assert.equal(fin.iteration_count, 10);
    assert.equal(c.frames.filter((f) => f.type === 'message_complete').length, 10);
    assert.ok(!c.frames.some((f) => f.type === 'error'));
    c.close();
  });
});

describe('loom extras', () => {
  test('verbose snapshots after each node, and a checkpoint closes a run with a thread_id', async () => {
    const sid = session();
    const c = await open('/', sid);
    c.send({ type: 'run', message: 'hello', agent: 'react', id: 'v', verbose: true, thread_id: sid });
    await c.wait((f) => f.type === 'run_end');
    const kinds = loomRun(c.frames, 'v').map((f) => f.event?.type ?? f.type);
    const exit = kinds.indexOf('node_exit');
    assert.deepEqual(kinds.slice(exit, exit + 3), ['node_exit', 'values', 'updates']);
    assert.deepEqual(kinds.slice(-2), ['checkpoint', 'run_end']);
    const cp = c.frames.find((f) => f.event?.type === 'checkpoint').event;
    assert.equal(cp.thread_id, sid);
    assert.match(cp.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // A thread_id naming another session runs there, and its frames come back on this socket.
    const other = session();
    c.send({ type: 'run', message: 'hi', agent: 'react', id: 'elsewhere', thread_id: other });
    const end = await c.wait((f) => f.type === 'run_end' && f.id === 'elsewhere');
    assert.equal(end.reply, 'You said: hi');
    const moved = c.frames.find((f) => f.id === 'elsewhere' && f.event?.type === 'checkpoint').event;
    assert.equal(moved.thread_id, other);
    c.close();
  });

  test('working_folder scopes the tools, and its SOUL.md sets the persona', async () => {
    const c = await open('/', session());
    c.send({ type: 'run', message: 'write You are a pirate. to crew/SOUL.md', agent: 'react', id: 's1' });
    const ask = (await c.wait((f) => f.event?.type === 'tool_approval')).event;
    c.send({ type: 'approval_response', call_id: ask.call_id, review: 'yes' });
    await c.wait((f) => f.type === 'run_end' && f.id === 's1');
    c.send({ type: 'run', message: 'who are you', agent: 'react', id: 's2', working_folder: 'crew' });
    assert.equal((await c.wait((f) => f.type === 'run_end' && f.id === 's2')).reply, 'I am: You are a pirate.');
    c.send({ type: 'run', message: 'who are you', agent: 'react', id: 's3' });
    assert.doesNotMatch((await c.wait((f) => f.type === 'run_end' && f.id === 's3')).reply, /pirate/);
    c.send({ type: 'run', message: 'use ls', agent: 'react', id: 's4', working_folder: 'crew' });
    await c.wait((f) => f.type === 'run_end' && f.id === 's4');
    const ls = c.frames.find((f) => f.id === 's4' && f.event?.type === 'tool_end').event;
    assert.match(ls.result, /^SOUL\.md/m, JSON.stringify(c.frames.filter((f) => f.id === 's4').map((f) => f.event ?? f)));
    c.send({ type: 'run', message: 'hi', agent: 'react', working_folder: '../etc' });
    assert.match((await c.wait((f) => f.type === 'error' && f.code === 'invalid_request')).error, /working_folder/);
    c.close();
  });

  test('resume from several points gives the uninterrupted reply, each frame once', async (t) => {
    // Slower than the Worker's quiet gap, so each token is its own event and there are 60 to
    // kill at (a faster stream is published in batches: next test).
    server.pace(10);
    t.after(() => server.pace(null));
    for (const killAt of [2, 9, 60]) {
      const sid = session();
      const a = await open('/', sid);
      a.send({ type: 'run', message: 'count to 80', agent: 'react', id: `k${killAt}` });
      await a.wait((f) => (f.event?.event_id ?? 0) >= killAt);
      a.kill();
      const seen = loomRun(a.frames, `k${killAt}`);
      const last = seen[seen.length - 1].event?.event_id ?? seen[seen.length - 1].event_id;
      const b = await open('/', sid);
      b.send({ type: 'resume', run_id: `k${killAt}`, after_event_id: last });
      const end = await b.wait((f) => f.type === 'run_end');
      const all = [...seen, ...loomRun(b.frames, `k${killAt}`)];
      assertDense(all.map((f) => f.event?.event_id ?? f.event_id));
      const text = all.filter((f) => f.event?.type === 'message_chunk').map((f) => f.event.content).join('');
      assert.equal(text, end.reply);
      assert.equal(end.reply, Array.from({ length: 80 }, (_, i) => i + 1).join(' '));
      b.close();
    }
  });
  test('a fast stream goes out in batches: fewer events than tokens, the reply whole, the log the same', async (t) => {
    server.pace(0);
    t.after(() => server.pace(null));
    const sid = session();
    const a = await open('/', sid);
    a.send({ type: 'run', message: 'count to 400', agent: 'react', id: 'fast' });
    const end = await a.wait((f) => f.type === 'run_end');
    const live = loomRun(a.frames, 'fast');
    assertDense(live.map((f) => f.event?.event_id ?? f.event_id));
    const chunks = live.filter((f) => f.event?.type === 'message_chunk');
    assert.equal(chunks.map((f) => f.event.content).join(''), end.reply);
    assert.equal(end.reply, Array.from({ length: 400 }, (_, i) => i + 1).join(' '));
    assert.ok(chunks.length > 1, 'still streamed');
    assert.ok(chunks.length < 200, `400 tokens streamed without a pause came in ${chunks.length} events`);
    a.close();
    // What went out is what was logged: a resume from the start replays the same frames.
    const b = await open('/', sid);
    b.send({ type: 'resume', run_id: 'fast', after_event_id: 0 });
    await b.wait((f) => f.type === 'run_end');
    assert.deepEqual(loomRun(b.frames, 'fast'), live);
    b.close();
  });
});

describe('bad input, per dialect', () => {
  const deep = '['.repeat(5000) + ']'.repeat(5000);
  const common = [
    ['{not json', 'invalid_json'],
    ['[]', 'not_an_object'],
    ['"a string"', 'not_an_object'],
    ['42', 'not_an_object'],
    ['null', 'not_an_object'],
    [`{"type":"run","message":${deep}}`, 'invalid_json'],
    ['{"type":"resume","run_id":5}', 'invalid_field'],
    ['{"type":"resume","run_id":"r","after_event_id":"ten"}', 'invalid_field'],
    ['{"type":"cancel"}', 'invalid_field'],
    ['{"type":"ping"}', 'invalid_field'],
    ['{"type":"client_tools","tools":"all"}', 'invalid_field'],
    ['{"type":"tool_result","call_id":"x"}', 'invalid_field'],
    ['{"type":"approval_response","call_id":"x","review":"maybe"}', 'invalid_field'],
  ];
  const perDialect = {
    loom: ['/', [
      ['{"message":"no type"}', 'missing_type'],
      ['{"type":"dance"}', 'unknown_type'],
      ['{"type":"run","message":5,"agent":"react"}', 'invalid_field'],
      ['{"type":"run","message":"hi"}', 'invalid_field'],
      ['{"type":"tool_show","id":"1"}', 'invalid_field'],
      ['{"type":"tool_show","id":"1","name":"read","output":"xml"}', 'invalid_field'],
      ['{"type":"user_messages","id":"1","thread_id":""}', 'invalid_request'],
      ['{"type":"approval_response","call_id":"forged","review":"yes"}', 'no_pending_approval'],
    ]],
    agentloop: ['/agentloop', [
      ['{"id":"1","payload":{}}', 'missing_type'],
      ['{"id":"1","type":"dance"}', 'unknown_type'],
      ['{"type":"user_input","payload":{"input":[]}}', 'invalid_field'],
      ['{"id":"1","type":"user_input","payload":{"input":[]}}', 'invalid_request'],
      ['{"id":"1","type":"user_input","payload":{"input":"hi"}}', 'invalid_field'],
      ['{"id":"1","type":"user_input"}', 'invalid_field'],
      ['{"id":"1","type":"approval_response","payload":{"review":"perhaps"}}', 'invalid_field'],
      ['{"id":"1","type":"approval_response","payload":{"review":"yes","callId":"forged"}}', 'no_pending_approval'],
    ]],
    agentchat: ['/ws', [
      ['{"message":"no type"}', 'missing_type'],
      ['{"type":"dance"}', 'unknown_type'],
      ['{"type":"chat","message":""}', 'invalid_request'],
      ['{"type":"chat","message":"  \\n "}', 'invalid_request'],
      ['{"type":"chat","message":7}', 'invalid_field'],
      ['{"type":"chat"}', 'invalid_field'],
      ['{"type":"chat","message":"hi","session_id":3}', 'invalid_field'],
      ['{"type":"approval_response","call_id":"forged","review":"yes"}', 'no_pending_approval'],
    ]],
    cueso: ['/ws/chat', [
      ['{"session_id":"x"}', 'invalid_field'],
      ['{"message":""}', 'invalid_request'],
      ['{"message":7}', 'invalid_field'],
      ['{"message":"hi","session_id":7}', 'invalid_field'],
      ['{"type":"dance"}', 'unknown_type'],
      ['{"type":7}', 'invalid_field'],
      ['{"message":"hi","id":""}', 'invalid_request'],
      ['{"type":"approval_response","call_id":"forged","review":"yes"}', 'no_pending_approval'],
    ]],
  };
  for (const [dialect, [path, cases]] of Object.entries(perDialect)) {
    test(`${dialect}: ${cases.length + common.length + 1} malformed frames, each answered, then a valid run`, async () => {
      const sid = session();
      const c = await open(path, sid);
      const all = [...common, ...cases];
      for (const [frame] of all) c.send(frame);
      c.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
      await c.wait(() => c.frames.length >= all.length + 1, { timeout: 20_000 });
      const codes = c.frames.slice(0, all.length + 1).map((f) => {
        // Each dialect's own error shape (agentloop: payload.message; loom/agentchat: error; cueso: message).
        assert.equal(f.type, 'error', JSON.stringify(f));
        assert.ok(f.error ?? f.message ?? f.payload?.message, JSON.stringify(f));
        return f.code;
      });
      assert.deepEqual(codes, [...all.map(([, code]) => code), 'invalid_utf8'], JSON.stringify(c.frames.slice(0, all.length + 1)));
      const run = {
        loom: { type: 'run', message: 'still ok?', agent: 'react' },
        agentloop: { id: randomUUID(), type: 'user_input', payload: { input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'still ok?' }] }] } },
        agentchat: { type: 'chat', message: 'still ok?' },
        cueso: { message: 'still ok?' },
      }[dialect];
      c.send(run);
      await c.wait((f) => ['run_end', 'final', 'agent_message'].includes(f.type) || (f.type === 'loading_state' && f.payload.loading === false));
      c.close();
    });
  }
});

describe('the OpenAI-compatible proxy', () => {
  const post = (body, headers = {}) => fetch(`${server.http}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

  test('streams OpenAI chunks ending in [DONE], with usage when asked', async () => {
    const r = await post({ model: 'default', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hello proxy' }] });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type'), /text\/event-stream/);
    const text = await r.text();
    const datas = text.split('\n\n').filter(Boolean).map((b) => b.replace(/^data: /, ''));
    assert.equal(datas[datas.length - 1], '[DONE]');
    const chunks = datas.slice(0, -1).map((d) => JSON.parse(d));
    assert.equal(chunks[0].choices[0].delta.role, 'assistant');
    const content = chunks.flatMap((c) => c.choices).map((c) => c.delta.content ?? '').join('');
    assert.equal(content, 'You said: hello proxy');
    assert.ok(chunks.some((c) => c.choices[0]?.finish_reason === 'stop'));
    assert.ok(chunks[chunks.length - 1].usage.total_tokens > 0);
    assert.ok(!text.includes(KEY));
  });

  test('tool calls come back as OpenAI tool_calls; non-streamed too', async () => {
    const body = {
      messages: [{ role: 'user', content: 'What time is it?' }],
      tools: [{ type: 'function', function: { name: 'get_time', description: 'time', parameters: { type: 'object', properties: { timezone: { type: 'string' } } } } }],
    };
    const r = await post(body);
    assert.equal(r.status, 200);
    const json = await r.json();
    const call = json.choices[0].message.tool_calls[0];
    assert.equal(call.function.name, 'get_time');
    assert.deepEqual(JSON.parse(call.function.arguments), { timezone: 'UTC' });
    assert.equal(json.choices[0].finish_reason, 'tool_calls');
    // The follow-up with the tool result gets the answer.
    const follow = await post({
      ...body,
      messages: [...body.messages, json.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '10:00 UTC' }],
    });
    assert.equal((await follow.json()).choices[0].message.content, 'It is 10:00 UTC.');
  });

  test('auth, bad requests and provider errors answer like OpenAI', async () => {
    assert.equal((await post({ messages: [{ role: 'user', content: 'x' }] }, { authorization: '' })).status, 401);
    const bad = await post('{nope');
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error.message, /not valid JSON/);
    const empty = await post({ messages: [] });
    assert.equal(empty.status, 400);
    const limited = await post({ messages: [{ role: 'user', content: 'hi fault-429' }] });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '2');
    const e = await limited.json();
    assert.match(e.error.message, /429/);
    assert.ok(!JSON.stringify(e).includes(KEY));
    const evil = await post({ messages: [{ role: 'user', content: 'x' }] }, { origin: 'http://evil.example' });
    assert.equal(evil.status, 403);
  });
});

describe('keys', () => {
  test('the provider key appeared in no frame of this suite, nor in the server log', () => {
    assert.ok(everyFrame.length > 500, `only ${everyFrame.length} frames seen`);
    assert.ok(!JSON.stringify(everyFrame).includes(KEY));
    assert.ok(!server.log().includes(KEY));
  });
});

describe('agents', () => {
  /** Runs `message` with `agent` on a fresh loom socket; returns its events, run_end and frames. */
  async function agentRun(agent, message, { id = `${agent}-${randomUUID()}`, extra = {}, approve = false } = {}) {
    const c = await open('/', session());
    c.send({ type: 'run', message, agent, id, ...extra });
    if (approve) {
      const ask = (await c.wait((f) => f.id === id && f.event?.type === 'tool_approval', { timeout: 30_000 })).event;
      c.send({ type: 'approval_response', call_id: ask.call_id, review: 'yes' });
    }
    const end = await c.wait((f) => f.id === id && (f.type === 'run_end' || f.type === 'error'), { timeout: 60_000 });
    const frames = loomRun(c.frames, id);
    assertDense(frames.map((f) => f.event?.event_id ?? f.event_id));
    const events = frames.filter((f) => f.type === 'run_stream_event').map((f) => f.event);
    c.close();
    return { end, events, kinds: events.map((e) => e.type), spans: events.filter((e) => e.type === 'node_enter').map((e) => e.id) };
  }

  /** Each model response streams without another's events in between (chunks … llm_complete). */
  function assertContiguous(events) {
    let open = null;
    for (const e of events) {
      if (e.type === 'message_chunk') {
        if (open !== null) assert.equal(e.id, open, `responses interleave: ${events.map((x) => x.type).join(' ')}`);
        open = e.id;
      } else if (e.type === 'llm_complete') {
        open = null;
      } else if (!['tool_call_chunk', 'tool_call', 'usage', 'reasoning_chunk'].includes(e.type)) {
        assert.equal(open, null, `${e.type} inside a streaming response`);
      }
    }
  }

  test('dup: understand, then plan → act → observe → plan, streaming every model call', async () => {
    const { end, events, spans } = await agentRun('dup', 'What time is it?');
    assert.equal(end.type, 'run_end', JSON.stringify(end));
    assert.deepEqual(spans, ['understand', 'plan', 'act', 'observe', 'plan']);
    const understanding = events.filter((e) => e.type === 'message_chunk' && e.id === 'understand').map((e) => e.content).join('');
    assert.match(understanding, /^Core goal: What time is it\?\nKey constraints: .+\nRelevant context: nothing before this request\.$/);
    const plan = events.filter((e) => e.type === 'message_chunk' && e.id === 'plan').map((e) => e.content).join('');
    assert.match(plan, /^Plan: call get_time, then answer from the result\.It is \d{4}-/);
    assert.equal(events.filter((e) => e.type === 'usage').length, 3);
    assert.deepEqual(events.filter((e) => e.type === 'tool_end').map((e) => e.name), ['get_time']);
    assert.match(end.reply, /^It is \d{4}-\d\d-\d\dT/);
    assert.equal(events[0].agent, 'dup');
  });

  test('tot: expand → evaluate → act, a level deeper after the tool, then the answer', async () => {
    const { end, events, spans } = await agentRun('tot', 'What time is it?');
    assert.equal(end.type, 'run_end', JSON.stringify(end));
    assert.deepEqual(spans, ['think_expand', 'think_evaluate', 'act', 'think_expand', 'think_evaluate', 'act']);
    const expands = events.filter((e) => e.type === 'tot_expand').map((e) => e.candidates);
    assert.deepEqual(expands, [
      ['Use the tools to answer: What time is it?', 'Answer directly from what I already know', 'Ask the user to clarify the request'],
      ['Answer from the tool results', 'Check the results with another tool call'],
    ]);
    const evaluations = events.filter((e) => e.type === 'tot_evaluate').map(({ chosen, scores }) => ({ chosen, scores }));
    assert.deepEqual(evaluations, [{ chosen: 0, scores: [0.9, 0.6, 0.2] }, { chosen: 0, scores: [0.95, 0.3] }]);
    assert.ok(!events.some((e) => e.type === 'tot_backtrack'));
    assert.match(end.reply, /^It is \d{4}-/);
  });

  test('tot: a failed step backtracks to the best unexplored candidate', async () => {
    const { end, events, spans } = await agentRun('tot', 'use read with {"path":"nowhere/missing.txt"}');
    assert.equal(end.type, 'run_end', JSON.stringify(end));
    assert.deepEqual(spans, ['think_expand', 'think_evaluate', 'act', 'act']);
    const read = events.find((e) => e.type === 'tool_end');
    assert.equal(read.is_error, true);
    const backtrack = events.find((e) => e.type === 'tot_backtrack');
    assert.equal(backtrack.to_depth, 0);
    assert.match(backtrack.reason, /^the step failed: read failed: /);
    const exits = events.filter((e) => e.type === 'node_exit' && e.id === 'act').map((e) => e.result);
    assert.equal(typeof exits[0].Err, 'string');
    assert.equal(exits[1], 'Ok');
    assert.match(end.reply, /^Without tools I can't find out "use read with/);
  });

  test('got: a plan of three, two sub-tasks at once, the sink answers', async () => {
    // The Worker runs independent sub-tasks' model calls concurrently: the scripted model has
    // two responses open at once.
    let most = 0;
    const sampler = setInterval(() => { most = Math.max(most, server.llm.activeResponses); }, 1);
    const { end, events, kinds, spans } = await agentRun('got', 'What time is it in UTC; What time is it in Asia/Tokyo')
      .finally(() => clearInterval(sampler));
    assert.equal(end.type, 'run_end', JSON.stringify(end));
    assert.equal(most, 2, 'two model calls were streaming at the same time');
    // One span per model response: two steps for each city (call, answer), one to combine.
    assert.deepEqual(spans, ['plan_graph', ...Array(5).fill('execute_graph')]);
    const plan = events.find((e) => e.type === 'got_plan');
    assert.deepEqual([plan.node_count, plan.edge_count, plan.node_ids], [3, 2, ['s1', 's2', 'combine']]);
    // Both independent nodes start before either completes; combine starts after both.
    const at = (type, id) => events.findIndex((e) => e.type === type && e.id === id);
    const order = events.map((e, i) => `${i}:${e.type}:${e.id ?? ''}`).filter((x) => /got_|node_|run_/.test(x)).join(' ');
    assert.ok(at('got_node_start', 's2') < at('got_node_complete', 's1'), order);
    assert.ok(at('got_node_start', 'combine') > Math.max(at('got_node_complete', 's1'), at('got_node_complete', 's2')), order);
    assert.deepEqual(kinds.filter((k) => k === 'got_node_complete').length, 3);
    assertContiguous(events);
    const zones = events.filter((e) => e.type === 'tool_call').map((e) => e.arguments.timezone).sort();
    assert.deepEqual(zones, ['Asia/Tokyo', 'UTC']);
    assert.match(end.reply, /^Combined: It is \d{4}-.+ It is \d{4}-/);
    const summary = events.find((e) => e.type === 'got_node_complete' && e.id === 'combine').result_summary;
    assert.equal(summary, end.reply.slice(0, 200));
  });

  test('got: an approval inside a node, and a failed node the others go on without', async () => {
    const { end, events } = await agentRun('got', 'write hello to notes.txt; check the outage', { approve: true });
    assert.equal(end.type, 'run_end', JSON.stringify(end));
    const approval = events.find((e) => e.type === 'tool_approval');
    assert.equal(approval.name, 'apply_patch');
    assert.equal(events.find((e) => e.type === 'approval_resolved').review, 'yes');
    const failed = events.filter((e) => e.type === 'got_node_failed');
    assert.deepEqual(failed.map((e) => e.id), ['s2']);
    assert.match(failed[0].error, /500/);
    assert.deepEqual(events.filter((e) => e.type === 'got_node_complete').map((e) => e.id).sort(), ['combine', 's1']);
    assertContiguous(events);
    assert.match(end.reply, /^Combined: Done: I wrote notes\.txt\. s2 failed \(.*500.*\)\.$/);
  });

  test('got_adaptive: a complex node is expanded into a sub-graph', async () => {
    const { end, events } = await agentRun('got', 'What time is it in UTC and what time is it in Asia/Tokyo', { extra: { got_adaptive: true } });
    assert.equal(end.type, 'run_end', JSON.stringify(end));
    const expand = events.find((e) => e.type === 'got_expand');
    assert.deepEqual(expand, { ...expand, node_id: 'task', nodes_added: 2, edges_added: 0 });
    assert.deepEqual(events.filter((e) => e.type === 'got_node_start').map((e) => e.id), ['task', 'task.p1', 'task.p2']);
    // The judgement streamed as the node's own text.
    const judged = events.filter((e) => e.type === 'message_chunk' && e.id === 'task').map((e) => e.content).join('');
    assert.equal(JSON.parse(judged).complex, true);
    assert.match(end.reply, /^What time is it in UTC\nIt is \d{4}-.+\n\nwhat time is it in Asia\/Tokyo\nIt is \d{4}-/);
  });

  test('got: a plan that is not a DAG is asked for again once', async () => {
    const { end, events, spans } = await agentRun('got', 'make a bad plan first');
    assert.equal(end.type, 'run_end', JSON.stringify(end));
    assert.deepEqual(spans, ['plan_graph', 'plan_graph', 'execute_graph']);
    const exits = events.filter((e) => e.type === 'node_exit' && e.id === 'plan_graph').map((e) => e.result);
    assert.match(exits[0].Err, /^invalid plan: the graph has a cycle through `a`, `b`$/);
    assert.equal(exits[1], 'Ok');
  });

  test('other dialects see the agents through the translation: agentloop messages stay whole, cueso gets the reply', async () => {
    const sid = session();
    const loom = await open('/', sid);
    const agentloop = await open('/agentloop', sid);
    const cueso = await open('/ws/chat', sid);
    loom.send({ type: 'run', message: 'What time is it in UTC; What time is it in Asia/Tokyo', agent: 'got', id: 'fan-got' });
    const end = await loom.wait((f) => f.type === 'run_end' && f.id === 'fan-got', { timeout: 60_000 });
    const fin = await cueso.wait((f) => f.type === 'final');
    assert.equal(fin.content, end.reply);
    const done = await agentloop.wait((f) => f.type === 'loading_state' && f.payload.loading === false);
    assert.equal(done.reply, end.reply);
    // Every assistant message is one run of frames with one payload id, never interleaved.
    const items = agentloop.frames.filter((f) => f.type === 'response_item' && f.payload.role === 'assistant');
    const order = items.map((f) => f.payload.id).filter((id, i, all) => i === 0 || all[i - 1] !== id);
    assert.equal(new Set(order).size, order.length, 'a message id came back after another message');
    const completes = loom.frames.filter((f) => f.event?.type === 'llm_complete').map((f) => f.event.content).filter(Boolean);
    const texts = order.map((id) => items.filter((f) => f.payload.id === id).map((f) => f.payload.content[0].text).join(''));
    assert.deepEqual(texts, completes);
    for (const c of [loom, agentloop, cueso]) c.close();
  });
});
