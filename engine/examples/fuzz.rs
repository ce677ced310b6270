//! A fuzzer that runs on stable Rust: it mutates the built-in scenarios,
//! quiz cards, a recorded share link and run logs (`locklab-log/1`
//! documents, simulated and the shipped live recording), and drives every
//! input through what a document or a link reaches in the lab — the scenario
//! reader, the link decoder, the simulation, the report, the timeline and
//! the world at the cursor, the SVG figure and the log export; a log
//! document through the recorded-run page's reader (`RecordedRun::from_json`,
//! its checks) and, when it passes them, the page's view and verdict (the
//! timeline, the report and the digest fed the log as the page feeds it,
//! the world at the cursor, the comparison with the twin) — with a bound on
//! each input's time and on the process's memory (Linux's
//! `/proc/self/status`). Every simulated run's own document must pass the
//! reader's checks: a check that refuses a genuine log is a failure too. A
//! panic, or an input over a bound, stops the campaign with the input saved
//! and the command that replays it.
//!
//! ```sh
//! cargo run --release --example fuzz -p locklab-engine -- --seconds 60      # the slice scripts/test.sh runs
//! cargo run --release --example fuzz -p locklab-engine -- --inputs 1000000  # a long campaign
//! cargo run --release --example fuzz -p locklab-engine -- --seed 7 --replay 1234
//! ```

use locklab_engine::rng::SimRng;
use locklab_engine::{RecordedRun, Scenario, StrategyId, builtin, link, report, svg, view};
use std::time::{Duration, Instant};

/// A line of `/proc/self/status` in megabytes (`VmRSS`, `VmHWM`); 0 where there is none.
fn status_mb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.trim().strip_suffix("kB")?.trim().parse::<u64>().ok())
        .map_or(0, |kilobytes| kilobytes / 1024)
}

/// What one input may take.
const MAX_INPUT_TIME: Duration = Duration::from_secs(5);
const MAX_MEMORY_MB: u64 = 1024;

/// Tokens a mutation may splice in: the format's own words and awkward numbers.
const DICTIONARY: &[&str] = &[
    "\"gc_pause\"",
    "\"oom_kill\"",
    "\"host_loss\"",
    "\"clock_jump\"",
    "\"clock_drift\"",
    "\"network_delay\"",
    "\"partition\"",
    "\"redis_restart\"",
    "\"redis_failover\"",
    "\"consensus_leader_loss\"",
    "\"db_slow\"",
    "\"holder\"",
    "\"redis\"",
    "\"db\"",
    "\"a\"",
    "\"h\"",
    "\"redis-5\"",
    "\"locklab/1\"",
    "\"locklab/2\"",
    "\"daily\"",
    "\"per_period\"",
    "0",
    "1",
    "-1",
    "86400000",
    "18446744073709551615",
    "1e308",
    "null",
    "true",
    "[]",
    "{}",
    "\"\\u001b[2J\"",
    "\"\\u0000\"",
    "\"\\ud800\"",
    "\"\u{feff}\"",
    ",",
    ":",
    "\"",
    "{",
    "}",
    "[",
    "]",
];

