// The bench harness still works: `tests/bench/run.mjs --quick` on a tiny input (the golden
// fixtures as the stream, one run, pkg/ as built, the peers' worker only — no Rust build, no weft
// Worker; the storage section measures the peer alone), into a temporary folder. Benchmarks are not tests: this asserts no timing, only that
// every measurement produced a number and that the report and the raw results are well-formed.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

const runMjs = fileURLToPath(new URL('./run.mjs', import.meta.url));
const root = fileURLToPath(new URL('../..', import.meta.url));

let dir;
let out;
let results;
let markdown;

const finite = (x, what) => assert.ok(Number.isFinite(x), `${what} is not a number: ${x}`);

describe('bench harness (--quick)', () => {
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'weft-bench-smoke-'));
    out = spawnSync(process.execPath, [runMjs, '--quick', '--out', join(dir, 'BENCHMARKS.md'), '--json', join(dir, 'results.json')], {
      cwd: root,
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (out.status === 0) {
      results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8'));
      markdown = readFileSync(join(dir, 'BENCHMARKS.md'), 'utf8');
    }
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  test('run.mjs --quick exits 0 and prints the table', () => {
    assert.equal(out.status, 0, `exit ${out.status}${out.signal ? ` (${out.signal})` : ''}\n${out.stderr.slice(-3000)}`);
    assert.match(out.stdout, /weft bench — targets/);
  });

  test('client: every contestant produced a time and the same transcript', () => {
    const c = results.sections.client;
    const r = c.results.tiny;
    const names = Object.keys(r);
    for (const k of [
      'floor:loom',
      'weft-push:loom',
      'weft-pushMany:cueso',
      'ai-objects',
      'ai-sse',
      'tasks',
      'cf-agents',
      'weft-client',
      'weft-ai',
      'weft-ai-replay',
      'agui-socket',
      'agui-sse',
    ])
      assert.ok(names.includes(k), k);
    const texts = new Set();
    for (const k of names) {
      assert.equal(r[k].length, results.runs);
      for (const m of r[k]) {
        finite(m.ms, `${k} ms`);
        assert.ok(m.units > 0, `${k} units`);
      }
      // The task floor builds nothing.
      if (k !== 'tasks') texts.add(r[k][0].summary.text);
    }
    assert.equal(texts.size, 1, `contestants disagree on the text: ${[...texts]}`);
    assert.equal(c.errors.length, 0, c.errors.join('\n'));
  });

  test('bundle: every app has its sizes', () => {
    const apps = results.sections.bundle.apps;
    for (const k of ['weft', 'ai-sdk-react', 'weft-ai-react', 'cf-agents', 'langgraph']) {
      for (const f of ['raw', 'gzip', 'brotli']) assert.ok(apps[k].total[f] > 0, `${k} ${f}`);
    }
    assert.ok(apps.weft.wasm.gzip > 0);
    assert.ok(apps['weft-ai-react'].wasm.gzip > 0);
    assert.ok(results.sections.bundle.parts['weft-ai'].js.gzip > 0, 'weft-sdk/ai alone');
  });

  test('server: every system produced numbers and lost nothing', () => {
    const s = results.sections.server;
    assert.ok(s.runs.length >= 1);
    for (const row of s.runs) {
      for (const sys of s.systems) {
        for (const phase of ['one', 'many']) {
          finite(row[sys][phase].tokensPerS, `${sys} ${phase} tokens/s`);
          finite(row[sys][phase].ttftMs, `${sys} ${phase} first token`);
          assert.equal(row[sys][phase].lostTokens, 0, `${sys} ${phase} lost tokens`);
        }
      }
    }
    for (const row of s.paced) for (const sys of s.systems) finite(row[sys].p50, `${sys} paced p50`);
  });

  test('storage: rows written per turn and bytes after every turn (the peer; no weft Worker in --quick)', () => {
    const st = results.sections.storage;
    for (const sys of st.systems) {
      const p = st.paced[sys];
      assert.ok(p.first.rowsWritten > 0, `${sys} first turn rows`);
      assert.ok(p.turns.length >= 1, `${sys} measured turns`);
      for (const t of p.turns) assert.ok(t.rows > 0, `${sys} rows per turn: ${t.rows}`);
      const c = st.curve[sys];
      assert.equal(c.length, st.opts.curveTurns);
      for (const pt of c) {
        assert.ok(pt.bytes > 0, `${sys} bytes after ${pt.turn} turns`);
        assert.ok(pt.chars > 0, `${sys} conversation after ${pt.turn} turns`);
      }
    }
    assert.deepEqual(st.problems, []);
  });

  test('BENCHMARKS.md is well-formed', () => {
    assert.match(markdown, /^# Benchmarks\n/);
    for (const h of ['## Targets', '## 1. Client stream processing', '## 2. Bundle size', '## 3. Server', '## 5. Storage', '## Machine, versions, commands']) {
      assert.ok(markdown.includes(h), `missing section ${h}`);
    }
    // Every table: each row has as many cells as its header; no NaN or undefined in a cell.
    const lines = markdown.split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i].startsWith('|') || (i > 0 && lines[i - 1].startsWith('|'))) continue;
      const cells = (l) => l.replace(/\\\|/g, '').split('|').length;
      const n = cells(lines[i]);
      for (let j = i + 1; j < lines.length && lines[j].startsWith('|'); j++) {
        assert.equal(cells(lines[j]), n, `table row ${j + 1} has ${cells(lines[j])} cells, header ${n}: ${lines[j]}`);
        assert.doesNotMatch(lines[j], /\bNaN\b|undefined/, `line ${j + 1}: ${lines[j]}`);
      }
    }
  });
});
