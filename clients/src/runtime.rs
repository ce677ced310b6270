//! The tokio runtime each client owns. The client libraries are async; live
//! mode is threads, so each client blocks its caller on its own runtime. One
//! worker thread runs the connection's background task (redis-rs's driver,
//! tokio-postgres's connection, tonic's channel) all the time, not only
//! while a call waits: that is how a client sees at once that a server
//! closed the connection, or ended an idle session, between two calls.

use std::future::Future;
use std::time::Duration;
use tokio::runtime::Runtime;

/// A runtime for one client: one worker thread, network and timers.
pub(crate) fn build() -> std::io::Result<Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("locklab-client")
        .enable_io()
        .enable_time()
        .build()
}

/// `future`'s output, or `None` when it takes longer than `limit`.
pub(crate) async fn within<T>(limit: Duration, future: impl Future<Output = T>) -> Option<T> {
    tokio::time::timeout(limit, future).await.ok()
}
