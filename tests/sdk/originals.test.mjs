// weft-sdk against the four ORIGINAL servers, not weft (issue 18): stand-ins written with the
// `ws` package (tests/sdk/originals/standins.mjs), each playing its original as
// ../shared/specs/ORIGINALS.md describes it — no subprotocol selected (agentloop's echoes the
// first offered), its own run ids, its own end of turn, its own reaction to frames outside its
// document — driven by the BUILT package (pkg/, scripts/build-sdk first) in Node ≥ 22 and in
// headless Chromium. The same scenarios (tests/sdk/originals/scenarios.mjs) run in both, and
// the same checks judge their outcome and what each stand-in received: the client finds the
// original by itself (`server: "auto"`), speaks only the dialect's document there (no ping
// outside loom, no resume, cancel, client_tools or tool_result: every stand-in records a
// refusal, and none may have one but agentloop's answer to the one probe ping), correlates
// runs by the original's own frames, fails a run cut by a drop with `resume_unsupported` and
// runs the next, and rejects what needs weft with `unsupported` at once.
//
// Run: node_modules/.bin/node --test tests/sdk/originals.test.mjs (Node 22: the package needs
// the global WebSocket).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import init, { Client } from 'weft-sdk';

import { launchChromium, serveStatic } from './harness.mjs';
import * as scenarios from './originals/scenarios.mjs';
import { within } from './originals/within.mjs';
import { EXPLANATION, PATCH, PLAIN, TIME, startOriginal } from './originals/standins.mjs';

/** @type {import('weft-sdk').Dialect[]} */
const DIALECTS = ['loom', 'agentloop', 'agentchat', 'cueso'];
const OPTIONS = {
  sessionId: 'sess-originals',
  token: 's3cret',
  reconnect: { initialDelayMs: 20, maxDelayMs: 100 },
  // So frequent that a heartbeat ping the original does not know would go out many times.
  heartbeatIntervalMs: 40,
  heartbeatTimeoutMs: 2000,
  requestTimeoutMs: 5000,
};
const LIMIT = { timeout: 30_000 };

await init();

// ----- where the scenarios run -----

const node = {
  name: 'node',
  run: (scenario, args) => scenario({ Client, within }, args),
};

const chromium = {
  name: 'chromium',
  /** @type {import('playwright-core').Page | null} */
  page: null,
  /** @type {Awaited<ReturnType<typeof launchChromium>> | null} */
  browser: null,
  /** @type {Awaited<ReturnType<typeof serveStatic>> | null} */
  web: null,
  /** @type {string[]} */
  errors: [],
  async start() {
    this.web = await serveStatic({
      '/': '<!doctype html><meta charset="utf-8"><title>weft-sdk and the originals</title><script type="module" src="/page.mjs"></script>',
      '/page.mjs': new URL('./originals/page.mjs', import.meta.url),
      '/within.mjs': new URL('./originals/within.mjs', import.meta.url),
      '/favicon.ico': '',
    });
    const browser = (this.browser = await launchChromium());
    const page = (this.page = browser.context.pages()[0] ?? (await browser.context.newPage()));
    page.on('pageerror', (e) => this.errors.push(String(e)));
    await page.goto(`${this.web.url}/`);
    await page.waitForFunction(() => window.ready === true, null, { timeout: 30_000 });
  },
  async stop() {
    await this.browser?.close();
    await this.web?.close();
  },
  run(scenario, args) {
    // The scenario travels as source text and runs in the page with the page's package.
    if (!this.page) throw new Error('chromium.run before chromium.start');
    const run = this.page.evaluate(([source, a]) => (0, eval)(`(${source})`)(window.env, a), [scenario.toString(), args]);
    return within(run, 20_000, `${scenario.name} in Chromium`);
  },
};

/** Runs `scenario` against a fresh stand-in of `dialect`'s original; returns its outcome and
 * what the stand-in saw. */
/**
 * @param {{ run: (scenario: Function, args: unknown) => Promise<any> }} where
 * @param {Function} scenario
 * @param {import('weft-sdk').Dialect} dialect
 * @param {Json} [options] the Client's, but for its url and dialect
 * @param {Record<string, unknown>} [extra] more arguments for the scenario
 */
async function play(where, scenario, dialect, options = OPTIONS, extra = {}) {
  const server = await startOriginal(dialect);
  try {
    const out = await where.run(scenario, { url: server.url, dialect, options, ...extra });
    // Anything the client still sends after closing would show up here.
    await new Promise((r) => setTimeout(r, 50));
    return { out, server };
  } finally {
    await server.close();
  }
}

// ----- what every scenario must leave true -----

