//! `custom`: a lock on one Redis node played step by step from its recipe
//! (`crate::recipe`, `locklab-recipe/1`). Each step is the real command
//! with the real semantics the engine's Redis models: `SET … NX PX|EX` in one
//! round trip, `SETNX` then `EXPIRE` in two (a key with no expiry at all
//! between them), `GET` then a plain `SET … PX` (two clients can both read
//! nothing and both set), the token from the lock script, from an `INCR` of
//! its own, or random; renewal by the extend script or a plain `EXPIRE`;
//! stopping or carrying on when the lease is lost; the release by `DEL`, by
//! the unlock script, or not at all; before each write, a look at the
//! lease's time left by the client's own clock, or a `GET` and compare.
//!
//! The recipes of `naive` and `fencing` (`StrategySettings::recipe`) are
//! played here exactly as those strategies play them, event for event
//! (`engine/tests/recipes.rs`). A recipe whose lock lives elsewhere (a
//! majority of nodes, the jobs row, etcd, nowhere) is played by the built-in
//! whose recipe it is ([`built_in_for`]); the interpreter does not yet play
//! other steps there ([`RecipeLock::new`] says so, by the field).

use super::LeaseKeeper;
use crate::event::{AbortReason, LockValue, RedisCommand, RedisReply, RowWrite};
use crate::ids::{RunId, Token};
use crate::recipe::{
    Check, Objects, OnLost, Place, Recipe, Release, Renewal, ReportRow, Retry, Take, TokenSource, Value,
};
use crate::scenario::{StrategyId, StrategySettings};
use crate::vocab::{Context, RecipeTag, Reply, Request, RunMap, Strategy, Tag, Timer, WriteGate};

/// The client's timeout on every command: the built-in single-node locks'.
pub(crate) const REDIS_TIMEOUT_MS: u64 = 1_000;

/// Where a run's attempt at the lock is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// The take's first command is out.
    Taking,
    /// `SETNX` set the key; its `EXPIRE` is out.
    Expiring,
    /// `GET` found no key; the plain `SET` is out.
    Setting,
    /// The lock is taken; the token's own `INCR` is out.
    Counting,
    /// The run holds the lock, by its own account.
    Holding,
}

#[derive(Debug)]
struct Held {
    /// When the take (or the last renewal) went out, by the instance's clock.
    sent_local_ms: i64,
    stage: Stage,
    token: Option<Token>,
    keeper: Option<LeaseKeeper>,
    /// Until when the lease it last secured lasts, by the instance's clock.
    valid_until_local_ms: i64,
    /// Whether the run holds the lock by its own account: set when it took
    /// it, cleared when it learned it lost it (and stopped).
    holds: bool,
}

/// A single-node Redis lock played from its recipe.
#[derive(Debug)]
pub(crate) struct RecipeLock {
    recipe: Recipe,
    ttl_ms: u64,
    runs: RunMap<Held>,
}

impl RecipeLock {
    /// The interpreter for `recipe`, or the field of a step it does not
    /// play yet. The recipe has passed [`Recipe::validate`].
    pub(crate) fn new(recipe: &Recipe) -> Result<RecipeLock, String> {
        if recipe.lock != Place::Redis {
            return Err(
                "lock: only a lock on one Redis node is played step by step; elsewhere, only a built-in's steps"
                    .to_owned(),
            );
        }
        let ttl_ms = recipe.ttl_ms().ok_or_else(|| "take: a lock on one Redis node has a TTL".to_owned())?;
        Ok(RecipeLock { recipe: recipe.clone(), ttl_ms, runs: RunMap::new() })
    }

    fn send<C: Context + ?Sized>(cx: &mut C, command: RedisCommand, tag: RecipeTag) {
        let primary = cx.redis_primary();
        cx.send(primary, Request::Redis(command), Tag::Recipe(tag), Some(REDIS_TIMEOUT_MS));
    }

    /// What the key holds for this run: its own value, or the literal `locked`.
    fn value<C: Context + ?Sized>(&self, cx: &C) -> LockValue {
        match self.recipe.value() {
            Some(Value::Own) => LockValue::Owner(cx.owner()),
            Some(Value::Locked) | None => LockValue::Locked,
        }
    }

