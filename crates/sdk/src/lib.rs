//! # weft-sdk
//!
//! The browser SDK of weft: a thin wasm-bindgen shell over `weft-protocol`.
//!
//! The protocol crate does everything that can be done without I/O — decoding the four
//! dialects, reassembling runs exactly once and in order. [`connection`] adds the client's own
//! rules (reconnect, resume, heartbeats, request correlation, approvals, client tools), also
//! without I/O, so they are tested natively. What is left here is moving values across the
//! boundary: [`Reassembler`], [`Client`], [`Run`] and [`RunEvents`] are the JavaScript
//! classes, [`error`] is the one place errors become JS `Error`s, [`marshal`] the one place
//! values become JS objects.

#![warn(missing_docs)]

mod backoff;
mod client;
mod connection;
mod dialect;
pub mod error;
mod listeners;
pub mod marshal;
mod read;
mod reassembler;
mod run;
mod socket;
pub mod types;

pub use client::Client;
pub use dialect::dialect_info;
pub use reassembler::Reassembler;
pub use run::{Run, RunEvents};

use wasm_bindgen::prelude::wasm_bindgen;

#[wasm_bindgen(typescript_custom_section)]
const TS_RUN_EVENT: &'static str = r#"
/**
 * An event as listeners and iterators receive it: the canonical event in loom's JSON shape
 * (`type` plus payload), its envelope, and `run_id`, the run it belongs to.
 */
export type RunEvent = Event & {
    session_id?: string;
    node_id?: string;
    event_id?: number;
    run_id?: string;
};

/** `for await (const event of run.events())` — the package's entry module adds the method. */
export interface RunEvents {
    [Symbol.asyncIterator](): RunEvents;
}
"#;

// Talc instead of the standard library's dlmalloc: 2.5 KB less gzip of wasm, and push and
// pushMany at the same speed in Chromium (BENCHMARKS.md, section 2). The SDK's wasm is
// single-threaded, which is what this allocator's lock-free cell requires.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
