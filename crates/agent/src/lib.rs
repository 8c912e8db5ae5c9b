//! The agent engine of weft, independent of any runtime.
//!
//! This crate runs inside a Cloudflare Worker (wasm32) and in native tests alike, so it does no
//! I/O, reads no clock and draws no random numbers: the host moves the bytes and calls in. That
//! keeps every behaviour reproducible from recorded input, which is how the provider codecs are
//! tested (on real recorded streams, split at every byte boundary).
//!
//! It is `no_std` + `alloc` for the same reason the protocol crate is: the build proves that
//! nothing here can reach for the operating system.
//!
//! - [`provider`]: the LLM provider codecs — one provider-neutral [`provider::ChatRequest`] turned
//!   into each provider's HTTP request, and each provider's streamed response turned back into
//!   provider-neutral [`provider::Delta`]s by a sans-IO [`provider::StreamDecoder`].

#![no_std]
#![warn(missing_docs)]

extern crate alloc;

pub mod provider;
