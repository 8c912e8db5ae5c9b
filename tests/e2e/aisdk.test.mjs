// The AI SDK dialect on the wire, against the real Worker under `wrangler dev`: what
// `DefaultChatTransport` sends to `POST /api/chat` and what it gets back (UI message chunks as
// server-sent events), each turn of a conversation with approvals and a client-side tool, the
// running turn again from `GET /api/chat/{id}/stream`, and the refusals. (tests/aisdk drives
// the same endpoint from a real `useChat` page in Chromium.)

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import { startServer } from './server.mjs';

const TOKEN = 'aisdk-token';
let server;
before(
  async () => {
    server = await startServer({ delayMs: 2, vars: { WEFT_AUTH_TOKEN: TOKEN } });
  },
  { timeout: 900_000 },
);
after(async () => {
  await server?.stop();
});

const chatId = () => `aisdk-${randomUUID()}`;
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

/**
 * One turn: the chunks of the answer's stream, read to its end.
 * @param {Json} body
 * @param {Record<string, string>} [headers]
 * @returns {Promise<{ status: number, text?: string, headers?: Headers, done?: boolean, chunks: Json[] }>}
 */
async function post(body, headers = auth) {
  const res = await fetch(`${server.http}/api/chat`, { method: 'POST', headers, body: JSON.stringify(body) });
  if (!res.ok) return { status: res.status, text: await res.text(), chunks: [] };
  return { status: res.status, headers: res.headers, ...parse(await res.text()) };
}

/** Server-sent events to chunks; `done`: the stream ended with `[DONE]`. */
function parse(text) {
  const datas = text
    .split('\n\n')
    .filter(Boolean)
    .map((e) => {
      assert.match(e, /^data: /, `an SSE data line: ${e}`);
      return e.slice(6);
    });
  const done = datas.at(-1) === '[DONE]';
  return { done, chunks: datas.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d)) };
}

const user = (text) => ({ id: randomUUID(), role: 'user', parts: [{ type: 'text', text }] });
const kinds = (chunks) => chunks.map((c) => c.type);
const textOf = (chunks) =>
  chunks
    .filter((c) => c.type === 'text-delta')
    .map((c) => c.delta)
    .join('');

/** The assistant message the page would hold after `chunks`, with its tool parts answered. */
function assistant(chunks, answer) {
  /** @type {Json[]} */
  const parts = [];
  for (const c of chunks) {
    if (c.type === 'tool-input-available') {
      parts.push({ type: `tool-${c.toolName}`, toolCallId: c.toolCallId, state: 'input-available', input: c.input });
    }
    if (c.type === 'tool-approval-request') {
      const p = parts.find((x) => x.toolCallId === c.toolCallId);
      assert.ok(p, `the approval request names a call the stream announced: ${c.toolCallId}`);
      p.state = 'approval-requested';
      p.approval = { id: c.approvalId };
    }
  }
  for (const p of parts) answer(p);
  return { id: chunks.find((c) => c.type === 'start').messageId, role: 'assistant', parts };
}

