// Safe on the public internet (issue 23), end to end against the real Worker under
// `wrangler dev`: web_fetch refuses every spelling of a local host through a real fetch.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
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
