//! Network endpoints: one end of a plain socket that a workload writes to or reads
//! from, the target of the `net` engine (fio's `ioengine=net`). Written as a target
//! URI so that it travels through every front end (fio's hostname/port/protocol
//! options, the native job file, `convert`) like any other target:
//!
//! `tcp://HOST:PORT`, `tcpv6://[HOST]:PORT`, `udp://HOST:PORT`, `udpv6://[HOST]:PORT`,
//! `unix://PATH`, `vsock://CID:PORT`, with `?listen&pingpong&nodelay&window=SIZE&
//! mss=N&ttl=N&interface=ADDR`. An empty host on a listening end means every
//! address. Pure: nothing here opens a socket (`crate::net::peer` does).

use super::units::{format_size, parse_size};

/// The socket family and type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetProtocol {
    Tcp,
    TcpV6,
    Udp,
    UdpV6,
    Unix,
    Vsock,
}

impl NetProtocol {
    pub fn name(self) -> &'static str {
        match self {
            NetProtocol::Tcp => "tcp",
            NetProtocol::TcpV6 => "tcpv6",
            NetProtocol::Udp => "udp",
            NetProtocol::UdpV6 => "udpv6",
            NetProtocol::Unix => "unix",
            NetProtocol::Vsock => "vsock",
        }
    }

    /// The protocol fio's `protocol=` (or a URI scheme) names.
    pub fn parse(name: &str) -> Option<NetProtocol> {
        [
            NetProtocol::Tcp,
            NetProtocol::TcpV6,
            NetProtocol::Udp,
            NetProtocol::UdpV6,
            NetProtocol::Unix,
            NetProtocol::Vsock,
        ]
        .into_iter()
        .find(|p| p.name() == name.trim().to_ascii_lowercase())
    }

    /// Datagrams: one write is one message, which may be lost.
    pub fn is_datagram(self) -> bool {
        matches!(self, NetProtocol::Udp | NetProtocol::UdpV6)
    }

    pub fn is_tcp(self) -> bool {
        matches!(self, NetProtocol::Tcp | NetProtocol::TcpV6)
    }

    pub fn is_ipv6(self) -> bool {
        matches!(self, NetProtocol::TcpV6 | NetProtocol::UdpV6)
    }
}

/// One end of a connection (or of a datagram flow), as parsed from its URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetEndpoint {
    pub protocol: NetProtocol,
    /// Host name or address, the socket's path (unix), or the CID (vsock); empty on
    /// a listening end = every address.
    pub host: String,
    /// 0 for unix sockets.
    pub port: u16,
    /// This end binds and waits (TCP, unix and vsock accept one connection; a UDP
    /// listener is the receiving end).
    pub listen: bool,
    /// Every message is answered with one of the same size before the next is sent.
    pub pingpong: bool,
    /// TCP_NODELAY.
    pub nodelay: bool,
    /// SO_SNDBUF/SO_RCVBUF.
    pub window_bytes: Option<u32>,
    /// TCP_MAXSEG.
    pub mss_bytes: Option<u32>,
    /// IP_MULTICAST_TTL of a multicast sender.
    pub ttl: u8,
    /// IPv4 address of the interface multicast goes through (IP_MULTICAST_IF, and
    /// the membership of a receiver); `None` = the kernel's choice.
    pub interface: Option<std::net::Ipv4Addr>,
}

/// Why a network endpoint URI was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetEndpointError {
    #[error("expected tcp|tcpv6|udp|udpv6|vsock://HOST:PORT or unix://PATH, with ?listen, pingpong, nodelay, window=SIZE, mss=N, ttl=N, interface=ADDR")]
    Shape,
    #[error("port '{0}': expected 1 to 65535")]
    Port(String),
    #[error("{0} needs a port")]
    NoPort(&'static str),
    #[error("a unix socket has a path, not a port")]
    UnixPort,
    #[error("unix:// needs the socket's path")]
    NoPath,
    #[error("a connecting end needs a host")]
    NoHost,
    #[error("vsock CID '{0}': expected a number (1 = this machine)")]
    Cid(String),
    #[error("'{key}={value}': {why}")]
    Option {
        key: String,
        value: String,
        why: String,
    },
    #[error("unknown option '{0}' (listen, pingpong, nodelay, window, mss, ttl, interface)")]
    Unknown(String),
    #[error("multicast (host {0}) is IPv4 only, as in fio")]
    MulticastV6(String),
}

impl NetEndpoint {
    /// A connecting end with no options.
    pub fn new(protocol: NetProtocol, host: &str, port: u16) -> Self {
        NetEndpoint {
            protocol,
            host: host.to_string(),
            port,
            listen: false,
            pingpong: false,
            nodelay: false,
            window_bytes: None,
            mss_bytes: None,
            ttl: 1,
            interface: None,
        }
    }

