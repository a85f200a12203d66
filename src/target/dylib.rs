//! Loading a C library at run time, the one way the network bindings (libnbd,
//! libiscsi, libnfs) do it: ioscope must build and run its local targets on a
//! machine without them, so a library is opened with `dlopen` the first time a
//! target needs it ([`Loaded`]), under a name an environment variable may override
//! (how the tests simulate a machine without it), and a failure names the package to
//! install. The parts every binding repeats live here too: the load-once functions
//! ([`loaded_library!`]), the per-thread list its completion callback records into
//! ([`thread_done_list!`]) and the copy of a C
//! error string ([`c_message`]).

use libloading::Library;
use std::ffi::{c_char, CStr};
use std::sync::OnceLock;

/// A library or one of its functions could not be loaded: which library, under which
/// file name, the loader's words, and what needs it (the package to install).
/// Cloned: the first failure is remembered for the life of the process.
#[derive(Debug, Clone, thiserror::Error)]
#[error("cannot load {what} ('{name}': {detail}); {needed_for}")]
pub struct LoadError {
    pub what: String,
    pub name: String,
    /// The dynamic loader's message (libloading's errors are not `Clone`).
    pub detail: String,
    pub needed_for: String,
}

/// An opened library and how to word a failure to find something in it.
pub struct Loader {
    lib: Library,
    /// A failure's wording, with an empty `detail` to fill in.
    failure: LoadError,
}

impl Loader {
    /// Opens the library named by `env_var`, or `soname` when it is not set.
    /// `what` names the library in messages ("libnbd"), `needed_for` says what needs
    /// it and which package provides it ("NBD targets need it: install …").
    pub fn open(
        env_var: &str,
        soname: &str,
        what: &str,
        needed_for: &str,
    ) -> Result<Loader, LoadError> {
        let name = std::env::var(env_var).unwrap_or_else(|_| soname.to_string());
        let failure = LoadError {
            what: what.to_string(),
            name: name.clone(),
            detail: String::new(),
            needed_for: needed_for.to_string(),
        };
        // SAFETY: loading the library runs its initialisers, which (for the
        // libraries loaded here) only set up library state.
        match unsafe { Library::new(&name) } {
            Ok(lib) => Ok(Loader { lib, failure }),
            Err(e) => Err(LoadError {
                detail: e.to_string(),
                ..failure
            }),
        }
    }

    /// The function `name` (NUL-terminated) as a `T`.
    ///
    /// # Safety
    /// `T` must be the function pointer type the library's header declares for
    /// `name`. The pointer stays valid while the library stays loaded: the caller
    /// keeps it with [`Loader::into_library`] for the life of the process.
    pub unsafe fn sym<T: Copy>(&self, name: &str) -> Result<T, LoadError> {
        // SAFETY: the caller's promise about T.
        match unsafe { self.lib.get::<T>(name.as_bytes()) } {
            Ok(f) => Ok(*f),
            Err(e) => Err(LoadError {
                detail: e.to_string(),
                ..self.failure.clone()
            }),
        }
    }

    /// The library, to be kept loaded next to the functions taken from it.
    pub fn into_library(self) -> Library {
        self.lib
    }
}

/// A library's function table, loaded once per process on first use; the first
/// failure is remembered and returned to every later caller.
pub struct Loaded<L>(OnceLock<Result<L, LoadError>>);

impl<L> Loaded<L> {
    pub const fn new() -> Self {
        Loaded(OnceLock::new())
    }

    /// The table, loading it with `load` the first time.
    pub fn get(&'static self, load: fn() -> Result<L, LoadError>) -> Result<&'static L, LoadError> {
        self.0.get_or_init(load).as_ref().map_err(|e| e.clone())
    }
}

impl<L> Default for Loaded<L> {
    fn default() -> Self {
        Self::new()
    }
}

/// Declares `fn lib()`, the library's function table `$lib` loaded once per process
/// with `$load` (or the reason it could not be), and `pub fn available()`.
macro_rules! loaded_library {
    ($lib:ty, $load:path) => {
        /// The library, loaded once per process (or the reason it could not be).
        fn lib() -> Result<&'static $lib, $crate::target::dylib::LoadError> {
            static LIB: $crate::target::dylib::Loaded<$lib> = $crate::target::dylib::Loaded::new();
            LIB.get($load)
        }

        /// Whether the library can be loaded here; `Err` says which package to
        /// install.
        pub fn available() -> Result<(), $crate::target::dylib::LoadError> {
            lib().map(|_| ())
        }
    };
}
pub(crate) use loaded_library;

