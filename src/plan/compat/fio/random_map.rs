//! fio's random map as the declared `random_map`. What fio does (io_u.c
//! `__get_next_rand_offset`, filesetup.c `init_random_map`, init.c `fixup_options`):
//!
//! - A random job keeps a bitmap of the blocks done (its axmap, blocks of the
//!   smallest block size over the file's region) unless `norandommap`: a drawn block
//!   already done moves to the next free one after it, so a pass touches every block
//!   once; when all are done a time-based job empties the map and starts another
//!   pass (its generator going on, so in another order); each loop starts with an
//!   empty map and, under `randrepeat=1` (the default), its generators seeded again,
//!   so every loop repeats the first one's offsets in the same order. Reads and writes of a `randrw` job share the map; the sequential
//!   I/Os of `percentage_random` neither mark nor consult it; each `numjobs` clone
//!   has its own, over the whole file.
//! - `random_generator=lfsr` walks a maximal-length LFSR over the blocks instead,
//!   whatever `norandommap` says: every block once per pass as well, with no map, and
//!   the same order every pass (the LFSR is reset to its seed).
//! - Any `random_distribution` but `random` turns the map off (fio sets
//!   `norandommap`), and so does a `blockalign` other than a direction's smallest
//!   block size; an I/O larger than the map's blocks marks every block it covers and
//!   is shortened where it would reach one already done.
//!
//! ioscope's `random_map` gives the same set of blocks per pass in its own shuffled
//! order (`run::random_map`), so a job whose offsets fio spreads that way gets it
//! (on by fio's default, off with `norandommap`), and the notes say what still
//! differs: the LFSR's repeated order, the loops fio repeats, the larger I/Os that
//! are not shortened, and the file sets and strided zones where ioscope draws
//! offsets independently.

use super::{Job, Opts};
use crate::plan::compat::CompatError;
use crate::plan::model::{AccessPattern, Distribution, Op};
use crate::plan::settings::declared::{RANDOM_MAP, TRACE};
use crate::plan::settings::Value;
use crate::plan::units::parse_size;

/// Sets the job's `random_map` where fio visits each block once per pass, and says
/// what differs where ioscope cannot do as fio does.
pub(super) fn fit(job: &mut Job, o: &Opts, warnings: &mut Vec<String>) -> Result<(), CompatError> {
    let norandommap = o.flag("norandommap")?;
    let lfsr = lfsr(o, &job.name, warnings)?;
    let w = &job.workload;
    let replay = !w.settings.get(&TRACE).as_str().is_empty();
    if !matches!(w.pattern, AccessPattern::Random) || w.sprandom.is_some() || replay {
        return Ok(());
    }
    let mut notes = Vec::new();
    let on = ioscope_can_map(job, o, norandommap, lfsr, &mut notes);
    if on {
        job.workload.settings.set(&RANDOM_MAP, Value::Flag(true));
    }
    if job.passes.is_some_and(|p| p > 1) && job.seed.is_some() {
        notes.push(format!(
            "loops — fio seeds its generators again at each loop (randrepeat=1, its \
             default), so every loop repeats the first loop's random offsets in the same \
             order; ioscope's streams draw on, so each pass has offsets of its own{}",
            if on {
                " (with random_map: every block again, in a new order)"
            } else {
                ""
            }
        ));
    }
    warnings.extend(
        notes
            .into_iter()
            .map(|n| format!("job '{}': {n}", job.name)),
    );
    Ok(())
}

