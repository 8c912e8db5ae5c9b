//! The provider stream decoders (OpenAI chat, OpenAI Responses, Anthropic, Gemini) on arbitrary
//! bodies cut at arbitrary points: nothing may panic, and every delta sequence must keep the
//! decoder's invariants (checked inside the entry point).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| weft_agent::provider::fuzz_stream_decoder(data));
