//! libnfs, loaded at run time like libnbd and libiscsi (see `crate::target::dylib`):
//! opened with `dlopen` the first time an `nfs://` target is used, and only the
//! functions ioscope calls are looked up. [`Client`] wraps one `struct nfs_context`
//! with the export mounted and one file open; everything unsafe about libnfs is here.
//!
//! The signatures are libnfs 4.0's (`libnfs.so.13`, Debian 12's libnfs13): there the
//! asynchronous read hands the callback a pointer to the data it received (libnfs 5
//! reads into the caller's buffer instead), so [`on_read`] copies it into the
//! request's buffer. Completions are recorded as `(tag, result)` in the driving
//! thread's list, drained with [`take_done`]. A connection is opened either
//! blocking ([`Client::open`]) or, to reconnect without stalling a worker, started
//! with [`Client::start_open`] (`nfs_mount_async`, then `nfs_open_async` from its
//! callback) and driven by the same poll and service calls as the I/O, its
//! [`Progress`] asked until it is ready. `IOSCOPE_LIBNFS` overrides the library's
//! name.

pub mod paths;

use crate::target::dylib::{c_message, loaded_library, sym, thread_done_list, LoadError, Loader};
use libloading::Library;
use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_int, c_void, CStr, CString};

#[repr(C)]
struct Context {
    _private: [u8; 0],
}

#[repr(C)]
struct FileHandle {
    _private: [u8; 0],
}

/// `struct nfs_url` from libnfs.h.
#[repr(C)]
struct Url {
    server: *mut c_char,
    path: *mut c_char,
    file: *mut c_char,
}

/// `struct nfs_stat_64` from libnfs.h (all fields spelt out for the layout).
#[repr(C)]
#[derive(Default)]
struct Stat64 {
    dev: u64,
    ino: u64,
    mode: u64,
    nlink: u64,
    uid: u64,
    gid: u64,
    rdev: u64,
    size: u64,
    blksize: u64,
    blocks: u64,
    atime: u64,
    mtime: u64,
    ctime: u64,
    atime_nsec: u64,
    mtime_nsec: u64,
    ctime_nsec: u64,
    used: u64,
}

/// `nfs_cb`: `(err, nfs, data, private_data)`.
type Callback = unsafe extern "C" fn(c_int, *mut Context, *mut c_void, *mut c_void);
type FnInit = unsafe extern "C" fn() -> *mut Context;
type FnCtx = unsafe extern "C" fn(*mut Context);
type FnCtxInt = unsafe extern "C" fn(*mut Context) -> c_int;
type FnCtxSetInt = unsafe extern "C" fn(*mut Context, c_int) -> c_int;
type FnCtxSetVoid = unsafe extern "C" fn(*mut Context, c_int);
type FnGetError = unsafe extern "C" fn(*mut Context) -> *mut c_char;
type FnParseUrl = unsafe extern "C" fn(*mut Context, *const c_char) -> *mut Url;
type FnDestroyUrl = unsafe extern "C" fn(*mut Url);
type FnMount = unsafe extern "C" fn(*mut Context, *const c_char, *const c_char) -> c_int;
type FnMountAsync = unsafe extern "C" fn(
    *mut Context,
    *const c_char,
    *const c_char,
    Callback,
    *mut c_void,
) -> c_int;
type FnOpenAsync =
    unsafe extern "C" fn(*mut Context, *const c_char, c_int, Callback, *mut c_void) -> c_int;
type FnOpen =
    unsafe extern "C" fn(*mut Context, *const c_char, c_int, *mut *mut FileHandle) -> c_int;
type FnFstat = unsafe extern "C" fn(*mut Context, *mut FileHandle, *mut Stat64) -> c_int;
type FnFh = unsafe extern "C" fn(*mut Context, *mut FileHandle) -> c_int;
type FnPread = unsafe extern "C" fn(*mut Context, *mut FileHandle, u64, u64, *mut c_void) -> c_int;
type FnPwrite =
    unsafe extern "C" fn(*mut Context, *mut FileHandle, u64, u64, *const c_void) -> c_int;
type FnPreadAsync =
    unsafe extern "C" fn(*mut Context, *mut FileHandle, u64, u64, Callback, *mut c_void) -> c_int;
