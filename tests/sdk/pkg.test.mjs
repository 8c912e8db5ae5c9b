// Smoke test of the built npm package (scripts/build-sdk first): import weft-sdk through its
// package exports in Node ≥ 22, reassemble every golden transcript of the protocol crate, and
// drive a Client against a scripted stand-in server (the `ws` package) that replays the golden
// frames of each dialect: streamed text, async iteration, a drop mid-run resumed without loss
// or duplicates, an approval answered through the callback, a client-side tool, heartbeats,
// and request correlation. The same against the real server, in headless Chromium:
// browser.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { WebSocketServer } from 'ws';
import init, { Client, Reassembler, dialectInfo } from 'weft-sdk';

const fixtures = new URL('../../crates/protocol/tests/fixtures/', import.meta.url);
/** @type {import('weft-sdk').Dialect[]} */
const DIALECTS = ['loom', 'agentloop', 'agentchat', 'cueso'];

await init();

function golden(dialect, name) {
  const frames = readFileSync(new URL(`${dialect}/${name}.jsonl`, fixtures), 'utf8')
    .split('\n')
    .filter(Boolean);
  const transcript = JSON.parse(readFileSync(new URL(`${dialect}/${name}.transcript.json`, fixtures), 'utf8'));
  return { frames, transcript };
}

test('the package reassembles every golden transcript', () => {
  let checked = 0;
  for (const dialect of DIALECTS) {
    for (const file of readdirSync(new URL(`${dialect}/`, fixtures))) {
      if (!file.endsWith('.jsonl')) continue;
      const { frames, transcript } = golden(dialect, file.slice(0, -'.jsonl'.length));
      const one = new Reassembler(dialect);
      for (const f of frames) one.push(f);
      assert.deepEqual(one.transcript(), transcript, `${dialect}/${file}`);
      const many = new Reassembler(dialect);
      many.pushMany(frames);
      assert.deepEqual(many.transcript(), transcript, `${dialect}/${file} (pushMany)`);
      checked++;
    }
  }
  assert.equal(checked, 24);
});

test('dialectInfo says what each dialect carries', () => {
  const info = Object.fromEntries(DIALECTS.map((d) => [d, dialectInfo(d)]));
  assert.deepEqual(
    DIALECTS.map((d) => info[d].endpoint),
    ['/', '/agentloop', '/ws', '/ws/chat'],
  );
  assert.deepEqual(info.loom.requests, ['ping', 'toolsList', 'toolShow', 'userMessages', 'addMcpServer']);
  assert.deepEqual(info.agentloop.requests, ['ping', 'contextInfo', 'compact', 'addMcpServer']);
  // The plans (node spans, ToT, GoT) and the run options travel on loom alone.
  assert.deepEqual(
    DIALECTS.filter((d) => info[d].plans),
    ['loom'],
  );
  assert.deepEqual(
    DIALECTS.filter((d) => info[d].runOptions),
    ['loom'],
  );
  assert.deepEqual(
    DIALECTS.filter((d) => info[d].reportsContext),
    ['loom', 'agentloop'],
  );
  // @ts-expect-error: not a dialect, on purpose
  assert.throws(() => dialectInfo('nope'), { code: 'invalid_argument' });
});

test('errors are WeftErrors with a code', () => {
  const r = new Reassembler('loom');
  assert.throws(
    () => r.push('{'),
    (/** @type {any} */ e) => e instanceof Error && e.name === 'WeftError' && 'code' in e && e.code === 'invalid_json',
  );
  // @ts-expect-error: a dialect there is not, on purpose
  assert.throws(() => new Reassembler('nope'), { code: 'invalid_argument' });
  assert.throws(() => new Client({ url: 'ws://h', dialect: 'loom', token: 'a b' }), { code: 'invalid_argument' });
});

