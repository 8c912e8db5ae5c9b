// weft-sdk in headless Chromium against the real server: the Worker under `wrangler dev` with
// the scripted LLM (tests/e2e/server.mjs), auth token on. A page imports the built package
// from pkg/ as a web app would (`import init, { Client, Reassembler } from "/pkg/index.mjs"`)
// and the tests drive it with `page.evaluate`, in each of the four dialects: streamed text,
// tool calls with streamed arguments, approvals answered through `onApproval` (every
// decision), client-side tools, the network cut mid-run and the run resumed with nothing lost
// or doubled, cancel, errors as `Error`s with a `code`; loom's tool and history requests.
//
// The page reaches the server through a TCP relay (tests/sdk/harness.mjs) so a test can cut the
// network mid-run — the browser sees close code 1006, as when Wi-Fi drops — and a tap on the
// page's WebSocket checks what went over the wire (URL, subprotocols, heartbeats, resume).
// Needs scripts/build-sdk first (scripts/test runs it). Screenshot: test-results/sdk-browser.png.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, afterEach, before, describe, test } from 'node:test';

import { startServer } from '../e2e/server.mjs';
import { launchChromium, relay, serveStatic } from './harness.mjs';

const DIALECTS = ['loom', 'agentloop', 'agentchat', 'cueso'];
const ENDPOINT = { loom: '/', agentloop: '/agentloop', agentchat: '/ws', cueso: '/ws/chat' };
/** agentchat sends each model response whole; the others stream it. */
const STREAMS_TEXT = { loom: true, agentloop: true, agentchat: false, cueso: true };
/** Tool-call arguments stream in loom (`tool_call_chunk`) and cueso (`tool_call_delta`). */
const STREAMS_ARGS = { loom: true, agentloop: false, agentchat: false, cueso: true };
/** Sockets of these dialects declare themselves approvers (`client_tools` `approvals: true`). */
const DECLARES_APPROVER = { loom: false, agentloop: false, agentchat: true, cueso: true };

const TOKEN = 'sdk-browser-7f3a';
const PATCH = (file, text) => `*** Begin Patch\n*** Add File: ${file}\n+${text}\n*** End Patch`;
const EXPLANATION =
  'The command `apply_patch` applies a patch that adds, changes or deletes files in the workspace. ' +
  'It changes files, so approve it only if that is what you want.';
const FAULT_500 =
  'OpenAI-compatible API answered HTTP 500 (server_error): The server had an error while processing ' +
  'your request. Sorry about that! This is temporary: retry in a moment.';
const countTo = (n) => Array.from({ length: n }, (_, i) => i + 1).join(' ');
const range = (n) => Array.from({ length: n }, (_, i) => i + 1);

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>weft-sdk in headless Chromium</title>
<style>
  body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; }
  li.resolved b { color: #175; } li.rejected b { color: #a22; }
</style>
<h1>weft-sdk: every dialect against the real server</h1>
<p>One line per run: its message, then the reply its <code>result</code> resolved to (green) or the
code and message of the <code>WeftError</code> it rejected with (red: cancel, a refused run, a
provider fault — each expected by its test).</p>
<ol id="log"></ol>
<script type="module" src="/page.mjs"></script>`;

let server;
let net;
let web;
let browser;
let page;
const pageErrors = [];

before(
  async () => {
    server = await startServer({ delayMs: 5, vars: { WEFT_AUTH_TOKEN: TOKEN } });
    net = await relay({ host: '127.0.0.1', port: Number(new URL(server.http).port) });
    web = await serveStatic({ '/': PAGE, '/page.mjs': new URL('./browser-page.mjs', import.meta.url), '/favicon.ico': '' });
    browser = await launchChromium();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    await page.exposeFunction('cutNetwork', () => net.cut());
    await page.goto(`${web.url}/`);
    await page.waitForFunction(() => window.weftReady === true, null, { timeout: 30_000 });
    await page.evaluate(({ url, token }) => Object.assign(window.weft.config, { url, token }), {
      url: `ws://127.0.0.1:${net.port}`,
      token: TOKEN,
    });
  },
  { timeout: 900_000 },
);

after(async () => {
  if (page) {
    const dir = new URL('../../test-results/', import.meta.url);
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: new URL('sdk-browser.png', dir).pathname, fullPage: true }).catch(() => {});
  }
  await browser?.close();
  await web?.close();
  await net?.close();
  await server?.stop();
});

afterEach(async () => {
  await page?.evaluate(() => window.weft.closeAll());
});

/** The event ids of a run's frames as they came over one socket. */
function frameIds(received, runId) {
  return received
    .map((text) => JSON.parse(text))
    .filter((f) => (f.run_id ?? f.event?.run_id ?? f.id) === runId)
    .map((f) => f.event?.event_id ?? f.event_id)
    .filter((id) => id !== undefined);
}

/** Checks what every followed run must show: one run, its events once and in order. */
function assertWhole(out) {
  const ids = out.events.map((e) => e.event_id);
  assert.deepEqual(ids, range(ids.length), 'event ids are dense, from 1');
  assert.ok(
    out.events.every((e) => e.run_id === out.runId),
    'every event names the run',
  );
  assert.deepEqual(
    out.iterated.map((e) => e.event_id),
    ids,
    'for await saw every event once, in order',
  );
  assert.equal(out.events[0].type, 'run_start');
  assert.equal(out.finished, true);
}

