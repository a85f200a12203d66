//! NFS targets: `nfs://HOST[:PORT]/EXPORT/PATH[?mountport=N]`, a file on an NFS
//! export reached from user space through libnfs (NFSv3; loaded at run time, see
//! [`ffi`]). The last path component is the file, everything before it the export,
//! as libnfs splits its own URLs. `:PORT` is the NFS service's port and `mountport`
//! the MOUNT service's: given both, no portmapper is asked.
//!
//! Parsing checks the URI's shape without I/O. Opening mounts the export, creates
//! the file filled with data at `--size` if it is missing (or grows a shorter one),
//! like a local file, and keeps that connection for the `--verify-after` pass; the
//! engine's workers open their own. A file on NFS is a plain file: no device
//! signature check guards writes to it.

pub mod ffi;
pub mod tree_dir;

use super::uri::{split_host_port, UriError};
use super::TargetError;
use crate::plan::model::NfsSpec;
use std::sync::Mutex;

/// The NFS port a URI's `:PORT` is compared with (2049); without one the
/// portmapper is asked, as libnfs does.
pub const DEFAULT_PORT: u16 = 2049;

const SHAPE: &str = "expected nfs://HOST[:PORT]/EXPORT/PATH[?mountport=N]";

/// Parses an `nfs://` URI (`uri` is the whole text).
pub fn parse(uri: &str) -> Result<NfsSpec, UriError> {
    let rest = uri.strip_prefix("nfs://").ok_or(UriError::Shape(SHAPE))?;
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let (authority, path) = rest.split_once('/').ok_or(UriError::Shape(
        "no export: write nfs://HOST[:PORT]/EXPORT/PATH",
    ))?;
    if authority.contains('@') {
        return Err(UriError::Secret(
            "nfs:// URIs take no user name (AUTH_SYS uses this process's uid and gid)",
        ));
    }
    let (host, port) = split_host_port(authority, 0).map_err(|e| match e {
        UriError::NoHost => UriError::Shape("no host: write nfs://HOST[:PORT]/EXPORT/PATH"),
        e => e,
    })?;
    let (export, file) = path
        .trim_end_matches('/')
        .rsplit_once('/')
        .ok_or(UriError::Shape(
            "no file after the export: write nfs://HOST[:PORT]/EXPORT/PATH",
        ))?;
    if export.is_empty() || file.is_empty() {
        return Err(UriError::Shape(
            "an export and a file are both needed: nfs://HOST[:PORT]/EXPORT/PATH",
        ));
    }
    if path
        .trim_end_matches('/')
        .split('/')
        .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return Err(UriError::FilePath(path.to_string()));
    }
    let mut mount_port = None;
    for kv in query.into_iter().flat_map(|q| q.split('&')) {
        match kv.split_once('=') {
            Some(("mountport", p)) => {
                mount_port = Some(
                    p.parse::<u16>()
                        .ok()
                        .filter(|&p| p != 0)
                        .ok_or_else(|| UriError::Port(p.to_string()))?,
                )
            }
            _ => {
                return Err(UriError::Shape(
                    "the only query parameter nfs:// URIs take is mountport=N (the NFS port goes after the host)",
                ))
            }
        }
    }
    Ok(NfsSpec {
        uri: uri.to_string(),
        host: host.to_string(),
        nfs_port: (port != 0).then_some(port),
        mount_port,
        export: format!("/{export}"),
        file: file.to_string(),
    })
}

/// `HOST[:PORT]` for messages: the server a failure is about.
pub fn server(spec: &NfsSpec) -> String {
    let host = if spec.host.contains(':') {
        format!("[{}]", spec.host)
    } else {
        spec.host.clone()
    };
    match spec.nfs_port {
        Some(p) => format!("{host}:{p}"),
        None => host,
    }
}

/// The URL handed to libnfs: its own `nfs://SERVER/EXPORT/FILE` form, the ports as
/// its `nfsport`/`mountport` parameters.
pub fn libnfs_url(spec: &NfsSpec) -> String {
    let mut q = Vec::new();
    if let Some(p) = spec.nfs_port {
        q.push(format!("nfsport={p}"));
    }
    if let Some(p) = spec.mount_port {
        q.push(format!("mountport={p}"));
    }
    let query = if q.is_empty() {
        String::new()
    } else {
        format!("?{}", q.join("&"))
    };
    format!("nfs://{}{}/{}{query}", spec.host, spec.export, spec.file)
}

