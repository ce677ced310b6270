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
        if tenths % 10 == 0 { format!("{} s", tenths / 10) } else { format!("{}.{} s", tenths / 10, tenths % 10) }
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

/// Parses a number of seconds typed by a person (`1.5`, `90`) into ms.
pub fn parse_seconds(text: &str) -> Option<u64> {
    let value: f64 = text.trim().parse().ok()?;
    if !value.is_finite() || value < 0.0 || value > 86_400.0 {
        return None;
    }
    // Rounded to the millisecond, inside u64 range by the check above.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Some((value * 1000.0).round() as u64)
}

/// Seconds as a person types them: `1.5`, `90`.
pub fn seconds_text(ms: u64) -> String {
    if ms % 1000 == 0 {
        format!("{}", ms / 1000)
    } else {
        let text = format!("{}.{:03}", ms / 1000, ms % 1000);
        text.trim_end_matches('0').to_owned()
    }
}
