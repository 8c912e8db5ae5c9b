// Section 5 of the bench: what a chat turn costs in Durable Object SQLite storage, weft against
// Cloudflare Agents' AIChatAgent (tests/bench/peers), the same scripted model behind both.
//
//   rows written  what Cloudflare bills (SQLite rows written, index entries included), per turn.
//                 weft: its Worker runs with WEFT_STORAGE_STATS=1 and logs, after every finished
//                 run, `weft-storage session=… run=… rows_written=<since the object started>
//                 bytes=<database size>`; a turn is the difference of two lines of its session.
//                 CF Agents: the peers' `Chat` wraps `ctx.storage.sql.exec` (and the KV API's
//                 put/delete) and answers GET /agents/chat/<name>/bench-storage.
//   bytes stored  the SQLite database size after every turn of one long session (the growth
//                 curve), against the conversation's own text (user + assistant characters); for
//                 weft also after EVENT_RETENTION_HOURS has passed (a second weft Worker with a
//                 retention of seconds: wait past it, then one cheap turn reads the size).
//
// Phases: (1) paced — one session per system, the model streaming "long reply N" a word every
// paceMs, a warm-up turn (it creates the tables) then `turns` measured turns, the systems taking
// turns back to back; (2) the curve — a new session per system, `curveTurns` turns unpaced;
// (3) retention — the same curve on the weft Worker with the short retention, a wait and a cheap
// turn at each checkpoint; and for weft (1b), a new session of `windowTurns` paced turns, its size
// inside the retention window. Then each system's database file (wrangler's --persist-to) is read
// for what its bytes hold, table by table.

import { readdirSync } from 'node:fs';
import { join } from 'node:path';

import { startScriptedLlm } from '../scripted-llm/server.mjs';
import { benchDir, log, root } from './lib/env.mjs';
import { hookLlm, open, startWrangler } from './server.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- weft's log lines ------------------------------------------------------------------------

const LINE = /weft-storage session=(\S+) run=(\S+) rows_written=(\d+) bytes=(\d+)/g;

/** The `weft-storage` lines a weft Worker prints, by run id; `wait(run)` resolves with its line. */
function storageLines() {
  const byRun = new Map();
  const waiting = new Map();
  let tail = '';
  return {
    feed(text) {
      tail += text;
      const cut = tail.lastIndexOf('\n');
      if (cut < 0) return;
      const done = tail.slice(0, cut);
      tail = tail.slice(cut + 1);
      for (const m of done.matchAll(LINE)) {
        const rec = { session: m[1], run: m[2], rowsWritten: Number(m[3]), bytes: Number(m[4]) };
        byRun.set(rec.run, rec);
        waiting.get(rec.run)?.(rec);
      }
    },
    wait(run, timeoutMs = 60_000) {
      if (byRun.has(run)) return Promise.resolve(byRun.get(run));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(run);
          reject(new Error(`no weft-storage line for run ${run} within ${timeoutMs / 1000} s (is WEFT_STORAGE_STATS reaching the Worker?)`));
        }, timeoutMs);
        waiting.set(run, (rec) => {
          clearTimeout(timer);
          waiting.delete(run);
          resolve(rec);
        });
      });
    },
  };
}

// ---- chat clients: one socket, many turns ---------------------------------------------------

/**
 * A weft session on one socket. `turn(message)` sends a run, reads its frames to `run_end`,
 * then waits for the run's `weft-storage` line (the turn's last writes come after `run_end`).
 */
