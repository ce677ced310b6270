//! Live mode end to end, on the real servers `scripts/setup.sh` installs:
//! every built-in that live mode can play, under every strategy it plays,
//! and the fixtures under `tests/live/`, must come out with the simulated
//! twin's verdict (safety, liveness and the kinds of its findings), or be
//! inconclusive — the machine stalled the run beyond its time scale — and
//! then come out so when played again at the slower scale the run names. What
//! cannot be played, or is interrupted or killed, is refused or stopped with
//! a message, leaving no process or folder behind.

use locklab_engine::report::{self, StrategyReport};
use locklab_engine::scenario::StrategyId;
use locklab_engine::{RecordedRun, Scenario, builtin};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Servers of "yours" that ask for passwords and TLS, started as the
/// clients' own tests start them.
#[allow(dead_code, reason = "this file uses the part of the servers it needs")]
#[path = "../../clients/tests/support/mod.rs"]
mod support;

/// How many live runs go at once: a run mostly waits on the wall clock, so
/// several share two cores, each on servers of its own.
const AT_ONCE: usize = 8;
/// How many times a case is played, each at the slower scale the last one
/// named, before an inconclusive case fails: it is never a pass.
const MOST_TRIES: u32 = 4;

/// The matrix and the busy-machine test do not overlap: the spinning
/// processes would stall the matrix's runs, and the matrix would load the
/// machine the test means to keep busy in a known way.
static MACHINE: Mutex<()> = Mutex::new(());

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

