//! Memory per run, measured from outside with valgrind's DHAT (the engine
//! forbids unsafe code, so it cannot count its own allocations): runs the
//! seed's story under one strategy for seeds 0..RUNS and keeps nothing.
//! See docs/bench.md for the commands and the figures.
//! Usage: cargo run --release --example memory -- STRATEGY RUNS
use locklab_engine::{Scenario, StrategyId, builtin};

fn main() {
    let mut args = std::env::args().skip(1);
    let strategy = args.next().and_then(|name| StrategyId::parse(&name)).unwrap_or(StrategyId::Fencing);
    let runs: u64 = args.next().and_then(|value| value.parse().ok()).unwrap_or(1);
    let mut scenario = Scenario::from_json(builtin::find("two-am-saturday").expect("built-in").text).expect("valid");
    let mut events = 0usize;
    for seed in 0..runs {
        scenario.seed = seed;
        let log = locklab_engine::simulate(&scenario, strategy);
        let report = locklab_engine::report::analyze(&scenario, strategy, &log);
        events += log.len() + report.findings.len();
    }
    println!("{strategy}: {runs} runs, {events} events and findings");
}
