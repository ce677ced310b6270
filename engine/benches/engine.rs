//! Benchmarks of the engine (divan): simulated events per second on the seed's
//! story, scenario runs per second across seeds, and a bare `BinaryHeap` of the
//! same number of events as the floor the engine's queue cannot beat.
//!
//! Run with `cargo bench -p locklab-engine --bench engine`; `docs/bench.md`
//! holds the figures. Benchmarks measure, they assert nothing about time.

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use locklab_engine::{Scenario, StrategyId, builtin, report, simulate};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::LazyLock;

fn main() {
    let story = &*STORY;
    let events: Vec<String> =
        StrategyId::ALL.into_iter().map(|strategy| format!("{strategy} {}", simulate(story, strategy).len())).collect();
    // Printed so the figures can be tied to the scenario and log sizes they came from.
    println!("story: {} (seed {}), events per log: {}", STORY_NAME.0, story.seed, events.join(", "));
    divan::main();
}

/// Seeds `0..SEEDS` for the runs-per-second benchmarks.
const SEEDS: u64 = 16;

/// The seed's story: `two-am-saturday` once it is built in, else `calm-night`.
static STORY_NAME: LazyLock<(&str, &str)> = LazyLock::new(|| {
    let builtin = builtin::find("two-am-saturday")
        .or_else(|| builtin::find("calm-night"))
        .expect("neither two-am-saturday nor calm-night is built in");
    (builtin.name, builtin.text)
});

static STORY: LazyLock<Scenario> =
    LazyLock::new(|| Scenario::from_json(STORY_NAME.1).expect("the built-in story loads"));

/// The story under seeds `0..SEEDS`.
static STORY_SEEDS: LazyLock<Vec<Scenario>> =
    LazyLock::new(|| (0..SEEDS).map(|seed| Scenario { seed, ..STORY.clone() }).collect());

fn log_len(strategy: StrategyId) -> u64 {
    u64::try_from(simulate(&STORY, strategy).len()).unwrap_or(u64::MAX)
}

// ----- simulated events per second -----

/// One `fencing` run of the story; the counter is its log length.
#[divan::bench(max_time = 5)]
fn story_events_fencing(bencher: Bencher) {
    bencher
        .counter(ItemsCount::new(log_len(StrategyId::Fencing)))
        .bench(|| simulate(black_box(&STORY), black_box(StrategyId::Fencing)));
}

/// All six strategies through the story; the counter is the six logs' lengths together.
#[divan::bench(max_time = 5)]
fn story_events_all_six(bencher: Bencher) {
    let events: u64 = StrategyId::ALL.into_iter().map(log_len).sum();
    bencher.counter(ItemsCount::new(events)).bench(|| {
        for strategy in StrategyId::ALL {
            black_box(simulate(black_box(&STORY), strategy));
        }
    });
}

// ----- scenario runs per second across seeds -----

/// The story under each seed, `fencing` alone, simulated and reported; one item is one seed's run.
#[divan::bench(max_time = 5)]
fn seeds_runs_fencing(bencher: Bencher) {
    let scenarios = &*STORY_SEEDS;
    bencher.counter(ItemsCount::new(SEEDS)).bench(|| {
        for scenario in scenarios {
            let log = simulate(black_box(scenario), StrategyId::Fencing);
            black_box(report::analyze(scenario, StrategyId::Fencing, &log));
        }
    });
}

/// The report alone: `report::analyze` of the story's `fencing` log, once per
/// iteration; the counter is the log's length.
#[divan::bench(max_time = 5)]
fn report_fencing(bencher: Bencher) {
    let log = simulate(&STORY, StrategyId::Fencing);
    bencher
        .counter(ItemsCount::new(log_len(StrategyId::Fencing)))
        .bench(|| report::analyze(black_box(&STORY), StrategyId::Fencing, black_box(&log)));
}

/// The story under each seed, `fencing` alone, simulated but not reported; one item is one seed's run.
#[divan::bench(max_time = 5)]
fn seeds_simulate_fencing(bencher: Bencher) {
    let scenarios = &*STORY_SEEDS;
    bencher.counter(ItemsCount::new(SEEDS)).bench(|| {
        for scenario in scenarios {
            black_box(simulate(black_box(scenario), StrategyId::Fencing));
        }
    });
}

/// The story under each seed, all six strategies (`locklab_engine::run`, what `compare` does);
/// one item is one seed's whole run.
#[divan::bench(max_time = 5)]
fn seeds_runs_all_six(bencher: Bencher) {
    let scenarios = &*STORY_SEEDS;
    bencher.counter(ItemsCount::new(SEEDS)).bench(|| {
        for scenario in scenarios {
            let _ = black_box(locklab_engine::run(black_box(scenario)));
        }
    });
}

// ----- baseline: a bare binary heap -----

/// A queue entry shaped like the engine's: ordered by (time, sequence), small payload.
#[derive(Clone, Copy, Debug)]
struct Entry {
    at_ms: u64,
    seq: u64,
    payload: [u32; 4],
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at_ms, self.seq) == (other.at_ms, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at_ms, self.seq).cmp(&(other.at_ms, other.seq))
    }
}

/// Times spread over the run like the engine's actions, from a fixed xorshift
/// so every bench run pushes the same sequence.
fn entry_times_ms(count: u64) -> Vec<u64> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % 900_000
        })
        .collect()
}

/// Pushes one entry per time, in order (the position is the sequence number), then pops them all.
fn push_then_pop(times_ms: &[u64]) {
    let mut heap = BinaryHeap::new();
    for (seq, &at_ms) in (0u64..).zip(times_ms) {
        heap.push(Reverse(Entry { at_ms, seq, payload: [0, 1, 2, 3] }));
    }
    while let Some(Reverse(entry)) = heap.pop() {
        black_box(entry);
    }
}

/// Push as many entries as the `fencing` log has events, then pop them all.
#[divan::bench(max_time = 5)]
fn heap_push_then_pop(bencher: Bencher) {
    let count = log_len(StrategyId::Fencing);
    let times_ms = entry_times_ms(count);
    bencher.counter(ItemsCount::new(count)).bench(|| push_then_pop(&times_ms));
}

/// The baseline taken literally: the `fencing` log's own events, as
/// `(at_ms, position)` entries in log order, pushed into a bare heap and
/// popped again.
#[divan::bench(max_time = 5)]
fn heap_story_events(bencher: Bencher) {
    let log = simulate(&STORY, StrategyId::Fencing);
    let times_ms: Vec<u64> = log.iter().map(|event| event.at_ms).collect();
    bencher
        .counter(ItemsCount::new(u64::try_from(times_ms.len()).unwrap_or(u64::MAX)))
        .bench(|| push_then_pop(&times_ms));
}

/// The same number of entries as a simulation holds them: the queue stays ~32
/// deep, each pop schedules one later entry (the classic hold model).
#[divan::bench(max_time = 5)]
fn heap_hold_32(bencher: Bencher) {
    let count = log_len(StrategyId::Fencing);
    let steps_ms = entry_times_ms(count);
    bencher.counter(ItemsCount::new(count)).bench(|| {
        let mut heap = BinaryHeap::new();
        for seq in 0..32u64 {
            heap.push(Reverse(Entry { at_ms: seq, seq, payload: [0, 1, 2, 3] }));
        }
        for (seq, &step_ms) in (32u64..).zip(&steps_ms) {
            let Some(Reverse(entry)) = heap.pop() else { break };
            heap.push(Reverse(Entry { at_ms: entry.at_ms + step_ms % 10_000, seq, payload: entry.payload }));
            black_box(entry);
        }
    });
}