for (const dialect of DIALECTS) {
  describe(dialect, () => {
    test('a run streams text: onText deltas make the reply, events() ends with the run; auth, heartbeats', async () => {
      const out = await page.evaluate(
        async ({ dialect }) => {
          const sessionId = crypto.randomUUID();
          const c = weft.client(dialect, { sessionId, heartbeatIntervalMs: 50 });
          const states = [];
          c.onStatus((s) => states.push(s.state));
          await c.connect();
          const out = await weft.go(c, 'count to 40');
          const r = new weft.Reassembler(dialect);
          r.pushMany(weft.wire[0].received);
          return {
            ...out,
            sessionId,
            states,
            transcript: c.transcript(),
            reassembled: r.transcript(),
            wire: weft.wire.map(({ url, offered, protocol, sent }) => ({ url, offered, protocol, sent: sent.map((s) => JSON.parse(s)) })),
          };
        },
        { dialect },
      );
      assert.equal(out.error, undefined);
      const reply = countTo(40);
      assert.equal(out.result.reply, reply);
      assert.equal(out.result.runId, out.runId);
      assert.equal(out.text, reply, 'the onText deltas concatenate to the reply');
      // One delta per token at most (the Worker merges the tokens of a fast stream that arrive
      // together), and more than one for the dialects that stream.
      if (STREAMS_TEXT[dialect]) assert.ok(out.deltas.length > 1 && out.deltas.length <= 40, `${out.deltas.length} deltas`);
      else assert.equal(out.deltas.length, 1);
      assert.deepEqual(out.result.totalUsage, out.result.usage);
      assert.equal(out.result.totalUsage.completion_tokens, 40);
      assertWhole(out);
      assert.equal(out.events.at(-1).type, 'run_end');
      assert.equal(out.iterated.at(-1).type, 'run_end');
      const chunks = out.events.filter((e) => e.type === 'message_chunk').map((e) => e.content);
      assert.deepEqual(chunks, STREAMS_TEXT[dialect] ? out.deltas : []);
      assert.deepEqual(out.transcript.messages, [
        { role: 'user', text: 'count to 40', run_id: out.runId, complete: true },
        { role: 'assistant', text: reply, run_id: out.runId, complete: true },
      ]);
      assert.deepEqual(
        out.transcript.runs.map((r) => [r.run_id, r.status, r.reply]),
        [[out.runId, 'completed', reply]],
      );
      assert.deepEqual(out.reassembled, out.transcript, 'a Reassembler fed the raw frames agrees with the client');
      // One socket, the dialect's endpoint, the token as a subprotocol and never in the URL.
      assert.equal(out.wire.length, 1);
      const [socket] = out.wire;
      assert.equal(socket.url, `ws://127.0.0.1:${net.port}${ENDPOINT[dialect]}?session_id=${out.sessionId}`);
      assert.deepEqual(socket.offered, [`weft.${dialect}`, `weft.token.${TOKEN}`]);
      assert.equal(socket.protocol, `weft.${dialect}`);
      // Heartbeats went out every 50 ms and were all answered: no reconnect.
      assert.ok(socket.sent.filter((f) => f.type === 'ping').length >= 2, JSON.stringify(socket.sent));
      assert.deepEqual(out.states, ['connecting', 'open']);
    });

    test('a tool call streams its arguments; the transcript has the parsed call and its result', async () => {
      const out = await page.evaluate(
        async ({ dialect }) => {
          const c = weft.client(dialect);
          await c.connect();
          return { ...(await weft.go(c, 'calculate 6*7')), transcript: c.transcript() };
        },
        { dialect },
      );
      assert.equal(out.error, undefined);
      assert.equal(out.result.reply, '6*7 = 42.');
      assert.equal(out.text, '6*7 = 42.');
      assertWhole(out);
      const [call] = out.transcript.tool_calls;
      assert.match(call.call_id, /^call_\w+$/);
      assert.deepEqual(out.transcript.tool_calls, [
        {
          call_id: call.call_id,
          name: 'calculator',
          arguments_text: '{"expression":"6*7"}',
          arguments: { expression: '6*7' },
          status: 'done',
          result: '42',
          is_error: false,
          run_id: out.runId,
        },
      ]);
      assert.deepEqual(
        out.transcript.messages.map((m) => [m.role, m.text, m.tool_call_ids ?? []]),
        [
          ['user', 'calculate 6*7', []],
          ['assistant', '', [call.call_id]],
          ['assistant', '6*7 = 42.', []],
        ],
      );
      const chunks = out.events.filter((e) => e.type === 'tool_call_chunk');
      if (STREAMS_ARGS[dialect]) {
        assert.ok(chunks.length >= 3, `${chunks.length} argument chunks`);
        assert.equal(chunks.map((e) => e.arguments_delta).join(''), '{"expression":"6*7"}');
        assert.ok(chunks.every((e) => e.call_id === call.call_id));
        assert.equal(chunks[0].name, 'calculator');
      } else {
        // agentloop's function_call and agentchat's tool_call carry the arguments whole.
        assert.deepEqual(chunks, []);
        const whole = out.events.find((e) => e.type === 'tool_call');
        assert.deepEqual([whole.call_id, whole.name, whole.arguments], [call.call_id, 'calculator', { expression: '6*7' }]);
      }
      const end = out.events.find((e) => e.type === 'tool_end');
      assert.deepEqual([end.call_id, end.result, end.is_error], [call.call_id, '42', false]);
    });

    /** Runs `write hello to notes.txt`, answering the approvals with `answers` in turn. */
    const approve = (answers, more = []) =>
      page.evaluate(
        async ({ dialect, answers, more }) => {
          const c = weft.client(dialect);
          const asked = [];
          const log = [];
          c.onApproval(async ({ signal, ...req }) => {
            asked.push({ ...req, signal: signal instanceof AbortSignal && !signal.aborted });
            log.push({ ask: req.callId });
            return answers[asked.length - 1];
          });
          await c.connect();
          const out = await weft.go(c, 'write hello to notes.txt', { onDelta: (d) => log.push(d) });
          const later = [];
          for (const message of more) later.push(await weft.go(c, message));
          const sent = weft.wire.flatMap((s) => s.sent.map((f) => JSON.parse(f)));
          return { ...out, asked, log, later, sent, transcript: c.transcript() };
        },
        { dialect, answers, more },
      );

    /** The approval response a client of `dialect` sends, as the server receives it. */
    const approvalFrame = (callId, review, message) =>
      dialect === 'agentloop'
        ? { type: 'approval_response', payload: { review, callId, ...(message ? { customDenyMessage: message } : {}) } }
        : { type: 'approval_response', call_id: callId, review, ...(message ? { custom_deny_message: message } : {}) };

    const assertAsked = (out, times) => {
      assert.equal(out.asked.length, times);
      const [first] = out.asked;
      assert.match(first.callId, /^call_\w+$/);
      for (const req of out.asked) {
        assert.deepEqual(req, { callId: first.callId, name: 'apply_patch', arguments: { patch: PATCH('notes.txt', 'hello') }, runId: out.runId, signal: true });
      }
      return first.callId;
    };

    const stripIds = (frame) => {
      const { id, ...rest } = frame;
      return rest;
    };

    test('approval: yes runs the tool', async () => {
      const out = await approve([{ review: 'yes' }]);
      const callId = assertAsked(out, 1);
      assert.equal(out.result.reply, 'Done: I wrote notes.txt.');
      assertWhole(out);
      assert.deepEqual(out.sent.filter((f) => f.type === 'approval_response').map(stripIds), [approvalFrame(callId, 'yes')]);
      const [call] = out.transcript.tool_calls;
      assert.deepEqual([call.status, call.review, call.result, call.is_error], ['done', 'yes', 'Success. Updated the following files:\nA notes.txt', false]);
      const resolved = out.events.find((e) => e.type === 'approval_resolved');
      assert.deepEqual([resolved.call_id, resolved.review], [callId, 'yes']);
    });

    test('approval: no-continue refuses with a message and the model goes on', async () => {
      const out = await approve([{ review: 'no-continue', message: 'not now' }]);
      const callId = assertAsked(out, 1);
      assert.equal(out.result.reply, 'Understood: writing notes.txt was denied, so I left it unchanged.');
      assert.equal(out.text, out.result.reply);
      assertWhole(out);
      assert.deepEqual(out.sent.filter((f) => f.type === 'approval_response').map(stripIds), [approvalFrame(callId, 'no-continue', 'not now')]);
      const [call] = out.transcript.tool_calls;
      assert.deepEqual(
        [call.status, call.review, call.review_message, call.result, call.is_error],
        ['denied', 'no-continue', 'not now', 'denied by the user: not now', true],
      );
    });

    test('approval: no-exit refuses and ends the run without another model call', async () => {
      const out = await approve([{ review: 'no-exit' }]);
      assertAsked(out, 1);
      assert.equal(out.error, undefined);
      assert.equal(out.result.reply, '');
      assert.deepEqual(out.deltas, []);
      assertWhole(out);
      const at = out.events.findIndex((e) => e.type === 'approval_resolved');
      assert.equal(out.events[at].review, 'no-exit');
      assert.deepEqual(
        out.events.slice(at + 1).filter((e) => ['message_chunk', 'llm_complete', 'tool_start'].includes(e.type)),
        [],
      );
      assert.equal(out.events.at(-1).type, 'run_end');
      const [call] = out.transcript.tool_calls;
      assert.deepEqual([call.status, call.review, call.result, call.is_error], ['denied', 'no-exit', 'denied by the user', true]);
    });

    test('approval: always runs the tool and is not asked again in the session', async () => {
      const out = await approve([{ review: 'always' }], ['write bye to notes2.txt']);
      assertAsked(out, 1);
      assert.equal(out.result.reply, 'Done: I wrote notes.txt.');
      const [second] = out.later;
      assert.equal(second.error, undefined);
      assert.equal(second.result.reply, 'Done: I wrote notes2.txt.');
      assert.deepEqual(
        second.events.filter((e) => e.type === 'tool_approval'),
        [],
        'the second run was not asked',
      );
      assert.deepEqual(
        out.transcript.tool_calls.map((t) => [t.arguments.patch, t.status, t.review]),
        [
          [PATCH('notes.txt', 'hello'), 'done', 'always'],
          [PATCH('notes2.txt', 'bye'), 'done', undefined],
        ],
      );
    });

    test('approval: explain streams the explanation, then the callback is asked again', async () => {
      const out = await approve([{ review: 'explain' }, { review: 'yes' }]);
      const callId = assertAsked(out, 2);
      const asks = out.log.flatMap((x, i) => (typeof x === 'object' ? [i] : []));
      assert.equal(asks.length, 2);
      assert.equal(out.log.slice(asks[0] + 1, asks[1]).join(''), EXPLANATION, 'the explanation came between the two questions');
      assert.equal(out.log.slice(asks[1] + 1).join(''), 'Done: I wrote notes.txt.');
      assert.equal(out.result.reply, 'Done: I wrote notes.txt.');
      assertWhole(out);
      assert.deepEqual(out.sent.filter((f) => f.type === 'approval_response').map(stripIds), [approvalFrame(callId, 'explain'), approvalFrame(callId, 'yes')]);
      const [call] = out.transcript.tool_calls;
      assert.deepEqual([call.status, call.review], ['done', 'yes']);
    });

    test('follow(): a second client follows a run it did not start, from its start; an approval answered elsewhere is withdrawn', async () => {
      const out = await page.evaluate(
        async ({ dialect }) => {
          const sessionId = crypto.randomUUID();
          const a = weft.client(dialect, { sessionId });
          let aAsked;
          let bAsked;
          const askedA = new Promise((resolve) => (aAsked = resolve));
          const askedB = new Promise((resolve) => (bAsked = resolve));
          // A answers once B, which follows the run, has been asked too.
          a.onApproval(async (req) => {
            aAsked(req.callId);
            await askedB;
            return { review: 'yes' };
          });
          await a.connect();
          const runA = a.run({ message: 'write hello to notes.txt' });
          const followedA = weft.follow(runA, { label: `${dialect} · A starts` });
          const callId = await weft.within(askedA, 10_000, 'A asked');

          const b = weft.client(dialect, { sessionId });
          const bLog = [];
          b.onApproval((req) => {
            bLog.push({ callId: req.callId, aborted: req.signal.aborted });
            bAsked();
            return new Promise((resolve) =>
              req.signal.addEventListener('abort', () => {
                bLog.push('withdrawn');
                resolve({ review: 'no-exit' });
              }),
            );
          });
          await b.connect();
          const before = dialect === 'loom' ? await b.userMessages(sessionId) : null;
          const outB = await weft.follow(b.follow(runA.runId), { label: `${dialect} · B follows` });
          const outA = await followedA;
          const afterwards = dialect === 'loom' ? await b.userMessages(sessionId) : null;
          const unknown = await b.follow('no-such-run').result.then(() => null, weft.error);
          await new Promise((resolve) => setTimeout(resolve, 100));
          return {
            callId,
            outA,
            outB,
            bLog,
            active: before?.activeRunId,
            after: afterwards && 'activeRunId' in afterwards,
            history: before?.messages.map((m) => [m.role, m.content]),
            unknown,
            sentB: weft.wire[1].sent.map((f) => JSON.parse(f)),
            transcriptA: a.transcript(),
            transcriptB: b.transcript(),
          };
        },
        { dialect },
      );
      const { outA, outB } = out;
      assert.equal(outA.error, undefined);
      assert.equal(outA.result.reply, 'Done: I wrote notes.txt.');
      assert.equal(outB.error, undefined);
      assert.deepEqual(outB.result, outA.result, 'the follower settles with the same result');
      assertWhole(outB);
      assert.deepEqual(outB.events, outA.events, 'every event of the run, from its start, once');
      assert.equal(outB.text, outA.text);
      assert.deepEqual(out.transcriptB, out.transcriptA, 'both clients rebuilt the same transcript');
      // B was asked by the replay, then A's answer withdrew the request; B's late answer
      // never went out.
      assert.deepEqual(out.bLog, [{ callId: out.callId, aborted: false }, 'withdrawn']);
      assert.deepEqual(
        out.sentB.filter((f) => f.type === 'approval_response'),
        [],
      );
      assert.deepEqual(
        out.sentB.filter((f) => f.type === 'resume'),
        [
          { type: 'resume', run_id: outA.runId, after_event_id: 0 },
          { type: 'resume', run_id: 'no-such-run', after_event_id: 0 },
        ],
      );
      assert.equal(out.unknown?.code, 'unknown_run');
      if (dialect === 'loom') {
        assert.equal(out.active, outA.runId, 'userMessages() names the run streaming now');
        assert.deepEqual(out.history, [['user', 'write hello to notes.txt']]);
        assert.equal(out.after, false, 'and nothing once it ended');
      }
    });

    test('a client-side tool: registerTool runs it in the page, its value reaches the model', async () => {
      const out = await page.evaluate(
        async ({ dialect }) => {
          const c = weft.client(dialect);
          const calls = [];
          const asked = [];
          c.registerTool(
            {
              name: 'local_notes',
              description: 'Notes kept on this device',
              inputSchema: { type: 'object', properties: { topic: { type: 'string' } } },
              readOnly: true,
            },
            async (args) => {
              calls.push(args);
              return `milk and eggs for ${args.topic}`;
            },
          );
          c.onApproval((req) => {
            asked.push(req);
            return { review: 'no-exit' };
          });
          await c.connect();
          const out = await weft.go(c, 'use local_notes with {"topic":"groceries"}');
          const sent = weft.wire.flatMap((s) => s.sent.map((f) => JSON.parse(f)));
          return { ...out, calls, asked, sent, transcript: c.transcript() };
        },
        { dialect },
      );
      assert.equal(out.error, undefined);
      assert.equal(out.result.reply, 'The local_notes tool returned: milk and eggs for groceries.');
      assert.deepEqual(out.calls, [{ topic: 'groceries' }], 'the handler ran once, with the parsed arguments');
      assert.deepEqual(out.asked, [], 'a read-only tool is not approved first');
      assertWhole(out);
      const [call] = out.transcript.tool_calls;
      assert.deepEqual(
        [call.name, call.arguments, call.status, call.result, call.is_error],
        ['local_notes', { topic: 'groceries' }, 'done', 'milk and eggs for groceries', false],
      );
      assert.deepEqual(
        out.sent.filter((f) => f.type === 'client_tools'),
        [
          {
            type: 'client_tools',
            tools: [
              {
                name: 'local_notes',
                description: 'Notes kept on this device',
                input_schema: { type: 'object', properties: { topic: { type: 'string' } } },
                read_only: true,
              },
            ],
            ...(DECLARES_APPROVER[dialect] ? { approvals: true } : {}),
          },
        ],
      );
      assert.deepEqual(
        out.sent.filter((f) => f.type === 'tool_result'),
        [{ type: 'tool_result', call_id: call.call_id, result: 'milk and eggs for groceries', is_error: false }],
      );
    });

    test('a client-side tool that needs approval runs after it; a throwing one reports the error', async () => {
      const out = await page.evaluate(
        async ({ dialect }) => {
          const c = weft.client(dialect);
          const log = [];
          c.registerTool({ name: 'clear_cache', description: 'Clears the page cache' }, (args) => {
            log.push(['run', args]);
            return { cleared: 3 };
          });
          c.registerTool({ name: 'broken', readOnly: true }, () => {
            throw new Error('disk on fire');
          });
          c.onApproval((req) => {
            log.push(['ask', req.name, req.arguments]);
            return { review: 'yes' };
          });
          await c.connect();
          const cleared = await weft.go(c, 'use clear_cache with {"all":true}');
          const broken = await weft.go(c, 'use broken');
          return { cleared, broken, log, transcript: c.transcript() };
        },
        { dialect },
      );
      assert.equal(out.cleared.result.reply, 'The clear_cache tool returned: {"cleared":3}.');
      assert.deepEqual(out.log, [
        ['ask', 'clear_cache', { all: true }],
        ['run', { all: true }],
      ]);
      assert.equal(out.broken.result.reply, 'The broken tool returned: Error: disk on fire.');
      assert.deepEqual(
        out.transcript.tool_calls.map((t) => [t.name, t.status, t.review, t.result, t.is_error]),
        [
          ['clear_cache', 'done', 'yes', '{"cleared":3}', false],
          ['broken', 'error', undefined, 'disk on fire', true],
        ],
      );
    });

    test('the network cut mid-run: the client reconnects and resumes, nothing lost or doubled', async (t) => {
      // A token every 10 ms: one event each (slower than the Worker's quiet gap), so the
      // uncut run and the cut one have the same events and the cut lands mid-run.
      server.pace(10);
      t.after(() => server.pace(null));
      const out = await page.evaluate(
        async ({ dialect, streams }) => {
          // The same run uncut, in its own session, to compare with.
          const clean = weft.client(dialect);
          await clean.connect();
          const whole = await weft.go(clean, 'count to 100');
          clean.close();
          weft.wire.length = 0;

          const c = weft.client(dialect);
          const states = [];
          c.onStatus((s) => states.push(s.state));
          await c.connect();
          const run = c.run({ message: 'count to 100' });
          let cut = null;
          const cutNow = (seen) => {
            if (cut) return;
            cut = { seen };
            window.cutNetwork().then((n) => (cut.connections = n));
          };
          // agentchat sends the reply whole at the end: cut as soon as the run started.
          if (!streams) run.onEvent((ev) => ev.type === 'run_start' && cutNow(0));
          const out = await weft.follow(run, {
            label: `${dialect} · count to 100 (network cut)`,
            onDelta: (d, all) => streams && all.length === 10 && cutNow(10),
          });
          const all = new weft.Reassembler(dialect);
          all.pushMany(weft.wire.flatMap((s) => s.received));
          return {
            ...out,
            cleanTypes: whole.events.map((e) => e.type),
            cut,
            states,
            lastEventId: c.lastEventId(run.runId),
            transcript: c.transcript(),
            reassembled: all.transcript(),
            wire: weft.wire.map(({ closed, sent, received }) => ({ closed, sent: sent.map((f) => JSON.parse(f)), received })),
          };
        },
        { dialect, streams: STREAMS_TEXT[dialect] },
      );
      assert.equal(out.error, undefined);
      assert.deepEqual(out.cut, { seen: STREAMS_TEXT[dialect] ? 10 : 0, connections: 1 }, 'cut once, mid-run');
      assert.deepEqual(out.states, ['connecting', 'open', 'reconnecting', 'open']);
      // Two sockets: the first died without a close handshake; the second resumed the run
      // from the last event the first delivered, and the server replayed from right after it.
      assert.equal(out.wire.length, 2);
      assert.equal(out.wire[0].closed, 1006);
      const before = frameIds(out.wire[0].received, out.runId);
      const resumedFrom = before.at(-1);
      assert.deepEqual(before, range(resumedFrom));
      assert.deepEqual(
        out.wire[1].sent.filter((f) => f.type === 'resume'),
        [{ type: 'resume', run_id: out.runId, after_event_id: resumedFrom }],
      );
      const afterIds = frameIds(out.wire[1].received, out.runId);
      assert.equal(afterIds[0], resumedFrom + 1);
      // The app saw the uncut run: the same events in the same order, each once.
      assertWhole(out);
      // (Runs of message_chunk compared as one: how the tokens were batched may differ.)
      const shape = (types) => types.filter((ty, i) => !(ty === 'message_chunk' && types[i - 1] === ty));
      assert.deepEqual(shape(out.events.map((e) => e.type)), shape(out.cleanTypes));
      assert.equal(out.lastEventId, out.events.length);
      assert.equal(out.result.reply, countTo(100));
      assert.equal(out.text, out.result.reply, 'onText across the cut concatenates to the reply');
      // A delta per message_chunk event; agentchat's reply comes whole, as one.
      assert.equal(out.deltas.length, STREAMS_TEXT[dialect] ? out.events.filter((e) => e.type === 'message_chunk').length : 1);
      assert.deepEqual(
        out.transcript.messages.map((m) => m.text),
        ['count to 100', countTo(100)],
      );
      assert.deepEqual(out.reassembled, out.transcript);
    });

    test('a run sent into a network that died unnoticed is sent again after the reconnect, and runs once', async () => {
      const out = await page.evaluate(
        async ({ dialect }) => {
          const c = weft.client(dialect);
          await c.connect();
          weft.loseNext((f) => f.includes('count to 3'));
          const run = c.run({ message: 'count to 3' });
          const following = weft.follow(run, { label: `${dialect} · count to 3 (its frame lost)` });
          await window.cutNetwork();
          const out = await following;
          const json = (frames) => frames.map((f) => JSON.parse(f));
          return { ...out, sockets: weft.wire.map((s) => ({ sent: json(s.sent), lost: json(s.lost) })), transcript: c.transcript() };
        },
        { dialect },
      );
      assert.equal(out.error, undefined);
      assert.equal(out.result.reply, countTo(3));
      assert.equal(out.sockets.length, 2);
      const [first, second] = out.sockets;
      assert.equal(first.lost.length, 1, 'the run frame was lost on the first socket');
      // The server did not know the run it was asked to resume: its frame went again, as it was.
      assert.deepEqual(
        second.sent.filter((f) => f.type === 'resume' || JSON.stringify(f).includes('count to 3')),
        [{ type: 'resume', run_id: out.runId, after_event_id: 0 }, first.lost[0]],
      );
      assertWhole(out);
      assert.deepEqual(
        out.transcript.messages.map((m) => m.text),
        ['count to 3', countTo(3)],
        'the run ran once',
      );
    });

    test('an approval answered while the network is down reaches the server after the reconnect', async () => {
      const out = await page.evaluate(
        async ({ dialect }) => {
          const c = weft.client(dialect);
          const states = [];
          c.onStatus((s) => states.push(s.state));
          const asked = [];
          c.onApproval(async (req) => {
            asked.push(req.callId);
            await window.cutNetwork();
            return { review: 'yes' };
          });
          await c.connect();
          const out = await weft.go(c, 'write hello to notes.txt');
          return { ...out, asked, states, sockets: weft.wire.map((s) => s.sent.map((f) => JSON.parse(f))), transcript: c.transcript() };
        },
        { dialect },
      );
      assert.equal(out.error, undefined);
      assert.equal(out.result.reply, 'Done: I wrote notes.txt.');
      assert.equal(out.asked.length, 1, 'asked once, not again after the resume');
      assert.deepEqual(out.states, ['connecting', 'open', 'reconnecting', 'open']);
      assert.equal(out.sockets.length, 2);
      assert.deepEqual(out.sockets[1].filter((f) => f.type === 'approval_response').map(stripIds), [approvalFrame(out.asked[0], 'yes')]);
      assertWhole(out);
      const [call] = out.transcript.tool_calls;
      assert.deepEqual([call.status, call.review], ['done', 'yes']);
    });

    test('cancel: the result rejects with a WeftError coded cancelled; the session takes the next run', async () => {
      const out = await page.evaluate(
        async ({ dialect, streams }) => {
          const c = weft.client(dialect);
          await c.connect();
          const run = c.run({ message: 'count to 400' });
          // agentchat streams no text: cancel once the run has started.
          if (!streams) run.onEvent((ev) => ev.type === 'run_start' && run.cancel());
          const out = await weft.follow(run, {
            label: `${dialect} · count to 400 (cancelled)`,
            onDelta: (d, all) => streams && all.length === 3 && run.cancel(),
          });
          const next = await weft.go(c, 'hello again');
          return { ...out, next: next.result, transcript: c.transcript() };
        },
        { dialect, streams: STREAMS_TEXT[dialect] },
      );
      assert.deepEqual(out.error, { isError: true, name: 'WeftError', code: 'cancelled', message: 'cancelled' });
      assert.equal(out.result, undefined);
      assertWhole(out);
      const last = out.events.at(-1);
      assert.deepEqual([last.type, last.code, last.message], ['error', 'cancelled', 'cancelled']);
      assert.equal(out.iterated.at(-1).type, 'error');
      // Cut short: what streamed is the start of the count.
      assert.ok(out.deltas.length < 100, `${out.deltas.length} deltas`);
      assert.ok(countTo(400).startsWith(out.text), out.text);
      assert.deepEqual([out.transcript.runs[0].status, out.transcript.runs[0].error], ['cancelled', 'cancelled']);
      assert.equal(out.next.reply, 'You said: hello again');
    });

    test('errors are WeftErrors with a code: a refused run, a provider fault, a wrong token, methods the dialect lacks; ping() answers', async () => {
      const out = await page.evaluate(
        async ({ dialect }) => {
          const c = weft.client(dialect);
          await c.connect();
          const first = c.run({ message: 'count to 30' });
          const second = c.run({ message: 'me too' });
          const [streaming, refused] = await Promise.all([
            weft.follow(first, { label: `${dialect} · count to 30` }),
            weft.follow(second, { label: `${dialect} · me too (while another run streams)` }),
          ]);
          const fault = await weft.go(c, 'hi fault-500');
          /** @type {Record<string, unknown>} */
          const requests = {};
          for (const [name, call] of /** @type {[string, () => Promise<unknown>][]} */ ([
            ['toolsList', () => c.toolsList()],
            ['toolShow', () => c.toolShow('read', 'json')],
            ['userMessages', () => c.userMessages('t')],
          ])) {
            try {
              requests[name] = { value: await call() };
            } catch (e) {
              requests[name] = { error: weft.error(e) };
            }
          }
          const rtt = await c.ping();
          const wrong = weft.client(dialect, { token: 'not-the-token', reconnect: false });
          const refusedConnect = await wrong.connect().then(() => 'connected', weft.error);
          return { streaming, refused, fault, requests, rtt, refusedConnect, runs: c.transcript().runs };
        },
        { dialect },
      );
      assert.equal(out.streaming.result.reply, countTo(30), 'the streaming run is not disturbed');
      assert.deepEqual(out.refused.error, {
        isError: true,
        name: 'WeftError',
        code: 'busy',
        message: `a run is already in progress (${out.streaming.runId}): wait for it to end or cancel it`,
      });
      assert.equal(out.refused.finished, true);
      assert.deepEqual(out.fault.error, { isError: true, name: 'WeftError', code: 'provider', message: FAULT_500 });
      const last = out.fault.events.at(-1);
      assert.deepEqual([last.type, last.code, last.message], ['error', 'provider', FAULT_500]);
      assert.equal(out.fault.iterated.at(-1).type, 'error');
      assertWhole(out.fault);
      assert.deepEqual(
        out.runs.map((r) => [r.status, r.error ?? null]),
        [
          ['completed', null],
          ['failed', FAULT_500],
        ],
      );
      assert.equal(typeof out.rtt, 'number');
      assert.ok(out.rtt >= 0 && out.rtt < 5000, `ping ${out.rtt}`);
      assert.equal(out.refusedConnect.code, 'connect_failed');
      assert.equal(out.refusedConnect.name, 'WeftError');
      assert.match(
        out.refusedConnect.message,
        /^could not connect to ws:\/\/127\.0\.0\.1:\d+\/.* \(close code 1006: the WebSocket handshake failed\); check the URL, that the server is running, and the token$/,
      );
      if (dialect === 'loom') {
        assert.equal(out.requests.toolsList.value.length, 7);
        assert.equal(out.requests.toolShow.value.name, 'read');
        assert.deepEqual(out.requests.userMessages.value, { threadId: 't', messages: [], hasMore: false });
      } else {
        for (const method of ['toolsList', 'toolShow', 'userMessages']) {
          assert.deepEqual(out.requests[method].error, {
            isError: true,
            name: 'WeftError',
            code: 'unsupported',
            message: `${method}() is not available on the ${dialect} dialect; only the loom dialect serves it`,
          });
        }
      }
    });
  });
}

