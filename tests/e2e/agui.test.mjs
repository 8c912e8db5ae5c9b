// AG-UI on the wire, against the real Worker under `wrangler dev` (one for the whole file):
// - the real `HttpAgent` from `@ag-ui/client` pointed at `POST /agui` (a `RunAgentInput` in, the
//   run's AG-UI events out as server-sent events), every event it receives held to
//   `@ag-ui/core`'s own schemas. The thread is a weft session: a second run sees the first; a
//   built-in tool runs on the server; a frontend tool (the input's `tools`) ends the run with its
//   call, and the next input's `tool` message carries on; an approval is an interrupt, answered
//   by the next input's `resume`; `abortRun()` drops the stream and the next message cancels;
// - the WebSocket at `GET /agui` frame by frame (a raw client): a run, a cut and a resume by
//   offset, an interrupt, cancel, bad input, a client without weft's subprotocol;
// - weft-sdk/agui's `WeftAgent` (an `AbstractAgent`) in Node and in headless Chromium: a run, a
//   socket cut mid-run and resumed (every event once), an interrupt answered by resume,
//   `abortRun()` as cancel, `connectAgent()` after a reload;
// - an unanswered interrupt expiring (a short `APPROVAL_TIMEOUT_MS` on this suite's Worker).

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { HttpAgent, runHttpRequest, transformHttpEventStream } from '@ag-ui/client';
import { WeftAgent } from 'weft-sdk/agui';
import WebSocket from 'ws';
import { EventSchema, RunAgentInputSchema } from '@ag-ui/core/schemas';

import { build } from 'esbuild';

