//! Finds seeds for a built-in scenario where the holders follow a story: prints
//! for each seed which instance first held the lock in each period, per strategy.
//! Usage: cargo run --example seed_search -- NAME SEEDS
use locklab_engine::{EventKind, Scenario, StrategyId, builtin};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name = args.get(1).map_or("two-am-saturday", String::as_str);
    let seeds: u64 = args.get(2).and_then(|value| value.parse().ok()).unwrap_or(20);
    let mut scenario = Scenario::from_json(builtin::find(name).expect("built-in").text).expect("valid");
    for seed in 0..seeds {
        scenario.seed = seed;
        let mut line = format!("seed {seed:>3}:");
        for strategy in
            [StrategyId::Naive, StrategyId::Fencing, StrategyId::Redlock, StrategyId::DbLock, StrategyId::Consensus]
        {
            let log = locklab_engine::simulate(&scenario, strategy);
            let mut firsts = Vec::new();
            for event in &log {
                if let EventKind::Run { instance, period, phase: locklab_engine::event::RunPhase::Started, .. } =
                    event.kind
                    && firsts.len() == usize::try_from(period.0).unwrap_or(0)
                {
                    firsts.push(instance.to_string());
                }
            }
            line.push_str(&format!(" {}={}", strategy.name(), firsts.join("")));
        }
        println!("{line}");
    }
}
