// An MCP server behind OAuth, the whole flow in headless Chromium: the demo app (www/, served
// by the real Worker under `wrangler dev`) on weft-sdk, the Worker configured with an MCP
// server that requires the tokens of a local OAuth 2.1 authorization server — both the MCP
// TypeScript SDK's own parts on 127.0.0.1 (tests/e2e/mcp/oauth-servers.mjs; its demo provider
// approves at once, as a user consenting would, and redirects to the Worker's callback).
//
// A run finds the server needs authorizing; `client.onAuthorization` gets the URL; the page
// opens it in a popup, which goes through the authorization server to the Worker's callback;
// `onAuthorization` hears it is authorized; the next message's run calls the server's tool,
// whose result the reply reads — no reload in between.
//
// Then weft-sdk alone in a page of its own, loom and AG-UI (the dialects whose sockets carry
// the event): what `onAuthorization` receives, field by field, and the tool's result in the
// next run's reply.
//
// Needs pkg/ (scripts/build-sdk) and www/dist (scripts/build-www); builds what is missing.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { startOAuthServers } from '../e2e/mcp/oauth-servers.mjs';
import { freePort, startServer } from '../e2e/server.mjs';
import { launchChromium, serveStatic } from '../sdk/harness.mjs';
import { ensureBuilt } from './build.mjs';

const results = join(fileURLToPath(new URL('../..', import.meta.url)), 'test-results');

let server;
let oauth;
let browser;
let web;
let callback = '';

// weft-sdk's two builds the event reaches: loom in `weft-sdk`, AG-UI in `weft-sdk/with-agui`.
// `authorize` runs a message on a fresh session, opens each URL `onAuthorization` gives in a
// popup, and resolves with what the listener got once it heard `authorized`; `ask` runs one
// more message on the same client.
const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>weft-sdk: onAuthorization</title>
<script type="module">
import init, { Client } from '/pkg/index.mjs';
import initAgui, { Client as AguiClient } from '/pkg/with-agui/index.mjs';
await Promise.all([init(), initAgui()]);
const clients = {};
window.authorize = async (url, dialect, sessionId) => {
  const client = new (dialect === 'agui' ? AguiClient : Client)({ url, dialect, sessionId });
  clients[dialect] = client;
  const seen = [];
  const done = new Promise((resolve) => {
    const off = client.onAuthorization((auth) => {
      seen.push(auth);
      if (auth.url) window.open(auth.url, 'authorize-' + auth.server, 'popup');
      if (auth.authorized) {
        off();
        resolve(seen);
      }
    });
  });
  await client.connect();
  const { reply } = await client.run({ message: 'hi' }).result;
  return { reply, seen: await done };
};
window.ask = async (dialect, message) => (await clients[dialect].run({ message }).result).reply;
window.weftReady = true;
</script>`;

before(
  async () => {
    ensureBuilt();
    mkdirSync(results, { recursive: true });
    oauth = await startOAuthServers();
    const port = await freePort();
    callback = `http://127.0.0.1:${port}/mcp/oauth/callback`;
    server = await startServer({
      port,
      vars: {
        MCP_SERVERS: JSON.stringify([{ name: 'notes', url: oauth.url, approval: 'never' }]),
        MCP_OAUTH_REDIRECT_URL: callback,
      },
    });
    web = await serveStatic({ '/': PAGE, '/favicon.ico': '' });
    browser = await launchChromium();
  },
  { timeout: 900_000 },
);

after(async () => {
  await browser?.close();
  await web?.close();
  await server?.stop();
  await oauth?.close();
});

