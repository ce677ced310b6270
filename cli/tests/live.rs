//! Live mode end to end, on the real servers `scripts/setup.sh` installs:
//! every built-in that live mode can play, under every strategy it plays,
//! must come out with the simulated twin's verdict (safety, liveness and the
//! kinds of its findings); and what cannot be played, or is interrupted, is
//! refused or stopped with a message, leaving no process behind.

use locklab_engine::report::{self, StrategyReport};
use locklab_engine::scenario::StrategyId;
use locklab_engine::{LogDocument, Scenario, builtin};
use std::path::PathBuf;
use std::process::Command;

/// The wall clock runs this many scenario ms per ms: a 20-minute night in 20 s
/// (slower where live mode must be to stay faithful: `coordinator::fastest_time_scale`).
const TIME_SCALE: u32 = 60;
/// How many live runs go at once: each is mostly waiting, and two keep the suite short.
const AT_ONCE: usize = 2;

fn program() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_locklab"))
}

/// A verdict as the comparison reads it.
fn verdict(report: &StrategyReport) -> (String, String, Vec<&'static str>) {
    let mut kinds: Vec<&'static str> = report.findings.iter().map(|finding| finding.kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    (report.safety.name().to_owned(), report.liveness.name().to_owned(), kinds)
}

/// Plays one case live and compares it with its simulated twin: the same
/// verdict, or the same up to a named race (its reason returned).
fn check(name: &str, scenario: &Scenario, strategy: StrategyId) -> Result<Option<&'static str>, String> {
    let time_scale = locklab_live::coordinator::fastest_time_scale(scenario, strategy, TIME_SCALE);
    let options = locklab_live::LiveOptions {
        scenario: scenario.clone(),
        strategy,
        time_scale,
        program: program(),
        servers: locklab_live::ServerUrls::default(),
    };
    let live = locklab_live::run(options)?;
    // The recorded document reads back as the log it was written from, marked live.
    let text = locklab_engine::recorded_log_document(scenario, strategy, &live.log, Some(&live.recording));
    let document = LogDocument::from_json(&text)?;
    if document.events != live.log || document.live.as_ref() != Some(&live.recording) {
        return Err("the recorded document does not read back as the run".to_owned());
    }
    let live_report = report::analyze(scenario, strategy, &document.events);
    let simulated = locklab_engine::simulate_whole(scenario, strategy)?;
    let twin = report::analyze(scenario, strategy, &simulated);
    match locklab_live::agreement(scenario, strategy, &live_report, &twin) {
        locklab_live::Agreement::Same => Ok(None),
        // A race the machine may order either way, named with its reason in `locklab_live::RACES`.
        locklab_live::Agreement::SameUpToRace(race) => Ok(Some(race)),
        locklab_live::Agreement::Different => Err(format!(
            "live {:?}\n    simulated {:?}\n    rerun: cargo run --bin locklab -- live {name} --strategy {strategy} --compare",
            verdict(&live_report),
            verdict(&twin)
        )),
    }
}

#[test]
fn every_playable_builtin_gives_its_simulated_verdict_live() {
    let mut cases = Vec::new();
    for builtin in builtin::ALL {
        let scenario = Scenario::from_json(builtin.text).expect("built-ins are valid");
        for settings in scenario.strategy_settings() {
            let strategy = settings.id();
            if locklab_live::coordinator::unsupported(&scenario, strategy).is_empty() {
                cases.push((builtin.name, scenario.clone(), strategy));
            }
        }
    }
    assert!(cases.len() >= 20, "live mode plays most built-ins: {} cases", cases.len());
    let mut failures = Vec::new();
    for batch in cases.chunks(AT_ONCE) {
        let results: Vec<(String, Result<Option<&'static str>, String>)> = std::thread::scope(|scope| {
            let running: Vec<_> = batch
                .iter()
                .map(|(name, scenario, strategy)| {
                    scope.spawn(move || (format!("{name} / {strategy}"), check(name, scenario, *strategy)))
                })
                .collect();
            running.into_iter().map(|handle| handle.join().expect("a live run does not panic")).collect()
        });
        for (case, result) in results {
            match result {
                Ok(None) => {}
                Ok(Some(race)) => println!("{case}: the same verdict up to the machine: {race}"),
                Err(problem) => failures.push(format!("{case}: {problem}")),
            }
        }
    }
    assert!(failures.is_empty(), "live verdicts differ from the simulated ones:\n{}", failures.join("\n"));
}

