//! The counterexample explorer: draws fault schedules from a seed, runs each
//! through the engine, stops at the first whose verdict meets the goal
//! (unsafe, or on request late or wasteful), and shrinks it to the smallest
//! schedule that still does — fewer faults, shorter pauses and delays, earlier
//! times, smaller clock jumps — and tells its story from the findings.
//!
//! It is incremental (`Explorer::step` runs a bounded number of schedules), so
//! a browser worker can run it in slices, report progress and be cancelled.
//! The same options always give the same search.

use crate::ids::{InstanceId, Party, RedisNodeId};
use crate::report::{Finding, StrategyReport, analyze};
use crate::rng::SimRng;
use crate::scenario::{
    Efficiency, FAULT_KINDS, Fault, Liveness, Safety, Scenario, Strategies, StrategyId, StrategySettings, Target,
};
use serde::Serialize;

/// What the search looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Goal {
    /// A stale write accepted or a report corrupted.
    Unsafe,
    /// Not safe: unsafe, or two holders that both wrote where no fence checks.
    AtRisk,
    /// A report late or missing.
    Late,
    /// The efficiency verdict is wasteful: work no fault forced done twice,
    /// or other services failing behind the job's row lock.
    Wasteful,
    /// Narrower than unsafe: a write applied over a newer epoch's (what a fencing token is for).
    StaleWrite,
    /// Mutual exclusion lost: two instances believed they held the lock at once.
    TwoHolders,
}

impl Goal {
    pub fn parse(name: &str) -> Option<Goal> {
        match name {
            "unsafe" => Some(Goal::Unsafe),
            "at_risk" => Some(Goal::AtRisk),
            "late" => Some(Goal::Late),
            "wasteful" => Some(Goal::Wasteful),
            "stale_write" => Some(Goal::StaleWrite),
            "two_holders" => Some(Goal::TwoHolders),
            _ => None,
        }
    }

    /// Whether a run meets the goal.
    pub fn met_by(self, report: &StrategyReport) -> bool {
        let metrics = &report.metrics;
        match self {
            Goal::Unsafe => report.safety == Safety::Unsafe,
            Goal::AtRisk => report.safety != Safety::Safe,
            Goal::Late => report.liveness != Liveness::Ok,
            Goal::Wasteful => report.efficiency == Efficiency::Wasteful,
            Goal::StaleWrite => metrics.stale_writes_accepted > 0,
            Goal::TwoHolders => metrics.overlap_ms > 0,
        }
    }

    /// When a run met the goal, as its findings tell it: the first finding
    /// that makes it unsafe or at risk (the ones that name a cause), or the
    /// first of the goal's own kind. Where a page opens a counterexample.
    pub fn met_at_ms(self, report: &StrategyReport) -> Option<u64> {
        self.met_by_finding(report).map(|index| report.findings[index].at_ms)
    }

    /// The index of the finding that met the goal (see [`Goal::met_at_ms`]).
    fn met_by_finding(self, report: &StrategyReport) -> Option<usize> {
        let kinds: &[&str] = match self {
            Goal::Unsafe | Goal::AtRisk => {
                return report.findings.iter().position(|finding| finding.cause.is_some());
            }
            Goal::Late => &["late_period", "missed_period", "unfinished_period"],
            Goal::Wasteful => &["duplicate_run", "background_timeouts"],
            Goal::StaleWrite => &["stale_write_accepted"],
            Goal::TwoHolders => &["overlap"],
        };
        report.findings.iter().position(|finding| kinds.contains(&finding.kind))
    }
}

/// What to search.
#[derive(Clone, Debug)]
pub struct ExploreOptions {
    pub strategy: StrategyId,
    /// Allowed fault kinds (names from [`FAULT_KINDS`]).
    pub kinds: Vec<String>,
    pub max_faults: u8,
    /// Faults strike in `window_ms.0 .. window_ms.1`.
    pub window_ms: (u64, u64),
    /// How many schedules to try at most.
    pub runs: u32,
    pub seed: u64,
    pub goal: Goal,
    /// The world searched in (its faults are ignored).
    pub base: Scenario,
}

