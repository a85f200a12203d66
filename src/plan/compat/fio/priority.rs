//! fio's I/O priority options and `atomic`. `prio`/`prioclass`/`priohint` become the
//! workload's job priority (ioprio_set on its workers); `cmdprio_percentage` or
//! `cmdprio_bssplit` with `cmdprio_class`/`cmdprio`/`cmdprio_hint` become shares of
//! its I/Os at priorities of their own (io_uring's per-request ioprio: fio offers
//! them on its io_uring and libaio engines, ioscope on its uring engine). Each
//! option takes one value for reads and writes or `READ,WRITE`.

use super::JobCx;
use crate::plan::compat::{CompatError, Loc};
use crate::plan::model::{BlockSizes, EngineKind, Op};
use crate::plan::priority::{IoPriority, PrioClass, PrioShare, Priorities, MAX_HINT, MAX_LEVEL};
use crate::plan::settings::declared::ATOMIC_WRITES;
use crate::plan::settings::{Value, WorkloadSettings};
use crate::plan::units::parse_size;

/// The per-I/O priority options.
const CMDPRIO: [&str; 5] = [
    "cmdprio_percentage",
    "cmdprio_bssplit",
    "cmdprio_class",
    "cmdprio",
    "cmdprio_hint",
];

impl JobCx<'_> {
    /// The job's priorities; per-I/O ones are listed as unsupported on an engine
    /// that issues one call at a time (fio has them only on io_uring and libaio).
    pub(super) fn priorities(
        &mut self,
        engine: EngineKind,
        bs: &BlockSizes,
    ) -> Result<Priorities, CompatError> {
        let job = self.job_priority()?;
        let per_io = self.per_io_priorities()?;
        if !per_io.is_empty() && !matches!(engine, EngineKind::Uring | EngineKind::Auto) {
            let (k, loc) = CMDPRIO
                .iter()
                .find_map(|k| self.o.get(k).map(|(v, l)| (format!("{k}={v}"), l)))
                .expect("a per-I/O option was given");
            self.unsupported.push(
                format!(
                    "{k} — per-I/O priorities are io_uring's (fio's io_uring and libaio \
                     engines); ioengine={} issues one call at a time",
                    engine.name()
                ),
                loc,
            );
            return Ok(Priorities {
                job,
                per_io: vec![],
            });
        }
        let p = Priorities { job, per_io };
        let sizes: Vec<u64> = bs.all().map(|&(b, _)| b).collect();
        if let Err(why) = p.check(&sizes) {
            let loc = self
                .o
                .get("cmdprio_bssplit")
                .map_or(self.section_loc, |(_, l)| l);
            return Err(loc.error(format!("job '{}': {why}", self.name)));
        }
        Ok(p)
    }

    /// `prio`, `prioclass`, `priohint`: fio calls ioprio_set with them when any is
    /// given, class 0 meaning best effort.
    fn job_priority(&mut self) -> Result<Option<IoPriority>, CompatError> {
        let class = self.number("prioclass", 3)?;
        let level = self.number("prio", u16::from(MAX_LEVEL))?;
        let hint = self.number("priohint", MAX_HINT)?;
        if class.is_none() && level.is_none() && hint.is_none() {
            return Ok(None);
        }
        Ok(Some(IoPriority {
            class: class_of(class.unwrap_or(0)),
            level: level.unwrap_or(0) as u8,
            hint: hint.unwrap_or(0),
        }))
    }

    /// One whole number from 0 to `max`.
    fn number(&self, key: &str, max: u16) -> Result<Option<u16>, CompatError> {
        let Some((v, loc)) = self.o.get(key) else {
            return Ok(None);
        };
        parse_number(v, max).map(Some).ok_or_else(|| {
            loc.error(format!(
                "{key}={v}: expected a whole number from 0 to {max}"
            ))
        })
    }

    /// `cmdprio_percentage` or `cmdprio_bssplit` as shares.
    fn per_io_priorities(&mut self) -> Result<Vec<PrioShare>, CompatError> {
        let o = self.o;
        let defaults = [
            self.cmdprio_default(Op::Read)?,
            self.cmdprio_default(Op::Write)?,
        ];
        match (o.get("cmdprio_percentage"), o.get("cmdprio_bssplit")) {
            (Some(_), Some((_, loc))) => {
                Err(loc
                    .error("cmdprio_bssplit and cmdprio_percentage exclude each other (as in fio)"))
            }
            (Some((v, loc)), None) => {
                let pct =
                    per_dir(v, |t| parse_number(t, 100).map(|p| p as u8)).ok_or_else(|| {
                        loc.error(format!(
                            "cmdprio_percentage={v}: expected PCT or READ_PCT,WRITE_PCT (0-100)"
                        ))
                    })?;
                Ok(percentage_shares(pct, defaults))
            }
            (None, Some((v, loc))) => bssplit_shares(v, loc, defaults),
            (None, None) => {
                self.only_with("cmdprio_percentage or cmdprio_bssplit", &CMDPRIO[2..]);
                Ok(vec![])
            }
        }
    }

    /// The priority of `op`'s per-I/O shares from `cmdprio_class` (default: real
    /// time, the highest), `cmdprio` (0) and `cmdprio_hint` (0).
    fn cmdprio_default(&self, op: Op) -> Result<IoPriority, CompatError> {
        let pick = |key: &str, max: u16, default: u16| -> Result<u16, CompatError> {
            match self.o.get(key) {
                None => Ok(default),
                Some((v, loc)) => per_dir(v, |t| parse_number(t, max))
                    .map(|d| d[op.index()])
                    .ok_or_else(|| {
                        loc.error(format!("{key}={v}: expected N or READ,WRITE (0 to {max})"))
                    }),
            }
        };
        Ok(IoPriority {
            class: class_of(pick("cmdprio_class", 3, 1)?),
            level: pick("cmdprio", u16::from(MAX_LEVEL), 0)? as u8,
            hint: pick("cmdprio_hint", MAX_HINT, 0)?,
        })
    }

    /// `atomic=1`: writes carry RWF_ATOMIC (fio's pvsync2, libaio and io_uring;
    /// ioscope's sync and uring engines).
    pub(super) fn atomic_fits(&mut self, engine: EngineKind, s: &mut WorkloadSettings) {
        if !s.flag(&ATOMIC_WRITES)
            || matches!(
                engine,
                EngineKind::Uring | EngineKind::Sync | EngineKind::Auto
            )
        {
            return;
        }
        s.set(&ATOMIC_WRITES, Value::Flag(false));
        let loc = self.o.get("atomic").map_or(self.section_loc, |(_, l)| l);
        self.unsupported.push(
            format!(
                "atomic=1 — RWF_ATOMIC writes go through a local file or device (ioscope's \
                 uring and sync engines); ioengine={} has none",
                engine.name()
            ),
            loc,
        );
    }
}

