//! The SMB client behind `smb://` targets: the pure-Rust `smb` crate (SMB 2/3,
//! signing, encryption, credits), which is asynchronous. Each [`Session`] owns a
//! current-thread tokio runtime and one connection with one authenticated session and
//! one open file; nothing runs between calls, so a worker thread that drives its own
//! session stays a plain thread (see `crate::engine::smb`). Everything that knows the
//! crate's API lives here.

use super::credentials::Credentials;
use crate::plan::model::SmbSpec;
use crate::result::smb::SmbSession;
use smb::{
    Client, ClientConfig, CreateDisposition, CreateOptions, FileAccessMask, FileAttributes,
    FileCreateArgs, GetLen, UncPath,
};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// Credits the client keeps asking for: requests in flight per connection.
pub const CREDITS: u16 = 512;

/// How long one request may take before the connection is declared lost.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a session could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// Wrong user or password: not worth a retry.
    #[error("authentication failed for {user} on {host}")]
    Auth { user: String, host: String },
    /// The file does not exist and was not to be created.
    #[error("{0} does not exist; give --size to create it")]
    NotFound(String),
    #[error("{0}")]
    Other(String),
}

/// One connection, session and open file, with the runtime that drives them (shared
/// by the sessions of one worker).
pub struct Session {
    rt: Arc<tokio::runtime::Runtime>,
    /// Taken in `drop`: the crate's destructors spawn tasks, so they must run with the
    /// runtime entered.
    client: Option<Client>,
    /// The session's connection, asked whether it was lost; taken in `drop`, like
    /// the client.
    conn: Option<Arc<smb::Connection>>,
    /// Dropped in `drop` with the runtime entered, for the same reason.
    file: std::mem::ManuallyDrop<Arc<smb::File>>,
    /// The file's size when it was opened (after any growing).
    pub size_bytes: u64,
    pub max_read_bytes: u32,
    pub max_write_bytes: u32,
    pub info: SmbSession,
}

/// What [`Session::open`] should do about the file.
#[derive(Debug, Clone, Copy)]
pub struct OpenHow {
    /// Open for writing too.
    pub write: bool,
    /// Create the file if missing and grow it to at least this many bytes.
    pub min_size_bytes: Option<u64>,
    /// FILE_WRITE_THROUGH: the server makes each write stable before answering
    /// (`--write-through`, SQLIO's and diskspd's default unbuffered writes).
    pub write_through: bool,
}

fn other(what: &str, e: impl std::fmt::Display) -> OpenError {
    OpenError::Other(format!("{what}: {e}"))
}

/// How every connection is set up: the URI's port, many credits, a request deadline
/// (the multipath engine's `--io-timeout` acts long before it), encryption as asked.
pub(super) fn connection_config(spec: &SmbSpec, require_encryption: bool) -> smb::ConnectionConfig {
    smb::ConnectionConfig {
        port: Some(spec.port),
        timeout: Some(REQUEST_TIMEOUT),
        credits_backlog: Some(CREDITS),
        encryption_mode: if require_encryption {
            smb::connection::EncryptionMode::Required
        } else {
            smb::connection::EncryptionMode::Allowed
        },
        ..Default::default()
    }
}

/// A fresh current-thread runtime: it runs only inside `block_on`, on the caller's
/// thread, so a worker stays a plain thread.
pub fn runtime() -> Result<Arc<tokio::runtime::Runtime>, OpenError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .enable_io()
        .build()
        .map(Arc::new)
        .map_err(|e| other("starting the SMB client's runtime", e))
}

/// Everything a session is opened from, owned, so that opening can run as a task of
/// its own (a worker reconnecting).
#[derive(Debug, Clone)]
pub struct SessionSpec {
    pub spec: SmbSpec,
    pub creds: Credentials,
    pub require_encryption: bool,
    pub how: OpenHow,
}

/// A client authenticated to a share, with its connection: how every single-channel
/// session starts, whether it then opens a file ([`Session`]) or works in a directory
/// (`super::dir::SmbDir`).
pub(super) struct Connected {
    pub client: Client,
    pub conn: Arc<smb::Connection>,
    /// `\\HOST\SHARE`.
    pub share: UncPath,
    /// `HOST:PORT`, for messages.
    pub host: String,
}

