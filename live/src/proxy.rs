//! The network between an instance and a server: a loopback TCP proxy per
//! (instance, server) pair, through which the instance's every connection to
//! that server goes. Left alone it forwards bytes as they come. The
//! coordinator gives it rules, in the scenario's time:
//!
//! - **delay**: bytes read while the rule holds are forwarded `extra_ms`
//!   later, and, as on a TCP stream, nothing read after them overtakes them
//!   (a FIN after delayed bytes is delayed with them);
//! - **drop**: bytes read while the rule holds are lost (a partition); a
//!   client's timeout then ends its connection, as it would;
//! - **silence**: the instance's host is gone: nothing more goes either way
//!   on its connections and no FIN is sent to the server, ever, not even
//!   when the host comes back and the lost process's sockets are closed; the
//!   server-side connection is closed when the server's TCP keepalive would
//!   give up on it. A host that comes back opens new connections, which pass.
//!
//! A proxy can also be repointed to another server: a failover, where the
//! clients' way to "the primary" leads to the promoted replica from then on
//! (connections already open stay where they were, as they do when a
//! Sentinel-aware client reconnects).

use crate::ScaledClock;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Which way bytes go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    /// From the instance to the server.
    Out,
    /// From the server back to the instance.
    Back,
}

/// What happens to bytes read while a rule holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Effect {
    Delay { extra_ms: u64 },
    Drop,
}

/// A rule: bytes going `direction` from `from_ms` until `until_ms` meet `effect`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rule {
    pub(crate) direction: Direction,
    pub(crate) from_ms: u64,
    pub(crate) until_ms: u64,
    pub(crate) effect: Effect,
}

#[derive(Debug, Default)]
struct State {
    rules: Vec<Rule>,
    /// Whether the instance's host is gone.
    silent: bool,
    /// Each open connection's server-side end, to close when keepalive gives
    /// up, and its flag: set, the connection belonged to a lost host, and
    /// nothing passes on it any more.
    connections: Vec<(TcpStream, Arc<AtomicBool>)>,
    /// The server died: bytes it had sent that are still held are lost with it.
    severed: bool,
}

/// One proxy: its port, and the rules it applies.
#[derive(Clone, Debug)]
pub(crate) struct Proxy {
    pub(crate) port: u16,
    clock: ScaledClock,
    state: Arc<Mutex<State>>,
    /// The server's port, read at each new connection.
    upstream: Arc<Mutex<SocketAddr>>,
}

impl Proxy {
    /// A proxy to the server on `upstream`, listening on a free loopback port.
    pub(crate) fn start(upstream: SocketAddr, clock: ScaledClock) -> Result<Proxy, String> {
        let listener =
            TcpListener::bind("127.0.0.1:0").map_err(|error| format!("cannot open a proxy port: {error}"))?;
        let port = listener.local_addr().map_err(|error| error.to_string())?.port();
        let upstream = Arc::new(Mutex::new(upstream));
        let proxy =
            Proxy { port, clock, state: Arc::new(Mutex::new(State::default())), upstream: Arc::clone(&upstream) };
        let state = Arc::clone(&proxy.state);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let state = Arc::clone(&state);
                let Ok(upstream) = upstream.lock().map(|upstream| *upstream) else { continue };
                std::thread::spawn(move || connect(client, upstream, clock, &state));
            }
        });
        Ok(proxy)
    }

    pub(crate) fn add(&self, rule: Rule) {
        if let Ok(mut state) = self.state.lock() {
            state.rules.push(rule);
        }
    }

    /// The instance's host is gone: nothing passes any more, no FIN goes
    /// out, and the server's side of each connection is closed at
    /// `close_at_ms`, when the server's TCP keepalive gives up on it.
    pub(crate) fn silence(&self, close_at_ms: u64) {
        let servers: Vec<TcpStream> = match self.state.lock() {
            Ok(mut state) => {
                state.silent = true;
                std::mem::take(&mut state.connections)
                    .into_iter()
                    .map(|(server, lost)| {
                        lost.store(true, Ordering::SeqCst);
                        server
                    })
                    .collect()
            }
            Err(_) => return,
        };
        let clock = self.clock;
        std::thread::spawn(move || {
            wait_until(clock, close_at_ms);
            for server in servers {
                let _ = server.shutdown(Shutdown::Both);
            }
        });
    }

    /// The server died: what the proxy still holds of its bytes is lost,
    /// as the unsent part of a dead process's output buffer is. A delay on
    /// a replica's link stands for the primary's replication lag, so what
    /// the link holds had not left the primary yet.
    pub(crate) fn sever(&self) {
        if let Ok(mut state) = self.state.lock() {
            state.severed = true;
        }
    }

    /// New connections go to the server on `upstream` from now on.
    pub(crate) fn repoint(&self, upstream: SocketAddr) {
        if let Ok(mut current) = self.upstream.lock() {
            *current = upstream;
        }
    }

    /// A restarted instance's host is back: its new connections pass again.
    /// The lost host's connections stay silent: its sockets closing now
    /// send nothing, as a machine that vanished sends nothing.
    pub(crate) fn restore(&self) {
        if let Ok(mut state) = self.state.lock() {
            state.silent = false;
        }
    }
}

