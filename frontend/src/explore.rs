//! The explorer page (explore.html): placeholder until the explorer is built.

/// Mounts the explorer on the page's `#explore` element.
pub fn start() {
    crate::panic::install_hook();
}
