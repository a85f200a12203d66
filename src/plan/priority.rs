//! I/O priorities of a workload: the priority of all its I/O (ioprio_set(2) on the
//! threads that issue it; fio's `prio`, `prioclass`, `priohint`) and priorities of a
//! share of its I/Os, per direction and optionally per block size (io_uring's
//! per-request `ioprio`; fio's `cmdprio_percentage`, `cmdprio_bssplit`,
//! `cmdprio_class`, `cmdprio`, `cmdprio_hint`). A device's scheduler (mq-deadline,
//! BFQ) or the device itself (NCQ priority, command duration limits) acts on them;
//! `block:block_rq_issue` traces show each request's.
//!
//! Text forms (flags and the native job file): a priority is `CLASS[/LEVEL[/HINT]]`
//! with CLASS `rt`, `be` or `idle` (or fio's numbers 1, 2, 3); a share is
//! `[read:|write:][BS:]PCT%PRIORITY`, e.g. `20%rt`, `read:64k:25%rt/1`. The types
//! and their kernel encoding are `vocab::priority`, shared with the result's echo;
//! this module holds the text forms and the check that shares fit.

use super::model::Op;
use super::units::parse_size;

pub use crate::vocab::priority::{
    IoPriority, PrioClass, PrioShare, Priorities, MAX_HINT, MAX_LEVEL,
};

impl PrioClass {
    /// A class by name or by the kernel's (and fio's) number.
    pub fn parse(s: &str) -> Option<PrioClass> {
        match s.trim().to_ascii_lowercase().as_str() {
            "rt" | "realtime" | "1" => Some(PrioClass::Rt),
            "be" | "best-effort" | "2" => Some(PrioClass::Be),
            "idle" | "3" => Some(PrioClass::Idle),
            _ => None,
        }
    }
}

/// A priority text that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?}: {why}")]
pub struct PriorityError {
    pub text: String,
    pub why: String,
}

impl IoPriority {
    /// `CLASS[/LEVEL[/HINT]]`.
    pub fn parse(text: &str) -> Result<IoPriority, PriorityError> {
        let err = |why: &str| PriorityError {
            text: text.to_string(),
            why: why.to_string(),
        };
        let mut parts = text.trim().split('/');
        let class = PrioClass::parse(parts.next().unwrap_or(""))
            .ok_or_else(|| err("expected a class: rt, be or idle (1, 2, 3)"))?;
        let level = match parts.next() {
            Some(l) => l
                .trim()
                .parse::<u8>()
                .ok()
                .filter(|&l| l <= MAX_LEVEL)
                .ok_or_else(|| err("the level is 0 (highest) to 7"))?,
            None => 0,
        };
        let hint = match parts.next() {
            Some(h) => h
                .trim()
                .parse::<u16>()
                .ok()
                .filter(|&h| h <= MAX_HINT)
                .ok_or_else(|| err("the hint is 0 to 1023"))?,
            None => 0,
        };
        if parts.next().is_some() {
            return Err(err("expected CLASS[/LEVEL[/HINT]]"));
        }
        Ok(IoPriority { class, level, hint })
    }
}

impl std::fmt::Display for IoPriority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.class.name(), self.level)?;
        if self.hint != 0 {
            write!(f, "/{}", self.hint)?;
        }
        Ok(())
    }
}

