//! How numbers read on screen and how typed numbers are read back. Times and
//! durations are the engine's (`locklab_engine::format`), so a page, the
//! command line and a figure write the same reading the same way.

pub use locklab_engine::format::{countdown, duration, elapsed, offset, t_label, wall_clock, wall_minute};

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