impl ExploreOptions {
    /// The default search for a strategy: the seed's world over two cron
    /// periods; other services' traffic only when looking for waste (it costs
    /// time and matters only there).
    pub fn new(strategy: StrategyId, goal: Goal) -> ExploreOptions {
        // Two cron periods: every period's run rewrites the day's report, so
        // what a fault in the first period does to the second one's run is
        // part of the story.
        let mut base = Scenario { name: "Explorer".to_owned(), duration_ms: Some(600_000), ..Scenario::default() };
        if goal != Goal::Wasteful {
            base.world.background_queries_per_s = 0;
        }
        ExploreOptions {
            strategy,
            kinds: FAULT_KINDS.iter().map(|kind| (*kind).to_owned()).collect(),
            max_faults: 3,
            window_ms: (0, 200_000),
            runs: 10_000,
            seed: 0,
            goal,
            base,
        }
    }

    /// The default search in a given scenario's world, or in the seed's
    /// ([`ExploreOptions::new`]) when there is none. The scenario's world,
    /// strategy settings, seed and duration are kept, its faults,
    /// expectations and quiz set aside; faults strike in its first two
    /// thirds, so that what they cause has time to show before the run ends.
    pub fn for_world(strategy: StrategyId, goal: Goal, world: Option<&Scenario>) -> ExploreOptions {
        let seed_world = ExploreOptions::new(strategy, goal);
        match world {
            Some(world) => ExploreOptions {
                window_ms: (0, (world.duration_ms() / 3 * 2).max(1)),
                base: Scenario { faults: Vec::new(), expect: Default::default(), quiz: None, ..world.clone() },
                ..seed_world
            },
            None => seed_world,
        }
    }

    /// Checks the options; the message names what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        if self.kinds.is_empty() {
            return Err("--faults needs at least one fault kind".to_owned());
        }
        for kind in &self.kinds {
            if !FAULT_KINDS.contains(&kind.as_str()) {
                return Err(format!("unknown fault kind `{kind}`; expected one of {}", FAULT_KINDS.join(", ")));
            }
        }
        if !(1..=8).contains(&self.max_faults) {
            return Err(format!("--max-faults {} is out of range: expected 1 to 8", self.max_faults));
        }
        if self.runs == 0 || self.runs > 10_000_000 {
            return Err(format!("--runs {} is out of range: expected 1 to 10000000", self.runs));
        }
        let duration = self.base.duration_ms();
        if self.window_ms.0 >= self.window_ms.1 || self.window_ms.1 > duration {
            return Err(format!(
                "the window {}..{} ms must be non-empty and inside the run ({duration} ms)",
                self.window_ms.0, self.window_ms.1
            ));
        }
        self.base.validate().map_err(|error| error.to_string())
    }
}

/// What a search found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Exploration {
    pub found: bool,
    /// Schedules run in the search (shrinking not counted).
    pub runs: u32,
    pub strategy: StrategyId,
    /// The minimal counterexample, as an ordinary scenario (absent when nothing was found).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario: Option<Scenario>,
    /// When the counterexample met the goal ([`Goal::met_at_ms`]): where the
    /// explorer page opens it in the lab. Not part of the CLI's document.
    #[serde(skip)]
    pub met_at_ms: Option<u64>,
}

/// A search in progress.
#[derive(Debug)]
pub struct Explorer {
    options: ExploreOptions,
    rng: SimRng,
    runs: u32,
    done: Option<Exploration>,
}

