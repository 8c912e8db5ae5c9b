// The demo chat app (www/) in headless Chromium against the real server: the Worker under
// `wrangler dev` (tests/e2e/server.mjs) serving the built app as static assets, with the
// scripted LLM. The page is loaded through a TCP relay (tests/sdk/harness.mjs) so a test can
// cut the network under it mid-run, as a dropped Wi-Fi would.
//
// What a person would do, one test each: send a message and watch the reply stream; approve a
// tool from the dialog, deny one after asking for an explanation, "always" and "deny & stop";
// watch a GoT graph (and an adaptive one) complete and a ToT tree backtrack; reload the page and
// find the session and its history; speak another dialect; drop the socket mid-run and see the
// run finish with nothing lost; compact the context; and model output that tries to inject HTML.
// Each test saves a screenshot: test-results/www-<test>.png.
//
// Needs pkg/ (scripts/build-sdk) and www/dist (scripts/build-www); builds what is missing.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { renderMarkdown } from '../../www/src/markdown.mjs';
import { startServer } from '../e2e/server.mjs';
import { launchChromium, relay } from '../sdk/harness.mjs';
import { ensureBuilt } from './build.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const results = join(root, 'test-results');
const countTo = (n) => Array.from({ length: n }, (_, i) => i + 1).join(' ');

let server;
let net;
let browser;
let page;
let base;
const problems = [];

before(
  async () => {
    ensureBuilt();
    mkdirSync(results, { recursive: true });
    // One operator variant (README, "Agents"), for the picker's test; the four keep their settings.
    const agents = { support: { agent: 'react', description: 'Our support desk', prompt: 'You are Support.' } };
    server = await startServer({ delayMs: 6, vars: { AGENTS: JSON.stringify(agents) } });
    net = await relay({ host: '127.0.0.1', port: Number(new URL(server.http).port) });
    base = `http://127.0.0.1:${net.port}`;
    browser = await launchChromium();
  },
  { timeout: 900_000 },
);

after(async () => {
  await browser?.close();
  await net?.close();
  await server?.stop();
});

/** Opens the app on a fresh session (or `session`), in `dialect`, and waits for it to be live. */
async function open({ session = crypto.randomUUID(), dialect = 'loom' } = {}) {
  await page.addInitScript((d) => localStorage.setItem('weft.pref.dialect', JSON.stringify(d)), dialect);
  await page.goto(`${base}/?session=${session}`);
  await page.waitForSelector('html[data-ready=true]', { timeout: 30_000 });
  await page.waitForSelector('#conn[data-state=live]', { timeout: 15_000 });
  return session;
}

async function send(text, agent = 'react') {
  await page.click(`.agents input[value=${agent}] + span`);
  await page.fill('#input', text);
  await page.press('#input', 'Enter');
}

/** The last run's section once it has ended; returns its status. */
async function ended(timeout = 20_000) {
  const turn = await page.waitForSelector('#runs .turn:last-of-type:not([data-status=running])', { timeout });
  return turn.getAttribute('data-status');
}

const lastTurn = () => page.locator('#runs .turn').last();
const replyText = () => lastTurn().locator('.markdown.reply').innerText();

