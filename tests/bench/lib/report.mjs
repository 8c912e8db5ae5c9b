// BENCHMARKS.md and the stdout table, from the raw results of run.mjs.

import { groups } from './profile.mjs';
import { fmt, median, num, pairRatio, summary, table } from './stats.mjs';

/** The Worker's upload budget, gzip (tests/deploy checks every build against it). 400 KB until
 * 2026-11-24, when issues 17 and 18 (relay, original-client encoding), the Workers AI provider
 * and issue 23 (the `url` crate's WHATWG parser, per-user tokens, the limiter) took the upload
 * to 478.6 KB; 500 KB since (briefly 510 KB, while the protocol's own JSON reader sat beside
 * core's float parser); 640 KB since 2026-11-28, for this turn's protocols (MCP tools, AG-UI, the
 * operator's agents; each one's share in BENCHMARKS.md), still well under Cloudflare Agents' 768
 * KB. Cloudflare's own limit is 3 MB (Free) and 10 MB (Paid). */
const WORKER_UPLOAD_BUDGET_KB = 640;

/** How the Worker's upload grew, measured by earlier runs (kept here so a new run keeps it). */
const WORKER_UPLOAD_HISTORY =
  "What grew it, from earlier runs: 391.4 KB gzip on 2026-11-22 (after `follow()`); on 2026-11-24 issues 17 and 18 (the relay of sessions named in messages and the original-client encoding: about +32 KB gzip together) and the Workers AI provider (issue 19, +3.5 KB) took it to 427.3 KB, and the budget went from 400 to 440 KB; issue 23's WHATWG URL check (the `url` crate, now linked into the Worker), per-user tokens and the session limiter added 51 KB more (478.6 KB), and the budget went to 500 KB; on 2026-11-26 issue 21's client build put a JSON reader, a float parser and `RawJson`'s writer of its own into the shared protocol crate (the SDK's wasm lost 39 KB by them; the Worker, which keeps serde_json for the model providers' streams, gained about 5 KB), and the budget went to 510 KB; the same day the Worker's few floats read from text (the calculator's numbers, ToT's scores, two settings, `temperature_json`) went to the protocol's parser (`json::parse_f64`), core's parser and its tables left (503.1 → 489.3 KB), and the budget went back to 500 KB. `npm test` (tests/deploy) checks every build against it. On 2026-11-28 this turn's protocols took it from 478.5 to 592.4 KiB gzip (606.6 KB), and the budget went to 640 KB; each addition measured by `wrangler deploy --dry-run` on its own branch against the commit it started from, in KiB gzip: MCP tools from the operator's servers (issue 36: the two-era client codec, the catalog store, the calls) +63.2, servers a client adds +8.3 (against an estimated base), AG-UI's dialect and `POST /agui` (issue 37) about +19, the operator's agents (issue 41) +8.2, the compact event log (issue 39) +6.4, the engine's agent rooms and the HTTP track as one kind of client (issue 34) +5.2, the dialect descriptions and storage errors surfaced (issue 34) +1.9, the originals' last mile (issue 35: loom's web-app requests) +2.8. Parsing URLs with the runtime's own `URL` instead of the `url` crate in the Worker is the largest cut left; the MCP codec's serde types are the next place to look.";
const WORKER_UPLOAD_LAST_KB = { kb: 489.3, date: "2026-11-26 (core's float parser gone)" };

const KB = (b) => `${(b / 1000).toFixed(1)} KB`;
const yes = (ok) => (ok === null || ok === undefined ? 'n/a' : ok ? '**met**' : '**not met**');

const NAMES = {
  floor: (d) => `floor: \`JSON.parse\` + string appends (${d} frames)`,
  'weft-push': (d) => `weft-sdk \`Reassembler.push\`, one call per frame (${d})`,
  'weft-pushMany': (d) => `weft-sdk \`Reassembler.pushMany\`, batches of 1,000 (${d})`,
  'ai-objects': () => 'AI SDK `readUIMessageStream`, from chunk objects',
  'ai-sse': () => 'AI SDK `readUIMessageStream`, from SSE text (`DefaultChatTransport` parsing)',
  tasks: () => 'a task per frame, nothing done: the loom frames fed to a socket whose listener does nothing',
  'cf-agents': () => 'Cloudflare Agents client: `WebSocketChatTransport` + AI SDK `Chat`',
  'weft-client': () => 'weft-sdk `Client` (`run.onEvent`), fed loom frames by a stand-in socket',
  'weft-ai': () => '`useChat` over weft: weft-sdk/ai `WeftChatTransport` + AI SDK `Chat`, weft `Client` fed loom frames',
  'weft-ai-replay': () => "`useChat` over weft, a resume's replay: the same, each run's frames in one burst (one task)",
  'tasks-paced': () => 'a task per frame, nothing done, paced',
  'cf-agents-paced': () => 'Cloudflare Agents client, paced',
  'weft-ai-paced': (w) => `\`useChat\` over weft, paced, ${w === undefined ? "the transport's default `deltaWindowMs`" : `\`deltaWindowMs: ${w}\``}`,
  'agui-socket': () => "AG-UI over weft's WebSocket: weft-sdk/agui `WeftAgent`, fed its socket frames by a stand-in socket",
  'agui-sse': () => "AG-UI over SSE: `@ag-ui/client`'s `HttpAgent`, fed `POST /agui`'s events by a stand-in `fetch`",
};
const nameOf = (c) => {
  const [k, d] = c.split(':');
  return NAMES[k](d);
};

const perFrame = (runs) => runs.map((r) => (r.ms * 1000) / r.units);
const msOf = (runs) => runs.map((r) => r.ms);

function clientClassify(fn) {
  if (/^\((idle|program)\)/.test(fn)) return '(idle / program)';
  if (/garbage collector/.test(fn)) return 'garbage collection';
  if (/^(serde_json|<serde_json|serde_core::de|<serde_core::de|serde::de)/.test(fn) || /serde_json::(de|read)/.test(fn))
    return 'JSON parsing in wasm (serde_json)';
  if (/weft_protocol::dialect::aisdk|weft_sdk::run::(Lot|ChunkStream|chunk_array|add)/.test(fn))
    return 'UI message chunks written in wasm (weft_protocol::dialect::aisdk)';
  if (/weft_protocol::reassembler|Reassembler/.test(fn) && /weft_protocol/.test(fn)) return 'reassembly (weft_protocol::reassembler)';
  if (/weft_protocol/.test(fn)) return 'frame → canonical event (weft_protocol dialect/event decoding)';
  if (/serde_wasm_bindgen|weft_sdk::marshal|tsify|serde_core::ser|<serde_core::ser|serde_json::ser/.test(fn))
    return 'results to JS objects (serde-wasm-bindgen: PushResult, transcript)';
  if (/dlmalloc|talc|alloc::|<alloc|memcpy|memmove|memset|__rust_(alloc|dealloc|realloc)|RawVec|drop_in_place/.test(fn)) return 'allocation, copies, drops';
  if (/passStringToWasm|encodeInto|utf8Into|getArrayU8FromWasm0|TextEncoder|getUint8ArrayMemory|weft_sdk::marshal::FrameBuf/.test(fn))
    return 'strings into wasm (UTF-16 → UTF-8 copy)';
  if (/weft_sdk|wasm-to-js|js-to-wasm|weft_sdk\.js|index\.mjs|__wbg|wasm_bindgen|externref/.test(fn)) return 'wasm-bindgen glue and boundary';
  if (/page\.js/.test(fn)) return 'benchmark loop (page)';
  return 'other';
}

/** The functions of the bench page itself (not minified in profiles). */
const BENCH_FNS =
  /^(dispatch|deliver|feed|step|weftChat|weftClientRuns|weftClient|nextSend|chatSettled|randomUUID|cfAgents|send|measure|weftPush|weftPushMany|floor) page\.js$/;

/** Where a function of a client profile belongs, for contestant `c`: weft's client path and
 * the AI SDK's machinery get groups of their own. */
function clientClassifier(c) {
  const aiSdk = /^(weft-ai|weft-ai-replay|cf-agents|ai-)/.test(c);
  return (fn) => {
    if (/^\((idle|program)\)/.test(fn)) return '(idle / program)';
    if (/garbage collector/.test(fn)) return 'garbage collection';
    if (/ ai\.mjs$/.test(fn)) return 'weft-sdk/ai: `WeftChatTransport` (ai.mjs)';
    // `JSON.parse` in wasm-bindgen's glue runs in an anonymous function of weft_sdk.js.
    if (/^eventObject |^\(anonymous\) weft_sdk\.js$/.test(fn)) return "events to JS objects (`JSON.parse` of each event's JSON, in the glue)";
    if (/^decode$|^decodeText |^getStringFromWasm0 /.test(fn)) return "strings out of wasm (UTF-8 → UTF-16: each event's JSON, its run id, each text delta)";
    if (/serde_json::ser::|as serde_core::ser::Serialize|weft_protocol[^:]*::json::(raw::write_str|write::)|weft_protocol[^:]*::event::write/.test(fn))
      return "events written out as JSON in wasm (the protocol's writer)";
    if (/^(MessageEvent|dispatchEvent|postMessage|dispatch page\.js|deliver page\.js|feed page\.js|step page\.js)$/.test(fn))
      return 'socket `message` events (made and dispatched by the page, as for CF Agents)';
    if (aiSdk && /^(enqueue|read|close|ReadableStream|TransformStream|pipeThrough|pipeTo)$/.test(fn)) return 'web streams built-ins (transport → `Chat`)';
    if (aiSdk && / page\.js$/.test(fn) && !BENCH_FNS.test(fn)) return 'AI SDK: `Chat`, `processUIMessageStream`, chunk validation (page.js)';
    return clientClassify(fn);
  };
}

/** What a client profile's groups add up to, by whose code it is. */
function clientOwners(st, c) {
  const owner = (g) => {
    if (/^weft-sdk\/ai/.test(g)) return 'weft-sdk/ai';
    if (/^AI SDK|^web streams/.test(g)) return 'the AI SDK';
    if (/^socket/.test(g)) return 'socket events';
    if (/^garbage/.test(g)) return 'garbage collection';
    if (/^(benchmark loop|other)/.test(g)) return 'other';
    return 'weft-sdk (wasm, glue, events to JS)';
  };
  const out = new Map();
  for (const x of groups(st, clientClassifier(c))) {
    if (x.group === '(idle / program)') continue;
    out.set(owner(x.group), (out.get(owner(x.group)) ?? 0) + x.share);
  }
  return [...out].sort((a, b) => b[1] - a[1]);
}

function serverClassify(fn) {
  if (/^\((idle|program)\)/.test(fn)) return '(idle / program)';
  if (/garbage collector/.test(fn)) return 'garbage collection';
  if (/^exec$|SqlStorage|sql|set kv|get kv|store::|Store/.test(fn)) return 'SQLite: event log and state writes';
  if (/getWebSockets|deserializeAttachment|deserialize_attachment|serializeAttachment|Session::sockets/.test(fn))
    return 'listing sockets + decoding their attachments, per event';
  if (/^send$|send_with_str/.test(fn)) return 'WebSocket send';
  if (/setTimeout|clearTimeout|Delay|delay::/.test(fn)) return 'idle-timeout timer per model chunk (setTimeout/clearTimeout)';
  if (/^read$|^decode$|StreamDecoder|ByteStream|from_utf8|provider::|streams::/.test(fn)) return 'model stream: read + decode';
  if (/weft_agent::engine|Run::|checkpoint/.test(fn)) return 'agent engine';
  if (/weft_protocol|Encoder|Sequenc/.test(fn)) return 'protocol encode';
  if (/serde|json/i.test(fn)) return 'JSON (serde_json / serde-wasm-bindgen)';
  if (/dlmalloc|talc|alloc::|<alloc|memcpy|RawVec|drop_in_place/.test(fn)) return 'allocation, copies, drops';
  if (/shim\.js|wasm-to-js|js-to-wasm|queueMicrotask|wasm_bindgen|js_sys|future|closure|externref|__wbindgen|__name/.test(fn))
    return 'wasm-bindgen glue, futures, microtasks';
  if (/weft_worker/.test(fn)) return 'worker session logic';
  return 'other';
}

function profileTable(st, classify, top = 12) {
  const g = groups(st, classify).filter((x) => x.group !== '(idle / program)');
  const busy = g.reduce((a, x) => a + x.ms, 0);
  const rows = g.map((x) => [x.group, `${x.ms.toFixed(0)} ms`, `${((x.ms / busy) * 100).toFixed(0)} %`]);
  const fns = st.fns
    .filter((f) => !/^\((idle|program)\)/.test(f.fn))
    .slice(0, top)
    .map((f) => [
      `\`${f.fn
        .replace(/::h[0-9a-f]{16}/, '')
        .replace(/\[[0-9a-f]+\]/g, '')
        .replace(/ (weft_sdk_bg|weft_worker)\.wasm(-[0-9a-f]+)?$/, ' (wasm)')
        .replace(/\|/g, '\\|')
        .slice(0, 120)}\``,
      `${(f.us / 1000).toFixed(0)} ms`,
      `${((f.us / 1000 / busy) * 100).toFixed(1)} %`,
    ]);
  return `${table(['where (self time, grouped)', 'time', 'share of busy'], rows)}\n\nTop functions by self time:\n\n${table(['function', 'self', 'share'], fns)}`;
}

