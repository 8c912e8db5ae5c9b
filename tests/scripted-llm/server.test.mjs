// Tests of the scripted LLM server: run with `node --test tests/scripted-llm/`.
// The server runs in-process on a free port; every request has a timeout, so nothing hangs.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startScriptedLlm, faultFor } from './server.mjs';
import { tokenize, fragment } from './lib.mjs';
import { evaluate, extractExpression } from './rules.mjs';

const FIXTURES = new URL('../../crates/agent/tests/fixtures/providers/', import.meta.url);
const fixture = (path) => readFile(new URL(path, FIXTURES), 'utf8');

let llm;
before(async () => {
  llm = await startScriptedLlm({ port: 0 });
});
after(async () => {
  await llm?.close();
});

// ---- SSE parsing and shapes ----------------------------------------------------------------

/** A small SSE parser: events split on blank lines (LF or CRLF), `event:` / `data:` fields. */
function parseSse(text) {
  const events = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (!block.trim()) continue;
    let event = null;
    const data = [];
    let comment = false;
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith(':')) { comment = true; continue; }
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      let value = i < 0 ? '' : line.slice(i + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length || event) events.push({ event, data: data.join('\n') });
    else if (!comment) events.push({ event: null, data: block });
  }
  return events;
}

/** JSONL fixtures (vercel/ai *.chunks.txt): one chunk per line. */
const parseJsonl = (text) => text.split('\n').filter((l) => l.trim()).map((l) => ({ event: null, data: l }));

const tryJson = (s) => {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
};

const OPAQUE = new Set(['args', 'input']);
/** Key paths in order, with value kinds; the contents of tool arguments are not compared. */
function shape(v) {
  if (Array.isArray(v)) return v.length ? `[${[...new Set(v.map(shape))].join('|')}]` : '[]';
  if (v && typeof v === 'object') return `{${Object.keys(v).map((k) => `${k}:${OPAQUE.has(k) ? 'object' : shape(v[k])}`).join(',')}}`;
  return v === null ? 'null' : typeof v;
}

const collapse = (list) => list.filter((x, i) => i === 0 || x !== list[i - 1]);

async function readAll(res) {
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let text = '';
  let error = null;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += dec.decode(value, { stream: true });
    }
  } catch (e) {
    error = e;
  }
  return { text, error };
}

// ---- provider adapters used by the shared tests -------------------------------------------

const KEY = 'sk-test-0123456789abcdef';
const SCHEMAS = {
  get_time: { type: 'object', properties: { timezone: { type: 'string' } } },
  calculator: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
  apply_patch: { type: 'object', properties: { patch: { type: 'string' } }, required: ['patch'] },
  write: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
  read: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

const openai = {
  name: 'openai',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
  tools: (names) => names.map((n) => ({ type: 'function', function: { name: n, description: n, parameters: SCHEMAS[n] } })),
  user: (text) => ({ role: 'user', content: text }),
  calls: (calls) => ({ role: 'assistant', content: null, tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } })) }),
  results: (results) => results.map((r) => ({ role: 'tool', tool_call_id: r.id, content: r.content })),
  request({ messages, tools, model = 'gpt-4o', stream = true, extra = {} }) {
    const body = { model, messages, stream, ...extra };
    if (stream) body.stream_options = { include_usage: true };
    if (tools) body.tools = this.tools(tools);
    return { path: '/v1/chat/completions', body };
  },
  decode(text) {
    const events = parseSse(text);
    const out = { text: '', reasoning: '', calls: [], finish: null, usage: null, done: false, textDeltas: 0, argFragments: 0, events };
    for (const e of events) {
      if (e.data === '[DONE]') { out.done = true; continue; }
      const c = tryJson(e.data);
      if (!c) continue;
      if (c.error) { out.error = c.error; continue; }
      if (c.usage) out.usage = { prompt: c.usage.prompt_tokens, completion: c.usage.completion_tokens };
      for (const ch of c.choices ?? []) {
        const d = ch.delta ?? {};
        if (typeof d.content === 'string' && d.content) { out.text += d.content; out.textDeltas += 1; }
        if (typeof d.reasoning_content === 'string') out.reasoning += d.reasoning_content;
        if (typeof d.reasoning === 'string') out.reasoning += d.reasoning;
        for (const tc of d.tool_calls ?? []) {
          const slot = (out.calls[tc.index] ??= { id: null, name: null, json: '' });
          if (tc.id) slot.id = tc.id;
          if (tc.function?.name) slot.name = tc.function.name;
          if (tc.function?.arguments) { slot.json += tc.function.arguments; out.argFragments += 1; }
        }
        if (ch.finish_reason) out.finish = { stop: 'end', tool_calls: 'tool', length: 'length' }[ch.finish_reason];
      }
    }
    out.calls = out.calls.map((c) => ({ ...c, args: JSON.parse(c.json) }));
    out.complete = out.done;
    return out;
  },
  decodeJson(body) {
    const m = body.choices[0].message;
    return {
      text: m.content ?? '',
      reasoning: m.reasoning_content ?? '',
      calls: (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) })),
      finish: { stop: 'end', tool_calls: 'tool', length: 'length' }[body.choices[0].finish_reason],
      usage: { prompt: body.usage.prompt_tokens, completion: body.usage.completion_tokens },
    };
  },
  errorShape(body) {
    assert.equal(typeof body.error.message, 'string');
    assert.ok('type' in body.error && 'param' in body.error && 'code' in body.error, JSON.stringify(body));
    return body.error.type;
  },
};

