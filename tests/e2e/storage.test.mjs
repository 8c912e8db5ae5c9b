// Storage over time, against the real Worker under `wrangler dev`: a restart in the middle of a
// model stream (with the client coming back, and with no client at all: the session's alarm
// finishes the run), and event logs deleted after EVENT_RETENTION_HOURS.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Conn } from './client.mjs';
import { startServer } from './server.mjs';

let server;
before(
  async () => {
    // 0.002 h = 7.2 s of retention.
    server = await startServer({ delayMs: 2, vars: { EVENT_RETENTION_HOURS: '0.002' } });
  },
  { timeout: 900_000 },
);
after(async () => {
  await server?.stop();
});

const session = () => `storage-${randomUUID()}`;
const open = (sid) => Conn.open(`${server.url}/?session_id=${sid}`, ['weft.loom']);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Runs `query` (read-only) on the SQLite file of the session that holds run `runId`. */
async function inSessionOf(runId, query, persist = server.persist, readOnly = true) {
  const { DatabaseSync } = await import('node:sqlite');
  for (const file of readdirSync(persist, { recursive: true }).filter((f) => String(f).endsWith('.sqlite'))) {
    const db = new DatabaseSync(join(persist, String(file)), { readOnly });
    try {
      const hasRuns = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'").get();
      if (hasRuns && db.prepare('SELECT 1 FROM runs WHERE run_id = ?').get(runId)) return query(db);
    } finally {
      db.close();
    }
  }
  return null;
}

/**
 * The bodies of a run's event-log rows (`event_batches`: keyed by the run's `log` number shifted
 * 32 bits, and the row's last event id), in order.
 */
const logRows = (db, runId) => {
  const log = db.prepare('SELECT log FROM runs WHERE run_id = ?').get(runId)?.log;
  if (log == null) return [];
  return db
    .prepare('SELECT body FROM event_batches WHERE key >= ? * 4294967296 AND key < (? + 1) * 4294967296 ORDER BY key')
    .all(log, log)
    .map((r) => r.body);
};

/**
 * A text column read as its bytes (`CAST(… AS BLOB)`): node:sqlite ends a text value at its
 * first NUL, and the store's markers start with one.
 * @param {any} bytes
 */
const textOf = (bytes) => Buffer.from(bytes).toString('utf8');

/** A run's row as the server stored it. */
const runRow = (runId) => inSessionOf(runId, (db) => db.prepare('SELECT status FROM runs WHERE run_id = ?').get(runId));

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
    // The log may lag what was sent by up to 15 deltas: the restarted run passes over the ids
    // they may have had with one events_lost, then numbers on densely.
    const events = c.frames.filter((f) => f.id === 'mid' && f.type === 'run_stream_event').map((f) => f.event);
    const at = events.findIndex((e) => e.type === 'events_lost');
    assert.ok(at >= 0, `the restart says what it passed over: ${events.slice(0, 3).map((e) => e.type)}`);
    const logged = events.slice(0, at).map((e) => e.event_id);
    assert.deepEqual(
      logged,
      logged.map((_, i) => after + 1 + i),
      'what the log holds past the client, dense',
    );
    const lost = events[at];
    assert.ok(lost.from <= after + logged.length + 1 && lost.event_id > after + logged.length, JSON.stringify(lost));
    assert.ok(lost.event_id - lost.from <= 16, `at most 16 ids passed over: ${JSON.stringify(lost)}`);
    const rest = events.slice(at).map((e) => e.event_id);
    assert.deepEqual(
      rest,
      rest.map((_, i) => lost.event_id + i),
      'dense after it',
    );
    assert.ok(
      events.slice(at + 1).some((e) => e.type === 'llm_complete' && e.finish_reason === 'interrupted'),
      'the cut response is closed visibly',
    );
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
    assert.deepEqual(
      history.messages.map((m) => m.role),
      ['user', 'assistant'],
    );
    c.close();
  });
});