// ---- sections -------------------------------------------------------------------------------

/** What the sections were measured with (`key`: runs, weft): one value, or each section's
 * when a merge mixed them. */
function perSection(res, key, fallback) {
  const each = Object.keys(res.sections).map((k) => [k, res.sectionMeta?.[k]?.[key] ?? fallback]);
  const values = new Set(each.map(([, v]) => v));
  return values.size === 1 ? String([...values][0]) : each.map(([k, v]) => `${k}: ${v}`).join('; ');
}

/** The paced rows (a frame every few ms, CPU time): a table of their own. */
const isPaced = (k) => /-paced(:|$)/.test(k);

function clientSection(c, targets, lines) {
  const main = c.datasets.find((d) => d.kind === 'main') ?? c.datasets[0];
  const R = c.results[main.name];
  const paced = Object.keys(R).filter(isPaced);
  const contestants = Object.keys(R).filter((k) => !isPaced(k));
  // The section's own count: a run that carries it over (--merge) may have run others more or
  // fewer times.
  const runs = Math.max(...contestants.map((k) => R[k].length));
  const pf = Object.fromEntries(contestants.map((k) => [k, perFrame(R[k])]));
  const ms = Object.fromEntries(contestants.map((k) => [k, msOf(R[k])]));
  const loaded = c.loaded[main.name];
  const meta = c.meta?.full;
  // What each built (the task floor builds nothing).
  const builders = contestants.filter((k) => k !== 'tasks');
  const texts = new Set(builders.map((k) => R[k][0]?.summary?.text));
  const calls = new Set(builders.map((k) => R[k][0]?.summary?.toolCalls));
  // "N× <label>" against another contestant of the same runs, pair by pair; nothing if absent.
  const vsOf = (k, pairs) =>
    pairs
      .filter(([o]) => pf[o])
      .map(([o, label]) => `${fmt(pairRatio(pf[k], pf[o]), 1)}× ${label}`)
      .join('; ');
  const rows = contestants.map((k) => {
    const [kind, d] = k.split(':');
    let vs = '';
    if (kind === 'weft-push' || kind === 'weft-pushMany') vs = vsOf(k, [[`floor:${d}`, 'the floor']]);
    else if (kind === 'floor') vs = '1 (baseline)';
    else if (kind === 'weft-client')
      vs = vsOf(k, [
        ['weft-push:loom', 'weft push (loom)'],
        ['floor:loom', 'the floor (loom)'],
      ]);
    else if (kind === 'weft-ai-replay')
      vs = vsOf(k, [
        ['weft-ai', '`useChat` over weft, a task per frame'],
        ['cf-agents', 'CF Agents (a task per frame)'],
      ]);
    else if (kind === 'agui-socket') vs = vsOf(k, [['agui-sse', 'AG-UI over SSE (`HttpAgent`)']]);
    else if (kind === 'agui-sse') vs = '1 (AG-UI baseline)';
    else if (kind === 'weft-ai')
      vs = vsOf(k, [
        ['cf-agents', 'CF Agents'],
        ['weft-client', 'weft `Client`'],
        ['weft-push:loom', 'weft push (loom)'],
      ]);
    else
      vs = vsOf(k, [
        ['weft-push:loom', 'weft push (loom)'],
        ['weft-pushMany:loom', 'pushMany'],
      ]);
    return [nameOf(k), R[k][0].units.toLocaleString('en-US'), fmt(summary(ms[k])), fmt(summary(pf[k]), 2), vs];
  });
  lines.push('## 1. Client stream processing (headless Chromium, one page)');
  lines.push('');
  if (meta) {
    lines.push(
      `The stream: ${meta.text_deltas.toLocaleString('en-US')} text deltas of 4–8 characters and ${meta.tool_calls.toLocaleString('en-US')} tool calls whose JSON arguments arrive in ${meta.fragments_per_call} fragments each, ` +
        `as ${meta.messages} messages (runs) of ${meta.steps_per_message} react steps (a step: text, a tool call, its start and end), generated as canonical events and encoded by weft's own \`Encoder\` (tests/bench/native). ` +
        `Frames per dialect: ${Object.entries(meta.dialects)
          .map(([d, v]) => `${d} ${v.frames.toLocaleString('en-US')} (${(v.bytes / 1e6).toFixed(1)} MB)`)
          .join(', ')}; agentchat sends each model response whole and agentloop each delta as a whole message item, so their frame counts and sizes differ. ` +
        `The same stream as AI SDK UI-message-stream chunks: ${loaded.uiChunks.toLocaleString('en-US')} chunks (${(loaded.sseBytes / 1e6).toFixed(1)} MB as SSE). Each contestant consumes its form of it to a complete transcript (all messages, text, tool calls with parsed arguments).`,
    );
  } else {
    lines.push(
      `Tiny input (--quick): the golden fixtures of every dialect (${Object.entries(loaded.frames)
        .map(([d, n]) => `${d} ${n}`)
        .join(', ')} frames), ${loaded.uiChunks} UI chunks.`,
    );
  }
  lines.push('');
  lines.push(
    `Every contestant built the same transcript: ${texts.size === 1 && calls.size === 1 ? `yes (${[...texts][0].toLocaleString('en-US')} characters of text, ${[...calls][0]} tool calls in each)` : `**no** (text lengths ${[...texts].join(', ')}; tool calls ${[...calls].join(', ')})`}.`,
  );
  lines.push('');
  lines.push(table(['contestant', 'frames / chunks', 'ms per stream, median (min–max)', 'µs per frame', 'ratio, pair by pair'], rows));
  lines.push('');
  lines.push(
    "How each is fed: weft and the floor get the frames as strings, one call per frame (`pushMany`: arrays of 1,000), and `transcript()` is taken once at the end (inside the time). The AI SDK reads one `ReadableStream` per message (objects; or SSE bytes in 16 KiB pieces through `DefaultChatTransport.processResponseStream`, the parsing its `useChat` transport does) and keeps the last message it yields. Cloudflare Agents: the `WebSocketChatTransport` that `useAgentChat` creates, under an AI SDK `Chat` (what its `useChat` runs, without React rendering), one conversation with one user message per assistant message, the server's `cf_agent_use_chat_response` frames dispatched as socket messages, each in a task of its own (a `MessageChannel` message each, as a socket delivers them); the hook's own extra parse of every frame is not counted, so this figure is a lower bound for `useAgentChat`. weft's `Client` and `useChat` over weft: a real weft-sdk `Client` (loom, as an app makes it, heartbeats off) connected to a stand-in `WebSocket` put on `globalThis` while it connects — it opens selecting `weft.loom` as weft's Worker does and hands the page what the client sends — and each run's loom frames, byte for byte the ones above, dispatched into it as `message` events, each in a task of its own as for Cloudflare Agents, so that what the SDK saves by merging what arrives in one task is only what a live stream would give it (the client's run ids are the stream's: the stand-in hands them out as `crypto.randomUUID()`, where the client takes them). The `Client` row starts each run with `client.run()` and listens with `run.onEvent`, timed from the first frame to `run.result`; the `useChat` row is weft-sdk/ai's `WeftChatTransport` over that client under the AI SDK `Chat` (what `useChat` runs, without React rendering), one user message per run as for Cloudflare Agents, timed from the first frame to the settled message; the replay row is the same with each run's frames dispatched in one task, as a resume's replay arrives (where the SDK hands `Chat` what came together as one lot, a part's deltas joined). Ratios: each run's cost of one contestant ÷ the other's in the same run, then the median (min–max) of those.",
  );
  lines.push('');
  if (pf['weft-ai'] && pf['weft-client'] && pf['weft-push:loom']) {
    const diff = (a, b) => summary(a.map((x, i) => x - b[i]));
    const share = (a, b) => summary(a.map((x, i) => (x / b[i]) * 100));
    const ai = pf['weft-ai'];
    const cl = pf['weft-client'];
    const push = pf['weft-push:loom'];
    lines.push('### `useChat` over weft (weft-sdk/ai)');
    lines.push('');
    lines.push(
      'Where the cost of a loom frame goes on its way to a `useChat` message, pair by pair within each run (µs per loom frame; share of the `useChat` row):',
    );
    lines.push('');
    lines.push(
      table(
        ['layer', 'µs per frame', 'share'],
        [
          ['weft-sdk `Reassembler.push`: decode and reassemble (loom)', fmt(summary(push), 2), `${fmt(share(push, ai), 0)} %`],
          [
            "+ the `Client`: the socket's message, the connection logic, each event made a JS object for `run.onEvent`",
            fmt(diff(cl, push), 2),
            `${fmt(
              share(
                cl.map((x, i) => x - push[i]),
                ai,
              ),
              0,
            )} %`,
          ],
          [
            '+ the UI message chunks (written in the wasm), `WeftChatTransport` and the AI SDK `Chat`',
            fmt(diff(ai, cl), 2),
            `${fmt(
              share(
                ai.map((x, i) => x - cl[i]),
                ai,
              ),
              0,
            )} %`,
          ],
          ['= `useChat` over weft', fmt(summary(ai), 2), '100 %'],
        ],
      ),
    );
    lines.push('');
    const cp = c.profile?.['weft-client'];
    if (cp) {
      const g = groups(cp.self, clientClassifier('weft-client'));
      const pct = (re) => `${Math.round(g.filter((x) => re.test(x.group)).reduce((a, x) => a + x.share, 0) * 100)} %`;
      lines.push(
        `What the \`Client\` adds is mostly handing each event to JS: for every event the wasm writes it out as JSON (the protocol's own writer, the run id a member of it), and the glue copies that JSON out of wasm memory (\`TextDecoder\`: one string per event; a delta's text crosses again only for an \`onText\` listener) and \`JSON.parse\`s it. In the \`Client\`'s CPU profile below: writing the events as JSON ${pct(/^events written/)}, strings out of wasm ${pct(/^strings out/)}, \`JSON.parse\` of the events ${pct(/^events to JS/)}, wasm-bindgen glue and boundary ${pct(/^wasm-bindgen glue/)}, the decoding and reassembly that \`push\` also does ${pct(/^(frame →|reassembly|JSON parsing in wasm|strings into wasm|allocation)/)}, garbage collection ${pct(/^garbage/)}; the socket's \`message\` events, which the page makes for Cloudflare Agents' client too, ${pct(/^socket/)}.`,
      );
      lines.push('');
    }
    if (pf.tasks) {
      const t = pf.tasks;
      const net = (a, b) =>
        pairRatio(
          a.map((x, i) => x - t[i]),
          b,
        );
      const parts = [`the \`Client\` with \`run.onEvent\` ${fmt(net(cl, push), 1)}× \`Reassembler.push\``];
      if (pf['cf-agents'])
        parts.push(
          `\`useChat\` over weft ${fmt(
            net(
              ai,
              pf['cf-agents'].map((x, i) => x - t[i]),
            ),
            2,
          )}× Cloudflare Agents per frame`,
        );
      lines.push(
        `Every socket row pays for a task per frame, ${fmt(summary(t), 2)} µs here (the task-floor row), whatever the client does in it. Less that: ${parts.join('; ')}.`,
      );
      lines.push('');
      const r = net(cl, push);
      targets.push([
        "Client: the `Client`'s own cost, net of the task floor, ≤ 3× `Reassembler.push` ((`Client` − task floor) ÷ push, loom; the issue's target as measurable: the floor alone is several times push)",
        `${fmt(r, 2)}× (the task floor alone ${fmt(pairRatio(t, push), 2)}× push)`,
        yes(r.median <= 3),
      ]);
    }
    if (ms['cf-agents']) {
      lines.push(
        `Against Cloudflare Agents' client doing the same job (its \`WebSocketChatTransport\` under the same \`Chat\`, fed its own frames of the same conversation): ${fmt(pairRatio(ms['weft-ai'], ms['cf-agents']), 2)}× its time per stream, ${fmt(pairRatio(ai, pf['cf-agents']), 2)}× per frame (${R['weft-ai'][0].units.toLocaleString('en-US')} loom frames against its ${R['cf-agents'][0].units.toLocaleString('en-US')}). The AI SDK's share of the CF Agents row is the same \`Chat\`; what differs is the transport under it (CF Agents: \`JSON.parse\` of each frame and of the chunk inside it; weft: the \`Client\`'s decoding, then the protocol crate's \`aisdk\` encoder in the wasm and one \`JSON.parse\` per lot of chunks).`,
      );
      lines.push('');
    }
  }

  if (paced.length) {
    const P = Object.fromEntries(paced.map((k) => [k, perFrame(R[k])]));
    lines.push('### Paced: a frame every few milliseconds, as a fast model streams (CPU time)');
    lines.push('');
    lines.push(
      "The socket rows above get a frame per task back to back, which is the most a client could ever merge of a live stream and the least it could spend waiting. Here the first runs of the same stream are played at a frame every 2 ms (loom frames; Cloudflare Agents' frames of the same messages at the same pace), each in a task of its own, and what is measured is the CPU time the page spends — every task that does work (a frame's, and each timer's, the clients' own included) until its microtasks and what was queued behind it are done — not the wall-clock time, which is mostly waiting for the next frame. `deltaWindowMs` is how long weft-sdk/ai lets a delta of a part that already shows wait for the next (0: only one task's deltas are joined). µs of CPU per frame, median (min–max).",
    );
    lines.push('');
    const floor = P['tasks-paced'];
    const vs = (k) => {
      if (k === 'tasks-paced') return 'the paced floor';
      const out = [];
      if (P['cf-agents-paced'] && k !== 'cf-agents-paced') out.push(`${fmt(pairRatio(P[k], P['cf-agents-paced']), 2)}× CF Agents, paced`);
      if (P['weft-ai-paced:0'] && k.startsWith('weft-ai-paced') && k !== 'weft-ai-paced:0')
        out.push(`${fmt(pairRatio(P[k], P['weft-ai-paced:0']), 2)}× \`deltaWindowMs: 0\``);
      return out.join('; ') || '1 (baseline)';
    };
    lines.push(
      table(
        ['contestant', 'frames', 'CPU ms, median (min–max)', 'µs of CPU per frame', 'ratio, pair by pair'],
        paced.map((k) => [nameOf(k), R[k][0].units.toLocaleString('en-US'), fmt(summary(msOf(R[k]))), fmt(summary(P[k]), 2), vs(k)]),
      ),
    );
    lines.push('');
    if (floor && P['cf-agents-paced']) {
      const net = (k) => P[k].map((x, i) => x - floor[i]);
      const each = paced
        .filter((k) => k.startsWith('weft-ai-paced'))
        .map(
          (k) =>
            `${k === 'weft-ai-paced' ? 'the default window' : `\`deltaWindowMs: ${k.split(':')[1]}\``} ${fmt(pairRatio(net(k), net('cf-agents-paced')), 2)}×`,
        );
      lines.push(
        `Each paced frame costs its task, ${fmt(summary(floor), 2)} µs of CPU here (the paced floor: the frames at the same pace to a listener that does nothing, the same spans measured), whatever the client does in it. Less that, \`useChat\` over weft against Cloudflare Agents per frame: ${each.join(', ')}.`,
      );
      lines.push('');
    }
    if (P['weft-ai-paced'] && P['cf-agents-paced']) {
      const r = pairRatio(P['weft-ai-paced'], P['cf-agents-paced']);
      targets.push([
        "Client: `useChat` over weft ≤ 0.8× Cloudflare Agents, paced (a frame every 2 ms, CPU time; the transport's default window)",
        `${fmt(r, 2)}×`,
        yes(r.median <= 0.8),
      ]);
    }
  }

  if (pf['agui-socket'] && pf['agui-sse']) {
    const perRun = (k) => R[k].map((r) => r.ms / r.runs);
    const names = { 'agui-socket': "weft's WebSocket: `WeftAgent` (weft-sdk/agui)", 'agui-sse': "SSE: `@ag-ui/client`'s `HttpAgent`" };
    lines.push("### AG-UI over weft's WebSocket against AG-UI over SSE");
    lines.push('');
    lines.push(
      `The same AG-UI events (${R['agui-sse'][0].units.toLocaleString('en-US')}, in ${R['agui-sse'][0].runs.toLocaleString('en-US')} AG-UI runs: weft's own \`Encoder\` on the stream above), as an app built on \`@ag-ui/client\` takes them: over weft's AG-UI socket by \`WeftAgent\` (the frames as \`GET /agui\` sends them, an event with weft's \`run_id\` and \`event_id\` beside its own fields, dispatched by a stand-in \`WebSocket\` given through its \`WebSocket\` option), and over HTTP by \`HttpAgent\` (the same events as \`POST /agui\`'s server-sent events, \`data: <event>\\n\\n\`, the body of a \`text/event-stream\` \`Response\` from a stand-in \`fetch\` given through its \`fetch\` option, read by the client's own SSE parser, \`transformHttpEventStream\`). Each event arrives in a task of its own, as a socket or a network stream delivers it. Both run the whole \`runAgent\` of \`AbstractAgent\` (event verification, messages and state applied, subscribers); one user message per weft run, the agent's messages cleared between runs; a run's time from its first event to \`runAgent\`'s end. Medians (min–max) of ${runs} runs; the ratio pair by pair within a run (per event and per run alike: the same events in the same runs).`,
    );
    lines.push('');
    lines.push(
      table(
        ['AG-UI over', 'µs per event', 'ms per AG-UI run', 'ratio to SSE, pair by pair'],
        ['agui-socket', 'agui-sse'].map((k) => [
          names[k],
          fmt(summary(pf[k]), 2),
          fmt(summary(perRun(k)), 2),
          k === 'agui-sse' ? '1 (baseline)' : `**${fmt(pairRatio(pf[k], pf['agui-sse']), 2)}×**`,
        ]),
      ),
    );
    lines.push('');
  }

  // targets
  const push = pf['weft-push:loom'];
  if (push) {
    const p = summary(push);
    targets.push([
      'Client: weft ≤ 1.6 µs/frame (per-frame push, loom; issue 21)',
      `${fmt(p, 2)} µs/frame (cueso ${fmt(summary(pf['weft-push:cueso'] ?? []), 2)}); the floor ${fmt(summary(pf['floor:loom'] ?? []), 2)} in the same runs`,
      yes(p.median <= 1.6),
    ]);
    if (pf['ai-objects']) {
      const r = pairRatio(pf['ai-objects'], push);
      targets.push(['Client: ≥ 20× faster than the AI SDK (readUIMessageStream, objects)', `${fmt(r, 1)}×`, yes(r.median >= 20)]);
    }
    const b = pairRatio(pf['weft-pushMany:loom'] ?? [], pf['floor:loom'] ?? []);
    targets.push(['Client: batch path within 1.0× of the floor (pushMany ÷ floor, loom)', `${fmt(b, 2)}×`, yes(b.median <= 1.0)]);
    const dialects = ['loom', 'agentloop', 'agentchat', 'cueso'].filter((d) => pf[`weft-pushMany:${d}`] && pf[`floor:${d}`]);
    const each = dialects.map((d) => [d, pairRatio(pf[`weft-pushMany:${d}`], pf[`floor:${d}`])]);
    if (each.length)
      targets.push([
        "Client: every dialect's pushMany ≤ 2.0× its floor (issue 21)",
        each.map(([d, r]) => `${d} ${fmt(r, 2)}×`).join(', '),
        yes(each.every(([, r]) => r.median <= 2.0)),
      ]);
  }

  // issue 42: the path React apps take
  if (ms['weft-ai'] && ms['cf-agents']) {
    const r = pairRatio(ms['weft-ai'], ms['cf-agents']);
    targets.push([
      "Client: `useChat` over weft ≤ 0.8× Cloudflare Agents per stream (a task per frame, back to back; issue 42. The frames come microseconds apart, so the transport's default `deltaWindowMs` joins far more deltas here than a live stream gives it: the paced row below is the honest one)",
      `${fmt(r, 2)}×`,
      yes(r.median <= 0.8),
    ]);
  }
  if (pf['weft-client'] && pf['weft-push:loom']) {
    const r = pairRatio(pf['weft-client'], pf['weft-push:loom']);
    targets.push(['Client: the `Client` with `run.onEvent` ≤ 3× `Reassembler.push` (loom, a task per frame; issue 42)', `${fmt(r, 2)}×`, yes(r.median <= 3)]);
  }

  // growth
  const growth = c.datasets.filter((d) => d.kind === 'growth');
  if (growth.length) {
    lines.push('### Per-frame cost against message length');
    lines.push('');
    lines.push(
      `A stream of 200 steps (20,000 text deltas, 200 tool calls) cut into messages of 10, 100 and 200 steps. µs per frame, median (min–max) of ${runs} runs. Growth = cost at 200 ÷ cost at 10 steps per message, from the medians and from the best runs (the best run is the one least disturbed by other work on the shared machine; for weft the medians move by more than the trend, see the ranges).`,
    );
    lines.push('');
    const cs = Object.keys(c.results[growth[0].name]);
    const grow = {};
    const growBest = {};
    const rows2 = cs.map((k) => {
      const cells = growth.map((g) => summary(perFrame(c.results[g.name][k])));
      grow[k] = cells.at(-1).median / cells[0].median;
      growBest[k] = cells.at(-1).min / cells[0].min;
      return [nameOf(k), ...cells.map((s) => fmt(s, 2)), `${grow[k].toFixed(2)}×`, `${growBest[k].toFixed(2)}×`];
    });
    lines.push(table(['contestant', ...growth.map((g) => `${g.steps} steps/message`), 'growth (medians)', 'growth (best runs)'], rows2));
    lines.push('');
    if (grow['weft-push:loom'] !== undefined) {
      const flat = ['weft-push:loom', 'weft-pushMany:loom', 'weft-push:cueso', 'weft-pushMany:cueso'].filter((k) => k in growBest);
      targets.push([
        'Client: weft per-frame cost flat from 10 to 200 steps/message (≤ 1.25×, best runs)',
        `best runs: ${flat.map((k) => `${k.replace('weft-', '')} ${growBest[k].toFixed(2)}×`).join(', ')}; medians: ${flat.map((k) => `${grow[k].toFixed(2)}×`).join(', ')}; AI SDK ${grow['ai-objects']?.toFixed(1)}× (medians)`,
        yes(flat.every((k) => growBest[k] <= 1.25)),
      ]);
    }
  }

  if (c.profile) {
    lines.push("### Where weft's client time goes (CPU profile)");
    lines.push('');
    lines.push(
      "Chromium's CPU profiler (DevTools protocol, 100 µs sampling) over one pass of the full stream, on the same build with its function names kept (the same wasm-opt passes with `-g`: the same code) and the page not minified. A pass is all of a contestant's `measure`: for the `Client` and `useChat` rows also the work between runs outside their time (starting each run, `Chat`'s user message), a small part of it.",
    );
    lines.push('');
    for (const [k, v] of Object.entries(c.profile)) {
      lines.push(`**${nameOf(k)}** — ${v.ms.toFixed(0)} ms for ${v.units.toLocaleString('en-US')} frames under the profiler:`);
      lines.push('');
      lines.push(profileTable(v.self, clientClassifier(k)));
      lines.push('');
      if (k === 'weft-ai' || k === 'weft-client') {
        lines.push(
          `By whose code (share of busy time): ${clientOwners(v.self, k)
            .map(([o, x]) => `${o} ${(x * 100).toFixed(0)} %`)
            .join(', ')}.`,
        );
        lines.push('');
      }
    }
  }
}