impl Explorer {
    pub fn new(options: ExploreOptions) -> Explorer {
        let mut base = options.base.clone();
        base.faults.clear();
        base.expect.clear();
        base.quiz = None;
        base.strategies = Some(only(options.strategy, &options.base));
        let rng = SimRng::from_seed(options.seed);
        Explorer { options: ExploreOptions { base, ..options }, rng, runs: 0, done: None }
    }

    /// Schedules run so far.
    pub fn runs(&self) -> u32 {
        self.runs
    }

    /// The run budget.
    pub fn budget(&self) -> u32 {
        self.options.runs
    }

    /// Runs up to `slice` more schedules; returns the result once the search is over.
    pub fn step(&mut self, slice: u32) -> Option<&Exploration> {
        if self.done.is_some() {
            return self.done.as_ref();
        }
        for _ in 0..slice {
            if self.runs >= self.options.runs {
                self.done = Some(Exploration {
                    found: false,
                    runs: self.runs,
                    strategy: self.options.strategy,
                    scenario: None,
                    met_at_ms: None,
                });
                break;
            }
            self.runs += 1;
            let candidate = self.draw();
            if self.fails(&candidate) {
                let minimal = self.shrink(candidate);
                let met_at_ms = self.options.goal.met_at_ms(&self.report(&minimal));
                let scenario = self.present(minimal);
                self.done = Some(Exploration {
                    found: true,
                    runs: self.runs,
                    strategy: self.options.strategy,
                    scenario: Some(scenario),
                    met_at_ms,
                });
                break;
            }
        }
        self.done.as_ref()
    }

    /// Runs the whole search.
    pub fn run(mut self) -> Exploration {
        loop {
            if let Some(done) = self.step(1_000) {
                return done.clone();
            }
        }
    }

    fn report(&self, faults: &[Fault]) -> StrategyReport {
        let mut scenario = self.options.base.clone();
        scenario.faults = faults.to_vec();
        let log = crate::simulate(&scenario, self.options.strategy);
        analyze(&scenario, self.options.strategy, &log)
    }

    fn fails(&self, faults: &[Fault]) -> bool {
        self.options.goal.met_by(&self.report(faults))
    }

    /// The next schedule. Fewest faults first: the budget goes in equal
    /// parts to schedules of one fault, then of two, and so on up to
    /// `max_faults`, so a counterexample has the fewest faults the search
    /// could find within its budget (shrinking only removes faults from the
    /// schedule it found, and two faults that break a lock only together
    /// say less than one that breaks it alone).
    fn draw(&mut self) -> Vec<Fault> {
        let count = faults_in_schedule(self.runs.saturating_sub(1), self.options.runs, self.options.max_faults);
        let mut faults: Vec<Fault> = (0..count).map(|_| self.draw_fault()).collect();
        faults.sort_by_key(Fault::at_ms);
        faults
    }

    fn draw_fault(&mut self) -> Fault {
        let kinds = &self.options.kinds;
        let kind = kinds[usize::try_from(self.rng.below(kinds.len() as u64)).unwrap_or(0)].clone();
        let (start, end) = self.options.window_ms;
        let at_ms = self.rng.between(start, end - 1);
        let mut draw = FaultDraw {
            rng: &mut self.rng,
            at_ms,
            instances: self.options.base.world.instances,
            redis_nodes: self.options.base.settings_for(self.options.strategy).redis_nodes(),
        };
        // The kind's template says which fault to draw, so a new kind is
        // named here by the compiler; the options were checked against
        // `FAULT_KINDS` when they were read.
        let Some(template) = Fault::template(&kind, at_ms) else { return draw.db_slow() };
        draw.like(&template)
    }

