//! The lab's one piece of state and the actions that change it.
//!
//! Everything the user can change lives here: the scenario, the strategy, the
//! cursor, playback, compare mode, log filters, the fault form, messages. The
//! run is derived from (scenario, strategy) and recomputed by the reducer only
//! when one of them changes, so the panels are functions of (run, cursor).
//! The reducer is pure: no browser calls, so it behaves the same in tests.
//!
//! A run that does not fit in [`SYNC_EVENTS`] becomes a [`PendingRun`]: the
//! lab goes on showing the run it has (or, at the start, the post's night),
//! the page advances the job one slice per task (`effects::use_run_slices`)
//! and the reducer adopts the result, or drops it on Stop.

use crate::lab::run::{CompareRuns, RunJob, VerdictJob};
use crate::ui::event_log::{FilterChange, LogFilters};
use crate::ui::message::{Message, Tone};
use crate::ui::run::{LabRun, RunRef};
use crate::ui::shared::Shared;
use locklab_engine::report::StrategyReport;
use locklab_engine::scenario::Target;
use locklab_engine::{Fault, Scenario, StrategyId};
use std::cell::RefCell;
use std::rc::Rc;
use yew::Reducible;

/// Playback speeds, as ratios of simulated to real time.
pub const SPEEDS: [f64; 9] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];
/// The speed the lab starts at.
pub const DEFAULT_SPEED_RATIO: f64 = 8.0;
/// Events the reducer simulates before a run becomes a [`PendingRun`]: every
/// built-in fits (its longest run logs about 36,000), and this much takes
/// a few frames' time at most in wasm.
pub const SYNC_EVENTS: u32 = 40_000;

/// The fault form's parameters: what "inject" uses.
#[derive(Clone, Debug, PartialEq)]
pub struct InjectParams {
    /// A party name as the format spells it, or `holder`.
    pub target: String,
    pub gc_pause_ms: u64,
    pub restart_after_ms: u64,
    pub clock_jump_ms: i64,
    pub partition_ms: u64,
    pub delay_extra_ms: u64,
    pub delay_ms: u64,
    pub redis_down_ms: u64,
    pub db_slow_factor: f64,
    pub db_slow_ms: u64,
}

impl Default for InjectParams {
    fn default() -> Self {
        InjectParams {
            target: "holder".to_owned(),
            gc_pause_ms: 60_000,
            restart_after_ms: 20_000,
            clock_jump_ms: 30_000,
            partition_ms: 60_000,
            delay_extra_ms: 5_000,
            delay_ms: 60_000,
            redis_down_ms: 5_000,
            db_slow_factor: 20.0,
            db_slow_ms: 60_000,
        }
    }
}

/// The faults the inject buttons add.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InjectKind {
    OomKill,
    OomKillRestart,
    GcPause,
    HostLoss,
    HostLossRestart,
    ClockJump,
    PartitionFromLock,
    PartitionFromDb,
    NetworkDelay,
    RedisRestart,
    RedisFailover,
    LeaderLoss,
    DbSlow,
}

/// Everything that can happen to the state.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    SelectStrategy(StrategyId),
    TogglePlay,
    Pause,
    /// Move the cursor to a time (a click or drag on the timeline, a finding).
    Seek(u64),
    /// Playback moved the cursor on; stops at the end.
    Advance(u64),
    StepForward,
    StepBack,
    /// Move the cursor by a signed percentage of the run.
    ScrubPercent(i64),
    SetSpeed(f64),
    Reset,
    SetSeed(u64),
    SetInject(InjectParams),
    Inject(InjectKind),
    /// The fault script as edited; refused as a whole if invalid.
    SetFaults(Vec<Fault>),
    /// The same scenario with the job runner's redelivery off: each lock on
    /// its own, apart from the job that asks no lock.
    WithoutRedelivery,
    /// A scenario document from a file or a built-in; `source` names it in messages.
    LoadScenario {
        text: String,
        source: String,
    },
    SetCompare(bool),
    /// Leave compare mode for one strategy's run.
    OpenAlone(StrategyId),
    /// A change to the event log's filters.
    Filter(FilterChange),
    SetNarrow(bool),
    /// The page advanced the pending run `id` a slice; it is this far along.
    RunProgress {
        id: u32,
        permille: u32,
    },
    /// The pending run `id` is done: show it.
    RunDone(u32),
    /// The verdict job `id` is done: the picker shows its verdicts.
    VerdictsDone(u32),
    /// Drop the pending run; the lab keeps the run it shows.
    StopRun,
    Dismiss,
    /// A message from a side effect (a file that could not be read, a save).
    Notify(Message),
}

