// weft-sdk/ai under the AI SDK's own `Chat` (what `useChat` runs), over a real weft `Client`.
//
// The chunks come from the wasm, written by the protocol crate's aisdk encoder, so a test that
// held them to that encoder's golden streams alone would pass with a wrong encoder (bless the
// goldens and both move). These also hold what `Chat` builds from them to what the SDK's own
// `Reassembler` makes of the same frames, part by part: the text of every step, every tool
// call with its input, state and output. A stream that drops, repeats or mislabels a piece
// fails here whatever the goldens say.
//
// Servers: a real WebSocket server (ws) on 127.0.0.1 playing each scenario's loom golden
// frames to the client, the run named by the client's id, the frames after an approval sent
// once the client answers it. The test of how chunks are grouped by task puts a stand-in
// `WebSocket` on `globalThis` instead, because the tasks a real socket's frames arrive in are
// the operating system's to choose.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { Chat } from '@ai-sdk/react';
import { WebSocketServer } from 'ws';
import init, { Client, Reassembler } from 'weft-sdk';
import { WeftChatTransport, toUIMessages } from 'weft-sdk/ai';

const fixtures = new URL('../../crates/protocol/tests/fixtures/', import.meta.url);
const lines = (path) => readFileSync(new URL(path, fixtures), 'utf8').split('\n').filter(Boolean);
const WAIT_MS = 10_000;

await init();

/** Rejects after `WAIT_MS` with `what`, so that nothing here hangs. */
function within(promise, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), WAIT_MS);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** A scenario's loom frames, cut after each approval request (the rest waits for the answer). */
function segments(scenario) {
  /** @type {string[][]} */
  const out = [[]];
  for (const frame of lines(`loom/${scenario}.jsonl`)) {
    out[out.length - 1].push(frame);
    if (frame.includes('"type":"tool_approval"')) out.push([]);
  }
  return out.filter((s) => s.length);
}

/** The scenario's run id, which the frames name. */
const runIdOf = (scenario) => JSON.parse(lines(`loom/${scenario}.jsonl`)[0]).id;

/**
 * The scripted weft server: each `run` the client sends gets the scenario `pick(message)`
 * names, its frames renamed to the client's run id; `hold(message)` may delay them (returns a
 * promise). Frames after an approval follow the client's `approval_response`.
 */
let wss;
let url;
/** @type {(msg: any) => string} */
let pick = () => 'plain-reply';
/** @type {(msg: any) => Promise<unknown> | undefined} */
let hold = () => undefined;

before(async () => {
  wss = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: (protocols) => (protocols.has('weft.loom') ? 'weft.loom' : false) });
  await new Promise((resolve) => wss.once('listening', resolve));
  url = `ws://127.0.0.1:${wss.address().port}`;
  wss.on('connection', (socket) => {
    /** Segments still to send after an approval, by call id. */
    const rest = new Map();
    const send = (frames, runId, from) => {
      for (const f of frames) socket.send(f.replaceAll(`"${from}"`, JSON.stringify(runId)));
    };
    socket.on('message', async (data) => {
      const msg = JSON.parse(String(data));
      if (msg.type === 'run') {
        const scenario = pick(msg);
        const segs = segments(scenario);
        const from = runIdOf(scenario);
        for (let i = 1; i < segs.length; i++) {
          const call = JSON.parse(segs[i - 1][segs[i - 1].length - 1]).event.call_id;
          rest.set(call, () => send(segs[i], msg.id, from));
        }
        await hold(msg);
        send(segs[0], msg.id, from);
      } else if (msg.type === 'approval_response') {
        const next = rest.get(msg.call_id);
        rest.delete(msg.call_id);
        next?.();
      }
    });
  });
});

after(async () => {
  for (const c of wss.clients) c.terminate();
  await new Promise((resolve) => wss.close(resolve));
});

async function connect() {
  const client = new Client({ url, dialect: 'loom', sessionId: 'sess-ai', reconnect: false, heartbeatIntervalMs: 0 });
  await within(client.connect(), 'connect');
  return client;
}

