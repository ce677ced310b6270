//! The browser entry point: Trunk builds this binary; everything else is in the library.

fn main() {
    locklab_frontend::lab::start();
}