/// What is known of each strategy's verdict on one scenario.
#[derive(Debug)]
pub struct Verdicts {
    pub scenario: Rc<Scenario>,
    pub reports: Vec<StrategyReport>,
}

/// Runs being computed a slice per frame, and what to show once they are done.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingRun {
    /// Tells this job's slices and answers from an earlier, replaced one's.
    pub id: u32,
    pub job: Shared<RefCell<RunJob>>,
    pub strategy: StrategyId,
    pub compare: bool,
    pub progress_permille: u32,
    /// The cursor to set once shown (a share link's); otherwise it stays.
    pub cursor_ms: Option<u64>,
}

/// The lab's state. Equal when nothing the user sees could differ: the
/// scenario, the runs and a pending job are compared by identity (a changed
/// one is always made again), which is cheap enough for every animation
/// frame.
#[derive(Clone, Debug, PartialEq)]
pub struct LabState {
    pub scenario: Shared<Scenario>,
    pub strategy: StrategyId,
    pub run: RunRef,
    /// Present while compare mode is on.
    pub compare: Option<CompareRuns>,
    pub cursor_ms: u64,
    pub playing: bool,
    pub speed_ratio: f64,
    /// What the event log hides.
    pub filters: LogFilters,
    pub inject: InjectParams,
    pub message: Option<Message>,
    /// Narrow screen: the topology stacks its columns tighter.
    pub narrow: bool,
    /// The compact view for an iframe in a post (`?embed`); fixed at start.
    pub embed: bool,
    /// Runs being computed, shown once done.
    pub pending: Option<PendingRun>,
    /// The last [`PendingRun::id`] given.
    last_job: u32,
    /// The verdict of every strategy on the scenario shown, as far as known:
    /// the picker shows all six, so the night's lesson is on the first screen.
    pub verdicts: Shared<Verdicts>,
    /// The verdicts still being computed, a slice per task after the shown run.
    pub verdict_job: Option<(u32, Shared<RefCell<VerdictJob>>)>,
}

impl LabState {
    /// The lab on `scenario` under `strategy`.
    pub fn new(scenario: Scenario, strategy: StrategyId) -> LabState {
        LabState::start(scenario, strategy, false, None)
    }

    /// The lab as a page opens it, on a scenario from a link or from storage.
    /// One too long to run before the first frame is pending at once, over
    /// the post's night (what a fresh lab shows), so that Stop leaves a lab
    /// that works.
    /// The story is run only when the scenario asked for cannot be shown at
    /// once (the first frame waits for one run, not two).
    pub fn start(scenario: Scenario, strategy: StrategyId, compare: bool, cursor_ms: Option<u64>) -> LabState {
        let mut job = RunJob::new(Rc::new(scenario), wanted(strategy, compare));
        if !job.step(SYNC_EVENTS) {
            let mut state = LabState::fallback(strategy).pend(job, strategy, compare);
            if let Some(pending) = &mut state.pending {
                pending.cursor_ms = cursor_ms;
            }
            return state;
        }
        match job.finish().map(|runs| LabState::shown(runs, strategy, compare)) {
            Ok(Some(shown)) => {
                let known = shown.shown_runs();
                shown.with_verdicts(&known).seek(cursor_ms.unwrap_or(0))
            }
            // `wanted` always runs the strategy asked for.
            Ok(None) => LabState::fallback(strategy),
            Err(problem) => LabState::fallback(strategy).error(format!("{problem}. The current run is unchanged.")),
        }
    }