/** A transport whose streams are also copied into `seen` (one array of chunks per stream). */
function recording(transport, seen) {
  return {
    sendMessages: async (o) => tee(await transport.sendMessages(o), seen),
    reconnectToStream: async (o) => {
      const s = await transport.reconnectToStream(o);
      return s && tee(s, seen);
    },
  };
}

function tee(stream, seen) {
  const [a, b] = stream.tee();
  const chunks = [];
  seen.push(chunks);
  (async () => {
    const reader = b.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
  })();
  return a;
}

/** Resolves when `chat` is ready again (or failed). */
function settled(chat, what) {
  return within(
    new Promise((resolve) => {
      const off = chat['~registerStatusCallback'](() => {
        if (chat.status === 'ready' || chat.status === 'error') {
          off();
          resolve(undefined);
        }
      });
    }),
    what,
  );
}

/** Runs one scenario in `chat`: the message, then each approval answered as the scenario did. */
async function converse(chat, scenario, text) {
  await within(chat.sendMessage({ text }), `${scenario}: the first stream`);
  for (let s = 1; s < segments(scenario).length; s++) {
    const asked = chat.lastMessage?.parts.filter((p) => 'state' in p && p.state === 'approval-requested') ?? [];
    assert.equal(asked.length, 1, `${scenario}: one approval asked`);
    const done = settled(chat, `${scenario}: the stream after approval ${s}`);
    for (const p of asked) {
      if (!('approval' in p) || !p.approval) throw new Error('no approval');
      chat.addToolApprovalResponse({ id: p.approval.id, approved: scenario !== 'approval-denied', reason: 'not today' });
    }
    await done;
  }
}

/** What `Chat` shows of an assistant message: its text (by step) and tool calls. */
function shown(messages) {
  const steps = [];
  const tools = [];
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    for (const p of m.parts) {
      if (p.type === 'step-start') steps.push('');
      else if (p.type === 'text') {
        if (!steps.length) steps.push('');
        steps[steps.length - 1] += p.text;
      } else if ('toolCallId' in p) {
        const out = p.state === 'output-available' ? p.output : p.state === 'output-error' ? p.errorText : undefined;
        tools.push({ id: p.toolCallId, name: p.type.replace(/^tool-/, ''), input: p.input, state: p.state, output: out });
      }
    }
  }
  return { text: steps.filter(Boolean), tools };
}

/** The same, from the transcript the SDK's Reassembler makes of the scenario's frames. */
function reassembled(scenario) {
  const r = new Reassembler('loom');
  for (const frame of lines(`loom/${scenario}.jsonl`)) r.push(frame);
  const t = r.transcript();
  const text = t.messages.filter((m) => m.role === 'assistant' && m.text).map((m) => m.text);
  const tools = t.tool_calls.map((c) => ({
    id: c.call_id,
    name: c.name,
    input: c.arguments,
    state: c.status === 'denied' ? 'output-denied' : c.status === 'error' ? 'output-error' : c.result != null ? 'output-available' : 'input-available',
    output: c.status === 'denied' ? undefined : (c.result ?? undefined),
  }));
  return { text, tools };
}

/** Consecutive deltas of one part as one. */
function joined(chunks) {
  const out = [];
  for (const c of chunks) {
    const last = out.at(-1);
    if (last && /^(text|reasoning)-delta$/.test(c.type) && last.type === c.type && last.id === c.id)
      out[out.length - 1] = { ...last, delta: last.delta + c.delta };
    else out.push(c);
  }
  return out;
}

const scenarios = readdirSync(new URL('aisdk/', fixtures)).map((f) => f.replace(/\.jsonl$/, ''));

