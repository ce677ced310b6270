//! The keyboard and the screen, as the lab takes them: the pages' timeline
//! keys ([`crate::ui::input::use_timeline_keys`]) and the narrow screen, as
//! the lab's actions.

use crate::lab::state::Action;
use crate::ui::input::{TimelineKey, use_narrow_screen, use_timeline_keys};
use yew::prelude::*;

/// The lab's keys (space plays or pauses, arrows step, shift+arrows scrub,
/// Home and End go to the ends, a badge's key picks a strategy) and the narrow screen, as actions.
#[hook]
pub fn use_input(dispatch: Callback<Action>) {
    use_timeline_keys(dispatch.clone(), |key| {
        Some(match key {
            TimelineKey::PlayOrPause => Action::TogglePlay,
            TimelineKey::Step { forward: true } => Action::StepForward,
            TimelineKey::Step { forward: false } => Action::StepBack,
            TimelineKey::Scrub(hundredths) => Action::ScrubPercent(hundredths),
            TimelineKey::Strategy(strategy) => Action::SelectStrategy(strategy),
            // The cursor stops at the run's end (`LabState::seek`).
            TimelineKey::Ends { end } => Action::Seek(if end { u64::MAX } else { 0 }),
        })
    });
    use_narrow_screen(dispatch, Action::SetNarrow);
}
