//! The quiz page (quiz.html): placeholder until the quiz is built.

/// Mounts the quiz on the page's `#quiz` element.
pub fn start() {
    crate::panic::install_hook();
}