describe('an MCP server behind OAuth, in Chromium', () => {
  test('the run asks, a popup authorizes, and the next run uses the tool with no reload', async () => {
    const page = await browser.context.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    // Every request of the page and its popups, to see where the popup went.
    /** @type {string[]} */
    const requests = [];
    browser.context.on('request', (r) => requests.push(r.url()));
    try {
      await page.goto(`${server.http}/?session=oauth-${crypto.randomUUID()}`);
      await page.waitForSelector('html[data-ready=true]', { timeout: 30_000 });
      await page.waitForSelector('#conn[data-state=live]', { timeout: 15_000 });
      // Set on this document: still there at the end means the page was never reloaded.
      await page.evaluate(() => Object.assign(window, { weftTestMark: 'same page' }));

      const send = async (/** @type {string} */ text) => {
        const turns = await page.locator('#runs .turn').count();
        await page.fill('#input', text);
        await page.press('#input', 'Enter');
        const turn = page.locator('#runs .turn:not([data-status=running])').nth(turns);
        await turn.waitFor({ timeout: 30_000 });
        return turn;
      };

      // Before the user authorizes, the server's tools are not offered: the model cannot call
      // notes_lookup, and the run's ask opens the popup.
      const popup = page.waitForEvent('popup', { timeout: 30_000 });
      const first = await send('use notes_lookup with {"term":"weft"}');
      assert.doesNotMatch(await first.innerText(), /a private note/);
      const opened = await popup;
      await page.locator('.note', { hasText: 'notes is authorized' }).waitFor({ timeout: 30_000 });
      if (!opened.isClosed()) await opened.waitForEvent('close', { timeout: 10_000 });

      // The popup went to the authorization server with the Worker's flow, then to the callback.
      const authorize = requests.map((u) => new URL(u)).find((u) => u.href.startsWith(`${oauth.issuer}authorize`));
      assert.ok(authorize, requests.join('\n'));
      assert.equal(authorize.searchParams.get('redirect_uri'), callback);
      assert.equal(authorize.searchParams.get('resource'), oauth.url);
      assert.ok(
        requests.some((u) => u.startsWith(`${callback}?`)),
        'the popup reached the callback',
      );

      const next = await send('use notes_lookup with {"term":"weft"}');
      assert.equal(await next.getAttribute('data-status'), 'completed');
      assert.match(await next.locator('.markdown.reply').innerText(), /notes_lookup tool returned: weft: a private note/);
      assert.equal(await page.evaluate(() => /** @type {any} */ (window).weftTestMark), 'same page');
      await page.screenshot({ path: join(results, 'www-mcp-oauth.png') });
      assert.deepEqual(problems, [], 'the page logged no errors');
    } finally {
      await page.close();
    }
  });

  test("weft-sdk's onAuthorization gets the URL, then that it is authorized (loom, AG-UI)", async () => {
    const page = await browser.context.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    try {
      await page.goto(`${web.url}/`);
      await page.waitForFunction(() => /** @type {any} */ (window).weftReady === true, null, { timeout: 30_000 });
      for (const dialect of ['loom', 'agui']) {
        const sid = `oauth-sdk-${dialect}-${crypto.randomUUID()}`;
        const authorized = page.evaluate(([url, d, s]) => /** @type {any} */ (window).authorize(url, d, s), [server.url, dialect, sid]);
        const { seen } = await withTimeout(authorized, 45_000, `${dialect}: authorized`);
        assert.equal(seen.length, 2, `${dialect}: ${JSON.stringify(seen)}`);
        const [ask, done] = seen;
        assert.deepEqual(Object.keys(ask).sort(), ['authorized', 'server', 'url'], dialect);
        assert.equal(ask.server, 'notes');
        assert.equal(ask.authorized, false);
        const url = new URL(ask.url);
        assert.equal(`${url.origin}${url.pathname}`, `${oauth.issuer}authorize`, dialect);
        assert.equal(url.searchParams.get('redirect_uri'), callback);
        assert.deepEqual(done, { server: 'notes', authorized: true }, dialect);
        const reply = page.evaluate(([d]) => /** @type {any} */ (window).ask(d, 'use notes_lookup with {"term":"sdk"}'), [dialect]);
        assert.match(await withTimeout(reply, 30_000, `${dialect}: the next run`), /notes_lookup tool returned: sdk: a private note/, dialect);
      }
      assert.deepEqual(problems, [], 'the page threw nothing');
    } finally {
      await page.close();
    }
  });
});

/**
 * `promise`, or a rejection naming `what` after `ms`.
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @param {string} what
 * @returns {Promise<T>}
 */
function withTimeout(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return /** @type {Promise<T>} */ (Promise.race([promise, late])).finally(() => clearTimeout(timer));
}