/// fio's class number; 0 (none) is best effort, as fio's ioprio_value makes it.
fn class_of(n: u16) -> PrioClass {
    match n {
        1 => PrioClass::Rt,
        3 => PrioClass::Idle,
        _ => PrioClass::Be,
    }
}

fn parse_number(v: &str, max: u16) -> Option<u16> {
    v.trim().parse::<u16>().ok().filter(|&n| n <= max)
}

/// `V` (both directions) or `READ,WRITE`.
fn per_dir<T: Copy>(v: &str, parse: impl Fn(&str) -> Option<T>) -> Option<[T; 2]> {
    match v.split(',').map(str::trim).collect::<Vec<_>>().as_slice() {
        [one] => parse(one).map(|x| [x, x]),
        [r, w] => Some([parse(r)?, parse(w)?]),
        _ => None,
    }
}

/// One share per direction with a percentage above 0 (one for both when equal).
fn percentage_shares(pct: [u8; 2], prio: [IoPriority; 2]) -> Vec<PrioShare> {
    if pct[0] == pct[1] && prio[0] == prio[1] {
        return (pct[0] > 0)
            .then_some(PrioShare {
                op: None,
                bs_bytes: None,
                pct: pct[0],
                prio: prio[0],
            })
            .into_iter()
            .collect();
    }
    [Op::Read, Op::Write]
        .into_iter()
        .filter(|op| pct[op.index()] > 0)
        .map(|op| PrioShare {
            op: Some(op),
            bs_bytes: None,
            pct: pct[op.index()],
            prio: prio[op.index()],
        })
        .collect()
}