describe('the event log, a row per batch', () => {
  test('a 300-piece reply at 20 ms a piece: a row per 16 deltas, not per piece, and a resume replays every frame', async () => {
    const sid = session();
    server.pace(20);
    const c = await open(sid);
    try {
      c.send({ type: 'run', message: 'long reply 300', agent: 'react', id: 'rows' });
      await c.wait((f) => f.type === 'run_end' && f.id === 'rows', { timeout: 60_000 });
    } finally {
      server.pace(null);
    }
    const live = c.frames.filter((f) => f.id === 'rows');
    const chunks = live.filter((f) => f.event?.type === 'message_chunk').length;
    assert.ok(chunks >= 100, `the reply streamed in pieces: ${chunks}`);
    const bodies = await inSessionOf('rows', (db) => logRows(db, 'rows'));
    const rows = bodies.length;
    const others = live.length - chunks;
    assert.ok(rows <= Math.ceil(chunks / 16) + others, `${rows} rows for ${chunks} pieces and ${others} other frames`);
    assert.ok(rows < live.length / 4, `${rows} rows for ${live.length} frames`);
    // A row holds its pieces as their text: the reply and little more, not a JSON object each.
    const text = live
      .filter((f) => f.event?.type === 'message_chunk')
      .map((f) => f.event.content)
      .join('');
    const stored = bodies.reduce((n, b) => n + Buffer.byteLength(b), 0);
    const json = live.filter((f) => f.event).reduce((n, f) => n + Buffer.byteLength(JSON.stringify(f.event)), 0);
    assert.ok(stored < 1.5 * Buffer.byteLength(text) + 3000, `${stored} bytes of rows for ${text.length} characters of text (the events' JSON: ${json})`);
    // Every frame sent live is in the log, in order: a resume from the start gives them back.
    const again = await open(sid);
    again.send({ type: 'resume', run_id: 'rows', after_event_id: 0 });
    await again.wait((f) => f.type === 'run_end' && f.id === 'rows');
    assert.deepEqual(
      again.frames.filter((f) => f.id === 'rows'),
      live,
    );
    c.close();
    again.close();
  });
});

describe('the history, stored once', () => {
  test('ten turns: each message is one row, and neither checkpoints nor the session state grow with them', async () => {
    const sid = session();
    const c = await open(sid);
    const prompts = [];
    for (let n = 1; n <= 10; n += 1) {
      c.send({ type: 'run', message: `turn ${n}: ${'words '.repeat(200)}`, agent: 'react', id: `t${n}` });
      prompts.push((await c.wait((f) => f.type === 'run_end' && f.id === `t${n}`)).usage.prompt_tokens);
    }
    c.close();
    // Each turn's model call saw every earlier turn (about 300 tokens each, question and echo),
    // read back from the rows after the session's object was woken afresh or kept.
    for (let n = 1; n < 10; n += 1) assert.ok(prompts[n] > prompts[n - 1] + 250, `prompt tokens ${prompts}`);
    const stored = await inSessionOf('t10', (db) => ({
      history: db.prepare('SELECT COUNT(*) AS n, SUM(length(message)) AS bytes FROM history').get(),
      checkpoints: db.prepare('SELECT run_id, length(checkpoint) AS bytes FROM runs ORDER BY created').all(),
      state: db.prepare("SELECT length(value) AS bytes FROM meta WHERE key = 'session'").get(),
      listed: db.prepare("SELECT COUNT(*) AS pointing FROM messages WHERE content LIKE char(0) || 'history:%'").get(),
    }));
    assert.equal(stored.history.n, 20, 'a user and an assistant message per turn, each once');
    assert.ok(stored.history.bytes > 10 * 1200, 'the turns are in the history rows');
    // Only a running run is restored: a finished one keeps its row, not its checkpoint.
    assert.deepEqual(
      stored.checkpoints.map((c) => c.bytes),
      Array(10).fill(0),
      'finished runs keep no checkpoint',
    );
    assert.ok(stored.state.bytes < 300, `the session state points at its rows: ${stored.state.bytes} B`);
    assert.equal(stored.listed.pointing, 20, 'the listing points at the history rows instead of holding the text again');
    // After a restart, the history is read back from the rows: the next turn sees it all.
    await server.restart();
    const c2 = await open(sid);
    c2.send({ type: 'run', message: 'turn 11', agent: 'react', id: 't11' });
    const eleventh = (await c2.wait((f) => f.type === 'run_end' && f.id === 't11')).usage.prompt_tokens;
    assert.ok(eleventh > prompts[9], `turn 11 saw the ten before: ${eleventh} > ${prompts[9]}`);
    // The listing reads its text from the history rows.
    c2.send({ type: 'user_messages', id: 'l', thread_id: sid });
    const listed = (await c2.wait((f) => f.type === 'user_messages')).messages;
    assert.equal(listed.length, 22);
    assert.equal(listed[0].content, `turn 1: ${'words '.repeat(200)}`);
    assert.equal(listed[1].content, `You said: turn 1: ${'words '.repeat(200)}`.trim());
    c2.close();
  });
});

