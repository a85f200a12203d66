//! SMB targets: `smb://[USER@]HOST[:PORT]/SHARE/PATH`, a file on an SMB2/3 share.
//! Parsing checks the URI's shape without I/O (a typo is a located input error) and
//! never accepts a password in it: passwords come only from `IOSCOPE_SMB_PASSWORD` or
//! a `--credentials` file (see [`credentials`]), so nothing secret reaches a target
//! name, which appears in results. Opening (the `client` module, cargo feature `smb`)
//! connects, creates the file at `--size` if it is missing, and keeps that session for
//! the `--verify-after` pass; the engine's workers open their own sessions.

pub mod credentials;
pub mod tree_dir;
pub mod tree_uri;

#[cfg(feature = "smb")]
pub mod channels;
#[cfg(feature = "smb")]
pub mod client;
#[cfg(feature = "smb")]
pub mod dir;
#[cfg(feature = "smb")]
pub mod errno;
#[cfg(feature = "smb")]
pub mod heap;

use super::uri::UriError;
use crate::plan::model::SmbSpec;

/// The SMB port when a URI gives none.
pub const DEFAULT_PORT: u16 = 445;

/// Parses an `smb://` URI (`uri` is the whole text).
pub fn parse(uri: &str) -> Result<SmbSpec, UriError> {
    const SHAPE: &str = "expected smb://[USER@]HOST[:PORT]/SHARE/PATH";
    const NO_FILE: &str = "no file path after the share: write smb://HOST/SHARE/PATH";
    let Some(rest) = uri.strip_prefix("smb://") else {
        return Err(UriError::Shape(SHAPE));
    };
    if rest.contains('?') || rest.contains('#') {
        return Err(UriError::Shape("smb:// URIs take no query parameters"));
    }
    let (authority, path) = rest.split_once('/').ok_or(UriError::Shape(
        "no share: write smb://[USER@]HOST[:PORT]/SHARE/PATH",
    ))?;
    let (user, hostport) = match authority.rsplit_once('@') {
        Some((u, _)) if u.contains(':') => return Err(UriError::Secret(
            "a password does not belong in the URI: use IOSCOPE_SMB_PASSWORD or --credentials FILE",
        )),
        Some(("", _)) => return Err(UriError::Shape("empty user name before '@'")),
        Some((u, h)) => (Some(u.to_string()), h),
        None => (None, authority),
    };
    let (host, port) = split_host_port(hostport)?;
    let (share, file) = path.split_once('/').ok_or(UriError::Shape(NO_FILE))?;
    if share.is_empty() {
        return Err(UriError::Shape("empty share name"));
    }
    let file = file.trim_matches('/');
    if file.is_empty() {
        return Err(UriError::Shape(NO_FILE));
    }
    if file
        .split('/')
        .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return Err(UriError::FilePath(file.to_string()));
    }
    if file.contains('\\') {
        return Err(UriError::Shape("use '/' between path components, not '\\'"));
    }
    Ok(SmbSpec {
        uri: uri.to_string(),
        user,
        host: host.to_string(),
        port,
        share: share.to_string(),
        path: file.to_string(),
    })
}

/// `HOST`, `HOST:PORT`, `[V6]` or `[V6]:PORT`: the NBD/iSCSI reader, with the
/// missing-host message naming the SMB URI's shape.
fn split_host_port(authority: &str) -> Result<(&str, u16), UriError> {
    super::uri::split_host_port(authority, DEFAULT_PORT).map_err(|e| match e {
        UriError::NoHost => UriError::Shape("no host: write smb://[USER@]HOST[:PORT]/SHARE/PATH"),
        e => e,
    })
}

/// `HOST:PORT` for messages (IPv6 in brackets).
pub fn server(spec: &SmbSpec) -> String {
    if spec.host.contains(':') {
        format!("[{}]:{}", spec.host, spec.port)
    } else {
        format!("{}:{}", spec.host, spec.port)
    }
}

/// Why an SMB server's name gives no address to connect to.
#[derive(Debug, thiserror::Error)]
pub enum AddressError {
    #[error("cannot resolve '{host}'")]
    Lookup {
        host: String,
        source: std::io::Error,
    },
    #[error("'{host}' resolves to no address")]
    NoAddress { host: String },
}

/// The socket address `spec`'s server resolves to (the first, as a client connects).
pub fn address(spec: &SmbSpec) -> Result<std::net::SocketAddr, AddressError> {
    use std::net::ToSocketAddrs;
    (spec.host.as_str(), spec.port)
        .to_socket_addrs()
        .map_err(|source| AddressError::Lookup {
            host: spec.host.clone(),
            source,
        })?
        .next()
        .ok_or_else(|| AddressError::NoAddress {
            host: spec.host.clone(),
        })
}

