//! SMB3 multichannel: one authenticated session with several channels (TCP
//! connections bound to the session, MS-SMB2 3.2.4.1.7 session binding), each
//! carrying requests for the same open file. Channel 0 is the connection the session
//! was set up on; channels 1.. are bound to it over the addresses given with `--path`
//! or, without them, over the interfaces the server advertises
//! (FSCTL_QUERY_NETWORK_INTERFACE_INFO). A channel that is lost is replaced by binding
//! a fresh connection to its address: the session, the file handle and every other
//! channel carry on.
//!
//! Unlike a single-channel [`super::client::Session`], a [`ChannelSet`] runs its
//! runtime on a thread of its own, because channels are bound again from probe threads
//! while the worker is busy elsewhere; the worker and the probes reach it through a
//! [`tokio::runtime::Handle`].

use super::client::{classify, connection_config, nodelay_to, open_in_tree, OpenError, OpenHow};
use super::credentials::Credentials;
use crate::plan::model::SmbSpec;
use smb::{Connection, ConnectionConfig, Guid, UncPath};
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long connecting and binding one channel may take at most, over all attempts
/// (a probe's limit is usually shorter).
const BIND_TIMEOUT: Duration = Duration::from_secs(30);

/// How long one binding attempt may go unanswered before a fresh connection is tried.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(3);

/// Where the channels of a set go.
#[derive(Debug, Clone)]
pub enum ChannelPlan {
    /// One channel per address, channel 0 first.
    Addresses(Vec<SocketAddr>),
    /// `n` channels over the interfaces the server advertises.
    Advertised(usize),
}

