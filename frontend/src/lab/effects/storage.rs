//! What the lab starts with and what it keeps between visits: the address
//! (a share link in the fragment, a built-in named in the query, `?embed`),
//! the stored scenario and strategy, and the built-ins fetched beside the
//! page.

use crate::lab::state::{Action, LabState};
use crate::ui::input::{NARROW_QUERY, media_matches};
use crate::ui::links::{LINK_PREFIX, call_page_function, unpacked_link};
use crate::ui::message::{Message, Tone};
use locklab_engine::link::View;
use locklab_engine::{Scenario, StrategyId, builtin};
use std::rc::Rc;
use yew::prelude::*;

/// Where the lab keeps the scenario between visits.
pub const SCENARIO_KEY: &str = "locklab/scenario";
/// Where the lab keeps the strategy between visits.
pub const STRATEGY_KEY: &str = "locklab/strategy";

/// What the lab starts with.
#[derive(Clone, Debug, PartialEq)]
pub struct Boot {
    pub scenario: Scenario,
    pub strategy: StrategyId,
    pub message: Option<Message>,
    /// `#crash-test` in the address: panic after the first render, to show the error panel.
    pub crash_test: bool,
    pub narrow: bool,
    /// Where a share link put the cursor.
    pub cursor_ms: u64,
    /// A share link asked for all six side by side.
    pub compare: bool,
    /// `?embed`: the compact view for an iframe in a post. It neither reads
    /// nor writes the reader's stored lab: the author's scenario is what shows.
    pub embed: bool,
    /// The stored lab could not be restored: it is not overwritten by the lab
    /// shown instead.
    pub stored_kept: bool,
}

/// A built-in's text, fetched from its file beside the page (`scenarios/`):
/// the lab's wasm embeds only the post's night, for a fresh lab.
pub async fn fetch_builtin(name: &str) -> Result<String, String> {
    let listed = builtin::CATALOG
        .iter()
        .find(|listed| listed.name == name)
        .ok_or_else(|| format!("there is no built-in scenario named `{name}`"))?;
    let path = format!("scenarios/{}", listed.file);
    let text = call_page_function("locklabFetchText", path.as_str().into()).await?;
    text.as_string().ok_or_else(|| format!("{path} is not text"))
}

/// Loads a built-in into the lab (the scenario picker).
pub fn load_builtin(name: String, dispatch: Callback<Action>) {
    wasm_bindgen_futures::spawn_local(async move {
        dispatch.emit(match fetch_builtin(&name).await {
            Ok(text) => Action::LoadScenario { text, source: format!("the built-in {name}") },
            Err(problem) => Action::Notify(Message {
                tone: Tone::Error,
                text: format!("The built-in could not be loaded: {problem}."),
            }),
        });
    });
}

/// Reads the address and the stored state. Bad stored state is reported,
/// never fatal.
pub async fn boot() -> Rc<Boot> {
    let window = web_sys::window();
    let location = window.as_ref().map(web_sys::Window::location);
    let search = location.as_ref().and_then(|location| location.search().ok()).unwrap_or_default();
    let hash = location.as_ref().and_then(|location| location.hash().ok()).unwrap_or_default();
    let storage = window.as_ref().and_then(|window| window.local_storage().ok().flatten());
    let mut boot = first_visit(&hash);
    let params = web_sys::UrlSearchParams::new_with_str(&search).ok();
    let param = |name: &str| params.as_ref().and_then(|params| params.get(name));
    boot.embed = params.as_ref().is_some_and(|params| params.has("embed"));
    // `?scenario=NAME&strategy=ID`: a built-in by name, the short form of a link.
    let named = param("scenario");
    if let Some(name) = &named {
        open_builtin(&mut boot, name).await;
    }
    if let Some(name) = param("strategy") {
        choose_strategy(&mut boot, &name);
    }
    // A link wins over the stored lab; a bad link opens the default lab (not
    // the stored one), so what the reader sees never depends on their history.
    if hash.starts_with(LINK_PREFIX) {
        open_link(&mut boot);
        return Rc::new(boot);
    }
    // An embed and a named built-in show what the address says, never the stored lab.
    if boot.embed || named.is_some() {
        return Rc::new(boot);
    }
    // `?reset` as a parameter of its own: `?utm_campaign=preset` is not a reset.
    if params.as_ref().is_some_and(|params| params.has("reset")) {
        reset(&mut boot, storage.as_ref(), window.as_ref());
        return Rc::new(boot);
    }
    if let Some(storage) = storage {
        restore_stored(&mut boot, &storage);
    }
    Rc::new(boot)
}

/// What a first visit with a plain address opens on: the default lab.
fn first_visit(hash: &str) -> Boot {
    Boot {
        scenario: crate::lab::run::default_scenario(),
        // A first visit opens on the post's own lock, the night as the post tells it.
        strategy: StrategyId::Naive,
        message: None,
        crash_test: hash == "#crash-test",
        narrow: media_matches(NARROW_QUERY),
        cursor_ms: 0,
        compare: false,
        embed: false,
        stored_kept: false,
    }
}