describe('the loom checkpoint event, stored as a pointer', () => {
  test('with a thread_id every run ends with the whole state, yet the log holds the conversation only in the history rows', async () => {
    const sid = session();
    const c = await open(sid);
    for (let n = 1; n <= 4; n += 1) {
      c.send({ type: 'run', message: `turn ${n}: ${'phrase '.repeat(100)}`, agent: 'react', id: `cp${n}`, thread_id: sid });
      await c.wait((f) => f.type === 'run_end' && f.id === `cp${n}`);
    }
    const live = c.frames.filter((f) => f.id === 'cp4');
    const checkpoint = live.find((f) => f.event?.type === 'checkpoint')?.event;
    assert.equal(checkpoint.state.messages.length, 8, 'the whole conversation, sent live');
    const logged = await inSessionOf('cp4', (db) => logRows(db, 'cp4').join('\n'));
    // Earlier turns are only in the checkpoint's state: the log of turn 4 does not hold them.
    assert.ok(!logged.includes('turn 1:'), 'no earlier message in the log');
    assert.match(logged, /"messages_rows"/);
    // A resume gives the very frames sent live, the conversation read back from the rows.
    const again = await open(sid);
    again.send({ type: 'resume', run_id: 'cp4', after_event_id: 0 });
    await again.wait((f) => f.type === 'run_end' && f.id === 'cp4');
    assert.deepEqual(
      again.frames.filter((f) => f.id === 'cp4'),
      live,
    );
    c.close();
    again.close();
  });
});

/**
 * Resumes a recorded session's runs on `srv` (record.mjs in tests/e2e/fixtures/legacy-log says
 * what they are) and holds them to the frames its client was sent live: `done` and `snap` from
 * the start, frame for frame; `mid`, cut mid-stream, after what its client saw, to its end;
 * then `mid` again from the start on a new socket, the recorded rows then the new ones. Returns
 * the reply `mid` ended with.
 * @param {{url: string}} srv
 * @param {string} sid
 * @param {Record<string, any[]>} live
 */
async function replaysAsRecorded(srv, sid, live) {
  const c = await Conn.open(`${srv.url}/?session_id=${sid}`, ['weft.loom']);
  for (const id of ['done', 'snap']) {
    const from = c.frames.length;
    c.send({ type: 'resume', run_id: id, after_event_id: 0 });
    await c.wait((f) => f.type === 'run_end' && f.id === id, { from });
    assert.deepEqual(
      c.frames.slice(from).filter((f) => f.id === id),
      live[id],
      `run ${id} replays as it was sent`,
    );
  }
  // The cut run: resumed after what its client saw (the alarm may have finished it already).
  const seen = live.mid.length;
  const from = c.frames.length;
  c.send({ type: 'resume', run_id: 'mid', after_event_id: seen });
  const end = await c.wait((f) => f.type === 'run_end' && f.id === 'mid', { from, timeout: 90_000 });
  assert.match(end.reply, /^(\S+ ){149}\S+$/, 'the whole reply, asked for again after the cut');
  const resumed = c.frames.slice(from).filter((f) => f.id === 'mid');
  // From the start, on a new socket: the old rows, then the new ones.
  const again = await Conn.open(`${srv.url}/?session_id=${sid}`, ['weft.loom']);
  again.send({ type: 'resume', run_id: 'mid', after_event_id: 0 });
  await again.wait((f) => f.type === 'run_end' && f.id === 'mid');
  const replay = again.frames.filter((f) => f.id === 'mid');
  const lost = replay.findIndex((f) => f.event?.type === 'events_lost');
  assert.ok(lost >= seen - 16 && lost <= seen, `the old log ends within 16 frames of what was sent: ${lost} of ${seen}`);
  assert.deepEqual(replay.slice(0, lost), live.mid.slice(0, lost), 'the old rows replay as they were sent');
  assert.deepEqual(replay.slice(lost), resumed.slice(resumed.findIndex((f) => f.event?.type === 'events_lost')), 'the new rows replay as they were sent');
  assert.ok(replay.slice(lost).some((f) => f.event?.type === 'llm_complete' && f.event.finish_reason === 'interrupted'));
  c.close();
  again.close();
  return end.reply;
}

