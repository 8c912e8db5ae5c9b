// The scripted LLM against each provider's own wire details (chunk order, usage, ids, fields),
// compared with recorded streams where there are some.

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { useScriptedLlm, fixture, parseSse, parseJsonl, tryJson, shape, collapse, readAll, KEY, openai, anthropic, gemini, send, turn } from './kit.mjs';

useScriptedLlm();

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
    const r = await turn(openai, {
      messages: [{ role: 'system', content: 'Summarize the conversation so far for a later turn.' }, ...convo, { role: 'user', content: 'go on' }],
    });
    assert.equal(
      r.text,
      'Summary of the conversation so far: The user asked: "what time is it"; "go on". The assistant made 1 tool call (get_time) and gave 1 reply.',
    );
    const plain = await turn(openai, {
      messages: [
        { role: 'system', content: 'Keep answers compact and use the conversation history.' },
        { role: 'user', content: 'hi' },
      ],
    });
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
  /** @type {[string, unknown, RegExp][]} what is wrong, the body, the error it gets */
  const cases = [
    ['missing model', { messages: [{ role: 'user', content: 'hi' }] }, /you must provide a model parameter/],
    ['missing messages', { model: 'm' }, /Missing required parameter: 'messages'/],
    ['messages not an array', { model: 'm', messages: 'hi' }, /Invalid type for 'messages': expected an array of objects, but got a string instead/],
    ['empty messages', { model: 'm', messages: [] }, /empty array/],
    ['unknown role', { model: 'm', messages: [{ role: 'robot', content: 'hi' }] }, /Invalid value: 'robot'/],
    ['user without content', { model: 'm', messages: [{ role: 'user' }] }, /messages\[0\]\.content/],
    [
      'tool schema not an object schema',
      { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'x', parameters: { type: 'string' } } }] },
      /schema must be a JSON Schema of 'type: "object"'/,
    ],
    [
      'tool name with spaces',
      { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'get time' } }] },
      /does not match pattern/,
    ],
    [
      'tool message without a prior tool call',
      {
        model: 'm',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'tool', tool_call_id: 'call_1', content: 'x' },
        ],
      },
      /must be a response to a preceeding message with 'tool_calls'/,
    ],
    [
      'tool_call_id not in the previous tool calls',
      { model: 'm', messages: [{ role: 'user', content: 'hi' }, openai.calls([call]), { role: 'tool', tool_call_id: 'call_2', content: 'x' }] },
      /'tool_call_id' of 'call_2' not found/,
    ],
    [
      'tool call without a tool response',
      { model: 'm', messages: [{ role: 'user', content: 'hi' }, openai.calls([call]), { role: 'user', content: 'again' }] },
      /did not have response messages: call_1/,
    ],
    [
      'stream_options without stream',
      { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream_options: { include_usage: true } },
      /only allowed when 'stream' is enabled/,
    ],
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
    const deltas = (events) =>
      new Set(
        events
          .map((e) => tryJson(e.data))
          .filter((c) => c?.choices?.[0] && c.choices[0].finish_reason === null)
          .map((c) => shape(c.choices[0].delta)),
      );
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
    assert.deepEqual(
      r.events.slice(0, 3).map((e) => e.event),
      ['message_start', 'content_block_start', 'ping'],
    );
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
  /** @type {[string, unknown, RegExp][]} what is wrong, the body, the error it gets */
  const cases = [
    ['missing model', { max_tokens: 10, messages: [u('hi')] }, /^model: Field required$/],
    ['missing max_tokens', { model: 'm', messages: [u('hi')] }, /^max_tokens: Field required$/],
    ['messages not an array', { model: 'm', max_tokens: 10, messages: { role: 'user' } }, /^messages: Input should be a valid list$/],
    ['a system role inside messages', { model: 'm', max_tokens: 10, messages: [{ role: 'system', content: 'be nice' }, u('hi')] }, /Unexpected role "system"/],
    ['empty content', { model: 'm', max_tokens: 10, messages: [u('')] }, /must have non-empty content/],
    [
      'tool input_schema not an object',
      { model: 'm', max_tokens: 10, messages: [u('hi')], tools: [{ name: 'x', input_schema: { type: 'string' } }] },
      /input_schema\.type: Input should be 'object'/,
    ],
    ['tool without input_schema', { model: 'm', max_tokens: 10, messages: [u('hi')], tools: [{ name: 'x' }] }, /input_schema: Field required/],
    [
      'tool_result without a matching tool_use',
      {
        model: 'm',
        max_tokens: 10,
        messages: [u('hi'), { role: 'assistant', content: [use] }, u([{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'x' }])],
      },
      /unexpected `tool_use_id` found in `tool_result` blocks: toolu_2/,
    ],
    [
      'tool_use without a tool_result after it',
      { model: 'm', max_tokens: 10, messages: [u('hi'), { role: 'assistant', content: [use] }, u('again')] },
      /`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1/,
    ],
    [
      'thinking budget >= max_tokens',
      { model: 'm', max_tokens: 1024, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [u('hi')] },
      /must be greater than `thinking.budget_tokens`/,
    ],
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
    const res = await send(
      `/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=${KEY}`,
      { contents: [gemini.user('count to 3')] },
      { 'content-type': 'application/json' },
    );
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

  /** @type {[string, unknown, RegExp][]} what is wrong, the body, the error it gets */
  const cases = [
    ['missing contents', {}, /contents is not specified/],
    ['contents not an array', { contents: 'hi' }, /Invalid value at 'contents'/],
    ['a bad role', { contents: [{ role: 'assistant', parts: [{ text: 'hi' }] }] }, /Please use a valid role: user, model/],
    ['empty parts', { contents: [{ role: 'user', parts: [] }] }, /parts must not be empty/],
    ['an empty part', { contents: [{ role: 'user', parts: [{}] }] }, /required oneof field 'data'/],
    ['a bad function name', { contents: [gemini.user('hi')], tools: [{ functionDeclarations: [{ name: '1bad name' }] }] }, /Invalid function name/],
    [
      'non-object parameters schema',
      { contents: [gemini.user('hi')], tools: [{ functionDeclarations: [{ name: 'x', parameters: { type: 'STRING' } }] }] },
      /must be of type OBJECT/,
    ],
    [
      'function response without a function call',
      { contents: [gemini.user('hi'), { role: 'user', parts: [{ functionResponse: { name: 'get_time', response: { result: 'x' } } }] }] },
      /function response turn comes immediately after a function call turn/,
    ],
    [
      'function response for another function',
      {
        contents: [
          gemini.user('hi'),
          gemini.calls([{ name: 'get_time', args: {} }]),
          { role: 'user', parts: [{ functionResponse: { name: 'calculator', response: { result: 'x' } } }] },
        ],
      },
      /does not match any function call/,
    ],
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
