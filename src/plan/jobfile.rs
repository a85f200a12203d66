//! Native job files (TOML). Placeholder until the reader lands.

use super::model::Plan;

/// A job-file error with its location.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}:{column}: {msg}")]
pub struct JobFileError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub msg: String,
}

/// Parses a native TOML job file.
pub fn parse(file: &str, _text: &str) -> Result<Plan, JobFileError> {
    Err(JobFileError {
        file: file.to_string(),
        line: 1,
        column: 1,
        msg: "native job files are not supported yet".into(),
    })
}