import { launchChromium, relay, serveStatic } from '../sdk/harness.mjs';
import { Conn } from './client.mjs';
import { startServer } from './server.mjs';
import { textOf, types } from '../agui/events.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const TOKEN = 'agui-token';
const APPROVAL_TIMEOUT_MS = 6000;
let server;
before(
  async () => {
    // Short enough that an unanswered interrupt expires within a test, long enough that every
    // answered one is answered well before it.
    server = await startServer({ delayMs: 2, vars: { WEFT_AUTH_TOKEN: TOKEN, APPROVAL_TIMEOUT_MS: String(APPROVAL_TIMEOUT_MS) } });
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

  test("abortRun() drops the stream, not the run; the thread's next message cancels it (as the AI SDK's stop())", async () => {
    const a = agent();
    say(a, 'count to 120');
    const events = [];
    // Slow enough that the run is still streaming when the next message comes.
    server.pace(50);
    await a
      .runAgent(
        { runId: randomUUID() },
        {
          onEvent({ event }) {
            events.push(event);
            if (events.length === 5) a.abortRun();
          },
        },
      )
      .catch(() => {});
    server.pace(null);
    const runId = events[0].runId;
    // The run went on after the page left it: a disconnect never cancels.
    say(a, 'count to 3');
    const next = await run(a);
    assert.equal(textOf(next.events), '1 2 3', 'the next message is not refused as busy');
    // The first run ended cancelled when the next message came: its log says so to whoever
    // resumes it.
    const c = await openAgui(a.threadId);
    c.send({ type: 'resume', run_id: runId, after_event_id: 0 });
    const finished = await c.wait(finishedOf(runId));
    assert.equal(finished.outcome.type, 'cancelled');
    assert.ok(textOf(ofRun(c, runId)).split(' ').length < 120);
    c.close();
  });

  test("a page reloaded mid-run reattaches with connectAgent(): HttpAgent's connect() reading GET /agui/{threadId}/stream", async () => {
    // HttpAgent 1.0 has no connect() of its own: this is the README's subclass, on
    // @ag-ui/client's own request and stream parsing.
    class ReattachingAgent extends HttpAgent {
      /** @param {any} _input */
      connect(_input) {
        const url = `${this.url}/${encodeURIComponent(this.threadId)}/stream`;
        return transformHttpEventStream(runHttpRequest(() => this.fetch(url, { headers: this.headers })));
      }
    }
    const a = agent();
    say(a, 'count to 120');
    server.pace(20);
    const started = [];
    /** @type {Promise<any> | undefined} */
    let reattached;
    const running = a.runAgent(
      { runId: randomUUID() },
      {
        onEvent({ event }) {
          started.push(event);
          if (!reattached && /\b10\b/.test(textOf(started))) {
            const reloaded = new ReattachingAgent({ url: `${server.http}/agui`, headers: auth, threadId: a.threadId });
            const events = [];
            reattached = reloaded.connectAgent({}, { onEvent: ({ event }) => void events.push(event) }).then((r) => ({ ...r, events, agent: reloaded }));
          }
        },
      },
    );
    const { result } = await running;
    server.pace(null);
    assert.ok(reattached, 'the page reloaded mid-run');
    const again = await reattached;
    assert.equal(again.events[0].type, 'RUN_STARTED');
    assert.equal(again.events.filter((e) => e.type === 'RUN_STARTED').length, 1);
    assert.equal(textOf(again.events), result, 'the whole run, once');
    assert.equal(again.agent.messages.find((m) => m.role === 'assistant')?.content, result);
    // Nothing running: 204, and nothing to replay.
    const idle = await fetch(`${server.http}/agui/${encodeURIComponent(a.threadId)}/stream`, { headers: auth });
    assert.equal(idle.status, 204);
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

/** A socket at `GET /agui` on session `sid` (weft's client: it offers `weft.agui`). */
const openAgui = (sid, protocols = ['weft.agui']) => Conn.open(`${server.url}/agui?session_id=${sid}&token=${TOKEN}`, protocols);

/** A `RunAgentInput` as one frame: a user message, or `extra` (its tool messages, its `resume`). */
const input = (content, extra = {}) => ({
  threadId: '',
  runId: randomUUID(),
  messages: content === null ? [] : [{ id: randomUUID(), role: 'user', content }],
  tools: [],
  context: [],
  ...extra,
});

/** The AG-UI events of run `runId` a socket got (every frame of a run is one). */
const ofRun = (conn, runId) => conn.frames.filter((f) => f.run_id === runId);

/** Every frame passes `@ag-ui/core`'s event schema, weft's fields beside its own included. */
function assertSchema(frames) {
  for (const f of frames) {
    const parsed = EventSchema.safeParse(f);
    assert.ok(parsed.success, `${f.type} fails @ag-ui/core's schema: ${parsed.error}`);
  }
}

/** 1, 2, 3, …: nothing lost, nothing twice. */
const assertDense = (ids) =>
  assert.deepEqual(
    ids,
    ids.map((_, i) => i + 1),
  );

const finishedOf =
  (runId, from = 0) =>
  (f) =>
    f.type === 'RUN_FINISHED' && f.run_id === runId;

describe('AG-UI over the WebSocket at /agui', () => {
  test('a run: one RunAgentInput frame in, one event a frame out, each with run_id and a dense event_id', async () => {
    const sid = `agui-ws-${randomUUID()}`;
    const c = await openAgui(sid);
    assert.equal(c.ws.protocol, 'weft.agui');
    const first = input('count to 5');
    c.send(first);
    const finished = await c.wait(finishedOf(first.runId));
    const events = ofRun(c, first.runId);
    assertSchema(events);
    assert.equal(events[0].type, 'RUN_STARTED');
    assert.equal(events[0].runId, first.runId, "the input's runId names the run");
    assert.equal(events[0].threadId, sid, 'the thread is the socket session');
    assert.equal(events[0].user_message, 'count to 5');
    assertDense(events.map((e) => e.event_id));
    assert.equal(textOf(events), '1 2 3 4 5');
    assert.equal(finished.outcome.type, 'success');
    assert.equal(finished.result, '1 2 3 4 5');
    // The same events as over SSE, once weft's fields are set aside: the next run, its thread
    // now named, hears the first.
    const second = input('summarize', { threadId: sid });
    c.send(second);
    await c.wait(finishedOf(second.runId));
    assert.match(textOf(ofRun(c, second.runId)), /count to 5/);
    c.close();
  });

  test('a socket cut mid-run resumes by offset: every event once, in order', async () => {
    const sid = `agui-ws-${randomUUID()}`;
    const a = await openAgui(sid);
    const run = input('count to 120');
    a.send(run);
    await a.wait((f) => f.type === 'TEXT_MESSAGE_CONTENT' && /\b10\b/.test(textOf(a.frames)));
    a.kill();
    const seen = ofRun(a, run.runId);
    const last = seen.at(-1).event_id;
    const b = await openAgui(sid);
    b.send({ type: 'resume', run_id: run.runId, after_event_id: last });
    const finished = await b.wait(finishedOf(run.runId));
    const rest = ofRun(b, run.runId);
    assertSchema(rest);
    const all = [...seen, ...rest];
    assertDense(all.map((e) => e.event_id));
    assert.equal(all.filter((e) => e.type === 'RUN_STARTED').length, 1);
    assert.equal(textOf(all), finished.result);
    assert.equal(finished.result.split(' ').length, 120);
    b.close();
  });

  test("an approval is an interrupt; the next input's resume answers it, and the run goes on in a new AG-UI run", async () => {
    const sid = `agui-ws-${randomUUID()}`;
    const c = await openAgui(sid);
    const run = input('write hello to notes.txt');
    c.send(run);
    const interrupted = await c.wait(finishedOf(run.runId));
    assert.equal(interrupted.outcome.type, 'interrupt');
    const [interrupt] = interrupted.outcome.interrupts;
    assert.equal(interrupt.reason, 'tool_call');
    assert.equal(interrupted.tool, 'apply_patch', "weft's field: the call's tool");
    const from = c.frames.length;
    c.send(input(null, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] }));
    const done = await c.wait((f) => finishedOf(run.runId)(f) && f.outcome.type === 'success', { from });
    const events = ofRun(c, run.runId);
    assertSchema(events);
    assertDense(events.map((e) => e.event_id));
    const next = c.frames.slice(from).filter((f) => f.run_id === run.runId);
    assert.equal(next[0].type, 'RUN_STARTED', 'the answer starts the next AG-UI run');
    assert.equal(next[0].runId, run.runId);
    const result = next.find((e) => e.type === 'TOOL_CALL_RESULT');
    assert.equal(result?.toolCallId, interrupt.toolCallId);
    assert.ok(done.result.length > 0);
    // The same answer again finds nothing waiting: a clear refusal, nothing runs twice.
    const again = c.frames.length;
    c.send(input(null, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] }));
    const refused = await c.wait((f) => f.type === 'RUN_ERROR', { from: again });
    assertSchema([refused]);
    assert.ok(refused.message.length > 0 && refused.code, JSON.stringify(refused));
    c.close();
  });

  test('cancel stops the run: its AG-UI run finishes with outcome cancelled', async () => {
    const sid = `agui-ws-${randomUUID()}`;
    const c = await openAgui(sid);
    const run = input('count to 120');
    c.send(run);
    await c.wait((f) => f.type === 'TEXT_MESSAGE_CONTENT');
    c.send({ type: 'cancel', run_id: run.runId });
    const finished = await c.wait(finishedOf(run.runId));
    assert.equal(finished.outcome.type, 'cancelled');
    const events = ofRun(c, run.runId);
    assertSchema(events);
    assertDense(events.map((e) => e.event_id));
    c.close();
  });

  test("bad input is a RUN_ERROR with its code; a client that offers no subprotocol gets the events alone, none of weft's fields", async () => {
    const c = await openAgui(`agui-ws-${randomUUID()}`);
    c.send('{"threadId": 5}');
    const error = await c.wait((f) => f.type === 'RUN_ERROR');
    assertSchema([error]);
    assert.match(error.message, /RunAgentInput/);
    c.send({ type: 'dance' });
    const unknown = await c.wait((f) => f.type === 'RUN_ERROR' && f.code === 'unknown_type');
    assert.match(unknown.message, /dance/);
    c.close();
    const plain = await openAgui(`agui-ws-${randomUUID()}`, []);
    const run = input('count to 3');
    plain.send(run);
    await plain.wait((f) => f.type === 'RUN_FINISHED' && f.runId === run.runId);
    const events = plain.frames;
    assertSchema(events);
    assert.ok(!events.some((e) => 'user_message' in e || 'run_id' in e || 'event_id' in e), "none of weft's fields");
    assert.equal(textOf(events), '1 2 3');
    plain.close();
  });
});

