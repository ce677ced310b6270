//! The lab's function components. The root ([`app`]) owns the state; every
//! other component gets data and callbacks as props and keeps no app state.

pub mod app;
pub mod charts;
pub mod compare;
pub mod event_log;
pub mod inject;
pub mod lanes;
pub mod picker;
pub mod script;
pub mod timeline;
pub mod topology;
pub mod transport;
pub mod verdicts;
