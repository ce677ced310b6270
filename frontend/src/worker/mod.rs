//! The lab's Web Worker (bin `locklab-worker`, gloo-worker): the work that is
//! heavy or rarely needed runs here, off the page's thread and in its own
//! wasm, so the lab's first load stays small and the page stays responsive.
//!
//! - Figures (the lab page, see below): a run's timeline as an SVG file (`svg::figure`, the same function as
//!   `locklab render`) and its event log as JSON (`log_document`). The worker
//!   replays the scenario; the engine is deterministic, so this is the run the
//!   page shows, event for event (the digest in the log says so).
//! - Explore: the counterexample search (`explore::Explorer`) in slices, with
//!   progress after each and a cancel that takes effect between slices.
//! - Bench: runs of the seed's story per second, measured inside the browser.
//!
//! The explorer page talks to it through gloo-worker, with messages as JSON
//! text ([`protocol::JsonCodec`]: the pages already link serde_json, and a second
//! serializer would cost wasm). The lab page asks only for figures, and every
//! kilobyte of its wasm counts, so it starts the same worker under the name
//! [`FIGURES_WORKER_NAME`], which answers a plain protocol instead: the page
//! posts `[scenario JSON, strategy id]` and gets `[svg, log JSON, file stem]`
//! or `[reason]` back, after a first `"ready"`; no serde on the page's side.
//! The gloo-worker messages are [`protocol`]'s.

pub mod protocol;

use gloo_worker::{HandlerId, Worker, WorkerScope};
use locklab_engine::explore::Explorer;
use locklab_engine::{Scenario, StrategyId};
use protocol::{JsonCodec, Request, Response};

/// The worker's loader, relative to the page (Trunk's `data-loader-shim`).
pub const LOADER_PATH: &str = "./locklab-worker_loader.js";

/// The worker's own messages: continue the search after yielding to the
/// event loop (so a Cancel that arrived meanwhile is seen).
#[derive(Debug)]
pub enum Message {
    Continue { search: u32 },
}

/// A search in progress.
#[derive(Debug)]
struct Search {
    id: u32,
    client: HandlerId,
    explorer: Explorer,
    started_ms: f64,
    /// Schedules per slice, tuned so that a slice takes about [`SLICE_MS`].
    slice_runs: u32,
}

/// How long one slice of the search may hold the worker before it yields.
const SLICE_MS: f64 = 40.0;

/// The worker's state: at most one search.
#[derive(Debug)]
pub struct LabWorker {
    search: Option<Search>,
    searches_started: u32,
}

fn now_ms() -> f64 {
    js_sys::Date::now()
}

impl LabWorker {
    /// A run's timeline as SVG, its log as JSON and a file stem for both.
    fn figures(scenario: &str, strategy: StrategyId) -> Result<[String; 3], String> {
        let scenario = Scenario::from_json(scenario).map_err(|error| format!("the scenario is invalid: {error}"))?;
        let log = locklab_engine::simulate(&scenario, strategy);
        let report = locklab_engine::report::analyze(&scenario, strategy, &log);
        Ok([
            locklab_engine::svg::figure(
                &scenario,
                &locklab_engine::view::Timeline::build(&scenario, strategy, &log),
                &report,
            ),
            locklab_engine::log_document(&scenario, strategy, &log),
            crate::ui::files::file_stem(&scenario.name, strategy),
        ])
    }

    fn bench(strategy: StrategyId, runs: u32) -> Response {
        // The seed's story, as the native benchmark runs it (engine/examples/speed.rs).
        let Some(story) = locklab_engine::builtin::find("two-am-saturday") else {
            return Response::Refused("the built-in story two-am-saturday is missing".to_owned());
        };
        let mut scenario = match Scenario::from_json(story.text) {
            Ok(scenario) => scenario,
            Err(error) => return Response::Refused(error.to_string()),
        };
        // Warm up first: the browser compiles wasm with a quick baseline
        // compiler and optimizes hot functions later, so the first runs are
        // not what the engine does at speed. Twice the timed runs: a quarter
        // of them (the warm-up until December 2026) lasted ~25 ms once the
        // engine got faster, too short for the optimizing compiler to finish,
        // and measured half the speed (docs/bench.md).
        for seed in 0..u64::from(runs.saturating_mul(2)) {
            scenario.seed = u64::MAX - seed;
            let _ = locklab_engine::simulate(&scenario, strategy);
        }
        let started_ms = now_ms();
        let mut events = 0u64;
        for seed in 0..u64::from(runs) {
            scenario.seed = seed;
            events += u64::try_from(locklab_engine::simulate(&scenario, strategy).len()).unwrap_or(u64::MAX);
        }
        Response::Bench { strategy, runs, events, elapsed_ms: now_ms() - started_ms }
    }