test('useChat over weft builds what the frames say, with the chunks weft’s POST /api/chat sends', async () => {
  assert.ok(scenarios.length >= 6, scenarios.join());
  const client = await connect();
  try {
    for (const scenario of scenarios) {
      pick = () => scenario;
      const seen = [];
      const transport = new WeftChatTransport({ client });
      const chat = new Chat({ id: `chat-${scenario}`, transport: recording(transport, seen), sendAutomaticallyWhen: transport.sendAutomaticallyWhen });
      await converse(chat, scenario, 'go');
      transport.close();
      // Chat's message against the reassembled transcript: the encoder's meaning.
      const want = reassembled(scenario);
      const got = shown(chat.messages);
      assert.deepEqual(got.text, want.text, `${scenario}: the text of each step`);
      assert.deepEqual(got.tools, want.tools, `${scenario}: the tool calls`);
      if (scenario === 'provider-error') assert.match(String(chat.error?.message), /\S/, 'the failure reaches Chat');
      // And the chunks, stream by stream, are the server's (deltas of one part that came in
      // one task are one: joined in the golden streams too).
      const golden = lines(`aisdk/${scenario}.jsonl`)
        .join('\n')
        .split('[DONE]')
        .map((s) =>
          joined(
            s
              .split('\n')
              .filter(Boolean)
              .map((l) => JSON.parse(l)),
          ),
        );
      golden.pop();
      const runId = runIdOf(scenario);
      const streams = seen.map((chunks) =>
        joined(chunks.map((c) => (c.type === 'start' ? { ...c, messageId: c.messageId.replace(/^msg-.*/, `msg-${runId}`) } : c))),
      );
      assert.deepEqual(streams, golden, `${scenario}: the chunks`);
    }
  } finally {
    client.close();
  }
});

test('two useChats on one transport keep their streams apart', async () => {
  const client = await connect();
  const transport = new WeftChatTransport({ client });
  try {
    // Chat b's stream opens, then chat a's approval arrives while b still streams: b must not
    // be paused for it, nor a left waiting.
    let bArrived;
    const bOpen = new Promise((resolve) => {
      bArrived = resolve;
    });
    let aDone;
    const aStreamed = new Promise((resolve) => {
      aDone = resolve;
    });
    pick = (msg) => (msg.message === 'a' ? 'approval-granted' : 'plain-reply');
    hold = (msg) => {
      if (msg.message === 'a') return bOpen.then(() => setTimeout(() => aDone(undefined), 100));
      bArrived(undefined);
      return aStreamed;
    };
    const a = new Chat({ id: 'chat-a', transport, sendAutomaticallyWhen: transport.sendAutomaticallyWhen });
    const b = new Chat({ id: 'chat-b', transport, sendAutomaticallyWhen: transport.sendAutomaticallyWhen });
    const aSent = a.sendMessage({ text: 'a' });
    const bSent = b.sendMessage({ text: 'b' });
    await within(Promise.all([aSent, bSent]), 'both first streams');
    assert.deepEqual(shown(b.messages), reassembled('plain-reply'), 'b streamed to its end');
    assert.equal(
      b.lastMessage?.parts.some((p) => 'state' in p && p.state === 'approval-requested'),
      false,
    );
    const asked = a.lastMessage?.parts.filter((p) => 'state' in p && p.state === 'approval-requested') ?? [];
    assert.equal(asked.length, 1, 'a paused at its approval');
    const done = settled(a, 'a after its approval');
    const p = asked[0];
    if (!('approval' in p) || !p.approval) throw new Error('no approval');
    a.addToolApprovalResponse({ id: p.approval.id, approved: true });
    await done;
    assert.deepEqual(shown(a.messages), reassembled('approval-granted'), 'a went on after its approval');
  } finally {
    hold = () => undefined;
    transport.close();
    client.close();
  }
});

test('reconnectToStream: null when there is nothing to resume, an error when it cannot ask', async () => {
  // agentchat cannot name a running run: nothing to resume, and Chat stays ready.
  const other = new Client({ url: 'ws://127.0.0.1:9', dialect: 'agentchat', sessionId: 's', reconnect: false });
  const none = new Chat({ id: 's', transport: new WeftChatTransport({ client: other }) });
  await within(none.resumeStream(), 'resume on agentchat');
  assert.equal(none.status, 'ready');
  assert.equal(none.error, undefined);
  other.close();
  // A closed client cannot ask: Chat shows the error instead of taking it for "nothing".
  const client = await connect();
  client.close();
  const chat = new Chat({ id: 'sess-ai', transport: new WeftChatTransport({ client }) });
  await within(chat.resumeStream(), 'resume on a closed client');
  assert.equal(chat.status, 'error');
  assert.equal(/** @type {any} */ (chat.error)?.code, 'closed');
});

