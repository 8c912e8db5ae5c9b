// The demo's modules import downwards only (STYLE.md, JavaScript): no module of www/src reaches,
// through its imports, back to itself. A circle here is what made every part reach into one
// global state; the parts now take the page's `App` and call upwards through `app.actions`.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const src = fileURLToPath(new URL('../../www/src', import.meta.url));

/** Each module's local imports (`./x.mjs`), read from its `import … from` lines. */
function graph() {
  /** @type {Map<string, string[]>} */
  const edges = new Map();
  for (const file of readdirSync(src).filter((f) => f.endsWith('.mjs'))) {
    const text = readFileSync(join(src, file), 'utf8');
    const local = [...text.matchAll(/^import\s[^;]*?from\s+['"]\.\/([^'"]+)['"]/gms)].map((m) => m[1]);
    edges.set(file, local);
  }
  return edges;
}

/**
 * A circle of imports, as the list of modules around it, or null.
 * @param {Map<string, string[]>} edges
 */
function findCircle(edges) {
  /** @type {Map<string, 'open' | 'done'>} */
  const seen = new Map();
  /** @type {string[]} */
  const path = [];
  /** @param {string} m @returns {string[] | null} */
  const visit = (m) => {
    if (seen.get(m) === 'done') return null;
    if (seen.get(m) === 'open') return [...path.slice(path.indexOf(m)), m];
    seen.set(m, 'open');
    path.push(m);
    for (const next of edges.get(m) ?? []) {
      const circle = visit(next);
      if (circle) return circle;
    }
    path.pop();
    seen.set(m, 'done');
    return null;
  };
  for (const m of edges.keys()) {
    const circle = visit(m);
    if (circle) return circle;
  }
  return null;
}

test('www/src imports no module that imports it back', () => {
  const edges = graph();
  assert.ok(edges.get('main.mjs')?.includes('sessions.mjs'), 'the import lines were read (main.mjs imports sessions.mjs)');
  const circle = findCircle(edges);
  assert.equal(circle, null, `a circle of imports: ${circle?.join(' → ')}`);
});

test('the circle finder finds a circle', () => {
  const edges = new Map([
    ['a.mjs', ['b.mjs']],
    ['b.mjs', ['c.mjs']],
    ['c.mjs', ['a.mjs']],
  ]);
  assert.deepEqual(findCircle(edges), ['a.mjs', 'b.mjs', 'c.mjs', 'a.mjs']);
});
