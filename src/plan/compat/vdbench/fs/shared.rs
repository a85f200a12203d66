//! An fsd's `shared=yes` on several hosts: vdbench's hosts (slaves) each take one
//! file in n of the tree — host j the files whose number leaves j when divided by
//! n, counted over the whole tree in its order (`FileAnchor.createFileList`) — for
//! the format and the rd alike. Here each host's workloads on such a tree use a
//! target of their own holding its share (`share=J/N` on the tree). That holds
//! when each fwd on the tree runs on one host (the published multi-client files
//! give every host its own fwd); an fwd that runs on several is listed, its hosts
//! then using every file. On one host `shared=` changes nothing.

use super::{Fsd, Fwd, Rd, RdTrees};
use crate::plan::compat::UnsupportedList;

/// Per fsd (by index): the hosts (sorted, each once) that take a share of it in
/// the rd whose fwds run on `on`; `None` for a tree one host drives or that is not
/// shared, and for one an fwd drives from several hosts (listed).
pub(super) fn hosts_of_trees(
    rd: &Rd,
    fsds: &[Fsd],
    fwds: &[Fwd],
    on: &[Vec<usize>],
    unsupported: &mut UnsupportedList,
) -> Vec<Option<Vec<usize>>> {
    let mut out = vec![None; fsds.len()];
    for s in rd.trees(fwds) {
        let Some(loc) = &fsds[s].shared else { continue };
        let drivers: Vec<&Vec<usize>> = (rd.fwds.iter().zip(on))
            .filter(|(&f, _)| fwds[f].fsds.contains(&s))
            .map(|(_, h)| h)
            .collect();
        let mut hosts: Vec<usize> = drivers.iter().flat_map(|h| h.iter().copied()).collect();
        hosts.sort_unstable();
        hosts.dedup();
        if hosts.len() < 2 {
            continue;
        }
        if drivers.iter().all(|h| h.len() == 1) {
            out[s] = Some(hosts);
            continue;
        }
        unsupported.push(
            format!(
                "shared=yes on fsd={} with an fwd on several of its {n} hosts — vdbench \
                 gives each host one file in {n}; here that fwd's hosts use every file",
                fsds[s].name,
                n = hosts.len()
            ),
            loc,
        );
    }
    out
}

impl RdTrees<'_> {
    /// Tree `s` as an fwd running on `hosts` uses it: its share when the tree is
    /// shared among hosts.
    pub(super) fn tree(&self, s: usize, hosts: &[usize]) -> Fsd {
        let mut fsd = self.fsds[s].clone();
        if let (Some(all), [h]) = (&self.shares[s], hosts) {
            let j = all.iter().position(|x| x == h).unwrap_or(0);
            fsd.share = Some((j as u64, all.len() as u64));
        }
        fsd
    }

    /// The hosts of the rd's fwds that use tree `s`, each once, in host order.
    pub(super) fn drivers(&self, s: usize) -> Vec<usize> {
        let mut drivers: Vec<usize> = Vec::new();
        for (&f, h) in self.rd.fwds.iter().zip(self.on) {
            if self.fwds[f].fsds.contains(&s) {
                drivers.extend(h);
            }
        }
        drivers.sort_unstable();
        drivers.dedup();
        drivers
    }

    /// The trees the rd's format writes, each with the hosts that write it: a
    /// shared tree once per host, as its share.
    pub(super) fn format_trees(&self) -> Vec<(Fsd, Vec<usize>)> {
        let mut out = Vec::new();
        for s in self.rd.trees(self.fwds) {
            if let Some(all) = &self.shares[s] {
                out.extend(all.iter().map(|&h| (self.tree(s, &[h]), vec![h])));
                continue;
            }
            out.push((self.fsds[s].clone(), self.drivers(s)));
        }
        out
    }
}
