// The page of the client benchmark (tests/bench/client.mjs drives it through playwright-core).
// Bundled by esbuild with the peers as published on npm; weft-sdk is loaded at run time from
// /sdk/ (the package as built), as a web app would.
//
// One dataset = one synthetic assistant stream, encoded by weft's own encoders in every dialect
// (/data/<set>/<dialect>.jsonl, one frame a line, runs = messages). From the loom frames the
// page derives the same stream as AI SDK UI-message-stream chunks (objects, and SSE text as the
// AI SDK's server sends it), and as Cloudflare Agents `cf_agent_use_chat_response` frames.
// Every contestant consumes its form of the stream to a complete transcript; `measure` returns
// the elapsed milliseconds and a summary of what it built, so the runner can check they agree.
// AG-UI: weft's encoder's own AG-UI socket frames (agui.jsonl), and the same events as the
// server-sent events of `POST /agui` (the frames without weft's fields, as the server sends
// them), taken by `WeftAgent` (weft-sdk/agui, bundled from pkg/) and `@ag-ui/client`'s
// `HttpAgent`.

import { HttpAgent } from '@ag-ui/client';
import { Chat } from '@ai-sdk/react';
import { WebSocketChatTransport } from 'agents/chat/transport';
import { DefaultChatTransport, readUIMessageStream } from 'ai';

import { WeftAgent } from '../../../pkg/agui.mjs';

const sets = new Map();
let weft;
let weftAi;

const now = () => performance.now();
const gc = () => {
  if (typeof globalThis.gc === 'function') globalThis.gc();
};

async function init(sdk = '/sdk/') {
  weft = await import(`${sdk}index.mjs`);
  await weft.default();
  weftAi = await import(`${sdk}ai.mjs`);
  return { sdk: true };
}

function lines(text) {
  const out = text.split('\n');
  if (out.length && out[out.length - 1] === '') out.pop();
  return out;
}

// loom frames → AI SDK UI message chunks, one array per message (run).
function uiChunks(loomFrames) {
  const messages = [];
  let chunks = null;
  let textId = null;
  let n = 0;
  const closeText = () => {
    if (textId) chunks.push({ type: 'text-end', id: textId });
    textId = null;
  };
  for (const frame of loomFrames) {
    const f = JSON.parse(frame);
    if (f.type === 'run_end') {
      closeText();
      chunks.push({ type: 'finish', finishReason: 'stop' });
      messages.push(chunks);
      chunks = null;
      continue;
    }
    const ev = f.event;
    if (!ev) continue;
    switch (ev.type) {
      case 'run_start':
        chunks = [{ type: 'start', messageId: `msg-${ev.run_id}` }];
        break;
      case 'node_enter':
        if (ev.id === 'think') chunks.push({ type: 'start-step' });
        break;
      case 'message_chunk':
        if (!textId) {
          textId = `txt-${n++}`;
          chunks.push({ type: 'text-start', id: textId });
        }
        chunks.push({ type: 'text-delta', id: textId, delta: ev.content });
        break;
      case 'tool_call_chunk':
        closeText();
        if (ev.arguments_delta === '') chunks.push({ type: 'tool-input-start', toolCallId: ev.call_id, toolName: ev.name });
        else chunks.push({ type: 'tool-input-delta', toolCallId: ev.call_id, inputTextDelta: ev.arguments_delta });
        break;
      case 'tool_call':
        chunks.push({ type: 'tool-input-available', toolCallId: ev.call_id, toolName: ev.name, input: ev.arguments });
        break;
      case 'tool_end':
        chunks.push({ type: 'tool-output-available', toolCallId: ev.call_id, output: ev.result });
        break;
      case 'node_exit':
        if (ev.id === 'act') chunks.push({ type: 'finish-step' });
        break;
      default:
        break;
    }
  }
  return messages;
}

/** The SSE body the AI SDK's `toUIMessageStreamResponse` sends for one message, as bytes. */
function sseBytes(chunks) {
  let text = '';
  for (const c of chunks) text += `data: ${JSON.stringify(c)}\n\n`;
  text += 'data: [DONE]\n\n';
  return new TextEncoder().encode(text);
}

const SSE_PIECE = 16 * 1024;