function bundleSection(b, targets, lines) {
  lines.push('## 2. Bundle size');
  lines.push('');
  lines.push(
    'The smallest app holding a streaming chat with approvals (tests/bench/bundle/), bundled by esbuild (minified, ESM, browser, production). KB = 1,000 bytes. gzip level 9, brotli quality 11. React apps leave React and react-dom out (any React app pays for them; weft needs no framework); the last column has them in.',
  );
  lines.push('');
  const rows = Object.values(b.apps).map((a) => [
    a.name,
    KB(a.js.raw),
    KB(a.js.gzip),
    a.wasm ? `${KB(a.wasm.raw)} / ${KB(a.wasm.gzip)} gz` : '—',
    `**${KB(a.total.gzip)}**`,
    KB(a.total.brotli),
    a.withReact ? KB(a.withReact.gzip) : '—',
  ]);
  lines.push(table(['app', 'JS minified', 'JS gzip', 'wasm (raw / gzip)', 'total gzip', 'total brotli', 'with React + react-dom, gzip'], rows));
  lines.push('');
  const wa = b.apps['weft-ai-react'];
  const sub = b.parts?.['weft-ai'];
  if (wa) {
    const d = (x, y) => `${x >= y ? '+' : '−'}${KB(Math.abs(x - y))}`;
    const parts = [];
    if (sub)
      parts.push(
        `the subpath alone (\`weft-sdk/ai\`, every export, minified; it imports nothing) is ${KB(sub.js.raw)}, ${KB(sub.js.gzip)} gzip, ${KB(sub.js.brotli)} brotli`,
      );
    if (b.apps.weft)
      parts.push(
        `the \`useChat\` app over weft is ${d(wa.total.gzip, b.apps.weft.total.gzip)} gzip against weft-sdk's own app (the AI SDK's \`useChat\`, the React component and the subpath; React left out in both)`,
      );
    if (b.apps['ai-sdk-react'])
      parts.push(
        `${d(wa.total.gzip, b.apps['ai-sdk-react'].total.gzip)} against the AI SDK's own \`useChat\` app (weft-sdk's glue JS, its wasm and the subpath; \`DefaultChatTransport\` stays in both, as \`Chat\`'s default transport)`,
      );
    lines.push(
      `\`useChat\` over weft (tests/bench/bundle/weft-ai-react.jsx): the component of ai-sdk-react.jsx with \`transport: new WeftChatTransport({ client })\` on a connected weft \`Client\`. ${parts.join('; ').replace(/^./, (ch) => ch.toUpperCase())}. Differences of gzip sizes compressed apart are close to, not exactly, what a piece adds.`,
    );
    lines.push('');
  }
  const w = b.apps.weft;
  if (w)
    targets.push([
      'Bundle: weft-sdk app ≤ 60 KB gzip (glue JS + wasm; issue 21)',
      `${KB(w.total.gzip)} (JS ${KB(w.js.gzip)} + wasm ${KB(w.wasm.gzip)})`,
      yes(w.total.gzip <= 60_000),
    ]);
  const ones = Object.entries(b.apps).filter(([k]) => /^weft-(loom|agentloop|agentchat|cueso|agui-client)$/.test(k));
  if (ones.length)
    targets.push([
      'Bundle: a one-dialect app ≤ 60 KB gzip (`weft-sdk/<dialect>`, glue JS + wasm; issue 42)',
      ones.map(([k, a]) => `${k.slice(5)} ${KB(a.total.gzip)}`).join(', '),
      yes(ones.every(([, a]) => a.total.gzip <= 60_000)),
    ]);
  if (b.loomWasm) {
    const all = b.weftWasm?.crates ?? [];
    lines.push(
      `Where a one-dialect wasm's bytes go (\`weft-sdk/loom\`: ${KB(b.loomWasm.bytes)}, code section ${KB(b.loomWasm.codeBytes)}; beside it the four-dialect build's code by crate, for what leaving three dialects out saved):`,
    );
    lines.push('');
    lines.push(
      table(
        ['crate', 'code bytes (loom)', 'share of code', 'code bytes (four dialects)'],
        b.loomWasm.crates
          .slice(0, 8)
          .map((c) => [c.crate, KB(c.bytes), `${((c.bytes / b.loomWasm.codeBytes) * 100).toFixed(0)} %`, KB(all.find((x) => x.crate === c.crate)?.bytes ?? 0)]),
      ),
    );
    lines.push('');
  }
  if (b.weftWasm) {
    lines.push(
      `Where the SDK's wasm bytes go (${KB(b.weftWasm.bytes)}, code section ${KB(b.weftWasm.codeBytes)}; function sizes from the name section of the same build with names kept):`,
    );
    lines.push('');
    lines.push(
      table(
        ['crate', 'code bytes', 'share of code', 'functions'],
        b.weftWasm.crates.slice(0, 12).map((c) => [c.crate, KB(c.bytes), `${((c.bytes / b.weftWasm.codeBytes) * 100).toFixed(0)} %`, c.functions]),
      ),
    );
    lines.push('');
    lines.push(
      table(
        ['largest functions', 'bytes'],
        b.weftWasm.functions.slice(0, 10).map((f) => [
          `\`${f.name
            .replace(/::h[0-9a-f]{16}$/, '')
            .replace(/\[[0-9a-f]+\]/g, '')
            .slice(0, 100)}\``,
          f.bytes.toLocaleString('en-US'),
        ]),
      ),
    );
    lines.push('');
    lines.push(
      `Non-code sections: ${b.weftWasm.sections
        .filter((s) => s.section !== 'code')
        .map((s) => `${s.section} ${KB(s.bytes)}`)
        .join(', ')}.`,
    );
    lines.push('');
  }
  if (b.worker) {
    lines.push("### The Worker's upload");
    lines.push('');
    const f = (u) => (u?.wrangler ? `${u.wrangler.rawKiB} KiB / gzip ${u.wrangler.gzipKiB} KiB (${KB(u.wrangler.gzipKiB * 1024)})` : 'n/a');
    lines.push(
      table(
        ['worker', 'wrangler deploy --dry-run: Total Upload', 'files (raw / gzip -9)'],
        [
          ['weft (worker/)', f(b.worker), b.worker.files.map((x) => `${x.file.replace(/^[0-9a-f]{40}-/, '')} ${KB(x.raw)} / ${KB(x.gzip)}`).join('; ')],
          [
            'Cloudflare Agents AIChatAgent + relay (tests/bench/peers)',
            f(b.peersWorker),
            b.peersWorker?.files.map((x) => `${x.file} ${KB(x.raw)} / ${KB(x.gzip)}`).join('; '),
          ],
        ],
      ),
    );
    lines.push('');
    const now = b.worker.wrangler ? (b.worker.wrangler.gzipKiB * 1024) / 1000 : null;
    const since =
      now === null
        ? ''
        : ` This run: ${now.toFixed(1)} KB, ${now >= WORKER_UPLOAD_LAST_KB.kb ? '+' : '−'}${Math.abs(now - WORKER_UPLOAD_LAST_KB.kb).toFixed(1)} KB since ${WORKER_UPLOAD_LAST_KB.date}, ${Math.abs(WORKER_UPLOAD_BUDGET_KB - now).toFixed(1)} KB ${now <= WORKER_UPLOAD_BUDGET_KB ? 'under' : 'over'} the ${WORKER_UPLOAD_BUDGET_KB} KB budget.`;
    lines.push(`\`wrangler deploy --dry-run --outdir\` works offline here (it builds and bundles; nothing is uploaded). ${WORKER_UPLOAD_HISTORY}${since}`);
    lines.push('');
    const wasmFile = b.worker.files.find((x) => x.sections);
    if (wasmFile) {
      lines.push(
        `Sections of the Worker's uploaded wasm (${KB(wasmFile.raw)}): ${wasmFile.sections.map((x) => `${x.section} ${KB(x.bytes)}`).join(', ')}${wasmFile.sections.some((x) => x.section === 'name') ? ' — it ships its name section (function names), which the SDK build strips' : ''}.`,
      );
      lines.push('');
    }
    if (b.worker.wrangler)
      targets.push([
        `Bundle: Worker upload ≤ ${WORKER_UPLOAD_BUDGET_KB} KB gzip`,
        `${KB(b.worker.wrangler.gzipKiB * 1024)} gzip (${b.worker.wrangler.gzipKiB} KiB)`,
        yes(b.worker.wrangler.gzipKiB * 1024 <= WORKER_UPLOAD_BUDGET_KB * 1000),
      ]);
    if (b.workerWasm && !b.workerWasm.error) {
      lines.push(
        `Where the Worker's wasm bytes go (its cargo output through \`wasm-opt -Oz -g\`, names kept: ${KB(b.workerWasm.bytes)}, code ${KB(b.workerWasm.codeBytes)}):`,
      );
      lines.push('');
      lines.push(
        table(
          ['crate', 'code bytes', 'share of code', 'functions'],
          b.workerWasm.crates.slice(0, 12).map((c) => [c.crate, KB(c.bytes), `${((c.bytes / b.workerWasm.codeBytes) * 100).toFixed(0)} %`, c.functions]),
        ),
      );
      lines.push('');
    }
  }
}