/// How one play of a case came out.
#[derive(Debug)]
enum Played {
    /// The twin's verdict, or the same up to a named race (its reason).
    Agrees(Option<&'static str>),
    /// The machine stalled it; what the recording says, and the scale to play it at next.
    Inconclusive { stall: String, slower: u32 },
}

/// Plays one case live at `time_scale` and compares it with its simulated
/// twin: the same verdict, the same up to a named race, or inconclusive; a
/// difference is an error.
fn play(name: &str, scenario: &Scenario, strategy: StrategyId, time_scale: u32) -> Result<Played, String> {
    let options = locklab_live::LiveOptions {
        scenario: scenario.clone(),
        strategy,
        time_scale,
        program: program(),
        servers: locklab_live::ServerUrls::default(),
        progress: None,
    };
    let live = locklab_live::run(options)?;
    // The recorded document reads back, checked, as the log it was written from, marked live.
    let text = locklab_engine::recorded_log_document(scenario, strategy, &live.log, Some(&live.recording));
    let document = RecordedRun::from_json(&text).map_err(|error| format!("the recording is refused: {error}"))?;
    if document.events != live.log || document.live.as_ref() != Some(&live.recording) {
        return Err("the recorded document does not read back as the run".to_owned());
    }
    let live_report = report::analyze(scenario, strategy, &document.events);
    let simulated = locklab_engine::simulate_whole(scenario, strategy)?;
    let twin = report::analyze(scenario, strategy, &simulated);
    match locklab_live::recorded_agreement(scenario, strategy, &live_report, &twin, Some(&live.recording)) {
        locklab_live::Agreement::Same => Ok(Played::Agrees(None)),
        // A race the machine may order either way, named with its reason in `locklab_live::RACES`.
        locklab_live::Agreement::SameUpToRace(race) => Ok(Played::Agrees(Some(race))),
        locklab_live::Agreement::Inconclusive => Ok(Played::Inconclusive {
            stall: live.recording.stall_sentence().unwrap_or_default(),
            slower: live.recording.faithful_time_scale.unwrap_or((time_scale / 2).max(1)),
        }),
        locklab_live::Agreement::Different => Err(format!(
            "live {:?}\n    simulated {:?}\n    (longest lag {} µs, {} allowed)\n    {}\n    rerun: cargo run --bin locklab -- live {name} --strategy {strategy} --compare --time-scale {time_scale}",
            verdict(&live_report),
            verdict(&twin),
            live.recording.longest_lag_us,
            live.recording.allowed_lag_us,
            keep_recording(name, strategy, &text),
        )),
    }
}

/// Keeps the recording of a case that differed from its twin, for the
/// reader to look at (a race is rare, and a rerun may not show it again):
/// where it is, and the command that prints it.
fn keep_recording(name: &str, strategy: StrategyId, text: &str) -> String {
    let folder = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("live-differences");
    let base = name.rsplit('/').next().unwrap_or(name).trim_end_matches(".json");
    let path = folder.join(format!("{base}-{strategy}-{}.json", std::process::id()));
    match std::fs::create_dir_all(&folder).and_then(|()| std::fs::write(&path, text)) {
        Ok(()) => format!("the live run: cargo run --bin locklab -- recorded {}", path.display()),
        Err(error) => format!("the live run could not be kept at {}: {error}", path.display()),
    }
}

/// Plays a case at the scale the tool plays it at by default, and
/// after an inconclusive play again at half that scale, the last time at
/// the slower scale the stall names (at most half the last, since the next
/// stall may be longer; always one live mode can play: etcd's leases count
/// whole seconds), at most [`MOST_TRIES`] times: what each play gave, or
/// why the case fails.
fn check(name: &str, scenario: &Scenario, strategy: StrategyId) -> Result<Vec<String>, String> {
    let mut time_scale = first_scale(scenario, strategy);
    let mut said = Vec::new();
    for tried in 1..=MOST_TRIES {
        let started = Instant::now();
        let played = play(name, scenario, strategy, time_scale)
            .map_err(|problem| format!("{}at ×{time_scale}: {problem}", said.join("")))?;
        let took = started.elapsed().as_secs_f64();
        match played {
            Played::Agrees(race) => {
                said.push(format!("×{time_scale} in {took:.1} s{}", race.map_or("", |_| ", up to a race")));
                return Ok(said);
            }
            // A stall is the machine's moment, not the case's: the next
            // play goes at half the scale, and only the last at the scale
            // that would have held that stall (slower still if the next
            // half is, as the next stall may be longer). At ×1 a two-am
            // night takes 20 minutes, where one stall of 0.2 s sent it.
            Played::Inconclusive { stall, slower } if time_scale > 1 => {
                said.push(format!("×{time_scale} in {took:.1} s inconclusive ({stall}); "));
                let next_is_last = tried + 1 == MOST_TRIES;
                let most = if next_is_last { slower.min(time_scale / 2) } else { time_scale / 2 }.max(1);
                time_scale = (1..=most)
                    .rev()
                    .find(|scale| locklab_live::coordinator::time_scale_fits(scenario, strategy, *scale).is_ok())
                    .unwrap_or(1);
            }
            Played::Inconclusive { stall, .. } => {
                return Err(format!(
                    "{}inconclusive at ×{time_scale}, with no slower scale to try: {stall}",
                    said.join("")
                ));
            }
        }
    }
    Err(format!("inconclusive {MOST_TRIES} times: {}", said.join("")))
}

fn first_scale(scenario: &Scenario, strategy: StrategyId) -> u32 {
    locklab_live::coordinator::default_time_scale(scenario, strategy)
}

/// Faults no built-in strikes, each in a fixture under `tests/live/`, with the strategy it matters to.
const FIXTURES: &[(&str, StrategyId)] = &[
    ("slow-database.json", StrategyId::DbLock),
    ("consensus-leader-loss.json", StrategyId::Consensus),
    ("redis-clock-drift.json", StrategyId::Naive),
    ("host-loss-restart.json", StrategyId::DbLock),
    ("short-pause.json", StrategyId::Fencing),
];

fn fixture(file: &str) -> (String, Scenario) {
    let path = format!("{}/tests/live/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("the fixture reads");
    (path, Scenario::from_json(&text).expect("the fixture is a valid scenario"))
}

/// Every case the matrix plays: each playable built-in under each strategy
/// it lists, and each fixture under its strategy.
fn matrix() -> Vec<(String, Scenario, StrategyId)> {
    let mut cases = Vec::new();
    for builtin in builtin::ALL {
        let scenario = Scenario::from_json(builtin.text).expect("built-ins are valid");
        for settings in scenario.strategy_settings() {
            let strategy = settings.id();
            if locklab_live::coordinator::unsupported(&scenario, strategy).is_empty() {
                cases.push((builtin.name.to_owned(), scenario.clone(), strategy));
            }
        }
    }
    for (file, strategy) in FIXTURES {
        let (path, scenario) = fixture(file);
        cases.push((path, scenario, *strategy));
    }
    cases
}

/// The longest a case can take on the wall clock at its first scale: its
/// window and drain, scaled.
fn longest_ms(scenario: &Scenario, strategy: StrategyId) -> u64 {
    scenario.horizon_ms() / u64::from(first_scale(scenario, strategy))
}

#[test]
fn every_playable_case_gives_its_simulated_verdict_live() {
    let _machine = MACHINE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // `LOCKLAB_LIVE_BUSY_CORES=2` plays the whole matrix with two spinning
    // processes keeping both cores busy (docs/live.md says how that came
    // out); the test command plays it on a quiet machine.
    let busy_cores: usize =
        std::env::var("LOCKLAB_LIVE_BUSY_CORES").ok().and_then(|cores| cores.parse().ok()).unwrap_or(0);
    let _spinners: Vec<Spinner> = (0..busy_cores).map(|_| Spinner::start()).collect();
    let mut cases = matrix();
    assert!(cases.len() >= 60, "live mode plays most built-ins and every fixture: {} cases", cases.len());
    // `LOCKLAB_LIVE_CASES=two-am` plays only the cases whose name or
    // strategy holds that text (to look into a few cases again).
    if let Ok(only) = std::env::var("LOCKLAB_LIVE_CASES") {
        cases.retain(|(name, _, strategy)| name.contains(&only) || strategy.to_string().contains(&only));
    }
    // The longest first, so that the last to finish are short.
    cases.sort_by_key(|(_, scenario, strategy)| std::cmp::Reverse(longest_ms(scenario, *strategy)));
    let total_s: u64 = cases.iter().map(|(_, scenario, strategy)| longest_ms(scenario, *strategy)).sum::<u64>() / 1_000;
    println!(
        "{} cases, {total_s} s of scaled windows and drains in all, {AT_ONCE} at once, {busy_cores} cores kept busy",
        cases.len()
    );
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..AT_ONCE {
            scope.spawn(|| {
                while let Some((name, scenario, strategy)) = cases.get(next.fetch_add(1, Ordering::SeqCst)) {
                    let result = check(name, scenario, *strategy);
                    let case = format!("{name} / {strategy}");
                    match &result {
                        Ok(said) => println!("{case}: {}", said.join("")),
                        Err(problem) => println!("{case}: FAILED {problem}"),
                    }
                    results.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push((case, result));
                }
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    assert_eq!(results.len(), cases.len(), "every case was played");
    let failures: Vec<String> = results
        .into_iter()
        .filter_map(|(case, result)| result.err().map(|problem| format!("{case}: {problem}")))
        .collect();
    assert!(failures.is_empty(), "live verdicts that are not their simulated twins':\n{}", failures.join("\n"));
}

/// A process that spins on one core until dropped.
struct Spinner(Child);

impl Spinner {
    fn start() -> Spinner {
        Spinner(
            Command::new("sh").args(["-c", "while :; do :; done"]).stdout(Stdio::null()).spawn().expect("sh starts"),
        )
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn with_both_cores_kept_busy_a_case_agrees_or_names_the_stall_and_agrees_slower() {
    let _machine = MACHINE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let _spinners: Vec<Spinner> = (0..2).map(|_| Spinner::start()).collect();
    // A pause aimed at the holder's job step, longer than its lease: what a
    // stall moves first. A night of one minute, so that the slowest scale a
    // busy machine's stalls may call for (×1) plays it in about a minute.
    let (path, scenario) = fixture("short-pause.json");
    let said = check(&path, &scenario, StrategyId::Fencing).unwrap_or_else(|problem| panic!("{problem}"));
    println!("short-pause / fencing on a busy machine: {}", said.join(""));
}

/// Runs `locklab live` with `args`; its exit code and everything it wrote.
fn live_command(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(program()).arg("live").args(args).output().expect("the binary runs");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code(), text)
}

#[test]
fn what_live_mode_cannot_play_faithfully_or_at_all_is_refused_by_name() {
    // The database's clock: live mode reaches an instance's and a Redis node's, no other.
    let path = std::env::temp_dir().join(format!("locklab-live-refused-{}.json", std::process::id()));
    let document = r#"{"format": "locklab/2", "seed": 1, "duration_ms": 60000,
        "faults": [{"at_ms": 5000, "kind": "clock_jump", "target": "db", "by_ms": 60000}]}"#;
    std::fs::write(&path, document).expect("the temp dir is writable");
    let (code, text) = live_command(&[&path.to_string_lossy(), "--strategy", "fencing"]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(code, Some(2));
    assert!(text.contains("the `clock_jump` fault on db at t=5"), "{text}");
    assert!(text.contains("no other server's clock is reachable"), "{text}");
    // Faster than faithful: refused with the reason and the scale that is.
    let (code, text) = live_command(&["pause-after-check", "--strategy", "fencing", "--time-scale", "60"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("--time-scale 60 is faster than live mode can play this run faithfully")
            && text.contains("a pause or a kill aimed at a job's step")
            && text.contains("×15 is the fastest"),
        "{text}"
    );
    // A built-in's name mistyped is named as such, with the name it may have meant.
    let (code, text) = live_command(&["pause-after-chek", "--strategy", "fencing"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("no scenario file and no built-in named `pause-after-chek`")
            && text.contains("did you mean `pause-after-check`?"),
        "{text}"
    );
    // --log where nothing can be written: refused before anything plays.
    let (code, text) = live_command(&["calm-night", "--strategy", "fencing", "--log", "/nonexistent-folder/run.json"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("--log /nonexistent-folder/run.json: cannot write there") && text.contains("nothing was played"),
        "{text}"
    );
    assert!(!text.contains("live: t="), "nothing played: {text}");
    // A server the strategy does not use, and the same Redis twice for Redlock's independent nodes.
    let closed = format!("redis://127.0.0.1:{}", support::free_port());
    let (code, text) = live_command(&["calm-night", "--strategy", "db-lock", "--redis", &closed]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("--redis is for the strategies that lock on Redis")
            && text.contains("db-lock does not use Redis"),
        "{text}"
    );
    let (code, text) = live_command(&["calm-night", "--strategy", "fencing", "--etcd", "http://127.0.0.1:2379"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("--etcd is for consensus") && text.contains("fencing does not use etcd"), "{text}");
    let mut five = vec!["calm-night", "--strategy", "redlock"];
    for _ in 0..5 {
        five.extend(["--redis", closed.as_str()]);
    }
    let (code, text) = live_command(&five);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains(&format!("`{closed}` is given twice (as the 1st and the 2nd --redis)"))
            && text.contains("redlock locks 5 independent nodes"),
        "{text}"
    );
}

#[test]
fn live_help_lists_the_strategies_and_the_defaults() {
    let output = Command::new(program()).args(["live", "--help"]).output().expect("the binary runs");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("naive, fencing, redlock, db-lock, unique-insert or consensus"), "{text}");
    assert!(text.contains("[default: 60, or slower where"), "{text}");
    assert!(text.contains("[default: live mode starts its own]"), "{text}");
    assert!(text.contains("inconclusive"), "{text}");
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

/// A process's parent, process group and name, from `/proc`; none once it
/// has ended (a zombie has ended too: nothing may reap it here).
fn process(pid: u32) -> Option<(u32, u32, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (head, tail) = stat.rsplit_once(')')?;
    let name = head.split_once('(')?.1.to_owned();
    let mut fields = tail.split_whitespace();
    let state = fields.next()?;
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    (state != "Z").then_some((parent, group, name))
}

/// Every process running now: pid, parent, group and name.
fn processes() -> Vec<(u32, u32, u32, String)> {
    std::fs::read_dir("/proc")
        .expect("/proc lists")
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| process(pid).map(|(parent, group, name)| (pid, parent, group, name)))
        .collect()
}

/// Everything a `locklab live` process started: its descendants (its
/// servers' own processes too) and every process in its supervisor's group.
fn started_by(coordinator: u32) -> Vec<u32> {
    let all = processes();
    let supervisors: Vec<u32> =
        all.iter().filter(|(_, parent, ..)| *parent == coordinator).map(|(pid, ..)| *pid).collect();
    let mut started: Vec<u32> =
        all.iter().filter(|(_, _, group, _)| supervisors.contains(group)).map(|(pid, ..)| *pid).collect();
    started.extend(&supervisors);
    loop {
        let more: Vec<u32> = all
            .iter()
            .filter(|(pid, parent, ..)| started.contains(parent) && !started.contains(pid))
            .map(|(pid, ..)| *pid)
            .collect();
        if more.is_empty() {
            started.sort_unstable();
            started.dedup();
            return started;
        }
        started.extend(more);
    }
}

/// The folder a `locklab live` process keeps its servers' directories in.
fn folder_of(coordinator: u32) -> PathBuf {
    locklab_live::supervisor::servers_root(coordinator)
}

/// Waits (at most a minute) until none of `pids` runs and `folder` is gone.
fn all_gone(pids: &[u32], folder: &std::path::Path) -> Result<(), String> {
    let asked = Instant::now();
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|pid| process(*pid).is_some()).collect();
        if left.is_empty() && !folder.exists() {
            return Ok(());
        }
        if asked.elapsed() > Duration::from_secs(60) {
            return Err(format!("left behind: processes {left:?}, folder there: {}", folder.exists()));
        }
        std::thread::yield_now();
    }
}

/// Starts `locklab live` in a process group of its own, as a shell starts a
/// job in a terminal, with its stderr read line by line.
fn start_live(args: &[&str]) -> (Child, std::io::Lines<std::io::BufReader<std::process::ChildStderr>>) {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt as _;
    let mut child = Command::new(program())
        .arg("live")
        .args(args)
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let stderr = std::io::BufReader::new(child.stderr.take().expect("stderr is piped")).lines();
    (child, stderr)
}

/// Waits until `child` has started `count` processes or more.
fn wait_for_processes(child: &mut Child, count: usize) -> Vec<u32> {
    let started = Instant::now();
    loop {
        let running = started_by(child.id());
        if running.len() >= count {
            return running;
        }
        if let Ok(Some(status)) = child.try_wait() {
            let mut said = String::new();
            if let Some(mut stdout) = child.stdout.take() {
                let _ = std::io::Read::read_to_string(&mut stdout, &mut said);
            }
            panic!("the live run ended before it got under way ({status}), with {running:?}: {said}");
        }
        assert!(started.elapsed() < Duration::from_secs(60), "the live run never got under way: {running:?}");
        std::thread::yield_now();
    }
}

#[test]
fn ctrl_c_mid_run_keeps_what_was_recorded_and_stops_everything_it_started() {
    use std::io::Read;
    let out = std::env::temp_dir().join(format!("locklab-live-interrupted-{}.json", std::process::id()));
    let out_text = out.to_string_lossy().into_owned();
    let (mut child, mut stderr) =
        start_live(&["calm-night", "--strategy", "redlock", "--time-scale", "10", "--log", &out_text]);
    // Wait until the run is well under way: its progress says where it is, past its first minute.
    let under_way = stderr
        .by_ref()
        .map_while(Result::ok)
        .find(|line| line.starts_with("live: t=") && !line.starts_with("live: t=0:"));
    assert!(under_way.is_some(), "the run reports where it is as it goes");
    let running = started_by(child.id());
    assert!(running.len() >= 10, "five Redis nodes, PostgreSQL, three instances and the supervisor: {running:?}");
    // Ctrl-C at a terminal signals the whole foreground job.
    Command::new("kill").args(["-INT", "--", &format!("-{}", child.id())]).status().expect("kill runs");
    let status = child.wait().expect("the run ends");
    assert_eq!(status.code(), Some(2));
    let said: Vec<String> = stderr.map_while(Result::ok).collect();
    assert!(
        said.iter().any(|line| line.contains("interrupted at t=") && line.contains("what was recorded up to then")),
        "{said:?}"
    );
    let mut printed = String::new();
    child.stdout.take().expect("stdout is piped").read_to_string(&mut printed).expect("stdout reads");
    assert!(printed.contains("-- verdict:") && printed.contains("redis-"), "the timeline so far is printed: {printed}");
    let recorded = std::fs::read_to_string(&out).expect("the record is written");
    let _ = std::fs::remove_file(&out);
    let run = RecordedRun::from_json(&recorded).expect("the record reads back");
    assert!(run.live.is_some_and(|live| live.interrupted_at_ms.is_some()) && !run.events.is_empty());
    all_gone(&running, &folder_of(child.id())).unwrap_or_else(|problem| panic!("{problem}"));
}

#[test]
fn ctrl_c_while_postgresql_is_made_is_an_interruption_not_an_initdb_failure() {
    let (mut child, stderr) = start_live(&["calm-night", "--strategy", "fencing"]);
    let started = Instant::now();
    loop {
        let initdb = processes().into_iter().any(|(_, parent, _, name)| parent == child.id() && name == "initdb");
        if initdb {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "initdb never ran");
        std::thread::yield_now();
    }
    let running = started_by(child.id());
    Command::new("kill").args(["-INT", "--", &format!("-{}", child.id())]).status().expect("kill runs");
    let status = child.wait().expect("the run ends");
    let said: Vec<String> = stderr.map_while(Result::ok).collect();
    assert_eq!(status.code(), Some(2), "{said:?}");
    assert!(said.iter().any(|line| line.contains("interrupted")), "{said:?}");
    assert!(!said.iter().any(|line| line.contains("initdb failed")), "{said:?}");
    all_gone(&running, &folder_of(child.id())).unwrap_or_else(|problem| panic!("{problem}"));
}

#[test]
fn kill_9_of_the_coordinator_leaves_no_server_instance_or_folder_behind() {
    let (mut child, _stderr) = start_live(&["calm-night", "--strategy", "fencing"]);
    // Redis, PostgreSQL and its backends, three instances and the supervisor.
    let running = wait_for_processes(&mut child, 8);
    assert!(folder_of(child.id()).exists(), "the servers' folder is there while the run is");
    Command::new("kill").args(["-KILL", &child.id().to_string()]).status().expect("kill runs");
    let _ = child.wait();
    all_gone(&running, &folder_of(child.id())).unwrap_or_else(|problem| panic!("{problem}"));
}

#[test]
fn a_stalled_coordinator_makes_the_run_inconclusive_naming_when_how_long_and_a_faithful_scale() {
    let night = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/live/short-night.json");
    let (child, mut stderr) = start_live(&[night, "--strategy", "fencing", "--compare"]);
    // Mid-run: its progress is past its first tenth (6 s of its time).
    let under_way = stderr
        .by_ref()
        .map_while(Result::ok)
        .find(|line| line.starts_with("live: t=") && !line.starts_with("live: t=0:00"));
    assert!(under_way.is_some(), "the run reports where it is as it goes");
    // The machine takes the coordinator away for a third of a second (its
    // length is this test's input), as a loaded machine can.
    Command::new("kill").args(["-STOP", &child.id().to_string()]).status().expect("kill runs");
    let stopped = Instant::now();
    while stopped.elapsed() < Duration::from_millis(300) {
        std::thread::yield_now();
    }
    Command::new("kill").args(["-CONT", &child.id().to_string()]).status().expect("kill runs");
    let output = child.wait_with_output().expect("the run ends");
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "inconclusive is its own exit code: {text}");
    assert!(text.contains("-- inconclusive: the machine stalled the coordinator at t="), "{text}");
    // What ×60 allows the coordinator: 16 ms while a request (whose client
    // timeout is a second) is out, else the margin every process has.
    assert!(
        text.contains("longer than the 16 ms that ×60 allows")
            || text.contains("longer than the 166 ms that ×60 allows"),
        "{text}"
    );
    assert!(text.contains("at --time-scale ") || text.contains("not even ×1"), "{text}");
    assert!(
        text.contains("inconclusive: the machine stalled the live run (above), so the verdicts are not compared"),
        "{text}"
    );
    assert!(!text.contains("the same verdict") && !text.contains("the verdicts differ"), "{text}");
}

#[test]
fn a_scenario_too_long_for_a_command_line_plays() {
    // A thousand faults that change nothing (storage's link to a delayed by
    // 0 ms): a valid scenario of over 128 KB, the most one argument may be.
    let faults: Vec<String> = (0..1000)
        .map(|index| {
            let at_ms = 1_000 + index * 50;
            format!(
                r#"{{"at_ms": {at_ms}, "kind": "network_delay", "from": "a", "to": "storage", "extra_ms": 0, "duration_ms": 6000}}"#
            )
        })
        .collect();
    let document = format!(
        r#"{{"format": "locklab/2", "name": "A long document", "seed": 3, "duration_ms": 60000,
            "world": {{"cron_period_ms": 60000, "job_ms": 20000}}, "strategies": {{"fencing": {{}}}},
            "faults": [{}]}}"#,
        faults.join(",\n")
    );
    let scenario = Scenario::from_json(&document).expect("the scenario is valid");
    let quoted = serde_json::to_string(&scenario.to_json()).expect("a string quotes");
    assert!(quoted.len() > 128 * 1024, "longer than one argument may be: {} bytes", quoted.len());
    let path = std::env::temp_dir().join(format!("locklab-live-long-{}.json", std::process::id()));
    std::fs::write(&path, &document).expect("the temp dir is writable");
    let (code, text) = live_command(&[&path.to_string_lossy(), "--strategy", "fencing", "--compare"]);
    let _ = std::fs::remove_file(&path);
    assert!(matches!(code, Some(0 | 3)), "{text}");
    assert!(text.contains("the same verdict") || text.contains("inconclusive"), "{text}");
}

/// A session of the SCRAM- and TLS-only PostgreSQL at `url`, for the test's own looks.
fn postgres_session(url: &str) -> Result<locklab_clients::PostgresSession, String> {
    let endpoint = locklab_clients::PostgresEndpoint::parse(url).map_err(|error| error.to_string())?;
    let settings = locklab_clients::SessionSettings::default();
    locklab_clients::PostgresSession::connect(&endpoint, &settings, Duration::from_secs(5))
        .map_err(|error| error.to_string())
}

/// The Redis password of "your" server in the test below.
const YOUR_REDIS_PASSWORD: &str = "s3cret-redis";

#[test]
fn on_servers_you_run_it_touches_only_what_it_creates_and_two_runs_share_nothing() {
    use locklab_conformance::server::EtcdServer;
    use support::{Certificates, Postgres, Redis, Scratch};
    // "Your" servers, each holding something of yours the run must leave
    // alone: a Redis that asks for a password, a PostgreSQL that takes only
    // TLS logins checked with SCRAM, an etcd.
    let redis = Redis::start(&["--requirepass", YOUR_REDIS_PASSWORD], None);
    let scratch = Scratch::new("live-yours");
    let certificates = Certificates::write(&scratch);
    let hba = "local all all scram-sha-256\nhostssl all all 127.0.0.1/32 scram-sha-256\n";
    let tls = |password: &str, port: u16| {
        let authority = certificates.authority.display();
        // verify-ca: the chain is checked; the certificate names db.locklab.test, which no resolver knows.
        format!("postgres://postgres:{password}@127.0.0.1:{port}/postgres?sslmode=verify-ca&sslrootcert={authority}")
    };
    let postgres = Postgres::start(Some(hba), &[], Some(&certificates), |port, password| {
        postgres_session(&tls(password, port)).is_ok()
    });
    let etcd = EtcdServer::start().expect("etcd starts");
    let mut redis_client = locklab_conformance::resp::Connection::open(redis.port).expect("Redis answers");
    redis_client.call(&["AUTH", YOUR_REDIS_PASSWORD]).expect("AUTH");
    redis_client.call(&["SET", "yours", "1"]).expect("SET");
    // A key of yours named as the lock's: the run's are its own, and leave it be.
    redis_client.call(&["SET", locklab_engine::event::LOCK_KEY, "theirs"]).expect("SET");
    let postgres_url = tls(&postgres.password, postgres.port);
    let mut admin = postgres_session(&postgres_url).expect("PostgreSQL lets the test in");
    admin.batch("CREATE TABLE mine (id int)", Duration::from_secs(5)).expect("CREATE TABLE");
    let (redis_url, etcd_url) = (
        format!("redis://:{YOUR_REDIS_PASSWORD}@127.0.0.1:{}", redis.port),
        format!("http://127.0.0.1:{}", etcd.port()),
    );
    let night = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/live/short-night.json");
    // Two runs at once on the same servers, under each strategy: neither touches the other's lock.
    for (strategy, extra) in
        [("fencing", ["--redis", redis_url.as_str()]), ("consensus", ["--etcd", etcd_url.as_str()])]
    {
        let mut args = vec![night, "--strategy", strategy, "--postgres", &postgres_url, "--compare"];
        args.extend(extra);
        let (first, second) = std::thread::scope(|scope| {
            let first = scope.spawn(|| live_command(&args));
            let second = scope.spawn(|| live_command(&args));
            (first.join().expect("a run"), second.join().expect("a run"))
        });
        for (code, text) in [first, second] {
            assert!(matches!(code, Some(0 | 3)), "{text}");
            assert!(text.contains("(yours)"), "{text}");
            assert!(text.contains("the same verdict") || text.contains("-- inconclusive"), "{text}");
            assert!(!text.contains(YOUR_REDIS_PASSWORD) && !text.contains(&postgres.password), "{text}");
        }
    }
    // What the runs created is gone; what was there stays.
    let keys = redis_client.call(&["KEYS", "*"]).expect("KEYS");
    assert!(
        keys.contains("\"yours\"") && keys.contains("\"job:daily-report\"") && !keys.contains("locklab-live"),
        "{keys}"
    );
    assert_eq!(redis_client.call(&["GET", locklab_engine::event::LOCK_KEY]).expect("GET"), "\"theirs\"");
    let limit = Duration::from_secs(5);
    let schemas =
        admin.batch("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'locklab_live_%'", limit).expect("query");
    assert_eq!(schemas.first_value(), Some("0"), "the runs' schemas are dropped");
    let mine = admin.batch("SELECT count(*) FROM pg_tables WHERE tablename = 'mine'", limit).expect("query");
    assert_eq!(mine.first_value(), Some("1"), "the user's table stays");
    let mut etcd_client = locklab_conformance::etcd::EtcdClient::new(etcd.port());
    let everything = serde_json::json!({"key": locklab_conformance::etcd::encode("\0"), "range_end": locklab_conformance::etcd::encode("\0")});
    let left = etcd_client.post("/v3/kv/range", &everything, Duration::from_secs(2)).expect("etcd answers");
    assert!(left.get("kvs").is_none(), "the lease keys are gone: {left}");

    // A wrong password is refused with the server's own code, the URL shown without it.
    let wrong = format!("redis://:not-it@127.0.0.1:{}", redis.port);
    let (code, text) = live_command(&[night, "--strategy", "fencing", "--redis", &wrong]);
    assert_eq!(code, Some(2), "{text}");
    let shown = format!("redis://:***@127.0.0.1:{}", redis.port);
    assert!(text.contains(&format!("{shown} refused the login: -WRONGPASS")) && !text.contains("not-it"), "{text}");
    let wrong = tls("not-it", postgres.port);
    let (code, text) = live_command(&[night, "--strategy", "fencing", "--postgres", &wrong]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("refused the login: FATAL 28P01") && !text.contains("not-it"), "{text}");
    let plain =
        format!("postgres://postgres:{}@127.0.0.1:{}/postgres?sslmode=disable", postgres.password, postgres.port);
    let (code, text) = live_command(&[night, "--strategy", "fencing", "--postgres", &plain]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("refused the login: FATAL 28000") && !text.contains(&postgres.password), "{text}");

    // A URL nothing answers at, and ports in use by another server, are named.
    let closed = format!("redis://127.0.0.1:{}", support::free_port());
    let (code, text) = live_command(&[night, "--strategy", "fencing", "--redis", &closed]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains(&format!("nothing answers at {closed}")), "{text}");
    let not_redis = format!("redis://127.0.0.1:{}", postgres.port);
    let (code, text) = live_command(&[night, "--strategy", "fencing", "--redis", &not_redis]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains(&format!("the port of {not_redis} is in use by something that is not Redis")), "{text}");
    let not_postgres = format!("postgres://postgres@127.0.0.1:{}/postgres", redis.port);
    let (code, text) = live_command(&[night, "--strategy", "fencing", "--postgres", &not_postgres]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains(&format!(
            "the port of {not_postgres} is in use by something that is not PostgreSQL (it answered"
        )),
        "{text}"
    );
    // A fault that needs a server of live mode's own is refused on the user's.
    let (code, text) = live_command(&["redis-failover", "--strategy", "fencing", "--redis", &redis_url]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("the `redis_failover` fault at t=500 ms")
            && text.contains("needs a server live mode starts itself"),
        "{text}"
    );
}

#[test]
fn a_recorded_run_reads_back_with_checks_and_a_shuffled_one_is_refused_by_place() {
    let out = std::env::temp_dir().join(format!("locklab-recorded-{}.json", std::process::id()));
    let out_text = out.to_string_lossy().into_owned();
    let night = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/live/short-night.json");
    let (code, text) = live_command(&[night, "--strategy", "fencing", "--log", &out_text]);
    assert!(matches!(code, Some(0 | 3)), "{text}");
    let output = Command::new(program()).args(["recorded", &out_text, "--compare"]).output().expect("the binary runs");
    let read = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{read}");
    assert!(
        read.contains("recorded live on Redis")
            && read.contains("-- verdict:")
            && read.contains("-- live and simulated"),
        "{read}"
    );
    // The same document with two events swapped is refused, the place named.
    let mut document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("the record reads")).expect("JSON");
    let events = document["events"].as_array_mut().expect("events");
    let (early, late) = (1, events.len() - 1);
    events.swap(early, late);
    std::fs::write(&out, document.to_string()).expect("writable");
    let output = Command::new(program()).args(["recorded", &out_text]).output().expect("the binary runs");
    let _ = std::fs::remove_file(&out);
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert!(
        said.contains(&format!("{out_text}: events[{}].at_ms: ", early + 1)) && said.contains("a log is in time order"),
        "{said}"
    );
}
