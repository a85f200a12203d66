//! TCP_INFO sampling: what the kernel's TCP stack knows about a connection —
//! retransmitted segments, smoothed RTT, congestion window — read with one
//! getsockopt per stream per interval (never on the data path).

use std::os::fd::RawFd;

/// The fields of `struct tcp_info` that the reports use.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TcpSample {
    /// Segments retransmitted over the connection's life (`tcpi_total_retrans`).
    pub total_retrans: u64,
    /// Smoothed RTT as the sender sees it, µs (`tcpi_rtt`).
    pub rtt_us: f64,
    /// The receiver's RTT estimate, µs (`tcpi_rcv_rtt`), for connections that only read.
    pub rcv_rtt_us: f64,
    /// Congestion window in bytes (`tcpi_snd_cwnd` × `tcpi_snd_mss`).
    pub cwnd_bytes: u64,
    pub snd_mss: u32,
    pub pmtu: u32,
    /// RTT variation, µs (`tcpi_rttvar`).
    pub rttvar_us: f64,
    /// The peer's advertised receive window, bytes (`tcpi_snd_wnd`).
    pub snd_wnd_bytes: u64,
}

impl TcpSample {
    /// The RTT worth showing: the sender's smoothed estimate on a connection this end
    /// writes to, the receiver's estimate on one it only reads from.
    pub fn rtt_for(&self, sender: bool) -> f64 {
        if sender || self.rcv_rtt_us == 0.0 {
            self.rtt_us
        } else {
            self.rcv_rtt_us
        }
    }
}

/// Reads TCP_INFO of `fd`; None if the socket is gone or not TCP.
pub fn sample(fd: RawFd) -> Option<TcpSample> {
    // SAFETY: tcp_info is plain data; all-zero is valid.
    let mut ti: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: ti and len are live; the kernel writes at most len bytes into ti.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut ti as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    if rc < 0 {
        return None;
    }
    Some(TcpSample {
        total_retrans: ti.tcpi_total_retrans as u64,
        rtt_us: ti.tcpi_rtt as f64,
        rcv_rtt_us: ti.tcpi_rcv_rtt as f64,
        cwnd_bytes: ti.tcpi_snd_cwnd as u64 * ti.tcpi_snd_mss as u64,
        snd_mss: ti.tcpi_snd_mss,
        pmtu: ti.tcpi_pmtu,
        rttvar_us: ti.tcpi_rttvar as f64,
        snd_wnd_bytes: ti.tcpi_snd_wnd as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;

    #[test]
    fn loopback_connection_has_rtt_and_cwnd() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut s, _) = l.accept().unwrap();
        c.write_all(&[1u8; 4096]).unwrap();
        let mut b = [0u8; 4096];
        s.read_exact(&mut b).unwrap();
        let t = sample(c.as_raw_fd()).unwrap();
        assert!(t.cwnd_bytes > 0 && t.snd_mss > 0, "{t:?}");
        assert!(t.rtt_us > 0.0, "{t:?}");
        assert!(sample(-1).is_none());
    }
}
