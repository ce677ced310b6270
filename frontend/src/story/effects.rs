//! Every side effect of the story page, in one place: reading the address
//! at start, keeping the step in it, the keys, the timer that plays the
//! story, and making each step's lab address (the narrow-screen query is
//! the pages' [`crate::ui::input::use_narrow_screen`]).
//! The root component calls these; the reducer never does. The page keeps
//! nothing in storage: an embedded story never reads or writes the reader's
//! saved state.

use crate::story::state::{StoryAction, StoryState, step_ms};
use crate::ui::input::{NARROW_QUERY, belongs_to_control, media_matches};
use crate::ui::links::{LAB_PAGE, copy_text, embed_snippet, page_folder, share_fragment};
use gloo_events::EventListener;
use locklab_engine::link::{LinkState, View};
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// The fragment that names a step: `#step=two-holders`.
pub const STEP_PREFIX: &str = "#step=";
/// The story the page tells when the address names none (`?story=ID`).
pub const DEFAULT_STORY: &str = "the-night";

/// What the page starts with.
#[derive(Clone, Debug, PartialEq)]
pub struct StoryBoot {
    pub story: String,
    pub step: Option<String>,
    pub embed: bool,
    pub narrow: bool,
    /// Plays by itself unless the reader asked for reduced motion, or it is
    /// embedded in someone's post (where it waits to be started).
    pub autoplay: bool,
}

/// Reads the address and the reader's preferences.
pub fn boot() -> StoryBoot {
    let location = web_sys::window().map(|window| window.location());
    let hash = location.as_ref().and_then(|location| location.hash().ok()).unwrap_or_default();
    let search = location.as_ref().and_then(|location| location.search().ok()).unwrap_or_default();
    let params = web_sys::UrlSearchParams::new_with_str(&search).ok();
    let param = |name: &str| params.as_ref().and_then(|params| params.get(name));
    let embed = params.as_ref().is_some_and(|params| params.has("embed"));
    let step =
        hash.strip_prefix(STEP_PREFIX).or(param("step").as_deref()).filter(|id| !id.is_empty()).map(str::to_owned);
    StoryBoot {
        story: param("story").unwrap_or_else(|| DEFAULT_STORY.to_owned()),
        step,
        embed,
        narrow: media_matches(NARROW_QUERY),
        autoplay: !embed && !media_matches("(prefers-reduced-motion: reduce)"),
    }
}

/// Keeps the step in the address (replacing the entry, so stepping does not
/// fill the history), so a reload or a copied address opens the same step.
#[hook]
pub fn use_step_in_address(id: String) {
    use_effect_with(id, |id| {
        let window = web_sys::window();
        let search = window.as_ref().and_then(|window| window.location().search().ok()).unwrap_or_default();
        if let Some(history) = window.and_then(|window| window.history().ok()) {
            let address = format!("{search}{STEP_PREFIX}{id}");
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&address));
        }
    });
}

/// Follows the address: a step named in a pasted or edited fragment
/// (`#step=gc-pause`), or one the browser's back and forward return to,
/// becomes the step shown. (The page's own stepping replaces the address,
/// which fires no `hashchange`.)
#[hook]
pub fn use_step_from_address(dispatch: Callback<StoryAction>, ids: Vec<String>) {
    use_effect_with(ids, move |ids| {
        let ids = ids.clone();
        let listener = web_sys::window().map(|window| {
            EventListener::new(&window, "hashchange", move |_| {
                let hash = web_sys::window().and_then(|window| window.location().hash().ok()).unwrap_or_default();
                let named = hash.strip_prefix(STEP_PREFIX).and_then(|id| ids.iter().position(|step| step == id));
                if let Some(index) = named {
                    dispatch.emit(StoryAction::Go(index));
                }
            })
        });
        move || drop(listener)
    });
}

