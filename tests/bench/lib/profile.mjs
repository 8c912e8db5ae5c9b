// CPU profiles over the DevTools protocol — of a page (playwright's CDP session) or of a Worker
// under `wrangler dev` (its --inspector-port) — summarised as self time per function and per
// group (what the function belongs to), so BENCHMARKS.md can say where the time goes.

import WebSocket from 'ws';

/** Self time per function from a CDP Profiler.Profile. */
export function selfTimes(profile) {
  const dt = new Map();
  const { samples, timeDeltas, nodes } = profile;
  const byId = new Map(nodes.map((n) => [n.id, n]));
  for (let i = 0; i < samples.length; i++) {
    const n = byId.get(samples[i]);
    const d = timeDeltas[i] ?? 0;
    const f = n.callFrame;
    const key = `${f.functionName || '(anonymous)'}${f.url ? ` ${f.url.split('/').pop()}` : ''}`;
    dt.set(key, (dt.get(key) ?? 0) + d);
  }
  const total = [...dt.values()].reduce((a, b) => a + b, 0);
  return { total, fns: [...dt.entries()].map(([fn, us]) => ({ fn, us })).sort((a, b) => b.us - a.us) };
}

/** Groups functions with `classify(name) → group`; returns [{group, share}] sorted. */
export function groups(st, classify) {
  const g = new Map();
  for (const { fn, us } of st.fns) {
    const k = classify(fn);
    g.set(k, (g.get(k) ?? 0) + us);
  }
  const busy = st.fns.filter((f) => !/^\((idle|program)\)/.test(f.fn)).reduce((a, f) => a + f.us, 0);
  return [...g.entries()].map(([group, us]) => ({ group, ms: us / 1000, share: us / busy })).sort((a, b) => b.ms - a.ms);
}

/** A CDP connection to a `wrangler dev` inspector port (the Worker's isolate). */
export async function connectInspector(port) {
  const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const target = list.find((t) => t.webSocketDebuggerUrl) ?? list[0];
  const ws = new WebSocket(target.webSocketDebuggerUrl, { perMessageDeflate: false });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let id = 0;
  const pending = new Map();
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    if (m.id && pending.has(m.id)) {
      const { resolve, reject } = pending.get(m.id);
      pending.delete(m.id);
      if (m.error) reject(new Error(JSON.stringify(m.error)));
      else resolve(m.result);
    }
  });
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const i = ++id;
      pending.set(i, { resolve, reject });
      ws.send(JSON.stringify({ id: i, method, params }));
    });
  return { send, close: () => ws.close() };
}

/** Runs `fn` under the CPU profiler of `session` (anything with `send(method, params)`). */
export async function cpuProfile(session, fn, intervalUs = 200) {
  await session.send('Profiler.enable');
  await session.send('Profiler.setSamplingInterval', { interval: intervalUs });
  await session.send('Profiler.start');
  let value;
  try {
    value = await fn();
  } finally {
    var { profile } = await session.send('Profiler.stop');
  }
  return { value, profile };
}
