//! What more than one of the engine's test files reads off a report.

use locklab_engine::report::StrategyReport;

/// The periods a report calls missed, read from its `missed_period` findings.
#[allow(dead_code)] // Not every test file that shares this module reads periods.
pub fn missed_periods(report: &StrategyReport) -> Vec<u32> {
    report
        .findings
        .iter()
        .filter(|finding| finding.kind == "missed_period")
        .filter_map(|finding| finding.text.strip_prefix("period ")?.split(' ').next()?.parse().ok())
        .collect()
}

/// `log` with events of the same millisecond that the run did not order
/// swapped at random (from `seed`): neighbours that concern no party in
/// common, so no message, reply or step of one party lies between them.
/// Each sweep swaps every such neighbouring pair with probability one half.
#[allow(dead_code)] // Not every test file that shares this module perturbs logs.
pub fn perturbed(log: &[locklab_engine::Event], seed: u64) -> Vec<locklab_engine::Event> {
    let mut rng = locklab_engine::rng::SimRng::from_seed(seed);
    let mut log = log.to_vec();
    let parties: Vec<Vec<locklab_engine::ids::Party>> = log.iter().map(locklab_engine::Event::parties).collect();
    let mut parties = parties;
    for _ in 0..4 {
        for index in 1..log.len() {
            let (before, after) = (&log[index - 1], &log[index]);
            let concurrent =
                before.at_ms == after.at_ms && !parties[index - 1].iter().any(|party| parties[index].contains(party));
            if concurrent && rng.below(2) == 1 {
                log.swap(index - 1, index);
                parties.swap(index - 1, index);
            }
        }
    }
    log
}
