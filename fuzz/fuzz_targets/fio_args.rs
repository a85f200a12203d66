//! fio command lines: `split_command_line` then `fio::parse_args` must never panic.
#![no_main]

use ioscope::plan::compat::{fio, split_command_line};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(args) = split_command_line(text) {
        let _ = fio::parse_args(&args);
    }
});
