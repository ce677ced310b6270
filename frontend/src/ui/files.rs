//! The names files are saved under: the lab's scenario, and the figures the
//! worker makes for it.

use locklab_engine::{Scenario, StrategyId};

/// `gc-pause-outlives-the-lease.json` from the scenario's name and `extension`.
pub fn file_name_for(scenario: &Scenario, extension: &str) -> String {
    let slug = slug(&scenario.name);
    if slug.is_empty() { format!("locklab-scenario{extension}") } else { format!("{slug}{extension}") }
}

/// `gc-pause-outlives-the-lease-fencing`: a figure's file name without its extension.
pub fn file_stem(scenario_name: &str, strategy: StrategyId) -> String {
    let slug = slug(scenario_name);
    if slug.is_empty() { format!("locklab-{strategy}") } else { format!("{slug}-{strategy}") }
}

/// Lower-case letters and digits of `name`, other runs of characters as one `-`.
fn slug(name: &str) -> String {
    let mut slug = String::new();
    for character in name.chars() {
        if character.is_ascii_alphanumeric() {
            slug.push(character.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    slug.trim_end_matches('-').to_owned()
}
