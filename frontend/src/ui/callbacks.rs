//! Callbacks made from a page's dispatch.

use yew::Callback;

/// A callback that sends `action` whatever the event (a button that always
/// asks for the same thing). One function for every such button: a closure
/// per button would be its own code in the wasm.
pub fn sending<E, A: Clone + 'static>(dispatch: &Callback<A>, action: A) -> Callback<E> {
    let dispatch = dispatch.clone();
    Callback::from(move |_: E| dispatch.emit(action.clone()))
}