describe('a session stored before event_batches, upgraded', () => {
  // tests/e2e/fixtures/legacy-log: a session's Durable Object storage written by weft 904df78,
  // whose event log was `event_log` (a row per batch of JSON lines), and the frames its client
  // was sent live (record.mjs there says how it was made). Recorded rather than written here by
  // an old code path kept for the test: the Worker carries no writer of the old layout, and the
  // rows are the very bytes a deployed session holds. Two runs finished; `mid` was cut by
  // killing wrangler mid-stream, so it spans the upgrade.
  const fixture = fileURLToPath(new URL('./fixtures/legacy-log/', import.meta.url));
  const live = JSON.parse(readFileSync(join(fixture, 'frames.json'), 'utf8'));
  let up;
  before(
    async () => {
      // The recorded runs ended when they were recorded: no retention may expire them here.
      up = await startServer({ delayMs: 2, vars: { EVENT_RETENTION_HOURS: '10000000' } });
    },
    { timeout: 900_000 },
  );
  after(async () => {
    await up?.stop();
  });

  test('its runs replay frame for frame, the cut run finishes across both layouts, finished runs drop their checkpoints', async () => {
    await up.restart(async () => {
      cpSync(join(fixture, 'persist'), up.persist, { recursive: true });
      // Run `snap` moves to `events`, the layout before `event_log` (a row per event), so the
      // three are read together.
      await inSessionOf(
        'snap',
        (db) => {
          db.exec('CREATE TABLE events (run_id TEXT NOT NULL, event_id INTEGER NOT NULL, json TEXT NOT NULL, PRIMARY KEY (run_id, event_id))');
          const insert = db.prepare('INSERT INTO events (run_id, event_id, json) VALUES (?, ?, ?)');
          for (const { json } of db.prepare("SELECT json FROM event_log WHERE run_id = 'snap'").all()) {
            for (const line of json.split('\n')) insert.run('snap', JSON.parse(line).event_id, line);
          }
          db.exec("DELETE FROM event_log WHERE run_id = 'snap'");
        },
        up.persist,
        false,
      );
    });
    await replaysAsRecorded(up, 'legacy-log', live);
    // Read with the server down: what it wrote may still be in the WAL, which a reader beside
    // the running workerd does not always see.
    /** @type {any} what the session's database holds, read while the server is down */
    let stored;
    await up.restart(async () => {
      stored = await inSessionOf(
        'mid',
        (db) => ({
          runs: db
            .prepare('SELECT run_id, status, checkpoint FROM runs ORDER BY created')
            .all()
            .map((r) => ({ ...r })),
          old: db
            .prepare('SELECT run_id, COUNT(*) AS n FROM event_log GROUP BY run_id ORDER BY run_id')
            .all()
            .map((r) => ({ ...r })),
          mid: logRows(db, 'mid').length,
        }),
        up.persist,
        false,
      );
    });
    assert.deepEqual(
      stored.runs,
      ['done', 'snap', 'mid'].map((run_id) => ({ run_id, status: 'done', checkpoint: '' })),
      'finished runs keep no checkpoint',
    );
    assert.deepEqual(
      stored.old,
      [
        { run_id: 'done', n: 9 },
        { run_id: 'mid', n: 3 },
      ],
      'the old rows are read where they are, not moved',
    );
    assert.ok(stored.mid > 0, 'the cut run went on in event_batches');
  });

  test('a session whose history rows hold every reply replays frame for frame, reads its history as before, and new replies point into their logs', async () => {
    // tests/e2e/fixtures/batch-log: session `batch-log` recorded by weft 2d77e9d (record.mjs in
    // legacy-log), `event_batches` as now, every history row holding its message's text.
    const batch = fileURLToPath(new URL('./fixtures/batch-log/', import.meta.url));
    const recorded = JSON.parse(readFileSync(join(batch, 'frames.json'), 'utf8'));
    const dir = 'v3/do/weft-Session';
    const file = readdirSync(join(batch, 'persist', dir)).find((f) => !f.startsWith('metadata'));
    assert.ok(file, 'the recorded session');
    await up.restart(async () => {
      // The session's file alone: metadata.sqlite holds the objects' alarms, legacy-log's among
      // them. Without its alarm, the cut run is picked up when the resume wakes the session.
      cpSync(join(batch, 'persist', dir, file), join(up.persist, dir, file));
    });
    const midReply = await replaysAsRecorded(up, 'batch-log', recorded);
    /** @param {string} id */
    const reply = (id) => recorded[id].find((f) => f.type === 'run_end').reply;
    const c = await Conn.open(`${up.url}/?session_id=batch-log`, ['weft.loom']);
    c.send({ type: 'user_messages', id: 'h', thread_id: 'batch-log' });
    const listed = (await c.wait((f) => f.type === 'user_messages')).messages;
    const conversation = ['long reply 120', reply('done'), 'count to 5', reply('snap'), 'long reply 150', midReply];
    assert.deepEqual(
      listed.map((m) => m.content),
      conversation,
    );
    c.close();
    // Read with the server down (see above).
    /** @type {string[]} */
    let history = [];
    await up.restart(async () => {
      const { DatabaseSync } = await import('node:sqlite');
      const db = new DatabaseSync(join(up.persist, dir, file), { readOnly: true });
      try {
        history = db
          .prepare('SELECT CAST(message AS BLOB) AS message FROM history ORDER BY seq')
          .all()
          .map((r) => textOf(r.message));
      } finally {
        db.close();
      }
    });
    assert.equal(history.length, 6);
    assert.deepEqual(
      history.slice(0, 5).map((m) => JSON.parse(m).content),
      conversation.slice(0, 5),
      'the recorded rows stay as they were',
    );
    assert.ok(history[5].startsWith('\0log:'), "the reply streamed after the upgrade points into its run's log");
    assert.ok(history[5].length < 100 && midReply.length > 800, `a pointer of ${history[5].length} B for ${midReply.length} B of text`);
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
    assert.deepEqual(
      history.messages.map((m) => m.content),
      ['count to 3', '1 2 3'],
      'the messages stay',
    );
    const checkpoint = await inSessionOf('old', (db) => db.prepare('SELECT checkpoint FROM runs WHERE run_id = ?').get('old').checkpoint);
    assert.equal(checkpoint, '', "the finished run's checkpoint went with its log");
    c.close();
  });
});