/// Connects to `spec`'s server, authenticates and connects to its share (run inside
/// the runtime that will drive the client: its destructors need it).
pub(super) async fn connect_share(
    spec: &SmbSpec,
    creds: &Credentials,
    require_encryption: bool,
) -> Result<Connected, OpenError> {
    super::heap::keep_large_buffers();
    let cfg = ClientConfig {
        dfs: false,
        connection: connection_config(spec, require_encryption),
        ..Default::default()
    };
    let client = Client::new(cfg);
    let host = super::server(spec);
    let share = UncPath::from_str(&format!(r"\\{}\{}", spec.host, spec.share))
        .map_err(|e| other("the share's name", e))?;
    client
        .share_connect(&share, &creds.user, creds.password.expose().to_string())
        .await
        .map_err(|e| classify(e, &creds.user, &host))?;
    let conn = client
        .get_connection(&spec.host)
        .await
        .map_err(|e| other("the connection", e))?;
    if let Some(ci) = conn.conn_info() {
        nodelay_to(ci.server_address);
    }
    Ok(Connected {
        client,
        conn,
        share,
        host,
    })
}

impl Session {
    /// Connects, authenticates, and opens (creating or growing it when asked) the file.
    pub fn open(
        rt: Arc<tokio::runtime::Runtime>,
        spec: &SmbSpec,
        creds: &Credentials,
        require_encryption: bool,
        how: OpenHow,
    ) -> Result<Session, OpenError> {
        let s = SessionSpec {
            spec: spec.clone(),
            creds: creds.clone(),
            require_encryption,
            how,
        };
        rt.clone().block_on(Session::open_async(rt, s))
    }

    /// [`Session::open`] as a future on `rt` (run inside it: the crate's destructors,
    /// also on the error paths, need the runtime).
    pub async fn open_async(
        rt: Arc<tokio::runtime::Runtime>,
        s: SessionSpec,
    ) -> Result<Session, OpenError> {
        let (spec, creds) = (&s.spec, &s.creds);
        let Connected {
            client,
            conn,
            share,
            host,
        } = connect_share(spec, creds, s.require_encryption).await?;
        let path = share.with_path(&spec.path.replace('/', "\\"));
        let file = open_file(&client, &path, s.how).await?;
        let ci = conn
            .conn_info()
            .ok_or_else(|| OpenError::Other("the connection was not negotiated".into()))?;
        let n = &ci.negotiation;
        let size_bytes = file
            .get_len()
            .await
            .map_err(|e| other("the file's size", e))?;
        let info = SmbSession {
            target: spec.uri.clone(),
            server: host,
            user: creds.user.clone(),
            dialect: dialect_name(n.dialect_rev).into(),
            signed: true,
            signing_algorithm: signing_name(n.signing_algo, n.dialect_rev).into(),
            encryption_required: s.require_encryption,
            encryption_cipher: n.encryption_cipher.map(|c| format!("{c:?}")),
            credits_requested: CREDITS,
            credits_granted: conn.credits_granted(),
            max_read_bytes: n.max_read_size,
            max_write_bytes: n.max_write_size,
            channels: 1,
        };
        Ok(Session {
            max_read_bytes: n.max_read_size,
            max_write_bytes: n.max_write_size,
            rt,
            client: Some(client),
            conn: Some(conn),
            file: std::mem::ManuallyDrop::new(Arc::new(file)),
            size_bytes,
            info,
        })
    }

    /// True once the server closed the connection (or it broke): nothing more goes
    /// over it, and the session must be opened again.
    pub fn is_lost(&self) -> bool {
        self.conn.as_ref().is_some_and(|c| c.is_stopped())
    }

    /// The open file, shared with the tasks that do I/O on it.
    pub fn file(&self) -> &Arc<smb::File> {
        &self.file
    }

    /// The runtime that drives this session's tasks.
    pub fn runtime(&self) -> &Arc<tokio::runtime::Runtime> {
        &self.rt
    }

    /// Blocking read of all of `buf` at `offset` (the verify pass).
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let file = Arc::clone(&self.file);
        let chunk = self.max_read_bytes.max(4096) as usize;
        self.rt.block_on(async move {
            let mut done = 0;
            while done < buf.len() {
                let end = buf.len().min(done + chunk);
                let n = file
                    .read_block(&mut buf[done..end], offset + done as u64, None, false)
                    .await?;
                if n == 0 {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!("end of file at {}", offset + done as u64),
                    ));
                }
                done += n;
            }
            Ok(())
        })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Close the file and log off politely; a dead server must not hang the exit.
        let rt = self.rt.clone();
        let _entered = rt.enter();
        let file = Arc::clone(&self.file);
        let closing = Arc::clone(&file);
        let client = self.client.take();
        let conn = self.conn.take();
        let close_file = async move {
            let _ = closing.close().await;
        };
        shut_down(&rt, client, close_file, (conn, file));
        // SAFETY: `self.file` is never used again: this is the session's destructor.
        unsafe { std::mem::ManuallyDrop::drop(&mut self.file) };
        // Let the tasks the destructors spawned take their turn.
        rt.block_on(tokio::task::yield_now());
    }
}

