//! locklab's browser lab: the engine, compiled to WebAssembly, behind a Yew
//! interface that shows a run's world at any moment, its timeline, verdicts,
//! event log and costs, and lets people break things and watch what happens.
//!
//! Layout of the crate, following the house style:
//! - [`state`]: the one reducer state and its actions; pure, no browser calls;
//! - [`lab`]: the derived run (log, timeline, report), a pure function of the
//!   scenario and strategy, recomputed only when they change;
//! - [`components`]: function components; leaves get data and callbacks as
//!   props and hold no app state;
//! - [`effects`]: every side effect (animation frames, keyboard, storage,
//!   files, media queries) in one module, used by the root component;
//! - [`panic`]: the error panel shown when the app panics.

pub mod components;
pub mod effects;
pub mod explore;
pub mod format;
pub mod lab;
pub mod panic;
pub mod quiz;
pub mod recorded;
pub mod state;
pub mod story;
pub mod svg;
pub mod worker;

/// Mounts a page's root component on the element with id `host` (or the
/// body, if the page has none). The panic panel is installed first, so a
/// panic while the props are made (reading the address, storage) shows it.
pub fn mount<C: yew::BaseComponent>(host: &str, props: impl FnOnce() -> C::Properties) {
    panic::install_hook();
    let props = props();
    let element =
        web_sys::window().and_then(|window| window.document()).and_then(|document| document.get_element_by_id(host));
    match element {
        Some(element) => {
            yew::Renderer::<C>::with_root_and_props(element, props).render();
        }
        None => {
            yew::Renderer::<C>::with_props(props).render();
        }
    }
}

/// Mounts the lab on the page's `#lab` element (or the body), once the
/// address and storage are read (a built-in named in the address is fetched
/// first, so the lab opens on it in one render).
pub fn start() {
    panic::install_hook();
    wasm_bindgen_futures::spawn_local(async {
        let boot = effects::boot().await;
        let host = web_sys::window()
            .and_then(|window| window.document())
            .and_then(|document| document.get_element_by_id("lab"));
        match host {
            Some(host) => {
                yew::Renderer::<components::app::App>::with_root_and_props(host, components::app::AppProps { boot })
                    .render();
            }
            None => {
                yew::Renderer::<components::app::App>::with_props(components::app::AppProps { boot }).render();
            }
        }
    });
}
