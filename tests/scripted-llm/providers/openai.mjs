// OpenAI Chat Completions (and OpenAI-compatible servers): POST /v1/chat/completions.
//
// Stream framing follows the recorded api.openai.com streams (fixtures/providers/openai/
// chat-text-usage.gpt-4o.sse, chat-parallel-tool-calls.gpt-4o.sse): `data: {json}\n\n` per
// chunk, chunk keys id, object, created, model, system_fingerprint, choices[{index, delta,
// logprobs, finish_reason}]; the usage chunk (choices: []) only with
// stream_options.include_usage; then `data: [DONE]\n\n`. Reasoning is streamed the way
// DeepSeek does it (delta.reasoning_content, see openai-compatible/deepseek-tool-call
// .chunks.txt); the header `x-scripted-reasoning-field: reasoning` switches to the
// OpenRouter/Groq/Ollama field name `reasoning`.

import { ApiError, isObj, typeName } from '../lib.mjs';

const ROLES = ['system', 'assistant', 'user', 'function', 'tool', 'developer'];
const FINGERPRINT = 'fp_5c7e1d0a3b';

/**
 * An error answer in OpenAI's shape.
 * @param {number} status
 * @param {string} message
 * @param {{ type?: string, param?: string | null, code?: string | null }} [fields]
 * @param {Record<string, string>} [headers]
 */
function error(status, message, { type = 'invalid_request_error', param = null, code = null } = {}, headers = {}) {
  return new ApiError(status, { error: { message, type, param, code } }, headers);
}
const invalid = (/** @type {string} */ message, /** @type {string | null} */ param = null, /** @type {string | null} */ code = null) =>
  error(400, message, { param, code });

export const name = 'openai';
export const jsonContentType = 'application/json; charset=utf-8';
export const sseContentType = 'text/event-stream; charset=utf-8';
export const formatError = (body) => `${JSON.stringify(body, null, 4)}\n`;

export function authorized(req) {
  return /^Bearer\s+\S+/i.test(req.headers.authorization ?? '');
}

export function apiKey(req) {
  return (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '').trim();
}

export function authError() {
  return error(
    401,
    "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.",
  );
}

export function badJson() {
  return invalid(
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
  );
}

/** HTTP-level faults: 401, 429, 500, 529 (OpenAI has no 529: answered as 503 overloaded). */
/**
 * @param {string} kind
 * @param {{ model: string, key: string, requestId?: string }} request
 */
export function faultError(kind, { model, key }) {
  switch (kind) {
    case '401': {
      const shown = key.length > 10 ? `${key.slice(0, 6)}${'*'.repeat(Math.min(20, key.length - 10))}${key.slice(-4)}` : '***';
      return error(401, `Incorrect API key provided: ${shown}. You can find your API key at https://platform.openai.com/account/api-keys.`, {
        code: 'invalid_api_key',
      });
    }
    case '429':
      return error(
        429,
        `Rate limit reached for ${model} in organization org-scripted on tokens per min (TPM): Limit 30000, Used 30000, Requested 1000. Please try again in 2s. Visit https://platform.openai.com/account/rate-limits to learn more.`,
        { type: 'tokens', param: null, code: 'rate_limit_exceeded' },
        { 'retry-after': '2' },
      );
    case '529':
      return error(503, 'The engine is currently overloaded, please try again later.', { type: 'server_error' });
    default:
      return error(500, 'The server had an error while processing your request. Sorry about that!', { type: 'server_error' });
  }
}

function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .filter((p) => p && (p.type === 'text' || p.type === 'refusal'))
      .map((p) => p.text ?? p.refusal ?? '')
      .join('');
  return '';
}

function parseArgs(s) {
  try {
    const v = JSON.parse(s);
    return isObj(v) ? v : { value: v };
  } catch {
    return { raw: s };
  }
}

function checkContent(content, path, allowed) {
  if (typeof content === 'string') return;
  if (!Array.isArray(content))
    throw invalid(`Invalid type for '${path}': expected one of a string or array of objects, but got ${typeName(content)} instead.`, path, 'invalid_type');
  content.forEach((part, j) => {
    const p = `${path}[${j}]`;
    if (!isObj(part)) throw invalid(`Invalid type for '${p}': expected an object, but got ${typeName(part)} instead.`, p, 'invalid_type');
    if (part.type === undefined) throw invalid(`Missing required parameter: '${p}.type'.`, `${p}.type`, 'missing_required_parameter');
    if (!allowed.includes(part.type)) {
      throw invalid(`Invalid value: '${part.type}'. Supported values are: ${allowed.map((a) => `'${a}'`).join(', ')}.`, `${p}.type`, 'invalid_value');
    }
    if (part.type === 'text' && typeof part.text !== 'string')
      throw invalid(`Missing required parameter: '${p}.text'.`, `${p}.text`, 'missing_required_parameter');
  });
}