type FnPwriteAsync = unsafe extern "C" fn(
    *mut Context,
    *mut FileHandle,
    u64,
    u64,
    *const c_void,
    Callback,
    *mut c_void,
) -> c_int;
type FnGetMax = unsafe extern "C" fn(*mut Context) -> u64;
type FnPath = unsafe extern "C" fn(*mut Context, *const c_char) -> c_int;
type FnStatPath = unsafe extern "C" fn(*mut Context, *const c_char, *mut Stat64) -> c_int;
type FnAccess = unsafe extern "C" fn(*mut Context, *const c_char, c_int) -> c_int;
type FnUtimes = unsafe extern "C" fn(*mut Context, *const c_char, *mut libc::timeval) -> c_int;
type FnRename = unsafe extern "C" fn(*mut Context, *const c_char, *const c_char) -> c_int;
type FnCreate =
    unsafe extern "C" fn(*mut Context, *const c_char, c_int, c_int, *mut *mut FileHandle) -> c_int;

/// The libnfs functions ioscope uses, with the library kept loaded.
struct Lib {
    _lib: Library,
    init_context: FnInit,
    destroy_context: FnCtx,
    get_error: FnGetError,
    set_autoreconnect: FnCtxSetVoid,
    parse_url_full: FnParseUrl,
    destroy_url: FnDestroyUrl,
    mount: FnMount,
    mount_async: FnMountAsync,
    open: FnOpen,
    open_async: FnOpenAsync,
    creat: FnOpen,
    fstat64: FnFstat,
    fsync: FnFh,
    close: FnFh,
    pread: FnPread,
    pwrite: FnPwrite,
    pread_async: FnPreadAsync,
    pwrite_async: FnPwriteAsync,
    get_fd: FnCtxInt,
    which_events: FnCtxInt,
    service: FnCtxSetInt,
    queue_length: FnCtxInt,
    get_writemax: FnGetMax,
    // The calls on paths, for trees on an export (`paths`).
    mkdir: FnPath,
    rmdir: FnPath,
    unlink: FnPath,
    stat64: FnStatPath,
    access: FnAccess,
    utimes: FnUtimes,
    rename: FnRename,
    create: FnCreate,
    set_timeout: FnCtxSetVoid,
}

/// What to install when libnfs is missing.
pub const NEEDED_FOR: &str =
    "nfs:// targets need it: install the Debian/Ubuntu package libnfs13 (Fedora: libnfs)";

fn load() -> Result<Lib, LoadError> {
    let l = Loader::open("IOSCOPE_LIBNFS", "libnfs.so.13", "libnfs", NEEDED_FOR)?;
    Ok(Lib {
        init_context: sym!(l, "nfs_init_context"),
        destroy_context: sym!(l, "nfs_destroy_context"),
        get_error: sym!(l, "nfs_get_error"),
        set_autoreconnect: sym!(l, "nfs_set_autoreconnect"),
        parse_url_full: sym!(l, "nfs_parse_url_full"),
        destroy_url: sym!(l, "nfs_destroy_url"),
        mount: sym!(l, "nfs_mount"),
        mount_async: sym!(l, "nfs_mount_async"),
        open: sym!(l, "nfs_open"),
        open_async: sym!(l, "nfs_open_async"),
        creat: sym!(l, "nfs_creat"),
        fstat64: sym!(l, "nfs_fstat64"),
        fsync: sym!(l, "nfs_fsync"),
        close: sym!(l, "nfs_close"),
        pread: sym!(l, "nfs_pread"),
        pwrite: sym!(l, "nfs_pwrite"),
        pread_async: sym!(l, "nfs_pread_async"),
        pwrite_async: sym!(l, "nfs_pwrite_async"),
        get_fd: sym!(l, "nfs_get_fd"),
        which_events: sym!(l, "nfs_which_events"),
        service: sym!(l, "nfs_service"),
        queue_length: sym!(l, "nfs_queue_length"),
        get_writemax: sym!(l, "nfs_get_writemax"),
        mkdir: sym!(l, "nfs_mkdir"),
        rmdir: sym!(l, "nfs_rmdir"),
        unlink: sym!(l, "nfs_unlink"),
        stat64: sym!(l, "nfs_stat64"),
        access: sym!(l, "nfs_access"),
        utimes: sym!(l, "nfs_utimes"),
        rename: sym!(l, "nfs_rename"),
        create: sym!(l, "nfs_create"),
        set_timeout: sym!(l, "nfs_set_timeout"),
        _lib: l.into_library(),
    })
}

