// Loaded by the test page of browser.test.mjs: the SDK as a web app imports it, plus small
// helpers the tests call through `page.evaluate` (everything they return is plain JSON).
import init, { Client, Reassembler } from '/pkg/index.mjs';

await init();

// A tap on every WebSocket the page opens, to check what went over the wire (the URL, the
// subprotocol, heartbeats, resume frames, replayed frames). It only listens — but for a frame
// `loseNext` names, which it swallows as a network that died unnoticed would: the SDK's own
// handlers see exactly what they would without it.
const wire = [];
const NativeWebSocket = globalThis.WebSocket;
const logs = new WeakMap();
let lose = null;
globalThis.WebSocket = class TappedWebSocket extends NativeWebSocket {
  constructor(url, protocols) {
    super(url, protocols);
    /** @type {{ url: string, offered: string[], protocol: string | null, sent: string[], lost: string[], received: string[], closed: number | null }} */
    const log = { url: String(url), offered: [protocols ?? []].flat(), protocol: null, sent: [], lost: [], received: [], closed: null };
    logs.set(this, log);
    wire.push(log);
    this.addEventListener('open', () => (log.protocol = this.protocol));
    this.addEventListener('message', (e) => log.received.push(typeof e.data === 'string' ? e.data : new TextDecoder().decode(e.data)));
    this.addEventListener('close', (e) => (log.closed = e.code));
  }

  send(data) {
    const log = logs.get(this);
    if (lose?.(String(data))) {
      lose = null;
      log?.lost.push(String(data));
      return;
    }
    log?.sent.push(String(data));
    return super.send(data);
  }
};

/** The next frame any socket sends that `match`es is lost on the way, without an error. */
function loseNext(match) {
  lose = match;
}

const config = { url: '', token: '' };
const clients = new Map();

/**
 * A client of a fresh session (or `options.sessionId`) through the relay, with the suite's
 * token and a quick reconnect; `closeAll` closes it.
 */
function client(dialect, options = {}) {
  const c = new Client({
    url: config.url,
    dialect,
    sessionId: crypto.randomUUID(),
    token: config.token,
    reconnect: { initialDelayMs: 50, maxDelayMs: 400 },
    ...options,
  });
  clients.set(c, dialect);
  return c;
}

/** Closes every client and forgets the sockets tapped so far. */
function closeAll() {
  for (const c of clients.keys()) c.close();
  clients.clear();
  wire.length = 0;
}

/** What the page shows (and the screenshot keeps): one line per run. */
function show(label, outcome, resolved) {
  const li = document.createElement('li');
  li.className = resolved ? 'resolved' : 'rejected';
  const b = document.createElement('b');
  b.textContent = label;
  li.append(b, ` → ${outcome}`);
  document.getElementById('log')?.append(li);
}

/** A thrown value as JSON: whether it is an `Error`, its name, code and message. */
function error(e) {
  return { isError: e instanceof Error, name: e?.name, code: e?.code, message: e?.message ?? String(e) };
}

/** `promise`, or a rejection naming `what` after `ms`. */
function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * Follows a run through every surface the SDK offers: `onText` deltas, `onEvent` events, a
 * `for await` over `events()`, and `result`. Resolves once the run ended and the iterator
 * finished: `{deltas, text, events, iterated, result}` or `{…, error}`.
 * @param {import('weft-sdk').Run} run
 * @param {{ timeoutMs?: number, onDelta?: (delta: string, all: string[]) => unknown, label?: string }} [options]
 */
async function follow(run, { timeoutMs = 20_000, onDelta, label = run.runId } = {}) {
  const deltas = [];
  const events = [];
  run.onText((d) => {
    deltas.push(d);
    onDelta?.(d, deltas);
  });
  run.onEvent((ev) => events.push(ev));
  const iterate = (async () => {
    const seen = [];
    for await (const ev of run.events()) seen.push(ev);
    return seen;
  })();
  const out = { runId: run.runId, deltas, events };
  try {
    out.result = await within(run.result, timeoutMs, `run ${run.runId}`);
  } catch (e) {
    out.error = error(e);
  }
  out.iterated = await within(iterate, 2_000, 'events() after the run ended');
  out.text = deltas.join('');
  out.finished = run.finished;
  show(label, out.error ? `${out.error.code}: ${out.error.message}` : JSON.stringify(out.result.reply), !out.error);
  return out;
}

/** Starts a run of `message` on `c` and follows it (see `follow`). */
function go(c, message, options = {}) {
  return follow(c.run({ message }), { label: `${clients.get(c)} · ${message}`, ...options });
}

/** What the tests call through `page.evaluate` (its type: tests/globals.d.ts). */
export const weft = { Client, Reassembler, config, wire, loseNext, client, closeAll, error, within, follow, go, show };
window.weft = weft;
window.weftReady = true;
