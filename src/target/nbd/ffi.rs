//! libnbd, loaded at run time. ioscope must build and run its local targets on a
//! machine without libnbd, so the library is opened with `dlopen` the first time an
//! `nbd://` target is used, and only the functions the NBD engine calls are looked
//! up. [`Conn`] wraps one `struct nbd_handle` behind safe methods; everything unsafe
//! about libnbd lives in this file.
//!
//! The library name can be overridden with `IOSCOPE_LIBNBD` (a path or soname), which
//! is how the tests simulate a machine without it.

use crate::target::dylib::{loaded_library, sym, LoadError, Loader};
use libloading::Library;
use std::cell::UnsafeCell;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};

/// `LIBNBD_AIO_DIRECTION_READ`: the handle waits for the socket to be readable.
pub const DIRECTION_READ: c_uint = 1;
/// `LIBNBD_AIO_DIRECTION_WRITE`: the handle waits for the socket to be writable.
pub const DIRECTION_WRITE: c_uint = 2;

/// libnbd's `nbd_completion_callback`, passed by value.
#[repr(C)]
struct CompletionCallback {
    callback: Option<unsafe extern "C" fn(*mut c_void, *mut c_int) -> c_int>,
    user_data: *mut c_void,
    free: Option<unsafe extern "C" fn(*mut c_void)>,
}

/// An opaque `struct nbd_handle`.
#[repr(C)]
struct Handle {
    _private: [u8; 0],
}

type FnCreate = unsafe extern "C" fn() -> *mut Handle;
type FnClose = unsafe extern "C" fn(*mut Handle);
type FnGetError = unsafe extern "C" fn() -> *const c_char;
type FnGetErrno = unsafe extern "C" fn() -> c_int;
type FnConnectUri = unsafe extern "C" fn(*mut Handle, *const c_char) -> c_int;
type FnHandleInt = unsafe extern "C" fn(*mut Handle) -> c_int;
type FnGetSize = unsafe extern "C" fn(*mut Handle) -> i64;
type FnPread = unsafe extern "C" fn(*mut Handle, *mut c_void, usize, u64, u32) -> c_int;
type FnAioPread =
    unsafe extern "C" fn(*mut Handle, *mut c_void, usize, u64, CompletionCallback, u32) -> i64;
type FnAioPwrite =
    unsafe extern "C" fn(*mut Handle, *const c_void, usize, u64, CompletionCallback, u32) -> i64;
/// `nbd_aio_trim(h, count, offset, completion, flags)`: the length comes first.
type FnAioTrim = unsafe extern "C" fn(*mut Handle, u64, u64, CompletionCallback, u32) -> i64;
type FnGetDirection = unsafe extern "C" fn(*mut Handle) -> c_uint;
type FnPoll = unsafe extern "C" fn(*mut Handle, c_int) -> c_int;
type FnSetBool = unsafe extern "C" fn(*mut Handle, bool) -> c_int;

/// The libnbd functions ioscope uses, with the library kept loaded for the process.
struct Lib {
    _lib: Library,
    create: FnCreate,
    close: FnClose,
    get_error: FnGetError,
    get_errno: FnGetErrno,
    connect_uri: FnConnectUri,
    aio_connect_uri: FnConnectUri,
    poll: FnPoll,
    aio_is_connecting: FnHandleInt,
    aio_is_ready: FnHandleInt,
    get_size: FnGetSize,
    can_multi_conn: FnHandleInt,
    is_read_only: FnHandleInt,
    pread: FnPread,
    aio_pread: FnAioPread,
    aio_pwrite: FnAioPwrite,
    aio_trim: FnAioTrim,
    can_trim: FnHandleInt,
    aio_get_fd: FnHandleInt,
    aio_get_direction: FnGetDirection,
    aio_notify_read: FnHandleInt,
    aio_notify_write: FnHandleInt,
    aio_is_dead: FnHandleInt,
    aio_is_closed: FnHandleInt,
    /// `nbd_set_pread_initialize` (libnbd 1.10 and later; absent before).
    set_pread_initialize: Option<FnSetBool>,
    /// `nbd_set_request_structured_replies` (libnbd 1.2 and later).
    set_request_structured_replies: Option<FnSetBool>,
    /// `nbd_get_structured_replies_negotiated` (libnbd 1.2 and later).
    get_structured_replies_negotiated: Option<FnHandleInt>,
}

