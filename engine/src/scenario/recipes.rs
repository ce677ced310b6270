//! Each built-in strategy as a `locklab-recipe/1` document, with the settings
//! a scenario gives it: the one place that says which recipe steps a
//! built-in performs. Each recipe encodes what the strategy's code
//! (`crate::strategy`) does, step for step: how it takes the lock and with
//! which value, where its token comes from, what its writes carry, how it
//! renews, what it does when the lock is lost, how it gives it back and how
//! long a loser waits.
//!
//! The recipe module names nothing of the scenario, so the scenario can read
//! recipes (a custom strategy's) without an import cycle; the mapping lives
//! here, on the scenario's side.

use super::strategies::{
    DbLockSettings, LeaseSettings, NaiveRelease, NaiveSettings, RedlockSettings, StrategyId, StrategySettings,
};
use crate::recipe::{self, Check, OnLost, Place, Recipe, Release, Renewal, Retry, Take, TokenSource, Value, Writes};

impl StrategySettings {
    /// The recipe of the strategy with these settings: the steps a real
    /// client performs to do what the built-in does.
    ///
    /// Every built-in has one: the recipe's steps reach all six (naive,
    /// fencing, Redlock, db-lock, unique-insert, consensus) as their code
    /// stands. `None` is for settings that no valid scenario gives (a TTL
    /// past a day, six Redis nodes): the recipe they would make is refused
    /// by [`Recipe::validate`], and a recipe returned here always passes it.
    pub fn recipe(&self) -> Option<Recipe> {
        let recipe = match self {
            StrategySettings::Naive(naive) => naive_recipe(naive),
            StrategySettings::Fencing(lease) => fencing_recipe(lease),
            StrategySettings::Redlock(redlock) => redlock_recipe(redlock),
            StrategySettings::DbLock(db_lock) => db_lock_recipe(db_lock),
            StrategySettings::UniqueInsert => unique_insert_recipe(),
            StrategySettings::Consensus(lease) => consensus_recipe(lease),
        };
        let recipe = Recipe { name: self.title(), ..recipe };
        recipe.validate().is_ok().then_some(recipe)
    }
}

impl StrategySettings {
    /// The settings of `strategy` that a recipe's numbers give, read back
    /// from the fields [`StrategySettings::recipe`] writes them to; whether
    /// the recipe is that strategy's, step for step, is the caller's to
    /// check (by comparing the settings' recipe with it). `None` when the
    /// recipe lacks a number the strategy needs.
    pub fn from_recipe(strategy: StrategyId, recipe: &Recipe) -> Option<StrategySettings> {
        let ttl_ms = recipe.ttl_ms();
        let every_ms = recipe.renew.every_ms();
        let lease = || Some(LeaseSettings { ttl_ms: ttl_ms?, renew_every_ms: every_ms? });
        Some(match strategy {
            StrategyId::Naive => StrategySettings::Naive(NaiveSettings {
                ttl_ms: ttl_ms?,
                release: match recipe.release {
                    Release::Del => NaiveRelease::Del,
                    Release::CompareAndDelete => NaiveRelease::CompareAndDelete,
                    Release::None | Release::Commit | Release::Revoke => NaiveRelease::Never,
                },
            }),
            StrategyId::Fencing => StrategySettings::Fencing(lease()?),
            StrategyId::Consensus => StrategySettings::Consensus(lease()?),
            StrategyId::Redlock => {
                let Place::RedisMajority { nodes, drift_factor, delayed_restart } = recipe.lock else { return None };
                StrategySettings::Redlock(RedlockSettings {
                    ttl_ms: ttl_ms?,
                    renew_every_ms: every_ms?,
                    nodes,
                    drift_factor,
                    delayed_restart,
                })
            }
            StrategyId::DbLock => {
                let Take::SelectForUpdate { lock_strength, wait, lock_timeout_ms, idle_in_transaction_timeout_ms } =
                    recipe.take
                else {
                    return None;
                };
                StrategySettings::DbLock(DbLockSettings {
                    lock_strength,
                    wait,
                    lock_timeout_ms,
                    idle_in_transaction_timeout_ms,
                })
            }
            StrategyId::UniqueInsert => StrategySettings::UniqueInsert,
        })
    }
}

/// The seed's `SET job:daily-report locked NX EX 300`: in whole seconds
/// when the TTL is whole seconds (`EX`), else in ms (`PX`); the literal
/// `locked` unless the release compares values, which needs the run's own.
/// Never renewed (the TTL is meant to outlast the job), so never lost.
fn naive_recipe(naive: &NaiveSettings) -> Recipe {
    let value = match naive.release {
        NaiveRelease::CompareAndDelete => Value::Own,
        NaiveRelease::Never | NaiveRelease::Del => Value::Locked,
    };
    let take = if naive.ttl_ms.is_multiple_of(1_000) {
        Take::SetNxEx { value, ttl_s: naive.ttl_ms / 1_000 }
    } else {
        Take::SetNxPx { value, ttl_ms: naive.ttl_ms }
    };
    let release = match naive.release {
        NaiveRelease::Never => Release::None,
        NaiveRelease::Del => Release::Del,
        NaiveRelease::CompareAndDelete => Release::CompareAndDelete,
    };
    Recipe { lock: Place::Redis, take, release, ..Recipe::default() }
}