    /// The take's first command.
    fn first_command<C: Context + ?Sized>(&self, cx: &C) -> RedisCommand {
        let value = self.value(cx);
        match (&self.recipe.take, self.recipe.token) {
            // The lock script: `SET … NX PX` and, only if it set the key, `INCR`.
            (Take::SetNxPx { ttl_ms, .. }, TokenSource::IncrInScript) => {
                RedisCommand::SetNxPxIncr { value: cx.owner(), ttl_ms: *ttl_ms }
            }
            (Take::SetNxPx { ttl_ms, .. }, _) => RedisCommand::SetNxPx { value, ttl_ms: *ttl_ms },
            (Take::SetNxEx { ttl_s, .. }, _) => RedisCommand::SetNxEx { value, ttl_s: *ttl_s },
            (Take::SetnxThenExpire { .. }, _) => RedisCommand::SetNx { value },
            (Take::GetThenSet { .. }, _) => RedisCommand::Get,
            // Refused by `RecipeLock::new` (not one Redis node).
            (Take::SelectForUpdate { .. } | Take::LeaseAndCreate { .. } | Take::Nothing, _) => RedisCommand::Get,
        }
    }

    /// The lease's length, on the instance's clock's scale.
    fn lease_ms(&self) -> i64 {
        i64::try_from(self.ttl_ms).unwrap_or(i64::MAX / 4)
    }

    /// `EXPIRE`'s whole seconds for the lease: rounded up, so the key never
    /// lives shorter than the recipe's TTL.
    fn ttl_s(&self) -> u64 {
        self.ttl_ms.div_ceil(1_000)
    }

    fn retry_ms<C: Context + ?Sized>(&self, cx: &mut C) -> u64 {
        let retry = cx.world().retry_ms;
        match self.recipe.retry {
            Retry::Fixed => retry,
            Retry::Jittered => cx.random_between(retry / 2, retry + retry / 2),
        }
    }

    /// The lock is taken: get the token where it comes apart, else hold.
    fn taken<C: Context + ?Sized>(&mut self, cx: &mut C, token: Option<Token>) {
        if self.recipe.token == TokenSource::Incr {
            if let Some(held) = self.runs.get_mut(&cx.run()) {
                held.stage = Stage::Counting;
            }
            RecipeLock::send(cx, RedisCommand::Incr, RecipeTag::Count);
            return;
        }
        let token = match self.recipe.token {
            TokenSource::Random => Some(Token(cx.random_between(1, u64::from(u32::MAX)))),
            TokenSource::IncrInScript | TokenSource::None | TokenSource::Incr | TokenSource::EtcdRevision => token,
        };
        self.hold(cx, token);
    }

    /// The run holds the lock with `token`: keep the lease, and say so.
    fn hold<C: Context + ?Sized>(&mut self, cx: &mut C, token: Option<Token>) {
        let lease_ms = self.lease_ms();
        let every_ms = self.recipe.renew.every_ms();
        let Some(held) = self.runs.get_mut(&cx.run()) else { return };
        debug_assert!(!held.holds, "run {} granted twice", cx.run());
        held.stage = Stage::Holding;
        held.holds = true;
        held.token = token;
        held.valid_until_local_ms = held.sent_local_ms + lease_ms;
        if let Some(every_ms) = every_ms {
            held.keeper = Some(LeaseKeeper::start(cx, every_ms, held.valid_until_local_ms));
        }
        cx.acquired(token);
    }

    /// The answer to the take's first command.
    fn take_answered<C: Context + ?Sized>(&mut self, cx: &mut C, answer: RedisReply) {
        match (&self.recipe.take, answer) {
            (Take::SetNxPx { .. }, RedisReply::Integer(value)) if self.recipe.token == TokenSource::IncrInScript => {
                // INCR counts from 1 (from 1 again after a restart that lost the counter).
                debug_assert!(value > 0, "INCR gave {value}");
                self.taken(cx, Some(Token(value.unsigned_abs())));
            }
            (Take::SetNxPx { .. } | Take::SetNxEx { .. }, RedisReply::Ok) => self.taken(cx, None),
            (Take::SetnxThenExpire { .. }, RedisReply::Integer(1)) => {
                if let Some(held) = self.runs.get_mut(&cx.run()) {
                    held.stage = Stage::Expiring;
                }
                RecipeLock::send(cx, RedisCommand::Expire { ttl_s: self.ttl_s() }, RecipeTag::Expire);
            }
            (Take::GetThenSet { ttl_ms, .. }, RedisReply::Nil) => {
                let command = RedisCommand::SetPx { value: self.value(cx), ttl_ms: *ttl_ms };
                if let Some(held) = self.runs.get_mut(&cx.run()) {
                    held.stage = Stage::Setting;
                }
                RecipeLock::send(cx, command, RecipeTag::Set);
            }
            // Somebody's key is there, or no answer: try again later.
            (
                Take::SetNxPx { .. }
                | Take::SetNxEx { .. }
                | Take::SetnxThenExpire { .. }
                | Take::GetThenSet { .. }
                | Take::SelectForUpdate { .. }
                | Take::LeaseAndCreate { .. }
                | Take::Nothing,
                RedisReply::Ok
                | RedisReply::Nil
                | RedisReply::Integer(_)
                | RedisReply::Value(_)
                | RedisReply::ConnectionRefused
                | RedisReply::Timeout,
            ) => {
                let retry = self.retry_ms(cx);
                cx.busy(retry);
            }
        }
    }

