// An unchanged AI SDK chat app (useChat from @ai-sdk/react, tests/aisdk/app/) in headless
// Chromium against weft's fifth dialect, the AI SDK UI message stream protocol: POST /api/chat
// answered with SSE, GET /api/chat/{id}/stream to resume. The server is the real one (the Worker
// under `wrangler dev` with the scripted LLM, tests/e2e/server.mjs); the page comes from a small
// static server that forwards /api/* to it and records every exchange (tests/aisdk/harness.mjs).
//
// What a person would do, one test each: send a message and watch the reply stream; ask for the
// time (a server tool and its output); approve a write, and deny one; let the page answer a
// client tool (`shell`, in `onToolCall`); press Stop mid-reply and ask something else; reload the
// page mid-reply and see it finish once. Each checks what the page shows, and what the server
// sent for it. Screenshots: test-results/aisdk-<test>.png.
//
// A server that answers POST /api/chat with 404 fails the suite: the endpoint is what it tests,
// so its absence is a failure, never a skip. AISDK_REFERENCE_URL=http://127.0.0.1:PORT runs it against another server instead (the AI
// SDK's own server, to prove the harness: tests/aisdk/README.md); the scripted LLM behind it must
// stream at the pace set here (PACE_MS between chunks).

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { startServer } from '../e2e/server.mjs';
import { launchChromium } from '../sdk/harness.mjs';
import { bundleApp, probeApiChat, serveApp } from './harness.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const results = join(root, 'test-results');
const PACE_MS = 8;
const countTo = (n) => Array.from({ length: n }, (_, i) => i + 1).join(' ');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const reference = process.env.AISDK_REFERENCE_URL?.replace(/\/+$/, '');
const target = reference ? { http: reference, url: null, stop: async () => {} } : await startServer({ delayMs: PACE_MS });
let status;
try {
  status = await probeApiChat(target.http);
} catch (e) {
  await target.stop();
  throw e;
}

test('the server serves POST /api/chat', () => {
  assert.notEqual(status, 404, `POST ${target.http}/api/chat answered 404: the AI SDK's endpoint is not served`);
});

let bundle;
let web;
let browser;
let page;
const problems = [];

/** The transport the running suite's page uses (`http` or `weft`). */
let transport = 'http';
const http = () => transport === 'http';

/** Opens the app on chat `id` (a new one by default); the page asks to resume it on load. */
async function open(id = `aisdk-${crypto.randomUUID()}`) {
  const ws = encodeURIComponent(target.url ?? '');
  await page.goto(`${web.url}/?transport=${transport}&ws=${ws}&id=${encodeURIComponent(id)}`);
  await page.waitForSelector('html[data-ready=true]', { timeout: 15_000 });
  if (!http()) return { id };
  const resumeGet = await web.waitFor(
    () => web.of(id).find((e) => e.method === 'GET' && e.status !== undefined),
    10_000,
    'the GET …/stream useChat sends on load',
  );
  return { id, resumeGet };
}

async function send(text) {
  await page.fill('#input', text);
  await page.click('#send');
}

/** Waits until an assistant text part reads `expected` (a string: exactly; a RegExp) and the chat is ready. */
async function reply(expected, timeout = 15_000) {
  const spec = typeof expected === 'string' ? { exact: expected } : { source: expected.source, flags: expected.flags };
  try {
    // Done when the text is there and the chat is ready; given up at once when it shows an error.
    const outcome = await page.waitForFunction(
      (s) => {
        if (document.documentElement.dataset.status === 'error') return 'error';
        const texts = [...document.querySelectorAll('.msg[data-role=assistant] .text')].map((t) => t.textContent);
        const ok = s.exact !== undefined ? texts.includes(s.exact) : texts.some((t) => new RegExp(s.source, s.flags).test(t));
        return ok && document.documentElement.dataset.status === 'ready' && 'ok';
      },
      spec,
      { timeout },
    );
    if ((await outcome.jsonValue()) === 'error') throw new Error('the chat went into its error state');
  } catch (e) {
    const seen = await view().catch(() => []);
    const error = await page
      .locator('#error')
      .textContent({ timeout: 100 })
      .catch(() => null);
    const status = await page
      .locator('html')
      .getAttribute('data-status')
      .catch(() => null);
    const wire = web.exchanges
      .slice(-4)
      .map((x) => `${x.method} ${x.path} → ${x.status ?? x.error ?? 'no answer'}${x.clientClosed ? ' (closed by the page)' : ''}: ${x.text.slice(0, 200)}`);
    throw new Error(
      `${e.message}\nwaited for ${expected}; status ${status}${error ? `, error "${error}"` : ''}; the page shows ${JSON.stringify(seen)}\nlast exchanges:\n${wire.join('\n')}`,
    );
  }
}

