//! Time and randomness as injectable services, so retries, rate limits and timeouts are
//! tested without sleeping and with reproducible jitter.

use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use futures_util::future::BoxFuture;

/// The time source of a client: measuring, waiting and reading the wall clock (for
/// `retry-after` given as an HTTP date).
pub trait Clock: Send + Sync + fmt::Debug {
    fn now(&self) -> Instant;
    fn system_now(&self) -> SystemTime;
    /// Waits for `duration`: the caller has chosen to pause (backoff, rate limit).
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;

    /// Resolves once `duration` has passed; raced against work to bound it (timeouts).
    /// Unlike `sleep`, nothing waits on it for its own sake, so a test clock can keep it
    /// from firing until the test moves time.
    fn timer(&self, duration: Duration) -> BoxFuture<'static, ()>;
}

/// The real clock, sleeping on the tokio timer; needs a tokio runtime with time enabled.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn system_now(&self) -> SystemTime {
        SystemTime::now()
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }

    fn timer(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// Runs `work` against a `clock` timer; `None` if the timer fired first.
pub(crate) async fn with_timeout<F: std::future::Future>(
    clock: &dyn Clock,
    after: Duration,
    work: F,
) -> Option<F::Output> {
    let work = std::pin::pin!(work);
    match futures_util::future::select(work, clock.timer(after)).await {
        futures_util::future::Either::Left((output, _)) => Some(output),
        futures_util::future::Either::Right(_) => None,
    }
}

/// Uniform random numbers for retry jitter and minted tool-call ids.
pub trait Rng: Send + Sync + fmt::Debug {
    fn next_u64(&self) -> u64;

    /// A number in `[0, 1)`.
    fn next_f64(&self) -> f64 {
        // The top 53 bits fill an f64 mantissa exactly.
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// SplitMix64: tiny, fast, and good enough for jitter; not for secrets.
#[derive(Debug)]
pub struct SplitMix64 {
    state: AtomicU64,
}

impl SplitMix64 {
    pub fn seeded(seed: u64) -> Self {
        Self {
            state: AtomicU64::new(seed),
        }
    }

    /// Seeded from the process's hash randomness, different in each process.
    pub fn from_entropy() -> Self {
        Self::seeded(RandomState::new().hash_one(Instant::now()))
    }
}

impl Rng for SplitMix64 {
    fn next_u64(&self) -> u64 {
        let mut z = self
            .state
            .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
            .wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// A clock that never waits: `sleep` moves time forward at once and records the duration,
/// and timeout timers fire only when time is moved past them. For tests of retries, rate
/// limits and timeouts, here and in crates that use this one.
#[derive(Debug)]
pub struct ManualClock {
    start: Instant,
    system_start: SystemTime,
    elapsed: tokio::sync::watch::Sender<Duration>,
    sleeps: std::sync::Mutex<Vec<Duration>>,
}

impl ManualClock {
    pub fn new(system_start: SystemTime) -> Self {
        Self {
            start: Instant::now(),
            system_start,
            elapsed: tokio::sync::watch::Sender::new(Duration::ZERO),
            sleeps: std::sync::Mutex::default(),
        }
    }

    /// Moves time forward, firing every timer that falls due.
    pub fn advance(&self, duration: Duration) {
        self.elapsed.send_modify(|elapsed| *elapsed += duration);
    }

    /// Every duration passed to `sleep`, in order.
    pub fn sleeps(&self) -> Vec<Duration> {
        self.sleeps
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn elapsed(&self) -> Duration {
        *self.elapsed.borrow()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.start + self.elapsed()
    }

    fn system_now(&self) -> SystemTime {
        self.system_start + self.elapsed()
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        self.sleeps
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(duration);
        self.advance(duration);
        Box::pin(std::future::ready(()))
    }

    fn timer(&self, duration: Duration) -> BoxFuture<'static, ()> {
        let due = self.elapsed() + duration;
        let mut elapsed = self.elapsed.subscribe();
        Box::pin(async move {
            // The sender lives as long as the clock; if it is gone, time stops and the
            // timer never fires, like a real timer on a stopped runtime.
            if elapsed.wait_for(|now| *now >= due).await.is_err() {
                std::future::pending::<()>().await;
            }
        })
    }
}
