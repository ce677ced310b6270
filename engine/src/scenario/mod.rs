//! The scenario document, `locklab/2` (and `locklab/1`, which keeps loading
//! with the meaning it had; see `docs/formats.md`): what the CLI reads, what a
//! share link encodes, what a quiz card is made of.
//!
//! Every field but `format` has a default and unknown fields are refused with
//! their path, so a typo never silently becomes a default. A few optional
//! fields extend the format: `description` (prose for people), `expect` (the
//! outcome per strategy that the built-in table test checks), `quiz`, and
//! `world.redeliver_after_crash` (an at-least-once job runner).

pub mod budget;
mod error;
mod faults;
pub mod quiz_card;
mod recipes;
mod schema;
mod strategies;
#[cfg(test)]
mod tests;
mod validate;
mod verdicts;
mod world;

pub use error::{Printable, ScenarioError};
pub use faults::{FAULT_KINDS, Fault, FaultField, FieldValue, Target, slowed_ms};
pub use schema::{FORMAT, FORMAT_V1, MAX_DOCUMENT_BYTES, MAX_DURATION_MS, MAX_FAULTS, ReportRule, Scenario};
pub use strategies::{
    DbLockSettings, DbWait, LeaseSettings, LockStrength, NaiveRelease, NaiveSettings, RedlockSettings, Strategies,
    StrategyId, StrategySettings, UniqueInsertSettings,
};
pub use validate::{MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS};
pub(crate) use validate::{error_path, objects_are_objects};
pub use verdicts::{Efficiency, Expectation, Liveness, Safety};
pub use world::{BACKGROUND_QUERY_MS, Output, STATEMENT_MS, World};