describe('loom requests', () => {
  test('toolsList() and toolShow() describe the server tools; an unknown tool rejects', async () => {
    const out = await page.evaluate(async () => {
      const c = weft.client('loom');
      await c.connect();
      const settle = (p) =>
        p.then(
          (value) => ({ value }),
          (e) => ({ error: weft.error(e) }),
        );
      return {
        list: await c.toolsList(),
        json: await c.toolShow('read', 'json'),
        yaml: await c.toolShow('read'),
        unknown: await settle(c.toolShow('nope', 'json')),
        // @ts-expect-error: a format the SDK refuses, on purpose
        badFormat: await settle(c.toolShow('read', 'xml')),
      };
    });
    assert.deepEqual(
      out.list.map((t) => [t.name, t.readOnly === true, t.inputSchema.type]),
      [
        ['apply_patch', false, 'object'],
        ['calculator', true, 'object'],
        ['get_time', true, 'object'],
        ['ls', true, 'object'],
        ['read', true, 'object'],
        ['web_fetch', true, 'object'],
        ['write', false, 'object'],
      ],
    );
    assert.ok(out.list.every((t) => typeof t.description === 'string' && t.description.length > 20));
    assert.deepEqual([out.json.name, out.json.read_only, out.json.input_schema.required], ['read', true, ['path']]);
    assert.equal(out.json.description, out.list.find((t) => t.name === 'read').description);
    assert.equal(typeof out.yaml, 'string');
    assert.match(out.yaml, /^name: read$/m);
    assert.deepEqual(out.unknown.error, { isError: true, name: 'WeftError', code: 'tool_not_found', message: 'tool not found: nope' });
    assert.equal(out.badFormat.error.code, 'invalid_argument');
    assert.match(out.badFormat.error.message, /xml/);
  });

  test('userMessages() pages through the thread history', async () => {
    const out = await page.evaluate(async () => {
      const sessionId = crypto.randomUUID();
      const c = weft.client('loom', { sessionId });
      await c.connect();
      await weft.go(c, 'hello there');
      await weft.go(c, 'count to 3');
      const all = await c.userMessages(sessionId);
      const newest = await c.userMessages(sessionId, { limit: 1 });
      const older = await c.userMessages(sessionId, { before: all.messages[2].id });
      const empty = await c.userMessages('').then(() => null, weft.error);
      return { sessionId, all, newest, older, empty };
    });
    const pairs = (page) => page.messages.map((m) => [m.role, m.content]);
    assert.equal(out.all.threadId, out.sessionId);
    assert.deepEqual(pairs(out.all), [
      ['user', 'hello there'],
      ['assistant', 'You said: hello there'],
      ['user', 'count to 3'],
      ['assistant', '1 2 3'],
    ]);
    assert.equal(out.all.hasMore, false);
    assert.deepEqual([pairs(out.newest), out.newest.hasMore], [[['assistant', '1 2 3']], true]);
    assert.deepEqual(
      [pairs(out.older), out.older.hasMore],
      [
        [
          ['user', 'hello there'],
          ['assistant', 'You said: hello there'],
        ],
        false,
      ],
    );
    assert.equal(out.empty.code, 'invalid_argument');
  });
});