    /// The lab with a fresh lab's scenario, the seed's story.
    fn fallback(strategy: StrategyId) -> LabState {
        let mut job = RunJob::new(Rc::new(crate::lab::run::default_scenario()), vec![strategy]);
        while !job.step(u32::MAX) {}
        // The story is a built-in, far under the hard cap: it runs whole.
        LabState::shown(job.finish().unwrap_or_default(), strategy, false)
            .unwrap_or_else(|| unreachable!("the story ran under the strategy asked"))
    }

    /// The state showing `runs` (one, or all six in compare mode).
    fn shown(runs: Vec<LabRun>, strategy: StrategyId, compare: bool) -> Option<LabState> {
        let runs: Vec<RunRef> = runs.into_iter().map(|run| Shared(Rc::new(run))).collect();
        let run = runs.iter().find(|run| run.strategy == strategy)?.clone();
        Some(LabState {
            scenario: Shared(Rc::clone(&run.scenario)),
            strategy,
            compare: compare.then(|| Shared(Rc::new(runs))),
            run,
            cursor_ms: 0,
            playing: false,
            speed_ratio: DEFAULT_SPEED_RATIO,
            filters: LogFilters::default(),
            inject: InjectParams::default(),
            message: None,
            narrow: false,
            embed: false,
            pending: None,
            last_job: 0,
            verdicts: Shared(Rc::new(Verdicts { scenario: Rc::default(), reports: Vec::new() })),
            verdict_job: None,
        })
    }

    /// Computes what `scenario` under `strategy` shows (all six strategies in
    /// compare mode): at once if it fits in [`SYNC_EVENTS`], otherwise as a
    /// pending run, replacing any other.
    fn compute(mut self, scenario: Rc<Scenario>, strategy: StrategyId, compare: bool) -> LabState {
        let mut job = RunJob::new(scenario, wanted(strategy, compare));
        self.pending = None;
        if job.step(SYNC_EVENTS) {
            return self.adopt(job, strategy, compare, None);
        }
        self.pend(job, strategy, compare)
    }

    /// Leaves `job`, too long for one frame, to run a slice at a time.
    fn pend(mut self, job: RunJob, strategy: StrategyId, compare: bool) -> LabState {
        self.last_job = self.last_job.wrapping_add(1);
        self.pending = Some(PendingRun {
            id: self.last_job,
            progress_permille: job.progress_permille(),
            job: Shared(Rc::new(RefCell::new(job))),
            strategy,
            compare,
            cursor_ms: None,
        });
        self
    }

    /// Shows a finished job's runs, or says why there are none.
    fn adopt(self, job: RunJob, strategy: StrategyId, compare: bool, cursor_ms: Option<u64>) -> LabState {
        let runs = match job.finish() {
            Ok(runs) => runs,
            Err(problem) => return self.error(format!("{problem}. The current run is unchanged.")),
        };
        let Some(shown) = LabState::shown(runs, strategy, compare) else {
            return self;
        };
        let cursor_ms = cursor_ms.unwrap_or(self.cursor_ms);
        let known = shown.shown_runs();
        let next = LabState {
            scenario: shown.scenario,
            strategy,
            run: shown.run,
            compare: shown.compare,
            pending: None,
            ..self
        };
        next.with_verdicts(&known).seek(cursor_ms)
    }

    /// The runs on screen: the one, or compare mode's six.
    fn shown_runs(&self) -> Vec<RunRef> {
        self.compare.as_ref().map_or_else(|| vec![self.run.clone()], |runs| runs.0.to_vec())
    }

