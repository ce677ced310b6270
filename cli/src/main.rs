//! `locklab`: the command-line front end. It reads scenario files (or names
//! of built-ins), runs the engine, and prints timelines, verdicts and reports.
//! Every failure is one clear message on stderr and a non-zero exit: 2 for a
//! usage error (clap's message, naming the argument) or a scenario that
//! cannot be run. The commands and their flags are one definition (`Cli`),
//! from which `--help` and the shell completions are made.

use locklab_engine::format::{at_seconds, seconds};
use locklab_engine::recipe::RECIPE_FORMAT;
use locklab_engine::report::{Metric, StrategyReport};
use locklab_engine::scenario::{MAX_DOCUMENT_BYTES, StrategyId};
use locklab_engine::{EventKind, Scenario, builtin};
use std::process::ExitCode;

use clap::{CommandFactory as _, Parser, Subcommand, ValueEnum};

/// Run, compare and search lock scenarios: a job scheduler on three instances,
/// a Redis lock, a GC pause, and which pattern keeps the job from running twice.
#[derive(Parser, Debug)]
#[command(name = "locklab", version, max_term_width = 100)]
#[command(after_help = "FILE is a scenario document (locklab/1 or locklab/2, docs/formats.md); NAME is a built-in \
    (`locklab scenarios` lists them).\nStrategy ids: naive, fencing, redlock, db-lock, unique-insert, consensus.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a scenario under its strategies (or one) and print each timeline and verdict.
    Run {
        /// A scenario file, or a built-in's name.
        #[arg(value_name = "FILE|NAME")]
        scenario: String,
        /// Only this strategy (naive, fencing, redlock, db-lock, unique-insert, consensus)
        /// [default: every strategy the scenario lists].
        #[arg(long, value_name = "ID", value_parser = strategy_id)]
        strategy: Option<StrategyId>,
        /// Text for people, or the locklab-report/2 JSON document.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Also print the network's and the connection pool's events.
        #[arg(long)]
        all_events: bool,
    },
    /// Run a scenario under all six strategies and print one verdict row each.
    Compare {
        /// A scenario file, or a built-in's name.
        #[arg(value_name = "FILE|NAME")]
        scenario: String,
    },
    /// Print a strategy's lock as a recipe (locklab-recipe/1, docs/formats.md): the steps a real
    /// client performs, with the settings the scenario gives the strategy.
    Recipe {
        /// The strategy: naive, fencing, redlock, db-lock, unique-insert or consensus.
        #[arg(value_name = "STRATEGY", value_parser = strategy_id)]
        strategy: StrategyId,
        /// A scenario file, or a built-in's name, whose settings the strategy takes
        /// [default: the seed's settings].
        #[arg(value_name = "FILE|NAME")]
        scenario: Option<String>,
        /// The steps for people, or the recipe's JSON document.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// List the built-in scenarios.
    Scenarios,
    /// Print a built-in scenario's document.
    Show {
        /// A built-in's name.
        name: String,
    },
    /// Write a run's timeline as an SVG figure and its event log as JSON (locklab-log/1).
    Render {
        /// A scenario file, or a built-in's name.
        #[arg(value_name = "FILE|NAME")]
        scenario: String,
        /// The strategy to run (required).
        #[arg(long, value_name = "ID", value_parser = strategy_id)]
        strategy: Option<StrategyId>,
        /// Where to write the SVG timeline.
        #[arg(long, value_name = "OUT")]
        svg: Option<String>,
        /// Where to write the event log.
        #[arg(long, value_name = "OUT")]
        log: Option<String>,
    },
    /// Search fault schedules for a counterexample: the seed's world over two cron
    /// periods, or the world of FILE|NAME (its own faults set aside).
    Explore {
        /// The world to search [default: the seed's, over two cron periods].
        #[arg(value_name = "FILE|NAME")]
        scenario: Option<String>,
        /// The strategy to break (required).
        #[arg(long, value_name = "ID", value_parser = strategy_id)]
        strategy: Option<StrategyId>,
        /// The fault kinds to try, comma-separated [default: every kind].
        #[arg(long, value_name = "KIND,KIND,...", value_delimiter = ',')]
        faults: Vec<String>,
        /// The most faults in one schedule (1 to 8).
        #[arg(long, value_name = "N", default_value_t = 3)]
        max_faults: u64,
        /// How many schedules to try.
        #[arg(long, value_name = "N", default_value_t = 10_000)]
        runs: u64,
        /// The search's own seed (the same seed, the same schedules).
        #[arg(long, value_name = "S", default_value_t = 0)]
        seed: u64,
        /// What counts as broken: unsafe, at_risk, late, wasteful, stale_write or two_holders.
        #[arg(long, value_name = "GOAL", default_value = "unsafe", value_parser = goal)]
        goal: locklab_engine::explore::Goal,
        /// When faults may strike [default: 0..200000 in the seed's world; the first two
        /// thirds of a given world's run].
        #[arg(long, value_name = "START_MS..END_MS", value_parser = window)]
        window: Option<(u64, u64)>,
        /// Text for people, or the search's result as JSON.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Play a scenario for real on this machine: throwaway redis-server(s) and PostgreSQL on
    /// loopback ports (and etcd for consensus), or yours by URL; one process per instance running
    /// the strategy's own code; the faults as signals (oom_kill: SIGKILL; gc_pause:
    /// SIGSTOP/SIGCONT), a proxy, a failover or a lost etcd leader. Shows where the run is while
    /// it plays (on stderr), then prints the live timeline and verdict.
    #[command(after_help = "Strategy ids: naive, fencing, redlock, db-lock, unique-insert, consensus.\n\
        Exit codes: 0, the run played; 3, it played but is inconclusive: this machine stalled it longer \
        than its time scale allows (the output says when, how long, and the --time-scale that would \
        be faithful); 2, bad input, a run that could not be played, or Ctrl-C (what was recorded up \
        to then is printed, and written to --log).\n\
        docs/live.md says what runs, how time is scaled and what inconclusive means.")]
    Live {
        /// A scenario file, or a built-in's name (`locklab scenarios` lists them).
        #[arg(value_name = "FILE|NAME")]
        scenario: String,
        /// The strategy to run: naive, fencing, redlock, db-lock, unique-insert or consensus.
        #[arg(long, value_name = "ID", value_parser = strategy_id)]
        strategy: StrategyId,
        /// Scenario milliseconds per real millisecond: 60 plays a 20-minute night in 20 s.
        /// TTLs, timeouts and the cron are scaled; the loopback network is not. A scale faster
        /// than the one live mode computes as faithful is refused, with the reason.
        /// [default: 60, or slower where faithfulness or room for a 20 ms stall needs it (docs/live.md)]
        #[arg(long, value_name = "N")]
        time_scale: Option<u32>,
        /// A Redis you run, instead of a throwaway one: redis://[[USER]:PASSWORD@]HOST[:PORT] or
        /// rediss://…[?cacert=CA.pem], once per node the strategy locks (naive and fencing: 1;
        /// redlock: 5, all different). Live mode creates and deletes only its own two keys there,
        /// named for the run. A password is never shown: URLs are printed with `***`.
        /// [default: live mode starts its own]
        #[arg(long, value_name = "URL")]
        redis: Vec<String>,
        /// A PostgreSQL you run: postgres://[USER[:PASSWORD]@]HOST[:PORT][/DATABASE], with
        /// ?sslmode=disable|prefer|require|verify-ca|verify-full and &sslrootcert=CA.pem as libpq
        /// reads them (SCRAM-SHA-256 logins). Live mode works in a schema of its own and drops it
        /// at the end. [default: live mode starts its own]
        #[arg(long, value_name = "URL")]
        postgres: Option<String>,
        /// An etcd you run, for consensus: http://[USER:PASSWORD@]HOST[:PORT] or
        /// https://…[?cacert=CA.pem]. Live mode creates and deletes only its own lease key, named
        /// for the run. [default: live mode starts its own]
        #[arg(long, value_name = "URL")]
        etcd: Option<String>,
        /// Also run the simulated twin and print both verdicts side by side.
        #[arg(long)]
        compare: bool,
        /// Where to write the recorded run (locklab-log/1, marked live); its folder must exist.
        #[arg(long, value_name = "OUT")]
        log: Option<String>,
    },
    /// Read a recorded run (a locklab-log/1 document: `live --log`, `render --log`, the lab's
    /// Export), check it against the scenario it carries, and print its timeline and verdict.
    Recorded {
        /// The log document.
        #[arg(value_name = "FILE")]
        file: String,
        /// Also run the simulated twin and print both verdicts side by side.
        #[arg(long)]
        compare: bool,
    },
    /// One instance of a live run; `locklab live` starts these itself, its plan on standard input.
    #[command(hide = true)]
    LiveInstance,
    /// The supervisor of live runs; `locklab live` starts it itself.
    #[command(hide = true)]
    LiveSupervisor {
        /// The folder the runs' servers keep their directories in.
        root: std::path::PathBuf,
    },
    /// Print a shell completion script for `locklab`.
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, ValueEnum)]
enum Format {
    Text,
    Json,
}