/// A server's address on this machine's loopback interface.
pub(crate) fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, port))
}

/// Sleeps until the scenario's clock reads `due_ms`.
fn wait_until(clock: ScaledClock, due_ms: u64) {
    loop {
        let now = u64::try_from(clock.now_ms()).unwrap_or(0);
        if now >= due_ms {
            return;
        }
        // Pacing to a deadline on the wall clock, in steps short enough to stay on time.
        std::thread::sleep(clock.real(due_ms - now).min(Duration::from_millis(20)));
    }
}

/// Joins an accepted connection to a new one to the server, a pump each way.
fn connect(client: TcpStream, upstream: SocketAddr, clock: ScaledClock, state: &Arc<Mutex<State>>) {
    let Ok(server) = TcpStream::connect(upstream) else { return };
    let _ = (client.set_nodelay(true), server.set_nodelay(true));
    let (Ok(client_reader), Ok(server_reader), Ok(kept)) = (client.try_clone(), server.try_clone(), server.try_clone())
    else {
        return;
    };
    let lost = Arc::new(AtomicBool::new(false));
    match state.lock() {
        Ok(mut state) if !state.silent => state.connections.push((kept, Arc::clone(&lost))),
        Ok(_) | Err(_) => return,
    }
    let (out_state, out_lost) = (Arc::clone(state), Arc::clone(&lost));
    std::thread::spawn(move || pump(client_reader, server, Direction::Out, clock, &out_state, &out_lost));
    pump(server_reader, client, Direction::Back, clock, state, &lost);
}

/// Bytes to write, and when.
enum Piece {
    Bytes {
        due_ms: u64,
        bytes: Vec<u8>,
    },
    /// The reading side ended: shut the writing side, after what came before.
    End {
        due_ms: u64,
    },
}

/// What the rules make of bytes read now on a connection (`lost`: its host
/// is gone): `None` to drop them, else their extra delay.
fn effect_now(state: &Mutex<State>, lost: &AtomicBool, direction: Direction, now: u64) -> Option<u64> {
    if lost.load(Ordering::SeqCst) {
        return None;
    }
    let Ok(state) = state.lock() else { return Some(0) };
    let mut extra_ms = 0;
    for rule in
        state.rules.iter().filter(|rule| rule.direction == direction && rule.from_ms <= now && now < rule.until_ms)
    {
        match rule.effect {
            Effect::Drop => return None,
            Effect::Delay { extra_ms: extra } => extra_ms = extra_ms.max(extra),
        }
    }
    Some(extra_ms)
}

