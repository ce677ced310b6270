//! Every side effect of the explorer, in one place: the page's address at
//! start, and the worker (the search, the speed probe), whose answers become
//! actions; a counterexample also gets its lab link made. The root component
//! calls these; the reducer never does.

use crate::explore::state::{ExploreAction, ExploreState};
use crate::ui::links::{LINK_PREFIX, share_fragment, unpacked_link};
use crate::worker::LabWorker;
use crate::worker::protocol::{JsonCodec, Request, Response};
use gloo_worker::{Spawnable, WorkerBridge};
use locklab_engine::link::{LinkState, View};
use locklab_engine::{Scenario, StrategyId};
use std::cell::RefCell;
use std::rc::Rc;
use yew::prelude::*;

/// The page as its address opens it: a share link (`#v=1.…`, unpacked by
/// boot.js) brings the lab's scenario and strategy to search; a bad one
/// is named, and the seed's world searched instead.
pub fn state_from_address() -> ExploreState {
    let state = ExploreState::default();
    let hash = web_sys::window().and_then(|window| window.location().hash().ok()).unwrap_or_default();
    if !hash.starts_with(LINK_PREFIX) {
        return state;
    }
    match unpacked_link() {
        Ok(link) => {
            let mut state = state.with_world(Some(Box::new(link.scenario)));
            state.request.strategy = link.strategy;
            state
        }
        Err(problem) => ExploreState {
            error: Some(format!("This link could not be opened: {problem}. Searching the seed's world instead.")),
            ..state
        },
    }
}

/// The page's connection to the lab's Web Worker ([`crate::worker`]), made
/// on first use, so a visit that never searches or measures loads no worker.
pub struct WorkerLink {
    bridge: RefCell<Option<WorkerBridge<LabWorker>>>,
    on_response: Callback<Response>,
}

impl std::fmt::Debug for WorkerLink {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("WorkerLink")
    }
}

impl WorkerLink {
    pub fn new(on_response: Callback<Response>) -> WorkerLink {
        WorkerLink { bridge: RefCell::new(None), on_response }
    }

    pub fn send(&self, request: Request) {
        let mut bridge = self.bridge.borrow_mut();
        let bridge = bridge.get_or_insert_with(|| {
            let on_response = self.on_response.clone();
            LabWorker::spawner()
                .callback(move |response| on_response.emit(response))
                .encoding::<JsonCodec>()
                .spawn_with_loader(crate::worker::LOADER_PATH)
        });
        bridge.send(request);
    }
}

/// The page's worker: its answers become actions; a counterexample also gets
/// its lab link made (an async side effect).
#[hook]
pub fn use_worker(dispatch: Callback<ExploreAction>) -> Rc<WorkerLink> {
    use_memo((), move |()| {
        WorkerLink::new(Callback::from(move |response: Response| {
            if let Response::Explored { scenario: Some(text), met_at_ms, .. } = &response
                && let Ok(scenario) = Scenario::from_json(text)
            {
                let dispatch = dispatch.clone();
                // The lab opens at the moment it broke, not at t=0.
                let cursor_ms = met_at_ms.unwrap_or(0);
                let strategy =
                    scenario.strategy_settings().first().map_or(StrategyId::Fencing, |settings| settings.id());
                wasm_bindgen_futures::spawn_local(async move {
                    let link = LinkState { scenario, strategy, cursor_ms, view: View::Single, builtin: None };
                    if let Some(fragment) = share_fragment(&link).await {
                        dispatch.emit(ExploreAction::LabHref(format!("index.html{fragment}")));
                    }
                });
            }
            dispatch.emit(ExploreAction::Worker(response));
        }))
    })
}