test('AG-UI is in weft-sdk/with-agui: weft-sdk refuses the dialect, the AG-UI build takes it', async () => {
  for (const url of ['http://127.0.0.1:9/agui', 'ws://127.0.0.1:9/agui']) {
    assert.throws(() => new Client({ url, dialect: 'agui' }), { code: 'unsupported', message: /weft-sdk\/agui-client\b.*weft-sdk\/with-agui/ });
  }
  const withAgui = await import('weft-sdk/with-agui');
  await withAgui.default();
  const client = new withAgui.Client({ url: 'http://127.0.0.1:9/agui', dialect: 'agui', sessionId: 't' });
  await client.connect(); // over HTTP: opens nothing
  client.close();
  // The two builds read the chat dialects alike.
  const frame = '{"type":"run_end","reply":"hi","id":"r"}';
  assert.deepEqual(new withAgui.Reassembler('loom').push(frame), new Reassembler('loom').push(frame));
  // AG-UI's own package: that dialect alone, unasked.
  const agui = await import('weft-sdk/agui-client');
  await agui.default();
  const only = new agui.Client({ url: 'http://127.0.0.1:9/agui', sessionId: 't' });
  await only.connect();
  only.close();
  assert.throws(() => new agui.Client({ url: 'ws://127.0.0.1:9', dialect: 'loom' }), {
    code: 'unsupported',
    message: /"loom" is not in this build, which speaks agui: import weft-sdk\/loom\b/,
  });
  assert.throws(() => new agui.Reassembler('loom'), { code: 'unsupported' });
});

test('weft-sdk speaks several dialects: a Client or Reassembler must name one', () => {
  assert.throws(() => new Client({ url: 'ws://127.0.0.1:9' }), { code: 'invalid_argument', message: /dialect is required/ });
  assert.throws(() => new Reassembler(), { code: 'invalid_argument', message: /dialect is required/ });
});

// The one-dialect packages (`weft-sdk/<dialect>`): the same API on a wasm of one dialect, which
// it speaks without being told and alone. (Against the real Worker, and installed from the packed
// tarball into Vite and webpack apps: entries.test.mjs.)
const ENTRIES = /** @type {const} */ (['loom', 'agentloop', 'agentchat', 'cueso']);
for (const dialect of ENTRIES) {
  test(`weft-sdk/${dialect} speaks ${dialect} alone, unasked`, async (t) => {
    const sdk = await import(`weft-sdk/${dialect}`);
    await sdk.default();
    for (const file of readdirSync(new URL(`${dialect}/`, fixtures)).filter((f) => f.endsWith('.jsonl'))) {
      const { frames, transcript } = golden(dialect, file.slice(0, -'.jsonl'.length));
      const r = new sdk.Reassembler(dialect);
      r.pushMany(frames);
      assert.deepEqual(r.transcript(), transcript, `${dialect}/${file}`);
      // Unasked, it reads its own.
      const unasked = new sdk.Reassembler();
      assert.equal(unasked.dialect, dialect);
      unasked.pushMany(frames);
      assert.deepEqual(unasked.transcript(), transcript, `${dialect}/${file}`);
    }
    for (const other of [...DIALECTS, 'agui'].filter((d) => d !== dialect)) {
      const refused = {
        code: 'unsupported',
        message: new RegExp(`"${other}" is not in this build, which speaks ${dialect}: import weft-sdk/${other === 'agui' ? 'agui-client' : other}`),
      };
      assert.throws(() => new sdk.Client({ url: 'ws://127.0.0.1:9', dialect: other }), refused);
      assert.throws(() => new sdk.Reassembler(other), refused);
    }
    // What it knows of the others is their description, which costs next to nothing.
    assert.deepEqual(sdk.dialectInfo('cueso'), dialectInfo('cueso'));
    const server = await serve(dialect, 'plain-reply');
    const c = new sdk.Client({ url: server.url, sessionId: 's', reconnect: false });
    t.after(async () => {
      c.close();
      await server.close();
    });
    await c.connect();
    assert.equal(server.protocols[0], `weft.${dialect}`);
    const result = await c.run({ message: 'Hello' }).result;
    assert.equal(result.reply, 'Hi there! How can I help?');
  });
}

