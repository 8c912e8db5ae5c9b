// AG-UI on the wire, against the real Worker under `wrangler dev`: the real `HttpAgent` from
// `@ag-ui/client` pointed at `POST /agui` (a `RunAgentInput` in, the run's AG-UI events out as
// server-sent events), every event it receives held to `@ag-ui/core`'s own schemas. The thread
// is a weft session: a second run sees the first; a built-in tool runs on the server; a
// frontend tool (the input's `tools`) ends the run with its call, and the next input's `tool`
// message carries on; an approval is an interrupt, answered by the next input's `resume`.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { HttpAgent } from '@ag-ui/client';
import { EventSchema, RunAgentInputSchema } from '@ag-ui/core/schemas';

import { startServer } from './server.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const TOKEN = 'agui-token';
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

const auth = { authorization: `Bearer ${TOKEN}` };

/** An agent on a fresh thread, recording every event it receives and every input it sends. */
function agent() {
  /** @type {any} HttpAgent with the recorders below (`requestInit` is protected in its types) */
  const a = new HttpAgent({ url: `${server.http}/agui`, headers: auth, threadId: `agui-${randomUUID()}` });
  a.seen = [];
  a.inputs = [];
  const requestInit = a.requestInit.bind(a);
  a.requestInit = (input) => {
    a.inputs.push(input);
    return requestInit(input);
  };
  return a;
}

/** One run: the events it received (each checked against AG-UI's schema) and its result. */
async function run(a, params = {}) {
  const events = [];
  const { result, newMessages } = await a.runAgent(
    { runId: randomUUID(), ...params },
    {
      onEvent({ event }) {
        const parsed = EventSchema.safeParse(event);
        assert.ok(parsed.success, `${event.type} fails @ag-ui/core's schema: ${parsed.error}`);
        events.push(event);
      },
    },
  );
  a.seen.push(...events);
  return { events, result, newMessages };
}

const say = (a, content) => a.addMessage({ id: randomUUID(), role: 'user', content });
const types = (events) => events.map((e) => e.type);
const textOf = (events) =>
  events
    .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
    .map((e) => e.delta)
    .join('');

