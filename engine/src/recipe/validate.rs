//! What a recipe's types alone cannot refuse: values out of range, a step
//! that does not fit where the lock lives (`SET NX PX` on a PostgreSQL row),
//! and combinations that cannot work as written (a fenced write with no
//! token, a compare with a value every instance shares). Each refusal names
//! the field's path inside the recipe and says what would fit.

use super::{Check, Objects, OnLost, Place, Recipe, Release, Renewal, ReportRow, Take, TokenSource, Value};
use crate::ids::MAX_REDIS_NODES;
use std::fmt;

/// The longest TTL, timeout or renewal period a recipe may give: a day, the
/// longest run there is.
const DAY_MS: u64 = 24 * 60 * 60 * 1_000;
/// Most characters in a recipe's name, as in a scenario's.
const MAX_NAME_CHARS: usize = 200;

/// A recipe refused: the field's path inside the recipe, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecipeError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for RecipeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for RecipeError {}

fn refuse(path: &str, message: impl Into<String>) -> RecipeError {
    RecipeError { path: path.to_owned(), message: message.into() }
}

fn check_range(path: &str, value: u64, low: u64, high: u64) -> Result<(), RecipeError> {
    if value < low || value > high {
        Err(refuse(path, format!("{value} is out of range: expected {low} to {high}")))
    } else {
        Ok(())
    }
}

/// Where the lock lives, in words for a refusal.
fn place_words(place: &Place) -> &'static str {
    match place {
        Place::Redis => "a lock on one Redis node (lock.on: redis)",
        Place::RedisMajority { .. } => "a lock on a majority of Redis nodes (lock.on: redis_majority)",
        Place::PostgresRow => "a lock on the jobs row (lock.on: postgres_row)",
        Place::Etcd => "a lock in etcd (lock.on: etcd)",
        Place::Nowhere => "no lock at all (lock.on: nowhere)",
    }
}

impl Recipe {
    /// Checks what the types alone cannot. The first problem found is
    /// returned, in the order the fields are written.
    pub fn validate(&self) -> Result<(), RecipeError> {
        if self.format != super::RECIPE_FORMAT {
            return Err(refuse("format", format!("must be \"{}\", found \"{}\"", super::RECIPE_FORMAT, self.format)));
        }
        let characters = self.name.chars().count();
        if characters > MAX_NAME_CHARS {
            return Err(refuse(
                "name",
                format!("is {characters} characters long; at most {MAX_NAME_CHARS} are allowed"),
            ));
        }
        if self.name.chars().any(char::is_control) {
            return Err(refuse("name", "holds a control character, which a recipe's name may not"));
        }
        self.validate_place()?;
        self.validate_take()?;
        self.validate_token()?;
        self.validate_check()?;
        self.validate_writes()?;
        self.validate_renewal()?;
        self.validate_release()
    }

    fn validate_place(&self) -> Result<(), RecipeError> {
        if let Place::RedisMajority { nodes, drift_factor, .. } = self.lock {
            check_range("lock.nodes", u64::from(nodes), 1, u64::from(MAX_REDIS_NODES))?;
            if !(0.0..=0.5).contains(&drift_factor) {
                return Err(refuse("lock.drift_factor", "must be between 0 and 0.5"));
            }
        }
        Ok(())
    }

