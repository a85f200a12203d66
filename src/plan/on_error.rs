//! A workload's own error policy (fio's per-job `continue_on_error` and
//! `ignore_error`): which kinds of error it counts while the run goes on, and for
//! I/O errors, which errnos. Every other error of the workload stops the run, as the
//! run's `--on-error stop` does. A workload without a policy of its own follows the
//! run's `--on-error` (stop, continue or retry=N); the policy replaces it, retries
//! included, for that workload only.
//!
//! Kinds follow fio: `read` (failed reads), `write` (failed writes, trims and
//! flushes: everything that changes the target), `verify` (a mismatch found when
//! the workload reads data it verifies). Without `verify` in its policy a workload
//! stops the run at its first mismatch (fio's `verify_fatal`); mismatches of a
//! workload that follows the run's `--on-error` are counted and never stop it.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorKind {
    Read,
    Write,
    Verify,
}

impl ErrorKind {
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Read => "read",
            ErrorKind::Write => "write",
            ErrorKind::Verify => "verify",
        }
    }
}

/// A workload's own error policy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OnError {
    /// Kinds whose errors are counted while the run goes on (each at most once, in
    /// the order read, write, verify); errors of other kinds stop the run.
    #[serde(rename = "continue", default)]
    pub continue_on: Vec<ErrorKind>,
    /// With `read` continued: only these errnos continue (`None`: any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_errnos: Option<Vec<Errno>>,
    /// With `write` continued: only these errnos continue (`None`: any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_errnos: Option<Vec<Errno>>,
}

impl OnError {
    /// Whether an I/O error `errno` of `kind` is counted while the run goes on.
    pub fn continues(&self, kind: ErrorKind, errno: i32) -> bool {
        if !self.continue_on.contains(&kind) {
            return false;
        }
        let list = match kind {
            ErrorKind::Read => &self.read_errnos,
            ErrorKind::Write => &self.write_errnos,
            ErrorKind::Verify => return true,
        };
        match list {
            None => true,
            Some(l) => l.iter().any(|e| e.0 == errno),
        }
    }

    /// Whether a verification mismatch is counted while the run goes on.
    pub fn continues_on_mismatch(&self) -> bool {
        self.continue_on.contains(&ErrorKind::Verify)
    }

    /// Adds `kinds` to the continued kinds, keeping read, write, verify order.
    pub fn set_kinds(&mut self, kinds: &[ErrorKind]) {
        self.continue_on = [ErrorKind::Read, ErrorKind::Write, ErrorKind::Verify]
            .into_iter()
            .filter(|k| kinds.contains(k) || self.continue_on.contains(k))
            .collect();
    }
}

/// Parses a kind word of a policy: read, write, verify, or the groups io (read and
/// write), all and none.
pub fn parse_kinds(word: &str) -> Result<Vec<ErrorKind>, OnErrorError> {
    use ErrorKind::*;
    Ok(match word.trim().to_ascii_lowercase().as_str() {
        "none" => vec![],
        "read" => vec![Read],
        "write" => vec![Write],
        "verify" => vec![Verify],
        "io" => vec![Read, Write],
        "all" => vec![Read, Write, Verify],
        _ => return Err(OnErrorError::Kind(word.to_string())),
    })
}

/// Why a policy's text is not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OnErrorError {
    #[error("unknown error kind '{0}': expected read, write, verify, io, all or none")]
    Kind(String),
    #[error(
        "unknown errno '{0}': expected a name such as ENOSPC or EIO, or a number from 1 to 4095"
    )]
    Errno(String),
}

/// An errno value; written as its name (`ENOSPC`) where it has one, else as a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Errno(pub i32);