const anthropic = {
  name: 'anthropic',
  headers: { 'content-type': 'application/json', 'x-api-key': KEY, 'anthropic-version': '2023-06-01' },
  tools: (names) => names.map((n) => ({ name: n, description: n, input_schema: SCHEMAS[n] })),
  user: (text) => ({ role: 'user', content: text }),
  calls: (calls) => ({ role: 'assistant', content: calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.args })) }),
  results: (results) => [{ role: 'user', content: results.map((r) => ({ type: 'tool_result', tool_use_id: r.id, content: r.content, ...(r.isError ? { is_error: true } : {}) })) }],
  request({ messages, tools, model = 'claude-haiku-4-5', stream = true, extra = {} }) {
    const body = { model, max_tokens: 4096, messages, stream, ...extra };
    if (tools) body.tools = this.tools(tools);
    return { path: '/v1/messages', body };
  },
  decode(text) {
    const events = parseSse(text);
    const out = { text: '', reasoning: '', calls: [], finish: null, usage: null, textDeltas: 0, argFragments: 0, events, blocks: [] };
    for (const e of events) {
      const d = tryJson(e.data);
      if (!d) continue;
      if (e.event !== d.type) out.mismatch = true;
      if (d.type === 'error') out.error = d.error;
      if (d.type === 'content_block_start') out.blocks[d.index] = { ...d.content_block, json: '' };
      if (d.type === 'content_block_delta') {
        const b = out.blocks[d.index];
        if (d.delta.type === 'text_delta') { out.text += d.delta.text; out.textDeltas += 1; }
        if (d.delta.type === 'thinking_delta') out.reasoning += d.delta.thinking;
        if (d.delta.type === 'signature_delta') b.signature = d.delta.signature;
        if (d.delta.type === 'input_json_delta') { b.json += d.delta.partial_json; if (d.delta.partial_json) out.argFragments += 1; }
      }
      if (d.type === 'message_delta') {
        out.finish = { end_turn: 'end', tool_use: 'tool', max_tokens: 'length' }[d.delta.stop_reason];
        out.usage = { completion: d.usage.output_tokens };
      }
      if (d.type === 'message_start') out.promptTokens = d.message.usage.input_tokens;
      if (d.type === 'message_stop') out.complete = true;
    }
    if (out.usage) out.usage.prompt = out.promptTokens;
    out.calls = out.blocks.filter((b) => b && b.type === 'tool_use').map((b) => ({ id: b.id, name: b.name, args: JSON.parse(b.json) }));
    return out;
  },
  decodeJson(body) {
    return {
      text: body.content.filter((b) => b.type === 'text').map((b) => b.text).join(''),
      reasoning: body.content.filter((b) => b.type === 'thinking').map((b) => b.thinking).join(''),
      calls: body.content.filter((b) => b.type === 'tool_use').map((b) => ({ id: b.id, name: b.name, args: b.input })),
      finish: { end_turn: 'end', tool_use: 'tool', max_tokens: 'length' }[body.stop_reason],
      usage: { prompt: body.usage.input_tokens, completion: body.usage.output_tokens },
    };
  },
  errorShape(body) {
    assert.equal(body.type, 'error', JSON.stringify(body));
    assert.equal(typeof body.error.message, 'string');
    return body.error.type;
  },
};

