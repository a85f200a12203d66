//! The `--metrics` HTTP endpoint: the address it is given, and a `tiny_http` server on
//! a thread of its own that answers `GET /metrics` with the registry rendered at that
//! moment. The server lives as long as its [`Endpoint`]; dropping it (at the end of
//! the command) stops the thread and closes the socket.

use super::Live;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::Arc;

/// The OpenMetrics text format's content type (what prometheus-client writes).
const OPEN_METRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// Prometheus' older text format, for scrapers that do not ask for OpenMetrics.
const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Why the endpoint cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    #[error("--metrics '{given}': {why}")]
    Address { given: String, why: String },
    #[error("--metrics: cannot listen on {addr}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("--metrics: cannot serve on {addr}: {why}")]
    Serve { addr: SocketAddr, why: String },
}

/// Where to serve: `PORT` (loopback, 127.0.0.1) or `HOST:PORT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricsAddr(pub SocketAddr);

impl MetricsAddr {
    /// Reads `--metrics`' value: a port alone binds 127.0.0.1, never every address.
    pub fn parse(text: &str) -> Result<Self, EndpointError> {
        let t = text.trim();
        let bad = |why: &str| EndpointError::Address {
            given: text.to_string(),
            why: why.to_string(),
        };
        if let Ok(port) = t.parse::<u16>() {
            return Ok(MetricsAddr(SocketAddr::from(([127, 0, 0, 1], port))));
        }
        if !t.contains(':') {
            return Err(bad(
                "expected PORT or HOST:PORT (for example 9100 or 0.0.0.0:9100)",
            ));
        }
        let mut found = t
            .to_socket_addrs()
            .map_err(|e| bad(&format!("not an address: {e}")))?;
        found
            .next()
            .map(MetricsAddr)
            .ok_or_else(|| bad("the host name has no address"))
    }

    /// The same address with the port moved up by `by` (one endpoint per MPI rank).
    pub fn offset(self, by: u16) -> Result<Self, EndpointError> {
        let mut a = self.0;
        let port = a.port().checked_add(by).ok_or(EndpointError::Address {
            given: a.to_string(),
            why: format!("port {} + rank {by} is above 65535", a.port()),
        })?;
        a.set_port(port);
        Ok(MetricsAddr(a))
    }
}

/// A served endpoint; dropping it closes it.
pub struct Endpoint {
    server: Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// The address it listens on (the port the system chose, for port 0).
    pub addr: SocketAddr,
}

impl Endpoint {
    /// Listens on `at` and serves `live` until dropped.
    pub fn serve(at: MetricsAddr, live: Live) -> Result<Self, EndpointError> {
        let listener =
            TcpListener::bind(at.0).map_err(|source| EndpointError::Bind { addr: at.0, source })?;
        let addr = listener.local_addr().unwrap_or(at.0);
        let server =
            tiny_http::Server::from_listener(listener, None).map_err(|e| EndpointError::Serve {
                addr,
                why: e.to_string(),
            })?;
        let server = Arc::new(server);
        let serving = Arc::clone(&server);
        let thread = std::thread::Builder::new()
            .name("ioscope-metrics".into())
            .spawn(move || answer_all(&serving, &live))
            .map_err(|e| EndpointError::Serve {
                addr,
                why: e.to_string(),
            })?;
        Ok(Endpoint {
            server,
            thread: Some(thread),
            addr,
        })
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Answers requests until the server is unblocked.
fn answer_all(server: &tiny_http::Server, live: &Live) {
    for req in server.incoming_requests() {
        let path = req.url().split('?').next().unwrap_or("");
        let response = match (req.method(), path) {
            (tiny_http::Method::Get, "/metrics") => {
                // Prometheus asks for OpenMetrics in its Accept header; curl and
                // promtool get the older text format.
                let open_metrics = req.headers().iter().any(|h| {
                    h.field.equiv("Accept") && h.value.as_str().contains("openmetrics-text")
                });
                let (body, kind) = match open_metrics {
                    true => (live.render(), OPEN_METRICS),
                    false => (live.render_text(), TEXT_FORMAT),
                };
                let header =
                    tiny_http::Header::from_bytes("Content-Type", kind).expect("a valid header");
                tiny_http::Response::from_string(body).with_header(header)
            }
            (tiny_http::Method::Get, "/") => {
                tiny_http::Response::from_string("ioscope: metrics at /metrics\n")
            }
            _ => tiny_http::Response::from_string("not found\n").with_status_code(404),
        };
        // A scraper that went away mid-answer is its own business.
        let _ = req.respond(response);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_alone_is_loopback_and_an_address_is_taken_as_given() {
        assert_eq!(
            MetricsAddr::parse("9100").unwrap().0,
            "127.0.0.1:9100".parse().unwrap()
        );
        assert_eq!(
            MetricsAddr::parse("0.0.0.0:9100").unwrap().0,
            "0.0.0.0:9100".parse().unwrap()
        );
        assert_eq!(
            MetricsAddr::parse("[::1]:9100").unwrap().0,
            "[::1]:9100".parse().unwrap()
        );
        for bad in ["", "nine", "70000", "127.0.0.1:x"] {
            let e = MetricsAddr::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--metrics '{bad}'")), "{e}");
        }
        let top = MetricsAddr::parse("65535").unwrap();
        assert!(top.offset(1).is_err());
        assert_eq!(top.offset(0).unwrap(), top);
    }

    #[test]
    fn the_endpoint_answers_and_is_gone_once_dropped() {
        use std::io::{Read, Write};
        let live = Live::new("run");
        let ep = Endpoint::serve(MetricsAddr::parse("0").unwrap(), live).unwrap();
        let addr = ep.addr;
        let get = |accept: &str| {
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            let req = format!("GET /metrics HTTP/1.0\r\nAccept: {accept}\r\n\r\n");
            s.write_all(req.as_bytes()).unwrap();
            let mut body = String::new();
            s.read_to_string(&mut body).unwrap();
            body
        };
        let body = get("application/openmetrics-text;version=1.0.0,text/plain;q=0.5");
        assert!(body.starts_with("HTTP/1.0 200"), "{body}");
        assert!(body.contains("ioscope_build_info{"), "{body}");
        assert!(body.trim_end().ends_with("# EOF"), "{body}");
        let body = get("*/*");
        assert!(body.contains("text/plain; version=0.0.4"), "{body}");
        assert!(body.contains("# TYPE ioscope_build_info gauge"), "{body}");
        drop(ep);
        // tiny_http's accept thread closes the socket once it sees the server gone
        // (it is not joined): wait for that, up to 5 s.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while std::net::TcpStream::connect(addr).is_ok() {
            assert!(std::time::Instant::now() < deadline, "{addr} still accepts");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}
