//! The lab page (index.html, bin `locklab-frontend`), and its compact
//! `?embed` view: one scenario under one strategy (or all six in compare
//! mode), the world at the cursor, the timeline, the verdict, the event log
//! and the costs, with faults injected at the cursor and a fault script.
//!
//! Layout, following the house style:
//! - [`state`]: the one reducer state and its actions; pure, no browser calls;
//! - [`run`]: the runs being computed a slice at a time, and compare mode's six;
//! - [`components`]: the root and the lab's own leaves, which get data and
//!   callbacks as props and hold no app state (the leaves other pages show
//!   too are in [`crate::ui`]);
//! - [`effects`]: every side effect of the lab (the address and storage,
//!   time on the page, the keyboard, files, links, the worker), used by the
//!   root.

pub mod components;
pub mod effects;
pub mod run;
pub mod state;

/// Mounts the lab on the page's `#lab` element (or the body), once the
/// address and storage are read (a built-in named in the address is fetched
/// first, so the lab opens on it in one render).
pub fn start() {
    crate::ui::panic::install_hook();
    wasm_bindgen_futures::spawn_local(async {
        let boot = effects::boot().await;
        crate::render::<components::app::App>("lab", components::app::AppProps { boot });
    });
}