async function weftChat(worker, lines, id) {
  const ws = await open(`${worker.ws}/?session_id=${id}`);
  let current = null;
  ws.on('message', (data) => {
    const f = JSON.parse(data.toString());
    if (!current) return;
    if (f.type === 'error') return current.fail(new Error(`weft ${id}: ${data}`));
    if (f.id !== current.runId) return;
    if (f.type === 'run_stream_event') {
      current.frames++;
      if (f.event?.type === 'message_chunk') current.reply += f.event.content;
    } else if (f.type === 'run_end') {
      current.frames++;
      current.finish();
    }
  });
  let closed = false;
  ws.on('close', () => {
    closed = true;
    current?.fail(new Error(`weft ${id}: socket closed`));
  });
  let n = 0;
  return {
    async turn(message) {
      if (closed) throw new Error(`weft ${id}: socket closed`);
      const runId = `${id}-t${++n}`;
      const t0 = performance.now();
      const done = new Promise((finish, fail) => {
        current = { runId, reply: '', frames: 0, finish, fail };
      });
      ws.send(JSON.stringify({ type: 'run', id: runId, message, agent: 'react' }));
      const timer = setTimeout(() => current.fail(new Error(`weft ${id}: run ${runId} not finished within 10 min`)), 600_000);
      try {
        await done;
      } finally {
        clearTimeout(timer);
      }
      const { reply, frames } = current;
      current = null;
      const rec = await lines.wait(runId);
      return { runId, message, reply, frames, rowsWritten: rec.rowsWritten, bytes: rec.bytes, ms: performance.now() - t0 };
    },
    close() {
      ws.removeAllListeners('close');
      ws.close();
    },
  };
}

/** GET /agents/chat/<name>/bench-storage until it stops moving (the turn's writes have landed). */
async function cfStats(worker, name) {
  const get = async () => {
    const r = await fetch(`${worker.http}/agents/chat/${name}/bench-storage`);
    if (!r.ok) throw new Error(`cf-agents ${name}: bench-storage HTTP ${r.status}: ${await r.text()}`);
    return r.json();
  };
  let last = await get();
  let same = 0;
  const deadline = Date.now() + 30_000;
  while (same < 2 && Date.now() < deadline) {
    await sleep(250);
    const s = await get();
    same = s.rowsWritten === last.rowsWritten && s.bytes === last.bytes ? same + 1 : 0;
    last = s;
  }
  return last;
}

/**
 * A Cloudflare Agents chat on one socket, driven as `useAgentChat` drives it: each turn sends
 * the whole conversation with the new user message (`cf_agent_use_chat_request`); the
 * conversation kept between turns is the agent's own (GET …/get-messages), so nothing the
 * server stored is sent back changed and written again.
 */
async function cfChat(worker, name) {
  const ws = await open(`${worker.ws}/agents/chat/${name}`);
  let current = null;
  ws.on('message', (data) => {
    const f = JSON.parse(data.toString());
    if (!current || f.type !== 'cf_agent_use_chat_response' || f.id !== current.requestId) return;
    current.frames++;
    if (f.error) return current.fail(new Error(`cf-agents ${name}: ${f.body}`));
    if (f.body) {
      const c = JSON.parse(f.body);
      if (c.type === 'text-delta') current.reply += c.delta;
    }
    if (f.done) current.finish();
  });
  let closed = false;
  ws.on('close', () => {
    closed = true;
    current?.fail(new Error(`cf-agents ${name}: socket closed`));
  });
  let messages = [];
  let n = 0;
  return {
    async turn(message) {
      if (closed) throw new Error(`cf-agents ${name}: socket closed`);
      const requestId = `req-${name}-${++n}`;
      const t0 = performance.now();
      const done = new Promise((finish, fail) => {
        current = { requestId, reply: '', frames: 0, finish, fail };
      });
      const user = { id: `u-${name}-${n}`, role: 'user', parts: [{ type: 'text', text: message }] };
      ws.send(
        JSON.stringify({
          id: requestId,
          type: 'cf_agent_use_chat_request',
          init: { method: 'POST', body: JSON.stringify({ messages: [...messages, user], trigger: 'submit-message' }) },
        }),
      );
      const timer = setTimeout(() => current.fail(new Error(`cf-agents ${name}: turn ${n} not finished within 10 min`)), 600_000);
      try {
        await done;
      } finally {
        clearTimeout(timer);
      }
      const { reply, frames } = current;
      current = null;
      const s = await cfStats(worker, name);
      const r = await fetch(`${worker.http}/agents/chat/${name}/get-messages`);
      if (!r.ok) throw new Error(`cf-agents ${name}: get-messages HTTP ${r.status}`);
      messages = await r.json();
      return {
        message,
        reply,
        frames,
        instance: s.instance,
        rowsWritten: s.rowsWritten,
        kvRows: s.kvRows,
        statements: s.statements,
        byStatement: s.byStatement,
        bytes: s.bytes,
        ms: performance.now() - t0,
      };
    },
    stats: () => cfStats(worker, name),
    close() {
      ws.removeAllListeners('close');
      ws.close();
    },
  };
}