function serverSection(s, targets, lines) {
  const { opts } = s;
  const sys = s.systems;
  const names = {
    weft: 'weft (Rust Worker + Durable Object)',
    'weft-relayed': 'weft, session named in the message (relayed between two Durable Objects)',
    'cf-agents': 'Cloudflare Agents AIChatAgent + @ai-sdk/openai',
    relay: 'floor: bare JS Durable Object relay',
    direct: 'floor: scripted LLM straight to a Node client',
  };
  const col = (s0, sel) => s.runs.map((r) => sel(r[s0]));
  lines.push('## 3. Server under `wrangler dev`');
  lines.push('');
  lines.push(
    `The scripted LLM streams "long reply ${opts.tokens}" (exactly ${opts.tokens} word tokens) with no delay; every system is driven by a WebSocket (or HTTP) client in the bench process that parses every frame. One session, then ${opts.concurrency} concurrent sessions (new sessions each run). Medians (min–max) of ${opts.runs} runs; systems in rotated order within a run.`,
  );
  lines.push('');
  const rows = sys.map((k) => [
    names[k],
    fmt(summary(col(k, (x) => x.one.ttftMs)), 1),
    fmt(summary(col(k, (x) => x.one.totalMs))),
    fmt(summary(col(k, (x) => x.one.tokensPerS)), 0),
    fmt(summary(col(k, (x) => x.many.tokensPerS)), 0),
    fmt(summary(col(k, (x) => x.many.ttftMs))),
    String(s.runs.reduce((a, r) => a + r[k].one.lostTokens + r[k].many.lostTokens, 0)),
  ]);
  lines.push(
    table(
      [
        'system',
        '1 session: first token, ms',
        'total, ms',
        'tokens/s',
        `${opts.concurrency} sessions: aggregate tokens/s`,
        'median first token, ms',
        'tokens lost',
      ],
      rows,
    ),
  );
  lines.push('');
  const problems = sys.flatMap((k) => s.runs.flatMap((r) => [...r[k].one.problems, ...r[k].many.problems].map((p) => `${k} ${p}`)));
  if (problems.length) lines.push(`Problems seen: ${problems.slice(0, 10).join('; ')}`);
  if (s.peerFailures?.length) {
    const names = { 'cf-agents': 'Cloudflare Agents', relay: 'the bare relay', direct: 'the direct floor' };
    lines.push(
      `Repeated rounds: ${s.peerFailures.map((f) => `${names[f.system] ?? f.system} round \`${f.round}\` (${f.error})`).join('; ')} — a peer's failed session repeats its round on new sessions (at most twice); weft's never do.`,
    );
    lines.push('');
  }
  if (s.logCheck)
    lines.push(
      `Event log: after each run, every one of weft's ${s.logCheck.sessions} concurrent sessions was resumed from event 0 on a new socket: ${s.logCheck.framesMissing === 0 ? 'every frame was in the log' : `**${s.logCheck.framesMissing} frames missing**`}.`,
    );
  lines.push('');
  if (sys.includes('weft') && sys.includes('cf-agents')) {
    const agg = (k) => col(k, (x) => x.many.tokensPerS);
    const one = (k) => col(k, (x) => x.one.tokensPerS);
    const r1 = pairRatio(agg('weft'), agg('cf-agents'));
    const r2 = pairRatio(agg('weft'), agg('relay'));
    const r3 = pairRatio(one('weft'), one('relay'));
    const lost = s.runs.reduce((a, r) => a + r.weft.one.lostTokens + r.weft.many.lostTokens, 0);
    lines.push(
      table(
        ['ratio, pair by pair (same run)', 'median (min–max)'],
        [
          [`weft ÷ CF Agents, aggregate tokens/s at ${opts.concurrency} sessions`, `${fmt(r1, 2)}×`],
          [`weft ÷ bare relay, aggregate tokens/s at ${opts.concurrency} sessions`, `${fmt(r2, 2)}×`],
          ['weft ÷ bare relay, tokens/s of one session', `${fmt(r3, 2)}×`],
          ['weft ÷ CF Agents, tokens/s of one session', `${fmt(pairRatio(one('weft'), one('cf-agents')), 2)}×`],
        ],
      ),
    );
    lines.push('');
    targets.push([`Server: ≥ 4× CF Agents' aggregate tokens/s at ${opts.concurrency} sessions`, `${fmt(r1, 2)}×`, yes(r1.median >= 4)]);
    targets.push([
      `Server: ≥ 0.5× the bare relay (aggregate at ${opts.concurrency} sessions), every frame in the event log`,
      `${fmt(r2, 2)}× (one session ${fmt(r3, 2)}×); ${lost} tokens lost; log ${s.logCheck?.framesMissing === 0 ? 'complete' : 'incomplete'}`,
      yes(r2.median >= 0.5 && lost === 0 && s.logCheck?.framesMissing === 0),
    ]);
  }
  if (s.paced?.length) {
    lines.push(`### Added latency per token at realistic pacing (${opts.paceMs} ms/token)`);
    lines.push('');
    lines.push(
      `One session at a time, "long reply ${opts.paceTokens}" with the LLM writing a token every ${opts.paceMs} ms. Latency of a token = when the client parsed it − when the scripted LLM wrote it (same process, same clock). p50 and p95 over the tokens of a run; medians (min–max) over runs.`,
    );
    lines.push('');
    const pcol = (k, f) => s.paced.map((r) => r[k][f]);
    lines.push(
      table(
        ['system', 'p50 latency, ms', 'p95 latency, ms', 'p50 added over the direct floor, ms (pair by pair)'],
        sys.map((k) => [
          names[k],
          fmt(summary(pcol(k, 'p50')), 2),
          fmt(summary(pcol(k, 'p95')), 2),
          k === 'direct' ? '0 (baseline)' : fmt(summary(s.paced.map((r) => r[k].p50 - r.direct.p50)), 2),
        ]),
      ),
    );
    lines.push('');
    if (sys.includes('weft') && sys.includes('direct')) {
      const added = summary(s.paced.map((r) => r.weft.p50 - r.direct.p50));
      targets.push([`Server: ≤ 1 ms p50 added latency per token over the floor at ${opts.paceMs} ms/token`, `${fmt(added, 2)} ms`, yes(added.median <= 1)]);
    }
  }
  if (sys.includes('weft') && sys.includes('weft-relayed')) {
    // What a socket pays when its messages name another session (worker/src/relay.rs).
    const ttft = summary(s.runs.map((r) => r['weft-relayed'].one.ttftMs - r.weft.one.ttftMs));
    const rows = [[`time to first token, one session: relayed − direct, ms`, fmt(ttft, 2)]];
    if (s.paced?.length) {
      rows.push([
        `p50 latency per token at ${opts.paceMs} ms/token: relayed − direct, ms`,
        fmt(summary(s.paced.map((r) => r['weft-relayed'].p50 - r.weft.p50)), 2),
      ]);
    }
    rows.push([
      `aggregate tokens/s at ${opts.concurrency} sessions: relayed ÷ direct`,
      `${fmt(
        pairRatio(
          col('weft-relayed', (x) => x.many.tokensPerS),
          col('weft', (x) => x.many.tokensPerS),
        ),
        2,
      )}×`,
    ]);
    lines.push('### A session named in a message: the relayed path');
    lines.push('');
    lines.push(
      "weft reached as the original cueso and Nova clients reach it (a socket without `?session_id=`, the session named in each message): every frame crosses a WebSocket link between the socket's Durable Object and the session's. Pair by pair within a run, against weft reached directly.",
    );
    lines.push('');
    lines.push(table(['relayed vs direct', 'median (min–max)'], rows));
    lines.push('');
  }
  if (s.profile) {
    lines.push("### Where weft's server time goes (CPU profile of the Worker's isolate)");
    lines.push('');
    lines.push(
      `The DevTools protocol on \`wrangler dev --inspector-port\`, 200 µs sampling, over one round of ${s.profile.sessions} concurrent sessions × ${opts.tokens} tokens (${s.profile.tokensPerS.toFixed(0)} tokens/s aggregate under the profiler).`,
    );
    lines.push('');
    lines.push(profileTable(s.profile.self, serverClassify, 15));
    lines.push('');
    lines.push(
      "Every event is in the SQLite event log before it is sent, and under `wrangler dev` the Durable Objects' commits are serialised; so while a commit is in flight the Worker gathers the model's next reads (up to `STREAM_BATCH_READS` or `STREAM_BATCH_MS`, worker/src/batch.rs) and logs and sends them as one batch: one statement, one glue pass and one `send` per batch instead of per token. The relay floor writes nothing.",
    );
    lines.push('');
  }
}

