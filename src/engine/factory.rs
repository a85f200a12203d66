//! Building a worker's engine from its kind: the one place each engine kind's
//! constructor is named. The caller hands a [`Drive`] that runs its worker on
//! whatever engine type is built, so each engine keeps a worker loop compiled for
//! it alone, and the run core never names an engine type.

use std::sync::Arc;

use super::cpuio::CpuEngine;
use super::defrag::DefragEngine;
use super::exec::ExecEngine;
use super::fileops::{FileOp, FileOpEngine};
use super::iscsi::IscsiEngine;
use super::multipath::path::InnerEngine;
use super::multipath::{Connect, MultipathEngine, MultipathSettings};
use super::nbd::NbdEngine;
use super::nfs::NfsEngine;
use super::page_fault::PageFaultEngine;
use super::reconnect::{Reconnect, WithReconnect};
use super::sim::SimEngine;
use super::space::{SpaceCall, SpaceEngine};
use super::tree_bytes::TreeBytesEngine;
use super::{mem::MemEngine, null::NullEngine, sync::SyncEngine, uring::UringEngine};
use super::{Engine, EngineError, Targets};
use crate::plan::engine_opts::EngineOptions;
use crate::plan::model::EngineKind;
use crate::plan::UringOptions;

/// What the caller does with the engine built for it: run its worker on it, or
/// report why none could be built.
pub trait Drive {
    fn run<E: Engine>(self, engine: E);
    fn fail(self, e: EngineError);
}

/// What a worker's engine is built from.
pub struct Build<'a> {
    pub kind: EngineKind,
    pub targets: &'a Targets,
    /// Requests in flight at most (the worker's slots).
    pub capacity: usize,
    pub uring: &'a UringOptions,
    pub opts: &'a EngineOptions,
    /// Which of the targets the worker's streams use (a worker group's own).
    pub used: &'a [bool],
    /// Network engines reconnect a lost connection on this schedule (`None`: the
    /// loss ends the run).
    pub reconnect: Option<Reconnect>,
    /// A target of several paths (or SMB channels): one engine per path under a
    /// multipath engine.
    pub multipath: Option<MultipathSettings>,
}

/// Builds the engine `b` describes and hands it to `d`.
pub fn build(b: Build<'_>, d: impl Drive) {
    if let Some(settings) = b.multipath {
        return multipath(&b, settings, d);
    }
    let (t, capacity) = (b.targets, b.capacity);
    match b.kind {
        EngineKind::Null => d.run(NullEngine::new(capacity)),
        EngineKind::Mem => d.run(MemEngine::new(t, capacity)),
        EngineKind::Sim => d.run(SimEngine::new(t, capacity)),
        // A tree on a server has no descriptors: its files are reached through
        // their directory, one blocking call per request.
        EngineKind::Sync if t.iter().any(|x| x.remote_byte_tree().is_some()) => {
            outcome(d, TreeBytesEngine::new(t, capacity))
        }
        EngineKind::Sync => d.run(SyncEngine::new(t, capacity)),
        EngineKind::Falloc => d.run(SpaceEngine::new(t, SpaceCall::Fallocate, capacity)),
        EngineKind::Ftruncate => d.run(SpaceEngine::new(t, SpaceCall::Ftruncate, capacity)),
        EngineKind::E4defrag => match &b.opts.defrag {
            Some(spec) => outcome(
                d,
                DefragEngine::new(t, b.used, spec, capacity).map_err(|source| EngineError::Setup {
                    engine: "e4defrag",
                    source,
                }),
            ),
            None => d.fail(no_setting("e4defrag", "a donor file")),
        },
        EngineKind::PageFault => {
            // The size of its (one) target, not of another group's.
            let mine = t.iter().zip(b.used).find(|(_, &u)| u).map(|(x, _)| x);
            outcome(
                d,
                PageFaultEngine::new(mine.map_or(0, |x| x.size_bytes), capacity),
            )
        }
        EngineKind::Exec => match &b.opts.exec {
            Some(spec) => d.run(ExecEngine::new(spec.clone(), capacity)),
            None => d.fail(no_setting("exec", "a program")),
        },
        EngineKind::Cpuio => match b.opts.cpu {
            Some(burn) => d.run(CpuEngine::new(burn, capacity)),
            None => d.fail(no_setting("cpuio", "a CPU load")),
        },
        k if k.is_file_op() => match FileOp::of(k, b.opts.stat) {
            Some(op) => outcome(d, FileOpEngine::new(t, k, op, capacity)),
            None => d.fail(no_setting(k.name(), "a file operation")),
        },
        EngineKind::Nbd => reconnecting(d, NbdEngine::new(t, capacity), b.reconnect),
        EngineKind::Iscsi => reconnecting(d, IscsiEngine::new(t, capacity), b.reconnect),
        EngineKind::Nfs => reconnecting(d, NfsEngine::new(t, capacity), b.reconnect),
        EngineKind::Smb => smb(d, t, capacity, b.reconnect),
        _ if t.iter().any(|x| x.remote_byte_tree().is_some()) => d.fail(EngineError::Setup {
            engine: b.kind.name(),
            source: std::io::Error::other(
                "a tree on an NFS export is read and written by the sync engine only",
            ),
        }),
        _ => outcome(d, UringEngine::new(t, capacity, b.uring)),
    }
}

