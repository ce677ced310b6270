//! The keyboard and the screen, as every page reads them: the narrow-screen
//! media query, and whether a key belongs to the control that has focus.

use wasm_bindgen::JsCast;
use yew::prelude::*;

/// The media query below which the pages use their narrow layout (the
/// topology's columns, the timeline's lanes).
pub const NARROW_QUERY: &str = "(max-width: 700px)";

/// Whether a key press belongs to the control that has focus.
pub fn belongs_to_control(event: &KeyboardEvent) -> bool {
    let Some(element) = event.target().and_then(|target| target.dyn_into::<web_sys::Element>().ok()) else {
        return false;
    };
    let tag = element.tag_name().to_ascii_lowercase();
    if matches!(tag.as_str(), "input" | "select" | "textarea") || element.has_attribute("contenteditable") {
        return true;
    }
    let activates = matches!(event.key().as_str(), " " | "Enter");
    activates && matches!(tag.as_str(), "button" | "a" | "summary")
}
