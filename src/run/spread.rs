//! How a run's streams and connections are spread over its workers. A stream uses
//! connection `stream id mod N` of every target (`--connections N`); a worker opens
//! only the connections its streams use, so a connection belongs to the workers
//! whose streams use it. For a network engine with several connections the streams
//! go to workers by connection (each connection then has exactly one worker), and
//! when the user did not say `--workers`, the worker count is the largest divisor of
//! N that the CPUs and streams allow: one worker per connection up to one per CPU,
//! every worker with as many connections as the next. One worker driving four
//! connections was CPU-bound at the IOPS of one connection (docs/benchmarks.md).

/// The worker count and how streams are dealt to workers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spread {
    pub nworkers: usize,
    /// Streams go to workers by their connection (`(id mod N) mod workers`) rather
    /// than round-robin by position.
    pub by_conn: bool,
    /// Why the worker count is what it is, when connections decided it (for the
    /// result's `engine_reason`).
    pub reason: Option<String>,
}

/// Chooses the worker count: `workers` when the user gave it, otherwise one per CPU
/// — for a network engine with `connections > 1`, the largest divisor of
/// `connections` within the CPUs — never more than there are streams.
pub fn plan(
    workers: Option<usize>,
    cpus: usize,
    streams: usize,
    connections: u32,
    network: bool,
) -> Spread {
    let streams = streams.max(1);
    let n = connections.max(1) as usize;
    let multi = network && n > 1;
    let (nworkers, reason) = match workers {
        Some(w) => (w.clamp(1, streams), None),
        None if multi => {
            let cap = cpus.clamp(1, streams);
            let w = (1..=cap.min(n)).rev().find(|w| n % w == 0).unwrap_or(1);
            let each = n / w;
            let why = format!(
                "{n} connections over {w} worker{} ({each} each; one worker per connection up to one per CPU, {cpus} CPUs)",
                if w == 1 { "" } else { "s" }
            );
            (w, Some(why))
        }
        None => (cpus.clamp(1, streams), None),
    };
    Spread {
        nworkers,
        by_conn: multi && nworkers <= n,
        reason,
    }
}

impl Spread {
    /// The worker that runs the stream with position (and id) `i`.
    #[inline]
    pub fn worker_of(&self, i: usize, connections: u32) -> usize {
        if self.by_conn {
            (i % connections as usize) % self.nworkers
        } else {
            i % self.nworkers
        }
    }
}

/// The connections (numbers in `0..connections`) that streams with these ids use,
/// ascending; a worker opens these and no others. At least connection 0.
pub fn owned_connections(stream_ids: impl Iterator<Item = u32>, connections: u32) -> Vec<u32> {
    let n = connections.max(1);
    let mut used = vec![false; n as usize];
    for id in stream_ids {
        used[(id % n) as usize] = true;
    }
    let owned: Vec<u32> = (0..n).filter(|&c| used[c as usize]).collect();
    if owned.is_empty() {
        vec![0]
    } else {
        owned
    }
}

/// How many connections per target the workers open in all (each worker opens the
/// ones its streams use).
pub fn opened_connections(spread: &Spread, streams: usize, connections: u32) -> usize {
    (0..spread.nworkers)
        .map(|w| {
            let ids = (0..streams)
                .filter(|&i| spread.worker_of(i, connections) == w)
                .map(|i| i as u32);
            owned_connections(ids, connections).len()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_connections_decide_the_default_worker_count() {
        // 4 connections, 2 CPUs: 2 workers with 2 connections each.
        let s = plan(None, 2, 4, 4, true);
        assert_eq!((s.nworkers, s.by_conn), (2, true));
        assert!(s
            .reason
            .unwrap()
            .contains("4 connections over 2 workers (2 each"));
        // 3 CPUs: a divisor of 4, so no worker carries more connections than another.
        assert_eq!(plan(None, 3, 8, 4, true).nworkers, 2);
        // More CPUs than connections: one worker per connection.
        assert_eq!(plan(None, 16, 8, 4, true).nworkers, 4);
        // Fewer streams than that: never a worker without one.
        assert_eq!(plan(None, 16, 2, 4, true).nworkers, 2);
        assert_eq!(plan(None, 16, 1, 4, true).nworkers, 1);
    }

    #[test]
    fn explicit_workers_and_local_engines_keep_the_old_rule() {
        let s = plan(Some(1), 8, 4, 4, true);
        assert_eq!((s.nworkers, s.by_conn, s.reason), (1, true, None));
        // More workers than connections: round-robin, each opens what it uses.
        let s = plan(Some(4), 8, 8, 2, true);
        assert_eq!((s.nworkers, s.by_conn), (4, false));
        let s = plan(None, 8, 16, 4, false);
        assert_eq!((s.nworkers, s.by_conn, s.reason), (8, false, None));
        assert_eq!(plan(None, 8, 3, 1, true).nworkers, 3);
    }

    #[test]
    fn every_connection_is_opened_once_when_dealt_by_connection() {
        for (cpus, streams, n) in [(2, 4, 4), (3, 8, 4), (2, 8, 4), (4, 6, 3), (2, 1, 4)] {
            let s = plan(None, cpus, streams, n, true);
            let opened = opened_connections(&s, streams, n);
            assert_eq!(
                opened,
                streams.min(n as usize),
                "{cpus} {streams} {n}: {s:?}"
            );
        }
        // Each worker owns a disjoint set.
        let s = plan(None, 2, 8, 4, true);
        let owned =
            |w: usize| owned_connections((0..8u32).filter(|&i| s.worker_of(i as usize, 4) == w), 4);
        assert_eq!(owned(0), [0, 2]);
        assert_eq!(owned(1), [1, 3]);
        // One connection: every worker opens its own.
        let s = plan(Some(3), 4, 6, 1, true);
        assert_eq!(opened_connections(&s, 6, 1), 3);
        assert_eq!(owned_connections(std::iter::empty(), 4), [0]);
    }
}