fn load() -> Result<Lib, LoadError> {
    let l = Loader::open(
        "IOSCOPE_LIBNBD",
        "libnbd.so.0",
        "libnbd",
        "NBD targets need it: install the Debian/Ubuntu package libnbd0 (Fedora: libnbd)",
    )?;
    Ok(Lib {
        create: sym!(l, "nbd_create"),
        close: sym!(l, "nbd_close"),
        get_error: sym!(l, "nbd_get_error"),
        get_errno: sym!(l, "nbd_get_errno"),
        connect_uri: sym!(l, "nbd_connect_uri"),
        aio_connect_uri: sym!(l, "nbd_aio_connect_uri"),
        poll: sym!(l, "nbd_poll"),
        aio_is_connecting: sym!(l, "nbd_aio_is_connecting"),
        aio_is_ready: sym!(l, "nbd_aio_is_ready"),
        get_size: sym!(l, "nbd_get_size"),
        can_multi_conn: sym!(l, "nbd_can_multi_conn"),
        is_read_only: sym!(l, "nbd_is_read_only"),
        pread: sym!(l, "nbd_pread"),
        aio_pread: sym!(l, "nbd_aio_pread"),
        aio_pwrite: sym!(l, "nbd_aio_pwrite"),
        aio_trim: sym!(l, "nbd_aio_trim"),
        can_trim: sym!(l, "nbd_can_trim"),
        aio_get_fd: sym!(l, "nbd_aio_get_fd"),
        aio_get_direction: sym!(l, "nbd_aio_get_direction"),
        aio_notify_read: sym!(l, "nbd_aio_notify_read"),
        aio_notify_write: sym!(l, "nbd_aio_notify_write"),
        aio_is_dead: sym!(l, "nbd_aio_is_dead"),
        aio_is_closed: sym!(l, "nbd_aio_is_closed"),
        // SAFETY: the type declared for it in libnbd.h; optional, so no `?`.
        set_pread_initialize: unsafe { l.sym("nbd_set_pread_initialize\0") }.ok(),
        // SAFETY: as above, both optional.
        set_request_structured_replies: unsafe { l.sym("nbd_set_request_structured_replies\0") }
            .ok(),
        get_structured_replies_negotiated: unsafe {
            l.sym("nbd_get_structured_replies_negotiated\0")
        }
        .ok(),
        _lib: l.into_library(),
    })
}

loaded_library!(Lib, load);

/// The last libnbd error of this thread, as text and errno.
fn last_error(l: &Lib) -> (String, i32) {
    // SAFETY: nbd_get_error returns a thread-local string or NULL; it is copied at once.
    let msg = unsafe { (l.get_error)() };
    let text = if msg.is_null() {
        "unknown libnbd error".to_string()
    } else {
        // SAFETY: non-null, NUL-terminated, valid until the next libnbd call here.
        unsafe { CStr::from_ptr(msg) }
            .to_string_lossy()
            .into_owned()
    };
    // SAFETY: plain thread-local read.
    let errno = unsafe { (l.get_errno)() };
    (text, errno)
}

/// Which NBD reply form a connection asks the server for (the run's
/// `nbd_structured_replies`). The server answers either way: a server that refuses
/// structured replies gets simple ones, which [`Conn::structured_replies`] tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Replies {
    /// Simple replies: a read's data follows one fixed header; no holes, extents or
    /// error offsets. Cheaper for the client per read.
    #[default]
    Simple,
    /// Structured replies (libnbd's default): chunks that may describe holes and
    /// carry block status and error details.
    Structured,
}

/// A libnbd failure: its message and errno (0 when libnbd gave none).
#[derive(Debug, Clone)]
pub struct NbdError {
    pub msg: String,
    pub errno: i32,
}

impl std::fmt::Display for NbdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.msg)
    }
}

/// One connection to an NBD server: an owned `struct nbd_handle`.
pub struct Conn {
    lib: &'static Lib,
    h: *mut Handle,
}

// SAFETY: libnbd handles are thread-safe (every call takes the handle's lock), and a
// Conn owns its handle exclusively; moving it between threads is allowed.
unsafe impl Send for Conn {}

impl Conn {
    /// Connects (blocking) to `uri` and completes the handshake.
    pub fn connect(uri: &str, replies: Replies) -> Result<Conn, NbdError> {
        let (conn, c_uri) = Conn::create(uri, replies)?;
        // SAFETY: valid handle and NUL-terminated URI that outlives the call.
        conn.ok(unsafe { (conn.lib.connect_uri)(conn.h, c_uri.as_ptr()) })?;
        Ok(conn)
    }