/**
 * A WeftAgent on thread `threadId` (a fresh one by default), on Node's `ws` (Node 20 has no
 * WebSocket of its own; the same API), recording every frame its sockets receive (`frames`).
 */
function weftAgent(threadId = `agui-weft-${randomUUID()}`) {
  /** @type {Record<string, any>[]} */
  const frames = [];
  class Recording extends WebSocket {
    /** @param {string} url @param {string[]} protocols */
    constructor(url, protocols) {
      super(url, protocols);
      /** @type {any} */ (this).addEventListener('message', (/** @type {MessageEvent} */ m) => frames.push(JSON.parse(String(m.data))));
    }
  }
  const socketClass = /** @type {any} */ (Recording);
  /** @type {any} */
  const a = new WeftAgent({ url: `${server.url}/agui`, token: TOKEN, threadId, WebSocket: socketClass });
  a.seen = [];
  a.frames = frames;
  return a;
}

/** The distinct event ids of run `runId` among an agent's received frames: 1, 2, … when nothing is missing. */
const idsOf = (frames, runId) => [...new Set(frames.filter((f) => f.run_id === runId).map((f) => f.event_id))].sort((x, y) => x - y);

describe('weft-sdk/agui: WeftAgent, an AbstractAgent over the WebSocket', () => {
  test('a run, as with HttpAgent: the events (each passing the schema), the reply as a message, the result', async () => {
    const a = weftAgent();
    say(a, 'count to 5');
    const { events, result } = await run(a);
    assert.equal(events[0].type, 'RUN_STARTED');
    assert.equal(textOf(events), '1 2 3 4 5');
    assert.equal(result, '1 2 3 4 5');
    assert.equal(a.messages.find((m) => m.role === 'assistant')?.content, '1 2 3 4 5');
    say(a, 'summarize');
    const second = await run(a);
    assert.match(textOf(second.events), /count to 5/, 'one socket, one thread');
    a.close();
  });

  test('a socket cut mid-run is reopened and the run resumed: every event once, in order', async () => {
    const a = weftAgent();
    say(a, 'count to 120');
    const events = [];
    let cut = 0;
    const runId = randomUUID();
    const { result } = await a.runAgent(
      { runId },
      {
        onEvent({ event }) {
          assert.ok(EventSchema.safeParse(event).success, event.type);
          assert.ok(!('event_id' in event), "weft's fields are taken off");
          events.push(event);
          if (!cut && /\b10\b/.test(textOf(events))) {
            cut = events.length;
            a.socket.terminate();
          }
        },
      },
    );
    assert.ok(cut > 0 && cut < events.length, 'events came after the cut');
    // The run's every event, once: as many delivered as the run has, none missing.
    const ids = idsOf(a.frames, runId);
    assertDense(ids);
    assert.equal(events.length, ids.length);
    assert.equal(events.filter((e) => e.type === 'RUN_STARTED').length, 1);
    assert.equal(textOf(events), result);
    assert.equal(String(result).split(' ').length, 120);
    a.close();
  });

  test('an approval is an interrupt the agent holds; the next run answers it with resume', async () => {
    const a = weftAgent();
    say(a, 'write hello to notes.txt');
    const first = await run(a);
    const finished = first.events.at(-1);
    assert.equal(finished.outcome?.type, 'interrupt');
    const [interrupt] = a.pendingInterrupts;
    assert.equal(interrupt.reason, 'tool_call');
    const second = await run(a, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] });
    assert.equal(second.events[0].type, 'RUN_STARTED');
    assert.equal(second.events.find((e) => e.type === 'TOOL_CALL_RESULT')?.toolCallId, interrupt.toolCallId);
    assert.equal(second.events.at(-1).outcome.type, 'success');
    a.close();
  });

  test("a frontend tool: its call ends the AG-UI run as over HTTP; the next run's tool message carries on", async () => {
    const a = weftAgent();
    const tools = [{ name: 'pick_color', description: 'asks the user for a color', parameters: { type: 'object', properties: { hint: { type: 'string' } } } }];
    say(a, 'use pick_color with {"hint":"warm"}');
    const first = await run(a, { tools });
    const start = first.events.find((e) => e.type === 'TOOL_CALL_START');
    assert.equal(start?.toolCallName, 'pick_color');
    const finished = first.events.at(-1);
    assert.equal(finished.type, 'RUN_FINISHED');
    assert.deepEqual(finished.outcome, { type: 'success', pendingToolCallIds: [start.toolCallId] });
    assert.ok(!first.events.some((e) => e.type === 'TOOL_CALL_RESULT'), 'the server did not run it');
    a.addMessage({ id: randomUUID(), role: 'tool', toolCallId: start.toolCallId, content: 'red' });
    const second = await run(a, { tools });
    assert.equal(second.events[0].type, 'RUN_STARTED');
    assert.equal(second.events.find((e) => e.type === 'TOOL_CALL_RESULT')?.toolCallId, start.toolCallId);
    assert.match(textOf(second.events), /pick_color tool returned: red/);
    assert.equal(second.events.at(-1).outcome.type, 'success');
    a.close();
  });

  test('abortRun() cancels the run on the server: it finishes with outcome cancelled', async () => {
    const a = weftAgent();
    say(a, 'count to 120');
    const events = [];
    await a.runAgent(
      { runId: randomUUID() },
      {
        onEvent({ event }) {
          events.push(event);
          if (events.length === 5) a.abortRun();
        },
      },
    );
    const last = /** @type {any} */ (events.at(-1));
    assert.equal(last.type, 'RUN_FINISHED');
    assert.equal(last.outcome.type, 'cancelled');
    assert.ok(textOf(events).split(' ').length < 120, 'it stopped');
    a.close();
  });

  test('a page reloaded mid-run reattaches with connectAgent(): the run from its start, then live', async () => {
    const threadId = `agui-weft-${randomUUID()}`;
    const first = weftAgent(threadId);
    say(first, 'count to 120');
    const started = [];
    /** @type {Promise<any> | undefined} */
    let reattached;
    const running = first.runAgent(
      { runId: randomUUID() },
      {
        onEvent({ event }) {
          started.push(event);
          if (!reattached && /\b10\b/.test(textOf(started))) {
            // The "reload": a new agent on the same thread, knowing nothing of the run.
            const second = weftAgent(threadId);
            const events = [];
            reattached = second.connectAgent({}, { onEvent: ({ event }) => void events.push(event) }).then((r) => ({ ...r, events, agent: second }));
          }
        },
      },
    );
    const { result } = await running;
    assert.ok(reattached, 'the page reloaded mid-run');
    const again = await reattached;
    assert.equal(again.events[0].type, 'RUN_STARTED');
    const runId = again.agent.frames.find((f) => f.type === 'RUN_STARTED').run_id;
    assert.equal(again.events.length, idsOf(again.agent.frames, runId).length);
    assertDense(idsOf(again.agent.frames, runId));
    assert.equal(textOf(again.events), result, 'the whole run, once');
    assert.equal(again.agent.messages.find((m) => m.role === 'assistant')?.content, result);
    first.close();
    again.agent.close();
    // Nothing running: connectAgent() ends at once, with nothing.
    const idle = weftAgent(threadId);
    const events = [];
    await idle.connectAgent({}, { onEvent: ({ event }) => void events.push(event) });
    assert.deepEqual(events, []);
    idle.close();
  });
});

