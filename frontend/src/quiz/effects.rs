//! Every side effect of the quiz, in one place: reading the stored progress
//! and the card named in the address at start, storing the progress when it
//! changes, keeping the card in the address, the playback loop on animation
//! frames, and making the "Open in the lab" addresses.
//! The root component calls these; the reducer never does.

use crate::quiz::progress::{PROGRESS_KEY, Progress, parse_progress};
use crate::quiz::state::{Answered, QuizAction, QuizState};
use crate::ui::input::{NARROW_QUERY, media_matches};
use crate::ui::message::{Message, Tone};
use locklab_engine::link::{LinkState, View};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// The fragment that names a card: `#card=two-am`, so a reload or the Back
/// button from the lab comes back to the same card.
pub const CARD_PREFIX: &str = "#card=";
/// The page the "Open in the lab" links go to, beside this one.
pub const LAB_PAGE: &str = "index.html";

/// What the quiz starts with.
#[derive(Clone, Debug, PartialEq)]
pub struct QuizBoot {
    pub progress: Progress,
    /// The card named in the address, if any.
    pub card: Option<String>,
    pub notice: Option<Message>,
    /// The narrow-screen media query matches at start.
    pub narrow: bool,
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window().and_then(|window| window.local_storage().ok().flatten())
}

/// Reads the address and the stored progress. A stored value that cannot be
/// read resets the progress and says so; no storage means no saving, said too.
pub fn boot() -> QuizBoot {
    let location = web_sys::window().map(|window| window.location());
    let hash = location.as_ref().and_then(|location| location.hash().ok()).unwrap_or_default();
    let search = location.as_ref().and_then(|location| location.search().ok()).unwrap_or_default();
    let card = hash.strip_prefix(CARD_PREFIX).filter(|name| !name.is_empty()).map(str::to_owned);
    let narrow = media_matches(NARROW_QUERY);
    let mut boot = QuizBoot { progress: Progress::default(), card, notice: None, narrow };
    let Some(storage) = storage() else {
        boot.notice = Some(Message {
            tone: Tone::Info,
            text: "This browser does not let the quiz use local storage, so it works but will not remember your answers after you leave."
                .to_owned(),
        });
        return boot;
    };
    // `?reset`, as the error panel's link asks: start again from nothing.
    if search.contains("reset") {
        let _ = storage.remove_item(PROGRESS_KEY);
        if let Some(history) = web_sys::window().and_then(|window| window.history().ok()) {
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some("quiz.html"));
        }
        boot.notice = Some(Message { tone: Tone::Info, text: "Your quiz progress was reset.".to_owned() });
        return boot;
    }
    match storage.get_item(PROGRESS_KEY) {
        Ok(None) => {}
        Ok(Some(text)) => match parse_progress(&text) {
            Ok(progress) => boot.progress = progress,
            Err(reason) => {
                boot.notice = Some(Message {
                    tone: Tone::Error,
                    text: format!(
                        "Your saved quiz progress could not be read ({reason}) and was reset. Every card is untried again."
                    ),
                });
            }
        },
        Err(_) => {
            boot.notice = Some(Message {
                tone: Tone::Info,
                text: "The quiz could not read local storage, so it works but will not remember your answers after you leave."
                    .to_owned(),
            });
        }
    }
    boot
}

/// Stores the progress whenever it changes (and once at start, which also
/// replaces a value that could not be read). A store that fails is said once.
#[hook]
pub fn use_save_progress(progress: Rc<Progress>, dispatch: Callback<QuizAction>) {
    let warned = use_mut_ref(|| false);
    use_effect_with(progress, move |progress| {
        // No storage at all was said at start.
        if let Some(storage) = storage()
            && storage.set_item(PROGRESS_KEY, &progress.to_json()).is_err()
            && !*warned.borrow()
        {
            *warned.borrow_mut() = true;
            dispatch.emit(QuizAction::Notify(Message {
                tone: Tone::Error,
                text: "Your progress could not be saved (the browser refused local storage); the quiz goes on without saving."
                    .to_owned(),
            }));
        }
    });
}

/// Keeps the card in the address (replacing the entry: moving between cards
/// does not fill the history), so a reload stays on it.
#[hook]
pub fn use_card_in_address(name: &'static str) {
    use_effect_with(name, |name| {
        if let Some(history) = web_sys::window().and_then(|window| window.history().ok()) {
            let _ =
                history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&format!("{CARD_PREFIX}{name}")));
        }
    });
}

/// The address that opens `scenario` under `strategy` in the lab.
async fn lab_href(link: &LinkState) -> Option<String> {
    let fragment = crate::ui::links::share_fragment(link).await?;
    Some(format!("{LAB_PAGE}{fragment}"))
}

/// Makes the two columns' "Open in the lab" addresses once a card is answered.
#[hook]
pub fn use_lab_hrefs(state: &UseReducerHandle<QuizState>) {
    let dispatcher = state.dispatcher();
    let key = state.answered.as_ref().map(|answered| (answered.pick.run.clone(), answered.other.run.clone()));
    let card = state.current;
    let pick = state.answered.as_ref().map(|answered: &Answered| answered.pick.choice.id.clone());
    // The card's fix, played on its own world, opens in the lab too.
    let fix = state.card().and_then(|shown| shown.quiz.fix_scenario(&shown.scenario));
    use_effect_with(key, move |key| {
        if let (Some((pick_run, other_run)), Some(pick)) = (key.clone(), pick) {
            wasm_bindgen_futures::spawn_local(async move {
                let link = |run: &crate::ui::run::LabRun| LinkState {
                    scenario: (*run.scenario).clone(),
                    strategy: run.strategy,
                    cursor_ms: 0,
                    view: View::Single,
                    builtin: None,
                };
                let pick_href = lab_href(&link(&pick_run)).await;
                let other_href = lab_href(&link(&other_run)).await;
                let fix_href = match fix {
                    Some((scenario, strategy)) => {
                        let state = LinkState { scenario, strategy, cursor_ms: 0, view: View::Single, builtin: None };
                        lab_href(&state).await
                    }
                    None => None,
                };
                // Without the browser's compression the links fall back to the lab itself.
                let hrefs = (
                    pick_href.unwrap_or_else(|| LAB_PAGE.to_owned()),
                    other_href.unwrap_or_else(|| LAB_PAGE.to_owned()),
                );
                dispatcher.dispatch(QuizAction::LabHrefs { card, pick, hrefs, fix: fix_href });
            });
        }
    });
}

/// Plays both runs under one cursor, on the lab's playback clock.
#[hook]
pub fn use_playback(state: &UseReducerHandle<QuizState>) {
    let dispatcher = state.dispatcher();
    let advance = use_memo((), move |()| Callback::from(move |at_ms| dispatcher.dispatch(QuizAction::Advance(at_ms))));
    crate::ui::frames::use_playback_clock(state.playing, state.cursor_ms, state.speed_ratio, (*advance).clone());
}

/// Moves keyboard focus to the element with `id` (after checking: to the
/// result, so a screen reader reads it and Tab continues from there).
pub fn focus(id: &str) {
    if let Some(element) = web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.get_element_by_id(id))
        .and_then(|element| element.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = element.focus();
    }
}