/**
 * A stand-in `WebSocket` (opens at once selecting `weft.loom`) put on `globalThis` while a
 * client connects, so the test decides which frames arrive in one task.
 */
class TaskSocket extends EventTarget {
  /** @type {TaskSocket | null} */
  static last = null;
  constructor(_url, protocols) {
    super();
    this.readyState = 0;
    this.protocol = '';
    this.binaryType = 'blob';
    this.onopen = this.onmessage = this.onclose = this.onerror = null;
    /** @type {(msg: any) => void} */
    this.onSend = () => {};
    TaskSocket.last = this;
    setTimeout(() => {
      this.readyState = 1;
      this.protocol = Array.from(protocols).find((p) => p === 'weft.loom') ?? '';
      this.onopen?.(new Event('open'));
    }, 0);
  }
  send(text) {
    this.onSend(JSON.parse(text));
  }
  close() {
    this.readyState = 3;
  }
  deliver(data) {
    this.onmessage?.(new MessageEvent('message', { data }));
  }
}

test('deltas that arrive in one task reach Chat together; the first is not held', async () => {
  const Real = globalThis.WebSocket;
  /** @type {any} */ (globalThis).WebSocket = TaskSocket;
  let client;
  try {
    client = new Client({ url: 'ws://stand-in.invalid', dialect: 'loom', sessionId: 's', reconnect: false, heartbeatIntervalMs: 0 });
    await within(client.connect(), 'connect');
  } finally {
    globalThis.WebSocket = Real;
  }
  const socket = /** @type {TaskSocket} */ (/** @type {unknown} */ (TaskSocket.last));
  const deltas = ['Hel', 'lo', ', ', 'wor', 'ld'];
  const frames = (runId) => {
    const ev = (id, event) => JSON.stringify({ type: 'run_stream_event', id: runId, event: { ...event, event_id: id } });
    return [
      ev(1, { type: 'run_start', run_id: runId, message: 'hi', agent: 'react' }),
      ev(2, { type: 'node_enter', id: 'think' }),
      ...deltas.map((d, i) => ev(3 + i, { type: 'message_chunk', content: d, id: 'think' })),
      ev(8, { type: 'llm_complete', content: deltas.join(''), tool_calls: [], finish_reason: 'stop' }),
      JSON.stringify({ type: 'run_end', id: runId, reply: deltas.join(''), event_id: 9 }),
    ];
  };
  // No window: this test is about what one task joins (the window's own test follows).
  const transport = new WeftChatTransport({ client, deltaWindowMs: 0 });
  try {
    for (const oneTask of [true, false]) {
      const seen = [];
      const chat = new Chat({ id: `s-${oneTask}`, transport: recording(transport, seen) });
      const sent = new Promise((resolve) => {
        socket.onSend = (msg) => msg.type === 'run' && resolve(msg.id);
      });
      const done = chat.sendMessage({ text: 'hi' });
      const runId = await within(sent, 'the run frame');
      // The stream is open once the run went out; a microtask later Chat reads it.
      await new Promise((resolve) => setTimeout(resolve, 0));
      const deltasSeen = () => seen.flat().filter((c) => c.type === 'text-delta');
      if (oneTask) {
        // A replay: the whole run in one task.
        for (const f of frames(runId)) socket.deliver(f);
      } else {
        for (const f of frames(runId)) {
          socket.deliver(f);
          await new Promise((resolve) => setTimeout(resolve, 0));
        }
      }
      await within(done, 'the stream');
      const got = deltasSeen().map((c) => c.delta);
      // The first delta at once, the rest of the task's as one.
      if (oneTask) assert.deepEqual(got, ['Hel', 'lo, world']);
      else assert.deepEqual(got, deltas, 'each task its own delta');
      assert.equal(chat.lastMessage?.parts.find((p) => p.type === 'text')?.text, 'Hello, world');
    }
  } finally {
    transport.close();
    client.close();
  }
});

