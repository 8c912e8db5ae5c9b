//! Every decoder of every dialect, both directions, and the reassembler, on arbitrary bytes.
//!
//! The first byte picks a dialect; the rest is split on `\n` into frames. Each frame is decoded
//! as a client request and as a server frame; whatever decodes is re-encoded (both sides) and
//! fed back through the decoders, and every frame goes through a reassembler. Nothing may panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use weft_protocol::fuzz::decode_reassemble;

fuzz_target!(|data: &[u8]| decode_reassemble(data));
