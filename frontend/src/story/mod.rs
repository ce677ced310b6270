//! The story page (story.html, its own wasm): a story from
//! `engine/stories/` told step by step over real engine runs. Each step's
//! text sits beside the lab's timeline of its run, the cursor on the step's
//! moment and what to look at outlined; the story plays by itself, with
//! Back, Next and Pause and the keyboard, and every step opens in the lab at
//! the same moment. `?embed` shows it in someone's post (sized by the same
//! `embed.js` as the lab), `#step=ID` starts at a named step.
//!
//! Layout, following the house style:
//! - [`state`]: the steps with their runs, the one reducer state and its actions; pure;
//! - [`components`]: the root and its leaves, which get data and callbacks;
//! - [`effects`]: every side effect (the address, keys, the media query,
//!   the play timer, the lab links), used by the root.

pub mod components;
pub mod effects;
pub mod state;

use std::rc::Rc;

/// Mounts the story on the page's `#story` element (or the body).
pub fn start() {
    crate::mount::<components::StoryApp>("story", || components::StoryAppProps { boot: Rc::new(effects::boot()) });
}
