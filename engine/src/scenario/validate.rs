//! Reading a document and checking what the types alone cannot: ranges,
//! parties that exist, times inside the run, text a page can show, the
//! work budget.

use super::budget;
use super::error::{FIELD_MARK, Printable, ScenarioError, refuse};
use super::faults::{Fault, Target};
use super::schema::{FORMAT, FORMAT_V1, MAX_DURATION_MS, MAX_FAULTS, Scenario};
use super::strategies::Strategies;
use crate::ids::{MAX_INSTANCES, MAX_REDIS_NODES, Party};

/// Most characters in a scenario's name and its description: every valid
/// scenario must also fit in a share link.
pub const MAX_NAME_CHARS: usize = 200;
pub const MAX_DESCRIPTION_CHARS: usize = 4_000;

/// Refuses a text field that is too long or holds a control character (a
/// name ends up in a terminal, an SVG and a page title).
fn check_text(path: &str, text: &str, most: usize) -> Result<(), ScenarioError> {
    let count = text.chars().count();
    if count > most {
        return Err(refuse(path, format!("is {count} characters long; at most {most} are allowed")));
    }
    if let Some(control) = text.chars().find(|character| character.is_control()) {
        return Err(refuse(
            path,
            format!("holds the control character {}, which a scenario's text may not", Printable(&control.to_string())),
        ));
    }
    Ok(())
}

/// The field path and message of a serde_json error in `text`, where the
/// scenario sits at `scenario_path` (empty for a scenario document): a fault's
/// error names its own path (see [`FIELD_MARK`]); any other is placed by its
/// position. The message keeps serde_json's "at line L column C".
pub(crate) fn error_path(text: &str, error: &serde_json::Error, scenario_path: &str) -> (String, String) {
    let message = error.to_string();
    // Only a fault's errors carry the mark, and they begin with the fault's
    // place; a mark anywhere else came from the document and proves nothing.
    match message.split_once(FIELD_MARK) {
        Some((path, rest)) if path.starts_with("faults[") && scenario_path.is_empty() => {
            (path.to_owned(), rest.to_owned())
        }
        Some((path, rest)) if path.starts_with("faults[") => (format!("{scenario_path}.{path}"), rest.to_owned()),
        Some(_) | None => (crate::json_path::at(text, error.line(), error.column()), message),
    }
}

/// Refuses an array where the format has an object (see
/// [`crate::json_path::array_not_allowed`]): only the format's list fields
/// are arrays. `scenario_path` is where the scenario sits in `text`.
pub(crate) fn objects_are_objects(text: &str, scenario_path: &str) -> Result<(), ScenarioError> {
    const LISTS: [&str; 7] = ["faults", "network_latency_ms", "between", "findings", "choices", "answer", "references"];
    let list = |path: &str| {
        let last = path.rsplit('.').next().unwrap_or(path);
        // What lies under `claims` is the texts' claims, which the engine keeps nothing of.
        let claims = path.split('.').any(|segment| segment == "claims");
        path.starts_with(scenario_path) && (LISTS.contains(&last) || claims)
    };
    match crate::json_path::array_not_allowed(text, &list) {
        Some(path) => {
            let path = if path.is_empty() { "the document".to_owned() } else { path };
            Err(refuse(path, "is an array; the format has an object with named fields here"))
        }
        None => Ok(()),
    }
}

