//! fio's io_uring and durability options, translated to a run's [`IoTuning`]:
//! `fixedbufs`, `registerfiles`, `sqthread_poll`, `sqthread_poll_cpu`, `hipri`,
//! `iodepth_batch_submit`, `iodepth_batch_complete_min/max`, `sync`, `dsync`,
//! `fsync=N`, `fdatasync=N`, `sync_file_range=FLAGS:N` (aliases are resolved by the option table,
//! [`super::fio_options`], before the keys get here).

use super::CompatError;
use super::Loc;
use crate::plan::tuning::{IoTuning, SyncKind, TuningError};
use crate::plan::units::parse_count;

/// fio's boolean spelling: a bare key or 1/true/yes/on is true.
fn truth(key: &str, v: &str, loc: &Loc) -> Result<bool, CompatError> {
    match v.trim().to_ascii_lowercase().as_str() {
        "" | "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(loc.error(format!("{key}={v}: expected 0 or 1"))),
    }
}

fn number(key: &str, v: &str, loc: &Loc) -> Result<u32, CompatError> {
    parse_count(v)
        .ok()
        .and_then(|n| u32::try_from(n).ok())
        .or_else(|| (v.trim() == "0").then_some(0))
        .ok_or_else(|| loc.error(format!("{key}={v}: expected a whole number")))
}

/// Reads the tuning options of one job; `get` looks a key up in the job's effective
/// options as (value, location).
pub(super) fn io_tuning<'a>(
    get: impl Fn(&str) -> Option<(&'a str, &'a Loc)>,
) -> Result<IoTuning, CompatError> {
    let mut io = IoTuning::default();
    let flag = |key: &str| -> Result<Option<bool>, CompatError> {
        get(key).map(|(v, loc)| truth(key, v, loc)).transpose()
    };
    let num = |key: &str| -> Result<Option<u32>, CompatError> {
        get(key).map(|(v, loc)| number(key, v, loc)).transpose()
    };
    let u = &mut io.uring;
    u.fixed_bufs = flag("fixedbufs")?.unwrap_or(false);
    u.register_files = flag("registerfiles")?;
    u.sqpoll = flag("sqthread_poll")?.unwrap_or(false);
    u.sqpoll_cpu = num("sqthread_poll_cpu")?;
    u.hipri = flag("hipri")?.unwrap_or(false);
    u.batch_submit = num("iodepth_batch_submit")?.unwrap_or(0);
    u.batch_complete_min = num("iodepth_batch_complete_min")?.unwrap_or(0);
    u.batch_complete_max = num("iodepth_batch_complete_max")?.unwrap_or(0);
    if let Err(e) = u.check() {
        // Said in fio's words, at the key that made it fail.
        let (key, msg) = match e {
            TuningError::SqpollCpuAlone => (
                "sqthread_poll_cpu",
                "sqthread_poll_cpu needs sqthread_poll".to_string(),
            ),
            TuningError::BatchBounds { min, max } => (
                "iodepth_batch_complete_max",
                format!(
                    "iodepth_batch_complete_min {min} is above iodepth_batch_complete_max {max}"
                ),
            ),
            other => ("sqthread_poll_cpu", other.to_string()),
        };
        let (_, loc) = get(key)
            .or(get("sqthread_poll_cpu"))
            .or(get("iodepth_batch_complete_max"))
            .expect("the io_uring check fails only on these keys");
        return Err(loc.error(msg));
    }
    // sync= is a boolean, or (fio 3.x) none/sync/dsync: both open the file for
    // write-through; O_DSYNC is what ioscope uses.
    if let Some((v, loc)) = get("sync") {
        io.write_through = match v.trim().to_ascii_lowercase().as_str() {
            "none" => false,
            "sync" | "dsync" => true,
            _ => truth("sync", v, loc)?,
        };
    }
    if flag("dsync")? == Some(true) {
        io.write_through = true;
    }
    for (key, kind) in [
        ("fsync", SyncKind::Fsync),
        ("fdatasync", SyncKind::Fdatasync),
    ] {
        if let Some(n) = num(key)?.filter(|&n| n > 0) {
            io.sync_every = n;
            io.sync_kind = kind;
        }
    }
    if let Some((v, loc)) = get("sync_file_range") {
        sync_file_range(&mut io, v, loc)?;
    }
    Ok(io)
}