/// A current-thread runtime driven by a thread of its own until dropped.
struct Driver {
    handle: tokio::runtime::Handle,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Driver {
    fn start() -> Result<Driver, OpenError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .enable_io()
            .build()
            .map_err(|e| OpenError::Other(format!("starting the SMB channels' runtime: {e}")))?;
        let handle = rt.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("ioscope-smb-ch".into())
            .spawn(move || {
                let _ = rt.block_on(stopped);
            })
            .map_err(|e| OpenError::Other(format!("starting the SMB channels' thread: {e}")))?;
        Ok(Driver {
            handle,
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One channel of a set: its id in the session and the connection carrying it.
pub struct Channel {
    pub id: u32,
    pub addr: SocketAddr,
    conn: Arc<Connection>,
    handle: tokio::runtime::Handle,
    /// Channel 0's connection holds the session; it is left open when the channel is
    /// dropped (only bound channels are closed).
    bound: bool,
}

impl Drop for Channel {
    /// Closes a bound channel's connection in the background: the link may be dead,
    /// and the worker dropping the channel must not wait for it.
    fn drop(&mut self) {
        if !self.bound {
            return;
        }
        let conn = self.conn.clone();
        self.handle.spawn(async move {
            let _ = tokio::time::timeout(Duration::from_secs(2), conn.close()).await;
        });
    }
}

/// One session with its channels and the open file, on a runtime of its own.
pub struct ChannelSet {
    // Field order is drop order: everything the runtime drives goes before `driver`.
    file: std::mem::ManuallyDrop<Arc<smb::File>>,
    session: std::mem::ManuallyDrop<Arc<smb::Session>>,
    tree: std::mem::ManuallyDrop<Arc<smb::Tree>>,
    primary: std::mem::ManuallyDrop<Arc<Connection>>,
    primary_taken: AtomicBool,
    /// Channels bound ahead ([`ChannelSet::bind_all`]), handed out once each.
    prebound: std::sync::Mutex<Vec<Option<Channel>>>,
    identity: sspi::AuthIdentity,
    config: ConnectionConfig,
    guid: Guid,
    host: String,
    /// The address of each channel, channel 0 first.
    pub addrs: Vec<SocketAddr>,
    pub size_bytes: u64,
    pub max_read_bytes: u32,
    pub max_write_bytes: u32,
    driver: Driver,
}

fn other(what: &str, e: impl std::fmt::Display) -> OpenError {
    OpenError::Other(format!("{what}: {e}"))
}

impl ChannelSet {
    /// Connects to `primary` (channel 0's address), authenticates, opens the file and
    /// works out the channels' addresses; binds no further channel yet (see
    /// [`ChannelSet::channel`]).
    pub fn open(
        spec: &SmbSpec,
        primary: SocketAddr,
        creds: &Credentials,
        require_encryption: bool,
        how: OpenHow,
        plan: &ChannelPlan,
    ) -> Result<ChannelSet, OpenError> {
        super::heap::keep_large_buffers();
        let driver = Driver::start()?;
        let h = driver.handle.clone();
        let _entered = h.enter();
        let config = ConnectionConfig {
            // Offer multichannel in NEGOTIATE: a server advertises it only then.
            multichannel: smb::connection::MultiChannelConfig::Always,
            ..connection_config(spec, require_encryption)
        };
        let guid = Guid::generate();
        let host = super::server(spec);
        let identity = sspi::AuthIdentity {
            username: sspi::Username::parse(&creds.user)
                .map_err(|e| other(&format!("the user name '{}'", creds.user), e))?,
            password: creds.password.expose().to_string().into(),
        };
        let share = UncPath::from_str(&format!(r"\\{}\{}", spec.host, spec.share))
            .map_err(|e| other("the share's name", e))?;
        let file_name = spec.path.replace('/', "\\");
        let conn = Arc::new(
            Connection::build(&spec.host, primary, guid, config.clone())
                .map_err(|e| other("the connection", e))?,
        );
        let (session, tree, file, size_bytes, ifaces) = h.block_on(async {
            conn.connect()
                .await
                .map_err(|e| other(&format!("connecting to {primary}"), e))?;
            let session = Arc::new(
                conn.authenticate(identity.clone())
                    .await
                    .map_err(|e| classify(e, &creds.user, &host))?,
            );
            let tree = Arc::new(
                session
                    .tree_connect(&share)
                    .await
                    .map_err(|e| other(&format!("connecting to {share}"), e))?,
            );
            let file = open_in_tree(&tree, &file_name, &share, how).await?;
            let size = smb::GetLen::get_len(&file)
                .await
                .map_err(|e| other("the file's size", e))?;
            let ifaces = match plan {
                ChannelPlan::Advertised(_) => Some(advertised(&session, &spec.host).await?),
                ChannelPlan::Addresses(_) => None,
            };
            Ok::<_, OpenError>((session, tree, Arc::new(file), size, ifaces))
        })?;
        let ci = conn
            .conn_info()
            .ok_or_else(|| OpenError::Other("the connection was not negotiated".into()))?
            .clone();
        nodelay_to(ci.server_address);
        if !ci.negotiation.caps.multi_channel() {
            return Err(OpenError::Other(format!(
                "{host} does not offer SMB multichannel (smb.conf: server multi channel support = yes, SMB 3.x)"
            )));
        }
        let addrs = match plan {
            ChannelPlan::Addresses(a) => a.clone(),
            ChannelPlan::Advertised(n) => {
                spread(primary, &ifaces.unwrap_or_default(), *n, spec.port)
            }
        };
        Ok(ChannelSet {
            file: std::mem::ManuallyDrop::new(file),
            session: std::mem::ManuallyDrop::new(session),
            tree: std::mem::ManuallyDrop::new(tree),
            primary: std::mem::ManuallyDrop::new(conn),
            primary_taken: AtomicBool::new(false),
            prebound: std::sync::Mutex::new(Vec::new()),
            identity,
            config,
            guid,
            host,
            addrs,
            size_bytes,
            max_read_bytes: ci.negotiation.max_read_size,
            max_write_bytes: ci.negotiation.max_write_size,
            driver,
        })
    }

    /// The runtime the channels' requests run on.
    pub fn handle(&self) -> &tokio::runtime::Handle {
        &self.driver.handle
    }

    /// The open file, shared by every channel.
    pub fn file(&self) -> &Arc<smb::File> {
        &self.file
    }

    /// Channel `i`: the session's own connection the first time channel 0 is asked
    /// for, else a fresh connection to the channel's address bound to the session.
    /// Blocks up to `limit` (at most a few seconds); may be called from any thread
    /// but the driver's.
    pub fn channel(&self, i: usize, limit: Duration) -> Result<Channel, OpenError> {
        let addr = *self
            .addrs
            .get(i)
            .ok_or_else(|| OpenError::Other(format!("no channel {i}")))?;
        let h = self.driver.handle.clone();
        let ready = self
            .prebound
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_mut(i)
            .and_then(Option::take);
        if let Some(ch) = ready {
            return Ok(ch);
        }
        if i == 0 && !self.primary_taken.swap(true, Ordering::SeqCst) {
            return Ok(Channel {
                id: self.session.channel_id(),
                addr,
                conn: Arc::clone(&self.primary),
                handle: h,
                bound: false,
            });
        }
        // A bind that gets no answer is tried again on a fresh connection: seen
        // with Samba 4.17 on a busy machine, a bind now and then never answered
        // while the next connection was bound at once.
        let deadline = std::time::Instant::now() + limit.min(BIND_TIMEOUT);
        let mut tries = 0;
        loop {
            tries += 1;
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.bind_once(i, addr, left.min(ATTEMPT_TIMEOUT)) {
                Ok(ch) => return Ok(ch),
                Err(Some(e)) => return Err(e),
                Err(None) if left > ATTEMPT_TIMEOUT => continue,
                Err(None) => {
                    return Err(OpenError::Other(format!(
                    "channel {i} ({addr}): no answer to {tries} binding attempt(s) within {:.1} s",
                    limit.min(BIND_TIMEOUT).as_secs_f64()
                )))
                }
            }
        }
    }

    /// One attempt at binding channel `i` on a fresh connection to `addr`; `Err(None)`
    /// when it got no answer within `limit`.
    fn bind_once(
        &self,
        i: usize,
        addr: SocketAddr,
        limit: Duration,
    ) -> Result<Channel, Option<OpenError>> {
        let h = self.driver.handle.clone();
        let _entered = h.enter();
        let conn = Arc::new(
            Connection::build(&self.host_name(), addr, self.guid, self.config.clone())
                .map_err(|e| Some(other("the connection", e)))?,
        );
        let bound = h.block_on(async {
            tokio::time::timeout(limit, async {
                conn.connect()
                    .await
                    .map_err(|e| other(&format!("connecting channel {i} to {addr}"), e))?;
                conn.bind_session(&self.session, self.identity.clone())
                    .await
                    .map_err(|e| other(&format!("binding channel {i} ({addr}) to the session"), e))
            })
            .await
        });
        let id = match bound {
            Ok(Ok(id)) => id,
            failed => {
                let c = conn.clone();
                h.spawn(async move {
                    let _ = tokio::time::timeout(Duration::from_secs(2), c.close()).await;
                });
                return Err(failed.ok().and_then(Result::err));
            }
        };
        if let Some(ci) = conn.conn_info() {
            nodelay_to(ci.server_address);
        }
        Ok(Channel {
            id,
            addr,
            conn,
            handle: h,
            bound: true,
        })
    }

    /// Binds every channel now (each then handed out once by [`ChannelSet::channel`]),
    /// so that a worker starts with all its channels up.
    pub fn bind_all(&self) -> Result<(), OpenError> {
        let mut all = Vec::with_capacity(self.addrs.len());
        for i in 0..self.addrs.len() {
            all.push(Some(self.channel(i, BIND_TIMEOUT)?));
        }
        *self.prebound.lock().unwrap_or_else(|p| p.into_inner()) = all;
        Ok(())
    }

    /// The server's name as the URI gives it (without the port).
    fn host_name(&self) -> String {
        match self.host.rsplit_once(':') {
            Some((h, _)) => h.trim_start_matches('[').trim_end_matches(']').to_string(),
            None => self.host.clone(),
        }
    }
}

impl Drop for ChannelSet {
    /// Closes the file and logs off politely (bounded: a link may be dead), then drops
    /// everything the runtime drives before the runtime itself.
    fn drop(&mut self) {
        let h = self.driver.handle.clone();
        let _entered = h.enter();
        let (file, session) = (Arc::clone(&self.file), Arc::clone(&self.session));
        h.block_on(async move {
            let _ = tokio::time::timeout(Duration::from_secs(2), async {
                let _ = file.close().await;
                let _ = session.logoff().await;
            })
            .await;
        });
        let conn = Arc::clone(&self.primary);
        h.block_on(async move {
            let _ = tokio::time::timeout(Duration::from_secs(2), conn.close()).await;
        });
        // SAFETY: these fields are never used again: this is the set's destructor.
        unsafe {
            std::mem::ManuallyDrop::drop(&mut self.file);
            std::mem::ManuallyDrop::drop(&mut self.tree);
            std::mem::ManuallyDrop::drop(&mut self.session);
            std::mem::ManuallyDrop::drop(&mut self.primary);
        }
    }
}

/// The addresses the server advertises for multichannel, in its order.
async fn advertised(session: &smb::Session, host: &str) -> Result<Vec<SocketAddr>, OpenError> {
    let ipc = UncPath::ipc_share(host).map_err(|e| other("the IPC$ share's name", e))?;
    let tree = session
        .tree_connect(&ipc)
        .await
        .map_err(|e| other("connecting to IPC$", e))?;
    let list = tree
        .as_ipc_tree()
        .map_err(|e| other("IPC$", e))?
        .query_network_interfaces()
        .await
        .map_err(|e| other("asking the server for its network interfaces", e))?;
    let _ = tree.disconnect().await;
    Ok(list.iter().map(|i| i.sockaddr.socket_addr()).collect())
}

/// `n` channel addresses: `primary` first, then the other advertised addresses in the
/// server's order, round and round (several channels per address, as a client does
/// on an RSS-capable interface, when there are fewer addresses than channels).
pub fn spread(
    primary: SocketAddr,
    advertised: &[SocketAddr],
    n: usize,
    port: u16,
) -> Vec<SocketAddr> {
    let mut ring = vec![primary];
    for a in advertised {
        let a = SocketAddr::new(a.ip(), port);
        if !ring.iter().any(|r| r.ip() == a.ip()) {
            ring.push(a);
        }
    }
    (0..n.max(1)).map(|i| ring[i % ring.len()]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_spread_over_advertised_addresses_primary_first() {
        let a = |s: &str| s.parse::<SocketAddr>().unwrap();
        let p = a("127.0.0.1:4450");
        let adv = [a("127.0.0.2:0"), a("127.0.0.1:0"), a("127.0.0.3:0")];
        assert_eq!(
            spread(p, &adv, 4, 4450),
            vec![p, a("127.0.0.2:4450"), a("127.0.0.3:4450"), p]
        );
        assert_eq!(spread(p, &[], 3, 4450), vec![p, p, p]);
        assert_eq!(spread(p, &adv, 1, 4450), vec![p]);
    }
}