/// Runs `first` (closing what the session opened), logs `client` off, and drops it
/// and `rest` (the crate's objects that hang on it), all on `rt`: the crate's
/// destructors spawn tasks, so they must run inside the runtime. A dead server gets
/// 2 s, so it cannot hang the exit.
pub(super) fn shut_down<R>(
    rt: &tokio::runtime::Runtime,
    client: Option<Client>,
    first: impl std::future::Future<Output = ()>,
    rest: R,
) {
    let _entered = rt.enter();
    rt.block_on(async {
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            first.await;
            if let Some(c) = &client {
                let _ = c.close().await;
            }
        })
        .await;
        drop(client);
        drop(rest);
    });
}

/// Opens the file through the client: read-only, or read-write creating it if
/// missing and growing it to `min_size_bytes`.
async fn open_file(client: &Client, path: &UncPath, how: OpenHow) -> Result<smb::File, OpenError> {
    let create = |args: FileCreateArgs| async move { client.create_file(path, &args).await };
    open_with(create, &path.to_string(), how).await
}

/// [`open_file`] on a tree connected by hand (multichannel sessions): `name` is the
/// file's path inside the share, '\\'-separated.
pub(super) async fn open_in_tree(
    tree: &smb::Tree,
    name: &str,
    share: &UncPath,
    how: OpenHow,
) -> Result<smb::File, OpenError> {
    let create = |args: FileCreateArgs| async move { tree.create(name, &args).await };
    open_with(create, &format!("{share}\\{name}"), how).await
}

/// Opens a file with `create`: read-only, or read-write creating it if missing and
/// growing it to `min_size_bytes`. The crate remembers the size seen at open, so a
/// grown file is opened again to read what was added.
async fn open_with<F, Fut>(create: F, label: &str, how: OpenHow) -> Result<smb::File, OpenError>
where
    F: Fn(FileCreateArgs) -> Fut,
    Fut: std::future::Future<Output = smb::Result<smb::Resource>>,
{
    let args = || {
        let mut access = FileAccessMask::new().with_generic_read(true);
        if how.write {
            access = access.with_generic_write(true);
        }
        FileCreateArgs {
            disposition: if how.min_size_bytes.is_some() {
                CreateDisposition::OpenIf
            } else {
                CreateDisposition::Open
            },
            attributes: FileAttributes::new(),
            options: CreateOptions::new().with_write_through(how.write_through),
            desired_access: access,
        }
    };
    let open = || async {
        let r = create(args()).await.map_err(|e| {
            if status(&e).is_some_and(|c| NOT_FOUND_STATUSES.contains(&c)) {
                OpenError::NotFound(label.to_string())
            } else {
                other(&format!("opening {label}"), e)
            }
        })?;
        if !r.is_file() {
            return Err(OpenError::Other(format!("{label} is not a file")));
        }
        Ok(r.unwrap_file())
    };
    let file = open().await?;
    let Some(min) = how.min_size_bytes else {
        return Ok(file);
    };
    let len = file
        .get_len()
        .await
        .map_err(|e| other("the file's size", e))?;
    if len >= min {
        return Ok(file);
    }
    fill(&file, len, min)
        .await
        .map_err(|e| other(&format!("filling {label} to {min} bytes"), e))?;
    let _ = file.close().await;
    open().await
}

/// Writes pseudo-random data from `from` to `to`, as local files are filled, so reads
/// of a created file find real data rather than a sparse hole the server answers
/// without touching storage.
async fn fill(file: &smb::File, from: u64, to: u64) -> std::io::Result<()> {
    let mut chunk = vec![0u8; 1 << 20];
    let mut rng = crate::rng::Rng::new(0x5eed_f11e ^ from);
    let mut pos = from;
    while pos < to {
        for w in chunk.chunks_exact_mut(8) {
            w.copy_from_slice(&rng.next_u64().to_le_bytes());
        }
        let n = ((to - pos) as usize).min(chunk.len());
        let mut done = 0;
        while done < n {
            let w = file
                .write_block(&chunk[done..n], pos + done as u64, None)
                .await?;
            if w == 0 {
                return Err(std::io::Error::other("the server wrote 0 bytes"));
            }
            done += w;
        }
        pos += n as u64;
    }
    file.flush().await
}

