//! Claims: what a text says about a run, in a small language the engine
//! checks against that run. Every text the lab shows about a built-in run (a
//! story step, a scenario's description and `why`, a quiz card's story and
//! explanation) lists its claims beside it, and the tests hold each claim to
//! the run's timeline and report and each text to its claims
//! ([`check_text`]): a sentence that names a holder, a pause target, an
//! order of events or a count the run does not have fails the build.
//!
//! A claim is one of
//! - a verdict: `safe`, `at_risk`, `unsafe`; `on_time`, `late`, `missed`, `behind`;
//!   `efficient`, `wasteful`;
//! - `finding:KIND` / `no_finding:KIND`: the report has (has no) such finding;
//! - `count:finding:KIND=N` or `count:METRIC=N` (a metric's key, as the pages
//!   name it: `stale-accepted`, `side-effects`, `wasted`…): exactly N;
//! - a moment with its actor, `MOMENT[#n]@X`: it happens with instance X
//!   taking part (`grant#1@b`: the first grant is b's; `fault:gc_pause@a`: a
//!   GC pause strikes a; `post@c`; `write:stale@b`; `token:1@b`: a belief or
//!   write of b carries token 1);
//! - `order:M1<M2`: the first M1 comes before the first M2, each a moment with
//!   an optional actor (`order:post@c<post@a`);
//! - `cause:KIND@X=HELD`: a finding of that kind was caused by a write of X
//!   holding HELD (`lock`, `belief`, `nothing`, `former`, `no_lock`);
//! - `time:MOMENT[@X]=HH:MM[:SS[.s]]`: the moment falls at that wall-clock
//!   time, to the precision written (`time:grant#2@a=02:05`);
//! - `seconds:METRIC=N`: a duration metric is N whole seconds (`seconds:delay=460`).
//!
//! Every number a text states is one a claim states or one the scenario
//! sets ([`check_text`]): a count, a token, a time or a duration the run
//! produced needs its claim; a fault's time or length, a TTL or the job's
//! length is the scenario's own.
//!
//! A moment names a point of a run by what happens there, never by a time:
//! `kind[:detail][#n]`, the n-th (from 1) of `grant`, `belief`,
//! `fault:KIND`, `finding:KIND`, `write:accepted|stale|refused|no_effect`,
//! `post`, or `end`.

use crate::ids::{InstanceId, Token};
use crate::report::{Held, Metric, StrategyReport};
use crate::scenario::{Efficiency, Liveness, Safety, Scenario, StrategySettings};
use crate::view::{Timeline, WriteVerdict};

/// What a write became, as a moment names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteKind {
    Accepted,
    /// Accepted, and it landed on a newer run's data (a `stale_write_accepted` finding).
    Stale,
    /// Refused by a fence.
    Refused,
    NoEffect,
}

/// A moment of a run, by what happens there: `kind[:detail][#n]`, the n-th
/// (from 1; the first when `#n` is left out) of
/// - `grant`: the lock service grants the lock;
/// - `belief`: an instance comes to believe it holds the lock;
/// - `fault:KIND`: a fault of that kind strikes (`fault:oom_kill`);
/// - `finding:KIND`: the report finds that (`finding:overlap`, `finding:stale_write_rejected`);
/// - `write:accepted|stale|refused|no_effect`: a write with that outcome;
/// - `post`: a Slack post;
/// - `token:N`: a belief or a write carrying token N;
/// - `end`: the run's end (no `#n`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Moment {
    Grant(u32),
    Belief(u32),
    Fault(String, u32),
    Finding(String, u32),
    Write(WriteKind, u32),
    Post(u32),
    Token(Token, u32),
    End,
}

/// Where a moment falls in a run: its time and, when one event is the moment,
/// that event's index in the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    pub at_ms: u64,
    pub event: Option<u32>,
}

/// One occurrence of a moment's kind, with the instances taking part.
struct Occurrence {
    found: Found,
    actors: Vec<InstanceId>,
}

impl Moment {
    pub fn parse(text: &str) -> Result<Moment, String> {
        let (head, nth) = match text.split_once('#') {
            Some((head, number)) => match number.parse::<u32>() {
                Ok(nth) if nth >= 1 => (head, nth),
                _ => return Err(format!("`#{number}` is not a count from 1")),
            },
            None => (text, 1),
        };
        let (kind, detail) = match head.split_once(':') {
            Some((kind, detail)) => (kind, Some(detail)),
            None => (head, None),
        };
        let named = |what: &str| match detail {
            Some(detail) if !detail.is_empty() => Ok(detail.to_owned()),
            _ => Err(format!("`{kind}` needs a {what}: `{kind}:…`")),
        };
        let bare = |moment: Moment| match detail {
            None => Ok(moment),
            Some(detail) => Err(format!("`{kind}` takes no `:{detail}`")),
        };
        match kind {
            "grant" => bare(Moment::Grant(nth)),
            "belief" => bare(Moment::Belief(nth)),
            "post" => bare(Moment::Post(nth)),
            "end" if !text.contains('#') => bare(Moment::End),
            "end" => Err("`end` takes no `#n`".to_owned()),
            "fault" => Ok(Moment::Fault(named("fault kind")?, nth)),
            "finding" => Ok(Moment::Finding(named("finding kind")?, nth)),
            "token" => named("token number")?
                .parse::<u64>()
                .map(|token| Moment::Token(Token(token), nth))
                .map_err(|_| "`token:N` needs a token number".to_owned()),
            "write" => {
                let verdict = match named("verdict")?.as_str() {
                    "accepted" => WriteKind::Accepted,
                    "stale" => WriteKind::Stale,
                    "refused" => WriteKind::Refused,
                    "no_effect" => WriteKind::NoEffect,
                    other => return Err(format!("`write:{other}`: a write is accepted, stale, refused or no_effect")),
                };
                Ok(Moment::Write(verdict, nth))
            }
            other => Err(format!(
                "`{other}` is not a moment: grant, belief, fault:KIND, finding:KIND, write:VERDICT, post, token:N or end"
            )),
        }
    }