    /// The answer to a renewal: 1 extended the key, 0 found none to extend
    /// (or, for the script, not the run's own), anything else is no answer.
    fn extend_answered<C: Context + ?Sized>(&mut self, cx: &mut C, answer: RedisReply) {
        let lease_ms = self.lease_ms();
        match answer {
            RedisReply::Integer(1) => {
                if let Some(held) = self.runs.get_mut(&cx.run())
                    && let Some(keeper) = held.keeper.as_mut()
                {
                    held.valid_until_local_ms = held.sent_local_ms + lease_ms;
                    keeper.secured(cx, held.valid_until_local_ms);
                }
            }
            RedisReply::Integer(_) => self.gone(cx, true),
            RedisReply::Ok
            | RedisReply::Nil
            | RedisReply::Value(_)
            | RedisReply::ConnectionRefused
            | RedisReply::Timeout => {
                if let Some(keeper) = self.runs.get_mut(&cx.run()).and_then(|held| held.keeper.as_mut()) {
                    keeper.unanswered(cx);
                }
            }
        }
    }

    /// The lease is gone, by a refused renewal (`refused`) or by the
    /// holder's own clock: stop, or carry on as the recipe says.
    fn gone<C: Context + ?Sized>(&mut self, cx: &mut C, refused: bool) {
        let on_lost = self.recipe.on_lost;
        let Some(held) = self.runs.get_mut(&cx.run()) else { return };
        let Some(keeper) = held.keeper.as_mut() else { return };
        match (on_lost, refused) {
            (OnLost::Stop, true) => {
                held.holds = false;
                keeper.lost(cx);
            }
            (OnLost::Stop, false) => {
                held.holds = false;
                keeper.expired(cx);
            }
            // It carries on as if it held the lock: it stops renewing a
            // lease it was told is gone, and keeps trying one it cannot tell.
            (OnLost::CarryOn, true) => keeper.stop(cx),
            (OnLost::CarryOn, false) => {}
        }
    }
}

impl<C: Context + ?Sized> Strategy<C> for RecipeLock {
    fn acquire(&mut self, cx: &mut C) {
        let sent_local_ms = cx.local_now();
        let held = Held {
            sent_local_ms,
            stage: Stage::Taking,
            token: None,
            keeper: None,
            valid_until_local_ms: sent_local_ms,
            holds: false,
        };
        self.runs.insert(cx.run(), held);
        let command = self.first_command(cx);
        RecipeLock::send(cx, command, RecipeTag::Take);
    }

    fn on_reply(&mut self, cx: &mut C, tag: Tag, reply: Reply) {
        let Tag::Recipe(tag) = tag else { return };
        let Some(stage) = self.runs.get(&cx.run()).map(|held| held.stage) else { return };
        let Reply::Redis(reply) = reply else { return };
        match (tag, stage, reply) {
            (RecipeTag::Take, Stage::Taking, answer) => self.take_answered(cx, answer),
            // The key is ours either way once SETNX said 1: an EXPIRE that
            // got no answer leaves it with no expiry, which is the recipe's
            // risk to show, not a reason to let go.
            (RecipeTag::Expire, Stage::Expiring, _) | (RecipeTag::Set, Stage::Setting, RedisReply::Ok) => {
                self.taken(cx, None);
            }
            (RecipeTag::Count, Stage::Counting, RedisReply::Integer(value)) if value > 0 => {
                self.hold(cx, Some(Token(value.unsigned_abs())));
            }
            // Another's plain SET came first, or no token, so no write it
            // could carry: give up this attempt.
            (RecipeTag::Set, Stage::Setting, _) | (RecipeTag::Count, Stage::Counting, _) => {
                let retry = self.retry_ms(cx);
                cx.busy(retry);
            }
            (RecipeTag::Extend, Stage::Holding, answer) => self.extend_answered(cx, answer),
            (RecipeTag::Check, Stage::Holding, answer) => {
                if answer == RedisReply::Value(LockValue::Owner(cx.owner())) {
                    cx.write_cleared();
                } else {
                    // Another's value, no key, or no answer: not its lock to write under.
                    cx.lost(AbortReason::NotHolder);
                }
            }
            // A release is not awaited (the run is over), and a reply that
            // comes after the run moved on is stale.
            (
                RecipeTag::Take
                | RecipeTag::Expire
                | RecipeTag::Set
                | RecipeTag::Count
                | RecipeTag::Extend
                | RecipeTag::Check
                | RecipeTag::Release,
                Stage::Taking | Stage::Expiring | Stage::Setting | Stage::Counting | Stage::Holding,
                _,
            ) => {}
        }
    }