test('pushMany names the frame it stops at, and keeps the ones before it', () => {
  const { frames, transcript } = golden('loom', 'tool-call');
  const prefix = (n) => {
    const r = new Reassembler('loom');
    if (n > 0) r.pushMany(frames.slice(0, n));
    return r.transcript();
  };
  // A frame that does not decode, one holding the batch separator U+001E (not valid JSON
  // either: JSON strings hold control characters only escaped), one that is not a string.
  /** @type {[unknown, string][]} a bad frame (42: not even a string), and the code it gets */
  const bad = [
    ['{', 'invalid_json'],
    [frames[3].replace('run-tool', 'run\u001e-tool'), 'invalid_json'],
    [42, 'invalid_argument'],
  ];
  for (const [frame, code] of bad) {
    const r = new Reassembler('loom');
    const batch = /** @type {string[]} one of them is not, on purpose */ ([...frames.slice(0, 3), frame, ...frames.slice(3)]);
    assert.throws(
      () => r.pushMany(batch),
      (/** @type {any} */ e) => e.name === 'WeftError' && e.code === code && /frame 3\b/.test(e.message),
      JSON.stringify(frame),
    );
    // A type error is found before anything is applied; a decoding error after the frames
    // before it were.
    assert.deepEqual(r.transcript(), prefix(code === 'invalid_argument' ? 0 : 3), JSON.stringify(frame));
  }
  // @ts-expect-error: not an array, on purpose
  assert.throws(() => new Reassembler('loom').pushMany('not an array'), { code: 'invalid_argument' });
  assert.deepEqual(new Reassembler('loom').pushMany([]), { applied: 0, duplicate: false });
  const one = new Reassembler('loom');
  const applied = frames.reduce((n, f) => n + one.push(f).applied, 0);
  const all = new Reassembler('loom');
  assert.deepEqual(all.pushMany(frames), { applied, duplicate: false });
  assert.deepEqual(all.transcript(), transcript);
});

test('text of every width arrives whole, as a string, a Uint8Array or an ArrayBuffer', () => {
  // Strings cross into wasm through TextEncoder.encodeInto into a buffer the reassembler keeps:
  // a short frame after a long one, multi-byte characters and a lone surrogate (which becomes
  // U+FFFD, as any string passed into wasm) must come out exactly.
  const pieces = ['a', 'é', '€', '😀', '\ud800', 'x'.repeat(5000), 'ok'];
  const want = 'a' + 'é' + '€' + '😀' + '\ufffd' + 'x'.repeat(5000) + 'ok';
  // Written by hand, not by JSON.stringify, which would escape the lone surrogate.
  const frames = (runId) =>
    pieces.map(
      (content, i) =>
        `{"type":"run_stream_event","id":"${runId}","event":{"type":"message_chunk",` + `"content":"${content}","id":"think","event_id":${i + 1}}}`,
    );
  const text = (r) =>
    r
      .transcript()
      .messages.map((m) => m.text)
      .join('');
  const enc = new TextEncoder();
  const strings = new Reassembler('loom');
  const bytes = new Reassembler('loom');
  const buffers = new Reassembler('loom');
  for (const f of frames('run-a')) {
    strings.push(f);
    bytes.push(enc.encode(f));
    buffers.push(enc.encode(f).buffer);
  }
  const many = new Reassembler('loom');
  assert.equal(many.pushMany(frames('run-a')).applied, pieces.length);
  for (const r of [strings, bytes, buffers, many]) assert.equal(text(r), want);
});

test('a string frame after the wasm memory grew arrives whole', () => {
  // A string is written through a view of the wasm memory kept across calls; growing the
  // memory detaches it. Here the memory grows under frames that do not pass through that view
  // (bytes: 32 MB of text the transcript keeps), and the next string frame must still be
  // written where it is read, not into the old, detached view.
  const frame = (content, id) =>
    `{"type":"run_stream_event","id":"run-g","event":{"type":"message_chunk",` + `"content":"${content}","id":"think","event_id":${id}}}`;
  const r = new Reassembler('loom');
  r.push(frame('first ', 1));
  const piece = 'y'.repeat(1 << 19);
  const enc = new TextEncoder();
  for (let i = 0; i < 64; i++) r.push(enc.encode(frame(piece, i + 2)));
  r.push(frame('last', 66));
  const text = r
    .transcript()
    .messages.map((m) => m.text)
    .join('');
  assert.equal(text.length, 6 + 64 * piece.length + 4);
  assert.ok(text.startsWith('first y') && text.endsWith('ylast'), text.slice(-12));
  r.free();
});

// ----- a scripted server -----

