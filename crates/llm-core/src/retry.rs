//! When and how long to wait before sending a failed request again.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

use crate::clock::Rng;
use crate::error::Error;

/// Exponential backoff with jitter, deferring to the server's own hints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt; 0 disables retrying.
    pub max_retries: u32,
    /// The wait before the first retry; it doubles with each further retry.
    pub base_delay: Duration,
    /// The cap on a computed (not server-given) wait.
    pub max_delay: Duration,
    /// A server's `retry-after` longer than this is not waited for: the error is returned,
    /// because a caller would rather decide than hang for minutes.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 2,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// The wait before retry number `retry` (0-based) after `error`, or `None` when the
    /// request must not be retried.
    pub fn delay(
        &self,
        retry: u32,
        error: &Error,
        hints: &RetryHints,
        rng: &dyn Rng,
    ) -> Option<Duration> {
        if retry >= self.max_retries {
            return None;
        }
        let retryable = match hints.should_retry {
            Some(explicit) => explicit && !matches!(error, Error::QuotaExhausted { .. }),
            None => error.is_retryable(),
        };
        if !retryable {
            return None;
        }
        if let Some(after) = hints.retry_after {
            return (after <= self.max_retry_after).then_some(after);
        }
        let exponential = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(retry))
            .min(self.max_delay);
        // Up to a quarter less than the full delay, so clients that failed together spread out.
        let jitter = 1.0 - 0.25 * rng.next_f64();
        Some(exponential.mul_f64(jitter))
    }
}

/// What a failed response's headers say about retrying.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetryHints {
    /// `x-should-retry`: the server's verdict, which overrides ours.
    pub should_retry: Option<bool>,
    /// From `retry-after-ms`, else `retry-after` (seconds or an HTTP date).
    pub retry_after: Option<Duration>,
}

impl RetryHints {
    pub fn from_headers(headers: &HeaderMap, now: SystemTime) -> Self {
        let text = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
        let should_retry = match text("x-should-retry") {
            Some("true") => Some(true),
            Some("false") => Some(false),
            _ => None,
        };
        let retry_after_ms = text("retry-after-ms")
            .and_then(|ms| ms.trim().parse::<f64>().ok())
            .filter(|ms| ms.is_finite() && *ms >= 0.0)
            .map(|ms| seconds(ms / 1000.0));
        let retry_after =
            retry_after_ms.or_else(|| text("retry-after").and_then(|v| parse_retry_after(v, now)));
        Self {
            should_retry,
            retry_after,
        }
    }
}

/// Reads `retry-after` as delay-seconds or an HTTP date; a date in the past means now.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| self::seconds(seconds));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// A server's count of seconds as a wait; one too long for a `Duration` (`retry-after:
/// 99999999999999999999`) is the longest wait there is, which no policy waits for.
fn seconds(seconds: f64) -> Duration {
    Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX)
}