loaded_library!(Lib, load);

// `(tag, result)` of the requests completed on this thread: bytes moved, or a
// negated errno.
thread_done_list!(i64);

/// A read in flight: where its data goes. Boxed; its address is the callback's
/// `private_data`, and the callback frees it.
struct PendingRead {
    tag: u64,
    buf: *mut u8,
    len: usize,
}

/// Called by libnfs inside `nfs_service` (or `nfs_destroy_context`, cancelling) when
/// a read ends: copies what arrived into the request's buffer.
unsafe extern "C" fn on_read(err: c_int, _nfs: *mut Context, data: *mut c_void, pd: *mut c_void) {
    // SAFETY: pd is the PendingRead boxed by `Client::pread`, handed to libnfs once
    // and given back here once.
    let p = unsafe { Box::from_raw(pd as *mut PendingRead) };
    if err > 0 && !data.is_null() {
        let n = (err as usize).min(p.len);
        // SAFETY: libnfs's data holds `err` bytes; the caller of `pread` keeps buf
        // valid for `len` bytes until this completion is recorded.
        unsafe { std::ptr::copy_nonoverlapping(data as *const u8, p.buf, n) };
    }
    record(p.tag, err as i64);
}

/// Called by libnfs when a write ends; `pd` carries the request's tag.
unsafe extern "C" fn on_write(err: c_int, _nfs: *mut Context, _d: *mut c_void, pd: *mut c_void) {
    record(pd as usize as u64, err as i64);
}

/// A libnfs failure: the library could not be loaded, or its own words about a call.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NfsError {
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The file does not exist and was not to be created.
    #[error("{0} does not exist on the export; give --size to create it")]
    NotFound(String),
    #[error("{0}")]
    Library(String),
}

/// How [`Client::open`] opens the file.
#[derive(Debug, Clone, Copy)]
pub struct OpenHow {
    pub write: bool,
    /// Create the file when missing.
    pub create: bool,
}

/// How far a connection started with [`Client::start_open`] has come.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// Still connecting, mounting or opening.
    Pending,
    /// The file is open: the connection can carry requests.
    Ready,
    /// Set-up failed, in libnfs's words.
    Failed(String),
}

/// The open file's handle and, while a connection is set up without blocking, the
/// file to open once the export is mounted and how far it has come. Boxed: its
/// address is the set-up callbacks' `private_data`, and it outlives the context.
struct Handle {
    fh: Cell<*mut FileHandle>,
    progress: RefCell<Progress>,
    file: CString,
    flags: c_int,
}

impl Handle {
    fn opened(&self, fh: *mut FileHandle) {
        self.fh.set(fh);
        *self.progress.borrow_mut() = Progress::Ready;
    }

    fn failed(&self, why: String) {
        *self.progress.borrow_mut() = Progress::Failed(why);
    }

    /// Opening the file failed for `why`.
    fn open_failed(&self, why: String) {
        self.failed(format!("opening {}: {why}", self.file.to_string_lossy()));
    }
}

/// Called by libnfs when [`Client::start_open`]'s mount ends: opens the file.
unsafe extern "C" fn on_mounted(err: c_int, nfs: *mut Context, data: *mut c_void, pd: *mut c_void) {
    // SAFETY: pd is the Handle boxed in the Client whose context runs this callback;
    // the box is dropped only after the context is destroyed.
    let h = unsafe { &*(pd as *const Handle) };
    if err != 0 {
        // SAFETY: on failure, data is libnfs's error string (or NULL).
        let why = unsafe { c_message(data as *const c_char, "mount failed") };
        return h.failed(format!("mounting the export: {why}"));
    }
    let l = match lib() {
        Ok(l) => l,
        Err(e) => return h.open_failed(e.to_string()),
    };
    // SAFETY: the context libnfs called back with, the Handle's C string (which
    // outlives the context) and the same private_data for the next callback.
    if unsafe { (l.open_async)(nfs, h.file.as_ptr(), h.flags, on_opened, pd) } != 0 {
        // SAFETY: a valid context; its error string is copied at once.
        let why = unsafe { c_message((l.get_error)(nfs), "unknown libnfs error") };
        h.open_failed(why);
    }
}

