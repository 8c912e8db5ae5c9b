// Generated corpora of malformed frames for the bad-input soak: mutations of valid frames of
// each dialect, every one of them invalid by construction (so each must be answered with an
// `error` frame), drawn from a seeded generator so a failure can be replayed.

/** A small deterministic PRNG (mulberry32). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const input = (text) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });

/** Valid frames of each dialect, and for each the fields a mutation may break. */
export const VALID = {
  loom: [
    [{ type: 'run', message: 'hello', agent: 'react' }, ['message', 'agent']],
    [{ type: 'tool_show', id: 't', name: 'read' }, ['id', 'name']],
    [{ type: 'user_messages', id: 'u', thread_id: 'x' }, ['id', 'thread_id']],
    [{ type: 'resume', run_id: 'r', after_event_id: 3 }, ['run_id', 'after_event_id']],
    [{ type: 'tool_result', call_id: 'c', result: 'ok', is_error: false }, ['call_id', 'result']],
  ],
  agentloop: [
    [{ id: 'a1', type: 'user_input', payload: { input: [input('hello')] } }, ['id', 'payload']],
    [{ id: 'a2', type: 'approval_response', payload: { review: 'yes' } }, ['payload']],
    [{ type: 'cancel', id: 'r' }, ['id']],
    [{ type: 'client_tools', tools: [{ name: 'x', input_schema: { type: 'object' } }] }, ['tools']],
  ],
  agentchat: [
    [{ type: 'chat', message: 'hello', session_id: 's' }, ['message']],
    [{ type: 'resume', run_id: 'r', after_event_id: 1 }, ['run_id', 'after_event_id']],
    [{ type: 'ping', id: 'p' }, ['id']],
  ],
  cueso: [
    [{ message: 'hello', session_id: 's' }, ['message']],
    [{ type: 'approval_response', call_id: 'c', review: 'yes' }, ['call_id', 'review']],
    [{ type: 'tool_result', call_id: 'c', result: 'ok' }, ['call_id', 'result']],
  ],
};

const WRONG = [42, -1.5, true, null, [], {}, [1, 2, 3], { nested: { deeper: 1 } }];

function deep(n) {
  return '['.repeat(n) + ']'.repeat(n);
}

/** The mutation operators: each returns a frame (string or Buffer) that cannot be valid. */
const MUTATIONS = {
  truncate(frame, r) {
    const s = JSON.stringify(frame);
    return s.slice(0, Math.max(1, Math.floor(r() * (s.length - 1))));
  },
  drop_required(frame, r, fields) {
    const f = structuredClone(frame);
    delete f[fields[Math.floor(r() * fields.length)]];
    return JSON.stringify(f);
  },
  wrong_type(frame, r, fields) {
    const f = structuredClone(frame);
    const key = fields[Math.floor(r() * fields.length)];
    const current = f[key];
    const candidates = WRONG.filter((w) => typeof w !== typeof current || Array.isArray(w) !== Array.isArray(current));
    f[key] = candidates[Math.floor(r() * candidates.length)] ?? 42;
    if (f[key] === null) f[key] = 7; // null means "absent" for optional fields; keep it wrong
    return JSON.stringify(f);
  },
  type_confusion(frame, r) {
    const f = structuredClone(frame);
    if ('type' in f) f.type = WRONG[Math.floor(r() * WRONG.length)] ?? 3;
    else f.message = { not: 'a string' };
    if (f.type === null) f.type = 5;
    return JSON.stringify(f);
  },
  unknown_type(frame, r) {
    const f = structuredClone(frame);
    f.type = `no_such_${Math.floor(r() * 1e6)}`;
    return JSON.stringify(f);
  },
  deep_nesting(frame, r, fields) {
    const key = fields[Math.floor(r() * fields.length)];
    const s = JSON.stringify({ ...frame, [key]: '__DEEP__' });
    return s.replace('"__DEEP__"', deep(200 + Math.floor(r() * 5000)));
  },
  huge_number(frame, r, fields) {
    const f = structuredClone(frame);
    const key = fields.find((k) => typeof f[k] === 'number') ?? fields[0];
    const s = JSON.stringify({ ...f, [key]: '__N__' });
    return s.replace('"__N__"', r() < 0.5 ? '1e400' : '-18446744073709551617');
  },
  invalid_utf8(frame, r) {
    const s = Buffer.from(JSON.stringify(frame));
    const at = 1 + Math.floor(r() * (s.length - 2));
    const bad = [Buffer.from([0xff]), Buffer.from([0xc3, 0x28]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xf8, 0x88, 0x80, 0x80])][Math.floor(r() * 4)];
    return Buffer.concat([s.subarray(0, at), bad, s.subarray(at)]);
  },
  oversized(frame, r) {
    const pad = 'x'.repeat(1_100_000 + Math.floor(r() * 50_000));
    return JSON.stringify({ ...frame, pad });
  },
  not_an_object(frame, r) {
    const options = ['[]', '"text"', '12', 'true', 'null', JSON.stringify([frame])];
    return options[Math.floor(r() * options.length)];
  },
};

export const MUTATION_NAMES = Object.keys(MUTATIONS);

/**
 * `count` malformed frames for `dialect`, cycling through the operators (oversized ones are
 * limited to one in 50: they are 1 MiB each).
 */
export function corpus(dialect, count, seed = 1) {
  const r = rng(seed ^ (dialect.length * 7919));
  const out = [];
  const ops = MUTATION_NAMES.filter((n) => n !== 'oversized');
  for (let i = 0; i < count; i++) {
    const [frame, fields] = VALID[dialect][i % VALID[dialect].length];
    const op = i % 50 === 49 ? 'oversized' : ops[i % ops.length];
    out.push({ op, frame: MUTATIONS[op](frame, r, fields) });
  }
  return out;
}
