//! vdbench parameter files: `vdbench::parse_str` must never panic.
#![no_main]

use ioscope::plan::compat::vdbench;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = vdbench::parse_str("fuzz.parm", text);
});
