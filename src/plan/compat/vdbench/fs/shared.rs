//! An fsd's `shared=yes` on several hosts: vdbench's hosts (slaves) each take one
//! file in n of the tree — host j the files whose number leaves j when divided by
//! n, counted over the whole tree in its order (`FileAnchor.createFileList`) — for
//! the format and the rd alike. Here each host's workloads on such a tree use a
//! target of their own holding its share (`share=J/N` on the tree); an fwd that
//! runs on several of its hosts becomes one workload per host (`fwd@host`), each on
//! that host's share, as vdbench's slaves each run the fwd on their files. On one
//! host `shared=` changes nothing.

use super::{Fsd, Fwd, Output, Rd, RdTrees};

/// Per fsd (by index): the hosts (sorted, each once) that take a share of it in
/// the rd whose fwds run on `on`; `None` for a tree one host drives or that is not
/// shared.
pub(super) fn hosts_of_trees(
    rd: &Rd,
    fsds: &[Fsd],
    fwds: &[Fwd],
    on: &[Vec<usize>],
) -> Vec<Option<Vec<usize>>> {
    let mut out = vec![None; fsds.len()];
    for s in rd.trees(fwds) {
        if fsds[s].shared.is_none() {
            continue;
        }
        let mut hosts: Vec<usize> = (rd.fwds.iter().zip(on))
            .filter(|(&f, _)| fwds[f].fsds.contains(&s))
            .flat_map(|(_, h)| h.iter().copied())
            .collect();
        hosts.sort_unstable();
        hosts.dedup();
        if hosts.len() >= 2 {
            out[s] = Some(hosts);
        }
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

    /// How an fwd on `hosts` runs on tree `s`, as (hosts, workload name): as one
    /// workload, or on a tree shared among hosts one per host (`name@host`), each on
    /// that host's share.
    pub(super) fn per_host(
        &self,
        s: usize,
        hosts: &[usize],
        name: String,
        out: &Output,
    ) -> Vec<(Vec<usize>, String)> {
        if self.shares[s].is_none() || hosts.len() < 2 {
            return vec![(hosts.to_vec(), name)];
        }
        (hosts.iter())
            .map(|&h| (vec![h], format!("{name}@{}", out.hosts[h].name)))
            .collect()
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
