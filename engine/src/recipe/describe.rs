//! A recipe read out for people: one sentence per step, in the order a
//! client performs them, each naming the real command it sends. The CLI's
//! `locklab recipe … --format text` prints these; the pages can show the
//! same words beside the form.

use super::{
    Check, DbWait, Objects, OnLost, Place, Recipe, Release, Renewal, ReportRow, Retry, Take, TokenSource, Value,
};

/// One step of a recipe for people: what it is about, and what it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The step's heading ("Take", "Release").
    pub what: &'static str,
    /// What the client does, in a sentence.
    pub does: String,
}

impl Recipe {
    /// The recipe as steps for people, in the order a client performs them.
    pub fn steps(&self) -> Vec<Step> {
        let step = |what, does: String| Step { what, does };
        vec![
            step("Lock", self.place_words()),
            step("Take", self.take_words()),
            step("Token", token_words(self.token)),
            step("Before each write", check_words(&self.before_write)),
            step("Writes", self.writes_words()),
            step("Renewal", self.renewal_words()),
            step("When the lock is lost", self.on_lost_words()),
            step("Release", self.release_words()),
            step("When another holds it", retry_words(self.retry)),
        ]
    }

    /// The steps as numbered lines of text, each ending in a newline.
    pub fn steps_text(&self) -> String {
        let mut text = String::new();
        for (number, step) in (1_u32..).zip(self.steps()) {
            text.push_str(&format!("{number:>2}. {}: {}\n", step.what, step.does));
        }
        text
    }

    fn place_words(&self) -> String {
        match self.lock {
            Place::Redis => {
                "one Redis node: the key on the primary decides (a replica, where the world has one, follows it)."
                    .to_owned()
            }
            Place::RedisMajority { nodes, drift_factor, delayed_restart } => {
                let majority = nodes / 2 + 1;
                let restart = if delayed_restart {
                    "a node that restarts without persistence stays out for one TTL more"
                } else {
                    "a node that restarts without persistence takes new locks at once, its old keys forgotten"
                };
                format!(
                    "{nodes} independent Redis nodes: the lock is the client's when a majority ({majority} of {nodes}) said yes \
                     and, by its own clock, TTL − elapsed − ({drift_factor} × TTL + 2 ms) is still positive; {restart}."
                )
            }
            Place::PostgresRow => {
                "the jobs row in PostgreSQL, locked in a transaction held for the whole job on one pooled connection."
                    .to_owned()
            }
            Place::Etcd => "a key in etcd, held by a lease.".to_owned(),
            Place::Nowhere => "nowhere: no lock at all.".to_owned(),
        }
    }

    fn take_words(&self) -> String {
        let every_node =
            if matches!(self.lock, Place::RedisMajority { .. }) { ", sent to every node at once" } else { "" };
        match self.take {
            Take::SetNxPx { value, ttl_ms } => {
                format!("SET <key> {} NX PX {ttl_ms}: one atomic command{every_node}.", value_words(value))
            }
            Take::SetNxEx { value, ttl_s } => {
                format!("SET <key> {} NX EX {ttl_s}: one atomic command{every_node}.", value_words(value))
            }
            Take::SetnxThenExpire { value, ttl_s } => format!(
                "SETNX <key> {}, then EXPIRE <key> {ttl_s}: two round trips, and a key with no expiry at all between them.",
                value_words(value)
            ),
            Take::GetThenSet { value, ttl_ms } => format!(
                "GET <key>, and if it is absent SET <key> {} PX {ttl_ms} (no NX): two round trips, and a race between them.",
                value_words(value)
            ),
            Take::SelectForUpdate { lock_strength, wait, lock_timeout_ms, idle_in_transaction_timeout_ms } => {
                let wait = match wait {
                    DbWait::Block => "",
                    DbWait::Nowait => " NOWAIT",
                    DbWait::SkipLocked => " SKIP LOCKED",
                };
                let timeout = |ms: u64| if ms == 0 { "off".to_owned() } else { format!("{ms} ms") };
                format!(
                    "BEGIN; SELECT … FROM jobs WHERE name = 'daily-report' {}{wait}; lock_timeout {}, \
                     idle_in_transaction_session_timeout {}.",
                    lock_strength.sql(),
                    timeout(lock_timeout_ms),
                    timeout(idle_in_transaction_timeout_ms)
                )
            }
            Take::LeaseAndCreate { ttl_ms } => {
                format!(
                    "an etcd lease of {ttl_ms} ms, and a transaction that creates the key with it only if the key is absent."
                )
            }
            Take::Nothing => "nothing: every run goes straight to the job.".to_owned(),
        }
    }

