//! The lab's function components. The root ([`app`]) owns the state; every
//! other component gets data and callbacks as props and keeps no app state.
//! The timeline, the verdict and the event log are the pages' own
//! ([`crate::ui`]); these are the lab's alone.

pub mod app;
pub mod charts;
pub mod compare;
pub mod inject;
pub mod picker;
pub mod script;
pub mod topology;
pub mod transport;

use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// The id of a control to give the focus back to after the next render.
/// The fault script's rows and the inject panel's form are drawn as markup,
/// so a change redraws the control that had the focus; a keyboard user keeps
/// their place when the handler names it here.
#[hook]
pub fn use_refocus() -> Rc<RefCell<Option<String>>> {
    let refocus: Rc<RefCell<Option<String>>> = use_mut_ref(|| None);
    {
        let refocus = refocus.clone();
        use_effect(move || {
            if let Some(id) = refocus.borrow_mut().take()
                && let Some(element) = web_sys::window()
                    .and_then(|window| window.document())
                    .and_then(|document| document.get_element_by_id(&id))
                    .and_then(|element| element.dyn_into::<web_sys::HtmlElement>().ok())
            {
                let _ = element.focus();
            }
        });
    }
    refocus
}
