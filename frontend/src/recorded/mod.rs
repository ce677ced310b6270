//! The recorded-run page (recorded.html, its own wasm): a run's log document
//! (`locklab-log/1`), simulated or recorded live by `locklab live`, shown
//! read-only, beside its simulated twin. A recorded run cannot be forked:
//! it is what happened, on one machine, once. A live run says where it was
//! recorded wherever it is shown, embeds included.
//!
//! The document comes from `?log=PATH` (a file beside the page, as a post
//! embeds one), from the file picker ("Open a recorded run"), or, with
//! neither, from the example the site ships: the post's night under the
//! fencing token, recorded live. Its scenario travels in the document
//! (`scenario_document`), so the verdict and the twin are computed from it;
//! a document without one is refused by name.
//!
//! Layout, following the house style:
//! - [`state`]: the document read and its runs, the one reducer state and
//!   its actions; pure;
//! - [`components`]: the root and its leaves, which get data and callbacks;
//! - [`effects`]: every side effect (the address, fetching and reading a
//!   document), used by the root.

pub mod components;
pub mod effects;
pub mod state;

use std::rc::Rc;

/// Mounts the page on its `#recorded` element (or the body).
pub fn start() {
    crate::mount::<components::RecordedApp>("recorded", || components::RecordedProps {
        boot: Rc::new(effects::boot()),
    });
}
