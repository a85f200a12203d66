//! The network environment behind the numbers, captured on both ends: the
//! interface a connection leaves by, its MTU and the path MTU the kernel holds,
//! the socket buffer sizes actually in effect and the sysctls that cap them, the
//! congestion control, and the interface's offloads (read with the SIOCETHTOOL
//! ioctl's legacy "get" commands, so no ethtool binary is needed). Never fails:
//! what cannot be read is `None`. Advice compares the two ends.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::{IpAddr, TcpStream};
use std::os::fd::AsRawFd;

use super::sockopt;

/// One end's network settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NetEnv {
    pub local_addr: Option<String>,
    /// The interface holding the local address (`lo`, `eth0`, a veth).
    pub interface: Option<String>,
    pub interface_mtu: Option<u64>,
    /// Path MTU of the data connection (IP_MTU).
    pub path_mtu: Option<u64>,
    /// SO_SNDBUF / SO_RCVBUF of a data socket as the kernel reports them.
    pub sndbuf_bytes: Option<u64>,
    pub rcvbuf_bytes: Option<u64>,
    /// net.core.rmem_max / wmem_max: the cap on an explicitly set window.
    pub rmem_max: Option<u64>,
    pub wmem_max: Option<u64>,
    /// net.ipv4.tcp_rmem / tcp_wmem (min default max): the autotuning range.
    pub tcp_rmem: Option<String>,
    pub tcp_wmem: Option<String>,
    pub congestion: Option<String>,
    /// Offloads by ethtool's names (tso, gso, gro, sg, rx-checksum, tx-checksum).
    #[serde(default)]
    pub offloads: BTreeMap<String, bool>,
    pub gso_max_size: Option<u64>,
    pub gro_max_size: Option<u64>,
    /// Link speed (physical interfaces only), Mbit/s.
    pub speed_mbps: Option<u64>,
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn read_str(path: &str) -> Option<String> {
    let s = std::fs::read_to_string(path).ok()?;
    Some(s.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Captures this end's settings for a connected data socket.
pub fn capture(sock: &TcpStream) -> NetEnv {
    let local = sock.local_addr().ok();
    let interface = local.and_then(|a| interface_of(a.ip()));
    let (snd, rcv) = sockopt::buffers(sock);
    let mut env = NetEnv {
        local_addr: local.map(|a| a.to_string()),
        path_mtu: sockopt::path_mtu(sock),
        sndbuf_bytes: snd,
        rcvbuf_bytes: rcv,
        rmem_max: read_u64("/proc/sys/net/core/rmem_max"),
        wmem_max: read_u64("/proc/sys/net/core/wmem_max"),
        tcp_rmem: read_str("/proc/sys/net/ipv4/tcp_rmem"),
        tcp_wmem: read_str("/proc/sys/net/ipv4/tcp_wmem"),
        congestion: sockopt::congestion(sock),
        ..Default::default()
    };
    if let Some(ifname) = &interface {
        let sys = format!("/sys/class/net/{ifname}");
        env.interface_mtu = read_u64(&format!("{sys}/mtu"));
        env.gso_max_size = read_u64(&format!("{sys}/gso_max_size"));
        env.gro_max_size = read_u64(&format!("{sys}/gro_max_size"));
        env.speed_mbps = read_u64(&format!("{sys}/speed")).filter(|s| *s > 0 && *s < 10_000_000);
        env.offloads = offloads(ifname);
    }
    env.interface = interface;
    env
}

/// The interface that holds `ip` (getifaddrs).
fn interface_of(ip: IpAddr) -> Option<String> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs allocates a list we free below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return None;
    }
    let mut found = None;
    let mut p = head;
    while !p.is_null() {
        // SAFETY: p walks the list getifaddrs returned; each node is valid until freed.
        let ifa = unsafe { &*p };
        p = ifa.ifa_next;
        if ifa.ifa_addr.is_null() {
            continue;
        }
        // SAFETY: ifa_addr is non-null and points at a sockaddr whose family says
        // which larger struct it is.
        let fam = unsafe { (*ifa.ifa_addr).sa_family } as libc::c_int;
        let addr = match fam {
            libc::AF_INET => {
                // SAFETY: family AF_INET means a sockaddr_in.
                let sin = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
                IpAddr::from(sin.sin_addr.s_addr.to_ne_bytes())
            }
            libc::AF_INET6 => {
                // SAFETY: family AF_INET6 means a sockaddr_in6.
                let sin6 = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in6) };
                IpAddr::from(sin6.sin6_addr.s6_addr)
            }
            _ => continue,
        };
        let same = match (addr, ip) {
            (a, IpAddr::V6(v6)) => v6.to_ipv4_mapped().map(IpAddr::V4) == Some(a) || a == ip,
            (a, b) => a == b,
        };
        if same {
            // SAFETY: ifa_name is a NUL-terminated string owned by the list.
            let name = unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) };
            found = Some(name.to_string_lossy().into_owned());
            break;
        }
    }
    // SAFETY: head came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    found
}