describe('WeftAgent in headless Chromium', () => {
  /** @type {any} */
  let browser;
  /** @type {any} */
  let page;
  /** @type {any} */
  let web;
  /** @type {any} */
  let cutter;
  const dir = mkdtempSync(join(tmpdir(), 'weft-agui-'));
  before(async () => {
    // The page: WeftAgent as an app bundles it, with AG-UI's schemas to check what it gets.
    const entry = `import { WeftAgent } from 'weft-sdk/agui';
      import { EventSchema } from '@ag-ui/core/schemas';
      Object.assign(window, { WeftAgent, EventSchema });
      document.documentElement.dataset.ready = 'true';`;
    await build({
      stdin: { contents: entry, resolveDir: root, loader: 'js' },
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      outfile: join(dir, 'agui.js'),
      logLevel: 'silent',
    });
    web = await serveStatic({
      '/': '<!doctype html><script type="module" src="/agui.js"></script>',
      '/agui.js': pathToFileURL(join(dir, 'agui.js')),
    });
    // The page reaches the Worker through a relay the test can cut: a dropped network.
    cutter = await relay({ host: '127.0.0.1', port: Number(new URL(server.http).port) });
    browser = await launchChromium();
    page = await browser.context.newPage();
    await page.goto(`${web.url}/`);
    await page.waitForSelector('html[data-ready=true]', { timeout: 15_000 });
  });
  after(async () => {
    await browser?.close();
    await web?.close();
    await cutter?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts a run in the page on a fresh thread; resolves to what it received and its result. */
  const runInPage = (content, params = {}) =>
    page.evaluate(
      async (/** @type {any} */ { url, token, content, params }) => {
        const w = /** @type {any} */ (window);
        w.agent ??= new w.WeftAgent({ url, token, threadId: crypto.randomUUID() });
        if (content) w.agent.addMessage({ id: crypto.randomUUID(), role: 'user', content });
        const events = (w.events = []);
        const failing = [];
        const { result } = await w.agent.runAgent(
          { runId: crypto.randomUUID(), ...params },
          {
            onEvent: (/** @type {any} */ { event }) => {
              if (!w.EventSchema.safeParse(event).success) failing.push(event.type);
              events.push(event);
            },
          },
        );
        return { events, result, failing, interrupts: w.agent.pendingInterrupts };
      },
      { url: `ws://127.0.0.1:${cutter.port}/agui`, token: TOKEN, content, params },
    );

  test('a run, the network cut mid-run: the agent reconnects and resumes, every event once, in order', async () => {
    await page.evaluate(() => void delete (/** @type {any} */ (window).agent));
    const before = cutter.connections;
    // Slow enough that the cut comes mid-run.
    server.pace(20);
    const running = runInPage('count to 120');
    await page.waitForFunction(
      () => {
        const events = /** @type {any[]} */ (/** @type {any} */ (window).events ?? []);
        return events.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').length >= 10;
      },
      null,
      { timeout: 20_000, polling: 20 },
    );
    assert.ok(cutter.cut() > 0, 'the socket was cut');
    const { events, result, failing } = await running;
    server.pace(null);
    assert.deepEqual(failing, [], "every event passes @ag-ui/core's schema");
    assert.ok(cutter.connections >= before + 2, 'a second socket');
    assert.equal(events.filter((e) => e.type === 'RUN_STARTED').length, 1);
    // Each word once, in order (the Worker may publish two words read together as one delta).
    assert.equal(textOf(events), result);
    assert.equal(result, Array.from({ length: 120 }, (_, i) => i + 1).join(' '));
    assert.equal(
      new Set(events.filter((e) => e.type === 'TEXT_MESSAGE_START').map((e) => e.messageId)).size,
      events.filter((e) => e.type === 'TEXT_MESSAGE_START').length,
    );
    assert.equal(events.at(-1).type, 'RUN_FINISHED');
  });

  test('an interrupt, answered by resume in the next run', async () => {
    await page.evaluate(() => void delete (/** @type {any} */ (window).agent));
    const first = await runInPage('write hello to notes.txt');
    assert.equal(first.events.at(-1).outcome?.type, 'interrupt');
    const [interrupt] = first.interrupts;
    assert.equal(interrupt.reason, 'tool_call');
    const second = await runInPage(null, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] });
    assert.deepEqual(second.failing, []);
    assert.equal(second.events[0].type, 'RUN_STARTED');
    assert.equal(second.events.find((e) => e.type === 'TOOL_CALL_RESULT')?.toolCallId, interrupt.toolCallId);
    assert.equal(second.events.at(-1).outcome.type, 'success');
  });
});

