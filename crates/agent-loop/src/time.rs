//! UTC timestamps as text, for metadata, conversation ids and the prompt's runtime section.
//!
//! Times come from an injected clock (`llm_core::Clock`), never read here, so tests fix them.

use std::time::{SystemTime, UNIX_EPOCH};

use merkle_store::time::Utc;

/// `time` as RFC 3339 in UTC to the second: `2026-02-05T14:30:00Z`. Times before 1970 read
/// as 1970.
pub fn format_utc(time: SystemTime) -> String {
    let t = utc(time);
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        t.date(),
        t.hour,
        t.minute,
        t.second
    )
}

/// `time` as a compact UTC stamp usable in a file name: `20260205-143000`.
pub fn compact_utc(time: SystemTime) -> String {
    let t = utc(time);
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

/// The civil fields of `time` (merkle-store's one date formatter).
fn utc(time: SystemTime) -> Utc {
    let ms = time
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0);
    Utc::from_millis(ms)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn check(secs: u64, expected: &str) {
        assert_eq!(format_utc(UNIX_EPOCH + Duration::from_secs(secs)), expected);
    }

    #[test]
    fn formats_utc() {
        check(0, "1970-01-01T00:00:00Z");
        check(1_770_301_800, "2026-02-05T14:30:00Z");
        check(951_782_400, "2000-02-29T00:00:00Z");
        check(4_107_542_399, "2100-02-28T23:59:59Z");
        assert_eq!(
            compact_utc(UNIX_EPOCH + Duration::from_secs(1_770_301_800)),
            "20260205-143000"
        );
    }
}
