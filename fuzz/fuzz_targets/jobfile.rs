//! Native TOML job files: `jobfile::parse` must never panic.
#![no_main]

use ioscope::plan::jobfile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = jobfile::parse("fuzz.toml", text);
});