describe("a reply's history row and its run's event log", () => {
  test('the row points into the log until the log expires, then holds the text; a row that cannot take it back keeps the log and says why', async () => {
    const [kept, broken] = [session(), session()];
    /** @type {Record<string, string>} */
    const reply = {};
    for (const [sid, id] of [
      [kept, 'ptr-kept'],
      [broken, 'ptr-broken'],
    ]) {
      const c = await open(sid);
      c.send({ type: 'run', message: 'long reply 80', agent: 'react', id });
      reply[id] = (await c.wait((f) => f.type === 'run_end' && f.id === id)).reply;
      c.close();
    }
    // With the server down, within the 7.2 s retention: the rows as written. The broken
    // session's pointer is damaged: it says its text is a byte longer than the pieces hold.
    /** @type {Record<string, {seq: number, message: string}[]>} */
    const rows = {};
    await server.restart(async () => {
      for (const id of ['ptr-kept', 'ptr-broken']) {
        rows[id] = await inSessionOf(
          id,
          (db) =>
            db
              .prepare('SELECT seq, CAST(message AS BLOB) AS message FROM history ORDER BY seq')
              .all()
              .map((r) => ({ seq: Number(r.seq), message: textOf(r.message) })),
          server.persist,
          false,
        );
      }
      const { seq, message } = rows['ptr-broken'][1];
      const damaged = message.replace(/^(\0log:\d+ \d+ \d+ )(\d+)/, (_, head, n) => `${head}${Number(n) + 1}`);
      assert.notEqual(damaged, message);
      await inSessionOf(
        'ptr-broken',
        (db) => db.prepare('UPDATE history SET message = CAST(? AS TEXT) WHERE seq = ?').run(Buffer.from(damaged), seq),
        server.persist,
        false,
      );
    });
    for (const id of ['ptr-kept', 'ptr-broken']) {
      const [user, assistant] = rows[id];
      assert.equal(JSON.parse(user.message).content, 'long reply 80');
      assert.ok(assistant.message.startsWith('\0log:'), `the reply's row points into the log: ${JSON.stringify(assistant.message.slice(0, 40))}`);
      assert.ok(assistant.message.length < 100 && reply[id].length > 400, `${assistant.message.length} B for ${reply[id].length} B of text`);
    }

    // The kept session: its log expires, and its history row has the text again.
    const c = await open(kept);
    let expired = null;
    for (let i = 0; i < 60 && !expired; i += 1) {
      const from = c.frames.length;
      c.send({ type: 'resume', run_id: 'ptr-kept', after_event_id: 0 });
      const answer = await c.wait((f) => f.id === 'ptr-kept' && (f.type === 'run_end' || f.type === 'error'), { from });
      if (answer.type === 'error') expired = answer;
      else await sleep(1000);
    }
    assert.equal(expired?.code, 'expired');
    c.send({ type: 'user_messages', id: 'h', thread_id: kept });
    const listed = (await c.wait((f) => f.type === 'user_messages')).messages;
    assert.deepEqual(
      listed.map((m) => m.content),
      ['long reply 80', reply['ptr-kept']],
      'the listing reads the same text from the row',
    );
    // The model is sent it too: the next turn's prompt counts it, against a new session's.
    const turn = async (/** @type {Conn} */ conn, /** @type {string} */ id) => {
      conn.send({ type: 'run', message: 'count to 3', agent: 'react', id });
      return (await conn.wait((f) => f.type === 'run_end' && f.id === id)).usage.prompt_tokens;
    };
    const fresh = await open(session());
    const withHistory = await turn(c, 'ptr-next');
    const without = await turn(fresh, 'ptr-fresh');
    assert.ok(withHistory > without + 80, `the model saw the reply: ${withHistory} prompt tokens against ${without}`);
    c.close();
    fresh.close();

    // The broken session: its history row could not take its text back, so its log stays
    // whole, and the alarm said why, and tries again later rather than at once.
    const said = () =>
      server
        .log()
        .match(
          /old event logs not deleted: run ptr-broken: history row \d+ points into an event log, but run log \d+'s pieces \d+–\d+ hold \d+ bytes of text, not \d+/g,
        ) ?? [];
    for (let i = 0; i < 60 && said().length === 0; i += 1) await sleep(1000);
    assert.equal(said().length, 1, server.log().slice(-2000));
    const b = await open(broken);
    b.send({ type: 'resume', run_id: 'ptr-broken', after_event_id: 0 });
    const end = await b.wait((f) => f.id === 'ptr-broken' && (f.type === 'run_end' || f.type === 'error'));
    assert.equal(end.type, 'run_end', 'not expired: the log is kept');
    assert.equal(end.reply, reply['ptr-broken']);
    await sleep(3000);
    assert.ok(said().length <= 2, `the alarm does not try again and again: ${said().length} times`);
    b.close();
  });
});