    /// Which occurrence it names (from 1).
    fn nth(&self) -> u32 {
        match self {
            Moment::Grant(nth)
            | Moment::Belief(nth)
            | Moment::Fault(_, nth)
            | Moment::Finding(_, nth)
            | Moment::Write(_, nth)
            | Moment::Post(nth)
            | Moment::Token(_, nth) => *nth,
            Moment::End => 1,
        }
    }

    /// Every occurrence of the moment's kind in the run, in time order.
    fn occurrences(&self, timeline: &Timeline, report: &StrategyReport) -> Vec<Occurrence> {
        let mut found: Vec<Occurrence> = match self {
            Moment::Grant(_) => timeline
                .grants
                .iter()
                .map(|span| occurrence(span.span.from_ms, span.event, vec![span.instance]))
                .collect(),
            Moment::Belief(_) => timeline
                .beliefs
                .iter()
                .map(|span| occurrence(span.span.from_ms, span.event, vec![span.instance]))
                .collect(),
            Moment::Fault(kind, _) => fault_occurrences(kind, timeline),
            Moment::Finding(kind, _) => finding_occurrences(kind, report),
            Moment::Write(verdict, _) => write_occurrences(*verdict, timeline, report),
            Moment::Post(_) => {
                timeline.posts.iter().map(|post| occurrence(post.at_ms, post.event, vec![post.instance])).collect()
            }
            Moment::Token(token, _) => token_occurrences(*token, timeline),
            Moment::End => {
                vec![Occurrence { found: Found { at_ms: timeline.duration_ms, event: None }, actors: Vec::new() }]
            }
        };
        found.sort_by_key(|occurrence| (occurrence.found.at_ms, occurrence.found.event));
        found
    }

    /// Where the moment falls in a run, if it happens there.
    pub fn find(&self, timeline: &Timeline, report: &StrategyReport) -> Option<Found> {
        let nth = usize::try_from(self.nth().saturating_sub(1)).ok()?;
        self.occurrences(timeline, report).get(nth).map(|occurrence| occurrence.found)
    }
}

/// An occurrence at a logged event, with the instances taking part.
fn occurrence(at_ms: u64, event: u32, actors: Vec<InstanceId>) -> Occurrence {
    Occurrence { found: Found { at_ms, event: Some(event) }, actors }
}

/// Every fault of the kind that strikes, with the instances it strikes.
fn fault_occurrences(kind: &str, timeline: &Timeline) -> Vec<Occurrence> {
    timeline
        .faults
        .iter()
        .filter(|mark| mark.fault.kind_name() == kind)
        .map(|mark| {
            occurrence(mark.at_ms, mark.event, mark.targets.iter().filter_map(|party| party.instance()).collect())
        })
        .collect()
}

/// Every finding of the kind, with the instance whose write caused it.
fn finding_occurrences(kind: &str, report: &StrategyReport) -> Vec<Occurrence> {
    report
        .findings
        .iter()
        .filter(|finding| finding.kind == kind)
        .map(|finding| {
            let actors = finding.cause.iter().map(|cause| cause.instance).collect();
            occurrence(finding.at_ms, finding.event, actors)
        })
        .collect()
}

/// Every write with the outcome. The log says only that a write was
/// accepted; whether it landed on a newer run's data is the report's
/// `stale_write_accepted` finding, so an accepted write is stale or not by it.
fn write_occurrences(verdict: WriteKind, timeline: &Timeline, report: &StrategyReport) -> Vec<Occurrence> {
    let stale = |event: u32| {
        report.findings.iter().any(|finding| finding.kind == "stale_write_accepted" && finding.event == event)
    };
    timeline
        .writes
        .iter()
        .filter(|write| match (verdict, write.verdict) {
            (WriteKind::Accepted, WriteVerdict::Accepted) => !stale(write.event),
            (WriteKind::Stale, WriteVerdict::Accepted) => stale(write.event),
            (WriteKind::Refused, WriteVerdict::Rejected { .. }) | (WriteKind::NoEffect, WriteVerdict::NoEffect) => true,
            (
                WriteKind::Accepted | WriteKind::Stale | WriteKind::Refused | WriteKind::NoEffect,
                WriteVerdict::Accepted | WriteVerdict::Rejected { .. } | WriteVerdict::NoEffect,
            ) => false,
        })
        .map(|write| occurrence(write.at_ms, write.event, vec![write.instance]))
        .collect()
}

/// Every belief and every write that carries the token: a token is named
/// where an instance holds it and where it shows it to storage.
fn token_occurrences(token: Token, timeline: &Timeline) -> Vec<Occurrence> {
    let beliefs = timeline
        .beliefs
        .iter()
        .filter(|span| span.token == Some(token))
        .map(|span| occurrence(span.span.from_ms, span.event, vec![span.instance]));
    let writes = timeline
        .writes
        .iter()
        .filter(|write| write.token == Some(token))
        .map(|write| occurrence(write.at_ms, write.event, vec![write.instance]));
    beliefs.chain(writes).collect()
}

/// A moment with the instance that takes part in it: `grant#1@b`. Without
/// `#n` it is the first occurrence that `X` takes part in; with `#n`, the
/// n-th occurrence, which `X` must take part in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActorMoment {
    pub moment: Moment,
    pub actor: Option<InstanceId>,
    counted: bool,
}