/** A client of the stand-in socket (`TaskSocket`), and that socket. */
async function taskClient() {
  const Real = globalThis.WebSocket;
  /** @type {any} */ (globalThis).WebSocket = TaskSocket;
  try {
    const client = new Client({ url: 'ws://stand-in.invalid', dialect: 'loom', sessionId: 's', reconnect: false, heartbeatIntervalMs: 0 });
    await within(client.connect(), 'connect');
    return { client, socket: /** @type {TaskSocket} */ (/** @type {unknown} */ (TaskSocket.last)) };
  } finally {
    globalThis.WebSocket = Real;
  }
}

/** A loom frame of run `runId`: `event` with its event id. */
const loomEvent = (runId, id, event) => JSON.stringify({ type: 'run_stream_event', id: runId, event: { ...event, event_id: id } });

/** `chat` sends `text`; resolves with the run id the client named, once the stream is open. */
async function started(chat, socket, text) {
  const sent = new Promise((resolve) => {
    socket.onSend = (msg) => msg.type === 'run' && resolve(msg.id);
  });
  const done = chat.sendMessage({ text });
  const runId = await within(sent, 'the run frame');
  // The stream is open once the run went out; a task later Chat reads it.
  await new Promise((resolve) => setTimeout(resolve, 0));
  return { runId, done };
}

