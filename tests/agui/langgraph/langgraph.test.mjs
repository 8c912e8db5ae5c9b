// The AG-UI agent the suites of weft as an AG-UI client talk to (tests/agui/langgraph/agent.py:
// ag-ui-langgraph serving a LangGraph graph, its model the scripted LLM), driven by the real
// `HttpAgent` of `@ag-ui/client`: what it sends for text, a server tool, LangGraph's
// `interrupt()` and its resume, and a frontend tool — every event held to `@ag-ui/core`'s
// schemas. If ag-ui-langgraph changes what it sends, this suite says what changed before the
// client suites fail on it. Then weft-sdk/with-agui drives the same agent, in Node and in headless
// Chromium (a page on another origin than the agent's, which allows it: CORS).

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';

import { HttpAgent } from '@ag-ui/client';
import { EventSchema } from '@ag-ui/core/schemas';
import init, { Client } from 'weft-sdk/with-agui';

import { launchChromium, serveStatic } from '../../sdk/harness.mjs';
import { startLangGraphAgent } from './server.mjs';
import { textOf, types } from '../events.mjs';

// The page of the Chromium tests: weft-sdk/with-agui imported by its package name (an import
// map puts it where pkg/ is served), as an app imports it.
const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>weft-sdk/with-agui against ag-ui-langgraph</title>
<script type="importmap">{"imports": {"weft-sdk/with-agui": "/pkg/with-agui/index.mjs"}}</script>
<script type="module">
  import init, { Client } from 'weft-sdk/with-agui';
  await init();
  Object.assign(window, { Client, weftReady: true });
