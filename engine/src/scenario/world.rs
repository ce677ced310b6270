//! The world a scenario plays in: instances, cron, the job, the network, the
//! database and its other services, storage, Redis replication. Every field
//! has its default; the serde helpers here leave defaults out of a document.

use serde::{Deserialize, Deserializer, Serialize};

/// How long one statement takes on an idle database server.
pub const STATEMENT_MS: u64 = 2;
/// How long one of other services' queries takes once it has its lock.
pub const BACKGROUND_QUERY_MS: u64 = 20;

/// The world the job runs in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct World {
    pub instances: u8,
    pub cron_period_ms: u64,
    pub cron_jitter_ms: u64,
    pub job_ms: u64,
    pub report_chunks: u8,
    pub retry_ms: u64,
    #[serde(deserialize_with = "deserialize_latency")]
    pub network_latency_ms: [u64; 2],
    pub db_pool_size: u8,
    pub db_max_connections: u16,
    /// Other services' queries on the jobs database, per second.
    pub background_queries_per_s: u32,
    /// Of those, the percentage that insert a row referencing the jobs row
    /// (`job_events`): the foreign-key check takes `FOR KEY SHARE` on it,
    /// which waits behind `FOR UPDATE` and not behind `FOR NO KEY UPDATE`
    /// (PostgreSQL's row-level lock conflicts). The rest are plain reads,
    /// which take no row lock and wait for nothing but a connection. The mix
    /// is a modelling choice, the scenario's to set: the default is one in five.
    /// (Left out of a document at its default, as the two below are: a share
    /// link made before they existed encodes the same.)
    #[serde(skip_serializing_if = "is_default_foreign_key_percent")]
    pub background_foreign_key_percent: u8,
    /// The other services' own connection pool (HikariCP's default `maximumPoolSize`).
    #[serde(skip_serializing_if = "is_default_background_pool_size")]
    pub background_pool_size: u8,
    /// How long another service waits for its query (a connection, the row
    /// lock, the statement) before it gives up; 0 waits for ever, as
    /// PostgreSQL's defaults do (`lock_timeout = 0`, `statement_timeout = 0`).
    #[serde(skip_serializing_if = "is_zero")]
    pub background_timeout_ms: u64,
    pub tcp_keepalive_ms: u64,
    /// What every period's run writes; absent means the format version's
    /// default (see [`Scenario::output`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Output>,
    pub storage_checks_tokens: bool,
    pub redis_replica: bool,
    pub replication_lag_ms: u64,
    pub failover_ms: u64,
    /// An at-least-once job runner (an extension): the job a process died in
    /// is handed again to that instance when it restarts, and the worker runs
    /// it without taking the lock again, because the lock was taken when the
    /// job was first handed out. This is how "B's pod restarted and it's ALSO
    /// trying to run it" happens in real deployments: `SET NX` alone would
    /// give the restarted process `(nil)`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub redeliver_after_crash: bool,
}

/// What the job writes each period.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Output {
    /// Every period's run rewrites the one report of the day: the same chunk
    /// objects, the same row, the same Slack channel (`generate-daily-report`).
    Daily,
    /// Every period writes a report of its own.
    PerPeriod,
}

crate::by_name::by_name!(Output { Daily = "daily", PerPeriod = "per_period" });

impl Default for World {
    fn default() -> Self {
        World {
            instances: 3,
            cron_period_ms: 300_000,
            cron_jitter_ms: 200,
            job_ms: 90_000,
            report_chunks: 4,
            retry_ms: 10_000,
            network_latency_ms: [1, 5],
            db_pool_size: 5,
            db_max_connections: 20,
            background_queries_per_s: 5,
            background_foreign_key_percent: 20,
            background_pool_size: 10,
            background_timeout_ms: 0,
            // Linux defaults: 7200 s idle + 9 probes × 75 s.
            tcp_keepalive_ms: 7_875_000,
            output: None,
            storage_checks_tokens: true,
            redis_replica: false,
            replication_lag_ms: 50,
            failover_ms: 5_000,
            redeliver_after_crash: false,
        }
    }
}

pub(super) fn is_false(value: &bool) -> bool {
    !*value
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

fn is_default_foreign_key_percent(value: &u8) -> bool {
    *value == World::default().background_foreign_key_percent
}

fn is_default_background_pool_size(value: &u8) -> bool {
    *value == World::default().background_pool_size
}

pub(super) fn is_true(value: &bool) -> bool {
    *value
}

/// `network_latency_ms` as the format writes it, `[low, high]`, with a
/// message that says so when it is not.
fn deserialize_latency<'de, D: Deserializer<'de>>(deserializer: D) -> Result<[u64; 2], D::Error> {
    use serde::de::Error;
    let values = Vec::<u64>::deserialize(deserializer)?;
    match values.as_slice() {
        [low, high] => Ok([*low, *high]),
        other => Err(D::Error::custom(format!(
            "network_latency_ms must be two numbers of milliseconds, [low, high]; found {} number{}",
            other.len(),
            if other.len() == 1 { "" } else { "s" }
        ))),
    }
}