/** What the page shows: its messages, each with its text parts and tool parts. */
function view() {
  return page.evaluate(() =>
    [.../** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('.msg'))].map((m) => ({
      role: m.dataset.role,
      id: m.dataset.id,
      texts: [...m.querySelectorAll('.text')].map((t) => t.textContent),
      tools: [.../** @type {NodeListOf<HTMLElement>} */ (m.querySelectorAll('.tool'))].map((t) => ({
        name: t.dataset.tool,
        state: t.dataset.state,
        input: t.querySelector('.tool-input')?.textContent,
        output: t.querySelector('.tool-output')?.textContent,
        approved: /** @type {HTMLElement | null} */ (t.querySelector('.tool-approval'))?.dataset.approved,
        buttons: t.querySelectorAll('button').length,
      })),
    })),
  );
}

const lastAssistantText = () => page.evaluate(() => [...document.querySelectorAll('.msg[data-role=assistant] .text')].at(-1)?.textContent ?? '');
const words = (s) => (s.trim() ? s.trim().split(/\s+/).length : 0);
const posts = (id) => web.of(id).filter((e) => e.method === 'POST');
const chunkTypes = (ex) => ex.chunks.map((c) => (typeof c === 'string' ? c : c.type));
const lastOf = (ex) => ex.body.messages.at(-1);
const toolParts = (message) => message.parts.filter((p) => p.type.startsWith('tool-'));

/** A UI message stream response as the AI SDK's client needs it. */
function assertStream(ex, what) {
  assert.equal(ex.status, 200, `${what}: status`);
  assert.match(ex.headers['content-type'] ?? '', /^text\/event-stream/, `${what}: content-type`);
  assert.equal(ex.headers['x-vercel-ai-ui-message-stream'], 'v1', `${what}: x-vercel-ai-ui-message-stream`);
  const types = chunkTypes(ex);
  assert.equal(types[0], 'start', `${what}: the first chunk is start (${types.join(' ')})`);
  assert.ok(types.includes('finish'), `${what}: has a finish chunk (${types.join(' ')})`);
  assert.equal(types.at(-1), '[DONE]', `${what}: ends with data: [DONE]`);
}

/** A continuation (after an approval or a tool output) goes on in the message it continues. */
function assertContinues(ex, messageId, what) {
  const start = ex.chunks[0];
  assert.ok(
    start.messageId === undefined || start.messageId === messageId,
    `${what}: start names the continued message ${messageId} or none, not ${start.messageId}`,
  );
}

/** @type {[string, string, string | false][]} the transport, what it goes over, why it is skipped */
const suites = [
  ['http', 'over /api/chat (DefaultChatTransport)', false],
  ['weft', 'over the WebSocket (WeftChatTransport from weft-sdk/ai)', reference ? 'the AI SDK reference server has no weft WebSocket' : false],
];

before(
  async () => {
    mkdirSync(results, { recursive: true });
    bundle = await bundleApp();
    web = await serveApp({ bundle, target: target.http });
    browser = await launchChromium();
  },
  { timeout: 120_000 },
);

after(async () => {
  await browser?.close();
  await web?.close();
  bundle?.close();
  await target.stop();
});

