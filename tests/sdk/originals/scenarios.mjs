// What tests/sdk/originals.test.mjs asks the built weft-sdk to do against each original
// server's stand-in. Each scenario is a self-contained async function `(env, args) => JSON`
// (no closure over this module: the browser runs it from its source text), where `env` is
// `{ Client, within }` — the package's Client, and `within(promise, ms, what)`, which rejects
// naming `what` when `promise` takes longer — and `args` is `{ url, dialect, options }`, the
// options are the client's besides url and dialect. Every await is
// bounded by `within`, so a broken behaviour fails the test instead of hanging it. What they
// return is plain JSON, checked by the test in Node.

/** connect() with the default `server: "auto"`, then what the client found. */
export async function connect({ Client, within }, { url, dialect, options }) {
  const c = new Client({ url, dialect, ...options });
  const states = [];
  c.onStatus((s) => states.push(s.state));
  const before = c.server ?? null;
  await within(c.connect(), 5000, 'connect()');
  const after = c.server;
  // Long enough for several heartbeat periods.
  await new Promise((r) => setTimeout(r, 200));
  const seen = [...states];
  c.close();
  return { before, after, states: seen };
}

/** A plain run: onText, events, result, transcript — with an approval callback and a client
 * tool registered, which an original cannot use (onError says so of the tool). */
export async function plainRun({ Client, within }, { url, dialect, options }) {
  const c = new Client({ url, dialect, ...options });
  const errors = [];
  c.onError((e) => errors.push(e.code));
  c.onApproval(() => ({ review: 'yes' }));
  c.registerTool({ name: 'clipboard', description: 'Reads the clipboard', readOnly: true }, () => 'copied');
  await within(c.connect(), 5000, 'connect()');
  const run = c.run({ message: 'Hello' });
  const askedId = run.runId;
  let text = '';
  run.onText((d) => (text += d));
  const kinds = [];
  run.onEvent((ev) => kinds.push(ev.type));
  const result = await within(run.result, 5000, 'run.result');
  await new Promise((r) => setTimeout(r, 100));
  const transcript = c.transcript();
  c.close();
  return { askedId, runId: run.runId, text, kinds, result, transcript, errors, finished: run.finished };
}

/** A run with a tool call, and the tool events the app sees, as the README's example listens
 * for them: `kind name call_id` each. */
export async function toolRun({ Client, within }, { url, dialect, options }) {
  const c = new Client({ url, dialect, ...options });
  await within(c.connect(), 5000, 'connect()');
  const run = c.run({ message: 'What time is it?' });
  const tools = [];
  run.onEvent((ev) => {
    if (ev.type === 'tool_call' || ev.type === 'tool_end') tools.push(`${ev.type} ${ev.name} ${ev.call_id}`);
  });
  const result = await within(run.result, 5000, 'run.result');
  const transcript = c.transcript();
  c.close();
  return { result, transcript, tools };
}

/** agentloop's approvals, answered yes, no-continue, and explain (then yes), one run each;
 * then a shell command's, answered yes. */
export async function approvals({ Client, within }, { url, dialect, options }) {
  const c = new Client({ url, dialect, ...options });
  const asked = [];
  let answers = [];
  c.onApproval((req) => {
    asked.push({ callId: req.callId ?? null, name: req.name, arguments: req.arguments });
    return { review: answers.shift() ?? 'no-exit', message: 'not now' };
  });
  await within(c.connect(), 5000, 'connect()');
  const out = {};
  const cases = [
    ['yes', 'write notes', ['yes']],
    ['no-continue', 'write notes', ['no-continue']],
    ['explain', 'write notes', ['explain', 'yes']],
    ['shell', 'list files', ['yes']],
  ];
  for (const [label, message, decisions] of cases) {
    answers = [...decisions];
    const run = c.run({ message });
    let text = '';
    run.onText((d) => (text += d));
    const result = await within(run.result, 5000, `run.result (${label})`);
    out[label] = { reply: result.reply, asked: asked.splice(0), text };
  }
  out.runs = c.transcript().runs.map((r) => r.status);
  out.calls = c.transcript().tool_calls.map((t) => ({ name: t.name, status: t.status, review: t.review ?? null }));
  c.close();
  return out;
}

/** A socket cut mid-run: the run fails with resume_unsupported, the next run works. */
export async function drop({ Client, within }, { url, dialect, options }) {
  const c = new Client({ url, dialect, ...options });
  const states = [];
  c.onStatus((s) => states.push(s.state));
  await within(c.connect(), 5000, 'connect()');
  const cut = c.run({ message: 'drop' });
  let partial = '';
  cut.onText((d) => (partial += d));
  let error = null;
  try {
    await within(cut.result, 5000, "the cut run's result");
  } catch (e) {
    error = { name: e.name, code: e.code, message: e.message };
  }
  const during = c.transcript();
  const next = await within(c.run({ message: 'Hello' }).result, 5000, "the next run's result");
  const transcript = c.transcript();
  c.close();
  return { error, partial, during, next, transcript, states };
}

