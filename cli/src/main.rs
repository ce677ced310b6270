//! `locklab`: the command-line front end. It reads scenario files (or names
//! of built-ins), runs the engine, and prints timelines, verdicts and reports.
//! Every failure is one clear message on stderr and a non-zero exit.

use locklab_engine::report::StrategyReport;
use locklab_engine::scenario::{MAX_DOCUMENT_BYTES, StrategyId, seconds};
use locklab_engine::{EventKind, Scenario, builtin};
use std::process::ExitCode;

const USAGE: &str = "\
usage:
  locklab run FILE|NAME [--strategy ID] [--format text|json] [--all-events]
  locklab compare FILE|NAME
  locklab scenarios
  locklab show NAME
  locklab render FILE|NAME --strategy ID [--svg OUT] [--log OUT]
  locklab explore [FILE|NAME] --strategy ID [--faults KIND,KIND,...] [--max-faults N] [--runs N] [--seed S]
                  [--goal unsafe|at_risk|late|wasteful|stale_write|two_holders] [--window START_MS..END_MS]
                  [--format text|json]

FILE is a scenario in the locklab/1 format; NAME is a built-in (see `locklab scenarios`).
explore searches the seed's world over one cron period, or the world of FILE|NAME (its own
faults set aside; faults then strike in the first two thirds of its run unless --window says).
Strategy ids: naive, fencing, redlock, db-lock, unique-insert, consensus.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(output) => {
            // A reader that stops early (`| head`) closes the pipe: that is not an error worth a panic.
            use std::io::Write as _;
            let mut stdout = std::io::stdout().lock();
            match stdout.write_all(output.as_bytes()).and_then(|()| stdout.flush()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("locklab: cannot write the output: {error}");
                    ExitCode::from(2)
                }
            }
        }
        Err(message) => {
            eprintln!("locklab: {message}");
            ExitCode::from(2)
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Text,
    Json,
}

struct Options {
    strategy: Option<StrategyId>,
    format: Format,
    all_events: bool,
    svg: Option<String>,
    log: Option<String>,
    explore: Vec<(String, String)>,
    positional: Vec<String>,
    /// Every option given, in order, so a command can refuse one it does not take.
    given: Vec<String>,
}

fn parse_options(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        strategy: None,
        format: Format::Text,
        all_events: false,
        svg: None,
        log: None,
        explore: Vec::new(),
        positional: Vec::new(),
        given: Vec::new(),
    };
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg.starts_with("--") {
            options.given.push(arg.clone());
        }
        match arg.as_str() {
            "--strategy" => {
                let value = rest.next().ok_or("--strategy needs an id")?;
                let id = StrategyId::parse(value).ok_or_else(|| {
                    format!("unknown strategy `{value}`; expected naive, fencing, redlock, db-lock, unique-insert or consensus")
                })?;
                options.strategy = Some(id);
            }
            "--format" => {
                options.format = match rest.next().map(String::as_str) {
                    Some("text") => Format::Text,
                    Some("json") => Format::Json,
                    Some(other) => {
                        return Err(format!("unknown format `{other}`; expected text or json"));
                    }
                    None => return Err("--format needs text or json".to_owned()),
                };
            }
            "--all-events" => options.all_events = true,
            "--svg" => options.svg = Some(rest.next().ok_or("--svg needs an output file")?.clone()),
            "--log" => options.log = Some(rest.next().ok_or("--log needs an output file")?.clone()),
            "--faults" | "--max-faults" | "--runs" | "--seed" | "--goal" | "--window" => {
                let value = rest.next().ok_or_else(|| format!("{arg} needs a value"))?;
                options.explore.push((arg.clone(), value.clone()));
            }
            flag if flag.starts_with("--") => {
                return Err(format!("unknown option `{flag}`\n{USAGE}"));
            }
            _ => options.positional.push(arg.clone()),
        }
    }
    Ok(options)
}