/// `sync_file_range=FLAGS:N` (`write:32`, `wait_before,write:8`): every N writes, the
/// range written since. fio makes it besides an `fsync`/`fdatasync` of the same job;
/// ioscope makes one kind of flush per workload, so the pair is refused.
fn sync_file_range(io: &mut IoTuning, v: &str, loc: &Loc) -> Result<(), CompatError> {
    let bad = |why: &str| loc.error(format!("sync_file_range={v}: {why}"));
    let (words, n) = v
        .rsplit_once(':')
        .ok_or_else(|| bad("expected FLAGS:N, such as write:32"))?;
    let bits = SyncKind::range_flags(words)
        .ok_or_else(|| bad("expected FLAGS among wait_before, write and wait_after"))?;
    let n = number("sync_file_range", n, loc)?;
    if n == 0 {
        return Ok(());
    }
    if io.sync_every > 0 {
        return Err(bad(&format!(
            "given with {}={}; fio makes both, ioscope one kind of flush per job",
            io.sync_kind.name(),
            io.sync_every
        )));
    }
    io.sync_every = n;
    io.sync_kind = SyncKind::SyncFileRange(bits);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn tuning(pairs: &[(&str, &str)]) -> Result<IoTuning, CompatError> {
        let loc = Loc::Arg {
            index: 1,
            text: "x".into(),
        };
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let loc = Box::leak(Box::new(loc));
        let map = Box::leak(Box::new(map));
        io_tuning(|k| map.get(k).map(|v| (v.as_str(), &*loc)))
    }

    #[test]
    fn uring_keys_translate() {
        let io = tuning(&[
            ("fixedbufs", ""),
            ("registerfiles", "1"),
            ("sqthread_poll", "1"),
            ("sqthread_poll_cpu", "1"),
            ("hipri", "1"),
            ("iodepth_batch_submit", "8"),
            ("iodepth_batch_complete_min", "4"),
            ("iodepth_batch_complete_max", "16"),
        ])
        .unwrap();
        let u = &io.uring;
        assert!(u.fixed_bufs && u.sqpoll && u.hipri);
        assert_eq!(u.register_files, Some(true));
        assert_eq!(u.sqpoll_cpu, Some(1));
        assert_eq!(
            (u.batch_submit, u.batch_complete_min, u.batch_complete_max),
            (8, 4, 16)
        );
        assert!(tuning(&[]).unwrap().is_default());
        let e = tuning(&[("sqthread_poll_cpu", "1")]).unwrap_err();
        assert!(
            e.to_string()
                .contains("sqthread_poll_cpu needs sqthread_poll"),
            "{e}"
        );
        let e = tuning(&[
            ("iodepth_batch_complete_min", "8"),
            ("iodepth_batch_complete_max", "4"),
        ])
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("iodepth_batch_complete_min 8 is above iodepth_batch_complete_max 4"),
            "{e}"
        );
        assert!(tuning(&[("hipri", "maybe")]).is_err());
    }

    #[test]
    fn durability_keys_translate() {
        for (k, v) in [
            ("sync", "1"),
            ("sync", "dsync"),
            ("sync", "sync"),
            ("dsync", "1"),
        ] {
            assert!(tuning(&[(k, v)]).unwrap().write_through, "{k}={v}");
        }
        assert!(!tuning(&[("sync", "0")]).unwrap().write_through);
        assert!(!tuning(&[("sync", "none")]).unwrap().write_through);
        let io = tuning(&[("fsync", "8")]).unwrap();
        assert_eq!((io.sync_every, io.sync_kind), (8, SyncKind::Fsync));
        let io = tuning(&[("fdatasync", "4")]).unwrap();
        assert_eq!((io.sync_every, io.sync_kind), (4, SyncKind::Fdatasync));
        assert_eq!(tuning(&[("fsync", "0")]).unwrap().sync_every, 0);
        let io = tuning(&[("sync_file_range", "wait_before,write:32")]).unwrap();
        assert_eq!(
            (io.sync_every, io.sync_kind),
            (32, SyncKind::SyncFileRange(3))
        );
        assert_eq!(io.sync_kind.name(), "sync_file_range:wait_before,write");
        for bad in ["write", "flush:8", "write:x"] {
            assert!(tuning(&[("sync_file_range", bad)]).is_err(), "{bad}");
        }
        let e = tuning(&[("fsync", "4"), ("sync_file_range", "write:8")]).unwrap_err();
        assert!(e.to_string().contains("one kind of flush per job"), "{e}");
    }
}