/// `BS/PCT[/CLASS/LEVEL[/HINT]]:…[,…]`: entries of 0 % are the sizes left at the
/// job's priority; a list without the write part applies to both directions.
fn bssplit_shares(
    v: &str,
    loc: &Loc,
    defaults: [IoPriority; 2],
) -> Result<Vec<PrioShare>, CompatError> {
    let lists: Vec<&str> = v.split(',').map(str::trim).collect();
    if lists.len() > 2 {
        return Err(loc.error(format!(
            "cmdprio_bssplit={v}: expected READ_LIST[,WRITE_LIST] (trim lists are not used)"
        )));
    }
    let mut out = Vec::new();
    for op in [Op::Read, Op::Write] {
        let list = lists.get(op.index()).unwrap_or(&lists[0]);
        for entry in list.split(':').map(str::trim).filter(|e| !e.is_empty()) {
            let bad = || {
                loc.error(format!(
                    "cmdprio_bssplit={v}: entry {entry:?}: expected \
                     BS/PCT[/CLASS/LEVEL[/HINT]]"
                ))
            };
            if let Some(s) = bssplit_entry(entry, op, defaults[op.index()]).ok_or_else(bad)? {
                out.push(s);
            }
        }
    }
    Ok(out)
}

/// One entry; `Ok(None)` for 0 %.
fn bssplit_entry(entry: &str, op: Op, default: IoPriority) -> Option<Option<PrioShare>> {
    let f: Vec<&str> = entry.split('/').map(str::trim).collect();
    let bs = parse_size(f.first()?).ok().filter(|&b| b > 0)?;
    let pct = parse_number(f.get(1)?, 100)? as u8;
    let prio = match f.len() {
        2 => default,
        4 | 5 => IoPriority {
            class: class_of(parse_number(f[2], 3)?),
            level: parse_number(f[3], u16::from(MAX_LEVEL))? as u8,
            hint: match f.get(4) {
                Some(h) => parse_number(h, MAX_HINT)?,
                None => 0,
            },
        },
        _ => return None,
    };
    Some((pct > 0).then_some(PrioShare {
        op: Some(op),
        bs_bytes: Some(bs),
        pct,
        prio,
    }))
}

#[cfg(test)]
mod tests {
    use crate::plan::compat::fio::parse_str;
    use crate::plan::compat::Translated;
    use crate::plan::model::Op;
    use crate::plan::priority::PrioClass;
    use std::path::Path;

    fn parse(text: &str) -> Result<Translated, String> {
        parse_str("t.fio", text, Path::new("."), &|_| None).map_err(|e| e.to_string())
    }

    const HEAD: &str = "[j]\nfilename=/tmp/x\nsize=1m\nruntime=1\ntime_based\n";

