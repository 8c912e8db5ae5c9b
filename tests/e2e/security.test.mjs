// Safe on the public internet (issue 23), end to end against the real Worker under
// `wrangler dev`: web_fetch refuses every spelling of a local host through a real fetch;
// session ids a client names keep to their rules; a per-user token reaches only its sessions,
// on every endpoint, and an expired or tampered one nothing.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';

import init, { Client } from 'weft-sdk';

import { Conn, mintToken } from './client.mjs';
import { startServer } from './server.mjs';

const SHARED = 'sec-shared-token';
const SECRET = 'sec-secret-0123456789abcdef';

let server;
before(
  async () => {
    server = await startServer({
      delayMs: 1,
      vars: {
        WEFT_AUTH_TOKEN: SHARED,
        WEFT_AUTH_SECRET: SECRET,
        // SOCKETS_PER_SESSION stays at its default, 32.
        SESSION_FRAMES_PER_MINUTE: '400',
        SESSION_RUNS_PER_MINUTE: '30',
        SESSIONS_PER_MINUTE: '20',
      },
    });
  },
  { timeout: 900_000 },
);
after(async () => {
  await server?.stop();
});

const session = (prefix = 'sec') => `${prefix}-${randomUUID()}`;

const b64url = (x) => Buffer.from(x).toString('base64url');
/**
 * @param {object} claims
 * @param {{ secret?: string, header?: object }} [options]
 */
const mint = (claims, { secret = SECRET, header } = {}) => mintToken(claims, secret, header);
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

/** A WebSocket handshake to `path` that the server refuses: its status and body. */
function refusedUpgrade(path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request(`${server.http}${path}`, {
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
        ...headers,
      },
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      reject(new Error(`${path}: upgraded`));
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d) => {
        body += d;
      });
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
      '127.0.0.1',
      '127.1',
      '0x7f000001',
      '2130706433',
      '0177.0.0.1',
      '0x7f.1',
      '127.0.0.1.',
      '[::1]',
      '[::ffff:127.0.0.1]',
      '[::ffff:7f00:1]',
      '[0:0:0:0:0:0:0:1]',
      'localhost',
      'localhost.',
      'LOCALHOST',
      'app.localhost',
      '%31%32%37.0.0.1',
      '127。0。0。1',
      '127．0．0．1',
      '127｡0｡0｡1',
      'ｌｏｃａｌｈｏｓｔ',
      '１２７.０.０.１',
      'localhoſt',
    ];
    const c = await Conn.open(`${server.url}/?session_id=${session()}&token=${SHARED}`, ['weft.loom']);
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
      // Non-ASCII spellings are mapped by the runtime's own URL parser, then judged by host.
      if (!/^[\x00-\x7f]*$/.test(host)) assert.match(end.result, /its host (localhost|127\.0\.0\.1) is/, url);
    }
    c.close();
  });
});

describe('session ids named by clients', () => {
  test('?session_id= that breaks the rules is refused before the upgrade, with the reason', async () => {
    for (const [sid, why] of /** @type {[string, RegExp][]} */ ([
      ['x'.repeat(129), /at most 128 characters \(129 given\)/],
      ['a%20b', /may contain only A-Z, a-z, 0-9 and -_\.:\/@\+=~ \(not ' '\)/],
      ['user-42%2F*', /\(not '\*'\)/],
      ['caf%C3%A9', /\(not 'é'\)/],
    ])) {
      const res = await refusedUpgrade(`/?session_id=${sid}&token=${SHARED}`);
      assert.equal(res.status, 400, sid);
      assert.match(res.body, why, sid);
      await assert.rejects(Conn.open(`${server.url}/ws/chat?session_id=${sid}&token=${SHARED}`), /HTTP 400/);
    }
    // Within the rules (and empty: a new session) it opens.
    for (const sid of ['', 'user-42/chat-7', `a:b@c+d=e~f.g_${randomUUID()}`]) {
      const c = await Conn.open(`${server.url}/ws/chat?session_id=${encodeURIComponent(sid)}&token=${SHARED}`);
      c.close();
    }
  });

  test('a message naming a session outside the rules gets an error and reaches no session', async () => {
    const home = session();
    const loom = await Conn.open(`${server.url}/?session_id=${home}&token=${SHARED}`, ['weft.loom']);
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
    const cueso = await Conn.open(`${server.url}/ws/chat?token=${SHARED}`, ['weft.cueso']);
    cueso.send({ message: 'hi', session_id: 'bad/id/with space' });
    const cErr = await cueso.wait((f) => f.type === 'error');
    assert.match(cErr.message ?? cErr.error, /a session id may contain only/);
    cueso.close();
  });
});