const WEFT_ONLY = ['resume', 'cancel', 'client_tools', 'tool_result'];

/** The client spoke only the dialect's document: nothing weft-only, pings only where the
 * document has them (loom) — but for the one probe agentloop's `ws` server makes necessary —
 * and no frame the original refused. */
function documentOnly(dialect, server) {
  const types = server.received.map((m) => m.type);
  for (const t of WEFT_ONLY) assert.ok(!types.includes(t), `${dialect}: sent ${t}: ${JSON.stringify(server.received)}`);
  const pings = types.filter((t) => t === 'ping').length;
  if (dialect === 'agentloop') {
    assert.equal(pings, 1, 'agentloop: only the probe ping');
    assert.equal(server.refusals.length, 1);
    assert.equal(server.refusals[0].type, 'ping');
  } else {
    if (dialect !== 'loom') assert.equal(pings, 0, `${dialect}: no heartbeat ping`);
    assert.deepEqual(server.refusals, [], `${dialect}: the original refused nothing`);
  }
}

/** The handshakes of a client that found the original (and `extra` reconnects after). */
function foundOriginal(dialect, server, extra = 0) {
  const hs = server.handshakes;
  if (dialect === 'agentloop') {
    // Its `ws` server selects the first protocol offered: one socket, the probe told.
    assert.equal(hs[0].selected, 'weft.agentloop');
    assert.equal(hs.length, 1 + extra);
  } else {
    // Offered weft.<dialect>, refused for want of a selected one, then again without.
    assert.equal(hs[0].offered, `weft.${dialect}, weft.token.s3cret`);
    assert.equal(hs[0].selected, null);
    assert.ok(!hs[0].url.includes('token='), hs[0].url);
    assert.equal(hs[1].offered, null);
    assert.equal(hs.length, 2 + extra);
  }
  // On an original the token is in the query string, where its clients put it.
  for (const h of hs.slice(dialect === 'agentloop' ? 1 : 1)) {
    assert.equal(h.offered, null, JSON.stringify(hs));
    assert.match(h.url, /[?&]session_id=sess-originals&token=s3cret$/);
  }
}

const userAndAssistant = (transcript) => transcript.messages.filter((m) => m.text).map((m) => [m.role, m.text]);

// ----- the tests -----