// ---- what the bytes hold ----------------------------------------------------------------------

/**
 * Per table of the SQLite file under a wrangler --persist-to folder for which `pick(db)` is
 * true: rows, bytes of content (the sum of every column's length) and pages. Read-only, while
 * the Worker runs.
 */
async function tables(persist, pick) {
  let DatabaseSync;
  try {
    ({ DatabaseSync } = await import('node:sqlite'));
  } catch {
    return null;
  }
  const out = [];
  for (const file of readdirSync(persist, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.sqlite'))) {
    const db = new DatabaseSync(join(persist, file), { readOnly: true });
    try {
      const names = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .all()
        .map((r) => r.name);
      try {
        if (!pick(db)) continue;
      } catch {
        continue;
      }
      const info = {
        pageSize: db.prepare('PRAGMA page_size').get().page_size,
        pages: db.prepare('PRAGMA page_count').get().page_count,
        freePages: db.prepare('PRAGMA freelist_count').get().freelist_count,
        tables: [],
      };
      for (const t of names) {
        try {
          const cols = db
            .prepare(`PRAGMA table_info("${t}")`)
            .all()
            .map((c) => `COALESCE(LENGTH("${c.name}"), 0)`);
          const r = db.prepare(`SELECT COUNT(*) AS n, ${cols.length ? `SUM(${cols.join(' + ')})` : '0'} AS bytes FROM "${t}"`).get();
          const sql = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(t)?.sql ?? '';
          info.tables.push({ table: t, rows: r.n, bytes: r.bytes ?? 0, withoutRowid: /WITHOUT\s+ROWID/i.test(sql) });
        } catch {
          info.tables.push({ table: t, rows: null, bytes: null });
        }
      }
      try {
        // Pages per table and index, where the SQLite of this Node has the dbstat table.
        info.pagesBy = db
          .prepare(
            "SELECT name, COUNT(*) AS pages, SUM(pagetype = 'overflow') AS overflow, SUM(unused) AS unused FROM dbstat GROUP BY name ORDER BY pages DESC",
          )
          .all()
          .map((r) => ({ ...r }));
      } catch {
        /* no dbstat */
      }
      return info;
    } finally {
      db.close();
    }
  }
  return null;
}

/** Pickers for `tables`: the weft session that ran `run`; the CF chat that stored `message`. */
const weftFile = (run) => (db) => db.prepare('SELECT 1 FROM runs WHERE run_id = ?').get(run);
const cfFile = (message) => (db) => db.prepare('SELECT 1 FROM cf_agents_session_messages WHERE id = ?').get(message);

/**
 * weft: the event-log rows of each of `runs` (a Map run → rows), from the database file: rows of
 * `event_batches` (keyed by the run's `log` number, shifted 32 bits, and an event id) and of
 * `event_log` (the layout before it), where each exists.
 */
async function eventRows(persist, runs) {
  let DatabaseSync;
  try {
    ({ DatabaseSync } = await import('node:sqlite'));
  } catch {
    return null;
  }
  const out = new Map();
  for (const file of readdirSync(persist, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.sqlite'))) {
    const db = new DatabaseSync(join(persist, file), { readOnly: true });
    try {
      const has = (t) => db.prepare('SELECT 1 FROM sqlite_master WHERE name = ?').get(t);
      if (!has('runs')) continue;
      for (const run of runs) {
        let n = has('event_log') ? db.prepare('SELECT COUNT(*) AS n FROM event_log WHERE run_id = ?').get(run).n : 0;
        const log = has('event_batches') ? db.prepare('SELECT log FROM runs WHERE run_id = ?').get(run)?.log : null;
        if (log != null) n += db.prepare('SELECT COUNT(*) AS n FROM event_batches WHERE key >= ? * 4294967296 AND key < (? + 1) * 4294967296').get(log, log).n;
        if (n) out.set(run, n);
      }
    } finally {
      db.close();
    }
  }
  return out;
}

// ---- the section --------------------------------------------------------------------------------

const chars = (t) => t.message.length + t.reply.length;

/**
 * @param {{turns: number, tokens: number, paceMs: number, curveTurns: number,
 *   curveTokens: number, windowTurns?: number, windowTokens?: number, checkpoints: number[], retentionHours: number, systems?: string[]}} o
 */
export async function storageBench(o) {
  const systems = o.systems ?? ['weft', 'cf-agents'];
  const out = { systems, paced: {}, curve: {}, retention: null, tables: {}, problems: [] };
  const llm = await startScriptedLlm({ port: 0, host: '127.0.0.1', delayMs: 0 });
  const hook = hookLlm(llm);
  const tag = Date.now().toString(36);
  const lines = storageLines();
  const weftVars = {
    SCRIPTED_LLM_URL: `${llm.url}/v1`,
    WEFT_STORAGE_STATS: '1',
    // The 50-turn session's history is far past 80 % of the default context window (128,000
    // tokens), where weft would start compacting; CF Agents sends everything every turn. The
    // same conversation for both: no compaction.
    CONTEXT_WINDOW: '100000000',
  };
  const workers = [];
  const byName = {};
  const reloads = {};
  let phase = 'the start';
  // wrangler dev rebuilds and reloads its Worker when a file under it changes (there is no
  // switch to stop it; another change to worker/ while the bench runs does it): every object
  // starts again, and its count with it, and the sockets close. Seen, it is reported, and a
  // phase that failed after a reload of its Worker runs again on a new session (at most twice).
  // A failure without a reload fails the bench.
  const watch = (name, also) => (text) => {
    also?.(text);
    if (/Reloading local server/.test(text)) {
      reloads[name] = (reloads[name] ?? 0) + 1;
      out.problems.push(
        `${name}: wrangler dev reloaded the Worker (a file under it changed) at ${new Date().toISOString().slice(11, 19)} UTC, during ${phase}`,
      );
    }
  };
  const start = async (name, cwd, vars, also) => {
    const w = await startWrangler(name, cwd, vars, { onOutput: watch(name, also), logLevel: 'log' });
    workers.push(w);
    byName[name] = w;
    return w;
  };
  const again = async (label, name, fn) => {
    for (let attempt = 1; ; attempt++) {
      phase = label;
      const seen = reloads[name] ?? 0;
      try {
        return await fn(attempt === 1 ? '' : `-again${attempt}`);
      } catch (e) {
        if ((reloads[name] ?? 0) === seen || attempt === 3) throw e;
        out.problems.push(`${label} failed (${e.message}) after wrangler dev reloaded the Worker, and ran again on a new session`);
        log(`storage: ${label} failed after a reload of ${name} (${e.message}); running it again (${attempt + 1} of 3)`);
        // Until it answers again, and a little more (a reload may follow another).
        for (const deadline = Date.now() + 900_000; Date.now() < deadline;) {
          await sleep(3000);
          try {
            if ((await fetch(`${byName[name].http}/healthz`)).ok) break;
          } catch {
            /* rebuilding */
          }
        }
        await sleep(5000);
      }
    }
  };
  try {
    let weft = null;
    let peers = null;
    if (systems.includes('weft')) {
      log('storage: starting weft under wrangler dev (WEFT_STORAGE_STATS=1)');
      weft = await start('weft', join(root, 'worker'), weftVars, (t) => lines.feed(t));
    }
    if (systems.includes('cf-agents')) {
      log('storage: starting the peers worker under wrangler dev');
      peers = await start('peers', join(benchDir, 'peers'), { SCRIPTED_LLM_URL: `${llm.url}/v1` });
    }
    const chat = (s, id) => (s === 'weft' ? weftChat(weft, lines, id) : cfChat(peers, id));

    // (1) rows per turn, paced. One system at a time, its turns back to back: the counts are
    // per instance, and an object left idle for seconds hibernates and starts again at zero
    // (weft's count and the peer's alike). Then one more turn after `idleMs` without use, long
    // enough for the object to sleep: what a turn costs when a person takes time to answer.
    hook.pace(o.paceMs);
    const msg = `long reply ${o.tokens}`;
    out.pacedTables = {};
    for (const s of systems)
      await again(`${s}'s paced turns`, s === 'weft' ? 'weft' : 'peers', async (suffix) => {
        const id = `st-${tag}-paced-${s}${suffix}`;
        const c = await chat(s, id);
        const first = await c.turn(msg);
        const p = { first: { rowsWritten: first.rowsWritten, bytes: first.bytes, frames: first.frames, chars: chars(first) }, turns: [], afterIdle: null };
        out.paced[s] = p;
        let prev = first;
        let conv = chars(first);
        const restarted = (t) => (t.instance !== undefined ? t.instance !== prev.instance : t.rowsWritten < prev.rowsWritten);
        for (let i = 0; i < o.turns; i++) {
          const t = await c.turn(msg);
          conv += chars(t);
          if (restarted(t)) {
            out.problems.push(
              `${s}: the object started again between turns ${i + 1} and ${i + 2} (rows written since it started: ${prev.rowsWritten}, then ${t.rowsWritten}); that turn is not counted`,
            );
            prev = t;
            continue;
          }
          const turn = {
            run: t.runId,
            rows: t.rowsWritten - prev.rowsWritten,
            bytes: t.bytes,
            bytesAdded: t.bytes - prev.bytes,
            frames: t.frames,
            chars: chars(t),
            ms: t.ms,
          };
          if (t.byStatement) {
            // What the turn wrote, statement by statement (the difference of the two snapshots).
            const before = new Map(prev.byStatement.map((x) => [x.statement, x]));
            turn.kvRows = t.kvRows - prev.kvRows;
            turn.statements = t.statements - prev.statements;
            turn.byStatement = t.byStatement
              .map((x) => ({
                statement: x.statement,
                calls: x.calls - (before.get(x.statement)?.calls ?? 0),
                rows: x.rows - (before.get(x.statement)?.rows ?? 0),
              }))
              .filter((x) => x.rows > 0)
              .sort((a, b) => b.rows - a.rows);
          }
          p.turns.push(turn);
          prev = t;
          log(`storage: ${s} paced turn ${i + 1}/${o.turns}: ${turn.rows} rows written (${t.frames} frames, ${(t.ms / 1000).toFixed(1)} s)`);
        }
        if (o.idleMs) {
          await sleep(o.idleMs);
          const t = await c.turn(msg);
          conv += chars(t);
          // After a restart the count is the turn's own, from the object's wake-up on.
          p.afterIdle = {
            idleMs: o.idleMs,
            bytes: t.bytes,
            restarted: restarted(t),
            rows: restarted(t) ? t.rowsWritten : t.rowsWritten - prev.rowsWritten,
            byStatement: restarted(t) ? t.byStatement?.filter((x) => x.rows > 0).sort((a, b) => b.rows - a.rows) : undefined,
          };
          log(
            `storage: ${s} turn after ${o.idleMs / 1000} s idle: ${p.afterIdle.rows} rows written (${p.afterIdle.restarted ? 'the object had slept' : 'the object was still awake'})`,
          );
        }
        c.close();
        out.pacedTables[s] = s === 'weft' ? await tables(weft.persist, weftFile(`${id}-t1`)) : await tables(peers.persist, cfFile(`u-${id}-1`));
        p.conversation = conv;
      });
    // (1b) inside the retention window: a new weft session, `windowTurns` turns of "long reply
    // windowTokens" paced as above, the database size read after every turn. Nothing has
    // expired yet (the retention is a day by default), so this is what a paced conversation
    // holds for that day; the unpaced curve below logs fewer, larger deltas and understates it.
    if (weft && o.windowTurns) {
      await again(`weft's ${o.windowTurns} paced turns`, 'weft', async (suffix) => {
        const id = `st-${tag}-window${suffix}`;
        const c = await weftChat(weft, lines, id);
        const points = [];
        let text = 0;
        let prevRows = null;
        for (let n = 1; n <= o.windowTurns; n++) {
          const t = await c.turn(`long reply ${o.windowTokens}`);
          text += chars(t);
          points.push({ turn: n, chars: text, bytes: t.bytes, rows: prevRows === null || t.rowsWritten < prevRows ? null : t.rowsWritten - prevRows });
          prevRows = t.rowsWritten;
          if (o.checkpoints.includes(n) || n === o.windowTurns)
            log(
              `storage: weft paced, after ${n} turns: ${t.bytes.toLocaleString('en-US')} bytes for ${text.toLocaleString('en-US')} characters (${(t.bytes / text).toFixed(2)}×)`,
            );
        }
        c.close();
        out.window = { turns: o.windowTurns, tokens: o.windowTokens, points, tables: await tables(weft.persist, weftFile(`${id}-t1`)) };
      });
    }
    hook.pace(0);
    if (weft) {
      // weft's turn by table, where the database shows it: the event log rows each run left.
      const t = await eventRows(
        weft.persist,
        out.paced.weft.turns.map((x) => x.run),
      );
      if (t) for (const turn of out.paced.weft.turns) turn.eventLogRows = t.get(turn.run) ?? 0;
    }

    // (2) bytes against the conversation, unpaced.
    const curveMsg = `long reply ${o.curveTokens}`;
    const curve = async (s, c, label, afterTurn) => {
      const points = [];
      let text = 0;
      let prevRows = 0;
      for (let n = 1; n <= o.curveTurns; n++) {
        const t = await c.turn(curveMsg);
        text += chars(t);
        points.push({ turn: n, chars: text, rowsWritten: t.rowsWritten, rows: t.rowsWritten - prevRows, bytes: t.bytes });
        prevRows = t.rowsWritten;
        if (o.checkpoints.includes(n))
          log(
            `storage: ${label} after ${n} turns: ${t.bytes.toLocaleString('en-US')} bytes for ${text.toLocaleString('en-US')} characters of conversation (${(t.bytes / text).toFixed(2)}×)`,
          );
        if (afterTurn) text += await afterTurn(n, text);
      }
      return points;
    };
    for (const s of systems)
      await again(`${s}'s ${o.curveTurns} turns`, s === 'weft' ? 'weft' : 'peers', async (suffix) => {
        const id = `st-${tag}-curve-${s}${suffix}`;
        const c = await chat(s, id);
        out.curve[s] = await curve(s, c, s);
        c.close();
        out.tables[s] = s === 'weft' ? await tables(weft.persist, weftFile(`${id}-t1`)) : await tables(peers.persist, cfFile(`u-${id}-1`));
      });

    // (3) weft after the retention time: a second weft Worker whose runs' event logs expire in
    // seconds. At each checkpoint: wait past the retention, then one cheap turn (it wakes the
    // session; the alarm has deleted the expired logs by then) whose line gives the size.
    if (weft) {
      await weft.stop();
      workers.splice(workers.indexOf(weft), 1);
      weft = null;
      log(`storage: starting weft with EVENT_RETENTION_HOURS=${o.retentionHours}`);
      const retained = await start('weft-retention', join(root, 'worker'), { ...weftVars, EVENT_RETENTION_HOURS: String(o.retentionHours) }, (t) =>
        lines.feed(t),
      );
      const waitMs = Math.round(o.retentionHours * 3_600_000 + 3000);
      await again('the retention session', 'weft-retention', async (suffix) => {
        const id = `st-${tag}-retention${suffix}`;
        const c = await weftChat(retained, lines, id);
        const after = [];
        const points = await curve('weft', c, 'weft (short retention, before the wait)', async (n, text) => {
          if (!o.checkpoints.includes(n)) return 0;
          await sleep(waitMs);
          const t = await c.turn('retention check');
          after.push({ turn: n, chars: text + chars(t), rowsWritten: t.rowsWritten, bytes: t.bytes, waitedMs: waitMs });
          log(
            `storage: weft after ${n} turns and the retention time: ${t.bytes.toLocaleString('en-US')} bytes for ${(text + chars(t)).toLocaleString('en-US')} characters (${(t.bytes / (text + chars(t))).toFixed(2)}×)`,
          );
          return chars(t);
        });
        c.close();
        out.retention = { hours: o.retentionHours, waitMs, after, curve: points, tables: await tables(retained.persist, weftFile(`${id}-t1`)) };
      });
    }
  } finally {
    for (const w of workers) await w.stop();
    await llm.close();
  }
  return out;
}