/// Called by libnfs when the open [`on_mounted`] started ends.
unsafe extern "C" fn on_opened(err: c_int, _nfs: *mut Context, data: *mut c_void, pd: *mut c_void) {
    // SAFETY: as in `on_mounted`.
    let h = unsafe { &*(pd as *const Handle) };
    if err != 0 {
        // SAFETY: on failure, data is libnfs's error string (or NULL).
        let why = unsafe { c_message(data as *const c_char, "open failed") };
        return h.open_failed(why);
    }
    // On success, data is the new struct nfsfh.
    h.opened(data as *mut FileHandle);
}

/// One NFS connection: a context with the export mounted and one file open (or, from
/// [`Client::start_open`], on its way there).
pub struct Client {
    lib: &'static Lib,
    ctx: *mut Context,
    /// Declared after the context, and dropped after it is destroyed (whose
    /// cancelled callbacks may still write to it).
    handle: Box<Handle>,
}

// SAFETY: a Client owns its context exclusively and is used by one thread at a time
// (a worker, or behind a Mutex); libnfs keeps no thread-affine state in it, and the
// Handle's cells are touched only by callbacks running inside that thread's calls.
unsafe impl Send for Client {}

fn cstring(s: &str) -> Result<CString, NfsError> {
    CString::new(s).map_err(|_| NfsError::Library("a NUL byte in the URL".into()))
}

/// What a URL names: the server and the export, as C strings for the mount.
struct Mount {
    server: CString,
    export: CString,
}

impl Client {
    /// A context for `url` (libnfs's `nfs://SERVER/EXPORT/FILE?…` form, whose
    /// query sets the ports) with libnfs's own reconnection off, the file to be
    /// opened with `how`, and where to mount it.
    fn context(url: &str, how: OpenHow) -> Result<(Client, Mount), NfsError> {
        let l = lib()?;
        // SAFETY: no arguments; NULL is checked.
        let ctx = unsafe { (l.init_context)() };
        if ctx.is_null() {
            return Err(NfsError::Library(
                "libnfs could not create a context".into(),
            ));
        }
        let flags = if how.write {
            libc::O_RDWR
        } else {
            libc::O_RDONLY
        };
        let mut c = Client {
            lib: l,
            ctx,
            handle: Box::new(Handle {
                fh: Cell::new(std::ptr::null_mut()),
                progress: RefCell::new(Progress::Pending),
                file: CString::default(),
                flags,
            }),
        };
        // SAFETY: a valid context.
        unsafe { (l.set_autoreconnect)(ctx, 0) };
        let c_url = cstring(url)?;
        // SAFETY: a valid context and C string; NULL is checked.
        let u = unsafe { (l.parse_url_full)(ctx, c_url.as_ptr()) };
        if u.is_null() {
            return Err(NfsError::Library(c.error()));
        }
        // SAFETY: a non-null url from parse_url_full, read then destroyed once; its
        // strings are NUL-terminated and owned by it.
        let (server, export, file) = unsafe {
            let s = |p: *mut c_char| {
                (!p.is_null()).then(|| CStr::from_ptr(p).to_string_lossy().into_owned())
            };
            let parts = (s((*u).server), s((*u).path), s((*u).file));
            (l.destroy_url)(u);
            parts
        };
        let (Some(server), Some(export), Some(file)) = (server, export, file) else {
            return Err(NfsError::Library(format!("libnfs could not split '{url}'")));
        };
        c.handle.file = cstring(&file)?;
        let m = Mount {
            server: cstring(&server)?,
            export: cstring(&export)?,
        };
        Ok((c, m))
    }

    /// Mounts the export `url` names and opens its file, blocking. A lost
    /// connection fails its requests: libnfs's own reconnection is off.
    pub fn open(url: &str, how: OpenHow) -> Result<Client, NfsError> {
        let c = Client::mounted(url, how)?;
        let (l, ctx) = (c.lib, c.ctx);
        let file = c.handle.file.to_string_lossy().into_owned();
        let mut fh = std::ptr::null_mut();
        // SAFETY: valid context, C string and out-pointer.
        let r = unsafe { (l.open)(ctx, c.handle.file.as_ptr(), c.handle.flags, &mut fh) };
        if r == -libc::ENOENT && how.create {
            // SAFETY: as above; creat opens the new file read-write.
            let r = unsafe { (l.creat)(ctx, c.handle.file.as_ptr(), 0o644, &mut fh) };
            if r != 0 {
                return Err(NfsError::Library(format!("creating {file}: {}", c.error())));
            }
        } else if r == -libc::ENOENT {
            return Err(NfsError::NotFound(file));
        } else if r != 0 {
            return Err(NfsError::Library(format!("opening {file}: {}", c.error())));
        }
        c.handle.opened(fh);
        Ok(c)
    }

