// Storage over time, against the real Worker under `wrangler dev`: a restart in the middle of a
// model stream (with the client coming back, and with no client at all: the session's alarm
// finishes the run), and event logs deleted after EVENT_RETENTION_HOURS.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Conn } from './client.mjs';
import { startServer } from './server.mjs';

let server;
before(async () => {
  // 0.002 h = 7.2 s of retention.
  server = await startServer({ delayMs: 2, vars: { EVENT_RETENTION_HOURS: '0.002' } });
}, { timeout: 900_000 });
after(async () => {
  await server?.stop();
});

const session = () => `storage-${randomUUID()}`;
const open = (sid) => Conn.open(`${server.url}/?session_id=${sid}`, ['weft.loom']);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A run's row as the server stored it (read-only, from whichever SQLite file holds it). */
async function runRow(runId) {
  const { DatabaseSync } = await import('node:sqlite');
  for (const file of readdirSync(server.persist, { recursive: true }).filter((f) => String(f).endsWith('.sqlite'))) {
    const db = new DatabaseSync(join(server.persist, String(file)), { readOnly: true });
    try {
      const hasRuns = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'").get();
      const row = hasRuns && db.prepare('SELECT status FROM runs WHERE run_id = ?').get(runId);
      if (row) return row;
    } finally {
      db.close();
    }
  }
  return null;
}

/** Starts a slow run and drops its socket once some text has streamed; the frames seen. */
async function startThenDrop(sid, id) {
  server.pace(40);
  const c = await open(sid);
  c.send({ type: 'run', message: 'long reply 150', agent: 'react', id });
  await c.wait((f) => f.event?.type === 'message_chunk' || f.event?.type === 'llm_chunk', { timeout: 30_000 });
  await sleep(300);
  c.kill();
  return c.frames.filter((f) => f.id === id);
}

describe('a restart in the middle of a model stream', () => {
  test('the client comes back and resumes: the run completes, each frame once', async () => {
    const sid = session();
    const seen = await startThenDrop(sid, 'mid');
    await server.restart(() => server.pace(null));
    const c = await open(sid);
    const after = seen.length;
    c.send({ type: 'resume', run_id: 'mid', after_event_id: after });
    const end = await c.wait((f) => f.type === 'run_end' && f.id === 'mid', { timeout: 90_000 });
    assert.match(end.reply, /^(\S+ ){149}\S+$/, 'the whole reply, asked for again after the cut');
    const ids = c.frames.filter((f) => f.id === 'mid' && f.type === 'run_stream_event').map((f) => f.event.event_id);
    assert.deepEqual(ids, ids.map((_, i) => after + 1 + i), 'dense, right after what was seen');
    c.close();
  });

  test('no client at all: the alarm picks the run up and finishes it', async () => {
    const sid = session();
    await startThenDrop(sid, 'alone');
    await server.restart(() => server.pace(null));
    // Nothing talks to the session from here on: only its alarm can wake it.
    let row = null;
    for (let i = 0; i < 90 && row?.status !== 'done'; i += 1) {
      await sleep(1000);
      row = await runRow('alone');
    }
    assert.equal(row?.status, 'done', 'the run finished without a client');
    const c = await open(sid);
    c.send({ type: 'user_messages', id: 'h', thread_id: sid });
    const history = await c.wait((f) => f.type === 'user_messages');
    assert.deepEqual(history.messages.map((m) => m.role), ['user', 'assistant']);
    c.close();
  });
});

describe('EVENT_RETENTION_HOURS', () => {
  test('a finished run can be resumed until its events are deleted, then resume says expired', async () => {
    const sid = session();
    const c = await open(sid);
    c.send({ type: 'run', message: 'count to 3', agent: 'react', id: 'old' });
    await c.wait((f) => f.type === 'run_end' && f.id === 'old');
    let from = c.frames.length;
    c.send({ type: 'resume', run_id: 'old', after_event_id: 0 });
    await c.wait((f) => f.type === 'run_end' && f.id === 'old', { from });
    let expired = null;
    for (let i = 0; i < 40 && !expired; i += 1) {
      await sleep(1000);
      from = c.frames.length;
      c.send({ type: 'resume', run_id: 'old', after_event_id: 0 });
      const answer = await c.wait((f) => f.id === 'old' && (f.type === 'run_end' || f.type === 'error'), { from });
      if (answer.type === 'error') expired = answer;
    }
    assert.equal(expired?.code, 'expired');
    assert.match(expired.error, /EVENT_RETENTION_HOURS/);
    c.send({ type: 'user_messages', id: 'h', thread_id: sid });
    const history = await c.wait((f) => f.type === 'user_messages');
    assert.equal(history.messages.length, 2, 'the messages stay');
    c.close();
  });
});