/// `spec`'s URI with the server at `addr` (a channel's URI: no password, as ever).
pub fn uri_at(spec: &SmbSpec, addr: std::net::SocketAddr) -> String {
    let user = spec
        .user
        .as_deref()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    format!("smb://{user}{addr}/{}/{}", spec.share, spec.path)
}

/// An opened SMB file: how to reach it again (each worker opens its own session) and
/// the session kept for the `--verify-after` pass.
#[cfg(feature = "smb")]
pub struct SmbTarget {
    pub spec: SmbSpec,
    /// `HOST:PORT`, for messages.
    pub server: String,
    creds: credentials::Credentials,
    require_encryption: bool,
    writes: bool,
    /// The workers open the file with FILE_WRITE_THROUGH (`--write-through`).
    write_through: bool,
    session: std::sync::Mutex<client::Session>,
    /// What the inspection session negotiated, for the result.
    pub info: crate::result::smb::SmbSession,
}

/// Without the `smb` feature no SMB target can be opened: the type is empty.
#[cfg(not(feature = "smb"))]
#[derive(Debug)]
pub enum SmbTarget {}

#[cfg(not(feature = "smb"))]
impl SmbTarget {
    /// Never called: no value of this type exists.
    pub fn read_at(&self, _buf: &mut [u8], _offset: u64) -> std::io::Result<()> {
        match *self {}
    }
}

#[cfg(feature = "smb")]
impl std::fmt::Debug for SmbTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmbTarget")
            .field("uri", &self.spec.uri)
            .field("server", &self.server)
            .field("user", &self.creds.user)
            .finish()
    }
}

#[cfg(feature = "smb")]
impl SmbTarget {
    /// Blocking read through the inspection session (verify pass). A read on a
    /// session that was lost is tried once more on a new one: the server may have
    /// been restarted during the run, which the workers reconnected through.
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let mut s = self.session.lock().unwrap_or_else(|p| p.into_inner());
        let mut r = s.read_at(buf, offset);
        if r.is_err() && s.is_lost() {
            let rt = s.runtime().clone();
            *s = self.connect(rt).map_err(std::io::Error::other)?;
            r = s.read_at(buf, offset);
        }
        r.map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", self.server)))
    }

    /// How the workers open the file.
    fn worker_how(&self) -> client::OpenHow {
        client::OpenHow {
            write: self.writes,
            min_size_bytes: None,
            write_through: self.write_through,
        }
    }

    /// A new multichannel session to the same file (one per worker), channel 0 on
    /// the target's own address; channels are bound with [`channels::ChannelSet::channel`].
    pub fn open_channels(
        &self,
        plan: &channels::ChannelPlan,
    ) -> Result<channels::ChannelSet, client::OpenError> {
        // OpenError keeps its causes as text (see client.rs): the whole chain goes in.
        let primary =
            address(&self.spec).map_err(|e| client::OpenError::Other(crate::errors::chain(&e)))?;
        channels::ChannelSet::open(
            &self.spec,
            primary,
            &self.creds,
            self.require_encryption,
            self.worker_how(),
            plan,
        )
    }

    /// A new session to the same file on `rt` (one per worker).
    pub fn connect(
        &self,
        rt: std::sync::Arc<tokio::runtime::Runtime>,
    ) -> Result<client::Session, client::OpenError> {
        rt.clone().block_on(self.connect_async(rt))
    }

    /// [`SmbTarget::connect`] as a future to run on `rt`, owning what it needs: a
    /// worker's reconnect attempt runs it as a task of its own.
    pub fn connect_async(
        &self,
        rt: std::sync::Arc<tokio::runtime::Runtime>,
    ) -> impl std::future::Future<Output = Result<client::Session, client::OpenError>> + Send + 'static
    {
        client::Session::open_async(
            rt,
            client::SessionSpec {
                spec: self.spec.clone(),
                creds: self.creds.clone(),
                require_encryption: self.require_encryption,
                how: self.worker_how(),
            },
        )
    }
}

/// What opening an SMB file learnt: the target and the file's size.
pub struct Opened {
    pub target: SmbTarget,
    pub file_bytes: u64,
}