function checkTools(tools) {
  if (!Array.isArray(tools))
    throw invalid(`Invalid type for 'tools': expected an array of objects, but got ${typeName(tools)} instead.`, 'tools', 'invalid_type');
  tools.forEach((t, i) => {
    const p = `tools[${i}]`;
    if (!isObj(t)) throw invalid(`Invalid type for '${p}': expected an object, but got ${typeName(t)} instead.`, p, 'invalid_type');
    if (t.type === undefined) throw invalid(`Missing required parameter: '${p}.type'.`, `${p}.type`, 'missing_required_parameter');
    if (t.type !== 'function') throw invalid(`Invalid value: '${t.type}'. Supported values are: 'function' and 'custom'.`, `${p}.type`, 'invalid_value');
    if (!isObj(t.function)) throw invalid(`Missing required parameter: '${p}.function'.`, `${p}.function`, 'missing_required_parameter');
    const fn = t.function;
    if (fn.name === undefined) throw invalid(`Missing required parameter: '${p}.function.name'.`, `${p}.function.name`, 'missing_required_parameter');
    if (typeof fn.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(fn.name)) {
      throw invalid(
        `Invalid '${p}.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
        `${p}.function.name`,
        'invalid_value',
      );
    }
    if (fn.parameters !== undefined) {
      if (!isObj(fn.parameters))
        throw invalid(
          `Invalid type for '${p}.function.parameters': expected an object, but got ${typeName(fn.parameters)} instead.`,
          `${p}.function.parameters`,
          'invalid_type',
        );
      if (Object.keys(fn.parameters).length > 0 && fn.parameters.type !== 'object') {
        const got = fn.parameters.type === undefined ? 'None' : JSON.stringify(fn.parameters.type);
        throw invalid(
          `Invalid schema for function '${fn.name}': schema must be a JSON Schema of 'type: "object"', got 'type: ${got}'.`,
          `${p}.function.parameters`,
          'invalid_function_parameters',
        );
      }
    }
  });
}

function checkMessages(messages) {
  let pending = null; // { index, ids: Set } of the last assistant message with tool_calls
  const flushPending = () => {
    if (pending && pending.ids.size > 0) {
      throw invalid(
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending.ids].join(', ')}`,
        `messages.[${pending.index}].role`,
      );
    }
    pending = null;
  };
  messages.forEach((m, i) => {
    const p = `messages[${i}]`;
    if (!isObj(m)) throw invalid(`Invalid type for '${p}': expected an object, but got ${typeName(m)} instead.`, p, 'invalid_type');
    if (m.role === undefined) throw invalid(`Missing required parameter: '${p}.role'.`, `${p}.role`, 'missing_required_parameter');
    if (!ROLES.includes(m.role)) {
      throw invalid(
        `Invalid value: '${m.role}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
        `${p}.role`,
        'invalid_value',
      );
    }
    if (m.role !== 'tool') flushPending();
    switch (m.role) {
      case 'system':
      case 'developer':
        if (m.content === undefined || m.content === null)
          throw invalid(`Missing required parameter: '${p}.content'.`, `${p}.content`, 'missing_required_parameter');
        checkContent(m.content, `${p}.content`, ['text']);
        break;
      case 'user':
        if (m.content === undefined || m.content === null)
          throw invalid(`Missing required parameter: '${p}.content'.`, `${p}.content`, 'missing_required_parameter');
        checkContent(m.content, `${p}.content`, ['text', 'image_url', 'input_audio', 'file']);
        break;
      case 'assistant': {
        const calls = m.tool_calls;
        if ((m.content === undefined || m.content === null) && !calls && !m.function_call) {
          throw invalid(`Missing required parameter: '${p}.content'.`, `${p}.content`, 'missing_required_parameter');
        }
        if (m.content !== undefined && m.content !== null) checkContent(m.content, `${p}.content`, ['text', 'refusal']);
        if (calls !== undefined && calls !== null) {
          if (!Array.isArray(calls))
            throw invalid(
              `Invalid type for '${p}.tool_calls': expected an array of objects, but got ${typeName(calls)} instead.`,
              `${p}.tool_calls`,
              'invalid_type',
            );
          const ids = new Set();
          calls.forEach((c, j) => {
            const q = `${p}.tool_calls[${j}]`;
            if (!isObj(c)) throw invalid(`Invalid type for '${q}': expected an object, but got ${typeName(c)} instead.`, q, 'invalid_type');
            if (typeof c.id !== 'string') throw invalid(`Missing required parameter: '${q}.id'.`, `${q}.id`, 'missing_required_parameter');
            if (c.type !== 'function') throw invalid(`Missing required parameter: '${q}.type'.`, `${q}.type`, 'missing_required_parameter');
            if (!isObj(c.function) || typeof c.function.name !== 'string')
              throw invalid(`Missing required parameter: '${q}.function.name'.`, `${q}.function.name`, 'missing_required_parameter');
            if (typeof c.function.arguments !== 'string')
              throw invalid(`Missing required parameter: '${q}.function.arguments'.`, `${q}.function.arguments`, 'missing_required_parameter');
            ids.add(c.id);
          });
          if (ids.size) pending = { index: i, ids };
        }
        break;
      }
      case 'tool': {
        if (typeof m.tool_call_id !== 'string')
          throw invalid(`Missing required parameter: '${p}.tool_call_id'.`, `${p}.tool_call_id`, 'missing_required_parameter');
        if (!pending)
          throw invalid("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `messages.[${i}].role`);
        if (!pending.ids.has(m.tool_call_id))
          throw invalid(
            `Invalid parameter: 'tool_call_id' of '${m.tool_call_id}' not found in 'tool_calls' of previous message.`,
            `messages.[${i}].tool_call_id`,
          );
        pending.ids.delete(m.tool_call_id);
        if (m.content === undefined || m.content === null)
          throw invalid(`Missing required parameter: '${p}.content'.`, `${p}.content`, 'missing_required_parameter');
        checkContent(m.content, `${p}.content`, ['text']);
        break;
      }
      case 'function':
        if (typeof m.name !== 'string') throw invalid(`Missing required parameter: '${p}.name'.`, `${p}.name`, 'missing_required_parameter');
        break;
    }
  });
  flushPending();
}

/** Validate the request like the real API does and turn it into the neutral conversation. */
export function parseRequest(body) {
  if (!isObj(body)) throw invalid(`Invalid type for request body: expected an object, but got ${typeName(body)} instead.`);
  if (body.model === undefined || body.model === null || body.model === '') throw invalid('you must provide a model parameter');
  if (typeof body.model !== 'string')
    throw invalid(`Invalid type for 'model': expected a string, but got ${typeName(body.model)} instead.`, 'model', 'invalid_type');
  if (body.messages === undefined) throw invalid("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  if (!Array.isArray(body.messages))
    throw invalid(`Invalid type for 'messages': expected an array of objects, but got ${typeName(body.messages)} instead.`, 'messages', 'invalid_type');
  if (body.messages.length === 0)
    throw invalid("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages', 'empty_array');
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    throw invalid(`Invalid type for 'stream': expected a boolean, but got ${typeName(body.stream)} instead.`, 'stream', 'invalid_type');
  }
  if (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true) {
    throw invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options');
  }
  for (const key of ['max_tokens', 'max_completion_tokens']) {
    const v = body[key];
    if (v === undefined || v === null) continue;
    if (!Number.isInteger(v)) throw invalid(`Invalid type for '${key}': expected an integer, but got ${typeName(v)} instead.`, key, 'invalid_type');
    if (v < 1) throw invalid(`Invalid '${key}': integer below minimum value. Expected a value >= 1, but got ${v} instead.`, key, 'integer_below_min_value');
  }
  if (body.tools !== undefined && body.tools !== null) checkTools(body.tools);
  if (body.tool_choice !== undefined && body.tool_choice !== null && !(Array.isArray(body.tools) && body.tools.length)) {
    throw invalid("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", 'tool_choice');
  }
  checkMessages(body.messages);

  const system = [];
  /** @type {Json[]} */
  const messages = [];
  for (const m of body.messages) {
    if (m.role === 'system' || m.role === 'developer') system.push(textOf(m.content));
    else if (m.role === 'user') messages.push({ role: 'user', text: textOf(m.content) });
    else if (m.role === 'assistant') {
      const calls = (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, args: parseArgs(c.function.arguments) }));
      if (m.function_call) calls.push({ name: m.function_call.name, args: parseArgs(m.function_call.arguments ?? '{}') });
      messages.push({ role: 'assistant', text: textOf(m.content), calls });
    } else {
      const result =
        m.role === 'tool' ? { id: m.tool_call_id, content: textOf(m.content), isError: false } : { name: m.name, content: textOf(m.content), isError: false };
      const last = messages[messages.length - 1];
      if (last && last.role === 'tool') last.results.push(result);
      else messages.push({ role: 'tool', results: [result] });
    }
  }
  const tools = (body.tools ?? []).map((t) => ({ name: t.function.name, description: t.function.description ?? '', parameters: t.function.parameters ?? {} }));
  for (const f of body.functions ?? [])
    if (isObj(f) && typeof f.name === 'string') tools.push({ name: f.name, description: f.description ?? '', parameters: f.parameters ?? {} });
  return {
    conv: {
      provider: 'openai',
      model: body.model,
      system: system.join('\n'),
      messages,
      tools,
      toolChoice: body.tool_choice === 'none' || body.function_call === 'none' ? 'none' : 'auto',
    },
    model: body.model,
    stream: body.stream === true,
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? null,
    reasoning: true,
    includeUsage: body.stream_options?.include_usage === true,
  };
}

const FINISH = { end: 'stop', tool: 'tool_calls', length: 'length' };

/** meta: { model, id: idSource, created, includeUsage, reasoningField } */
export function streamEvents(out, meta) {
  const id = meta.id('chatcmpl-', 29);
  const head = { id, object: 'chat.completion.chunk', created: meta.created, model: meta.model, system_fingerprint: FINGERPRINT };
  const rf = meta.reasoningField ?? 'reasoning_content';
  const chunk = (delta, finish = null) => `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  const events = [];
  const reasoned = out.reasoning.length > 0;
  if (reasoned) events.push(chunk({ role: 'assistant', content: null, [rf]: '' }));
  else if (out.hasText) events.push(chunk({ role: 'assistant', content: '', refusal: null }));
  else events.push(chunk({ role: 'assistant', content: null }));
  for (const t of out.reasoning) events.push(chunk({ content: null, [rf]: t }));
  for (const t of out.text) events.push(chunk(reasoned ? { content: t, [rf]: null } : { content: t }));
  out.toolCalls.forEach((c, index) => {
    c.id = meta.id('call_', 24);
    events.push(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }));
    for (const f of c.fragments) events.push(chunk({ tool_calls: [{ index, function: { arguments: f } }] }));
  });
  events.push(chunk({}, FINISH[out.stop]));
  if (meta.includeUsage) {
    const usage = {
      prompt_tokens: out.usage.prompt,
      completion_tokens: out.usage.completion,
      total_tokens: out.usage.total,
      completion_tokens_details: { reasoning_tokens: out.usage.reasoning },
    };
    events.push(`data: ${JSON.stringify({ ...head, choices: [], usage })}\n\n`);
  }
  events.push('data: [DONE]\n\n');
  return events;
}

/** The in-stream error chunk OpenAI sends when a stream fails after it started. */
export function streamError() {
  return `data: ${JSON.stringify({ error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null } })}\n\n`;
}

/** Non-streamed `chat.completion` body (pretty-printed, as api.openai.com sends it). */
export function json(out, meta) {
  const message = { role: 'assistant', content: out.hasText || !out.toolCalls.length ? out.textText : null };
  if (out.reasoning.length) message[meta.reasoningField ?? 'reasoning_content'] = out.reasoningText;
  if (out.toolCalls.length) {
    message.tool_calls = out.toolCalls.map((c) => ({ id: meta.id('call_', 24), type: 'function', function: { name: c.name, arguments: c.json } }));
  }
  message.refusal = null;
  message.annotations = [];
  const body = {
    id: meta.id('chatcmpl-', 29),
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: FINISH[out.stop] }],
    usage: {
      prompt_tokens: out.usage.prompt,
      completion_tokens: out.usage.completion,
      total_tokens: out.usage.total,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: out.usage.reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    },
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
  };
  return `${JSON.stringify(body, null, 2)}\n`;
}
