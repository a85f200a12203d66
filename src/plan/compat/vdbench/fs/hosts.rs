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
use crate::plan::model::{RunSpec, TargetSpec};

/// The host definitions of a file with two or more hosts (`hd=`, each repeated by
/// its `clients=`; none otherwise), their trees still to be named. `system=` is the
/// name ranks are matched with; how vdbench reaches a host (`shell=`, `user=`,
/// `vdbench=`, `jvms=`) is mpirun's business.
pub(super) fn defs(hds: &[FsDef]) -> Result<Vec<HostDef>, CompatError> {
    let mut out = Vec::new();
    for d in hds {
        let system = d.get("system").map(super::super::host_system).transpose()?;
        let clients = d
            .get("clients")
            .map(super::super::host_clients)
            .transpose()?;
        out.extend(super::super::host_copies(
            &d.name,
            system,
            clients.unwrap_or(0),
        ));
    }
    if out.len() < 2 {
        out.clear();
    }
    Ok(out)
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

/// Gives every run the same host list, as a job file's `[[host]]` tables hold for
/// all its runs: each host drives the union of the trees it drives in any run
/// (a target's hosts are the same in every run: [`Binding::drive`]).
pub(super) fn unify(runs: &mut [RunSpec]) {
    let Some(first) = runs.first() else {
        return;
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
    for r in runs.iter_mut() {
        r.hosts = all.clone();
    }
}

/// Which hosts drive each target: one set for the whole file, as a job file's
/// `[[host]]` tables hold for all its runs. A workload whose hosts differ from
/// those its tree's target was first driven by (each host formats its own tree in
/// one rd, then every host reads all of them in another) gets a target of its own
/// on the same tree, named after its hosts (`fsd1@host2`), so each host drives
/// exactly the workloads of its own fwds.
#[derive(Default)]
pub(super) struct Binding(Vec<(String, Vec<usize>, String)>);

impl Binding {
    /// Adds `target` (renamed to its hosts' own target where it must be) to the
    /// hosts `on` of a run's host list.
    pub(super) fn drive(
        &mut self,
        targets: &mut Vec<TargetSpec>,
        run_hosts: &mut [HostDef],
        on: &[usize],
        target: &mut String,
    ) {
        if on.is_empty() {
            return;
        }
        let name = if let Some(b) = self.0.iter().find(|b| b.0 == *target && b.1 == on) {
            b.2.clone()
        } else if !self.0.iter().any(|b| b.0 == *target) {
            // The first hosts to drive the target keep its name.
            self.0.push((target.clone(), on.to_vec(), target.clone()));
            target.clone()
        } else {
            let names: Vec<&str> = on.iter().map(|&h| run_hosts[h].name.as_str()).collect();
            let alias = format!("{target}@{}", names.join("+"));
            if let Some(spec) = targets.iter().find(|x| x.name == *target) {
                let spec = TargetSpec {
                    name: alias.clone(),
                    ..spec.clone()
                };
                targets.push(spec);
            }
            self.0.push((target.clone(), on.to_vec(), alias.clone()));
            alias
        };
        *target = name;
        for &h in on {
            let t = &mut run_hosts[h].targets;
            if !t.contains(target) {
                t.push(target.clone());
            }
        }
    }
}

/// An fwd's `host=` patterns and where they were given.
pub(super) type FwdHosts = Option<(Vec<String>, Loc)>;