/// An opened file on an NFS export.
pub struct NfsTarget {
    pub spec: NfsSpec,
    /// `HOST[:PORT]`, for messages.
    pub server: String,
    /// Some workload writes: the workers open the file read-write.
    pub writes: bool,
    /// The connection opened to inspect the file, kept for the verify pass.
    client: Mutex<ffi::Client>,
}

impl std::fmt::Debug for NfsTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NfsTarget")
            .field("spec", &self.spec)
            .field("writes", &self.writes)
            .finish()
    }
}

impl NfsTarget {
    /// Blocking read through the inspection connection (verify pass). A read that
    /// fails is tried once more on a new connection: the server may have been
    /// restarted during the run, which the workers reconnected through.
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let mut c = self.client.lock().unwrap_or_else(|p| p.into_inner());
        let r = c.read_at(buf, offset).or_else(|_| {
            *c = self.connect()?;
            c.read_at(buf, offset)
        });
        r.map_err(|e| std::io::Error::other(format!("{}: {e}", self.server)))
    }

    /// How the workers open the file: never creating it.
    fn worker_how(&self) -> ffi::OpenHow {
        ffi::OpenHow {
            write: self.writes,
            create: false,
        }
    }

    /// A new connection to the same file (one per worker and `--connections`).
    pub fn connect(&self) -> Result<ffi::Client, ffi::NfsError> {
        ffi::Client::open(&libnfs_url(&self.spec), self.worker_how())
    }

    /// [`NfsTarget::connect`] without blocking: the mount and open are under way,
    /// driven by polling and servicing the connection (a worker reconnecting).
    pub fn start_connect(&self) -> Result<ffi::Client, ffi::NfsError> {
        ffi::Client::start_open(&libnfs_url(&self.spec), self.worker_how())
    }
}

/// What opening an NFS file learnt: the target and the file's size.
pub struct Opened {
    pub target: NfsTarget,
    pub file_bytes: u64,
}

/// Mounts the export, creates the file at `min_size_bytes` when it is missing (or
/// grows a shorter one, filled with pseudo-random data as local files are), and
/// learns its size.
pub fn open(spec: &NfsSpec, writes: bool, min_size_bytes: u64) -> Result<Opened, TargetError> {
    let srv = server(spec);
    let unavailable = |msg: String| TargetError::Unavailable {
        uri: spec.uri.clone(),
        msg: format!("{srv}: {msg}"),
    };
    ffi::available().map_err(|e| TargetError::Unavailable {
        uri: spec.uri.clone(),
        msg: e.to_string(),
    })?;
    let how = ffi::OpenHow {
        write: writes || min_size_bytes > 0,
        create: min_size_bytes > 0,
    };
    let client = ffi::Client::open(&libnfs_url(spec), how).map_err(|e| match e {
        ffi::NfsError::NotFound(_) => TargetError::Invalid {
            uri: spec.uri.clone(),
            msg: format!("{srv}: {e}"),
        },
        e => unavailable(e.to_string()),
    })?;
    let mut size = client
        .size_bytes()
        .map_err(|e| unavailable(e.to_string()))?;
    if size < min_size_bytes {
        fill(&client, size, min_size_bytes).map_err(|e| {
            unavailable(format!(
                "filling {} to {min_size_bytes} bytes: {e}",
                spec.file
            ))
        })?;
        size = min_size_bytes;
    }
    if size == 0 {
        return Err(TargetError::Invalid {
            uri: spec.uri.clone(),
            msg: "the file is empty; give --size to fill it".into(),
        });
    }
    Ok(Opened {
        target: NfsTarget {
            spec: spec.clone(),
            server: srv,
            writes,
            client: Mutex::new(client),
        },
        file_bytes: size,
    })
}

