//! How times and durations read, everywhere: the command line, the figures,
//! the event texts and the pages all write time through these functions, so
//! a reading means the same wherever it appears.
//!
//! Each function is exact integer arithmetic on milliseconds; none formats a
//! float, which keeps them small in the pages' WebAssembly.

/// Milliseconds to the millisecond, for event texts and findings: `90 s`,
/// `1.5 s`, `1.234 s`, `250 ms`.
pub fn seconds(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        let fraction = format!("{:03}", ms % 1000);
        format!("{}.{} s", ms / 1000, fraction.trim_end_matches('0'))
    }
}

/// A duration for people, rounded to a tenth of a second or to whole
/// seconds past a minute: `250 ms`, `1.5 s`, `2 min 5 s`.
pub fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        let tenths = ms / 100;
        if tenths.is_multiple_of(10) {
            format!("{} s", tenths / 10)
        } else {
            format!("{}.{} s", tenths / 10, tenths % 10)
        }
    } else {
        let seconds = ms / 1000;
        let (minutes, rest) = (seconds / 60, seconds % 60);
        if rest == 0 { format!("{minutes} min") } else { format!("{minutes} min {rest} s") }
    }
}

/// A signed offset: `+30 s`, `-1.5 s`, `±0`.
pub fn offset(ms: i64) -> String {
    match ms.signum() {
        0 => "±0".to_owned(),
        1 => format!("+{}", duration(ms.unsigned_abs())),
        _ => format!("-{}", duration(ms.unsigned_abs())),
    }
}

/// A countdown that never shows a negative number: `12.3 s`.
pub fn countdown(ms: i64) -> String {
    let ms = ms.max(0).unsigned_abs();
    if ms >= 60_000 { duration(ms) } else { format!("{}.{} s", ms / 1000, ms % 1000 / 100) }
}

/// A decimal as people write it, to the thousandth: `2`, `2.5`, `1.125`. A
/// value past a billion, or not finite, says so rather than printing a
/// float: the pages' WebAssembly carries no float formatting at all.
pub fn decimal(value: f64) -> String {
    if !value.is_finite() || value.abs() >= 1e9 {
        return if value.is_nan() { "not a number".to_owned() } else { "out of range".to_owned() };
    }
    // Within ±1e12 thousandths, well inside i64.
    #[allow(clippy::cast_possible_truncation)]
    let thousandths = (value * 1000.0).round() as i64;
    per_mille(thousandths)
}

/// Thousandths as a decimal: `2500` is `2.5`, `-125` is `-0.125`.
pub fn per_mille(thousandths: i64) -> String {
    let sign = if thousandths < 0 { "-" } else { "" };
    let magnitude = thousandths.unsigned_abs();
    let fraction = format!("{:03}", magnitude % 1000);
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() {
        format!("{sign}{}", magnitude / 1000)
    } else {
        format!("{sign}{}.{fraction}", magnitude / 1000)
    }
}

/// Simulated time since the start as the command line's column: `341.615`.
pub fn at_seconds(at_ms: u64) -> String {
    format!("{}.{:03}", at_ms / 1000, at_ms % 1000)
}

/// Simulated time since the start: `1:23.456` or `1:02:03.456`.
pub fn elapsed(at_ms: u64) -> String {
    let total_s = at_ms / 1000;
    let millis = at_ms % 1000;
    let (hours, minutes, seconds) = (total_s / 3600, total_s / 60 % 60, total_s % 60);
    if hours > 0 {
        format!("{hours}:{minutes:02}:{seconds:02}.{millis:03}")
    } else {
        format!("{minutes}:{seconds:02}.{millis:03}")
    }
}

/// Simulated time since the start, labelled: `t=1:23.456`.
pub fn t_label(at_ms: u64) -> String {
    format!("t={}", elapsed(at_ms))
}

/// Seconds of an `HH:MM:SS` clock origin; `None` if it does not parse.
fn origin_s(origin: &str) -> Option<i64> {
    let mut parts = origin.split(':').map(|part| part.trim().parse::<i64>().ok());
    let hours = parts.next()??;
    let minutes = parts.next().flatten().unwrap_or(0);
    let seconds = parts.next().flatten().unwrap_or(0);
    Some(hours * 3600 + minutes * 60 + seconds)
}

/// A wall-clock reading: the scenario's origin plus `local_ms`, on a 24-hour
/// dial: `02:01:23.456`. An origin that does not parse counts as midnight.
pub fn wall_clock(origin: &str, local_ms: i64) -> String {
    let base_ms = origin_s(origin).unwrap_or(0) * 1000;
    let day_ms = 24 * 3600 * 1000;
    let at = (base_ms + local_ms).rem_euclid(day_ms);
    let (total_s, millis) = (at / 1000, at % 1000);
    format!("{:02}:{:02}:{:02}.{millis:03}", total_s / 3600, total_s / 60 % 60, total_s % 60)
}

/// A wall-clock reading to the second, for findings: `02:05:41`.
pub fn wall_second(origin: &str, at_ms: u64) -> String {
    let full = wall_clock(origin, i64::try_from(at_ms).unwrap_or(i64::MAX));
    full.get(..8).unwrap_or(&full).to_owned()
}

/// A wall-clock reading to the minute, for axis ticks: `02:05`.
pub fn wall_minute(origin: &str, local_ms: i64) -> String {
    let full = wall_clock(origin, local_ms);
    full.get(..5).unwrap_or(&full).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_for_people() {
        assert_eq!(seconds(90_000), "90 s");
        assert_eq!(seconds(1_500), "1.5 s");
        assert_eq!(seconds(1_234), "1.234 s");
        assert_eq!(seconds(250), "250 ms");
        assert_eq!(duration(1_234), "1.2 s");
        assert_eq!(duration(125_000), "2 min 5 s");
        assert_eq!(offset(-1_500), "-1.5 s");
        assert_eq!(offset(0), "±0");
        assert_eq!(countdown(-5), "0.0 s");
        assert_eq!(at_seconds(341_615), "341.615");
    }

    #[test]
    fn wall_clock_readings_start_at_the_origin_and_wrap_at_midnight() {
        assert_eq!(wall_second("02:00:00", 0), "02:00:00");
        assert_eq!(wall_second("02:00:00", 341_615), "02:05:41");
        assert_eq!(wall_second("23:59:30", 60_000), "00:00:30");
        assert_eq!(wall_clock("02:00:00", -1), "01:59:59.999");
        assert_eq!(wall_minute("02:00:00", 341_615), "02:05");
        assert_eq!(t_label(3_723_004), "t=1:02:03.004");
        assert_eq!(origin_s("nonsense"), None);
    }
}
