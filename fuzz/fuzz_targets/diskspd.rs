//! diskspd and SQLIO command lines: both readers, with and without a target override,
//! on the words of the input, must never panic. SQLIO `-F` parameter files resolve
//! under a directory that does not exist.
#![no_main]

use std::path::Path;

use ioscope::plan::compat::{diskspd, split_command_line};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let words: Vec<String> = match split_command_line(text) {
        Ok(w) => w,
        Err(_) => text.split_whitespace().map(String::from).collect(),
    };
    let base = Path::new("/nonexistent-fuzz-dir");
    let _ = diskspd::parse_diskspd(&words, None);
    let _ = diskspd::parse_diskspd(&words, Some("/tmp/fuzz-target"));
    let _ = diskspd::parse_sqlio(&words, base, None);
    let _ = diskspd::parse_sqlio(&words, base, Some("/tmp/fuzz-target"));
});
