//! What more than one page uses. Components: the timeline ([`timeline`],
//! over the engine's drawing of its lanes, [`lanes`]), the verdict
//! ([`verdicts`]) and the event list ([`event_log`]); leaves all, they get
//! data and narrow typed callbacks as props (`on_seek: Callback<u64>`,
//! `on_filter: Callback<FilterChange>`) and hold no app state, and each
//! page turns those into its own actions. Helpers: the run as the pages
//! show it ([`run`], shared by [`shared::Shared`]), how numbers read
//! ([`mod@format`]), SVG as text ([`svg`]), messages ([`message`]), file names
//! ([`files`]), links between the pages ([`links`]), the screen and the
//! keyboard ([`input`]: the narrow screen and the timeline's keys, each
//! heard as the page's own action), the playback clock ([`frames`]),
//! callbacks that send one action ([`callbacks`]), and the error panel
//! shown when a page panics ([`mod@panic`]).

pub mod callbacks;
pub mod event_log;
pub mod files;
pub mod format;
pub mod frames;
pub mod input;
pub mod lanes;
pub mod links;
pub mod message;
pub mod panic;
pub mod run;
pub mod shared;
pub mod svg;
pub mod timeline;
pub mod verdicts;