/// Whether fio keeps a map (or an LFSR) that visits every block once per pass and
/// ioscope's `random_map` can do the same; notes what differs.
fn ioscope_can_map(
    job: &Job,
    o: &Opts,
    norandommap: bool,
    lfsr: bool,
    notes: &mut Vec<String>,
) -> bool {
    let w = &job.workload;
    match w.dist {
        Distribution::Uniform => {}
        Distribution::Zoned { .. } if lfsr => {
            notes.push(
                "random_generator=lfsr with random_distribution=zoned — fio draws a zone's \
                 blocks from its LFSR over the whole file, ignoring the zone's bounds; \
                 ioscope draws uniformly inside each zone"
                    .into(),
            );
            return false;
        }
        // fio keeps no map for another distribution (it sets norandommap itself).
        _ => return false,
    }
    if !lfsr && (norandommap || align_turns_map_off(job, o)) {
        return false;
    }
    let fio_way = if lfsr {
        "random_generator=lfsr visits every block once per pass"
    } else {
        "fio's random map visits every block once per pass (no norandommap)"
    };
    let (per, here) = if job.target_uri.starts_with("files:") {
        ("file", "on a set of files")
    } else if w.zones.is_some() {
        ("zone", "with strided zones")
    } else {
        ("", "")
    };
    if !per.is_empty() {
        notes.push(format!(
            "{fio_way} of each {per}; {here} ioscope draws each offset independently, so \
             some blocks repeat and others are missed"
        ));
        return false;
    }
    if lfsr {
        notes.push(
            "random_generator=lfsr — random_map: every block once per pass as with fio's \
             LFSR, but in a shuffled order that is new each pass (fio's LFSR repeats its \
             order every pass)"
                .into(),
        );
    } else if w.bs.min_bytes() != w.bs.max_bytes() {
        notes.push(format!(
            "random map with several block sizes — fio marks every {}-byte block an I/O \
             covers and shortens an I/O that would reach a block already done, so no \
             block is touched twice per pass; ioscope's random_map visits each I/O's \
             first block once per pass, so a larger I/O may overlap others and is never \
             shortened",
            w.bs.min_bytes()
        ));
    }
    true
}

/// True for `random_generator=lfsr`. fio's other generators (`tausworthe`,
/// `tausworthe64`) draw independent uniform numbers, as ioscope's does, but their
/// sequences are not reproduced (a note); any other value is fio's error too.
fn lfsr(o: &Opts, job: &str, warnings: &mut Vec<String>) -> Result<bool, CompatError> {
    let Some((v, loc)) = o.get("random_generator") else {
        return Ok(false);
    };
    match v.trim().to_ascii_lowercase().as_str() {
        "lfsr" => Ok(true),
        "tausworthe" | "tausworthe64" => {
            warnings.push(format!(
                "job '{job}': random_generator={v} — ioscope draws offsets from its own \
                 seeded generator (fio's {v} sequence is not reproduced)"
            ));
            Ok(false)
        }
        _ => Err(loc.error(format!(
            "random_generator={v}: expected tausworthe, lfsr or tausworthe64"
        ))),
    }
}

/// fio turns its map off when `blockalign` differs from a direction's smallest block
/// size ("Any use of blockalign= turns off randommap"), whether or not ioscope could
/// align to it (`blockalign=R,W,T`: one value per direction, one value for all).
fn align_turns_map_off(job: &Job, o: &Opts) -> bool {
    let Some((v, _)) = o.get("blockalign") else {
        return false;
    };
    let given: Vec<Option<u64>> = v.split(',').map(|p| parse_size(p.trim()).ok()).collect();
    let w = &job.workload;
    let smallest = |op| w.bs.for_op(op).iter().map(|&(b, _)| b).min();
    [Op::Read, Op::Write]
        .into_iter()
        .enumerate()
        .any(|(i, op)| {
            let align = given.get(i).or(given.first()).copied().flatten();
            align.is_some_and(|a| Some(a) != smallest(op))
        })
}

#[cfg(test)]
mod tests {
    use crate::plan::compat::fio::parse_str;
    use crate::plan::settings::declared::RANDOM_MAP;

    /// The job's `random_map` and the plan's notes.
    fn map_of(job: &str) -> (bool, Vec<String>) {
        let text = format!("[j]\nfilename=/tmp/x\nsize=1m\n{job}\n");
        let t =
            parse_str("t.fio", &text, std::path::Path::new("."), &|_| None).expect("translates");
        let w = &t.plan.runs[0].workloads[0];
        (w.settings.flag(&RANDOM_MAP), t.plan.warnings.clone())
    }

