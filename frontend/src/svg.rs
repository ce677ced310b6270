//! Drawing SVG as text. The timeline, the topology and the charts are many
//! small shapes; writing them as markup and handing it to Yew as one raw node
//! costs far less WebAssembly than a virtual-DOM node per shape (the wasm has
//! a size budget), and it renders faster. Everything that goes into the
//! markup from data is escaped here.

use std::fmt::{self, Display, Write};

/// A number with at most one decimal, written without the float formatting
/// machinery (`12.3`, `-4`, `0.5`).
#[derive(Clone, Copy, Debug)]
pub struct Num(pub f64);

impl Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let value = if self.0.is_finite() { self.0 } else { 0.0 };
        // Coordinates are far inside i64 range.
        #[allow(clippy::cast_possible_truncation)]
        let tenths = (value * 10.0).round() as i64;
        let sign = if tenths < 0 { "-" } else { "" };
        let magnitude = tenths.unsigned_abs();
        match magnitude % 10 {
            0 => write!(f, "{sign}{}", magnitude / 10),
            tenth => write!(f, "{sign}{}.{tenth}", magnitude / 10),
        }
    }
}

/// Text made safe for element content and attribute values.
#[derive(Clone, Copy, Debug)]
pub struct Esc<'a>(pub &'a str);

impl Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(position) = rest.find(['&', '<', '>', '"', '\'']) {
            f.write_str(&rest[..position])?;
            f.write_str(match rest.as_bytes()[position] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => "&#39;",
            })?;
            rest = &rest[position + 1..];
        }
        f.write_str(rest)
    }
}

/// A growing SVG document.
#[derive(Debug, Default)]
pub struct Svg {
    pub out: String,
}

impl Svg {
    pub fn new() -> Svg {
        Svg { out: String::with_capacity(16 * 1024) }
    }

    /// Appends formatted markup; the caller escapes what comes from data.
    pub fn raw(&mut self, args: fmt::Arguments<'_>) {
        let _ = self.out.write_fmt(args);
    }

    /// `<text x y class [anchor]>text</text>`, optionally with a tooltip.
    pub fn text(&mut self, x: f64, y: f64, class: &str, anchor: Option<&str>, text: &str) {
        let anchor = anchor.map(|anchor| format!(" text-anchor=\"{anchor}\"")).unwrap_or_default();
        self.raw(format_args!(
            "<text x=\"{}\" y=\"{}\" class=\"{class}\"{anchor}>{}</text>",
            Num(x),
            Num(y),
            Esc(text)
        ));
    }

    /// `<rect>` with a tooltip; `width` is at least one unit so it shows.
    pub fn rect(&mut self, class: &str, x: f64, y: f64, width: f64, height: f64, title: &str) {
        self.raw(format_args!(
            "<rect class=\"{class}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>",
            Num(x),
            Num(y),
            Num(width.max(1.0)),
            Num(height),
            Esc(title)
        ));
    }

    pub fn line(&mut self, class: &str, x1: f64, y1: f64, x2: f64, y2: f64) {
        self.raw(format_args!(
            "<line class=\"{class}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
            Num(x1),
            Num(y1),
            Num(x2),
            Num(y2)
        ));
    }

    pub fn finish(self) -> String {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_escapes() {
        assert_eq!(Num(12.34).to_string(), "12.3");
        assert_eq!(Num(-4.0).to_string(), "-4");
        assert_eq!(Num(0.05).to_string(), "0.1");
        assert_eq!(Esc("a<b & \"c\"").to_string(), "a&lt;b &amp; &quot;c&quot;");
    }
}