async function load(name, dialects) {
  const set = { frames: {}, bytes: {} };
  for (const d of dialects) {
    const text = await (await fetch(`/data/${name}/${d}.jsonl`)).text();
    set.frames[d] = lines(text);
    set.bytes[d] = text.length - set.frames[d].length;
  }
  set.ui = uiChunks(set.frames.loom);
  set.sse = set.ui.map(sseBytes);
  set.uiChunkCount = set.ui.reduce((a, m) => a + m.length, 0);
  set.sseBytes = set.sse.reduce((a, b) => a + b.length, 0);
  set.cfStrings = set.ui.map((m) => m.map((c) => JSON.stringify(c)));
  set.weftRuns = loomRuns(set.frames.loom);
  if (set.frames.agui) {
    set.agui = aguiRuns(set.frames.agui);
    set.aguiEvents = set.frames.agui.length;
    set.aguiSseBytes = set.agui.reduce((a, r) => a + r.segments.reduce((b, s) => b + s.sse.reduce((c, x) => c + x.length, 0), 0), 0);
  }
  sets.set(name, set);
  gc();
  return {
    frames: Object.fromEntries(dialects.map((d) => [d, set.frames[d].length])),
    bytes: set.bytes,
    messages: set.ui.length,
    uiChunks: set.uiChunkCount,
    sseBytes: set.sseBytes,
    aguiRuns: set.agui?.reduce((a, r) => a + r.segments.length, 0),
    aguiSseBytes: set.aguiSseBytes,
  };
}

function drop(name) {
  sets.delete(name);
  gc();
}

// ---- summaries: what each contestant built ------------------------------------------------

function summarizeWeft(t) {
  let text = 0;
  for (const m of t.messages) if (m.role === 'assistant') text += m.text.length;
  let parsed = 0;
  let args = 0;
  for (const c of t.tool_calls) {
    if (c.arguments !== null && typeof c.arguments === 'object') parsed++;
    args += c.arguments_text.length;
  }
  return { text, toolCalls: t.tool_calls.length, parsedArgs: parsed, argsText: args, messages: t.messages.length };
}

function summarizeUi(messages) {
  let text = 0;
  let calls = 0;
  let parsed = 0;
  let assistant = 0;
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    assistant++;
    for (const p of m.parts) {
      if (p.type === 'text') text += p.text.length;
      else if (p.type.startsWith('tool-') || p.type === 'dynamic-tool') {
        calls++;
        if (p.input && typeof p.input === 'object') parsed++;
      }
    }
  }
  return { text, toolCalls: calls, parsedArgs: parsed, messages: assistant };
}

// ---- contestants -----------------------------------------------------------------------------

/** The floor: JSON.parse of every frame, text and arguments appended to strings. */
function floor(dialect, frames) {
  let text = '';
  const args = new Map();
  const add = (id, s) => args.set(id, (args.get(id) ?? '') + s);
  const t0 = now();
  for (const frame of frames) {
    const f = JSON.parse(frame);
    switch (dialect) {
      case 'loom': {
        const ev = f.event;
        if (!ev) break;
        if (ev.type === 'message_chunk') text += ev.content;
        else if (ev.type === 'tool_call_chunk') add(ev.call_id, ev.arguments_delta);
        break;
      }
      case 'cueso':
        if (f.type === 'content_delta') text += f.content;
        else if (f.type === 'tool_call_delta' && f.tool_call.input_json) add(f.tool_call.id, f.tool_call.input_json);
        break;
      case 'agentloop': {
        const p = f.payload;
        if (f.type !== 'response_item' || !p) break;
        if (p.type === 'message' && p.role === 'assistant') for (const c of p.content) text += c.text;
        else if (p.type === 'function_call') add(p.call_id, p.arguments);
        break;
      }
      case 'agentchat':
        if (f.type === 'agent_message') text += f.message;
        else if (f.type === 'tool_call') add(f.call_id, f.tool_args);
        break;
      default:
        throw new Error(`floor: unknown dialect ${dialect}`);
    }
  }
  const ms = now() - t0;
  let argsText = 0;
  for (const v of args.values()) argsText += v.length;
  return { ms, units: frames.length, summary: { text: text.length, toolCalls: args.size, argsText } };
}