/** The client frame that starts a run, in each dialect, and the id it gives the run. */
function runRequest(dialect, msg) {
  const isRun =
    (dialect === 'loom' && msg.type === 'run') ||
    (dialect === 'agentchat' && msg.type === 'chat') ||
    (dialect === 'agentloop' && msg.type === 'user_input') ||
    (dialect === 'cueso' && msg.type === undefined && typeof msg.message === 'string');
  return isRun ? msg.id : undefined;
}

/**
 * Starts a server that plays `scenario` of `dialect` for every run, with the client's run id.
 * `script.pause` maps a frame index to a predicate on client frames: the stream waits before
 * that frame until such a frame arrives. `script.drop` is a frame index at which the first
 * socket is cut (the rest comes after the client's resume).
 */
async function serve(dialect, scenario, script = {}) {
  const { frames } = golden(dialect, scenario);
  const original = JSON.parse(frames[0]).run_id ?? JSON.parse(frames[0]).id;
  const received = [];
  const protocols = [];
  let sockets = 0;
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    handleProtocols: (set) => (set.has(`weft.${dialect}`) ? `weft.${dialect}` : false),
  });
  await new Promise((resolve) => wss.once('listening', resolve));
  wss.on('connection', (ws, req) => {
    const socket = ++sockets;
    protocols.push(req.headers['sec-websocket-protocol']);
    let runId;
    let waiting = null;
    const send = (from) => {
      for (let i = from; i < frames.length; i++) {
        if (script.drop === i && socket === 1) return ws.terminate();
        const wait = script.pause?.[i];
        if (wait && !received.some(wait)) {
          waiting = { at: i, wait };
          return;
        }
        ws.send(frames[i].replaceAll(original, runId));
      }
    };
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data));
      received.push(msg);
      if (msg.type === 'ping') {
        if (!script.silent) ws.send(JSON.stringify({ type: 'pong', id: msg.id }));
        return;
      }
      if (msg.type === 'tools_list') {
        ws.send(JSON.stringify({ type: 'tools_list', id: msg.id, tools: [{ name: 'read', input_schema: { type: 'object' } }] }));
        return;
      }
      const id = runRequest(dialect, msg);
      if (id !== undefined) {
        runId = id;
        return send(0);
      }
      if (msg.type === 'resume') {
        runId = msg.run_id;
        const from = frames.findIndex((f) => JSON.parse(f).event_id > msg.after_event_id || JSON.parse(f).event?.event_id > msg.after_event_id);
        return send(from < 0 ? frames.length : from);
      }
      if (waiting && waiting.wait(msg)) {
        const at = waiting.at;
        waiting = null;
        send(at);
      }
    });
  });
  const { port } = /** @type {import('node:net').AddressInfo} */ (wss.address());
  return {
    url: `ws://127.0.0.1:${port}`,
    received,
    protocols,
    sockets: () => sockets,
    close: () =>
      new Promise((resolve) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close(resolve);
      }),
  };
}

/** A client of `server`, closed (with the server) when the test ends, even if it fails. */
function client(t, server, dialect, options = {}) {
  t.after(async () => {
    c.close();
    await server.close();
  });
  const c = new Client({
    url: server.url,
    dialect,
    sessionId: 'sess-test',
    token: 's3cret',
    reconnect: { initialDelayMs: 10, maxDelayMs: 50 },
    ...options,
  });
  return c;
}