    /// Keeps what is known of every strategy's verdict on the scenario shown
    /// (the runs just shown add theirs), and starts computing the rest.
    fn with_verdicts(mut self, shown: &[RunRef]) -> LabState {
        let scenario = Rc::clone(&self.scenario.0);
        let mut reports =
            if Rc::ptr_eq(&self.verdicts.scenario, &scenario) { self.verdicts.reports.clone() } else { Vec::new() };
        for run in shown {
            if !reports.iter().any(|report| report.strategy == run.strategy) {
                reports.push(run.report.clone());
            }
        }
        let missing: Vec<StrategyId> =
            StrategyId::ALL.into_iter().filter(|id| !reports.iter().any(|report| report.strategy == *id)).collect();
        let running = self.verdict_job.as_ref().is_some_and(|(_, job)| Rc::ptr_eq(job.borrow().scenario(), &scenario));
        if !running {
            self.verdict_job = (!missing.is_empty()).then(|| {
                self.last_job = self.last_job.wrapping_add(1);
                (self.last_job, Shared(Rc::new(RefCell::new(VerdictJob::new(Rc::clone(&scenario), missing)))))
            });
        }
        self.verdicts = Shared(Rc::new(Verdicts { scenario, reports }));
        self
    }

    /// The verdict job `id` is done: its verdicts join the known ones.
    fn verdicts_done(mut self, id: u32) -> LabState {
        let Some((_, job)) = self.verdict_job.take_if(|(job_id, _)| *job_id == id) else {
            return self;
        };
        let job = std::mem::replace(&mut *job.borrow_mut(), VerdictJob::new(Rc::default(), Vec::new()));
        if !Rc::ptr_eq(job.scenario(), &self.verdicts.scenario) {
            return self;
        }
        let mut reports = self.verdicts.reports.clone();
        for report in job.finish() {
            if !reports.iter().any(|known| known.strategy == report.strategy) {
                reports.push(report);
            }
        }
        let scenario = Rc::clone(&self.verdicts.scenario);
        self.verdicts = Shared(Rc::new(Verdicts { scenario, reports }));
        self
    }

    /// The pending run, done: shown if it is still the one wanted.
    fn run_done(mut self, id: u32) -> LabState {
        let Some(pending) = self.pending.take_if(|pending| pending.id == id) else {
            return self;
        };
        // The page's slicer may still hold the job: it is taken, not unwrapped.
        let job = std::mem::replace(&mut *pending.job.borrow_mut(), RunJob::new(Rc::default(), Vec::new()));
        self.adopt(job, pending.strategy, pending.compare, pending.cursor_ms)
    }

    pub fn duration_ms(&self) -> u64 {
        self.run.duration_ms()
    }

    fn error(mut self, text: String) -> LabState {
        self.message = Some(Message { tone: Tone::Error, text });
        self
    }

    fn info(mut self, text: String) -> LabState {
        self.message = Some(Message { tone: Tone::Info, text });
        self
    }

    /// Adopts a new scenario if it is valid; otherwise keeps the current run
    /// and says what is wrong.
    fn try_scenario(self, scenario: Scenario, what: &str) -> LabState {
        if let Err(error) = scenario.validate() {
            return self.error(format!("{what} was refused: {error}. The current run is unchanged."));
        }
        let mut next = self.with_scenario(Rc::new(scenario));
        next.message = None;
        next
    }

    fn with_scenario(self, scenario: Rc<Scenario>) -> LabState {
        let (strategy, compare) = (self.strategy, self.compare.is_some());
        self.compute(scenario, strategy, compare)
    }