describe('POST /agui with @ag-ui/client', () => {
  test('a text run: RUN_STARTED in the thread, the text as one message, RUN_FINISHED; the thread keeps its history', async () => {
    const a = agent();
    say(a, 'count to 5');
    const first = await run(a);
    assert.ok(RunAgentInputSchema.safeParse(a.inputs[0]).success, 'HttpAgent sent a RunAgentInput');
    const k = types(first.events);
    assert.equal(k[0], 'RUN_STARTED');
    assert.equal(first.events[0].threadId, a.threadId, 'threadId is the session');
    assert.equal(k.at(-1), 'RUN_FINISHED');
    assert.equal(first.events.at(-1).outcome.type, 'success');
    assert.equal(textOf(first.events), '1 2 3 4 5');
    assert.equal(first.result, '1 2 3 4 5', 'the reply is the run result');
    const reply = a.messages.find((m) => m.role === 'assistant');
    assert.equal(reply?.content, '1 2 3 4 5', 'the agent holds the reply as a message');
    // Node spans are steps, opened and closed within the run.
    const started = first.events.filter((e) => e.type === 'STEP_STARTED').map((e) => e.stepName);
    const finished = first.events.filter((e) => e.type === 'STEP_FINISHED').map((e) => e.stepName);
    assert.ok(started.length > 0);
    assert.deepEqual([...finished].sort(), [...started].sort());
    say(a, 'summarize');
    const second = await run(a);
    assert.match(textOf(second.events), /count to 5/, 'the second run hears the first');
  });

  test('a built-in tool runs on the server: its call, its result, then the answer', async () => {
    const a = agent();
    say(a, 'what time is it?');
    const { events } = await run(a);
    const start = events.find((e) => e.type === 'TOOL_CALL_START');
    assert.equal(start?.toolCallName, 'get_time');
    const id = start.toolCallId;
    const args = events
      .filter((e) => e.type === 'TOOL_CALL_ARGS' && e.toolCallId === id)
      .map((e) => e.delta)
      .join('');
    assert.deepEqual(JSON.parse(args), { timezone: 'UTC' });
    const k = types(events);
    assert.ok(k.indexOf('TOOL_CALL_END') < k.indexOf('TOOL_CALL_RESULT'));
    const result = events.find((e) => e.type === 'TOOL_CALL_RESULT');
    assert.equal(result.toolCallId, id);
    assert.match(textOf(events), new RegExp(`It is ${result.content.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.ok(
      a.messages.some((m) => m.role === 'tool' && m.toolCallId === id),
      "the result is in the agent's messages",
    );
    assert.equal(events.at(-1).outcome.type, 'success');
  });

  test("a frontend tool: its call ends the run; the next input's tool message carries on", async () => {
    const a = agent();
    const tools = [{ name: 'pick_color', description: 'asks the user for a color', parameters: { type: 'object', properties: { hint: { type: 'string' } } } }];
    say(a, 'use pick_color with {"hint":"warm"}');
    const first = await run(a, { tools });
    const start = first.events.find((e) => e.type === 'TOOL_CALL_START');
    assert.equal(start?.toolCallName, 'pick_color');
    const ended = first.events.findIndex((e) => e.type === 'TOOL_CALL_END' && e.toolCallId === start.toolCallId);
    assert.ok(ended > 0, 'its call is whole: TOOL_CALL_END');
    const finished = first.events.at(-1);
    assert.equal(finished.type, 'RUN_FINISHED');
    assert.deepEqual(finished.outcome, { type: 'success', pendingToolCallIds: [start.toolCallId] });
    assert.ok(!first.events.some((e) => e.type === 'TOOL_CALL_RESULT'), 'the server did not run it');
    a.addMessage({ id: randomUUID(), role: 'tool', toolCallId: start.toolCallId, content: 'red' });
    const second = await run(a, { tools });
    assert.equal(second.events[0].type, 'RUN_STARTED');
    assert.match(textOf(second.events), /pick_color tool returned: red/);
    assert.equal(second.events.at(-1).outcome.type, 'success');
  });

  test('an approval is an interrupt; resume answers it, and the same resume again is refused harmlessly', async () => {
    const a = agent();
    say(a, 'write hello to notes.txt');
    const first = await run(a);
    const finished = first.events.at(-1);
    assert.equal(finished.outcome?.type, 'interrupt');
    const [interrupt] = finished.outcome.interrupts;
    assert.equal(interrupt.reason, 'tool_call');
    const call = first.events.find((e) => e.type === 'TOOL_CALL_START');
    assert.equal(interrupt.toolCallId, call.toolCallId);
    assert.deepEqual(
      a.pendingInterrupts.map((i) => i.id),
      [interrupt.id],
      'the agent holds it as pending',
    );
    const resume = [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }];
    const second = await run(a, { resume });
    const result = second.events.find((e) => e.type === 'TOOL_CALL_RESULT');
    assert.equal(result?.toolCallId, call.toolCallId);
    assert.equal(second.events.at(-1).outcome.type, 'success');
    const again = await fetch(`${server.http}/agui`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ threadId: a.threadId, runId: randomUUID(), messages: [], tools: [], context: [], resume }),
    });
    assert.equal(again.status, 409, 'nothing waits: refused, nothing ran twice');
  });

  test('an interrupt answered "cancelled" denies the call: the model hears it was denied, nothing ran', async () => {
    const a = agent();
    say(a, 'write hello to denied.txt');
    const first = await run(a);
    const [interrupt] = first.events.at(-1).outcome.interrupts;
    const second = await run(a, { resume: [{ interruptId: interrupt.id, status: 'cancelled' }] });
    assert.ok(!second.events.some((e) => e.type === 'TOOL_CALL_RESULT' && !/denied|declined|reject/i.test(e.content)), 'no result of the tool having run');
    assert.match(textOf(second.events), /denied/);
    assert.equal(second.events.at(-1).outcome.type, 'success');
  });

  test('bad input is refused with a clear error; a thread id follows the session id rules', async () => {
    const post = (body) =>
      fetch(`${server.http}/agui`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body,
      });
    const noThread = await post(JSON.stringify({ runId: 'r', messages: [] }));
    assert.equal(noThread.status, 400);
    assert.match(await noThread.text(), /threadId/);
    const notJson = await post('{');
    assert.equal(notJson.status, 400);
    const badId = await post(JSON.stringify({ threadId: 'x'.repeat(500), runId: 'r', messages: [{ id: 'u', role: 'user', content: 'hi' }] }));
    assert.equal(badId.status, 400, await badId.text());
    const valid = JSON.stringify({ threadId: `agui-${randomUUID()}`, runId: 'r', messages: [{ id: 'u', role: 'user', content: 'hi' }] });
    const noAuth = await fetch(`${server.http}/agui`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: valid });
    assert.equal(noAuth.status, 401);
  });
});

describe('the golden AG-UI streams', () => {
  // Over SSE (agui-sse) and over the WebSocket (agui, with weft's fields beside each event's own).
  test("every recorded event passes @ag-ui/core's schemas", () => {
    for (const name of ['agui-sse', 'agui']) {
      const dir = join(root, 'crates/protocol/tests/fixtures', name);
      const files = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
      assert.ok(files.length >= 5, name);
      for (const f of files) {
        for (const line of readFileSync(join(dir, f), 'utf8')
          .split('\n')
          .filter((l) => l && l !== '[END]')) {
          const parsed = EventSchema.safeParse(JSON.parse(line));
          assert.ok(parsed.success, `${name}/${f}: ${line}: ${parsed.error}`);
        }
      }
    }
  });
});