    /// A context for `url` with its export mounted (blocking) and no file open yet.
    fn mounted(url: &str, how: OpenHow) -> Result<Client, NfsError> {
        let (c, m) = Client::context(url, how)?;
        let export = m.export.to_string_lossy();
        // SAFETY: valid context and C strings that outlive the call.
        if unsafe { (c.lib.mount)(c.ctx, m.server.as_ptr(), m.export.as_ptr()) } != 0 {
            return Err(NfsError::Library(format!(
                "mounting {export}: {}",
                c.error()
            )));
        }
        Ok(c)
    }

    /// Starts mounting the export `url` names and opening its file (never creating
    /// it) without blocking: the returned connection is polled and serviced like a
    /// live one, and [`Client::progress`] says when it is ready.
    pub fn start_open(url: &str, how: OpenHow) -> Result<Client, NfsError> {
        let (c, m) = Client::context(url, how)?;
        let pd = &*c.handle as *const Handle as *mut c_void;
        // SAFETY: valid context and C strings (libnfs copies them); pd is the boxed
        // Handle, which outlives the context and so every callback.
        let r = unsafe {
            (c.lib.mount_async)(c.ctx, m.server.as_ptr(), m.export.as_ptr(), on_mounted, pd)
        };
        if r != 0 {
            let export = m.export.to_string_lossy();
            return Err(NfsError::Library(format!(
                "mounting {export}: {}",
                c.error()
            )));
        }
        Ok(c)
    }

    /// How far [`Client::start_open`]'s set-up has come (a blocking open: ready).
    pub fn progress(&self) -> Progress {
        self.handle.progress.borrow().clone()
    }

    /// The open file.
    fn fh(&self) -> *mut FileHandle {
        self.handle.fh.get()
    }
    /// libnfs's last error on this context.
    pub fn error(&self) -> String {
        // SAFETY: valid context; the string (NULL, or NUL-terminated and owned by
        // the context) is copied at once.
        unsafe { c_message((self.lib.get_error)(self.ctx), "unknown libnfs error") }
    }

    fn check(&self, r: c_int, what: &str) -> Result<c_int, NfsError> {
        if r < 0 {
            Err(NfsError::Library(format!("{what}: {}", self.error())))
        } else {
            Ok(r)
        }
    }

    /// The open file's size (fstat).
    pub fn size_bytes(&self) -> Result<u64, NfsError> {
        let mut st = Stat64::default();
        // SAFETY: valid context, handle and out-struct of libnfs.h's layout.
        let r = unsafe { (self.lib.fstat64)(self.ctx, self.fh(), &mut st) };
        self.check(r, "fstat")?;
        Ok(st.size)
    }

    /// Blocking read of `buf.len()` bytes at `offset`; a short read is an error.
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<(), NfsError> {
        let mut done = 0;
        while done < buf.len() {
            let rest = &mut buf[done..];
            // SAFETY: valid context and handle; rest is writable for its length.
            let r = unsafe {
                (self.lib.pread)(
                    self.ctx,
                    self.fh(),
                    offset + done as u64,
                    rest.len() as u64,
                    rest.as_mut_ptr() as *mut c_void,
                )
            };
            if self.check(r, "read")? == 0 {
                return Err(NfsError::Library(format!(
                    "read at {}: end of file",
                    offset + done as u64
                )));
            }
            done += r as usize;
        }
        Ok(())
    }

    /// Blocking write of all of `buf` at `offset`.
    pub fn write_at(&self, buf: &[u8], offset: u64) -> Result<(), NfsError> {
        let mut done = 0;
        while done < buf.len() {
            let rest = &buf[done..];
            // SAFETY: valid context and handle; rest is readable for its length.
            let r = unsafe {
                (self.lib.pwrite)(
                    self.ctx,
                    self.fh(),
                    offset + done as u64,
                    rest.len() as u64,
                    rest.as_ptr() as *const c_void,
                )
            };
            if self.check(r, "write")? == 0 {
                return Err(NfsError::Library("the server wrote 0 bytes".into()));
            }
            done += r as usize;
        }
        Ok(())
    }

