//! The event log, written as the commands and statements on the wire,
//! filterable by party and kind, following the cursor: it shows the events
//! around the cursor, the last one that has happened marked.

use crate::format;
use crate::lab::RunRef;
use crate::state::Action;
use std::rc::Rc;
use yew::prelude::*;

/// Rows shown before and after the cursor's event.
const ROWS_BEFORE: usize = 10;
const ROWS_AFTER: usize = 16;

#[derive(Properties, PartialEq, Debug)]
pub struct EventLogProps {
    pub run: RunRef,
    pub cursor_ms: u64,
    pub hidden_parties: Rc<Vec<String>>,
    pub hidden_kinds: Rc<Vec<String>>,
    pub dispatch: Callback<Action>,
}

/// The parties and kinds that occur in a log, in a stable order.
fn vocabulary(run: &RunRef) -> (Vec<String>, Vec<String>) {
    let mut parties = Vec::new();
    let mut kinds = Vec::new();
    for event in &run.log {
        for party in event.parties() {
            if !parties.contains(&party) {
                parties.push(party);
            }
        }
        let kind = event.kind_name();
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    parties.sort();
    kinds.sort_unstable();
    (parties.into_iter().map(|party| party.to_string()).collect(), kinds.into_iter().map(str::to_owned).collect())
}

fn is_hidden(set: &[String], name: &str) -> bool {
    set.iter().any(|item| item == name)
}

/// Indices of the events the filters let through. An event passes when its
/// kind is shown and at least one of its parties is (or it names none).
fn visible(run: &RunRef, hidden_parties: &[String], hidden_kinds: &[String]) -> Vec<u32> {
    run.log
        .iter()
        .enumerate()
        .filter(|(_, event)| !is_hidden(hidden_kinds, event.kind_name()))
        .filter(|(_, event)| {
            if hidden_parties.is_empty() {
                return true;
            }
            let parties = event.parties();
            parties.is_empty() || parties.iter().any(|party| !is_hidden(hidden_parties, &party.to_string()))
        })
        .map(|(index, _)| u32::try_from(index).unwrap_or(u32::MAX))
        .collect()
}

#[function_component(EventLog)]
pub fn event_log(props: &EventLogProps) -> Html {
    let vocabulary = use_memo(props.run.clone(), |run| vocabulary(run));
    let shown = use_memo(
        (props.run.clone(), props.hidden_parties.clone(), props.hidden_kinds.clone()),
        |(run, parties, kinds)| visible(run, parties, kinds),
    );
    let run = &props.run;
    let applied = run.timeline.events_until(props.cursor_ms);
    // Rows before `position` have happened at the cursor.
    let position = shown.partition_point(|index| *index < applied);
    let first = position.saturating_sub(ROWS_BEFORE);
    let last = (position + ROWS_AFTER).min(shown.len());
    let current = position.checked_sub(1);
    let rows = (first..last).filter_map(|row| {
        let index = *shown.get(row)?;
        let event = run.event(index)?;
        let at_ms = event.at_ms;
        let onclick = props.dispatch.reform(move |_: MouseEvent| Action::Seek(at_ms));
        let is_current = Some(row) == current;
        let future = row >= position;
        let parties: Vec<String> = event.parties().iter().map(ToString::to_string).collect();
        Some(html! {
            <li key={index} class={classes!("event", is_current.then_some("current"), future.then_some("future"), format!("kind-{}", event.kind_name()))}
                data-event={index.to_string()} aria-current={is_current.then_some("true")}>
                <button class="event-button" {onclick} title="Move the cursor to this event">
                    <span class="event-time">{ format::elapsed(at_ms) }</span>
                    <span class="event-kind">{ event.kind_name() }</span>
                    <span class="event-text">{ event.to_string() }</span>
                    <span class="visually-hidden">{ format!(" (parties: {})", parties.join(", ")) }</span>
                </button>
            </li>
        })
    });
    let (parties, kinds) = &*vocabulary;
    let party_buttons = parties.iter().map(|party| {
        let hidden = is_hidden(&props.hidden_parties, party);
        let name = party.clone();
        let onclick = props.dispatch.reform(move |_: MouseEvent| Action::ToggleParty(name.clone()));
        html! {
            <button class={classes!("chip", hidden.then_some("off"))} aria-pressed={(!hidden).to_string()} {onclick}
                data-party={party.clone()}>
                <span aria-hidden="true">{ if hidden { "○ " } else { "● " } }</span>{ party.clone() }
            </button>
        }
    });
    let kind_boxes = kinds.iter().map(|kind| {
        let hidden = is_hidden(&props.hidden_kinds, kind);
        let name = kind.clone();
        let onchange = props.dispatch.reform(move |_: Event| Action::ToggleKind(name.clone()));
        html! {
            <label class="kind-box">
                <input type="checkbox" checked={!hidden} {onchange} data-kind={kind.clone()} />
                <span>{ kind.replace('_', " ") }</span>
            </label>
        }
    });
    let hidden_kind_count = kinds.iter().filter(|kind| is_hidden(&props.hidden_kinds, kind)).count();
    let on_all = props.dispatch.reform(|_: MouseEvent| Action::ShowAllEvents);
    html! {
        <div class="event-log">
            <div class="filters" role="group" aria-label="Show events of these parties">
                <span class="filter-label">{"Parties:"}</span>
                { for party_buttons }
            </div>
            <details class="kinds">
                <summary>{ format!("Kinds ({hidden_kind_count} hidden)") }</summary>
                <div class="kind-boxes" role="group" aria-label="Show events of these kinds">{ for kind_boxes }</div>
            </details>
            <p class="log-status">
                { format!("{} of {} events shown · {} happened by the cursor", shown.len(), run.log.len(), applied) }
                <button class="link" onclick={on_all}>{"Show every event"}</button>
            </p>
            <ol class="events" id="event-list" aria-label="Events around the cursor">
                { for rows }
            </ol>
            if shown.is_empty() {
                <p class="hint">{"The filters hide every event."}</p>
            }
        </div>
    }
}
