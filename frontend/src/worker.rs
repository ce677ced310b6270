//! The lab's Web Worker: placeholder until the worker is built.

/// Registers the worker with gloo-worker.
pub fn register() {}
