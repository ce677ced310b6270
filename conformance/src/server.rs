//! Throwaway servers on loopback ports, started by the suite and stopped by
//! it: a server is a child process owned by a guard whose `Drop` kills it, so
//! none is left behind when a check fails or panics. The system's own
//! services are never touched.

use crate::resp::Connection;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a server may take to answer after it is started.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// A free loopback port: the system's choice for a listener, released.
fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|error| format!("no free loopback port: {error}"))?;
    listener.local_addr().map(|address| address.port()).map_err(|error| error.to_string())
}

/// A `redis-server` with no persistence, on its own port and directory, whose
/// wall clock the suite can step (`clock-shim.c`, preloaded).
pub struct RedisServer {
    child: Option<Child>,
    pub port: u16,
    dir: PathBuf,
    /// The clock's offset in ms, kept in a file the shim reads.
    offset_ms: i64,
}

impl RedisServer {
    /// Starts one and waits until it answers `PING`.
    pub fn start() -> Result<RedisServer, String> {
        let port = free_port()?;
        let dir = std::env::temp_dir().join(format!("locklab-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|error| format!("cannot make {}: {error}", dir.display()))?;
        let mut server = RedisServer { child: None, port, dir, offset_ms: 0 };
        server.build_shim()?;
        server.set_offset(0)?;
        server.spawn()?;
        Ok(server)
    }

    /// Compiles the clock shim into the server's directory.
    fn build_shim(&self) -> Result<(), String> {
        let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("clock-shim.c");
        let status = Command::new("cc")
            .args(["-shared", "-fPIC", "-O2", "-o"])
            .arg(self.dir.join("clock-shim.so"))
            .arg(&source)
            .status()
            .map_err(|error| format!("cannot run cc to build the clock shim: {error}"))?;
        if status.success() { Ok(()) } else { Err(format!("cc could not build {} ({status})", source.display())) }
    }

    fn set_offset(&mut self, offset_ms: i64) -> Result<(), String> {
        self.offset_ms = offset_ms;
        std::fs::write(self.dir.join("clock-offset"), offset_ms.to_string())
            .map_err(|error| format!("cannot step the server's clock: {error}"))
    }

    /// Steps the server's wall clock by `by_ms` (forward if positive), as a
    /// `clock_jump` fault steps a node's.
    pub fn step_clock(&mut self, by_ms: i64) -> Result<(), String> {
        self.set_offset(self.offset_ms + by_ms)
    }

    /// Puts the server's clock back to the machine's.
    pub fn reset_clock(&mut self) -> Result<(), String> {
        self.set_offset(0)
    }

    fn spawn(&mut self) -> Result<(), String> {
        let child = Command::new("redis-server")
            .env("LD_PRELOAD", self.dir.join("clock-shim.so"))
            .env("LOCKLAB_CLOCK_OFFSET_FILE", self.dir.join("clock-offset"))
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--daemonize", "no", "--logfile", "", "--dir"])
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| {
                format!("cannot start redis-server ({error}); scripts/setup.sh installs it from Debian's packages")
            })?;
        self.child = Some(child);
        let started = Instant::now();
        loop {
            if let Ok(mut connection) = Connection::open(self.port)
                && connection.call(&["PING"]).is_ok_and(|reply| reply == "PONG")
            {
                return Ok(());
            }
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                return Err(format!("redis-server on port {} exited at start ({status})", self.port));
            }
            if started.elapsed() > START_TIMEOUT {
                return Err(format!("redis-server on port {} did not answer within {START_TIMEOUT:?}", self.port));
            }
            // Polling for the condition: the server answers.
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn connect(&self) -> Result<Connection, String> {
        Connection::open(self.port).map_err(|error| format!("cannot connect to redis-server: {error}"))
    }

    /// Stops the server as a crash would (`SHUTDOWN NOSAVE`: nothing is
    /// written) and starts it again on the same port.
    pub fn restart(&mut self) -> Result<(), String> {
        let mut connection = self.connect()?;
        // The server closes the connection instead of answering.
        let _ = connection.call(&["SHUTDOWN", "NOSAVE"]);
        if let Some(mut child) = self.child.take() {
            child.wait().map_err(|error| format!("redis-server did not stop: {error}"))?;
        }
        self.spawn()
    }

    /// The server's version, from `INFO server`.
    pub fn version(&self) -> String {
        let reply = self.connect().and_then(|mut connection| connection.call(&["INFO", "server"]));
        reply
            .ok()
            .and_then(|info| {
                info.split(['\r', '\n']).find_map(|line| line.strip_prefix("redis_version:").map(str::to_owned))
            })
            .unwrap_or_else(|| "unknown".to_owned())
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