function nativeSection(n, lines) {
  lines.push('## 4. Reassembler and codecs, natively');
  lines.push('');
  lines.push(
    'tests/bench/native (`cargo build --release`, opt-level 3), on the frames of the client stream: decode only (`Dialect::decode_server`), and decode + reassemble to a transcript (`Reassembler::push_frame`). Medians (min–max) of the runs, each at least 300 ms of repeated passes.',
  );
  lines.push('');
  const mbps = (bytes, secs) => secs.map((t) => bytes / t / 1e6);
  lines.push(
    table(
      ['dialect', 'frames', 'MB', 'decode, MB/s', 'decode + reassemble, MB/s', 'ns per frame (reassemble)'],
      Object.entries(n.reassembler).map(([d, v]) => [
        d,
        v.frames.toLocaleString('en-US'),
        (v.bytes / 1e6).toFixed(1),
        fmt(summary(mbps(v.bytes, v.decode_s)), 0),
        fmt(summary(mbps(v.bytes, v.reassemble_s)), 0),
        fmt(summary(v.reassemble_s.map((t) => (t * 1e9) / v.frames)), 0),
      ]),
    ),
  );
  lines.push('');
  lines.push(
    table(
      ['provider stream', 'bytes', 'deltas', 'decode, MB/s', 'deltas/s (millions)'],
      Object.entries(n.providers).map(([f, v]) => [
        `${v.provider} (\`${f}\`)`,
        v.bytes.toLocaleString('en-US'),
        v.deltas.toLocaleString('en-US'),
        fmt(summary(mbps(v.bytes, v.decode_s)), 0),
        fmt(summary(v.decode_s.map((t) => v.deltas / t / 1e6)), 2),
      ]),
    ),
  );
  lines.push('');
  lines.push(
    'Provider bodies are fed in 1,400-byte pieces (a TCP segment). openai, anthropic and gemini bodies come from the scripted LLM ("long reply 20000"); the Responses API body is the recorded stream of crates/agent/tests/fixtures.',
  );
  lines.push('');
}

/** Least squares y = a + b·x over points: {a, b, r2}. */
function linearFit(xs, ys) {
  const n = xs.length;
  if (n < 2) return { a: NaN, b: NaN, r2: NaN };
  const mx = xs.reduce((p, x) => p + x, 0) / n;
  const my = ys.reduce((p, y) => p + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
    syy += (ys[i] - my) ** 2;
  }
  const b = sxy / sxx;
  return { a: my - b * mx, b, r2: syy === 0 ? 1 : (sxy * sxy) / (sxx * syy) };
}

const int = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : 'n/a');
const times = (a, b) => (Number.isFinite(a / b) && b ? `${(a / b).toFixed(2)}×` : 'n/a');

/** The storage figures the report and `limits` both need. */
function storageFigures(st) {
  const rows = (k) => st.paced[k]?.turns.map((t) => t.rows) ?? [];
  const has = (k) => st.systems.includes(k) && rows(k).length > 0;
  const f = { weft: has('weft'), cf: has('cf-agents') };
  if (f.weft) {
    f.weftRows = summary(rows('weft'));
    f.weftEvents = summary(st.paced.weft.turns.map((t) => t.eventLogRows ?? NaN));
  }
  if (f.cf) f.cfRows = summary(rows('cf-agents'));
  if (f.weft && f.cf) f.ratio = pairRatio(rows('weft'), rows('cf-agents'));
  const curve = (k) => st.curve?.[k] ?? [];
  const at = (k, n) => curve(k).find((p) => p.turn === n);
  f.at = at;
  f.fit = (k) =>
    linearFit(
      curve(k).map((p) => p.chars),
      curve(k).map((p) => p.bytes),
    );
  f.last = Math.max(...Object.values(st.curve ?? {}).map((c) => c.length), 0);
  f.retained = st.retention?.after ?? [];
  f.retainedLast = f.retained.at(-1);
  return f;
}

