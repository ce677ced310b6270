//! Every side effect of the recorded-run page, in one place: reading the
//! address at start, fetching a document beside the page, and reading one
//! the reader chose. The root component calls these; the reducer never does.

use crate::recorded::state::{RecordedAction, Shown, read};
use crate::ui::input::{NARROW_QUERY, media_matches};
use crate::ui::links::call_page_function;
use yew::prelude::*;

/// The example the page opens with when the address names no document.
pub const EXAMPLE: &str = "recorded/two-am-saturday-fencing.live.json";
/// The largest document the page reads: a day of events is far less.
const MOST_BYTES: f64 = 32.0 * 1024.0 * 1024.0;

/// What the page starts with.
#[derive(Clone, Debug, PartialEq)]
pub struct Boot {
    pub log: String,
    pub embed: bool,
    pub narrow: bool,
}

/// Reads the address and the screen.
pub fn boot() -> Boot {
    let search = web_sys::window().and_then(|window| window.location().search().ok()).unwrap_or_default();
    let params = web_sys::UrlSearchParams::new_with_str(&search).ok();
    let log = params.as_ref().and_then(|params| params.get("log")).filter(|log| !log.is_empty());
    let narrow = media_matches(NARROW_QUERY);
    Boot {
        log: log.unwrap_or_else(|| EXAMPLE.to_owned()),
        embed: params.as_ref().is_some_and(|params| params.has("embed")),
        narrow,
    }
}

/// Fetches a document beside the page. Only a relative path is taken: the
/// page requests nothing but its own site's files.
pub async fn fetch_log(path: String) -> Result<Shown, String> {
    if path.contains("://") || path.starts_with("//") {
        return Err(format!("`{path}` is not a file of this site; a recorded run is read from beside the page."));
    }
    let text =
        call_page_function("locklabFetchText", path.as_str().into()).await.map_err(|error| format!("{error}."))?;
    let text = text.as_string().ok_or_else(|| format!("{path} is not text."))?;
    read(&text, &path)
}

/// Reads a document the reader chose.
pub fn read_file(file: web_sys::File, dispatch: Callback<RecordedAction>) {
    let name = file.name();
    if file.size() > MOST_BYTES {
        let problem = format!("The file {name} is larger than 32 MB, more than any recorded run; it was not read.");
        return dispatch.emit(RecordedAction::Loaded(Err(problem)));
    }
    wasm_bindgen_futures::spawn_local(async move {
        let loaded = match wasm_bindgen_futures::JsFuture::from(file.text()).await {
            Ok(text) => read(&text.as_string().unwrap_or_default(), &name),
            Err(_) => Err(format!("The file {name} could not be read.")),
        };
        dispatch.emit(RecordedAction::Loaded(loaded));
    });
}
