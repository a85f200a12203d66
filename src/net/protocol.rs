//! The wire protocol between `ioscope net run` and `ioscope net serve`.
//!
//! Every connection starts with a 16-byte preamble: the magic `IOSCOPE-NET\0`, the
//! protocol version (u16, big endian), the connection kind (1 control, 2 data) and a
//! zero byte. A server drops any connection whose preamble is not exactly that (an
//! HTTP probe, a port scanner, an iperf3 client) without a byte in reply.
//!
//! The control connection then carries length-prefixed JSON frames (u32 big-endian
//! length, at most [`MAX_FRAME_BYTES`]) in this order: client `Hello` → server
//! `Welcome` (or `Refused`) → the client opens its data connections → server
//! `Start` → client `Mark` (warm-up over) → client `Stop` → server `Report`.
//! A data connection sends, after its preamble, the session cookie (16 bytes) and
//! its stream index and role (u32 each), then only payload.
//!
//! JSON keeps the control messages readable and versionable; they are a handful per
//! test, so their cost does not matter.

use serde::{Deserialize, Serialize};
use std::io::{Read, Write};

use super::config::{Direction, RrSize};
use super::env::NetEnv;

/// Bumped whenever a message changes meaning.
pub const VERSION: u16 = 1;
pub const MAGIC: [u8; 12] = *b"IOSCOPE-NET\0";
pub const PREAMBLE_BYTES: usize = 16;
/// Bytes after the preamble on a data connection: cookie, stream index, role.
pub const DATA_HELLO_BYTES: usize = 24;
/// Larger frames are refused: the control messages are small.
pub const MAX_FRAME_BYTES: u32 = 1 << 20;

/// What a connection is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnKind {
    Control = 1,
    Data = 2,
}

/// What a data connection does, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Client writes, server reads.
    Send = 1,
    /// Server writes, client reads.
    Recv = 2,
    /// Client sends requests, server answers.
    Rr = 3,
}

impl Role {
    fn from_u32(v: u32) -> Option<Role> {
        match v {
            1 => Some(Role::Send),
            2 => Some(Role::Recv),
            3 => Some(Role::Rr),
            _ => None,
        }
    }
}

/// Why a preamble was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreambleError {
    #[error("not the ioscope protocol")]
    NotIoscope,
    #[error("protocol version {0}, this build speaks {VERSION}")]
    Version(u16),
}

pub fn preamble(kind: ConnKind) -> [u8; PREAMBLE_BYTES] {
    let mut b = [0u8; PREAMBLE_BYTES];
    b[..12].copy_from_slice(&MAGIC);
    b[12..14].copy_from_slice(&VERSION.to_be_bytes());
    b[14] = kind as u8;
    b
}

pub fn parse_preamble(b: &[u8; PREAMBLE_BYTES]) -> Result<ConnKind, PreambleError> {
    if b[..12] != MAGIC || b[15] != 0 {
        return Err(PreambleError::NotIoscope);
    }
    let v = u16::from_be_bytes([b[12], b[13]]);
    if v != VERSION {
        return Err(PreambleError::Version(v));
    }
    match b[14] {
        1 => Ok(ConnKind::Control),
        2 => Ok(ConnKind::Data),
        _ => Err(PreambleError::NotIoscope),
    }
}

/// A data connection's introduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataHello {
    pub cookie: [u8; 16],
    pub index: u32,
    pub role: Role,
}

impl DataHello {
    pub fn encode(&self) -> [u8; DATA_HELLO_BYTES] {
        let mut b = [0u8; DATA_HELLO_BYTES];
        b[..16].copy_from_slice(&self.cookie);
        b[16..20].copy_from_slice(&self.index.to_be_bytes());
        b[20..24].copy_from_slice(&(self.role as u32).to_be_bytes());
        b
    }

    pub fn decode(b: &[u8; DATA_HELLO_BYTES]) -> Option<DataHello> {
        let mut cookie = [0u8; 16];
        cookie.copy_from_slice(&b[..16]);
        Some(DataHello {
            cookie,
            index: u32::from_be_bytes(b[16..20].try_into().ok()?),
            role: Role::from_u32(u32::from_be_bytes(b[20..24].try_into().ok()?))?,
        })
    }
}

/// What the client asks the server to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestParams {
    pub streams: u32,
    pub direction: Direction,
    pub bs_bytes: u32,
    pub window_bytes: Option<u32>,
    pub nodelay: bool,
    pub zerocopy: bool,
    pub cpus: Option<Vec<usize>>,
    /// Bits per second in all for the server's senders (`--reverse`/`--bidir`).
    pub rate_bps: Option<f64>,
    pub rr: Option<RrSize>,
}

