//! Links between the pages: a share link's fragment (made and read by the
//! page's `static/link.js`, which every page's `static/boot.js` loads), the
//! lab page the other pages link into, and the page scripts' async
//! functions.

use locklab_engine::link::{LinkError, LinkState};
use wasm_bindgen::JsCast;

/// The page the other pages' "Open in the lab" links go to, beside them.
pub const LAB_PAGE: &str = "index.html";

/// The fragment that marks a share link: `#v=1.…`. Other fragments (`#main`
/// from the skip link, `#crash-test`) are not links.
pub const LINK_PREFIX: &str = "#v=";

/// The link `static/boot.js` unpacked from the fragment before the lab
/// started (`globalThis.locklabLink`: `{ json }` or `{ error, detail }`),
/// checked as the engine's `link::decode` checks it. The byte work (base64,
/// DEFLATE) is the browser's: the engine's DEFLATE code would not fit the
/// wasm's size budget. Errors are worded by the engine's `LinkError`. Any
/// page started by boot.js has it (the explorer takes a lab's world this way).
pub fn unpacked_link() -> Result<LinkState, LinkError> {
    let unpacked = js_sys::Reflect::get(&js_sys::global(), &"locklabLink".into()).unwrap_or_default();
    let field = |name: &str| js_sys::Reflect::get(&unpacked, &name.into()).ok().and_then(|value| value.as_string());
    if let Some(json) = field("json") {
        return link_state(&json);
    }
    let detail = field("detail").unwrap_or_default();
    Err(match field("error").as_deref() {
        Some("Empty") => LinkError::Empty,
        Some("TooLong") => LinkError::TooLong { chars: detail.parse().unwrap_or_default() },
        Some("NoVersion") => LinkError::NoVersion,
        Some("UnknownVersion") => LinkError::UnknownVersion(detail),
        Some("NotBase64") => LinkError::NotBase64,
        Some("TooLarge") => LinkError::TooLarge,
        _ => LinkError::Damaged,
    })
}

/// The checks `link::decode` makes once the JSON is unpacked: the engine's
/// own `link::parse_state`, without linking its DEFLATE code.
pub fn link_state(json: &str) -> Result<LinkState, LinkError> {
    locklab_engine::link::parse_state(json)
}

/// The address fragment (`#v=1.…`) that opens `link` in the lab, made with
/// the page's `locklabEncodeLink` (static/link.js, the platform's DEFLATE);
/// `None` if this browser cannot compress. Any page loaded by boot.js can use it.
pub async fn share_fragment(link: &LinkState) -> Option<String> {
    // Pretty, as `Scenario::to_json` writes, so the serializer is shared (the
    // whitespace costs a few bytes after DEFLATE).
    let json = serde_json::to_string_pretty(link).ok()?;
    let fragment = call_page_function("locklabEncodeLink", json.into()).await.ok()?.as_string()?;
    Some(format!("{LINK_PREFIX}{fragment}"))
}

/// Calls an async function the page's scripts put on the global object
/// (static/link.js, static/figure.js) and awaits its answer; the error is
/// what the script rejected with, when it is text.
pub async fn call_page_function(name: &str, argument: wasm_bindgen::JsValue) -> Result<wasm_bindgen::JsValue, String> {
    let function = js_sys::Reflect::get(&js_sys::global(), &name.into())
        .ok()
        .and_then(|function| function.dyn_into::<js_sys::Function>().ok())
        .ok_or_else(|| format!("this page has no {name}"))?;
    let promise = function.call1(&wasm_bindgen::JsValue::NULL, &argument).map_err(|_| format!("{name} failed"))?;
    wasm_bindgen_futures::JsFuture::from(js_sys::Promise::from(promise))
        .await
        .map_err(|error| error.as_string().unwrap_or_else(|| format!("{name} failed")))
}

/// Puts `text` on the clipboard; false if the browser would not allow it.
pub async fn copy_text(window: &web_sys::Window, text: &str) -> bool {
    wasm_bindgen_futures::JsFuture::from(window.navigator().clipboard().write_text(text)).await.is_ok()
}

/// The address of the page's folder, ending in `/`: the pages and embed.js sit side by side.
pub fn page_folder(window: &web_sys::Window) -> String {
    let location = window.location();
    let page =
        format!("{}{}", location.origin().unwrap_or_default(), location.pathname().unwrap_or_else(|_| "/".to_owned()));
    page[..page.rfind('/').map_or(page.len(), |slash| slash + 1)].to_owned()
}

/// The snippet that embeds a page of `folder` in a post: `embedded` is its
/// address there with its query (`?embed#v=…` for the lab,
/// `story.html?embed#step=…`), and the script beside it sizes the frame to
/// its content (static/embed.js).
pub fn embed_snippet(folder: &str, embedded: &str, title: &str) -> String {
    let title = title.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;");
    format!(
        "<iframe src=\"{folder}{embedded}\" title=\"{title}\" data-locklab width=\"100%\" height=\"560\" \
         style=\"border:0\" loading=\"lazy\"></iframe><script src=\"{folder}embed.js\" async></script>"
    )
}