    /// COMMIT: what was written is on the server's stable storage.
    pub fn fsync(&self) -> Result<(), NfsError> {
        // SAFETY: valid context and handle.
        let r = unsafe { (self.lib.fsync)(self.ctx, self.fh()) };
        self.check(r, "commit").map(|_| ())
    }

    /// The largest write the server takes in one WRITE (its wtmax).
    pub fn write_max_bytes(&self) -> u64 {
        // SAFETY: valid, mounted context.
        unsafe { (self.lib.get_writemax)(self.ctx) }
    }

    /// Starts a read of `len` bytes at `offset` into `buf`; the completion is
    /// recorded with `tag` (see [`take_done`]).
    ///
    /// # Safety
    /// `buf` must stay valid for `len` bytes of writes until the completion has been
    /// recorded or the client is dropped.
    pub unsafe fn pread(
        &self,
        buf: *mut u8,
        len: u32,
        offset: u64,
        tag: u64,
    ) -> Result<(), NfsError> {
        let p = Box::into_raw(Box::new(PendingRead {
            tag,
            buf,
            len: len as usize,
        }));
        // SAFETY: valid context and handle; p is handed to the callback, which frees
        // it (libnfs calls it exactly once when the call was queued).
        let r = unsafe {
            (self.lib.pread_async)(
                self.ctx,
                self.fh(),
                offset,
                len as u64,
                on_read,
                p as *mut c_void,
            )
        };
        if r != 0 {
            // SAFETY: not queued: the callback will never run, p is still ours.
            drop(unsafe { Box::from_raw(p) });
            return Err(NfsError::Library(self.error()));
        }
        Ok(())
    }

    /// Starts a write of `len` bytes from `buf` at `offset`.
    ///
    /// # Safety
    /// `buf` must stay valid for `len` bytes of reads until the completion has been
    /// recorded or the client is dropped.
    pub unsafe fn pwrite(
        &self,
        buf: *const u8,
        len: u32,
        offset: u64,
        tag: u64,
    ) -> Result<(), NfsError> {
        // SAFETY: valid context and handle; the caller keeps buf valid.
        let r = unsafe {
            (self.lib.pwrite_async)(
                self.ctx,
                self.fh(),
                offset,
                len as u64,
                buf as *const c_void,
                on_write,
                tag as usize as *mut c_void,
            )
        };
        if r != 0 {
            return Err(NfsError::Library(self.error()));
        }
        Ok(())
    }

    /// The socket to poll.
    pub fn fd(&self) -> i32 {
        // SAFETY: valid context.
        unsafe { (self.lib.get_fd)(self.ctx) }
    }

    /// The poll(2) events libnfs waits for.
    pub fn which_events(&self) -> i16 {
        // SAFETY: valid context.
        unsafe { (self.lib.which_events)(self.ctx) as i16 }
    }

    /// Lets libnfs act on `revents`; completions are recorded on this thread. `Err`:
    /// the connection is in an unrecoverable state.
    pub fn service(&self, revents: i16) -> Result<(), NfsError> {
        // SAFETY: valid context; callbacks run on this thread.
        if unsafe { (self.lib.service)(self.ctx, revents as c_int) } < 0 {
            // libnfs sets no error when a read finds the socket closed.
            // SAFETY: valid context; the string is copied at once.
            let why = unsafe {
                c_message(
                    (self.lib.get_error)(self.ctx),
                    "the server closed the connection",
                )
            };
            return Err(NfsError::Library(why));
        }
        Ok(())
    }

    /// Requests in flight.
    pub fn queue_length(&self) -> usize {
        // SAFETY: valid context.
        unsafe { (self.lib.queue_length)(self.ctx) }.max(0) as usize
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // SAFETY: closing the handle and destroying the context this Client owns,
        // once each; requests still in flight are cancelled through their callbacks.
        unsafe {
            if !self.fh().is_null() && self.queue_length() == 0 {
                (self.lib.close)(self.ctx, self.fh());
            }
            (self.lib.destroy_context)(self.ctx);
        }
    }
}
