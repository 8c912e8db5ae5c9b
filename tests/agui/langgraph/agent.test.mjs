// The AG-UI agent the suites of weft as an AG-UI client talk to (tests/agui/langgraph/agent.py:
// ag-ui-langgraph serving a LangGraph graph, its model the scripted LLM), driven by the real
// `HttpAgent` of `@ag-ui/client`: what it sends for text, a server tool, LangGraph's
// `interrupt()` and its resume, and a frontend tool — every event held to `@ag-ui/core`'s
// schemas. If ag-ui-langgraph changes what it sends, this suite says what changed before the
// client suites fail on it.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import { HttpAgent } from '@ag-ui/client';
import { EventSchema } from '@ag-ui/core/schemas';

import { startLangGraphAgent } from './server.mjs';

let lg;
before(async () => {
  lg = await startLangGraphAgent();
});
after(async () => {
  await lg?.stop();
});

const PICK_COLOR = {
  name: 'pick_color',
  description: 'Ask the page for a colour',
  parameters: { type: 'object', properties: { hint: { type: 'string' } } },
};

/** An agent on a fresh thread. */
const agent = () => new HttpAgent({ url: lg.url, threadId: `lg-${randomUUID()}` });
const say = (a, content) => a.addMessage({ id: randomUUID(), role: 'user', content });

/** One run: its events, each checked against AG-UI's schema. */
async function run(a, params = {}) {
  const events = [];
  await a.runAgent(
    { runId: randomUUID(), ...params },
    {
      onEvent({ event }) {
        const parsed = EventSchema.safeParse(event);
        assert.ok(parsed.success, `${event.type} fails @ag-ui/core's schema: ${parsed.error}`);
        events.push(event);
      },
    },
  );
  return events;
}

const types = (events) => events.map((e) => e.type);
const textOf = (events) =>
  events
    .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
    .map((e) => e.delta)
    .join('');

describe('ag-ui-langgraph serving the test graph, driven by @ag-ui/client', () => {
  test('text: one message between RUN_STARTED and RUN_FINISHED, the graph state as STATE_SNAPSHOT', async () => {
    const a = agent();
    say(a, 'count to 4');
    const events = await run(a);
    assert.equal(events[0].type, 'RUN_STARTED');
    assert.equal(events[0].threadId, a.threadId);
    assert.equal(events.at(-1).type, 'RUN_FINISHED');
    assert.equal(textOf(events), '1 2 3 4');
    assert.ok(types(events).includes('STATE_SNAPSHOT'));
    assert.ok(types(events).includes('MESSAGES_SNAPSHOT'));
  });

  test('a server tool: its call streamed, its result as TOOL_CALL_RESULT, then the answer', async () => {
    const a = agent();
    say(a, 'what time is it');
    const events = await run(a);
    const start = events.find((e) => e.type === 'TOOL_CALL_START');
    assert.equal(start?.toolCallName, 'get_time');
    const args = events
      .filter((e) => e.type === 'TOOL_CALL_ARGS' && e.toolCallId === start.toolCallId)
      .map((e) => e.delta)
      .join('');
    assert.deepEqual(JSON.parse(args), { timezone: 'UTC' });
    assert.equal(textOf(events), 'It is 2026-01-01T12:00:00Z (UTC).');
    assert.equal(events.at(-1).type, 'RUN_FINISHED');
  });

  test("LangGraph's interrupt(): RUN_FINISHED with an interrupt outcome naming the call; resume approves or denies", async () => {
    for (const approved of [true, false]) {
      const a = agent();
      say(a, 'write hello to notes.txt');
      const first = await run(a);
      const call = first.find((e) => e.type === 'TOOL_CALL_START');
      assert.equal(call?.toolCallName, 'write');
      const fin = first.at(-1);
      assert.equal(fin.type, 'RUN_FINISHED');
      assert.equal(fin.outcome?.type, 'interrupt');
      assert.equal(fin.outcome.interrupts.length, 1);
      const [interrupt] = fin.outcome.interrupts;
      assert.equal(interrupt.reason, 'tool_call');
      assert.equal(interrupt.toolCallId, call.toolCallId);
      // The interrupt's id is LangGraph's own, not the call's: a resume names that.
      assert.notEqual(interrupt.id, call.toolCallId);
      assert.ok(!types(first).includes('TOOL_CALL_RESULT'), 'nothing ran before the answer');

      const second = await run(a, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved } }] });
      const result = second.find((e) => e.type === 'TOOL_CALL_RESULT');
      assert.equal(result?.toolCallId, call.toolCallId);
      assert.equal(result.content, approved ? 'wrote 5 bytes to notes.txt' : 'denied: the user did not approve writing notes.txt');
      assert.equal(textOf(second), approved ? 'Done: I wrote notes.txt.' : 'Understood: writing notes.txt was denied, so I left it unchanged.');
      assert.equal(second.at(-1).type, 'RUN_FINISHED');
      assert.equal(second.at(-1).outcome, undefined);
    }
  });

  test('a frontend tool: its call ends the run; the next input carries the tool message and the answer follows', async () => {
    const a = agent();
    say(a, 'use pick_color with {"hint":"sky"}');
    const first = await run(a, { tools: [PICK_COLOR] });
    const call = first.find((e) => e.type === 'TOOL_CALL_START');
    assert.equal(call?.toolCallName, 'pick_color');
    assert.deepEqual(types(first).slice(-1), ['RUN_FINISHED']);
    assert.ok(!types(first).includes('TOOL_CALL_RESULT'), 'the page runs it, not the server');
    assert.ok(!types(first).includes('TEXT_MESSAGE_CONTENT'));

    a.addMessage({ id: randomUUID(), role: 'tool', toolCallId: call.toolCallId, content: 'blue' });
    const second = await run(a, { tools: [PICK_COLOR] });
    assert.equal(textOf(second), 'The pick_color tool returned: blue.');
  });
});
