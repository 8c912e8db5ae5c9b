// weft-sdk entry for Node ≥ 22 (the first with a global WebSocket). Same API as the browser
// entry; `init()` without arguments reads the wasm from this package's directory, since Node's
// fetch does not load file: URLs.
import { readFile } from 'node:fs/promises';
import initWeb from './index.mjs';

export * from './index.mjs';

/**
 * Loads the SDK's WebAssembly. Call once (and await) before using anything else; with no
 * argument it reads `weft_sdk_bg.wasm` next to this file.
 * @param {Parameters<typeof initWeb>[0]} [input] what the browser entry's `init()` takes
 */
export default async function init(input) {
  if (input === undefined) {
    input = { module_or_path: await readFile(new URL('./weft_sdk_bg.wasm', import.meta.url)) };
  }
  return initWeb(input);
}
