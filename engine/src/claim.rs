//! Claims: what a text says about a run, in a small language the engine
//! checks against that run. Every text the lab shows about a built-in run (a
//! story step, a scenario's description and `why`, a quiz card's story and
//! explanation) lists its claims beside it, and the tests hold each claim to
//! the run's timeline and report and each text to its claims
//! ([`check_text`]): a sentence that names a holder, a pause target, an
//! order of events or a count the run does not have fails the build.
//!
//! A claim is one of
//! - a verdict: `safe`, `at_risk`, `unsafe`; `on_time`, `late`, `missed`;
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
//!   holding HELD (`lock`, `belief`, `nothing`, `former`, `no_lock`).
//!
//! A moment names a point of a run by what happens there, never by a time:
//! `kind[:detail][#n]`, the n-th (from 1) of `grant`, `belief`,
//! `fault:KIND`, `finding:KIND`, `write:accepted|stale|refused|no_effect`,
//! `post`, or `end`.

use crate::ids::{InstanceId, Token};
use crate::report::{Held, Metric, StrategyReport};
use crate::scenario::{Efficiency, Liveness, Safety};
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
        let event = |at_ms: u64, event: u32, actors: Vec<InstanceId>| Occurrence {
            found: Found { at_ms, event: Some(event) },
            actors,
        };
        let mut found: Vec<Occurrence> = match self {
            Moment::Grant(_) => {
                timeline.grants.iter().map(|span| event(span.span.from_ms, span.event, vec![span.instance])).collect()
            }
            Moment::Belief(_) => {
                timeline.beliefs.iter().map(|span| event(span.span.from_ms, span.event, vec![span.instance])).collect()
            }
            Moment::Fault(kind, _) => timeline
                .faults
                .iter()
                .filter(|mark| mark.fault.kind_name() == kind)
                .map(|mark| {
                    event(mark.at_ms, mark.event, mark.targets.iter().filter_map(|party| party.instance()).collect())
                })
                .collect(),
            Moment::Finding(kind, _) => report
                .findings
                .iter()
                .filter(|finding| finding.kind == kind)
                .map(|finding| {
                    let actors = finding.cause.iter().map(|cause| cause.instance).collect();
                    event(finding.at_ms, finding.event, actors)
                })
                .collect(),
            Moment::Write(verdict, _) => {
                let stale = |event: u32| {
                    report
                        .findings
                        .iter()
                        .any(|finding| finding.kind == "stale_write_accepted" && finding.event == event)
                };
                timeline
                    .writes
                    .iter()
                    .filter(|write| match (verdict, write.verdict) {
                        (WriteKind::Accepted, WriteVerdict::Accepted) => !stale(write.event),
                        (WriteKind::Stale, WriteVerdict::Accepted) => stale(write.event),
                        (WriteKind::Refused, WriteVerdict::Rejected { .. })
                        | (WriteKind::NoEffect, WriteVerdict::NoEffect) => true,
                        (
                            WriteKind::Accepted | WriteKind::Stale | WriteKind::Refused | WriteKind::NoEffect,
                            WriteVerdict::Accepted | WriteVerdict::Rejected { .. } | WriteVerdict::NoEffect,
                        ) => false,
                    })
                    .map(|write| event(write.at_ms, write.event, vec![write.instance]))
                    .collect()
            }
            Moment::Post(_) => {
                timeline.posts.iter().map(|post| event(post.at_ms, post.event, vec![post.instance])).collect()
            }
            Moment::Token(token, _) => timeline
                .beliefs
                .iter()
                .filter(|span| span.token == Some(*token))
                .map(|span| event(span.span.from_ms, span.event, vec![span.instance]))
                .chain(
                    timeline
                        .writes
                        .iter()
                        .filter(|write| write.token == Some(*token))
                        .map(|write| event(write.at_ms, write.event, vec![write.instance])),
                )
                .collect(),
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
}

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
    Cause { kind: String, actor: InstanceId, held: Held },
}

