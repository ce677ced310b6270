//! The Web Worker's entry point: the explorer's search and figure exports run
//! here, off the page's thread, in their own wasm (see `worker`).

fn main() {
    locklab_frontend::worker::register();
}