describe('the demo app', () => {
  beforeEach(async () => {
    problems.length = 0;
    page = await browser.context.newPage();
    await page.setViewportSize({ width: 1440, height: 900 });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
  });

  afterEach(async (t) => {
    const name = t.name
      .replace(/[^a-z0-9]+/gi, '-')
      .replace(/^-|-$/g, '')
      .toLowerCase()
      .slice(0, 60);
    await page.screenshot({ path: join(results, `www-${name}.png`) }).catch(() => {});
    await page.close();
    assert.deepEqual(problems, [], 'the page logged no errors');
  });

  test('is served by the worker at / with the SDK, and keeps the fallback page out of the way', async () => {
    const index = await fetch(`${server.http}/`);
    assert.equal(index.status, 200);
    const html = await index.text();
    assert.match(html, /<script type="module" src="app.js">/);
    const js = await (await fetch(`${server.http}/app.js`)).text();
    for (const text of [html, js]) assert.doesNotMatch(text, /API_KEY|sk-[A-Za-z0-9]{16}|Bearer [A-Za-z0-9]/, 'no key in the page');
    const wasm = await fetch(`${server.http}/weft_sdk_bg.wasm`);
    assert.equal(wasm.status, 200);
    assert.equal(wasm.headers.get('content-type'), 'application/wasm');
    assert.equal((await fetch(`${server.http}/healthz`)).status, 200);
    assert.equal((await fetch(`${server.http}/no-such-file.js`)).status, 404);
    await open();
    assert.equal(await page.locator('#welcome').isVisible(), true);
  });

  test("the picker offers the operator's agents after the four, and a run asks for the one picked", async () => {
    await open();
    const names = await page.locator('.agents input[name=agent]').evaluateAll((inputs) => inputs.map((i) => i.value));
    assert.deepEqual(names, ['react', 'dup', 'tot', 'got', 'support']);
    assert.equal(await page.locator('.agents label:has(input[value=support])').getAttribute('title'), 'Our support desk');
    await send('who are you', 'support');
    assert.equal(await ended(), 'completed');
    assert.equal(await replyText(), 'I am: You are Support.');
    // Picked again on the next visit.
    await open();
    assert.equal(await page.locator('.agents input[value=support]').isChecked(), true);
  });

  test('sends a message and streams the reply; a tool call is a card with its result', async () => {
    await open();
    await send('count to 150');
    // Seen mid-stream: part of the text, still streaming.
    const partial = await page.waitForFunction(() => {
      const el = document.querySelector('#runs .turn:last-of-type .markdown.streaming');
      const text = el?.textContent ?? '';
      return text.startsWith('1 2 3') && !text.includes('150') ? text : false;
    });
    assert.ok((await partial.jsonValue()).length > 0);
    assert.equal(await ended(), 'completed');
    assert.equal(await replyText(), countTo(150));
    assert.match(await lastTurn().locator('.run-meta').innerText(), /tokens/);

    await send('What time is it?');
    assert.equal(await ended(), 'completed');
    const card = lastTurn().locator('.tool[data-tool=get_time]');
    assert.equal(await card.getAttribute('data-status'), 'done');
    assert.match(await card.locator('.tool-args').innerText(), /timezone\s+UTC/);
    assert.match(await card.locator('.tool-result').innerText(), /\d{4}-\d\d-\d\dT/);
    assert.match(await replyText(), /^It is \d{4}-/);
    assert.match(await page.locator('#usage').innerText(), /tokens in 2 runs/);
  });

  test('approve a tool from the dialog', async () => {
    await open();
    // Every state the tool card goes through, and its arguments as they stream in.
    await page.evaluate(() => {
      window.cards = [];
      new MutationObserver(() => {
        const card = /** @type {HTMLElement | null} */ (document.querySelector('#runs .tool'));
        if (!card) return;
        const seen = `${card.dataset.status}|${/** @type {HTMLElement} */ (card.querySelector('.tool-args')).innerText}`;
        if (window.cards.at(-1) !== seen) window.cards.push(seen);
      }).observe(/** @type {HTMLElement} */ (document.getElementById('runs')), { childList: true, subtree: true, attributes: true, characterData: true });
    });
    await send('write hello to notes.txt');
    const dialog = page.locator('dialog#approval[open]');
    await dialog.waitFor();
    assert.equal(await dialog.locator('#approval-title').innerText(), 'Allow apply_patch?');
    assert.match(await dialog.locator('#approval-args').innerText(), /\*\*\* Add File: notes.txt\s+\+hello/);
    assert.equal(await lastTurn().locator('.tool').getAttribute('data-status'), 'awaiting_approval');
    await page.screenshot({ path: join(results, 'www-approval-dialog.png') });
    await dialog.locator('[data-review=yes]').click();
    assert.equal(await ended(), 'completed');
    const card = lastTurn().locator('.tool[data-tool=apply_patch]');
    assert.equal(await card.getAttribute('data-status'), 'done');
    assert.match(await card.locator('.tool-review').innerText(), /Approved/);
    assert.match(await card.locator('.tool-result').innerText(), /notes.txt/);
    assert.equal(await replyText(), 'Done: I wrote notes.txt.');
    const cards = await page.evaluate(() => window.cards);
    const statuses = [...new Set(cards.map((c) => c.split('|')[0]))];
    assert.deepEqual(
      statuses,
      ['streaming', 'pending', 'awaiting_approval', 'approved', 'running', 'done'].filter((x) => statuses.includes(x)),
    );
    assert.ok(
      ['streaming', 'awaiting_approval', 'approved', 'done'].every((x) => statuses.includes(x)),
      statuses.join(' → '),
    );
    const streamed = cards.filter((c) => c.startsWith('streaming|')).map((c) => c.split('|')[1]);
    assert.ok(streamed.length > 1 && streamed.some((a) => !a.includes('+hello')), 'the arguments filled in while they streamed');
  });

  test('deny a tool after asking for an explanation; the explanation comes before the dialog again', async () => {
    await open();
    await send('write bye to other.txt');
    await page.locator('dialog#approval[open]').waitFor();
    assert.equal(await page.locator('#approval-explain').isHidden(), true);
    await page.click('dialog#approval [data-review=explain]');
    // Asked again, with the model's explanation in the dialog and on the card.
    const again = page.locator('dialog#approval[open] #approval-explain:not([hidden])');
    await again.waitFor({ timeout: 15_000 });
    assert.match(await again.innerText(), /apply_patch.*changes files/s);
    assert.match(await lastTurn().locator('.tool .tool-explain').innerText(), /apply_patch/);
    await page.fill('#approval-message', 'not today');
    await page.screenshot({ path: join(results, 'www-approval-explained.png') });
    await page.click('dialog#approval [data-review=no-continue]');
    assert.equal(await ended(), 'completed');
    const card = lastTurn().locator('.tool[data-tool=apply_patch]');
    assert.equal(await card.getAttribute('data-status'), 'error');
    assert.match(await card.locator('.tool-review').innerText(), /Denied — the agent goes on — “not today”/);
    assert.equal(await replyText(), 'Understood: writing other.txt was denied, so I left it unchanged.');
  });

  test('always allow stops asking; deny & stop ends the run', async () => {
    await open();
    await send('write one to a.txt');
    await page.click('dialog#approval[open] [data-review=always]');
    assert.equal(await ended(), 'completed');
    await send('write two to b.txt');
    assert.equal(await ended(), 'completed');
    assert.equal(await replyText(), 'Done: I wrote b.txt.');
    assert.equal(await lastTurn().locator('.tool').getAttribute('data-status'), 'done');

    await open();
    await send('write three to c.txt');
    await page.click('dialog#approval[open] [data-review=no-exit]');
    await ended();
    const card = lastTurn().locator('.tool[data-tool=apply_patch]');
    assert.match(await card.locator('.tool-review').innerText(), /run stopped/);
    assert.match(await lastTurn().locator('.run-end-note').innerText(), /stopped the run/);
    assert.equal(await lastTurn().locator('.markdown').filter({ hasText: 'Done:' }).count(), 0, 'the model did not carry on');
  });

  test('watch a GoT graph complete', async () => {
    await open();
    // Every picture of the graph the panel draws, to see the nodes change state.
    await page.evaluate(() => {
      window.graphs = [];
      new MutationObserver(() => {
        const g = [.../** @type {NodeListOf<SVGGElement>} */ (document.querySelectorAll('#activity g.got-node'))]
          .map((n) => `${n.dataset.id}:${n.dataset.state}`)
          .join(' ');
        if (g && window.graphs.at(-1) !== g) window.graphs.push(g);
      }).observe(/** @type {HTMLElement} */ (document.getElementById('activity')), { childList: true, subtree: true });
    });
    await send('What time is it; calculate 6*7', 'got');
    assert.equal(await ended(), 'completed');
    const graphs = await page.evaluate(() => window.graphs);
    assert.ok(graphs.includes('s1:running s2:running combine:pending'), graphs.join('\n'));
    assert.ok(
      graphs.some((g) => g.includes('combine:running')),
      graphs.join('\n'),
    );
    const nodes = page.locator('#activity g.got-node');
    assert.deepEqual(await nodes.evaluateAll((els) => els.map((e) => [e.dataset.id, e.dataset.state])), [
      ['s1', 'done'],
      ['s2', 'done'],
      ['combine', 'done'],
    ]);
    assert.equal(await page.locator('#activity path.got-edge').count(), 2, 'combine waits for s1 and s2');
    assert.match(await replyText(), /^Combined: It is .*6\*7 = 42\.$/);
    assert.match(await lastTurn().locator('.step.is-plan_graph summary').innerText(), /Planned 3 sub-tasks, 2 dependencies/);
  });

  test('adaptive GoT splits a node into a graph of its own', async () => {
    await open();
    await page.click('.agents input[value=got] + span');
    await page.check('#adaptive', { force: true });
    await send('check the time and calculate 6*7', 'got');
    assert.equal(await ended(), 'completed');
    const states = Object.fromEntries(await page.locator('#activity g.got-node').evaluateAll((els) => els.map((e) => [e.dataset.id, e.dataset.state])));
    assert.deepEqual(states, { task: 'expanded', 'task.p1': 'done', 'task.p2': 'done' });
    // The sub-tasks sit side by side under the node they split.
    const y = Object.fromEntries(
      await page
        .locator('#activity g.got-node')
        .evaluateAll((els) => els.map((e) => [e.dataset.id, e.getBBox().y + e.transform.baseVal.consolidate().matrix.f])),
    );
    assert.ok(y['task.p1'] === y['task.p2'] && y['task.p1'] > y.task, JSON.stringify(y));
    assert.equal(await page.locator('#activity path.got-edge.is-split').count(), 2);
  });

  test('the ToT tree shows scores and a backtrack', async () => {
    await open();
    await send('What time is it? dead end', 'tot');
    assert.equal(await ended(), 'completed');
    const tree = page.locator('#activity .tot-tree');
    assert.equal(await tree.locator('.tot-node.is-abandoned').count(), 1);
    assert.equal(await tree.locator('.tot-node.is-rejected').count(), 1);
    assert.match(await tree.locator('.tot-node.is-answer').innerText(), /Answer directly.*0\.60/s);
    assert.match(await tree.locator('.tot-backtrack').innerText(), /under the threshold/);
    assert.match(await page.locator('#activity .viz-summary').innerText(), /1 backtrack/);
    assert.match(await replyText(), /^Without tools I can't find out/);
    // The same on a phone, in the dark: the panel is a drawer.
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.setViewportSize({ width: 420, height: 860 });
    await page.click('#toggle-inspector');
    await page.locator('#inspector .tot-tree').waitFor();
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(results, 'www-tot-phone-dark.png') });
    await page.click('#scrim', { position: { x: 8, y: 400 } });
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.emulateMedia({ colorScheme: 'light' });
  });

  test('reload the page and find the session and its history', async () => {
    const session = await open();
    await send('What time is it?');
    assert.equal(await ended(), 'completed');
    const reply = await replyText();
    await page.goto(`${base}/`);
    await page.waitForSelector('html[data-ready=true]');
    await page.waitForSelector('.history-page .msg.assistant');
    assert.equal(await page.locator(`.session.is-active`).getAttribute('data-id'), session);
    assert.equal(await page.locator('.session.is-active .session-title').innerText(), 'What time is it?');
    assert.equal(await page.locator('#session-title').innerText(), 'What time is it?');
    const history = await page.locator('.history-page .msg.user .bubble, .history-page .msg.assistant .markdown').allInnerTexts();
    assert.deepEqual(history, ['What time is it?', reply]);
  });

  test('another dialect: cueso streams, and says where the history lives', async () => {
    await open({ dialect: 'cueso' });
    assert.match(await page.locator('.history-note').innerText(), /History needs loom/);
    await send('count to 30');
    assert.equal(await ended(), 'completed');
    assert.equal(await replyText(), countTo(30));
    assert.equal(await lastTurn().locator('.badge.subtle').innerText(), 'cueso');
    await page.click('.agents input[value=tot] + span');
    assert.match(await page.locator('#hint').innerText(), /needs loom/);
  });

  test('drop the socket mid-run: it reconnects, resumes, and the run finishes whole', async () => {
    await open();
    await send('count to 400');
    await page.waitForFunction(() => document.querySelector('#runs .turn:last-of-type .markdown')?.textContent.includes(' 60 '));
    assert.ok(net.cut() > 0, 'a connection was cut');
    await page.waitForSelector('#conn[data-state=reconnecting]', { timeout: 5_000 });
    assert.match(await page.locator('#banner').innerText(), /Connection lost/);
    await page.waitForSelector('#conn[data-state=resumed]', { timeout: 15_000 });
    assert.equal(await ended(), 'completed');
    assert.equal(await replyText(), countTo(400), 'every number once, in order');
    assert.match(await page.locator('#conn-details').innerText(), /reconnects\s+1/);
  });

  test('stop cancels the run', async () => {
    await open();
    await send('count to 2000');
    await page.waitForFunction(() => document.querySelector('#runs .turn:last-of-type .markdown')?.textContent.includes(' 30 '));
    await page.click('#stop');
    assert.equal(await ended(), 'cancelled');
    assert.equal(await lastTurn().locator('.run-error').innerText(), 'Stopped.');
    assert.equal(await page.locator('#send').isVisible(), true);
  });

  test('a second tab on the session sees the run live', async () => {
    const session = await open();
    const other = await browser.context.newPage();
    try {
      await other.goto(`${base}/?session=${session}`);
      await other.waitForSelector('#conn[data-state=live]');
      await send('count to 80');
      const turn = other.locator('#runs .turn').last();
      await turn.locator('.markdown.streaming').waitFor();
      await other.waitForSelector('#runs .turn:last-of-type[data-status=completed]');
      assert.equal(await turn.locator('.msg.user').innerText(), 'count to 80');
      assert.equal(await turn.locator('.markdown.reply').innerText(), countTo(80));
      assert.equal(await other.locator('#session-title').innerText(), 'count to 80');
      await other.screenshot({ path: join(results, 'www-second-tab.png') });
    } finally {
      await other.close();
    }
  });

  test('reload mid-run, and a second tab: both follow the run from its start; one answer closes both dialogs', async () => {
    const session = await open();
    await send('write hello to notes.txt');
    await page.locator('dialog#approval[open]').waitFor();
    // Another tab opens the session while the run waits: it follows the run, replayed from
    // its start, and is asked too.
    const other = await browser.context.newPage();
    try {
      await other.goto(`${base}/?session=${session}`);
      await other.locator('dialog#approval[open]').waitFor();
      // The first tab is reloaded: it picks the run up again, dialog included.
      await page.reload();
      await page.waitForSelector('#conn[data-state=live]');
      const dialog = page.locator('dialog#approval[open]');
      await dialog.waitFor();
      assert.equal(await dialog.locator('#approval-title').innerText(), 'Allow apply_patch?');
      for (const p of [page, other]) {
        assert.deepEqual(await p.locator('.msg.user').allInnerTexts(), ['write hello to notes.txt'], 'the message once, in the run');
        assert.equal(await p.locator('#stop').isVisible(), true, 'the followed run can be stopped');
      }
      await dialog.locator('[data-review=yes]').click();
      await other.waitForSelector('dialog#approval:not([open])', { state: 'attached' });
      for (const p of [page, other]) {
        await p.waitForSelector('#runs .turn:last-of-type[data-status=completed]');
        assert.equal(await p.locator('#runs .turn .markdown.reply').innerText(), 'Done: I wrote notes.txt.');
        assert.equal(await p.locator('#runs .tool[data-tool=apply_patch]').getAttribute('data-status'), 'done');
      }
      await other.screenshot({ path: join(results, 'www-followed-run.png') });
    } finally {
      await other.close();
    }
  });

  test('the context meter fills from the runs, and compact summarises the session', async () => {
    await open();
    await send('What time is it?');
    assert.equal(await ended(), 'completed');
    await page.waitForFunction(() => /[\d,]+ \/ 128,000 tokens/.test(document.querySelector('#context-tokens')?.textContent ?? ''));
    await page.click('#compact');
    const compacted = page.locator('#runs .note', { hasText: 'Context compacted' });
    await compacted.waitFor({ timeout: 15_000 });
    assert.match(await compacted.innerText(), /→ [\d,]+ tokens/);
    await page.waitForFunction(() => /^1 item/.test(document.querySelector('#context-note')?.textContent ?? ''));
  });

  test('model output cannot inject HTML', async () => {
    await open();
    const evil = '<img src=x onerror="window.__pwned=1"> **bold** [click](javascript:window.__pwned=2) <script>window.__pwned=3</script>';
    await send(evil);
    assert.equal(await ended(), 'completed');
    const reply = lastTurn().locator('.markdown.reply');
    assert.equal(
      await reply.innerText(),
      'You said: <img src=x onerror="window.__pwned=1"> bold [click](javascript:window.__pwned=2) <script>window.__pwned=3</script>',
    );
    assert.equal(await reply.locator('strong').innerText(), 'bold');
    assert.equal(await page.locator('#runs img, #runs script, #runs a[href^="javascript"], #runs [onerror]').count(), 0);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.equal(await page.locator('.session.is-active .session-title').innerText(), `${evil.slice(0, 47)}…`);
  });
});

