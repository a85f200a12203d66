//! libiscsi, loaded at run time: like libnbd (see `crate::target::nbd::ffi`), it is
//! opened with `dlopen` the first time an `iscsi://` target is used, and only the
//! functions ioscope calls are looked up. [`Session`] wraps one `struct
//! iscsi_context` logged in to one LUN; everything unsafe about libiscsi is here.
//!
//! Command completions arrive through one C callback, called by libiscsi from inside
//! `iscsi_service` on the thread that drives the session. It records `(tag, status)`
//! in that thread's list, which the caller drains with [`take_done`]: no allocation
//! and no lock per I/O. `IOSCOPE_LIBISCSI` overrides the library's name.

use crate::plan::model::IscsiSpec;
use crate::target::dylib::{c_message, loaded_library, sym, thread_done_list, LoadError, Loader};
use libloading::Library;
use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::atomic::{AtomicI32, Ordering};

/// `SCSI_STATUS_GOOD`.
pub const STATUS_GOOD: i32 = 0;
/// `SCSI_STATUS_CANCELLED`: the session went away with the command in flight.
pub const STATUS_CANCELLED: i32 = 0x0f00_0000;
/// `SCSI_STATUS_TIMEOUT`.
pub const STATUS_TIMEOUT: i32 = 0x0f00_0002;
/// `ISCSI_SESSION_NORMAL`.
const SESSION_NORMAL: c_int = 2;
/// The name ioscope logs in with.
pub const INITIATOR: &str = "iqn.2026-11.io.ioscope:initiator";

#[repr(C)]
struct Context {
    _private: [u8; 0],
}

/// The start of `struct scsi_task`: its first member, the SCSI status, is the only
/// field read (the rest of the layout differs between libiscsi versions).
#[repr(C)]
struct TaskHead {
    status: c_int,
}

/// `struct scsi_readcapacity16` from scsi-lowlevel.h (all fields spelt out for the
/// layout; only the first two are read).
#[repr(C)]
#[allow(dead_code)]
struct ReadCapacity16 {
    returned_lba: u64,
    block_length: u32,
    p_type: u8,
    prot_en: u8,
    p_i_exp: u8,
    lbppbe: u8,
    lbpme: u8,
    lbprz: u8,
    lalba: u16,
}

type CommandCb = unsafe extern "C" fn(*mut Context, c_int, *mut c_void, *mut c_void);
type FnCreate = unsafe extern "C" fn(*const c_char) -> *mut Context;
type FnCtxInt = unsafe extern "C" fn(*mut Context) -> c_int;
type FnCtxStr = unsafe extern "C" fn(*mut Context, *const c_char) -> c_int;
type FnCtxSetInt = unsafe extern "C" fn(*mut Context, c_int) -> c_int;
type FnCtxSetVoid = unsafe extern "C" fn(*mut Context, c_int);
type FnGetError = unsafe extern "C" fn(*mut Context) -> *const c_char;
type FnUserPwd = unsafe extern "C" fn(*mut Context, *const c_char, *const c_char) -> c_int;
type FnFullConnect = unsafe extern "C" fn(*mut Context, *const c_char, c_int) -> c_int;
type FnFullConnectAsync =
    unsafe extern "C" fn(*mut Context, *const c_char, c_int, CommandCb, *mut c_void) -> c_int;
type FnReadCap16 = unsafe extern "C" fn(*mut Context, c_int) -> *mut TaskHead;
type FnUnmarshall = unsafe extern "C" fn(*mut TaskHead) -> *mut c_void;
type FnFreeTask = unsafe extern "C" fn(*mut c_void);
type FnRead16 = unsafe extern "C" fn(
    *mut Context,
    c_int,
    u64,
    u32,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    CommandCb,
    *mut c_void,
) -> *mut TaskHead;
type FnWrite16 = unsafe extern "C" fn(
    *mut Context,
    c_int,
    u64,
    *mut u8,
    u32,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    CommandCb,
    *mut c_void,
) -> *mut TaskHead;
type FnInquiry = unsafe extern "C" fn(
    *mut Context,
    c_int,
    c_int,
    c_int,
    c_int,
    CommandCb,
    *mut c_void,
) -> *mut TaskHead;
type FnAddDataIn = unsafe extern "C" fn(*mut TaskHead, c_int, *mut u8) -> c_int;