describe('POST /api/chat', () => {
  test('a message streams back as one assistant message: start, a step of text, finish', async () => {
    const id = chatId();
    const turn = await post({ id, trigger: 'submit-message', messages: [user('count to 5')] });
    assert.equal(turn.status, 200);
    assert.equal(turn.headers?.get('x-vercel-ai-ui-message-stream'), 'v1');
    assert.match(turn.headers?.get('content-type') ?? '', /^text\/event-stream/);
    assert.ok(turn.done, 'the stream ends with [DONE]');
    const k = kinds(turn.chunks);
    assert.deepEqual([k[0], k[1], k.at(-2), k.at(-1)], ['start', 'start-step', 'finish-step', 'finish']);
    assert.equal(textOf(turn.chunks), '1 2 3 4 5');
    assert.equal(turn.chunks.at(-1)?.finishReason, 'stop');
    // The next turn of the same chat sees the first (the session keeps the history).
    const next = await post({ id, trigger: 'submit-message', messages: [user('count to 5'), user('what did I say?')] });
    assert.match(textOf(next.chunks), /what did I say/);
  });

  test('a tool that needs approval ends the turn; the answer in the next request carries on the same message', async () => {
    const id = chatId();
    const first = await post({ id, messages: [user('write hello to notes.txt')] });
    assert.deepEqual(kinds(first.chunks).slice(-3), ['tool-approval-request', 'finish-step', 'finish']);
    assert.equal(first.chunks.at(-1)?.finishReason, 'tool-calls');
    const ask = first.chunks.find((c) => c.type === 'tool-approval-request');
    const approved = assistant(first.chunks, (p) => {
      p.state = 'approval-responded';
      p.approval.approved = true;
    });
    const second = await post({ id, messages: [user('write hello to notes.txt'), approved] });
    assert.equal(second.status, 200, second.text);
    assert.equal(second.chunks[0].messageId, first.chunks[0].messageId, 'the same message');
    const output = second.chunks.find((c) => c.type === 'tool-output-available');
    assert.equal(output?.toolCallId, ask?.toolCallId);
    assert.equal(second.chunks.at(-1)?.finishReason, 'stop');
    // The same answer again finds nothing waiting: refused, and nothing ran twice.
    const again = await post({ id, messages: [user('write hello to notes.txt'), approved] });
    assert.equal(again.status, 409);
  });

  test('a denied approval: tool-output-denied, the model hears it was denied, the turn ends', async () => {
    const id = chatId();
    const first = await post({ id, messages: [user('write secret to notes.txt')] });
    const denied = assistant(first.chunks, (p) => {
      p.state = 'approval-responded';
      p.approval.approved = false;
      p.approval.reason = 'not today';
    });
    const second = await post({ id, messages: [user('write secret to notes.txt'), denied] });
    const k = kinds(second.chunks);
    assert.ok(k.includes('tool-output-denied'), k.join());
    assert.ok(!k.includes('tool-output-available'), 'the tool did not run');
    assert.match(textOf(second.chunks), /was denied/);
    assert.equal(second.chunks.at(-1)?.type, 'finish');
  });

  test('a client-side tool declared with the request: its call ends the turn, its output continues it', async () => {
    const id = chatId();
    const tools = [{ name: 'shell', description: "runs a command on the user's machine", input_schema: { type: 'object' }, read_only: true }];
    const first = await post({ id, tools, messages: [user('use shell with {"cmd":"uname"}')] });
    const call = first.chunks.find((c) => c.type === 'tool-input-available');
    assert.equal(call?.toolName, 'shell');
    assert.deepEqual(call.input, { cmd: 'uname' });
    assert.equal(first.chunks.at(-1)?.finishReason, 'tool-calls');
    const answered = assistant(first.chunks, (p) => {
      p.state = 'output-available';
      p.output = 'Linux';
    });
    const second = await post({ id, tools, messages: [user('use shell with {"cmd":"uname"}'), answered] });
    assert.equal(second.status, 200, second.text);
    assert.match(textOf(second.chunks), /Linux/);
    assert.equal(second.chunks.at(-1)?.finishReason, 'stop');
  });

  test('refusals: bad bodies 400 with the reason, no token 401, an answer nothing waits for 409', async () => {
    const bad = await post({ messages: [user('hi')] });
    assert.equal(bad.status, 400);
    assert.match(bad.text ?? '', /id/);
    const empty = await post({ id: chatId(), messages: [] });
    assert.equal(empty.status, 400);
    const badId = await post({ id: 'has spaces', messages: [user('hi')] });
    assert.equal(badId.status, 400);
    const noToken = await post({ id: chatId(), messages: [user('hi')] }, { 'content-type': 'application/json' });
    assert.equal(noToken.status, 401);
    const stale = await post({
      id: chatId(),
      messages: [
        user('hi'),
        {
          id: 'a',
          role: 'assistant',
          parts: [{ type: 'tool-write', toolCallId: 'nope', state: 'approval-responded', input: {}, approval: { id: 'nope', approved: true } }],
        },
      ],
    });
    assert.equal(stale.status, 409);
  });

  test('a new message while a run waits (the page moved on, or stop()ped): the run is cancelled, the message runs', async () => {
    const id = chatId();
    const waiting = await post({ id, messages: [user('write x to y.txt')] });
    assert.equal(waiting.chunks.at(-1)?.finishReason, 'tool-calls');
    const next = await post({ id, messages: [user('write x to y.txt'), user('count to 2')] });
    assert.equal(next.status, 200, next.text);
    assert.equal(textOf(next.chunks), '1 2');
    assert.notEqual(next.chunks[0].messageId, waiting.chunks[0].messageId, 'a message of its own');
    // The left-behind approval is gone: answering it now finds nothing waiting.
    const late = assistant(waiting.chunks, (p) => {
      p.state = 'approval-responded';
      p.approval.approved = true;
    });
    const answer = await post({ id, messages: [user('write x to y.txt'), late] });
    assert.equal(answer.status, 409);
  });

  test('stop() mid-stream drops the request, the turn goes on; the next message cancels it and runs', async () => {
    const id = chatId();
    server.pace(20);
    try {
      const res = await fetch(`${server.http}/api/chat`, { method: 'POST', headers: auth, body: JSON.stringify({ id, messages: [user('long reply 200')] }) });
      const reader = /** @type {ReadableStream<Uint8Array>} */ (res.body).getReader();
      let seen = '';
      while (!seen.includes('text-delta')) seen += new TextDecoder().decode((await reader.read()).value);
      await reader.cancel();
      const running = await fetch(`${server.http}/api/chat/${id}/stream`, { headers: auth });
      assert.equal(running.status, 200, 'the turn went on without the request');
      await running.body?.cancel();
    } finally {
      server.pace(null);
    }
    const next = await post({ id, messages: [user('long reply 200'), user('count to 3')] });
    assert.equal(next.status, 200, next.text);
    assert.equal(textOf(next.chunks), '1 2 3');
  });
});

