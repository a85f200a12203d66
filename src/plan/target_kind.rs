//! Target kinds as descriptors: each kind of target is declared once, in
//! [`TARGETS`], with how its URIs start, the engine `auto` gives it and how fio names
//! it; the run's engine checks and `convert --to fio` read the table instead of
//! matching on kinds. Parsing a URI's details and opening it stay in `target`.
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

/// One target kind: how it is named and which engine runs it.
#[derive(Debug)]
pub struct TargetDesc {
    pub kind: ProbeKind,
    /// How its URIs start; empty: a path (files and block devices).
    pub prefixes: &'static [&'static str],
    /// The engine `auto` gives it; `Auto`: chosen when it is opened, by where its
    /// data lives (`crate::run::engine_choice`).
    pub engine: EngineKind,
    pub fio: FioTarget,
}

const fn kind(kind: ProbeKind, prefixes: &'static [&'static str]) -> TargetDesc {
    TargetDesc {
        kind,
        prefixes,
        engine: EngineKind::Auto,
        fio: FioTarget::Path,
    }
}

/// A kind that `auto` runs on `engine`.
const fn runs(mut d: TargetDesc, engine: EngineKind) -> TargetDesc {
    d.engine = engine;
    d
}

const fn fio(mut d: TargetDesc, fio: FioTarget) -> TargetDesc {
    d.fio = fio;
    d
}

const NO_MEM: FioTarget =
    FioTarget::Missing("fio has no equivalent: mem: is memory inside ioscope's own process");
const NO_NULL: FioTarget =
    FioTarget::Missing("not translated to fio yet (fio's null engine takes a size and no file)");
const NO_SIM: FioTarget = FioTarget::Missing(
    "fio has no equivalent: sim: is a simulated device (a queueing model of service times)",
);
const NO_SMB: FioTarget = FioTarget::Missing(
    "fio has no SMB client engine (a share mounted through the kernel would measure its cifs \
     client too)",
);

/// Every target kind, in [`ProbeKind`]'s order.
#[rustfmt::skip] // a table: one kind a line
pub static TARGETS: [TargetDesc; 10] = [
    kind(ProbeKind::File, &[]),
    kind(ProbeKind::BlockDevice, &[]),
    fio(runs(kind(ProbeKind::Mem, &["mem:"]), EngineKind::Mem), NO_MEM),
    fio(runs(kind(ProbeKind::Null, &["null:"]), EngineKind::Null), NO_NULL),
    fio(runs(kind(ProbeKind::Sim, &["sim:"]), EngineKind::Sim), NO_SIM),
    fio(runs(kind(ProbeKind::Nbd, &["nbd://", "nbd+unix://"]), EngineKind::Nbd), FioTarget::NbdUri),
    fio(runs(kind(ProbeKind::Iscsi, &["iscsi://"]), EngineKind::Iscsi), FioTarget::IscsiUrl),
    fio(runs(kind(ProbeKind::Smb, &["smb://"]), EngineKind::Smb), NO_SMB),
    fio(runs(kind(ProbeKind::Nfs, &["nfs://"]), EngineKind::Nfs), FioTarget::NfsUrl),
    fio(kind(ProbeKind::Files, &["files:", "tree:"]), FioTarget::Set),
];

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
}
