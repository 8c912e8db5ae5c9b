// Google Gemini (Developer API): POST /v1beta/models/{model}:streamGenerateContent?alt=sse
// and :generateContent.
//
// Stream framing follows the recorded Gemini streams (fixtures/providers/gemini/
// streaming-success-*.txt): `data: {json}\r\n\r\n` (CRLF), Google's spaced JSON style
// (`{"candidates": [{"content": {"parts": [...],"role": "model"},...`), usageMetadata on
// every chunk, candidatesTokenCount and finishReason only on the last one, thought parts as
// `{"text": ..., "thought": true}`, function calls as whole `functionCall` parts in the last
// chunk (with a thoughtSignature when the model reasoned). Without `alt=sse` the stream is a
// JSON array, as the real endpoint sends it.

import { ApiError, isObj, googleJson, opaqueBlob } from '../lib.mjs';

export const name = 'gemini';
export const jsonContentType = 'application/json; charset=UTF-8';
export const sseContentType = 'text/event-stream';
export const formatError = (body) => `${JSON.stringify(body, null, 2)}\n`;

function error(status, statusName, message, headers = {}, details) {
  const err = { code: status, message, status: statusName };
  if (details) err.details = details;
  return new ApiError(status, { error: err }, headers);
}
const invalid = (message) => error(400, 'INVALID_ARGUMENT', message);

/** Read a field by its camelCase name or its snake_case spelling (both are accepted). */
function get(obj, camel) {
  if (!isObj(obj)) return undefined;
  if (obj[camel] !== undefined) return obj[camel];
  return obj[camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)];
}

export function authorized(req, url) {
  return (
    (req.headers['x-goog-api-key'] ?? '').trim() !== '' ||
    (url.searchParams.get('key') ?? '').trim() !== '' ||
    /^Bearer\s+\S+/i.test(req.headers.authorization ?? '')
  );
}

export function apiKey(req, url) {
  return (req.headers['x-goog-api-key'] ?? '').trim() || (url.searchParams.get('key') ?? '').trim();
}

export function authError() {
  return error(
    401,
    'UNAUTHENTICATED',
    'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
  );
}

export function badJson() {
  return invalid('Invalid JSON payload received. Unexpected token.');
}

