//! The MCP authorization flow's parsers (challenge, metadata, registration and token answers,
//! the callback's query) on arbitrary text: nothing may panic.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| weft_agent::mcp::fuzz_mcp_auth(data));
