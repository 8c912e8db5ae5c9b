// Paths, the toolchain environment (as scripts/env.sh sets it) and small process helpers.

import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../..', import.meta.url));
export const benchDir = fileURLToPath(new URL('..', import.meta.url));

// The same environment the end-to-end harness uses (scripts/env.sh's, for node).
import { toolchainEnv } from '../../e2e/server.mjs';

export { toolchainEnv };

/** The cargo target directory the bench builds into (CARGO_TARGET_DIR, else the repo's). */
export function targetDir() {
  return process.env.CARGO_TARGET_DIR || join(root, 'target');
}

/**
 * Runs a command; resolves with {stdout, stderr, ms}, rejects with its output on failure.
 * @param {string} cmd @param {string[]} args @param {{cwd?: string, env?: object, quiet?: boolean}} opts
 */
export function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { cwd: opts.cwd ?? root, env: opts.env ?? toolchainEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
      if (opts.echo) process.stderr.write(d);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - t0;
      if (code === 0) resolve({ stdout, stderr, ms });
      else reject(new Error(`${cmd} ${args.join(' ')} exited ${code}\n${stderr.slice(-4000)}\n${stdout.slice(-2000)}`));
    });
  });
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

export const log = (...a) => process.stderr.write(`bench: ${a.join(' ')}\n`);