/// Opens the built-in the address names, or says why it could not.
async fn open_builtin(boot: &mut Boot, name: &str) {
    let text = fetch_builtin(name).await;
    match text.and_then(|text| Scenario::from_json(&text).map_err(|error| error.to_string())) {
        Ok(scenario) => boot.scenario = scenario,
        Err(problem) => {
            boot.message = Some(Message {
                tone: Tone::Error,
                text: format!("The built-in could not be opened: {problem}. Showing the default lab instead."),
            });
        }
    }
}

/// Chooses the strategy the address names, or says there is none by that name.
fn choose_strategy(boot: &mut Boot, name: &str) {
    match StrategyId::parse(name) {
        Some(strategy) => boot.strategy = strategy,
        None => {
            boot.message = Some(Message {
                tone: Tone::Error,
                text: format!("There is no strategy named `{name}`. Showing the post's own lock instead."),
            });
        }
    }
}

/// Opens the share link in the address: its scenario, strategy, cursor and view.
fn open_link(boot: &mut Boot) {
    match unpacked_link() {
        Ok(state) => {
            boot.scenario = state.scenario;
            boot.strategy = state.strategy;
            boot.cursor_ms = state.cursor_ms;
            boot.compare = state.view == View::Compare;
        }
        Err(problem) => {
            boot.message = Some(Message {
                tone: Tone::Error,
                text: format!("This link could not be opened: {problem}. Showing the default lab instead."),
            });
        }
    }
}

/// Clears the stored lab and takes `?reset` out of the address, so that a
/// reload does not reset again.
fn reset(boot: &mut Boot, storage: Option<&web_sys::Storage>, window: Option<&web_sys::Window>) {
    if let Some(storage) = storage {
        let _ = storage.remove_item(SCENARIO_KEY);
        let _ = storage.remove_item(STRATEGY_KEY);
    }
    if let Some(history) = window.and_then(|window| window.history().ok()) {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some("./"));
    }
    boot.message =
        Some(Message { tone: Tone::Info, text: "The lab was reset: the stored scenario was cleared.".to_owned() });
}

/// Restores the stored lab, if there is one; one that cannot be restored
/// is reported and kept.
fn restore_stored(boot: &mut Boot, storage: &web_sys::Storage) {
    let Some(scenario) = storage.get_item(SCENARIO_KEY).ok().flatten() else { return };
    let strategy = storage.get_item(STRATEGY_KEY).ok().flatten().unwrap_or_else(|| "fencing".to_owned());
    match restore(&strategy, &scenario) {
        Ok((scenario, strategy)) => {
            boot.scenario = scenario;
            boot.strategy = strategy;
        }
        Err(problem) => {
            boot.message = Some(Message {
                tone: Tone::Error,
                text: format!(
                    "Your saved lab could not be restored ({problem}); starting from the built-in scenario \
                     instead. The saved lab is kept until you change this one."
                ),
            });
            boot.stored_kept = true;
        }
    }
}

/// Parses stored state: a strategy name and a scenario document.
pub fn restore(strategy_text: &str, scenario_text: &str) -> Result<(Scenario, StrategyId), String> {
    let strategy = StrategyId::parse(strategy_text.trim())
        .ok_or_else(|| format!("strategy: unknown strategy `{strategy_text}`"))?;
    let scenario = Scenario::from_json(scenario_text).map_err(|error| format!("scenario: {error}"))?;
    Ok((scenario, strategy))
}

/// Stores the scenario and strategy, and remembers them for a panic report.
#[hook]
pub fn use_persistence(state: &UseReducerHandle<LabState>, stored_kept: bool) {
    // The run changes exactly when the scenario or the strategy does.
    let embed = state.embed;
    // A lab that opens on a long run shows the post's night until that run is
    // done; the night is not what the user had, so it is not stored over it.
    let standing_in = state.pending.is_some();
    // Nor is the lab shown instead of a stored one that could not be
    // restored: that stays, as the message says, until the user changes the lab.
    let first_run_kept = use_mut_ref(|| stored_kept);
    use_effect_with(state.run.clone(), move |run| {
        let (scenario, strategy) = (&run.scenario, &run.strategy);
        let json = scenario.to_json();
        let kept = std::mem::take(&mut *first_run_kept.borrow_mut());
        // An embedded lab is someone else's post: it must not replace the reader's own lab.
        let storage = if embed || standing_in || kept {
            None
        } else {
            web_sys::window().and_then(|window| window.local_storage().ok().flatten())
        };
        if let Some(storage) = storage {
            let _ = storage.set_item(SCENARIO_KEY, &json);
            let _ = storage.set_item(STRATEGY_KEY, strategy.name());
        }
        crate::ui::panic::remember(json, strategy.name());
    });
}
