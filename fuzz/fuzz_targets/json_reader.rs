//! The frame reader (`weft_protocol::json`) against serde_json on arbitrary bytes: the same
//! texts accepted, to the same values.

#![no_main]

use libfuzzer_sys::fuzz_target;
use weft_protocol::fuzz::json_reader;

fuzz_target!(|data: &[u8]| json_reader(data));