function weftPush(dialect, frames) {
  const t0 = now();
  const r = new weft.Reassembler(dialect);
  for (const f of frames) r.push(f);
  const t = r.transcript();
  const ms = now() - t0;
  r.free();
  return { ms, units: frames.length, summary: summarizeWeft(t) };
}

const BATCH = 1000;

function weftPushMany(dialect, frames) {
  const t0 = now();
  const r = new weft.Reassembler(dialect);
  for (let i = 0; i < frames.length; i += BATCH) r.pushMany(frames.slice(i, i + BATCH));
  const t = r.transcript();
  const ms = now() - t0;
  r.free();
  return { ms, units: frames.length, summary: summarizeWeft(t) };
}

function objectStream(chunks) {
  let i = 0;
  return new ReadableStream({
    pull(c) {
      if (i < chunks.length) c.enqueue(chunks[i++]);
      else c.close();
    },
  });
}

function byteStream(bytes) {
  let i = 0;
  return new ReadableStream({
    pull(c) {
      if (i < bytes.length) {
        c.enqueue(bytes.subarray(i, i + SSE_PIECE));
        i += SSE_PIECE;
      } else c.close();
    },
  });
}

async function drain(stream) {
  let last;
  for await (const m of readUIMessageStream({
    stream,
    onError: (e) => {
      throw e;
    },
  }))
    last = m;
  return last;
}

/** AI SDK `readUIMessageStream` on UI message chunk objects, one stream per message. */
async function aiObjects(set) {
  const out = [];
  const t0 = now();
  for (const chunks of set.ui) out.push(await drain(objectStream(chunks)));
  const ms = now() - t0;
  return { ms, units: set.uiChunkCount, summary: summarizeUi(out) };
}

/** The same from SSE bytes, parsed as the AI SDK's DefaultChatTransport does. */
async function aiSse(set) {
  const transport = new DefaultChatTransport();
  const out = [];
  const t0 = now();
  for (const bytes of set.sse) out.push(await drain(transport.processResponseStream(byteStream(bytes))));
  const ms = now() - t0;
  return { ms, units: set.uiChunkCount, summary: summarizeUi(out) };
}

/**
 * Dispatches each of `frames` into `socket` as a `message` event in a task of its own (a
 * `MessageChannel` message each), as a socket delivers them: what a transport does at the end
 * of a task (or what `Chat` does on the microtasks after it) happens once per frame, as it
 * would on a live stream. Resolves after the last one's task.
 */
function feed(socket, frames) {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    let i = 0;
    channel.port1.onmessage = function step() {
      if (i === frames.length) {
        channel.port1.close();
        return resolve(undefined);
      }
      socket.dispatchEvent(new MessageEvent('message', { data: frames[i++] }));
      channel.port2.postMessage(0);
    };
    channel.port2.postMessage(0);
  });
}

/** The paced rows: a frame every `PACE_MS`, as a fast model streams, over the first `PACED_RUNS` runs. */
const PACE_MS = 2;
const PACED_RUNS = 4;

/**
 * The CPU time of the page's tasks while a paced stream plays, not the wall-clock time (mostly
 * waiting for the next frame): each task that starts work (a frame's task, and every timer's,
 * the clients' own timers included) opens a busy span if none is open, and a `MessageChannel`
 * message posted then closes it — it runs after that task, its microtasks (where `Chat` does
 * its work) and whatever tasks were queued before it, so the spans cover all the page did and
 * nothing is counted twice.
 */
class BusyMeter {
  constructor() {
    this.ms = 0;
    this.from = -1;
    this.channel = new MessageChannel();
    this.channel.port1.onmessage = () => {
      this.ms += now() - this.from;
      this.from = -1;
    };
  }
  enter() {
    if (this.from >= 0) return;
    this.from = now();
    this.channel.port2.postMessage(0);
  }
  /** Every timer the page sets while `f` runs starts a busy span when it fires. */
  async timing(f) {
    const real = globalThis.setTimeout;
    const meter = this;
    globalThis.setTimeout = function setTimeout(handler, ms, ...args) {
      return real(() => {
        meter.enter();
        if (typeof handler === 'function') handler(...args);
      }, ms);
    };
    try {
      return await f();
    } finally {
      globalThis.setTimeout = real;
    }
  }
  /** Resolves once the span open now (if any) has closed. */
  settled() {
    return new Promise((resolve) => {
      const check = () => (this.from < 0 ? resolve(undefined) : realTimeout(check, 0));
      check();
    });
  }
  close() {
    this.channel.port1.close();
  }
}

