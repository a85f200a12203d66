//! Which rank plays which host definition (vdbench `hd=`) of a plan. Every rank
//! works the whole assignment out from the same inputs (the plan and the ranks' host
//! names), so all ranks agree on it, and a plan that cannot be placed fails on every
//! rank alike before any of them starts.
//!
//! By name when every definition's system names a host some rank runs on (loopback
//! names mean rank 0's host, where vdbench's "localhost" master runs): the ranks on
//! a host are dealt out in rank order over the definitions naming that host. By
//! order otherwise: rank r plays definition r mod H. Either way a definition played
//! by several ranks is one group: its workloads' rates and streams are divided among
//! them.

use crate::plan::hosts::HostDef;

/// Why the ranks cannot play a plan's host definitions: the same on every rank, which
/// all work it out from the same inputs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssignError {
    #[error("no host definitions or no ranks to assign")]
    Empty,
    /// A rank runs on a host that no definition names (by-name matching).
    #[error(
        "rank {rank} runs on host {host}, which no hd= names (hd systems: {systems}): \
         start ranks only on the hosts of the host definitions"
    )]
    HostUnnamed {
        rank: usize,
        host: String,
        /// The definitions' systems, comma-separated.
        systems: String,
    },
    /// More definitions name a host than ranks run there.
    #[error(
        "{defs} host definitions ({labels}) name host {host}, but only {ranks} rank(s) run \
         there: start at least one rank per definition (e.g. mpirun --host {host}:{defs})"
    )]
    FewRanksOnHost {
        defs: usize,
        /// The definitions naming the host (`hd=NAME`, comma-separated).
        labels: String,
        host: String,
        ranks: usize,
    },
    /// Fewer ranks than definitions (by-order matching).
    #[error(
        "{defs} host definitions (hd=) but {ranks} rank(s): start at least one rank per host \
         definition (mpirun -n {defs})"
    )]
    FewRanks { defs: usize, ranks: usize },
}

/// How the ranks were matched to the definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchedBy {
    Name,
    Order,
}

/// The host definition of every rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// `of_rank[r]` = index into the definitions of rank r's.
    pub of_rank: Vec<usize>,
    pub by: MatchedBy,
}

impl Assignment {
    /// Ranks playing definition `hd`, in rank order.
    pub fn ranks_of(&self, hd: usize) -> Vec<u32> {
        (0..self.of_rank.len() as u32)
            .filter(|&r| self.of_rank[r as usize] == hd)
            .collect()
    }
}

fn is_loopback(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "localhost" || n.starts_with("localhost.") || n.starts_with("127.") || n == "::1"
}

/// A host name without its domain, lower case (addresses stay whole).
fn short(name: &str) -> String {
    let n = name.trim().to_ascii_lowercase();
    if n.parse::<std::net::IpAddr>().is_ok() {
        return n;
    }
    n.split('.').next().unwrap_or("").to_string()
}

/// Whether definition system `system` names the host `host`; `root_host` is rank 0's.
fn names(system: &str, host: &str, root_host: &str) -> bool {
    let system = if is_loopback(system) {
        root_host
    } else {
        system
    };
    short(system) == short(host)
}

/// Assigns each rank (`hosts[r]` = rank r's host) a definition; an error says why
/// the ranks cannot play the definitions.
pub fn assign(hds: &[HostDef], hosts: &[String]) -> Result<Assignment, AssignError> {
    if hds.is_empty() || hosts.is_empty() {
        return Err(AssignError::Empty);
    }
    let root = hosts[0].as_str();
    let all_named = hds
        .iter()
        .all(|h| hosts.iter().any(|x| names(h.system_name(), x, root)));
    if all_named {
        by_name(hds, hosts, root)
    } else {
        by_order(hds, hosts)
    }
}