/// Quiz option A: the lock script (`SET … NX PX` and, only if it set the
/// key, `INCR` of the token) on one Redis node; every chunk and the report
/// row carry the token, and the row refuses a lower one; the extend script
/// every `renew_every_ms`; the job stops when a renewal is refused or the
/// lease runs out by its own clock; the unlock script at the end.
fn fencing_recipe(lease: &LeaseSettings) -> Recipe {
    Recipe {
        lock: Place::Redis,
        take: Take::SetNxPx { value: Value::Own, ttl_ms: lease.ttl_ms },
        token: TokenSource::IncrInScript,
        before_write: Check::Nothing,
        writes: fenced_writes(),
        renew: Renewal::CompareAndPexpire { every_ms: lease.renew_every_ms },
        on_lost: OnLost::Stop,
        release: Release::CompareAndDelete,
        retry: Retry::Fixed,
        ..Recipe::default()
    }
}

/// Quiz option B: `SET … NX PX` on every node at once, the lock the
/// client's when a majority said yes and the validity left by its own clock
/// (TTL − elapsed − drift) is positive; the extend script on every node,
/// held on a majority's yes; the unlock script on every node, after a
/// failed attempt too; no token; a random delay before trying again.
fn redlock_recipe(redlock: &RedlockSettings) -> Recipe {
    Recipe {
        lock: Place::RedisMajority {
            nodes: redlock.nodes,
            drift_factor: redlock.drift_factor,
            delayed_restart: redlock.delayed_restart,
        },
        take: Take::SetNxPx { value: Value::Own, ttl_ms: redlock.ttl_ms },
        token: TokenSource::None,
        before_write: Check::Nothing,
        writes: Writes::default(),
        renew: Renewal::CompareAndPexpire { every_ms: redlock.renew_every_ms },
        on_lost: OnLost::Stop,
        release: Release::CompareAndDelete,
        retry: Retry::Jittered,
        ..Recipe::default()
    }
}

/// Quiz option C: `SELECT … FOR UPDATE` (or the settings' strength and
/// wait) in a transaction on one pooled connection, held for the whole job;
/// the report row written in that transaction, and `COMMIT` ends both. No
/// token, nothing renewed: the transaction holds the row until it ends.
fn db_lock_recipe(db_lock: &DbLockSettings) -> Recipe {
    let (lock_strength, wait) = (db_lock.lock_strength, db_lock.wait);
    Recipe {
        lock: Place::PostgresRow,
        take: Take::SelectForUpdate {
            lock_strength,
            wait,
            lock_timeout_ms: db_lock.lock_timeout_ms,
            idle_in_transaction_timeout_ms: db_lock.idle_in_transaction_timeout_ms,
        },
        token: TokenSource::None,
        before_write: Check::Nothing,
        writes: Writes::default(),
        renew: Renewal::None,
        on_lost: OnLost::Stop,
        release: Release::Commit,
        retry: Retry::Fixed,
        ..Recipe::default()
    }
}

/// Quiz option D: no lock at all; each run writes objects of its own and
/// the report row's unique key lets the first insert win.
fn unique_insert_recipe() -> Recipe {
    Recipe {
        lock: Place::Nowhere,
        take: Take::Nothing,
        token: TokenSource::None,
        before_write: Check::Nothing,
        writes: Writes {
            carry_token: false,
            report_row: recipe::ReportRow::InsertOrNothing,
            objects: recipe::Objects::Own,
        },
        renew: Renewal::None,
        on_lost: OnLost::Stop,
        release: Release::None,
        retry: Retry::Fixed,
        ..Recipe::default()
    }
}

/// The etcd-style lease: a lease of `ttl_ms` and a transaction that creates
/// the key with it only if absent; the key's revision is the token, carried
/// by every chunk and checked by the report row; keep-alives every
/// `renew_every_ms`; the lease revoked at the end.
fn consensus_recipe(lease: &LeaseSettings) -> Recipe {
    Recipe {
        lock: Place::Etcd,
        take: Take::LeaseAndCreate { ttl_ms: lease.ttl_ms },
        token: TokenSource::EtcdRevision,
        before_write: Check::Nothing,
        writes: fenced_writes(),
        renew: Renewal::KeepAlive { every_ms: lease.renew_every_ms },
        on_lost: OnLost::Stop,
        release: Release::Revoke,
        retry: Retry::Fixed,
        ..Recipe::default()
    }
}

/// The writes of a fenced lock: every chunk and the report row carry the
/// token, and the row refuses one lower than it has seen.
fn fenced_writes() -> Writes {
    Writes { carry_token: true, report_row: recipe::ReportRow::FencedUpsert, objects: recipe::Objects::Shared }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_lock_is_the_default_recipe() {
        let seed = StrategySettings::default_for(StrategyId::Naive).recipe().expect("the seed's lock is a recipe");
        assert_eq!(Recipe { name: String::new(), ..seed }, Recipe::default());
    }

    #[test]
    fn the_naive_ttl_is_said_in_seconds_only_when_it_is_whole_seconds() {
        let naive = NaiveSettings { ttl_ms: 1_500, release: NaiveRelease::CompareAndDelete };
        let recipe = StrategySettings::Naive(naive).recipe().expect("a naive lock is a recipe");
        assert_eq!(recipe.take, Take::SetNxPx { value: Value::Own, ttl_ms: 1_500 });
        assert_eq!(recipe.release, Release::CompareAndDelete);
    }

    #[test]
    fn settings_no_scenario_gives_have_no_recipe() {
        let redlock = RedlockSettings { nodes: 6, ..RedlockSettings::default() };
        assert_eq!(StrategySettings::Redlock(redlock).recipe(), None);
    }
}
