//! A client-side rate limiter that waits instead of failing: token buckets for requests per
//! minute and (input) tokens per minute.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::clock::Clock;

/// Limits per minute; `None` leaves that dimension unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateLimit {
    pub requests_per_minute: Option<u32>,
    pub tokens_per_minute: Option<u32>,
}

/// Two token buckets, each full at start and refilled continuously at its rate.
#[derive(Debug)]
pub struct RateLimiter {
    limit: RateLimit,
    state: Mutex<Buckets>,
}

#[derive(Debug)]
struct Buckets {
    requests: f64,
    tokens: f64,
    refilled_at: Instant,
}

impl RateLimiter {
    pub fn new(limit: RateLimit, now: Instant) -> Self {
        Self {
            limit,
            state: Mutex::new(Buckets {
                requests: limit.requests_per_minute.map_or(0.0, f64::from),
                tokens: limit.tokens_per_minute.map_or(0.0, f64::from),
                refilled_at: now,
            }),
        }
    }

    /// Waits on `clock` until one request of `tokens` tokens fits, then takes it.
    ///
    /// A request larger than a whole minute's tokens waits for a full bucket and then goes,
    /// rather than waiting forever.
    pub async fn acquire(&self, tokens: u64, clock: &dyn Clock) {
        loop {
            let wait = self.try_acquire(tokens, clock.now());
            match wait {
                None => return,
                Some(wait) => clock.sleep(wait).await,
            }
        }
    }

    /// Takes capacity for one request now, or says how long to wait before trying again.
    pub fn try_acquire(&self, tokens: u64, now: Instant) -> Option<Duration> {
        let mut buckets = self.lock();
        let elapsed = now
            .saturating_duration_since(buckets.refilled_at)
            .as_secs_f64();
        buckets.refilled_at = now;
        let per_second = |per_minute: u32| f64::from(per_minute) / 60.0;

        let mut wait: f64 = 0.0;
        if let Some(rpm) = self.limit.requests_per_minute.filter(|&rpm| rpm > 0) {
            buckets.requests = (buckets.requests + elapsed * per_second(rpm)).min(f64::from(rpm));
            if buckets.requests < 1.0 {
                wait = wait.max((1.0 - buckets.requests) / per_second(rpm));
            }
        }
        let mut wanted_tokens = tokens as f64;
        if let Some(tpm) = self.limit.tokens_per_minute.filter(|&tpm| tpm > 0) {
            let capacity = f64::from(tpm);
            wanted_tokens = wanted_tokens.min(capacity);
            buckets.tokens = (buckets.tokens + elapsed * per_second(tpm)).min(capacity);
            if buckets.tokens < wanted_tokens {
                wait = wait.max((wanted_tokens - buckets.tokens) / per_second(tpm));
            }
        }
        if wait > 0.0 {
            // Round up to whole milliseconds so the retry finds the bucket refilled.
            return Some(Duration::from_millis((wait * 1000.0).ceil() as u64));
        }
        if self.limit.requests_per_minute.is_some() {
            buckets.requests -= 1.0;
        }
        if self.limit.tokens_per_minute.is_some() {
            buckets.tokens -= wanted_tokens;
        }
        None
    }

    fn lock(&self) -> MutexGuard<'_, Buckets> {
        // Buckets hold plain numbers; a panic elsewhere cannot leave them half-updated.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
