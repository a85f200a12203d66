//! ioscope patch: the buffer a READ's data is put in as it arrives from the socket,
//! instead of a message buffer the data is then copied out of.
//!
//! A request registers its sink with the connection's worker under its message ID
//! when it is sent; the receive loop takes it out when the response arrives and,
//! for a plain, successful, uncompounded READ response whose data fits, reads the
//! data in pieces through one reused buffer, putting each piece in the sink while
//! it is open (and feeding the signature check). Any other response takes the usual
//! path. The request closes its sink when it ends or is dropped; a closed sink takes
//! nothing, so a late response never writes into a buffer its owner took back.

use std::sync::Mutex;

#[derive(Clone, Copy)]
struct Dest {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: a Dest is only written through while its sink's mutex is held and the
// sink is open; whoever opened it keeps the buffer valid and unread until it is
// closed (ReadSink::open's contract).
unsafe impl Send for Dest {}

/// Where one READ's data goes.
pub struct ReadSink {
    dest: Mutex<Option<Dest>>,
}

impl ReadSink {
    /// A sink writing into `buf`.
    ///
    /// # Safety
    /// `buf` must stay valid, and must not be read or written by anyone else, until
    /// [`ReadSink::close`] has returned.
    pub unsafe fn open(buf: &mut [u8]) -> ReadSink {
        ReadSink {
            dest: Mutex::new(Some(Dest {
                ptr: buf.as_mut_ptr(),
                len: buf.len(),
            })),
        }
    }

    /// How many bytes the sink takes; 0 once closed.
    pub fn capacity(&self) -> usize {
        self.lock().map_or(0, |d| d.len)
    }

    /// Puts `data` at `at` in the buffer; false (nothing written) when the sink is
    /// closed or the data would not fit.
    pub(crate) fn put(&self, at: usize, data: &[u8]) -> bool {
        let guard = self.dest.lock().unwrap_or_else(|p| p.into_inner());
        match *guard {
            Some(d) if at.checked_add(data.len()).is_some_and(|end| end <= d.len) => {
                // SAFETY: in bounds (checked above); the sink is open and its mutex
                // held, so the buffer is valid and nobody else touches it (open's
                // contract); `data` is this crate's own buffer, not the sink's.
                #[allow(unsafe_code)]
                unsafe {
                    std::ptr::copy_nonoverlapping(data.as_ptr(), d.ptr.add(at), data.len());
                }
                true
            }
            _ => false,
        }
    }

    /// Takes nothing more; returns once no write into the buffer is under way.
    pub fn close(&self) {
        *self.dest.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    fn lock(&self) -> Option<Dest> {
        *self.dest.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl std::fmt::Debug for ReadSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadSink")
            .field("capacity", &self.capacity())
            .finish()
    }
}
