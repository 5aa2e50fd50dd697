//! UTC timestamps as text, for metadata, conversation ids and the prompt's runtime section.
//!
//! Times come from an injected clock (`llm_core::Clock`), never read here, so tests fix them.

use std::time::{SystemTime, UNIX_EPOCH};

/// `time` as RFC 3339 in UTC to the second: `2026-02-05T14:30:00Z`. Times before 1970 read
/// as 1970.
pub fn format_utc(time: SystemTime) -> String {
    let (date, [h, m, s]) = civil(time);
    format!("{date}T{h:02}:{m:02}:{s:02}Z")
}

/// `time` as a compact UTC stamp usable in a file name: `20260205-143000`.
pub fn compact_utc(time: SystemTime) -> String {
    let (date, [h, m, s]) = civil(time);
    format!("{}-{h:02}{m:02}{s:02}", date.replace('-', ""))
}

/// The date as `YYYY-MM-DD` and the time of day, in UTC.
fn civil(time: SystemTime) -> (String, [u64; 3]) {
    let secs = time
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, of_day) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's days-to-civil algorithm, for days since 1970-01-01.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (
        format!("{year:04}-{month:02}-{day:02}"),
        [of_day / 3_600, of_day % 3_600 / 60, of_day % 60],
    )
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
