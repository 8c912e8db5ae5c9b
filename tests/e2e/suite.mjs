// What the end-to-end files share: the Worker under `wrangler dev` with one set of settings,
// sockets that opt in to weft, and the check that the provider key never leaks.
//
// The suite runs the real-provider code path: an OpenAI key and base URL pointing at the
// scripted LLM. The key must never appear in any frame.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import { Conn } from './client.mjs';
import { startServer } from './server.mjs';

export const KEY = 'sk-e2e-do-not-leak-0123456789';
export const TOKEN = 'e2e-token';
export const ALLOWED = 'http://allowed.example';

/** The server of this test file (set by `useServer`). */
export let server;

/** Starts the Worker before this file's tests and stops it after them. */
export function useServer() {
  before(
    async () => {
      server = await startServer({
        delayMs: 2,
        useKey: KEY,
        vars: {
          WEFT_AUTH_TOKEN: TOKEN,
          ALLOWED_ORIGINS: ALLOWED,
          PAUSE_AFTER: 'calculator',
          RATE_LIMIT_PER_MINUTE: '300',
          LLM_IDLE_TIMEOUT_MS: '2000',
          // Room for the 3 MB client tool result of the storage-limit test.
          MAX_FRAME_BYTES: String(4 * 1024 * 1024),
          // Small enough that a session with two long replies compacts automatically; the other
          // tests' sessions stay far below it.
          CONTEXT_WINDOW: '8000',
        },
      });
    },
    { timeout: 900_000 },
  );
  after(async () => {
    await server?.stop();
  });
}

export const session = () => `e2e-${randomUUID()}`;
export const DIALECT_AT = { '/': 'loom', '/agentloop': 'agentloop', '/ws': 'agentchat', '/ws/chat': 'cueso' };
/** A socket that opts in to weft (this suite tests weft's extensions; the original clients,
 * which do not, have tests/originals/). `protocols` given: exactly those. */
export const open = (path, sid, protocols = [`weft.${DIALECT_AT[path]}`]) => Conn.open(`${server.url}${path}?session_id=${sid}&token=${TOKEN}`, protocols);
/** Every frame any test of this file received, to check that the provider key never leaks. */
export const everyFrame = [];
Conn.onFrame = (f) => everyFrame.push(f);

/** Loom run frames of one run: the inner events with the envelope, then run_end/error. */
export function loomRun(frames, runId) {
  return frames.filter((f) => f.id === runId && ['run_stream_event', 'run_end', 'error'].includes(f.type));
}

export function assertDense(ids) {
  assert.deepEqual(
    ids,
    ids.map((_, i) => i + 1),
    `event ids not dense: ${ids}`,
  );
}

/** The last check of a file: the provider key appeared in none of its frames, nor in the
 * server's log (`atLeast` frames were seen, so the check is not vacuous). */
export function keyNeverLeaked(atLeast) {
  describe('keys', () => {
    test('the provider key appeared in no frame of this suite, nor in the server log', () => {
      assert.ok(everyFrame.length > atLeast, `only ${everyFrame.length} frames seen`);
      assert.ok(!JSON.stringify(everyFrame).includes(KEY));
      assert.ok(!server.log().includes(KEY));
    });
  });
}