const realTimeout = globalThis.setTimeout.bind(globalThis);

/**
 * Dispatches each of `frames` into `socket` in a task of its own, a frame every `PACE_MS` from
 * the first (as a fast model streams), each task a busy span of `meter`. Resolves after the
 * last one's task.
 */
function feedPaced(socket, frames, meter) {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    const t0 = now();
    let i = 0;
    channel.port1.onmessage = function paced() {
      if (i === frames.length) {
        channel.port1.close();
        return resolve(undefined);
      }
      meter.enter();
      socket.dispatchEvent(new MessageEvent('message', { data: frames[i++] }));
      // The wait is the page's, not a client's: a timer the meter does not see.
      realTimeout(() => channel.port2.postMessage(0), Math.max(0, t0 + i * PACE_MS - now()));
    };
    channel.port2.postMessage(0);
  });
}

/**
 * What a task per frame costs by itself: the loom frames fed (`feed`) to a socket whose listener
 * does nothing, per message as the socket rows are. Part of each of those rows, for every
 * client alike.
 */
async function taskFloor(set, { paced = false } = {}) {
  const socket = new EventTarget();
  let seen = 0;
  socket.addEventListener('message', () => {
    seen++;
  });
  let ms = 0;
  if (paced) {
    // The paced rows' floor: their frames at their pace, the same spans measured.
    const meter = new BusyMeter();
    for (const { segments } of set.weftRuns.slice(0, PACED_RUNS)) {
      for (const seg of segments) {
        await feedPaced(socket, seg, meter);
        await meter.settled();
      }
    }
    meter.close();
    return { ms: meter.ms, units: seen, summary: {} };
  }
  for (const { segments } of set.weftRuns) {
    const t0 = now();
    for (const seg of segments) await feed(socket, seg);
    ms += now() - t0;
  }
  return { ms, units: seen, summary: {} };
}

/** A stand-in for the socket `useAgent` gives `useAgentChat`: frames are dispatched into it. */
class Socket extends EventTarget {
  constructor() {
    super();
    this.onSend = null;
  }
  send(text) {
    this.onSend?.(JSON.parse(text));
    return true;
  }
}

/**
 * Cloudflare Agents' client: the `WebSocketChatTransport` that `useAgentChat` (agents/chat/react,
 * re-exported by @cloudflare/ai-chat/react) creates, under the AI SDK `Chat` that its `useChat`
 * runs — one conversation, one user message per assistant message, the server's frames
 * dispatched as socket messages, each in a task of its own (`feed`). Timed from the first frame to
 * the settled message, per message.
 */
async function cfAgents(set, { paced = false } = {}) {
  const socket = new Socket();
  const transport = new WebSocketChatTransport({ agent: socket, activeRequestIds: new Set() });
  const chat = new Chat({ id: 'bench', transport });
  const meter = paced ? new BusyMeter() : null;
  let ms = 0;
  let units = 0;
  const messages = paced ? Math.min(PACED_RUNS, set.cfStrings.length) : set.cfStrings.length;
  for (let m = 0; m < messages; m++) {
    const sent = new Promise((resolve) => {
      socket.onSend = resolve;
    });
    const done = chat.sendMessage({ text: `message ${m}` });
    const request = await sent;
    // The server's frames for this request (built before the clock starts).
    const bodies = set.cfStrings[m];
    const frames = new Array(bodies.length + 1);
    for (let i = 0; i < bodies.length; i++) {
      frames[i] = JSON.stringify({ body: bodies[i], done: false, id: request.id, seq: i, type: 'cf_agent_use_chat_response' });
    }
    frames[bodies.length] = JSON.stringify({ body: '', done: true, id: request.id, type: 'cf_agent_use_chat_response' });
    if (meter) {
      await meter.timing(async () => {
        await feedPaced(socket, frames, meter);
        await done;
        await meter.settled();
      });
    } else {
      const t0 = now();
      await feed(socket, frames);
      await done;
      ms += now() - t0;
    }
    units += frames.length;
  }
  if (meter) {
    ms = meter.ms;
    meter.close();
  }
  if (chat.error) throw chat.error;
  return { ms, units, summary: summarizeUi(chat.messages) };
}