fn strategy_id(value: &str) -> Result<StrategyId, String> {
    StrategyId::parse(value).ok_or_else(|| {
        format!("unknown strategy `{value}`; expected naive, fencing, redlock, db-lock, unique-insert or consensus")
    })
}

fn goal(value: &str) -> Result<locklab_engine::explore::Goal, String> {
    locklab_engine::explore::Goal::parse(value).ok_or_else(|| {
        format!("unknown goal `{value}`; expected unsafe, at_risk, late, wasteful, stale_write or two_holders")
    })
}

fn window(value: &str) -> Result<(u64, u64), String> {
    let whole = |part: &str| part.parse::<u64>().map_err(|_| format!("`{part}` is not a whole number of ms"));
    let (start, end) = value.split_once("..").ok_or_else(|| format!("needs START_MS..END_MS, got `{value}`"))?;
    Ok((whole(start)?, whole(end)?))
}

fn main() -> ExitCode {
    // Usage errors (and --help, --version) are clap's: a message naming the
    // argument, then exit 2 (0 for help and version).
    let cli = Cli::parse();
    match cli.command {
        Command::LiveInstance => locklab_live::instance::main(),
        Command::LiveSupervisor { root } => locklab_live::supervisor::main(&root),
        Command::Live { scenario, strategy, time_scale, compare, log, redis, postgres, etcd } => {
            let servers = locklab_live::ServerUrls { redis, postgres, etcd };
            live_command(&scenario, strategy, time_scale, servers, compare, log.as_deref())
        }
        command @ (Command::Run { .. }
        | Command::Compare { .. }
        | Command::Recipe { .. }
        | Command::Scenarios
        | Command::Show { .. }
        | Command::Render { .. }
        | Command::Explore { .. }
        | Command::Recorded { .. }
        | Command::Completions { .. }) => finish(run(command)),
    }
}