fn run(args: &[String]) -> Result<String, String> {
    let Some(command) = args.first() else {
        return Err(USAGE.to_owned());
    };
    let options = parse_options(&args[1..])?;
    // What each command takes: an option it does not take is a mistake to
    // say, not one to ignore (`run … --svg` writes no figure).
    let takes: &[&str] = match command.as_str() {
        "run" => &["--strategy", "--format", "--all-events"],
        "explore" => &["--strategy", "--format", "--faults", "--max-faults", "--runs", "--seed", "--goal", "--window"],
        "render" => &["--strategy", "--svg", "--log"],
        _ => &[],
    };
    if let Some(flag) = options.given.iter().find(|flag| !takes.contains(&flag.as_str())) {
        let what = if takes.is_empty() { "no options".to_owned() } else { takes.join(", ") };
        return Err(format!("`{command}` does not take {flag}; it takes {what}"));
    }
    match command.as_str() {
        "run" => {
            let scenario = load(one_positional(&options, "run needs a scenario FILE or NAME")?)?;
            run_command(&scenario, &options)
        }
        "compare" => {
            let scenario = load(one_positional(&options, "compare needs a scenario FILE or NAME")?)?;
            compare(&scenario)
        }
        "scenarios" => Ok(list_builtins()),
        "explore" => explore(&options),
        "render" => {
            let scenario = load(one_positional(&options, "render needs a scenario FILE or NAME")?)?;
            let strategy = options.strategy.ok_or("render needs --strategy ID")?;
            if options.svg.is_none() && options.log.is_none() {
                return Err("render needs --svg OUT or --log OUT (or both)".to_owned());
            }
            let log = locklab_engine::simulate_whole(&scenario, strategy)?;
            let report = locklab_engine::report::analyze(&scenario, strategy, &log);
            let mut written = String::new();
            // The same figures the lab's Export buttons give (its worker calls the same functions).
            if let Some(out) = options.svg.as_deref() {
                let svg = locklab_engine::svg::timeline(&scenario, strategy, &log, &report);
                std::fs::write(out, svg).map_err(|error| format!("cannot write {out}: {error}"))?;
                written.push_str(&format!(
                    "wrote {out}: {} under {strategy}, {}\n",
                    scenario.name,
                    report.safety.name()
                ));
            }
            if let Some(out) = options.log.as_deref() {
                let document = locklab_engine::log_document(&scenario, strategy, &log);
                std::fs::write(out, document).map_err(|error| format!("cannot write {out}: {error}"))?;
                written.push_str(&format!("wrote {out}: {} events\n", log.len()));
            }
            Ok(written)
        }
        "show" => {
            let name = one_positional(&options, "show needs a built-in NAME")?;
            let builtin = builtin::find(name)
                .ok_or_else(|| format!("no built-in scenario named `{name}`; see `locklab scenarios`"))?;
            // Built-ins are embedded without indentation; people read them laid out.
            let scenario = Scenario::from_json(builtin.text).map_err(|error| format!("{name}: {error}"))?;
            Ok(format!("{}\n", scenario.to_json()))
        }
        "help" | "--help" | "-h" => Ok(format!("{USAGE}\n")),
        other => Err(format!("unknown command `{other}`\n{USAGE}")),
    }
}

fn one_positional<'a>(options: &'a Options, missing: &str) -> Result<&'a str, String> {
    match options.positional.as_slice() {
        [one] => Ok(one),
        [] => Err(missing.to_owned()),
        more => Err(format!("expected one scenario, got {}", more.len())),
    }
}

/// Reads a scenario file, or a built-in by name when no such file exists.
fn load(name: &str) -> Result<Scenario, String> {
    let path = std::path::Path::new(name);
    if !path.exists()
        && let Some(builtin) = builtin::find(name)
    {
        return Scenario::from_json(builtin.text).map_err(|error| format!("built-in `{name}`: {error}"));
    }
    let text = read_capped(path).map_err(|error| format!("cannot read {name}: {error}"))?;
    Scenario::from_json(&text).map_err(|error| format!("{name}: {error}"))
}