impl ActorMoment {
    pub fn parse(text: &str) -> Result<ActorMoment, String> {
        let (moment, actor) = match text.split_once('@') {
            Some((moment, actor)) => (moment, Some(instance(actor)?)),
            None => (text, None),
        };
        Ok(ActorMoment { moment: Moment::parse(moment)?, actor, counted: moment.contains('#') })
    }

    /// Where it falls in the run, if it happens there with its actor.
    pub fn find(&self, timeline: &Timeline, report: &StrategyReport) -> Option<Found> {
        let occurrences = self.moment.occurrences(timeline, report);
        let takes_part = |occurrence: &Occurrence| self.actor.is_none_or(|actor| occurrence.actors.contains(&actor));
        if self.counted || self.actor.is_none() {
            let nth = usize::try_from(self.moment.nth().saturating_sub(1)).ok()?;
            return occurrences.get(nth).filter(|occurrence| takes_part(occurrence)).map(|occurrence| occurrence.found);
        }
        occurrences.iter().find(|occurrence| takes_part(occurrence)).map(|occurrence| occurrence.found)
    }
}

/// An instance's letter, `a` to `h`.
fn instance(text: &str) -> Result<InstanceId, String> {
    match text.as_bytes() {
        [letter @ b'a'..=b'h'] => Ok(InstanceId(letter - b'a')),
        _ => Err(format!("`{text}` is not an instance: a letter, a to h")),
    }
}

/// What a count claim counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Counted {
    Findings(String),
    Metric(&'static str),
    /// The uploads and posts of runs no fault forced: the number in brackets
    /// beside the wasted runs (`8 (40)`), under [`WASTED_SIDE_EFFECTS`].
    WastedSideEffects,
}

/// The key a count claim names the wasted runs' uploads and posts by.
const WASTED_SIDE_EFFECTS: &str = "wasted-side-effects";

/// A claim a text makes about its run (see the module's documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    Safety(Safety),
    Liveness(Liveness),
    Efficiency(Efficiency),
    Finding(String),
    NoFinding(String),
    Count(Counted, u64),
    Happens(ActorMoment),
    Order(ActorMoment, ActorMoment),
    Cause {
        kind: String,
        actor: InstanceId,
        held: Held,
    },
    /// The moment falls at this wall-clock time, to the precision written.
    Time(ActorMoment, String),
    /// A duration metric, in whole seconds.
    Seconds(&'static str, u64),
}

/// Whether the run counts exactly `count` of what is counted; the error
/// says how many it has.
fn check_count(counted: &Counted, count: u64, report: &StrategyReport) -> Result<(), String> {
    let actual = match counted {
        Counted::Findings(kind) => {
            u64::try_from(report.findings.iter().filter(|finding| finding.kind == *kind).count()).unwrap_or(u64::MAX)
        }
        Counted::Metric(key) => {
            Metric::ALL.iter().find(|metric| metric.key() == *key).map_or(0, |metric| metric.count(&report.metrics))
        }
        Counted::WastedSideEffects => u64::from(report.metrics.wasted_side_effects),
    };
    if actual == count { Ok(()) } else { Err(format!("the run has {actual}")) }
}

/// Whether the first moment comes before the second; the error says when
/// each comes, or that one does not.
fn check_order(
    first: &ActorMoment,
    then: &ActorMoment,
    timeline: &Timeline,
    report: &StrategyReport,
) -> Result<(), String> {
    match (first.find(timeline, report), then.find(timeline, report)) {
        (Some(first), Some(then)) if (first.at_ms, first.event) < (then.at_ms, then.event) => Ok(()),
        (Some(first), Some(then)) => {
            Err(format!("the first comes at {} ms, the second at {} ms", first.at_ms, then.at_ms))
        }
        (None, _) | (_, None) => Err("one of the two moments does not occur".to_owned()),
    }
}

/// Whether a finding of the kind was caused by a write of `actor` holding `held`.
fn check_cause(kind: &str, actor: InstanceId, held: Held, report: &StrategyReport) -> Result<(), String> {
    let caused = report.findings.iter().any(|finding| {
        finding.kind == kind
            && finding.cause.as_ref().is_some_and(|cause| cause.instance == actor && cause.held == held)
    });
    if caused { Ok(()) } else { Err("no finding of that kind has that cause".to_owned()) }
}

/// Whether the moment falls at the wall-clock time written, to its
/// precision; the error says when it falls.
fn check_time(
    moment: &ActorMoment,
    time: &str,
    origin: &str,
    timeline: &Timeline,
    report: &StrategyReport,
) -> Result<(), String> {
    let Some(found) = moment.find(timeline, report) else {
        return Err("the run has no such moment".to_owned());
    };
    // Written to the minute, second or tenth: cut or rounded there.
    let half_unit_ms = match time.len() {
        5 => 30_000,
        8 => 500,
        10 => 50,
        _ => 0,
    };
    let reads = |at_ms: u64| {
        let at = crate::format::wall_clock(origin, i64::try_from(at_ms).unwrap_or(i64::MAX));
        at.get(..time.len()).is_some_and(|read| read == time)
    };
    if reads(found.at_ms) || reads(found.at_ms + half_unit_ms) {
        Ok(())
    } else {
        let at = crate::format::wall_clock(origin, i64::try_from(found.at_ms).unwrap_or(i64::MAX));
        Err(format!("it falls at {at}"))
    }
}

/// Whether the duration metric is `seconds` whole seconds; the error says
/// how many milliseconds the run has.
fn check_seconds(key: &str, seconds: u64, report: &StrategyReport) -> Result<(), String> {
    let ms = Metric::ALL.iter().find(|metric| metric.key() == key).map_or(0, |metric| metric.count(&report.metrics));
    if ms / 1000 == seconds { Ok(()) } else { Err(format!("the run has {ms} ms")) }
}

