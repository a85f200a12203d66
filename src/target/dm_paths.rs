//! The paths of a kernel dm-multipath device, watched from sysfs. ioscope does not
//! route I/O over them (the kernel does); it samples each path's counters
//! (`/sys/block/<slave>/stat`) and state (`/sys/block/<slave>/device/state`) once
//! per interval, so the kernel's own path distribution and failover show up in
//! `runs[].paths[]` and `runs[].intervals[].paths[]` the same way as ioscope's own
//! multipath. A device is taken as dm-multipath when its `dm/uuid` starts with
//! `mpath-` (what multipathd gives its maps; LVM's dm-linear has slaves too, but
//! they are not paths) and it lists slaves.
//!
//! `IOSCOPE_SYSFS_ROOT` names a directory standing in for `/sys`, so a fake tree can
//! be tested (this machine has no device mapper).

use std::path::{Path, PathBuf};

/// Environment variable naming a directory that stands in for `/sys`.
pub const SYSFS_ROOT_ENV: &str = "IOSCOPE_SYSFS_ROOT";
/// Bytes per sector in `stat` (always 512, whatever the device's block size).
const SECTOR_BYTES: u64 = 512;

/// One path's counters from its `stat` file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct DiskStat {
    ios: u64,
    bytes: u64,
}

/// What one path did since the previous sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathDelta {
    pub ios: u64,
    pub bytes: u64,
    /// The SCSI device state is `running` (or the path has no such file).
    pub up: bool,
}

/// The slaves (paths) of one dm-multipath device and their last counters.
#[derive(Debug)]
pub struct DmPaths {
    sys: PathBuf,
    /// The device's kernel name (`dm-3`).
    pub device: String,
    /// Kernel names of the paths (`sdb`, `sdc`), sorted.
    pub slaves: Vec<String>,
    prev: Vec<DiskStat>,
}

impl DmPaths {
    /// The dm-multipath paths behind block device `target` (`/dev/mapper/X`,
    /// `/dev/dm-N`), from `/sys` or `$IOSCOPE_SYSFS_ROOT`; `None` when it is not one.
    pub fn discover(target: &Path) -> Option<DmPaths> {
        let sys =
            std::env::var_os(SYSFS_ROOT_ENV).map_or_else(|| PathBuf::from("/sys"), PathBuf::from);
        Self::discover_in(&sys, target)
    }

    /// [`DmPaths::discover`] with the sysfs directory given.
    pub fn discover_in(sys: &Path, target: &Path) -> Option<DmPaths> {
        // /dev/mapper/X is a symlink to ../dm-N; a name that does not resolve here
        // (a fake tree in tests) is taken as it is.
        let real = std::fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
        let device = real.file_name()?.to_str()?.to_string();
        let dev_dir = sys.join("block").join(&device);
        let uuid = std::fs::read_to_string(dev_dir.join("dm/uuid")).ok()?;
        if !uuid.trim().starts_with("mpath-") {
            return None;
        }
        let mut slaves: Vec<String> = std::fs::read_dir(dev_dir.join("slaves"))
            .ok()?
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        if slaves.is_empty() {
            return None;
        }
        slaves.sort();
        let mut d = DmPaths {
            sys: sys.to_path_buf(),
            device,
            prev: vec![DiskStat::default(); slaves.len()],
            slaves,
        };
        d.prev = d
            .slaves
            .iter()
            .map(|s| d.read_stat(s).unwrap_or_default())
            .collect();
        Some(d)
    }

    /// `(name, uri)` per path: the slave's kernel name and `/dev/<name>`.
    pub fn described(&self) -> Vec<(String, String)> {
        self.slaves
            .iter()
            .map(|s| (s.clone(), format!("/dev/{s}")))
            .collect()
    }