    #[test]
    fn job_priority_and_a_percentage_become_the_workloads() {
        let t = parse(&format!(
            "{HEAD}ioengine=libaio\nrw=randrw\nprio=5\ncmdprio_percentage=20,30\n\
             cmdprio_class=1,3\ncmdprio=0,4\n"
        ))
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let p = &t.plan.runs[0].workloads[0].priority;
        let job = p.job.unwrap();
        // fio's class 0 with a level is best effort.
        assert_eq!((job.class, job.level), (PrioClass::Be, 5));
        assert_eq!(p.per_io.len(), 2);
        let (r, w) = (p.per_io[0], p.per_io[1]);
        assert_eq!(
            (r.op, r.pct, r.prio.class),
            (Some(Op::Read), 20, PrioClass::Rt)
        );
        assert_eq!(
            (w.op, w.pct, w.prio.class, w.prio.level),
            (Some(Op::Write), 30, PrioClass::Idle, 4)
        );
        // One value for both directions is one share for both.
        let t = parse(&format!("{HEAD}ioengine=io_uring\ncmdprio_percentage=10\n")).unwrap();
        let s = t.plan.runs[0].workloads[0].priority.per_io[0];
        assert_eq!(
            (s.op, s.pct, s.prio.class, s.prio.level),
            (None, 10, PrioClass::Rt, 0)
        );
    }

    #[test]
    fn bssplit_shares_keep_their_own_class_level_and_hint() {
        let t = parse(&format!(
            "{HEAD}ioengine=io_uring\nrw=randread\nbssplit=1m/40:2m/60\ncmdprio_class=2\n\
             cmdprio_bssplit=1m/10/2/0/1:1m/30/2/0/2:2m/0\n"
        ))
        .unwrap();
        let p = &t.plan.runs[0].workloads[0].priority;
        assert!(p.job.is_none());
        // Read and write lists alike (one list given); 0 % entries leave the size alone.
        assert_eq!(p.per_io.len(), 4);
        assert!(p.per_io.iter().all(|s| s.bs_bytes == Some(1 << 20)));
        assert_eq!((p.per_io[1].pct, p.per_io[1].prio.hint), (30, 2));
    }

    #[test]
    fn bad_or_misplaced_priorities_are_refused_or_listed() {
        for (opts, want) in [
            ("prio=8\n", "prio=8"),
            ("prioclass=4\n", "prioclass=4"),
            ("cmdprio_percentage=101\n", "cmdprio_percentage=101"),
            (
                "cmdprio_percentage=5\ncmdprio_bssplit=4k/5\n",
                "exclude each other",
            ),
            ("cmdprio_bssplit=4k/60:4k/50\n", "110 %"),
            ("cmdprio_bssplit=4k\n", "BS/PCT"),
        ] {
            let e = parse(&format!("{HEAD}ioengine=io_uring\n{opts}")).unwrap_err();
            assert!(e.contains(want), "{opts}: {e}");
        }
        // psync issues one call at a time: no per-request priority to set.
        let t = parse(&format!("{HEAD}cmdprio_percentage=5\nprioclass=3\n")).unwrap();
        assert!(t.unsupported[0].option.starts_with("cmdprio_percentage=5"));
        assert!(t.plan.runs[0].workloads[0].priority.per_io.is_empty());
        assert!(t.plan.runs[0].workloads[0].priority.job.is_some());
        // cmdprio_class alone qualifies nothing.
        let t = parse(&format!("{HEAD}ioengine=io_uring\ncmdprio_class=2\n")).unwrap();
        assert!(
            t.unsupported[0].option.contains("cmdprio_class"),
            "{:?}",
            t.unsupported
        );
    }

    #[test]
    fn atomic_marks_writes_on_engines_that_can_carry_it() {
        let t = parse(&format!("{HEAD}ioengine=pvsync2\nrw=randwrite\natomic=1\n")).unwrap();
        assert!(t.unsupported.is_empty());
        assert!(t.plan.runs[0].workloads[0]
            .settings
            .flag(&crate::plan::settings::declared::ATOMIC_WRITES));
        let t = parse(&format!("{HEAD}ioengine=null\nrw=randwrite\natomic=1\n")).unwrap();
        assert!(t.unsupported[0].option.starts_with("atomic=1"));
        assert!(!t.plan.runs[0].workloads[0]
            .settings
            .flag(&crate::plan::settings::declared::ATOMIC_WRITES));
    }
}