/// The libiscsi functions ioscope uses, with the library kept loaded.
struct Lib {
    _lib: Library,
    create_context: FnCreate,
    destroy_context: FnCtxInt,
    get_error: FnGetError,
    set_targetname: FnCtxStr,
    set_session_type: FnCtxSetInt,
    set_noautoreconnect: FnCtxSetVoid,
    set_initiator_username_pwd: FnUserPwd,
    full_connect_sync: FnFullConnect,
    full_connect_async: FnFullConnectAsync,
    readcapacity16_sync: FnReadCap16,
    datain_unmarshall: FnUnmarshall,
    free_scsi_task: FnFreeTask,
    read16_task: FnRead16,
    write16_task: FnWrite16,
    inquiry_task: FnInquiry,
    add_data_in_buffer: FnAddDataIn,
    get_fd: FnCtxInt,
    which_events: FnCtxInt,
    service: FnCtxSetInt,
    queue_length: FnCtxInt,
    /// `iscsi_out_queue_length` (libiscsi 1.13 and later; absent before).
    out_queue_length: Option<FnCtxInt>,
    is_logged_in: FnCtxInt,
}

fn load() -> Result<Lib, LoadError> {
    let l = Loader::open(
        "IOSCOPE_LIBISCSI",
        "libiscsi.so.7",
        "libiscsi",
        "iSCSI targets need it: install the Debian/Ubuntu package libiscsi7 (Fedora: libiscsi)",
    )?;
    Ok(Lib {
        create_context: sym!(l, "iscsi_create_context"),
        destroy_context: sym!(l, "iscsi_destroy_context"),
        get_error: sym!(l, "iscsi_get_error"),
        set_targetname: sym!(l, "iscsi_set_targetname"),
        set_session_type: sym!(l, "iscsi_set_session_type"),
        set_noautoreconnect: sym!(l, "iscsi_set_noautoreconnect"),
        set_initiator_username_pwd: sym!(l, "iscsi_set_initiator_username_pwd"),
        full_connect_sync: sym!(l, "iscsi_full_connect_sync"),
        full_connect_async: sym!(l, "iscsi_full_connect_async"),
        readcapacity16_sync: sym!(l, "iscsi_readcapacity16_sync"),
        datain_unmarshall: sym!(l, "scsi_datain_unmarshall"),
        free_scsi_task: sym!(l, "scsi_free_scsi_task"),
        read16_task: sym!(l, "iscsi_read16_task"),
        write16_task: sym!(l, "iscsi_write16_task"),
        inquiry_task: sym!(l, "iscsi_inquiry_task"),
        add_data_in_buffer: sym!(l, "scsi_task_add_data_in_buffer"),
        get_fd: sym!(l, "iscsi_get_fd"),
        which_events: sym!(l, "iscsi_which_events"),
        service: sym!(l, "iscsi_service"),
        queue_length: sym!(l, "iscsi_queue_length"),
        // SAFETY: the symbol's C type is FnCtxInt's.
        out_queue_length: unsafe { l.sym("iscsi_out_queue_length\0") }.ok(),
        is_logged_in: sym!(l, "iscsi_is_logged_in"),
        _lib: l.into_library(),
    })
}

loaded_library!(Lib, load);

// `(tag, SCSI status)` of the commands completed on this thread.
thread_done_list!(i32);

/// Called by libiscsi inside `iscsi_service` (or `iscsi_destroy_context`) when a
/// command ends; `private_data` carries the request's tag.
unsafe extern "C" fn on_task_done(
    _ctx: *mut Context,
    status: c_int,
    command_data: *mut c_void,
    private_data: *mut c_void,
) {
    record(private_data as usize as u64, status);
    if let Ok(l) = lib() {
        if !command_data.is_null() {
            // SAFETY: for SCSI commands command_data is the task libiscsi created for
            // it; the callback owns it from here, and nothing else refers to it.
            unsafe { (l.free_scsi_task)(command_data) };
        }
    }
}

/// A login under way: no status yet.
const LOGIN_PENDING: i32 = i32::MIN;

