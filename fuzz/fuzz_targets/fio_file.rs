//! fio INI job files: `fio::parse_str` on arbitrary UTF-8 text must return a plan or
//! an error, never panic. `include` lines resolve under a directory that does not
//! exist, so the target never reads the disk; `${VAR}` sees a fixed environment.
#![no_main]

use std::path::Path;

use ioscope::plan::compat::fio;
use libfuzzer_sys::fuzz_target;

fn env(name: &str) -> Option<String> {
    (name == "DEV").then(|| "/dev/nvme0n1".to_string())
}

fuzz_target!(|text: &str| {
    let _ = fio::parse_str("fuzz.fio", text, Path::new("/nonexistent-fuzz-dir"), &env);
});