describe('per-user tokens', () => {
  test('a token scoped to its sessions cannot read, resume, approve, cancel or list another', async () => {
    // The victim: a live run waiting for an approval, in a session the token does not name.
    const victimId = session('victim');
    const victim = await Conn.open(`${server.url}/?session_id=${victimId}&token=${SHARED}`, ['weft.loom']);
    victim.send({ type: 'run', id: 'v-run', agent: 'react', message: 'write secret to notes.txt' });
    const ask = (await victim.wait((f) => f.event?.type === 'tool_approval')).event;

    const user = `user-${randomUUID()}`;
    const token = mint({ sub: user, exp: inAnHour(), sessions: [`${user}/*`, 'shared-lobby'] });
    // No socket to the victim's session, whichever way the token travels.
    for (const [path, headers] of /** @type {[string, Record<string, string>][]} */ ([
      [`/?session_id=${victimId}&token=${token}`, {}],
      [`/ws/chat?session_id=${victimId}`, { 'Sec-WebSocket-Protocol': `weft.cueso, weft.token.${token}` }],
      [`/agentloop?session_id=${victimId}`, { Authorization: `Bearer ${token}` }],
    ])) {
      const res = await refusedUpgrade(path, headers);
      assert.equal(res.status, 403, path);
      assert.match(res.body, new RegExp(`may not use session ${victimId}`), path);
    }
    // Its own session works, through each carrier.
    const mine = `${user}/chat-1`;
    const c = await Conn.open(`${server.url}/?session_id=${encodeURIComponent(mine)}`, ['weft.loom', `weft.token.${token}`]);
    const forbidden = async (frame, label) => {
      const from = c.frames.length;
      c.send(frame);
      const err = await c.wait((f) => f.type === 'error', { from });
      assert.match(err.error, new RegExp(`may not use session ${victimId}`), label);
    };
    await forbidden({ type: 'run', id: 'x-run', agent: 'react', message: 'hello', thread_id: victimId }, 'run');
    await forbidden({ type: 'user_messages', id: 'x-list', thread_id: victimId }, 'user_messages');
    // What names no session goes to the socket's own: the victim's run is out of reach.
    let from = c.frames.length;
    c.send({ type: 'resume', run_id: 'v-run', after_event_id: 0 });
    assert.equal((await c.wait((f) => f.type === 'error', { from })).error, 'unknown run v-run in this session');
    from = c.frames.length;
    c.send({ type: 'approval_response', call_id: ask.call_id, review: 'yes' });
    assert.equal((await c.wait((f) => f.type === 'error', { from })).code, 'no_pending_approval');
    from = c.frames.length;
    c.send({ type: 'cancel', id: 'v-run' });
    await c.wait((f) => f.type === 'error', { from });
    // Another dialect, naming the session in its messages.
    const cueso = await Conn.open(`${server.url}/ws/chat?token=${token}`, ['weft.cueso']);
    cueso.send({ message: 'hi', session_id: victimId });
    assert.match((await cueso.wait((f) => f.type === 'error')).message, /may not use session/);
    // Sessions the token names: under its prefix, and the exact one.
    cueso.send({ message: 'hello there', session_id: `${user}/cli` });
    await cueso.wait((f) => f.type === 'final');
    cueso.close();
    from = c.frames.length;
    c.send({ type: 'run', id: 'lobby', agent: 'react', message: 'hello lobby', thread_id: 'shared-lobby' });
    assert.match((await c.wait((f) => f.type === 'run_end' && f.id === 'lobby', { from })).reply, /hello lobby/);
    c.send({ type: 'run', id: 'own', agent: 'react', message: 'hello own', thread_id: mine });
    assert.match((await c.wait((f) => f.type === 'run_end' && f.id === 'own')).reply, /hello own/);
    c.close();
    // A socket that names no session joins a new one under the token's first prefix.
    const fresh = await Conn.open(`${server.url}/?token=${token}`, ['weft.loom']);
    fresh.send({ type: 'run', id: 'f', agent: 'react', message: 'hello fresh' });
    assert.match((await fresh.wait((f) => f.type === 'run_end')).reply, /hello fresh/);
    fresh.close();

    // The victim saw none of it: its approval is still open, its run goes on when it answers.
    assert.ok(!victim.frames.some((f) => f.event?.type === 'approval_resolved'));
    assert.ok(!victim.frames.some((f) => f.type === 'run_end' || f.type === 'error'));
    victim.send({ type: 'approval_response', call_id: ask.call_id, review: 'yes' });
    assert.match((await victim.wait((f) => f.type === 'run_end')).reply, /notes\.txt/);
    victim.send({ type: 'user_messages', id: 'list', thread_id: victimId });
    const list = await victim.wait((f) => f.type === 'user_messages');
    const texts = list.messages.map((m) => JSON.stringify(m));
    assert.match(texts[0], /write secret to notes\.txt/);
    assert.ok(!texts.some((t) => /hello/.test(t)), `the token's messages reached the victim: ${texts}`);
    victim.close();
  });

  test('expired, tampered, unsigned, wrongly signed and malformed tokens are refused before the upgrade and at the proxy', async () => {
    const sid = session('user-7');
    const good = mint({ sub: 'u7', exp: inAnHour(), sessions: [sid] });
    const [h, p, sig] = good.split('.');
    const forged = b64url(JSON.stringify({ sub: 'u7', exp: inAnHour(), sessions: ['*'] }));
    for (const [token, why] of /** @type {[string, RegExp][]} */ ([
      [mint({ sub: 'u7', exp: Math.floor(Date.now() / 1000) - 5, sessions: [sid] }), /expired/],
      [`${h}.${forged}.${sig}`, /bad signature/],
      [`${h}.${p}.${sig.slice(0, -2)}AA`, /bad signature|signature/],
      [mint({ sub: 'u7', exp: inAnHour(), sessions: [sid] }, { secret: 'not-the-secret' }), /bad signature/],
      [`${b64url(JSON.stringify({ alg: 'none' }))}.${p}.`, /alg must be HS256/],
      [mint({ sub: 'u7', exp: inAnHour(), sessions: [sid] }, { header: { alg: 'HS512' } }), /alg must be HS256/],
      [mint({ sub: 'u7', sessions: [sid] }), /exp/],
      [mint({ sub: 'u7', exp: inAnHour(), sessions: ['a b'] }), /sessions/],
      ['not-a-token', /missing or wrong auth token|not a JWT/],
    ])) {
      for (const [path, headers] of [
        [`/?session_id=${sid}&token=${token}`, {}],
        [`/ws?session_id=${sid}`, { Authorization: `Bearer ${token}` }],
      ]) {
        const res = await refusedUpgrade(path, headers);
        assert.equal(res.status, 401, `${token} ${path}`);
        assert.match(res.body, why, token);
      }
      const proxied = await fetch(`${server.http}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(proxied.status, 401, token);
    }
    // The good one opens its session, and may call the proxy.
    const c = await Conn.open(`${server.url}/?session_id=${sid}&token=${good}`, ['weft.loom']);
    c.close();
    const proxied = await fetch(`${server.http}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${good}` },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(proxied.status, 200);
  });
});

describe('limits per session and per client', () => {
  /** A cueso socket of another session, to show it is unaffected. */
  async function unaffected() {
    const other = await Conn.open(`${server.url}/ws/chat?session_id=${session('bystander')}&token=${SHARED}`, ['weft.cueso']);
    other.send({ message: 'still there?' });
    const final = await other.wait((f) => f.type === 'final');
    other.close();
    return final;
  }

  test('200 sockets on one session: 32 join, the rest are closed with 1013 and the reason; another session is unaffected', async () => {
    const sid = session('crowd');
    const conns = await Promise.all(Array.from({ length: 200 }, () => Conn.open(`${server.url}/?session_id=${sid}&token=${SHARED}`, ['weft.loom'])));
    await new Promise((r) => setTimeout(r, 1500));
    const closed = conns.filter((c) => c.closed);
    assert.equal(conns.length - closed.length, 32, 'sockets that stayed open');
    for (const c of closed) {
      assert.equal(c.closed?.code, 1013);
      assert.match(c.closed?.reason, /SOCKETS_PER_SESSION/);
    }
    const open = conns.find((c) => !c.closed);
    assert.ok(open, 'a socket stayed open');
    open.send({ type: 'run', id: 'crowd-run', agent: 'react', message: 'hello crowd' });
    assert.match((await open.wait((f) => f.type === 'run_end')).reply, /hello crowd/);
    assert.match(JSON.stringify(await unaffected()), /still there/);
    for (const c of conns) c.close();
    // Once they are gone, the session takes sockets again.
    await new Promise((r) => setTimeout(r, 500));
    const again = await Conn.open(`${server.url}/?session_id=${sid}&token=${SHARED}`, ['weft.loom']);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(again.closed, null);
    again.close();
  });

  test('frames per session: four sockets together get SESSION_FRAMES_PER_MINUTE, the rest an error', async () => {
    const sid = session('chatty');
    const conns = await Promise.all(Array.from({ length: 4 }, () => Conn.open(`${server.url}/?session_id=${sid}&token=${SHARED}`, ['weft.loom'])));
    conns.forEach((c, i) => {
      for (let j = 0; j < 150; j++) c.send({ type: 'ping', id: `p${i}-${j}` });
    });
    const count = (type) => conns.reduce((n, c) => n + c.frames.filter((f) => f.type === type).length, 0);
    const deadline = Date.now() + 90_000;
    while (count('pong') + count('error') < 600 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    // Each socket's own answers, and how it closed if it did: a socket whose frames all went
    // unanswered once failed this test on a loaded machine, and this says which and why.
    const each = JSON.stringify(
      conns.map((c) => ({
        pong: c.frames.filter((f) => f.type === 'pong').length,
        error: c.frames.filter((f) => f.type === 'error').length,
        closed: c.closed,
      })),
    );
    assert.equal(count('pong'), 400, each);
    assert.equal(count('error'), 200, each);
    const err = conns.flatMap((c) => c.frames).find((f) => f.type === 'error');
    assert.equal(err?.code, 'rate_limited');
    assert.match(err?.error, /SESSION_FRAMES_PER_MINUTE/);
    assert.match(JSON.stringify(await unaffected()), /still there/);
    for (const c of conns) c.close();
  });

  test('runs per session: the run past SESSION_RUNS_PER_MINUTE is refused; another session is unaffected', async () => {
    const c = await Conn.open(`${server.url}/?session_id=${session('busy')}&token=${SHARED}`, ['weft.loom']);
    for (let i = 0; i < 30; i++) {
      c.send({ type: 'run', id: `r${i}`, agent: 'react', message: `hello ${i}` });
      await c.wait((f) => f.type === 'run_end' && f.id === `r${i}`);
    }
    c.send({ type: 'run', id: 'r30', agent: 'react', message: 'one too many' });
    const err = await c.wait((f) => f.type === 'error' && f.id === 'r30');
    assert.equal(err.code, 'rate_limited');
    assert.match(err.error, /SESSION_RUNS_PER_MINUTE/);
    assert.match(JSON.stringify(await unaffected()), /still there/);
    c.close();
  });

  test('new sessions per client: one token creates SESSIONS_PER_MINUTE, then is refused; its old sessions and other clients are not', async () => {
    const sub = `creator-${randomUUID()}`;
    const token = mint({ sub, exp: inAnHour(), sessions: [`${sub}/*`] });
    const open = (name) => Conn.open(`${server.url}/?session_id=${encodeURIComponent(`${sub}/${name}`)}&token=${token}`, ['weft.loom']);
    const made = [];
    for (let i = 0; i < 20; i++) made.push(await open(`s${i}`));
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(
      made.every((c) => !c.closed),
      'the first 20 sessions opened',
    );
    const refused = await open('s20');
    const closed = await refused.waitClose();
    assert.equal(closed.code, 1013);
    assert.match(closed.reason, /SESSIONS_PER_MINUTE/);
    // A message naming a new session reaches the same limit (the link is refused).
    made[0].send({ type: 'run', id: 'via-link', agent: 'react', message: 'hello', thread_id: `${sub}/s21` });
    const err = await made[0].wait((f) => f.type === 'error');
    assert.match(err.error, /SESSIONS_PER_MINUTE/);
    // An existing session is not new: it still takes sockets.
    const back = await open('s0');
    back.send({ type: 'run', id: 'back', agent: 'react', message: 'hello back' });
    assert.match((await back.wait((f) => f.type === 'run_end')).reply, /hello back/);
    back.close();
    // Another client is not held to this one's count.
    const other = `creator-${randomUUID()}`;
    const otherToken = mint({ sub: other, exp: inAnHour(), sessions: [`${other}/*`] });
    const fresh = await Conn.open(`${server.url}/?session_id=${encodeURIComponent(`${other}/s0`)}&token=${otherToken}`, ['weft.loom']);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(fresh.closed, null);
    fresh.close();
    for (const c of made) c.close();
  });

  test('a new session opened by many sockets at once counts once against SESSIONS_PER_MINUTE', async () => {
    const sub = `crowd-${randomUUID()}`;
    const token = mint({ sub, exp: inAnHour(), sessions: [`${sub}/*`] });
    const open = (name) => Conn.open(`${server.url}/?session_id=${encodeURIComponent(`${sub}/${name}`)}&token=${token}`, ['weft.loom']);
    // More sockets than the client's allowance of 20 new sessions. However many of them arrive
    // while the first is being counted (limits.rs's unit tests hold that case exactly; here it
    // depends on timing), the session counts once.
    const crowd = await Promise.all(Array.from({ length: 25 }, () => open('together')));
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(
      crowd.filter((c) => c.closed).map((c) => c.closed),
      [],
      'every socket of the crowd stayed open',
    );
    // It used one of the 20: nineteen more new sessions open, and the one after is refused.
    const more = [];
    for (let i = 0; i < 19; i++) more.push(await open(`s${i}`));
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(
      more.every((c) => !c.closed),
      'nineteen more sessions opened',
    );
    const refused = await open('s19');
    assert.match((await refused.waitClose()).reason, /SESSIONS_PER_MINUTE/);
    for (const c of [...crowd, ...more]) c.close();
  });
});

// Last in this file: it restarts the server to cut the SDK's socket.
describe('weft-sdk with per-user tokens', () => {
  test('a token function is called before every connect and reconnect; a session outside the token is refused', async () => {
    await init();
    const user = `user-${randomUUID()}`;
    const fresh = () => mint({ sub: user, exp: inAnHour(), sessions: [`${user}/*`] });
    const outside = new Client({ url: server.url, dialect: 'loom', server: 'weft', sessionId: session('other'), token: fresh, reconnect: false });
    await assert.rejects(outside.connect());
    outside.close();

    let calls = 0;
    const client = new Client({
      url: server.url,
      dialect: 'loom',
      server: 'weft',
      sessionId: `${user}/sdk`,
      reconnect: { initialDelayMs: 200, maxDelayMs: 1000 },
      token: async () => {
        calls += 1;
        if (calls === 1) throw new Error('the backend is down');
        return fresh();
      },
    });
    await assert.rejects(client.connect());
    await client.connect();
    assert.equal(calls, 2);
    assert.match((await client.run({ message: 'hello sdk', agent: 'react' }).result).reply, /hello sdk/);
    await server.restart();
    const deadline = Date.now() + 60_000;
    while (calls < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.ok(calls >= 3, `the token function was called ${calls} times`);
    assert.match((await client.run({ message: 'hello again', agent: 'react' }).result).reply, /hello again/);
    client.close();
  });
});
