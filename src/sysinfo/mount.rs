//! Which filesystem holds a path: /proc/self/mountinfo, longest mount-point prefix.
//! mountinfo rather than /proc/mounts because it also gives the device number and
//! separates per-mount options from superblock options.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// One line of /proc/self/mountinfo (see proc(5)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MountEntry {
    /// `MAJ:MIN` of the filesystem (anonymous `0:N` for btrfs, tmpfs, NFS…).
    pub dev: String,
    pub mount_point: String,
    pub mount_options: String,
    pub fs_type: String,
    pub source: String,
    pub super_options: String,
}

/// The filesystem a file target lives on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FsInfo {
    /// `ext4`, `xfs`, `btrfs`, `tmpfs`, `nfs4`…
    pub fs_type: String,
    pub mount_point: String,
    /// Per-mount options (`rw,noatime`).
    pub mount_options: String,
    /// Filesystem-specific options (`rw,discard,logbsize=256k`).
    pub super_options: String,
    /// What was mounted (`/dev/nvme0n1p2`, `server:/export`, `tmpfs`).
    pub source: String,
    /// `MAJ:MIN` as mountinfo reports it.
    pub dev: String,
}

impl From<&MountEntry> for FsInfo {
    fn from(m: &MountEntry) -> Self {
        FsInfo {
            fs_type: m.fs_type.clone(),
            mount_point: m.mount_point.clone(),
            mount_options: m.mount_options.clone(),
            super_options: m.super_options.clone(),
            source: m.source.clone(),
            dev: m.dev.clone(),
        }
    }
}

/// Parses mountinfo text; malformed lines are skipped.
pub(crate) fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<MountEntry> {
    // id parent MAJ:MIN root mount_point mount_options [optional…] - fstype source super_options
    let fields: Vec<&str> = line.split(' ').collect();
    let sep = fields.iter().position(|&f| f == "-")?;
    if sep < 6 || fields.len() < sep + 3 {
        return None;
    }
    Some(MountEntry {
        dev: fields[2].to_string(),
        mount_point: unescape(fields[4]),
        mount_options: fields[5].to_string(),
        fs_type: fields[sep + 1].to_string(),
        source: unescape(fields[sep + 2]),
        super_options: fields.get(sep + 3).copied().unwrap_or("").to_string(),
    })
}

/// Undoes the kernel's octal escaping of space, tab, newline and backslash (`\040`).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            if let Ok(byte) = u8::try_from(v) {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount holding `path` (absolute, symlinks resolved): the longest mount point
/// that is a whole-component prefix; among equals the later line, which is the one
/// mounted on top.
pub(crate) fn find_mount<'a>(mounts: &'a [MountEntry], path: &Path) -> Option<&'a MountEntry> {
    let mut best: Option<&MountEntry> = None;
    for m in mounts {
        if !path.starts_with(Path::new(&m.mount_point)) {
            continue;
        }
        if best.map_or(true, |b| m.mount_point.len() >= b.mount_point.len()) {
            best = Some(m);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
40 27 259:3 / /data rw,noatime shared:5 - xfs /dev/nvme0n1p1 rw,attr2,inode64,logbsize=256k
41 27 0:45 / /data2 rw,relatime shared:7 master:1 - btrfs /dev/sdb rw,space_cache=v2
42 27 0:46 / /mnt/my\\040disk rw - tmpfs tmpfs rw,size=1024k
43 40 0:47 / /data rw - tmpfs over rw
bogus line
";

    #[test]
    fn parses_fields_and_optional_tags() {
        let m = parse_mountinfo(SAMPLE);
        assert_eq!(m.len(), 6);
        assert_eq!(m[2].dev, "259:3");
        assert_eq!(m[2].mount_point, "/data");
        assert_eq!(m[2].mount_options, "rw,noatime");
        assert_eq!(m[2].fs_type, "xfs");
        assert_eq!(m[2].source, "/dev/nvme0n1p1");
        assert_eq!(m[2].super_options, "rw,attr2,inode64,logbsize=256k");
        assert_eq!(m[3].fs_type, "btrfs");
        assert_eq!(m[4].mount_point, "/mnt/my disk");
    }

    #[test]
    fn longest_prefix_by_component_and_overmount() {
        let m = parse_mountinfo(SAMPLE);
        let find = |p: &str| find_mount(&m, Path::new(p)).map(|e| e.mount_point.as_str());
        assert_eq!(find("/"), Some("/"));
        assert_eq!(find("/home/x"), Some("/"));
        // "/data2" must not match "/data".
        assert_eq!(find("/data2/f"), Some("/data2"));
        assert_eq!(find("/datax/f"), Some("/"));
        assert_eq!(find("/mnt/my disk/f"), Some("/mnt/my disk"));
        // Later mount on the same point hides the earlier one.
        assert_eq!(
            find_mount(&m, Path::new("/data/f")).unwrap().fs_type,
            "tmpfs"
        );
        assert!(find_mount(&[], Path::new("/x")).is_none());
    }
}