/** loom's requests: ping, toolsList, toolShow (json and yaml), userMessages. */
export async function loomRequests({ Client, within }, { url, dialect, options }) {
  const c = new Client({ url, dialect, ...options });
  await within(c.connect(), 5000, 'connect()');
  const rtt = await within(c.ping(), 5000, 'ping()');
  const tools = await within(c.toolsList(), 5000, 'toolsList()');
  const json = await within(c.toolShow('get_time', 'json'), 5000, 'toolShow(json)');
  const yaml = await within(c.toolShow('get_time'), 5000, 'toolShow(yaml)');
  // A ping sent while a run streams is answered after the run: it still resolves.
  const run = c.run({ message: 'Hello' });
  const during = c.ping();
  const [result, rttDuring] = await within(Promise.all([run.result, during]), 5000, 'a run and a ping');
  const messages = await within(c.userMessages('sess-originals'), 5000, 'userMessages()');
  c.close();
  return { rtt, tools, json, yaml, reply: result.reply, rttDuring, messages };
}

/** What needs weft rejects (or throws) with `unsupported` at once. */
export async function unsupported({ Client, within }, { url, dialect, options }) {
  const c = new Client({ url, dialect, ...options });
  await within(c.connect(), 5000, 'connect()');
  const code = async (what, f) => {
    const started = Date.now();
    try {
      await within(Promise.resolve().then(f), 1000, what);
      return { what, code: 'resolved' };
    } catch (e) {
      return { what, code: e.code ?? e.message, ms: Date.now() - started };
    }
  };
  const out = [];
  if (dialect !== 'loom') out.push(await code('ping()', () => c.ping()));
  out.push(await code('follow()', () => c.follow('run-elsewhere')));
  const run = c.run({ message: 'Hello' });
  out.push(await code('run.cancel()', () => run.cancel()));
  const result = await within(run.result, 5000, 'run.result');
  c.close();
  return { out, reply: result.reply };
}

/** Two runs, one after the other, on one client. */
export async function twoRuns({ Client, within }, { url, dialect, options }) {
  const c = new Client({ url, dialect, ...options });
  await within(c.connect(), 5000, 'connect()');
  const first = await within(c.run({ message: 'Hello' }).result, 5000, 'the first run.result');
  const second = await within(c.run({ message: 'Hello again' }).result, 5000, 'the second run.result');
  c.close();
  return { first, second };
}

/** Two clients of one server, one run each, one after the other: what each one's run and
 * transcript hold. */
export async function twoClients({ Client, within }, { url, dialect, options }) {
  const a = new Client({ url, dialect, ...options });
  const b = new Client({ url, dialect, ...options });
  await within(Promise.all([a.connect(), b.connect()]), 5000, 'connect()');
  const other = await within(b.run({ message: 'Hello' }).result, 5000, "the other client's run.result");
  // With a trailing newline, which the original strips before it echoes the message.
  const mine = await within(a.run({ message: 'What time is it?\n' }).result, 5000, 'run.result');
  await new Promise((r) => setTimeout(r, 50));
  const texts = (c) => c.transcript().messages.map((m) => m.text);
  const out = { other: other.reply, mine: mine.reply, a: texts(a), b: texts(b) };
  a.close();
  b.close();
  return out;
}

/** agentloop's context requests: compact() on an empty transcript, then a run, then
 * contextInfo() and compact(). */
export async function context({ Client, within }, { url, dialect, options }) {
  const c = new Client({ url, dialect, ...options });
  await within(c.connect(), 5000, 'connect()');
  const empty = await within(
    c.compact().then(
      () => null,
      (e) => ({ code: e.code, message: e.message }),
    ),
    5000,
    'compact() on nothing',
  );
  const reply = (await within(c.run({ message: 'Hello' }).result, 5000, 'run.result')).reply;
  const info = await within(c.contextInfo(), 5000, 'contextInfo()');
  const compacted = await within(c.compact(), 5000, 'compact()');
  c.close();
  return { empty, reply, info, compacted };
}

/** Runs the server fails (`args.failure` is the message that fails), each followed by
 * another run on the same client, three times. */
export async function failedRun({ Client, within }, { url, dialect, options, failure = 'fail' }) {
  const c = new Client({ url, dialect, ...options });
  await within(c.connect(), 5000, 'connect()');
  const out = [];
  for (let i = 0; i < 3; i += 1) {
    const failed = await within(
      c.run({ message: failure }).result.then(
        (r) => ({ resolved: r }),
        (e) => ({ code: e.code, message: e.message }),
      ),
      5000,
      'the failed run.result',
    );
    const next = await within(c.run({ message: 'Hello' }).result, 5000, 'the next run.result');
    out.push({ failed, next: next.reply });
  }
  c.close();
  return out;
}

/** Two clients of one server, each starting a run at the same moment, so their turns overlap
 * on an original that streams every turn to every socket: what each run settled with. */
export async function overlap({ Client, within }, { url, dialect, options }) {
  const a = new Client({ url, dialect, ...options });
  const b = new Client({ url, dialect, ...options });
  await within(Promise.all([a.connect(), b.connect()]), 5000, 'connect()');
  const settle = (run) =>
    run.result.then(
      (r) => ({ reply: r.reply }),
      (e) => ({ code: e.code, message: e.message }),
    );
  const [mine, theirs] = await within(Promise.all([settle(a.run({ message: 'What time is it?' })), settle(b.run({ message: 'Hello' }))]), 5000, 'both runs');
  a.close();
  b.close();
  return { mine, theirs };
}