/// The claims a bare word makes, with its words in a text.
const VERDICTS: [(&str, Claim); 8] = [
    ("safe", Claim::Safety(Safety::Safe)),
    ("at_risk", Claim::Safety(Safety::AtRisk)),
    ("unsafe", Claim::Safety(Safety::Unsafe)),
    ("on_time", Claim::Liveness(Liveness::Ok)),
    ("late", Claim::Liveness(Liveness::Late)),
    ("missed", Claim::Liveness(Liveness::Missed)),
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
                "`{text}` is not a claim: a verdict (safe, at_risk, unsafe, on_time, late, missed, efficient, wasteful), finding:KIND, no_finding:KIND, count:WHAT=N, MOMENT@X, order:M1<M2 or cause:KIND@X=HELD"
            )),
        }
    }

    /// Whether the run bears the claim out; the error says what the run has instead.
    pub fn check(&self, timeline: &Timeline, report: &StrategyReport) -> Result<(), String> {
        let has = |kind: &str| report.findings.iter().any(|finding| finding.kind == kind);
        let fail = |what: String| Err(format!("{self:?} does not hold: {what}"));
        match self {
            Claim::Safety(safety) if report.safety != *safety => fail(format!("the run is {:?}", report.safety)),
            Claim::Liveness(liveness) if report.liveness != *liveness => {
                fail(format!("the run is {:?}", report.liveness))
            }
            Claim::Efficiency(efficiency) if report.efficiency != *efficiency => {
                fail(format!("the run is {:?}", report.efficiency))
            }
            Claim::Finding(kind) if !has(kind) => fail("no such finding".to_owned()),
            Claim::NoFinding(kind) if has(kind) => fail("the report has it".to_owned()),
            Claim::Count(counted, count) => {
                let actual = match counted {
                    Counted::Findings(kind) => {
                        u64::try_from(report.findings.iter().filter(|finding| finding.kind == kind).count())
                            .unwrap_or(u64::MAX)
                    }
                    Counted::Metric(key) => Metric::ALL
                        .iter()
                        .find(|metric| metric.key() == *key)
                        .map_or(0, |metric| metric.count(&report.metrics)),
                };
                if actual == *count { Ok(()) } else { fail(format!("the run has {actual}")) }
            }
            Claim::Happens(moment) if moment.find(timeline, report).is_none() => {
                fail("the run has no such moment".to_owned())
            }
            Claim::Order(first, then) => match (first.find(timeline, report), then.find(timeline, report)) {
                (Some(first), Some(then)) if (first.at_ms, first.event) < (then.at_ms, then.event) => Ok(()),
                (Some(first), Some(then)) => {
                    fail(format!("the first comes at {} ms, the second at {} ms", first.at_ms, then.at_ms))
                }
                (None, _) | (_, None) => fail("one of the two moments does not occur".to_owned()),
            },
            Claim::Cause { kind, actor, held } => {
                let caused = report.findings.iter().any(|finding| {
                    finding.kind == kind
                        && finding.cause.as_ref().is_some_and(|cause| cause.instance == *actor && cause.held == *held)
                });
                if caused { Ok(()) } else { fail("no finding of that kind has that cause".to_owned()) }
            }
            Claim::Safety(_)
            | Claim::Liveness(_)
            | Claim::Efficiency(_)
            | Claim::Finding(_)
            | Claim::NoFinding(_)
            | Claim::Happens(_) => Ok(()),
        }
    }

    /// The instances the claim names as taking part.
    fn actors(&self) -> Vec<InstanceId> {
        match self {
            Claim::Happens(moment) => moment.actor.into_iter().collect(),
            Claim::Order(first, then) => first.actor.into_iter().chain(then.actor).collect(),
            Claim::Cause { actor, .. } => vec![*actor],
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
            Claim::Count(_, count) => vec![*count],
            Claim::Happens(moment) => token(moment).into_iter().collect(),
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
const WORDS: [(&str, &[&str]); 8] = [
    ("safe", &["safe"]),
    ("at risk", &["at_risk"]),
    ("unsafe", &["unsafe"]),
    ("refuses", &["finding:stale_write_rejected"]),
    ("refused", &["finding:stale_write_rejected"]),
    ("late", &["late", "finding:late_period"]),
    ("missed", &["missed", "finding:missed_period"]),
    ("wasteful", &["wasteful"]),
];

/// Nouns a number before them counts: `36 uploads` must be a listed count.
const COUNTED_NOUNS: [&str; 12] = [
    "stale",
    "write",
    "writes",
    "upload",
    "uploads",
    "post",
    "posts",
    "run",
    "runs",
    "duplicate",
    "duplicates",
    "pings",
];

/// Checks a text against the claims listed for it: every verdict or finding
/// its words state is listed; every instance it names takes part in a listed
/// claim; every number it gives as a count (`5 stale writes`) or a token
/// (`token 2`) is a listed claim's. (`a` is an instance only where it cannot
/// be the article: `a's`, `instance a`.) The claims themselves are checked
/// against the run by [`Claim::check`]. Instances are lower-case letters; an
/// upper-case `B` is a quiz choice, not instance b.
pub fn check_text(text: &str, claims: &[Claim]) -> Result<(), String> {
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
    let numbers: Vec<u64> = claims.iter().flat_map(Claim::numbers).collect();
    for pair in words.windows(2) {
        let stated = match (pair[0].parse::<u64>(), pair[1]) {
            (Ok(count), noun) if COUNTED_NOUNS.contains(&noun) => Some(count),
            (_, number) if pair[0] == "token" => number.parse::<u64>().ok(),
            _ => None,
        };
        if let Some(stated) = stated
            && !numbers.contains(&stated)
        {
            return Err(format!("it says “{} {}”, but no listed claim states {stated}", pair[0], pair[1]));
        }
    }
    Ok(())
}

/// Checks a text and its claims against a run: [`check_text`], then each claim.
pub fn check(text: &str, claims: &[String], timeline: &Timeline, report: &StrategyReport) -> Result<(), String> {
    let parsed: Vec<Claim> = claims.iter().map(|claim| Claim::parse(claim)).collect::<Result<_, _>>()?;
    check_text(text, &parsed)?;
    for claim in &parsed {
        claim.check(timeline, report)?;
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
        let claims =
            |texts: &[&str]| -> Vec<Claim> { texts.iter().map(|text| Claim::parse(text).expect("parses")).collect() };
        assert!(check_text("The night is unsafe.", &claims(&[])).unwrap_err().contains("unsafe"));
        assert!(check_text("The night is unsafe.", &claims(&["unsafe"])).is_ok());
        // An instance named must take part in a claim; `a` the article is no instance.
        assert!(check_text("b wins the lock.", &claims(&[])).unwrap_err().contains("instance b"));
        assert!(check_text("b wins a lock.", &claims(&["grant#1@b"])).is_ok());
        assert!(check_text("Then a's pod restarts.", &claims(&["grant#1@b"])).unwrap_err().contains("instance a"));
        // A quiz choice is an upper-case letter, never an instance.
        assert!(check_text("B and D are wrong here.", &claims(&[])).is_ok());
        // Counts and tokens are stated by a claim.
        assert!(check_text("It made 36 uploads.", &claims(&[])).unwrap_err().contains("36"));
        assert!(check_text("It made 36 uploads.", &claims(&["count:side-effects=36"])).is_ok());
        assert!(check_text("b writes with token 1.", &claims(&["post@b"])).unwrap_err().contains("token 1"));
        assert!(check_text("b writes with token 1.", &claims(&["token:1@b"])).is_ok());
        assert!(check_text("It is late.", &claims(&["finding:late_period"])).is_ok());
    }
}