test('an event crosses into JavaScript only when asked for, and then once', async (t) => {
  const server = await serve('loom', 'tool-call');
  const c = client(t, server, 'loom');
  await c.connect();
  // Nobody listens: no event is made a JS object (JSON.parse is how one crosses).
  const parsed = [];
  const parse = JSON.parse;
  JSON.parse = (text, ...rest) => {
    parsed.push(String(text));
    return parse(text, ...rest);
  };
  let run;
  try {
    run = c.run({ message: 'What time is it?' });
    await run.result;
  } finally {
    JSON.parse = parse;
  }
  assert.deepEqual(
    parsed.filter((p) => p.includes('"event_id"')),
    [],
  );
  // An iterator made after the run still gets every event of it, in order.
  const { frames } = golden('loom', 'tool-call');
  const want = frames.map((f) => JSON.parse(f)).map((f) => f.event?.type ?? f.type);
  const late = [];
  for await (const ev of run.events()) late.push(ev.type);
  assert.deepEqual(late, want);
  // A listener and an iterator share one object per event.
  const second = c.run({ message: 'What time is it?' });
  const heard = [];
  second.onEvent((ev) => heard.push(ev));
  await second.result;
  const iterated = [];
  for await (const ev of second.events()) iterated.push(ev);
  assert.equal(iterated.length, want.length);
  assert.ok(
    iterated.every((ev, i) => ev === heard[i]),
    'the same objects',
  );
  // Each is the frame's event with the run's id, last (written into the event's JSON in the
  // wasm: one string across per event), or in its place where the event names it (`run_start`).
  heard.forEach((ev, i) => {
    const frame = JSON.parse(frames[i]);
    if (frame.event) assert.equal(JSON.stringify(ev), JSON.stringify({ ...frame.event, run_id: second.runId }), `event ${i}`);
    else assert.equal(Object.keys(ev).at(-1), 'run_id', `event ${i}`);
  });
  assert.equal(heard[0].run_id, second.runId);
});

for (const dialect of DIALECTS) {
  test(`${dialect}: a run streams text and events and resolves`, async (t) => {
    const server = await serve(dialect, 'plain-reply');
    const c = client(t, server, dialect);
    await c.connect();
    assert.equal(server.protocols[0], `weft.${dialect}, weft.token.s3cret`);
    const run = c.run({ message: 'Hello' });
    let text = '';
    const off = run.onText((d) => (text += d));
    const kinds = [];
    for await (const ev of run.events()) kinds.push(ev.type);
    const result = await run.result;
    off();
    assert.equal(text, 'Hi there! How can I help?');
    assert.equal(result.reply, 'Hi there! How can I help?');
    assert.equal(result.runId, run.runId);
    assert.deepEqual(result.totalUsage, { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 });
    assert.equal(kinds.at(-1), 'run_end');
    const transcript = c.transcript();
    assert.equal(transcript.runs[0].status, 'completed');
    assert.equal(transcript.messages.at(-1)?.text, 'Hi there! How can I help?');
  });

  test(`${dialect}: a socket cut mid-run is resumed with nothing lost or doubled`, async (t) => {
    const { frames } = golden(dialect, 'tool-call');
    const server = await serve(dialect, 'tool-call', { drop: Math.floor(frames.length / 2) });
    const c = client(t, server, dialect);
    const states = [];
    c.onStatus((s) => states.push(s.state));
    await c.connect();
    const run = c.run({ message: 'What time is it?' });
    const ids = [];
    run.onEvent((ev) => ids.push(ev.event_id));
    const result = await run.result;
    assert.equal(result.reply, 'It is 10:00 UTC.');
    assert.equal(server.sockets(), 2);
    const resume = server.received.find((m) => m.type === 'resume');
    assert.equal(resume.run_id, run.runId);
    assert.ok(resume.after_event_id > 0);
    const distinct = [...new Set(ids)];
    assert.deepEqual(ids, distinct, 'no event twice');
    assert.deepEqual(
      ids,
      [...distinct].sort((a, b) => a - b),
      'in order',
    );
    assert.deepEqual(states.slice(0, 4), ['connecting', 'open', 'reconnecting', 'open']);
    const whole = new Reassembler(dialect);
    whole.pushMany(frames.map((f) => f.replaceAll('run-tool', run.runId)));
    assert.deepEqual(c.transcript(), whole.transcript());
  });
}