    fn on_timer(&mut self, cx: &mut C, timer: Timer) {
        if timer == Timer::Deadline {
            self.gone(cx, false);
            return;
        }
        let command = match self.recipe.renew {
            Renewal::CompareAndPexpire { .. } => {
                RedisCommand::CompareAndExtend { value: cx.owner(), ttl_ms: self.ttl_ms }
            }
            Renewal::Expire { .. } => RedisCommand::Expire { ttl_s: self.ttl_s() },
            // Refused by validation on one Redis node, and nothing to renew.
            Renewal::None | Renewal::KeepAlive { .. } => return,
        };
        let now = cx.local_now();
        let Some(held) = self.runs.get_mut(&cx.run()) else { return };
        held.sent_local_ms = now;
        RecipeLock::send(cx, command, RecipeTag::Extend);
    }

    /// `lease_time_left`: the write goes out only if, by the instance's own
    /// clock, at least that much of the lease it last secured is left. The
    /// check is the client's: a pause between it and the write (the chunk's
    /// upload) is not seen, which is Kleppmann's point.
    ///
    /// `get_and_compare`: a `GET` first, and the write goes out once the
    /// answer is the run's own value. The look is at one moment too: the
    /// key can expire between the answer and the write.
    fn may_write(&mut self, cx: &mut C) -> WriteGate {
        let now = cx.local_now();
        // A run that does not hold the lock by its own account (a redelivered
        // job) is not the check's to stop.
        let Some(held) = self.runs.get_mut(&cx.run()).filter(|held| held.holds) else { return WriteGate::Now };
        match self.recipe.before_write {
            Check::Nothing => WriteGate::Now,
            Check::LeaseTimeLeft { at_least_ms } => {
                let left_ms = held.valid_until_local_ms.saturating_sub(now);
                if left_ms >= i64::try_from(at_least_ms).unwrap_or(i64::MAX) {
                    return WriteGate::Now;
                }
                // It stops the job; the lock may still be its own for the
                // time left, so the release gives it back as the recipe says.
                cx.lost(AbortReason::LeaseTooShort);
                WriteGate::Never
            }
            Check::GetAndCompare => {
                RecipeLock::send(cx, RedisCommand::Get, RecipeTag::Check);
                WriteGate::WhenCleared
            }
        }
    }

    fn release(&mut self, cx: &mut C) {
        let Some(mut held) = self.runs.remove(&cx.run()) else { return };
        if let Some(keeper) = held.keeper.as_mut() {
            keeper.stop(cx);
        }
        if !held.holds {
            return;
        }
        let command = match self.recipe.release {
            Release::Del => RedisCommand::Del,
            Release::CompareAndDelete => RedisCommand::CompareAndDelete { value: cx.owner() },
            // The TTL ends it; the others are refused on one Redis node.
            Release::None | Release::Commit | Release::Revoke => return,
        };
        RecipeLock::send(cx, command, RecipeTag::Release);
    }

    fn forget(&mut self, run: RunId) {
        self.runs.remove(&run);
    }

    fn token(&self, run: RunId) -> Option<Token> {
        // A token the writes do not carry protects nothing.
        self.runs.get(&run).and_then(|held| held.token).filter(|_| self.recipe.writes.carry_token)
    }

    /// A recipe with no check before its writes lets each go: the runtime
    /// need not ask.
    fn checks_writes(&self) -> bool {
        match self.recipe.before_write {
            Check::Nothing => false,
            Check::LeaseTimeLeft { .. } | Check::GetAndCompare => true,
        }
    }

    fn report_row(&self, _run: RunId) -> RowWrite {
        match self.recipe.writes.report_row {
            ReportRow::Upsert => RowWrite::Upsert,
            ReportRow::FencedUpsert => RowWrite::FencedUpsert,
            ReportRow::InsertOrNothing => RowWrite::InsertOrNothing,
        }
    }

    fn own_objects(&self) -> bool {
        self.recipe.writes.objects == Objects::Own
    }
}

/// The built-in strategy, with its settings, whose recipe `recipe` is (its
/// name aside): how a recipe whose lock lives elsewhere than one Redis node
/// is played until the interpreter plays those steps itself. `None` when it
/// is no built-in's.
pub(crate) fn built_in_for(recipe: &Recipe) -> Option<StrategySettings> {
    let strategy = match recipe.lock {
        Place::Redis => return None,
        Place::RedisMajority { .. } => StrategyId::Redlock,
        Place::PostgresRow => StrategyId::DbLock,
        Place::Etcd => StrategyId::Consensus,
        Place::Nowhere => StrategyId::UniqueInsert,
    };
    let settings = StrategySettings::from_recipe(strategy, recipe)?;
    let same = settings.recipe().is_some_and(|built_in| Recipe { name: recipe.name.clone(), ..built_in } == *recipe);
    same.then_some(settings)
}
