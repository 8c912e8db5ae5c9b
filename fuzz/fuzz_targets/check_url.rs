//! The `web_fetch` URL check on arbitrary strings: it must agree with the `url` crate's WHATWG
//! parse of them (checked inside the entry point) and never panic.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(input) = std::str::from_utf8(data) {
        weft_agent::tools::fuzz_check_url(input);
    }
});