/// Runs on the engine, or reports why it could not be built.
fn outcome<E: Engine>(d: impl Drive, engine: Result<E, EngineError>) {
    match engine {
        Ok(e) => d.run(e),
        Err(e) => d.fail(e),
    }
}

/// A network engine, reconnecting on schedule `r` when there is one.
fn reconnecting<E>(d: impl Drive, engine: Result<E, EngineError>, r: Option<Reconnect>)
where
    E: Engine + WithReconnect,
{
    match (engine, r) {
        (Ok(e), Some(r)) => d.run(e.with_reconnect(r)),
        (engine, _) => outcome(d, engine),
    }
}

/// An engine that cannot be built because a setting is missing (the run's checks
/// refuse such a plan first).
fn no_setting(engine: &'static str, what: &str) -> EngineError {
    EngineError::Setup {
        engine,
        source: std::io::Error::other(format!("needs {what}")),
    }
}

/// A multipath engine over one nbd or iscsi engine per path (or one smb engine per
/// channel of a multichannel session).
fn multipath(b: &Build<'_>, settings: MultipathSettings, d: impl Drive) {
    let (capacity, engine) = (b.capacity, b.kind);
    let first = b.targets[0].clone();
    if engine == EngineKind::Smb {
        return smb_channels(d, &first, capacity, settings);
    }
    let mut paths = vec![first.clone()];
    if let Some(mp) = &first.multipath {
        paths.extend(mp.extra.iter().cloned());
    }
    let npaths = paths.len();
    let connect: Connect = Arc::new(move |i, limit_ns| {
        let one: Targets = Arc::new(vec![paths[i].clone()]);
        let mut e: InnerEngine = match engine {
            EngineKind::Iscsi => Box::new(IscsiEngine::new_within(&one, capacity, limit_ns)?),
            _ => Box::new(NbdEngine::new_within(&one, capacity, limit_ns)?),
        };
        e.connect(1)?;
        Ok(e)
    });
    outcome(d, MultipathEngine::new(npaths, capacity, settings, connect))
}

/// The smb engine: its own sessions to the SMB targets.
#[cfg(feature = "smb")]
fn smb(d: impl Drive, t: &Targets, capacity: usize, r: Option<Reconnect>) {
    reconnecting(d, super::smb::SmbEngine::new(t, capacity), r)
}

/// One SMB3 multichannel session of the worker's own: each channel is a path of the
/// multipath engine, served by an smb engine sending on that channel. The session and
/// its channels are set up before the common start.
#[cfg(feature = "smb")]
fn smb_channels(
    d: impl Drive,
    first: &Arc<crate::target::OpenTarget>,
    capacity: usize,
    settings: MultipathSettings,
) {
    use crate::target::smb::channels::ChannelPlan;
    let setup_err = |msg: String| EngineError::Setup {
        engine: "smb",
        source: std::io::Error::other(msg),
    };
    let (crate::target::Backing::Smb(s), Some(mp)) = (&first.backing, &first.multipath) else {
        return d.fail(setup_err("multichannel needs an smb:// target".into()));
    };
    let plan = ChannelPlan::Addresses(mp.channels.iter().map(|c| c.addr).collect());
    let set = match s
        .open_channels(&plan)
        .and_then(|set| set.bind_all().map(|()| set))
    {
        Ok(set) => Arc::new(set),
        Err(e) => return d.fail(setup_err(format!("{}: multichannel: {e}", s.server))),
    };
    let npaths = set.addrs.len();
    let connect: Connect = Arc::new(move |i, limit_ns| {
        let limit = std::time::Duration::from_nanos(limit_ns);
        let e: InnerEngine = Box::new(super::smb::SmbEngine::channel(&set, i, limit)?);
        Ok(e)
    });
    outcome(d, MultipathEngine::new(npaths, capacity, settings, connect))
}

/// Without the `smb` feature no SMB target opens, so this only says why.
#[cfg(not(feature = "smb"))]
fn smb(d: impl Drive, _t: &Targets, _capacity: usize, _r: Option<Reconnect>) {
    d.fail(EngineError::NotBuiltIn { feature: "SMB" })
}

/// Without the `smb` feature no SMB target opens, so this only says why.
#[cfg(not(feature = "smb"))]
fn smb_channels(
    d: impl Drive,
    _first: &Arc<crate::target::OpenTarget>,
    _capacity: usize,
    _settings: MultipathSettings,
) {
    d.fail(EngineError::NotBuiltIn { feature: "SMB" })
}
