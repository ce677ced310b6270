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