/// Writes a command's output, or its error, and says how the process exits.
fn finish(result: Result<String, String>) -> ExitCode {
    match result {
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

fn run(command: Command) -> Result<String, String> {
    match command {
        Command::Run { scenario, strategy, format, all_events } => {
            run_command(&load(&scenario)?, strategy, format, all_events)
        }
        Command::Compare { scenario } => compare(&load(&scenario)?),
        Command::Recipe { strategy, scenario, format } => recipe(strategy, scenario.as_deref(), format),
        Command::Scenarios => Ok(list_builtins()),
        Command::Explore { scenario, strategy, faults, max_faults, runs, seed, goal, window, format } => {
            let world = scenario.as_deref().map(load).transpose()?;
            let strategy = strategy.ok_or("explore needs --strategy ID")?;
            let mut search = locklab_engine::explore::ExploreOptions::for_world(strategy, goal, world.as_ref());
            if !faults.is_empty() {
                search.kinds =
                    faults.iter().map(|kind| kind.trim().to_owned()).filter(|kind| !kind.is_empty()).collect();
            }
            search.max_faults =
                u8::try_from(max_faults).map_err(|_| format!("--max-faults {max_faults} is too large"))?;
            search.runs = u32::try_from(runs).map_err(|_| format!("--runs {runs} is too large"))?;
            search.seed = seed;
            if let Some(window_ms) = window {
                search.window_ms = window_ms;
            }
            explore(search, world.as_ref(), format)
        }
        Command::Render { scenario, strategy, svg, log } => {
            let scenario = load(&scenario)?;
            let strategy = strategy.ok_or("render needs --strategy ID")?;
            if svg.is_none() && log.is_none() {
                return Err("render needs --svg OUT or --log OUT (or both)".to_owned());
            }
            let events = locklab_engine::simulate_whole(&scenario, strategy)?;
            let report = locklab_engine::report::analyze(&scenario, strategy, &events);
            let mut written = String::new();
            // The same figures the lab's Export buttons give (its worker calls the same functions).
            if let Some(out) = svg.as_deref() {
                let timeline = locklab_engine::view::Timeline::build(&scenario, strategy, &events);
                let figure = locklab_engine::svg::figure(&scenario, &timeline, &report);
                std::fs::write(out, figure).map_err(|error| format!("cannot write {out}: {error}"))?;
                written.push_str(&format!(
                    "wrote {out}: {} under {strategy}, {}\n",
                    scenario.name,
                    report.safety.name()
                ));
            }
            if let Some(out) = log.as_deref() {
                let document = locklab_engine::log_document(&scenario, strategy, &events);
                std::fs::write(out, document).map_err(|error| format!("cannot write {out}: {error}"))?;
                written.push_str(&format!("wrote {out}: {} events\n", events.len()));
            }
            Ok(written)
        }
        Command::Show { name } => {
            let builtin = builtin::find(&name)
                .ok_or_else(|| format!("no built-in scenario named `{name}`; see `locklab scenarios`"))?;
            // Built-ins are embedded without indentation; people read them laid out.
            let scenario = Scenario::from_json(builtin.text).map_err(|error| format!("{name}: {error}"))?;
            Ok(format!("{}\n", scenario.to_json()))
        }
        Command::Recorded { file, compare } => recorded(&file, compare),
        Command::Live { .. } | Command::LiveInstance | Command::LiveSupervisor { .. } => {
            Err("live, live-instance and live-supervisor are run by `main`".to_owned())
        }
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "locklab", &mut script);
            String::from_utf8(script).map_err(|error| error.to_string())
        }
    }
}

