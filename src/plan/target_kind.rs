//! Target kinds as descriptors: each kind of target is declared once, in
//! [`TARGETS`], with how its URIs start, the engine `auto` gives it, which engines
//! may drive it and how fio names it. The rule for which engine a target gets is
//! written once, here ([`auto_engine`], [`engine_fits`]): the run's checks, its engine
//! choice and `convert --to fio` read it. Parsing a URI's details and opening it stay
//! in `target`.
//!
//! The trade-off: the table is indexed by [`ProbeKind`]'s discriminant, so a kind
//! added to the enum must be added to the table at the same place; a unit test holds
//! the two in step.

use super::engine_kind::EngineKind;

/// The kind of storage a target is (as its probe finds it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeKind {
    File,
    BlockDevice,
    Mem,
    Null,
    Sim,
    /// A network block device: nothing local is created, whatever the plan.
    Nbd,
    /// An iSCSI LUN: whole blocks only (its block size is `align_bytes`).
    Iscsi,
    /// A file on an SMB share: created or grown on the server, never locally.
    Smb,
    /// A file on an NFS export: created or grown on the server, never locally.
    Nfs,
    /// A set of files in a directory (`files:`, `tree:`), for the file-operation
    /// engines.
    Files,
}

/// How `convert --to fio` names a target of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FioTarget {
    /// `filename=` the path.
    Path,
    /// fio's file-set options (`directory`, `nrfiles`, `filename_format`, …).
    Set,
    /// `uri=` the URI as given: fio's nbd engine hands it to libnbd, as ioscope does.
    NbdUri,
    /// `filename=` the URI with its ':' escaped: fio's libiscsi engine parses it with
    /// libiscsi, as ioscope does.
    IscsiUrl,
    /// `nfs_url=` the export and `filename=` the file in it: fio's nfs engine mounts
    /// `nfs_url`'s whole path with libnfs, as ioscope does.
    NfsUrl,
    /// fio has no such target: why.
    Missing(&'static str),
}

/// One target kind: how it is named and which engines run it.
#[derive(Debug)]
pub struct TargetDesc {
    pub kind: ProbeKind,
    /// How its URIs start; empty: a path (files and block devices).
    pub prefixes: &'static [&'static str],
    /// How messages name its targets (`nbd://`, `mem:SIZE`).
    pub what: &'static str,
    /// The engine `auto` gives it; `Auto`: chosen when it is opened, by where its
    /// data lives (`crate::run::engine_choice`).
    pub engine: EngineKind,
    pub fio: FioTarget,
    /// Runs on its own engine only; how messages name one (`an NBD target`).
    pub needs_own: Option<&'static str>,
    /// Its engine runs nothing else.
    pub exclusive: bool,
    /// A file, a block device or a set of files, which the uring and sync engines
    /// drive.
    pub local: bool,
}

#[rustfmt::skip]
const fn kind(kind: ProbeKind, prefixes: &'static [&'static str], what: &'static str, engine: EngineKind, fio: FioTarget) -> TargetDesc {
    TargetDesc { kind, prefixes, what, engine, fio, needs_own: None, exclusive: false, local: false }
}

/// A kind whose engine runs nothing else.
const fn exclusive(mut d: TargetDesc) -> TargetDesc {
    d.exclusive = true;
    d
}

/// A kind that runs on its own engine only, which runs nothing else.
const fn own(d: TargetDesc, noun: &'static str) -> TargetDesc {
    let mut d = exclusive(d);
    d.needs_own = Some(noun);
    d
}

const fn local(mut d: TargetDesc) -> TargetDesc {
    d.local = true;
    d
}

/// Every target kind, in [`ProbeKind`]'s order.
#[rustfmt::skip] // a table: one kind a line
pub static TARGETS: [TargetDesc; 10] = {
    use EngineKind as E;
    use ProbeKind as P;
    [
        local(kind(P::File, &[], "file", E::Auto, FioTarget::Path)),
        local(kind(P::BlockDevice, &[], "block device", E::Auto, FioTarget::Path)),
        exclusive(kind(P::Mem, &["mem:"], "mem:SIZE", E::Mem, FioTarget::Missing("fio has no equivalent: mem: is memory inside ioscope's own process"))),
        kind(P::Null, &["null:"], "null:SIZE", E::Null, FioTarget::Missing("not translated to fio yet (fio's null engine takes a size and no file)")),
        exclusive(kind(P::Sim, &["sim:"], "sim:SIZE", E::Sim, FioTarget::Missing("fio has no equivalent: sim: is a simulated device (a queueing model of service times)"))),
        own(kind(P::Nbd, &["nbd://", "nbd+unix://"], "nbd://", E::Nbd, FioTarget::NbdUri), "an NBD target"),
        own(kind(P::Iscsi, &["iscsi://"], "iscsi://", E::Iscsi, FioTarget::IscsiUrl), "an iSCSI target"),
        own(kind(P::Smb, &["smb://"], "smb://", E::Smb, FioTarget::Missing("fio has no SMB client engine (a share mounted through the kernel would measure its cifs client too)")), "an SMB target"),
        own(kind(P::Nfs, &["nfs://"], "nfs://", E::Nfs, FioTarget::NfsUrl), "an NFS target"),
        local(kind(P::Files, &["files:", "tree:"], "files:", E::Auto, FioTarget::Set)),
    ]
};