    /// Reads `SCHEME://HOST:PORT?OPTIONS` (or `unix://PATH?OPTIONS`).
    pub fn parse(uri: &str) -> Result<Self, NetEndpointError> {
        let (scheme, rest) = uri.split_once("://").ok_or(NetEndpointError::Shape)?;
        let protocol = NetProtocol::parse(scheme).ok_or(NetEndpointError::Shape)?;
        let (addr, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (host, port) = split_host_port(protocol, addr)?;
        let mut e = NetEndpoint::new(protocol, &host, port);
        for item in query.split('&').filter(|s| !s.is_empty()) {
            e.option(item)?;
        }
        e.check()?;
        Ok(e)
    }

    fn option(&mut self, item: &str) -> Result<(), NetEndpointError> {
        let (key, value) = item.split_once('=').unwrap_or((item, ""));
        let bad = |why: &str| NetEndpointError::Option {
            key: key.into(),
            value: value.into(),
            why: why.into(),
        };
        let int = |max: u64| -> Result<u64, NetEndpointError> {
            value
                .parse::<u64>()
                .ok()
                .filter(|&n| n <= max)
                .ok_or_else(|| bad(&format!("expected a whole number up to {max}")))
        };
        match key {
            "listen" => self.listen = true,
            "pingpong" => self.pingpong = true,
            "nodelay" => self.nodelay = true,
            "window" => {
                let b = parse_size(value).map_err(|e| bad(&e.to_string()))?;
                self.window_bytes = Some(u32::try_from(b).map_err(|_| bad("at most 4 GiB"))?);
            }
            "mss" => self.mss_bytes = Some(int(u32::MAX as u64)? as u32),
            "ttl" => self.ttl = int(255)? as u8,
            "interface" => {
                self.interface = Some(value.parse().map_err(|_| bad("expected an IPv4 address"))?)
            }
            _ => return Err(NetEndpointError::Unknown(key.into())),
        }
        Ok(())
    }

    fn check(&self) -> Result<(), NetEndpointError> {
        if !self.listen && self.host.is_empty() {
            return Err(if self.protocol == NetProtocol::Unix {
                NetEndpointError::NoPath
            } else {
                NetEndpointError::NoHost
            });
        }
        if self.protocol == NetProtocol::Vsock
            && !self.host.is_empty()
            && self.host.parse::<u32>().is_err()
        {
            return Err(NetEndpointError::Cid(self.host.clone()));
        }
        if self.protocol == NetProtocol::UdpV6 && self.is_multicast() {
            return Err(NetEndpointError::MulticastV6(self.host.clone()));
        }
        Ok(())
    }

    /// An IPv4 multicast group address (224.0.0.0/4) as host.
    pub fn is_multicast(&self) -> bool {
        self.protocol.is_datagram()
            && self
                .host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|a| a.is_multicast())
    }

    /// The URI, options in a fixed order (what `parse` reads back).
    pub fn to_uri(&self) -> String {
        let mut s = match self.protocol {
            NetProtocol::Unix => format!("unix://{}", self.host),
            p if p.is_ipv6() && self.host.contains(':') => {
                format!("{}://[{}]:{}", p.name(), self.host, self.port)
            }
            p => format!("{}://{}:{}", p.name(), self.host, self.port),
        };
        let mut opts: Vec<String> = Vec::new();
        for (on, name) in [
            (self.listen, "listen"),
            (self.pingpong, "pingpong"),
            (self.nodelay, "nodelay"),
        ] {
            if on {
                opts.push(name.into());
            }
        }
        if let Some(w) = self.window_bytes {
            opts.push(format!("window={}", format_size(w as u64)));
        }
        if let Some(m) = self.mss_bytes {
            opts.push(format!("mss={m}"));
        }
        if self.ttl != 1 {
            opts.push(format!("ttl={}", self.ttl));
        }
        if let Some(i) = self.interface {
            opts.push(format!("interface={i}"));
        }
        if !opts.is_empty() {
            s.push('?');
            s.push_str(&opts.join("&"));
        }
        s
    }
}

/// `HOST:PORT`, `[V6]:PORT`, `:PORT` or a unix path.
fn split_host_port(p: NetProtocol, addr: &str) -> Result<(String, u16), NetEndpointError> {
    if p == NetProtocol::Unix {
        return Ok((addr.to_string(), 0));
    }
    let (host, port) = if let Some(rest) = addr.strip_prefix('[') {
        let (h, after) = rest.split_once(']').ok_or(NetEndpointError::Shape)?;
        (h, after.strip_prefix(':').unwrap_or(""))
    } else {
        match addr.rsplit_once(':') {
            Some((h, port)) => (h, port),
            None => (addr, ""),
        }
    };
    if port.is_empty() {
        return Err(NetEndpointError::NoPort(p.name()));
    }
    let port = port
        .parse::<u16>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| NetEndpointError::Port(port.into()))?;
    Ok((host.to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_read_back() {
        for uri in [
            "tcp://localhost:8888",
            "tcp://:8888?listen&nodelay&window=64k&mss=1400",
            "tcpv6://[::1]:8888",
            "udp://239.0.0.0:10000?listen&pingpong&ttl=2&interface=127.0.0.1",
            "unix:///tmp/fio.sock?listen",
            "vsock://1:8888",
        ] {
            let e = NetEndpoint::parse(uri).unwrap();
            assert_eq!(e.to_uri(), uri);
        }
        let e = NetEndpoint::parse("udp://239.0.0.0:10000?listen").unwrap();
        assert!(e.is_multicast() && e.listen && e.ttl == 1);
    }

    #[test]
    fn bad_uris_say_why() {
        for (uri, want) in [
            ("tcp://localhost", "needs a port"),
            ("tcp://:8888", "needs a host"),
            ("tcp://h:0", "1 to 65535"),
            ("vsock://abc:1", "CID"),
            ("udpv6://[ff02::1]:9", "IPv4 only"),
            ("udp://h:9?ttl=300", "up to 255"),
            ("udp://h:9?color=red", "unknown option"),
            ("unix://", "path"),
        ] {
            let e = NetEndpoint::parse(uri).unwrap_err().to_string();
            assert!(e.contains(want), "{uri}: {e}");
        }
    }
}