/// The claims a bare word makes, with its words in a text.
const VERDICTS: [(&str, Claim); 9] = [
    ("safe", Claim::Safety(Safety::Safe)),
    ("at_risk", Claim::Safety(Safety::AtRisk)),
    ("unsafe", Claim::Safety(Safety::Unsafe)),
    ("on_time", Claim::Liveness(Liveness::Ok)),
    ("late", Claim::Liveness(Liveness::Late)),
    ("missed", Claim::Liveness(Liveness::Missed)),
    ("behind", Claim::Liveness(Liveness::Behind)),
    ("efficient", Claim::Efficiency(Efficiency::Ok)),
    ("wasteful", Claim::Efficiency(Efficiency::Wasteful)),
];

impl Claim {
    pub fn parse(text: &str) -> Result<Claim, String> {
        if let Some((_, claim)) = VERDICTS.iter().find(|(word, _)| *word == text) {
            return Ok(claim.clone());
        }
        let (head, rest) = text.split_once(':').unwrap_or((text, ""));
        match head {
            "finding" if !rest.is_empty() && !rest.contains('@') => Ok(Claim::Finding(rest.to_owned())),
            "no_finding" if !rest.is_empty() => Ok(Claim::NoFinding(rest.to_owned())),
            "count" => {
                let (what, number) =
                    rest.rsplit_once('=').ok_or_else(|| format!("`{text}`: a count is `count:WHAT=N`"))?;
                let count = number.parse::<u64>().map_err(|_| format!("`{text}`: `{number}` is not a number"))?;
                let counted = match what.strip_prefix("finding:") {
                    Some(kind) if !kind.is_empty() => Counted::Findings(kind.to_owned()),
                    Some(_) | None if what == WASTED_SIDE_EFFECTS => Counted::WastedSideEffects,
                    Some(_) | None => Counted::Metric(
                        Metric::ALL.iter().map(|metric| metric.key()).find(|key| *key == what).ok_or_else(|| {
                            format!("`{what}` is neither `finding:KIND` nor a metric's key (stale-accepted, side-effects, wasted, …)")
                        })?,
                    ),
                };
                Ok(Claim::Count(counted, count))
            }
            "order" => {
                let (first, then) =
                    rest.split_once('<').ok_or_else(|| format!("`{text}`: an order is `order:M1<M2`"))?;
                Ok(Claim::Order(ActorMoment::parse(first)?, ActorMoment::parse(then)?))
            }
            "time" => {
                let (moment, time) =
                    rest.rsplit_once('=').ok_or_else(|| format!("`{text}`: a time is `time:MOMENT@X=HH:MM:SS`"))?;
                if parse_clock(time).is_none() {
                    return Err(format!("`{time}` is not a time of day: HH:MM, HH:MM:SS or HH:MM:SS.s"));
                }
                Ok(Claim::Time(ActorMoment::parse(moment)?, time.to_owned()))
            }
            "seconds" => {
                let (what, number) =
                    rest.rsplit_once('=').ok_or_else(|| format!("`{text}`: seconds are `seconds:METRIC=N`"))?;
                let seconds = number.parse::<u64>().map_err(|_| format!("`{text}`: `{number}` is not a number"))?;
                let key = Metric::ALL
                    .iter()
                    .filter(|metric| metric.is_duration())
                    .map(|metric| metric.key())
                    .find(|key| *key == what)
                    .ok_or_else(|| format!("`{what}` is not a duration metric's key (delay, overlap, …)"))?;
                Ok(Claim::Seconds(key, seconds))
            }
            "cause" => {
                let (kind, who) = rest.split_once('@').ok_or_else(|| format!("`{text}`: `cause:KIND@X=HELD`"))?;
                let (actor, held) = who.split_once('=').ok_or_else(|| format!("`{text}`: `cause:KIND@X=HELD`"))?;
                let held = Held::ALL
                    .into_iter()
                    .find(|known| known.name() == held)
                    .ok_or_else(|| format!("`{held}` is not a holding: lock, belief, nothing, former, no_lock"))?;
                Ok(Claim::Cause { kind: kind.to_owned(), actor: instance(actor)?, held })
            }
            _ if text.contains('@') => Ok(Claim::Happens(ActorMoment::parse(text)?)),
            _ => Err(format!(
                "`{text}` is not a claim: a verdict (safe, at_risk, unsafe, on_time, late, missed, behind, efficient, wasteful), finding:KIND, no_finding:KIND, count:WHAT=N, seconds:METRIC=N, MOMENT@X, time:MOMENT@X=HH:MM:SS, order:M1<M2 or cause:KIND@X=HELD"
            )),
        }
    }

    /// Whether the run bears the claim out; the error says what the run has
    /// instead. `origin` is the scenario's `clock_origin`, for times.
    pub fn check(&self, origin: &str, timeline: &Timeline, report: &StrategyReport) -> Result<(), String> {
        let has = |kind: &str| report.findings.iter().any(|finding| finding.kind == kind);
        let borne_out = match self {
            Claim::Safety(safety) if report.safety != *safety => Err(format!("the run is {:?}", report.safety)),
            Claim::Liveness(liveness) if report.liveness != *liveness => {
                Err(format!("the run is {:?}", report.liveness))
            }
            Claim::Efficiency(efficiency) if report.efficiency != *efficiency => {
                Err(format!("the run is {:?}", report.efficiency))
            }
            Claim::Finding(kind) if !has(kind) => Err("no such finding".to_owned()),
            Claim::NoFinding(kind) if has(kind) => Err("the report has it".to_owned()),
            Claim::Count(counted, count) => check_count(counted, *count, report),
            Claim::Happens(moment) if moment.find(timeline, report).is_none() => {
                Err("the run has no such moment".to_owned())
            }
            Claim::Order(first, then) => check_order(first, then, timeline, report),
            Claim::Cause { kind, actor, held } => check_cause(kind, *actor, *held, report),
            Claim::Time(moment, time) => check_time(moment, time, origin, timeline, report),
            Claim::Seconds(key, seconds) => check_seconds(key, *seconds, report),
            Claim::Safety(_)
            | Claim::Liveness(_)
            | Claim::Efficiency(_)
            | Claim::Finding(_)
            | Claim::NoFinding(_)
            | Claim::Happens(_) => Ok(()),
        };
        borne_out.map_err(|what| format!("{self:?} does not hold: {what}"))
    }