/// Called by libiscsi inside `iscsi_service` when an asynchronous login ends;
/// `private_data` is the session's `login` status cell.
unsafe extern "C" fn on_login(
    _ctx: *mut Context,
    status: c_int,
    _command_data: *mut c_void,
    private_data: *mut c_void,
) {
    // SAFETY: private_data is the AtomicI32 boxed in the Session that owns this
    // context; the box outlives the context (dropped after it).
    unsafe { &*(private_data as *const AtomicI32) }.store(status, Ordering::Relaxed);
}

/// A libiscsi failure: the library could not be loaded, or its own words (or the
/// step that failed) about a call.
#[derive(Debug, Clone, thiserror::Error)]
pub enum IscsiError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("{0}")]
    Library(String),
}

impl From<String> for IscsiError {
    fn from(msg: String) -> Self {
        IscsiError::Library(msg)
    }
}

impl From<&str> for IscsiError {
    fn from(msg: &str) -> Self {
        IscsiError::Library(msg.to_string())
    }
}

/// CHAP credentials (never printed: no Debug, no Display).
pub struct Chap {
    pub user: String,
    pub password: String,
}

/// One iSCSI session logged in to one LUN.
pub struct Session {
    lib: &'static Lib,
    ctx: *mut Context,
    lun: c_int,
    /// The status of an asynchronous login ([`Session::start_connect`]), written by
    /// its callback; `LOGIN_PENDING` until then. Boxed: libiscsi holds its address.
    login: Box<AtomicI32>,
}

// SAFETY: a Session owns its context exclusively and is used by one thread at a time
// (a worker, or behind a Mutex); libiscsi keeps no thread-affine state in it.
unsafe impl Send for Session {}

impl Session {
    /// Connects to the spec's portal (`HOST:PORT`), logs in to its IQN and checks
    /// its LUN.
    pub fn connect(spec: &IscsiSpec, chap: Option<&Chap>) -> Result<Session, IscsiError> {
        Self::open(spec, chap, false)
    }

    /// Starts the same without blocking: drive it with [`Session::which_events`] and
    /// [`Session::service`] until [`Session::login_state`] says how it ended.
    pub fn start_connect(spec: &IscsiSpec, chap: Option<&Chap>) -> Result<Session, IscsiError> {
        Self::open(spec, chap, true)
    }

