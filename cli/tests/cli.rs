//! The `locklab` binary end to end: commands, the report's JSON shape against
//! the contract, and bad input refused with one message and a non-zero exit.

use std::process::{Command, Output};

fn locklab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_locklab")).args(args).output().expect("the binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A file in the temp directory for one test, removed when the test is done with it (also on failure).
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn named(name: &str) -> TempFile {
        TempFile(std::env::temp_dir().join(format!("locklab-cli-test-{}-{name}", std::process::id())))
    }
}

impl std::ops::Deref for TempFile {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::path::Path> for TempFile {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn temp_file(name: &str, text: &str) -> TempFile {
    let path = TempFile::named(name);
    std::fs::write(&*path, text).expect("temp file");
    path
}

#[test]
fn run_prints_the_wire_and_the_verdict() {
    let output = locklab(&["run", "pause-after-check", "--strategy", "fencing"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("EVAL \"if set NX PX then return INCR\" 2 job:daily-report job:daily-report:token"));
    assert!(text.contains("409 rejected ✗ (stale token"));
    assert!(text.contains("-- verdict: safety safe, liveness ok, efficiency ok"), "three axes, each named");
    assert!(
        text.contains("efficiency: no work wasted but what a fault forced (1 run redone)"),
        "what the efficiency verdict rests on"
    );
    assert!(text.contains("storage checks fencing tokens"), "which store is in play");
    assert!(text.contains("as expected by the scenario"));
}

#[test]
fn the_json_report_follows_the_contract() {
    let output = locklab(&["run", "two-am-saturday", "--format", "json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("valid JSON");
    assert_eq!(report["format"], "locklab-report/2");
    assert_eq!(report["scenario"], "2 am Saturday");
    assert_eq!(report["seed"], 47);
    let results = report["results"].as_array().expect("results");
    let names: Vec<&str> = results.iter().map(|result| result["strategy"].as_str().unwrap_or("")).collect();
    assert_eq!(names, ["naive", "fencing", "redlock", "db-lock", "unique-insert", "consensus"]);
    let metric_keys = [
        "overlap_ms",
        "stale_writes_accepted",
        "stale_writes_rejected",
        "corrupted_reports",
        "runs_started",
        "duplicate_runs",
        "duplicate_side_effects",
        "missed_periods",
        "max_report_delay_ms",
        "db_lock_wait_ms",
        "pool_exhausted_ms",
        "background_query_timeouts",
        // Extensions (docs/formats.md): what liveness and efficiency rest on.
        "unfinished_periods",
        "wasted_runs",
        "wasted_side_effects",
        "queries_failed_behind_lock",
        "queries_held_behind_lock",
        "longest_background_wait_ms",
        "background_pool_starved_ms",
    ];
    for result in results {
        assert!(["safe", "at_risk", "unsafe"].contains(&result["safety"].as_str().unwrap_or("")));
        assert!(["ok", "late", "missed"].contains(&result["liveness"].as_str().unwrap_or("")));
        assert!(["ok", "wasteful"].contains(&result["efficiency"].as_str().unwrap_or("")));
        let metrics = result["metrics"].as_object().expect("metrics");
        for key in metric_keys {
            assert!(metrics[key].is_u64(), "{key} is a count");
        }
        assert_eq!(metrics.len(), metric_keys.len(), "no metric beyond the contract's and the documented extensions");
        for finding in result["findings"].as_array().expect("findings") {
            assert!(finding["at_ms"].is_u64() && finding["kind"].is_string() && finding["text"].is_string());
            if let Some(cause) = finding.get("cause") {
                assert!(cause["run"].is_u64() && cause["instance"].is_string(), "{cause}");
                assert!(
                    ["lock", "belief", "nothing", "former", "no_lock"].contains(&cause["held"].as_str().unwrap_or(""))
                );
                assert!(cause["checked"].is_string() && cause["fix"].is_string());
            }
        }
    }
    // Under the post's night, D reads as the post reads it: the data is right, every side effect thrice.
    let unique = &results[4];
    assert_eq!(
        (&unique["safety"], &unique["efficiency"]),
        (&serde_json::json!("safe"), &serde_json::json!("wasteful"))
    );
    // B's stale writes come from b's redelivered job, which never asked for the lock.
    let caused_by_nothing = results[2]["findings"].as_array().expect("findings").iter().any(|finding| {
        finding["kind"] == "stale_write_accepted"
            && finding["cause"]["held"] == "nothing"
            && finding["cause"]["instance"] == "b"
    });
    assert!(caused_by_nothing, "the redelivered job is named as the cause");
    assert_eq!(results[0]["safety"], "unsafe", "the post's own lock on the post's night");
    assert_eq!(results[1]["safety"], "safe", "the post's answer A");
    let redlock = &results[2];
    assert_eq!(redlock["safety"], "unsafe");
    assert!(redlock["metrics"]["stale_writes_accepted"].as_u64() > Some(0));
}

#[test]
fn compare_lists_every_strategy_and_show_round_trips() {
    let output = locklab(&["compare", "delayed-packet"]);
    assert!(output.status.success());
    let text = stdout(&output);
    for row in ["naive ", "fencing ", "redlock ", "db-lock ", "unique-insert ", "consensus "] {
        assert!(text.lines().any(|line| line.starts_with(row)), "missing row {row}");
    }
    let shown = locklab(&["show", "delayed-packet"]);
    let path = temp_file("shown.json", &stdout(&shown));
    let again = locklab(&["compare", path.to_str().unwrap_or_default()]);
    assert_eq!(stdout(&again), text, "a shown built-in runs the same from a file");
    let listed = stdout(&locklab(&["scenarios"]));
    assert_eq!(listed.lines().next().map(|line| line.starts_with("two-am-saturday")), Some(true));
}

#[test]
fn recipe_prints_a_strategys_lock_as_a_document_or_as_steps() {
    let output = locklab(&["recipe", "fencing", "--format", "json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let recipe: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("valid JSON");
    assert_eq!(recipe["format"], "locklab-recipe/1");
    assert_eq!(recipe["take"]["with"], "set_nx_px");
    assert_eq!(recipe["take"]["ttl_ms"], 30_000);
    assert_eq!(recipe["token"], "incr_in_script");
    assert_eq!(recipe["release"], "compare_and_delete");
    // A scenario's settings are the ones printed: this built-in gives naive a plain DEL.
    let text = stdout(&locklab(&["recipe", "naive", "overrun-del"]));
    assert!(text.starts_with("naive: "), "{text}");
    assert!(text.contains(" 2. Take: SET <key> locked NX EX 300: one atomic command."), "{text}");
    assert!(text.contains(" 8. Release: a plain DEL"), "{text}");
    assert_eq!(text.lines().filter(|line| line.starts_with(' ')).count(), 9, "one line per step: {text}");
    let file = temp_file("recipe.json", &stdout(&locklab(&["show", "redlock-clock-jump"])));
    let from_file = locklab(&["recipe", "redlock", file.to_str().unwrap_or_default(), "--format", "json"]);
    assert!(from_file.status.success(), "{}", stderr(&from_file));
    assert!(stdout(&from_file).contains("\"redis_majority\""), "{}", stdout(&from_file));
}

#[test]
fn a_recipe_of_an_unknown_strategy_or_an_unreadable_scenario_is_refused() {
    let cases: [(&[&str], &str); 3] = [
        (&["recipe", "redlok"], "unknown strategy `redlok`"),
        (&["recipe", "fencing", "/no/such/file.json"], "cannot read /no/such/file.json"),
        (&["recipe", "fencing", "--format", "yaml"], "invalid value 'yaml' for '--format"),
    ];
    for (args, expected) in cases {
        let output = locklab(args);
        assert_eq!(output.status.code(), Some(2), "{args:?} must fail");
        let message = stderr(&output);
        assert!(message.contains(expected), "{args:?}: {message}");
        assert!(!message.contains("panicked"), "{args:?} panicked: {message}");
        assert!(stdout(&output).is_empty(), "{args:?} printed to stdout");
    }
}

#[test]
fn bad_input_is_one_clear_message_and_a_failing_exit() {
    let negative = temp_file(
        "negative.json",
        r#"{"format": "locklab/1", "faults": [{"at_ms": -5, "kind": "gc_pause", "target": "a", "duration_ms": 1}]}"#,
    );
    let typo = temp_file("typo.json", r#"{"format": "locklab/1", "world": {"instance": 3}}"#);
    let broken = temp_file("broken.json", "{\"format\": ");
    // A key that would clear the terminal is written back as an escape.
    let escape = temp_file("escape.json", "{\"format\": \"locklab/2\", \"wr\\u001b[2Jold\": 1}");
    let huge = temp_file(
        "huge.json",
        r#"{"format": "locklab/2", "duration_ms": 86400000, "world": {"cron_period_ms": 1000}}"#,
    );
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["run".into(), negative.display().to_string()], "faults[0].at_ms: invalid value: integer `-5`"),
        (vec!["run".into(), typo.display().to_string()], "world.instance: unknown field `instance`"),
        (vec!["run".into(), broken.display().to_string()], "EOF while parsing"),
        (vec!["run".into(), "/no/such/file.json".into()], "cannot read /no/such/file.json"),
        (vec!["run".into(), "calm-night".into(), "--strategy".into(), "redlok".into()], "unknown strategy `redlok`"),
        (vec!["run".into(), "calm-night".into(), "--format".into(), "xml".into()], "invalid value 'xml' for '--format"),
        (vec!["show".into(), "nope".into()], "no built-in scenario named `nope`"),
        (vec!["explode".into()], "unrecognized subcommand 'explode'"),
        // An option a command does not take is a mistake to say, not one to ignore (`run … --svg` writes no figure).
        (
            vec!["run".into(), "calm-night".into(), "--svg".into(), "out.svg".into()],
            "unexpected argument '--svg' found",
        ),
        (vec!["run".into(), "/dev/zero".into()], "cannot read /dev/zero: it is larger than 4194304 bytes"),
        (vec!["run".into(), escape.display().to_string()], "unknown field `wr\\u{1b}[2Jold`"),
        (vec!["run".into(), huge.display().to_string()], "world.cron_period_ms: 1000 over 86400 s would have"),
        (vec![], "Usage: locklab <COMMAND>"),
    ];
    for (args, expected) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = locklab(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?} must fail");
        let message = stderr(&output);
        assert!(message.contains(expected), "{args:?}: {message}");
        assert!(!message.contains("panicked"), "{args:?} panicked: {message}");
        assert!(stdout(&output).is_empty(), "{args:?} printed to stdout");
    }
}

#[test]
fn explore_prints_the_contract_json_and_its_scenario_reruns() {
    let output = locklab(&[
        "explore",
        "--strategy",
        "redlock",
        "--faults",
        "gc_pause",
        "--max-faults",
        "1",
        "--runs",
        "3000",
        "--format",
        "json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let result: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("valid JSON");
    assert_eq!(result["found"], true);
    assert_eq!(result["strategy"], "redlock");
    assert!(result["runs"].as_u64() > Some(0));
    let scenario = result["scenario"].to_string();
    let path = temp_file("counterexample.json", &scenario);
    let rerun = locklab(&["run", path.to_str().unwrap_or_default(), "--strategy", "redlock", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&rerun)).expect("valid report");
    assert_eq!(report["results"][0]["safety"], "unsafe", "locklab run shows the same violation");

    let none =
        locklab(&["explore", "--strategy", "consensus", "--faults", "gc_pause", "--runs", "200", "--format", "json"]);
    assert!(none.status.success(), "nothing found still exits 0");
    let result: serde_json::Value = serde_json::from_str(&stdout(&none)).expect("valid JSON");
    assert_eq!(result["found"], false);
    assert!(result.get("scenario").is_none(), "no scenario when nothing was found");
    // Said in words, with the world it searched: the seed's over two cron periods, as `--help` says.
    let none = locklab(&["explore", "--strategy", "consensus", "--faults", "gc_pause", "--runs", "20"]);
    assert_eq!(
        stdout(&none),
        "no counterexample for consensus in 20 schedules of the seed's world (2 cron periods): 1 to 3 faults each, of gc_pause, striking in the first 200 s; drawn at random, not every schedule\n"
    );
    let help = stdout(&locklab(&["explore", "--help"]));
    assert!(help.contains("the seed's world over two cron periods"), "{help}");
    assert!(!help.contains("one cron period"), "{help}");
}

#[test]
fn explore_searches_the_world_of_a_given_scenario() {
    // The naive lock sized to the 90 s job (EX 100) instead of the cron period:
    // a single pause breaks it within one period. In a locklab/1 world (every
    // period its own report) the seed's EX 300 cannot be broken by one pause.
    let world = temp_file(
        "naive-100.json",
        r#"{"format": "locklab/1", "duration_ms": 300000, "world": {"background_queries_per_s": 0},
            "strategies": {"naive": {"ttl_ms": 100000}}}"#,
    );
    let world = world.to_str().unwrap_or_default();
    let args =
        ["--strategy", "naive", "--faults", "gc_pause", "--max-faults", "1", "--runs", "3000", "--format", "json"];
    let sized = locklab(&[&["explore", world][..], &args[..]].concat());
    assert!(sized.status.success(), "{}", stderr(&sized));
    let result: serde_json::Value = serde_json::from_str(&stdout(&sized)).expect("valid JSON");
    assert_eq!(result["found"], true, "a single pause breaks EX 100");
    assert_eq!(result["scenario"]["strategies"]["naive"]["ttl_ms"], 100_000, "the world's settings are kept");
    assert_eq!(result["scenario"]["faults"].as_array().map(Vec::len), Some(1));

    let per_period = temp_file("per-period.json", r#"{"format": "locklab/1", "duration_ms": 300000}"#);
    let per_period = locklab(&[&["explore", per_period.to_str().unwrap_or_default()][..], &args[..]].concat());
    let result: serde_json::Value = serde_json::from_str(&stdout(&per_period)).expect("valid JSON");
    assert_eq!(result["found"], false, "no single pause breaks EX 300 when each period has its own report");

    let builtin =
        locklab(&["explore", "calm-night", "--strategy", "consensus", "--faults", "gc_pause", "--runs", "50"]);
    assert!(builtin.status.success(), "a built-in's world by name: {}", stderr(&builtin));
    assert!(
        stdout(&builtin).starts_with("no counterexample for consensus in 50 schedules of the world of \"A calm night\": 1 to 3 faults each, of gc_pause, striking in the first 600 s; drawn at random"),
        "{}",
        stdout(&builtin)
    );
    let two = locklab(&["explore", "calm-night", "two-am-saturday", "--strategy", "redlock"]);
    assert_eq!(two.status.code(), Some(2));
    assert!(stderr(&two).contains("unexpected argument 'two-am-saturday' found"), "{}", stderr(&two));
    let missing = locklab(&["explore", "no-such-world.json", "--strategy", "redlock"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("cannot read no-such-world.json"), "{}", stderr(&missing));
}

#[test]
fn render_writes_the_timeline_svg_and_the_log_with_one_mark_per_write() {
    let out = TempFile::named("figure.svg");
    let log_out = TempFile::named("log.json");
    let output = locklab(&[
        "render",
        "delayed-packet",
        "--strategy",
        "redlock",
        "--svg",
        out.to_str().unwrap_or_default(),
        "--log",
        log_out.to_str().unwrap_or_default(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let svg = std::fs::read_to_string(&out).expect("written");
    assert!(svg.starts_with("<svg") && svg.contains("Delayed packet"));
    assert!(svg.contains(" accepted\" data-event="), "an accepted write is drawn");
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&log_out).expect("written")).expect("JSON");
    assert_eq!(log["format"], "locklab-log/1");
    assert_eq!(log["strategy"], "redlock");
    let events = log["events"].as_array().expect("events");
    let writes = events
        .iter()
        .filter(|event| event["type"] == "put" || event["statement"]["statement"] == "write_report")
        .count();
    assert!(writes > 0);
    assert_eq!(svg.matches(r#"<g class="write"#).count(), writes, "one mark per write in the log");
    assert!(events.iter().all(|event| event["text"].as_str().is_some_and(|text| !text.is_empty())));
}

#[test]
fn bad_explore_and_render_options_are_refused_clearly() {
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["explore"], "explore needs --strategy ID"),
        (vec!["explore", "--strategy", "fencing", "--faults", "gc_pauses"], "unknown fault kind `gc_pauses`"),
        (vec!["explore", "--strategy", "fencing", "--max-faults", "0"], "--max-faults 0 is out of range"),
        (vec!["explore", "--strategy", "fencing", "--runs", "lots"], "invalid value 'lots' for '--runs <N>'"),
        (vec!["explore", "--strategy", "fencing", "--goal", "fast"], "unknown goal `fast`"),
        (vec!["explore", "--strategy", "fencing", "--window", "9..3"], "must be non-empty"),
        (vec!["render", "calm-night", "--svg", "/tmp/x.svg"], "render needs --strategy ID"),
        (vec!["render", "calm-night", "--strategy", "fencing"], "render needs --svg OUT or --log OUT"),
    ];
    for (args, expected) in cases {
        let output = locklab(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?} must fail");
        assert!(stderr(&output).contains(expected), "{args:?}: {}", stderr(&output));
    }
}

#[test]
fn every_command_explains_itself_with_its_defaults_and_completions_come_from_the_same_definition() {
    let help = locklab(&["--help"]);
    assert!(help.status.success(), "{}", stderr(&help));
    for command in ["run", "compare", "recipe", "scenarios", "show", "render", "explore", "completions"] {
        assert!(stdout(&help).contains(command), "`locklab --help` lists {command}");
        let own = locklab(&[command, "--help"]);
        assert!(own.status.success(), "`locklab {command} --help`: {}", stderr(&own));
        assert!(stdout(&own).contains(&format!("Usage: locklab {command}")), "{}", stdout(&own));
    }
    let explore = stdout(&locklab(&["explore", "--help"]));
    for default in ["[default: 3]", "[default: 10000]", "[default: 0]", "[default: unsafe]", "[default: text]"] {
        assert!(explore.contains(default), "explore's help shows {default}: {explore}");
    }
    let bash = locklab(&["completions", "bash"]);
    assert!(bash.status.success(), "{}", stderr(&bash));
    assert!(
        stdout(&bash).contains("--max-faults") && stdout(&bash).contains("scenarios"),
        "the completions know every flag"
    );
}