fn by_name(hds: &[HostDef], hosts: &[String], root: &str) -> Result<Assignment, AssignError> {
    let mut of_rank = vec![usize::MAX; hosts.len()];
    // Ranks in rank order per host, dealt over the definitions naming the host.
    let mut seen: Vec<&str> = Vec::new();
    for (r, host) in hosts.iter().enumerate() {
        if seen.iter().any(|s| short(s) == short(host)) {
            continue;
        }
        seen.push(host);
        let here: Vec<usize> = (0..hosts.len())
            .filter(|&x| short(&hosts[x]) == short(host))
            .collect();
        let defs: Vec<usize> = (0..hds.len())
            .filter(|&i| names(hds[i].system_name(), host, root))
            .collect();
        if defs.is_empty() {
            return Err(AssignError::HostUnnamed {
                rank: r,
                host: host.clone(),
                systems: systems(hds),
            });
        }
        if here.len() < defs.len() {
            return Err(AssignError::FewRanksOnHost {
                defs: defs.len(),
                labels: labels(hds, &defs),
                host: host.clone(),
                ranks: here.len(),
            });
        }
        for (k, &x) in here.iter().enumerate() {
            of_rank[x] = defs[k % defs.len()];
        }
    }
    Ok(Assignment {
        of_rank,
        by: MatchedBy::Name,
    })
}

fn by_order(hds: &[HostDef], hosts: &[String]) -> Result<Assignment, AssignError> {
    if hosts.len() < hds.len() {
        return Err(AssignError::FewRanks {
            defs: hds.len(),
            ranks: hosts.len(),
        });
    }
    Ok(Assignment {
        of_rank: (0..hosts.len()).map(|r| r % hds.len()).collect(),
        by: MatchedBy::Order,
    })
}

fn systems(hds: &[HostDef]) -> String {
    hds.iter()
        .map(|h| h.system_name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn labels(hds: &[HostDef], idx: &[usize]) -> String {
    idx.iter()
        .map(|&i| format!("hd={}", hds[i].name))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hd(name: &str, system: Option<&str>) -> HostDef {
        HostDef {
            name: name.into(),
            system: system.map(Into::into),
            targets: vec![format!("sd_{name}")],
        }
    }

    fn hosts(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn by_name_follows_the_hosts_not_the_rank_order() {
        let hds = [hd("h1", Some("nodeb.example.com")), hd("h2", Some("nodea"))];
        let a = assign(&hds, &hosts(&["nodeA", "nodeA", "nodeB", "nodeB"])).unwrap();
        assert_eq!(a.by, MatchedBy::Name);
        assert_eq!(a.of_rank, vec![1, 1, 0, 0]);
        assert_eq!(a.ranks_of(0), vec![2, 3]);
    }

    #[test]
    fn loopback_systems_are_rank_zeros_host_and_its_ranks_are_dealt_out() {
        let hds = [hd("h1", Some("localhost")), hd("h2", Some("127.0.0.1"))];
        let a = assign(&hds, &hosts(&["vm", "vm"])).unwrap();
        assert_eq!((a.by, a.of_rank.clone()), (MatchedBy::Name, vec![0, 1]));
        let a = assign(&hds, &hosts(&["vm", "vm", "vm"])).unwrap();
        assert_eq!(a.of_rank, vec![0, 1, 0]);
        let err = assign(&hds, &hosts(&["vm"])).unwrap_err().to_string();
        assert!(
            err.contains("2 host definitions (hd=h1, hd=h2) name host vm"),
            "{err}"
        );
    }

    #[test]
    fn unnamed_hosts_fall_back_to_rank_order() {
        // The systems name hosts no rank runs on: rank r plays definition r mod H.
        let hds = [hd("a", Some("x1")), hd("b", None)];
        let a = assign(&hds, &hosts(&["n0", "n1", "n2"])).unwrap();
        assert_eq!((a.by, a.of_rank.clone()), (MatchedBy::Order, vec![0, 1, 0]));
        let err = assign(&hds, &hosts(&["n0"])).unwrap_err();
        assert_eq!(err, AssignError::FewRanks { defs: 2, ranks: 1 });
        assert!(
            err.to_string()
                .contains("2 host definitions (hd=) but 1 rank"),
            "{err}"
        );
    }

    #[test]
    fn a_rank_on_a_host_no_definition_names_is_refused() {
        let hds = [hd("h1", Some("nodea")), hd("h2", Some("nodeb"))];
        let err = assign(&hds, &hosts(&["nodea", "nodeb", "nodec"])).unwrap_err();
        assert!(
            err.to_string().starts_with("rank 2 runs on host nodec"),
            "{err}"
        );
    }
}