    /// The instances the claim names as taking part.
    fn actors(&self) -> Vec<InstanceId> {
        match self {
            Claim::Happens(moment) => moment.actor.into_iter().collect(),
            Claim::Order(first, then) => first.actor.into_iter().chain(then.actor).collect(),
            Claim::Cause { actor, .. } => vec![*actor],
            Claim::Time(moment, _) => moment.actor.into_iter().collect(),
            Claim::Seconds(..) => Vec::new(),
            Claim::Safety(_)
            | Claim::Liveness(_)
            | Claim::Efficiency(_)
            | Claim::Finding(_)
            | Claim::NoFinding(_)
            | Claim::Count(..) => Vec::new(),
        }
    }

    /// The numbers the claim states: a count, a token.
    fn numbers(&self) -> Vec<u64> {
        let token = |moment: &ActorMoment| match moment.moment {
            Moment::Token(token, _) => Some(token.0),
            Moment::Grant(_)
            | Moment::Belief(_)
            | Moment::Fault(..)
            | Moment::Finding(..)
            | Moment::Write(..)
            | Moment::Post(_)
            | Moment::End => None,
        };
        match self {
            Claim::Count(_, count) | Claim::Seconds(_, count) => vec![*count],
            Claim::Happens(moment) | Claim::Time(moment, _) => token(moment).into_iter().collect(),
            Claim::Order(first, then) => token(first).into_iter().chain(token(then)).collect(),
            Claim::Safety(_)
            | Claim::Liveness(_)
            | Claim::Efficiency(_)
            | Claim::Finding(_)
            | Claim::NoFinding(_)
            | Claim::Cause { .. } => Vec::new(),
        }
    }
}

/// Words that state a verdict or a finding, each with the claims that back
/// it (any one of them): a text that uses the words must list one.
const WORDS: [(&str, &[&str]); 9] = [
    ("falls behind", &["behind", "finding:falls_behind"]),
    ("safe", &["safe"]),
    ("at risk", &["at_risk"]),
    ("unsafe", &["unsafe"]),
    ("refuses", &["finding:stale_write_rejected", "finding:tokenless_write_rejected"]),
    ("refused", &["finding:stale_write_rejected", "finding:tokenless_write_rejected"]),
    ("late", &["late", "finding:late_period"]),
    ("missed", &["missed", "finding:missed_period"]),
    ("wasteful", &["wasteful"]),
];

/// Checks a text against the claims listed for it and the scenario it is
/// about: every verdict or finding its words state is listed; every instance
/// it names takes part in a listed claim; and every number it states is one
/// a listed claim states or one the scenario sets ([`Stated`]). (`a` is an
/// instance only where it cannot be the article: `a's`, `instance a`.) The
/// claims themselves are checked against the run by [`Claim::check`].
/// Instances are lower-case letters; an upper-case `B` is a quiz choice, not
/// instance b.
pub fn check_text(text: &str, claims: &[Claim], scenario: &Scenario) -> Result<(), String> {
    let split = |text: &str| -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’')
            .filter(|word| !word.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let lower = split(&text.to_lowercase());
    let words: Vec<&str> = lower.iter().map(String::as_str).collect();
    let cased = split(text);
    let bare = |word: &str| word.trim_end_matches("'s").trim_end_matches("’s").to_owned();
    let uses = |phrase: &str| {
        let phrase: Vec<&str> = phrase.split(' ').collect();
        words
            .windows(phrase.len())
            .any(|window| window.iter().map(|word| bare(word)).eq(phrase.iter().map(|p| (*p).to_owned())))
    };
    let listed: Vec<String> = claims.iter().map(|claim| format!("{claim:?}")).collect();
    for (phrase, backing) in WORDS {
        if uses(phrase) {
            let backed = backing.iter().any(|text| Claim::parse(text).is_ok_and(|claim| claims.contains(&claim)));
            if !backed {
                return Err(format!("it says “{phrase}” but lists none of {backing:?} (it lists {listed:?})"));
            }
        }
    }
    let actors: Vec<InstanceId> = claims.iter().flat_map(Claim::actors).collect();
    for (index, word) in cased.iter().enumerate() {
        let named = match word.trim_end_matches("'s").trim_end_matches("’s") {
            "b" | "c" | "d" | "e" | "f" | "g" | "h" => instance(word.get(..1).unwrap_or_default()).ok(),
            "a" if word.len() > 1 => Some(InstanceId(0)),
            "a" if index > 0 && cased[index - 1].eq_ignore_ascii_case("instance") => Some(InstanceId(0)),
            _ => None,
        };
        if let Some(named) = named
            && !actors.contains(&named)
        {
            return Err(format!("it names instance {named}, which no listed claim has taking part"));
        }
    }
    let stated = Stated::of(scenario, claims);
    for number in numbers_in(text) {
        stated.backs(&number)?;
    }
    Ok(())
}

/// A number as a text states it, with what it counts.
#[derive(Clone, Debug, PartialEq)]
pub struct TextNumber {
    /// As written: `02:05`, `460`, `0.4`, `5,796`.
    pub written: String,
    pub kind: NumberKind,
}

/// What a stated number is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NumberKind {
    /// A time of day, `HH:MM[:SS[.s]]`.
    Time,
    /// A duration, in milliseconds (`60 s`, `4 minutes`, `0.4 s`, `7-minute`).
    Duration(u64),
    /// A percentage.
    Percent(u64),
    /// A token: the number after `token`.
    Token(u64),
    /// An index after `period` or `chunk`: which one, not how many.
    Index(u64, Index),
    /// Any other number (a count, a setting).
    Bare(u64),
}