// ---- weft's Client over a stand-in socket -------------------------------------------------------

/**
 * The loom frames cut into runs (consecutive frames naming the same run), in order, each cut
 * after every approval request: the frames after one wait for the page's answer.
 */
function loomRuns(frames) {
  const runs = [];
  let cur = null;
  let cut = false;
  for (const frame of frames) {
    const id = JSON.parse(frame).id;
    if (!cur || (id !== undefined && id !== cur.id)) {
      cur = { id, segments: [[]] };
      runs.push(cur);
    } else if (cut) cur.segments.push([]);
    cur.segments.at(-1).push(frame);
    cut = frame.includes('"type":"tool_approval"');
  }
  return runs;
}

/**
 * The stand-in weft server: the socket the client opened, who hears what it sends, and the run
 * id the next run gets.
 */
const weftServer = { socket: null, onSend: null, runId: null };

/**
 * While a weft contestant runs, `crypto.randomUUID()` (where weft's `Client` takes a new run's
 * id) hands out `weftServer.runId` once when set: the client then names each run as the dataset
 * does, and the frames reach it byte for byte as generated (a weft server names a run by the id
 * its client chose). Returns the function that puts the real one back.
 */
function dealRunIds() {
  const real = crypto.randomUUID;
  crypto.randomUUID = function randomUUID() {
    const id = weftServer.runId;
    weftServer.runId = null;
    return id ?? real.call(crypto);
  };
  return () => {
    delete crypto.randomUUID;
  };
}

/**
 * A stand-in for the browser's `WebSocket`, put on `globalThis` while a weft `Client` connects
 * (the SDK's glue calls `new WebSocket(url, protocols)`): it opens on the next task selecting
 * the `weft.<dialect>` subprotocol offered, as weft's Worker does, hands what the client sends to
 * the page, and delivers frames the page dispatches as `message` events to the client's
 * `onmessage` — the path a socket's frames take, at full speed and with no server.
 */
class WeftSocket extends EventTarget {
  constructor(url, protocols) {
    super();
    this.url = url;
    this.protocol = '';
    this.readyState = 0;
    this.binaryType = 'blob';
    this.onopen = null;
    this.onmessage = null;
    this.onclose = null;
    this.onerror = null;
    this.addEventListener('message', function deliver(e) {
      this.onmessage?.(e);
    });
    const offered = Array.from(protocols ?? []);
    weftServer.socket = this;
    setTimeout(() => {
      this.readyState = 1;
      this.protocol = offered.find((p) => p.startsWith('weft.') && !p.startsWith('weft.token.')) ?? '';
      this.onopen?.(new Event('open'));
    }, 0);
  }
  send(text) {
    weftServer.onSend?.(JSON.parse(text));
  }
  close() {
    this.readyState = 3;
  }
}

/**
 * A weft `Client` (loom, as an app would make it; heartbeats and reconnects off, since nothing
 * answers a ping here) connected to a new stand-in socket.
 */
async function weftClient() {
  const Real = globalThis.WebSocket;
  globalThis.WebSocket = WeftSocket;
  try {
    const client = new weft.Client({ url: 'ws://weft.bench.invalid', dialect: 'loom', sessionId: 'sess-bench', reconnect: false, heartbeatIntervalMs: 0 });
    await client.connect();
    return { client, socket: weftServer.socket };
  } finally {
    globalThis.WebSocket = Real;
  }
}

/**
 * weft's own client, the baseline of the useChat contestant: the same `Client` on the same
 * stand-in socket and frames, each run started by `client.run()` and its events taken by a
 * `run.onEvent` listener (what `WeftChatTransport` listens with), without the AI SDK. Timed
 * from the first frame (each in a task of its own, `feed`) to `run.result`, per message; approvals (--quick only) are answered yes
 * by an `onApproval` callback, inside the time. The transcript is the client's own.
 */