/// Connects with the configured credentials, creates the file at `min_size_bytes`
/// when it is missing (or grows a shorter one), and learns its size. A refused login
/// is reported once, as "authentication failed for USER on HOST", and never retried.
/// `write_through` is for the workers' sessions (the filling here is not timed).
#[cfg(feature = "smb")]
pub fn open(
    spec: &SmbSpec,
    writes: bool,
    min_size_bytes: u64,
    write_through: bool,
) -> Result<Opened, super::TargetError> {
    let unavailable = |msg: String| super::TargetError::Unavailable {
        uri: spec.uri.clone(),
        msg,
    };
    let creds = credentials::resolve(spec.user.as_deref()).map_err(|source| {
        super::TargetError::Credentials {
            uri: spec.uri.clone(),
            source,
        }
    })?;
    let opts = credentials::options();
    let rt = client::runtime().map_err(|e| unavailable(e.to_string()))?;
    let session = client::Session::open(
        rt,
        spec,
        &creds,
        opts.require_encryption,
        client::OpenHow {
            write: writes || min_size_bytes > 0,
            min_size_bytes: (min_size_bytes > 0).then_some(min_size_bytes),
            write_through: false,
        },
    )
    .map_err(|e| match e {
        client::OpenError::NotFound(_) => super::TargetError::Invalid {
            uri: spec.uri.clone(),
            msg: e.to_string(),
        },
        e => unavailable(e.to_string()),
    })?;
    if session.size_bytes == 0 {
        return Err(super::TargetError::Invalid {
            uri: spec.uri.clone(),
            msg: "the file is empty or missing; give --size to create it".into(),
        });
    }
    let file_bytes = session.size_bytes;
    let info = session.info.clone();
    Ok(Opened {
        target: SmbTarget {
            spec: spec.clone(),
            server: server(spec),
            creds,
            require_encryption: opts.require_encryption,
            writes,
            write_through,
            session: std::sync::Mutex::new(session),
            info,
        },
        file_bytes,
    })
}

/// What opening would find, creating nothing: the file's size, or `want_bytes` when
/// the file is missing and will be created at that size. Connects and authenticates
/// (so a wrong password is found here, once).
#[cfg(feature = "smb")]
pub fn probe(spec: &SmbSpec, want_bytes: u64) -> Result<u64, super::TargetError> {
    let creds = credentials::resolve(spec.user.as_deref()).map_err(|source| {
        super::TargetError::Credentials {
            uri: spec.uri.clone(),
            source,
        }
    })?;
    let unavailable = |msg: String| super::TargetError::Unavailable {
        uri: spec.uri.clone(),
        msg,
    };
    let rt = client::runtime().map_err(|e| unavailable(e.to_string()))?;
    let how = client::OpenHow {
        write: false,
        min_size_bytes: None,
        write_through: false,
    };
    let opts = credentials::options();
    match client::Session::open(rt, spec, &creds, opts.require_encryption, how) {
        Ok(s) => Ok(s.size_bytes.max(want_bytes)),
        Err(client::OpenError::NotFound(_)) if want_bytes > 0 => Ok(want_bytes),
        Err(e @ client::OpenError::NotFound(_)) => Err(super::TargetError::Invalid {
            uri: spec.uri.clone(),
            msg: e.to_string(),
        }),
        Err(e) => Err(unavailable(e.to_string())),
    }
}

/// Without the `smb` feature: a clear refusal.
#[cfg(not(feature = "smb"))]
pub fn probe(spec: &SmbSpec, _want_bytes: u64) -> Result<u64, super::TargetError> {
    open(spec, false, 0, false).map(|o| o.file_bytes)
}

/// Without the `smb` feature: a clear refusal.
#[cfg(not(feature = "smb"))]
pub fn open(
    spec: &SmbSpec,
    _writes: bool,
    _min_size_bytes: u64,
    _write_through: bool,
) -> Result<Opened, super::TargetError> {
    Err(super::TargetError::Unavailable {
        uri: spec.uri.clone(),
        msg:
            "this ioscope was built without SMB support; rebuild with `cargo build --features smb`"
                .into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_uri_forms() {
        let s = parse("smb://alice@127.0.0.1:4450/share/dir/f.dat").unwrap();
        assert_eq!(s.user.as_deref(), Some("alice"));
        assert_eq!((s.host.as_str(), s.port), ("127.0.0.1", 4450));
        assert_eq!((s.share.as_str(), s.path.as_str()), ("share", "dir/f.dat"));
        let s = parse("smb://fs1/data/x").unwrap();
        assert_eq!((s.user, s.port), (None, 445));
        let s = parse("smb://[::1]:4450/s/f").unwrap();
        assert_eq!(server(&s), "[::1]:4450");
    }

    #[test]
    fn refuses_malformed_uris() {
        for (uri, want) in [
            ("smb://", "no share"),
            ("smb://h", "no share"),
            ("smb://h/share", "no file path"),
            ("smb://h/share/", "no file path"),
            ("smb://h//f", "empty share"),
            ("smb://u:pw@h/s/f", "password"),
            ("smb://@h/s/f", "empty user"),
            ("smb://h:0/s/f", "bad port"),
            ("smb://h/s/a/../b", "'..'"),
            ("smb://h/s/f?x=1", "no query"),
            ("smb://:445/s/f", "no host"),
        ] {
            let e = parse(uri).unwrap_err().to_string();
            assert!(e.contains(want), "{uri}: {e}");
        }
    }
}
