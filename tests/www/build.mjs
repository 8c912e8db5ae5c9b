// What the demo's Chromium suites need built first: pkg/ (scripts/build-sdk) and www/dist
// (scripts/build-www), made when missing or older than their sources.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Builds the SDK and the app when they are missing or older than their sources. */
export function ensureBuilt() {
  const env = { ...process.env, PATH: `${join(root, 'node_modules/.bin')}:${process.env.HOME}/.cargo/bin:${process.env.PATH}` };
  if (!existsSync(join(root, 'pkg/weft_sdk_bg.wasm'))) {
    execFileSync(join(root, 'scripts/build-sdk'), ['--no-opt'], { cwd: root, env, stdio: 'inherit' });
  }
  const built = join(root, 'www/dist/app.js');
  const newest = (dir) =>
    Math.max(
      ...readdirSync(dir, { recursive: true })
        .map((f) => join(dir, String(f)))
        .filter((f) => statSync(f).isFile())
        .map((f) => statSync(f).mtimeMs),
    );
  const sources = Math.max(
    newest(join(root, 'www/src')),
    ...['index.html', 'app.css', 'theme.js', 'favicon.svg'].map((f) => statSync(join(root, 'www', f)).mtimeMs),
    statSync(join(root, 'pkg/weft_sdk_bg.wasm')).mtimeMs,
  );
  if (!existsSync(built) || statSync(built).mtimeMs < sources) {
    execFileSync(join(root, 'scripts/build-www'), [], { cwd: root, env, stdio: 'inherit' });
  }
}
