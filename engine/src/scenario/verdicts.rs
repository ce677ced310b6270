//! The three verdicts a run gets (safety, liveness, efficiency) and what a
//! built-in scenario expects of a strategy.

use serde::{Deserialize, Serialize};

/// Whether a run kept the data correct, and whether only timing did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Safety {
    /// No stale write landed and no two holders wrote where no fence checked.
    Safe,
    /// Two runs held the lock at once and both wrote where no fence checked:
    /// the data survived only by timing. Mutual exclusion, which is what the
    /// Redis documentation calls a lock's safety, was lost.
    AtRisk,
    /// A stale write landed or a stored report was damaged.
    Unsafe,
}

crate::by_name::by_name!(Safety { Safe = "safe", AtRisk = "at_risk", Unsafe = "unsafe" });

impl Safety {
    /// The contract's word for it.
    pub fn name(self) -> &'static str {
        match self {
            Safety::Safe => "safe",
            Safety::AtRisk => "at_risk",
            Safety::Unsafe => "unsafe",
        }
    }
}

/// Whether every period got its report, and in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Liveness {
    Ok,
    Late,
    Missed,
    /// The system does not keep up: each job needs more than a cron period of
    /// work and runs queue for the lock one behind another, so every period's
    /// report comes later than the last, without bound.
    Behind,
}

crate::by_name::by_name!(Liveness { Ok = "ok", Late = "late", Missed = "missed", Behind = "behind" });

impl Liveness {
    /// The contract's word for it.
    pub fn name(self) -> &'static str {
        match self {
            Liveness::Ok => "ok",
            Liveness::Late => "late",
            Liveness::Missed => "missed",
            Liveness::Behind => "behind",
        }
    }
}

/// Whether the strategy did the job's work once, and let other work be:
/// the third axis of the verdict, as the post judges option D ("triple the
/// S3 writes, triple the Slack pings") and option C ("connection pool
/// starved"). Kleppmann's locks *for efficiency* exist to save exactly this.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Efficiency {
    /// Work was done twice only where a fault forced it.
    Ok,
    /// A run did work another run was already doing with no fault to force
    /// it (no lock, or a lock that let it in on its own), or other services'
    /// queries failed waiting behind the job's lock.
    Wasteful,
}

crate::by_name::by_name!(Efficiency { Ok = "ok", Wasteful = "wasteful" });

impl Efficiency {
    /// The contract's word for it.
    pub fn name(self) -> &'static str {
        match self {
            Efficiency::Ok => "ok",
            Efficiency::Wasteful => "wasteful",
        }
    }
}

/// What a built-in scenario promises about one strategy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    pub safety: Safety,
    pub liveness: Liveness,
    /// Absent in documents written before the verdict had three axes; every
    /// built-in states it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub efficiency: Option<Efficiency>,
    /// Finding kinds that must appear in the report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<String>,
    /// Why, in a sentence, with the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// What `why` says about the run, in the claims of `crate::claim` (read
    /// by the texts test from the document; see [`Scenario::claims`]).
    #[serde(default, skip_serializing)]
    pub claims: serde::de::IgnoredAny,
}
