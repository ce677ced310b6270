//! The one wrapper states and props compare by identity.

use std::rc::Rc;

/// A shared value whose equality is identity: a state or a component's
/// props compare it by pointer, so a page re-renders only when the value was
/// made again (a recomputed run, a changed scenario), and comparing costs a
/// pointer on every animation frame. States and props derive `PartialEq`
/// over it.
#[derive(Debug)]
pub struct Shared<T>(pub Rc<T>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Rc::clone(&self.0))
    }
}

impl<T> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl<T> std::ops::Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
