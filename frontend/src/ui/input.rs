//! The keyboard and the screen, as every page reads them: the narrow-screen
//! media query, whether a key belongs to the control that has focus, and
//! the keys of a page that shows a timeline.
//!
//! The listeners are added and removed by hand, not through gloo's
//! `EventListener`: with it (here and for the worker's messages) the lab's
//! wasm was 491 bytes gzip larger, over its budget (docs/web.md).

use locklab_engine::StrategyId;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use yew::prelude::*;

/// The media query below which the pages use their narrow layout (the
/// topology's columns, the timeline's lanes).
pub const NARROW_QUERY: &str = "(max-width: 700px)";

/// Whether a media query matches now (the narrow screen at a page's start,
/// a reader's preference).
pub fn media_matches(query: &str) -> bool {
    web_sys::window().and_then(|window| window.match_media(query).ok().flatten()).is_some_and(|query| query.matches())
}

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

/// What a key asks of a page that shows a timeline, as the lab's legend
/// says it; each page takes what it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimelineKey {
    /// Space.
    PlayOrPause,
    /// → and ←: to the next or the previous event.
    Step { forward: bool },
    /// Shift and → or ←: a hundredth of the run either way.
    Scrub(i64),
    /// A strategy's badge (A–D, 0, and * for ∗), or a digit: its place in the picker.
    Strategy(StrategyId),
    /// Home and End: the run's start or its end.
    Ends { end: bool },
}

/// The strategy a key names: its badge in the picker, typed (`*` for `∗`,
/// either case), or its place in the picker as a digit.
fn strategy_for_key(key: &str) -> Option<StrategyId> {
    let mut chars = key.chars();
    let (Some(typed), None) = (chars.next(), chars.next()) else {
        return None;
    };
    let typed = if typed == '*' { '∗' } else { typed.to_ascii_uppercase() };
    let by_badge = StrategyId::PICKER_ORDER.iter().find(|strategy| strategy.badge() == typed);
    let by_place = typed
        .to_digit(10)
        .and_then(|digit| digit.checked_sub(1))
        .and_then(|index| StrategyId::PICKER_ORDER.get(usize::try_from(index).ok()?));
    by_badge.or(by_place).copied()
}

/// The timeline's keys on the whole page (none while a control has focus, or
/// with Ctrl, Meta or Alt), each as the page's action (`action`; `None` for a
/// key the page does not take, which stays the browser's).
#[hook]
pub fn use_timeline_keys<A: 'static>(dispatch: Callback<A>, action: fn(TimelineKey) -> Option<A>) {
    use_effect_with((), move |()| {
        let document = web_sys::window().and_then(|window| window.document());
        let listener = Closure::<dyn Fn(KeyboardEvent)>::new(move |event: KeyboardEvent| {
            if event.ctrl_key() || event.meta_key() || event.alt_key() || belongs_to_control(&event) {
                return;
            }
            let key = match (event.key().as_str(), event.shift_key()) {
                (" ", _) => Some(TimelineKey::PlayOrPause),
                ("ArrowRight", false) => Some(TimelineKey::Step { forward: true }),
                ("ArrowLeft", false) => Some(TimelineKey::Step { forward: false }),
                ("ArrowRight", true) => Some(TimelineKey::Scrub(1)),
                ("ArrowLeft", true) => Some(TimelineKey::Scrub(-1)),
                ("Home", _) => Some(TimelineKey::Ends { end: false }),
                ("End", _) => Some(TimelineKey::Ends { end: true }),
                (key, _) => strategy_for_key(key).map(TimelineKey::Strategy),
            };
            if let Some(action) = key.and_then(action) {
                event.prevent_default();
                dispatch.emit(action);
            }
        });
        if let Some(document) = &document {
            let _ = document.add_event_listener_with_callback("keydown", listener.as_ref().unchecked_ref());
        }
        move || {
            if let Some(document) = document {
                let _ = document.remove_event_listener_with_callback("keydown", listener.as_ref().unchecked_ref());
            }
        }
    });
}

/// Follows the narrow-screen media query: each time it starts or stops
/// matching, the page hears it as its own action.
#[hook]
pub fn use_narrow_screen<A: 'static>(dispatch: Callback<A>, action: fn(bool) -> A) {
    use_effect_with((), move |()| {
        let query = web_sys::window().and_then(|window| window.match_media(NARROW_QUERY).ok().flatten());
        let listener =
            Closure::<dyn Fn(web_sys::MediaQueryListEvent)>::new(move |event: web_sys::MediaQueryListEvent| {
                dispatch.emit(action(event.matches()))
            });
        if let Some(query) = &query {
            let _ = query.add_event_listener_with_callback("change", listener.as_ref().unchecked_ref());
        }
        move || {
            if let Some(query) = query {
                let _ = query.remove_event_listener_with_callback("change", listener.as_ref().unchecked_ref());
            }
        }
    });
}