    /// Greedy shrinking to a fixed point: each accepted step makes the schedule smaller.
    fn shrink(&self, mut faults: Vec<Fault>) -> Vec<Fault> {
        loop {
            let mut smaller = None;
            // Fewer faults first.
            for index in 0..faults.len() {
                if faults.len() > 1 {
                    let mut candidate = faults.clone();
                    candidate.remove(index);
                    if self.fails(&candidate) {
                        smaller = Some(candidate);
                        break;
                    }
                }
            }
            // Then smaller faults, one field at a time.
            if smaller.is_none() {
                'search: for index in 0..faults.len() {
                    for reduced in reductions(&faults[index], self.options.window_ms.0) {
                        let mut candidate = faults.clone();
                        candidate[index] = reduced;
                        if self.fails(&candidate) {
                            smaller = Some(candidate);
                            break 'search;
                        }
                    }
                }
            }
            match smaller {
                Some(candidate) => faults = candidate,
                None => return faults,
            }
        }
    }

    /// The counterexample as an ordinary scenario with a story made from its findings.
    fn present(&self, faults: Vec<Fault>) -> Scenario {
        let mut scenario = self.options.base.clone();
        scenario.faults = faults;
        let report = self.report(&scenario.faults);
        let what = match self.options.goal {
            Goal::Unsafe => "breaks",
            Goal::AtRisk => "puts at risk",
            Goal::Late => "delays",
            Goal::Wasteful => "wastes work under",
            Goal::StaleWrite => "gets a stale write past",
            Goal::TwoHolders => "gives two holders to",
        };
        scenario.name = format!("Counterexample: {} {what} {}", describe(&scenario.faults), self.options.strategy);
        let met = self.options.goal.met_by_finding(&report);
        let sentences: Vec<String> = story_findings(&report.findings, met)
            .into_iter()
            .map(|finding| {
                format!("At {}, {}.", crate::format::wall_second(&scenario.clock_origin, finding.at_ms), finding.text)
            })
            .collect();
        scenario.description = Some(format!(
            "Found by locklab's explorer (seed {}, after {} schedules) and shrunk to the smallest schedule that still {} {}. {}",
            self.options.seed,
            self.runs,
            what,
            self.options.strategy,
            sentences.join(" ")
        ));
        scenario
    }
}

/// How many faults the schedule numbered `index` (from 0) of a search of
/// `runs` schedules holds: `runs` split in equal parts, the first part's
/// schedules of one fault, the last's of `max_faults`.
fn faults_in_schedule(index: u32, runs: u32, max_faults: u8) -> u32 {
    let max_faults = u32::from(max_faults.max(1));
    let part = runs.div_ceil(max_faults).max(1);
    (index / part + 1).min(max_faults)
}

/// How many findings a counterexample's story tells.
const STORY_FINDINGS: usize = 6;

/// The findings a counterexample's story tells, in time order: the first
/// [`STORY_FINDINGS`] that are not the faults themselves, and always the one
/// that met the goal (`met`, an index into `findings`), in the last place
/// when it comes later: a story that stopped before it would not say why
/// the schedule counts.
fn story_findings(findings: &[Finding], met: Option<usize>) -> Vec<&Finding> {
    let mut kept: Vec<(usize, &Finding)> =
        findings.iter().enumerate().filter(|(_, finding)| finding.kind != "fault").take(STORY_FINDINGS).collect();
    if let Some(met) = met
        && !kept.iter().any(|(index, _)| *index == met)
        && let Some(finding) = findings.get(met)
    {
        kept.truncate(STORY_FINDINGS - 1);
        kept.push((met, finding));
    }
    kept.into_iter().map(|(_, finding)| finding).collect()
}

/// A strategies block holding just this strategy, with the base's settings for it.
fn only(strategy: StrategyId, base: &Scenario) -> Strategies {
    let mut strategies = Strategies::default();
    match base.settings_for(strategy) {
        StrategySettings::Naive(settings) => strategies.naive = Some(settings),
        StrategySettings::Fencing(settings) => strategies.fencing = Some(settings),
        StrategySettings::Redlock(settings) => strategies.redlock = Some(settings),
        StrategySettings::DbLock(settings) => strategies.db_lock = Some(settings),
        StrategySettings::UniqueInsert => strategies.unique_insert = Some(crate::scenario::UniqueInsertSettings {}),
        StrategySettings::Consensus(settings) => strategies.consensus = Some(settings),
    }
    strategies
}