/// Errno names ioscope knows (Linux values), as fio's `ignore_error` accepts them.
const ERRNOS: &[(&str, i32)] = &[
    ("EPERM", libc::EPERM),
    ("ENOENT", libc::ENOENT),
    ("EINTR", libc::EINTR),
    ("EIO", libc::EIO),
    ("ENXIO", libc::ENXIO),
    ("EBADF", libc::EBADF),
    ("EAGAIN", libc::EAGAIN),
    ("ENOMEM", libc::ENOMEM),
    ("EACCES", libc::EACCES),
    ("EFAULT", libc::EFAULT),
    ("EBUSY", libc::EBUSY),
    ("EEXIST", libc::EEXIST),
    ("ENODEV", libc::ENODEV),
    ("EINVAL", libc::EINVAL),
    ("ENFILE", libc::ENFILE),
    ("EMFILE", libc::EMFILE),
    ("EFBIG", libc::EFBIG),
    ("ENOSPC", libc::ENOSPC),
    ("ESPIPE", libc::ESPIPE),
    ("EROFS", libc::EROFS),
    ("EPIPE", libc::EPIPE),
    ("ERANGE", libc::ERANGE),
    ("ENODATA", libc::ENODATA),
    ("ENOLINK", libc::ENOLINK),
    ("EBADMSG", libc::EBADMSG),
    ("EOVERFLOW", libc::EOVERFLOW),
    ("EILSEQ", libc::EILSEQ),
    ("EOPNOTSUPP", libc::EOPNOTSUPP),
    ("ENOTSUP", libc::ENOTSUP),
    ("ECONNRESET", libc::ECONNRESET),
    ("ENOBUFS", libc::ENOBUFS),
    ("ENOTCONN", libc::ENOTCONN),
    ("ESHUTDOWN", libc::ESHUTDOWN),
    ("ETIMEDOUT", libc::ETIMEDOUT),
    ("ECONNREFUSED", libc::ECONNREFUSED),
    ("EHOSTUNREACH", libc::EHOSTUNREACH),
    ("ESTALE", libc::ESTALE),
    ("EREMOTEIO", libc::EREMOTEIO),
    ("EDQUOT", libc::EDQUOT),
    ("ENOMEDIUM", libc::ENOMEDIUM),
    ("EMEDIUMTYPE", libc::EMEDIUMTYPE),
    ("ECANCELED", libc::ECANCELED),
];

impl Errno {
    /// An errno name (any case) or number.
    pub fn parse(text: &str) -> Result<Errno, OnErrorError> {
        let t = text.trim();
        if let Ok(n) = t.parse::<i32>() {
            return Errno::number(n).ok_or_else(|| OnErrorError::Errno(text.to_string()));
        }
        ERRNOS
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(t))
            .map(|&(_, n)| Errno(n))
            .ok_or_else(|| OnErrorError::Errno(text.to_string()))
    }

    /// A number in the kernel's errno range (1 to 4095).
    pub fn number(n: i32) -> Option<Errno> {
        (1..4096).contains(&n).then_some(Errno(n))
    }

    /// Its name, where ioscope knows one (the first of aliases).
    pub fn name(self) -> Option<&'static str> {
        ERRNOS.iter().find(|e| e.1 == self.0).map(|e| e.0)
    }
}

impl std::fmt::Display for Errno {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "{}", self.0),
        }
    }
}

impl Serialize for Errno {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.name() {
            Some(n) => s.serialize_str(n),
            None => s.serialize_i32(self.0),
        }
    }
}

impl<'de> Deserialize<'de> for Errno {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Num(i64),
            Name(String),
        }
        let bad = |t: String| serde::de::Error::custom(OnErrorError::Errno(t));
        match Raw::deserialize(d)? {
            Raw::Num(n) => i32::try_from(n)
                .ok()
                .and_then(Errno::number)
                .ok_or_else(|| bad(n.to_string())),
            Raw::Name(s) => Errno::parse(&s).map_err(|_| bad(s)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_errnos_decide_what_continues() {
        let p = OnError {
            continue_on: vec![ErrorKind::Write],
            read_errnos: None,
            write_errnos: Some(vec![Errno(libc::ENOSPC)]),
        };
        assert!(p.continues(ErrorKind::Write, libc::ENOSPC));
        assert!(!p.continues(ErrorKind::Write, libc::EIO));
        assert!(!p.continues(ErrorKind::Read, libc::ENOSPC));
        assert!(!p.continues_on_mismatch());
        let any = OnError {
            continue_on: parse_kinds("all").unwrap(),
            ..Default::default()
        };
        assert!(any.continues(ErrorKind::Read, libc::EIO));
        assert!(any.continues(ErrorKind::Write, 4095));
        assert!(any.continues_on_mismatch());
    }

    #[test]
    fn errnos_parse_by_name_or_number_and_refuse_the_rest() {
        assert_eq!(Errno::parse("enospc"), Ok(Errno(libc::ENOSPC)));
        assert_eq!(Errno::parse("122"), Ok(Errno(122)));
        assert_eq!(Errno(122).to_string(), "EDQUOT");
        assert_eq!(Errno(4000).to_string(), "4000");
        assert!(Errno::parse("ENOSUCH").is_err());
        assert!(Errno::parse("0").is_err());
        assert!(Errno::parse("-5").is_err());
        assert!(parse_kinds("writes").is_err());
        assert_eq!(
            parse_kinds("IO").unwrap(),
            vec![ErrorKind::Read, ErrorKind::Write]
        );
    }

    #[test]
    fn set_kinds_keeps_one_order_without_repeats() {
        let mut p = OnError::default();
        p.set_kinds(&[ErrorKind::Verify, ErrorKind::Read]);
        p.set_kinds(&[ErrorKind::Read]);
        assert_eq!(p.continue_on, vec![ErrorKind::Read, ErrorKind::Verify]);
    }
}