const gemini = {
  name: 'gemini',
  headers: { 'content-type': 'application/json', 'x-goog-api-key': KEY },
  tools: (names) => [{ functionDeclarations: names.map((n) => ({ name: n, description: n, parameters: SCHEMAS[n] })) }],
  user: (text) => ({ role: 'user', parts: [{ text }] }),
  calls: (calls) => ({ role: 'model', parts: calls.map((c) => ({ functionCall: { name: c.name, args: c.args } })) }),
  results: (results) => [{ role: 'user', parts: results.map((r) => ({ functionResponse: { name: r.name, response: r.isError ? { error: r.content } : { result: r.content } } })) }],
  request({ messages, tools, model = 'gemini-2.5-flash', stream = true, extra = {} }) {
    const body = { contents: messages, ...extra };
    if (tools) body.tools = this.tools(tools);
    return { path: `/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, body };
  },
  decode(text) {
    const events = parseSse(text);
    const out = { text: '', reasoning: '', calls: [], finish: null, usage: null, textDeltas: 0, argFragments: 0, events };
    for (const e of events) {
      const d = tryJson(e.data);
      if (!d) continue;
      if (d.error) { out.error = d.error; continue; }
      const cand = d.candidates?.[0];
      for (const part of cand?.content?.parts ?? []) {
        if (part.thought) out.reasoning += part.text;
        else if (typeof part.text === 'string') { out.text += part.text; if (part.text) out.textDeltas += 1; }
        if (part.functionCall) out.calls.push({ id: null, name: part.functionCall.name, args: part.functionCall.args });
      }
      if (cand?.finishReason) {
        out.finish = cand.finishReason === 'MAX_TOKENS' ? 'length' : out.calls.length ? 'tool' : 'end';
        out.usage = { prompt: d.usageMetadata.promptTokenCount, completion: d.usageMetadata.candidatesTokenCount + (d.usageMetadata.thoughtsTokenCount ?? 0) };
        out.complete = true;
      }
    }
    out.argFragments = out.calls.length ? 2 : 0; // Gemini sends whole functionCall parts
    return out;
  },
  decodeJson(body) {
    const parts = body.candidates[0].content.parts;
    const calls = parts.filter((p) => p.functionCall).map((p) => ({ id: null, name: p.functionCall.name, args: p.functionCall.args }));
    return {
      text: parts.filter((p) => typeof p.text === 'string' && !p.thought).map((p) => p.text).join(''),
      reasoning: parts.filter((p) => p.thought).map((p) => p.text).join(''),
      calls,
      finish: body.candidates[0].finishReason === 'MAX_TOKENS' ? 'length' : calls.length ? 'tool' : 'end',
      usage: { prompt: body.usageMetadata.promptTokenCount, completion: body.usageMetadata.candidatesTokenCount + (body.usageMetadata.thoughtsTokenCount ?? 0) },
    };
  },
  errorShape(body) {
    assert.equal(typeof body.error.code, 'number', JSON.stringify(body));
    assert.equal(typeof body.error.message, 'string');
    return body.error.status;
  },
};

const PROVIDERS = [openai, anthropic, gemini];

async function send(path, body, headers, signal = AbortSignal.timeout(10000)) {
  return fetch(llm.url + path, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body), signal });
}

/** One model turn: request, read, decode. */
async function turn(P, opts, headers = {}) {
  const { path, body } = P.request(opts);
  const res = await send(path, body, { ...P.headers, ...headers });
  const raw = await res.text();
  if (res.status !== 200) return { status: res.status, res, raw, body: tryJson(raw) };
  const stream = opts.stream !== false;
  if (stream) assert.match(res.headers.get('content-type'), /^text\/event-stream/);
  const out = stream ? P.decode(raw) : P.decodeJson(JSON.parse(raw));
  return { status: 200, res, raw, rule: res.headers.get('x-scripted-rule'), ...out };
}

/** Give calls the ids the provider returned (Gemini has none: match by name). */
const withIds = (calls) => calls.map((c, i) => ({ ...c, id: c.id ?? `g${i}` }));

// ---- shared behaviour, per provider ------------------------------------------------------

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
      assert.match(r.res.headers.get('content-type'), /^application\/json/);
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
      const ok = await turn(P, { messages: [q, P.calls(calls), ...P.results([{ id: calls[0].id, name: 'apply_patch', content: 'Success. Updated the following files:\nA notes.txt' }])], tools });
      assert.equal(ok.text, 'Done: I wrote notes.txt.');
      const denied = await turn(P, { messages: [q, P.calls(calls), ...P.results([{ id: calls[0].id, name: 'apply_patch', content: 'The user denied this tool call.', isError: true }])], tools });
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
      assert.deepEqual(r1.calls.map((c) => c.name), ['get_time', 'calculator']);
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
        messages: [q, P.calls(calls), ...P.results([{ id: calls[0].id, name: 'get_time', content: '12:00 UTC' }, { id: calls[1].id, name: 'calculator', content: '42' }])],
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
      msgs[1] = P === openai ? { role: 'assistant', content: 'Paris.' } : P === anthropic ? { role: 'assistant', content: 'Paris.' } : { role: 'model', parts: [{ text: 'Paris.' }] };
      const r = await turn(P, { messages: msgs });
      assert.equal(r.text, 'Summary of the conversation so far: The user asked: "what is the capital of France". The assistant made no tool calls and gave 1 reply.');
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
        const reader = res.body.getReader();
        const first = await reader.read();
        assert.ok(!first.done && first.value.length > 0);
        const more = await Promise.race([reader.read().then(() => 'data', () => 'error'), new Promise((r) => setTimeout(r, 300, 'silence'))]);
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

describe('openai: wire details', () => {
  test('role chunk first, usage chunk with choices [] before [DONE], only with include_usage', async () => {
    const r = await turn(openai, { messages: [openai.user('hi')] });
    const chunks = r.events.filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data));
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '', refusal: null });
    assert.deepEqual(chunks.at(-1).choices, []);
    assert.equal(r.events.at(-1).data, '[DONE]');
    const { path, body } = openai.request({ messages: [openai.user('hi')] });
    delete body.stream_options;
    const res = await send(path, body, openai.headers);
    const plain = openai.decode(await res.text());
    assert.equal(plain.usage, null);
    assert.ok(plain.done);
  });

  test('reasoning uses reasoning_content, or reasoning with x-scripted-reasoning-field', async () => {
    const a = await turn(openai, { messages: [openai.user('think')] });
    const d = JSON.parse(a.events[1].data).choices[0].delta;
    assert.deepEqual(Object.keys(d), ['content', 'reasoning_content']);
    const b = await turn(openai, { messages: [openai.user('think')] }, { 'x-scripted-reasoning-field': 'reasoning' });
    assert.deepEqual(Object.keys(JSON.parse(b.events[1].data).choices[0].delta), ['content', 'reasoning']);
  });

  test('non-streamed chat.completion shape', async () => {
    const { path, body } = openai.request({ messages: [openai.user('what time is it')], tools: ['get_time'], stream: false });
    const res = await send(path, body, openai.headers);
    const j = await res.json();
    assert.equal(j.object, 'chat.completion');
    assert.deepEqual(Object.keys(j), ['id', 'object', 'created', 'model', 'choices', 'usage', 'service_tier', 'system_fingerprint']);
    assert.equal(j.choices[0].message.content, null);
    assert.equal(j.choices[0].message.tool_calls[0].type, 'function');
    assert.equal(j.choices[0].finish_reason, 'tool_calls');
  });

  test('a system prompt asking to summarise the conversation triggers the summary; ordinary ones do not', async () => {
    const convo = [
      { role: 'user', content: 'what time is it' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_a', content: '10:00' },
      { role: 'assistant', content: 'It is 10:00.' },
    ];
    const r = await turn(openai, { messages: [{ role: 'system', content: 'Summarize the conversation so far for a later turn.' }, ...convo, { role: 'user', content: 'go on' }] });
    assert.equal(r.text, 'Summary of the conversation so far: The user asked: "what time is it"; "go on". The assistant made 1 tool call (get_time) and gave 1 reply.');
    const plain = await turn(openai, { messages: [{ role: 'system', content: 'Keep answers compact and use the conversation history.' }, { role: 'user', content: 'hi' }] });
    assert.equal(plain.text, 'You said: hi');
  });

  test('non-streamed faults: malformed body, cut body, stream-error as HTTP error', async () => {
    const { path, body } = openai.request({ messages: [openai.user('hi')], stream: false, model: 'fault-malformed' });
    const bad = await send(path, body, openai.headers);
    assert.equal(bad.status, 200);
    assert.equal(tryJson(await bad.text()), undefined);
    const cut = await send(path, { ...body, model: 'fault-cut' }, openai.headers);
    assert.equal(cut.status, 200);
    assert.ok((await readAll(cut)).error);
    const err = await send(path, { ...body, model: 'fault-stream-error' }, openai.headers);
    assert.equal(err.status, 500);
  });

  test('tool_choice none disables tools', async () => {
    const r = await turn(openai, { messages: [openai.user('what time is it')], tools: ['get_time'], extra: { tool_choice: 'none' } });
    assert.equal(r.calls.length, 0);
  });

  const call = { id: 'call_1', name: 'get_time', args: {} };
  const cases = [
    ['missing model', { messages: [{ role: 'user', content: 'hi' }] }, /you must provide a model parameter/],
    ['missing messages', { model: 'm' }, /Missing required parameter: 'messages'/],
    ['messages not an array', { model: 'm', messages: 'hi' }, /Invalid type for 'messages': expected an array of objects, but got a string instead/],
    ['empty messages', { model: 'm', messages: [] }, /empty array/],
    ['unknown role', { model: 'm', messages: [{ role: 'robot', content: 'hi' }] }, /Invalid value: 'robot'/],
    ['user without content', { model: 'm', messages: [{ role: 'user' }] }, /messages\[0\]\.content/],
    ['tool schema not an object schema', { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'x', parameters: { type: 'string' } } }] }, /schema must be a JSON Schema of 'type: "object"'/],
    ['tool name with spaces', { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'get time' } }] }, /does not match pattern/],
    ['tool message without a prior tool call', { model: 'm', messages: [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'call_1', content: 'x' }] }, /must be a response to a preceeding message with 'tool_calls'/],
    ['tool_call_id not in the previous tool calls', { model: 'm', messages: [{ role: 'user', content: 'hi' }, openai.calls([call]), { role: 'tool', tool_call_id: 'call_2', content: 'x' }] }, /'tool_call_id' of 'call_2' not found/],
    ['tool call without a tool response', { model: 'm', messages: [{ role: 'user', content: 'hi' }, openai.calls([call]), { role: 'user', content: 'again' }] }, /did not have response messages: call_1/],
    ['stream_options without stream', { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream_options: { include_usage: true } }, /only allowed when 'stream' is enabled/],
    ['max_tokens below 1', { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 0 }, /integer below minimum value/],
    ['invalid JSON', '{"model": "m", "messages": [', /could not parse the JSON body/],
  ];
  for (const [what, body, message] of cases) {
    test(`400 for ${what}`, async () => {
      const res = await send('/v1/chat/completions', body, openai.headers);
      assert.equal(res.status, 400);
      const j = await res.json();
      assert.deepEqual(Object.keys(j.error), ['message', 'type', 'param', 'code']);
      assert.equal(j.error.type, 'invalid_request_error');
      assert.match(j.error.message, message);
    });
  }

  test('framing matches openai/chat-text-usage.gpt-4o.sse (text) byte layout, chunk kinds and key order', async () => {
    const r = await turn(openai, { messages: [openai.user('Tell me something')] });
    assert.match(r.raw, /^(data: \{[^\n]+\}\n\n)+data: \[DONE\]\n\n$/);
    compareOpenAi(r.raw, await fixture('openai/chat-text-usage.gpt-4o.sse'));
  });

  test('framing matches openai/chat-parallel-tool-calls.gpt-4o.sse (parallel tool calls)', async () => {
    const r = await turn(openai, { messages: [openai.user('parallel please')], tools: ['get_time', 'calculator'] });
    compareOpenAi(r.raw, await fixture('openai/chat-parallel-tool-calls.gpt-4o.sse'));
  });

  test('reasoning deltas match openai-compatible/deepseek-tool-call.chunks.txt', async () => {
    const r = await turn(openai, { messages: [openai.user('think: what time is it')], tools: ['get_time'] });
    const deltas = (events) => new Set(events.map((e) => tryJson(e.data)).filter((c) => c?.choices?.[0] && c.choices[0].finish_reason === null).map((c) => shape(c.choices[0].delta)));
    assert.deepEqual(deltas(r.events), deltas(parseJsonl(await fixture('openai-compatible/deepseek-tool-call.chunks.txt'))));
  });
});

function openAiKind(e) {
  if (e.data === '[DONE]') return 'done';
  const c = JSON.parse(e.data);
  if (!c.choices.length) return 'usage';
  const d = c.choices[0].delta;
  if (c.choices[0].finish_reason) return 'finish';
  if (d.role) return 'role';
  if (d.tool_calls) return d.tool_calls[0].id ? `tool_start:${d.tool_calls[0].index}` : `tool_args:${d.tool_calls[0].index}`;
  return 'content';
}

function compareOpenAi(ours, theirs) {
  const a = parseSse(ours);
  const b = parseSse(theirs);
  assert.deepEqual(collapse(a.map(openAiKind)), collapse(b.map(openAiKind)));
  const shapes = (events) => new Set(events.filter((e) => e.data !== '[DONE]').map((e) => shape(JSON.parse(e.data))));
  assert.deepEqual(shapes(a), shapes(b));
}

// ---- Anthropic specifics -----------------------------------------------------------------

describe('anthropic: wire details', () => {
  test('event names equal data types; ping after the first block start; tool input fragments start empty', async () => {
    const r = await turn(anthropic, { messages: [anthropic.user('what time is it')], tools: ['get_time'] });
    assert.ok(!r.mismatch);
    assert.deepEqual(r.events.slice(0, 3).map((e) => e.event), ['message_start', 'content_block_start', 'ping']);
    assert.equal(r.events[2].data, '{"type": "ping"}');
    const firstDelta = r.events.find((e) => e.event === 'content_block_delta');
    assert.equal(JSON.parse(firstDelta.data).delta.partial_json, '');
  });

  test('thinking block carries thinking deltas and a signature', async () => {
    const r = await turn(anthropic, { messages: [anthropic.user('think hard')] });
    assert.equal(r.blocks[0].type, 'thinking');
    assert.ok(r.blocks[0].signature.length > 40);
    assert.equal(r.blocks[1].type, 'text');
  });

  test('thinking disabled in the request drops the reasoning', async () => {
    const r = await turn(anthropic, { messages: [anthropic.user('think')], extra: { thinking: { type: 'disabled' } } });
    assert.equal(r.reasoning, '');
    assert.equal(r.blocks[0].type, 'text');
  });

  test('anthropic-version header is required', async () => {
    const { path, body } = anthropic.request({ messages: [anthropic.user('hi')] });
    const res = await send(path, body, { 'content-type': 'application/json', 'x-api-key': KEY });
    assert.equal(res.status, 400);
    assert.match((await res.json()).error.message, /anthropic-version/);
  });

  const use = { type: 'tool_use', id: 'toolu_1', name: 'get_time', input: {} };
  const u = (content) => ({ role: 'user', content });
  const cases = [
    ['missing model', { max_tokens: 10, messages: [u('hi')] }, /^model: Field required$/],
    ['missing max_tokens', { model: 'm', messages: [u('hi')] }, /^max_tokens: Field required$/],
    ['messages not an array', { model: 'm', max_tokens: 10, messages: { role: 'user' } }, /^messages: Input should be a valid list$/],
    ['a system role inside messages', { model: 'm', max_tokens: 10, messages: [{ role: 'system', content: 'be nice' }, u('hi')] }, /Unexpected role "system"/],
    ['empty content', { model: 'm', max_tokens: 10, messages: [u('')] }, /must have non-empty content/],
    ['tool input_schema not an object', { model: 'm', max_tokens: 10, messages: [u('hi')], tools: [{ name: 'x', input_schema: { type: 'string' } }] }, /input_schema\.type: Input should be 'object'/],
    ['tool without input_schema', { model: 'm', max_tokens: 10, messages: [u('hi')], tools: [{ name: 'x' }] }, /input_schema: Field required/],
    ['tool_result without a matching tool_use', { model: 'm', max_tokens: 10, messages: [u('hi'), { role: 'assistant', content: [use] }, u([{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'x' }])] }, /unexpected `tool_use_id` found in `tool_result` blocks: toolu_2/],
    ['tool_use without a tool_result after it', { model: 'm', max_tokens: 10, messages: [u('hi'), { role: 'assistant', content: [use] }, u('again')] }, /`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1/],
    ['thinking budget >= max_tokens', { model: 'm', max_tokens: 1024, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [u('hi')] }, /must be greater than `thinking.budget_tokens`/],
    ['invalid JSON', '{"model":', /error parsing the body/],
  ];
  for (const [what, body, message] of cases) {
    test(`400 for ${what}`, async () => {
      const res = await send('/v1/messages', body, anthropic.headers);
      assert.equal(res.status, 400);
      const j = await res.json();
      assert.equal(j.type, 'error');
      assert.equal(j.error.type, 'invalid_request_error');
      assert.match(j.error.message, message);
    });
  }

  test('framing matches anthropic/text-only.claude-haiku-4-5.sse', async () => {
    const r = await turn(anthropic, { messages: [anthropic.user('Hello')] });
    assert.match(r.raw, /^(event: [a-z_]+\ndata: \{[^\n]+\}\n\n)+$/);
    compareAnthropic(r.raw, await fixture('anthropic/text-only.claude-haiku-4-5.sse'), { full: true });
  });

  test('framing matches anthropic/thinking-then-tool-use.claude-haiku-4-5.sse', async () => {
    const r = await turn(anthropic, { messages: [anthropic.user('think: what time is it?')], tools: ['get_time'] });
    compareAnthropic(r.raw, await fixture('anthropic/thinking-then-tool-use.claude-haiku-4-5.sse'), { full: true });
  });

  test('event order and block shapes match anthropic/thinking-text.claude-sonnet-4.sse', async () => {
    const r = await turn(anthropic, { messages: [anthropic.user('think about crossing the street')] });
    compareAnthropic(r.raw, await fixture('anthropic/thinking-text.claude-sonnet-4.sse'), { full: false });
  });
});