async function weftClientRuns(set) {
  const { client, socket } = await weftClient();
  const offApproval = client.onApproval(() => ({ review: 'yes' }));
  let ms = 0;
  let units = 0;
  let events = 0;
  const restore = dealRunIds();
  try {
    for (let m = 0; m < set.weftRuns.length; m++) {
      const { id, segments } = set.weftRuns[m];
      const sent = nextSend('run');
      weftServer.runId = id;
      const run = client.run({ message: `message ${m}`, agent: 'react', threadId: 'sess-bench' });
      run.onEvent(() => {
        events++;
      });
      if ((await sent).id !== id) throw new Error(`weft-client: the client named run ${m} otherwise than ${id}`);
      const t0 = now();
      for (let s = 0; s < segments.length; s++) {
        const answered = s + 1 < segments.length ? nextSend('approval_response') : null;
        await feed(socket, segments[s]);
        if (answered) await answered;
      }
      await run.result;
      ms += now() - t0;
      units += segments.reduce((a, x) => a + x.length, 0);
    }
    const t = client.transcript();
    if (!events) throw new Error('weft-client: no events reached run.onEvent');
    return { ms, units, summary: summarizeWeft(t) };
  } finally {
    restore();
    weftServer.onSend = null;
    weftServer.runId = null;
    offApproval();
    client.close();
    client.free?.();
  }
}

/** The next frame the client sends of one of these types. */
function nextSend(...types) {
  return new Promise((resolve) => {
    weftServer.onSend = (msg) => {
      if (!types.includes(msg.type)) return;
      weftServer.onSend = null;
      resolve(msg);
    };
  });
}

/** The next time `chat` is ready again (or failed). */
function chatSettled(chat) {
  return new Promise((resolve) => {
    const off = chat['~registerStatusCallback'](() => {
      if (chat.status === 'ready' || chat.status === 'error') {
        off();
        resolve();
      }
    });
  });
}

/**
 * `useChat` over weft: the AI SDK `Chat` (what `@ai-sdk/react`'s `useChat` runs, without React
 * rendering) with weft-sdk/ai's `WeftChatTransport` over a real weft `Client` (wasm), connected
 * to the stand-in socket. One conversation, one user message per assistant message, as the CF
 * Agents contestant; each run's loom frames dispatched as socket messages, each in a task of its
 * own (`feed`), or with `burst` all in one task, as a resume's replay comes (the client names the
 * run as the stream does: `dealRunIds`). Timed from the first frame to the settled message, per message. An
 * approval (only in the golden fixtures of --quick) is answered yes as a page would, through
 * `addToolApprovalResponse`, outside the time; the frames after it are timed to the next settle.
 */
async function weftChat(set, { burst = false, paced = false, deltaWindowMs } = {}) {
  const { client, socket } = await weftClient();
  const transport = new weftAi.WeftChatTransport({ client, deltaWindowMs });
  const chat = new Chat({ id: 'sess-bench', transport, sendAutomaticallyWhen: transport.sendAutomaticallyWhen });
  const meter = paced ? new BusyMeter() : null;
  // A live stream: a task per frame (paced: a frame every PACE_MS, its CPU time measured); a
  // resume's replay: the frames in one burst, one task.
  const dispatch = burst
    ? async (frames) => {
        for (const data of frames) socket.dispatchEvent(new MessageEvent('message', { data }));
      }
    : meter
      ? (frames) => feedPaced(socket, frames, meter)
      : (frames) => feed(socket, frames);
  let ms = 0;
  let units = 0;
  const restore = dealRunIds();
  const runs = paced ? Math.min(PACED_RUNS, set.weftRuns.length) : set.weftRuns.length;
  try {
    for (let m = 0; m < runs; m++) {
      const { id, segments } = set.weftRuns[m];
      const sent = nextSend('run');
      weftServer.runId = id;
      const done = chat.sendMessage({ text: `message ${m}` });
      if ((await sent).id !== id) throw new Error(`weft-ai: the client named run ${m} otherwise than ${id}`);
      let t0 = now();
      if (meter) {
        await meter.timing(async () => {
          await dispatch(segments[0]);
          await done;
          await meter.settled();
        });
      } else {
        await dispatch(segments[0]);
        await done;
      }
      ms += now() - t0;
      for (let s = 1; s < segments.length; s++) {
        const asked = chat.lastMessage.parts.filter((p) => p.state === 'approval-requested');
        if (!asked.length) throw new Error(`weft-ai: message ${m} stopped with nothing to approve`);
        const settled = chatSettled(chat);
        const answered = nextSend('approval_response');
        for (const p of asked) chat.addToolApprovalResponse({ id: p.approval.id, approved: true });
        await answered;
        t0 = now();
        await dispatch(segments[s]);
        await settled;
        ms += now() - t0;
      }
      units += segments.reduce((a, x) => a + x.length, 0);
    }
    if (meter) ms = meter.ms;
    if (chat.error) throw chat.error;
    return { ms, units, summary: summarizeUi(chat.messages) };
  } finally {
    meter?.close();
    restore();
    weftServer.onSend = null;
    weftServer.runId = null;
    transport.close();
    client.close();
    client.free?.();
  }
}