/// `recipe`: the strategy's recipe with the settings the scenario named
/// gives it (the seed's without one), as its JSON document or as numbered steps.
fn recipe(strategy: StrategyId, scenario: Option<&str>, format: Format) -> Result<String, String> {
    let scenario = scenario.map(load).transpose()?;
    let scenario = scenario.as_ref();
    let settings = scenario.map_or_else(
        || locklab_engine::scenario::StrategySettings::default_for(strategy),
        |scenario| scenario.settings_for(strategy),
    );
    let recipe = settings.recipe().ok_or_else(|| {
        format!("`{strategy}` has no locklab-recipe/1 recipe with these settings: they are out of the recipe's ranges")
    })?;
    match format {
        Format::Json => {
            let json = serde_json::to_string_pretty(&recipe).map_err(|error| error.to_string())?;
            Ok(format!("{json}\n"))
        }
        Format::Text => {
            // A scenario that does not run the strategy gives it its defaults: say so.
            let source = match scenario {
                None => "the seed's settings".to_owned(),
                Some(scenario) if scenario.strategy_settings().iter().any(|named| named.id() == strategy) => {
                    format!("the settings of \"{}\"", scenario.name)
                }
                Some(scenario) => format!("its defaults (\"{}\" does not run it)", scenario.name),
            };
            Ok(format!("{strategy}: {}\n{RECIPE_FORMAT} with {source}:\n{}", recipe.title(), recipe.steps_text()))
        }
    }
}

/// Reads a scenario file, or a built-in by name when no such file exists.
/// A name that is neither is told as a name (a mistyped built-in, with the
/// nearest one), unless it reads as a path (a folder or an extension in it).
fn load(name: &str) -> Result<Scenario, String> {
    let path = std::path::Path::new(name);
    if !path.exists() {
        match builtin::find(name) {
            Some(builtin) => {
                return Scenario::from_json(builtin.text).map_err(|error| format!("built-in `{name}`: {error}"));
            }
            None if !name.contains(['/', '.']) => {
                return Err(format!(
                    "no scenario file and no built-in named `{name}`; `locklab scenarios` lists the built-ins{}",
                    closest_builtin(name).map_or_else(String::new, |close| format!(" (did you mean `{close}`?)"))
                ));
            }
            None => {}
        }
    }
    let text = read_capped(path, MAX_DOCUMENT_BYTES, "a scenario file")
        .map_err(|error| format!("cannot read {name}: {error}"))?;
    Scenario::from_json(&text).map_err(|error| format!("{name}: {error}"))
}