/// What an index numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Index {
    Period,
    Chunk,
}

/// The numbers of a text, in order, each with its kind read from the words
/// around it. Digits inside a word (`redis-1`, `b:8af7`, `chunk-0`) are names,
/// not numbers.
pub fn numbers_in(text: &str) -> Vec<TextNumber> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut index = 0;
    while index < chars.len() {
        let starts_word = index == 0 || !(chars[index - 1].is_alphanumeric() || "-_#:.".contains(chars[index - 1]));
        if !chars[index].is_ascii_digit() || !starts_word {
            index += 1;
            continue;
        }
        let start = index;
        while index < chars.len()
            && (chars[index].is_ascii_digit()
                || (":.,".contains(chars[index]) && chars.get(index + 1).is_some_and(char::is_ascii_digit)))
        {
            index += 1;
        }
        // A number glued to letters (`8af7`, `2am`) is part of a name.
        if chars.get(index).is_some_and(|c| c.is_alphabetic() && *c != 'x') && !text_unit_follows(&chars, index) {
            while index < chars.len() && chars[index].is_alphanumeric() {
                index += 1;
            }
            continue;
        }
        let written: String = chars[start..index].iter().collect();
        let before: String = chars[..start].iter().collect::<String>().to_lowercase();
        // A command line's option values (`--runs 200000`) are its, not the run's.
        if before.trim_end().rsplit(' ').next().is_some_and(|word| word.starts_with("--")) {
            continue;
        }
        let previous = before.split(|c: char| !c.is_alphanumeric()).rfind(|word| !word.is_empty()).unwrap_or("");
        let after: String = chars[index..].iter().collect::<String>().to_lowercase();
        let next = after
            .trim_start_matches([' ', '-', '\u{a0}'])
            .split(|c: char| !c.is_alphanumeric() && c != '%')
            .next()
            .unwrap_or("");
        found.extend(read_number(&written, previous, next));
    }
    found
}

/// Whether a unit written straight after a number follows (`60s`, `300ms`).
fn text_unit_follows(chars: &[char], at: usize) -> bool {
    let rest: String = chars[at..].iter().take_while(|c| c.is_alphabetic()).collect();
    matches!(rest.as_str(), "s" | "ms" | "min" | "h")
}

