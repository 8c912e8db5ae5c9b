// MCP servers behind OAuth, against the real Worker under `wrangler dev`: an authorization
// server and an MCP server that requires its tokens, both the MCP TypeScript SDK's own parts on
// 127.0.0.1 (tests/e2e/mcp/oauth-servers.mjs; the demo provider approves at once, as a user
// consenting would). A run asks, the test follows the authorization URL as a browser would
// (plain HTTP, redirects by hand), the callback reaches the session, and the next run's tool
// call uses the token. The access tokens it issues are said to last one second, so every use
// refreshes first, without the user.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Conn, mintToken } from './client.mjs';
import { startOAuthServers } from './mcp/oauth-servers.mjs';
import { freePort, startServer } from './server.mjs';

const SHARED = 'oauth-shared-token';
const SECRET = 'oauth-secret-0123456789abcdef';
const PRE_ID = 'weft-preregistered';
const PRE_SECRET = 'vault-client-secret-7';

let server;
let oauth;
/** Every frame of every socket, for the leak check. */
const frames = [];

before(
  async () => {
    oauth = await startOAuthServers({ expiresIn: 1 });
    const port = await freePort();
    const redirect = `http://127.0.0.1:${port}/mcp/oauth/callback`;
    // `vault` authorizes as a client the operator registered beforehand (its secret in the
    // form, the only way this server takes one); `notes` registers itself (DCR).
    await oauth.provider.clientsStore.registerClient({
      client_id: PRE_ID,
      client_secret: PRE_SECRET,
      client_id_issued_at: Math.floor(Date.now() / 1000),
      redirect_uris: [redirect],
      token_endpoint_auth_method: 'client_secret_post',
    });
    server = await startServer({
      port,
      logLevel: 'info',
      vars: {
        MCP_SERVERS: JSON.stringify([
          { name: 'notes', url: oauth.url, approval: 'never' },
          { name: 'vault', url: oauth.url, approval: 'never', oauth: { client_id: PRE_ID, client_secret: '${secret:VAULT_SECRET}' } },
        ]),
        VAULT_SECRET: PRE_SECRET,
        WEFT_AUTH_TOKEN: SHARED,
        WEFT_AUTH_SECRET: SECRET,
        MCP_OAUTH_REDIRECT_URL: redirect,
      },
    });
    Conn.onFrame = (f) => frames.push(JSON.stringify(f));
  },
  { timeout: 900_000 },
);

after(async () => {
  Conn.onFrame = undefined;
  await server?.stop();
  await oauth?.close();
});

/** A loom socket of `sid`, with the shared token (the session's grants) or a user's own. */
const open = (sid, token = SHARED) => Conn.open(`${server.url}/?session_id=${sid}&token=${token}`, ['weft.loom']);
const userToken = (sub, sid) => mintToken({ sub, exp: Math.floor(Date.now() / 1000) + 3600, sessions: [sid] }, SECRET);

/** The `value` of a custom event frame of this `type`, if `f` is one. */
function custom(f, type) {
  const value = f.event?.value ?? f.value;
  return value?.type === type ? value : null;
}

/**
 * Runs `message` to its end; its frames, its end, its tool results.
 * @param {Conn} c
 */
async function run(c, message) {
  const id = `run-${randomUUID()}`;
  const from = c.frames.length;
  c.send({ type: 'run', message, agent: 'react', id });
  await c.wait((x) => x.id === id && (x.type === 'run_end' || x.type === 'error'), { from, timeout: 60_000 });
  const mine = c.frames.slice(from).filter((x) => x.id === id);
  return {
    /** @type {any} */
    end: mine.find((x) => x.type === 'run_end'),
    ends: mine.map((x) => x.event).filter((e) => e?.type === 'tool_end'),
  };
}

/** A session whose run was asked to authorize `name`: the socket and the URL. */
async function asked(name = 'notes') {
  const sid = `oauth-${randomUUID()}`;
  const c = await open(sid);
  const from = c.frames.length;
  await run(c, 'hi');
  const frame = await c.wait((f) => custom(f, 'mcp_authorization')?.server === name, { from });
  const ask = custom(frame, 'mcp_authorization');
  return { c, sid, url: new URL(ask.url) };
}

/** What the authorization server sends the browser back to: the callback URL. */
async function consent(url) {
  const r = await fetch(url, { redirect: 'manual' });
  assert.equal(r.status, 302, await r.text());
  return new URL(/** @type {string} */ (r.headers.get('location')));
}