function compareAnthropic(ours, theirs, { full }) {
  const a = parseSse(ours);
  const b = parseSse(theirs);
  const kind = (e) => {
    const d = JSON.parse(e.data);
    return `${e.event}:${d.content_block?.type ?? d.delta?.type ?? ''}`;
  };
  assert.deepEqual(collapse(a.map(kind)), collapse(b.map(kind)));
  const blockLevel = (e) => ['content_block_start', 'content_block_delta', 'content_block_stop', 'ping'].includes(e.event);
  const shapes = (events) => new Set(events.filter((e) => full || blockLevel(e)).map((e) => `${e.event} ${shape(JSON.parse(e.data))}`));
  assert.deepEqual(shapes(a), shapes(b));
}

// ---- Gemini specifics --------------------------------------------------------------------

describe('gemini: wire details', () => {
  test('SSE uses CRLF framing and Google spaced JSON', async () => {
    const r = await turn(gemini, { messages: [gemini.user('hi')] });
    assert.match(r.raw, /^(data: \{[^\r\n]+\}\r\n\r\n)+$/);
    assert.ok(r.raw.startsWith('data: {"candidates": [{"content": {"parts": [{"text": '));
    assert.equal(r.res.headers.get('content-type'), 'text/event-stream');
  });

  test('key via ?key= query is accepted; without alt=sse the stream is a JSON array', async () => {
    const res = await send(`/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=${KEY}`, { contents: [gemini.user('count to 3')] }, { 'content-type': 'application/json' });
    assert.equal(res.status, 200);
    const arr = JSON.parse(await res.text());
    assert.equal(arr.map((c) => c.candidates[0].content.parts[0].text).join(''), '1 2 3');
  });

  test('thought parts carry thought: true; the function call a thoughtSignature', async () => {
    const r = await turn(gemini, { messages: [gemini.user('think: what time is it')], tools: ['get_time'] });
    const parts = r.events.flatMap((e) => JSON.parse(e.data).candidates[0].content.parts);
    assert.ok(parts.filter((p) => p.thought === true).length > 3);
    assert.ok(parts.find((p) => p.functionCall).thoughtSignature);
  });

  const cases = [
    ['missing contents', {}, /contents is not specified/],
    ['contents not an array', { contents: 'hi' }, /Invalid value at 'contents'/],
    ['a bad role', { contents: [{ role: 'assistant', parts: [{ text: 'hi' }] }] }, /Please use a valid role: user, model/],
    ['empty parts', { contents: [{ role: 'user', parts: [] }] }, /parts must not be empty/],
    ['an empty part', { contents: [{ role: 'user', parts: [{}] }] }, /required oneof field 'data'/],
    ['a bad function name', { contents: [gemini.user('hi')], tools: [{ functionDeclarations: [{ name: '1bad name' }] }] }, /Invalid function name/],
    ['non-object parameters schema', { contents: [gemini.user('hi')], tools: [{ functionDeclarations: [{ name: 'x', parameters: { type: 'STRING' } }] }] }, /must be of type OBJECT/],
    ['function response without a function call', { contents: [gemini.user('hi'), { role: 'user', parts: [{ functionResponse: { name: 'get_time', response: { result: 'x' } } }] }] }, /function response turn comes immediately after a function call turn/],
    ['function response for another function', { contents: [gemini.user('hi'), gemini.calls([{ name: 'get_time', args: {} }]), { role: 'user', parts: [{ functionResponse: { name: 'calculator', response: { result: 'x' } } }] }] }, /does not match any function call/],
    ['invalid JSON', '{"contents": [', /Invalid JSON payload/],
  ];
  for (const [what, body, message] of cases) {
    test(`400 for ${what}`, async () => {
      const res = await send('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', body, gemini.headers);
      assert.equal(res.status, 400);
      const j = await res.json();
      assert.deepEqual(Object.keys(j.error), ['code', 'message', 'status']);
      assert.equal(j.error.code, 400);
      assert.equal(j.error.status, 'INVALID_ARGUMENT');
      assert.match(j.error.message, message);
    });
  }

  test('framing matches gemini/streaming-success-thinking-function-call-thought-summary-signature.txt', async () => {
    const r = await turn(gemini, { messages: [gemini.user('think: what time is it')], tools: ['get_time'] });
    compareGemini(r.raw, await fixture('gemini/streaming-success-thinking-function-call-thought-summary-signature.txt'));
  });

  test('framing matches gemini/streaming-success-basic-reply-short.txt (older capture: no index / responseId)', async () => {
    const r = await turn(gemini, { messages: [gemini.user('What is the capital of Wyoming')] });
    const older = r.raw.replace(/,"index": 0/g, '').replace(/,"responseId": "[^"]*"/g, '');
    compareGemini(older, await fixture('gemini/streaming-success-basic-reply-short.txt'));
  });
});

