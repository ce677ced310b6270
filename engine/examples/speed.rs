//! Quick speed probe (the real benchmarks are in benches/engine.rs): runs the
//! seed's story for each strategy over many seeds and prints runs and events
//! per second. Usage: cargo run --release --example speed -- [RUNS [STRATEGY]]
use locklab_engine::{Scenario, StrategyId, builtin};
use std::time::Instant;

fn main() {
    let runs: u64 = std::env::args().nth(1).and_then(|value| value.parse().ok()).unwrap_or(200);
    let mut scenario = Scenario::from_json(builtin::find("two-am-saturday").expect("built-in").text).expect("valid");
    let only = std::env::args().nth(2);
    for strategy in StrategyId::ALL.into_iter().filter(|id| only.as_deref().is_none_or(|name| name == id.name())) {
        let start = Instant::now();
        let mut events = 0u64;
        for seed in 0..runs {
            scenario.seed = seed;
            events += locklab_engine::simulate(&scenario, strategy).len() as u64;
        }
        let seconds = start.elapsed().as_secs_f64();
        println!(
            "{:<14} {:>8.0} runs/s {:>10.0} events/s {:>7} events/run",
            strategy.name(),
            runs as f64 / seconds,
            events as f64 / seconds,
            events / runs
        );
    }
}
