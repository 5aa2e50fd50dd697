//! How the reads and writes of one process share a workspace's store (an MCP server answers
//! many requests at once): reads share one read-only handle, opened by the first read that
//! finds none and dropped by the last read in flight, so that between requests every other
//! process opens the store as if this one were not there (opening costs well under a
//! millisecond). A write waits for the reads in flight, new reads wait behind it, and it opens
//! the store for writing alone.
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use merkle_store::Store;

/// The handles of one workspace in this process ([`super::Workspace`]'s clones share them).
#[derive(Default)]
pub(super) struct Handles {
    held: Mutex<Held>,
    turn: Condvar,
}

/// Who holds the store now.
#[derive(Default)]
struct Held {
    /// The read-only handle the reads in flight share.
    reader: Option<Arc<Store>>,
    readers: usize,
    writing: bool,
    writers_waiting: usize,
}

impl Handles {
    fn held(&self) -> MutexGuard<'_, Held> {
        // A panic elsewhere leaves counts, never a broken invariant: carry on with them.
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `f` on the shared read-only handle (opened by `open` where no read holds one), once no
    /// write of this process runs or waits.
    pub(super) fn read<T, E>(
        &self,
        open: impl FnOnce() -> Result<Store, E>,
        f: impl FnOnce(&Store) -> Result<T, E>,
    ) -> Result<T, E> {
        let store = {
            let mut h = self.held();
            while h.writing || h.writers_waiting > 0 {
                h = self.turn.wait(h).unwrap_or_else(|e| e.into_inner());
            }
            let store = match &h.reader {
                Some(store) => Arc::clone(store),
                None => {
                    let store = Arc::new(open()?);
                    h.reader = Some(Arc::clone(&store));
                    store
                }
            };
            h.readers += 1;
            store
        };
        let _done = ReadDone(self);
        f(&store)
    }

    /// `f` once no read of this process is in flight, while no other read or write of it runs.
    pub(super) fn alone<T>(&self, f: impl FnOnce() -> T) -> T {
        {
            let mut h = self.held();
            h.writers_waiting += 1;
            while h.writing || h.readers > 0 {
                h = self.turn.wait(h).unwrap_or_else(|e| e.into_inner());
            }
            h.writers_waiting -= 1;
            h.writing = true;
        }
        let _done = WriteDone(self);
        f()
    }
}

/// Ends a read: the last one in flight drops the shared handle.
struct ReadDone<'a>(&'a Handles);

impl Drop for ReadDone<'_> {
    fn drop(&mut self) {
        let mut h = self.0.held();
        h.readers -= 1;
        if h.readers == 0 {
            h.reader = None;
            self.0.turn.notify_all();
        }
    }
}

/// Ends a write.
struct WriteDone<'a>(&'a Handles);

impl Drop for WriteDone<'_> {
    fn drop(&mut self) {
        self.0.held().writing = false;
        self.0.turn.notify_all();
    }
}
