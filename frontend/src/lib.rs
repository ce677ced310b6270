//! locklab's browser pages: the engine, compiled to WebAssembly, behind Yew
//! interfaces that show a run's world at any moment, its timeline, verdicts,
//! event log and costs, and let people break things and watch what happens.
//!
//! Each page is its own wasm (a bin in `src/bin/`) over this one library,
//! and its own module, laid out alike: one reducer state at the root
//! (`state`, pure), function components whose leaves get data and callbacks
//! as props and hold no app state (`components`), and every side effect in
//! one place (`effects`), used by the root.
//! - [`lab`]: the lab (index.html) and its `?embed` view;
//! - [`quiz`]: the quiz (quiz.html);
//! - [`story`]: the post's night, step by step (story.html);
//! - [`explore`]: the counterexample explorer (explore.html);
//! - [`recorded`]: a recorded run beside its simulated twin (recorded.html);
//! - [`worker`]: the Web Worker (searches, figure exports, the speed probe);
//! - [`ui`]: what more than one page uses: the run as the pages show it,
//!   the timeline, verdict and event-log components (which take narrow
//!   callbacks, such as `on_seek: Callback<u64>`, never a page's actions),
//!   the shared hooks and helpers, and the panic panel.

pub mod explore;
pub mod lab;
pub mod quiz;
pub mod recorded;
pub mod story;
pub mod ui;
pub mod worker;

/// Mounts a page's root component on the element with id `host` (or the
/// body, if the page has none). The panic panel is installed first, so a
/// panic while the props are made (reading the address, storage) shows it.
pub fn mount<C: yew::BaseComponent>(host: &str, props: impl FnOnce() -> C::Properties) {
    ui::panic::install_hook();
    render::<C>(host, props());
}

/// Renders a page's root component on the element with id `host`, or the
/// body if the page has none.
pub fn render<C: yew::BaseComponent>(host: &str, props: C::Properties) {
    let document = web_sys::window().and_then(|window| window.document());
    let element =
        document.and_then(|document| document.get_element_by_id(host).or_else(|| document.body().map(Into::into)));
    if let Some(element) = element {
        yew::Renderer::<C>::with_root_and_props(element, props).render();
    }
}
