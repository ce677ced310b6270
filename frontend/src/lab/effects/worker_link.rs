//! The lab's Web Worker, reached from the page: the figure exports.

use super::files::{download_blob, download_text};
use crate::lab::state::{Action, LabState};
use crate::ui::links::call_page_function;
use crate::ui::message::{Message, Tone};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use yew::prelude::*;

/// Which figure an export asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    Svg,
    Png,
    Log,
}

/// The lab's exports: the worker, started on first use under
/// [`crate::worker::FIGURES_WORKER_NAME`] (its plain protocol keeps serde and
/// gloo-worker out of the lab's wasm), and the requests waiting for it to load.
pub struct Exporter {
    worker: RefCell<Option<web_sys::Worker>>,
    ready: Rc<Cell<bool>>,
    /// Requests made before the worker said it was ready, in order.
    waiting: Rc<RefCell<Vec<wasm_bindgen::JsValue>>>,
    /// What each request asked for, in order: the worker answers in order.
    wanted: Rc<RefCell<std::collections::VecDeque<Figure>>>,
    dispatch: Callback<Action>,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Exporter")
    }
}

impl Exporter {
    /// Asks the worker for the figures of the current run.
    pub fn export(&self, state: &LabState, figure: Figure) {
        let request = js_sys::Array::of2(&state.scenario.to_json().into(), &state.strategy.name().into());
        self.wanted.borrow_mut().push_back(figure);
        let mut worker = self.worker.borrow_mut();
        if worker.is_none() {
            match self.start() {
                Ok(started) => *worker = Some(started),
                Err(problem) => {
                    self.wanted.borrow_mut().clear();
                    let text = format!("The export failed: {problem}.");
                    self.dispatch.emit(Action::Notify(Message { tone: Tone::Error, text }));
                    return;
                }
            }
        }
        match worker.as_ref() {
            Some(worker) if self.ready.get() => {
                let _ = worker.post_message(&request);
            }
            _ => self.waiting.borrow_mut().push(request.into()),
        }
    }

    fn start(&self) -> Result<web_sys::Worker, String> {
        let options = web_sys::WorkerOptions::new();
        options.set_name(crate::worker::FIGURES_WORKER_NAME);
        let worker = web_sys::Worker::new_with_options(crate::worker::LOADER_PATH, &options)
            .map_err(|_| "the browser would not start the lab's worker".to_owned())?;
        let (ready, waiting, wanted, dispatch) =
            (self.ready.clone(), self.waiting.clone(), self.wanted.clone(), self.dispatch.clone());
        let sender = worker.clone();
        let on_message = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
            let data = event.data();
            if data.as_string().as_deref() == Some("ready") {
                ready.set(true);
                for request in waiting.borrow_mut().drain(..) {
                    let _ = sender.post_message(&request);
                }
                return;
            }
            let reply = js_sys::Array::from(&data);
            let figure = wanted.borrow_mut().pop_front().unwrap_or(Figure::Svg);
            let text = |index: u32| reply.get(index).as_string().unwrap_or_default();
            let result = if reply.length() == 3 { Ok((text(0), text(1), text(2))) } else { Err(text(0)) };
            save_figure(result, figure, dispatch.clone());
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        // The handler lives as long as the page's worker.
        on_message.forget();
        Ok(worker)
    }
}

/// The lab's exporter: the worker's answers become downloads and messages.
#[hook]
pub fn use_exporter(dispatch: Callback<Action>) -> Rc<Exporter> {
    use_memo((), move |()| Exporter {
        worker: RefCell::new(None),
        ready: Rc::new(Cell::new(false)),
        waiting: Rc::new(RefCell::new(Vec::new())),
        wanted: Rc::new(RefCell::new(std::collections::VecDeque::new())),
        dispatch,
    })
}

/// Saves the figures the worker made (svg, log, file stem) as `figure` asks.
fn save_figure(figures: Result<(String, String, String), String>, figure: Figure, dispatch: Callback<Action>) {
    let notify = move |result: Result<String, String>| {
        let message = match result {
            Ok(file_name) => Message { tone: Tone::Info, text: format!("Exported {file_name}.") },
            Err(problem) => Message { tone: Tone::Error, text: format!("The export failed: {problem}.") },
        };
        dispatch.emit(Action::Notify(message));
    };
    let (svg, log, file_stem) = match figures {
        Ok(figures) => figures,
        Err(problem) => return notify(Err(problem)),
    };
    let (text, mime, extension) = match figure {
        Figure::Svg => (svg, "image/svg+xml", "svg"),
        Figure::Log => (log, "application/json", "log.json"),
        Figure::Png => {
            return wasm_bindgen_futures::spawn_local(async move {
                let file_name = format!("{file_stem}.png");
                notify(svg_to_png(svg).await.and_then(|blob| download_blob(&blob, &file_name)).map(|()| file_name));
            });
        }
    };
    let file_name = format!("{file_stem}.{extension}");
    notify(download_text(&text, mime, &file_name).map(|()| file_name));
}

/// Rasterizes an SVG with the page's `locklabSvgToPng` (static/figure.js: an
/// image drawn on a canvas at twice the size, for sharp figures).
async fn svg_to_png(svg: String) -> Result<web_sys::Blob, String> {
    let blob = call_page_function("locklabSvgToPng", svg.into()).await?;
    blob.dyn_into::<web_sys::Blob>().map_err(|_| "the drawing gave no image".to_owned())
}