/** Delivers each frame in a task of its own, as a live socket does. */
async function inTasks(socket, frames) {
  for (const f of frames) {
    socket.deliver(f);
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}

const textOf = (chat) => chat.lastMessage?.parts.find((p) => p.type === 'text')?.text;

test('deltas in tasks of their own wait for the window, and nothing else waits behind them', async () => {
  const { client, socket } = await taskClient();
  // A window no test waits out: only what comes after a delta may take it along.
  const transport = new WeftChatTransport({ client, deltaWindowMs: 60_000 });
  try {
    const seen = [];
    const chat = new Chat({ id: 'window', transport: recording(transport, seen), sendAutomaticallyWhen: transport.sendAutomaticallyWhen });
    const { runId, done } = await started(chat, socket, 'hi');
    const args = { patch: 'x' };
    const ev = (id, event) => loomEvent(runId, id, { ...event, session_id: 's', node_id: 'n' });
    const deltas = ['Hel', 'lo', ', ', 'wor', 'ld'];
    const frames = [
      ev(1, { type: 'run_start', run_id: runId, message: 'hi', agent: 'react' }),
      ev(2, { type: 'node_enter', id: 'think' }),
      ...deltas.map((d, i) => ev(3 + i, { type: 'message_chunk', content: d, id: 'think' })),
      ev(8, { type: 'tool_call_chunk', call_id: 'call_w', name: 'apply_patch', arguments_delta: '' }),
      ev(9, { type: 'tool_call_chunk', call_id: 'call_w', name: 'apply_patch', arguments_delta: '{"patch"' }),
      ev(10, { type: 'tool_call_chunk', call_id: 'call_w', name: 'apply_patch', arguments_delta: ':"x"}' }),
      ev(11, { type: 'tool_call', call_id: 'call_w', name: 'apply_patch', arguments: args }),
      ev(12, { type: 'llm_complete', content: deltas.join(''), tool_calls: ['apply_patch'], finish_reason: 'tool_calls' }),
      ev(13, { type: 'node_exit', id: 'think', result: 'Ok' }),
      ev(14, { type: 'node_enter', id: 'act' }),
      ev(15, { type: 'tool_approval', call_id: 'call_w', name: 'apply_patch', arguments: args }),
    ];
    await inTasks(socket, frames);
    // The approval pauses the stream at once, the held text and tool input ahead of it.
    await within(done, 'the stream to pause for the approval');
    const chunks = seen.flat();
    const types = chunks.map((c) => c.type);
    assert.deepEqual(
      chunks.filter((c) => c.type === 'text-delta').map((c) => c.delta),
      ['Hel', 'lo, world'],
      'the first delta at once, the rest joined',
    );
    assert.ok(types.lastIndexOf('text-delta') < types.indexOf('tool-input-start'), 'the text goes out before the tool call that came after it');
    assert.deepEqual(
      chunks.filter((c) => c.type === 'tool-input-delta').map((c) => c.inputTextDelta),
      ['{"patch":"x"}'],
      "the tool input's deltas joined, ahead of its input",
    );
    assert.ok(types.lastIndexOf('tool-input-delta') < types.indexOf('tool-input-available'));
    assert.equal(textOf(chat), 'Hello, world');
    const asked = chat.lastMessage?.parts.filter((p) => 'state' in p && p.state === 'approval-requested') ?? [];
    assert.equal(asked.length, 1, 'the approval reached Chat');
  } finally {
    transport.close();
    client.close();
  }
});

test('held deltas go out when the window ends, and with an abort', async () => {
  const { client, socket } = await taskClient();
  const ev = (runId, id, event) => loomEvent(runId, id, event);
  const opening = (runId, deltas) => [
    ev(runId, 1, { type: 'run_start', run_id: runId, message: 'hi', agent: 'react' }),
    ev(runId, 2, { type: 'node_enter', id: 'think' }),
    ...deltas.map((d, i) => ev(runId, 3 + i, { type: 'message_chunk', content: d, id: 'think' })),
  ];
  // A short window: the held text reaches Chat with nothing after it.
  const short = new WeftChatTransport({ client, deltaWindowMs: 1 });
  const a = new Chat({ id: 'short', transport: short });
  const first = await started(a, socket, 'hi');
  await inTasks(socket, opening(first.runId, ['a', 'b', 'c']));
  await within(
    new Promise((resolve) => {
      const check = () => (textOf(a) === 'abc' ? resolve(undefined) : setTimeout(check, 1));
      check();
    }),
    'the held deltas after the window',
  );
  socket.deliver(JSON.stringify({ type: 'run_end', id: first.runId, reply: 'abc', event_id: 6 }));
  await within(first.done, 'the first stream');
  short.close();
  // A window no test waits out, and `stop()`: what waited goes into the stream before the run
  // is cancelled (`Chat` itself stops reading at once, dropping what is still on its way to it,
  // held or not, as with a fetch body; a reader that reads on gets it all).
  const long = new WeftChatTransport({ client, deltaWindowMs: 60_000 });
  const seen = [];
  const b = new Chat({ id: 'long', transport: recording(long, seen) });
  const second = await started(b, socket, 'hi');
  await inTasks(socket, opening(second.runId, ['Hel', 'lo', '!']));
  assert.deepEqual(
    seen
      .flat()
      .filter((c) => c.type === 'text-delta')
      .map((c) => c.delta),
    ['Hel'],
    'the later deltas wait',
  );
  const cancelled = new Promise((resolve) => {
    socket.onSend = (msg) => msg.type === 'cancel' && resolve(msg);
  });
  await within(Promise.all([b.stop(), cancelled]), 'stop and the cancel it sends');
  assert.deepEqual(
    seen
      .flat()
      .filter((c) => c.type === 'text-delta')
      .map((c) => c.delta),
    ['Hel', 'lo!'],
    'the held deltas went out with the abort',
  );
  long.close();
  client.close();
});

test("toUIMessages turns a transcript into the AI SDK's messages, tools with their outcome", () => {
  const r = new Reassembler('loom');
  for (const frame of lines('loom/tool-call.jsonl')) r.push(frame);
  /** @type {Json[]} the messages, read part by part */
  const messages = toUIMessages(r.transcript());
  assert.deepEqual(
    messages.map((m) => m.role),
    ['user', 'assistant', 'assistant'],
  );
  assert.equal(messages[0].parts[0].text, 'What time is it?');
  const tool = messages[1].parts.find((p) => p.type === 'tool-get_time');
  assert.equal(tool?.state, 'output-available');
  assert.deepEqual(tool?.input, { timezone: 'UTC' });
  assert.equal(tool?.output, '2026-11-22T10:00:00Z');
  assert.equal(messages[2].parts.at(-1)?.text, 'It is 10:00 UTC.');
  const denied = new Reassembler('loom');
  for (const frame of lines('loom/approval-denied.jsonl')) denied.push(frame);
  const part = toUIMessages(denied.transcript())
    .flatMap((m) => m.parts)
    .find((p) => 'toolCallId' in p && p.toolCallId === 'call_w');
  assert.equal(part && 'state' in part ? part.state : undefined, 'output-denied');
});
