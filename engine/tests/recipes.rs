//! The built-in locks as recipes: every strategy, with the settings each
//! built-in scenario gives it (its defaults where the scenario names it
//! not), has a `locklab-recipe/1` document that validates and comes back
//! from JSON unchanged, unless it is one of the documented exceptions.

use locklab_engine::recipe::{RECIPE_FORMAT, Recipe};
use locklab_engine::scenario::StrategyId;
use locklab_engine::{Scenario, builtin};

/// The built-ins whose code the recipe's steps cannot express
/// (`StrategySettings::recipe` says why each one reaches): none today.
const WITHOUT_RECIPE: &[StrategyId] = &[];

#[test]
fn every_builtin_lock_under_every_builtin_scenario_is_a_recipe() {
    let mut failures = Vec::new();
    let mut recipes = 0_u32;
    for builtin in builtin::ALL {
        let scenario = Scenario::from_json(builtin.text).unwrap_or_else(|error| panic!("{}: {error}", builtin.name));
        for strategy in StrategyId::ALL {
            let settings = scenario.settings_for(strategy);
            let Some(recipe) = settings.recipe() else {
                if !WITHOUT_RECIPE.contains(&strategy) {
                    failures.push(format!("{} / {strategy}: no recipe", builtin.name));
                }
                continue;
            };
            recipes += 1;
            if WITHOUT_RECIPE.contains(&strategy) {
                failures.push(format!("{} / {strategy}: a recipe, though listed as having none", builtin.name));
            }
            if let Err(error) = recipe.validate() {
                failures.push(format!("{} / {strategy}: refused at {error}", builtin.name));
            }
            let json = serde_json::to_string_pretty(&recipe).unwrap_or_else(|error| panic!("{error}"));
            let back: Recipe = serde_json::from_str(&json).unwrap_or_else(|error| panic!("{json}: {error}"));
            let again = serde_json::to_string_pretty(&back).unwrap_or_else(|error| panic!("{error}"));
            if back != recipe || again != json {
                failures
                    .push(format!("{} / {strategy}: the JSON round trip changed it:\n{json}\n{again}", builtin.name));
            }
            if recipe.format != RECIPE_FORMAT || recipe.name != settings.title() {
                failures
                    .push(format!("{} / {strategy}: format {} and name {}", builtin.name, recipe.format, recipe.name));
            }
        }
    }
    assert!(failures.is_empty(), "built-in recipes:\n{}", failures.join("\n"));
    assert!(recipes >= 6, "only {recipes} recipes were checked");
}

#[test]
fn each_recipe_says_what_its_strategy_does() {
    let seed = Scenario::default();
    let recipe = |strategy| seed.settings_for(strategy).recipe().unwrap_or_else(|| panic!("{strategy}: no recipe"));
    let fencing = serde_json::to_value(recipe(StrategyId::Fencing)).unwrap_or_default();
    assert_eq!(fencing["token"], "incr_in_script");
    assert_eq!(fencing["writes"]["report_row"], "fenced_upsert");
    assert_eq!(fencing["renew"]["with"], "compare_and_pexpire");
    let redlock = serde_json::to_value(recipe(StrategyId::Redlock)).unwrap_or_default();
    assert_eq!(redlock["lock"]["on"], "redis_majority");
    assert_eq!(redlock["retry"], "jittered");
    let db_lock = serde_json::to_value(recipe(StrategyId::DbLock)).unwrap_or_default();
    assert_eq!(db_lock["take"]["with"], "select_for_update");
    assert_eq!(db_lock["release"], "commit");
    let unique = serde_json::to_value(recipe(StrategyId::UniqueInsert)).unwrap_or_default();
    assert_eq!(unique["lock"]["on"], "nowhere");
    assert_eq!(unique["writes"]["objects"], "own");
    let consensus = serde_json::to_value(recipe(StrategyId::Consensus)).unwrap_or_default();
    assert_eq!(consensus["token"], "etcd_revision");
    assert_eq!(consensus["renew"]["with"], "keep_alive");
}
