//! Block devices from sysfs: identity, geometry and the request-queue settings that
//! change measured numbers (scheduler, nr_requests, read-ahead, write cache…), plus
//! device-mapper topology (multipath paths and their state) and loop-device backing.
//!
//! A device is found by number through /sys/dev/block/MAJ:MIN, which works for any
//! node name or symlink (/dev/mapper/x, /dev/disk/by-id/…). A partition has no queue
//! of its own, so queue settings come from its parent disk.

use super::{read_trimmed, Root};
use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Deepest device-mapper stack followed (LVM on crypt on multipath is 3).
const MAX_DM_DEPTH: usize = 8;

/// A block device and the queue it sits behind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockInfo {
    /// Kernel name (`sda1`, `nvme0n1`, `dm-0`, `loop3`).
    pub name: String,
    /// `MAJ:MIN`.
    pub dev: String,
    /// For a partition, the disk whose queue settings are shown.
    pub parent: Option<String>,
    /// The name queue settings were read from (and fixes must target).
    pub queue_device: String,
    pub model: Option<String>,
    pub vendor: Option<String>,
    /// Size of this device (the partition, for a partition).
    pub size_bytes: Option<u64>,
    pub logical_block_size: Option<u32>,
    pub physical_block_size: Option<u32>,
    pub rotational: Option<bool>,
    /// Active I/O scheduler (the one in `[brackets]`).
    pub scheduler: Option<String>,
    /// Every scheduler the kernel offers for this queue.
    #[serde(default)]
    pub schedulers_available: Vec<String>,
    pub nr_requests: Option<u32>,
    pub read_ahead_kb: Option<u32>,
    pub max_sectors_kb: Option<u32>,
    /// `write back` or `write through`, as the kernel treats the device cache.
    pub write_cache: Option<String>,
    /// 0: complete on any CPU, 1: same group, 2: the submitting CPU.
    pub rq_affinity: Option<u8>,
    /// 0: merge, 1: only simple merges, 2: never merge.
    pub nomerges: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dm: Option<DmInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_dev: Option<LoopInfo>,
}

/// Device-mapper identity and the devices underneath.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DmInfo {
    /// Name under /dev/mapper.
    pub name: Option<String>,
    pub uuid: Option<String>,
    /// Target type guessed from the uuid prefix: `mpath`, `lvm`, `crypt`, `part`…
    pub kind: Option<String>,
    /// True when this is a dm-multipath map: `slaves` are its paths.
    pub multipath: bool,
    #[serde(default)]
    pub slaves: Vec<SlaveInfo>,
}

/// A device under a device-mapper device (a multipath path, an LVM PV…).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlaveInfo {
    pub name: String,
    /// SCSI device state (`running`, `offline`, `blocked`…); `None` for non-SCSI.
    pub state: Option<String>,
    pub rotational: Option<bool>,
    pub scheduler: Option<String>,
    /// When the slave is itself a dm device: its name and its own slaves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dm: Option<Box<DmInfo>>,
}

/// What a loop device reads and writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopInfo {
    pub backing_file: Option<String>,
    /// True when the loop device bypasses the page cache of its backing file.
    pub direct_io: Option<bool>,
    /// The device under the backing file.
    pub backing_device: Option<String>,
    /// Whether that device is rotational (to judge the loop's own flag).
    pub backing_rotational: Option<bool>,
}

/// Splits a Linux `dev_t` into major and minor (glibc's encoding).
pub(crate) fn dev_major_minor(dev: u64) -> (u32, u32) {
    let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0x0000_0fff);
    let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0x0000_00ff);
    (major as u32, minor as u32)
}

/// The active scheduler and the available ones from `queue/scheduler`
/// (`none [mq-deadline] kyber bfq`). A queue with no choice prints just `none`.
pub(crate) fn parse_scheduler(text: &str) -> (Option<String>, Vec<String>) {
    let mut active = None;
    let mut all = Vec::new();
    for w in text.split_whitespace() {
        match w.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
            Some(a) => {
                active = Some(a.to_string());
                all.push(a.to_string());
            }
            None => all.push(w.to_string()),
        }
    }
    if active.is_none() && all.len() == 1 {
        active = all.first().cloned();
    }
    (active, all)
}

/// `mpath`, `lvm`, `crypt`, `part`… from a dm uuid such as `mpath-3600a0b8…`,
/// `LVM-…`, `CRYPT-LUKS2-…`, `part1-mpath-…`.
pub(crate) fn dm_kind(uuid: &str) -> Option<String> {
    let prefix = uuid.split('-').next()?;
    if prefix.is_empty() || prefix.len() == uuid.len() {
        return None;
    }
    let lower = prefix.to_ascii_lowercase();
    Some(match lower.trim_end_matches(|c: char| c.is_ascii_digit()) {
        "part" => "part".to_string(),
        other => other.to_string(),
    })
}