for (const dialect of DIALECTS) {
  test(`${dialect}: an approval is answered through the callback`, async (t) => {
    const { frames } = golden(dialect, 'approval-granted');
    const at = frames.findIndex((f) => f.includes('approval_resolved'));
    const approved = (m) => m.type === 'approval_response';
    const server = await serve(dialect, 'approval-granted', { pause: { [at]: approved } });
    const c = client(t, server, dialect);
    const asked = [];
    c.onApproval(async (req) => {
      asked.push(req);
      return { review: 'yes' };
    });
    await c.connect();
    const result = await c.run({ message: 'write hello to notes.txt' }).result;
    assert.equal(result.reply, 'Wrote hello to notes.txt.');
    assert.equal(asked.length, 1);
    assert.equal(asked[0].callId, 'call_w');
    assert.equal(asked[0].name, 'apply_patch');
    const answer = server.received.find(approved);
    if (dialect === 'agentloop') {
      assert.equal(answer.payload.review, 'yes');
      assert.equal(answer.payload.callId, 'call_w');
    } else {
      assert.deepEqual(answer, { type: 'approval_response', call_id: 'call_w', review: 'yes' });
    }
    const declared = server.received.find((m) => m.type === 'client_tools');
    if (dialect === 'agentchat' || dialect === 'cueso') {
      assert.deepEqual(declared, { type: 'client_tools', tools: [], approvals: true });
    } else {
      assert.equal(declared, undefined);
    }
  });
}

for (const dialect of DIALECTS) {
  test(`${dialect}: a registered client tool runs once the server starts its call`, async (t) => {
    const { frames } = golden(dialect, 'tool-call');
    // The frame that carries the tool's result waits for the client's tool_result.
    const end = frames.findIndex((f) => f.includes('2026-11-22T10:00:00Z'));
    const server = await serve(dialect, 'tool-call', { pause: { [end]: (m) => m.type === 'tool_result' } });
    const c = client(t, server, dialect);
    const calls = [];
    c.registerTool({ name: 'get_time', description: 'The time', readOnly: true }, async (args) => {
      calls.push(args);
      return { now: '10:00' };
    });
    await c.connect();
    await c.run({ message: 'What time is it?' }).result;
    assert.deepEqual(
      server.received.find((m) => m.type === 'client_tools'),
      {
        type: 'client_tools',
        tools: [{ name: 'get_time', description: 'The time', input_schema: { type: 'object' }, read_only: true }],
      },
    );
    assert.deepEqual(calls, [{ timezone: 'UTC' }]);
    assert.deepEqual(
      server.received.filter((m) => m.type === 'tool_result'),
      [{ type: 'tool_result', call_id: 'call_1', result: '{"now":"10:00"}', is_error: false }],
    );
  });
}

test('a frame the socket refuses to send: the client reconnects, and the run goes on', async (t) => {
  const server = await serve('loom', 'plain-reply');
  const c = client(t, server, 'loom');
  await c.connect();
  // What the WebSocket API throws for a send it cannot take (a socket still connecting).
  const send = WebSocket.prototype.send;
  let refused = 0;
  WebSocket.prototype.send = function (data) {
    if (refused === 0 && String(data).includes('"Hello"')) {
      refused++;
      throw new DOMException('Still in CONNECTING state.', 'InvalidStateError');
    }
    return send.call(this, data);
  };
  t.after(() => (WebSocket.prototype.send = send));
  const states = [];
  c.onStatus((s) => states.push(s.state));
  const result = await c.run({ message: 'Hello' }).result;
  assert.equal(refused, 1);
  assert.equal(result.reply, 'Hi there! How can I help?');
  assert.equal(server.sockets(), 2, 'the socket that refused was dropped for a new one');
  assert.deepEqual(states.slice(0, 2), ['reconnecting', 'open']);
  assert.equal(server.received.filter((m) => m.type === 'run').length, 0, 'the run frame never reached the server');
  assert.equal(server.received.filter((m) => m.type === 'resume').length, 1);
});

test('requests are correlated, and a silent server is noticed by the heartbeat', async (t) => {
  const server = await serve('loom', 'plain-reply');
  const c = client(t, server, 'loom');
  await c.connect();
  const [tools, rtt] = await Promise.all([c.toolsList(), c.ping()]);
  assert.deepEqual(tools, [{ name: 'read', inputSchema: { type: 'object' } }]);
  assert.ok(rtt >= 0);

  const silent = await serve('cueso', 'plain-reply', { silent: true });
  const h = client(t, silent, 'cueso', { heartbeatIntervalMs: 30, heartbeatTimeoutMs: 30 });
  const reconnecting = new Promise((resolve) => h.onStatus((s) => s.state === 'reconnecting' && resolve(s)));
  await h.connect();
  const status = await reconnecting;
  assert.match(status.reason, /heartbeat/);
});
