//! fio jobs on the `net` and `netsplice` engines: `protocol`, `hostname` (or
//! `filename`), `port`, `listen`, `pingpong`, `nodelay`, `window_size`, `mss`, `ttl`
//! and `interface` become the job's target, a network endpoint URI
//! (`crate::plan::net_endpoint`), and `size` the bytes it moves. fio's own rules
//! for these options are kept and their violations reported where they are
//! written: a port for TCP, UDP and vsock and none for unix sockets, `listen` only
//! on TCP and vsock (a UDP or unix reader always binds), no host on a listening
//! end unless it is a multicast group, sequential reads or writes only.

use super::{JobCx, JobTarget};
use crate::plan::compat::CompatError;
use crate::plan::model::{AccessPattern, EngineKind};
use crate::plan::net_endpoint::{NetEndpoint, NetProtocol};
use crate::plan::units::parse_size;

/// The options only the network engines read.
const NET_OPTIONS: [&str; 10] = [
    "hostname",
    "port",
    "protocol",
    "listen",
    "pingpong",
    "nodelay",
    "interface",
    "ttl",
    "window_size",
    "mss",
];

impl JobCx<'_> {
    /// The endpoint of a `net`/`netsplice` job; `None` for any other engine (whose
    /// network options are then listed as unsupported).
    pub(super) fn net_target(
        &mut self,
        engine: EngineKind,
        read_pct: u8,
        pattern: &AccessPattern,
        streams: u32,
    ) -> Result<Option<JobTarget>, CompatError> {
        if engine != EngineKind::Net {
            self.only_with("ioengine=net", &NET_OPTIONS);
            return Ok(None);
        }
        let o = self.o;
        let at = o.get("rw").map(|(_, l)| l).unwrap_or(self.section_loc);
        if !matches!(pattern, AccessPattern::Sequential) {
            return Err(at.error(format!(
                "job '{}': network I/O cannot be random (fio refuses it too)",
                self.name
            )));
        }
        let send = match read_pct {
            0 => true,
            100 => false,
            _ => {
                return Err(at.error(format!(
                    "job '{}': a network job reads (the receiver) or writes (the sender), \
                     not both",
                    self.name
                )))
            }
        };
        if streams > 1 {
            let (v, l) = o.get("numjobs").unwrap_or(("?", self.section_loc));
            self.unsupported.push(
                format!(
                    "numjobs={v} — fio gives clone N of a network job port+N; ioscope's \
                     network job is one connection (write one job per port)"
                ),
                l,
            );
        }
        if let Some((v, l)) = o.get("verify") {
            if !matches!(v.trim(), "0" | "none") {
                self.unsupported.push(
                    format!(
                        "verify={v} — on a network job: ioscope's network jobs send a fixed \
                         pattern and do not check what arrives"
                    ),
                    l,
                );
            }
        }
        let endpoint = self.endpoint(send)?;
        let (size, _) = self.region()?;
        Ok(Some(JobTarget {
            size,
            ..JobTarget::whole(endpoint.to_uri(), false)
        }))
    }

    fn endpoint(&mut self, send: bool) -> Result<NetEndpoint, CompatError> {
        let o = self.o;
        let name = self.name.clone();
        let protocol = match o.get("protocol") {
            Some((v, l)) => NetProtocol::parse(v).ok_or_else(|| {
                l.error(format!(
                    "protocol={v}: expected tcp, tcpv6, udp, udpv6, unix or vsock"
                ))
            })?,
            None => NetProtocol::Tcp,
        };
        let host = o
            .get("hostname")
            .or_else(|| o.get("filename"))
            .map(|(h, _)| h.trim().to_string())
            .unwrap_or_default();
        let port = self.port(protocol)?;
        let mut e = NetEndpoint::new(protocol, &host, port);
        let listen = o.flag("listen")?;
        if listen && !(protocol.is_tcp() || protocol == NetProtocol::Vsock) {
            let l = o.get("listen").map(|(_, l)| l).unwrap_or(self.section_loc);
            return Err(l.error(format!(
                "job '{name}': listen is for TCP and vsock; over {} the reading job binds",
                protocol.name()
            )));
        }
        e.listen = listen || (!send && (protocol.is_datagram() || protocol == NetProtocol::Unix));
        e.pingpong = o.flag("pingpong")?;
        e.nodelay = o.flag("nodelay")?;
        self.sizes(&mut e)?;
        self.multicast(&mut e)?;
        self.check_host(&e, send)?;
        Ok(e)
    }

    fn port(&self, protocol: NetProtocol) -> Result<u16, CompatError> {
        match (self.o.get("port"), protocol) {
            (Some((v, l)), NetProtocol::Unix) => Err(l.error(format!(
                "port={v}: a unix socket has no port (its path is the filename)"
            ))),
            (Some((v, l)), _) => v
                .trim()
                .parse::<u16>()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| l.error(format!("port={v}: expected 1 to 65535"))),
            (None, NetProtocol::Unix) => Ok(0),
            (None, p) => Err(self.section_loc.error(format!(
                "job '{}': protocol={} needs port=",
                self.name,
                p.name()
            ))),
        }
    }

    /// `window_size` (bytes, fio's sizes) and `mss`.
    fn sizes(&self, e: &mut NetEndpoint) -> Result<(), CompatError> {
        if let Some((v, l)) = self.o.get("window_size") {
            let b = parse_size(v).map_err(|err| l.error(format!("window_size={v}: {err}")))?;
            e.window_bytes = Some(
                u32::try_from(b).map_err(|_| l.error(format!("window_size={v}: at most 4g")))?,
            );
        }
        if let Some((v, l)) = self.o.get("mss") {
            e.mss_bytes = Some(
                v.trim()
                    .parse::<u32>()
                    .map_err(|err| l.error(format!("mss={v}: {err}")))?,
            );
        }
        Ok(())
    }

    /// `ttl` and `interface`, which only a multicast flow uses.
    fn multicast(&mut self, e: &mut NetEndpoint) -> Result<(), CompatError> {
        if let Some((v, l)) = self.o.get("ttl") {
            e.ttl = v
                .trim()
                .parse::<u8>()
                .map_err(|_| l.error(format!("ttl={v}: expected 0 to 255")))?;
        }
        if let Some((v, l)) = self.o.get("interface") {
            e.interface = Some(v.trim().parse().map_err(|_| {
                l.error(format!(
                    "interface={v}: expected the IPv4 address of the interface"
                ))
            })?);
        }
        if e.is_multicast() && e.protocol.is_ipv6() {
            let (v, l) = self.o.get("hostname").unwrap_or(("", self.section_loc));
            return Err(l.error(format!(
                "hostname={v}: multicast is IPv4 only (fio refuses it over IPv6 too)"
            )));
        }
        Ok(())
    }

    /// A listening end takes no host unless it joins a multicast group; a
    /// connecting one needs one.
    fn check_host(&self, e: &NetEndpoint, send: bool) -> Result<(), CompatError> {
        let unix = e.protocol == NetProtocol::Unix;
        let host_at = self
            .o
            .get("hostname")
            .or_else(|| self.o.get("filename"))
            .map(|(_, l)| l)
            .unwrap_or(self.section_loc);
        if e.listen && !unix && !e.host.is_empty() && !e.is_multicast() {
            return Err(host_at.error(format!(
                "job '{}': hostname={} on a listening end (it listens on every address; \
                 only a UDP multicast group may be given)",
                self.name, e.host
            )));
        }
        if e.host.is_empty() && (!e.listen || unix) {
            let hint = if !send && !e.listen {
                " (a receiver needs listen)"
            } else {
                ""
            };
            return Err(self.section_loc.error(format!(
                "job '{}': no hostname{}{hint}",
                self.name,
                if unix {
                    " (the unix socket's path)"
                } else {
                    ""
                }
            )));
        }
        if e.protocol == NetProtocol::Vsock && !e.host.is_empty() && e.host.parse::<u32>().is_err()
        {
            return Err(host_at.error(format!(
                "hostname={}: a vsock hostname is the peer's CID, a number",
                e.host
            )));
        }
        Ok(())
    }
}