    /// A fresh, unconnected handle, and `uri` as a C string.
    fn create(uri: &str, replies: Replies) -> Result<(Conn, CString), NbdError> {
        let l = lib().map_err(|e| NbdError {
            msg: e.to_string(),
            errno: 0,
        })?;
        let c_uri = CString::new(uri).map_err(|_| NbdError {
            msg: "URI contains a NUL byte".into(),
            errno: 0,
        })?;
        // SAFETY: nbd_create has no preconditions; NULL is checked.
        let h = unsafe { (l.create)() };
        if h.is_null() {
            let (msg, errno) = last_error(l);
            return Err(NbdError { msg, errno });
        }
        if let Some(set) = l.set_pread_initialize {
            // libnbd zeroes every read buffer before the read by default, so that a
            // caller who uses a failed read's buffer sees no stale bytes; that memset
            // was a third of a 4 KiB read's client instructions. ioscope never looks
            // at a failed read's buffer (its verification checks successful reads
            // only), and libnbd still fails a read the server did not fully answer.
            // SAFETY: valid handle; the call only sets a flag on it.
            unsafe { set(h, false) };
        }
        let conn = Conn { lib: l, h };
        // A libnbd without the call always asks for structured replies; the reply
        // form negotiated is reported either way (Conn::structured_replies).
        if let Some(set) = l.set_request_structured_replies {
            // SAFETY: valid handle not yet connected; the call only sets a flag.
            conn.ok(unsafe { set(h, replies == Replies::Structured) })?;
        }
        Ok((conn, c_uri))
    }

    /// Connects to `uri` and completes the handshake, giving up after `limit_ns`
    /// (0: no limit, as [`Conn::connect`]). A stalled server (its kernel accepts the
    /// TCP connection, the server never greets) or a cut link (the SYN vanishes)
    /// would otherwise hold the caller indefinitely; here the handshake runs on
    /// libnbd's asynchronous state machine and `nbd_poll` waits at most until the
    /// deadline, after which the handle (and its socket) is closed. The error then
    /// carries `ETIMEDOUT`.
    pub fn connect_within(uri: &str, replies: Replies, limit_ns: u64) -> Result<Conn, NbdError> {
        if limit_ns == 0 {
            return Conn::connect(uri, replies);
        }
        let conn = Conn::start_connect(uri, replies)?;
        let (l, h) = (conn.lib, conn.h);
        let deadline = crate::clock::now_ns().saturating_add(limit_ns);
        loop {
            // SAFETY: valid handle (all three).
            if unsafe { (l.aio_is_ready)(h) } == 1 {
                return Ok(conn);
            }
            if unsafe { (l.aio_is_connecting)(h) } != 1 {
                let (msg, errno) = last_error(l);
                return Err(NbdError {
                    msg: format!("the handshake failed: {msg}"),
                    errno,
                });
            }
            let now = crate::clock::now_ns();
            if now >= deadline {
                return Err(NbdError {
                    msg: format!("no NBD handshake within {:.1} s", limit_ns as f64 / 1e9),
                    errno: libc::ETIMEDOUT,
                });
            }
            let ms = (deadline - now).div_ceil(1_000_000).min(i32::MAX as u64) as c_int;
            // SAFETY: valid handle; nbd_poll waits on the handle's own socket for at
            // most `ms` milliseconds.
            conn.ok(unsafe { (l.poll)(h, ms) })?;
        }
    }

    /// Starts connecting to `uri` without blocking: drive it with
    /// [`Conn::direction`], [`Conn::notify_read`]/[`Conn::notify_write`] until
    /// [`Conn::is_ready`] (or [`Conn::is_dead`]).
    pub fn start_connect(uri: &str, replies: Replies) -> Result<Conn, NbdError> {
        let (conn, c_uri) = Conn::create(uri, replies)?;
        // SAFETY: valid handle and NUL-terminated URI that outlives the call.
        conn.ok(unsafe { (conn.lib.aio_connect_uri)(conn.h, c_uri.as_ptr()) })?;
        Ok(conn)
    }

    /// True once the handshake is done and commands can be issued.
    pub fn is_ready(&self) -> bool {
        // SAFETY: valid handle; a plain state query.
        unsafe { (self.lib.aio_is_ready)(self.h) == 1 }
    }

    /// libnbd's last error message on this thread (after a call on this handle
    /// failed, or the handle died).
    pub fn last_error(&self) -> String {
        self.error().msg
    }

    fn error(&self) -> NbdError {
        let (msg, errno) = last_error(self.lib);
        NbdError { msg, errno }
    }

    /// A call's result `r`, or libnbd's error when it failed (every call returns -1
    /// then), read at once, before another call on this thread replaces it.
    #[inline]
    fn ok<T: Copy + Into<i64>>(&self, r: T) -> Result<T, NbdError> {
        if r.into() < 0 {
            return Err(self.error());
        }
        Ok(r)
    }

