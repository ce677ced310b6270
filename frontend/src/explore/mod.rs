//! The explorer page (explore.html, its own wasm, bin `locklab-explore`):
//! searches fault schedules for one that breaks a strategy, shrinks it to
//! the smallest story and opens it in the lab with one click.
//!
//! The search itself runs in the lab's Web Worker ([`crate::worker`]), in
//! slices, so this page stays responsive, shows schedules per second and can
//! cancel.
//!
//! Layout, following the house style:
//! - [`state`]: the one reducer state and its actions; pure;
//! - [`components`]: the root and its parts, which get data and callbacks;
//! - [`effects`]: every side effect (the address, the worker, the lab
//!   link), used by the root.

pub mod components;
pub mod effects;
pub mod state;

/// Mounts the explorer on the page's `#explore` element.
pub fn start() {
    crate::mount::<components::ExplorePage>("explore", || ());
}