/// Smaller versions of a fault, most aggressive first: smaller sizes, then earlier times.
fn reductions(fault: &Fault, window_start_ms: u64) -> Vec<Fault> {
    let mut out = smaller(fault);
    out.extend(earlier(fault.at_ms(), window_start_ms).into_iter().map(|at_ms| moved_to(fault, at_ms)));
    out
}

/// The fault with each of its sizes (a length, a magnitude, a delay)
/// reduced in turn, the others kept; none for a fault that has no size.
fn smaller(fault: &Fault) -> Vec<Fault> {
    match fault.clone() {
        Fault::GcPause { at_ms, target, duration_ms } => halve(duration_ms, 1)
            .into_iter()
            .map(|duration| Fault::GcPause { at_ms, target, duration_ms: duration })
            .collect(),
        Fault::ClockJump { at_ms, target, by_ms } => {
            smaller_signed(by_ms).into_iter().map(|by_ms| Fault::ClockJump { at_ms, target, by_ms }).collect()
        }
        Fault::ClockDrift { at_ms, target, ppm } => {
            smaller_signed(ppm).into_iter().map(|ppm| Fault::ClockDrift { at_ms, target, ppm }).collect()
        }
        Fault::NetworkDelay { at_ms, from, to, extra_ms, duration_ms } => {
            let extras = halve(extra_ms, 1).into_iter().map(|extra| Fault::NetworkDelay {
                at_ms,
                from,
                to,
                extra_ms: extra,
                duration_ms,
            });
            let durations = halve(duration_ms, 1).into_iter().map(|duration| Fault::NetworkDelay {
                at_ms,
                from,
                to,
                extra_ms,
                duration_ms: duration,
            });
            extras.chain(durations).collect()
        }
        Fault::Partition { at_ms, between, duration_ms, one_way } => halve(duration_ms, 1)
            .into_iter()
            .map(|duration| Fault::Partition { at_ms, between, duration_ms: duration, one_way })
            .collect(),
        Fault::RedisRestart { at_ms, target, down_ms } => {
            halve(down_ms, 0).into_iter().map(|down| Fault::RedisRestart { at_ms, target, down_ms: down }).collect()
        }
        Fault::DbSlow { at_ms, factor, duration_ms } => halve(duration_ms, 1)
            .into_iter()
            .map(|duration| Fault::DbSlow { at_ms, factor, duration_ms: duration })
            .collect(),
        Fault::OomKill { .. }
        | Fault::HostLoss { .. }
        | Fault::RedisFailover { .. }
        | Fault::ConsensusLeaderLoss { .. } => Vec::new(),
    }
}

/// Smaller magnitudes of a signed size (a clock jump, a drift), each
/// keeping its sign: which way a clock goes is not a size to shrink.
fn smaller_signed(value: i64) -> Vec<i64> {
    halve(value.unsigned_abs(), 1)
        .into_iter()
        .map(|magnitude| {
            let magnitude = i64::try_from(magnitude).unwrap_or(1);
            if value < 0 { -magnitude } else { magnitude }
        })
        .collect()
}

/// Earlier times for a fault, no earlier than the window's start: halfway
/// there, then a second sooner.
fn earlier(at_ms: u64, window_start_ms: u64) -> Vec<u64> {
    let mut times = Vec::new();
    if at_ms > window_start_ms {
        times.push(window_start_ms + (at_ms - window_start_ms) / 2);
        if at_ms >= window_start_ms + 1000 {
            times.push(at_ms - 1000);
        }
    }
    times
}

/// Smaller values no lower than `floor`: half, then a second less.
fn halve(value: u64, floor: u64) -> Vec<u64> {
    let mut values = Vec::new();
    if value / 2 >= floor && value / 2 < value {
        values.push(value / 2);
    }
    if value >= floor + 1000 {
        values.push(value - 1000);
    }
    values
}