    /// The export's size in bytes.
    pub fn size_bytes(&self) -> Result<u64, NbdError> {
        // SAFETY: valid, connected handle.
        let r = unsafe { (self.lib.get_size)(self.h) };
        Ok(self.ok(r)? as u64)
    }

    /// The reply form the handshake settled on: structured only when asked for and
    /// the server agreed. `None` from a libnbd too old to tell (before 1.2).
    pub fn structured_replies(&self) -> Option<Replies> {
        let get = self.lib.get_structured_replies_negotiated?;
        // SAFETY: valid, connected handle; a plain state query.
        Some(match unsafe { get(self.h) } {
            1 => Replies::Structured,
            _ => Replies::Simple,
        })
    }

    /// Whether the server advertises multi-conn (several connections see one cache).
    pub fn can_multi_conn(&self) -> bool {
        // SAFETY: valid, connected handle.
        unsafe { (self.lib.can_multi_conn)(self.h) == 1 }
    }

    /// Whether the export is read-only.
    pub fn is_read_only(&self) -> bool {
        // SAFETY: valid, connected handle.
        unsafe { (self.lib.is_read_only)(self.h) == 1 }
    }

    /// Blocking read of `buf.len()` bytes at `offset`.
    pub fn pread(&self, buf: &mut [u8], offset: u64) -> Result<(), NbdError> {
        // SAFETY: the buffer is valid for writes of its length during the call.
        let r = unsafe {
            (self.lib.pread)(
                self.h,
                buf.as_mut_ptr() as *mut c_void,
                buf.len(),
                offset,
                0,
            )
        };
        self.ok(r).map(drop)
    }

    /// Starts an asynchronous read into `buf`; when it finishes, libnbd's callback
    /// appends `(ticket.slot, errno)` to the ticket's [`DoneList`] (and libnbd forgets
    /// the command).
    ///
    /// # Safety
    /// `buf` must stay valid for `len` bytes of writes, and untouched, and `ticket`
    /// and its list must stay where they are, until the ticket's slot shows up in
    /// the list or the connection is closed.
    pub unsafe fn aio_pread(
        &self,
        buf: *mut u8,
        len: u32,
        offset: u64,
        ticket: &Ticket,
    ) -> Result<(), NbdError> {
        // SAFETY: the caller keeps buf and the ticket valid until completion.
        let r = unsafe {
            (self.lib.aio_pread)(
                self.h,
                buf as *mut c_void,
                len as usize,
                offset,
                ticket.callback(),
                0,
            )
        };
        self.ok(r).map(drop)
    }

    /// Starts an asynchronous write from `buf`, finishing as [`Conn::aio_pread`] does.
    ///
    /// # Safety
    /// `buf` must stay valid for `len` bytes of reads, and `ticket` and its list
    /// where they are, until the ticket's slot shows up in the list or the
    /// connection is closed.
    pub unsafe fn aio_pwrite(
        &self,
        buf: *const u8,
        len: u32,
        offset: u64,
        ticket: &Ticket,
    ) -> Result<(), NbdError> {
        // SAFETY: as for aio_pread, with the buffer only read.
        let r = unsafe {
            (self.lib.aio_pwrite)(
                self.h,
                buf as *const c_void,
                len as usize,
                offset,
                ticket.callback(),
                0,
            )
        };
        self.ok(r).map(drop)
    }

    /// Starts an asynchronous trim (NBD_CMD_TRIM) of `len` bytes at `offset`,
    /// finishing as [`Conn::aio_pread`] does. No buffer is involved.
    ///
    /// # Safety
    /// `ticket` and its list must stay where they are until the ticket's slot shows
    /// up in the list or the connection is closed.
    pub unsafe fn aio_trim(&self, len: u32, offset: u64, ticket: &Ticket) -> Result<(), NbdError> {
        // SAFETY: valid handle; the command carries no memory of ours but the
        // ticket, which the caller keeps in place.
        let r =
            unsafe { (self.lib.aio_trim)(self.h, u64::from(len), offset, ticket.callback(), 0) };
        self.ok(r).map(drop)
    }

    /// Whether the server accepts trims (it advertised NBD_FLAG_SEND_TRIM).
    pub fn can_trim(&self) -> Result<bool, NbdError> {
        // SAFETY: valid, connected handle.
        let r = unsafe { (self.lib.can_trim)(self.h) };
        Ok(self.ok(r)? == 1)
    }

    /// The socket libnbd drives; poll it for [`Conn::direction`].
    pub fn fd(&self) -> Result<i32, NbdError> {
        // SAFETY: valid handle.
        let r = unsafe { (self.lib.aio_get_fd)(self.h) };
        self.ok(r)
    }