describe('SESSION_TTL_DAYS', () => {
  let ttlServer;
  before(
    async () => {
      // 0.0001 days = 8.64 s without use.
      ttlServer = await startServer({ vars: { SESSION_TTL_DAYS: '0.0001' } });
    },
    { timeout: 900_000 },
  );
  after(async () => {
    await ttlServer?.stop();
  });

  test('a session nobody uses is deleted whole, its sockets told why; a used one is not', async () => {
    // One session in use all along, pinged every second.
    const used = session();
    const u = await Conn.open(`${ttlServer.url}/?session_id=${used}`, ['weft.loom']);
    u.send({ type: 'run', message: 'count to 2', agent: 'react', id: 'kept' });
    await u.wait((f) => f.type === 'run_end' && f.id === 'kept');
    let pings = 0;
    const pinger = setInterval(() => {
      if (!u.closed) u.send({ type: 'ping', id: `k${pings++}` });
    }, 1000);
    const idle = session();
    const c = await Conn.open(`${ttlServer.url}/?session_id=${idle}`, ['weft.loom']);
    c.send({ type: 'run', message: 'count to 3', agent: 'react', id: 'gone' });
    await c.wait((f) => f.type === 'run_end' && f.id === 'gone');
    const deadline = Date.now() + 60_000;
    while (!c.closed && Date.now() < deadline) await sleep(500);
    assert.deepEqual(c.closed, { code: 4410, reason: 'session expired' });
    // Nothing of it is left: its run is unknown, its history empty.
    const back = await Conn.open(`${ttlServer.url}/?session_id=${idle}`, ['weft.loom']);
    back.send({ type: 'resume', run_id: 'gone', after_event_id: 0 });
    assert.equal((await back.wait((f) => f.type === 'error')).code, 'unknown_run');
    back.send({ type: 'user_messages', id: 'h', thread_id: idle });
    assert.deepEqual((await back.wait((f) => f.type === 'user_messages')).messages, []);
    back.close();
    clearInterval(pinger);
    assert.equal(u.closed, null, 'the session in use was kept');
    u.send({ type: 'resume', run_id: 'kept', after_event_id: 0 });
    await u.wait((f) => f.type === 'run_end' && f.id === 'kept', { from: u.frames.length - 1 });
    u.close();
  });
});
