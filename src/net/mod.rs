//! Network mode (`ioscope net`): the link under the storage, measured like iperf3
//! and netperf and reported like a storage run. A server (`serve`) and a client
//! (`run`) speak a small versioned protocol over one control connection; the data
//! moves over N parallel TCP connections, one thread per connection (blocking
//! sockets, as iperf3 3.16+ does: on a 10–100 Gbit/s link the kernel copy, not the
//! loop, is the cost) while there are cores for them, and one thread per core
//! driving several non-blocking sockets when streams outnumber cores ([`group`]). Every interval the client samples each socket's TCP_INFO, and
//! the server reports its own bytes and process CPU time at the end, so totals are
//! what the *receiving* end counted and service demand has both ends.
//!
//! The result is an ordinary [`ResultDoc`](crate::result::ResultDoc) whose run has
//! `kind = "net"`, so JSON, HTML and `ioscope compare` read it like any other.

mod client;
mod config;
mod env;
mod group;
mod iperf3_json;
mod live;
mod measured;
mod outcome;
pub mod peer;
mod protocol;
mod report;
mod server;
mod sockopt;
mod stream;
mod tcp_info;

pub use client::run;
pub use config::{Direction, NetOutput, NetRunConfig, RrSize, ServeConfig, DEFAULT_PORT};
pub use outcome::NetOutcome;
pub use server::serve;

use crate::stdout::StdoutError;

/// An error that ends a network command.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The command line asked for something impossible; nothing was sent.
    #[error("{0}")]
    Input(String),
    /// Could not reach the server, or it stopped answering.
    #[error("{addr}: {what}")]
    Connect { addr: String, what: String },
    /// The peer broke the protocol (not an ioscope server, other version, refused).
    #[error("{addr}: {what}")]
    Protocol { addr: String, what: String },
    /// Writing to stdout failed, or its reader went away (a quiet exit 0).
    #[error(transparent)]
    Stdout(#[from] crate::stdout::StdoutError),
    /// A local socket or file operation failed.
    #[error("{op}")]
    Io {
        op: String,
        #[source]
        source: std::io::Error,
    },
}

impl NetError {
    /// Exit code: 2 for bad input, 0 when stdout's reader went away, 1 for everything
    /// that went wrong while running.
    pub fn exit_code(&self) -> i32 {
        match self {
            NetError::Input(_) => 2,
            NetError::Stdout(StdoutError::Closed) => 0,
            _ => 1,
        }
    }

    pub(crate) fn io(op: impl Into<String>, source: std::io::Error) -> Self {
        NetError::Io {
            op: op.into(),
            source,
        }
    }
}
