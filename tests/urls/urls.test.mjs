// The web_fetch URL check (weft-agent `checked_url`) against Node's WHATWG URL, the parser a
// fetch in a JavaScript runtime uses, over every URL of corpus.json: whatever host the fetch
// would reach, the check must have judged. So a URL whose host Node reads as local or private
// is refused, and a URL the check lets through is the very URL Node reads (same
// serialization, hence same host) and names a public host.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { corpus, nodeHostLocal, nodeParse } from './local.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const corpusPath = fileURLToPath(new URL('./corpus.json', import.meta.url));

/** The Rust verdicts, from `cargo run --example url_verdicts` (built on first use). */
function rustVerdicts() {
  const out = execFileSync('cargo', ['run', '--quiet', '--locked', '-p', 'weft-agent', '--example', 'url_verdicts', '--', corpusPath], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(out);
}

test('the predicates of this test know the spellings they must', () => {
  assert.equal(nodeHostLocal(new URL('http://127。0。0。1/').hostname), true);
  assert.equal(nodeHostLocal(new URL('http://ｌｏｃａｌｈｏｓｔ/').hostname), true);
  assert.equal(nodeHostLocal(new URL('http://[::ffff:127.0.0.1]/').hostname), true);
  assert.equal(nodeHostLocal(new URL('http://[64:ff9b::a9fe:a9fe]/').hostname), true);
  assert.equal(nodeHostLocal(new URL('http://[2002:c0a8:1::1]/').hostname), true);
  assert.equal(nodeHostLocal(new URL('http://[2606:4700:4700::1111]/').hostname), false);
  assert.equal(nodeHostLocal(new URL('http://0x08080808/').hostname), false);
  assert.equal(nodeHostLocal(new URL('http://example.com./').hostname), false);
});

test('every URL of the corpus: what Node would fetch, the Rust check judged', () => {
  assert.ok(corpus.length >= 500, `the corpus has ${corpus.length} urls`);
  const verdicts = rustVerdicts();
  assert.equal(verdicts.length, corpus.length);
  let local = 0;
  let fetched = 0;
  const failures = [];
  corpus.forEach((raw, i) => {
    const verdict = verdicts[i];
    const node = nodeParse(raw);
    const fetchable = node && (node.protocol === 'http:' || node.protocol === 'https:');
    const nodeLocal = fetchable && nodeHostLocal(node.hostname);
    if (nodeLocal) local += 1;
    if (!('fetch' in verdict)) return;
    fetched += 1;
    if (nodeLocal) {
      failures.push(`${JSON.stringify(raw)}: Node reads host ${node.hostname}, the check let it through`);
      return;
    }
    // Let through: Node must read the URL the check returns to the same URL and a public
    // host, and the original to the same URL (the check judged what the fetch reads).
    const again = nodeParse(verdict.fetch);
    if (!again || again.href !== verdict.fetch) {
      failures.push(`${JSON.stringify(raw)}: fetches ${verdict.fetch}, which Node reads as ${again?.href}`);
    } else if (nodeHostLocal(again.hostname)) {
      failures.push(`${JSON.stringify(raw)}: fetches ${verdict.fetch}, a local host`);
    } else if (!node || node.href !== verdict.fetch) {
      failures.push(`${JSON.stringify(raw)}: the check read ${verdict.fetch}, Node ${node?.href}`);
    }
  });
  assert.deepEqual(failures, []);
  // The corpus must mostly aim at local hosts, and the check must not refuse everything.
  assert.ok(local >= 1000, `${local} urls reach a local host per Node`);
  assert.ok(fetched >= 50, `${fetched} urls let through`);
  console.log(`${corpus.length} urls: ${local} reach a local host per Node, ${fetched} let through`);
});

test("the issue's spellings are in the corpus and refused", () => {
  const verdicts = rustVerdicts();
  for (const raw of [
    'https://127。0。0。1:8080/healthz',
    'https://ｌｏｃａｌｈｏｓｔ:8080/healthz',
    'http://127.1/',
    'http://0x7f000001/',
    'http://[::ffff:127.0.0.1]/',
    'http://localhost./',
  ]) {
    const i = corpus.indexOf(raw);
    assert.ok(i >= 0, `${raw} is in the corpus`);
    assert.ok('refused' in verdicts[i], `${raw}: ${JSON.stringify(verdicts[i])}`);
  }
});
