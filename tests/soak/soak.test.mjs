// The short soak inside `npm test`: the same checks as `npm run soak`, small counts.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { SHORT, soak } from './soak.mjs';

test('the short soak: load, faults, kills, a restart, bad input and security all hold', { timeout: 900_000 }, async () => {
  const lines = [];
  const { rows } = await soak(SHORT, { log: (l) => lines.push(l) });
  const failed = rows.filter((r) => !r.ok);
  assert.deepEqual(failed, [], lines.join('\n'));
  assert.ok(rows.length >= 15, `only ${rows.length} checks ran`);
});
