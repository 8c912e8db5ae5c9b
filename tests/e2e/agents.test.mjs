// End to end, the operator's agents (README, "Agents"): `SYSTEM_PROMPT`, `AGENTS` and
// `DEFAULT_AGENT` against the real Worker under `wrangler dev`. The agents are listed by
// `/status` and weft-sdk's `agents()`. A named variant with its own prompt and model is asked
// for from loom, the SDK (weft-sdk in Node) and `POST /api/chat`;
// agentloop, which names no agent, gets the operator's default. The scripted LLM's request log
// shows the model, system prompt and temperature each run sent. A broken `AGENTS` refuses every
// run with its reason.
//
// Run with Node ≥ 22 (weft-sdk needs the global WebSocket) after scripts/build-sdk:
// node_modules/.bin/node --test tests/e2e/agents.test.mjs

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import init, { Client } from 'weft-sdk';

import { Conn } from './client.mjs';
import { startServer } from './server.mjs';

const AGENTS = {
  support: {
    agent: 'react',
    description: 'Our support desk',
    prompt: 'You are Support.\nAnswer in French.',
    model: 'support-model',
    temperature: 0.3,
  },
  sales: { agent: 'react', prompt: 'You are Sales.', model: 'sales-model' },
  planner: { agent: 'dup', prompt: 'You are Planner.', model: 'planner-model' },
  brief: { agent: 'react', max_iterations: 2 },
  // Its provider's key is not set: refused by itself, the others run.
  claude: { agent: 'react', provider: 'anthropic', model: 'claude-sonnet-4-5' },
};

/** A setting with a newline, in `.dev.vars` syntax: double quotes make `\n` a newline. */
const ENV_FILE = 'SYSTEM_PROMPT="You are Weft.\\nKeep it short."\n';

let server;
before(
  async () => {
    await init();
    server = await startServer({
      vars: { AGENTS: JSON.stringify(AGENTS), DEFAULT_AGENT: 'support' },
      envFile: ENV_FILE,
    });
  },
  { timeout: 900_000 },
);
after(async () => {
  await server?.stop();
});

const session = () => `agents-${randomUUID()}`;
const DIALECT_AT = { '/': 'loom', '/agentloop': 'agentloop', '/ws': 'agentchat', '/ws/chat': 'cueso' };
const open = (path, sid = session()) => Conn.open(`${server.url}${path}?session_id=${sid}`, [`weft.${DIALECT_AT[path]}`]);

/** What the model was asked in the runs of `message`: tool-result turns, and the turns that quote it (dup's plan), included. */
const asked = (message) => server.llm.requests.filter((r) => r.lastUser.includes(message));

/** A unique "who are you" (the scripted LLM answers it with the system prompt's first line). */
const whoAreYou = () => `who are you (${randomUUID().slice(0, 8)})`;

/** One loom run to its end: the `run_end` frame, or the `error` that ended it. */
async function loomRun(c, run) {
  const id = randomUUID();
  c.send({ type: 'run', id, ...run });
  return c.wait((f) => (f.type === 'run_end' || f.type === 'error') && f.id === id);
}

