//! How times and durations read on screen.

/// Simulated time since the start: `t=1:23.456`, `t=1:02:03.000`.
pub fn t_label(at_ms: u64) -> String {
    format!("t={}", elapsed(at_ms))
}

/// `1:23.456` or `1:02:03.456`.
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

/// Seconds of the `HH:MM:SS` clock origin; `None` if it does not parse.
pub fn origin_s(origin: &str) -> Option<i64> {
    let mut parts = origin.split(':').map(|part| part.trim().parse::<i64>().ok());
    let hours = parts.next()??;
    let minutes = parts.next().flatten().unwrap_or(0);
    let seconds = parts.next().flatten().unwrap_or(0);
    Some(hours * 3600 + minutes * 60 + seconds)
}

/// A wall-clock reading: the scenario's origin plus `local_ms`, `02:01:23.456`.
pub fn wall_clock(origin: &str, local_ms: i64) -> String {
    let base_ms = origin_s(origin).unwrap_or(0) * 1000;
    let day_ms = 24 * 3600 * 1000;
    let at = (base_ms + local_ms).rem_euclid(day_ms);
    let (total_s, millis) = (at / 1000, at % 1000);
    format!("{:02}:{:02}:{:02}.{millis:03}", total_s / 3600, total_s / 60 % 60, total_s % 60)
}

/// A wall-clock reading to the minute, for axis ticks: `02:05`.
pub fn wall_minute(origin: &str, local_ms: i64) -> String {
    let full = wall_clock(origin, local_ms);
    full.get(..5).unwrap_or(&full).to_owned()
}

/// A duration for people: `250 ms`, `1.5 s`, `2 min 5 s`.
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

/// Parses a plain decimal such as `20` or `1.5` (no exponent, at most six
/// decimals); a hand-written parser is much smaller in the wasm than `f64`'s.
pub fn parse_decimal(text: &str) -> Option<f64> {
    let text = text.trim();
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.len() > 6 {
        return None;
    }
    let digits = |part: &str| part.bytes().all(|byte| byte.is_ascii_digit());
    if !digits(whole) || !digits(fraction) || whole.len() > 9 {
        return None;
    }
    let whole_value: u32 = if whole.is_empty() { 0 } else { whole.parse().ok()? };
    let fraction_value: u32 = if fraction.is_empty() { 0 } else { fraction.parse().ok()? };
    let scale = 10_u32.pow(u32::try_from(fraction.len()).ok()?);
    Some(f64::from(whole_value) + f64::from(fraction_value) / f64::from(scale))
}