/// The NT status an error carries, when the server sent one.
pub(super) fn status(e: &smb::Error) -> Option<u32> {
    match e {
        smb::Error::ReceivedErrorMessage(code, _) | smb::Error::UnexpectedMessageStatus(code) => {
            Some(*code)
        }
        _ => None,
    }
}

/// STATUS_LOGON_FAILURE, _WRONG_PASSWORD, _NO_SUCH_USER, _ACCOUNT_RESTRICTION,
/// _ACCOUNT_DISABLED, _PASSWORD_EXPIRED: a refused login.
const AUTH_STATUSES: [u32; 6] = [
    0xC000_006D,
    0xC000_006A,
    0xC000_0064,
    0xC000_006E,
    0xC000_0072,
    0xC000_0071,
];

/// STATUS_OBJECT_NAME_NOT_FOUND, STATUS_OBJECT_PATH_NOT_FOUND.
const NOT_FOUND_STATUSES: [u32; 2] = [0xC000_0034, 0xC000_003A];

/// An authentication refusal becomes [`OpenError::Auth`]; anything else keeps its text.
pub(super) fn classify(e: smb::Error, user: &str, host: &str) -> OpenError {
    if status(&e).is_some_and(|c| AUTH_STATUSES.contains(&c)) {
        return OpenError::Auth {
            user: user.to_string(),
            host: host.to_string(),
        };
    }
    OpenError::Other(format!("connecting to {host}: {e}"))
}

/// Turns Nagle's algorithm off on this process's TCP sockets to `peer`. The crate
/// sends a message's transport header and body in separate writes and does not set
/// TCP_NODELAY, so without this every request waits for the server's delayed ACK:
/// measured 46 ms per 8 KiB read at QD 1 (20 IOPS) against smbd on 127.0.0.1. The
/// socket is the crate's, so it is found by its peer address; setting the option on
/// another session's socket to the same server is what that session wants too.
pub(super) fn nodelay_to(peer: std::net::SocketAddr) {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    for e in dir.flatten() {
        let Some(fd) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        if !std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:")) {
            continue;
        }
        if peer_of(fd) == Some(peer) {
            let one: libc::c_int = 1;
            // SAFETY: setsockopt on a socket fd of this process with a valid int option
            // value and its size; it changes only when small writes are sent.
            unsafe {
                libc::setsockopt(
                    fd,
                    libc::IPPROTO_TCP,
                    libc::TCP_NODELAY,
                    &one as *const libc::c_int as *const libc::c_void,
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                )
            };
        }
    }
}

/// The peer address of a connected IPv4/IPv6 socket.
fn peer_of(fd: i32) -> Option<std::net::SocketAddr> {
    // SAFETY: sockaddr_storage is plain data; all-zero is a valid value.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: ss and len are valid for writing and len holds ss's size.
    let r = unsafe { libc::getpeername(fd, &mut ss as *mut _ as *mut libc::sockaddr, &mut len) };
    if r != 0 {
        return None;
    }
    match ss.ss_family as i32 {
        libc::AF_INET => {
            // SAFETY: the family says ss holds a sockaddr_in.
            let a = unsafe { &*(&ss as *const _ as *const libc::sockaddr_in) };
            let ip = std::net::Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
            Some(std::net::SocketAddr::new(
                ip.into(),
                u16::from_be(a.sin_port),
            ))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says ss holds a sockaddr_in6.
            let a = unsafe { &*(&ss as *const _ as *const libc::sockaddr_in6) };
            let ip = std::net::Ipv6Addr::from(a.sin6_addr.s6_addr);
            Some(std::net::SocketAddr::new(
                ip.into(),
                u16::from_be(a.sin6_port),
            ))
        }
        _ => None,
    }
}

fn dialect_name(d: smb::Dialect) -> &'static str {
    match d {
        smb::Dialect::Smb0202 => "2.0.2",
        smb::Dialect::Smb021 => "2.1",
        smb::Dialect::Smb030 => "3.0",
        smb::Dialect::Smb0302 => "3.0.2",
        smb::Dialect::Smb0311 => "3.1.1",
    }
}

/// The signing algorithm in use: negotiated on 3.1.1, fixed by the dialect before.
fn signing_name(algo: Option<smb::SigningAlgorithmId>, d: smb::Dialect) -> &'static str {
    match algo {
        Some(smb::SigningAlgorithmId::HmacSha256) => "HMAC-SHA256",
        Some(smb::SigningAlgorithmId::AesCmac) => "AES-CMAC",
        Some(smb::SigningAlgorithmId::AesGmac) => "AES-GMAC",
        None if d >= smb::Dialect::Smb030 => "AES-CMAC",
        None => "HMAC-SHA256",
    }
}