/// The built-in whose name is nearest to `name`, if one is near: a typo's
/// few letters, or a name that holds it.
fn closest_builtin(name: &str) -> Option<&'static str> {
    let distance = |a: &str, b: &str| {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, left) in a.chars().enumerate() {
            let mut diagonal = row[0];
            row[0] = i + 1;
            for (j, right) in b.iter().enumerate() {
                let next = (diagonal + usize::from(left != *right)).min(row[j] + 1).min(row[j + 1] + 1);
                diagonal = row[j + 1];
                row[j + 1] = next;
            }
        }
        row[b.len()]
    };
    builtin::ALL
        .iter()
        .map(|builtin| (distance(name, builtin.name), builtin.name))
        .filter(|(far, known)| *far <= 3 || known.contains(name) && name.len() >= 4)
        .min()
        .map(|(_, known)| known)
}

/// Reads a file up to `most` bytes, and refuses a larger one (or an endless
/// one, like `/dev/zero`) without reading the rest.
fn read_capped(path: &std::path::Path, most: u64, what: &str) -> Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|error| error.to_string())?;
    let mut bytes = Vec::new();
    file.take(most + 1).read_to_end(&mut bytes).map_err(|error| error.to_string())?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > most {
        return Err(format!("it is larger than {most} bytes, the most {what} may be"));
    }
    String::from_utf8(bytes).map_err(|error| format!("it is not UTF-8 text ({error})"))
}

/// The largest log document `recorded` reads: the recorded-run page's limit.
const MAX_LOG_DOCUMENT_BYTES: u64 = 32 * 1024 * 1024;

fn chosen(scenario: &Scenario, strategy: Option<StrategyId>) -> Vec<StrategyId> {
    match strategy {
        Some(id) => vec![id],
        None => scenario.strategy_settings().iter().map(|settings| settings.id()).collect(),
    }
}

fn run_command(
    scenario: &Scenario,
    strategy: Option<StrategyId>,
    format: Format,
    all_events: bool,
) -> Result<String, String> {
    let strategies = chosen(scenario, strategy);
    let mut reports = Vec::new();
    let mut text = String::new();
    for strategy in &strategies {
        let log = locklab_engine::simulate_whole(scenario, *strategy)?;
        let report = locklab_engine::report::analyze(scenario, *strategy, &log);
        if format == Format::Text {
            text.push_str(&format!("== {} — {}\n", strategy, scenario.settings_for(*strategy).title()));
            for event in &log {
                if all_events || shown_by_default(&event.kind) {
                    text.push_str(&format!("{:>10}  {event}\n", at_seconds(event.at_ms)));
                }
            }
            text.push_str(&verdict_text(&report, scenario));
            text.push('\n');
        }
        reports.push(report);
    }
    if format == Format::Json {
        return Ok(format!("{}\n", locklab_engine::Report::new(scenario, reports).to_json()));
    }
    Ok(text)
}

/// The text timeline leaves out the network's and the pool's chatter unless asked.
fn shown_by_default(kind: &EventKind) -> bool {
    // Other services' queries are shown when they fail; the verdict counts the waits.
    if let EventKind::Background { outcome, .. } = kind {
        return outcome.failed();
    }
    !matches!(
        kind,
        EventKind::Sent { .. }
            | EventKind::Lost { .. }
            | EventKind::Pool { .. }
            | EventKind::Connection { change: locklab_engine::event::ConnectionChange::Opened, .. }
    )
}

