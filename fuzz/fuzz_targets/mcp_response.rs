//! The MCP client codec on arbitrary response bodies (event streams and JSON, statuses that
//! succeed, refuse and forget the session), cut at arbitrary points, in both eras: nothing may
//! panic, and every operation must end or wait without asking for untracked requests.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| weft_agent::mcp::fuzz_mcp_response(data));
