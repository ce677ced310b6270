//! Files: loading a scenario file, saving the scenario, and downloads (the
//! names they are saved under are [`crate::ui::files`]'s).

use crate::lab::state::Action;
use crate::ui::files::file_name_for;
use crate::ui::message::{Message, Tone};
use locklab_engine::Scenario;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Reads a scenario file the user chose and hands its text to the reducer.
pub fn read_scenario_file(file: web_sys::File, dispatch: Callback<Action>) {
    let name = file.name();
    let most = locklab_engine::scenario::MAX_DOCUMENT_BYTES;
    // A size in bytes, far inside f64's exact integers.
    #[allow(clippy::cast_precision_loss)]
    if file.size() > most as f64 {
        let text = format!("The file {name} is larger than {most} bytes, the most a scenario may be; it was not read.");
        return dispatch.emit(Action::Notify(Message { tone: Tone::Error, text }));
    }
    wasm_bindgen_futures::spawn_local(async move {
        match wasm_bindgen_futures::JsFuture::from(file.text()).await {
            Ok(text) => dispatch.emit(Action::LoadScenario {
                text: text.as_string().unwrap_or_default(),
                source: format!("the file {name}"),
            }),
            Err(_) => dispatch.emit(Action::Notify(Message {
                tone: Tone::Error,
                text: format!("The file {name} could not be read. The current run is unchanged."),
            })),
        }
    });
}

/// Offers the scenario as a JSON download, in the current format (a
/// `locklab/1` scenario is saved as `locklab/2` that means the same).
pub fn save_scenario_file(scenario: &Scenario) -> Result<String, String> {
    let file_name = file_name_for(scenario, ".json");
    let document = scenario.clone().in_current_format();
    download_text(&document.to_json(), "application/json", &file_name)?;
    Ok(file_name)
}

/// Offers `text` as a download named `file_name`.
pub(super) fn download_text(text: &str, mime: &str, file_name: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)
        .map_err(|_| "the browser refused to make the file")?;
    download_blob(&blob, file_name)
}

/// Offers a blob as a download through a temporary object URL.
pub(super) fn download_blob(blob: &web_sys::Blob, file_name: &str) -> Result<(), String> {
    let document = web_sys::window().and_then(|window| window.document()).ok_or("no document")?;
    let url = web_sys::Url::create_object_url_with_blob(blob).map_err(|_| "no object URL")?;
    let link: web_sys::HtmlAnchorElement =
        document.create_element("a").map_err(|_| "no link")?.dyn_into().map_err(|_| "no link")?;
    link.set_href(&url);
    link.set_download(file_name);
    link.click();
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(())
}