function storageSection(st, targets, lines) {
  const { opts } = st;
  const f = storageFigures(st);
  const names = { weft: 'weft (Rust Worker + Durable Object)', 'cf-agents': 'Cloudflare Agents AIChatAgent + @ai-sdk/openai' };
  lines.push('## 5. Storage (Durable Object SQLite)');
  lines.push('');
  lines.push(
    `What a chat turn costs in Durable Object storage, as Cloudflare bills it: SQLite rows written (index entries included) and the database's size, both systems under \`wrangler dev\` against the same scripted model. A turn is one user message ("long reply ${opts.tokens}") answered by a streamed reply of ${opts.tokens} words (${opts.tokens} pieces). ` +
      "weft runs with `WEFT_STORAGE_STATS=1`: after every finished run its session logs `weft-storage session=… run=… rows_written=… bytes=…` (rows written since the object started, counted from every write statement's cursor; the database size), and a turn is the difference of two lines of one session. " +
      "Cloudflare Agents: the bench's `Chat` (tests/bench/peers) wraps `ctx.storage.sql.exec` before the agent's constructor runs and sums every cursor's `rowsWritten`, plus one row per key its KV API writes or deletes (the hidden `__cf_kv` table), reported at `GET /agents/chat/<name>/bench-storage` and read once it stops moving after the reply ends; its client sends the whole conversation each turn, as `useAgentChat` does, taken from the agent's own `get-messages` so nothing it stored comes back changed. Alarms are counted for neither.",
  );
  lines.push('');
  lines.push(`### Rows written per turn (${opts.paceMs} ms per piece)`);
  lines.push('');
  lines.push(
    `One session per system; a first turn (it creates the tables) is not counted, then ${opts.turns} turn${opts.turns === 1 ? '' : 's'}. Medians (min–max) over the turns; the ratio pair by pair (turn i of weft ÷ turn i of CF Agents).`,
  );
  lines.push('');
  const rowsOf = (k) => st.paced[k];
  const trow = (k) => {
    const p = rowsOf(k);
    if (!p?.turns.length) return [names[k], 'n/a', 'n/a', 'n/a', p ? int(p.first.rowsWritten) : 'n/a', 'n/a'];
    const r = summary(p.turns.map((t) => t.rows));
    const per100 = summary(p.turns.map((t) => (t.rows * 100) / opts.tokens));
    const added = summary(p.turns.map((t) => t.bytesAdded ?? NaN));
    const addedX = summary(p.turns.map((t) => (t.bytesAdded ?? NaN) / t.chars));
    return [
      names[k],
      fmt(r, 0),
      fmt(per100, 1),
      fmt(summary(p.turns.map((t) => t.frames)), 0),
      int(p.first.rowsWritten),
      Number.isFinite(added.median) ? `${int(added.median)} (${fmt(addedX, 1)}× its text)` : 'n/a',
    ];
  };
  const idle = (k) => {
    const a = rowsOf(k)?.afterIdle;
    return a ? `${int(a.rows)}${a.restarted ? '' : ' (still awake)'}` : 'n/a';
  };
  const idleA = st.paced.weft?.afterIdle;
  const idleB = st.paced['cf-agents']?.afterIdle;
  const bytesRatio =
    f.weft && f.cf
      ? pairRatio(
          st.paced.weft.turns.map((t) => t.bytesAdded),
          st.paced['cf-agents'].turns.map((t) => t.bytesAdded),
        )
      : null;
  lines.push(
    table(
      [
        'system',
        'rows written per turn',
        'per 100 streamed pieces',
        'frames sent per turn',
        'first turn',
        `a turn after ${(opts.idleMs ?? 0) / 1000} s idle`,
        'bytes the turn added to the database',
      ],
      [
        [...trow('weft').slice(0, 5), idle('weft'), trow('weft')[5]],
        [...trow('cf-agents').slice(0, 5), idle('cf-agents'), trow('cf-agents')[5]],
        [
          '**weft ÷ CF Agents**',
          f.ratio ? `**${fmt(f.ratio, 2)}×**` : 'n/a',
          '',
          '',
          '',
          idleA && idleB ? times(idleA.rows, idleB.rows) : 'n/a',
          Number.isFinite(bytesRatio?.median) ? `${fmt(bytesRatio, 1)}×` : 'n/a',
        ],
      ],
    ),
  );
  lines.push('');
  lines.push(
    "First turn: the session's first, with what creating it writes (Cloudflare Agents' count includes its `CREATE TABLE`s; weft creates its tables outside its counter).",
  );
  lines.push('');
  if (opts.idleMs) {
    lines.push(
      `The counts are per instance of the object, and an object left idle hibernates and starts again at zero; so the measured turns follow each other within a second or so, one system after the other. The last column is one more turn after ${opts.idleMs / 1000} s without use (a person reading and answering): the object had slept (its count started again)${[idleA, idleB].some((x) => x && !x.restarted) ? ', except where it says "still awake"' : ''}, so it includes what waking up writes.`,
    );
    lines.push('');
  }
  if (f.weft) {
    const ev = f.weftEvents;
    const perRow = summary(st.paced.weft.turns.map((t) => t.frames / (t.eventLogRows ?? NaN)));
    lines.push(
      `weft's turn, from its database: ${fmt(ev, 0)} rows of the run's event log (streamed pieces are logged in batches, a row each, and every other event with them; ${fmt(perRow, 1)} frames sent per event-log row here) and ${fmt(summary(st.paced.weft.turns.map((t) => t.rows - (t.eventLogRows ?? NaN))), 0)} other rows (the run's row and its checkpoints, the history and message rows, meta). The log line gives totals only; the event-log rows are counted in the database file (wrangler's --persist-to) after the turns.`,
    );
    lines.push('');
  }
  const cfLast = st.paced['cf-agents']?.turns.at(-1);
  if (cfLast?.byStatement?.length) {
    lines.push(
      `Cloudflare Agents' last measured turn, statement by statement (${cfLast.statements} statements run, ${cfLast.kvRows} of its rows through the KV API):`,
    );
    lines.push('');
    lines.push(
      table(
        ['statement (first 80 characters)', 'calls', 'rows written'],
        cfLast.byStatement.slice(0, 14).map((x) => [`\`${x.statement.replace(/\|/g, '\\|')}\``, String(x.calls), String(x.rows)]),
      ),
    );
    lines.push('');
  }

  const w = st.window;
  const wLast = w?.points.at(-1);
  if (wLast) {
    lines.push(`### Inside the retention window (${w.turns} turns at ${opts.paceMs} ms a piece)`);
    lines.push('');
    lines.push(
      `weft alone: a new session, ${w.turns} turns of "long reply ${w.tokens}" streamed a word every ${opts.paceMs} ms, the database size read after every turn, before any run's event log has expired (\`EVENT_RETENTION_HOURS\`, a day by default, keeps every log for resume that long). Rows written per turn: the difference of two lines of the session, where the object did not start again in between.`,
    );
    lines.push('');
    const wRows = summary(w.points.map((p) => p.rows ?? NaN).filter(Number.isFinite));
    const wAt = [...new Set([...opts.checkpoints, w.turns])]
      .filter((n) => n <= w.turns)
      .map((n) => w.points.find((p) => p.turn === n))
      .filter(Boolean);
    lines.push(
      table(
        ['turns', 'conversation, characters', 'weft, bytes', '× conversation'],
        wAt.map((p) => [String(p.turn), int(p.chars), int(p.bytes), times(p.bytes, p.chars)]),
      ),
    );
    lines.push('');
    lines.push(`Rows written per turn in this session: ${fmt(wRows, 0)}.`);
    lines.push('');
    targets.push([
      `Storage: inside the retention window ≤ 3× the conversation's text (${w.turns} turns of ${w.tokens} words at ${opts.paceMs} ms/piece)`,
      `${times(wLast.bytes, wLast.chars)} (${int(wLast.bytes)} bytes for ${int(wLast.chars)} characters)`,
      yes(wLast.bytes / wLast.chars <= 3),
    ]);
  }
  lines.push(`### Bytes stored against the conversation (${f.last} turns, unpaced)`);
  lines.push('');
  const unpacedAdded = (k) => summary((st.curve?.[k] ?? []).slice(1).map((p, i) => p.bytes - st.curve[k][i].bytes));
  const pacedAdded = (k) => summary(st.paced[k]?.turns.map((t) => t.bytesAdded ?? NaN) ?? []);
  const pacingNote =
    f.weft && st.paced.weft?.turns.length && Number.isFinite(pacedAdded('weft').median)
      ? ` Pacing changes what weft's event log takes: a turn added ${int(unpacedAdded('weft').median)} bytes unpaced (deltas that arrive together are logged together) and ${int(pacedAdded('weft').median)} at ${opts.paceMs} ms a piece (the rows above); Cloudflare Agents ${int(unpacedAdded('cf-agents').median)} and ${int(pacedAdded('cf-agents').median)}. So before retention these curves understate what weft stores for a paced model${unpacedAdded('weft').median > 0 ? `, by about ${(pacedAdded('weft').median / unpacedAdded('weft').median).toFixed(0)}× per turn` : ''}; after retention the event logs are gone and pacing no longer matters.`
      : '';
  lines.push(
    `A new session per system, ${f.last} turns of "long reply ${opts.curveTokens}" with no pacing (to keep the run short), the database size read after every turn.${pacingNote} Conversation = the characters of every user message and reply. weft runs with \`CONTEXT_WINDOW\` raised so it never compacts (Cloudflare Agents does not either). ${st.retention ? `After retention: a second weft Worker with \`EVENT_RETENTION_HOURS=${opts.retentionHours}\` (${(opts.retentionHours * 3600).toFixed(1)} s) runs the same session; at each checkpoint it waits ${(st.retention.waitMs / 1000).toFixed(1)} s and sends one cheap turn ("retention check", answered by an echo: its characters count in the conversation) whose line gives the size once the alarm has deleted the finished runs' event logs. ` : ''}Cloudflare Agents deletes its stream rows when the reply is stored, so it has nothing to wait for. One session each: sizes do not vary between runs.`,
  );
  lines.push('');
  const cell = (k, n) => {
    const p = f.at(k, n);
    return p ? [int(p.bytes), times(p.bytes, p.chars)] : ['n/a', 'n/a'];
  };
  const retainedAt = (n) => f.retained.find((r) => r.turn === n);
  const rowsB = opts.checkpoints
    .filter((n) => n <= f.last)
    .map((n) => {
      const r = retainedAt(n);
      const conv = f.at('weft', n)?.chars ?? f.at('cf-agents', n)?.chars;
      return [
        String(n),
        int(conv),
        ...cell('weft', n),
        r ? int(r.bytes) : 'n/a',
        r ? times(r.bytes, r.chars) : 'n/a',
        ...cell('cf-agents', n),
        times(f.at('weft', n)?.bytes, f.at('cf-agents', n)?.bytes),
      ];
    });
  lines.push(
    table(
      [
        'turns',
        'conversation, characters',
        'weft, bytes',
        '× conversation',
        'weft after retention, bytes',
        '× conversation',
        'CF Agents, bytes',
        '× conversation',
        'weft ÷ CF Agents',
      ],
      rowsB,
    ),
  );
  lines.push('');
  const growth = (k) => {
    const fit = f.fit(k);
    const c = st.curve?.[k] ?? [];
    const mid = c[Math.floor(c.length / 5)];
    const end = c.at(-1);
    const marginal = mid && end && end.chars > mid.chars ? (end.bytes - mid.bytes) / (end.chars - mid.chars) : NaN;
    return [
      names[k],
      Number.isFinite(fit.b) ? fit.b.toFixed(2) : 'n/a',
      Number.isFinite(fit.a) ? int(fit.a) : 'n/a',
      Number.isFinite(fit.r2) ? fit.r2.toFixed(4) : 'n/a',
      Number.isFinite(marginal) ? marginal.toFixed(2) : 'n/a',
    ];
  };
  lines.push(
    `The growth curve: bytes = fixed + slope × conversation characters, least squares over all ${f.last} turns (R² = 1 is a straight line), and the slope over the last four fifths alone (turn ${Math.floor(f.last / 5) + 1} to ${f.last}).`,
  );
  lines.push('');
  lines.push(
    table(['system', 'bytes per conversation character (slope)', 'fixed bytes (intercept)', 'R²', 'slope, later turns'], [growth('weft'), growth('cf-agents')]),
  );
  lines.push('');
  const tb = (label, t, conv) => {
    if (!t) return;
    const pages = new Map((t.pagesBy ?? []).map((x) => [x.name, x.pages]));
    const pg = new Map((t.pagesBy ?? []).map((x) => [x.name, x]));
    const rowsT = t.tables
      .filter((x) => x.rows || pages.get(x.table) > 1)
      .sort((a, b) => (b.bytes ?? 0) - (a.bytes ?? 0))
      .slice(0, 5)
      .map((x) => {
        const p = pg.get(x.table);
        return [
          `\`${x.table}\``,
          int(x.rows),
          int(x.bytes),
          times(x.bytes, conv),
          p ? int(p.pages) : 'n/a',
          p ? int(p.overflow) : 'n/a',
          p ? int(p.unused) : 'n/a',
          p ? times(p.pages * t.pageSize, conv) : 'n/a',
        ];
      });
    lines.push(
      `${label} (conversation ${int(conv)} characters): ${int(t.pages - t.freePages)} pages of ${t.pageSize} bytes in use (the size counts those; ${t.freePages} more free), the largest tables:`,
    );
    lines.push('');
    lines.push(
      table(['table', 'rows', 'content bytes', '× conversation', 'pages', 'of them overflow', 'unused bytes in its pages', 'its pages × conversation'], rowsT),
    );
    lines.push('');
  };
  lines.push(
    "What the bytes hold, read from each database file (wrangler's --persist-to) at the end: rows and content bytes (the lengths of every column) per table, and pages per table and index (SQLite's `dbstat`).",
  );
  lines.push('');
  tb(`weft after its ${(st.paced.weft?.turns.length ?? 0) + 2} paced turns (${opts.paceMs} ms a piece)`, st.pacedTables?.weft, st.paced.weft?.conversation);
  const ev = st.pacedTables?.weft?.tables.find((x) => x.table === 'event_log');
  const evPages = st.pacedTables?.weft?.pagesBy?.find((x) => x.name === 'event_log');
  if (ev?.rows && ev.withoutRowid && evPages && evPages.overflow >= 0.8 * ev.rows && ev.bytes / ev.rows < st.pacedTables.weft.pageSize) {
    const ps = st.pacedTables.weft.pageSize;
    lines.push(
      `At ${opts.paceMs} ms a piece weft's event-log rows average ${int(ev.bytes / ev.rows)} bytes, and ${int(evPages.overflow)} of the table's ${int(evPages.pages)} pages are overflow pages, about one per row, with ${int(evPages.unused)} bytes of its pages unused (${((evPages.unused / (evPages.pages * ps)) * 100).toFixed(0)} %): SQLite keeps at most about ${int(((ps - 12) * 64) / 255 - 23)} bytes of a row in a WITHOUT ROWID table's b-tree page (an index b-tree) and puts the rest in an overflow page of its own, mostly empty for a row this size. Unpaced, rows of many more deltas fill their overflow pages.`,
    );
    lines.push('');
  }
  if (wLast) tb(`weft after its ${w.turns} paced turns of ${w.tokens} words`, w.tables, wLast.chars);
  tb(`weft after ${f.last} turns unpaced`, st.tables?.weft, st.curve?.weft?.at(-1)?.chars);
  tb(`weft after ${f.retainedLast?.turn ?? '?'} turns and the retention time`, st.retention?.tables, f.retainedLast?.chars);
  tb(
    `Cloudflare Agents after its ${(st.paced['cf-agents']?.turns.length ?? 0) + 2} paced turns`,
    st.pacedTables?.['cf-agents'],
    st.paced['cf-agents']?.conversation,
  );
  tb(`Cloudflare Agents after ${f.last} turns unpaced`, st.tables?.['cf-agents'], st.curve?.['cf-agents']?.at(-1)?.chars);

  if (f.weft && f.cf) {
    targets.push([
      `Storage: rows written per turn ≤ CF Agents' (${opts.tokens}-piece reply at ${opts.paceMs} ms/piece)`,
      `weft ${fmt(f.weftRows, 0)}, CF Agents ${fmt(f.cfRows, 0)}: ${fmt(f.ratio, 2)}×`,
      yes(f.ratio.median <= 1),
    ]);
  }
  if (f.weft && (st.curve?.weft?.length ?? 0) >= 3) {
    const fit = f.fit('weft');
    targets.push([
      `Storage: bytes per session linear in the conversation (R² ≥ 0.99 over ${f.last} turns)`,
      `R² ${fit.r2.toFixed(4)}, ${fit.b.toFixed(2)} bytes per character + ${int(fit.a)} fixed (CF Agents: R² ${f.fit('cf-agents').r2.toFixed(4)}, ${f.fit('cf-agents').b.toFixed(2)} per character)`,
      yes(fit.r2 >= 0.99),
    ]);
  }
  if (f.retainedLast) {
    const r = f.retainedLast;
    targets.push([
      `Storage: after retention ≤ 1.5× the conversation's text (${r.turn} turns)`,
      `${times(r.bytes, r.chars)} (${int(r.bytes)} bytes for ${int(r.chars)} characters)`,
      yes(r.bytes / r.chars <= 1.5),
    ]);
  }
  if (st.problems?.length) {
    lines.push(`Problems seen: ${st.problems.join('; ')}`);
    lines.push('');
  }
}

/**
 * One line per target that is missed, saying what the profiles show limits it (generated). A
 * target met in this run gets no line: its section below still has the profile.
 */
