//! When the app panics, an error panel replaces the frozen page.
//!
//! The panel is built with plain DOM calls, not Yew: after a panic the wasm
//! instance cannot be trusted to render again. It shows the message and the
//! scenario that was loaded (kept here as text whenever it changes), and a
//! reset link that reloads the page with `?reset`, which clears the stored
//! state. A link needs no script, so it works even with the app gone.

use std::cell::RefCell;
use wasm_bindgen::JsCast;

thread_local! {
    /// The scenario in use, as JSON, for the panel.
    static SCENARIO_JSON: RefCell<String> = const { RefCell::new(String::new()) };
    /// The strategy in use, for the panel.
    static STRATEGY: RefCell<&'static str> = const { RefCell::new("") };
}

/// Remembers the scenario and strategy a panic report would show.
pub fn remember(scenario_json: String, strategy: &'static str) {
    SCENARIO_JSON.with(|cell| {
        if let Ok(mut slot) = cell.try_borrow_mut() {
            *slot = scenario_json;
        }
    });
    STRATEGY.with(|cell| {
        if let Ok(mut slot) = cell.try_borrow_mut() {
            *slot = strategy;
        }
    });
}

/// Installs the hook that shows the panel (and still logs to the console).
pub fn install_hook() {
    // Through Yew, which would otherwise replace any hook set before it renders.
    yew::set_custom_panic_hook(Box::new(|info| {
        let message = info.to_string();
        web_sys::console::error_1(&format!("locklab panicked: {message}").into());
        let scenario = SCENARIO_JSON.with(|cell| cell.try_borrow().map(|json| json.clone()).unwrap_or_default());
        let strategy = STRATEGY.with(|cell| cell.try_borrow().map(|name| *name).unwrap_or(""));
        show_panel(&message, strategy, &scenario);
    }));
}

/// Puts the error panel on the page; replaces an earlier one.
pub fn show_panel(message: &str, strategy: &str, scenario_json: &str) {
    let Some(document) = web_sys::window().and_then(|window| window.document()) else {
        return;
    };
    let Some(body) = document.body() else {
        return;
    };
    if let Some(old) = document.get_element_by_id("panic-panel") {
        old.remove();
    }
    let element = |tag: &str, text: &str| {
        let node = document.create_element(tag).ok()?;
        node.set_text_content(Some(text));
        Some(node)
    };
    let Ok(panel) = document.create_element("section") else {
        return;
    };
    panel.set_id("panic-panel");
    let _ = panel.set_attribute("role", "alert");
    let _ = panel.set_attribute("aria-labelledby", "panic-title");
    let parts = [
        element("h2", "The lab crashed").inspect(|title| {
            title.set_id("panic-title");
        }),
        element(
            "p",
            "Something inside the lab panicked, so it stopped rather than show a wrong world. \
             This is a bug in the lab, not in your scenario. The scenario that was running is below; \
             copy it to reproduce the crash.",
        ),
        element("pre", message).inspect(|pre| {
            pre.set_class_name("panic-message");
        }),
        element("p", &format!("Strategy: {}", if strategy.is_empty() { "(none)" } else { strategy })),
        element("pre", if scenario_json.is_empty() { "(no scenario loaded yet)" } else { scenario_json }).inspect(
            |pre| {
                pre.set_class_name("panic-scenario");
            },
        ),
        element("a", "Reset the lab").inspect(|link| {
            let _ = link.set_attribute("href", "?reset");
            link.set_class_name("button primary");
            link.set_id("panic-reset");
        }),
    ];
    for part in parts.into_iter().flatten() {
        let _ = panel.append_child(&part);
    }
    let _ = body.prepend_with_node_1(&panel);
    if let Some(lab) = document.get_element_by_id("lab") {
        let _ = lab.set_attribute("aria-hidden", "true");
        let _ = lab.set_attribute("inert", "");
    }
    if let Some(link) =
        document.get_element_by_id("panic-reset").and_then(|link| link.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = link.focus();
    }
}