/// Faults no built-in strikes, each in a fixture under `tests/live/`, with the strategy it matters to.
const FIXTURES: &[(&str, StrategyId)] = &[
    ("slow-database.json", StrategyId::DbLock),
    ("consensus-leader-loss.json", StrategyId::Consensus),
    ("redis-clock-drift.json", StrategyId::Naive),
];

#[test]
fn the_fixtures_give_their_simulated_verdicts_live() {
    let results: Vec<String> = std::thread::scope(|scope| {
        let running: Vec<_> = FIXTURES
            .iter()
            .map(|(file, strategy)| {
                scope.spawn(move || {
                    let path = format!("{}/tests/live/{file}", env!("CARGO_MANIFEST_DIR"));
                    let text = std::fs::read_to_string(&path).expect("the fixture reads");
                    let scenario = Scenario::from_json(&text).expect("the fixture is a valid scenario");
                    match check(&path, &scenario, *strategy) {
                        Ok(None) => String::new(),
                        other => format!("{path} / {strategy}: {other:?}"),
                    }
                })
            })
            .collect();
        running.into_iter().map(|handle| handle.join().expect("a live run does not panic")).collect()
    });
    let failures: Vec<&String> = results.iter().filter(|result| !result.is_empty()).collect();
    assert!(failures.is_empty(), "live verdicts differ from the simulated ones: {failures:?}");
}

#[test]
fn what_live_mode_cannot_play_is_refused_by_name() {
    // The database's clock: live mode reaches an instance's and a Redis node's, no other.
    let path = std::env::temp_dir().join(format!("locklab-live-refused-{}.json", std::process::id()));
    let document = r#"{"format": "locklab/2", "seed": 1, "duration_ms": 60000,
        "faults": [{"at_ms": 5000, "kind": "clock_jump", "target": "db", "by_ms": 60000}]}"#;
    std::fs::write(&path, document).expect("the temp dir is writable");
    let output = Command::new(program())
        .args(["live", &path.to_string_lossy(), "--strategy", "fencing"])
        .output()
        .expect("the binary runs");
    let _ = std::fs::remove_file(&path);
    assert_eq!(output.status.code(), Some(2));
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(text.contains("the `clock_jump` fault on db at t=5"), "{text}");
    assert!(text.contains("no other server's clock is reachable"), "{text}");
}

#[test]
fn a_missing_server_program_is_named() {
    // A PATH without redis-server: the coordinator says what is missing and where it comes from.
    let output = Command::new(program())
        .args(["live", "calm-night", "--strategy", "fencing"])
        .env("PATH", "/nonexistent")
        .output()
        .expect("the binary runs");
    assert_eq!(output.status.code(), Some(2));
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(text.contains("`redis-server` is not installed") && text.contains("scripts/setup.sh"), "{text}");
}

/// The pids of `parent`'s children.
fn children_of(parent: u32) -> Vec<String> {
    let output = Command::new("ps").args(["-eo", "pid=,ppid="]).output().expect("ps runs");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let (pid, ppid) = (words.next()?, words.next()?);
            (ppid == parent.to_string()).then(|| pid.to_owned())
        })
        .collect()
}

fn alive(pid: &str) -> bool {
    Command::new("kill")
        .args(["-0", pid])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

#[test]
fn ctrl_c_mid_run_stops_everything_it_started() {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(program())
        .args(["live", "calm-night", "--strategy", "redlock", "--time-scale", "10"])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("the binary runs");
    // Wait until the run is under way: five Redis nodes, PostgreSQL and three instances.
    let started = std::time::Instant::now();
    let mut children = children_of(child.id());
    while children.len() < 9 {
        assert!(started.elapsed().as_secs() < 60, "the live run never got under way: {children:?}");
        std::thread::yield_now();
        children = children_of(child.id());
    }
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill runs");
    let status = child.wait().expect("the run ends");
    assert_eq!(status.code(), Some(2));
    let stderr = child.stderr.take().map(BufReader::new).expect("stderr is piped");
    let text: Vec<String> = stderr.lines().map_while(Result::ok).collect();
    assert!(text.iter().any(|line| line.contains("interrupted")), "{text:?}");
    let left: Vec<&String> = children.iter().filter(|pid| alive(pid)).collect();
    assert!(left.is_empty(), "processes left behind: {left:?}");
    let mark = format!("-{}-", child.id());
    let dirs: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .expect("the temp dir lists")
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().contains(&mark))
        .collect();
    assert!(dirs.is_empty(), "server directories left: {dirs:?}");
}

