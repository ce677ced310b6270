//! The conformance suite: the engine's models of the servers the lab
//! teaches about, checked against the real servers. Each check is a short
//! scripted exchange run twice, through the engine's own code and against a
//! throwaway server this program starts on a loopback port (and stops, also
//! when a check fails); the replies are compared in order, and timing where
//! timing is the point. It writes `docs/conformance.md` and exits 1 if a
//! behaviour differs without a recorded reason, 2 if a server cannot start.
//!
//! `cargo run -p locklab-conformance` (`scripts/test.sh` runs it). Run as
//! `locklab-conformance postgres-client PORT` it is instead one of the
//! suite's PostgreSQL clients that live in a process of their own
//! ([`pg::serve`]), so that a check can kill or stop it.

mod consensus;
mod postgres;
mod redis;

use locklab_conformance::{pg, resp, server};

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::process::ExitCode;

/// Whether the engine and the server agreed.
#[derive(Clone, PartialEq, Eq)]
enum Outcome {
    Same,
    Different,
    /// A difference the lab keeps on purpose, with the reason.
    Expected(String),
    /// The server's side could not be run as the engine's was, with why
    /// and what backs the engine instead: neither the same nor different.
    Unchecked(String),
}

/// One exchange of the Redis or the consensus suite: what the lab relies
/// on, and the steps (of that suite's kind) that show it.
struct Exchange<Step> {
    name: &'static str,
    relies: &'static str,
    steps: Vec<Step>,
}

impl<Step> Exchange<Step> {
    /// An exchange with no steps would come out the same on both sides
    /// while checking nothing.
    fn assert_has_steps(&self) {
        assert!(!self.steps.is_empty(), "the exchange {:?} has no steps, so it would check nothing", self.name);
    }
}

/// A value unique to a client, as the lab's runs write it (`a:0001`).
fn owner(client: u8) -> locklab_engine::event::Owner {
    locklab_engine::event::Owner { instance: locklab_engine::ids::InstanceId(client), nonce: 1 }
}

/// One checked behaviour, for the report.
struct Row {
    name: String,
    relies: String,
    engine: String,
    server: String,
    outcome: Outcome,
}

/// What the suite does not check yet, and why: said in the document, so
/// nobody reads the checked list as the whole of what the lab models.
const NOT_YET: [(&str, &str); 2] = [
    (
        "Redis: the last millisecond of a TTL",
        "a network round trip is longer than a millisecond, so no exchange can pin it; the engine follows Redis's source (`expireIfNeeded`: a key whose expiry is `when` is still there while the clock reads `when`, gone after)",
    ),
    (
        "Redlock's validity arithmetic",
        "it is the client's, not a server's: the engine's Redlock strategy takes TTL − elapsed − (TTL × drift_factor + 2 ms) as the Redis page does, and no reference client is run beside it",
    ),
];

fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    match arguments.as_slice() {
        [] => {}
        [command, port] if command == pg::CLIENT_COMMAND => return pg::serve(port),
        _ => {
            eprintln!("usage: locklab-conformance (no arguments; it starts its own servers)");
            return ExitCode::from(2);
        }
    }
    let mut versions = Vec::new();
    let mut rows = Vec::new();
    for check in [redis::check, postgres::check, consensus::check] {
        match check() {
            Ok((version, checked)) => {
                versions.push(version);
                rows.extend(checked);
            }
            Err(problem) => {
                eprintln!("conformance: {problem}");
                return ExitCode::from(2);
            }
        }
    }
    let document = document(&versions, &rows);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/conformance.md");
    if let Err(error) = std::fs::write(&path, document) {
        eprintln!("conformance: cannot write {}: {error}", path.display());
        return ExitCode::from(2);
    }
    let different: Vec<&Row> = rows.iter().filter(|row| row.outcome == Outcome::Different).collect();
    let expected = rows.iter().filter(|row| matches!(row.outcome, Outcome::Expected(_))).count();
    let unchecked = rows.iter().filter(|row| matches!(row.outcome, Outcome::Unchecked(_))).count();
    let checked = rows.len() - unchecked;
    println!(
        "conformance: {checked} behaviours checked against real servers, {} the same, {expected} different as recorded, {} different; {unchecked} run on the engine only, the server's side not possible; docs/conformance.md written",
        checked - different.len() - expected,
        different.len()
    );
    for row in &different {
        println!(
            "different: {}\n  engine:\n    {}\n  server:\n    {}",
            row.name,
            row.engine.replace('\n', "\n    "),
            row.server.replace('\n', "\n    ")
        );
    }
    if different.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