    /// What the handle waits for: a mix of [`DIRECTION_READ`] and [`DIRECTION_WRITE`].
    pub fn direction(&self) -> c_uint {
        // SAFETY: valid handle.
        unsafe { (self.lib.aio_get_direction)(self.h) }
    }

    /// Tells libnbd the socket is readable; it reads what it can without blocking.
    pub fn notify_read(&self) -> Result<(), NbdError> {
        // SAFETY: valid handle.
        self.ok(unsafe { (self.lib.aio_notify_read)(self.h) })
            .map(drop)
    }

    /// Tells libnbd the socket is writable; it sends what it can without blocking.
    pub fn notify_write(&self) -> Result<(), NbdError> {
        // SAFETY: valid handle.
        self.ok(unsafe { (self.lib.aio_notify_write)(self.h) })
            .map(drop)
    }

    /// True once the connection has failed or been closed by the server for good.
    pub fn is_dead(&self) -> bool {
        // SAFETY: valid handle; both are plain state queries.
        unsafe { (self.lib.aio_is_dead)(self.h) == 1 || (self.lib.aio_is_closed)(self.h) == 1 }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        // SAFETY: closing the handle this Conn owns, exactly once.
        unsafe { (self.lib.close)(self.h) }
    }
}

/// Where libnbd's completion callback leaves the commands of one connection that
/// finished: `(slot, errno)`, errno 0 on success. The callback runs inside the libnbd
/// call that noticed the reply (`nbd_aio_notify_read`, or a command's issue when the
/// connection dies), on the thread making it, so the list is only ever touched by
/// that thread; it is read between libnbd calls with [`DoneList::take`]. libnbd
/// does not call it when a handle is closed (`nbd_close` only frees callbacks).
///
/// This replaces polling with `nbd_aio_peek_command_completed`, which formats an
/// error message (asprintf + free) every time no command has finished yet, and
/// `nbd_aio_command_completed`: about 3,300 instructions per I/O of the 12,000 the
/// worker spent on a 4 KiB write (callgrind, docs/benchmarks.md, Session 7).
#[derive(Default)]
pub struct DoneList(UnsafeCell<Vec<(u32, c_int)>>);

impl DoneList {
    /// Moves the finished commands into `out` (appending). Must not be called from
    /// inside a libnbd call (the engine never does: it has no callbacks of its own).
    pub fn take(&self, out: &mut Vec<(u32, c_int)>) {
        // SAFETY: callbacks run only inside libnbd calls made by this thread, and
        // none is under way while the engine calls this; no reference to the Vec
        // outlives this call.
        out.append(unsafe { &mut *self.0.get() });
    }

    /// Records command `slot` finished with `errno` (0: success), as libnbd's
    /// callback does; for the engine's own NBD client, which has no callbacks.
    pub fn push(&self, slot: u32, errno: c_int) {
        // SAFETY: as in `take`: only the owning thread calls this, never while a
        // reference into the list is alive.
        unsafe { (*self.0.get()).push((slot, errno)) };
    }

    /// True when no finished command waits.
    pub fn is_empty(&self) -> bool {
        // SAFETY: as in `take`.
        unsafe { (*self.0.get()).is_empty() }
    }
}

/// What libnbd hands back to the completion callback of one command: the list to
/// report to and the slot to report. Lives in a `Box` so its address is stable.
pub struct Ticket {
    list: *const DoneList,
    slot: u32,
}

impl Ticket {
    /// A ticket for `slot`, reporting to `list`, which must outlive every command
    /// the ticket is given to (the caller's promise in `aio_pread`/`aio_pwrite`).
    pub fn new(list: &DoneList, slot: u32) -> Ticket {
        Ticket { list, slot }
    }

    /// The list this ticket reports to and its slot.
    pub fn parts(&self) -> (*const DoneList, u32) {
        (self.list, self.slot)
    }

    fn callback(&self) -> CompletionCallback {
        CompletionCallback {
            callback: Some(on_done),
            user_data: self as *const Ticket as *mut c_void,
            free: None,
        }
    }
}

/// libnbd's completion callback: records the command and retires it (returns 1).
unsafe extern "C" fn on_done(user_data: *mut c_void, error: *mut c_int) -> c_int {
    // SAFETY: user_data is the Ticket given with the command, still in place (the
    // caller's promise), and `error` points at libnbd's errno for the command.
    unsafe {
        let t = &*(user_data as *const Ticket);
        let errno = if error.is_null() { 0 } else { *error };
        (*(*t.list).0.get()).push((t.slot, errno));
    }
    1
}