// ---- AG-UI: WeftAgent over weft's socket against HttpAgent over server-sent events ------------

/** What weft puts beside an AG-UI event's own fields on its socket (pkg/agui.mjs strips them). */
const WEFT_FIELDS = ['run_id', 'event_id', 'user_message', 'agent', 'tool', 'arguments', 'is_error', 'last_usage', 'total_usage', 'request_id', 'details'];

/**
 * weft's AG-UI socket frames cut into weft runs (by `run_id`), each into its AG-UI runs: a run
 * that asks for an approval finishes with an interrupt outcome, and the next AG-UI run (the
 * input carrying `resume`) carries it on. Each AG-UI run also as the SSE events `POST /agui`
 * sends for it, one `Uint8Array` per event.
 */
function aguiRuns(frames) {
  const enc = new TextEncoder();
  const runs = [];
  let cur = null;
  let seg = null;
  for (const frame of frames) {
    const f = JSON.parse(frame);
    if (!cur || f.run_id !== cur.id) {
      cur = { id: f.run_id, segments: [] };
      runs.push(cur);
      seg = null;
    }
    if (!seg) {
      seg = { frames: [], sse: [], interrupts: [] };
      cur.segments.push(seg);
    }
    seg.frames.push(frame);
    const ev = { ...f };
    for (const k of WEFT_FIELDS) delete ev[k];
    seg.sse.push(enc.encode(`data: ${JSON.stringify(ev)}\n\n`));
    if (f.type === 'RUN_FINISHED' || f.type === 'RUN_ERROR') {
      seg.interrupts = f.outcome?.type === 'interrupt' ? f.outcome.interrupts.map((i) => i.id) : [];
      seg = null;
    }
  }
  return runs;
}

/** What an AG-UI agent's messages hold, added into `into`. */
function summarizeAgui(messages, into) {
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    into.messages++;
    if (typeof m.content === 'string') into.text += m.content.length;
    for (const c of m.toolCalls ?? []) {
      into.toolCalls++;
      into.argsText += c.function.arguments.length;
    }
  }
}

/**
 * One AG-UI conversation through `agent`, one user message per weft run, its history cleared
 * between them (what an app's agent accumulates is not this bench's subject, and it would be
 * the same for both). Each AG-UI run is `runAgent` (with `resume` approving the interrupts of
 * the one before, if any), answered by `deliver(segment)` once the agent has sent its input;
 * timed from the first event delivered to `runAgent`'s end.
 */
async function aguiConversation(set, agent, sent, deliver) {
  const summary = { text: 0, toolCalls: 0, argsText: 0, messages: 0 };
  let ms = 0;
  let units = 0;
  let runs = 0;
  for (let m = 0; m < set.agui.length; m++) {
    const { id, segments } = set.agui[m];
    agent.setMessages([{ id: `user-${m}`, role: 'user', content: `message ${m}` }]);
    for (let s = 0; s < segments.length; s++) {
      const asked = s > 0 ? segments[s - 1].interrupts : [];
      const params = asked.length
        ? { runId: `${id}-${s}`, resume: asked.map((interruptId) => ({ interruptId, status: 'resolved', payload: { approved: true } })) }
        : { runId: id };
      const input = sent();
      const done = agent.runAgent(params);
      await input;
      const t0 = now();
      await deliver(segments[s]);
      await done;
      ms += now() - t0;
      units += segments[s].frames.length;
      runs++;
    }
    summarizeAgui(agent.messages, summary);
  }
  return { ms, units, runs, summary };
}