    /// A path's counters; `None` when its `stat` is missing or malformed (a path
    /// being removed), and then the previous counters stand.
    fn read_stat(&self, slave: &str) -> Option<DiskStat> {
        let text = std::fs::read_to_string(self.sys.join("block").join(slave).join("stat")).ok()?;
        let f: Vec<u64> = text
            .split_whitespace()
            .map(|x| x.parse().ok())
            .collect::<Option<_>>()?;
        if f.len() < 7 {
            return None;
        }
        // Fields: reads, reads merged, sectors read, ms reading, writes, writes
        // merged, sectors written, … (Documentation/block/stat.rst).
        Some(DiskStat {
            ios: f[0] + f[4],
            bytes: (f[2] + f[6]) * SECTOR_BYTES,
        })
    }

    fn is_up(&self, slave: &str) -> bool {
        match std::fs::read_to_string(self.sys.join("block").join(slave).join("device/state")) {
            Ok(s) => s.trim() == "running",
            Err(_) => true,
        }
    }

    /// Every path's counts since the previous call (or discovery), in `slaves` order.
    /// A counter that went backwards (device re-created) counts from zero.
    pub fn sample(&mut self) -> Vec<PathDelta> {
        let mut out = Vec::with_capacity(self.slaves.len());
        for i in 0..self.slaves.len() {
            let prev = self.prev[i];
            let now = self.read_stat(&self.slaves[i]).unwrap_or(prev);
            let delta = |n: u64, p: u64| if n >= p { n - p } else { n };
            out.push(PathDelta {
                ios: delta(now.ios, prev.ios),
                bytes: delta(now.bytes, prev.bytes),
                up: self.is_up(&self.slaves[i]),
            });
            self.prev[i] = now;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn stat(sys: &Path, slave: &str, reads: u64, writes: u64) {
        // 8 sectors (4 KiB) per I/O.
        write(
            &sys.join(format!("block/{slave}/stat")),
            &format!(
                "{reads} 0 {} 10 {writes} 0 {} 20 0 30 30 0 0 0 0\n",
                reads * 8,
                writes * 8
            ),
        );
    }

    #[test]
    fn samples_each_slave_of_a_multipath_map() {
        let d = tempfile::tempdir().unwrap();
        let sys = d.path();
        write(&sys.join("block/dm-3/dm/uuid"), "mpath-3600a0b80\n");
        for s in ["sdc", "sdb"] {
            write(&sys.join(format!("block/dm-3/slaves/{s}")), "");
        }
        stat(sys, "sdb", 100, 0);
        stat(sys, "sdc", 50, 5);
        write(&sys.join("block/sdc/device/state"), "running\n");
        let mut dm = DmPaths::discover_in(sys, Path::new("/dev/dm-3")).expect("a multipath map");
        assert_eq!(dm.slaves, ["sdb", "sdc"]);
        assert_eq!(dm.described()[1], ("sdc".into(), "/dev/sdc".into()));
        stat(sys, "sdb", 130, 10);
        stat(sys, "sdc", 50, 5);
        write(&sys.join("block/sdc/device/state"), "offline\n");
        let s = dm.sample();
        assert_eq!(
            s,
            [
                PathDelta {
                    ios: 40,
                    bytes: 40 * 4096,
                    up: true
                },
                PathDelta {
                    ios: 0,
                    bytes: 0,
                    up: false
                },
            ]
        );
        // Nothing changed since: zero, not the totals again.
        assert_eq!(dm.sample()[0].ios, 0);
    }

    #[test]
    fn other_devices_are_not_multipath() {
        let d = tempfile::tempdir().unwrap();
        let sys = d.path();
        // LVM: dm with slaves, not a multipath map.
        write(&sys.join("block/dm-1/dm/uuid"), "LVM-abc\n");
        write(&sys.join("block/dm-1/slaves/sda2"), "");
        assert!(DmPaths::discover_in(sys, Path::new("/dev/dm-1")).is_none());
        // A multipath map with no slaves listed, and a plain disk.
        write(&sys.join("block/dm-2/dm/uuid"), "mpath-x\n");
        std::fs::create_dir_all(sys.join("block/dm-2/slaves")).unwrap();
        assert!(DmPaths::discover_in(sys, Path::new("/dev/dm-2")).is_none());
        assert!(DmPaths::discover_in(sys, Path::new("/dev/sda")).is_none());
    }
}
