//! fio's per-job error options: `continue_on_error` (kinds: none, read, write, io,
//! verify, all; 0 and 1 for none and all), `ignore_error` (READ,WRITE,VERIFY lists
//! of errnos, `:`-separated) and `verify_fatal`, as the workload's own error policy
//! ([`OnError`]).
//!
//! fio continues on an error only when its kind is continued and its errno is in
//! that kind's list: the `ignore_error` list where one is given, else EIO and
//! EILSEQ. A verify failure is EILSEQ in fio, so a verify list without EILSEQ
//! stops at the first mismatch. `verify_fatal` stops fio's check of a block at its
//! first bad header; the job stops there unless it continues on verify errors,
//! which is what a policy without `verify` does in ioscope. `ignore_error` without
//! `continue_on_error` changes nothing in fio, and is warned about here.

use super::JobCx;
use crate::plan::compat::{CompatError, Loc};
use crate::plan::model::EngineKind;
use crate::plan::on_error::{self, Errno, ErrorKind, OnError};

/// fio's errnos that continue for a kind without an `ignore_error` list.
const FIO_DEFAULT_ERRNOS: [i32; 2] = [libc::EIO, libc::EILSEQ];

impl JobCx<'_> {
    /// The job's own error policy, when it sets `continue_on_error` or
    /// `verify_fatal=1`; `None` leaves it to the run's `--on-error`.
    pub(super) fn error_policy(
        &mut self,
        engine: EngineKind,
    ) -> Result<Option<OnError>, CompatError> {
        let o = self.o;
        let lists = match o.get("ignore_error") {
            Some((v, loc)) => ignore_lists(v, loc)?,
            None => Default::default(),
        };
        let kinds = match o.get("continue_on_error") {
            Some((v, loc)) => Some(continue_kinds(v, loc)?),
            None => None,
        };
        let fatal = o.flag("verify_fatal")?;
        if kinds.is_none() && lists.iter().any(Option::is_some) {
            self.warnings.push(format!(
                "job '{}': ignore_error without continue_on_error changes nothing in fio \
                 (every error ends the job); ioscope follows the run's --on-error",
                self.name
            ));
        }
        if kinds.is_none() && !fatal {
            return Ok(None);
        }
        if engine == EngineKind::Net {
            if let Some((v, loc)) = o.get("continue_on_error").or(o.get("verify_fatal")) {
                self.unsupported.push(
                    format!(
                        "continue_on_error={v} — a network job's errors end the job in \
                         ioscope (it runs outside the I/O workers)"
                    ),
                    loc,
                );
            }
            return Ok(None);
        }
        let kinds = kinds.unwrap_or_default();
        let mut p = OnError::default();
        let [read, write, verify] = lists;
        let errnos = |list: Option<Vec<Errno>>| {
            Some(list.unwrap_or_else(|| FIO_DEFAULT_ERRNOS.iter().map(|&e| Errno(e)).collect()))
        };
        let verify_goes_on = verify.is_none_or_has(libc::EILSEQ);
        p.set_kinds(
            &kinds
                .into_iter()
                .filter(|&k| k != ErrorKind::Verify || verify_goes_on)
                .collect::<Vec<_>>(),
        );
        if p.continue_on.contains(&ErrorKind::Read) {
            p.read_errnos = errnos(read);
        }
        if p.continue_on.contains(&ErrorKind::Write) {
            p.write_errnos = errnos(write);
        }
        Ok(Some(p))
    }
}

/// Whether an optional errno list is absent or holds `errno`.
trait MaybeList {
    fn is_none_or_has(&self, errno: i32) -> bool;
}

impl MaybeList for Option<Vec<Errno>> {
    fn is_none_or_has(&self, errno: i32) -> bool {
        match self {
            None => true,
            Some(l) => l.iter().any(|e| e.0 == errno),
        }
    }
}

/// `continue_on_error=VALUE`: the kinds it continues on.
fn continue_kinds(v: &str, loc: &Loc) -> Result<Vec<ErrorKind>, CompatError> {
    let word = match v.trim() {
        "0" => "none",
        "1" | "" => "all",
        w => w,
    };
    on_error::parse_kinds(word).map_err(|e| loc.error(format!("continue_on_error={v}: {e}")))
}

/// `ignore_error=READ,WRITE,VERIFY`: each list of `:`-separated errnos (`None`
/// where it is left empty).
fn ignore_lists(v: &str, loc: &Loc) -> Result<[Option<Vec<Errno>>; 3], CompatError> {
    let parts: Vec<&str> = v.split(',').collect();
    if parts.len() > 3 {
        return Err(loc.error(format!(
            "ignore_error={v}: at most three lists (read, write, verify), found {}",
            parts.len()
        )));
    }
    let mut out: [Option<Vec<Errno>>; 3] = Default::default();
    for (slot, part) in out.iter_mut().zip(parts) {
        let names: Vec<&str> = part
            .split(':')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if names.is_empty() {
            continue;
        }
        let list = names
            .iter()
            .map(|n| Errno::parse(n).map_err(|e| loc.error(format!("ignore_error={v}: {e}"))))
            .collect::<Result<Vec<_>, _>>()?;
        *slot = Some(list);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc() -> Loc {
        Loc::Line {
            source: "t.fio".into(),
            line: 7,
        }
    }

    #[test]
    fn continue_kinds_take_fio_words_and_numbers() {
        use ErrorKind::*;
        assert_eq!(continue_kinds("0", &loc()).unwrap(), vec![]);
        assert_eq!(
            continue_kinds("1", &loc()).unwrap(),
            vec![Read, Write, Verify]
        );
        assert_eq!(continue_kinds("io", &loc()).unwrap(), vec![Read, Write]);
        let e = continue_kinds("writes", &loc()).unwrap_err().to_string();
        assert!(
            e.contains("t.fio:7") && e.contains("continue_on_error=writes"),
            "{e}"
        );
    }

    #[test]
    fn ignore_lists_split_by_kind_and_errno() {
        let l = ignore_lists("EAGAIN,ENOSPC:122", &loc()).unwrap();
        assert_eq!(l[0], Some(vec![Errno(libc::EAGAIN)]));
        assert_eq!(l[1], Some(vec![Errno(libc::ENOSPC), Errno(libc::EDQUOT)]));
        assert_eq!(l[2], None);
        let l = ignore_lists(",ENOSPC", &loc()).unwrap();
        assert_eq!((l[0].is_none(), l[1].is_some()), (true, true));
        let e = ignore_lists(",ENOSUCH", &loc()).unwrap_err().to_string();
        assert!(e.contains("t.fio:7") && e.contains("ENOSUCH"), "{e}");
        assert!(ignore_lists("EIO,EIO,EIO,EIO", &loc()).is_err());
    }
}