/**
 * `WeftAgent` (weft-sdk/agui) on the stand-in socket (`WeftSocket`, through the agent's
 * `WebSocket` option): each AG-UI run's frames dispatched as `message` events, each in a task
 * of its own, once the agent has sent its input.
 */
async function aguiSocket(set) {
  const agent = new WeftAgent({ url: 'ws://weft.bench.invalid/agui', threadId: 'sess-bench', WebSocket: WeftSocket });
  const sent = () =>
    new Promise((resolve) => {
      weftServer.onSend = (msg) => {
        weftServer.onSend = null;
        resolve(msg);
      };
    });
  try {
    return await aguiConversation(set, agent, sent, (seg) => feed(weftServer.socket, seg.frames));
  } finally {
    weftServer.onSend = null;
    agent.close();
  }
}

/**
 * `@ag-ui/client`'s `HttpAgent` with a stand-in `fetch` (its `fetch` option): the response a
 * text/event-stream whose body gets each event's bytes in a task of its own, as a network
 * stream delivers them, parsed by the client's own SSE reader (`transformHttpEventStream`).
 */
async function aguiSse(set) {
  let onFetch = null;
  const agent = new HttpAgent({
    url: 'http://weft.bench.invalid/agui',
    threadId: 'sess-bench',
    fetch: async () => {
      let controller;
      const body = new ReadableStream({
        start(c) {
          controller = c;
        },
      });
      onFetch?.(controller);
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    },
  });
  const sent = () =>
    new Promise((resolve) => {
      onFetch = (c) => {
        onFetch = null;
        resolve(c);
      };
    });
  let controller = null;
  const opened = () => sent().then((c) => (controller = c));
  return aguiConversation(set, agent, opened, async (seg) => {
    await inTasks(seg.sse.length, (i) => controller.enqueue(seg.sse[i]));
    controller.close();
  });
}

/** Calls `step(i)` for i in 0..n, each in a task of its own; resolves after the last one's task. */
function inTasks(n, step) {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    let i = 0;
    channel.port1.onmessage = () => {
      if (i === n) {
        channel.port1.close();
        return resolve(undefined);
      }
      step(i++);
      channel.port2.postMessage(0);
    };
    channel.port2.postMessage(0);
  });
}

async function measure(contestant, name) {
  const set = sets.get(name);
  if (!set) throw new Error(`dataset ${name} is not loaded`);
  gc();
  const [kind, dialect] = contestant.split(':');
  switch (kind) {
    case 'floor':
      return floor(dialect, set.frames[dialect]);
    case 'weft-push':
      return weftPush(dialect, set.frames[dialect]);
    case 'weft-pushMany':
      return weftPushMany(dialect, set.frames[dialect]);
    case 'ai-objects':
      return aiObjects(set);
    case 'ai-sse':
      return aiSse(set);
    case 'cf-agents':
      return cfAgents(set);
    case 'cf-agents-paced':
      return cfAgents(set, { paced: true });
    case 'weft-ai-paced':
      // `weft-ai-paced:<ms>`: that window; without, the transport's default.
      return weftChat(set, { paced: true, deltaWindowMs: dialect === undefined ? undefined : Number(dialect) });
    case 'tasks':
      return taskFloor(set);
    case 'tasks-paced':
      return taskFloor(set, { paced: true });
    case 'weft-client':
      return weftClientRuns(set);
    case 'weft-ai':
      return weftChat(set);
    case 'weft-ai-replay':
      return weftChat(set, { burst: true });
    case 'agui-socket':
      if (!set.agui) throw new Error(`dataset ${name} has no AG-UI frames`);
      return aguiSocket(set);
    case 'agui-sse':
      if (!set.agui) throw new Error(`dataset ${name} has no AG-UI frames`);
      return aguiSse(set);
    default:
      throw new Error(`unknown contestant ${contestant}`);
  }
}

window.bench = { init, load, drop, measure };
window.benchReady = true;