for (const where of [node, chromium]) {
  describe(`in ${where.name === 'node' ? 'Node 22' : 'headless Chromium'}`, () => {
    if (where.start) {
      before(() => where.start(), { timeout: 60_000 });
      after(async () => {
        await where.stop();
        assert.deepEqual(where.errors, [], 'no uncaught error on the page');
      });
    }

    for (const dialect of DIALECTS) {
      test(`${dialect}: connect() finds the original by itself and heartbeats only where the document has ping`, LIMIT, async () => {
        const { out, server } = await play(where, scenarios.connect, dialect);
        assert.equal(out.before, null, 'unknown before the first socket');
        assert.equal(out.after, 'original');
        assert.deepEqual(out.states, ['connecting', 'open']);
        foundOriginal(dialect, server);
        documentOnly(dialect, server);
        if (dialect === 'loom') {
          assert.ok(server.received.filter((m) => m.type === 'ping').length >= 2, "loom's own ping keeps the heartbeat");
        }
      });

      test(`${dialect}: a run streams its text, resolves with the reply and fills the transcript`, LIMIT, async () => {
        const { out, server } = await play(where, scenarios.plainRun, dialect);
        assert.equal(out.text, PLAIN);
        assert.equal(out.result.reply, PLAIN);
        assert.equal(out.kinds.at(-1), 'run_end');
        assert.ok(out.finished);
        if (dialect === 'loom') {
          // The original names the run; the client adopts its name.
          assert.match(out.result.runId, /^run-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
          assert.notEqual(out.result.runId, out.askedId);
          assert.equal(out.runId, out.result.runId);
        } else {
          assert.equal(out.result.runId, out.askedId);
        }
        assert.equal(out.transcript.runs.length, 1, JSON.stringify(out.transcript.runs));
        assert.equal(out.transcript.runs[0].status, 'completed');
        assert.deepEqual(userAndAssistant(out.transcript), [
          ['user', 'Hello'],
          ['assistant', PLAIN],
        ]);
        // The registered tool cannot be offered to an original: onError says so, once.
        assert.deepEqual(out.errors, ['unsupported']);
        foundOriginal(dialect, server);
        documentOnly(dialect, server);
      });

      test(`${dialect}: a run with a tool call gives the app what weft gives it`, LIMIT, async () => {
        const { out, server } = await play(where, scenarios.toolRun, dialect);
        assert.equal(out.result.reply, TIME);
        const [call] = out.transcript.tool_calls;
        assert.equal(call.name, 'get_time');
        assert.deepEqual(call.arguments, { timezone: 'UTC' });
        // agentchat's original never reports the result: the call ends with its run.
        assert.equal(call.result, dialect === 'agentchat' ? '' : '2026-11-22T10:00:00Z');
        assert.equal(call.status, 'done');
        // tool_call before the result and tool_end after it, with the name and the id.
        assert.ok(call.call_id, JSON.stringify(call));
        assert.deepEqual(out.tools, [`tool_call get_time ${call.call_id}`, `tool_end get_time ${call.call_id}`]);
        // The transcript names the run as run.result does.
        assert.deepEqual(
          out.transcript.runs.map((r) => [r.status, r.run_id]),
          [['completed', out.result.runId]],
        );
        for (const m of out.transcript.messages) assert.equal(m.run_id, out.result.runId, JSON.stringify(m));
        assert.equal(call.run_id, out.result.runId);
        documentOnly(dialect, server);
      });

      test(`${dialect}: a socket cut mid-run fails the run with resume_unsupported and the next run works`, LIMIT, async () => {
        const { out, server } = await play(where, scenarios.drop, dialect);
        assert.equal(out.error?.name, 'WeftError');
        assert.equal(out.error.code, 'resume_unsupported', out.error.message);
        assert.match(out.error.message, /cannot resume/);
        // What arrived before the cut stays in the transcript, the run marked failed.
        assert.equal(out.during.runs.at(-1).status, 'failed');
        assert.ok(
          out.during.messages.some((m) => m.text === 'Hal' || m.reasoning === 'Hal'),
          JSON.stringify(out.during.messages),
        );
        if (dialect !== 'agentchat') assert.equal(out.partial, 'Hal');
        assert.equal(out.next.reply, PLAIN);
        assert.deepEqual(
          out.transcript.runs.map((r) => r.status),
          ['failed', 'completed'],
        );
        assert.deepEqual(out.states.slice(0, 4), ['connecting', 'open', 'reconnecting', 'open']);
        foundOriginal(dialect, server, 1);
        documentOnly(dialect, server);
      });

      test(`${dialect}: what needs weft rejects with unsupported at once`, LIMIT, async () => {
        const { out, server } = await play(where, scenarios.unsupported, dialect);
        const expected = [...(dialect === 'loom' ? [] : ['ping()']), 'follow()', 'run.cancel()'];
        assert.deepEqual(
          out.out.map((o) => o.what),
          expected,
        );
        for (const o of out.out) {
          assert.equal(o.code, 'unsupported', `${o.what}: ${o.code}`);
          assert.ok(o.ms < 500, `${o.what} took ${o.ms} ms`);
        }
        assert.equal(out.reply, PLAIN, 'the run refused a cancel still completes');
        documentOnly(dialect, server);
      });
    }

    test('agentloop: approvals without a call id — yes, no-continue, explain then yes, and a shell command', LIMIT, async () => {
      const { out, server } = await play(where, scenarios.approvals, 'agentloop');
      // The request names the call it is about (the original's names none: the turn's one
      // waiting call), and the decision is recorded on that call.
      const request = { callId: 'call_w', name: 'apply_patch', arguments: { patch: PATCH } };
      const said = (...parts) => parts.join('');
      assert.deepEqual(out.yes, { reply: 'Wrote notes.txt.', asked: [request], text: said('I will write the file.', 'Wrote notes.txt.') });
      assert.deepEqual(out['no-continue'], { reply: 'I did not write it.', asked: [request], text: said('I will write the file.', 'I did not write it.') });
      // explain: the original explains and asks again. The explanation is assistant text
      // (onText streams it, as it does text before a tool call) but not the run's reply,
      // which is its final answer: the same on weft.
      assert.deepEqual(out.explain, {
        reply: 'Wrote notes.txt.',
        asked: [request, request],
        text: said('I will write the file.', EXPLANATION, 'Wrote notes.txt.'),
      });
      // A shell command comes as its argv (`bash -lc …`), asked as the tool `shell`.
      const shell = { callId: 'call_s', name: 'shell', arguments: { command: ['bash', '-lc', 'ls'] } };
      assert.deepEqual(out.shell, { reply: 'Listed: a.txt', asked: [shell], text: 'Listed: a.txt' });
      assert.deepEqual(out.calls, [
        { name: 'apply_patch', status: 'done', review: 'yes' },
        { name: 'apply_patch', status: 'denied', review: 'no-continue' },
        { name: 'apply_patch', status: 'done', review: 'yes' },
        { name: 'shell', status: 'done', review: 'yes' },
      ]);
      assert.deepEqual(out.runs, ['completed', 'completed', 'completed', 'completed']);
      const answers = server.received.filter((m) => m.type === 'approval_response').map((m) => m.payload);
      assert.deepEqual(
        answers.map((p) => p.review),
        ['yes', 'no-continue', 'explain', 'yes', 'yes'],
      );
      for (const p of answers) assert.ok(!('callId' in p), JSON.stringify(p));
      assert.equal(answers[1].customDenyMessage, 'not now');
      assert.ok(EXPLANATION);
      documentOnly('agentloop', server);
    });

    test('cueso: a client without a sessionId stays in the session the original named for its first message', LIMIT, async () => {
      const { sessionId: _, ...options } = OPTIONS;
      const { out, server } = await play(where, scenarios.twoRuns, 'cueso', options);
      assert.equal(out.second.reply, PLAIN);
      const chats = server.received.filter((m) => typeof m.message === 'string');
      assert.deepEqual(
        chats.map((m) => m.message),
        ['Hello', 'Hello again'],
      );
      // As cueso's web app: null first, then the id from session_created.
      assert.equal(chats[0].session_id, null);
      assert.equal(chats[1].session_id, server.sessions[0], JSON.stringify(chats));
      documentOnly('cueso', server);
    });

    test("agentchat: the original streams every client's turn to every socket; each client keeps only its own", LIMIT, async () => {
      const { out, server } = await play(where, scenarios.twoClients, 'agentchat');
      assert.equal(out.other, PLAIN);
      assert.equal(out.mine, TIME);
      // The message as the original echoed it, stripped: the turn was still known as ours.
      assert.deepEqual(out.a, ['What time is it?', TIME]);
      assert.deepEqual(out.b, ['Hello', PLAIN]);
      documentOnly('agentchat', server);
    });

    test('agentloop: contextInfo() and compact() are answered by the original, and its refusal rejects compact()', LIMIT, async () => {
      const { out, server } = await play(where, scenarios.context, 'agentloop');
      assert.ok(out.empty, 'compact() on an empty transcript rejects');
      assert.match(out.empty.message, /Automatic context compaction failed/);
      assert.equal(out.reply, PLAIN);
      assert.equal(out.info.tokenCount, 120);
      assert.equal(out.info.maxTokens, 12000);
      assert.equal(out.compacted.newTokenCount, 40);
      assert.equal(out.compacted.reductionPercent, 66.7);
      documentOnly('agentloop', server);
    });

    for (const [failure, how] of [
      ['fail', 'an error, then the socket closed'],
      ['fail and stay', 'an error, and the socket kept open as with its pinned uvicorn'],
    ]) {
      test(`cueso: an exception in a turn (${how}) fails that run with its message every time; the next run works`, LIMIT, async () => {
        const { out, server } = await play(where, scenarios.failedRun, 'cueso', OPTIONS, { failure });
        assert.equal(out.length, 3);
        for (const { failed, next } of out) {
          assert.equal(failed.resolved, undefined, JSON.stringify(failed));
          assert.equal(failed.code, 'run_failed', failed.message);
          assert.match(failed.message, /529 - Overloaded/);
          assert.equal(next, PLAIN);
        }
        documentOnly('cueso', server);
      });
    }

    test("agentchat: two clients' turns at once: a run whose reply cannot be told from another's rejects with ambiguous_reply", LIMIT, async () => {
      const { out, server } = await play(where, scenarios.overlap, 'agentchat');
      // Neither takes the other's reply; both say they cannot tell.
      assert.equal(out.mine.code, 'ambiguous_reply', JSON.stringify(out));
      assert.equal(out.theirs.code, 'ambiguous_reply', JSON.stringify(out));
      assert.match(out.mine.message, /may be theirs/);
      documentOnly('agentchat', server);
    });

    test('loom: ping, toolsList, toolShow and userMessages are answered by the original', LIMIT, async () => {
      const { out, server } = await play(where, scenarios.loomRequests, 'loom');
      assert.ok(out.rtt >= 0 && out.rttDuring >= 0);
      assert.deepEqual(
        out.tools.map((t) => t.name),
        ['get_time', 'read'],
      );
      assert.deepEqual(out.tools[1].inputSchema.required, ['path']);
      assert.equal(out.json.name, 'get_time');
      assert.match(out.yaml, /^name: get_time\n/);
      assert.equal(out.reply, PLAIN);
      assert.ok(
        out.messages.messages.some((m) => m.role === 'user' && m.content === 'Hello'),
        JSON.stringify(out.messages),
      );
      assert.equal(out.messages.hasMore, false);
      documentOnly('loom', server);
    });
  });
}