function limits(S, targets) {
  const out = [];
  const missed = (prefix) => targets.some(([name, , verdict]) => name.startsWith(prefix) && verdict.includes('not met'));
  const top = (st, classify, n) =>
    groups(st, classify)
      .filter((x) => x.group !== '(idle / program)')
      .slice(0, n)
      .map((x) => `${x.group} ${(x.share * 100).toFixed(0)} %`)
      .join(', ');
  const busyShare = (st, classify, re) => {
    const g = groups(st, classify).filter((x) => x.group !== '(idle / program)');
    const busy = g.reduce((a, x) => a + x.ms, 0);
    return ((g.filter((x) => re.test(x.group)).reduce((a, x) => a + x.ms, 0) / busy) * 100).toFixed(0);
  };
  const cp = S.client?.profile;
  if (cp?.['weft-push:loom'] && missed('Client: weft ≤')) {
    const st = cp['weft-push:loom'].self;
    out.push(
      `- **Client, per frame** (CPU profile of \`push\`): ${top(st, clientClassify, 5)}; the reassembly itself ${busyShare(st, clientClassify, /^reassembly/)} %. A delta is read in place (weft_protocol \`dialect::fast\`: one pass over the bytes, its strings borrowed) and, with no event listener, appended to the transcript without becoming an event; what is left per frame is the boundary — the frame copied from a JS string into wasm memory as UTF-8 (into a buffer the reassembler keeps: a short frame a character at a time by a loop in JS, which Chromium runs faster than a call of \`TextEncoder.encodeInto\` per frame; a \`pushMany\` batch by \`encodeInto\`), the call, the result object — and the frames that are not deltas (8 % of the loom stream: node and tool events), read into a tree borrowing from the frame (\`weft_protocol::json\`) and from it into their events. The JS floor parses with V8's native \`JSON.parse\` and never leaves JS.`,
    );
  }
  if (cp?.['weft-pushMany:loom'] && missed('Client: batch path'))
    out.push(
      `- **Client, batch** (\`pushMany\`): ${top(cp['weft-pushMany:loom'].self, clientClassify, 4)} — the batch crosses as one string (joined in JS with U+001E), so the boundary is paid once per 1,000 frames; what is left is the decoding itself and the events it builds for the frames that are not deltas.`,
    );
  const b = S.bundle;
  if (b?.weftWasm && missed('Bundle: weft-sdk')) {
    const c = b.weftWasm.crates
      .slice(0, 5)
      .map((x) => `${x.crate} ${KB(x.bytes)}`)
      .join(', ');
    out.push(
      `- **SDK bundle**: the wasm is ${KB(b.apps.weft.wasm.gzip)} gzip of the ${KB(b.apps.weft.total.gzip)}; its code by crate: ${c}. Issue 21's redesign, measured step by step on 2026-11-26 (gzip -9 of the published wasm, each against the build before it; 142.7 KB at the start): one JSON reader of weft's own for every frame, borrowing from it, the fast path kept for deltas only (−2.5 KB); the standard library built for the wasm with panics that abort at once (\`-Zbuild-std\`, \`-Cpanic=immediate-abort\`, −7.2 KB); objects made into maps key by key, not collected (−0.7 KB); arbitrary JSON kept as canonical text (\`RawJson\`) instead of serde_json's \`Value\` (−5.7 KB); floats read by a parser of weft's own instead of core's (its tables: −11.8 KB); the SDK's own trims — no \`{:?}\`, shared halves of the marshalling and request code, a tool's schema as \`JSON.stringify\`'s text (−6.3 KB); callbacks awaited through promise callbacks, not Rust futures (−1.2 KB); the decoders reading fields leniently with one error exit (−2.0 KB); no \`core::fmt\` on any client path (−2.0 KB with the protocol's half, which alone was +0.2 KB). A second session the same day (102.7 KB at its start): requests written member by member by the protocol's own \`ObjectWriter\` instead of serde's derives (−1.6 KB); events, the transcript and the SDK's results written the same way, each held byte for byte to its derived \`Serialize\`, so serde_json leaves the SDK (−2.4 KB; the same events written by hand while serde_json's writer stayed linked for the rest were +0.2 KB: the saving is the writer, not the events' code); wasm-opt flattening and rebuilding the control flow before two rounds of \`-Oz\` (−1.0 KB; push and pushMany level in Node); arrays read in a loop with their item errors out of line (−1.3 KB). Three changes bought speed with size: text frames written into a buffer the reassembler keeps instead of a fresh allocation each, a \`pushMany\` batch by \`TextEncoder.encodeInto\` where wasm-bindgen copies a string one character at a time in JavaScript (+0.5 KB; in Node, with \`encodeInto\` for every frame, loom's pushMany ÷ floor went from 2.31 to 1.91); a single frame is copied by a loop in JavaScript all the same, because each \`encodeInto\` call costs Chromium more than copying a frame (loom push in one Chromium run: 1.88 µs/frame with \`encodeInto\`, 1.68 with wasm-bindgen's loop); the fast path's smallest steps inlined, each a call per byte or key at opt-level z (+0.5 KB; loom push in Node 1.85 → 1.67 µs/frame); agentchat's tool calls and results on the fast path and canonical tool arguments kept as they are (+1.4 KB; agentchat pushMany ÷ floor 7.0 → 5.9 in Node). Whitespace checked inline and skipped out of line, and the fast path's keys borrowed, took loom push from 1.74 to 1.59 µs/frame in a Chromium A/B of the two builds for nothing (−0.1 KB). Nested objects written into one text instead of copied in from strings of their own: −0.1 KB, agentchat pushMany ÷ floor 5.8 → 5.5 in Node. A third session (98.7 KB of wasm at its start): a single frame written through a view of the wasm memory kept across calls instead of a view of the buffer made for each (+0.02 KB; that view was a third of copying a loom frame in Chromium; loom push 1.62 → 1.55 µs/frame in a Chromium A/B of the two builds); the SDK's handling of the original servers' own behaviour — cueso's session taken up, agentchat's broadcast turns of other clients left out, agentloop's leftovers of a killed loop dropped, nothing sent after cueso's closing error, loom's requests queued behind a run — +0.5 KB (98.73 → 99.23 KB of wasm), for correctness; a nested object closed by the writer's own \`finish\` instead of a copy of it, −0.22 KB (the inliner's choices; the two array writers through one helper were +0.09 KB and stay apart). Scanning strings eight bytes at a time (the reader's plain runs and the writer's escapes) changed nothing measurable in Node or Chromium, agentchat included, and was not kept. Building the protocol crate at opt-level 2 instead would make loom's push 1.0 µs/frame in Node and cost 18 KB. A fourth session (99.0 KB of wasm at its start, build-sdk's figure): talc as the wasm's allocator instead of the standard library's dlmalloc (−2.5 KB; push and pushMany level in a Chromium A/B of the two builds, 2–3 % slower in Node); talc without its realloc in place would be 0.1 KB less, and was not taken. Measured and not taken: a loom-only build (−10.0 KB: the SDK speaks every dialect at run time); the request structs borrowing instead of owning (−0.1 KB). Two of the issue's levers, weighed from the names of a build that keeps them and not built: the wasm-bindgen export shims' 29 KB are the exported methods' own bodies, inlined into them (\`client_new\`'s 7.4 KB is \`Client::new\`), and the shims that only forward a call weigh 9 to 26 bytes each, 0.3 KB together, which is all one exported entry point per class could save; and reading every frame in one pass, as the fast path reads deltas, would grow the code, not shrink it — the fast path spends 15.7 KB on its dozen shapes, while the borrowed tree's readers (\`decode_server_general\` 16.7 KB, \`Event::from_json\` 9.9 KB) cover every other frame type of the four dialects and every canonical event, and a stream's frames already skip the tree. Where the code is now (KiB of wasm code, not gzip; 209 in all): the SDK's shell around its connection — the \`Client\`, runs, sockets, timers, listeners, their closures and one wasm-bindgen shim per exported method — 55.4; the sans-IO connection (\`Connection\`) 32.5; the \`Reassembler\` class and marshalling 14.0; the protocol's decoders (general path, fast path, \`Event::from_json\`, field readers) 58.8; its reassembler 12.4; its JSON reader, float parser and writers 14.6; the allocator, core and the rest 21.3. The ${KB(b.apps.weft.total.gzip - 60_000)} still over the 60 KB target is about two fifths of the whole: no trim left in this list comes near it. It takes a decision on the design: the shell in hand-written JavaScript over a small wasm API (its 55 KiB of code is most of the SDK's own; estimated, not built: at most about −25 KB once its JavaScript is counted), per-dialect builds (measured: −10 KB), which by that estimate would together still leave the app near ${KB(b.apps.weft.total.gzip - 35_000)}, or a target that fits a client of four dialects.`,
    );
    const ones = ['loom', 'agentloop', 'agentchat', 'cueso'].map((d) => b.apps[`weft-${d}`]).filter(Boolean);
    if (ones.length) {
      const least = Math.min(...ones.map((a) => a.total.gzip));
      const most = Math.max(...ones.map((a) => a.total.gzip));
      out.push(
        `- **One-dialect apps** (issue 42, built): \`weft-sdk/<dialect>\` links its own dialect's codec and fast path and no other's (weft-protocol's and weft-sdk's Cargo feature per dialect; the connection reads its dialect's rules as constants), which takes the app to ${KB(least)}–${KB(most)} gzip, ${KB(b.apps.weft.total.gzip - most)}–${KB(b.apps.weft.total.gzip - least)} less than \`weft-sdk\`'s four dialects — about what the loom-only build measured before (−10 KB). What a one-dialect wasm keeps is the rest of the list above, which every dialect needs: the SDK's shell and connection (weft_sdk and the export shims, about half of its code), the canonical events' reader (\`Event::from_json\`: weft's extension frames are canonical events in every dialect), the reassembler, the JSON reader and writers, and the AI SDK's chunk encoder that \`weft-sdk/ai\` takes its chunks from (section 2 has the loom build's code by crate beside the four-dialect one's). ${KB(least - 60_000)} over the 60 KB target is more than the whole protocol crate weighs in it: reaching it takes the shell in JavaScript, at least.`,
      );
    }
  }
  if (b?.worker?.files && missed('Bundle: Worker upload')) {
    const w = b.worker.files.find((x) => x.sections);
    const c = b.workerWasm?.crates
      ?.slice(0, 6)
      .map((x) => `${x.crate} ${KB(x.bytes)}`)
      .join(', ');
    if (w)
      out.push(
        `- **Worker upload**: one wasm of ${KB(w.raw)} (${KB(w.gzip)} gzip) with sections ${w.sections.map((x) => `${x.section} ${KB(x.bytes)}`).join(', ')}${c ? `; code by crate (cargo output, \`-Oz -g\`): ${c}` : ''}.`,
      );
  }
  const sp = S.server?.profile;
  if (sp && (missed('Server: ≥ 4×') || missed('Server: ≥ 0.5×')))
    out.push(
      `- **Server** (CPU profile of the Worker's isolate, ${sp.sessions} concurrent sessions): ${top(sp.self, serverClassify, 5)}; the batching that keeps it ahead is described under the profile in section 3.`,
    );
  if (S.server?.paced?.length && missed('Server: ≤ 1 ms'))
    out.push(
      "- **Server, latency at 20 ms/token**: a token sent alone (the model is slower than a commit, so nothing is gathered) waits for its log write to commit before it leaves: the Durable Object output gate holds a socket message until the storage writes before it are durable, which is what lets a client resume without a hole after a crash. The bare relay writes nothing, so it has no commit to wait for. Measured on 2026-11-22 (one paced run each, a build with the log write left out for the experiment): weft's p50 went from 1.96 ms to 1.22 ms, the relay's being 0.83 and 1.06 ms in those runs; the write and its commit are about 0.7 ms of what weft adds, and with them left out weft is within 1 ms of the direct floor. Sending before the commit would meet the target and lose the guarantee, so it is not done.",
    );
  const st = S.storage;
  if (st && missed('Storage: rows written')) {
    const f = storageFigures(st);
    const cf = st.paced['cf-agents']?.turns.at(-1)?.byStatement ?? [];
    const blocks = cf.filter((x) => /stream_blocks|stream_chunks/.test(x.statement)).reduce((a, x) => a + x.rows, 0);
    const perRow = summary(st.paced.weft.turns.map((t) => t.frames / (t.eventLogRows ?? NaN)));
    out.push(
      `- **Storage, rows per turn**: weft's ${fmt(f.weftRows, 0)} rows are ${fmt(f.weftEvents, 0)} event-log rows (${fmt(perRow, 1)} frames per row at ${st.opts.paceMs} ms a piece) and the rest the run's own rows; Cloudflare Agents appends its stream to blocks in place (${blocks} of its rows that turn) and deletes them once the reply is stored.`,
    );
  }
  if (st && missed('Storage: after retention')) {
    const t = st.retention?.tables;
    const conv = storageFigures(st).retainedLast?.chars;
    const big = t?.tables
      .filter((x) => x.bytes > 1000)
      .sort((a, b) => b.bytes - a.bytes)
      .slice(0, 4)
      .map((x) => `\`${x.table}\` ${times(x.bytes, conv)} (${int(x.rows)} rows, ${KB(x.bytes / x.rows)} each)`)
      .join(', ');
    const share = (name) => (t?.tables.find((x) => x.table === name)?.bytes ?? 0) / conv;
    const why = [];
    if (share('messages') >= 0.5 && share('history') >= 0.5)
      why.push("the conversation is held twice, in `messages` (role and text, what a client lists) and `history` (the engine's messages)");
    if (share('runs') >= 0.2) why.push('every finished run keeps its last checkpoint in `runs` after its event log is deleted');
    const cfMsgs = st.tables?.['cf-agents']?.tables.find((x) => x.table === 'cf_agents_session_messages');
    out.push(
      `- **Storage after retention** (the database file, section 5): once the event logs are gone, what is left, as multiples of the conversation's text: ${big ?? 'n/a'}; the rest is SQLite's pages and their slack.${why.length ? ` ${why.join('; ').replace(/^./, (c) => c.toUpperCase())}.` : ''}${cfMsgs ? ` Cloudflare Agents holds the conversation once (\`cf_agents_session_messages\`, ${times(cfMsgs.bytes, st.curve['cf-agents'].at(-1).chars)}) and keeps nothing else of a finished turn.` : ''}`,
    );
  }
  if (st?.window && missed('Storage: inside the retention window')) {
    const w = st.window;
    const conv = w.points.at(-1).chars;
    const pages = w.tables?.pagesBy ?? [];
    const ps = w.tables?.pageSize ?? 4096;
    const of = (name) => pages.find((x) => x.name === name);
    const named = ['event_batches', 'event_log', 'history'].map(of).filter(Boolean);
    const rest = pages.filter((x) => !named.includes(x));
    const part = (x) => `\`${x.name}\` ${times(x.pages * ps, conv)} (${int(x.pages)} pages, ${int(x.unused)} bytes of them unused)`;
    out.push(
      `- **Storage inside the retention window** (${w.turns} turns of ${w.tokens} words, section 5): the session's pages as multiples of the conversation's text: ${named.map(part).join(', ')}, and ${int(rest.reduce((a, x) => a + x.pages, 0))} pages of the other tables and indexes, ${times(rest.reduce((a, x) => a + x.pages, 0) * ps, conv)} (most of them one page each, empty or nearly). Until retention the reply's text is held twice, in the log (for resume) and in the history; a history row of a reply this size (a few KB) takes a page of its own with what is left of it unused.`,
    );
  }
  return out;
}

function mcpSection(m, targets, lines) {
  const kinds = {
    builtin: 'built-in `calculator`',
    modern: 'MCP, current revision (`createMcpHandler`, JSON)',
    legacy: 'MCP, 2025 revision (server-everything, session, SSE)',
  };
  // Per run, the median of its calls; then medians (min–max) over runs.
  const per = (kind, f) => m.calls.map((r) => median(r[kind][f]));
  lines.push('## 6. MCP tools');
  lines.push('');
  lines.push(
    `The Worker under \`wrangler dev\` with two MCP servers on 127.0.0.1 and the scripted LLM (no delay). A run that calls one tool and answers, ${m.opts.calls} times per tool per run in one session, in rotated order; times at the client. Medians (min–max) over ${m.opts.runs} runs of each run's median; "added" is pair by pair against the built-in tool in the same run.`,
  );
  lines.push('');
  const added = (kind, f) => summary(m.calls.map((r) => median(r[kind][f]) - median(r.builtin[f])));
  lines.push(
    table(
      ['tool', '`tool_start` → `tool_end`, ms', 'added over the built-in, ms', 'whole run, ms', 'added over the built-in, ms'],
      Object.keys(kinds).map((k) => [
        kinds[k],
        fmt(summary(per(k, 'tool')), 2),
        k === 'builtin' ? '0 (baseline)' : fmt(added(k, 'tool'), 2),
        fmt(summary(per(k, 'total')), 1),
        k === 'builtin' ? '0 (baseline)' : fmt(added(k, 'total'), 1),
      ]),
    ),
  );
  lines.push('');
  const ft = (k) => m.firstToken.map((r) => r[k]);
  lines.push(
    'The run\'s first token ("long reply 20": `run` sent → first `message_chunk`), without MCP servers configured (another `wrangler dev` of the same build, same run), and with them: in a new session, whose first run asks both servers for their tools, and in a session whose catalog is stored (its second run: nothing is asked before the run).',
  );
  lines.push('');
  lines.push(
    table(
      ['first token', 'ms', 'over the one without MCP (pair by pair)'],
      [
        ['without MCP servers', fmt(summary(ft('without')), 1), '1 (baseline)'],
        ['with, a new session (discovery before its first run)', fmt(summary(ft('fresh')), 1), `${fmt(pairRatio(ft('fresh'), ft('without')), 2)}×`],
        ['with, the catalog stored', fmt(summary(ft('stored')), 1), `${fmt(pairRatio(ft('stored'), ft('without')), 2)}×`],
      ],
    ),
  );
  lines.push('');
  const stored = pairRatio(ft('stored'), ft('without'));
  targets.push([
    'MCP: the catalog does not delay the first token (a session with its catalog, ÷ no MCP servers)',
    `${fmt(stored, 2)}×`,
    yes(stored.median <= 1.25),
  ]);
}

function remoteSection(m, targets, lines) {
  // Per run, the median of its reads; then medians (min–max) over runs.
  const per = (kind, f) => m.runs.map((r) => median(r[kind].map((x) => x[f])));
  const perEvent = m.runs.map((r) => median(r.weft.map((w, i) => ((w.total - r.direct[i].total) * 1000) / r.direct[i].events)));
  lines.push('## 7. A remote AG-UI agent behind weft');
  lines.push('');
  lines.push(
    `ag-ui-langgraph (tests/agui/langgraph: a LangGraph graph, its model the scripted LLM with no delay) on 127.0.0.1, and the Worker under \`wrangler dev\` with it in \`AGENTS\` (issue 38). The same reply ("count to ${m.opts.words}": ${m.opts.words} text events) read ${m.opts.reps} times per run from the agent's own server-sent events (a \`RunAgentInput\` POSTed by the bench) and through weft (a loom socket, a run naming the agent: weft POSTs the input, decodes the events, logs and numbers them and sends them as loom frames), in alternating order; times at the client. Medians (min–max) over ${m.opts.runs} runs of each run's median; ratios and differences pair by pair, within a run.`,
  );
  lines.push('');
  lines.push(
    table(
      ['read', 'first token, ms', 'whole reply, ms'],
      [
        ["the agent's SSE, directly", fmt(summary(per('direct', 'firstToken')), 1), fmt(summary(per('direct', 'total')), 1)],
        ['through weft (loom socket)', fmt(summary(per('weft', 'firstToken')), 1), fmt(summary(per('weft', 'total')), 1)],
      ],
    ),
  );
  lines.push('');
  const ftRatio = pairRatio(per('weft', 'firstToken'), per('direct', 'firstToken'));
  const totalRatio = pairRatio(per('weft', 'total'), per('direct', 'total'));
  const added = summary(perEvent);
  lines.push(
    `Through weft ÷ directly: first token ${fmt(ftRatio, 2)}×, whole reply ${fmt(totalRatio, 2)}×; weft adds ${fmt(added, 1)} µs per event (the whole reply's difference ÷ its text events).`,
  );
  lines.push('');
  targets.push([
    "Remote agent: time weft adds, through weft ÷ the agent's own SSE (first token; whole reply)",
    `${fmt(ftRatio, 2)}×; ${fmt(totalRatio, 2)}× (${fmt(added, 1)} µs per event)`,
    yes(null),
  ]);
}

export function report(res) {
  const lines = [];
  const targets = [];
  const body = [];
  const m = res.machine;
  const S = res.sections;
  if (S.client) clientSection(S.client, targets, body);
  if (S.bundle) bundleSection(S.bundle, targets, body);
  if (S.server) serverSection(S.server, targets, body);
  if (S.native) nativeSection(S.native, body);
  if (S.storage) storageSection(S.storage, targets, body);
  if (S.mcp) mcpSection(S.mcp, targets, body);
  if (S.remote) remoteSection(S.remote, targets, body);

  lines.push('# Benchmarks');
  lines.push('');
  lines.push(
    `Written by \`npm run bench\` (tests/bench/run.mjs) on ${m.date.slice(0, 16).replace('T', ' ')} UTC; its runs took ${(res.seconds / 60).toFixed(0)} min in all${res.quick ? ' — **a --quick smoke run on a tiny input: the figures mean nothing**' : ''}. Regenerated on every run; edit tests/bench/, not this file.`,
  );
  lines.push('');
  lines.push(
    'weft and its peers are measured in the same run on the same machine, the peers as published on npm (dev dependencies of tests/bench). The machine is shared (2 cores, other work running), so absolute figures drift between runs: the ratios, computed pair by pair between contestants measured back to back in the same repetition, are what to compare. Figures are medians with (min–max) over the runs.',
  );
  lines.push('');
  lines.push(`## Targets (issue 8; issue 21: the client's per-frame cost and the SDK's size${S.storage ? '; storage: section 5' : ''})`);
  lines.push('');
  lines.push(table(['target', 'measured', ''], targets));
  lines.push('');
  const lim = limits(S, targets);
  if (lim.length) {
    lines.push('What limits the figures that miss (from the profiles in the sections below):');
    lines.push('');
    lines.push(...lim);
    lines.push('');
  }
  lines.push(...body);
  lines.push('## Machine, versions, commands');
  lines.push('');
  lines.push(
    table(
      ['', ''],
      [
        ['machine', `${m.cpu}; ${m.memory}; ${m.os}; load average at start ${m.load}`],
        ['weft', `commit: ${perSection(res, 'weft', m.weft)}`],
        [
          'toolchain',
          `Node ${m.node}; ${m.rustc}; wrangler ${m.wrangler}; esbuild ${m.esbuild}; playwright-core ${m.playwright}${S.client ? `; Chromium ${S.client.browser}` : ''}`,
        ],
        [
          'peers',
          Object.entries(m.peers)
            .map(([k, v]) => `${k} ${v}`)
            .join(', '),
        ],
        ['runs', `per figure, after one warm-up: ${perSection(res, 'runs', res.runs)}`],
      ],
    ),
  );
  lines.push('');
  lines.push('Commands:');
  lines.push('');
  for (const c of res.commands) lines.push(`- ${c}`);
  lines.push('');
  lines.push(
    'Raw results of the last run: tests/bench/.out/results.json (not committed). `node tests/bench/run.mjs --report-only` rewrites this file from them.',
  );
  lines.push('');

  const tbl = ['weft bench — targets', ...targets.map(([t, v, ok]) => `  ${ok.replace(/\*/g, '').padEnd(8)} ${t}: ${v}`)].join('\n');
  return { markdown: `${lines.join('\n')}\n`, table: `${tbl}\n\n${body.filter((l) => l.startsWith('|') || l.startsWith('#')).join('\n')}` };
}

// ---- --merge without the previous raw results --------------------------------------------------

/** Each section: its number in the report, its rows in the targets table, its "what limits" lines. */
const PARTS = {
  client: { n: 1, target: /^\| Client:/, limit: /^- \*\*Client/ },
  bundle: { n: 2, target: /^\| Bundle:/, limit: /^- \*\*(SDK bundle|One-dialect apps|Worker upload)/ },
  server: { n: 3, target: /^\| Server:/, limit: /^- \*\*Server/ },
  native: { n: 4, target: null, limit: null },
  storage: { n: 5, target: /^\| Storage:/, limit: /^- \*\*Storage/ },
  mcp: { n: 6, target: /^\| MCP:/, limit: null },
  remote: { n: 7, target: /^\| Remote agent:/, limit: null },
};

/** A report cut into its parts: preamble, targets heading and rows, limits, sections by number, the rest. */
function parseReport(md) {
  const lines = md.replace(/\n$/, '').split('\n');
  const at = (re, from = 0) => {
    for (let i = from; i < lines.length; i++) if (re.test(lines[i])) return i;
    return -1;
  };
  const targets = at(/^## Targets/);
  const first = at(/^## \d+\. /);
  const machine = at(/^## Machine/);
  if (targets < 0 || first < 0 || machine < 0) return null;
  const head = lines.slice(targets, first);
  const rows = head.filter((l) => l.startsWith('| ') && !/^\| target \|/.test(l));
  const limits = head.filter((l) => l.startsWith('- **'));
  const sections = new Map();
  for (let i = first; i < machine;) {
    const j = at(/^## /, i + 1);
    const end = j < 0 || j > machine ? machine : j;
    sections.set(Number(lines[i].match(/^## (\d+)\./)?.[1]), lines.slice(i, end));
    i = end;
  }
  return { preamble: lines.slice(0, targets), heading: lines[targets], rows, limits, sections, machine: lines.slice(machine) };
}

/**
 * `--merge` when the previous raw results are gone (they are not committed): the report as it
 * was, with the sections in `fresh` for `owned` (section keys) put in place of theirs — their
 * blocks, their rows of the targets table, their "what limits" lines — and this run's commands
 * added. What belongs to the other sections is kept word for word.
 */
export function mergeReports(old, fresh, owned, note) {
  const o = parseReport(old);
  const f = parseReport(fresh);
  if (!o || !f) return fresh;
  const mine = owned.map((k) => PARTS[k]).filter(Boolean);
  const ownedBy = (l, key) => mine.some((p) => p[key]?.test(l));
  const order = (l, key) => Object.values(PARTS).findIndex((p) => p[key]?.test(l));
  const pick = (key) =>
    [...o[key === 'target' ? 'rows' : 'limits'].filter((l) => !ownedBy(l, key)), ...f[key === 'target' ? 'rows' : 'limits'].filter((l) => ownedBy(l, key))]
      .map((l, i) => [l, i])
      .sort((a, b) => order(a[0], key) - order(b[0], key) || a[1] - b[1])
      .map(([l]) => l);
  const rows = pick('target');
  const limits = pick('limit');
  const sections = new Map(o.sections);
  for (const p of mine) {
    if (f.sections.has(p.n)) sections.set(p.n, f.sections.get(p.n));
    else sections.delete(p.n);
  }
  // The note of an earlier merge gives way to this one's.
  const out = o.preamble.filter(
    (l, i, a) => !l.startsWith('Sections re-measured since by') && !(l === '' && a[i + 1]?.startsWith('Sections re-measured since by')),
  );
  if (note) out.splice(out.findIndex((l) => l.startsWith('Written by')) + 1, 0, '', note);
  out.push(f.heading, '', '| target | measured |  |', '|---|---|---|', ...rows, '');
  if (limits.length) out.push('What limits the figures that miss (from the profiles in the sections below):', '', ...limits, '');
  for (const n of [...sections.keys()].sort((a, b) => a - b)) out.push(...sections.get(n));
  // The machine and commands of the report as it was, and this run's commands after them.
  const machine = [...o.machine];
  const known = new Set(machine.filter((l) => l.startsWith('- ')));
  const newCommands = f.machine.filter((l) => l.startsWith('- ') && !known.has(l));
  const lastCommand = machine.map((l) => l.startsWith('- ')).lastIndexOf(true);
  if (lastCommand >= 0) machine.splice(lastCommand + 1, 0, ...newCommands);
  out.push(...machine);
  return `${out.join('\n')}\n`;
}
