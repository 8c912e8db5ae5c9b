// End to end, the rest of the server: sessions named in messages, security and limits, provider
// faults, loom extras, bad input, the OpenAI-compatible proxy, the agents. Each test uses its own
// session.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';

import { Conn } from './client.mjs';
import { ALLOWED, KEY, TOKEN, assertDense, keyNeverLeaked, loomRun, open, server, session, useServer } from './suite.mjs';

useServer();

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
    assert.deepEqual(
      page.messages.filter((m) => m.role === 'user').map((m) => m.content),
      ['write hi to relayed.txt', 'long reply 300'],
    );
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
    assert.deepEqual(
      known.messages.map((m) => m.content),
      ['a secret plan', 'You said: a secret plan'],
    );
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
  for (const [fault, pattern] of /** @type {[string, RegExp][]} */ ([
    ['401', /401.*API key/i],
    ['429', /429.*retry/i],
    ['500', /500/],
    ['cut', /broke mid-stream|ended before|truncat/i],
    ['malformed', /malformed|not valid JSON|invalid/i],
    ['stall', /sent nothing for 2 s/],
    ['stream-error', /overloaded|error/i],
  ])) {
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
    assert.equal(c.frames.find((f) => f.type === 'tool_result')?.result, '5');
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
    const cp = c.frames.find((f) => f.event?.type === 'checkpoint')?.event;
    assert.equal(cp.thread_id, sid);
    assert.match(cp.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // A thread_id naming another session runs there, and its frames come back on this socket.
    const other = session();
    c.send({ type: 'run', message: 'hi', agent: 'react', id: 'elsewhere', thread_id: other });
    const end = await c.wait((f) => f.type === 'run_end' && f.id === 'elsewhere');
    assert.equal(end.reply, 'You said: hi');
    const moved = c.frames.find((f) => f.id === 'elsewhere' && f.event?.type === 'checkpoint')?.event;
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
    const ls = c.frames.find((f) => f.id === 's4' && f.event?.type === 'tool_end')?.event;
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
      const text = all
        .filter((f) => f.event?.type === 'message_chunk')
        .map((f) => f.event.content)
        .join('');
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
    loom: [
      '/',
      [
        ['{"message":"no type"}', 'missing_type'],
        ['{"type":"dance"}', 'unknown_type'],
        ['{"type":"run","message":5,"agent":"react"}', 'invalid_field'],
        ['{"type":"run","message":"hi"}', 'invalid_field'],
        ['{"type":"tool_show","id":"1"}', 'invalid_field'],
        ['{"type":"tool_show","id":"1","name":"read","output":"xml"}', 'invalid_field'],
        ['{"type":"user_messages","id":"1","thread_id":""}', 'invalid_request'],
        ['{"type":"approval_response","call_id":"forged","review":"yes"}', 'no_pending_approval'],
      ],
    ],
    agentloop: [
      '/agentloop',
      [
        ['{"id":"1","payload":{}}', 'missing_type'],
        ['{"id":"1","type":"dance"}', 'unknown_type'],
        ['{"type":"user_input","payload":{"input":[]}}', 'invalid_field'],
        ['{"id":"1","type":"user_input","payload":{"input":[]}}', 'invalid_request'],
        ['{"id":"1","type":"user_input","payload":{"input":"hi"}}', 'invalid_field'],
        ['{"id":"1","type":"user_input"}', 'invalid_field'],
        ['{"id":"1","type":"approval_response","payload":{"review":"perhaps"}}', 'invalid_field'],
        ['{"id":"1","type":"approval_response","payload":{"review":"yes","callId":"forged"}}', 'no_pending_approval'],
      ],
    ],
    agentchat: [
      '/ws',
      [
        ['{"message":"no type"}', 'missing_type'],
        ['{"type":"dance"}', 'unknown_type'],
        ['{"type":"chat","message":""}', 'invalid_request'],
        ['{"type":"chat","message":"  \\n "}', 'invalid_request'],
        ['{"type":"chat","message":7}', 'invalid_field'],
        ['{"type":"chat"}', 'invalid_field'],
        ['{"type":"chat","message":"hi","session_id":3}', 'invalid_field'],
        ['{"type":"approval_response","call_id":"forged","review":"yes"}', 'no_pending_approval'],
      ],
    ],
    cueso: [
      '/ws/chat',
      [
        ['{"session_id":"x"}', 'invalid_field'],
        ['{"message":""}', 'invalid_request'],
        ['{"message":7}', 'invalid_field'],
        ['{"message":"hi","session_id":7}', 'invalid_field'],
        ['{"type":"dance"}', 'unknown_type'],
        ['{"type":7}', 'invalid_field'],
        ['{"message":"hi","id":""}', 'invalid_request'],
        ['{"type":"approval_response","call_id":"forged","review":"yes"}', 'no_pending_approval'],
      ],
    ],
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
        agentloop: {
          id: randomUUID(),
          type: 'user_input',
          payload: { input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'still ok?' }] }] },
        },
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
  const post = (body, headers = {}) =>
    fetch(`${server.http}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  test('streams OpenAI chunks ending in [DONE], with usage when asked', async () => {
    const r = await post({ model: 'default', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hello proxy' }] });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /text\/event-stream/);
    const text = await r.text();
    const datas = text
      .split('\n\n')
      .filter(Boolean)
      .map((b) => b.replace(/^data: /, ''));
    assert.equal(datas[datas.length - 1], '[DONE]');
    const chunks = datas.slice(0, -1).map((d) => JSON.parse(d));
    assert.equal(chunks[0].choices[0].delta.role, 'assistant');
    const content = chunks
      .flatMap((c) => c.choices)
      .map((c) => c.delta.content ?? '')
      .join('');
    assert.equal(content, 'You said: hello proxy');
    assert.ok(chunks.some((c) => c.choices[0]?.finish_reason === 'stop'));
    assert.ok(chunks[chunks.length - 1].usage.total_tokens > 0);
    assert.ok(!text.includes(KEY));
  });

  test('tool calls come back as OpenAI tool_calls; non-streamed too', async () => {
    const body = {
      messages: [{ role: 'user', content: 'What time is it?' }],
      tools: [
        { type: 'function', function: { name: 'get_time', description: 'time', parameters: { type: 'object', properties: { timezone: { type: 'string' } } } } },
      ],
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
    const understanding = events
      .filter((e) => e.type === 'message_chunk' && e.id === 'understand')
      .map((e) => e.content)
      .join('');
    assert.match(understanding, /^Core goal: What time is it\?\nKey constraints: .+\nRelevant context: nothing before this request\.$/);
    const plan = events
      .filter((e) => e.type === 'message_chunk' && e.id === 'plan')
      .map((e) => e.content)
      .join('');
    assert.match(plan, /^Plan: call get_time, then answer from the result\.It is \d{4}-/);
    assert.equal(events.filter((e) => e.type === 'usage').length, 3);
    assert.deepEqual(
      events.filter((e) => e.type === 'tool_end').map((e) => e.name),
      ['get_time'],
    );
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
    assert.deepEqual(evaluations, [
      { chosen: 0, scores: [0.9, 0.6, 0.2] },
      { chosen: 0, scores: [0.95, 0.3] },
    ]);
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
    const sampler = setInterval(() => {
      most = Math.max(most, server.llm.activeResponses);
    }, 1);
    const { end, events, kinds, spans } = await agentRun('got', 'What time is it in UTC; What time is it in Asia/Tokyo').finally(() => clearInterval(sampler));
    assert.equal(end.type, 'run_end', JSON.stringify(end));
    assert.equal(most, 2, 'two model calls were streaming at the same time');
    // One span per model response: two steps for each city (call, answer), one to combine.
    assert.deepEqual(spans, ['plan_graph', ...Array(5).fill('execute_graph')]);
    const plan = events.find((e) => e.type === 'got_plan');
    assert.deepEqual([plan.node_count, plan.edge_count, plan.node_ids], [3, 2, ['s1', 's2', 'combine']]);
    // Both independent nodes start before either completes; combine starts after both.
    const at = (type, id) => events.findIndex((e) => e.type === type && e.id === id);
    const order = events
      .map((e, i) => `${i}:${e.type}:${e.id ?? ''}`)
      .filter((x) => /got_|node_|run_/.test(x))
      .join(' ');
    assert.ok(at('got_node_start', 's2') < at('got_node_complete', 's1'), order);
    assert.ok(at('got_node_start', 'combine') > Math.max(at('got_node_complete', 's1'), at('got_node_complete', 's2')), order);
    assert.deepEqual(kinds.filter((k) => k === 'got_node_complete').length, 3);
    assertContiguous(events);
    const zones = events
      .filter((e) => e.type === 'tool_call')
      .map((e) => e.arguments.timezone)
      .sort();
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
    assert.deepEqual(
      failed.map((e) => e.id),
      ['s2'],
    );
    assert.match(failed[0].error, /500/);
    assert.deepEqual(
      events
        .filter((e) => e.type === 'got_node_complete')
        .map((e) => e.id)
        .sort(),
      ['combine', 's1'],
    );
    assertContiguous(events);
    assert.match(end.reply, /^Combined: Done: I wrote notes\.txt\. s2 failed \(.*500.*\)\.$/);
  });

  test('got_adaptive: a complex node is expanded into a sub-graph', async () => {
    const { end, events } = await agentRun('got', 'What time is it in UTC and what time is it in Asia/Tokyo', { extra: { got_adaptive: true } });
    assert.equal(end.type, 'run_end', JSON.stringify(end));
    const expand = events.find((e) => e.type === 'got_expand');
    assert.deepEqual(expand, { ...expand, node_id: 'task', nodes_added: 2, edges_added: 0 });
    assert.deepEqual(
      events.filter((e) => e.type === 'got_node_start').map((e) => e.id),
      ['task', 'task.p1', 'task.p2'],
    );
    // The judgement streamed as the node's own text.
    const judged = events
      .filter((e) => e.type === 'message_chunk' && e.id === 'task')
      .map((e) => e.content)
      .join('');
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
    const completes = loom.frames
      .filter((f) => f.event?.type === 'llm_complete')
      .map((f) => f.event.content)
      .filter(Boolean);
    const texts = order.map((id) =>
      items
        .filter((f) => f.payload.id === id)
        .map((f) => f.payload.content[0].text)
        .join(''),
    );
    assert.deepEqual(texts, completes);
    for (const c of [loom, agentloop, cueso]) c.close();
  });
});

keyNeverLeaked(100);
