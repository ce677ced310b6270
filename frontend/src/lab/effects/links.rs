//! The lab's links: the share link of its view, the explorer's link to this
//! world, embed code, and the clipboard (the fragment itself is
//! [`crate::ui::links`]'s).

use crate::lab::state::{Action, LabState};
use crate::ui::links::{copy_text, embed_snippet, page_folder, share_fragment};
use crate::ui::message::{Message, Tone};
use locklab_engine::link::{LinkState, View};
use yew::prelude::*;

/// The share link of the current view: puts it in the address bar (replacing
/// the entry, so Back still leaves the lab) and copies it to the clipboard.
/// Reports the outcome as a message.
pub fn copy_share_link(state: &LabState, dispatch: Callback<Action>) {
    let view = if state.compare.is_some() { View::Compare } else { View::Single };
    let link = link_of(state, view);
    let Some(window) = web_sys::window() else {
        return;
    };
    wasm_bindgen_futures::spawn_local(async move {
        let Some(hash) = share_fragment(&link).await else {
            let text = "The link could not be made: this browser cannot compress it.".to_owned();
            dispatch.emit(Action::Notify(Message { tone: Tone::Error, text }));
            return;
        };
        if let Ok(history) = window.history() {
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&hash));
        }
        let url = window.location().href().unwrap_or(hash);
        let text = if copy_text(&window, &url).await {
            "Copied the link to this view; it is in the address bar too."
        } else {
            "The link to this view is in the address bar (the browser would not let the lab copy it)."
        };
        dispatch.emit(Action::Notify(Message { tone: Tone::Info, text: text.to_owned() }));
    });
}

/// Opens the explorer on the lab's current scenario: the same share link,
/// given to explore.html, whose search then runs in this world (its own
/// faults set aside) under the lab's strategy.
pub fn search_this_world(state: &LabState, dispatch: Callback<Action>) {
    let link = link_of(state, View::Single);
    let Some(window) = web_sys::window() else {
        return;
    };
    wasm_bindgen_futures::spawn_local(async move {
        let Some(hash) = share_fragment(&link).await else {
            let text = "The explorer could not be opened on this world: this browser cannot compress the link.";
            dispatch.emit(Action::Notify(Message { tone: Tone::Error, text: text.to_owned() }));
            return;
        };
        let _ = window.location().set_href(&format!("explore.html{hash}"));
    });
}

/// What a link to the lab's current view holds.
fn link_of(state: &LabState, view: View) -> LinkState {
    LinkState {
        scenario: (*state.scenario).clone(),
        strategy: state.strategy,
        cursor_ms: state.cursor_ms,
        view,
        builtin: None,
    }
}

/// The `<iframe>` snippet that embeds the current view in a post, with the
/// script that sizes the frame (static/embed.js); copied to the clipboard.
pub fn copy_embed_code(state: &LabState, dispatch: Callback<Action>) {
    let link = link_of(state, View::Single);
    let title =
        format!("locklab: {} under {}", state.scenario.name, state.scenario.settings_for(state.strategy).title());
    let Some(window) = web_sys::window() else {
        return;
    };
    wasm_bindgen_futures::spawn_local(async move {
        let Some(fragment) = share_fragment(&link).await else {
            let text = "The embed code could not be made: this browser cannot compress the link.".to_owned();
            dispatch.emit(Action::Notify(Message { tone: Tone::Error, text }));
            return;
        };
        let snippet = embed_snippet(&page_folder(&window), &format!("?embed{fragment}"), &title);
        // The snippet is a few kilobytes: on success it goes to the clipboard
        // only, so the notice stays one line and the transport bar stays put.
        let text = if copy_text(&window, &snippet).await {
            "Copied the embed code: paste it into your post's HTML, where the run should show.".to_owned()
        } else {
            format!("The browser would not let the lab copy; here is the embed code: {snippet}")
        };
        dispatch.emit(Action::Notify(Message { tone: Tone::Info, text }));
    });
}

/// The full lab on what an embedded view opened with: the same address
/// without `?embed` (a share link in the fragment stays).
pub fn full_size_href() -> String {
    let location = web_sys::window().map(|window| window.location());
    let hash = location.as_ref().and_then(|location| location.hash().ok()).unwrap_or_default();
    let search = location.as_ref().and_then(|location| location.search().ok()).unwrap_or_default();
    let query = web_sys::UrlSearchParams::new_with_str(&search)
        .map(|params| {
            params.delete("embed");
            String::from(params.to_string())
        })
        .unwrap_or_default();
    if query.is_empty() { format!("./{hash}") } else { format!("./?{query}{hash}") }
}