describe('agentloop requests', () => {
  test('contextInfo() and compact(): the window, a compaction every socket of the session sees, and its refusals', async () => {
    const out = await page.evaluate(async () => {
      const sessionId = crypto.randomUUID();
      const al = weft.client('agentloop', { sessionId });
      const loom = weft.client('loom', { sessionId });
      const seen = [];
      loom.onEvent((e) => e.type === 'context_compacted' && seen.push(e));
      await Promise.all([al.connect(), loom.connect()]);
      const settle = (p) =>
        p.then(
          (value) => ({ value }),
          (e) => ({ error: weft.error(e) }),
        );
      const empty = await settle(al.compact());
      await weft.go(loom, 'What time is it?');
      const before = await al.contextInfo();
      const streaming = loom.run({ message: 'count to 200' });
      await new Promise((r) => setTimeout(r, 100));
      const busy = await settle(al.compact());
      await streaming.result;
      const compacted = await al.compact();
      const after = await al.contextInfo();
      const onLoom = await settle(loom.contextInfo());
      return { empty, before, busy, compacted, after, seen, onLoom, runs: al.transcript().runs.map((r) => [r.status, r.error]) };
    });
    assert.deepEqual(out.empty.error, { isError: true, name: 'WeftError', code: 'empty_transcript', message: 'Cannot compact empty transcript' });
    assert.equal(out.before.strategy, 'ThresholdContextManager');
    assert.equal(out.before.transcriptLength, 4);
    assert.ok(out.before.tokenCount > 0 && out.before.usagePercent > 0 && out.before.maxTokens > out.before.tokenCount);
    assert.equal(out.busy.error.code, 'busy');
    // Compacting an empty transcript answers the error alone (specs/README), and the busy
    // refusal fails no run: the two runs are loom's, both completed.
    assert.deepEqual(
      out.runs,
      [
        ['completed', null],
        ['completed', null],
      ],
      'the refusals failed no run',
    );
    assert.ok(out.compacted.newTokenCount < out.compacted.oldTokenCount, JSON.stringify(out.compacted));
    assert.equal(out.after.transcriptLength, 1);
    assert.equal(out.after.tokenCount, out.compacted.newTokenCount);
    assert.deepEqual(
      out.seen.map((e) => [e.old_token_count, e.new_token_count]),
      [[out.compacted.oldTokenCount, out.compacted.newTokenCount]],
    );
    assert.equal(out.onLoom.error.code, 'unsupported');
    assert.match(out.onLoom.error.message, /contextInfo\(\) is not available on the loom dialect; only the agentloop dialect serves it/);
  });
});

test('the page saw no uncaught error', () => {
  assert.deepEqual(pageErrors, []);
});