fn verdict_text(report: &StrategyReport, scenario: &Scenario) -> String {
    let mut text = format!(
        "-- verdict: safety {}, liveness {}, efficiency {}\n   efficiency: {}\n   {}\n   {}\n",
        report.safety.name(),
        report.liveness.name(),
        report.efficiency.name(),
        report.efficiency_summary(),
        scenario.storage_text(),
        Metric::line(&report.metrics, seconds, false),
    );
    if let Some(weighing) = report.weighing() {
        text.push_str(&format!("   {weighing}\n"));
    }
    for finding in &report.findings {
        text.push_str(&format!("   {:>10}  {}\n", at_seconds(finding.at_ms), finding.text));
        if let Some(cause) = &finding.cause {
            text.push_str(&format!("   {:>10}  {}\n", "", cause.sentence()));
        }
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
    let compared: Vec<Metric> = Metric::ALL.into_iter().filter(|metric| metric.compared()).collect();
    text.push_str(&format!("{:<14} {:<7} {:<7} {:<9}", "strategy", "safety", "live", "efficient"));
    for metric in &compared {
        text.push_str(&format!(" {:>12}", metric.column()));
    }
    text.push('\n');
    for result in &report.results {
        text.push_str(&format!(
            "{:<14} {:<7} {:<7} {:<9}",
            result.strategy.name(),
            result.safety.name(),
            result.liveness.name(),
            result.efficiency.name()
        ));
        for metric in &compared {
            text.push_str(&format!(" {:>12}", metric.value(&result.metrics, seconds)));
        }
        text.push('\n');
    }
    text.push_str(&format!("{}\n", scenario.storage_text()));
    Ok(text)
}

/// Where `--log` goes, checked before the run: a run is never played to be
/// lost because its record cannot be written. A file made for it is removed
/// if the run never comes to be recorded.
struct LogOut<'a> {
    path: &'a str,
    made: bool,
    written: bool,
}

impl<'a> LogOut<'a> {
    fn check(path: &'a str) -> Result<LogOut<'a>, String> {
        let made = !std::path::Path::new(path).exists();
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|error| format!("--log {path}: cannot write there ({error}); nothing was played"))?;
        Ok(LogOut { path, made, written: false })
    }

    fn write(&mut self, document: &str) -> Result<(), String> {
        self.written = true;
        std::fs::write(self.path, document).map_err(|error| format!("cannot write {}: {error}", self.path))
    }
}

impl Drop for LogOut<'_> {
    fn drop(&mut self) {
        if self.made && !self.written {
            let _ = std::fs::remove_file(self.path);
        }
    }
}

/// Shows where a live run is, on stderr: a line that updates in place on a
/// terminal, a line every tenth of the window elsewhere; each fault as it strikes.
fn show_progress(progress: &locklab_live::Progress) {
    use std::io::{IsTerminal as _, Write as _};
    use std::sync::atomic::{AtomicU64, Ordering};
    static LAST_TENTH: AtomicU64 = AtomicU64::new(u64::MAX);
    let mut stderr = std::io::stderr().lock();
    let terminal = stderr.is_terminal();
    let at = locklab_engine::format::elapsed(progress.at_ms);
    let window = locklab_engine::format::elapsed(progress.window_ms);
    let place = if progress.at_ms <= progress.window_ms {
        format!("t={at} of {window}")
    } else {
        format!("t={at}, draining after the window's {window}")
    };
    // A reader that went away (a closed pipe) does not stop the run: what is written is dropped.
    if let Some(happened) = &progress.happened {
        let clear = if terminal { "\r\x1b[2K" } else { "" };
        let _ = writeln!(stderr, "{clear}live: t={at}  {happened}");
    }
    if terminal {
        let _ = write!(stderr, "\r\x1b[2Klive: {place}");
    } else {
        let tenth = progress.at_ms.saturating_mul(10) / progress.window_ms.max(1);
        if LAST_TENTH.swap(tenth, Ordering::SeqCst) != tenth {
            let _ = writeln!(stderr, "live: {place}");
        }
    }
}

/// `locklab live`: plays the scenario, prints its timeline and verdict as
/// `run` does under a header that says what it ran on, and exits 0, 3 when
/// the run is inconclusive, 2 on an error or an interruption (after
/// printing, and writing, what was recorded).
fn live_command(
    name: &str,
    strategy: StrategyId,
    time_scale: Option<u32>,
    servers: locklab_live::ServerUrls,
    compare: bool,
    out: Option<&str>,
) -> ExitCode {
    match live(name, strategy, time_scale, servers, compare, out) {
        Ok((text, ending)) => {
            let written = finish(Ok(text));
            match ending {
                Ending::Played => written,
                Ending::Inconclusive => ExitCode::from(3),
                Ending::Interrupted(message) => {
                    eprintln!("locklab: {message}");
                    ExitCode::from(2)
                }
            }
        }
        Err(message) => finish(Err(message)),
    }
}

