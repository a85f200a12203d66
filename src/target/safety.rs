//! Device safety: before a single byte is written to a block device, make sure it is
//! not holding somebody's data. A device that is mounted, is held by device-mapper or
//! md, or carries a partition table or filesystem signature is refused unless the user
//! passes `--force`. The checks read sysfs, /proc and the device's first bytes only.

use std::fs;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Returns why the block device at `path` looks in use, or `None` if it looks blank.
pub fn block_device_in_use(path: &Path) -> std::io::Result<Option<String>> {
    let meta = fs::metadata(path)?;
    let rdev = meta.rdev();
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    if let Some(m) = mounted_at(major, minor) {
        return Ok(Some(format!("it is mounted at {m}")));
    }
    let sys = Path::new("/sys/dev/block").join(format!("{major}:{minor}"));
    if let Ok(entries) = fs::read_dir(sys.join("holders")) {
        let holders: Vec<String> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if !holders.is_empty() {
            return Ok(Some(format!(
                "it is held by {} (device-mapper, md or similar)",
                holders.join(", ")
            )));
        }
    }
    // Partitions of this device that are in use count too.
    if let Ok(entries) = fs::read_dir(&sys) {
        for e in entries.filter_map(|e| e.ok()) {
            let p = e.path();
            if p.join("partition").exists() {
                return Ok(Some(format!(
                    "it has partition {}",
                    e.file_name().to_string_lossy()
                )));
            }
        }
    }
    let mut head = vec![0u8; 128 * 1024];
    let mut f = fs::File::open(path)?;
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..])? {
            0 => break,
            k => n += k,
        }
    }
    head.truncate(n);
    Ok(signature(&head).map(|s| format!("it carries a {s} signature")))
}

/// The mount point of the device major:minor, from /proc/self/mountinfo.
fn mounted_at(major: u32, minor: u32) -> Option<String> {
    let info = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let want = format!("{major}:{minor}");
    info.lines().find_map(|l| {
        let mut it = l.split_whitespace();
        let dev = it.nth(2)?;
        let _root = it.next()?;
        let mnt = it.next()?;
        (dev == want).then(|| mnt.to_string())
    })
}

/// Recognises common partition-table and filesystem signatures in a device's head.
pub fn signature(head: &[u8]) -> Option<&'static str> {
    let at = |off: usize, magic: &[u8]| head.get(off..off + magic.len()) == Some(magic);
    if at(512, b"EFI PART") {
        return Some("GPT partition table");
    }
    if at(1080, &[0x53, 0xEF]) {
        return Some("ext2/3/4 filesystem");
    }
    if at(0, b"XFSB") {
        return Some("XFS filesystem");
    }
    if at(65600, b"_BHRfS_M") {
        return Some("btrfs filesystem");
    }
    if at(4086, b"SWAPSPACE2") || at(4086, b"SWAP-SPACE") {
        return Some("swap");
    }
    if at(512, b"LABELONE") || at(24, b"LVM2 001") {
        return Some("LVM physical volume");
    }
    if at(4096, &[0xfc, 0x4e, 0x2b, 0xa9]) || at(0, &[0xfc, 0x4e, 0x2b, 0xa9]) {
        return Some("Linux md RAID");
    }
    if at(3, b"NTFS    ") {
        return Some("NTFS filesystem");
    }
    if at(0x52, b"FAT32   ") || at(0x36, b"FAT16   ") || at(0x36, b"FAT12   ") {
        return Some("FAT filesystem");
    }
    if at(0, b"\x4c\x55\x4b\x53\xba\xbe") {
        return Some("LUKS encrypted volume");
    }
    if at(1024, &[0x5a, 0x46, 0x53, 0x31]) || at(0x3000, b"ZFS") {
        return Some("ZFS");
    }
    // A DOS/MBR partition table: boot signature and at least one non-empty entry.
    if at(510, &[0x55, 0xAA]) {
        let any_entry = (0..4).any(|i| {
            let e = 446 + i * 16;
            head.get(e + 4).is_some_and(|&t| t != 0)
        });
        if any_entry {
            return Some("DOS/MBR partition table");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_head_has_no_signature() {
        assert_eq!(signature(&vec![0u8; 128 * 1024]), None);
    }

    #[test]
    fn recognises_ext4_and_gpt() {
        let mut h = vec![0u8; 128 * 1024];
        h[1080] = 0x53;
        h[1081] = 0xEF;
        assert_eq!(signature(&h), Some("ext2/3/4 filesystem"));
        let mut g = vec![0u8; 4096];
        g[512..520].copy_from_slice(b"EFI PART");
        assert_eq!(signature(&g), Some("GPT partition table"));
    }

    #[test]
    fn mbr_needs_an_entry() {
        let mut h = vec![0u8; 4096];
        h[510] = 0x55;
        h[511] = 0xAA;
        assert_eq!(signature(&h), None);
        h[446 + 4] = 0x83;
        assert_eq!(signature(&h), Some("DOS/MBR partition table"));
    }
}