function compareGemini(ours, theirs) {
  const a = parseSse(ours).map((e) => JSON.parse(e.data));
  const b = parseSse(theirs).map((e) => JSON.parse(e.data));
  const kind = (c) => (c.candidates[0].finishReason ? 'final' : c.candidates[0].content.parts.some((p) => p.thought) ? 'thought' : 'text');
  assert.deepEqual(collapse(a.map(kind)), collapse(b.map(kind)));
  assert.deepEqual(new Set(a.map(shape)), new Set(b.map(shape)));
}

// ---- server plumbing ---------------------------------------------------------------------

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
    assert.deepEqual(out.calls.map((c) => [c.name, c.args]), [['read', { path: 'a.txt' }]]);
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
    assert.deepEqual(again.calls.map((c) => c.name), ['get_time']);
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
    const fine = await turn(P, { messages: [P.user('tell me a story fault-429'), { role: P.name === 'gemini' ? 'model' : 'assistant', ...(P.name === 'gemini' ? { parts: [{ text: 'no' }] } : { content: 'no' }) }, P.user('and now?')] });
    assert.equal(fine.status, 200);
    assert.equal(fine.text, 'You said: and now?');
  });
}

// ---- the dup, tot and got agents' prompts ------------------------------------------------
// The instructions as crates/agent/src/engine/prompts.rs writes them (after the persona); the
// rules key on their first sentences.

