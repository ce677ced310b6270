//! The quiz page's entry point (quiz.html): everything else is in the library.

fn main() {
    locklab_frontend::quiz::start();
}
