//! Which thread drives which stream. One thread per stream is the right shape while
//! there are cores for them. When closed-loop streams (writing as fast as the
//! socket takes it, or reading to end of file) outnumber the cores the test may use,
//! they are dealt out over one thread per core instead, and each such thread drives
//! its sockets without blocking from one poll(2), a burst of writes or reads per
//! readiness report — as iperf3 drives all its streams from one thread, but on every
//! core. Four streams on one pinned core then cost one thread's wake-ups, not four
//! threads' context switches. Paced and request/response streams keep a thread each:
//! their timing is their own.

use std::io::{self, Read};
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

use super::stream::{self, Control, Job, StreamError, StreamState};
use crate::clock::now_ns;

/// Writes (or reads) one stream makes per readiness report before the next
/// stream's turn: enough to fill or drain a socket buffer in one turn at 128 KiB
/// each, few enough that no stream waits behind another for long.
const BURST: usize = 8;

/// Starts the threads that drive `members`; closed-loop streams share one thread
/// per core when they outnumber the cores (`cpus` when given, else the CPUs this
/// process may run on). Thread `i` is pinned to `cpus[i % len]` when given.
pub fn spawn(
    members: Vec<(Arc<StreamState>, Job)>,
    ctl: &Arc<Control>,
    cpus: Option<&[usize]>,
) -> Vec<JoinHandle<()>> {
    let cpus = cpus.filter(|c| !c.is_empty());
    let pin = |i: usize| cpus.map(|c| c[i % c.len()]);
    let cores = match cpus {
        Some(c) => c.len(),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let streaming = members.iter().filter(|(_, j)| closed_loop(j)).count();
    let mut threads = Vec::new();
    if streaming <= cores {
        for (i, (st, job)) in members.into_iter().enumerate() {
            let (ctl, cpu) = (ctl.clone(), pin(i));
            threads.push(std::thread::spawn(move || stream::run(st, ctl, job, cpu)));
        }
        return threads;
    }
    let mut groups: Vec<Vec<(Arc<StreamState>, Job)>> = (0..cores).map(|_| Vec::new()).collect();
    let mut dealt = 0;
    for (st, job) in members {
        if closed_loop(&job) {
            groups[dealt % cores].push((st, job));
            dealt += 1;
        } else {
            let (ctl, cpu) = (ctl.clone(), pin(cores + threads.len()));
            threads.push(std::thread::spawn(move || stream::run(st, ctl, job, cpu)));
        }
    }
    for (g, group) in groups.into_iter().enumerate() {
        let (ctl, cpu) = (ctl.clone(), pin(g));
        threads.push(std::thread::spawn(move || run_group(group, &ctl, cpu)));
    }
    threads
}

/// Streams a group thread can drive: no schedule, no transactions.
fn closed_loop(job: &Job) -> bool {
    matches!(job, Job::Send { gap_ns: None, .. } | Job::Recv { .. })
}

/// One stream of a group: what it sends (nothing for a reader) and its counts.
struct Member {
    st: Arc<StreamState>,
    send: Option<(Vec<u8>, Option<std::fs::File>)>,
    /// A reader's read size.
    recv_bs: usize,
    bytes: u64,
    ops: u64,
    open: bool,
}

impl Member {
    fn new(st: Arc<StreamState>, job: Job) -> Result<Self, (Arc<StreamState>, StreamError)> {
        let recv_bs = match job {
            Job::Recv { bs } => bs as usize,
            _ => 0,
        };
        let send = match job {
            Job::Send { bs, zerocopy, .. } => {
                let buf = stream::pattern(bs);
                let memfd = match zerocopy {
                    true => match stream::memfd_with(&buf) {
                        Ok(f) => Some(f),
                        Err(e) => return Err((st, StreamError::Memfd(e))),
                    },
                    false => None,
                };
                Some((buf, memfd))
            }
            _ => None,
        };
        if let Err(e) = st.sock.set_nonblocking(true) {
            let e = stream::describe(e, &st, "set non-blocking");
            return Err((st, e));
        }
        Ok(Member {
            st,
            send,
            recv_bs,
            bytes: 0,
            ops: 0,
            open: true,
        })
    }

    /// Up to [`BURST`] writes or reads, until the socket would block. Ok(false)
    /// when the stream ended (its reader saw end of file).
    fn turn(&mut self, rbuf: &mut [u8]) -> Result<bool, StreamError> {
        let st = &*self.st;
        for _ in 0..BURST {
            let n = match &self.send {
                Some((buf, memfd)) => stream::write_once(&st.sock, buf, memfd.as_ref(), 0)
                    .map_err(|e| stream::describe(e, st, "send"))?,
                None => match (&st.sock).read(rbuf) {
                    Ok(0) => {
                        st.eof_ns.store(now_ns(), Ordering::Release);
                        return Ok(false);
                    }
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(stream::describe(e, st, "receive")),
                },
            };
            if n == 0 {
                break;
            }
            self.bytes += n as u64;
            self.ops += 1;
            let counter = match self.send {
                Some(_) => &st.bytes_out,
                None => &st.bytes_in,
            };
            counter.store(self.bytes, Ordering::Relaxed);
            st.ops.store(self.ops, Ordering::Relaxed);
        }
        Ok(true)
    }

    /// Ends the stream: its first failure, if any, is kept; it is marked finished.
    fn end(&mut self, err: Option<StreamError>) {
        if let Some(e) = err {
            self.st.fail(crate::errors::chain(&e));
        }
        self.open = false;
        self.st.finished.store(true, Ordering::Release);
    }
}

/// Drives the group's streams until every one has ended: writers until the stop
/// (then their write side is shut), readers to end of file or the drain grace.
fn run_group(group: Vec<(Arc<StreamState>, Job)>, ctl: &Control, cpu: Option<usize>) {
    stream::pin(cpu, group.iter().map(|(st, _)| &**st));
    let mut members = Vec::new();
    for (st, job) in group {
        match Member::new(st, job) {
            Ok(m) => members.push(m),
            Err((st, e)) => {
                st.fail(crate::errors::chain(&e));
                st.finished.store(true, Ordering::Release);
            }
        }
    }
    let rbuf_len = members.iter().map(|m| m.recv_bs).max().unwrap_or(0);
    let mut rbuf = vec![0u8; rbuf_len.max(4096)];
    let mut fds: Vec<libc::pollfd> = Vec::with_capacity(members.len());
    let mut at: Vec<usize> = Vec::with_capacity(members.len());
    loop {
        settle_stop(&mut members, ctl);
        fds.clear();
        at.clear();
        for (i, m) in members.iter().enumerate().filter(|(_, m)| m.open) {
            let events = if m.send.is_some() {
                libc::POLLOUT
            } else {
                libc::POLLIN
            };
            fds.push(libc::pollfd {
                fd: m.st.sock.as_raw_fd(),
                events,
                revents: 0,
            });
            at.push(i);
        }
        if fds.is_empty() {
            return;
        }
        let timeout_ms = stream::POLL_TIMEOUT.as_millis() as libc::c_int;
        // SAFETY: fds is a live array of fds.len() pollfds whose descriptors the
        // members own for the call.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
        if n <= 0 {
            continue; // a timeout, or a signal: look at the stop again
        }
        for (fd, &i) in fds.iter().zip(&at) {
            if fd.revents == 0 {
                continue;
            }
            let m = &mut members[i];
            match m.turn(&mut rbuf) {
                Ok(true) => {}
                Ok(false) => m.end(None),
                Err(e) => m.end(Some(e)),
            }
        }
    }
}

/// After the stop: writers shut their write side and end; a reader still open
/// when the drain grace has passed ends with [`StreamError::NoEnd`].
fn settle_stop(members: &mut [Member], ctl: &Control) {
    if !ctl.stopped() {
        return;
    }
    let expired = ctl.drain_expired();
    for m in members.iter_mut().filter(|m| m.open) {
        if m.send.is_some() {
            let _ = m.st.sock.shutdown(Shutdown::Write);
            m.end(None);
        } else if expired {
            let e = StreamError::NoEnd { stream: m.st.index };
            m.end(Some(e));
        }
    }
}