/// One written number, read with the word before and after it; a list
/// written with commas (`1,2`) is several.
fn read_number(written: &str, previous: &str, next: &str) -> Vec<TextNumber> {
    let number = |kind| TextNumber { written: written.to_owned(), kind };
    if written.contains(':') {
        return if parse_clock(written).is_some() { vec![number(NumberKind::Time)] } else { Vec::new() };
    }
    let groups: Vec<&str> = written.split(',').collect();
    let thousands = groups.len() > 1 && groups[1..].iter().all(|group| group.len() == 3);
    let value_text = if thousands { written.replace(',', "") } else { groups[0].to_owned() };
    let value: f64 = value_text.parse().unwrap_or(0.0);
    if groups.len() > 1 && !thousands {
        return groups.iter().flat_map(|group| read_number(group, previous, next)).collect();
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let scaled = |factor: f64| (value * factor).round() as u64;
    let kind = match next {
        "ms" => NumberKind::Duration(scaled(1.0)),
        "s" | "sec" | "second" | "seconds" => NumberKind::Duration(scaled(1_000.0)),
        "min" | "minute" | "minutes" => NumberKind::Duration(scaled(60_000.0)),
        "h" | "hour" | "hours" => NumberKind::Duration(scaled(3_600_000.0)),
        "%" | "percent" => NumberKind::Percent(scaled(1.0)),
        _ => match previous {
            "token" | "tokens" => NumberKind::Token(scaled(1.0)),
            "period" | "periods" => NumberKind::Index(scaled(1.0), Index::Period),
            "chunk" | "chunks" => NumberKind::Index(scaled(1.0), Index::Chunk),
            _ => NumberKind::Bare(scaled(1.0)),
        },
    };
    vec![number(kind)]
}

/// A time of day as written, `HH:MM[:SS[.s…]]`, in milliseconds since midnight.
fn parse_clock(text: &str) -> Option<u64> {
    let mut parts = text.split(':');
    let hours: u64 = parts.next()?.parse().ok()?;
    let minutes: u64 = parts.next()?.parse().ok()?;
    let seconds: f64 = parts.next().map_or(Ok(0.0), str::parse).ok()?;
    if parts.next().is_some() || hours > 23 || minutes > 59 || !(0.0..60.0).contains(&seconds) {
        return None;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let seconds_ms = (seconds * 1000.0).round() as u64;
    Some((hours * 60 + minutes) * 60_000 + seconds_ms)
}

/// The numbers a text may state: what its claims state and what its
/// scenario sets. A time must be a claimed moment's, a fault's (when it
/// strikes or ends) or a cron tick's; a duration a claimed one or a
/// setting's (a fault's length, a TTL, the job); a bare number a claim's, a
/// setting's or a year (a reference's).
#[derive(Debug)]
pub struct Stated {
    origin: String,
    /// Times stated by claims, as written.
    claimed_times: Vec<String>,
    /// Scenario times, in ms from the run's start.
    scenario_times_ms: Vec<u64>,
    /// Durations in ms: the settings' and the claimed seconds'.
    durations_ms: Vec<u64>,
    /// Claims' counts and tokens.
    claimed: Vec<u64>,
    /// Settings' values (and their millisecond values in seconds and minutes where whole).
    values: Vec<u64>,
    periods: u64,
    chunks: u64,
}

impl Stated {
    pub fn of(scenario: &Scenario, claims: &[Claim]) -> Stated {
        let claimed: Vec<u64> = claims.iter().flat_map(Claim::numbers).collect();
        let mut values: Vec<u64> = Vec::new();
        let mut durations_ms = claimed_durations_ms(claims);
        for (key, value) in settings(scenario) {
            if key.ends_with("_ms") {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let ms = value.abs().round() as u64;
                durations_ms.push(ms);
                values.extend([ms, ms / 1000, ms / 60_000].into_iter().filter(|whole| *whole > 0));
            } else {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                values.push(value.abs().round() as u64);
            }
        }
        let period_ms = scenario.world.cron_period_ms.max(1);
        let periods = scenario.duration_ms().div_ceil(period_ms);
        Stated {
            origin: scenario.clock_origin.clone(),
            claimed_times: claimed_times(claims),
            claimed,
            scenario_times_ms: scenario_times_ms(scenario, period_ms, periods),
            durations_ms,
            values,
            periods,
            chunks: u64::from(scenario.world.report_chunks),
        }
    }

    /// Whether a stated number is backed; the error names it and what would back it.
    pub fn backs(&self, number: &TextNumber) -> Result<(), String> {
        let written = &number.written;
        let backed = match number.kind {
            NumberKind::Time => {
                self.claimed_times.contains(written)
                    || self.scenario_times_ms.iter().any(|at| {
                        let at = crate::format::wall_clock(&self.origin, i64::try_from(*at).unwrap_or(i64::MAX));
                        at.get(..written.len()) == Some(written.as_str())
                    })
            }
            NumberKind::Duration(ms) => self.durations_ms.contains(&ms),
            NumberKind::Token(token) => self.claimed.contains(&token),
            NumberKind::Percent(value) => self.values.contains(&value),
            NumberKind::Bare(value) => {
                self.claimed.contains(&value) || self.values.contains(&value) || (1990..=2099).contains(&value)
            }
            NumberKind::Index(index, Index::Period) => index <= self.periods + 1,
            NumberKind::Index(index, Index::Chunk) => index <= self.chunks,
        };
        if backed {
            return Ok(());
        }
        let what = match number.kind {
            NumberKind::Time => "a time no `time:` claim states and no fault or tick has",
            NumberKind::Duration(_) => "a duration no `seconds:` claim states and no setting has",
            NumberKind::Token(_) => {
                return Err(format!("it says “token {written}”, but no listed claim states {written}"));
            }
            NumberKind::Index(..) => "an index past the run's",
            NumberKind::Percent(_) | NumberKind::Bare(_) => "a number no claim states and no setting has",
        };
        Err(format!("it says “{written}”, {what}"))
    }
}

/// The durations the claims state, in ms: each `seconds:` claim's.
fn claimed_durations_ms(claims: &[Claim]) -> Vec<u64> {
    claims
        .iter()
        .filter_map(|claim| if let Claim::Seconds(_, seconds) = claim { Some(seconds * 1000) } else { None })
        .collect()
}

/// The wall-clock times the claims state, as written: each `time:` claim's.
fn claimed_times(claims: &[Claim]) -> Vec<String> {
    claims.iter().filter_map(|claim| if let Claim::Time(_, time) = claim { Some(time.clone()) } else { None }).collect()
}

/// Every number the scenario sets, with its key: what its document writes
/// and, since a text may state a default the document leaves out, every
/// strategy's settings as it runs.
fn settings(scenario: &Scenario) -> Vec<(String, f64)> {
    let document = serde_json::to_value(scenario).unwrap_or_default();
    let mut settings = Vec::new();
    for part in ["world", "strategies", "faults"] {
        if let Some(value) = document.get(part) {
            leaves(value, "", &mut settings);
        }
    }
    for resolved in scenario.strategy_settings() {
        let value = match resolved {
            StrategySettings::Naive(naive) => serde_json::to_value(naive),
            StrategySettings::Fencing(lease) | StrategySettings::Consensus(lease) => serde_json::to_value(lease),
            StrategySettings::Redlock(redlock) => serde_json::to_value(redlock),
            StrategySettings::DbLock(db_lock) => serde_json::to_value(db_lock),
            StrategySettings::UniqueInsert => Ok(serde_json::Value::Null),
        };
        leaves(&value.unwrap_or_default(), "", &mut settings);
    }
    settings
}

/// The times the scenario sets, in ms from the run's start: every cron
/// tick, two past the window included, and when each fault strikes and ends.
fn scenario_times_ms(scenario: &Scenario, period_ms: u64, periods: u64) -> Vec<u64> {
    let mut times_ms: Vec<u64> = (0..=periods + 2).map(|period| period * period_ms).collect();
    for fault in &scenario.faults {
        let at = fault.at_ms();
        times_ms.push(at);
        if let Some(lasts) = fault.lasts_ms(&scenario.world) {
            times_ms.push(at + lasts);
        }
    }
    times_ms
}

/// The numeric leaves of a JSON value, each with its key.
fn leaves(value: &serde_json::Value, key: &str, into: &mut Vec<(String, f64)>) {
    match value {
        serde_json::Value::Number(number) => into.push((key.to_owned(), number.as_f64().unwrap_or(0.0))),
        serde_json::Value::Array(items) => items.iter().for_each(|item| leaves(item, key, into)),
        serde_json::Value::Object(fields) => fields.iter().for_each(|(name, item)| leaves(item, name, into)),
        serde_json::Value::Null | serde_json::Value::Bool(_) | serde_json::Value::String(_) => {}
    }
}

/// Checks a text and its claims against a run: [`check_text`], then each claim.
pub fn check(
    text: &str,
    claims: &[String],
    scenario: &Scenario,
    timeline: &Timeline,
    report: &StrategyReport,
) -> Result<(), String> {
    let parsed: Vec<Claim> = claims.iter().map(|claim| Claim::parse(claim)).collect::<Result<_, _>>()?;
    check_text(text, &parsed, scenario)?;
    for claim in &parsed {
        claim.check(&scenario.clock_origin, timeline, report)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_read_their_grammar() {
        assert_eq!(Claim::parse("unsafe"), Ok(Claim::Safety(Safety::Unsafe)));
        assert_eq!(Claim::parse("wasteful"), Ok(Claim::Efficiency(Efficiency::Wasteful)));
        assert_eq!(
            Claim::parse("count:finding:duplicate_post=2"),
            Ok(Claim::Count(Counted::Findings("duplicate_post".into()), 2))
        );
        assert_eq!(Claim::parse("count:side-effects=36"), Ok(Claim::Count(Counted::Metric("side-effects"), 36)));
        assert!(Claim::parse("count:nonsense=3").is_err());
        let grant = Claim::parse("grant#1@b").expect("a moment with an actor");
        assert_eq!(grant.actors(), [InstanceId(1)]);
        let order = Claim::parse("order:post@c<post@a").expect("an order");
        assert_eq!(order.actors(), [InstanceId(2), InstanceId(0)]);
        assert_eq!(
            Claim::parse("cause:stale_write_accepted@b=nothing"),
            Ok(Claim::Cause { kind: "stale_write_accepted".into(), actor: InstanceId(1), held: Held::Nothing })
        );
        assert!(Claim::parse("probably").is_err());
        assert!(Claim::parse("grant@z").is_err());
        assert_eq!(Moment::parse("write:refused#2"), Ok(Moment::Write(WriteKind::Refused, 2)));
        assert!(Moment::parse("end#2").is_err());
        assert!(Moment::parse("at:60000").unwrap_err().contains("not a moment"));
    }

    #[test]
    fn a_text_must_list_what_it_names() {
        let world = Scenario::default();
        let claims =
            |texts: &[&str]| -> Vec<Claim> { texts.iter().map(|text| Claim::parse(text).expect("parses")).collect() };
        assert!(check_text("The night is unsafe.", &claims(&[]), &world).unwrap_err().contains("unsafe"));
        assert!(check_text("The night is unsafe.", &claims(&["unsafe"]), &world).is_ok());
        // An instance named must take part in a claim; `a` the article is no instance.
        assert!(check_text("b wins the lock.", &claims(&[]), &world).unwrap_err().contains("instance b"));
        assert!(check_text("b wins a lock.", &claims(&["grant#1@b"]), &world).is_ok());
        assert!(
            check_text("Then a's pod restarts.", &claims(&["grant#1@b"]), &world).unwrap_err().contains("instance a")
        );
        // A quiz choice is an upper-case letter, never an instance.
        assert!(check_text("B and D are wrong here.", &claims(&[]), &world).is_ok());
        // Counts and tokens are stated by a claim.
        assert!(check_text("It made 36 uploads.", &claims(&[]), &world).unwrap_err().contains("36"));
        assert!(check_text("It made 36 uploads.", &claims(&["count:side-effects=36"]), &world).is_ok());
        assert!(check_text("b writes with token 1.", &claims(&["post@b"]), &world).unwrap_err().contains("token 1"));
        assert!(check_text("b writes with token 1.", &claims(&["token:1@b"]), &world).is_ok());
        assert!(check_text("It is late.", &claims(&["finding:late_period"]), &world).is_ok());
        // Every number is a claim's or the scenario's: a fault's time and
        // length, a TTL; a time the run produced needs its `time:` claim.
        let night = Scenario::from_json(crate::builtin::STORY.text).expect("the night");
        assert!(check_text("A 150 s pause at 02:08:12.", &claims(&[]), &night).is_ok());
        assert!(check_text("A 151 s pause.", &claims(&[]), &night).unwrap_err().contains("151"));
        assert!(check_text("At 02:05 a cron tick.", &claims(&[]), &night).is_ok());
        assert!(
            check_text("a grabs it at 02:05:01.", &claims(&["grant#2@a"]), &night).unwrap_err().contains("02:05:01")
        );
        assert!(check_text("a grabs it at 02:05:01.", &claims(&["time:grant#2@a=02:05:01"]), &night).is_ok());
        assert!(check_text("It lands 460 s after its tick.", &claims(&["seconds:delay=460"]), &night).is_ok());
        assert!(check_text("It lands 460 s after its tick.", &claims(&[]), &night).is_err());
        // Names with digits are no numbers: redis-1, b:8af7, chunk-0.
        assert!(check_text("redis-1 holds b:8af7 in chunk-0.", &claims(&["grant#1@b"]), &night).is_ok());
        assert_eq!(
            numbers_in("EX 300, 5,796 queries, 0.4 s, a 7-minute job, token 2, period 3"),
            vec![
                TextNumber { written: "300".into(), kind: NumberKind::Bare(300) },
                TextNumber { written: "5,796".into(), kind: NumberKind::Bare(5796) },
                TextNumber { written: "0.4".into(), kind: NumberKind::Duration(400) },
                TextNumber { written: "7".into(), kind: NumberKind::Duration(420_000) },
                TextNumber { written: "2".into(), kind: NumberKind::Token(2) },
                TextNumber { written: "3".into(), kind: NumberKind::Index(3, Index::Period) },
            ]
        );
    }
}
