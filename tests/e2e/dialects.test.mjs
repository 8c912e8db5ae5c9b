// End to end, each dialect: the real Worker under `wrangler dev`, the scripted LLM, real
// WebSocket clients; resuming, and what survives a restart. Each test uses its own session.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { assertDense, keyNeverLeaked, loomRun, open, server, session, useServer } from './suite.mjs';

useServer();

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
    const toolEnd = c.frames.find((f) => f.event?.type === 'tool_end')?.event;
    assert.equal(toolEnd.is_error, false);
    assert.match(toolEnd.result, /notes\.txt/);
    assert.match(end.reply, /notes\.txt/);
    const resolved = c.frames.find((f) => f.event?.type === 'approval_resolved')?.event;
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
    const denied = c.frames.find((f) => f.id === 'r1' && f.event?.type === 'tool_end')?.event;
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
    const tokyo = c.frames.find((f) => f.id === 'tokyo' && f.event?.type === 'tool_end')?.event;
    assert.equal(tokyo.is_error, false);
    assert.match(tokyo.result, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+09:00/);
    c.send({ type: 'run', message: 'What time is it in Mars/Olympus_Mons?', agent: 'react', id: 'mars' });
    await c.wait((f) => f.type === 'run_end' && f.id === 'mars');
    const mars = c.frames.find((f) => f.id === 'mars' && f.event?.type === 'tool_end')?.event;
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
    assert.deepEqual(
      history.messages.map((m) => [m.role, m.content]),
      [
        ['user', 'hello there'],
        ['assistant', 'You said: hello there'],
      ],
    );
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
    assert.equal(unavailable.error, 'unknown agent: mcts (use one of react, dup, tot, got)');
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
      .filter((f) => f.event?.type === 'message_chunk')
      .map((f) => f.event.content)
      .join('');
    const end = b.frames.find((f) => f.type === 'run_end');
    assert.equal(text, end?.reply);
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
  const input = (/** @type {string} */ text, /** @type {string} */ id = randomUUID()) => ({
    id,
    type: 'user_input',
    payload: { input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }] },
  });

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
    const explanation = c.frames
      .slice(from, c.frames.indexOf(again))
      .filter((f) => f.type === 'response_item')
      .map((f) => f.payload.content?.[0]?.text ?? '')
      .join('');
    assert.ok(explanation.length > 0, 'the explanation comes before the request is asked again');
    c.send({ id: randomUUID(), type: 'approval_response', payload: { review: 'yes' } });
    await c.wait((f) => f.type === 'loading_state' && f.payload.loading === false);
    const out = c.frames.find((f) => f.type === 'response_item' && f.payload.type === 'function_call_output');
    assert.match(out?.payload.output, /hi\.txt/);
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
    assert.deepEqual(
      listed.map((m) => m.role),
      ['user', 'assistant', 'user', 'assistant', 'user', 'assistant'],
    );
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
    assert.deepEqual(
      types.filter((t) => ['user_message', 'tool_call', 'tool_result', 'agent_message'].includes(t)),
      ['user_message', 'tool_call', 'tool_result', 'agent_message'],
    );
    const call = c.frames.find((f) => f.type === 'tool_call');
    assert.deepEqual([call?.tool_name, JSON.parse(call?.tool_args)], ['get_time', { timezone: 'UTC' }]);
    assert.equal(c.frames.find((f) => f.type === 'tool_result')?.success, true);
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
    assert.equal(result?.success, false);
    assert.equal(result?.result, 'no connected client can approve apply_patch');
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
    assert.equal(
      JSON.parse(
        deltas
          .slice(1)
          .map((d) => d.tool_call.input_json)
          .join(''),
      ).timezone,
      'UTC',
    );
    const completes = c.frames.filter((f) => f.type === 'message_complete');
    assert.deepEqual(
      completes.map((m) => m.finish_reason),
      ['tool_use', 'end_turn'],
    );
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
    assert.equal(result?.error, undefined);
    assert.match(result?.result, /y\.txt/);
    c.close();
  });

  test('a client-side tool is called on the socket that declared it, and its result goes to the model', async () => {
    const c = await open('/ws/chat', session());
    c.send({ type: 'client_tools', tools: [{ name: 'local_notes', description: 'notes on this device', input_schema: { type: 'object' }, read_only: true }] });
    c.send({ message: 'use local_notes with {"topic":"groceries"}' });
    const announce = await c.wait((f) => f.type === 'tool_call_delta' && f.tool_call.name === 'local_notes');
    assert.equal(announce.tool_call.input, null);
    await c.wait((f) => f.type === 'message_complete');
    const args = c.frames
      .filter((f) => f.type === 'tool_call_delta')
      .map((f) => f.tool_call.input_json ?? '')
      .join('');
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
      if (hasRuns) damaged += Number(db.prepare('UPDATE runs SET checkpoint = \'{"not": "a run"\' WHERE run_id = ?').run(runId).changes);
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
      for (const { name: table } of db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'")
        .all()) {
        for (const { name: column } of db.prepare(`PRAGMA table_info("${table}")`).all()) {
          const { n } = /** @type {{ n: number | null }} */ (db.prepare(`SELECT max(length(CAST("${column}" AS BLOB))) AS n FROM "${table}"`).get());
          if (n !== null && n > largest) [largest, where] = [n, `${table}.${column}`];
        }
      }
    } finally {
      db.close();
    }
  }
  return { largest, where };
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
    // p1's log is read back after the restart: a resume replays all of it. (Logs of earlier
    // builds' layouts: storage.test.mjs, a session stored before event_batches.)
    a2.send({ type: 'resume', run_id: 'p1', after_event_id: 0 });
    await a2.wait((f) => f.type === 'run_end' && f.id === 'p1');
    assert.equal(loomRun(a2.frames, 'p1').length, p1Frames);
    a2.send({ type: 'user_messages', id: 'h', thread_id: remembered });
    const history = await a2.wait((f) => f.type === 'user_messages');
    assert.deepEqual(
      history.messages.map((m) => m.role),
      ['user', 'assistant'],
    );
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
    // The answer reached the restored run: the tool ran (a refusal's reply names the file too).
    const wrote = loomRun(b2.frames, 'p2').find((f) => f.event?.type === 'tool_end')?.event;
    assert.ok(wrote, 'the approved call ended');
    assert.equal(wrote.is_error, false, `the approved call ran: ${wrote.result}`);
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
    const refused = c.frames.find((f) => f.event?.type === 'tool_end' && f.id === 'big')?.event;
    assert.equal(refused.is_error, true);
    assert.match(refused.result, /the limit per file is 1048576 bytes/);
    // The run's log holds the 5 MB call: a resume from the start gets it back, byte for byte.
    const from = c.frames.length;
    c.send({ type: 'resume', run_id: 'big', after_event_id: 0 });
    await c.wait((f) => f.type === 'run_end' && f.id === 'big', { from, timeout: 60_000 });
    const replayed = c.frames.slice(from).find((f) => f.event?.type === 'tool_approval');
    assert.deepEqual(replayed?.event, ask);
    c.send({ type: 'user_messages', id: 'h', thread_id: sid });
    const history = await c.wait((f) => f.type === 'user_messages');
    assert.deepEqual(
      history.messages.map((m) => m.role),
      ['user', 'assistant'],
    );
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

keyNeverLeaked(100);
