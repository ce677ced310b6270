//! The recipe document's defaults, its refusals (each naming its field's
//! path) and its steps for people.

use super::*;

fn parsed(json: &str) -> Recipe {
    serde_json::from_str(json).unwrap_or_else(|error| panic!("{json}: {error}"))
}

fn refused_at(recipe: &Recipe) -> String {
    recipe.validate().map_or_else(|error| error.path, |()| panic!("{recipe:?} was accepted"))
}

#[test]
fn the_format_alone_is_the_seeds_lock() {
    let recipe = parsed(r#"{"format": "locklab-recipe/1"}"#);
    assert_eq!(recipe, Recipe::default());
    assert_eq!(recipe.take, Take::SetNxEx { value: Value::Locked, ttl_s: 300 });
    assert_eq!(recipe.validate(), Ok(()));
    assert_eq!(recipe.ttl_ms(), Some(300_000));
}

#[test]
fn a_majority_takes_its_defaults_and_unknown_fields_are_refused() {
    let recipe = parsed(
        r#"{"format": "locklab-recipe/1", "lock": {"on": "redis_majority"}, "take": {"with": "set_nx_px", "value": "own", "ttl_ms": 30000}}"#,
    );
    assert_eq!(recipe.lock, Place::RedisMajority { nodes: 5, drift_factor: 0.01, delayed_restart: true });
    assert_eq!(recipe.validate(), Ok(()));
    let typo = serde_json::from_str::<Recipe>(r#"{"format": "locklab-recipe/1", "relase": "del"}"#);
    assert!(typo.is_err_and(|error| error.to_string().contains("relase")));
}

#[test]
fn refusals_name_the_field() {
    let wrong_format = Recipe { format: "locklab-recipe/9".to_owned(), ..Recipe::default() };
    assert_eq!(refused_at(&wrong_format), "format");
    let row_with_setnx = Recipe { lock: Place::PostgresRow, ..Recipe::default() };
    assert_eq!(refused_at(&row_with_setnx), "take.with");
    let fenced_without_token = Recipe {
        writes: Writes { carry_token: true, report_row: ReportRow::FencedUpsert, objects: Objects::Shared },
        ..Recipe::default()
    };
    assert_eq!(refused_at(&fenced_without_token), "writes.report_row");
    let compare_locked = Recipe { release: Release::CompareAndDelete, ..Recipe::default() };
    assert_eq!(refused_at(&compare_locked), "release");
    let never_writes = Recipe { before_write: Check::LeaseTimeLeft { at_least_ms: 300_000 }, ..Recipe::default() };
    assert_eq!(refused_at(&never_writes), "before_write.at_least_ms");
    let six_nodes = Recipe {
        lock: Place::RedisMajority { nodes: 6, drift_factor: 0.01, delayed_restart: true },
        take: Take::SetNxPx { value: Value::Own, ttl_ms: 30_000 },
        ..Recipe::default()
    };
    assert_eq!(refused_at(&six_nodes), "lock.nodes");
}

#[test]
fn the_steps_read_every_field_in_order() {
    let recipe = Recipe {
        take: Take::SetnxThenExpire { value: Value::Own, ttl_s: 30 },
        renew: Renewal::Expire { every_ms: 10_000 },
        release: Release::Del,
        ..Recipe::default()
    };
    let steps = recipe.steps();
    let headings: Vec<&str> = steps.iter().map(|step| step.what).collect();
    assert_eq!(
        headings,
        [
            "Lock",
            "Take",
            "Token",
            "Before each write",
            "Writes",
            "Renewal",
            "When the lock is lost",
            "Release",
            "When another holds it"
        ]
    );
    let text = recipe.steps_text();
    assert!(text.contains(" 2. Take: SETNX <key> <the run's own value>, then EXPIRE <key> 30"), "{text}");
    assert!(text.contains("a plain EXPIRE"), "{text}");
    assert!(text.contains(" 8. Release: a plain DEL"), "{text}");
    assert_eq!(text.lines().count(), 9, "{text}");
}

#[test]
fn a_tagged_step_reads_its_variants_fields_only() {
    let take = |json: &str| serde_json::from_str::<Take>(json).map_err(|error| error.to_string());
    assert_eq!(
        take(r#"{"with": "select_for_update"}"#),
        Ok(Take::SelectForUpdate {
            lock_strength: LockStrength::ForUpdate,
            wait: DbWait::Block,
            lock_timeout_ms: 0,
            idle_in_transaction_timeout_ms: 0
        })
    );
    assert_eq!(take(r#"{"ttl_ms": 5, "with": "lease_and_create"}"#), Ok(Take::LeaseAndCreate { ttl_ms: 5 }));
    let refused = |json: &str, part: &str| {
        let error = take(json).expect_err(json);
        assert!(error.contains(part), "{json}: {error}");
    };
    refused(r#"{"with": "set_nx_px", "value": "own"}"#, "missing field `ttl_ms`");
    refused(r#"{"with": "set_nx_px", "value": "own", "ttl_ms": 5, "ttl_s": 5}"#, "unknown field `ttl_s`");
    refused(r#"{"with": "select_for_update", "lock_timeout_ms": null}"#, "invalid type: null");
    refused(r#"{"with": "nothing", "ttl_ms": 5}"#, "unknown field `ttl_ms`");
    refused(r#"{"with": "set_nx_ex", "value": "own", "ttl_s": 5, "value": "own"}"#, "duplicate field `value`");
    refused(r#"{"with": "set_nx_pz"}"#, "unknown variant `set_nx_pz`");
    refused(r#"{"value": "own", "ttl_ms": 5}"#, "missing field `with`");
    refused(r#"{"with": "nothing", "ttl_minutes": 5}"#, "unknown field `ttl_minutes`");
    assert_eq!(
        serde_json::from_str::<Renewal>(r#"{"with": "keep_alive", "every_ms": 9}"#).ok(),
        Some(Renewal::KeepAlive { every_ms: 9 })
    );
    assert!(serde_json::from_str::<Renewal>(r#"{"with": "none", "every_ms": 9}"#).is_err());
    assert_eq!(serde_json::from_str::<Check>(r#"{"check": "get_and_compare"}"#).ok(), Some(Check::GetAndCompare));
    assert!(serde_json::from_str::<Check>(r#"{"check": "lease_time_left"}"#).is_err());
    assert_eq!(
        serde_json::from_str::<Place>(r#"{"on": "redis_majority", "nodes": 3}"#).ok(),
        Some(Place::RedisMajority { nodes: 3, drift_factor: 0.01, delayed_restart: true })
    );
    assert!(serde_json::from_str::<Place>(r#"{"on": "etcd", "nodes": 3}"#).is_err());
    // Every step reads back what it writes, through a JSON value too.
    for take in [
        Take::default(),
        Take::GetThenSet { value: Value::Own, ttl_ms: 7 },
        Take::SelectForUpdate {
            lock_strength: LockStrength::ForNoKeyUpdate,
            wait: DbWait::SkipLocked,
            lock_timeout_ms: 1,
            idle_in_transaction_timeout_ms: 2,
        },
    ] {
        let value = serde_json::to_value(&take).expect("a take serializes");
        assert_eq!(serde_json::from_value::<Take>(value).ok(), Some(take));
    }
}
