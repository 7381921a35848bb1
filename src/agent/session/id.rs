//! Session ids: the UTC time a session started (`YYYYMMDD-HHMMSS`) and a few random-ish hex
//! digits, so ids sort by age and two sessions started in the same second differ.

use std::time::{SystemTime, UNIX_EPOCH};

/// A fresh session id.
pub fn new_id() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format!(
        "{}-{:04x}",
        timestamp_id(now.as_secs()),
        (now.subsec_nanos() ^ std::process::id()) & 0xffff
    )
}

/// `YYYYMMDD-HHMMSS` in UTC for a Unix time.
fn timestamp_id(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to a (year, month, day) date (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_dates() {
        assert_eq!(timestamp_id(0), "19700101-000000");
        assert_eq!(timestamp_id(1_000_000_000), "20010909-014640");
        assert_eq!(timestamp_id(1_709_164_800), "20240229-000000");
    }

    #[test]
    fn ids_start_with_the_time() {
        let id = new_id();
        assert_eq!(id.len(), "20240229-000000-abcd".len(), "{id}");
        assert!(id.starts_with("20"), "{id}");
    }
}