/// A C library's error string, copied; `fallback` when it is NULL or empty.
///
/// # Safety
/// `p` is NULL or points at a NUL-terminated string that stays valid for the call.
pub unsafe fn c_message(p: *const c_char, fallback: &str) -> String {
    if p.is_null() {
        return fallback.to_string();
    }
    // SAFETY: non-null and NUL-terminated (the caller's promise).
    let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    if s.is_empty() {
        fallback.to_string()
    } else {
        s
    }
}

/// Declares the per-thread list a binding's completion callback records
/// `(tag, $value)` into, with its three functions: `record` (for the callback),
/// `pub take_done` (the engine drains it between library calls: no allocation and
/// no lock per I/O) and `pub discard_done` (an engine going away drops what its
/// cancelled requests recorded, so that no other engine on the thread — another
/// path of a multipath target — takes them as its own answers).
macro_rules! thread_done_list {
    ($value:ty) => {
        thread_local! {
            /// `(tag, result)` of the requests completed on this thread, in order.
            static DONE: std::cell::RefCell<Vec<(u64, $value)>> =
                const { std::cell::RefCell::new(Vec::new()) };
        }

        /// Records the completion of request `tag` (from the callback).
        fn record(tag: u64, v: $value) {
            DONE.with(|d| d.borrow_mut().push((tag, v)));
        }

        /// Moves the completions recorded on this thread into `out`.
        pub fn take_done(out: &mut Vec<(u64, $value)>) {
            DONE.with(|d| out.append(&mut d.borrow_mut()));
        }

        /// Drops the completions recorded on this thread whose tag `gone` names:
        /// those of an engine going away, which no other engine may take as its own.
        pub fn discard_done(mut gone: impl FnMut(u64) -> bool) {
            DONE.with(|d| d.borrow_mut().retain(|&(tag, _)| !gone(tag)));
        }
    };
}
pub(crate) use thread_done_list;

/// Looks up a function by its C name in a [`Loader`], typed by the field it fills.
macro_rules! sym {
    ($loader:expr, $name:literal) => {
        // SAFETY: the symbol is looked up by its C name and given the function type
        // declared for it in the library's header (the field's type); the library
        // is stored next to it for the life of the process.
        unsafe { $loader.sym(concat!($name, "\0")) }?
    };
}
pub(crate) use sym;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_names_the_package() {
        let e = Loader::open(
            "IOSCOPE_TEST_NO_SUCH_LIB",
            "libioscope-none.so.9",
            "libnone",
            "tests need it: install libnone9",
        )
        .err()
        .unwrap()
        .to_string();
        assert!(
            e.starts_with("cannot load libnone ('libioscope-none.so.9': ")
                && e.ends_with("); tests need it: install libnone9"),
            "{e}"
        );
    }

    #[test]
    fn a_missing_function_is_named_too() {
        // libc is loaded in every process; it has no such function.
        let l = Loader::open("IOSCOPE_TEST_NO_SUCH_LIB", "libc.so.6", "libc", "x").unwrap();
        // SAFETY: never called; the type is irrelevant to a failed lookup.
        let r: Result<unsafe extern "C" fn(), LoadError> = unsafe { l.sym("ioscope_nothing\0") };
        assert!(r.unwrap_err().to_string().contains("ioscope_nothing"));
        // SAFETY: getpid's C signature.
        let f: unsafe extern "C" fn() -> libc::pid_t = unsafe { l.sym("getpid\0") }.unwrap();
        // SAFETY: getpid has no preconditions.
        assert_eq!(unsafe { f() }, std::process::id() as libc::pid_t);
    }
}
