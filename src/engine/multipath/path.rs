//! One path of a multipath target: its inner engine while it is up, the probe that
//! tries to bring it back while it is down, its load (for the policy) and its
//! counters (for the result). A path that fails loses its engine at once — closing the
//! connection is what guarantees that a late answer never writes into a buffer the
//! workload has reused — and a probe later connects a fresh one.

use super::policy::PathLoad;
use crate::engine::{Engine, EngineError};
use crate::stats::histogram::LatencyHistogram;
use std::sync::mpsc::{Receiver, TryRecvError};

/// An inner engine serving one path (its target list holds just that path).
pub type InnerEngine = Box<dyn Engine + Send>;

/// Where a path stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
    Up { since_ns: u64 },
    Down { since_ns: u64, next_probe_ns: u64 },
}

pub use crate::stats::paths::{PathCounts, PathSample, PathState};

/// One path and everything the engine keeps about it.
pub struct Path {
    pub engine: Option<InnerEngine>,
    pub health: Health,
    /// The probe connecting in the background, delivering a fresh engine or why
    /// not; at most one per path, and kept until it answers.
    pub probe: Option<Receiver<Result<InnerEngine, EngineError>>>,
    pub outstanding_ios: u32,
    pub outstanding_bytes: u64,
    /// Exponentially weighted mean service time (ns).
    pub service_ewma_ns: u64,
    /// This interval's figures (taken by [`Path::take_sample`]).
    pub interval: PathCounts,
    pub service: LatencyHistogram,
    /// Why it last went down, for the probe's messages.
    pub last_failure: String,
}

impl Path {
    pub fn new(engine: InnerEngine, now_ns: u64) -> Self {
        Path {
            engine: Some(engine),
            health: Health::Up { since_ns: now_ns },
            probe: None,
            outstanding_ios: 0,
            outstanding_bytes: 0,
            service_ewma_ns: 0,
            interval: PathCounts::default(),
            service: LatencyHistogram::new(),
            last_failure: String::new(),
        }
    }

    pub fn is_up(&self) -> bool {
        matches!(self.health, Health::Up { .. }) && self.engine.is_some()
    }

    /// The path's load as the policy sees it.
    pub fn load(&self) -> PathLoad {
        PathLoad {
            usable: self.is_up(),
            up_since_ns: match self.health {
                Health::Up { since_ns } => since_ns,
                Health::Down { .. } => u64::MAX,
            },
            outstanding_ios: self.outstanding_ios,
            outstanding_bytes: self.outstanding_bytes,
            service_ns: self.service_ewma_ns,
        }
    }

    /// Records an answered request.
    pub fn answered(&mut self, bytes: u64, service_ns: u64) {
        self.interval.ios += 1;
        self.interval.bytes += bytes;
        self.service.record(service_ns);
        // Weight 1/8 per answer: follows a change within a few dozen I/Os.
        self.service_ewma_ns = if self.service_ewma_ns == 0 {
            service_ns
        } else {
            (self.service_ewma_ns * 7 + service_ns) / 8
        };
    }

    /// Takes the path down: its engine (and with it every request in flight on it)
    /// is dropped, and the first probe is due at once.
    pub fn take_down(&mut self, now_ns: u64, why: String) {
        self.engine = None;
        self.health = Health::Down {
            since_ns: now_ns,
            next_probe_ns: now_ns,
        };
        self.outstanding_ios = 0;
        self.outstanding_bytes = 0;
        self.last_failure = why;
    }

    /// Collects a finished probe: `Some(Ok(()))` when the path is back up, `Some(Err)`
    /// with why it is still down.
    pub fn poll_probe(&mut self, now_ns: u64, retry_ns: u64) -> Option<Result<(), EngineError>> {
        let rx = self.probe.as_ref()?;
        let r = match rx.try_recv() {
            Ok(r) => r,
            Err(TryRecvError::Empty) => return None,
            Err(TryRecvError::Disconnected) => Err(EngineError::Setup {
                engine: "multipath",
                source: std::io::Error::other("the probe thread ended without an answer"),
            }),
        };
        self.probe = None;
        match r {
            Ok(engine) => {
                self.engine = Some(engine);
                self.health = Health::Up { since_ns: now_ns };
                self.service_ewma_ns = 0;
                Some(Ok(()))
            }
            Err(e) => {
                if let Health::Down { since_ns, .. } = self.health {
                    self.health = Health::Down {
                        since_ns,
                        next_probe_ns: now_ns + retry_ns,
                    };
                }
                Some(Err(e))
            }
        }
    }

    /// Whether a new probe should start now.
    pub fn probe_due(&self, now_ns: u64) -> bool {
        self.probe.is_none()
            && matches!(self.health, Health::Down { next_probe_ns, .. } if now_ns >= next_probe_ns)
    }

    /// This interval's figures, reset for the next.
    pub fn take_sample(&mut self, state: PathState) -> PathSample {
        let s = PathSample {
            counts: std::mem::take(&mut self.interval),
            service: self.service.clone(),
            state,
        };
        self.service.reset();
        s
    }
}