describe('the Markdown renderer', () => {
  const cases = [
    ['<b>x</b>', '<p>&lt;b&gt;x&lt;/b&gt;</p>'],
    ['<img src=x onerror=alert(1)>', '<p>&lt;img src=x onerror=alert(1)&gt;</p>'],
    ['"quoted" & \'single\'', '<p>&quot;quoted&quot; &amp; &#39;single&#39;</p>'],
    ['[x](javascript:alert(1))', '<p>[x](javascript:alert(1))</p>'],
    ['[x](data:text/html,<script>)', '<p>[x](data:text/html,&lt;script&gt;)</p>'],
    [
      '[x](https://a.example/?q="><script>)',
      '<p><a href="https://a.example/?q=&quot;&gt;&lt;script&gt;" target="_blank" rel="noopener noreferrer nofollow">x</a></p>',
    ],
    ['![pic](https://a.example/p.png)', '<p><a href="https://a.example/p.png" target="_blank" rel="noopener noreferrer nofollow">image: pic</a></p>'],
    ['```html\n<script>alert(1)</script>\n```', '<pre><code class="language-html">&lt;script&gt;alert(1)&lt;/script&gt;</code></pre>'],
    ['```"><img src=x>\ncode', '<pre><code>code</code></pre>'],
    ['`<i>` and **b** and *i* and ~~s~~', '<p><code>&lt;i&gt;</code> and <strong>b</strong> and <em>i</em> and <del>s</del></p>'],
    ['# Title\n- a\n- b\n  1. c', '<h1>Title</h1><ul><li>a</li><li>b<ol><li>c</li></ol></li></ul>'],
    ['> quote\n\nline one\nline two', '<blockquote><p>quote</p></blockquote><p>line one<br>line two</p>'],
    [
      '| a | b |\n|---|--:|\n| 1 | 2 |',
      '<div class="table"><table><thead><tr><th>a</th><th class="align-right">b</th></tr></thead><tbody><tr><td>1</td><td class="align-right">2</td></tr></tbody></table></div>',
    ],
    ['see https://a.example/x.', '<p>see <a href="https://a.example/x" target="_blank" rel="noopener noreferrer nofollow">https://a.example/x</a>.</p>'],
    ['snake_case_word', '<p>snake_case_word</p>'],
    ['nul\u0000byte', '<p>nulbyte</p>'],
  ];
  for (const [source, html] of cases) {
    test(JSON.stringify(source), () => assert.equal(renderMarkdown(source), html));
  }

  test('no tag or attribute it does not write itself, whatever the input', () => {
    const allowed = new Set([
      'p',
      'br',
      'strong',
      'em',
      'del',
      'code',
      'pre',
      'a',
      'h1',
      'h2',
      'h3',
      'h4',
      'h5',
      'h6',
      'ul',
      'ol',
      'li',
      'blockquote',
      'hr',
      'div',
      'table',
      'thead',
      'tbody',
      'tr',
      'th',
      'td',
    ]);
    const pieces = [
      '<',
      '>',
      '"',
      "'",
      '&',
      '`',
      '*',
      '_',
      '[',
      ']',
      '(',
      ')',
      '!',
      '#',
      '|',
      '-',
      '\n',
      ' ',
      'a',
      'javascript:',
      'https://x.example/',
      'onerror=',
      '<script>',
      '<img src=x>',
      '```',
      '> ',
      '1. ',
    ];
    let seed = 7;
    const rand = (n) => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n;
    for (let i = 0; i < 3000; i++) {
      let src = '';
      for (let k = rand(24); k >= 0; k--) src += pieces[rand(pieces.length)];
      const html = renderMarkdown(src);
      for (const [, tag, attrs] of html.matchAll(/<\/?([a-z0-9]+)([^>]*)>/g)) {
        assert.ok(allowed.has(tag), `tag <${tag}> from ${JSON.stringify(src)}`);
        for (const [, name] of attrs.matchAll(/\s([a-z-]+)=/g)) {
          assert.ok(['href', 'target', 'rel', 'class', 'start'].includes(name), `attribute ${name} from ${JSON.stringify(src)}`);
        }
        const href = attrs.match(/href="([^"]*)"/)?.[1];
        if (href) assert.match(href, /^(https?:\/\/|mailto:|#)/, `href ${href} from ${JSON.stringify(src)}`);
      }
      assert.doesNotMatch(html.replace(/<[^>]*>/g, ''), /[<>"]/, `raw markup in text from ${JSON.stringify(src)}`);
    }
  });
});
