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
