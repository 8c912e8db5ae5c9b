// loom's own client types, as a test fixture: what an original loom client decodes every server
// frame with. Written from the facts of hi-youichi/loom at the commit of our spec (f5b191e, the
// one whose docs are specs/loom-*.md): `ServerResponse` and its response structs
// (`loom/src/protocol/mod.rs`) and `ProtocolEvent` (the `stream-event` crate, `event.rs`), all
// serde derives with these rules, which `decode` follows:
//
// - an internally tagged enum (`#[serde(tag = "type", rename_all = "snake_case")]`) with no
//   catch-all: a `type` outside its variants is an error ("unknown variant");
// - a struct field that is not an `Option` must be there (serde_json's `Value` included), and
//   of its type; an `Option` may be missing or null; fields the struct does not name are ignored;
// - `ProtocolEventEnvelope` takes `session_id`, `node_id` and `event_id` itself and flattens
//   `ProtocolEvent` over the rest of the object — so a `node_id` in an event's own payload
//   (`got_expand`'s) never reaches the event, which then misses it. loom's own `got_expand`
//   fails the same way; the fixture keeps that, as it is what a loom client does.
//
// Numbers are checked against their Rust types (u32, u64, usize, i64, f32) on the parsed value;
// a float where an integer is expected is caught only when it has a fraction (JSON.parse cannot
// tell 1.0 from 1).

const str = { kind: 'string' };
const bool = { kind: 'bool' };
const value = { kind: 'value' };
const u32 = { kind: 'int', min: 0, max: 2 ** 32 - 1 };
const u64 = { kind: 'int', min: 0, max: 2 ** 64 - 1 };
const usize = u64;
const i64 = { kind: 'int', min: -(2 ** 63), max: 2 ** 63 - 1 };
const f32 = { kind: 'number' };
const opt = (inner) => ({ kind: 'option', inner });
const vec = (inner) => ({ kind: 'vec', inner });
const struct = (name, fields) => ({ kind: 'struct', name, fields });

/** `stream_event::ProtocolEvent`: each variant's payload fields. */
const PROTOCOL_EVENT = {
  node_enter: { id: str },
  node_exit: { id: str, result: value },
  message_chunk: { content: str, id: str },
  usage: { prompt_tokens: u32, completion_tokens: u32, total_tokens: u32 },
  values: { state: value },
  updates: { id: str, state: value },
  custom: { value },
  checkpoint: { checkpoint_id: str, timestamp: str, step: i64, state: value, thread_id: opt(str), checkpoint_ns: opt(str) },
  tot_expand: { candidates: vec(str) },
  tot_evaluate: { chosen: usize, scores: vec(f32) },
  tot_backtrack: { reason: str, to_depth: u32 },
  got_plan: { node_count: usize, edge_count: usize, node_ids: vec(str) },
  got_node_start: { id: str },
  got_node_complete: { id: str, result_summary: str },
  got_node_failed: { id: str, error: str },
  got_expand: { node_id: str, nodes_added: usize, edges_added: usize },
  tool_call_chunk: { call_id: opt(str), name: opt(str), arguments_delta: str },
  tool_call: { call_id: opt(str), name: str, arguments: value },
  tool_start: { call_id: opt(str), name: str },
  tool_output: { call_id: opt(str), name: str, content: str },
  tool_end: { call_id: opt(str), name: str, result: str, is_error: bool },
  tool_approval: { call_id: opt(str), name: str, arguments: value },
};

/** The envelope fields `ProtocolEventEnvelope` takes before flattening the event. */
const ENVELOPE = { session_id: opt(str), node_id: opt(str), event_id: opt(u64) };

const llmUsage = struct('LlmUsage', { prompt_tokens: u32, completion_tokens: u32, total_tokens: u32 });
const toolSpec = struct('ToolSpec', { name: str, description: opt(str), input_schema: value });

/** `loom::protocol::ServerResponse`: each variant's struct. */
const SERVER_RESPONSE = {
  run_stream_event: { id: str, event: { kind: 'envelope' } },
  run_end: {
    id: str,
    reply: str,
    usage: opt(llmUsage),
    total_usage: opt(llmUsage),
    session_id: opt(str),
    node_id: opt(str),
    event_id: opt(u64),
  },
  tools_list: { id: str, tools: vec(toolSpec) },
  tool_show: { id: str, tool: opt(value), tool_yaml: opt(str) },
  user_messages: { id: str, thread_id: str, messages: vec(struct('UserMessageItem', { role: str, content: str })), has_more: opt(bool) },
  pong: { id: str },
  error: { id: opt(str), error: str },
};

class DecodeError extends Error {}

function check(ty, v, path) {
  const fail = (what) => {
    throw new DecodeError(`${path}: ${what}, got ${JSON.stringify(v)?.slice(0, 120)}`);
  };
  switch (ty.kind) {
    case 'value':
      return;
    case 'string':
      if (typeof v !== 'string') fail('invalid type, expected a string');
      return;
    case 'bool':
      if (typeof v !== 'boolean') fail('invalid type, expected a boolean');
      return;
    case 'number':
      if (typeof v !== 'number') fail('invalid type, expected f32');
      return;
    case 'int':
      if (typeof v !== 'number' || !Number.isInteger(v)) fail('invalid type, expected an integer');
      if (v < ty.min || v > ty.max) fail(`invalid value, out of range ${ty.min}..=${ty.max}`);
      return;
    case 'option':
      if (v !== null && v !== undefined) check(ty.inner, v, path);
      return;
    case 'vec':
      if (!Array.isArray(v)) fail('invalid type, expected a sequence');
      v.forEach((x, i) => check(ty.inner, x, `${path}[${i}]`));
      return;
    case 'struct':
      return fields(ty.fields, v, `${path}(${ty.name})`);
    case 'envelope':
      return envelope(v, path);
    default:
      throw new Error(`fixture: unknown kind ${ty.kind}`);
  }
}

/** A serde struct: every non-Option field present and typed; others ignored. */
function fields(spec, obj, path) {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    throw new DecodeError(`${path}: invalid type, expected a map`);
  }
  for (const [name, ty] of Object.entries(spec)) {
    if (!(name in obj) && ty.kind !== 'option') throw new DecodeError(`${path}: missing field \`${name}\``);
    check(ty, obj[name], `${path}.${name}`);
  }
}

/** An internally tagged enum without a catch-all. */
function tagged(variants, obj, path) {
  if (obj === null || typeof obj !== 'object') throw new DecodeError(`${path}: invalid type, expected a map`);
  if (!('type' in obj)) throw new DecodeError(`${path}: missing field \`type\``);
  const spec = variants[obj.type];
  if (!spec) {
    const expected = Object.keys(variants)
      .map((k) => `\`${k}\``)
      .join(', ');
    throw new DecodeError(`${path}: unknown variant \`${obj.type}\`, expected one of ${expected}`);
  }
  fields(spec, obj, `${path}<${obj.type}>`);
}

/** `ProtocolEventEnvelope`: the envelope takes its fields, the flattened event gets the rest. */
function envelope(obj, path) {
  fields(ENVELOPE, obj, `${path}(envelope)`);
  const rest = Object.fromEntries(Object.entries(obj).filter(([k]) => !(k in ENVELOPE)));
  tagged(PROTOCOL_EVENT, rest, `${path}(ProtocolEvent)`);
}

/** Decodes one server frame as loom's client does; throws a `DecodeError` saying why not. */
export function decodeServerResponse(frame) {
  tagged(SERVER_RESPONSE, frame, 'ServerResponse');
  return frame;
}

export { DecodeError };