/// Reads a file up to [`MAX_DOCUMENT_BYTES`], and refuses a larger one (or an
/// endless one, like `/dev/zero`) without reading the rest.
fn read_capped(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|error| error.to_string())?;
    let mut bytes = Vec::new();
    file.take(MAX_DOCUMENT_BYTES + 1).read_to_end(&mut bytes).map_err(|error| error.to_string())?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > MAX_DOCUMENT_BYTES {
        return Err(format!("it is larger than {MAX_DOCUMENT_BYTES} bytes, the most a scenario file may be"));
    }
    String::from_utf8(bytes).map_err(|error| format!("it is not UTF-8 text ({error})"))
}

fn chosen(scenario: &Scenario, options: &Options) -> Vec<StrategyId> {
    match options.strategy {
        Some(id) => vec![id],
        None => scenario.strategy_settings().iter().map(|settings| settings.id()).collect(),
    }
}

fn run_command(scenario: &Scenario, options: &Options) -> Result<String, String> {
    let strategies = chosen(scenario, options);
    let mut reports = Vec::new();
    let mut text = String::new();
    for strategy in &strategies {
        let log = locklab_engine::simulate_whole(scenario, *strategy)?;
        let report = locklab_engine::report::analyze(scenario, *strategy, &log);
        if options.format == Format::Text {
            text.push_str(&format!("== {} — {}\n", strategy, scenario.settings_for(*strategy).title()));
            for event in &log {
                if options.all_events || shown_by_default(&event.kind) {
                    text.push_str(&format!("{:>10}  {event}\n", clock_label(event.at_ms)));
                }
            }
            text.push_str(&verdict_text(&report, scenario));
            text.push('\n');
        }
        reports.push(report);
    }
    if options.format == Format::Json {
        return Ok(format!("{}\n", locklab_engine::Report::new(scenario, reports).to_json()));
    }
    Ok(text)
}

/// The text timeline leaves out the network's and the pool's chatter unless asked.
fn shown_by_default(kind: &EventKind) -> bool {
    !matches!(
        kind,
        EventKind::Sent { .. }
            | EventKind::Lost { .. }
            | EventKind::Pool { .. }
            | EventKind::Background { outcome: locklab_engine::event::BackgroundOutcome::Ok, .. }
            | EventKind::Connection { change: locklab_engine::event::ConnectionChange::Opened, .. }
    )
}

fn clock_label(at_ms: u64) -> String {
    format!("{}.{:03}", at_ms / 1000, at_ms % 1000)
}

fn verdict_text(report: &StrategyReport, scenario: &Scenario) -> String {
    let metrics = &report.metrics;
    let mut text = format!(
        "-- verdict: {}, {}\n   efficiency: {}\n   {}\n   overlap {} · stale writes accepted {} · rejected {} · corrupted reports {} · runs {} (duplicates {}) · duplicate side effects {} · missed periods {} · max report delay {} · row-lock waits {} · pool exhausted {} · background failures {}\n",
        report.safety.name(),
        report.liveness.name(),
        report.efficiency(),
        scenario.storage_text(),
        seconds(metrics.overlap_ms),
        metrics.stale_writes_accepted,
        metrics.stale_writes_rejected,
        metrics.corrupted_reports,
        metrics.runs_started,
        metrics.duplicate_runs,
        metrics.duplicate_side_effects,
        metrics.missed_periods,
        seconds(metrics.max_report_delay_ms),
        seconds(metrics.db_lock_wait_ms),
        seconds(metrics.pool_exhausted_ms),
        metrics.background_query_timeouts,
    );
    for finding in &report.findings {
        text.push_str(&format!("   {:>10}  {}\n", clock_label(finding.at_ms), finding.text));
    }
    if let Some(expected) = scenario.expect.get(&report.strategy) {
        match report.check(expected) {
            Ok(()) => {
                text.push_str("   as expected by the scenario");
                if let Some(why) = &expected.why {
                    text.push_str(&format!(": {why}"));
                }
                text.push('\n');
            }
            Err(problem) => text.push_str(&format!("   NOT as the scenario expects: {problem}\n")),
        }
    }
    text
}