    /// The take fits where the lock lives, and its numbers are in range.
    fn validate_take(&self) -> Result<(), RecipeError> {
        let fits = match (&self.lock, &self.take) {
            (
                Place::Redis,
                Take::SetNxPx { .. } | Take::SetNxEx { .. } | Take::SetnxThenExpire { .. } | Take::GetThenSet { .. },
            )
            | (Place::RedisMajority { .. }, Take::SetNxPx { .. } | Take::SetNxEx { .. })
            | (Place::PostgresRow, Take::SelectForUpdate { .. })
            | (Place::Etcd, Take::LeaseAndCreate { .. })
            | (Place::Nowhere, Take::Nothing) => true,
            (
                Place::Redis | Place::RedisMajority { .. } | Place::PostgresRow | Place::Etcd | Place::Nowhere,
                Take::SetNxPx { .. }
                | Take::SetNxEx { .. }
                | Take::SetnxThenExpire { .. }
                | Take::GetThenSet { .. }
                | Take::SelectForUpdate { .. }
                | Take::LeaseAndCreate { .. }
                | Take::Nothing,
            ) => false,
        };
        if !fits {
            let how = match self.lock {
                Place::Redis => "set_nx_px, set_nx_ex, setnx_then_expire or get_then_set",
                // Each node answers one command: a two-step take on every node is not modelled.
                Place::RedisMajority { .. } => "set_nx_px or set_nx_ex, sent to every node",
                Place::PostgresRow => "select_for_update",
                Place::Etcd => "lease_and_create",
                Place::Nowhere => "nothing",
            };
            return Err(refuse(
                "take.with",
                format!("does not fit {}: it is taken with {how}", place_words(&self.lock)),
            ));
        }
        match self.take {
            Take::SetNxPx { ttl_ms, .. } | Take::GetThenSet { ttl_ms, .. } | Take::LeaseAndCreate { ttl_ms } => {
                check_range("take.ttl_ms", ttl_ms, 1, DAY_MS)
            }
            Take::SetNxEx { ttl_s, .. } | Take::SetnxThenExpire { ttl_s, .. } => {
                check_range("take.ttl_s", ttl_s, 1, DAY_MS / 1_000)
            }
            Take::SelectForUpdate { lock_timeout_ms, idle_in_transaction_timeout_ms, .. } => {
                check_range("take.lock_timeout_ms", lock_timeout_ms, 0, DAY_MS)?;
                check_range("take.idle_in_transaction_timeout_ms", idle_in_transaction_timeout_ms, 0, DAY_MS)
            }
            Take::Nothing => Ok(()),
        }
    }

    fn validate_token(&self) -> Result<(), RecipeError> {
        let problem = match self.token {
            TokenSource::IncrInScript if !matches!((&self.lock, &self.take), (Place::Redis, Take::SetNxPx { .. })) => {
                "incr_in_script is the lock script's INCR, which runs with SET NX PX on one Redis node (lock.on: redis, take.with: set_nx_px)"
            }
            TokenSource::Incr if self.lock != Place::Redis => {
                "incr counts on one Redis node's counter; it needs lock.on: redis (independent nodes would each count their own)"
            }
            TokenSource::EtcdRevision if self.lock != Place::Etcd => {
                "etcd_revision is the etcd key's revision; it needs lock.on: etcd"
            }
            TokenSource::None
            | TokenSource::IncrInScript
            | TokenSource::Incr
            | TokenSource::EtcdRevision
            | TokenSource::Random => return Ok(()),
        };
        Err(refuse("token", problem))
    }

    fn validate_check(&self) -> Result<(), RecipeError> {
        match self.before_write {
            Check::Nothing => return Ok(()),
            Check::LeaseTimeLeft { at_least_ms } => {
                let Some(ttl_ms) = self.ttl_ms().filter(|_| self.lock != Place::PostgresRow) else {
                    return Err(refuse(
                        "before_write.check",
                        format!("lease_time_left needs a lease, and {} has none", place_words(&self.lock)),
                    ));
                };
                if at_least_ms >= ttl_ms {
                    return Err(refuse(
                        "before_write.at_least_ms",
                        format!("{at_least_ms} is not less than the lease's {ttl_ms} ms: no write would ever go out"),
                    ));
                }
            }
            Check::GetAndCompare => {
                if self.lock != Place::Redis {
                    return Err(refuse(
                        "before_write.check",
                        format!(
                            "get_and_compare reads one Redis node's key; it does not fit {}",
                            place_words(&self.lock)
                        ),
                    ));
                }
                if self.value() != Some(Value::Own) {
                    return Err(refuse(
                        "before_write.check",
                        "get_and_compare compares the key with the run's own value, and with take.value: locked every instance writes the same: it cannot tell one holder from another",
                    ));
                }
            }
        }
        if self.on_lost == OnLost::CarryOn {
            return Err(refuse(
                "on_lost",
                "carry_on ignores what before_write finds, so the check would change nothing: check nothing, or stop",
            ));
        }
        Ok(())
    }

