// The demo's reader of tool arguments mid-stream (www/src/tools.mjs, `parsePartialJson`): every
// prefix of the arguments a model streams reads as far as it goes, so a tool card fills in
// while they arrive. Plain Node: the module touches no DOM until a card is drawn.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parsePartialJson } from '../../www/src/tools.mjs';

// The scripted model's calls (tests/scripted-llm/rules.mjs), and the shapes real models send
// besides: arrays of strings (a command line), numbers, literals, nesting, escapes.
const ARGUMENTS = [
  { timezone: 'Asia/Tokyo' },
  { expression: '(2+3)*4' },
  { path: 'notes.txt', content: 'hello "quoted" — é \\ back\nline' },
  { patch: '*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch' },
  { command: ['ls', '-la'], workdir: '.' },
  { limit: 1.5, flags: [true, false, null, -2e3], nested: { deep: ['x'] } },
  {},
];

test('every prefix of streamed arguments reads, and the whole reads as JSON.parse does', () => {
  for (const value of ARGUMENTS) {
    const text = JSON.stringify(value);
    for (let n = 1; n < text.length; n++) {
      const prefix = text.slice(0, n);
      const read = parsePartialJson(prefix);
      assert.equal(typeof read, 'object', `${prefix} reads as an object`);
    }
    assert.deepEqual(parsePartialJson(text), value);
  }
});

test('what is still arriving shows as far as it came', () => {
  // The string being streamed as an array's next item is shown, not dropped.
  assert.deepEqual(parsePartialJson('{"command":["ls","-l'), { command: ['ls', '-l'] });
  assert.deepEqual(parsePartialJson('{"path":"no'), { path: 'no' });
  assert.deepEqual(parsePartialJson('{"flags":[true,fa'), { flags: [true, false] });
  assert.deepEqual(parsePartialJson('{"path":"a","con'), { path: 'a' });
});

test('nothing yet, or text that is not JSON, reads as nothing', () => {
  assert.equal(parsePartialJson(''), undefined);
  assert.equal(parsePartialJson('  '), undefined);
  assert.equal(parsePartialJson('not json'), undefined);
});