    /// [`Session::connect`] given at most `limit_ns` (0: no limit, the blocking
    /// login): the asynchronous login, driven on this thread until it ends or the
    /// time is up. A cut link swallows the SYN and a stalled target never answers
    /// the login; either way the attempt ends at the deadline and the context is
    /// destroyed (a multipath probe must not wait for TCP's own retries).
    pub fn connect_within(
        spec: &IscsiSpec,
        chap: Option<&Chap>,
        limit_ns: u64,
    ) -> Result<Session, IscsiError> {
        if limit_ns == 0 {
            return Self::connect(spec, chap);
        }
        let deadline = crate::clock::now_ns().saturating_add(limit_ns);
        let s = Self::start_connect(spec, chap)?;
        loop {
            match s.login_state() {
                Some(Ok(())) => return Ok(s),
                Some(Err(e)) => return Err(e),
                None => {}
            }
            let now = crate::clock::now_ns();
            if now >= deadline {
                return Err(format!(
                    "no iSCSI login within {:.1} s (the portal did not answer)",
                    limit_ns as f64 / 1e9
                )
                .into());
            }
            // Waits at most 10 ms at a time: with no events wanted, libiscsi asks to
            // be serviced again a little later (its own timers).
            let ms = (deadline - now).div_ceil(1_000_000).min(10) as c_int;
            let mut pfd = libc::pollfd {
                fd: s.fd(),
                events: s.which_events(),
                revents: 0,
            };
            // SAFETY: one valid pollfd for the duration of the call.
            let n = unsafe { libc::poll(&mut pfd, 1, ms) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(format!("poll on the login's socket: {e}").into());
                }
                continue;
            }
            s.service(pfd.revents)?;
        }
    }

    /// How an asynchronous login ended: `None` while it is under way.
    pub fn login_state(&self) -> Option<Result<(), IscsiError>> {
        match self.login.load(Ordering::Relaxed) {
            LOGIN_PENDING => None,
            0 => Some(Ok(())),
            _ => Some(Err(self.error().into())),
        }
    }

    fn open(spec: &IscsiSpec, chap: Option<&Chap>, aio: bool) -> Result<Session, IscsiError> {
        let (portal, iqn, lun) = (&spec.portal, &spec.iqn, spec.lun);
        let l = lib()?;
        let cstr = |s: &str| CString::new(s).map_err(|_| "a NUL byte in the URI".to_string());
        let initiator = cstr(INITIATOR)?;
        // SAFETY: a valid C string; NULL is checked.
        let ctx = unsafe { (l.create_context)(initiator.as_ptr()) };
        if ctx.is_null() {
            return Err("libiscsi could not create a context".into());
        }
        let s = Session {
            lib: l,
            ctx,
            lun: lun as c_int,
            login: Box::new(AtomicI32::new(LOGIN_PENDING)),
        };
        let target = cstr(iqn)?;
        let c_portal = cstr(portal)?;
        // SAFETY: valid context and C strings that outlive each call.
        unsafe {
            if (l.set_targetname)(ctx, target.as_ptr()) != 0
                || (l.set_session_type)(ctx, SESSION_NORMAL) != 0
            {
                return Err(s.error().into());
            }
            // A lost session fails its commands instead of reconnecting behind our back.
            (l.set_noautoreconnect)(ctx, 1);
            if let Some(c) = chap {
                let (u, p) = (cstr(&c.user)?, cstr(&c.password)?);
                if (l.set_initiator_username_pwd)(ctx, u.as_ptr(), p.as_ptr()) != 0 {
                    return Err(s.error().into());
                }
            }
            let status = if aio {
                let cell = &*s.login as *const AtomicI32 as *mut c_void;
                (l.full_connect_async)(ctx, c_portal.as_ptr(), s.lun, on_login, cell)
            } else {
                (l.full_connect_sync)(ctx, c_portal.as_ptr(), s.lun)
            };
            if status != 0 {
                return Err(s.error().into());
            }
        }
        Ok(s)
    }

    /// libiscsi's last error on this context.
    pub fn error(&self) -> String {
        // SAFETY: valid context; the string (NULL, or NUL-terminated and owned by
        // the context) is copied at once.
        unsafe { c_message((self.lib.get_error)(self.ctx), "unknown libiscsi error") }
    }

    /// The task a call made, or libiscsi's error when it made none.
    #[inline]
    fn task(&self, task: *mut TaskHead) -> Result<*mut TaskHead, IscsiError> {
        if task.is_null() {
            return Err(self.error().into());
        }
        Ok(task)
    }

    /// READ CAPACITY (16): (number of blocks, block size in bytes).
    pub fn read_capacity(&self) -> Result<(u64, u32), IscsiError> {
        // SAFETY: valid, logged-in context.
        let task = self.task(unsafe { (self.lib.readcapacity16_sync)(self.ctx, self.lun) })?;
        // SAFETY: task is a live scsi_task; its first member is the status.
        let status = unsafe { (*task).status };
        let r = if status != STATUS_GOOD {
            Err(format!("READ CAPACITY (16) failed: {}", self.error()).into())
        } else {
            // SAFETY: a good READ CAPACITY (16) task unmarshalls to this struct,
            // owned by the task and read before the task is freed.
            let rc = unsafe { (self.lib.datain_unmarshall)(task) } as *const ReadCapacity16;
            if rc.is_null() {
                Err("READ CAPACITY (16): could not decode the answer".into())
            } else {
                // SAFETY: non-null pointer to the decoded struct.
                let rc = unsafe { &*rc };
                Ok((rc.returned_lba + 1, rc.block_length))
            }
        };
        // SAFETY: freeing the task returned by the _sync call, once.
        unsafe { (self.lib.free_scsi_task)(task as *mut c_void) };
        r
    }

    /// Starts READ (16) of `len` bytes at block `lba` into `buf`; the completion is
    /// recorded with `tag` (see [`take_done`]).
    ///
    /// # Safety
    /// `buf` must stay valid for `len` bytes of writes until the completion has been
    /// recorded or the session is dropped.
    pub unsafe fn read16(
        &self,
        buf: *mut u8,
        len: u32,
        lba: u64,
        block: u32,
        tag: u64,
    ) -> Result<(), IscsiError> {
        // SAFETY: valid context; the callback and tag are plain values.
        let task = self.task(unsafe {
            (self.lib.read16_task)(
                self.ctx,
                self.lun,
                lba,
                len,
                block as c_int,
                0,
                0,
                0,
                0,
                0,
                on_task_done,
                tag as usize as *mut c_void,
            )
        })?;
        // SAFETY: the task is queued but its data cannot arrive before the next
        // iscsi_service on this thread; the caller keeps buf valid until completion.
        if unsafe { (self.lib.add_data_in_buffer)(task, len as c_int, buf) } != 0 {
            return Err("libiscsi could not attach the read buffer".into());
        }
        Ok(())
    }

    /// Starts WRITE (16) of `len` bytes from `buf` at block `lba`.
    ///
    /// # Safety
    /// `buf` must stay valid for `len` bytes of reads until the completion has been
    /// recorded or the session is dropped.
    pub unsafe fn write16(
        &self,
        buf: *mut u8,
        len: u32,
        lba: u64,
        block: u32,
        tag: u64,
    ) -> Result<(), IscsiError> {
        // SAFETY: valid context; libiscsi only reads buf, which the caller keeps valid.
        self.task(unsafe {
            (self.lib.write16_task)(
                self.ctx,
                self.lun,
                lba,
                buf,
                len,
                block as c_int,
                0,
                0,
                0,
                0,
                0,
                on_task_done,
                tag as usize as *mut c_void,
            )
        })
        .map(drop)
    }

    /// Starts INQUIRY with EVPD set for VPD page `page`, its answer (at most
    /// `buf.len()` bytes) landing in `buf`; the completion is recorded with `tag`.
    ///
    /// # Safety
    /// `buf` must stay valid for writes until the completion has been recorded or
    /// the session is dropped.
    pub unsafe fn inquiry_vpd(&self, buf: &mut [u8], page: u8, tag: u64) -> Result<(), IscsiError> {
        let len = buf.len().min(u16::MAX as usize) as c_int;
        // SAFETY: valid context; the callback and tag are plain values.
        let task = self.task(unsafe {
            (self.lib.inquiry_task)(
                self.ctx,
                self.lun,
                1,
                page as c_int,
                len,
                on_task_done,
                tag as usize as *mut c_void,
            )
        })?;
        // SAFETY: as in read16: no data can arrive before the next iscsi_service on
        // this thread, and the caller keeps buf valid until completion.
        if unsafe { (self.lib.add_data_in_buffer)(task, len, buf.as_mut_ptr()) } != 0 {
            return Err("libiscsi could not attach the INQUIRY buffer".into());
        }
        Ok(())
    }

    /// The socket to poll.
    pub fn fd(&self) -> i32 {
        // SAFETY: valid context.
        unsafe { (self.lib.get_fd)(self.ctx) }
    }

    /// The poll(2) events libiscsi waits for (0 = none now; call [`Session::service`]
    /// with 0 a little later).
    pub fn which_events(&self) -> i16 {
        // SAFETY: valid context.
        unsafe { (self.lib.which_events)(self.ctx) as i16 }
    }

    /// Lets libiscsi act on `revents`; completions are recorded on this thread.
    pub fn service(&self, revents: i16) -> Result<(), IscsiError> {
        // SAFETY: valid context; callbacks run on this thread.
        if unsafe { (self.lib.service)(self.ctx, revents as c_int) } < 0 {
            return Err(self.error().into());
        }
        Ok(())
    }

    /// Commands in flight.
    pub fn queue_length(&self) -> usize {
        // SAFETY: valid context.
        unsafe { (self.lib.queue_length)(self.ctx) }.max(0) as usize
    }

    /// PDUs queued and not yet written to the socket (`None`: a libiscsi too old to
    /// say).
    pub fn unsent(&self) -> Option<usize> {
        let f = self.lib.out_queue_length?;
        // SAFETY: valid context.
        Some(unsafe { f(self.ctx) }.max(0) as usize)
    }

    /// False once the session has been lost.
    pub fn is_logged_in(&self) -> bool {
        // SAFETY: valid context.
        unsafe { (self.lib.is_logged_in)(self.ctx) == 1 }
    }
}

/// Records the completion of request `tag` as libiscsi's callback does: ioscope's
/// own initiator (`engine::iscsi::wire`) reports into the same list.
pub fn report(tag: u64, status: i32) {
    record(tag, status);
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: destroying the context this Session owns, exactly once; commands
        // still in flight are cancelled through the callback, which frees them.
        unsafe { (self.lib.destroy_context)(self.ctx) };
    }
}