/// The same fault, striking at another time.
fn moved_to(fault: &Fault, to_ms: u64) -> Fault {
    let mut moved = fault.clone();
    *moved.at_ms_mut() = to_ms;
    moved
}

/// One fault's random fields being drawn: the explorer's generator, the
/// time already drawn and the parties the base scenario has. Every field
/// is drawn in a fixed order, so the same seed gives the same search.
struct FaultDraw<'a> {
    rng: &'a mut SimRng,
    at_ms: u64,
    instances: u8,
    redis_nodes: u8,
}

impl FaultDraw<'_> {
    /// A fault of the template's kind with every field drawn afresh.
    fn like(&mut self, template: &Fault) -> Fault {
        let at_ms = self.at_ms;
        match template {
            Fault::OomKill { .. } | Fault::HostLoss { .. } => self.kill(matches!(template, Fault::OomKill { .. })),
            // Stop-the-world pauses of minutes are on record (Kleppmann 2016).
            Fault::GcPause { .. } => Fault::GcPause { at_ms, target: self.victim(), duration_ms: self.seconds(1, 300) },
            Fault::ClockJump { .. } => self.clock_jump(),
            Fault::ClockDrift { .. } => self.clock_drift(),
            Fault::NetworkDelay { .. } => self.network_delay(),
            Fault::Partition { .. } => Fault::Partition {
                at_ms,
                between: [self.victim(), self.resource()],
                duration_ms: self.seconds(1, 120),
                one_way: self.rng.below(2) == 0,
            },
            Fault::RedisRestart { .. } => {
                Fault::RedisRestart { at_ms, target: self.redis_node(), down_ms: self.seconds(0, 30) }
            }
            Fault::RedisFailover { .. } => Fault::RedisFailover { at_ms, target: self.redis_node() },
            Fault::ConsensusLeaderLoss { .. } => Fault::ConsensusLeaderLoss { at_ms },
            Fault::DbSlow { .. } => self.db_slow(),
        }
    }

    /// A whole number of seconds between `low` and `high`, in ms.
    fn seconds(&mut self, low: u64, high: u64) -> u64 {
        self.rng.between(low, high) * 1000
    }

    fn redis_node(&mut self) -> Target {
        Target::Party(Party::Redis(RedisNodeId(u8::try_from(self.rng.below(u64::from(self.redis_nodes))).unwrap_or(0))))
    }

    /// Mostly the holder, whoever it is when the fault strikes; now and then
    /// an instance by name.
    fn victim(&mut self) -> Target {
        if self.rng.below(4) == 0 {
            Target::Party(Party::Instance(InstanceId(
                u8::try_from(self.rng.below(u64::from(self.instances))).unwrap_or(0),
            )))
        } else {
            Target::Holder
        }
    }

    /// Something an instance talks to: storage, the database, the Redis
    /// nodes, the consensus store.
    fn resource(&mut self) -> Target {
        match self.rng.below(5) {
            0 => Target::Party(Party::Storage),
            1 => Target::Party(Party::Db),
            2 => Target::AllRedis,
            3 => Target::Party(Party::Consensus),
            _ => Target::Party(Party::Redis(RedisNodeId(0))),
        }
    }

    /// An OOM kill or a host loss of a victim, restarted or not.
    fn kill(&mut self, oom: bool) -> Fault {
        let at_ms = self.at_ms;
        let target = self.victim();
        let restart_after_ms = (self.rng.below(2) == 0).then(|| self.seconds(0, 60));
        if oom {
            Fault::OomKill { at_ms, target, restart_after_ms }
        } else {
            Fault::HostLoss { at_ms, target, restart_after_ms }
        }
    }

    /// A victim's or a Redis node's clock stepped forward or back.
    fn clock_jump(&mut self) -> Fault {
        let target = if self.rng.below(2) == 0 { self.victim() } else { self.redis_node() };
        let magnitude = i64::try_from(self.seconds(1, 120)).unwrap_or(1000);
        let by_ms = if self.rng.below(2) == 0 { magnitude } else { -magnitude };
        Fault::ClockJump { at_ms: self.at_ms, target, by_ms }
    }

    /// A victim's or a Redis node's clock running fast or slow.
    fn clock_drift(&mut self) -> Fault {
        let target = if self.rng.below(2) == 0 { self.victim() } else { self.redis_node() };
        let magnitude = i64::try_from(self.rng.between(1_000, 200_000)).unwrap_or(1_000);
        let ppm = if self.rng.below(2) == 0 { magnitude } else { -magnitude };
        Fault::ClockDrift { at_ms: self.at_ms, target, ppm }
    }

    /// Messages between a victim and a resource delayed, either way.
    fn network_delay(&mut self) -> Fault {
        let (from, to) =
            if self.rng.below(2) == 0 { (self.victim(), self.resource()) } else { (self.resource(), self.victim()) };
        Fault::NetworkDelay {
            at_ms: self.at_ms,
            from,
            to,
            extra_ms: self.seconds(1, 120),
            duration_ms: self.seconds(1, 30),
        }
    }

    fn db_slow(&mut self) -> Fault {
        Fault::DbSlow {
            at_ms: self.at_ms,
            factor: f64::from(u32::try_from(self.rng.between(2, 50)).unwrap_or(2)),
            duration_ms: self.seconds(1, 120),
        }
    }
}