describe('an unanswered interrupt expires (APPROVAL_TIMEOUT_MS)', () => {
  test('over the socket: the run goes on without the call; a late resume is refused clearly', async () => {
    const sid = `agui-ws-${randomUUID()}`;
    const c = await openAgui(sid);
    const run = input('write hello to late.txt');
    c.send(run);
    const interrupted = await c.wait(finishedOf(run.runId));
    const [interrupt] = interrupted.outcome.interrupts;
    const from = c.frames.length;
    const done = await c.wait((f) => finishedOf(run.runId)(f) && f.outcome.type === 'success', { from, timeout: APPROVAL_TIMEOUT_MS + 20_000 });
    const next = c.frames.slice(from).filter((f) => f.run_id === run.runId);
    assert.equal(next[0].type, 'RUN_STARTED', 'the expiry goes on in a new AG-UI run');
    const resolved = next.find((f) => f.type === 'CUSTOM' && f.name === 'weft:approval_resolved');
    assert.match(JSON.stringify(resolved?.value), /nobody answered/);
    assert.ok(!next.some((f) => f.type === 'TOOL_CALL_RESULT' && !/nobody answered|denied|not run/i.test(f.content)), 'the call did not run');
    assert.ok(done.result.length > 0);
    const late = c.frames.length;
    c.send(input(null, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] }));
    const refused = await c.wait((f) => f.type === 'RUN_ERROR', { from: late });
    assert.ok(refused.message.length > 0 && refused.code, JSON.stringify(refused));
    c.close();
  });

  test('over SSE: a late resume is a 409 that says nothing waits', async () => {
    const a = agent();
    say(a, 'write hello to late-sse.txt');
    const first = await run(a);
    const [interrupt] = first.events.at(-1).outcome.interrupts;
    // Watch the thread on a socket until the expiry has let the run finish.
    const c = await openAgui(a.threadId);
    c.send({ type: 'resume', run_id: '', after_event_id: 0 });
    await c.wait((f) => f.type === 'RUN_FINISHED' && f.outcome.type === 'success', { timeout: APPROVAL_TIMEOUT_MS + 20_000 });
    c.close();
    const late = await fetch(`${server.http}/agui`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        threadId: a.threadId,
        runId: randomUUID(),
        messages: [],
        tools: [],
        context: [],
        resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }],
      }),
    });
    assert.equal(late.status, 409);
    assert.match(await late.text(), /no run of this chat is waiting/);
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