/// Keeps the focus on a control when stepping disables the button that had
/// it: Next at the last step hands it to Back, Back at the first to Next.
/// (A disabled button loses the focus, which drops to the page's body, and
/// a keyboard reader would have to find the controls again.) Only a step
/// taken does this, never the page's opening.
#[hook]
pub fn use_focus_kept(index: usize, last: usize) {
    let before = use_mut_ref(|| None::<usize>);
    use_effect_with((index, last), move |(index, last)| {
        let stepped = before.replace(Some(*index)).is_some_and(|was| was != *index);
        let document = web_sys::window().and_then(|window| window.document());
        let focused = document.as_ref().and_then(|document| document.active_element()).map(|element| element.id());
        let lost = |id: &str| focused.as_deref().is_none_or(|focused| focused == id || focused.is_empty());
        let to = if !stepped {
            None
        } else if *index == *last && lost("story-next") {
            Some("story-back")
        } else if *index == 0 && lost("story-back") {
            Some("story-next")
        } else {
            None
        };
        let control = to.and_then(|id| document.and_then(|document| document.get_element_by_id(id)));
        if let Some(control) = control.and_then(|element| element.dyn_into::<web_sys::HtmlElement>().ok()) {
            let _ = control.focus();
        }
    });
}

/// The story's keys: → and ← step, space plays or pauses, Home and End go to
/// the first and last step.
#[hook]
pub fn use_keys(dispatch: Callback<StoryAction>, last: usize) {
    use_effect_with(last, move |last| {
        let last = *last;
        let listener = web_sys::window().and_then(|window| window.document()).map(|document| {
            // Not passive: the keys the story takes must not scroll the page too.
            let options = gloo_events::EventListenerOptions::enable_prevent_default();
            EventListener::new_with_options(&document, "keydown", options, move |event| {
                let Some(event) = event.dyn_ref::<KeyboardEvent>() else {
                    return;
                };
                if event.ctrl_key() || event.meta_key() || event.alt_key() || belongs_to_control(event) {
                    return;
                }
                let action = match event.key().as_str() {
                    "ArrowRight" => Some(StoryAction::Next),
                    "ArrowLeft" => Some(StoryAction::Back),
                    " " => Some(StoryAction::Toggle),
                    "Home" => Some(StoryAction::Go(0)),
                    "End" => Some(StoryAction::Go(last)),
                    _ => None,
                };
                if let Some(action) = action {
                    event.prevent_default();
                    dispatch.emit(action);
                }
            })
        });
        move || drop(listener)
    });
}

/// While the story plays, moves to the next step once the reader has had
/// time to read this one; any step change restarts the wait.
#[hook]
pub fn use_autoplay(state: &UseReducerHandle<StoryState>) {
    let dispatcher = state.dispatcher();
    let text = state.step().map(|step| step.text.clone()).unwrap_or_default();
    use_effect_with((state.playing, state.current, text), move |(playing, _, text)| {
        let timer = playing.then(|| {
            gloo_timers::callback::Timeout::new(step_ms(text), move || dispatcher.dispatch(StoryAction::Next))
        });
        move || drop(timer)
    });
}

/// Copies the snippet that embeds the story at step `id` (number `index`)
/// in a post: the same page with `?embed`, which reports its height to
/// the host page as the lab's embed does.
pub fn copy_embed_code(index: usize, id: &str, title: &str, dispatch: Callback<StoryAction>) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let search = window.location().search().unwrap_or_default();
    let query = if search.is_empty() { "?embed".to_owned() } else { format!("{search}&embed") };
    let snippet = embed_snippet(&page_folder(&window), &format!("story.html{query}{STEP_PREFIX}{id}"), title);
    wasm_bindgen_futures::spawn_local(async move {
        let refused = (!copy_text(&window, &snippet).await).then_some(snippet);
        dispatch.emit(StoryAction::Copied { step: index, refused });
    });
}

/// Makes the current step's "Open this moment in the lab" address: the
/// share-link format, with the step's run and its moment as the cursor.
#[hook]
pub fn use_lab_href(state: &UseReducerHandle<StoryState>) {
    let dispatcher = state.dispatcher();
    let step = state.step().cloned();
    let current = state.current;
    use_effect_with(current, move |_| {
        if let Some(step) = step {
            wasm_bindgen_futures::spawn_local(async move {
                let link = LinkState {
                    scenario: (*step.run.scenario).clone(),
                    strategy: step.run.strategy,
                    cursor_ms: step.found.at_ms,
                    view: View::Single,
                    builtin: Some(step.scenario_name.clone()),
                };
                let page = LAB_PAGE;
                // Without the browser's compression the link falls back to the lab itself.
                let href =
                    share_fragment(&link).await.map_or_else(|| page.to_owned(), |fragment| format!("{page}{fragment}"));
                dispatcher.dispatch(StoryAction::LabHref { step: current, href: AttrValue::from(href) });
            });
        }
    });
}
