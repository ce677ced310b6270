//! The event log, written as the commands and statements on the wire,
//! filterable by party and kind, following the cursor: it shows the events
//! around the cursor, the last one that has happened marked. The filters
//! ([`LogFilters`]) are the page's state: the log shows them and asks for
//! changes ([`FilterChange`]), which the page's reducer makes with
//! [`LogFilters::changed`].

use crate::ui::callbacks::sending;
use crate::ui::format;
use crate::ui::run::RunRef;
use crate::ui::svg::{Esc, Svg};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Event kinds the log hides until asked: network chatter and background noise.
pub const QUIET_KINDS: [&str; 3] = ["background", "pool", "sent"];

/// What the log hides: the parties and the kinds whose events are left
/// out, each a sorted set.
#[derive(Clone, Debug, PartialEq)]
pub struct LogFilters {
    pub hidden_parties: Rc<Vec<String>>,
    pub hidden_kinds: Rc<Vec<String>>,
}

impl Default for LogFilters {
    /// Every party shown, the quiet kinds hidden.
    fn default() -> Self {
        LogFilters {
            hidden_parties: Rc::new(Vec::new()),
            hidden_kinds: Rc::new(QUIET_KINDS.iter().map(|kind| (*kind).to_owned()).collect()),
        }
    }
}

/// A change to the log's filters, as a reader asks for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FilterChange {
    /// Show or hide this party's events.
    ToggleParty(String),
    /// Show or hide this kind of event.
    ToggleKind(String),
    /// Show every event.
    ShowAll,
}

impl LogFilters {
    /// The filters with `change` made.
    pub fn changed(&self, change: FilterChange) -> LogFilters {
        match change {
            FilterChange::ToggleParty(party) => {
                LogFilters { hidden_parties: toggled(&self.hidden_parties, party), ..self.clone() }
            }
            FilterChange::ToggleKind(kind) => {
                LogFilters { hidden_kinds: toggled(&self.hidden_kinds, kind), ..self.clone() }
            }
            FilterChange::ShowAll => LogFilters { hidden_parties: Rc::default(), hidden_kinds: Rc::default() },
        }
    }
}

/// The sorted set with `item` added, or removed if it was there.
fn toggled(set: &[String], item: String) -> Rc<Vec<String>> {
    let mut set = set.to_vec();
    match set.binary_search(&item) {
        Ok(index) => {
            set.remove(index);
        }
        Err(index) => set.insert(index, item),
    }
    Rc::new(set)
}

/// Rows shown before and after the cursor's event.
const ROWS_BEFORE: usize = 10;
const ROWS_AFTER: usize = 16;

#[derive(Properties, PartialEq, Debug)]
pub struct EventLogProps {
    pub run: RunRef,
    pub cursor_ms: u64,
    pub filters: LogFilters,
    /// Asked to move the cursor to an event's time.
    pub on_seek: Callback<u64>,
    /// Asked to change the filters.
    pub on_filter: Callback<FilterChange>,
}

/// The parties and kinds that occur in a log, in a stable order.
fn vocabulary(run: &RunRef) -> (Vec<String>, Vec<String>) {
    let mut parties = Vec::new();
    let mut kinds = Vec::new();
    for event in &run.log {
        for party in event.parties() {
            if let Err(index) = parties.binary_search(&party) {
                parties.insert(index, party);
            }
        }
        let kind = event.kind_name();
        if let Err(index) = kinds.binary_search(&kind) {
            kinds.insert(index, kind);
        }
    }
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
    let vocabulary = use_memo(props.run.clone(), vocabulary);
    let shown = use_memo((props.run.clone(), props.filters.clone()), |(run, filters)| {
        visible(run, &filters.hidden_parties, &filters.hidden_kinds)
    });
    let run = &props.run;
    let applied = run.timeline.events_until(props.cursor_ms);
    let rows = rows_markup(run, &shown, applied);
    let on_row = seek_on_click(&props.on_seek);
    let (parties, kinds) = &*vocabulary;
    let on_all = sending(&props.on_filter, FilterChange::ShowAll);
    html! {
        <div class="event-log">
            { party_filters(parties, &props.filters, &props.on_filter) }
            { kind_filters(kinds, &props.filters, &props.on_filter) }
            <p class="log-status">
                { format!("{} of {} events shown · {} happened by the cursor", shown.len(), run.log.len(), applied) }
                <button class="link" onclick={on_all}>{"Show every event"}</button>
            </p>
            <div class="event-rows" onclick={on_row}>
                { Html::from_html_unchecked(AttrValue::from(rows)) }
            </div>
            if shown.is_empty() {
                <p class="hint">{"The filters hide every event."}</p>
            }
        </div>
    }
}