/// Runs `locklab live` with `args`; its exit code and everything it wrote.
fn live_command(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(program()).arg("live").args(args).output().expect("the binary runs");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code(), text)
}

#[test]
fn on_servers_you_run_it_touches_only_what_it_creates() {
    use locklab_conformance::server::{EtcdServer, PgServer, RedisServer};
    // "Your" servers, each holding something of yours the run must leave alone.
    let redis = RedisServer::start().expect("redis-server starts");
    let postgres = PgServer::start(&[]).expect("PostgreSQL starts");
    let etcd = EtcdServer::start().expect("etcd starts");
    let mut redis_client = redis.connect().expect("Redis answers");
    redis_client.call(&["SET", "yours", "1"]).expect("SET");
    let mut admin = locklab_conformance::pg::PgConnection::open(postgres.port, "postgres")
        .expect("PostgreSQL answers")
        .expect("trusted");
    admin.query("CREATE TABLE mine (id int)").expect("CREATE TABLE");
    let (redis_url, postgres_url, etcd_url) = (
        format!("redis://127.0.0.1:{}", redis.port),
        format!("postgres://postgres@127.0.0.1:{}/postgres", postgres.port),
        format!("http://127.0.0.1:{}", etcd.port()),
    );
    let night = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/live/short-night.json");
    for (strategy, extra) in
        [("fencing", ["--redis", redis_url.as_str()]), ("consensus", ["--etcd", etcd_url.as_str()])]
    {
        let mut args = vec![night, "--strategy", strategy, "--postgres", &postgres_url, "--compare"];
        args.extend(extra);
        let (code, text) = live_command(&args);
        assert_eq!(code, Some(0), "{text}");
        assert!(text.contains("(yours)") && text.contains("the same verdict"), "{text}");
    }
    // What the runs created is gone; what was there stays.
    let keys = redis_client.call(&["KEYS", "*"]).expect("KEYS");
    assert_eq!(keys, "[\"yours\"]", "Redis keeps only the user's key");
    let schemas = admin.query("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'locklab_live_%'").expect("query");
    assert_eq!(schemas.first_value(), Some("0"), "the run's schema is dropped");
    let mine = admin.query("SELECT count(*) FROM pg_tables WHERE tablename = 'mine'").expect("query");
    assert_eq!(mine.first_value(), Some("1"), "the user's table stays");
    let mut etcd_client = locklab_conformance::etcd::EtcdClient::new(etcd.port());
    let range = serde_json::json!({"key": locklab_conformance::etcd::encode(locklab_engine::event::LEASE_KEY)});
    let left = etcd_client.post("/v3/kv/range", &range, std::time::Duration::from_secs(2)).expect("etcd answers");
    assert!(left.get("kvs").is_none(), "the lease key is gone: {left}");

    // A key the run would use is the user's: refused, and left as it was.
    redis_client.call(&["SET", locklab_engine::event::LOCK_KEY, "theirs"]).expect("SET");
    let (code, text) = live_command(&[night, "--strategy", "fencing", "--redis", &redis_url]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("already has `job:daily-report`"), "{text}");
    let kept = redis_client.call(&["GET", locklab_engine::event::LOCK_KEY]).expect("GET");
    assert_eq!(kept, "\"theirs\"");
    // A URL nothing answers at, and a port in use by another server, are named.
    let free = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let closed = format!("redis://127.0.0.1:{}", free.local_addr().expect("an address").port());
    drop(free);
    let (code, text) = live_command(&[night, "--strategy", "fencing", "--redis", &closed]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains(&format!("nothing answers at {closed}")), "{text}");
    let not_redis = format!("redis://127.0.0.1:{}", postgres.port);
    let (code, text) = live_command(&[night, "--strategy", "fencing", "--redis", &not_redis]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains(&format!("the port of {not_redis} is in use by something that is not Redis")), "{text}");
    // A fault that needs a server of live mode's own is refused on the user's.
    let (code, text) = live_command(&["redis-failover", "--strategy", "fencing", "--redis", &redis_url]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("the `redis_failover` fault at t=500 ms")
            && text.contains("needs a server live mode starts itself"),
        "{text}"
    );
}