    fn inject(self, kind: InjectKind) -> LabState {
        let params = self.inject.clone();
        let Some(target) = Target::parse(&params.target) else {
            return self.error(format!("`{}` is not a party the lab knows", params.target));
        };
        let Some(at_ms) = self.strike_ms(target) else {
            let now = crate::ui::format::t_label(self.cursor_ms);
            return self.error(format!(
                "Nobody holds the lock from {now} to the end of the run, so there is no holder to strike: aim at an instance instead."
            ));
        };
        let waited = (at_ms != self.cursor_ms).then(|| crate::ui::format::t_label(self.cursor_ms));
        let service = Target::parse(self.strategy.lock_service()).unwrap_or(Target::AllRedis);
        let faults = injected(kind, &params, target, at_ms, service);
        let described: Vec<String> = faults.iter().map(ToString::to_string).collect();
        let mut scenario = changed((*self.scenario).clone());
        scenario.faults.extend(faults);
        let what = format!("Injecting \"{}\"", described.join("; "));
        let mut next = self.try_scenario(scenario, &what);
        if next.message.is_none() {
            let waited = waited
                .map(|cursor| format!(" Nobody held the lock at {cursor}, so the strike waits for the next holder."))
                .unwrap_or_default();
            next = next.info(format!(
                "Injected at {}: {}.{waited} The run was recomputed from there on; everything before is unchanged.",
                crate::ui::format::t_label(at_ms),
                described.join("; ")
            ));
        }
        next
    }

    /// When a strike at `target` lands: at the cursor, except that a strike
    /// at "the holder" when nobody holds the lock waits for the next holder
    /// (a first click at t=0 strikes the run that takes it); `None` when
    /// nobody holds it from the cursor to the end.
    fn strike_ms(&self, target: Target) -> Option<u64> {
        if target == Target::Holder { self.run.timeline.holder_strike_ms(self.cursor_ms) } else { Some(self.cursor_ms) }
    }

    fn select_strategy(mut self, strategy: StrategyId) -> LabState {
        if self.pending.as_ref().is_some_and(|pending| pending.strategy == strategy) {
            return self; // already on its way
        }
        if strategy == self.strategy {
            // Back to the run on screen: a switch to another strategy on its
            // way is dropped, a new scenario on its way is not.
            let switching = self
                .pending
                .as_ref()
                .is_some_and(|pending| Rc::ptr_eq(pending.job.borrow().scenario(), &self.scenario.0));
            if switching || self.pending.is_none() {
                self.pending = None;
                return self;
            }
        }
        // A Redis node or the consensus store may not exist under the new strategy.
        let target = self.inject.target.as_str();
        if target.starts_with("redis") || target == "consensus" {
            self.inject.target = "holder".to_owned();
        }
        let computed = self.compare.as_ref().and_then(|runs| runs.0.iter().find(|run| run.strategy == strategy));
        if let Some(run) = computed.cloned() {
            self.strategy = strategy;
            self.run = run;
            self.pending = None;
            return self;
        }
        let scenario = Rc::clone(&self.scenario.0);
        self.compute(scenario, strategy, false)
    }

    fn seek(mut self, at_ms: u64) -> LabState {
        self.cursor_ms = at_ms.min(self.duration_ms());
        self
    }
}

/// A scenario the user has changed: the built-in's promised outcome and its
/// story no longer describe it, so they go, and the name says it was changed.
/// It is a new document, so it is written in the current format.
fn changed(scenario: Scenario) -> Scenario {
    let mut scenario = scenario.in_current_format();
    scenario.expect.clear();
    scenario.description = None;
    if !scenario.name.ends_with(" (changed)") {
        scenario.name = if scenario.name.is_empty() {
            "Scenario (changed)".to_owned()
        } else {
            format!("{} (changed)", scenario.name)
        };
    }
    scenario
}

