//! # weft-protocol
//!
//! The wire of weft, shared by the browser SDK and the edge server so the two can never
//! disagree: the four agent-chat WebSocket dialects (loom, agentloop, agentchat, cueso), one
//! canonical event model they all translate to and from, the [`Sequencer`] that stamps run
//! events with their envelope, and the sans-IO [`Reassembler`] that turns streamed frames back
//! into whole messages and tool calls.
//!
//! `no_std` + `alloc`, no I/O, no clock, no randomness: callers pass bytes in and take values
//! out, so the same code runs in a Worker, in a browser, and in native tests.
//!
//! ```
//! use weft_protocol::{Dialect, Limits, Reassembler};
//!
//! let mut r = Reassembler::new(Dialect::Cueso);
//! r.push_frame(br#"{"type":"content_delta","content":"Hello","role":"assistant"}"#).unwrap();
//! assert_eq!(r.transcript().messages[0].text, "Hello");
//! ```

#![no_std]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

pub mod command;
pub mod dialect;
mod error;
pub mod event;
mod field;
mod frame;
pub mod fuzz;
pub mod json;
pub mod names;
pub mod reassembler;
pub mod sequencer;
pub mod sorted;
pub mod text;
mod uuid;

pub use command::Command;
pub use dialect::{Dialect, Encoder};
pub use error::Error;
pub use event::{Envelope, Event, Sequenced, Usage};
pub use frame::{parse_object, request_id, Limits};
pub use names::{Agent, FinishReason, Review, Role};
pub use reassembler::{Reassembler, Transcript};
pub use sequencer::Sequencer;