for (const [kind, over, skip] of suites)
  describe(`an AI SDK useChat app ${over}`, { skip }, () => {
    before(() => {
      transport = kind;
    });

    beforeEach(async () => {
      problems.length = 0;
      page = await browser.context.newPage();
      await page.setViewportSize({ width: 1000, height: 800 });
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console: ${m.text()}`);
      });
    });

    afterEach(async (t) => {
      const name = t.name
        .replace(/[^a-z0-9]+/gi, '-')
        .replace(/^-|-$/g, '')
        .toLowerCase()
        .slice(0, 50);
      await page.screenshot({ path: join(results, `aisdk-${transport}-${name}.png`), fullPage: true }).catch(() => {});
      await page.close();
      assert.deepEqual(problems, [], 'the page logged no errors');
    });

    test('a reply streams in and is shown once', async () => {
      const { id, resumeGet } = await open();
      if (http()) assert.equal(resumeGet.status, 204, 'GET /api/chat/{id}/stream with nothing running: 204');
      // Every text the reply showed while it streamed.
      await page.evaluate(() => {
        window.shown = [];
        new MutationObserver(() => {
          const t = [...document.querySelectorAll('.msg[data-role=assistant] .text')].at(-1)?.textContent;
          if (t !== undefined && window.shown.at(-1) !== t) window.shown.push(t);
        }).observe(/** @type {HTMLElement} */ (document.getElementById('messages')), { childList: true, subtree: true, characterData: true });
      });
      await send('count to 60');
      await reply(countTo(60));
      const shown = await page.evaluate(() => window.shown);
      assert.ok(shown.length >= 3, `the reply grew while it streamed (${shown.length} states seen)`);
      assert.ok(
        shown.every((s) => countTo(60).startsWith(s)),
        'every state seen was a prefix of the reply',
      );
      const msgs = await view();
      assert.deepEqual(
        msgs.map((m) => m.role),
        ['user', 'assistant'],
      );
      assert.deepEqual(msgs[0].texts, ['count to 60']);
      assert.deepEqual(msgs[1].texts, [countTo(60)], 'the reply, once');
      assert.equal(await page.locator('#error').count(), 0);
      if (!http()) assert.deepEqual(web.of(id), [], 'WeftChatTransport went over the WebSocket: nothing reached /api/chat');

      if (http()) {
        const [post] = posts(id);
        assert.equal(posts(id).length, 1);
        assert.equal(post.body.id, id, 'the body names the chat');
        assert.equal(post.body.trigger, 'submit-message');
        assert.deepEqual(
          post.body.messages.map((m) => m.role),
          ['user'],
        );
        assertStream(post, 'POST /api/chat');
        const types = chunkTypes(post);
        for (const t of ['text-start', 'text-delta', 'text-end']) assert.ok(types.includes(t), `has ${t}`);
        assert.ok(types.filter((t) => t === 'text-delta').length > 1, 'the text came in several deltas');
      }
    });

    test('a server tool runs: its call and output, then the answer, in one message', async () => {
      const { id } = await open();
      await send('What time is it?');
      await reply(/^It is \d{4}-\d\d-\d\dT.*\.$/);
      const msgs = await view();
      assert.deepEqual(
        msgs.map((m) => m.role),
        ['user', 'assistant'],
      );
      const [tool] = msgs[1].tools;
      assert.equal(msgs[1].tools.length, 1);
      assert.equal(tool.name, 'get_time');
      assert.equal(tool.state, 'output-available');
      assert.match(tool.input, /"timezone":"UTC"/);
      assert.match(tool.output, /\d{4}-\d\d-\d\dT\d\d:\d\d/);
      assert.equal(tool.buttons, 0, 'nothing to approve');

      if (http()) {
        assert.equal(posts(id).length, 1, 'the server ran the tool within the one request');
        const [post] = posts(id);
        assertStream(post, 'POST /api/chat');
        const types = chunkTypes(post);
        const order = ['tool-input-available', 'tool-output-available', 'text-start'].map((t) => types.indexOf(t));
        assert.ok(
          order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1])),
          `call, output, then text: ${types.join(' ')}`,
        );
      }
    });

    test('an approval, approved: the write runs and the reply continues the same message', async () => {
      const { id } = await open();
      await send('write hello to notes.txt');
      const approve = page.locator('.tool[data-state=approval-requested] button.approve');
      await approve.waitFor({ timeout: 15_000 });
      let msgs = await view();
      const asked = msgs.at(-1).tools[0];
      assert.match(asked.name, /^(write|apply_patch)$/);
      assert.match(asked.input, /notes\.txt/);
      assert.equal(await page.locator('html').getAttribute('data-status'), 'ready', 'the turn waits for the user');
      await page.screenshot({ path: join(results, 'aisdk-approval-requested.png') });
      await approve.click();
      await reply('Done: I wrote notes.txt.');

      msgs = await view();
      assert.deepEqual(
        msgs.map((m) => m.role),
        ['user', 'assistant'],
        'one assistant message, continued',
      );
      assert.equal(msgs[1].tools.length, 1);
      assert.equal(msgs[1].tools[0].state, 'output-available');
      assert.equal(msgs[1].tools[0].approved, 'true');
      assert.equal(msgs[1].tools[0].buttons, 0);
      assert.deepEqual(msgs[1].texts, ['Done: I wrote notes.txt.']);
      const states = await page.evaluate(() => Object.values(window.__aisdk.toolStates)[0]);
      assert.ok(states.includes('approval-requested') && states.at(-1) === 'output-available', states.join(' → '));

      if (http()) {
        const [first, second] = posts(id);
        assert.equal(posts(id).length, 2, 'the approval went back as a second request');
        assertStream(first, 'the first response');
        const request = first.chunks.find((c) => c.type === 'tool-approval-request');
        assert.ok(request, `the first response asks for approval: ${chunkTypes(first).join(' ')}`);
        const asking = chunkTypes(first);
        assert.ok(!asking.includes('tool-output-available'), 'nothing ran before the approval');
        // What useChat sends back (AI SDK behaviour, pinned here as the server's input).
        assert.equal(second.body.trigger, 'submit-message');
        assert.equal(second.body.messageId, msgs[1].id);
        const [part] = toolParts(lastOf(second));
        assert.equal(lastOf(second).role, 'assistant');
        assert.equal(part.state, 'approval-responded');
        assert.deepEqual(part.approval, { id: request.approvalId, approved: true });
        assertStream(second, 'the continuation');
        assertContinues(second, msgs[1].id, 'the continuation');
        assert.ok(
          second.chunks.some((c) => c.type === 'tool-output-available' && c.toolCallId === part.toolCallId),
          'the continuation carries the output',
        );
      }
    });

    test('an approval, denied: nothing is written and the reply says so', async () => {
      const { id } = await open();
      await send('write bye to other.txt');
      const deny = page.locator('.tool[data-state=approval-requested] button.deny');
      await deny.waitFor({ timeout: 15_000 });
      await deny.click();
      await reply('Understood: writing other.txt was denied, so I left it unchanged.');

      const msgs = await view();
      assert.deepEqual(
        msgs.map((m) => m.role),
        ['user', 'assistant'],
        'one assistant message, continued',
      );
      const [tool] = msgs[1].tools;
      assert.equal(tool.state, 'output-denied');
      assert.equal(tool.approved, 'false');
      assert.equal(tool.output, undefined, 'no output: it never ran');
      assert.equal(tool.buttons, 0);

      if (http()) {
        const [, second] = posts(id);
        assert.equal(posts(id).length, 2);
        const [part] = toolParts(lastOf(second));
        assert.equal(part.state, 'approval-responded');
        assert.equal(part.approval.approved, false);
        assert.equal(part.approval.reason, 'Denied by the user.');
        assertStream(second, 'the continuation');
        assertContinues(second, msgs[1].id, 'the continuation');
        assert.ok(!second.chunks.some((c) => c.type === 'tool-output-available'), 'no output after a denial');
      }
    });

    test('a client tool: the page answers shell in onToolCall and the reply uses its output', async () => {
      const { id } = await open();
      await send('use shell with {"command":"ls"}');
      await reply('The shell tool returned: README.md package.json.');

      const msgs = await view();
      assert.deepEqual(
        msgs.map((m) => m.role),
        ['user', 'assistant'],
        'one assistant message, continued',
      );
      const [tool] = msgs[1].tools;
      assert.equal(tool.name, 'shell');
      assert.equal(tool.state, 'output-available');
      assert.match(tool.input, /"command":"ls"/);
      assert.equal(tool.output, 'README.md package.json');

      if (http()) {
        const [first, second] = posts(id);
        assert.equal(posts(id).length, 2, 'the output went back as a second request');
        assertStream(first, 'the first response');
        assert.ok(
          first.chunks.some((c) => c.type === 'tool-input-available' && c.toolName === 'shell'),
          'the call reached the page',
        );
        assert.ok(!first.chunks.some((c) => c.type === 'tool-output-available'), 'the server did not answer it itself');
        const [part] = toolParts(lastOf(second));
        assert.equal(second.body.messageId, msgs[1].id);
        assert.equal(part.type, 'tool-shell');
        assert.equal(part.state, 'output-available');
        assert.equal(part.output, 'README.md package.json');
        assertStream(second, 'the continuation');
        assertContinues(second, msgs[1].id, 'the continuation');
      }
    });

    test('Stop mid-reply: the text stops where it was, and the next message is answered', async () => {
      const { id } = await open();
      await send('count to 3000');
      await page.waitForFunction(
        () => ([...document.querySelectorAll('.msg[data-role=assistant] .text')].at(-1)?.textContent ?? '').split(' ').length >= 6,
        null,
        { timeout: 15_000 },
      );
      await page.click('#stop');
      await page.waitForSelector('html[data-status=ready]', { timeout: 5_000 });
      const stopped = await lastAssistantText();
      await sleep(800);
      assert.equal(await lastAssistantText(), stopped, 'nothing more arrived after Stop');
      assert.ok(countTo(3000).startsWith(stopped) && words(stopped) >= 6 && words(stopped) < 3000, `stopped part-way: "${stopped.slice(0, 60)}…"`);
      if (http()) {
        const [post] = posts(id);
        await web.waitFor(() => post.clientClosed || post.done, 5_000, 'the stopped request to end');
        assert.equal(post.clientClosed, true, 'stop() closed the request');
      }

      await send('hello after stop');
      await reply('You said: hello after stop', 10_000);
      const msgs = await view();
      assert.deepEqual(
        msgs.map((m) => m.role),
        ['user', 'assistant', 'user', 'assistant'],
      );
      assert.deepEqual(msgs[1].texts, [stopped], 'the stopped reply stays as it was');
      if (http()) {
        const next = posts(id)[1];
        assert.deepEqual(
          next.body.messages.map((m) => m.role),
          ['user', 'assistant', 'user'],
          'the stopped reply is sent back as history',
        );
        assertStream(next, 'the next reply');
      }
    });

    test('a reload mid-reply resumes the turn: the reply ends once, not doubled', async () => {
      const { id } = await open();
      await send('count to 400');
      await page.waitForFunction(
        () => ([...document.querySelectorAll('.msg[data-role=assistant] .text')].at(-1)?.textContent ?? '').split(' ').length >= 10,
        null,
        { timeout: 15_000 },
      );
      const before = await lastAssistantText();
      assert.ok(words(before) < 400, 'reloaded mid-reply');
      const gets = web.of(id).filter((e) => e.method === 'GET').length;
      await page.reload();
      await page.waitForSelector('html[data-ready=true]', { timeout: 15_000 });
      const resumed = http()
        ? await web.waitFor(
            () => web.of(id).filter((e) => e.method === 'GET')[gets]?.status !== undefined && web.of(id).filter((e) => e.method === 'GET')[gets],
            10_000,
            'the GET …/stream after the reload',
          )
        : null;
      if (http()) assert.equal(resumed.status, 200, 'a turn is running: GET /api/chat/{id}/stream answers 200 and streams it');
      await reply(countTo(400), 20_000);

      const msgs = await view();
      assert.deepEqual(
        msgs.map((m) => m.role),
        ['user', 'assistant'],
        'the resumed reply continues its message, not a second one',
      );
      assert.deepEqual(msgs[0].texts, ['count to 400']);
      assert.deepEqual(msgs[1].texts, [countTo(400)], 'the whole reply, once');
      if (http()) {
        assert.equal(posts(id).length, 1, 'no new turn was started');
        assert.equal(posts(id)[0].clientClosed, true, 'the reload cut the first request');
        assertStream(resumed, 'the resumed stream');
        assert.equal(resumed.chunks[0].messageId, msgs[1].id, 'the replay starts with the message id of the turn');
      }
    });
  });
