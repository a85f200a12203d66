//! NBD targets: `nbd://HOST[:PORT][/EXPORT]` and `nbd+unix:///EXPORT?socket=PATH`.
//! Parsing checks the URI's shape without I/O (so a typo is a located input error);
//! opening connects once through libnbd to learn the export's size, whether it is
//! writable and whether it allows several connections, and to look at its head
//! before anything is written. That connection is closed once it has (nbdkit keeps
//! a pool of threads per connection, which would sit beside the run's); the
//! `--verify-after` pass opens another when it runs, and the engine's workers open
//! their own.

pub mod ffi;

use super::uri::{split_host_port, UriError};
use super::TargetError;
use crate::plan::model::NbdSpec;
use std::sync::Mutex;

/// The NBD port when a URI gives none.
pub const DEFAULT_PORT: u16 = 10809;

/// Parses an `nbd://` or `nbd+unix://` URI (`uri` is the whole text). Credentials and
/// query parameters other than `socket=` are refused: nothing secret belongs in a
/// target name, which appears in results.
pub fn parse(uri: &str) -> Result<NbdSpec, UriError> {
    if let Some(rest) = uri.strip_prefix("nbd+unix://") {
        let Some(rest) = rest.strip_prefix('/') else {
            return Err(UriError::Shape(
                "an nbd+unix URI has no host: write nbd+unix:///EXPORT?socket=PATH",
            ));
        };
        let (export, query) = rest.split_once('?').unwrap_or((rest, ""));
        let socket = query
            .strip_prefix("socket=")
            .filter(|s| !s.is_empty() && !s.contains('&'))
            .ok_or(UriError::Shape(
                "an nbd+unix URI needs exactly one query parameter, socket=PATH",
            ))?;
        return Ok(NbdSpec {
            uri: uri.to_string(),
            server: format!("unix:{socket}"),
            export: export.to_string(),
        });
    }
    if uri.starts_with("nbds://") || uri.starts_with("nbds+unix://") {
        return Err(UriError::Unsupported(
            "NBD over TLS (nbds://) is not supported; use nbd:// or nbd+unix://",
        ));
    }
    let Some(rest) = uri.strip_prefix("nbd://") else {
        return Err(UriError::Shape(
            "expected nbd://HOST[:PORT][/EXPORT] or nbd+unix:///EXPORT?socket=PATH",
        ));
    };
    if rest.contains('?') {
        return Err(UriError::Secret(
            "nbd:// URIs take no query parameters here",
        ));
    }
    let (authority, export) = rest.split_once('/').unwrap_or((rest, ""));
    if authority.contains('@') {
        return Err(UriError::Secret(
            "user names or passwords do not belong in the URI",
        ));
    }
    let (host, port) = split_host_port(authority, DEFAULT_PORT)?;
    Ok(NbdSpec {
        uri: uri.to_string(),
        server: if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        },
        export: export.to_string(),
    })
}

/// An opened NBD export.
pub struct NbdTarget {
    /// The URI the engine's connections use.
    pub uri: String,
    /// Where the server is, for messages.
    pub server: String,
    /// The server advertises multi-conn: several connections see the same data.
    pub multi_conn: bool,
    /// The server accepts trims (NBD_CMD_TRIM).
    pub can_trim: bool,
    /// The reply form every connection asks for (the run's `nbd_structured_replies`).
    pub replies: ffi::Replies,
    /// The reply form the server agreed to when the export was opened (`None`: a
    /// libnbd too old to tell).
    pub negotiated: Option<ffi::Replies>,
    /// The whole export's size (a run may use a prefix of it).
    pub export_bytes: u64,
    /// A connection for reads outside the engine (the verify pass), opened when
    /// first needed: the one that inspected the export is closed once it has, so
    /// the server carries only the engine's connections during the run (nbdkit
    /// keeps a pool of threads per connection), as with fio's nbd engine.
    conn: Mutex<Option<ffi::Conn>>,
}

impl std::fmt::Debug for NbdTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NbdTarget")
            .field("uri", &self.uri)
            .field("server", &self.server)
            .field("multi_conn", &self.multi_conn)
            .finish()
    }
}