export function faultError(kind) {
  switch (kind) {
    case '401':
      return error(401, 'UNAUTHENTICATED', 'API key not valid. Please pass a valid API key.');
    case '429':
      return error(
        429,
        'RESOURCE_EXHAUSTED',
        'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.',
        { 'retry-after': '2' },
        [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '2s' }],
      );
    case '529':
      return error(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.');
    default:
      return error(500, 'INTERNAL', 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting');
  }
}

const PART_FIELDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'];
const TYPES = ['TYPE_UNSPECIFIED', 'STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT', 'NULL'];

function partKind(part) {
  return PART_FIELDS.find((f) => get(part, f) !== undefined);
}

function checkContents(contents) {
  if (contents === undefined || contents === null || (Array.isArray(contents) && contents.length === 0)) {
    throw invalid('* GenerateContentRequest.contents: contents is not specified\n');
  }
  if (!Array.isArray(contents)) {
    throw invalid(`Invalid value at 'contents' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), ${JSON.stringify(contents)}`);
  }
  contents.forEach((c, i) => {
    if (!isObj(c)) throw invalid(`Invalid value at 'contents[${i}]' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), ${JSON.stringify(c)}`);
    if (c.role !== undefined && c.role !== 'user' && c.role !== 'model' && c.role !== 'function') throw invalid('Please use a valid role: user, model.');
    const parts = c.parts;
    if (!Array.isArray(parts) || parts.length === 0) throw invalid(`* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.\n`);
    parts.forEach((p, j) => {
      const kind = isObj(p) ? partKind(p) : undefined;
      if (!kind) throw invalid(`* GenerateContentRequest.contents[${i}].parts[${j}].data: required oneof field 'data' must have one initialized field\n`);
      if (kind === 'functionCall' && typeof get(p, 'functionCall').name !== 'string') {
        throw invalid(`* GenerateContentRequest.contents[${i}].parts[${j}].function_call.name: Name cannot be empty.\n`);
      }
      if (kind === 'functionResponse') {
        const fr = get(p, 'functionResponse');
        if (typeof fr.name !== 'string') throw invalid(`* GenerateContentRequest.contents[${i}].parts[${j}].function_response.name: Name cannot be empty.\n`);
        if (fr.response !== undefined && !isObj(fr.response)) {
          throw invalid(
            `Invalid value at 'contents[${i}].parts[${j}].function_response.response' (type.googleapis.com/google.protobuf.Struct), ${JSON.stringify(fr.response)}`,
          );
        }
      }
    });
  });
  // function call / response turns
  const calls = (c) => c.parts.filter((p) => partKind(p) === 'functionCall').map((p) => get(p, 'functionCall'));
  const responses = (c) => c.parts.filter((p) => partKind(p) === 'functionResponse').map((p) => get(p, 'functionResponse'));
  contents.forEach((c, i) => {
    const rs = responses(c);
    if (!rs.length) return;
    const prev = contents[i - 1];
    const prevCalls = prev && prev.role === 'model' ? calls(prev) : [];
    if (!prevCalls.length) throw invalid('Please ensure that function response turn comes immediately after a function call turn.');
    if (rs.length !== prevCalls.length) {
      throw invalid('Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.');
    }
    const open = [...prevCalls];
    rs.forEach((r, j) => {
      const k = open.findIndex((fc) => (r.id && fc.id ? r.id === fc.id : fc.name === r.name));
      if (k < 0) {
        throw invalid(
          `* GenerateContentRequest.contents[${i}].parts[${j}].function_response: function response ${r.id ? `id "${r.id}"` : `name "${r.name}"`} does not match any function call of the preceding function call turn.\n`,
        );
      }
      open.splice(k, 1);
    });
  });
}

function checkSchema(schema, path) {
  if (!isObj(schema)) throw invalid(`Invalid value at '${path}' (type.googleapis.com/google.ai.generativelanguage.v1beta.Schema), ${JSON.stringify(schema)}`);
  const type = schema.type;
  if (type === undefined) {
    if (schema.properties !== undefined) throw invalid(`* GenerateContentRequest.${path}.type: must be specified when not using one_of\n`);
    return;
  }
  if (typeof type !== 'string' || !TYPES.includes(type.toUpperCase())) {
    throw invalid(`Invalid value at '${path}.type' (type.googleapis.com/google.ai.generativelanguage.v1beta.Type), ${JSON.stringify(type)}`);
  }
  if (type.toUpperCase() !== 'OBJECT') throw invalid(`* GenerateContentRequest.${path}.type: function parameters must be of type OBJECT, got ${type}\n`);
}

function checkTools(tools) {
  if (!Array.isArray(tools)) throw invalid(`Invalid value at 'tools' (type.googleapis.com/google.ai.generativelanguage.v1beta.Tool), ${JSON.stringify(tools)}`);
  tools.forEach((t, i) => {
    const decls = get(t, 'functionDeclarations');
    if (decls === undefined) return; // googleSearch, codeExecution, …
    if (!Array.isArray(decls))
      throw invalid(
        `Invalid value at 'tools[${i}].function_declarations' (type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionDeclaration), ${JSON.stringify(decls)}`,
      );
    decls.forEach((d, j) => {
      const p = `tools[${i}].function_declarations[${j}]`;
      if (!isObj(d) || typeof d.name !== 'string' || !/^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/.test(d.name)) {
        throw invalid(
          `* GenerateContentRequest.${p}.name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.\n`,
        );
      }
      if (d.parameters !== undefined) checkSchema(d.parameters, `${p}.parameters`);
      const js = get(d, 'parametersJsonSchema');
      if (js !== undefined) {
        if (!isObj(js) || (js.type !== undefined && js.type !== 'object')) {
          throw invalid(`* GenerateContentRequest.${p}.parameters_json_schema: the schema of function parameters must be of type "object"\n`);
        }
      }
    });
  });
}

function textOfParts(parts) {
  return (parts ?? [])
    .filter((p) => typeof p.text === 'string' && p.thought !== true)
    .map((p) => p.text)
    .join('');
}

function responseText(response) {
  if (!isObj(response)) return '';
  for (const k of ['result', 'output', 'content', 'text']) {
    if (response[k] !== undefined) return typeof response[k] === 'string' ? response[k] : JSON.stringify(response[k]);
  }
  if (response.error !== undefined) return typeof response.error === 'string' ? response.error : JSON.stringify(response.error);
  return JSON.stringify(response);
}

/** `model` comes from the URL path. */
export function parseRequest(body, { model, stream, sse }) {
  if (!isObj(body)) throw invalid('Invalid JSON payload received. Expected an object.');
  const contents = body.contents;
  checkContents(contents);
  const sys = get(body, 'systemInstruction');
  if (sys !== undefined && sys !== null) {
    if (typeof sys !== 'string' && (!isObj(sys) || !Array.isArray(sys.parts))) {
      throw invalid(`Invalid value at 'system_instruction' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), ${JSON.stringify(sys)}`);
    }
  }
  if (body.tools !== undefined && body.tools !== null) checkTools(body.tools);
  const gen = get(body, 'generationConfig') ?? {};
  const maxOut = get(gen, 'maxOutputTokens');
  if (maxOut !== undefined && maxOut !== null && (!Number.isInteger(maxOut) || maxOut < 1)) {
    throw invalid(`* GenerateContentRequest.generation_config.max_output_tokens: max_output_tokens must be positive.\n`);
  }
  const thinkingConfig = get(gen, 'thinkingConfig');

  const messages = [];
  for (const c of contents) {
    const parts = c.parts;
    const fcalls = parts.filter((p) => partKind(p) === 'functionCall').map((p) => get(p, 'functionCall'));
    const fresps = parts.filter((p) => partKind(p) === 'functionResponse').map((p) => get(p, 'functionResponse'));
    if (c.role === 'model') {
      messages.push({ role: 'assistant', text: textOfParts(parts), calls: fcalls.map((f) => ({ id: f.id, name: f.name, args: isObj(f.args) ? f.args : {} })) });
    } else if (fresps.length) {
      messages.push({
        role: 'tool',
        results: fresps.map((f) => ({
          id: f.id,
          name: f.name,
          content: responseText(f.response),
          isError: isObj(f.response) && f.response.error !== undefined && f.response.result === undefined,
        })),
      });
    } else {
      messages.push({ role: 'user', text: textOfParts(parts) });
    }
  }
  const tools = [];
  for (const t of body.tools ?? []) {
    for (const d of get(t, 'functionDeclarations') ?? []) {
      tools.push({ name: d.name, description: d.description ?? '', parameters: d.parameters ?? get(d, 'parametersJsonSchema') ?? {} });
    }
  }
  const mode = get(get(get(body, 'toolConfig'), 'functionCallingConfig'), 'mode');
  return {
    conv: {
      provider: 'gemini',
      model,
      system: typeof sys === 'string' ? sys : textOfParts(sys?.parts),
      messages,
      tools,
      toolChoice: mode === 'NONE' ? 'none' : 'auto',
    },
    model,
    stream,
    sse,
    maxTokens: maxOut ?? null,
    reasoning: get(thinkingConfig, 'includeThoughts') !== false && get(thinkingConfig, 'thinkingBudget') !== 0,
  };
}

const FINISH = { end: 'STOP', tool: 'STOP', length: 'MAX_TOKENS' };

/**
 * @param {Json} out
 * @param {{ final: boolean, thoughtsSoFar?: number }} at
 */
function usageMetadata(out, { final, thoughtsSoFar }) {
  const u = out.usage;
  const thoughts = final ? u.reasoning : thoughtsSoFar;
  const candidates = u.completion - u.reasoning;
  const m = { promptTokenCount: u.prompt };
  if (final) m.candidatesTokenCount = candidates;
  m.totalTokenCount = u.prompt + thoughts + (final ? candidates : 0);
  m.promptTokensDetails = [{ modality: 'TEXT', tokenCount: u.prompt }];
  if (final && !u.reasoning) m.candidatesTokensDetails = [{ modality: 'TEXT', tokenCount: candidates }];
  if (thoughts) m.thoughtsTokenCount = thoughts;
  return m;
}

/** The list of response objects a stream carries (also used, merged, for :generateContent). */
function responses(out, meta) {
  const responseId = meta.id('', 23, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_');
  const list = [];
  const chunk = (parts, final, thoughtsSoFar) => {
    const candidate = { content: { parts, role: 'model' } };
    if (final) candidate.finishReason = FINISH[out.stop];
    candidate.index = 0;
    list.push({ candidates: [candidate], usageMetadata: usageMetadata(out, { final, thoughtsSoFar }), modelVersion: meta.model, responseId });
  };
  const callParts = out.toolCalls.map((c, k) => {
    const part = { functionCall: { name: c.name, args: c.args } };
    if (k === 0 && out.reasoning.length) part.thoughtSignature = opaqueBlob(`${meta.seed}:thought`, 120);
    return part;
  });
  const pieces = [];
  out.reasoning.forEach((t, k) => pieces.push({ part: { text: t, thought: true }, thoughts: k + 1 }));
  if (out.hasText) {
    if (out.text.length === 0) pieces.push({ part: { text: '' }, thoughts: out.reasoning.length });
    for (const t of out.text) pieces.push({ part: { text: t }, thoughts: out.reasoning.length });
  }
  if (callParts.length) {
    for (const p of pieces) chunk([p.part], false, p.thoughts);
    chunk(callParts, true);
  } else {
    pieces.forEach((p, k) => chunk([p.part], k === pieces.length - 1, p.thoughts));
    if (!pieces.length) chunk([{ text: '' }], true);
  }
  return list;
}

/** meta: { model, id: idSource, seed, sse } */
export function streamEvents(out, meta) {
  const list = responses(out, meta);
  if (meta.sse !== false) return list.map((r) => `data: ${googleJson(r)}\r\n\r\n`);
  // Without alt=sse the endpoint streams one JSON array.
  return list.map((r, k) => `${k === 0 ? '[' : ',\r\n'}${JSON.stringify(r, null, 2)}${k === list.length - 1 ? '\n]' : '\n'}`);
}

export function streamError(meta) {
  const body = {
    error: {
      code: 500,
      message: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
      status: 'INTERNAL',
    },
  };
  if (meta.sse !== false) return `data: ${googleJson(body)}\r\n\r\n`;
  return `,\r\n${JSON.stringify(body, null, 2)}\n]`;
}

/** Non-streamed generateContent: one response with all parts merged (pretty-printed). */
export function json(out, meta) {
  const parts = [];
  if (out.reasoning.length) parts.push({ text: out.reasoningText, thought: true });
  if (out.hasText) parts.push({ text: out.textText });
  out.toolCalls.forEach((c, k) => {
    const part = { functionCall: { name: c.name, args: c.args } };
    if (k === 0 && out.reasoning.length) part.thoughtSignature = opaqueBlob(`${meta.seed}:thought`, 120);
    parts.push(part);
  });
  const body = {
    candidates: [{ content: { parts, role: 'model' }, finishReason: FINISH[out.stop], index: 0 }],
    usageMetadata: usageMetadata(out, { final: true }),
    modelVersion: meta.model,
    responseId: meta.id('', 23, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'),
  };
  return `${JSON.stringify(body, null, 2)}\n`;
}
