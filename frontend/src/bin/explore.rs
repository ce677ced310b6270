//! The explorer page's entry point (explore.html): everything else is in the library.

fn main() {
    locklab_frontend::explore::start();
}
