//! The quiz page (quiz.html, its own wasm): on-call stories (one per file in `engine/quizzes/`), each with a
//! question whose answer the engine computes. The learner picks a choice
//! before anything runs, checks it, and then watches the scenario play under
//! their pick beside the right answer (or, when they were right, beside
//! another right answer or the wrong choice whose run comes closest), with the
//! explanation, the references and a link that opens either run in the lab.
//!
//! Layout, following the house style:
//! - [`progress`]: the stored progress and its pure parser;
//! - [`state`]: the cards, the one reducer state and its actions; pure;
//! - [`components`]: the root and its leaves, which get data and callbacks;
//! - [`effects`]: every side effect (storage, the address, animation frames,
//!   the lab links), used by the root.

pub mod components;
pub mod effects;
pub mod progress;
pub mod state;

use std::rc::Rc;

/// Mounts the quiz on the page's `#quiz` element (or the body).
pub fn start() {
    crate::mount::<components::QuizApp>("quiz", || components::QuizAppProps { boot: Rc::new(effects::boot()) });
}
