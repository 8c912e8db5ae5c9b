// weft-sdk entry for browsers and bundlers. The classes come from the wasm-bindgen glue; this
// module adds what a Rust export cannot declare itself: the async-iterator protocol on the
// iterator `run.events()` returns, so `for await (const ev of run.events())` works.
//
// `init()` (the default export) loads the wasm next to this file, found through
// `new URL("weft_sdk_bg.wasm", import.meta.url)`, which browsers and bundlers (Vite, webpack 5,
// esbuild) resolve. Call it once before using anything else.
import init, { RunEvents } from './weft_sdk.js';

if (!(Symbol.asyncIterator in RunEvents.prototype)) {
  Object.defineProperty(RunEvents.prototype, Symbol.asyncIterator, {
    value() {
      return this;
    },
    configurable: true,
    writable: true,
  });
}

export * from './weft_sdk.js';
export default init;