    #[test]
    fn a_uniform_random_job_keeps_fios_map_unless_norandommap() {
        for rw in ["randread", "randwrite", "randrw"] {
            assert_eq!(map_of(&format!("rw={rw}")), (true, vec![]), "{rw}");
            assert_eq!(map_of(&format!("rw={rw}\nnorandommap")), (false, vec![]));
        }
        assert_eq!(map_of("rw=randread\nnorandommap=0"), (true, vec![]));
        assert_eq!(
            map_of("rw=randread\nrandom_distribution=random"),
            (true, vec![])
        );
        assert!(map_of("rw=randread\npercentage_random=50").0);
        // Sequential jobs have no map in fio; nothing to set.
        assert_eq!(map_of("rw=read"), (false, vec![]));
    }

    #[test]
    fn fio_drops_its_map_for_skewed_distributions_and_other_alignments() {
        assert_eq!(
            map_of("rw=randread\nrandom_distribution=zipf:1.2"),
            (false, vec![])
        );
        assert_eq!(
            map_of("rw=randread\nrandom_distribution=pareto:0.9"),
            (false, vec![])
        );
        assert!(!map_of("rw=randread\nbs=8k\nblockalign=4k").0);
        assert!(map_of("rw=randread\nbs=4k\nblockalign=4k").0);
    }

    #[test]
    fn lfsr_visits_every_block_too_and_its_repeated_order_is_said() {
        let (on, notes) = map_of("rw=randread\nrandom_generator=lfsr\nnorandommap");
        assert!(on);
        assert!(
            notes.iter().any(|n| n.contains("repeats its order")),
            "{notes:?}"
        );
        let (on, notes) = map_of("rw=randread\nrandom_generator=tausworthe64");
        assert!(on);
        assert!(
            notes.iter().any(|n| n.contains("tausworthe64")),
            "{notes:?}"
        );
    }

    #[test]
    fn what_ioscope_cannot_map_is_said() {
        let (on, notes) = map_of("rw=randread\nbsrange=4k-16k");
        assert!(on);
        assert!(notes.iter().any(|n| n.contains("shortens")), "{notes:?}");
        let (on, notes) = map_of("rw=randread\nzonemode=strided\nzonesize=64k\nzonerange=256k");
        assert!(!on);
        assert!(
            notes.iter().any(|n| n.contains("strided zones")),
            "{notes:?}"
        );
        let (on, notes) =
            map_of("rw=randread\nrandom_generator=lfsr\nrandom_distribution=zoned:50/10:50/90");
        assert!(!on);
        assert!(
            notes
                .iter()
                .any(|n| n.contains("ignoring the zone's bounds")),
            "{notes:?}"
        );
    }

    #[test]
    fn loops_that_fio_repeats_are_said() {
        let (on, notes) = map_of("rw=randread\nloops=2");
        assert!(on);
        assert!(
            notes.iter().any(|n| n.contains("every block again")),
            "{notes:?}"
        );
        let (on, notes) = map_of("rw=randread\nloops=2\nnorandommap");
        assert!(!on);
        assert!(
            notes.iter().any(|n| n.contains("repeats the first loop's")),
            "{notes:?}"
        );
        // randrepeat=0: a new seed each loop in fio too; time-based: one loop.
        let (_, notes) = map_of("rw=randread\nloops=2\nrandrepeat=0");
        assert!(!notes.iter().any(|n| n.contains("loops")), "{notes:?}");
        let (_, notes) = map_of("rw=randread\ntime_based\nruntime=1");
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn a_bad_generator_is_a_located_error() {
        let text = "[j]\nfilename=/tmp/x\nsize=1m\nrw=randread\nrandom_generator=mt\n";
        let e = parse_str("t.fio", text, std::path::Path::new("."), &|_| None).unwrap_err();
        assert_eq!(e.line, 5, "{e:?}");
        assert!(e.msg.contains("random_generator=mt"), "{e:?}");
    }
}