/// The document's opening: what it shows, and how the suite runs each
/// server's exchanges and steps a server's clock. Its numbers are the
/// suite's own settings, so the text cannot drift from what was run.
fn introduction() -> String {
    format!(
        "# The engine against the real servers\n\n\
     Generated by `cargo run -p locklab-conformance` (`conformance/`, run by\n\
     `scripts/test.sh`); do not edit. Each behaviour below is a short exchange\n\
     run through the engine's own Redis, PostgreSQL and etcd models\n\
     (`engine/src/sim/probe.rs` drives the code the simulation runs) and\n\
     against a throwaway server started on a loopback port; the replies are\n\
     compared in order, and the time to an answer where timing is the point.\n\n\
     How the PostgreSQL exchanges are run: the suite makes a cluster with\n\
     `initdb` in a temporary directory and runs it as the `postgres` user\n\
     (PostgreSQL refuses root) with `max_connections = {max_connections}` and\n\
     `superuser_reserved_connections = 0`, so that every slot is open to the\n\
     lab's clients as `db_max_connections` counts them (a real server keeps 3\n\
     for superusers by default, and an application meets \"remaining connection\n\
     slots are reserved\" that much sooner). A client that is killed or stopped\n\
     is a process of its own (`locklab-conformance postgres-client`) sent\n\
     SIGKILL or SIGSTOP. After each step the suite waits until every client\n\
     still owed an answer has it or waits on a lock another session holds\n\
     (`pg_stat_activity`, `pg_blocking_pids`); the engine's world runs on for\n\
     {settle_ms} ms of simulated time. Where a time is compared, the server's must be\n\
     within {timing_tolerance_ms} ms of the engine's.\n\n\
     How the etcd exchanges are run: the suite starts etcd on loopback ports\n\
     with a temporary data directory, one member ({single_election_ms} ms election timeout)\n\
     for the revisions and the clock step, three ({election_s} s election timeout) where\n\
     the leader is killed, and speaks to it through its JSON gateway as live\n\
     mode does (a lease grant and a create-if-absent transaction, keep-alive,\n\
     revoke). A request sent while the cluster has no leader is given the\n\
     lab client's {client_timeout_s} s. A lease's end on the server must come within {lease_tolerance_ms} ms\n\
     after the engine's (etcd's lessor looks for expired leases every 500 ms).\n\
     The engine's new leader gives a lease exactly its TTL and etcd's adds\n\
     one election timeout, and etcd answers a time-to-live in whole seconds,\n\
     cut down: after a leader change, \"its whole TTL again\" is any answer\n\
     within a second of the TTL.\n\n\
     How a real server's clock is stepped: Debian's libfaketime does not\n\
     start Debian's redis-server, so the suite preloads its own shim\n\
     (`conformance/clock-shim.c`), which moves every wall-clock reading of the\n\
     server (`CLOCK_REALTIME`, `gettimeofday`, `time`) by an offset the suite\n\
     writes to a file; the monotonic clock is left alone, as a stepped wall\n\
     clock leaves it. It does not reach etcd, a Go program (see that check).\n\n",
        max_connections = postgres::MAX_CONNECTIONS,
        settle_ms = postgres::SETTLE_MS,
        timing_tolerance_ms = postgres::TIMING_TOLERANCE_MS,
        single_election_ms = consensus::SINGLE_ELECTION_TIMEOUT_MS,
        election_s = consensus::ELECTION_TIMEOUT_MS / 1_000,
        client_timeout_s = consensus::CLIENT_TIMEOUT.as_secs(),
        lease_tolerance_ms = consensus::LEASE_TOLERANCE_MS,
    )
}

/// The generated document: never edited by hand.
fn document(versions: &[String], rows: &[Row]) -> String {
    assert_names_distinct(rows);
    let mut text = introduction();
    text.push_str("Servers:\n\n");
    for version in versions {
        let _ = writeln!(text, "- {version}");
    }
    write_summary(&mut text, rows);
    for row in rows {
        write_behaviour(&mut text, row);
    }
    text.push_str("## Not checked yet\n\n");
    for (what, why) in NOT_YET {
        let _ = writeln!(text, "- {what}: {why}.");
    }
    text
}

/// Each behaviour is a heading of the document, and a reader finds one by
/// its name, so no two may share a name.
fn assert_names_distinct(rows: &[Row]) {
    let mut seen = BTreeSet::new();
    for row in rows {
        assert!(seen.insert(row.name.as_str()), "two behaviours are named {:?}", row.name);
    }
}

/// The checked section's heading: how many behaviours were the same, and
/// which could be run on the engine only.
fn write_summary(text: &mut String, rows: &[Row]) {
    let same = rows.iter().filter(|row| row.outcome == Outcome::Same).count();
    let checked = rows.iter().filter(|row| !matches!(row.outcome, Outcome::Unchecked(_))).count();
    let _ = writeln!(text, "\n## Checked: {same} of {checked} the same\n");
    let unchecked: Vec<&str> =
        rows.iter().filter(|row| matches!(row.outcome, Outcome::Unchecked(_))).map(|row| row.name.as_str()).collect();
    if !unchecked.is_empty() {
        let _ = writeln!(
            text,
            "Run on the engine only, since the server's side could not be done (each says why, and what backs the engine instead): {}.\n",
            unchecked.join("; ")
        );
    }
}

/// One behaviour's section: its verdict, what the lab relies on, both
/// sides' transcripts, and the reason for a recorded difference.
fn write_behaviour(text: &mut String, row: &Row) {
    let verdict = match &row.outcome {
        Outcome::Same => "the same",
        Outcome::Different => "DIFFERENT",
        Outcome::Expected(_) => "different, as recorded",
        Outcome::Unchecked(_) => "not checked on the server",
    };
    let _ = write!(
        text,
        "### {}: {verdict}\n\nWhat the lab relies on: {}.\n\nThe engine:\n\n{}\n\nThe server:\n\n{}\n\n",
        row.name,
        row.relies,
        indented(&row.engine),
        indented(&row.server)
    );
    match &row.outcome {
        Outcome::Expected(why) => {
            let _ = write!(text, "Why the lab keeps this difference: {why}.\n\n");
        }
        Outcome::Unchecked(why) => {
            let _ = write!(text, "Why the server's side could not be run: {why}.\n\n");
        }
        Outcome::Same | Outcome::Different => {}
    }
}

fn indented(text: &str) -> String {
    text.lines().map(|line| format!("    {line}")).collect::<Vec<_>>().join("\n")
}