/// `struct ifreq` with the `ifr_data` member, as SIOCETHTOOL reads it.
#[repr(C)]
struct IfreqData {
    name: [libc::c_char; libc::IFNAMSIZ],
    data: *mut libc::c_void,
    _pad: [u8; 16],
}

/// `struct ethtool_value`.
#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// The legacy ethtool "get" commands for the offloads worth recording.
const OFFLOADS: [(&str, u32); 6] = [
    ("rx-checksum", 0x14), // ETHTOOL_GRXCSUM
    ("tx-checksum", 0x16), // ETHTOOL_GTXCSUM
    ("sg", 0x18),          // ETHTOOL_GSG
    ("tso", 0x1e),         // ETHTOOL_GTSO
    ("gso", 0x23),         // ETHTOOL_GGSO
    ("gro", 0x2b),         // ETHTOOL_GGRO
];

fn offloads(ifname: &str) -> BTreeMap<String, bool> {
    let mut out = BTreeMap::new();
    if ifname.len() >= libc::IFNAMSIZ {
        return out;
    }
    // SAFETY: a plain datagram socket for the ioctl; closed by OwnedFd.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return out;
    }
    // SAFETY: fd is fresh and owned here.
    let sock = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    for (name, cmd) in OFFLOADS {
        let mut v = EthtoolValue { cmd, data: 0 };
        let mut req = IfreqData {
            name: [0; libc::IFNAMSIZ],
            data: (&mut v as *mut EthtoolValue).cast(),
            _pad: [0; 16],
        };
        for (d, s) in req.name.iter_mut().zip(ifname.bytes()) {
            *d = s as libc::c_char;
        }
        // SAFETY: req is a valid ifreq whose data points at a live ethtool_value;
        // the kernel writes only `v.data`.
        let rc = unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCETHTOOL as _, &mut req) };
        if rc == 0 {
            out.insert(name.to_string(), v.data != 0);
        }
    }
    out
}

/// Advice from both ends' settings and the window asked for.
pub fn advice(local: &NetEnv, remote: Option<&NetEnv>, window_bytes: Option<u32>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(w) = window_bytes {
        for (end, e) in [("local", Some(local)), ("remote", remote)] {
            let Some(e) = e else { continue };
            for (what, cap) in [("rmem_max", e.rmem_max), ("wmem_max", e.wmem_max)] {
                if let Some(c) = cap.filter(|c| *c < w as u64) {
                    out.push(format!(
                        "{end} net.core.{what} = {c} caps --window {w}: the socket gets at most {c} bytes (raise it with sysctl -w net.core.{what}={w})"
                    ));
                }
            }
        }
    }
    if let Some(r) = remote {
        if let (Some(a), Some(b)) = (local.interface_mtu, r.interface_mtu) {
            if a != b {
                out.push(format!(
                    "interface MTU differs between the ends ({a} here, {b} on the server): jumbo frames on one end only? The path uses the smaller (path MTU {})",
                    local.path_mtu.map(|p| p.to_string()).unwrap_or_else(|| "unknown".into())
                ));
            }
        }
    }
    for (end, e) in [("local", Some(local)), ("remote", remote)] {
        let Some(e) = e else { continue };
        let off: Vec<&str> = ["tso", "gso", "gro"]
            .into_iter()
            .filter(|k| e.offloads.get(*k) == Some(&false))
            .collect();
        if !off.is_empty() {
            out.push(format!(
                "{end} interface {}: offloads off ({}): more CPU per byte; `ethtool -K {} {} on` if that is not deliberate",
                e.interface.as_deref().unwrap_or("?"),
                off.join(", "),
                e.interface.as_deref().unwrap_or("IF"),
                off.join(" on ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_described() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let e = capture(&c);
        assert_eq!(e.interface.as_deref(), Some("lo"));
        assert!(e.interface_mtu.unwrap() >= 1500);
        assert!(e.path_mtu.unwrap() >= 1500);
        assert!(e.sndbuf_bytes.is_some() && e.rmem_max.is_some());
    }

    #[test]
    fn advice_names_the_cap_and_the_mtu_mismatch() {
        let local = NetEnv {
            rmem_max: Some(212992),
            interface_mtu: Some(9000),
            ..Default::default()
        };
        let remote = NetEnv {
            interface_mtu: Some(1500),
            ..Default::default()
        };
        let a = advice(&local, Some(&remote), Some(4 << 20));
        assert!(
            a.iter().any(|s| s.contains("rmem_max = 212992 caps")),
            "{a:?}"
        );
        assert!(
            a.iter().any(|s| s.contains("jumbo frames on one end")),
            "{a:?}"
        );
    }
}
