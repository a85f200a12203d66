//! Why a command ended early, as types. Every failure a command can meet is one
//! variant wrapping the typed error of the layer that found it; the exit code follows
//! from the variant ([`AppError::exit_code`]). Display strings hold only their own
//! context, never their cause: the binary prints the chain through `source()`
//! ([`chain`]).

use super::exit;
use crate::data::{DataSpecError, JournalError};
use crate::plan::compat::CompatError;
use crate::plan::jobfile::JobFileError;
use crate::run::RunError;
use crate::stdout::StdoutError;
use crate::target::TargetError;
use std::path::PathBuf;

pub use crate::errors::chain;

/// A command-line value refused by a check the flag parser cannot make alone (a
/// value that depends on another flag or on the job file), named like clap names
/// its own refusals: the flag and the text given.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{flag} '{value}': {msg}")]
pub struct FlagError {
    pub flag: String,
    pub value: String,
    pub msg: String,
}

impl FlagError {
    pub fn new(flag: impl Into<String>, value: impl Into<String>, msg: impl ToString) -> Self {
        FlagError {
            flag: flag.into(),
            value: value.into(),
            msg: msg.to_string(),
        }
    }
}

/// An error that ends the command.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// A command-line value refused after parsing.
    #[error(transparent)]
    Flag(#[from] FlagError),
    /// A native job file that does not parse.
    #[error(transparent)]
    JobFile(#[from] JobFileError),
    /// A fio/vdbench/diskspd/SQLIO description that does not translate.
    #[error(transparent)]
    Foreign(#[from] CompatError),
    /// A plan that cannot be written as a native job file (`convert --to toml`).
    #[error(transparent)]
    Emit(#[from] crate::plan::emit::TomlEmitError),
    /// A plan that cannot be written as a fio job file (`convert --to fio`).
    #[error("cannot write as fio")]
    EmitFio(#[source] crate::plan::emit::FioEmitError),
    /// A curve's latency bound in a job description that does not parse (vdbench
    /// `iorate=curve`, fio `latency_target`): which bound and its text.
    #[error("the plan's curve: {what} '{text}'")]
    CurveBound {
        what: &'static str,
        text: String,
        source: BoundError,
    },
    /// Input refused for a reason stated in words (unsupported options, a plan of the
    /// wrong shape for the command); nothing was run.
    #[error("{0}")]
    Refused(String),
    /// Results that `ioscope merge` cannot combine; nothing was written.
    #[error(transparent)]
    Merge(#[from] super::merge_error::MergeError),
    /// A run refused by the checks made before any I/O.
    #[error(transparent)]
    Check(RunError),
    /// A run that failed while running.
    #[error(transparent)]
    Run(RunError),
    /// A target that cannot be opened (outside a run: `verify`).
    #[error(transparent)]
    Target(#[from] TargetError),
    /// A `--credentials` file that cannot be used.
    #[error(transparent)]
    Credentials(#[from] crate::target::smb::credentials::CredentialsError),
    /// A crash journal that cannot be read.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// Data settings (dedup, compression) that cannot be generated.
    #[error("data settings")]
    Data(#[from] DataSpecError),
    /// An input file that cannot be read.
    #[error("{what} '{}'", path.display())]
    Read {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// A result file that is not an ioscope result.
    #[error("result '{}':{line}:{column}: not an ioscope result", path.display())]
    NotAResult {
        path: PathBuf,
        line: usize,
        column: usize,
        source: serde_json::Error,
    },
    /// A result whose recorded plan cannot be read back (`rerun`).
    #[error("result '{}': its plan cannot be read", path.display())]
    PlanUnreadable {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// An output path refused before the first I/O.
    #[error("{flag} '{}': cannot write there", path.display())]
    Unwritable {
        flag: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// Writing an output file failed after measuring.
    #[error("writing '{}'", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Reading the target back (`verify`) failed.
    #[error("reading '{uri}' at byte {offset}")]
    ReadBack {
        uri: String,
        offset: u64,
        source: std::io::Error,
    },
    /// A failure during a command stated in words (e.g. a max run that completed no I/O).
    #[error("{0}")]
    Failed(String),
    /// A network command (`ioscope net`) that failed; the error knows its exit code.
    #[error(transparent)]
    Net(#[from] crate::net::NetError),
    /// Writing to stdout failed, or its reader went away.
    #[error(transparent)]
    Stdout(#[from] StdoutError),
    /// `--metrics` names an address that cannot be served; nothing was run.
    #[error(transparent)]
    Metrics(#[from] crate::metrics::EndpointError),
}

impl AppError {
    /// The documented exit code for this error (README "Exit codes").
    pub fn exit_code(&self) -> i32 {
        use AppError::*;
        match self {
            // A target that cannot be reached (library missing, server down) is a
            // run-time failure, not bad input, even when found by the checks.
            Check(RunError::Target(
                TargetError::Unavailable { .. } | TargetError::NoAnswer { .. },
            ))
            | Target(TargetError::Unavailable { .. } | TargetError::NoAnswer { .. }) => {
                exit::RUN_FAILED
            }
            Flag(_)
            | JobFile(_)
            | Foreign(_)
            | Emit(_)
            | EmitFio(_)
            | CurveBound { .. }
            | Refused(_)
            | Merge(_)
            | Check(_)
            | Target(_)
            | Credentials(_)
            | Journal(_)
            | Data(_)
            | Read { .. }
            | NotAResult { .. }
            | PlanUnreadable { .. }
            | Unwritable { .. }
            | Metrics(_) => exit::BAD_INPUT,
            Run(_) | Write { .. } | ReadBack { .. } | Failed(_) => exit::RUN_FAILED,
            Net(e) => e.exit_code(),
            Stdout(StdoutError::Closed) => exit::OK,
            Stdout(StdoutError::Failed(_) | StdoutError::File(..)) => exit::RUN_FAILED,
        }
    }

    /// True when the command should end without a word: stdout's reader went away.
    pub fn is_quiet(&self) -> bool {
        matches!(
            self,
            AppError::Stdout(StdoutError::Closed)
                | AppError::Net(crate::net::NetError::Stdout(StdoutError::Closed))
        )
    }
}

/// Why a latency bound was refused (the caller names the flag and the text).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BoundError {
    #[error("expected PERCENTILE=DURATION, e.g. p99=0.5ms")]
    Shape,
    #[error("percentile must be one of mean, p50, p90, p95, p99, p99.9, p99.99, max")]
    Statistic,
    #[error(transparent)]
    Duration(#[from] crate::plan::units::UnitError),
}
