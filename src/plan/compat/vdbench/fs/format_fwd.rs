//! `fwd=format`: vdbench's settings for the format runs only (FwdEntry). It names no
//! fsd and no rd runs it: its `threads=` and the first of its `xfersize=` shape the
//! writes that lay each tree out before an rd with `format=yes|restart|only`.
//! Without it the format is vdbench's own: 8 threads of 128 KiB ([`DEFAULT`]), each
//! thread writing whole files of its own (`run::launch`). Like vdbench, it starts
//! from an `fwd=default` before it for `threads=` (never for `xfersize=`, which
//! vdbench resets to 128 KiB) and ignores every other parameter. Its `openflags=`
//! replaces the fsds' for the format writes (an rd's replaces it).

use super::{list, perr, FsDef, Param};
use crate::plan::compat::{CompatError, UnsupportedList};
use crate::plan::units::{parse_count, parse_size};

/// The fwd name vdbench reserves for format settings.
const NAME: &str = "format";
/// vdbench's format transfer size (its dedup unit) under an `fwd=format` without
/// `xfersize=`.
const DEFAULT_XFER_BYTES: u64 = 128 * 1024;
/// `fwd=default`'s threads (vdbench's FwdEntry default) when it sets none.
const FWD_THREADS: u32 = 1;

/// vdbench's format without an `fwd=format`: 8 threads writing 128 KiB.
pub(super) const DEFAULT: FormatFwd = FormatFwd {
    threads: 8,
    xfer_bytes: DEFAULT_XFER_BYTES,
    openflags: None,
};

/// How a format run writes each tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FormatFwd {
    /// Streams sharing the one pass over a tree's files.
    pub threads: u32,
    /// Bytes per write (the tree's file length when that is smaller).
    pub xfer_bytes: u64,
    /// `openflags=`: the format writes' flags instead of the fsds'.
    pub openflags: super::open_flags::Given,
}

/// Whether the definition being read is `fwd=format`.
pub(super) fn is_format(kind: &str, name: &str) -> bool {
    kind == "fwd" && name == NAME
}

/// A parameter of `fwd=format`: `threads=`, `xfersize=` and `openflags=` kept
/// (vdbench takes a unique prefix), the rest dropped as vdbench ignores them.
pub(super) fn param(mut p: Param) -> Option<Param> {
    let key = ["threads", "xfersize", "openflags"]
        .into_iter()
        .find(|k| !p.key.is_empty() && k.starts_with(p.key.as_str()))?;
    p.key = key.to_string();
    Some(p)
}

/// Takes `fwd=format` out of `defs` (definitions in file order, defaults not yet
/// applied) and reads it; `None` without one.
pub(super) fn take(
    defs: &mut Vec<FsDef>,
    unsupported: &mut UnsupportedList,
) -> Result<Option<FormatFwd>, CompatError> {
    let Some(at) = defs.iter().position(|d| is_format(d.kind, &d.name)) else {
        return Ok(None);
    };
    let d = defs.remove(at);
    if let Some(again) = defs.iter().find(|o| is_format(o.kind, &o.name)) {
        return Err(again.loc.error("fwd=format is defined twice"));
    }
    let default_threads = defs[..at]
        .iter()
        .filter(|o| o.kind == "fwd" && o.name.eq_ignore_ascii_case("default"))
        .flat_map(|o| o.params.iter())
        .rev()
        .find(|p| p.key == "threads");
    let threads = match d.get("threads").or(default_threads) {
        Some(p) => parse_count(&p.value)
            .map_err(|e| perr(p, &e))
            .and_then(|n| {
                u32::try_from(n).ok().filter(|&n| n > 0).ok_or_else(|| {
                    p.loc
                        .error(format!("threads={}: expected 1 or more", p.value))
                })
            })?,
        None => FWD_THREADS,
    };
    let xfer_bytes = match d.get("xfersize") {
        Some(p) => first_size(p)?,
        None => DEFAULT_XFER_BYTES,
    };
    Ok(Some(FormatFwd {
        threads,
        xfer_bytes,
        openflags: super::open_flags::given(d.get("openflags"), unsupported),
    }))
}

/// The first size of an `xfersize=` (a list's first entry, a range's low end), as
/// vdbench's format uses only the first.
fn first_size(p: &Param) -> Result<u64, CompatError> {
    let first = list(&p.value).into_iter().next().unwrap_or_default();
    let low = first
        .split('-')
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    match parse_size(&low) {
        Ok(0) => Err(p
            .loc
            .error(format!("xfersize={}: expected a size above 0", p.value))),
        Ok(n) => Ok(n),
        Err(e) => Err(perr(p, &e)),
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::compat::vdbench::parse_str;
    use crate::plan::compat::Translated;
    use crate::plan::model::RunSpec;

    fn translate(text: &str) -> Translated {
        parse_str("t.parm", text).unwrap_or_else(|e| panic!("{e}"))
    }

    const TREE: &str = "fsd=fsd1,anchor=/t,depth=1,width=2,files=4,size=1m\n";

    fn format_run(runs: &[RunSpec]) -> (u32, u64) {
        let r = runs
            .iter()
            .find(|r| r.name.starts_with("format_for_"))
            .unwrap();
        let w = &r.workloads[0];
        (w.streams, w.bs.max_bytes())
    }

    #[test]
    fn fwd_format_sets_the_format_runs_threads_and_first_xfersize_only() {
        let t = translate(&format!(
            "{TREE}fwd=format,threads=6,xfersize=(64k,50,256k,50),openflags=fsync\n\
             fwd=default,threads=3,xfersize=16k\nfwd=w,fsd=fsd1,operation=write\n\
             rd=r,fwd=w*,format=yes,elapsed=4"
        ));
        assert_eq!(format_run(&t.plan.runs), (6, 64 * 1024));
        // The rd's own run keeps the fwd's settings; fwd=format is no workload.
        let own = t.plan.runs.iter().find(|r| r.name == "r").unwrap();
        assert_eq!(own.workloads.len(), 1);
        assert_eq!(own.workloads[0].streams, 3);
        // Its openflags=fsync is the format writes', not the rd's own run's.
        use crate::plan::settings::declared::FSYNC_EACH_FILE;
        let format = t
            .plan
            .runs
            .iter()
            .find(|r| r.name == "format_for_r")
            .unwrap();
        assert!(format.workloads[0].settings.flag(&FSYNC_EACH_FILE));
        assert!(!own.workloads[0].settings.flag(&FSYNC_EACH_FILE));
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
    }

    #[test]
    fn without_fwd_format_vdbench_s_8_threads_and_a_default_before_gives_threads() {
        // vdbench's own format: 8 threads of 128 KiB, whatever the fwds' xfersize.
        let text = format!("{TREE}fwd=w,fsd=fsd1,xfersize=8k\nrd=r,fwd=w,format=only");
        assert_eq!(format_run(&translate(&text).plan.runs), (8, 128 * 1024));
        let text = format!(
            "{TREE}fwd=default,threads=5,xfersize=8k\nfwd=format\n{}",
            "fwd=w,fsd=fsd1\nrd=r,fwd=w,format=only"
        );
        assert_eq!(format_run(&translate(&text).plan.runs), (5, 128 * 1024));
    }

    #[test]
    fn a_second_fwd_format_is_refused_where_written() {
        let text =
            format!("{TREE}fwd=format,threads=2\nfwd=format,threads=3\nfwd=w,fsd=fsd1\nrd=r,fwd=w");
        let e = parse_str("t.parm", &text).unwrap_err().to_string();
        assert!(e.contains(":3: fwd=format is defined twice"), "{e}");
    }
}