</script>
<pre id="log"></pre>`;

let lg;
let web;
before(async () => {
  await init();
  // The page's server first: the agent allows its origin.
  web = await serveStatic({ '/': PAGE, '/favicon.ico': '' });
  lg = await startLangGraphAgent({ allowOrigins: [web.url] });
});
after(async () => {
  await lg?.stop();
  await web?.close();
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

// weft-sdk as an AG-UI client of the same agent: `dialect: "agui"` with its http:// URL (runs
// are POSTs, the events come back as server-sent events; the session id is the AG-UI thread).
describe('weft-sdk (dialect "agui" over HTTP) driving ag-ui-langgraph', () => {
  /** A client on a fresh thread of the agent. */
  async function client() {
    const c = new Client({ url: lg.url, dialect: 'agui', sessionId: `sdk-${randomUUID()}` });
    await c.connect();
    return c;
  }

  test('text streams through onText; the reply, the transcript and the state', async () => {
    const c = await client();
    const run = c.run({ message: 'count to 5' });
    let text = '';
    run.onText((delta) => (text += delta));
    const { reply, runId } = await run.result;
    assert.equal(reply, '1 2 3 4 5');
    assert.equal(text, '1 2 3 4 5');
    const t = c.transcript();
    assert.deepEqual(
      t.messages.map((m) => [m.role, m.text]),
      [
        ['user', 'count to 5'],
        ['assistant', '1 2 3 4 5'],
      ],
    );
    assert.equal(t.runs.length, 1);
    assert.equal(t.runs[0].run_id, runId);
    assert.equal(t.runs[0].status, 'completed');
    // The graph's state as its last STATE_SNAPSHOT had it: the thread's messages.
    const state = /** @type {any} */ (t.runs[0].state);
    assert.deepEqual(
      state.messages.map((m) => m.content),
      ['count to 5', '1 2 3 4 5'],
    );

    // The thread goes on: the next input carries the history.
    const second = await c.run({ message: 'summarize' }).result;
    assert.match(second.reply, /^Summary of the conversation so far:/);
    assert.match(second.reply, /"count to 5"/);
    c.close();
  });

  test('a server tool: its call and result as tool events and in the transcript', async () => {
    const c = await client();
    const run = c.run({ message: 'what time is it' });
    const types = [];
    run.onEvent((ev) => types.push(ev.type));
    const { reply } = await run.result;
    assert.equal(reply, 'It is 2026-01-01T12:00:00Z (UTC).');
    assert.ok(types.includes('tool_call') && types.includes('tool_end'), types.join(' '));
    const [call] = c.transcript().tool_calls;
    assert.equal(call.name, 'get_time');
    assert.deepEqual(call.arguments, { timezone: 'UTC' });
    assert.equal(call.status, 'done');
    assert.equal(call.result, '2026-01-01T12:00:00Z (UTC)');
    c.close();
  });

  test("LangGraph's interrupt is onApproval; the answer goes back as resume and the same run finishes", async () => {
    for (const review of /** @type {const} */ (['yes', 'no-continue'])) {
      const c = await client();
      const asked = [];
      c.onApproval((request) => {
        asked.push(request);
        return { review };
      });
      const run = c.run({ message: 'write hello to notes.txt' });
      const { reply, runId } = await run.result;
      assert.equal(asked.length, 1);
      assert.equal(asked[0].name, 'write');
      assert.deepEqual(asked[0].arguments, { path: 'notes.txt', content: 'hello' });
      assert.equal(asked[0].runId, runId);
      const t = c.transcript();
      assert.equal(t.runs.length, 1, 'one run from the message to the reply');
      assert.equal(t.tool_calls.length, 1, 'the call streamed again on resume is applied once');
      if (review === 'yes') {
        assert.equal(reply, 'Done: I wrote notes.txt.');
        assert.equal(t.tool_calls[0].status, 'done');
        assert.equal(t.tool_calls[0].result, 'wrote 5 bytes to notes.txt');
      } else {
        assert.equal(reply, 'Understood: writing notes.txt was denied, so I left it unchanged.');
        assert.equal(t.tool_calls[0].status, 'denied');
      }
      c.close();
    }
  });

  test('a frontend tool: the registered handler runs the call, its result goes back, the run answers', async () => {
    const c = await client();
    const calls = [];
    c.registerTool(
      {
        name: 'pick_color',
        description: 'Ask the page for a colour',
        inputSchema: { type: 'object', properties: { hint: { type: 'string' } } },
        readOnly: true,
      },
      (args) => {
        calls.push(args);
        return 'blue';
      },
    );
    const { reply } = await c.run({ message: 'use pick_color with {"hint":"sky"}' }).result;
    assert.deepEqual(calls, [{ hint: 'sky' }]);
    assert.equal(reply, 'The pick_color tool returned: blue.');
    assert.equal(c.transcript().runs.length, 1);
    c.close();
  });

  test('the agent killed mid-run: the run fails with a clear error, nothing of it in the next input', async () => {
    const c = await client();
    // A slow model, so the reply is still streaming when the agent dies.
    const slow = (req) => {
      req.headers['x-scripted-delay-ms'] = '50';
    };
    lg.llm.server.prependListener('request', slow);
    const run = c.run({ message: 'long reply 200' });
    let text = '';
    run.onText((delta) => {
      if (!text) lg.kill();
      text += delta;
    });
    await assert.rejects(run.result, (/** @type {any} */ e) => {
      assert.equal(e.code, 'disconnected');
      assert.match(e.message, /broke off|ended before the run finished/);
      return true;
    });
    const t = c.transcript();
    assert.equal(t.runs[0].status, 'failed');
    assert.match(t.runs[0].error ?? '', /broke off|ended before the run finished/);
    assert.ok(text.length > 0, 'it was cut mid-stream');
    // Nothing half-written: the cut reply is not kept as if it were a message.
    assert.deepEqual(
      t.messages.map((m) => [m.role, m.text]),
      [['user', 'long reply 200']],
    );
    lg.llm.server.removeListener('request', slow);
    // A new agent process (its threads were in the old one's memory) answers the next run,
    // and the run sent carries the failed run's message, not half its reply.
    await lg.restart();
    const again = await c.run({ message: 'count to 2' }).result;
    assert.equal(again.reply, '1 2');
    // What the new agent was sent, as its state shows the thread: both messages, no half reply.
    const state = /** @type {any} */ (c.transcript().runs[1].state);
    assert.deepEqual(
      state.messages.map((m) => [m.type, m.content]),
      [
        ['human', 'long reply 200'],
        ['human', 'count to 2'],
        ['ai', '1 2'],
      ],
    );
    c.close();
  });
});

// weft-sdk/with-agui in headless Chromium against the same agent: each run a cross-origin
// `fetch` (the agent allows the page's origin), its events read from the response's stream.
describe('weft-sdk/with-agui in headless Chromium driving ag-ui-langgraph', () => {
  /** @type {any} */
  let browser;
  /** @type {any} */
  let page;
  const pageErrors = [];
  before(async () => {
    browser = await launchChromium();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    page.on('pageerror', (/** @type {any} */ e) => pageErrors.push(String(e)));
    await page.goto(`${web.url}/`);
    await page.waitForFunction(() => /** @type {any} */ (window).weftReady === true, null, { timeout: 30_000 });
    assert.notEqual(new URL(web.url).origin, new URL(lg.url).origin, 'the page is on another origin than the agent');
  });
  after(async () => {
    if (page) {
      const dir = new URL('../../../test-results/', import.meta.url);
      mkdirSync(dir, { recursive: true });
      await page.screenshot({ path: new URL('agui-langgraph-browser.png', dir).pathname, fullPage: true }).catch(() => {});
    }
    await browser?.close();
    assert.deepEqual(pageErrors, []);
  });

  /**
   * One client run in the page on a fresh thread, with `review` the answer `onApproval` gives
   * and, with `pickColor`, the page's `pick_color` tool registered; resolves to the reply, the
   * streamed text, the event types, what the handlers saw and the transcript — or the error.
   * @param {string} message
   * @param {{review?: string, pickColor?: boolean}} [opts]
   */
  const runInPage = (message, opts = {}) =>
    page.evaluate(
      async (/** @type {any} */ { url, message, review, pickColor }) => {
        const w = /** @type {any} */ (window);
        const c = new w.Client({ url, dialect: 'agui', sessionId: `browser-${crypto.randomUUID()}` });
        await c.connect();
        const seen = [];
        if (review) {
          c.onApproval((/** @type {any} */ r) => {
            seen.push({ name: r.name, arguments: r.arguments, runId: r.runId });
            return { review };
          });
        }
        if (pickColor) {
          c.registerTool(
            {
              name: 'pick_color',
              description: 'Ask the page for a colour',
              inputSchema: { type: 'object', properties: { hint: { type: 'string' } } },
              readOnly: true,
            },
            (/** @type {any} */ args) => {
              seen.push(args);
              return 'blue';
            },
          );
        }
        const run = c.run({ message });
        let text = '';
        const types = [];
        run.onText((/** @type {string} */ d) => (text += d));
        run.onEvent((/** @type {any} */ ev) => types.push(ev.type));
        try {
          const { reply, runId } = await run.result;
          document.getElementById('log')?.append(`${message} → ${reply}\n`);
          return { reply, runId, text, types, seen, transcript: c.transcript() };
        } catch (/** @type {any} */ e) {
          return { error: { code: e.code, message: e.message }, seen };
        } finally {
          c.close();
        }
      },
      { url: lg.url, message, review: opts.review, pickColor: opts.pickColor ?? false },
    );

  test('text streams through onText; the reply, the transcript and the graph state', async () => {
    const out = await runInPage('count to 6');
    assert.equal(out.error, undefined, JSON.stringify(out.error));
    assert.equal(out.reply, '1 2 3 4 5 6');
    assert.equal(out.text, '1 2 3 4 5 6');
    const t = out.transcript;
    assert.deepEqual(
      t.messages.map((m) => [m.role, m.text]),
      [
        ['user', 'count to 6'],
        ['assistant', '1 2 3 4 5 6'],
      ],
    );
    assert.equal(t.runs.length, 1);
    assert.equal(t.runs[0].run_id, out.runId);
    assert.equal(t.runs[0].status, 'completed');
    assert.deepEqual(
      t.runs[0].state.messages.map((m) => m.content),
      ['count to 6', '1 2 3 4 5 6'],
    );
  });

  test('a server tool: its call and result as tool events and in the transcript', async () => {
    const out = await runInPage('what time is it');
    assert.equal(out.error, undefined, JSON.stringify(out.error));
    assert.equal(out.reply, 'It is 2026-01-01T12:00:00Z (UTC).');
    assert.ok(out.types.includes('tool_call') && out.types.includes('tool_end'), out.types.join(' '));
    const [call] = out.transcript.tool_calls;
    assert.equal(call.name, 'get_time');
    assert.deepEqual(call.arguments, { timezone: 'UTC' });
    assert.equal(call.status, 'done');
    assert.equal(call.result, '2026-01-01T12:00:00Z (UTC)');
  });

  test("LangGraph's interrupt is onApproval in the page; the answer resumes the same run", async () => {
    for (const review of ['yes', 'no-continue']) {
      const out = await runInPage('write hello to notes.txt', { review });
      assert.equal(out.error, undefined, JSON.stringify(out.error));
      assert.deepEqual(out.seen, [{ name: 'write', arguments: { path: 'notes.txt', content: 'hello' }, runId: out.runId }]);
      const t = out.transcript;
      assert.equal(t.runs.length, 1, 'one run from the message to the reply');
      assert.equal(t.tool_calls.length, 1);
      if (review === 'yes') {
        assert.equal(out.reply, 'Done: I wrote notes.txt.');
        assert.equal(t.tool_calls[0].status, 'done');
        assert.equal(t.tool_calls[0].result, 'wrote 5 bytes to notes.txt');
      } else {
        assert.equal(out.reply, 'Understood: writing notes.txt was denied, so I left it unchanged.');
        assert.equal(t.tool_calls[0].status, 'denied');
      }
    }
  });

  test('a frontend tool: registerTool runs the call in the page, its result goes back, the run answers', async () => {
    const out = await runInPage('use pick_color with {"hint":"sky"}', { pickColor: true });
    assert.equal(out.error, undefined, JSON.stringify(out.error));
    assert.deepEqual(out.seen, [{ hint: 'sky' }]);
    assert.equal(out.reply, 'The pick_color tool returned: blue.');
    assert.equal(out.transcript.runs.length, 1);
    assert.equal(out.transcript.tool_calls[0].name, 'pick_color');
  });
});