fn parse_num<T: std::str::FromStr>(s: Option<String>) -> Option<T> {
    s?.trim().parse().ok()
}

fn parse_bool01(s: Option<String>) -> Option<bool> {
    match s?.trim() {
        "1" | "Y" | "y" => Some(true),
        "0" | "N" | "n" => Some(false),
        _ => None,
    }
}

/// The sysfs directory of a device and of the disk that owns its queue.
fn device_dirs(root: &Root, major: u32, minor: u32) -> Option<(PathBuf, PathBuf)> {
    let dir = std::fs::canonicalize(root.path(&format!("/sys/dev/block/{major}:{minor}"))).ok()?;
    let disk = if dir.join("partition").exists() {
        dir.parent()?.to_path_buf()
    } else {
        dir.clone()
    };
    Some((dir, disk))
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Everything sysfs says about the block device `major:minor`; `None` when it is not
/// a block device this kernel knows (anonymous filesystems, NFS).
pub(crate) fn block_info(root: &Root, major: u32, minor: u32) -> Option<BlockInfo> {
    let (dir, disk) = device_dirs(root, major, minor)?;
    let q = disk.join("queue");
    let rd = |p: PathBuf| read_trimmed(&p);
    let (scheduler, schedulers_available) = rd(q.join("scheduler"))
        .map(|s| parse_scheduler(&s))
        .unwrap_or_default();
    let name = name_of(&dir);
    let queue_device = name_of(&disk);
    Some(BlockInfo {
        parent: (dir != disk).then(|| queue_device.clone()),
        dev: format!("{major}:{minor}"),
        model: rd(disk.join("device/model")),
        vendor: rd(disk.join("device/vendor")),
        // sysfs `size` is always in 512-byte sectors, whatever the block size.
        size_bytes: parse_num::<u64>(rd(dir.join("size"))).and_then(|s| s.checked_mul(512)),
        logical_block_size: parse_num(rd(q.join("logical_block_size"))),
        physical_block_size: parse_num(rd(q.join("physical_block_size"))),
        rotational: parse_bool01(rd(q.join("rotational"))),
        scheduler,
        schedulers_available,
        nr_requests: parse_num(rd(q.join("nr_requests"))),
        read_ahead_kb: parse_num(rd(q.join("read_ahead_kb"))),
        max_sectors_kb: parse_num(rd(q.join("max_sectors_kb"))),
        write_cache: rd(q.join("write_cache")),
        rq_affinity: parse_num(rd(q.join("rq_affinity"))),
        nomerges: parse_num(rd(q.join("nomerges"))),
        dm: dm_info(&disk, 0),
        loop_dev: loop_info(root, &disk),
        name,
        queue_device,
    })
}

/// The zoned model of block device `major:minor` (`host-managed`, `host-aware`)
/// from its disk's `queue/zoned`; `None` when it is not zoned (`none`) or sysfs does
/// not say.
pub(crate) fn zoned_model(root: &Root, major: u32, minor: u32) -> Option<String> {
    let (_, disk) = device_dirs(root, major, minor)?;
    read_trimmed(&disk.join("queue/zoned")).filter(|m| m != "none")
}

/// The zoned model of the block device at `path` (see [`zoned_model`]); `None` for
/// anything that is not a zoned block device, files included.
pub(crate) fn zoned_model_at(path: &Path) -> Option<String> {
    use std::os::unix::fs::FileTypeExt;
    let md = std::fs::metadata(path).ok()?;
    if !md.file_type().is_block_device() {
        return None;
    }
    let (major, minor) = dev_major_minor(md.rdev());
    zoned_model(&Root::system(), major, minor)
}

fn dm_info(disk: &Path, depth: usize) -> Option<DmInfo> {
    if depth > MAX_DM_DEPTH || !disk.join("dm").is_dir() {
        return None;
    }
    let uuid = read_trimmed(&disk.join("dm/uuid"));
    let kind = uuid.as_deref().and_then(dm_kind);
    let mut slaves: Vec<SlaveInfo> = std::fs::read_dir(disk.join("slaves"))
        .map(|rd| rd.flatten().map(|e| slave_info(&e.path(), depth)).collect())
        .unwrap_or_default();
    slaves.sort_by(|a, b| a.name.cmp(&b.name));
    Some(DmInfo {
        name: read_trimmed(&disk.join("dm/name")),
        multipath: kind.as_deref() == Some("mpath"),
        kind,
        uuid,
        slaves,
    })
}

fn slave_info(link: &Path, depth: usize) -> SlaveInfo {
    let name = name_of(link);
    let Ok(dir) = std::fs::canonicalize(link) else {
        return SlaveInfo {
            name,
            state: None,
            rotational: None,
            scheduler: None,
            dm: None,
        };
    };
    let disk = if dir.join("partition").exists() {
        dir.parent().map(Path::to_path_buf).unwrap_or(dir.clone())
    } else {
        dir.clone()
    };
    SlaveInfo {
        name,
        state: read_trimmed(&disk.join("device/state")),
        rotational: parse_bool01(read_trimmed(&disk.join("queue/rotational"))),
        scheduler: read_trimmed(&disk.join("queue/scheduler")).and_then(|s| parse_scheduler(&s).0),
        dm: dm_info(&disk, depth + 1).map(Box::new),
    }
}

fn loop_info(root: &Root, disk: &Path) -> Option<LoopInfo> {
    if !name_of(disk).starts_with("loop") {
        return None;
    }
    let backing_file = read_trimmed(&disk.join("loop/backing_file"));
    let direct_io = parse_bool01(read_trimmed(&disk.join("loop/dio")));
    // Only the backing disk's own flags: following a loop stack fully is not needed
    // to judge whether this loop device's rotational flag is plausible.
    let backing = backing_file
        .as_deref()
        .and_then(|f| std::fs::metadata(f).ok())
        .and_then(|md| {
            let (maj, min) = dev_major_minor(md.dev());
            let (_, bdisk) = device_dirs(root, maj, min)?;
            let rot = parse_bool01(read_trimmed(&bdisk.join("queue/rotational")));
            Some((name_of(&bdisk), rot))
        });
    Some(LoopInfo {
        backing_file,
        direct_io,
        backing_device: backing.as_ref().map(|b| b.0.clone()),
        backing_rotational: backing.and_then(|b| b.1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    #[test]
    fn scheduler_active_and_available() {
        assert_eq!(
            parse_scheduler("none [mq-deadline] kyber bfq\n"),
            (
                Some("mq-deadline".into()),
                vec![
                    "none".into(),
                    "mq-deadline".into(),
                    "kyber".into(),
                    "bfq".into()
                ]
            )
        );
        assert_eq!(
            parse_scheduler("[none] mq-deadline").0.as_deref(),
            Some("none")
        );
        // dm bio-based and some virtual queues print just "none".
        assert_eq!(parse_scheduler("none").0.as_deref(), Some("none"));
        assert_eq!(parse_scheduler("").0, None);
    }

    #[test]
    fn dev_t_split() {
        // makedev(8, 1) and makedev(259, 300000) in glibc's encoding.
        assert_eq!(dev_major_minor((8 << 8) | 1), (8, 1));
        let (ma, mi) = (259u64, 300_000u64);
        let dev = ((ma & 0xfff) << 8) | ((ma & !0xfff) << 32) | (mi & 0xff) | ((mi & !0xff) << 12);
        assert_eq!(dev_major_minor(dev), (259, 300_000));
    }

    #[test]
    fn dm_kinds() {
        assert_eq!(
            dm_kind("mpath-3600a098038303053453f463045727a6f").as_deref(),
            Some("mpath")
        );
        assert_eq!(dm_kind("LVM-abcdef").as_deref(), Some("lvm"));
        assert_eq!(dm_kind("CRYPT-LUKS2-abc-x").as_deref(), Some("crypt"));
        assert_eq!(dm_kind("part1-mpath-3600").as_deref(), Some("part"));
        assert_eq!(dm_kind("noprefix"), None);
    }

    fn write(p: &Path, s: &str) {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, s).unwrap();
    }

    /// A fake sysfs: sda with partition sda1, and dm-0 multipath over sdb (running)
    /// and sdc (offline).
    fn fake_sys() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let sda = r.join("sys/devices/pci0/host0/block/sda");
        write(&sda.join("device/model"), "Samsung SSD 870\n");
        write(&sda.join("device/vendor"), "ATA     \n");
        write(&sda.join("size"), "1000\n");
        write(
            &sda.join("queue/scheduler"),
            "none mq-deadline kyber [bfq]\n",
        );
        write(&sda.join("queue/rotational"), "0\n");
        write(&sda.join("queue/logical_block_size"), "512\n");
        write(&sda.join("queue/physical_block_size"), "4096\n");
        write(&sda.join("queue/nr_requests"), "64\n");
        write(&sda.join("queue/read_ahead_kb"), "128\n");
        write(&sda.join("queue/max_sectors_kb"), "1280\n");
        write(&sda.join("queue/write_cache"), "write back\n");
        write(&sda.join("queue/rq_affinity"), "1\n");
        write(&sda.join("queue/nomerges"), "0\n");
        write(&sda.join("sda1/partition"), "1\n");
        write(&sda.join("sda1/size"), "800\n");
        for (n, state) in [("sdb", "running"), ("sdc", "offline")] {
            let d = r.join(format!("sys/devices/pci0/host1/block/{n}"));
            write(&d.join("device/state"), state);
            write(&d.join("queue/rotational"), "1");
            write(&d.join("queue/scheduler"), "[mq-deadline] none");
        }
        let dm = r.join("sys/devices/virtual/block/dm-0");
        write(&dm.join("dm/name"), "mpatha\n");
        write(&dm.join("dm/uuid"), "mpath-3600a098\n");
        write(&dm.join("queue/scheduler"), "[mq-deadline] none\n");
        write(&dm.join("size"), "2048\n");
        fs::create_dir_all(dm.join("slaves")).unwrap();
        symlink("../../../../pci0/host1/block/sdb", dm.join("slaves/sdb")).unwrap();
        symlink("../../../../pci0/host1/block/sdc", dm.join("slaves/sdc")).unwrap();
        let devblock = r.join("sys/dev/block");
        fs::create_dir_all(&devblock).unwrap();
        symlink("../../devices/pci0/host0/block/sda", devblock.join("8:0")).unwrap();
        symlink(
            "../../devices/pci0/host0/block/sda/sda1",
            devblock.join("8:1"),
        )
        .unwrap();
        symlink("../../devices/virtual/block/dm-0", devblock.join("253:0")).unwrap();
        t
    }

    #[test]
    fn zoned_model_comes_from_the_disk_queue() {
        let t = fake_sys();
        let root = Root::at(t.path());
        // No queue/zoned, or "none": not zoned.
        assert_eq!(zoned_model(&root, 8, 0), None);
        let q = t
            .path()
            .join("sys/devices/pci0/host0/block/sda/queue/zoned");
        write(&q, "none\n");
        assert_eq!(zoned_model(&root, 8, 1), None);
        // A partition of a host-managed disk is zoned too.
        write(&q, "host-managed\n");
        assert_eq!(zoned_model(&root, 8, 1).as_deref(), Some("host-managed"));
        assert_eq!(zoned_model_at(Path::new("/proc/self/status")), None);
    }

    #[test]
    fn partition_uses_parent_queue() {
        let t = fake_sys();
        let root = Root::at(t.path());
        let b = block_info(&root, 8, 1).unwrap();
        assert_eq!(b.name, "sda1");
        assert_eq!(b.parent.as_deref(), Some("sda"));
        assert_eq!(b.queue_device, "sda");
        assert_eq!(b.size_bytes, Some(800 * 512));
        assert_eq!(b.model.as_deref(), Some("Samsung SSD 870"));
        assert_eq!(b.vendor.as_deref(), Some("ATA"));
        assert_eq!(b.scheduler.as_deref(), Some("bfq"));
        assert_eq!(b.rotational, Some(false));
        assert_eq!(b.logical_block_size, Some(512));
        assert_eq!(b.physical_block_size, Some(4096));
        assert_eq!(b.nr_requests, Some(64));
        assert_eq!(b.read_ahead_kb, Some(128));
        assert_eq!(b.max_sectors_kb, Some(1280));
        assert_eq!(b.write_cache.as_deref(), Some("write back"));
        assert_eq!(b.rq_affinity, Some(1));
        assert_eq!(b.nomerges, Some(0));
        assert!(b.dm.is_none() && b.loop_dev.is_none());
        let whole = block_info(&root, 8, 0).unwrap();
        assert_eq!(whole.parent, None);
        assert_eq!(whole.size_bytes, Some(1000 * 512));
    }

    #[test]
    fn multipath_topology_and_missing_files() {
        let t = fake_sys();
        let root = Root::at(t.path());
        let b = block_info(&root, 253, 0).unwrap();
        assert_eq!(b.name, "dm-0");
        // Files absent from the fake tree are None, not errors.
        assert_eq!(b.rotational, None);
        assert_eq!(b.nr_requests, None);
        let dm = b.dm.unwrap();
        assert_eq!(dm.name.as_deref(), Some("mpatha"));
        assert!(dm.multipath);
        let states: Vec<_> = dm
            .slaves
            .iter()
            .map(|s| (s.name.as_str(), s.state.as_deref()))
            .collect();
        assert_eq!(states, [("sdb", Some("running")), ("sdc", Some("offline"))]);
        assert_eq!(dm.slaves[0].scheduler.as_deref(), Some("mq-deadline"));
        assert!(block_info(&root, 1, 99).is_none());
    }
}