/// The faults an inject button adds, with the form's parameters, striking
/// `target` at `at_ms`; `service` is the strategy's lock service, what a
/// partition from the lock and a network delay cut `target` off from.
fn injected(kind: InjectKind, params: &InjectParams, target: Target, at_ms: u64, service: Target) -> Vec<Fault> {
    let db = Target::Party(locklab_engine::ids::Party::Db);
    match kind {
        InjectKind::OomKill | InjectKind::OomKillRestart => vec![Fault::OomKill {
            at_ms,
            target,
            restart_after_ms: (kind == InjectKind::OomKillRestart).then_some(params.restart_after_ms),
        }],
        InjectKind::HostLoss | InjectKind::HostLossRestart => vec![Fault::HostLoss {
            at_ms,
            target,
            restart_after_ms: (kind == InjectKind::HostLossRestart).then_some(params.restart_after_ms),
        }],
        InjectKind::GcPause => vec![Fault::GcPause { at_ms, target, duration_ms: params.gc_pause_ms }],
        InjectKind::ClockJump => vec![Fault::ClockJump { at_ms, target, by_ms: params.clock_jump_ms }],
        InjectKind::PartitionFromLock => {
            vec![Fault::Partition {
                at_ms,
                between: [target, service],
                duration_ms: params.partition_ms,
                one_way: false,
            }]
        }
        InjectKind::PartitionFromDb => {
            vec![Fault::Partition { at_ms, between: [target, db], duration_ms: params.partition_ms, one_way: false }]
        }
        InjectKind::NetworkDelay => delayed_both_ways(params, target, at_ms, service),
        InjectKind::RedisRestart => vec![Fault::RedisRestart { at_ms, target, down_ms: params.redis_down_ms }],
        InjectKind::RedisFailover => vec![Fault::RedisFailover { at_ms, target }],
        InjectKind::LeaderLoss => vec![Fault::ConsensusLeaderLoss { at_ms }],
        InjectKind::DbSlow => {
            vec![Fault::DbSlow { at_ms, factor: params.db_slow_factor, duration_ms: params.db_slow_ms }]
        }
    }
}

/// A network delay between `target` and the lock service in both
/// directions: requests and their replies are late.
fn delayed_both_ways(params: &InjectParams, target: Target, at_ms: u64, service: Target) -> Vec<Fault> {
    let (extra_ms, duration_ms) = (params.delay_extra_ms, params.delay_ms);
    vec![
        Fault::NetworkDelay { at_ms, from: target, to: service, extra_ms, duration_ms },
        Fault::NetworkDelay { at_ms, from: service, to: target, extra_ms, duration_ms },
    ]
}

/// The strategies a view needs: the one shown, or all six to compare.
fn wanted(strategy: StrategyId, compare: bool) -> Vec<StrategyId> {
    if compare { StrategyId::ALL.to_vec() } else { vec![strategy] }
}

/// The reducer's actions that take more than a field's change, one function each.
impl LabState {
    fn toggle_play(mut self) -> LabState {
        if !self.playing && self.cursor_ms >= self.duration_ms() {
            self.cursor_ms = 0; // play again from the start
        }
        self.playing = !self.playing;
        self
    }

    /// Playback moved the cursor on; it stops at the end. A frame that
    /// arrived after a pause changes nothing.
    fn advance(self, at_ms: u64) -> LabState {
        if !self.playing {
            return self;
        }
        let mut state = self.seek(at_ms);
        if state.cursor_ms >= state.duration_ms() {
            state.playing = false;
        }
        state
    }

    fn step_forward(self) -> LabState {
        let to = self.run.timeline.next_event_ms(self.cursor_ms).unwrap_or(self.duration_ms());
        LabState { playing: false, ..self.seek(to) }
    }

    fn step_back(self) -> LabState {
        let to = self.run.timeline.previous_event_ms(self.cursor_ms).unwrap_or(0);
        LabState { playing: false, ..self.seek(to) }
    }

    fn scrub_percent(self, percent: i64) -> LabState {
        let step = i64::try_from(self.duration_ms() / 100).unwrap_or(i64::MAX / 200);
        let to = self.cursor_ms.saturating_add_signed(step.saturating_mul(percent));
        self.seek(to)
    }

    /// A speed among the lab's; one that is not a speed changes nothing.
    fn set_speed(self, speed_ratio: f64) -> LabState {
        if !speed_ratio.is_finite() || speed_ratio <= 0.0 {
            return self;
        }
        LabState { speed_ratio: speed_ratio.clamp(SPEEDS[0], SPEEDS[SPEEDS.len() - 1]), ..self }
    }

    fn set_seed(self, seed: u64) -> LabState {
        let mut scenario = changed((*self.scenario).clone());
        scenario.seed = seed;
        self.try_scenario(scenario, "The seed")
    }