async function callback(url) {
  const r = await fetch(url, { redirect: 'manual' });
  return { status: r.status, text: await r.text() };
}

/** Makes the flow of `state` an hour old, in whichever Durable Object's SQLite file holds it
 * (the server must be down). */
async function ageFlow(persist, state) {
  const { DatabaseSync } = await import('node:sqlite');
  let aged = 0;
  for (const file of readdirSync(persist, { recursive: true }).filter((f) => String(f).endsWith('.sqlite'))) {
    const db = new DatabaseSync(join(persist, String(file)));
    try {
      const has = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'mcp_oauth_flows'").get();
      if (has) aged += Number(db.prepare('UPDATE mcp_oauth_flows SET created = created - 3600000 WHERE state = ?').run(state).changes);
    } finally {
      db.close();
    }
  }
  assert.equal(aged, 1, 'the flow is in one SQLite file');
}

describe('MCP servers behind OAuth', () => {
  test('a run asks, the user authorizes, and the next run calls the tool with the token', async () => {
    const { c, url } = await asked();
    const q = url.searchParams;
    assert.equal(`${url.origin}/`, oauth.issuer);
    assert.equal(q.get('response_type'), 'code');
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.match(q.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.equal(q.get('resource'), oauth.url);
    assert.equal(q.get('redirect_uri'), `${server.http}/mcp/oauth/callback`);
    assert.ok(q.get('client_id'), 'registered by Dynamic Client Registration');
    // Before the user authorizes, the server's tools are not offered.
    c.send({ type: 'tools_list', id: 'before' });
    const before = await c.wait((f) => f.type === 'tools_list' && f.id === 'before');
    assert.ok(!before.tools.some((t) => t.name === 'notes_lookup'));

    const from = c.frames.length;
    const back = await consent(url);
    assert.equal(back.searchParams.get('state'), q.get('state'));
    const done = await callback(back);
    assert.equal(done.status, 200, done.text);
    assert.match(done.text, /notes is authorized/);
    await c.wait((f) => custom(f, 'mcp_authorized')?.server === 'notes', { from });

    // The tools are there with no reload, and the call carries the (refreshed) token.
    c.send({ type: 'tools_list', id: 'after' });
    const listed = await c.wait((f) => f.type === 'tools_list' && f.id === 'after');
    assert.ok(
      listed.tools.some((t) => t.name === 'notes_lookup'),
      JSON.stringify(listed.tools.map((t) => t.name)),
    );
    const refreshed = oauth.provider.refreshed;
    const r = await run(c, 'use notes_lookup with {"term":"weft"}');
    assert.equal(r.ends.length, 1, JSON.stringify(r.ends));
    assert.match(JSON.stringify(r.ends[0]), /weft: a private note/);
    assert.ok(!r.ends[0].is_error, JSON.stringify(r.ends[0]));
    assert.ok(r.end, 'the run ended');
    assert.ok(oauth.provider.refreshed > refreshed, 'the expired access token was refreshed, without the user');
    // An access token the server no longer takes (401) is refreshed once and the call made again.
    oauth.provider.expireAccessTokens();
    const before401 = oauth.provider.refreshed;
    const again = await run(c, 'use notes_lookup with {"term":"again"}');
    assert.match(JSON.stringify(again.ends), /again: a private note/);
    assert.ok(!again.ends[0].is_error, JSON.stringify(again.ends));
    assert.equal(oauth.provider.refreshed, before401 + 1, 'one refresh after the 401');
    c.close();
  });

  test('a forged, replayed or other session state is refused, and the live flow completes', async () => {
    const a = await asked();
    const b = await asked();
    const back = await consent(a.url);
    const state = /** @type {string} */ (back.searchParams.get('state'));
    const [object, secret] = state.split('.');
    const [bObject] = /** @type {string} */ (b.url.searchParams.get('state')).split('.');
    const withState = (s) => {
      const u = new URL(back);
      u.searchParams.set('state', s);
      return u;
    };
    // Forged: an unknown secret for the right session; a state naming no session at all.
    for (const forged of [`${object}.${'A'.repeat(32)}`, 'not-a-session.abc', '']) {
      const r = await callback(withState(forged));
      assert.equal(r.status, 400, `${forged}: ${r.text}`);
    }
    // The right secret sent to another session.
    const other = await callback(withState(`${bObject}.${secret}`));
    assert.equal(other.status, 400, other.text);
    assert.match(other.text, /no authorization of this session/);
    // The live flow is unharmed, once.
    const ok = await callback(back);
    assert.equal(ok.status, 200, ok.text);
    const replayed = await callback(back);
    assert.equal(replayed.status, 400, replayed.text);
    a.c.close();
    b.c.close();
  });

  test('a Worker restarted between the authorization URL and the callback completes the flow; an expired state is refused', async () => {
    const { c, sid, url } = await asked();
    const late = await asked();
    c.close();
    late.c.close();
    const back = await consent(url);
    const lateBack = await consent(late.url);
    // While the Worker is down, the second flow is made an hour old (its SQLite row).
    await server.restart(() => ageFlow(server.persist, /** @type {string} */ (lateBack.searchParams.get('state'))));
    const done = await callback(back);
    assert.equal(done.status, 200, done.text);
    const again = await open(sid);
    const r = await run(again, 'use notes_lookup with {"term":"restart"}');
    assert.match(JSON.stringify(r.ends), /restart: a private note/);
    again.close();
    const expired = await callback(lateBack);
    assert.equal(expired.status, 400, expired.text);
    assert.match(expired.text, /took too long/);
    const twice = await callback(lateBack);
    assert.match(twice.text, /no authorization of this session/, 'an expired flow is gone');
  });

  test('a revoked grant asks the user again', async () => {
    const { c, url } = await asked();
    assert.equal((await callback(await consent(url))).status, 200);
    oauth.provider.revoke();
    const from = c.frames.length;
    const r = await run(c, 'use notes_lookup with {"term":"gone"}');
    assert.equal(r.ends.length, 1);
    assert.ok(r.ends[0].is_error, JSON.stringify(r.ends[0]));
    assert.match(JSON.stringify(r.ends[0]), /needs the user's authorization/);
    await c.wait((f) => custom(f, 'mcp_authorization')?.server === 'notes', { from });
    c.close();
  });

  test("the operator's pre-registered client is used, its secret in the token request", async () => {
    const { c, url } = await asked('vault');
    assert.equal(url.searchParams.get('client_id'), PRE_ID);
    const done = await callback(await consent(url));
    assert.equal(done.status, 200, done.text);
    assert.match(done.text, /vault is authorized/);
    const r = await run(c, 'use vault_lookup with {"term":"pre"}');
    assert.match(JSON.stringify(r.ends), /pre: a private note/);
    c.close();
  });

  test("a user's grant is theirs: another user of the session is asked for their own", async () => {
    const sid = `oauth-users-${randomUUID()}`;
    const ann = await open(sid, userToken('ann', sid));
    const bob = await open(sid, userToken('bob', sid));
    const bobFrom = bob.frames.length;
    await run(ann, 'hi');
    const asked = await ann.wait((f) => custom(f, 'mcp_authorization')?.server === 'notes');
    const done = await callback(await consent(new URL(custom(asked, 'mcp_authorization').url)));
    assert.equal(done.status, 200, done.text);
    assert.ok(!bob.frames.slice(bobFrom).some((f) => custom(f, 'mcp_authorization')), "ann's ask went to ann only");
    // Bob calls the tool ann's authorization made visible: not with ann's token.
    const annFrom = ann.frames.length;
    const refused = await run(bob, 'use notes_lookup with {"term":"bob"}');
    assert.ok(refused.ends[0]?.is_error, JSON.stringify(refused.ends));
    assert.match(JSON.stringify(refused.ends[0]), /needs the user's authorization/);
    await bob.wait((f) => custom(f, 'mcp_authorization')?.server === 'notes', { from: bobFrom });
    assert.ok(!ann.frames.slice(annFrom).some((f) => custom(f, 'mcp_authorization')), "bob's ask went to bob only");
    // Ann's own grant still serves her.
    const mine = await run(ann, 'use notes_lookup with {"term":"ann"}');
    assert.match(JSON.stringify(mine.ends), /ann: a private note/);
    ann.close();
    bob.close();
  });

  test('no token appears in any frame, log line or /status', async () => {
    const status = await (await fetch(`${server.http}/status?token=${SHARED}`)).text();
    const log = server.log();
    assert.ok(oauth.provider.issued.length >= 4, 'tokens were issued');
    for (const token of [...oauth.provider.issued, PRE_SECRET]) {
      assert.ok(!status.includes(token), 'a token in /status');
      assert.ok(!log.includes(token), 'a token in the log');
      assert.ok(!frames.some((f) => f.includes(token)), 'a token in a frame');
    }
  });
});