    /// A fenced write needs a token to carry, and objects of a run's own
    /// need the row that publishes them.
    fn validate_writes(&self) -> Result<(), RecipeError> {
        let writes = &self.writes;
        if writes.report_row == ReportRow::FencedUpsert && self.token == TokenSource::None {
            return Err(refuse(
                "writes.report_row",
                "fenced_upsert refuses a row whose token is lower than one it has seen, and this recipe takes no token (token: none): every row would go through unchecked, or none",
            ));
        }
        if writes.report_row == ReportRow::FencedUpsert && !writes.carry_token {
            return Err(refuse(
                "writes.report_row",
                "fenced_upsert checks the token the row carries, and the writes carry none (writes.carry_token: false)",
            ));
        }
        if writes.carry_token && self.token == TokenSource::None {
            return Err(refuse(
                "writes.carry_token",
                "the writes can carry a token only if the recipe takes one, and it takes none (token: none)",
            ));
        }
        if writes.objects == Objects::Own && writes.report_row != ReportRow::InsertOrNothing {
            return Err(refuse(
                "writes.objects",
                "objects of a run's own are published by the report row's unique key: report_row must be insert_or_nothing",
            ));
        }
        Ok(())
    }

    fn validate_renewal(&self) -> Result<(), RecipeError> {
        let Some(every_ms) = self.renew.every_ms() else {
            // Never renewing fits every lock.
            return Ok(());
        };
        check_range("renew.every_ms", every_ms, 1, DAY_MS)?;
        let fits = match (&self.renew, &self.lock) {
            (Renewal::CompareAndPexpire { .. }, Place::Redis | Place::RedisMajority { .. })
            | (Renewal::Expire { .. }, Place::Redis)
            | (Renewal::KeepAlive { .. }, Place::Etcd) => true,
            (
                Renewal::None | Renewal::CompareAndPexpire { .. } | Renewal::Expire { .. } | Renewal::KeepAlive { .. },
                Place::Redis | Place::RedisMajority { .. } | Place::PostgresRow | Place::Etcd | Place::Nowhere,
            ) => false,
        };
        if !fits {
            let how = match self.lock {
                Place::Redis => "compare_and_pexpire or expire",
                Place::RedisMajority { .. } => "compare_and_pexpire on every node",
                Place::Etcd => "keep_alive",
                Place::PostgresRow => "none: the transaction holds the row until it ends",
                Place::Nowhere => "none",
            };
            return Err(refuse(
                "renew.with",
                format!("does not fit {}: it is renewed with {how}", place_words(&self.lock)),
            ));
        }
        if matches!(self.renew, Renewal::CompareAndPexpire { .. }) && self.value() != Some(Value::Own) {
            return Err(refuse(
                "renew.with",
                "compare_and_pexpire extends the key only while it holds the run's own value, and with take.value: locked every instance writes the same",
            ));
        }
        if matches!(self.renew, Renewal::Expire { .. }) && self.ttl_ms().is_some_and(|ttl| ttl % 1_000 != 0) {
            return Err(refuse(
                "renew.with",
                "EXPIRE counts whole seconds, and the take's TTL is not a whole number of them: renew with compare_and_pexpire, or give the take a TTL in whole seconds",
            ));
        }
        Ok(())
    }

    fn validate_release(&self) -> Result<(), RecipeError> {
        let fits = match (self.release, &self.lock) {
            (Release::None | Release::Del | Release::CompareAndDelete, Place::Redis | Place::RedisMajority { .. })
            | (Release::None | Release::Revoke, Place::Etcd)
            | (Release::Commit, Place::PostgresRow)
            | (Release::None, Place::Nowhere) => true,
            (
                Release::None | Release::Del | Release::CompareAndDelete | Release::Commit | Release::Revoke,
                Place::Redis | Place::RedisMajority { .. } | Place::PostgresRow | Place::Etcd | Place::Nowhere,
            ) => false,
        };
        if !fits {
            let how = match self.lock {
                Place::Redis | Place::RedisMajority { .. } => "none, del or compare_and_delete",
                Place::Etcd => "none or revoke",
                Place::PostgresRow => "commit: the transaction that holds the row also writes the report row",
                Place::Nowhere => "none",
            };
            return Err(refuse(
                "release",
                format!("does not fit {}: it is given back with {how}", place_words(&self.lock)),
            ));
        }
        if self.release == Release::CompareAndDelete && self.value() != Some(Value::Own) {
            return Err(refuse(
                "release",
                "compare_and_delete deletes the key only while it holds the run's own value, and with take.value: locked every instance writes the same: it would delete anyone's",
            ));
        }
        Ok(())
    }
}