fn compare(scenario: &Scenario) -> Result<String, String> {
    let report = locklab_engine::run(scenario)?;
    let mut text =
        format!("{} (seed {})\n", if scenario.name.is_empty() { "scenario" } else { &scenario.name }, scenario.seed);
    text.push_str(&format!(
        "{:<14} {:<7} {:<7} {:>9} {:>6} {:>6} {:>9} {:>5} {:>7} {:>7} {:>10}\n",
        "strategy", "safety", "live", "overlap", "stale✓", "stale✗", "corrupt", "runs", "dup-fx", "missed", "bg-fail"
    ));
    for result in &report.results {
        let metrics = &result.metrics;
        text.push_str(&format!(
            "{:<14} {:<7} {:<7} {:>9} {:>6} {:>6} {:>9} {:>5} {:>7} {:>7} {:>10}\n",
            result.strategy.name(),
            result.safety.name(),
            result.liveness.name(),
            seconds(metrics.overlap_ms),
            metrics.stale_writes_accepted,
            metrics.stale_writes_rejected,
            metrics.corrupted_reports,
            metrics.runs_started,
            metrics.duplicate_side_effects,
            metrics.missed_periods,
            metrics.background_query_timeouts,
        ));
    }
    text.push_str(&format!("{}\n", scenario.storage_text()));
    Ok(text)
}

fn list_builtins() -> String {
    let mut text = String::new();
    for builtin in builtin::ALL {
        let scenario = Scenario::from_json(builtin.text);
        let title = scenario.map(|scenario| scenario.name).unwrap_or_else(|error| format!("(broken: {error})"));
        text.push_str(&format!("{:<22} {title}\n", builtin.name));
    }
    text
}

fn explore(options: &Options) -> Result<String, String> {
    use locklab_engine::explore::{ExploreOptions, Explorer, Goal};
    // The world searched in: a scenario's (its own faults set aside), or by default the seed's over one period.
    let world = match options.positional.as_slice() {
        [] => None,
        [one] => Some(load(one)?),
        more => return Err(format!("explore searches one scenario's world, got {}", more.len())),
    };
    let strategy = options.strategy.ok_or("explore needs --strategy ID")?;
    let goal = options
        .explore
        .iter()
        .find(|(flag, _)| flag == "--goal")
        .map(|(_, value)| {
            Goal::parse(value).ok_or_else(|| {
                format!("unknown goal `{value}`; expected unsafe, at_risk, late, wasteful, stale_write or two_holders")
            })
        })
        .transpose()?
        .unwrap_or(Goal::Unsafe);
    let mut search = ExploreOptions::for_world(strategy, goal, world.as_ref());
    let number = |flag: &str, value: &str| -> Result<u64, String> {
        value.parse::<u64>().map_err(|_| format!("{flag} needs a whole number, got `{value}`"))
    };
    for (flag, value) in &options.explore {
        match flag.as_str() {
            "--faults" => {
                search.kinds =
                    value.split(',').map(|kind| kind.trim().to_owned()).filter(|kind| !kind.is_empty()).collect()
            }
            "--max-faults" => {
                search.max_faults =
                    u8::try_from(number(flag, value)?).map_err(|_| format!("--max-faults {value} is too large"))?;
            }
            "--runs" => {
                search.runs = u32::try_from(number(flag, value)?).map_err(|_| format!("--runs {value} is too large"))?
            }
            "--seed" => search.seed = number(flag, value)?,
            "--window" => {
                let (start, end) =
                    value.split_once("..").ok_or_else(|| format!("--window needs START_MS..END_MS, got `{value}`"))?;
                search.window_ms = (number(flag, start)?, number(flag, end)?);
            }
            _ => {}
        }
    }
    search.validate()?;
    let result = Explorer::new(search).run();
    if options.format == Format::Json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(&result).map_err(|error| error.to_string())?));
    }
    let Some(scenario) = &result.scenario else {
        let place = match &world {
            Some(scenario) => format!("the world of \"{}\"", scenario.name),
            None => "the seed's world (one cron period)".to_owned(),
        };
        return Ok(format!("no counterexample for {strategy} in {} schedules of {place}\n", result.runs));
    };
    Ok(format!(
        "found after {} schedules: {}\n{}\n\n{}\nSave it and rerun: locklab run FILE --strategy {strategy}\n",
        result.runs,
        scenario.name,
        scenario.description.as_deref().unwrap_or_default(),
        scenario.to_json()
    ))
}