/// The engine `auto` gives targets of these kinds, as the descriptor that decides
/// it: the first target's, when it needs its own engine (a mix is then refused by
/// [`engine_fits`]) or when every target's kind has that engine; `None`: chosen when
/// the files are opened, or a mix (judged as io_uring).
pub fn auto_engine(kinds: &[ProbeKind]) -> Option<&'static TargetDesc> {
    let first = kinds.first()?.desc();
    let same = kinds.iter().all(|k| k.desc().engine == first.engine);
    (first.engine != EngineKind::Auto && (first.needs_own.is_some() || same)).then_some(first)
}

/// Whether `engine` can drive targets of these kinds, or why not; `Auto` is judged
/// as what it would resolve to. One rule for the probe (before anything exists), the
/// opened targets and `convert --to fio`.
pub fn engine_fits(engine: EngineKind, kinds: &[ProbeKind]) -> Result<(), String> {
    let engine = match engine {
        EngineKind::Auto => auto_engine(kinds).map_or(EngineKind::Uring, |d| d.engine),
        e => e,
    };
    let name = engine.name();
    let descs = || kinds.iter().map(|k| k.desc());
    if let Some(d) = TARGETS.iter().find(|d| d.exclusive && d.engine == engine) {
        if descs().any(|t| t.kind != d.kind) {
            return Err(format!(
                "the {name} engine works only with {} targets",
                d.what
            ));
        }
    }
    if let Some(d) = descs().find(|d| d.needs_own.is_some() && d.engine != engine) {
        let noun = d.needs_own.unwrap_or_default();
        return Err(format!(
            "{noun} needs the {} engine, not {name}",
            d.engine.name()
        ));
    }
    let bytes = matches!(engine, EngineKind::Uring | EngineKind::Sync);
    match descs().find(|d| !d.local) {
        Some(d) if bytes => Err(format!(
            "the {name} engine needs file or device targets; {} targets use the {} engine",
            d.what,
            d.engine.name()
        )),
        _ => Ok(()),
    }
}

impl ProbeKind {
    /// This kind's descriptor.
    pub fn desc(self) -> &'static TargetDesc {
        &TARGETS[self as usize]
    }

    /// The kind a target URI names by its start; a path is a `File` (a block device
    /// is known only when probed); `None`: a scheme no kind has.
    pub fn of_uri(uri: &str) -> Option<ProbeKind> {
        let named = TARGETS
            .iter()
            .find(|d| d.prefixes.iter().any(|p| uri.starts_with(p)));
        match named {
            Some(d) => Some(d.kind),
            None if uri.contains("://") => None,
            None => Some(ProbeKind::File),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[rustfmt::skip] // a table: one URI a line
    fn the_table_follows_the_enum_and_uris_find_their_kind() {
        for (i, d) in TARGETS.iter().enumerate() {
            assert_eq!(d.kind as usize, i, "{:?} out of place", d.kind);
        }
        for (uri, kind) in [
            ("/dev/sdb", Some(ProbeKind::File)),
            ("data/f.dat", Some(ProbeKind::File)),
            ("mem:1g", Some(ProbeKind::Mem)),
            ("nbd+unix:///e?socket=/s", Some(ProbeKind::Nbd)),
            ("nfs://h/e/f", Some(ProbeKind::Nfs)),
            ("tree:/d?depth=2", Some(ProbeKind::Files)),
            ("rbd://pool/img", None),
        ] {
            assert_eq!(ProbeKind::of_uri(uri), kind, "{uri}");
        }
    }

    // Regression: the rule was two lists of kinds (the run's checks, its engine
    // choice); from the table, each case keeps its message.
    #[test]
    #[rustfmt::skip] // a table: one case a line
    fn the_engine_rule_gives_each_refusal_its_reason() {
        use EngineKind as E;
        use ProbeKind as P;
        let auto = |k: &[P]| auto_engine(k).map(|d| d.engine);
        assert_eq!(auto(&[P::Null, P::Null]), Some(E::Null));
        assert_eq!(auto(&[P::Nbd, P::File]), Some(E::Nbd));
        assert_eq!((auto(&[P::Mem, P::Null]), auto(&[P::File])), (None, None));
        for (engine, kinds, msg) in [
            (E::Nbd, &[P::File][..], "the nbd engine works only with nbd:// targets"),
            (E::Uring, &[P::Nbd], "an NBD target needs the nbd engine, not uring"),
            (E::Auto, &[P::File, P::Nfs], "an NFS target needs the nfs engine, not uring"),
            (E::Iscsi, &[P::Smb], "the iscsi engine works only with iscsi:// targets"),
            (E::Mem, &[P::Null], "the mem engine works only with mem:SIZE targets"),
            (E::Sync, &[P::Sim], "the sync engine needs file or device targets; sim:SIZE targets use the sim engine"),
            (E::Auto, &[P::Mem, P::Null], "the uring engine needs file or device targets; mem:SIZE targets use the mem engine"),
        ] {
            assert_eq!(engine_fits(engine, kinds).unwrap_err(), msg, "{engine:?} {kinds:?}");
        }
        for (engine, kinds) in [
            (E::Auto, &[P::Nbd, P::Nbd][..]),
            (E::Null, &[P::File]),
            (E::Auto, &[P::File, P::BlockDevice]),
            (E::Sync, &[P::Files]),
        ] {
            assert_eq!(engine_fits(engine, kinds), Ok(()), "{engine:?} {kinds:?}");
        }
    }
}
