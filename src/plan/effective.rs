//! A workload's effective settings in its run: its own value where it set one
//! ([`super::overrides`]), the run's otherwise. Kept apart from both so that the
//! model and the overrides it holds do not read each other.

use super::engine_opts::EngineOptions;
use super::model::{EngineKind, RunSpec, Workload};
use super::overrides::{Amount, WorkerKey};
use super::tuning::{Flushes, UringOptions};

impl RunSpec {
    /// The engine `w` asks for: its own, else the run's.
    pub fn engine_of(&self, w: &Workload) -> EngineKind {
        w.overrides.engine.unwrap_or(self.engine)
    }

    /// The engine options `w`'s engine gets: its own, else the run's.
    pub fn engine_opts_of<'a>(&'a self, w: &'a Workload) -> &'a EngineOptions {
        w.overrides
            .engine_opts
            .as_ref()
            .unwrap_or(&self.engine_opts)
    }

    /// The passes `w` makes: its own amount, else the run's (`None`: no pass
    /// limit, it runs for a time).
    pub fn passes_of(&self, w: &Workload) -> Option<u64> {
        match w.overrides.amount {
            Some(Amount::Passes(n)) => Some(n),
            Some(Amount::TimeBased) => None,
            None => self.passes,
        }
    }

    /// The io_uring settings of `w`'s workers.
    pub fn uring_of<'a>(&'a self, w: &'a Workload) -> &'a UringOptions {
        w.overrides.uring.as_ref().unwrap_or(&self.io.uring)
    }

    /// The periodic flushes of `w`'s writes: its own, else the run's; none for a
    /// workload that never writes.
    pub fn flushes_of(&self, w: &Workload) -> Flushes {
        if w.read_pct == 100 {
            return Flushes::default();
        }
        w.overrides.flushes.unwrap_or_else(|| self.io.flushes())
    }

    /// Whether `w` fsyncs what it wrote once its I/O is over (`fsync_on_close`);
    /// never for a workload that never writes.
    pub fn fsyncs_on_close(&self, w: &Workload) -> bool {
        w.read_pct < 100 && w.settings.flag(&super::settings::declared::FSYNC_ON_CLOSE)
    }

    /// Whether `w` fsyncs each file it wrote as its streams move on (`fsync_each_file`).
    pub fn fsyncs_each_file(&self, w: &Workload) -> bool {
        w.read_pct < 100 && w.settings.flag(&super::settings::declared::FSYNC_EACH_FILE)
    }

    /// The CPUs `w`'s workers are pinned to (`None`: not pinned).
    pub fn cpus_of<'a>(&'a self, w: &'a Workload) -> Option<&'a Vec<usize>> {
        w.overrides.cpus.as_ref().or(self.cpus.as_ref())
    }

    /// How long after the run's I/O starts `w`'s I/O is counted.
    pub fn warmup_of(&self, w: &Workload) -> u64 {
        w.overrides.warmup_ns.unwrap_or(self.warmup_ns)
    }

    /// The workers `w` needs: workloads with equal keys share them.
    pub fn worker_key(&self, w: &Workload) -> WorkerKey {
        let engine = self.engine_of(w);
        WorkerKey {
            engine,
            opts: self.engine_opts_of(w).for_engine(engine),
            uring: self.uring_of(w).clone(),
            cpus: self.cpus_of(w).cloned(),
            prio: w.priority.job,
        }
    }

    /// Whether some workload sets an engine (or engine options), io_uring options or
    /// CPUs of its own that differ from the run's (then the run has more than one kind
    /// of worker).
    pub fn mixes_workers(&self) -> bool {
        let Some(first) = self.workloads.first() else {
            return false;
        };
        let key = self.worker_key(first);
        self.workloads.iter().any(|w| self.worker_key(w) != key)
    }

    /// The run with every workload's own warm-up settled: the run's warm-up becomes the
    /// shortest of them (intervals before it are warm-up for all), its duration grows by
    /// what that took off (the run still ends when its own warm-up and duration are
    /// over), and each workload carries its own warm-up explicitly. `None` when no
    /// workload has a warm-up of its own.
    pub fn with_own_warmups(&self) -> Option<RunSpec> {
        if self
            .workloads
            .iter()
            .all(|w| w.overrides.warmup_ns.is_none())
        {
            return None;
        }
        let mut run = self.clone();
        let own: Vec<u64> = self.workloads.iter().map(|w| self.warmup_of(w)).collect();
        let common = own.iter().copied().min().unwrap_or(0);
        let cut = self.warmup_ns.saturating_sub(common);
        run.duration_ns = run.duration_ns.map(|d| d.saturating_add(cut));
        run.warmup_ns = common;
        for (w, ns) in run.workloads.iter_mut().zip(own) {
            w.overrides.warmup_ns = Some(ns);
        }
        Some(run)
    }
}
