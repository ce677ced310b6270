//! The keyboard and the screen: the lab's keys, and the narrow-screen media
//! query.

use crate::lab::state::Action;
use crate::ui::input::{NARROW_QUERY, belongs_to_control};
use locklab_engine::StrategyId;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use yew::prelude::*;

/// The lab's keys: space plays or pauses, arrows step, shift+arrows scrub,
/// digits pick a strategy.
#[hook]
pub fn use_keyboard(dispatch: Callback<Action>) {
    use_effect_with((), move |()| {
        let document = web_sys::window().and_then(|window| window.document());
        let listener = Closure::<dyn Fn(KeyboardEvent)>::new(move |event: KeyboardEvent| {
            if event.ctrl_key() || event.meta_key() || event.alt_key() || belongs_to_control(&event) {
                return;
            }
            let action = match (event.key().as_str(), event.shift_key()) {
                (" ", _) => Some(Action::TogglePlay),
                ("ArrowRight", false) => Some(Action::StepForward),
                ("ArrowLeft", false) => Some(Action::StepBack),
                ("ArrowRight", true) => Some(Action::ScrubPercent(1)),
                ("ArrowLeft", true) => Some(Action::ScrubPercent(-1)),
                (digit, false) => digit
                    .parse::<usize>()
                    .ok()
                    .and_then(|digit| digit.checked_sub(1))
                    .and_then(|index| StrategyId::PICKER_ORDER.get(index))
                    .map(|strategy| Action::SelectStrategy(*strategy)),
                _ => None,
            };
            if let Some(action) = action {
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

/// Follows the narrow-screen media query.
#[hook]
pub fn use_narrow_screen(dispatch: Callback<Action>) {
    use_effect_with((), move |()| {
        let query = web_sys::window().and_then(|window| window.match_media(NARROW_QUERY).ok().flatten());
        let listener =
            Closure::<dyn Fn(web_sys::MediaQueryListEvent)>::new(move |event: web_sys::MediaQueryListEvent| {
                dispatch.emit(Action::SetNarrow(event.matches()))
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