/// Writes pseudo-random data from `from` to `to` (as local files are filled, so
/// reads find data rather than a hole the server answers without touching
/// storage), then commits it.
fn fill(c: &ffi::Client, from: u64, to: u64) -> Result<(), ffi::NfsError> {
    let chunk_bytes = (c.write_max_bytes() as usize).clamp(64 << 10, 1 << 20);
    let mut chunk = vec![0u8; chunk_bytes];
    let mut rng = crate::rng::Rng::new(0x5eed_f11e ^ from);
    let mut pos = from;
    while pos < to {
        for w in chunk.chunks_exact_mut(8) {
            w.copy_from_slice(&rng.next_u64().to_le_bytes());
        }
        let n = ((to - pos) as usize).min(chunk.len());
        c.write_at(&chunk[..n], pos)?;
        pos += n as u64;
    }
    c.fsync()
}

/// What opening would find, creating nothing: the file's size, or `want_bytes` when
/// the file is missing or shorter and will be created or grown to that size.
/// Mounts the export (an unreachable server is found here, once).
pub fn probe(spec: &NfsSpec, want_bytes: u64) -> Result<u64, TargetError> {
    let srv = server(spec);
    ffi::available().map_err(|e| TargetError::Unavailable {
        uri: spec.uri.clone(),
        msg: e.to_string(),
    })?;
    let how = ffi::OpenHow {
        write: false,
        create: false,
    };
    match ffi::Client::open(&libnfs_url(spec), how) {
        Ok(c) => c
            .size_bytes()
            .map(|s| s.max(want_bytes))
            .map_err(|e| TargetError::Unavailable {
                uri: spec.uri.clone(),
                msg: format!("{srv}: {e}"),
            }),
        Err(ffi::NfsError::NotFound(_)) if want_bytes > 0 => Ok(want_bytes),
        Err(e @ ffi::NfsError::NotFound(_)) => Err(TargetError::Invalid {
            uri: spec.uri.clone(),
            msg: format!("{srv}: {e}"),
        }),
        Err(e) => Err(TargetError::Unavailable {
            uri: spec.uri.clone(),
            msg: format!("{srv}: {e}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_uri_forms() {
        let s = parse("nfs://127.0.0.1:20491/srv/nfs/f.dat?mountport=20492").unwrap();
        assert_eq!(s.host, "127.0.0.1");
        assert_eq!((s.nfs_port, s.mount_port), (Some(20491), Some(20492)));
        assert_eq!((s.export.as_str(), s.file.as_str()), ("/srv/nfs", "f.dat"));
        assert_eq!(
            libnfs_url(&s),
            "nfs://127.0.0.1/srv/nfs/f.dat?nfsport=20491&mountport=20492"
        );
        assert_eq!(server(&s), "127.0.0.1:20491");
        let s = parse("nfs://fs1/nfs/myfiles.0.0.0").unwrap();
        assert_eq!((s.nfs_port, s.mount_port), (None, None));
        assert_eq!(libnfs_url(&s), "nfs://fs1/nfs/myfiles.0.0.0");
        assert_eq!(server(&s), "fs1");
    }

    #[test]
    fn refuses_malformed_uris() {
        for (uri, want) in [
            ("nfs://", "no export"),
            ("nfs://h", "no export"),
            ("nfs://h/export", "no file after the export"),
            ("nfs://h//f", "both needed"),
            ("nfs://u@h/e/f", "no user name"),
            ("nfs://h:0/e/f", "bad port"),
            ("nfs://h/e/../f", "'..'"),
            ("nfs://h/e//f", "bad file path"),
            ("nfs://h/e/f?version=4", "only query parameter"),
            ("nfs://h/e/f?mountport=x", "bad port 'x'"),
            ("nfs://:2049/e/f", "no host"),
        ] {
            let e = parse(uri).unwrap_err().to_string();
            assert!(e.contains(want), "{uri}: {e}");
        }
    }

    #[test]
    fn a_missing_libnfs_names_the_package() {
        // The loader's own wording, with this module's package advice.
        let e = crate::target::dylib::Loader::open(
            "IOSCOPE_TEST_NO_SUCH_LIB",
            "libnfs-none.so.13",
            "libnfs",
            ffi::NEEDED_FOR,
        )
        .err()
        .unwrap()
        .to_string();
        assert!(
            e.contains("install the Debian/Ubuntu package libnfs13"),
            "{e}"
        );
    }
}
