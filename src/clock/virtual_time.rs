//! Virtual time: a clock that jumps from event to event instead of following the wall,
//! for `sim:` targets opened with `time=virtual`. A simulated device's truth (service
//! times, queueing, stalls) then reaches the result exactly, whatever the host does:
//! no late timer wake-ups, no CPU stolen by a hypervisor, no tool overhead. A run of
//! simulated minutes takes real milliseconds.
//!
//! It is a conservative discrete-event scheduler over threads. Every thread that
//! advances time (each worker) is a *participant*. Time stands still while any
//! participant is running; a participant that must wait for time `t` parks, and when
//! every participant is parked, the clock jumps to the earliest time one of them waits
//! for and wakes those whose time has come. Threads that only read the clock (the
//! collector) are not participants.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// A virtual clock and the participants that move it.
#[derive(Debug)]
pub struct VirtualClock {
    now_ns: AtomicU64,
    state: Mutex<State>,
    woken: Condvar,
}

#[derive(Debug)]
struct State {
    /// Participants not parked.
    running: usize,
    /// The times parked participants wait for.
    parked: BinaryHeap<Reverse<u64>>,
}

impl Default for VirtualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl VirtualClock {
    pub const fn new() -> Self {
        VirtualClock {
            now_ns: AtomicU64::new(0),
            state: Mutex::new(State {
                running: 0,
                parked: BinaryHeap::new(),
            }),
            woken: Condvar::new(),
        }
    }

    /// The virtual time in ns.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.now_ns.load(Ordering::Acquire)
    }

    /// Moves the clock forward to `t_ns` if it is behind (never backward).
    pub fn start_at(&self, t_ns: u64) {
        self.now_ns.fetch_max(t_ns, Ordering::AcqRel);
    }

    /// Registers `n` participants. Call it for every participant before any of them
    /// may wait, or the first to wait would move time on without the others.
    pub fn join(&self, n: usize) {
        self.lock().running += n;
    }

    /// [`join`](Self::join)s `n` participants, to be handed to their threads.
    pub fn reserve(&self, n: usize) -> Reservation<'_> {
        self.join(n);
        Reservation {
            clock: self,
            left: n,
        }
    }

    /// Unregisters one participant (when it ends); the others may then move on.
    pub fn leave(&self) {
        let mut st = self.lock();
        st.running = st.running.saturating_sub(1);
        self.advance_if_all_parked(&mut st);
    }

    /// Parks the calling participant until the clock reads at least `t_ns`; returns
    /// the clock then.
    pub fn wait_until(&self, t_ns: u64) -> u64 {
        let mut st = self.lock();
        if self.now_ns() >= t_ns {
            return self.now_ns();
        }
        st.parked.push(Reverse(t_ns));
        st.running = st.running.saturating_sub(1);
        self.advance_if_all_parked(&mut st);
        while self.now_ns() < t_ns {
            st = self.woken.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        self.now_ns()
    }

    /// When no participant runs, jumps to the earliest parked time and marks everyone
    /// parked for it (or earlier) as running again.
    fn advance_if_all_parked(&self, st: &mut State) {
        if st.running > 0 {
            return;
        }
        let Some(&Reverse(t)) = st.parked.peek() else {
            return;
        };
        self.start_at(t);
        let now = self.now_ns();
        while st.parked.peek().is_some_and(|&Reverse(p)| p <= now) {
            st.parked.pop();
            st.running += 1;
        }
        self.woken.notify_all();
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Participants registered ahead of starting ([`VirtualClock::reserve`]); those
/// never handed to a thread leave when this is dropped, so an early return while
/// starting workers does not hold the started ones still forever.
pub struct Reservation<'a> {
    clock: &'a VirtualClock,
    left: usize,
}

impl<'a> Reservation<'a> {
    /// One reserved place goes to a thread, which must hold it as a [`Participant`].
    pub fn hand_over(&mut self) -> Participant<'a> {
        self.left = self.left.saturating_sub(1);
        Participant(self.clock)
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        for _ in 0..self.left {
            self.clock.leave();
        }
    }
}

/// Leaves the clock when dropped, so a participant that ends early (an error, a
/// panic) never holds the others still.
pub struct Participant<'a>(pub &'a VirtualClock);

impl Drop for Participant<'_> {
    fn drop(&mut self) {
        self.0.leave();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_lone_participant_jumps_straight_to_its_time() {
        let c = VirtualClock::new();
        c.start_at(1_000);
        c.join(1);
        assert_eq!(c.wait_until(500), 1_000, "the past is already here");
        assert_eq!(c.wait_until(5_000_000_000), 5_000_000_000);
        assert_eq!(c.now_ns(), 5_000_000_000);
        c.leave();
    }

    #[test]
    fn time_waits_for_every_participant_and_goes_in_order() {
        // Three participants each park at their own times; the clock visits the
        // union of those times in order and never passes a participant's next time.
        let c = Arc::new(VirtualClock::new());
        c.join(3);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handles: Vec<_> = (1..=3u64)
            .map(|k| {
                let (c, seen) = (c.clone(), seen.clone());
                std::thread::spawn(move || {
                    let _p = Participant(&c);
                    for i in 1..=20u64 {
                        let t = i * k * 1_000;
                        let woke = c.wait_until(t);
                        // Woken exactly at its time: nobody let the clock run past it.
                        assert_eq!(woke, t, "participant {k}");
                        seen.lock().unwrap().push(woke);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 60);
        assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
        assert_eq!(c.now_ns(), 60_000);
    }

    #[test]
    fn a_participant_leaving_releases_the_others() {
        let c = Arc::new(VirtualClock::new());
        c.join(2);
        let c2 = c.clone();
        let h = std::thread::spawn(move || c2.wait_until(7_000));
        // While this participant runs, time stands still.
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(c.now_ns(), 0);
        c.leave();
        assert_eq!(h.join().unwrap(), 7_000);
    }
}
