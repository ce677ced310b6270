//! The story page's entry point (story.html): everything else is in the library.

fn main() {
    locklab_frontend::story::start();
}