/// The shown events around the cursor, as markup: those that have happened
/// by the cursor, the last of them marked, then those still to come.
fn rows_markup(run: &RunRef, shown: &[u32], applied: u32) -> String {
    // Rows before `position` have happened at the cursor.
    let position = shown.partition_point(|index| *index < applied);
    let first = position.saturating_sub(ROWS_BEFORE);
    let last = (position + ROWS_AFTER).min(shown.len());
    let current = position.checked_sub(1);
    let mut rows = Svg::new();
    rows.raw(format_args!("<ol class=\"events\" id=\"event-list\" aria-label=\"Events around the cursor\">"));
    for row in first..last {
        let Some(event) = shown.get(row).and_then(|index| run.event(*index).map(|event| (*index, event))) else {
            continue;
        };
        let (index, event) = event;
        let is_current = Some(row) == current;
        let parties: Vec<String> = event.parties().iter().map(ToString::to_string).collect();
        rows.raw(format_args!(
            "<li class=\"event kind-{}{}{}\" data-event=\"{index}\" data-seek=\"{}\"{} title=\"Click to move the cursor here\">\
             <span class=\"event-time\">{}</span><span class=\"event-kind\">{}</span><span class=\"event-text\">{}</span>\
             <span class=\"visually-hidden\"> (parties: {})</span></li>",
            event.kind_name(),
            if is_current { " current" } else { "" },
            if row >= position { " future" } else { "" },
            event.at_ms,
            if is_current { " aria-current=\"true\"" } else { "" },
            format::elapsed(event.at_ms),
            event.kind_name(),
            Esc(&event.to_string()),
            Esc(&parties.join(", "))
        ));
    }
    rows.raw(format_args!("</ol>"));
    rows.finish()
}

/// A click on a row asks to move the cursor to its event. The rows are raw
/// markup, so one listener on them finds the row clicked.
fn seek_on_click(on_seek: &Callback<u64>) -> Callback<MouseEvent> {
    let on_seek = on_seek.clone();
    Callback::from(move |event: MouseEvent| {
        let at_ms = event
            .target()
            .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
            .and_then(|element| element.closest("[data-seek]").ok().flatten())
            .and_then(|row| row.get_attribute("data-seek"))
            .and_then(|text| text.parse::<u64>().ok());
        if let Some(at_ms) = at_ms {
            on_seek.emit(at_ms);
        }
    })
}

/// One toggle button per party, pressed while its events are shown.
fn party_filters(parties: &[String], filters: &LogFilters, on_filter: &Callback<FilterChange>) -> Html {
    let party_buttons = parties.iter().map(|party| {
        let hidden = is_hidden(&filters.hidden_parties, party);
        let onclick = sending(on_filter, FilterChange::ToggleParty(party.clone()));
        html! {
            <button class={classes!("chip", hidden.then_some("off"))} aria-pressed={(!hidden).to_string()} {onclick}
                data-party={party.clone()}>
                <span aria-hidden="true">{ if hidden { "○ " } else { "● " } }</span>{ party.clone() }
            </button>
        }
    });
    html! {
        <div class="filters" role="group" aria-label="Show events of these parties">
            <span class="filter-label">{"Parties:"}</span>
            { for party_buttons }
        </div>
    }
}

/// One checkbox per kind of event, folded away under how many are hidden.
fn kind_filters(kinds: &[String], filters: &LogFilters, on_filter: &Callback<FilterChange>) -> Html {
    let kind_boxes = kinds.iter().map(|kind| {
        let hidden = is_hidden(&filters.hidden_kinds, kind);
        let onchange = sending(on_filter, FilterChange::ToggleKind(kind.clone()));
        html! {
            <label class="kind-box">
                <input type="checkbox" checked={!hidden} {onchange} data-kind={kind.clone()} />
                <span>{ kind.replace('_', " ") }</span>
            </label>
        }
    });
    let hidden_kind_count = kinds.iter().filter(|kind| is_hidden(&filters.hidden_kinds, kind)).count();
    html! {
        <details class="kinds">
            <summary>{ format!("Kinds ({hidden_kind_count} hidden)") }</summary>
            <div class="kind-boxes" role="group" aria-label="Show events of these kinds">{ for kind_boxes }</div>
        </details>
    }
}
