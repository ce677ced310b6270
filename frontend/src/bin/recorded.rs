//! The recorded-run page's entry point (recorded.html): everything else is in the library.

fn main() {
    locklab_frontend::recorded::start();
}
