//! The strategy picker: the quiz options A–D by letter and name, the naive
//! baseline and the consensus lease, as one radio group (each badge is its key). Each
//! choice shows its three verdicts on the scenario as soon as they are known,
//! so the night's whole lesson (which one survives, and at what price) is on
//! the first screen.

use crate::lab::state::{Action, Verdicts};
use crate::ui::callbacks::sending;
use crate::ui::shared::Shared;
use crate::ui::verdicts::verdict_badges;
use locklab_engine::StrategyId;
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct PickerProps {
    pub selected: StrategyId,
    pub dispatch: Callback<Action>,
    /// Each strategy's verdict on the scenario, as far as known.
    pub verdicts: Shared<Verdicts>,
}

/// Three badges of a common width, drawn invisible while a verdict is computed.
fn pending_badges() -> Html {
    html! {
        <span class="axes">
            <span class="badge-verdict">{"✓ safe"}</span>
            <span class="badge-verdict">{"◷ late"}</span>
            <span class="badge-verdict">{"✓ efficient"}</span>
        </span>
    }
}

#[function_component(StrategyPicker)]
pub fn strategy_picker(props: &PickerProps) -> Html {
    let options = StrategyId::PICKER_ORDER.iter().map(|strategy| {
        let strategy = *strategy;
        let (badge, short) = (strategy.badge(), strategy.short_title());
        let onchange = sending(&props.dispatch, Action::SelectStrategy(strategy));
        let id = format!("strategy-{}", strategy.name());
        let checked = strategy == props.selected;
        let verdict = props.verdicts.reports.iter().find(|report| report.strategy == strategy);
        html! {
            <label for={id.clone()} class={classes!("choice", checked.then_some("chosen"))}
                title={format!("{} (key {})", strategy.title(), if badge == '∗' { '*' } else { badge })}>
                <input type="radio" name="strategy" id={id} value={strategy.name()} {checked} {onchange} />
                <span class="badge" aria-hidden="true">{ badge }</span>
                <span class="choice-text">
                    <span class="choice-name">{ short }</span>
                    <span class="visually-hidden">{ format!(": {}", crate::ui::run::strategy_label(strategy)) }</span>
                    if let Some(report) = verdict {
                        <span class="choice-verdict" data-safety={report.safety.name()}
                            data-liveness={report.liveness.name()} data-efficiency={report.efficiency.name()}>
                            { verdict_badges(report) }
                        </span>
                    } else {
                        // Room held for the badges still being computed, so
                        // nothing below moves when they arrive.
                        <span class="choice-verdict pending" aria-hidden="true">{ pending_badges() }</span>
                    }
                </span>
            </label>
        }
    });
    html! {
        <fieldset class="picker">
            <legend>{"Strategy "}<span class="hint">{"(keys A–D, 0, *)"}</span></legend>
            <div class="choices">{ for options }</div>
        </fieldset>
    }
}
