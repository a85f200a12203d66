//! The common start of a run's workers, set once every worker has its engine. A
//! network engine connects and logs on when it is built (an SMB session: TCP,
//! NEGOTIATE, NTLM, TREE_CONNECT, CREATE; multichannel binds every channel too),
//! which takes from milliseconds to seconds on a busy machine. A start fixed before
//! the workers were spawned counted that set-up as measured time: a 1 s run of three
//! SMB channels could end before its first I/O, and a one-pass read's MB/s included
//! the log-on, which a client such as `smbclient` leaves out of its own figure. So
//! each worker builds its engine, arrives here and waits; the launcher waits for all
//! of them, then publishes the start (a little in the future, as before).

use std::sync::{Arc, Condvar, Mutex};

#[derive(Default)]
struct State {
    arrived: usize,
    start_ns: Option<u64>,
}

/// Shared by the launcher and its workers.
#[derive(Default)]
pub struct StartGate {
    state: Mutex<State>,
    changed: Condvar,
}

/// A worker's place at the gate: arriving (or being dropped, when the worker fails
/// or panics before it could) counts it as ready.
pub struct Arrival {
    gate: Arc<StartGate>,
    done: bool,
}

impl StartGate {
    pub fn new() -> Arc<StartGate> {
        Arc::new(StartGate::default())
    }

    /// One worker's place; hand it to the worker thread.
    pub fn place(self: &Arc<Self>) -> Arrival {
        Arrival {
            gate: self.clone(),
            done: false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Blocks the launcher until `n` workers have arrived.
    pub fn wait_for(&self, n: usize) {
        let mut s = self.lock();
        while s.arrived < n {
            s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Publishes the start and releases every worker waiting for it.
    pub fn open(&self, start_ns: u64) {
        self.lock().start_ns = Some(start_ns);
        self.changed.notify_all();
    }
}

impl Arrival {
    fn arrive(&mut self) {
        if !self.done {
            self.done = true;
            self.gate.lock().arrived += 1;
            self.gate.changed.notify_all();
        }
    }

    /// Counts this worker as ready and waits for the common start; returns it.
    pub fn wait_start(mut self) -> u64 {
        self.arrive();
        let mut s = self.gate.lock();
        loop {
            if let Some(t) = s.start_ns {
                return t;
            }
            s = self.gate.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for Arrival {
    fn drop(&mut self) {
        self.arrive();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_start_only_when_all_arrived_and_a_dropped_place_counts() {
        let gate = StartGate::new();
        let (a, b) = (gate.place(), gate.place());
        let t = std::thread::spawn(move || a.wait_start());
        drop(b);
        gate.wait_for(2);
        gate.open(42);
        assert_eq!(t.join().unwrap(), 42);
    }
}
