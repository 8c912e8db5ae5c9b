// Anthropic Messages: POST /v1/messages.
//
// Stream framing follows the recorded api.anthropic.com streams (fixtures/providers/
// anthropic/*.sse): `event: <type>\ndata: {json}\n\n`; message_start, content_block_start,
// one `ping` (sent as `{"type": "ping"}`) after the first block start, content_block_delta
// (text_delta / thinking_delta + a final empty thinking_delta + signature_delta /
// input_json_delta starting with an empty fragment), content_block_stop, message_delta
// (stop_reason, usage), message_stop. Like the real API, most data payloads are padded with
// a run of spaces before the closing brace.

import { ApiError, isObj, opaqueBlob } from '../lib.mjs';

export const name = 'anthropic';
export const jsonContentType = 'application/json';
export const sseContentType = 'text/event-stream; charset=utf-8';
export const formatError = (body) => JSON.stringify(body);

function error(status, type, message, meta, headers = {}) {
  const body = { type: 'error', error: { type, message } };
  if (meta?.requestId) body.request_id = meta.requestId;
  return new ApiError(status, body, headers);
}
const invalid = (message) => error(400, 'invalid_request_error', message);

export function authorized(req) {
  return (req.headers['x-api-key'] ?? '').trim() !== '' || /^Bearer\s+\S+/i.test(req.headers.authorization ?? '');
}

export function apiKey(req) {
  return (req.headers['x-api-key'] ?? '').trim() || (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '').trim();
}

export function authError() {
  return error(401, 'authentication_error', 'x-api-key header is required');
}

export function badJson() {
  return invalid('There was an error parsing the body of your request. Please make sure the body is valid JSON.');
}

/** Checked after auth, before the body: the real API refuses requests without it. */
export function checkHeaders(req) {
  if (!req.headers['anthropic-version']) throw invalid('anthropic-version: header is required');
}

export function faultError(kind, meta) {
  switch (kind) {
    case '401':
      return error(401, 'authentication_error', 'invalid x-api-key', meta);
    case '429':
      return error(
        429,
        'rate_limit_error',
        'This request would exceed the rate limit for your organization of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase.',
        meta,
        { 'retry-after': '2' },
      );
    case '529':
      return error(529, 'overloaded_error', 'Overloaded', meta);
    default:
      return error(500, 'api_error', 'Internal server error', meta);
  }
}

const BLOCK_TYPES = [
  'text',
  'image',
  'document',
  'search_result',
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
  'server_tool_use',
  'web_search_tool_result',
  'container_upload',
];

function textOfBlocks(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((b) => isObj(b) && b.type === 'text')
    .map((b) => b.text)
    .join('');
}