describe('agent rules', () => {
  const P = openai;
  const ask = (instruction, messages, tools) =>
    turn(P, { messages: [{ role: 'system', content: `You are helpful.\n\n${instruction}` }, ...messages], tools });
  const timeCall = [{ id: 'call_t', name: 'get_time', args: { timezone: 'UTC' } }];
  const afterTime = (user) => [P.user(user), P.calls(timeCall), ...P.results([{ id: 'call_t', name: 'get_time', content: '2025-11-22T10:00:00Z' }])];

  test('dup: understand answers the three sections; the first plan answers the repeated request with a plan', async () => {
    const u = await ask('Understand the problem first. Do not solve it yet.', [P.user('What time is it?')]);
    assert.equal(u.rule, 'dup-understand');
    assert.match(u.text, /^Core goal: What time is it\?\nKey constraints: .+\nRelevant context: nothing before this request\.$/);
    assert.deepEqual(u.calls, []);
    const plan = await ask('Plan, act, observe. You have written your understanding.', [
      P.user('What time is it?'), { role: 'assistant', content: u.text }, P.user('With that understanding, carry out my request: What time is it?'),
    ], ['get_time']);
    assert.equal(plan.rule, 'dup-plan+time');
    assert.equal(plan.text, 'Plan: call get_time, then answer from the result.');
    assert.deepEqual(plan.calls.map((c) => c.name), ['get_time']);
    const after = await ask('Plan, act, observe.', afterTime('What time is it?'), ['get_time']);
    assert.equal(after.rule, 'tool-results');
    assert.equal(after.text, 'It is 2025-11-22T10:00:00Z.');
  });

  test('tot: expand proposes k steps (not the abandoned ones), evaluate scores them, act carries one out', async () => {
    const expand = (k, extra = '') => `Tree of thoughts: propose next steps. Given the conversation so far, propose exactly ${k} different candidate next steps.${extra} Reply with JSON only`;
    const first = await ask(expand(3), [P.user('What time is it?')], ['get_time']);
    assert.equal(first.rule, 'tot-expand');
    assert.deepEqual(JSON.parse(first.text).candidates, ['Use the tools to answer: What time is it?', 'Answer directly from what I already know', 'Ask the user to clarify the request']);
    const two = await ask(expand(2, ' These steps were tried and abandoned; do not propose them again:\n- Use the tools to answer: What time is it?\n'), [P.user('What time is it?')]);
    assert.deepEqual(JSON.parse(two.text).candidates, ['Answer directly from what I already know', 'Ask the user to clarify the request']);
    const later = await ask(expand(3), afterTime('What time is it?'), ['get_time']);
    assert.deepEqual(JSON.parse(later.text).candidates, ['Answer from the tool results', 'Check the results with another tool call']);

    const evaluate = (candidates) => `Tree of thoughts: score the candidates. Rate them.\n\nCandidates:\n${candidates.map((c, i) => `${i + 1}. ${c}`).join('\n')}\n\nReply with JSON only`;
    const scores = await ask(evaluate(JSON.parse(first.text).candidates), [P.user('What time is it?')]);
    assert.equal(scores.rule, 'tot-evaluate');
    assert.deepEqual(JSON.parse(scores.text), { scores: [0.9, 0.6, 0.2] });
    const low = await ask(evaluate(['Answer from the tool results']), afterTime('What time is it? dead end'));
    assert.deepEqual(JSON.parse(low.text), { scores: [0.1] });

    const act = (step) => `Tree of thoughts: carry out this step: ${step}\nUse the tools if the step needs them.`;
    const tool = await ask(act('Use the tools to answer: What time is it?'), [P.user('What time is it?')], ['get_time']);
    assert.equal(tool.rule, 'tot-act+time');
    assert.deepEqual(tool.calls.map((c) => c.name), ['get_time']);
    const direct = await ask(act('Answer directly from what I already know'), [P.user('What time is it?')], ['get_time']);
    assert.equal(direct.text, 'Without tools I can\'t find out "What time is it?", so I can\'t say for sure.');
    const math = await ask(act('Answer directly from what I already know'), [P.user('what is 6*7')]);
    assert.equal(math.text, 'Without tools: 6*7 = 42.');
    const results = await ask(act('Answer from the tool results'), afterTime('What time is it?'), ['get_time']);
    assert.equal(results.rule, 'tool-results');
  });

  test('got: plans split at ";" with a combine node, a bad plan once, judgements, sub-tasks', async () => {
    const plan = 'Graph of thoughts: plan sub-tasks. Break the request into a graph. Reply with JSON only';
    const one = await ask(plan, [P.user('What time is it?')]);
    assert.equal(one.rule, 'got-plan');
    assert.deepEqual(JSON.parse(one.text), { nodes: [{ id: 'task', task: 'What time is it?', deps: [] }] });
    const split = await ask(plan, [P.user('What time is it; write hi to a.txt')]);
    assert.deepEqual(JSON.parse(split.text).nodes, [
      { id: 's1', task: 'What time is it', deps: [] },
      { id: 's2', task: 'write hi to a.txt', deps: [] },
      { id: 'combine', task: 'Combine the results into one answer', deps: ['s1', 's2'] },
    ]);
    const bad = await ask(plan, [P.user('a bad plan please')]);
    assert.deepEqual(JSON.parse(bad.text).nodes.map((n) => n.deps), [['b'], ['a']]);
    const fixed = await ask(`${plan}\n\nYour previous plan was rejected: a cycle. Reply with a corrected plan.`, [P.user('a bad plan please')]);
    assert.equal(JSON.parse(fixed.text).nodes.length, 1);

    const judge = 'Graph of thoughts: judge a sub-task. Decide. Reply with JSON only';
    const brief = (id, task, inputs = '') => `Sub-task ${id}: ${task}\n\nThe whole request: everything${inputs}`;
    const complex = await ask(judge, [P.user(brief('task', 'What time is it in UTC and what time is it in Asia/Tokyo'))]);
    assert.equal(complex.rule, 'got-judge');
    assert.deepEqual(JSON.parse(complex.text), { complex: true, nodes: [{ id: 'p1', task: 'What time is it in UTC', deps: [] }, { id: 'p2', task: 'what time is it in Asia/Tokyo', deps: [] }] });
    assert.deepEqual(JSON.parse((await ask(judge, [P.user(brief('t', 'What time is it'))])).text), { complex: false });

    const node = 'Graph of thoughts: you are doing one sub-task of a larger request.';
    const timeNode = await ask(node, [P.user(brief('s1', 'What time is it in Asia/Tokyo'))], ['get_time']);
    assert.equal(timeNode.rule, 'got-node+time');
    assert.deepEqual(timeNode.calls.map((c) => [c.name, c.args]), [['get_time', { timezone: 'Asia/Tokyo' }]]);
    const combine = await ask(node, [P.user(brief('combine', 'Combine the results into one answer', '\n\nResults it builds on:\n- s1 (What time is it): It is noon (UTC): said the clock.\n- s2 (check the outage): FAILED: HTTP 500'))], ['get_time']);
    assert.equal(combine.text, 'Combined: It is noon (UTC): said the clock. s2 failed (HTTP 500).');
    const outage = await ask(node, [P.user(brief('s2', 'check the outage'))], ['get_time']);
    assert.equal(outage.status, 500);
    assert.equal(outage.res.headers.get('x-scripted-rule'), 'got-node');
    const after = await ask(node, afterTime(brief('s1', 'What time is it')), ['get_time']);
    assert.equal(after.rule, 'tool-results');
  });
});