describe('agents an operator configured', () => {
  test('/status lists every agent with its model and description, the default, and what is wrong — never a prompt or key', async () => {
    const r = await fetch(`${server.http}/status`);
    assert.equal(r.status, 200);
    const text = await r.text();
    assert.doesNotMatch(text, /You are Support|You are Weft/);
    const status = JSON.parse(text);
    assert.deepEqual(
      status.agents.map((a) => a.name),
      ['react', 'dup', 'tot', 'got', 'brief', 'claude', 'planner', 'sales', 'support'],
    );
    assert.equal(status.default_agent, 'support');
    const by = Object.fromEntries(status.agents.map((a) => [a.name, a]));
    assert.deepEqual(by.support, {
      name: 'support',
      description: 'Our support desk',
      agent: 'react',
      provider: 'openai',
      model: 'support-model',
      problem: null,
    });
    assert.deepEqual(by.planner, {
      name: 'planner',
      description: 'A variant of dup',
      agent: 'dup',
      provider: 'openai',
      model: 'planner-model',
      problem: null,
    });
    assert.equal(by.react.model, 'scripted');
    assert.match(by.react.description, /^Reason and act/);
    assert.equal(by.claude.provider, null);
    assert.match(by.claude.problem, /^AGENTS: agent "claude": provider anthropic needs ANTHROPIC_API_KEY, which is not set/);
    assert.deepEqual(status.problems, [by.claude.problem]);
    // Said at start-up too: the Worker's log has it.
    assert.match(server.log(), /weft: settings: AGENTS: agent "claude": provider anthropic needs ANTHROPIC_API_KEY/);
  });

  test('loom asks for a variant by name: its prompt, model and temperature reach the model', async () => {
    const c = await open('/');
    const message = whoAreYou();
    const end = await loomRun(c, { message, agent: 'support' });
    assert.equal(end.reply, 'I am: You are Support.');
    const sent = asked(message);
    assert.equal(sent.length, 1);
    assert.deepEqual(
      { model: sent[0].model, system: sent[0].system, temperature: sent[0].temperature },
      { model: 'support-model', system: 'You are Support.\nAnswer in French.', temperature: 0.3 },
    );
    c.close();
  });

  test("an agent without a prompt of its own gets SYSTEM_PROMPT, its newline intact, on the server's model", async () => {
    const c = await open('/');
    const message = whoAreYou();
    const end = await loomRun(c, { message, agent: 'react' });
    assert.equal(end.reply, 'I am: You are Weft.');
    const [sent] = asked(message);
    assert.deepEqual(
      { model: sent.model, system: sent.system, temperature: sent.temperature },
      { model: 'scripted', system: 'You are Weft.\nKeep it short.', temperature: null },
    );
    c.close();
  });

  test("a variant of dup runs dup's steps, each with the variant's persona and model", async () => {
    const c = await open('/');
    const message = whoAreYou();
    const end = await loomRun(c, { message, agent: 'planner' });
    assert.equal(end.reply, 'I am: You are Planner.');
    const sent = asked(message);
    assert.ok(sent.length >= 2, `understand and plan: ${sent.length} requests`);
    for (const r of sent) {
      assert.equal(r.model, 'planner-model');
      assert.ok(r.system.startsWith('You are Planner.\n\n'), r.system);
    }
    assert.ok(sent.some((r) => r.system.includes('Understand the problem first.')));
    c.close();
  });

  test("a variant's max_iterations caps its runs", async () => {
    const c = await open('/');
    const message = `loop forever ${randomUUID().slice(0, 8)}`;
    const end = await loomRun(c, { message, agent: 'brief' });
    assert.equal(end.type, 'run_end');
    assert.equal(asked(message).length, 2);
    c.close();
  });

  test("a loom SOUL.md in the run's folder goes before the variant's own prompt", async () => {
    const c = await open('/');
    const id = randomUUID();
    c.send({ type: 'run', id, message: 'write You are a pirate. to crew/SOUL.md', agent: 'react' });
    const ask = (await c.wait((f) => f.event?.type === 'tool_approval')).event;
    c.send({ type: 'approval_response', call_id: ask.call_id, review: 'yes' });
    await c.wait((f) => f.type === 'run_end' && f.id === id);
    const message = whoAreYou();
    const end = await loomRun(c, { message, agent: 'sales', working_folder: 'crew' });
    assert.equal(end.reply, 'I am: You are a pirate.');
    assert.equal(asked(message)[0].model, 'sales-model');
    c.close();
  });

  test("agentloop names no agent: its runs get the operator's DEFAULT_AGENT", async () => {
    const c = await open('/agentloop');
    const message = whoAreYou();
    c.send({ id: randomUUID(), type: 'user_input', payload: { input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: message }] }] } });
    const done = await c.wait((f) => f.type === 'loading_state' && f.payload.loading === false);
    assert.equal(done.reply, 'I am: You are Support.');
    assert.equal(asked(message)[0].model, 'support-model');
    c.close();
  });

  test('weft-sdk lists the agents as /status does, before any socket opens', async () => {
    const status = await (await fetch(`${server.http}/status`)).json();
    const client = new Client({ url: server.http, dialect: 'agentchat', sessionId: session() });
    try {
      const list = await client.agents();
      assert.equal(list.defaultAgent, 'support');
      // The SDK's list names every agent's remote host: none for these (weft runs them).
      assert.deepEqual(
        list.agents,
        status.agents.map((/** @type {any} */ a) => ({ ...a, remote: null })),
      );
    } finally {
      client.close();
    }
    // A server without /status (here: the scripted LLM's 404) is `unsupported`.
    const elsewhere = new Client({ url: server.llm.url, dialect: 'agentchat' });
    await assert.rejects(elsewhere.agents(), (/** @type {any} */ e) => e.code === 'unsupported' && /GET \/status.*HTTP 404/.test(e.message));
    elsewhere.close();
  });

  test('weft-sdk asks for a variant with its agent option; without one, the default runs', async () => {
    for (const dialect of /** @type {const} */ (['cueso', 'agentloop'])) {
      const client = new Client({ url: server.url, dialect, sessionId: session() });
      await client.connect();
      try {
        const named = whoAreYou();
        const { reply } = await client.run({ message: named, agent: 'sales' }).result;
        assert.equal(reply, 'I am: You are Sales.', dialect);
        assert.equal(asked(named)[0].model, 'sales-model', dialect);
        const unnamed = whoAreYou();
        const byDefault = await client.run({ message: unnamed }).result;
        assert.equal(byDefault.reply, 'I am: You are Support.', dialect);
        assert.equal(asked(unnamed)[0].model, 'support-model', dialect);
      } finally {
        client.close();
      }
    }
  });

  test('POST /api/chat asks for a variant in its body; without one, the default runs', async () => {
    for (const [agent, persona, model] of [
      ['sales', 'Sales', 'sales-model'],
      [undefined, 'Support', 'support-model'],
    ]) {
      const message = whoAreYou();
      const body = { id: `agents-${randomUUID()}`, messages: [{ id: randomUUID(), role: 'user', parts: [{ type: 'text', text: message }] }], agent };
      const res = await fetch(`${server.http}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal(res.status, 200);
      const chunks = (await res.text())
        .split('\n\n')
        .filter((e) => e.startsWith('data: {'))
        .map((e) => JSON.parse(e.slice(6)));
      const text = chunks
        .filter((c) => c.type === 'text-delta')
        .map((c) => c.delta)
        .join('');
      assert.equal(text, `I am: You are ${persona}.`);
      assert.equal(asked(message)[0].model, model);
    }
  });

  test('an agent nobody configured, or one whose provider has no key, is refused with the reason; the session goes on', async () => {
    const c = await open('/');
    const unknown = await loomRun(c, { message: 'hi', agent: 'marketing' });
    assert.equal(unknown.code, 'agent_unavailable');
    assert.equal(unknown.error, 'unknown agent: marketing (use one of react, dup, tot, got, brief, claude, planner, sales, support)');
    const keyless = await loomRun(c, { message: 'hi', agent: 'claude' });
    assert.equal(keyless.code, 'model_not_configured');
    assert.match(keyless.error, /ANTHROPIC_API_KEY/);
    const fine = await loomRun(c, { message: 'hello', agent: 'sales' });
    assert.equal(fine.reply, 'You said: hello');
    c.close();
  });
});

describe('a broken AGENTS setting', () => {
  let broken;
  before(
    async () => {
      // Written as a table of wrangler.toml's [vars] (the Worker gets an object, not text): read
      // all the same, so its mistake is seen rather than the setting taken for unset.
      const toml = '[vars]\nAGENTS = { support = { agent = "react", promt = "You are Support." } }\n';
      broken = await startServer({ toml });
    },
    { timeout: 900_000 },
  );
  after(async () => {
    await broken?.stop();
  });

  test('is said at start-up and in /status, and refuses every run with its reason instead of running without it', async () => {
    const why =
      'AGENTS: agent "support": unknown field `promt`, expected one of `agent`, `url`, `headers`, `description`, `prompt`, `model`, `provider`, `temperature`, `max_iterations`';
    const status = await (await fetch(`${broken.http}/status`)).json();
    // The Worker logs it on its first request (the start-up check's); wrangler's output may
    // reach us a moment after that request's answer, so the log is read for a while.
    for (let i = 0; i < 100 && !broken.log().includes(`weft: settings: ${why}`); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(broken.log().includes(`weft: settings: ${why}`), broken.log().slice(-2000));
    assert.equal(status.problems.length, 1);
    assert.ok(status.problems[0].startsWith(why), status.problems[0]);
    const c = await Conn.open(`${broken.url}/?session_id=${session()}`, ['weft.loom']);
    for (const agent of ['react', 'support']) {
      c.send({ type: 'run', id: agent, message: 'hi', agent });
      const error = await c.wait((f) => f.type === 'error' && f.id === agent);
      assert.equal(error.code, 'settings_invalid');
      assert.ok(error.error.startsWith(why), error.error);
    }
    c.close();
    // POST /api/chat: the same reason, as the operator's to fix (503).
    const body = { id: `agents-${randomUUID()}`, messages: [{ id: randomUUID(), role: 'user', parts: [{ type: 'text', text: 'hi' }] }] };
    const res = await fetch(`${broken.http}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(res.status, 503);
    assert.ok((await res.text()).startsWith(why));
    assert.equal(broken.llm.requests.length, 0);
  });
});
