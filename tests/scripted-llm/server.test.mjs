// Tests of the scripted LLM server, shared behaviour per provider and its plumbing (run with
// `node --test tests/scripted-llm/*.test.mjs`). The server runs in-process on a free port;
// every request has a timeout, so nothing hangs.

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startScriptedLlm, faultFor } from './server.mjs';
import { tokenize, fragment } from './lib.mjs';
import { evaluate, extractExpression } from './rules.mjs';
import { useScriptedLlm, llm, tryJson, shape, readAll, openai, anthropic, gemini, PROVIDERS, send, turn, withIds } from './kit.mjs';

useScriptedLlm();

test('GET /healthz answers ok', async () => {
  const res = await fetch(`${llm.url}/healthz`, { signal: AbortSignal.timeout(5000) });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'ok');
});

for (const P of PROVIDERS) {
  describe(`${P.name}: replies and tools`, () => {
    test('plain reply is echoed, streamed in small word deltas', async () => {
      const r = await turn(P, { messages: [P.user('Hello there, scripted model')] });
      assert.equal(r.status, 200);
      assert.equal(r.text, 'You said: Hello there, scripted model');
      assert.ok(r.textDeltas >= 5, `deltas: ${r.textDeltas}`);
      assert.equal(r.finish, 'end');
      assert.equal(r.calls.length, 0);
      assert.ok(r.complete);
      assert.ok(r.usage.prompt > 0 && r.usage.completion === r.textDeltas, JSON.stringify(r.usage));
      assert.equal(r.rule, 'echo');
    });

    test('non-streamed reply', async () => {
      const r = await turn(P, { messages: [P.user('Hello again')], stream: false });
      assert.equal(r.status, 200);
      assert.match(r.res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(r.text, 'You said: Hello again');
      assert.equal(r.finish, 'end');
    });

    test('"what time is it" calls get_time, then quotes the result', async () => {
      const tools = ['get_time', 'calculator'];
      const q = P.user('What time is it?');
      const r1 = await turn(P, { messages: [q], tools });
      assert.equal(r1.finish, 'tool');
      assert.equal(r1.calls.length, 1);
      assert.equal(r1.calls[0].name, 'get_time');
      assert.deepEqual(r1.calls[0].args, { timezone: 'UTC' });
      if (P !== gemini) {
        assert.ok(r1.calls[0].id, 'call id');
        assert.ok(r1.argFragments >= 3, `argument fragments: ${r1.argFragments}`);
      }
      const calls = withIds(r1.calls);
      const r2 = await turn(P, {
        messages: [q, P.calls(calls), ...P.results([{ id: calls[0].id, name: 'get_time', content: '2025-06-01T12:00:00Z' }])],
        tools,
      });
      assert.equal(r2.status, 200, r2.raw);
      assert.equal(r2.text, 'It is 2025-06-01T12:00:00Z.');
      assert.equal(r2.finish, 'end');
      assert.equal(r2.rule, 'tool-results');
    });

    test('time without a get_time tool is a plain reply', async () => {
      const r = await turn(P, { messages: [P.user('what time is it')] });
      assert.equal(r.calls.length, 0);
      assert.match(r.text, /clock/);
    });

    test('"write X to F" calls apply_patch with a Codex patch; confirmation and denial replies', async () => {
      const tools = ['apply_patch', 'read'];
      const q = P.user('write hello world to notes.txt');
      const r1 = await turn(P, { messages: [q], tools });
      assert.equal(r1.calls.length, 1);
      assert.equal(r1.calls[0].name, 'apply_patch');
      assert.equal(r1.calls[0].args.patch, '*** Begin Patch\n*** Add File: notes.txt\n+hello world\n*** End Patch');
      const calls = withIds(r1.calls);
      const ok = await turn(P, {
        messages: [q, P.calls(calls), ...P.results([{ id: calls[0].id, name: 'apply_patch', content: 'Success. Updated the following files:\nA notes.txt' }])],
        tools,
      });
      assert.equal(ok.text, 'Done: I wrote notes.txt.');
      const denied = await turn(P, {
        messages: [q, P.calls(calls), ...P.results([{ id: calls[0].id, name: 'apply_patch', content: 'The user denied this tool call.', isError: true }])],
        tools,
      });
      assert.equal(denied.text, 'Understood: writing notes.txt was denied, so I left it unchanged.');
    });

    test('"write" falls back to the write tool when apply_patch is not offered', async () => {
      const r = await turn(P, { messages: [P.user('Write "a b c" to dir/out.md')], tools: ['write'] });
      assert.equal(r.calls[0].name, 'write');
      assert.deepEqual(r.calls[0].args, { path: 'dir/out.md', content: 'a b c' });
    });

    test('"calculate" calls calculator and reports the result', async () => {
      const tools = ['calculator'];
      const q = P.user('calculate (3+4)*5');
      const r1 = await turn(P, { messages: [q], tools });
      assert.equal(r1.calls[0].name, 'calculator');
      assert.deepEqual(r1.calls[0].args, { expression: '(3+4)*5' });
      const calls = withIds(r1.calls);
      const r2 = await turn(P, { messages: [q, P.calls(calls), ...P.results([{ id: calls[0].id, name: 'calculator', content: '35' }])], tools });
      assert.equal(r2.text, '(3+4)*5 = 35.');
    });

    test('"what is 2+2" calls calculator; without the tool it answers itself', async () => {
      const r1 = await turn(P, { messages: [P.user('What is 2+2?')], tools: ['calculator'] });
      assert.deepEqual(r1.calls[0].args, { expression: '2+2' });
      const r2 = await turn(P, { messages: [P.user('What is 2+2?')] });
      assert.equal(r2.text, '2+2 = 4.');
    });

    test('"parallel" makes two tool calls in one response, then answers both', async () => {
      const tools = ['get_time', 'calculator'];
      const q = P.user('Get the time and calculate 6*7 in parallel');
      const r1 = await turn(P, { messages: [q], tools });
      assert.equal(r1.finish, 'tool');
      assert.deepEqual(
        r1.calls.map((c) => c.name),
        ['get_time', 'calculator'],
      );
      assert.deepEqual(r1.calls[1].args, { expression: '6*7' });
      if (P !== gemini) assert.notEqual(r1.calls[0].id, r1.calls[1].id);
      if (P === openai) {
        const indexes = new Set();
        for (const e of r1.events) for (const ch of tryJson(e.data)?.choices ?? []) for (const tc of ch.delta.tool_calls ?? []) indexes.add(tc.index);
        assert.deepEqual([...indexes], [0, 1]);
      }
      if (P === gemini) {
        const withCalls = r1.events.filter((e) => tryJson(e.data)?.candidates?.[0].content.parts.some((p) => p.functionCall));
        assert.equal(withCalls.length, 1, 'both functionCall parts in one chunk');
      }
      const calls = withIds(r1.calls);
      const r2 = await turn(P, {
        messages: [
          q,
          P.calls(calls),
          ...P.results([
            { id: calls[0].id, name: 'get_time', content: '12:00 UTC' },
            { id: calls[1].id, name: 'calculator', content: '42' },
          ]),
        ],
        tools,
      });
      assert.equal(r2.text, 'It is 12:00 UTC. 6*7 = 42.');
    });

    test('"think" streams reasoning first, then the reply', async () => {
      const r = await turn(P, { messages: [P.user('think about the weather')] });
      assert.match(r.reasoning, /^The user wrote: "think about the weather"/);
      assert.equal(r.text, 'You said: think about the weather');
      assert.equal(r.rule, 'think+echo');
      const tooled = await turn(P, { messages: [P.user('reason: what time is it?')], tools: ['get_time'] });
      assert.match(tooled.reasoning, /call get_time/);
      assert.equal(tooled.calls[0].name, 'get_time');
      const json = await turn(P, { messages: [P.user('think')], stream: false });
      assert.ok(json.reasoning.length > 0);
    });

    test('"count to N" streams exactly N word deltas; "long reply N" N words', async () => {
      const r = await turn(P, { messages: [P.user('count to 50')] });
      assert.equal(r.textDeltas, 50);
      assert.equal(r.text, Array.from({ length: 50 }, (_, i) => i + 1).join(' '));
      assert.equal(r.usage.completion, 50);
      const l = await turn(P, { messages: [P.user('long reply 30')] });
      assert.equal(l.textDeltas, 30);
      assert.equal(l.text.split(' ').length, 30);
    });

    test('"explain" gives a short explanation of a command', async () => {
      const r = await turn(P, { messages: [P.user('Explain this command: `rm -rf build`')] });
      assert.equal(r.text, 'The command `rm -rf build` deletes files. It changes files, so approve it only if that is what you want.');
    });

    test('summarise prompts get a deterministic summary', async () => {
      const msgs = [P.user('what is the capital of France'), P.calls([]), P.user('Please summarize the conversation')];
      // an assistant turn with text instead of calls, per provider
      msgs[1] =
        P === openai
          ? { role: 'assistant', content: 'Paris.' }
          : P === anthropic
            ? { role: 'assistant', content: 'Paris.' }
            : { role: 'model', parts: [{ text: 'Paris.' }] };
      const r = await turn(P, { messages: msgs });
      assert.equal(
        r.text,
        'Summary of the conversation so far: The user asked: "what is the capital of France". The assistant made no tool calls and gave 1 reply.',
      );
      assert.equal(r.rule, 'summarize');
    });

    test('a max-tokens limit cuts the reply and stops with length', async () => {
      const extra = P === openai ? { max_tokens: 3 } : P === anthropic ? { max_tokens: 3 } : { generationConfig: { maxOutputTokens: 3 } };
      const r = await turn(P, { messages: [P.user('count to 10')], extra });
      assert.equal(r.text, '1 2 3');
      assert.equal(r.finish, 'length');
    });

    test('replies are deterministic', async () => {
      const a = await turn(P, { messages: [P.user('parallel')], tools: ['get_time', 'calculator'] });
      const b = await turn(P, { messages: [P.user('parallel')], tools: ['get_time', 'calculator'] });
      const strip = (s) => s.replace(/"created":\d+/g, '');
      assert.equal(strip(a.raw), strip(b.raw));
    });

    test('x-scripted-delay-ms paces the chunks', async () => {
      const t0 = Date.now();
      const r = await turn(P, { messages: [P.user('count to 4')] }, { 'x-scripted-delay-ms': '40' });
      assert.equal(r.textDeltas, 4);
      const gaps = r.events.length - 1;
      assert.ok(gaps >= 3);
      assert.ok(Date.now() - t0 >= gaps * 40 - 10, `${gaps} gaps took ${Date.now() - t0} ms`);
    });
  });

  describe(`${P.name}: auth and faults`, () => {
    test('missing key is a 401 in the provider shape', async () => {
      const { path, body } = P.request({ messages: [P.user('hi')] });
      const headers = { 'content-type': 'application/json', ...(P === anthropic ? { 'anthropic-version': '2023-06-01' } : {}) };
      const res = await send(path, body, headers);
      assert.equal(res.status, 401);
      const kind = P.errorShape(await res.json());
      assert.equal(kind, { openai: 'invalid_request_error', anthropic: 'authentication_error', gemini: 'UNAUTHENTICATED' }[P.name]);
    });

    const httpFaults = [
      ['401', 401, { openai: 'invalid_request_error', anthropic: 'authentication_error', gemini: 'UNAUTHENTICATED' }],
      ['429', 429, { openai: 'tokens', anthropic: 'rate_limit_error', gemini: 'RESOURCE_EXHAUSTED' }],
      ['500', 500, { openai: 'server_error', anthropic: 'api_error', gemini: 'INTERNAL' }],
      ['529', { openai: 503, anthropic: 529, gemini: 503 }, { openai: 'server_error', anthropic: 'overloaded_error', gemini: 'UNAVAILABLE' }],
    ];
    for (const [mode, status, kinds] of httpFaults) {
      test(`model fault-${mode} answers the provider's error`, async () => {
        const r = await turn(P, { messages: [P.user('hi')], model: `fault-${mode}` });
        assert.equal(r.status, typeof status === 'number' ? status : status[P.name]);
        assert.equal(P.errorShape(r.body), kinds[P.name]);
        if (mode === '429') assert.equal(r.res.headers.get('retry-after'), '2');
      });
    }

    test('x-scripted-fault header selects a fault too', async () => {
      const r = await turn(P, { messages: [P.user('hi')] }, { 'x-scripted-fault': '429' });
      assert.equal(r.status, 429);
      assert.equal(r.res.headers.get('retry-after'), '2');
    });

    test('fault-cut drops the connection mid-stream without a terminator', async () => {
      const { path, body } = P.request({ messages: [P.user('count to 20')], model: 'scripted-fault-cut' });
      const res = await send(path, body, P.headers);
      assert.equal(res.status, 200);
      const { text, error } = await readAll(res);
      assert.ok(error, 'reading the body fails');
      assert.ok(text.length > 0, 'some chunks arrived first');
      const out = P.decode(text);
      assert.ok(!out.complete, 'no terminator');
      assert.ok(out.text.length > 0 && out.text.length < 50);
    });

    test('fault-malformed sends one data line with broken JSON, then the rest', async () => {
      const r = await turn(P, { messages: [P.user('count to 10')], model: 'fault-malformed' });
      const bad = r.events.filter((e) => e.data !== '[DONE]' && tryJson(e.data) === undefined);
      assert.equal(bad.length, 1);
      assert.ok(r.complete);
      assert.equal(r.text, '1 2 3 4 5 6 7 8 9 10');
    });

    test('fault-stream-error ends the stream with the provider error event', async () => {
      const r = await turn(P, { messages: [P.user('count to 10')], model: 'fault-stream-error' });
      assert.equal(r.status, 200);
      assert.ok(!r.complete);
      const last = r.events[r.events.length - 1];
      if (P === openai) assert.equal(tryJson(last.data).error.type, 'server_error');
      if (P === anthropic) {
        assert.equal(last.event, 'error');
        assert.equal(tryJson(last.data).error.type, 'overloaded_error');
      }
      if (P === gemini) assert.equal(tryJson(last.data).error.status, 'INTERNAL');
    });

    test('fault-stall sends headers and one chunk, then nothing; the server lets go when the client does', async () => {
      const ac = new AbortController();
      const kill = setTimeout(() => ac.abort(), 5000);
      try {
        const { path, body } = P.request({ messages: [P.user('count to 10')], model: 'fault-stall' });
        const res = await send(path, body, P.headers, ac.signal);
        assert.equal(res.status, 200);
        assert.ok(res.body);
        const reader = res.body.getReader();
        const first = await reader.read();
        assert.ok(!first.done && first.value.length > 0);
        const more = await Promise.race([
          reader.read().then(
            () => 'data',
            () => 'error',
          ),
          new Promise((r) => setTimeout(r, 300, 'silence')),
        ]);
        assert.equal(more, 'silence');
        assert.ok(llm.activeResponses >= 1);
        ac.abort();
        const t0 = Date.now();
        while (llm.activeResponses > 0 && Date.now() - t0 < 3000) await new Promise((r) => setTimeout(r, 20));
        assert.equal(llm.activeResponses, 0, 'stalled response released after the client left');
      } finally {
        clearTimeout(kill);
        ac.abort();
      }
    });
  });
}

// ---- OpenAI specifics --------------------------------------------------------------------

describe('server', () => {
  test('unknown paths get a 404', async () => {
    const res = await send('/v1/nothing', {}, openai.headers);
    assert.equal(res.status, 404);
    assert.match((await res.json()).error.message, /Invalid URL/);
  });

  test('faultFor reads the model name and the header', () => {
    assert.equal(faultFor('gpt-4o-fault-cut', undefined), 'cut');
    assert.equal(faultFor('fault-stream-error', undefined), 'stream-error');
    assert.equal(faultFor('gpt-4o', 'fault-429'), '429');
    assert.equal(faultFor('gpt-4o', 'stall'), 'stall');
    assert.equal(faultFor('default-model', undefined), null);
  });

  test('tokenize keeps the text and cuts long words; fragment keeps the arguments', () => {
    const text = 'An extraordinarily long sentence,\nwith  spaces.';
    assert.equal(tokenize(text).join(''), text);
    assert.ok(tokenize(text).every((t) => t.trim().length <= 8));
    const json = JSON.stringify({ patch: '*** Begin Patch\n*** End Patch' });
    assert.equal(fragment(json).join(''), json);
  });

  test('calculator helpers', () => {
    assert.equal(evaluate('(3+4)*5'), 35);
    assert.equal(evaluate('2^10-1'), 1023);
    assert.equal(evaluate('1/4'), 0.25);
    assert.equal(evaluate('2+'), null);
    assert.equal(extractExpression('what is 12 * 3?'), '12*3');
    assert.equal(extractExpression('what is the weather'), null);
  });

  test('extra rules passed to startScriptedLlm come first', async () => {
    const custom = await startScriptedLlm({ rules: [{ name: 'ping', match: /^ping$/i, respond: () => ({ text: 'pong' }) }] });
    try {
      const res = await fetch(`${custom.url}/v1/chat/completions`, {
        method: 'POST',
        headers: openai.headers,
        body: JSON.stringify({ model: 'm', stream: false, messages: [{ role: 'user', content: 'PING' }] }),
        signal: AbortSignal.timeout(5000),
      });
      const j = await res.json();
      assert.equal(j.choices[0].message.content, 'pong');
      assert.equal(res.headers.get('x-scripted-rule'), 'ping');
    } finally {
      await custom.close();
    }
  });

  test('close() resolves while a stalled stream is still open', async () => {
    const s = await startScriptedLlm({});
    const ac = new AbortController();
    const res = await fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: openai.headers,
      body: JSON.stringify({ model: 'fault-stall', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      signal: ac.signal,
    });
    assert.equal(res.status, 200);
    const t0 = Date.now();
    await s.close();
    assert.ok(Date.now() - t0 < 2000);
    ac.abort();
  });

  test('the command line starts, prints its URL, serves, and stops on SIGTERM', async () => {
    const script = fileURLToPath(new URL('./server.mjs', import.meta.url));
    const child = spawn(process.execPath, [script, '--port', '0', '--delay-ms', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const kill = setTimeout(() => child.kill('SIGKILL'), 8000);
    try {
      const url = await new Promise((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
          const m = out.match(/^scripted-llm listening on (http:\/\/127\.0\.0\.1:\d+)$/m);
          if (m) resolve(m[1]);
        });
        child.on('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5000) });
      assert.equal(await res.text(), 'ok');
      const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
      child.kill('SIGTERM');
      assert.deepEqual(await exited, { code: 0, signal: null });
    } finally {
      clearTimeout(kill);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

// ---- rules and faults the end-to-end suites rely on -------------------------------------

for (const P of PROVIDERS) {
  test(`${P.name}: "use <tool> with {json}" calls any offered tool, and not an unoffered one`, async () => {
    const out = await turn(P, { messages: [P.user('use read with {"path":"a.txt"}')], tools: ['read'] });
    assert.equal(out.rule, 'use-tool');
    assert.deepEqual(
      out.calls.map((c) => [c.name, c.args]),
      [['read', { path: 'a.txt' }]],
    );
    const echo = await turn(P, { messages: [P.user('use read')], tools: ['get_time'] });
    assert.equal(echo.rule, 'echo');
  });

  test(`${P.name}: "loop forever" calls get_time again after every result`, async () => {
    const first = await turn(P, { messages: [P.user('loop forever')], tools: ['get_time'] });
    const calls = withIds(first.calls);
    const again = await turn(P, {
      messages: [P.user('loop forever'), P.calls(calls), ...P.results(calls.map((c) => ({ id: c.id, name: c.name, content: 'noon' })))],
      tools: ['get_time'],
    });
    assert.equal(again.rule, 'loop');
    assert.deepEqual(
      again.calls.map((c) => c.name),
      ['get_time'],
    );
  });

  test(`${P.name}: "who are you" answers with the system prompt's first line`, async () => {
    const system = 'You are a pirate.\nSpeak like one.';
    const extra = P.name === 'openai' ? {} : P.name === 'anthropic' ? { system } : { systemInstruction: { parts: [{ text: system }] } };
    const messages = P.name === 'openai' ? [{ role: 'system', content: system }, P.user('who are you')] : [P.user('who are you')];
    const out = await turn(P, { messages, extra });
    assert.equal(out.text, 'I am: You are a pirate.');
  });

  test(`${P.name}: a fault named in the last user message applies to that request only`, async () => {
    const failed = await turn(P, { messages: [P.user('tell me a story fault-429')] });
    assert.equal(failed.status, 429);
    assert.equal(failed.res.headers.get('retry-after'), '2');
    const fine = await turn(P, {
      messages: [
        P.user('tell me a story fault-429'),
        { role: P.name === 'gemini' ? 'model' : 'assistant', ...(P.name === 'gemini' ? { parts: [{ text: 'no' }] } : { content: 'no' }) },
        P.user('and now?'),
      ],
    });
    assert.equal(fine.status, 200);
    assert.equal(fine.text, 'You said: and now?');
  });
}

// ---- the dup, tot and got agents' prompts ------------------------------------------------
// The instructions as crates/agent/src/engine/prompts.rs writes them (after the persona); the
// rules key on their first sentences.

describe('the request log', () => {
  // What each provider's request says the system prompt and temperature are.
  const asked = {
    openai: { messages: [{ role: 'system', content: 'You are Support.\nBe brief.' }], extra: { temperature: 0.25 } },
    anthropic: { messages: [], extra: { system: 'You are Support.\nBe brief.', temperature: 0.25 } },
    gemini: { messages: [], extra: { systemInstruction: { parts: [{ text: 'You are Support.\nBe brief.' }] }, generationConfig: { temperature: 0.25 } } },
  };
  for (const P of PROVIDERS) {
    test(`${P.name}: the model, system prompt, last user message and temperature of each request`, async () => {
      const { messages, extra } = asked[P.name];
      const from = llm.requests.length;
      const r = await turn(P, { messages: [...messages, P.user('log me')], model: 'support-model', extra });
      assert.equal(r.status, 200);
      const plain = await turn(P, { messages: [P.user('log me too')] });
      assert.equal(plain.status, 200);
      const logged = llm.requests.slice(from);
      assert.equal(logged.length, 2);
      assert.deepEqual(logged[0], {
        provider: P.name,
        path: P.request({ messages: [], model: 'support-model' }).path.split('?')[0],
        model: 'support-model',
        system: 'You are Support.\nBe brief.',
        lastUser: 'log me',
        temperature: 0.25,
      });
      assert.equal(logged[1].lastUser, 'log me too');
      assert.equal(logged[1].system, '');
      assert.equal(logged[1].temperature, null);
    });
  }

  test('a request refused before the rules is not logged', async () => {
    const from = llm.requests.length;
    const r = await send('/v1/chat/completions', '{not json', openai.headers);
    assert.equal(r.status, 400);
    assert.equal(llm.requests.length, from);
  });
});
