//! The timeline's swimlanes as a component: the engine's drawing
//! (`locklab_engine::svg::lanes`, the same marks as the exported figure),
//! made once per run and layout.
//!
//! The drawing depends only on the run, so it is its own component and is not
//! redrawn when the cursor moves; the cursor is a separate layer on top.

use crate::ui::run::RunRef;
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct LanesProps {
    pub run: RunRef,
    pub compact: bool,
    pub narrow: bool,
}

/// The static drawing of a run's lanes, made once per run.
#[function_component(Lanes)]
pub fn lanes(props: &LanesProps) -> Html {
    let markup = use_memo((props.run.clone(), props.compact, props.narrow), |(run, compact, narrow)| {
        AttrValue::from(locklab_engine::svg::lanes(
            &run.timeline,
            &run.report,
            &run.scenario.clock_origin,
            *compact,
            *narrow,
        ))
    });
    Html::from_html_unchecked((*markup).clone())
}
