// What the scripted LLM's test files share: the server each starts, SSE and JSON reading,
// and an adapter per provider that writes its requests and reads its answers.

import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { startScriptedLlm } from './server.mjs';

const FIXTURES = new URL('../../crates/agent/tests/fixtures/providers/', import.meta.url);
export const fixture = (path) => readFile(new URL(path, FIXTURES), 'utf8');

/** The server of this test file, started before its tests and closed after them. */
export let llm;
export function useScriptedLlm() {
  before(async () => {
    llm = await startScriptedLlm({ port: 0 });
  });
  after(async () => {
    await llm?.close();
  });
}

// ---- SSE parsing and shapes ----------------------------------------------------------------

/** A small SSE parser: events split on blank lines (LF or CRLF), `event:` / `data:` fields. */
export function parseSse(text) {
  const events = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (!block.trim()) continue;
    let event = null;
    const data = [];
    let comment = false;
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith(':')) {
        comment = true;
        continue;
      }
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
export const parseJsonl = (text) =>
  text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => ({ event: null, data: l }));

export const tryJson = (s) => {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
};

export const OPAQUE = new Set(['args', 'input']);
/** Key paths in order, with value kinds; the contents of tool arguments are not compared. */
export function shape(v) {
  if (Array.isArray(v)) return v.length ? `[${[...new Set(v.map(shape))].join('|')}]` : '[]';
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .map((k) => `${k}:${OPAQUE.has(k) ? 'object' : shape(v[k])}`)
      .join(',')}}`;
  return v === null ? 'null' : typeof v;
}

export const collapse = (list) => list.filter((x, i) => i === 0 || x !== list[i - 1]);

export async function readAll(res) {
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

export const KEY = 'sk-test-0123456789abcdef';
export const SCHEMAS = {
  get_time: { type: 'object', properties: { timezone: { type: 'string' } } },
  calculator: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
  apply_patch: { type: 'object', properties: { patch: { type: 'string' } }, required: ['patch'] },
  write: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
  read: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

export const openai = {
  name: 'openai',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
  tools: (names) => names.map((n) => ({ type: 'function', function: { name: n, description: n, parameters: SCHEMAS[n] } })),
  user: (text) => ({ role: 'user', content: text }),
  calls: (calls) => ({
    role: 'assistant',
    content: null,
    tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } })),
  }),
  results: (results) => results.map((r) => ({ role: 'tool', tool_call_id: r.id, content: r.content })),
  /** @param {{ messages: Json[], tools?: string[], model?: string, stream?: boolean, extra?: Json }} opts */
  request({ messages, tools, model = 'gpt-4o', stream = true, extra = {} }) {
    /** @type {Json} */
    const body = { model, messages, stream, ...extra };
    if (stream) body.stream_options = { include_usage: true };
    if (tools) body.tools = this.tools(tools);
    return { path: '/v1/chat/completions', body };
  },
  decode(text) {
    const events = parseSse(text);
    /** @type {Json} */
    const out = { text: '', reasoning: '', calls: [], finish: null, usage: null, done: false, textDeltas: 0, argFragments: 0, events };
    for (const e of events) {
      if (e.data === '[DONE]') {
        out.done = true;
        continue;
      }
      const c = tryJson(e.data);
      if (!c) continue;
      if (c.error) {
        out.error = c.error;
        continue;
      }
      if (c.usage) out.usage = { prompt: c.usage.prompt_tokens, completion: c.usage.completion_tokens };
      for (const ch of c.choices ?? []) {
        const d = ch.delta ?? {};
        if (typeof d.content === 'string' && d.content) {
          out.text += d.content;
          out.textDeltas += 1;
        }
        if (typeof d.reasoning_content === 'string') out.reasoning += d.reasoning_content;
        if (typeof d.reasoning === 'string') out.reasoning += d.reasoning;
        for (const tc of d.tool_calls ?? []) {
          const slot = (out.calls[tc.index] ??= { id: null, name: null, json: '' });
          if (tc.id) slot.id = tc.id;
          if (tc.function?.name) slot.name = tc.function.name;
          if (tc.function?.arguments) {
            slot.json += tc.function.arguments;
            out.argFragments += 1;
          }
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

export const anthropic = {
  name: 'anthropic',
  headers: { 'content-type': 'application/json', 'x-api-key': KEY, 'anthropic-version': '2023-06-01' },
  tools: (names) => names.map((n) => ({ name: n, description: n, input_schema: SCHEMAS[n] })),
  user: (text) => ({ role: 'user', content: text }),
  calls: (calls) => ({ role: 'assistant', content: calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.args })) }),
  results: (results) => [
    { role: 'user', content: results.map((r) => ({ type: 'tool_result', tool_use_id: r.id, content: r.content, ...(r.isError ? { is_error: true } : {}) })) },
  ],
  /** @param {{ messages: Json[], tools?: string[], model?: string, stream?: boolean, extra?: Json }} opts */
  request({ messages, tools, model = 'claude-haiku-4-5', stream = true, extra = {} }) {
    /** @type {Json} */
    const body = { model, max_tokens: 4096, messages, stream, ...extra };
    if (tools) body.tools = this.tools(tools);
    return { path: '/v1/messages', body };
  },
  decode(text) {
    const events = parseSse(text);
    /** @type {Json} */
    const out = { text: '', reasoning: '', calls: [], finish: null, usage: null, textDeltas: 0, argFragments: 0, events, blocks: [] };
    for (const e of events) {
      const d = tryJson(e.data);
      if (!d) continue;
      if (e.event !== d.type) out.mismatch = true;
      if (d.type === 'error') out.error = d.error;
      if (d.type === 'content_block_start') out.blocks[d.index] = { ...d.content_block, json: '' };
      if (d.type === 'content_block_delta') {
        const b = out.blocks[d.index];
        if (d.delta.type === 'text_delta') {
          out.text += d.delta.text;
          out.textDeltas += 1;
        }
        if (d.delta.type === 'thinking_delta') out.reasoning += d.delta.thinking;
        if (d.delta.type === 'signature_delta') b.signature = d.delta.signature;
        if (d.delta.type === 'input_json_delta') {
          b.json += d.delta.partial_json;
          if (d.delta.partial_json) out.argFragments += 1;
        }
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
      text: body.content
        .filter((b) => b.type === 'text')
        .map((b) => b.text)
        .join(''),
      reasoning: body.content
        .filter((b) => b.type === 'thinking')
        .map((b) => b.thinking)
        .join(''),
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

export const gemini = {
  name: 'gemini',
  headers: { 'content-type': 'application/json', 'x-goog-api-key': KEY },
  tools: (names) => [{ functionDeclarations: names.map((n) => ({ name: n, description: n, parameters: SCHEMAS[n] })) }],
  user: (text) => ({ role: 'user', parts: [{ text }] }),
  calls: (calls) => ({ role: 'model', parts: calls.map((c) => ({ functionCall: { name: c.name, args: c.args } })) }),
  results: (results) => [
    { role: 'user', parts: results.map((r) => ({ functionResponse: { name: r.name, response: r.isError ? { error: r.content } : { result: r.content } } })) },
  ],
  /** @param {{ messages: Json[], tools?: string[], model?: string, stream?: boolean, extra?: Json }} opts */
  request({ messages, tools, model = 'gemini-2.5-flash', stream = true, extra = {} }) {
    /** @type {Json} */
    const body = { contents: messages, ...extra };
    if (tools) body.tools = this.tools(tools);
    return { path: `/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, body };
  },
  decode(text) {
    const events = parseSse(text);
    /** @type {Json} */
    const out = { text: '', reasoning: '', calls: [], finish: null, usage: null, textDeltas: 0, argFragments: 0, events };
    for (const e of events) {
      const d = tryJson(e.data);
      if (!d) continue;
      if (d.error) {
        out.error = d.error;
        continue;
      }
      const cand = d.candidates?.[0];
      for (const part of cand?.content?.parts ?? []) {
        if (part.thought) out.reasoning += part.text;
        else if (typeof part.text === 'string') {
          out.text += part.text;
          if (part.text) out.textDeltas += 1;
        }
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
      text: parts
        .filter((p) => typeof p.text === 'string' && !p.thought)
        .map((p) => p.text)
        .join(''),
      reasoning: parts
        .filter((p) => p.thought)
        .map((p) => p.text)
        .join(''),
      calls,
      finish: body.candidates[0].finishReason === 'MAX_TOKENS' ? 'length' : calls.length ? 'tool' : 'end',
      usage: {
        prompt: body.usageMetadata.promptTokenCount,
        completion: body.usageMetadata.candidatesTokenCount + (body.usageMetadata.thoughtsTokenCount ?? 0),
      },
    };
  },
  errorShape(body) {
    assert.equal(typeof body.error.code, 'number', JSON.stringify(body));
    assert.equal(typeof body.error.message, 'string');
    return body.error.status;
  },
};

export const PROVIDERS = [openai, anthropic, gemini];

export async function send(path, body, headers, signal = AbortSignal.timeout(10000)) {
  return fetch(llm.url + path, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body), signal });
}

/** One model turn: request, read, decode. */
export async function turn(P, opts, headers = {}) {
  const { path, body } = P.request(opts);
  const res = await send(path, body, { ...P.headers, ...headers });
  const raw = await res.text();
  if (res.status !== 200) return { status: res.status, res, raw, body: tryJson(raw) };
  const stream = opts.stream !== false;
  if (stream) assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const out = stream ? P.decode(raw) : P.decodeJson(JSON.parse(raw));
  return { status: 200, res, raw, rule: res.headers.get('x-scripted-rule'), ...out };
}

/** Give calls the ids the provider returned (Gemini has none: match by name). */
export const withIds = (calls) => calls.map((c, i) => ({ ...c, id: c.id ?? `g${i}` }));

// ---- shared behaviour, per provider ------------------------------------------------------