    fn schedule(scope: &WorkerScope<Self>, search: u32) {
        scope.send_future(async move {
            // A macrotask, not a microtask: incoming messages (Cancel) run first.
            gloo_timers::future::TimeoutFuture::new(0).await;
            Message::Continue { search }
        });
    }
}

impl Worker for LabWorker {
    type Message = Message;
    type Input = Request;
    type Output = Response;

    fn create(_scope: &WorkerScope<Self>) -> Self {
        LabWorker { search: None, searches_started: 0 }
    }

    fn update(&mut self, scope: &WorkerScope<Self>, message: Message) {
        let Message::Continue { search: id } = message;
        let Some(search) = self.search.as_mut().filter(|search| search.id == id) else {
            return; // a slice of a search that was cancelled or replaced
        };
        let slice_started_ms = now_ms();
        let done = search.explorer.step(search.slice_runs).cloned();
        let slice_ms = now_ms() - slice_started_ms;
        // Aim for SLICE_MS per slice: long enough to be efficient, short enough to cancel promptly.
        search.slice_runs = if slice_ms < SLICE_MS / 2.0 {
            search.slice_runs.saturating_mul(2).min(4_096)
        } else if slice_ms > SLICE_MS * 2.0 {
            (search.slice_runs / 2).max(1)
        } else {
            search.slice_runs
        };
        let elapsed_ms = now_ms() - search.started_ms;
        let (client, runs, budget) = (search.client, search.explorer.runs(), search.explorer.budget());
        match done {
            Some(exploration) => {
                let scenario = exploration.scenario.as_ref().map(Scenario::to_json);
                scope.respond(
                    client,
                    Response::Explored {
                        runs: exploration.runs,
                        elapsed_ms,
                        scenario,
                        met_at_ms: exploration.met_at_ms,
                        cancelled: false,
                    },
                );
                self.search = None;
            }
            None => {
                scope.respond(client, Response::Progress { runs, budget, elapsed_ms });
                Self::schedule(scope, id);
            }
        }
    }

    fn received(&mut self, scope: &WorkerScope<Self>, request: Request, client: HandlerId) {
        match request {
            Request::Bench { strategy, runs } => scope.respond(client, Self::bench(strategy, runs)),
            Request::Explore(request) => match request.options() {
                Ok(options) => {
                    self.searches_started += 1;
                    let id = self.searches_started;
                    self.search = Some(Search {
                        id,
                        client,
                        explorer: Explorer::new(options),
                        started_ms: now_ms(),
                        slice_runs: 8,
                    });
                    Self::schedule(scope, id);
                }
                Err(problem) => scope.respond(client, Response::Refused(problem)),
            },
            Request::Cancel => {
                if let Some(search) = self.search.take() {
                    scope.respond(
                        search.client,
                        Response::Explored {
                            runs: search.explorer.runs(),
                            elapsed_ms: now_ms() - search.started_ms,
                            scenario: None,
                            met_at_ms: None,
                            cancelled: true,
                        },
                    );
                }
            }
        }
    }
}

/// The worker's name when the lab page starts it for figures.
pub const FIGURES_WORKER_NAME: &str = "locklab-figures";

/// Starts the worker (called by the worker's `main`): the figures protocol
/// under its name, gloo-worker otherwise.
pub fn register() {
    use gloo_worker::Registrable;
    use wasm_bindgen::JsCast;
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    if scope.name() == FIGURES_WORKER_NAME {
        serve_figures(scope);
    } else {
        LabWorker::registrar().encoding::<JsonCodec>().register();
    }
}

/// The figures protocol (see the module's documentation).
fn serve_figures(scope: web_sys::DedicatedWorkerGlobalScope) {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;
    let responder = scope.clone();
    let on_message = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
        let request = js_sys::Array::from(&event.data());
        let scenario = request.get(0).as_string().unwrap_or_default();
        let strategy = request.get(1).as_string().and_then(|name| StrategyId::parse(&name));
        let reply = match strategy.map(|strategy| LabWorker::figures(&scenario, strategy)) {
            Some(Ok([svg, log, file_stem])) => js_sys::Array::of3(&svg.into(), &log.into(), &file_stem.into()),
            Some(Err(problem)) => js_sys::Array::of1(&problem.into()),
            None => js_sys::Array::of1(&"the request named no known strategy".into()),
        };
        let _ = responder.post_message(&reply);
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    on_message.forget();
    let _ = scope.post_message(&"ready".into());
}
