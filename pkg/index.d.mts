// Types of the weft-sdk entry modules (browser, bundler and Node entries share one API).
// Everything is declared by the generated weft_sdk.d.ts; see it for the documentation.
export * from './weft_sdk.js';
export { default } from './weft_sdk.js';
