//! vdbench's `openflags=` on an fsd or fwd: how its files are opened. `o_direct`
//! (or `directio`) bypasses the page cache, as ioscope's `direct` on the tree's
//! target does. `fsync` has vdbench fsync each file before it closes it, as a
//! thread moves on to its next file: `fsync_each_file`. `o_sync` and
//! `o_dsync` open each file so every write is stable when it completes; ioscope's
//! O_DSYNC (`--write-through`) is for a whole run's targets, not one tree, so they
//! are listed, as are words vdbench has for other systems.

use super::super::{list, Param};
use crate::plan::compat::{Loc, UnsupportedList};

/// What an `openflags=` asks for that ioscope does.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct OpenFlags {
    /// `o_direct`/`directio`: O_DIRECT.
    pub direct: bool,
    /// `fsync`: each file fsynced before it is closed.
    pub fsync: bool,
}

/// An `openflags=` given on an fwd or rd, with where: it replaces the fsd's flags
/// (vdbench's FwgEntry takes the fsd's, then the fwd's, then the rd's, whole).
pub(super) type Given = Option<(OpenFlags, Loc)>;

/// Reads `openflags=`; what ioscope cannot do is listed.
pub(super) fn read(p: &Param, unsupported: &mut UnsupportedList) -> OpenFlags {
    let mut flags = OpenFlags::default();
    for f in list(&p.value) {
        match f.to_ascii_lowercase().as_str() {
            "o_direct" | "directio" => flags.direct = true,
            "fsync" => flags.fsync = true,
            "o_sync" | "o_dsync" => unsupported.push(
                format!(
                    "openflags={f} — every write stable when it completes; ioscope opens \
                     O_DSYNC for a whole run (--write-through), not one tree"
                ),
                &p.loc,
            ),
            _ => unsupported.push(format!("openflags={f}"), &p.loc),
        }
    }
    flags
}

/// Reads a definition's `openflags=` as given (`None` without one).
pub(super) fn given(p: Option<&Param>, unsupported: &mut UnsupportedList) -> Given {
    p.map(|p| (read(p, unsupported), p.loc.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(value: &str) -> (OpenFlags, Vec<String>) {
        let p = Param {
            key: "openflags".into(),
            value: value.into(),
            loc: Loc::Line {
                source: "t.parm".into(),
                line: 1,
            },
            fresh: true,
        };
        let mut unsupported = UnsupportedList::default();
        let f = read(&p, &mut unsupported);
        (f, unsupported.0.into_iter().map(|u| u.option).collect())
    }

    #[test]
    fn direct_and_fsync_are_kept_sync_flags_are_listed() {
        let (f, listed) = flags("(o_direct,fsync)");
        assert_eq!((f.direct, f.fsync), (true, true));
        assert!(listed.is_empty(), "{listed:?}");
        let (f, listed) = flags("directio");
        assert_eq!((f.direct, f.fsync), (true, false));
        assert!(listed.is_empty());
        let (f, listed) = flags("o_dsync");
        assert_eq!(f, OpenFlags::default());
        assert!(listed[0].starts_with("openflags=o_dsync — every write stable"));
        let (_, listed) = flags("o_rdonly");
        assert_eq!(listed, ["openflags=o_rdonly"]);
    }
}