    fn without_redelivery(self) -> LabState {
        let mut scenario = changed((*self.scenario).clone());
        scenario.world.redeliver_after_crash = false;
        let next = self.try_scenario(scenario, "The night without the redelivered job");
        if next.message.is_some() {
            return next;
        }
        next.info(
            "The same night, seed and faults, but the restarted process is not handed the job it died in: what each lock does on its own.".to_owned(),
        )
    }

    fn set_faults(self, faults: Vec<Fault>) -> LabState {
        let mut scenario = changed((*self.scenario).clone());
        scenario.faults = faults;
        self.try_scenario(scenario, "That change to the fault script")
    }

    /// A scenario document from `source`, shown from its start if it is valid.
    fn load_scenario(self, text: &str, source: &str) -> LabState {
        match Scenario::from_json(text) {
            Ok(scenario) => {
                let name = if scenario.name.is_empty() { source.to_owned() } else { scenario.name.clone() };
                let mut next = self.try_scenario(scenario, source);
                if next.message.is_none() {
                    next.cursor_ms = 0;
                    next.playing = false;
                    next = next.info(format!("Loaded \"{name}\" from {source}."));
                }
                next
            }
            Err(error) => self.error(format!("{source} could not be loaded: {error}. The current run is unchanged.")),
        }
    }

    fn compare_all(self) -> LabState {
        let (scenario, strategy) = (Rc::clone(&self.scenario.0), self.strategy);
        self.compute(scenario, strategy, true)
    }

    fn run_progress(mut self, id: u32, permille: u32) -> LabState {
        if let Some(pending) = self.pending.as_mut().filter(|pending| pending.id == id) {
            pending.progress_permille = permille;
        }
        self
    }

    fn stop_run(self) -> LabState {
        match self.pending {
            Some(_) => LabState { pending: None, ..self }
                .info("Stopped before that run was done; the lab shows the run it had, unchanged.".to_owned()),
            None => self,
        }
    }
}

impl Reducible for LabState {
    type Action = Action;

    /// Each action is one function of the state; an action that changes
    /// nothing keeps the state as it was, so nothing is drawn again.
    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let state = (*self).clone();
        let next = match action {
            Action::SelectStrategy(strategy) => state.select_strategy(strategy),
            Action::TogglePlay => state.toggle_play(),
            Action::Pause => LabState { playing: false, ..state },
            Action::Seek(at_ms) => state.seek(at_ms),
            Action::Advance(at_ms) => state.advance(at_ms),
            Action::StepForward => state.step_forward(),
            Action::StepBack => state.step_back(),
            Action::ScrubPercent(percent) => state.scrub_percent(percent),
            Action::SetSpeed(speed_ratio) => state.set_speed(speed_ratio),
            Action::Reset => LabState { cursor_ms: 0, playing: false, message: None, ..state },
            Action::SetSeed(seed) => state.set_seed(seed),
            Action::SetInject(inject) => LabState { inject, ..state },
            Action::WithoutRedelivery => state.without_redelivery(),
            Action::Inject(kind) => state.inject(kind),
            Action::SetFaults(faults) => state.set_faults(faults),
            Action::LoadScenario { text, source } => state.load_scenario(&text, &source),
            Action::SetCompare(true) => state.compare_all(),
            Action::SetCompare(false) => LabState { compare: None, pending: None, ..state },
            Action::OpenAlone(strategy) => LabState { compare: None, pending: None, ..state.select_strategy(strategy) },
            Action::RunProgress { id, permille } => state.run_progress(id, permille),
            Action::RunDone(id) => state.run_done(id),
            Action::VerdictsDone(id) => state.verdicts_done(id),
            Action::StopRun => state.stop_run(),
            Action::Filter(change) => LabState { filters: state.filters.changed(change), ..state },
            Action::SetNarrow(narrow) => LabState { narrow, ..state },
            Action::Dismiss => LabState { message: None, ..state },
            Action::Notify(message) => LabState { message: Some(message), ..state },
        };
        if next == *self { self } else { Rc::new(next) }
    }
}
