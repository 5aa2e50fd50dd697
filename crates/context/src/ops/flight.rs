//! One check of the disk shared by the reads that wait for it. A read must answer for the files
//! as they were when it arrived; a check of their stats that starts after the read arrived sees
//! every change made before it. So reads that arrive while a check runs wait for the next one
//! and share it, rather than each stat every file the watcher cannot see: at a million files
//! under the kernel's limit of watches, a third of the tree, about a second of system time a
//! read, which ten MCP clients at once turned into seconds of queueing for every `get_node`.
use std::sync::{Condvar, Mutex, MutexGuard};

use merkle_store::NodeId;

/// Checks of one kind, one at a time, each shared by the reads that arrived before it started.
#[derive(Default)]
pub(super) struct Flight {
    state: Mutex<State>,
    done: Condvar,
}

#[derive(Default)]
struct State {
    /// How many checks have started; a check is numbered by the count when it started.
    started: u64,
    running: bool,
    /// The last check to finish: its number, the root it was asked about and its answer.
    last: Option<(u64, NodeId, bool)>,
    /// Reads waiting for a check (for the tests to know when they all are).
    #[cfg(test)]
    waiting: usize,
}

impl Flight {
    fn state(&self) -> MutexGuard<'_, State> {
        // A check that panicked leaves the state as it was: carry on with it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the disk vouches for the tree at `root`, by `check` or by a check of the same
    /// root that started after this call did (the one running, or the next, which runs here
    /// when no other read runs it).
    pub(super) fn vouch(&self, root: NodeId, check: impl FnOnce() -> bool) -> bool {
        let mut state = self.state();
        let arrived = state.started;
        loop {
            if let Some((number, of, answer)) = state.last
                && number > arrived
                && of == root
            {
                return answer;
            }
            if !state.running {
                break;
            }
            #[cfg(test)]
            {
                state.waiting += 1;
            }
            state = self.done.wait(state).unwrap_or_else(|e| e.into_inner());
            #[cfg(test)]
            {
                state.waiting -= 1;
            }
        }
        state.started += 1;
        state.running = true;
        let number = state.started;
        drop(state);
        // However `check` ends (a panic too), none runs after it and the waiting reads wake:
        // to its answer, or to run their own.
        let _ended = Ended(self);
        let answer = check();
        self.state().last = Some((number, root, answer));
        answer
    }
}

/// Ends the running check when dropped: none runs, and the waiting reads wake.
struct Ended<'f>(&'f Flight);

impl Drop for Ended<'_> {
    fn drop(&mut self) {
        self.0.state().running = false;
        self.0.done.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;

    use super::*;

    fn root(n: u8) -> NodeId {
        merkle_store::Hash([n; 32])
    }

    /// Until `n` reads wait on `flight`.
    fn wait_for(flight: &Flight, n: usize) {
        while flight.state().waiting < n {
            std::thread::yield_now();
        }
    }

    /// Reads that arrive while a check runs share the next one: eight reads waiting behind a
    /// slow check cost one more check, not eight; and a read alone runs its own.
    #[test]
    fn reads_arriving_during_a_check_share_the_next() {
        let flight = Arc::new(Flight::default());
        let checks = Arc::new(AtomicUsize::new(0));
        let (started, wait_started) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let first = {
            let (flight, checks) = (Arc::clone(&flight), Arc::clone(&checks));
            std::thread::spawn(move || {
                flight.vouch(root(1), || {
                    checks.fetch_add(1, Ordering::SeqCst);
                    started.send(()).expect("the test waits");
                    released.recv().expect("the test releases the check");
                    false
                })
            })
        };
        wait_started.recv().expect("the check starts");
        let waiting: Vec<_> = (0..8)
            .map(|_| {
                let (flight, checks) = (Arc::clone(&flight), Arc::clone(&checks));
                std::thread::spawn(move || {
                    flight.vouch(root(1), || {
                        checks.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        true
                    })
                })
            })
            .collect();
        // The eight wait (a check that started before them does not answer for them).
        wait_for(&flight, 8);
        release.send(()).expect("the check waits");
        assert!(!first.join().expect("the first read returns"));
        for read in waiting {
            assert!(
                read.join().expect("a waiting read returns"),
                "each waiting read has the next check's answer"
            );
        }
        assert_eq!(checks.load(Ordering::SeqCst), 2);
        // Alone, a read checks for itself: a finished check started before it does not count.
        assert!(!flight.vouch(root(1), || false));
        assert!(flight.vouch(root(2), || true));
    }

    /// A check that panics wakes the reads waiting on it, which then check for themselves.
    #[test]
    fn a_panicking_check_wakes_the_waiting_reads() {
        let flight = Arc::new(Flight::default());
        let (started, wait_started) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let panicking = {
            let flight = Arc::clone(&flight);
            std::thread::spawn(move || {
                flight.vouch(root(1), || {
                    started.send(()).expect("the test waits");
                    released.recv().expect("the test releases the check");
                    panic!("a check that fails");
                })
            })
        };
        wait_started.recv().expect("the check starts");
        let waiting = {
            let flight = Arc::clone(&flight);
            std::thread::spawn(move || flight.vouch(root(1), || true))
        };
        wait_for(&flight, 1);
        release.send(()).expect("the check waits");
        assert!(panicking.join().is_err());
        assert!(waiting.join().expect("the waiting read returns"));
    }
}
