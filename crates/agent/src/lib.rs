//! The agent engine of weft, independent of any runtime.
//!
//! This crate runs inside a Cloudflare Worker (wasm32) and in native tests alike, so it does no
//! I/O, reads no clock and draws no random numbers: the host moves the bytes and calls in. That
//! keeps every behaviour reproducible from recorded input, which is how the provider codecs are
//! tested (on real recorded streams, split at every byte boundary).
//!
//! It uses `std` only for collections and formatting; the provider codecs are written against
//! `alloc` and would build without it.
//!
//! - [`provider`]: the LLM provider codecs — one provider-neutral [`provider::ChatRequest`] turned
//!   into each provider's HTTP request, and each provider's streamed response turned back into
//!   provider-neutral [`provider::Delta`]s by a sans-IO [`provider::StreamDecoder`]; and the
//!   other way round, the OpenAI Chat Completions API served to a client
//!   ([`provider::parse_completions_request`], [`provider::CompletionsWriter`]).
//! - [`engine`]: a run as a resumable state machine — inputs (LLM deltas, tool results, approval
//!   decisions, cancel) in, canonical events and effects for the host out, checkpointable as
//!   JSON after every step. Its rooms: the run and its inputs, the outbox (the order events
//!   leave in), acting (tools and approvals), responses, the lifecycle (resume, end, fail), the
//!   agent's own state, and one module per agent (see the module docs).
//! - [`mcp`]: a sans-IO client for remote MCP servers (both eras of the spec): listing their
//!   tools and calling them, one [`mcp::Operation`] at a time, the host moving the bytes.
//! - [`tools`]: the built-in tools and the session workspace, a library the host calls when the
//!   engine asks it to run a tool.

#![warn(missing_docs)]

extern crate alloc;

pub mod engine;
pub mod mcp;
pub mod provider;
mod read;
pub mod tools;