/// One mutation of `text`, drawn from `rng`; sometimes spliced with `other`.
fn mutate(rng: &mut SimRng, text: &str, other: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        let length = u64::try_from(bytes.len()).unwrap_or(u64::MAX).max(1);
        let at = usize::try_from(rng.below(length)).unwrap_or(0).min(bytes.len());
        match rng.below(6) {
            0 => {
                if at < bytes.len() {
                    bytes[at] = u8::try_from(rng.below(256)).unwrap_or(b'x');
                }
            }
            1 => {
                let end = (at + usize::try_from(rng.below(32)).unwrap_or(0)).min(bytes.len());
                bytes.drain(at..end);
            }
            2 => {
                let token =
                    DICTIONARY[usize::try_from(rng.below(u64::try_from(DICTIONARY.len()).unwrap_or(1))).unwrap_or(0)];
                bytes.splice(at..at, token.bytes());
            }
            3 => {
                // A number replaced by an awkward one.
                if let Some(start) = bytes[at..].iter().position(u8::is_ascii_digit).map(|offset| at + offset) {
                    let end = bytes[start..]
                        .iter()
                        .position(|byte| !byte.is_ascii_digit())
                        .map_or(bytes.len(), |offset| start + offset);
                    let numbers = ["0", "1", "999999999999", "86400001", "4294967296", "3", "65"];
                    let number =
                        numbers[usize::try_from(rng.below(u64::try_from(numbers.len()).unwrap_or(1))).unwrap_or(0)];
                    bytes.splice(start..end, number.bytes());
                }
            }
            4 => {
                let end = (at + usize::try_from(rng.below(64)).unwrap_or(0)).min(bytes.len());
                let copy = bytes[at..end].to_vec();
                bytes.splice(at..at, copy);
            }
            _ => {
                let other = other.as_bytes();
                let from = usize::try_from(rng.below(u64::try_from(other.len()).unwrap_or(1).max(1))).unwrap_or(0);
                let end = (from + usize::try_from(rng.below(128)).unwrap_or(0)).min(other.len());
                bytes.splice(at..at, other[from..end].iter().copied());
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Everything a document reaches, for one input; the strategies run are drawn.
fn exercise(rng: &mut SimRng, text: &str) {
    let _ = link::decode(text);
    let Ok(scenario) = Scenario::from_json(text) else {
        return;
    };
    let _ = link::decode(&link::encode(&link::LinkState {
        scenario: scenario.clone(),
        strategy: StrategyId::Fencing,
        cursor_ms: 0,
        view: link::View::Single,
        builtin: None,
    }));
    let settings = scenario.strategy_settings();
    for _ in 0..2 {
        let Some(chosen) =
            settings.get(usize::try_from(rng.below(u64::try_from(settings.len().max(1)).unwrap_or(1))).unwrap_or(0))
        else {
            break;
        };
        let strategy = chosen.id();
        let log = locklab_engine::simulate(&scenario, strategy);
        let verdict = report::analyze(&scenario, strategy, &log);
        let timeline = view::Timeline::build(&scenario, strategy, &log);
        for share in [0, 1, 2, 3] {
            let _ = timeline.world_at(&log, scenario.duration_ms() * share / 3);
        }
        let figure = svg::figure(&scenario, &timeline, &verdict);
        assert!(!figure.contains("<script"), "the figure carries markup from the document");
        let document = locklab_engine::log_document(&scenario, strategy, &log);
        if let Err(error) = RecordedRun::from_json(&document) {
            panic!("the reader refuses a simulated run's own log: {error}");
        }
    }
}

/// Everything a log document reaches on the recorded-run page: its reader
/// and checks, then, for one that passes, what the page computes from it.
fn exercise_log(text: &str) {
    let Ok(recorded) = RecordedRun::from_json(text) else {
        return;
    };
    let (scenario, strategy, log) = (&recorded.scenario, recorded.strategy, &recorded.events);
    // As the page reads a run (`ui::run::Reading`): the timeline, the report
    // and the digest fed the same slices.
    let mut timeline = view::TimelineBuilder::new(scenario, strategy);
    let mut verdict = report::ReportBuilder::new(scenario, strategy);
    let mut digest = locklab_engine::Fnv1a::default();
    for slice in log.chunks(20_000) {
        timeline.feed(slice);
        verdict.feed(slice);
        digest.eat(serde_json::to_string(slice).unwrap_or_default().as_bytes());
    }
    let (timeline, verdict) = (timeline.finish(), verdict.finish());
    for share in [0, 1, 2, 3] {
        let _ = timeline.world_at(log, timeline.duration_ms * share / 3);
    }
    let _ = (timeline.next_event_ms(0), timeline.previous_event_ms(timeline.duration_ms));
    let twin = report::analyze(scenario, strategy, &locklab_engine::simulate(scenario, strategy));
    let _ = locklab_engine::races::recorded_agreement(scenario, strategy, &verdict, &twin, recorded.live.as_ref());
    let _ = recorded.live.as_ref().map(locklab_engine::LiveRecording::stall_sentence);
}

/// A mutation of a log document's structure: an event moved, dropped or
/// copied, or one of its ids or times set to an awkward value; written back
/// as JSON, so it reaches the checks behind the parser.
fn mutate_log(rng: &mut SimRng, text: &str) -> String {
    let Ok(mut document) = serde_json::from_str::<serde_json::Value>(text) else {
        return text.to_owned();
    };
    let Some(events) = document.get_mut("events").and_then(serde_json::Value::as_array_mut) else {
        return text.to_owned();
    };
    if events.is_empty() {
        return text.to_owned();
    }
    let draw = |rng: &mut SimRng, below: usize| {
        usize::try_from(rng.below(u64::try_from(below.max(1)).unwrap_or(1))).unwrap_or(0)
    };
    for _ in 0..1 + rng.below(3) {
        let (at, other) = (draw(rng, events.len()), draw(rng, events.len()));
        match rng.below(6) {
            0 => events.swap(at, other),
            1 => {
                events.remove(at);
                if events.is_empty() {
                    break;
                }
            }
            2 => {
                let copy = events[at].clone();
                events.insert(other, copy);
            }
            3 => {
                let fields = ["at_ms", "run", "period", "session", "query", "keys", "chunk", "until_ms", "latency_ms"];
                let numbers = [0, 1, 3, 65_536, 4_000_000_000, u64::from(u32::MAX), u64::MAX];
                let field = fields[draw(rng, fields.len())];
                let number = numbers[draw(rng, numbers.len())];
                if let Some(event) = events[at].as_object_mut() {
                    event.insert(field.to_owned(), serde_json::json!(number));
                }
            }
            4 => {
                let fields = ["instance", "client", "node", "party"];
                let names = ["a", "c", "h", "redis-5", "redis-1-replica", "db", "consensus"];
                let field = fields[draw(rng, fields.len())];
                let name = names[draw(rng, names.len())];
                if let Some(event) = events[at].as_object_mut() {
                    event.insert(field.to_owned(), serde_json::json!(name));
                }
            }
            _ => {
                let kinds = ["run", "granted", "revoked", "belief", "fault", "put", "redis", "sql", "process"];
                let kind = kinds[draw(rng, kinds.len())];
                if let Some(event) = events[at].as_object_mut() {
                    event.insert("type".to_owned(), serde_json::json!(kind));
                }
            }
        }
    }
    document.to_string()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value =
        |flag: &str| args.iter().position(|arg| arg == flag).and_then(|at| args.get(at + 1)?.parse::<u64>().ok());
    let seed = value("--seed").unwrap_or(1);
    let inputs = value("--inputs").unwrap_or(u64::MAX);
    let seconds = value("--seconds").unwrap_or(u64::MAX);
    let replay = value("--replay");
    let mut corpus: Vec<String> =
        builtin::ALL.iter().chain(builtin::QUIZZES).map(|card| card.text.to_owned()).collect();
    corpus.push(include_str!("../tests/fixtures/link-v1.txt").trim().to_owned());
    // Log documents: short simulated runs under every strategy, and the
    // recorded-run page's own example, recorded live.
    let mut logs: Vec<String> = Vec::new();
    for name in ["calm-night", "pause-after-check", "redis-failover", "oom-no-restart"] {
        let scenario = builtin::find(name).and_then(|builtin| Scenario::from_json(builtin.text).ok());
        for scenario in scenario.iter() {
            for settings in scenario.strategy_settings() {
                let log = locklab_engine::simulate(scenario, settings.id());
                logs.push(locklab_engine::log_document(scenario, settings.id(), &log));
            }
        }
    }
    logs.push(include_str!("../../static/recorded/two-am-saturday-fencing.live.json").to_owned());
    let mut rng = SimRng::from_seed(seed);
    let started = Instant::now();
    let (mut slowest, mut slowest_input, mut valid, mut valid_logs) = (Duration::ZERO, 0, 0u64, 0u64);
    let mut input = 0u64;
    while input < inputs && started.elapsed() < Duration::from_secs(seconds) {
        // Every input has its own stream, so one can be replayed alone.
        let mut case = rng.fork();
        let pick =
            |case: &mut SimRng| usize::try_from(case.below(u64::try_from(corpus.len()).unwrap_or(1))).unwrap_or(0);
        // One input in four is a log document, mutated as text or as events.
        let is_log = case.below(4) == 0;
        let text = if is_log {
            let pick_log =
                |case: &mut SimRng| usize::try_from(case.below(u64::try_from(logs.len()).unwrap_or(1))).unwrap_or(0);
            let (base, other) = (pick_log(&mut case), pick_log(&mut case));
            if case.below(2) == 0 {
                mutate_log(&mut case, &logs[base])
            } else {
                mutate(&mut case, &logs[base], &logs[other])
            }
        } else {
            let (base, other) = (pick(&mut case), pick(&mut case));
            mutate(&mut case, &corpus[base], &corpus[other])
        };
        if replay.is_some_and(|wanted| wanted != input) {
            input += 1;
            continue;
        }
        if is_log {
            valid_logs += u64::from(RecordedRun::from_json(&text).is_ok());
        } else {
            valid += u64::from(Scenario::from_json(&text).is_ok());
        }
        let clock = Instant::now();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if is_log { exercise_log(&text) } else { exercise(&mut case, &text) }
        }));
        let took = clock.elapsed();
        let problem = match outcome {
            Err(_) => Some("panicked".to_owned()),
            Ok(()) if took > MAX_INPUT_TIME => Some(format!("took {took:?}, over {MAX_INPUT_TIME:?}")),
            Ok(()) if status_mb("VmRSS:") > MAX_MEMORY_MB => {
                Some(format!("left the process at {} MB", status_mb("VmRSS:")))
            }
            Ok(()) => None,
        };
        if let Some(problem) = problem {
            let saved = std::env::temp_dir().join(format!("locklab-fuzz-seed-{seed}-input-{input}.txt"));
            let _ = std::fs::write(&saved, &text);
            eprintln!(
                "input {input} {problem}; saved to {}\nreplay: cargo run --release --example fuzz -p locklab-engine -- --seed {seed} --replay {input}",
                saved.display()
            );
            std::process::exit(1);
        }
        if took > slowest {
            (slowest, slowest_input) = (took, input);
        }
        input += 1;
        if replay.is_some() {
            break; // the one input asked for
        }
    }
    println!(
        "fuzz: {input} inputs from seed {seed} ({valid} valid scenarios, {valid_logs} log documents that passed the checks) in {:.1} s; panics 0; slowest input {slowest_input}: {slowest:?}; peak memory of the process {} MB",
        started.elapsed().as_secs_f64(),
        status_mb("VmHWM:")
    );
}
