// Safe on the public internet (issue 23), end to end against the real Worker under
// `wrangler dev`: web_fetch refuses every spelling of a local host through a real fetch;
// session ids a client names keep to their rules.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';

import { Conn } from './client.mjs';
import { startServer } from './server.mjs';

let server;
before(async () => {
  server = await startServer({ delayMs: 1 });
}, { timeout: 900_000 });
after(async () => {
  await server?.stop();
});

const session = (prefix = 'sec') => `${prefix}-${randomUUID()}`;

/** A WebSocket handshake to `path` that the server refuses: its status and body. */
function refusedUpgrade(path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request(`${server.http}${path}`, {
      headers: {
        Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers,
      },
    });
    req.on('upgrade', (_res, socket) => { socket.destroy(); reject(new Error(`${path}: upgraded`)); });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('web_fetch', () => {
  test("the server's own /healthz in every spelling of a local host is refused, never fetched", async () => {
    const port = new URL(server.http).port;
    const hosts = [
      '127.0.0.1', '127.1', '0x7f000001', '2130706433', '0177.0.0.1', '0x7f.1', '127.0.0.1.',
      '[::1]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[0:0:0:0:0:0:0:1]', 'localhost',
      'localhost.', 'LOCALHOST', 'app.localhost', '%31%32%37.0.0.1', '127。0。0。1',
      '127．0．0．1', '127｡0｡0｡1', 'ｌｏｃａｌｈｏｓｔ', '１２７.０.０.１', 'localhoſt',
    ];
    const c = await Conn.open(`${server.url}/?session_id=${session()}`, ['weft.loom']);
    for (const [i, host] of hosts.entries()) {
      const url = `http://${host}:${port}/healthz`;
      const id = `fetch-${i}`;
      c.send({ type: 'run', id, agent: 'react', message: `use web_fetch with ${JSON.stringify({ url })}` });
      await c.wait((f) => f.type === 'run_end' && f.id === id, { timeout: 30_000 });
      const end = c.frames.find((f) => f.id === id && f.event?.type === 'tool_end')?.event;
      assert.ok(end, `${url}: no tool_end`);
      assert.equal(end.is_error, true, `${url} was fetched: ${end.result}`);
      assert.match(end.result, /refusing to fetch|invalid url/, url);
      assert.doesNotMatch(end.result, /HTTP 200/, url);
    }
    c.close();
  });
});

describe('session ids named by clients', () => {
  test('?session_id= that breaks the rules is refused before the upgrade, with the reason', async () => {
    for (const [sid, why] of [
      ['x'.repeat(129), /at most 128 characters \(129 given\)/],
      ['a%20b', /may contain only A-Z, a-z, 0-9 and -_\.:\/@\+=~ \(not ' '\)/],
      ['user-42%2F*', /\(not '\*'\)/],
      ['caf%C3%A9', /\(not 'é'\)/],
    ]) {
      const res = await refusedUpgrade(`/?session_id=${sid}`);
      assert.equal(res.status, 400, sid);
      assert.match(res.body, why, sid);
      await assert.rejects(Conn.open(`${server.url}/ws/chat?session_id=${sid}`), /HTTP 400/);
    }
    // Within the rules (and empty: a new session) it opens.
    for (const sid of ['', 'user-42/chat-7', `a:b@c+d=e~f.g_${randomUUID()}`]) {
      const c = await Conn.open(`${server.url}/ws/chat?session_id=${encodeURIComponent(sid)}`);
      c.close();
    }
  });

  test('a message naming a session outside the rules gets an error and reaches no session', async () => {
    const home = session();
    const loom = await Conn.open(`${server.url}/?session_id=${home}`, ['weft.loom']);
    loom.send({ type: 'run', id: 'r-bad', agent: 'react', message: 'hello', thread_id: 'no spaces allowed' });
    const err = await loom.wait((f) => f.type === 'error');
    assert.match(err.error, /a session id may contain only/);
    loom.send({ type: 'user_messages', id: 'um', thread_id: 'y'.repeat(300) });
    const long = await loom.wait((f) => f.type === 'error' && /at most 128/.test(f.error));
    assert.ok(long);
    // The socket still works for its own session.
    loom.send({ type: 'run', id: 'r-ok', agent: 'react', message: 'hello' });
    const end = await loom.wait((f) => f.type === 'run_end' && f.id === 'r-ok');
    assert.match(end.reply, /hello/);
    loom.close();
    const cueso = await Conn.open(`${server.url}/ws/chat`, ['weft.cueso']);
    cueso.send({ message: 'hi', session_id: 'bad/id/with space' });
    const cErr = await cueso.wait((f) => f.type === 'error');
    assert.match(cErr.message ?? cErr.error, /a session id may contain only/);
    cueso.close();
  });
});