/// A schedule in a few words: "a 31 s GC pause on the holder".
fn describe(faults: &[Fault]) -> String {
    let parts: Vec<String> = faults.iter().map(ToString::to_string).collect();
    parts.join(" + ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(at_ms: u64, kind: &'static str) -> Finding {
        Finding { at_ms, kind, text: kind.to_owned(), event: 0, cause: None }
    }

    #[test]
    fn a_search_spends_its_budget_on_fewer_faults_first() {
        let counts: Vec<u32> = (0..9).map(|index| faults_in_schedule(index, 9, 3)).collect();
        assert_eq!(counts, [1, 1, 1, 2, 2, 2, 3, 3, 3]);
        // A budget that does not divide: the last part is the shorter.
        let counts: Vec<u32> = (0..5).map(|index| faults_in_schedule(index, 5, 3)).collect();
        assert_eq!(counts, [1, 1, 2, 2, 3]);
        assert!((0..100).all(|index| faults_in_schedule(index, 100, 1) == 1));
        assert_eq!(faults_in_schedule(0, 1, 8), 1, "a budget of one schedule tries one fault");
    }

    #[test]
    fn a_story_keeps_the_finding_that_met_the_goal_however_late_it_comes() {
        // A fault, seven findings before the one that met the goal, and one after it.
        let mut findings = vec![finding(0, "fault")];
        findings.extend((1..=7).map(|second| finding(second * 1_000, "rerun")));
        findings.push(finding(8_000, "corrupted_report"));
        findings.push(finding(9_000, "late_period"));
        let told: Vec<&str> = story_findings(&findings, Some(8)).iter().map(|finding| finding.kind).collect();
        assert_eq!(told.len(), STORY_FINDINGS);
        assert_eq!(told.last(), Some(&"corrupted_report"), "{told:?}");
        assert!(!told.contains(&"fault"), "the faults are the schedule, not its story: {told:?}");
        // One among the first six is told where it comes, and nothing is added.
        let early: Vec<u64> = story_findings(&findings, Some(2)).iter().map(|finding| finding.at_ms).collect();
        assert_eq!(early, [1_000, 2_000, 3_000, 4_000, 5_000, 6_000]);
        assert_eq!(story_findings(&findings, None).len(), STORY_FINDINGS);
    }
}
