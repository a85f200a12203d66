//! Loading a C library at run time, the one way both network bindings (libnbd,
//! libiscsi) do it: ioscope must build and run its local targets on a machine without
//! them, so a library is opened with `dlopen` the first time a target needs it, under
//! a name an environment variable may override (how the tests simulate a machine
//! without it), and a failure names the package to install.

use libloading::Library;

/// An opened library and how to word a failure to find something in it.
pub struct Loader {
    lib: Library,
    /// "cannot load libnbd ('libnbd.so.0': …); NBD targets need it: install …"
    /// without the error in the middle: (before it, after it).
    message: (String, String),
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
    ) -> Result<Loader, String> {
        let name = std::env::var(env_var).unwrap_or_else(|_| soname.to_string());
        let message = (
            format!("cannot load {what} ('{name}': "),
            format!("); {needed_for}"),
        );
        // SAFETY: loading the library runs its initialisers, which (for the
        // libraries loaded here) only set up library state.
        match unsafe { Library::new(&name) } {
            Ok(lib) => Ok(Loader { lib, message }),
            Err(e) => Err(format!("{}{e}{}", message.0, message.1)),
        }
    }

    /// The function `name` (NUL-terminated) as a `T`.
    ///
    /// # Safety
    /// `T` must be the function pointer type the library's header declares for
    /// `name`. The pointer stays valid while the library stays loaded: the caller
    /// keeps it with [`Loader::into_library`] for the life of the process.
    pub unsafe fn sym<T: Copy>(&self, name: &str) -> Result<T, String> {
        // SAFETY: the caller's promise about T.
        match unsafe { self.lib.get::<T>(name.as_bytes()) } {
            Ok(f) => Ok(*f),
            Err(e) => Err(format!("{}{e}{}", self.message.0, self.message.1)),
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
        .unwrap();
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
        let r: Result<unsafe extern "C" fn(), String> = unsafe { l.sym("ioscope_nothing\0") };
        assert!(r.unwrap_err().contains("ioscope_nothing"));
        // SAFETY: getpid's C signature.
        let f: unsafe extern "C" fn() -> libc::pid_t = unsafe { l.sym("getpid\0") }.unwrap();
        // SAFETY: getpid has no preconditions.
        assert_eq!(unsafe { f() }, std::process::id() as libc::pid_t);
    }
}