impl Scenario {
    /// Parses and validates a scenario document.
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        // A byte-order mark is how some editors begin a UTF-8 file; it is not JSON.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let scenario: Scenario = serde_json::from_str(text).map_err(|error| {
            let (path, message) = error_path(text, &error, "");
            refuse(path, message)
        })?;
        objects_are_objects(text, "")?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Checks what the types alone cannot: ranges, parties that exist, times in the run.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if self.format != FORMAT && self.format != FORMAT_V1 {
            return Err(refuse(
                "format",
                format!("must be \"{FORMAT}\" (or the older \"{FORMAT_V1}\"), found \"{}\"", self.format),
            ));
        }
        check_text("name", &self.name, MAX_NAME_CHARS)?;
        if let Some(description) = &self.description {
            check_text("description", description, MAX_DESCRIPTION_CHARS)?;
        }
        if self.clock_origin_ms().is_none() {
            return Err(refuse(
                "clock_origin",
                format!("must be a time of day as HH:MM:SS (00:00:00 to 23:59:59), found \"{}\"", self.clock_origin),
            ));
        }
        let world = &self.world;
        let day = MAX_DURATION_MS;
        check_range("world.instances", u64::from(world.instances), 1, u64::from(MAX_INSTANCES))?;
        check_range("world.cron_period_ms", world.cron_period_ms, 1_000, day)?;
        check_range("world.cron_jitter_ms", world.cron_jitter_ms, 0, world.cron_period_ms / 2)?;
        check_range("world.job_ms", world.job_ms, 1, day)?;
        check_range("world.report_chunks", u64::from(world.report_chunks), 1, 64)?;
        check_range("world.retry_ms", world.retry_ms, 1, day)?;
        let [latency_low, latency_high] = world.network_latency_ms;
        check_range("world.network_latency_ms[0]", latency_low, 0, 60_000)?;
        check_range("world.network_latency_ms[1]", latency_high, latency_low, 60_000)?;
        check_range("world.db_pool_size", u64::from(world.db_pool_size), 1, 100)?;
        check_range("world.db_max_connections", u64::from(world.db_max_connections), 1, 10_000)?;
        check_range("world.background_queries_per_s", u64::from(world.background_queries_per_s), 0, 1_000)?;
        check_range("world.background_foreign_key_percent", u64::from(world.background_foreign_key_percent), 0, 100)?;
        check_range("world.background_pool_size", u64::from(world.background_pool_size), 1, 100)?;
        check_range("world.background_timeout_ms", world.background_timeout_ms, 0, day)?;
        check_range("world.tcp_keepalive_ms", world.tcp_keepalive_ms, 1, day)?;
        check_range("world.replication_lag_ms", world.replication_lag_ms, 0, day)?;
        check_range("world.failover_ms", world.failover_ms, 0, day)?;
        let duration = self.duration_ms();
        check_range("duration_ms", duration, 1, day)?;
        if let Some(chosen) = &self.strategies {
            if self.strategy_settings().is_empty() {
                return Err(refuse("strategies", "names no strategy; leave the field out to run all six"));
            }
            self.validate_strategies(chosen)?;
        }
        if self.faults.len() > MAX_FAULTS {
            return Err(refuse("faults", format!("{} faults; at most {MAX_FAULTS} are allowed", self.faults.len())));
        }
        for (index, fault) in self.faults.iter().enumerate() {
            self.validate_fault(&format!("faults[{index}]"), fault, duration)?;
        }
        if let Some(quiz) = &self.quiz {
            quiz.validate()?;
        }
        budget::check(self)
    }

    fn validate_strategies(&self, chosen: &Strategies) -> Result<(), ScenarioError> {
        let day = MAX_DURATION_MS;
        if let Some(naive) = &chosen.naive {
            check_range("strategies.naive.ttl_ms", naive.ttl_ms, 1, day)?;
        }
        for (name, lease) in [("fencing", &chosen.fencing), ("consensus", &chosen.consensus)] {
            if let Some(lease) = lease {
                check_range(&format!("strategies.{name}.ttl_ms"), lease.ttl_ms, 1, day)?;
                check_range(&format!("strategies.{name}.renew_every_ms"), lease.renew_every_ms, 1, day)?;
            }
        }
        if let Some(redlock) = &chosen.redlock {
            check_range("strategies.redlock.ttl_ms", redlock.ttl_ms, 1, day)?;
            check_range("strategies.redlock.renew_every_ms", redlock.renew_every_ms, 1, day)?;
            check_range("strategies.redlock.nodes", u64::from(redlock.nodes), 1, u64::from(MAX_REDIS_NODES))?;
            if !(0.0..=0.5).contains(&redlock.drift_factor) {
                return Err(refuse("strategies.redlock.drift_factor", "must be between 0 and 0.5"));
            }
        }
        if let Some(db_lock) = &chosen.db_lock {
            check_range("strategies.db-lock.lock_timeout_ms", db_lock.lock_timeout_ms, 0, day)?;
            check_range(
                "strategies.db-lock.idle_in_transaction_timeout_ms",
                db_lock.idle_in_transaction_timeout_ms,
                0,
                day,
            )?;
        }
        Ok(())
    }

    fn validate_target(&self, path: &str, target: Target, allowed: TargetKind) -> Result<(), ScenarioError> {
        let fits = match (target, allowed) {
            (Target::Holder, TargetKind::Instance | TargetKind::Clock | TargetKind::Any) => true,
            (Target::Holder, TargetKind::Redis) => false,
            (Target::AllRedis, TargetKind::Redis | TargetKind::Clock | TargetKind::Any) => true,
            (Target::AllRedis, TargetKind::Instance) => false,
            (Target::Party(Party::Instance(id)), _) if id.0 >= self.world.instances => {
                return Err(refuse(
                    path,
                    format!("instance `{id}` does not exist: the world has {} instances", self.world.instances),
                ));
            }
            (Target::Party(party), TargetKind::Instance) => matches!(party, Party::Instance(_)),
            (Target::Party(party), TargetKind::Redis) => {
                matches!(party, Party::Redis(_) | Party::RedisReplica)
            }
            (Target::Party(party), TargetKind::Clock) => !matches!(party, Party::Storage | Party::Slack),
            (Target::Party(_), TargetKind::Any) => true,
        };
        if fits {
            Ok(())
        } else {
            Err(refuse(path, format!("`{target}` cannot be the target here: {}", allowed.explain())))
        }
    }

    fn validate_fault(&self, path: &str, fault: &Fault, duration: u64) -> Result<(), ScenarioError> {
        let day = MAX_DURATION_MS;
        let at = fault.at_ms();
        if at >= duration {
            return Err(refuse(
                format!("{path}.at_ms"),
                format!("{at} is not inside the run, which lasts {duration} ms"),
            ));
        }
        let field = |name: &str| format!("{path}.{name}");
        match fault {
            Fault::OomKill { target, restart_after_ms, .. } | Fault::HostLoss { target, restart_after_ms, .. } => {
                self.validate_target(&field("target"), *target, TargetKind::Instance)?;
                if let Some(after) = restart_after_ms {
                    check_range(&field("restart_after_ms"), *after, 0, day)?;
                }
            }
            Fault::GcPause { target, duration_ms, .. } => {
                self.validate_target(&field("target"), *target, TargetKind::Instance)?;
                check_range(&field("duration_ms"), *duration_ms, 1, day)?;
            }
            Fault::ClockJump { target, by_ms, .. } => {
                self.validate_target(&field("target"), *target, TargetKind::Clock)?;
                check_range(&field("by_ms"), by_ms.unsigned_abs(), 0, day)?;
            }
            Fault::ClockDrift { target, ppm, .. } => {
                self.validate_target(&field("target"), *target, TargetKind::Clock)?;
                check_range(&field("ppm"), ppm.unsigned_abs(), 0, 500_000)?;
            }
            Fault::NetworkDelay { from, to, extra_ms, duration_ms, .. } => {
                self.validate_target(&field("from"), *from, TargetKind::Any)?;
                self.validate_target(&field("to"), *to, TargetKind::Any)?;
                check_range(&field("extra_ms"), *extra_ms, 0, day)?;
                check_range(&field("duration_ms"), *duration_ms, 1, day)?;
            }
            Fault::Partition { between, duration_ms, .. } => {
                self.validate_target(&field("between[0]"), between[0], TargetKind::Any)?;
                self.validate_target(&field("between[1]"), between[1], TargetKind::Any)?;
                if between[0] == between[1] {
                    return Err(refuse(field("between"), "a partition needs two different sides"));
                }
                check_range(&field("duration_ms"), *duration_ms, 1, day)?;
            }
            Fault::RedisRestart { target, down_ms, .. } => {
                self.validate_target(&field("target"), *target, TargetKind::Redis)?;
                check_range(&field("down_ms"), *down_ms, 0, day)?;
            }
            Fault::RedisFailover { target, .. } => {
                self.validate_target(&field("target"), *target, TargetKind::Redis)?;
            }
            Fault::ConsensusLeaderLoss { .. } => {}
            Fault::DbSlow { factor, duration_ms, .. } => {
                if !factor.is_finite() || !(1.0..=1000.0).contains(factor) {
                    return Err(refuse(
                        field("factor"),
                        format!("{} must be between 1 and 1000", crate::format::decimal(*factor)),
                    ));
                }
                check_range(&field("duration_ms"), *duration_ms, 1, day)?;
            }
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum TargetKind {
    Instance,
    Redis,
    Clock,
    Any,
}

impl TargetKind {
    fn explain(self) -> &'static str {
        match self {
            TargetKind::Instance => "this fault strikes an instance (a…h or holder)",
            TargetKind::Redis => "this fault strikes a Redis node (redis-1…redis-5, redis-1-replica or redis)",
            TargetKind::Clock => "storage and Slack have no clock the lab models",
            TargetKind::Any => "",
        }
    }
}

fn check_range(path: &str, value: u64, low: u64, high: u64) -> Result<(), ScenarioError> {
    if value < low || value > high {
        Err(refuse(path, format!("{value} is out of range: expected {low} to {high}")))
    } else {
        Ok(())
    }
}
