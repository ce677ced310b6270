//! What more than one of the engine's test files reads off a report.

use locklab_engine::report::StrategyReport;

/// The periods a report calls missed, read from its `missed_period` findings.
pub fn missed_periods(report: &StrategyReport) -> Vec<u32> {
    report
        .findings
        .iter()
        .filter(|finding| finding.kind == "missed_period")
        .filter_map(|finding| finding.text.strip_prefix("period ")?.split(' ').next()?.parse().ok())
        .collect()
}