/// How a live run that played ended.
enum Ending {
    Played,
    Inconclusive,
    Interrupted(String),
}

fn live(
    name: &str,
    strategy: StrategyId,
    time_scale: Option<u32>,
    servers: locklab_live::ServerUrls,
    compare: bool,
    out: Option<&str>,
) -> Result<(String, Ending), String> {
    let scenario = &load(name)?;
    let mut log_out = out.map(LogOut::check).transpose()?;
    let time_scale = time_scale.unwrap_or_else(|| locklab_live::coordinator::default_time_scale(scenario, strategy));
    let program = std::env::current_exe().map_err(|error| format!("cannot find the locklab program: {error}"))?;
    let options = locklab_live::LiveOptions {
        scenario: scenario.clone(),
        strategy,
        time_scale,
        program,
        servers,
        progress: Some(show_progress),
    };
    let live = locklab_live::run(options);
    // The progress line is done with, whatever came of the run.
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprint!("\r\x1b[2K");
    }
    let live = live?;
    let report = locklab_engine::report::analyze(scenario, strategy, &live.log);
    let mut text = format!(
        "== {strategy} — {} — live on {}, time scaled ×{time_scale} (the loopback network is not scaled)\n",
        scenario.settings_for(strategy).title(),
        live.recording.servers.join(" / "),
    );
    for event in &live.log {
        if shown_by_default(&event.kind) {
            text.push_str(&format!("{:>10}  {event}\n", at_seconds(event.at_ms)));
        }
    }
    text.push_str(&verdict_text(&report, scenario));
    if let Some(stall) = live.recording.stall_sentence() {
        text.push_str(&format!(
            "-- inconclusive: {stall}\n   the verdict above is what was recorded, not a finding about the lock\n"
        ));
    }
    if compare {
        let simulated = locklab_engine::simulate_whole(scenario, strategy)?;
        let twin = locklab_engine::report::analyze(scenario, strategy, &simulated);
        text.push_str(&live_comparison(scenario, strategy, &report, &twin, Some(&live.recording)));
    }
    if let Some(out) = log_out.as_mut() {
        let document = locklab_engine::recorded_log_document(scenario, strategy, &live.log, Some(&live.recording));
        out.write(&document)?;
        text.push_str(&format!("wrote {}: {} events, recorded live\n", out.path, live.log.len()));
    }
    let ending = match (live.recording.interrupted_at_ms, live.recording.inconclusive()) {
        (Some(at_ms), _) => Ending::Interrupted(format!(
            "interrupted at t={}: the run was stopped, and every server and instance it started with it; what was recorded up to then is above{}",
            seconds(at_ms),
            out.map_or_else(String::new, |out| format!(" and in {out}"))
        )),
        (None, true) => Ending::Inconclusive,
        (None, false) => Ending::Played,
    };
    Ok((text, ending))
}

/// `locklab recorded FILE`: a log document read with its checks, its
/// timeline and verdict printed as `run` prints them, and with `--compare`
/// its simulated twin's beside it.
fn recorded(file: &str, compare: bool) -> Result<String, String> {
    let text = read_capped(std::path::Path::new(file), MAX_LOG_DOCUMENT_BYTES, "a log document")
        .map_err(|error| format!("cannot read {file}: {error}"))?;
    let recorded = locklab_engine::RecordedRun::from_json(&text).map_err(|error| format!("{file}: {error}"))?;
    let (scenario, strategy) = (&recorded.scenario, recorded.strategy);
    let report = locklab_engine::report::analyze(scenario, strategy, &recorded.events);
    let origin = match &recorded.live {
        Some(live) => format!(
            "recorded live on {}, time scaled ×{}{}",
            live.servers.join(" / "),
            live.time_scale,
            live.interrupted_at_ms.map_or_else(String::new, |at_ms| format!(
                ", interrupted at t={} (what was recorded up to then)",
                seconds(at_ms)
            ))
        ),
        None => format!("simulated (seed {})", scenario.seed),
    };
    let mut text = format!("== {strategy} — {} — {origin}\n", scenario.settings_for(strategy).title());
    for event in &recorded.events {
        if shown_by_default(&event.kind) {
            text.push_str(&format!("{:>10}  {event}\n", at_seconds(event.at_ms)));
        }
    }
    text.push_str(&verdict_text(&report, scenario));
    if let Some(stall) = recorded.live.as_ref().and_then(locklab_engine::LiveRecording::stall_sentence) {
        text.push_str(&format!("-- inconclusive: {stall}\n"));
    }
    if compare {
        let simulated = locklab_engine::simulate_whole(scenario, strategy)?;
        let twin = locklab_engine::report::analyze(scenario, strategy, &simulated);
        text.push_str(&live_comparison(scenario, strategy, &report, &twin, recorded.live.as_ref()));
    }
    Ok(text)
}