impl PrioShare {
    /// `[read:|write:][BS:]PCT%PRIORITY`.
    pub fn parse(text: &str) -> Result<PrioShare, PriorityError> {
        let err = |why: String| PriorityError {
            text: text.to_string(),
            why,
        };
        let (head, prio) = text
            .trim()
            .split_once('%')
            .ok_or_else(|| err("expected [read:|write:][BS:]PCT%CLASS[/LEVEL[/HINT]]".into()))?;
        let prio = IoPriority::parse(prio).map_err(|e| err(e.why))?;
        let mut parts: Vec<&str> = head.split(':').map(str::trim).collect();
        let pct_text = parts.pop().unwrap_or("");
        let pct = pct_text
            .parse::<u8>()
            .ok()
            .filter(|p| (1..=100).contains(p))
            .ok_or_else(|| err(format!("{pct_text:?}: the share is 1 to 100 %")))?;
        let op = match parts.first() {
            Some(&"read") => Some(Op::Read),
            Some(&"write") => Some(Op::Write),
            _ => None,
        };
        if op.is_some() {
            parts.remove(0);
        }
        let bs_bytes = match parts.as_slice() {
            [] => None,
            [bs] => Some(
                parse_size(bs)
                    .ok()
                    .filter(|&b| b > 0)
                    .ok_or_else(|| err(format!("{bs:?}: expected read, write or a block size")))?,
            ),
            _ => return Err(err("expected [read:|write:][BS:]PCT%PRIORITY".into())),
        };
        Ok(PrioShare {
            op,
            bs_bytes,
            pct,
            prio,
        })
    }
}

impl std::fmt::Display for PrioShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(op) = self.op {
            write!(f, "{}:", op.name())?;
        }
        if let Some(b) = self.bs_bytes {
            write!(f, "{}:", super::units::format_size(b))?;
        }
        write!(f, "{}%{}", self.pct, self.prio)
    }
}

impl Priorities {
    /// Why these shares cannot be drawn from, if they cannot: the shares that cover
    /// one kind of I/O (a direction and a size) add up to more than 100 %.
    pub fn check(&self, sizes: &[u64]) -> Result<(), String> {
        for op in [Op::Read, Op::Write] {
            for &len in sizes {
                let total: u32 = self
                    .per_io
                    .iter()
                    .filter(|s| s.covers(op, len))
                    .map(|s| u32::from(s.pct))
                    .sum();
                if total > 100 {
                    return Err(format!(
                        "the per-I/O priority shares of {} {}s add up to {total} %, over 100",
                        super::units::format_size(len),
                        op.name()
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_read_and_pack_as_the_kernel_wants() {
        let p = IoPriority::parse("be/7").unwrap();
        assert_eq!(p.value(), 2 << 13 | 7);
        assert_eq!(IoPriority::parse("3").unwrap().value(), 3 << 13);
        let h = IoPriority::parse("rt/0/2").unwrap();
        assert_eq!(h.value(), 1 << 13 | 2 << 3);
        assert_eq!(h.to_string(), "rt/0/2");
        for bad in ["", "none", "be/8", "be/1/1024", "be/1/2/3", "be/x"] {
            assert!(IoPriority::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shares_name_a_direction_and_a_size() {
        let s = PrioShare::parse("read:64k:25%rt/1").unwrap();
        assert_eq!(
            (s.op, s.bs_bytes, s.pct, s.prio.value()),
            (Some(Op::Read), Some(65536), 25, 1 << 13 | 1)
        );
        assert!(s.covers(Op::Read, 65536));
        assert!(!s.covers(Op::Read, 4096) && !s.covers(Op::Write, 65536));
        let all = PrioShare::parse("20%idle").unwrap();
        assert!(all.covers(Op::Write, 1) && all.covers(Op::Read, 1 << 20));
        assert_eq!(all.to_string(), "20%idle/0");
        assert_eq!(PrioShare::parse(&s.to_string()).unwrap(), s);
        for bad in ["20", "0%rt", "101%rt", "read:x:5%rt", "a:b:c:5%rt", "5%zz"] {
            assert!(PrioShare::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shares_of_one_kind_of_io_stay_within_100_percent() {
        let p = Priorities {
            job: None,
            per_io: vec![
                PrioShare::parse("read:64k:60%rt").unwrap(),
                PrioShare::parse("50%idle").unwrap(),
            ],
        };
        assert!(p.check(&[4096]).is_ok());
        let e = p.check(&[4096, 65536]).unwrap_err();
        assert!(e.contains("110 %"), "{e}");
    }
}
