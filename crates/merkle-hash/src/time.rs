//! UTC times as text, from milliseconds since the Unix epoch: the one date formatter of the
//! workspace (frames' `created_at`, audit records, conversation ids, the agent's prompt, the
//! fake batch API's times), in the leaf crate so that any crate can print a time without
//! depending on the store (which re-exports it as `merkle_store::time`).
//!
//! Days become a civil date by Howard Hinnant's algorithm, so no date crate is needed for one
//! format. Times are given, never read here: callers inject their clocks.

/// A UTC instant split into its civil fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Utc {
    pub year: u64,
    pub month: u64,
    pub day: u64,
    pub hour: u64,
    pub minute: u64,
    pub second: u64,
    pub millisecond: u64,
}

impl Utc {
    /// The instant `ms` milliseconds after 1970-01-01T00:00:00Z.
    pub fn from_millis(ms: u64) -> Utc {
        let secs = ms / 1000;
        let (days, of_day) = (secs / 86_400, secs % 86_400);
        let z = days + 719_468;
        let era = z / 146_097;
        let doe = z % 146_097;
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        Utc {
            year: yoe + era * 400 + u64::from(month <= 2),
            month,
            day,
            hour: of_day / 3_600,
            minute: of_day % 3_600 / 60,
            second: of_day % 60,
            millisecond: ms % 1000,
        }
    }

    /// `2026-02-05`.
    pub fn date(&self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// RFC 3339 in UTC with milliseconds: `2026-02-05T14:30:00.000Z`.
pub fn rfc3339_millis(ms: u64) -> String {
    let t = Utc::from_millis(ms);
    format!(
        "{}T{:02}:{:02}:{:02}.{:03}Z",
        t.date(),
        t.hour,
        t.minute,
        t.second,
        t.millisecond
    )
}

#[cfg(test)]
mod tests {
    use super::rfc3339_millis;

    #[test]
    fn formats_known_instants() {
        let got: Vec<String> = [0, 951_782_400_123, 1_767_225_601_500, 4_107_542_399_999]
            .into_iter()
            .map(rfc3339_millis)
            .collect();
        assert_eq!(
            got,
            [
                "1970-01-01T00:00:00.000Z",
                "2000-02-29T00:00:00.123Z",
                "2026-01-01T00:00:01.500Z",
                "2100-02-28T23:59:59.999Z",
            ]
        );
    }
}
