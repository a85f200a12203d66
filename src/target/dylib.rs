//! Loading a C library at run time, the one way both network bindings (libnbd,
//! libiscsi) do it: ioscope must build and run its local targets on a machine without
//! them, so a library is opened with `dlopen` the first time a target needs it, under
//! a name an environment variable may override (how the tests simulate a machine
//! without it), and a failure names the package to install.

use libloading::Library;

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