impl NbdTarget {
    /// Blocking read through the inspection connection (verify pass).
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let mut guard = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let err = |e: ffi::NbdError| std::io::Error::other(format!("{}: {e}", self.server));
        let conn = match guard.as_mut() {
            Some(c) => c,
            None => guard.insert(ffi::Conn::connect(&self.uri, self.replies).map_err(err)?),
        };
        conn.pread(buf, offset).map_err(err)
    }
}

/// What opening an NBD export learnt: the target and the export's size.
pub struct Opened {
    pub target: NbdTarget,
    pub export_bytes: u64,
}

/// Connects to the export asking for `replies`, learns its size and the reply form
/// the server agreed to, and refuses writes the export cannot take or that would
/// destroy a partition table or filesystem without `force`.
pub fn open(
    spec: &NbdSpec,
    writes: bool,
    force: bool,
    replies: ffi::Replies,
) -> Result<Opened, TargetError> {
    let unavailable = |msg: String| TargetError::Unavailable {
        uri: spec.uri.clone(),
        msg,
    };
    ffi::available().map_err(|e| unavailable(e.to_string()))?;
    let conn = ffi::Conn::connect(&spec.uri, replies).map_err(|e| {
        unavailable(format!(
            "cannot connect to the NBD server at {}{}: {e}",
            spec.server,
            if spec.export.is_empty() {
                String::new()
            } else {
                format!(" (export '{}')", spec.export)
            }
        ))
    })?;
    let export_bytes = conn
        .size_bytes()
        .map_err(|e| unavailable(format!("{}: reading the export size: {e}", spec.server)))?;
    if writes && conn.is_read_only() {
        return Err(TargetError::Invalid {
            uri: spec.uri.clone(),
            msg: format!("the NBD server at {} exports it read-only", spec.server),
        });
    }
    if writes && !force {
        let mut head = vec![0u8; export_bytes.min(128 * 1024) as usize];
        conn.pread(&mut head, 0).map_err(|e| {
            unavailable(format!(
                "{}: reading the export's first bytes: {e}",
                spec.server
            ))
        })?;
        if let Some(s) = super::safety::signature(&head) {
            return Err(TargetError::Unsafe {
                path: spec.uri.clone().into(),
                reason: format!("it carries a {s} signature"),
            });
        }
    }
    Ok(Opened {
        target: NbdTarget {
            uri: spec.uri.clone(),
            server: spec.server.clone(),
            multi_conn: conn.can_multi_conn(),
            can_trim: conn.can_trim().unwrap_or(false),
            replies,
            negotiated: conn.structured_replies(),
            export_bytes,
            // Closed here: the verify pass connects again if it runs.
            conn: Mutex::new(None),
        },
        export_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tcp_and_unix_forms() {
        let s = parse("nbd://127.0.0.1:10900/disk").unwrap();
        assert_eq!(
            (s.server.as_str(), s.export.as_str()),
            ("127.0.0.1:10900", "disk")
        );
        let s = parse("nbd://example").unwrap();
        assert_eq!(
            (s.server.as_str(), s.export.as_str()),
            ("example:10809", "")
        );
        let s = parse("nbd://[::1]:2000/").unwrap();
        assert_eq!(s.server, "[::1]:2000");
        let s = parse("nbd+unix:///x?socket=/tmp/s.sock").unwrap();
        assert_eq!(
            (s.server.as_str(), s.export.as_str()),
            ("unix:/tmp/s.sock", "x")
        );
    }

    #[test]
    fn refuses_malformed_uris() {
        for (uri, want) in [
            ("nbd://", "no host"),
            ("nbd://h:0/x", "bad port"),
            ("nbd://h:99999", "bad port"),
            ("nbd://u:p@h/x", "passwords"),
            ("nbd://h/x?tls=on", "no query"),
            ("nbd+unix:///x", "socket=PATH"),
            ("nbd+unix:///x?socket=/s&x=1", "socket=PATH"),
            ("nbd+unix://h/x?socket=/s", "no host"),
            ("nbds://h/x", "TLS"),
            ("nbd://[::1/x", "unclosed"),
        ] {
            let e = parse(uri).unwrap_err();
            assert!(e.to_string().contains(want), "{uri}: {e}");
        }
    }
}