/// Reads from `from`, applies the rules, and hands what passes to a writer
/// thread that writes it to `to` at its due time, in order.
fn pump(
    mut from: TcpStream,
    to: TcpStream,
    direction: Direction,
    clock: ScaledClock,
    state: &Arc<Mutex<State>>,
    lost: &AtomicBool,
) {
    let (pieces, inbox) = channel::<Piece>();
    // Bytes due now, with nothing held back before them, are written from
    // here: the hand-off to the writer thread would add its own latency to
    // every round trip (scaled, it is the network's).
    let Ok(mut direct) = to.try_clone() else { return };
    let held = Arc::new(AtomicUsize::new(0));
    let writer_held = Arc::clone(&held);
    let writer_state = Arc::clone(state);
    let writer = std::thread::spawn(move || write_in_order(to, &inbox, clock, &writer_held, &writer_state));
    let mut last_due_ms = 0;
    let mut buffer = [0_u8; 16 * 1024];
    loop {
        let read = from.read(&mut buffer);
        let now = u64::try_from(clock.now_ms()).unwrap_or(0);
        let Some(extra_ms) = effect_now(state, lost, direction, now) else {
            // Lost (a partition), or the host is gone: nothing passes, not even a FIN.
            if matches!(read, Ok(0) | Err(_)) {
                break;
            }
            continue;
        };
        let due_ms = (now + extra_ms).max(last_due_ms);
        last_due_ms = due_ms;
        if let Ok(count @ 1..) = read
            && due_ms <= now
            && held.load(Ordering::SeqCst) == 0
        {
            if direct.write_all(&buffer[..count]).is_err() {
                break;
            }
            continue;
        }
        held.fetch_add(1, Ordering::SeqCst);
        let piece = match read {
            Ok(0) | Err(_) => Piece::End { due_ms },
            Ok(count) => Piece::Bytes { due_ms, bytes: buffer[..count].to_vec() },
        };
        let end = matches!(piece, Piece::End { .. });
        if pieces.send(piece).is_err() || end {
            break;
        }
    }
    drop(pieces);
    let _ = writer.join();
}

/// Writes each piece at its due time, in the order they came.
fn write_in_order(
    mut to: TcpStream,
    inbox: &Receiver<Piece>,
    clock: ScaledClock,
    held: &AtomicUsize,
    state: &Mutex<State>,
) {
    for piece in inbox {
        match piece {
            Piece::Bytes { due_ms, bytes } => {
                wait_until(clock, due_ms);
                if state.lock().map_or(true, |state| state.severed) {
                    let _ = to.shutdown(Shutdown::Both);
                    return;
                }
                let written = to.write_all(&bytes);
                held.fetch_sub(1, Ordering::SeqCst);
                if written.is_err() {
                    return;
                }
            }
            Piece::End { due_ms } => {
                wait_until(clock, due_ms);
                let _ = to.shutdown(Shutdown::Write);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::ErrorKind;

    /// A proxy to a listener of the test's, and the server's end of a first connection through it.
    fn proxied() -> (Proxy, TcpListener, ScaledClock) {
        let server = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let address = server.local_addr().expect("an address");
        let clock = ScaledClock { start_unix_us: crate::unix_us(), time_scale: 1 };
        (Proxy::start(address, clock).expect("the proxy starts"), server, clock)
    }

    #[test]
    fn a_lost_host_sends_no_fin_even_after_it_comes_back_and_its_sockets_close() {
        let (proxy, server, clock) = proxied();
        let mut client = TcpStream::connect(loopback(proxy.port)).expect("connects");
        let (mut accepted, _) = server.accept().expect("the proxy connects on");
        // Bytes pass while the host is there.
        client.write_all(b"x").expect("writes");
        let mut byte = [0_u8; 1];
        accepted.read_exact(&mut byte).expect("the byte passes");
        // The host is lost (its keepalive far off), comes back, and the lost process's socket closes.
        let far_ms = u64::try_from(clock.now_ms()).unwrap_or(0) + 3_600_000;
        proxy.silence(far_ms);
        proxy.restore();
        drop(client);
        // A new connection from the host that came back passes.
        let mut again = TcpStream::connect(loopback(proxy.port)).expect("connects again");
        let (mut second, _) = server.accept().expect("the proxy connects on again");
        again.write_all(b"y").expect("writes");
        second.read_exact(&mut byte).expect("the new connection's byte passes");
        assert_eq!(&byte, b"y");
        // The old connection got no FIN: a read finds nothing, not an end
        // (a bounded wait: what is checked is that nothing comes).
        accepted.set_read_timeout(Some(Duration::from_millis(200))).expect("a read timeout");
        match accepted.read(&mut byte) {
            Err(error) => assert!(matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut), "{error}"),
            Ok(read) => panic!("the server's side saw {read} bytes or an end from a lost host"),
        }
    }

    #[test]
    fn a_lost_hosts_connections_are_closed_when_keepalive_gives_up() {
        let (proxy, server, clock) = proxied();
        let _client = TcpStream::connect(loopback(proxy.port)).expect("connects");
        let (mut accepted, _) = server.accept().expect("the proxy connects on");
        proxy.silence(u64::try_from(clock.now_ms()).unwrap_or(0) + 50);
        let mut byte = [0_u8; 1];
        assert_eq!(accepted.read(&mut byte).expect("the server's side ends"), 0, "an end, when keepalive gives up");
    }
}