    fn writes_words(&self) -> String {
        let token = if self.writes.carry_token {
            "every chunk PUT and the report row carry the token"
        } else {
            "the writes carry no token"
        };
        let row = match self.writes.report_row {
            ReportRow::Upsert => "INSERT … ON CONFLICT (job, period) DO UPDATE, the last writer wins",
            ReportRow::FencedUpsert => {
                "INSERT … ON CONFLICT (job, period) DO UPDATE only if the row's token is not higher than the write's"
            }
            ReportRow::InsertOrNothing => "INSERT … ON CONFLICT DO NOTHING RETURNING run, the first writer wins",
        };
        let objects = match self.writes.objects {
            Objects::Shared => "the report's objects, which every run rewrites",
            Objects::Own => "objects of the run's own, which the report row publishes",
        };
        format!("{token}; the report row: {row}; storage: {objects}.")
    }

    fn renewal_words(&self) -> String {
        let on_every_node = matches!(self.lock, Place::RedisMajority { .. });
        let how = match self.renew {
            Renewal::None => {
                let why = match self.lock {
                    Place::PostgresRow => "the transaction holds the row until it ends",
                    Place::Nowhere => "there is no lock",
                    Place::Redis | Place::RedisMajority { .. } | Place::Etcd => "the TTL is meant to outlast the job",
                };
                return format!("never: {why}.");
            }
            Renewal::CompareAndPexpire { every_ms } if on_every_node => format!(
                "every {every_ms} ms, the extend script on every node (PEXPIRE only while the key holds the run's own value), \
                 held on a majority's yes within the validity time"
            ),
            Renewal::CompareAndPexpire { every_ms } => {
                format!("every {every_ms} ms, the extend script: PEXPIRE only while the key holds the run's own value")
            }
            Renewal::Expire { every_ms } => {
                format!("every {every_ms} ms, a plain EXPIRE, which extends whatever key is there")
            }
            Renewal::KeepAlive { every_ms } => format!("every {every_ms} ms, etcd's lease keep-alive"),
        };
        format!(
            "{how}; a renewal with no answer is tried again every second while the lease it last secured still \
             holds by the client's own clock, and one refused loses the lock."
        )
    }

    fn on_lost_words(&self) -> String {
        let does = match self.on_lost {
            OnLost::Stop => "it stops the job",
            OnLost::CarryOn => "it carries on as if it still held the lock",
        };
        // A key on one node that is neither renewed nor checked before a
        // write holds no lease the client keeps count of: nothing tells it
        // the key expired or went to another.
        let unaware = self.renew == Renewal::None && self.before_write == Check::Nothing;
        match self.lock {
            Place::Nowhere => "there is no lock to lose.".to_owned(),
            Place::Redis if unaware => {
                format!("{does}; but nothing here tells it: it neither renews the lock nor checks it before a write.")
            }
            Place::Redis | Place::RedisMajority { .. } | Place::PostgresRow | Place::Etcd => format!("{does}."),
        }
    }

    fn release_words(&self) -> String {
        match self.release {
            Release::None if self.lock == Place::Nowhere => "nothing to give back.".to_owned(),
            Release::None => "none: the TTL (or the lease) ends it.".to_owned(),
            Release::Del => "a plain DEL, which deletes whatever lock is there, another client's included.".to_owned(),
            Release::CompareAndDelete if matches!(self.lock, Place::RedisMajority { .. }) => {
                "the unlock script on every node (DEL only while the key holds the run's own value), after a failed \
                 attempt too."
                    .to_owned()
            }
            Release::CompareAndDelete => {
                "the unlock script: DEL only while the key holds the run's own value, sent while the run still holds \
                 the lock by its own account."
                    .to_owned()
            }
            Release::Commit => {
                "COMMIT: the report row is written in the lock's transaction, and the commit ends both.".to_owned()
            }
            Release::Revoke => "etcd's lease revoke, unless etcd said the lease is gone.".to_owned(),
        }
    }
}

fn value_words(value: Value) -> &'static str {
    match value {
        Value::Own => "<the run's own value>",
        Value::Locked => "locked",
    }
}

fn token_words(token: TokenSource) -> String {
    let words = match token {
        TokenSource::None => "none: the writes carry nothing a resource could check.",
        TokenSource::IncrInScript => {
            "INCR of the token counter in the same script as the take, only if it took the lock."
        }
        TokenSource::Incr => "INCR of the token counter as a command of its own, after the lock is taken.",
        TokenSource::EtcdRevision => "the etcd key's creation revision, which never goes back.",
        TokenSource::Random => "a random number: unique, perhaps, but not ordered.",
    };
    words.to_owned()
}

fn check_words(check: &Check) -> String {
    match check {
        Check::Nothing => "nothing: it writes.".to_owned(),
        Check::LeaseTimeLeft { at_least_ms } => {
            format!(
                "it writes only if, by its own clock, at least {at_least_ms} ms of the lease it last secured are left."
            )
        }
        Check::GetAndCompare => {
            "GET the key and compare it with its own value; a write goes out only once the answer says the lock is \
             still its own."
                .to_owned()
        }
    }
}

fn retry_words(retry: Retry) -> String {
    let words = match retry {
        Retry::Fixed => "the run tries again after world.retry_ms.",
        Retry::Jittered => {
            "the run tries again after a random delay from half to one and a half times world.retry_ms, so that \
             clients racing for a majority fall out of step."
        }
    };
    words.to_owned()
}