/// Process CPU time over a span, as one end measured it (getrusage RUSAGE_SELF).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuTimes {
    pub user_ns: u64,
    pub sys_ns: u64,
    pub wall_ns: u64,
    /// Online CPUs of that host, to turn times into a share of the machine.
    pub cpus: u32,
}

/// What the server counted on one data connection.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerStream {
    pub index: u32,
    pub role: Option<Role>,
    /// Payload bytes read over the whole connection, and at the warm-up mark.
    pub bytes_received: u64,
    pub bytes_received_at_mark: u64,
    /// Payload bytes written, likewise.
    pub bytes_sent: u64,
    pub bytes_sent_at_mark: u64,
    /// Nanoseconds from the mark to the connection's end of file (receivers).
    pub recv_ns_after_mark: u64,
    /// The server socket's TCP_INFO at the end.
    pub retransmits: u64,
    pub rtt_us: f64,
    /// Set when the connection failed on the server's side.
    pub error: Option<String>,
}

/// Control messages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Ctrl {
    Hello {
        params: TestParams,
    },
    Welcome {
        /// Hex of the 16-byte cookie the data connections present.
        cookie: String,
        env: Box<NetEnv>,
    },
    Refused {
        reason: String,
    },
    Start,
    Mark,
    Stop,
    Report {
        streams: Vec<ServerStream>,
        /// The server process's CPU time from the mark to the end of the data.
        cpu: CpuTimes,
        env: Box<NetEnv>,
    },
}

/// Writes one frame.
pub fn write_frame(w: &mut impl Write, msg: &Ctrl) -> std::io::Result<()> {
    let body = serde_json::to_vec(msg).map_err(std::io::Error::other)?;
    let mut buf = Vec::with_capacity(4 + body.len());
    buf.extend_from_slice(&(body.len() as u32).to_be_bytes());
    buf.extend_from_slice(&body);
    w.write_all(&buf)
}

/// Reads one frame; an oversized or malformed one is an `InvalidData` error.
pub fn read_frame(r: &mut impl Read) -> std::io::Result<Ctrl> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let n = u32::from_be_bytes(len);
    if n > MAX_FRAME_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("control frame of {n} bytes (limit {MAX_FRAME_BYTES})"),
        ));
    }
    let mut body = vec![0u8; n as usize];
    r.read_exact(&mut body)?;
    serde_json::from_slice(&body)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

pub fn cookie_hex(c: &[u8; 16]) -> String {
    c.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn cookie_from_hex(s: &str) -> Option<[u8; 16]> {
    if s.len() != 32 {
        return None;
    }
    let mut c = [0u8; 16];
    for (i, out) in c.iter_mut().enumerate() {
        *out = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(c)
}

/// A fresh session cookie from the kernel's random pool (unguessable, so another
/// client cannot attach data connections to someone else's test).
pub fn new_cookie() -> [u8; 16] {
    let mut c = [0u8; 16];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let _ = f.read_exact(&mut c);
    }
    if c == [0u8; 16] {
        c[..8].copy_from_slice(&crate::clock::real_now_ns().to_le_bytes());
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preamble_round_trips_and_refuses_strangers() {
        let p = preamble(ConnKind::Data);
        assert_eq!(parse_preamble(&p), Ok(ConnKind::Data));
        let mut http = [0u8; PREAMBLE_BYTES];
        http.copy_from_slice(b"GET / HTTP/1.1\r\n");
        assert_eq!(parse_preamble(&http), Err(PreambleError::NotIoscope));
        let mut other = p;
        other[13] = 9;
        assert_eq!(parse_preamble(&other), Err(PreambleError::Version(9)));
    }

    #[test]
    fn frames_and_hellos_round_trip() {
        let mut buf = Vec::new();
        write_frame(&mut buf, &Ctrl::Mark).unwrap();
        assert_eq!(read_frame(&mut buf.as_slice()).unwrap(), Ctrl::Mark);
        let h = DataHello {
            cookie: new_cookie(),
            index: 7,
            role: Role::Rr,
        };
        assert_eq!(DataHello::decode(&h.encode()), Some(h));
        assert_eq!(cookie_from_hex(&cookie_hex(&h.cookie)), Some(h.cookie));
    }

    #[test]
    fn oversized_frame_is_refused() {
        let bytes = (MAX_FRAME_BYTES + 1).to_be_bytes();
        let e = read_frame(&mut bytes.as_slice()).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
    }
}