describe('GET /api/chat/{id}/stream', () => {
  test('204 when nothing runs; mid-turn, the turn from its start, then live to its end', async () => {
    const id = chatId();
    const idle = await fetch(`${server.http}/api/chat/${id}/stream`, { headers: auth });
    assert.equal(idle.status, 204);
    server.pace(20);
    try {
      const res = await fetch(`${server.http}/api/chat`, { method: 'POST', headers: auth, body: JSON.stringify({ id, messages: [user('long reply 60')] }) });
      // Read a little, then leave (a reload): the turn goes on without the page.
      const reader = /** @type {ReadableStream<Uint8Array>} */ (res.body).getReader();
      let seen = '';
      while (!seen.includes('text-delta')) seen += new TextDecoder().decode((await reader.read()).value);
      await reader.cancel();
      const again = await fetch(`${server.http}/api/chat/${id}/stream`, { headers: auth });
      assert.equal(again.status, 200);
      assert.equal(again.headers.get('x-vercel-ai-ui-message-stream'), 'v1');
      const replay = parse(await again.text());
      assert.ok(replay.done);
      assert.equal(replay.chunks[0].type, 'start');
      const words = textOf(replay.chunks).trim().split(/\s+/);
      assert.equal(words.length, 60, 'the whole reply, once, from its start');
      assert.equal(replay.chunks.at(-1)?.type, 'finish');
    } finally {
      server.pace(null);
    }
    const after = await fetch(`${server.http}/api/chat/${id}/stream`, { headers: auth });
    assert.equal(after.status, 204, 'the turn is over');
  });
});