function checkMessages(messages) {
  if (messages === undefined) throw invalid('messages: Field required');
  if (!Array.isArray(messages)) throw invalid('messages: Input should be a valid list');
  if (messages.length === 0) throw invalid('messages: at least one message is required');
  messages.forEach((m, i) => {
    if (!isObj(m)) throw invalid(`messages.${i}: Input should be a valid dictionary`);
    if (m.role === 'system') {
      throw invalid('messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.');
    }
    if (m.role === undefined) throw invalid(`messages.${i}.role: Field required`);
    if (m.role !== 'user' && m.role !== 'assistant') throw invalid(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    if (m.content === undefined) throw invalid(`messages.${i}.content: Field required`);
    const final = i === messages.length - 1 && m.role === 'assistant';
    if (typeof m.content === 'string') {
      if (m.content === '' && !final) throw invalid(`messages.${i}: all messages must have non-empty content except for the optional final assistant message`);
      return;
    }
    if (!Array.isArray(m.content)) throw invalid(`messages.${i}.content: Input should be a valid string`);
    if (m.content.length === 0 && !final)
      throw invalid(`messages.${i}: all messages must have non-empty content except for the optional final assistant message`);
    m.content.forEach((b, j) => {
      const p = `messages.${i}.content.${j}`;
      if (!isObj(b)) throw invalid(`${p}: Input should be a valid dictionary or object to extract fields from`);
      if (b.type === undefined) throw invalid(`${p}: Unable to extract tag using discriminator 'type'`);
      if (!BLOCK_TYPES.includes(b.type)) {
        throw invalid(`${p}: Input tag '${b.type}' found using 'type' does not match any of the expected tags: ${BLOCK_TYPES.map((t) => `'${t}'`).join(', ')}`);
      }
      if (b.type === 'text' && typeof b.text !== 'string') throw invalid(`${p}.text.text: Field required`);
      if (b.type === 'tool_use') {
        if (m.role !== 'assistant') throw invalid(`${p}: tool_use blocks can only be in assistant messages`);
        if (typeof b.id !== 'string') throw invalid(`${p}.tool_use.id: Field required`);
        if (typeof b.name !== 'string') throw invalid(`${p}.tool_use.name: Field required`);
        if (!isObj(b.input)) throw invalid(`${p}.tool_use.input: Input should be a valid dictionary`);
      }
      if (b.type === 'tool_result') {
        if (m.role !== 'user') throw invalid(`${p}: tool_result blocks can only be in user messages`);
        if (typeof b.tool_use_id !== 'string') throw invalid(`${p}.tool_result.tool_use_id: Field required`);
      }
    });
  });
  // tool_use / tool_result pairing between neighbouring messages
  const uses = (m) => (Array.isArray(m?.content) ? m.content.filter((b) => b.type === 'tool_use').map((b) => b.id) : []);
  const results = (m) => (Array.isArray(m?.content) ? m.content.map((b, j) => [b, j]).filter(([b]) => b.type === 'tool_result') : []);
  messages.forEach((m, i) => {
    if (m.role !== 'user') return;
    const prior = new Set(i > 0 && messages[i - 1].role === 'assistant' ? uses(messages[i - 1]) : []);
    for (const [b, j] of results(m)) {
      if (!prior.has(b.tool_use_id)) {
        throw invalid(
          `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        );
      }
    }
  });
  messages.forEach((m, i) => {
    if (m.role !== 'assistant' || i + 1 >= messages.length) return;
    const answered = new Set(results(messages[i + 1]).map(([b]) => b.tool_use_id));
    const missing = uses(m).filter((id) => !answered.has(id));
    if (missing.length) {
      throw invalid(
        `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
      );
    }
  });
}

function checkTools(tools) {
  if (!Array.isArray(tools)) throw invalid('tools: Input should be a valid list');
  const names = new Set();
  tools.forEach((t, i) => {
    if (!isObj(t)) throw invalid(`tools.${i}: Input should be a valid dictionary or object to extract fields from`);
    const custom = t.type === undefined || t.type === null || t.type === 'custom';
    if (t.name === undefined) throw invalid(`tools.${i}.custom.name: Field required`);
    if (typeof t.name !== 'string' || !/^[a-zA-Z0-9_-]{1,128}$/.test(t.name))
      throw invalid(`tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`);
    if (names.has(t.name)) throw invalid('tools: Tool names must be unique.');
    names.add(t.name);
    if (!custom) return; // server tools (web_search_…, bash_…) carry no input_schema
    if (t.input_schema === undefined) throw invalid(`tools.${i}.custom.input_schema: Field required`);
    if (!isObj(t.input_schema)) throw invalid(`tools.${i}.custom.input_schema: Input should be a valid dictionary`);
    if (t.input_schema.type !== 'object') throw invalid(`tools.${i}.custom.input_schema.type: Input should be 'object'`);
  });
}

export function parseRequest(body) {
  if (!isObj(body)) throw invalid('Input should be a valid dictionary');
  if (body.model === undefined || body.model === null) throw invalid('model: Field required');
  if (typeof body.model !== 'string' || body.model === '') throw invalid('model: Input should be a valid string');
  if (body.max_tokens === undefined || body.max_tokens === null) throw invalid('max_tokens: Field required');
  if (!Number.isInteger(body.max_tokens)) throw invalid('max_tokens: Input should be a valid integer');
  if (body.max_tokens < 1) throw invalid('max_tokens: Input should be greater than or equal to 1');
  checkMessages(body.messages);
  if (body.system !== undefined && body.system !== null) {
    if (Array.isArray(body.system)) {
      body.system.forEach((b, i) => {
        if (!isObj(b) || b.type !== 'text') throw invalid(`system.${i}.type: Input should be 'text'`);
        if (typeof b.text !== 'string') throw invalid(`system.${i}.text: Field required`);
      });
    } else if (typeof body.system !== 'string') throw invalid('system: Input should be a valid string');
  }
  if (body.tools !== undefined && body.tools !== null) checkTools(body.tools);
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') throw invalid('stream: Input should be a valid boolean');
  const thinking = body.thinking;
  if (thinking !== undefined && thinking !== null) {
    if (!isObj(thinking) || !['enabled', 'disabled', 'adaptive'].includes(thinking.type)) {
      throw invalid("thinking: Input tag found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'");
    }
    if (thinking.type === 'enabled') {
      if (!Number.isInteger(thinking.budget_tokens)) throw invalid('thinking.enabled.budget_tokens: Field required');
      if (thinking.budget_tokens < 1024) throw invalid('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
      if (thinking.budget_tokens >= body.max_tokens) {
        throw invalid(
          '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size',
        );
      }
    }
  }

  const messages = [];
  for (const m of body.messages) {
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    if (m.role === 'assistant') {
      const calls = blocks.filter((b) => b.type === 'tool_use').map((b) => ({ id: b.id, name: b.name, args: b.input }));
      messages.push({ role: 'assistant', text: textOfBlocks(blocks), calls });
    } else {
      const results = blocks
        .filter((b) => b.type === 'tool_result')
        .map((b) => ({ id: b.tool_use_id, content: textOfBlocks(b.content ?? ''), isError: b.is_error === true }));
      if (results.length) messages.push({ role: 'tool', results });
      else messages.push({ role: 'user', text: textOfBlocks(blocks) });
    }
  }
  const system = Array.isArray(body.system) ? body.system.map((b) => b.text).join('\n') : (body.system ?? '');
  const tools = (body.tools ?? []).filter((t) => t.input_schema).map((t) => ({ name: t.name, description: t.description ?? '', parameters: t.input_schema }));
  return {
    conv: {
      provider: 'anthropic',
      model: body.model,
      system,
      messages,
      tools,
      toolChoice: body.tool_choice?.type === 'none' ? 'none' : 'auto',
    },
    model: body.model,
    stream: body.stream === true,
    maxTokens: body.max_tokens,
    reasoning: thinking?.type !== 'disabled',
  };
}

const STOP = { end: 'end_turn', tool: 'tool_use', length: 'max_tokens' };
const PAD = [1, 15, 4, 11, 7, 13, 2, 9, 0, 12, 5, 14, 3, 10, 6, 8];

/** meta: { model, id: idSource, requestId, seed } */
export function streamEvents(out, meta) {
  let n = 0;
  const event = (type, data, pad = true) => {
    let s = JSON.stringify(data);
    if (pad) {
      const spaces = PAD[n % PAD.length];
      n += 1;
      s = `${s.slice(0, -1)}${' '.repeat(spaces)}}`;
    }
    return `event: ${type}\ndata: ${s}\n\n`;
  };
  const events = [];
  const usage = out.usage;
  events.push(
    event('message_start', {
      type: 'message_start',
      message: {
        model: meta.model,
        id: meta.id('msg_01', 22),
        type: 'message',
        role: 'assistant',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        stop_details: null,
        usage: {
          input_tokens: usage.prompt,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
          output_tokens: 1,
          service_tier: 'standard',
          inference_geo: 'not_available',
        },
      },
    }),
  );
  let index = 0;
  let pinged = false;
  const start = (block) => {
    events.push(event('content_block_start', { type: 'content_block_start', index, content_block: block }));
    if (!pinged) {
      events.push('event: ping\ndata: {"type": "ping"}\n\n');
      pinged = true;
    }
  };
  const delta = (d) => events.push(event('content_block_delta', { type: 'content_block_delta', index, delta: d }));
  const stop = () => {
    events.push(event('content_block_stop', { type: 'content_block_stop', index }));
    index += 1;
  };
  if (out.reasoning.length) {
    start({ type: 'thinking', thinking: '', signature: '' });
    for (const t of out.reasoning) delta({ type: 'thinking_delta', thinking: t });
    delta({ type: 'thinking_delta', thinking: '' });
    delta({ type: 'signature_delta', signature: opaqueBlob(`${meta.seed}:signature`, 180) });
    stop();
  }
  if (out.hasText) {
    start({ type: 'text', text: '' });
    for (const t of out.text) delta({ type: 'text_delta', text: t });
    stop();
  }
  for (const c of out.toolCalls) {
    c.id = meta.id('toolu_01', 22);
    start({ type: 'tool_use', id: c.id, name: c.name, input: {}, caller: { type: 'direct' } });
    delta({ type: 'input_json_delta', partial_json: '' });
    for (const f of c.fragments) delta({ type: 'input_json_delta', partial_json: f });
    stop();
  }
  const finalUsage = { input_tokens: usage.prompt, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: usage.completion };
  if (out.reasoning.length) finalUsage.output_tokens_details = { thinking_tokens: usage.reasoning };
  events.push(
    event(
      'message_delta',
      {
        type: 'message_delta',
        delta: { stop_reason: STOP[out.stop], stop_sequence: null, stop_details: null },
        usage: finalUsage,
      },
      false,
    ),
  );
  events.push(event('message_stop', { type: 'message_stop' }));
  return events;
}

/** The in-stream error event (Anthropic's overloaded error as real streams carry it). */
export function streamError(meta) {
  return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { details: null, type: 'overloaded_error', message: 'Overloaded' }, request_id: meta.requestId })}\n\n`;
}

/** Non-streamed Messages response. */
export function json(out, meta) {
  const content = [];
  if (out.reasoning.length) content.push({ type: 'thinking', thinking: out.reasoningText, signature: opaqueBlob(`${meta.seed}:signature`, 180) });
  if (out.hasText) content.push({ type: 'text', text: out.textText });
  for (const c of out.toolCalls) content.push({ type: 'tool_use', id: meta.id('toolu_01', 22), name: c.name, input: c.args });
  return JSON.stringify({
    id: meta.id('msg_01', 22),
    type: 'message',
    role: 'assistant',
    model: meta.model,
    content,
    stop_reason: STOP[out.stop],
    stop_sequence: null,
    usage: {
      input_tokens: out.usage.prompt,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: out.usage.completion,
      service_tier: 'standard',
    },
  });
}