/// The live verdict beside the simulated twin's: safety, liveness and the kinds of findings.
fn live_comparison(
    scenario: &Scenario,
    strategy: StrategyId,
    live: &StrategyReport,
    simulated: &StrategyReport,
    recording: Option<&locklab_engine::LiveRecording>,
) -> String {
    let kinds = |report: &StrategyReport| {
        let mut kinds: Vec<&str> = report.findings.iter().map(|finding| finding.kind).collect();
        kinds.sort_unstable();
        kinds.dedup();
        kinds.join(", ")
    };
    let row = |name: &str, report: &StrategyReport| {
        format!(
            "   {name:<10} {:<8} {:<8} {:<10} {}\n",
            report.safety.name(),
            report.liveness.name(),
            report.efficiency.name(),
            kinds(report)
        )
    };
    let said = match locklab_live::recorded_agreement(scenario, strategy, live, simulated, recording) {
        locklab_live::Agreement::Same => "the same verdict".to_owned(),
        locklab_live::Agreement::SameUpToRace(race) => {
            format!("the same verdict, but for what a real machine does its own way: {race}")
        }
        locklab_live::Agreement::Different => "the verdicts differ".to_owned(),
        locklab_live::Agreement::Inconclusive => {
            "inconclusive: the machine stalled the live run (above), so the verdicts are not compared".to_owned()
        }
    };
    format!(
        "-- live and simulated\n   {:<10} {:<8} {:<8} {:<10} findings\n{}{}   {said}\n",
        "",
        "safety",
        "liveness",
        "efficiency",
        row("live", live),
        row("simulated", simulated),
    )
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

fn explore(
    search: locklab_engine::explore::ExploreOptions,
    world: Option<&Scenario>,
    format: Format,
) -> Result<String, String> {
    use locklab_engine::explore::Explorer;
    let strategy = search.strategy;
    search.validate()?;
    // Where it searched, said from the world it searched.
    let place = match world {
        Some(scenario) => format!("the world of \"{}\"", scenario.name),
        None => {
            let periods = search.base.duration_ms() / search.base.world.cron_period_ms.max(1);
            format!("the seed's world ({periods} cron periods)")
        }
    };
    // What it drew from: nothing it did not draw was searched, and it says so.
    let faults = match search.max_faults {
        1 => "one fault".to_owned(),
        most => format!("1 to {most} faults"),
    };
    let window = match search.window_ms {
        (0, until_ms) => format!("in the first {}", seconds(until_ms)),
        (from_ms, until_ms) => format!("from t={} to t={}", seconds(from_ms), seconds(until_ms)),
    };
    let bounds = format!(
        "{faults} each, of {}, striking {window}; drawn at random, not every schedule",
        search.kinds.join(", ")
    );
    let result = Explorer::new(search).run();
    if format == Format::Json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(&result).map_err(|error| error.to_string())?));
    }
    let Some(scenario) = &result.scenario else {
        return Ok(format!("no counterexample for {strategy} in {} schedules of {place}: {bounds}\n", result.runs));
    };
    Ok(format!(
        "found after {} schedules: {}\n{}\n\n{}\nSave it and rerun: locklab run FILE --strategy {strategy}\n",
        result.runs,
        scenario.name,
        scenario.description.as_deref().unwrap_or_default(),
        scenario.to_json()
    ))
}
