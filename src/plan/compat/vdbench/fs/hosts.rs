//! File-system workloads on several hosts (`hd=` beside `fsd=`/`fwd=`): which
//! host definition drives which trees, as the raw-I/O reader does it for sds.
//!
//! vdbench runs an fwd on the hosts its `host=` names (all of them without it), each
//! host with the fwd's own threads. Under `mpirun` ioscope plays each hd with its
//! ranks ([`crate::plan::hosts::HostDef`]): a host drives the trees (targets) of the
//! fwds it runs, and a workload's streams and rate are divided among the ranks of
//! the hosts driving its tree. So an fwd's workload gets `threads` streams for each
//! host that runs it, and the ranks of each host together run `threads` of them;
//! `fwdrate=` stays the run's total, as in vdbench. An fwd bound to one host
//! (Avere's `fwd=fwdW!host,host=!host,fsd=(fsd!host*)`, one copy per host) then
//! runs on that host alone. One `hd=` is this host: nothing to map.

use super::{FsDef, Fwd};
use crate::plan::compat::{CompatError, Loc};
use crate::plan::hosts::HostDef;

/// The host definitions of a file with two or more `hd=` (none otherwise), their
/// trees still to be named. `system=` is the name ranks are matched with; how
/// vdbench reaches a host (`shell=`, `user=`, `vdbench=`, `jvms=`) is mpirun's
/// business.
pub(super) fn defs(hds: &[FsDef]) -> Result<Vec<HostDef>, CompatError> {
    if hds.len() < 2 {
        return Ok(Vec::new());
    }
    hds.iter()
        .map(|d| {
            let system = d.get("system").map(super::super::host_system).transpose()?;
            Ok(HostDef {
                name: d.name.clone(),
                system,
                targets: Vec::new(),
            })
        })
        .collect()
}

/// The hosts (indexes into `hosts`) that run `fwd`: those its `host=` names, every
/// one without it. An fwd naming a host that is not defined is an error, as for an
/// sd.
pub(super) fn of_fwd(fwd: &Fwd, hosts: &[HostDef]) -> Result<Vec<usize>, CompatError> {
    match &fwd.hosts {
        None => Ok((0..hosts.len()).collect()),
        Some((patterns, loc)) => {
            super::super::hosts_named(patterns, hosts, loc, &format!("fwd={}", fwd.name))
        }
    }
}

/// Adds `target` to the hosts `on` of a run's host list.
pub(super) fn drive(run_hosts: &mut [HostDef], on: &[usize], target: &str) {
    for &h in on {
        let t = &mut run_hosts[h].targets;
        if !t.iter().any(|x| x == target) {
            t.push(target.to_string());
        }
    }
}

/// Gives every run the same host list, as a job file's `[[host]]` tables hold for
/// all its runs: each host drives the union of the trees it drives in any run.
/// A tree that one rd has run by some hosts and another rd by others cannot be
/// written that way; that is an error naming the rd (`rds[k]` made `runs[k]`).
pub(super) fn unify(
    runs: &mut [crate::plan::model::RunSpec],
    rds: &[(String, Loc)],
) -> Result<(), CompatError> {
    let Some(first) = runs.first() else {
        return Ok(());
    };
    let mut all = first.hosts.clone();
    for r in runs.iter() {
        for (h, own) in all.iter_mut().zip(&r.hosts) {
            for t in &own.targets {
                if !h.targets.contains(t) {
                    h.targets.push(t.clone());
                }
            }
        }
    }
    for (r, (rd, loc)) in runs.iter_mut().zip(rds) {
        for w in &r.workloads {
            let by = |hs: &[HostDef]| -> Vec<String> {
                hs.iter()
                    .filter(|h| h.targets.contains(&w.target))
                    .map(|h| h.name.clone())
                    .collect()
            };
            let (here, overall) = (by(&r.hosts), by(&all));
            if here != overall {
                return Err(loc.error(format!(
                    "rd={rd}: tree {} is run by hd={} here but by hd={} in another rd; \
                     ioscope binds a tree to the same hosts for the whole file",
                    w.target,
                    here.join(","),
                    overall.join(",")
                )));
            }
        }
        r.hosts = all.clone();
    }
    Ok(())
}

/// An fwd's `host=` patterns and where they were given.
pub(super) type FwdHosts = Option<(Vec<String>, Loc)>;
