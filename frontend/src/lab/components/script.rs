//! The fault script: the scenario's faults as an editable list (add, remove,
//! change time and fields), the built-in scenarios as starting points, and
//! loading and saving the whole scenario as JSON: saved as `locklab/2`,
//! loaded as `locklab/2` or the older `locklab/1` (which keeps its meaning).
//!
//! Edits go through the scenario's own validation: a bad value is refused
//! with the field named (`faults[2].duration_ms: …`) and the run is kept.

use crate::lab::state::Action;
use crate::ui::callbacks::sending;
use crate::ui::format;
use crate::ui::message::{Message, Tone};
use crate::ui::run::RunRef;
use crate::ui::svg::{Esc, Svg};
use locklab_engine::scenario::{FAULT_KINDS, FieldValue, Target};
use locklab_engine::{Fault, builtin};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct ScriptProps {
    /// The run whose scenario is edited.
    pub run: RunRef,
    pub cursor_ms: u64,
    pub dispatch: Callback<Action>,
    pub on_file: Callback<web_sys::File>,
    pub on_save: Callback<()>,
    /// Loads a built-in by name (the page fetches its file).
    pub on_builtin: Callback<String>,
}

fn parse_ms(text: &str) -> Result<u64, String> {
    text.parse().map_err(|_| format!("`{text}` is not a whole number of milliseconds"))
}

fn parse_party(text: &str) -> Result<Target, String> {
    Target::parse(text).ok_or_else(|| format!("unknown party `{text}`"))
}

/// A fault with one field changed from the text of its control, or what is
/// wrong with the text. The field's type is the engine's (`Fault::fields`);
/// an element of a pair is named `between[1]`. Ranges are checked
/// afterwards, by the scenario's own validation.
pub fn with_field(fault: &Fault, name: &str, text: &str) -> Result<Fault, String> {
    let text = text.trim();
    let (field, element) = match name.split_once('[') {
        Some((field, rest)) => (field, rest.trim_end_matches(']').parse::<usize>().ok()),
        None => (name, None),
    };
    let missing = || format!("a {} fault has no field `{name}`", fault.kind_name());
    let current = fault.fields().into_iter().find(|(known, _)| *known == field).map(|(_, value)| value);
    let value = match current.ok_or_else(missing)? {
        FieldValue::Ms(_) => FieldValue::Ms(parse_ms(text)?),
        FieldValue::OptionalMs(_) => FieldValue::OptionalMs(if text.is_empty() { None } else { Some(parse_ms(text)?) }),
        FieldValue::Signed(_) => {
            FieldValue::Signed(text.parse().map_err(|_| format!("`{text}` is not a whole number"))?)
        }
        FieldValue::Decimal(_) => {
            FieldValue::Decimal(format::parse_decimal(text).ok_or_else(|| format!("`{text}` is not a number"))?)
        }
        FieldValue::Flag(_) => FieldValue::Flag(text == "true"),
        FieldValue::Party(_) => FieldValue::Party(parse_party(text)?),
        FieldValue::Parties(mut parties) => {
            let slot = element.and_then(|index| parties.get_mut(index)).ok_or_else(missing)?;
            *slot = parse_party(text)?;
            FieldValue::Parties(parties)
        }
    };
    fault.with_field(field, value).ok_or_else(missing)
}

/// The parties a target select offers.
fn party_choices(instances: u8) -> Vec<String> {
    let mut names = vec!["holder".to_owned()];
    names.extend((0..instances).map(|index| char::from(b'a' + index).to_string()));
    names.push("redis".to_owned());
    names.extend((1..=5).map(|node| format!("redis-{node}")));
    for name in ["redis-1-replica", "db", "storage", "slack", "consensus"] {
        names.push(name.to_owned());
    }
    names
}

fn input_value(event: &Event) -> String {
    let Some(target) = event.target() else {
        return String::new();
    };
    if let Some(input) = target.dyn_ref::<web_sys::HtmlInputElement>() {
        if input.type_() == "checkbox" {
            return input.checked().to_string();
        }
        return input.value();
    }
    target.dyn_ref::<web_sys::HtmlSelectElement>().map(web_sys::HtmlSelectElement::value).unwrap_or_default()
}

/// One field's control, labelled: a party's select, a checkbox, or a text
/// field for a number (empty for none); a pair of parties is a select for
/// each (`between[0]`, `between[1]`).
fn control(out: &mut Svg, parties: &[String], index: usize, name: &str, value: FieldValue) {
    let id = format!("fault-{index}-{}", name.replace(['[', ']'], "-"));
    let label = |out: &mut Svg| out.raw(format_args!("<label class=\"field small\" for=\"{id}\"><span>{name}</span>"));
    let text = match value {
        FieldValue::Parties([first, second]) => {
            control(out, parties, index, &format!("{name}[0]"), FieldValue::Party(first));
            control(out, parties, index, &format!("{name}[1]"), FieldValue::Party(second));
            return;
        }
        FieldValue::Party(target) => {
            label(out);
            let text = target.to_string();
            out.raw(format_args!("<select id=\"{id}\" data-fault=\"{index}\" data-field=\"{name}\">"));
            for party in parties {
                let selected = if *party == text { " selected" } else { "" };
                out.raw(format_args!("<option value=\"{party}\"{selected}>{party}</option>"));
            }
            out.raw(format_args!("</select></label>"));
            return;
        }
        FieldValue::Flag(checked) => {
            label(out);
            out.raw(format_args!(
                "<input id=\"{id}\" type=\"checkbox\" data-fault=\"{index}\" data-field=\"{name}\"{}></label>",
                if checked { " checked" } else { "" }
            ));
            return;
        }
        FieldValue::Ms(ms) | FieldValue::OptionalMs(Some(ms)) => ms.to_string(),
        FieldValue::OptionalMs(None) => String::new(),
        FieldValue::Signed(value) => value.to_string(),
        FieldValue::Decimal(value) => locklab_engine::format::decimal(value),
    };
    let none = if matches!(value, FieldValue::OptionalMs(_)) { " placeholder=\"none\"" } else { "" };
    label(out);
    out.raw(format_args!(
        "<input id=\"{id}\" type=\"text\" inputmode=\"numeric\" class=\"num\" data-fault=\"{index}\" data-field=\"{name}\" value=\"{}\"{none}></label>",
        Esc(&text)
    ));
}

/// The fault list as markup: each control names its fault and field in
/// `data-*` attributes, read by the list's change and click listeners.
fn rows_markup(faults: &[Fault], instances: u8) -> String {
    let mut out = Svg::new();
    out.raw(format_args!("<ol class=\"fault-list\" id=\"fault-list\">"));
    let parties = party_choices(instances);
    for (index, fault) in faults.iter().enumerate() {
        let kind = fault.kind_name();
        out.raw(format_args!(
            "<li class=\"fault-row\" data-kind=\"{kind}\"><span class=\"fault-index\">{index}</span>\
             <label class=\"field small\" for=\"fault-{index}-at\"><span>at_ms</span>\
             <input id=\"fault-{index}-at\" type=\"text\" inputmode=\"numeric\" class=\"num\" data-fault=\"{index}\" data-field=\"at_ms\" value=\"{}\"></label>\
             <span class=\"fault-t\" aria-hidden=\"true\">{}</span>\
             <label class=\"field small\" for=\"fault-{index}-kind\"><span>kind</span>\
             <select id=\"fault-{index}-kind\" data-fault=\"{index}\" data-field=\"kind\">",
            fault.at_ms(),
            format::t_label(fault.at_ms())
        ));
        for option in FAULT_KINDS {
            let selected = if option == kind { " selected" } else { "" };
            out.raw(format_args!("<option value=\"{option}\"{selected}>{option}</option>"));
        }
        out.raw(format_args!("</select></label>"));
        // The fields the engine lists for this kind, after `at_ms` (shown first).
        for (name, value) in fault.fields().into_iter().skip(1) {
            control(&mut out, &parties, index, name, value);
        }
        let summary = fault.to_string();
        out.raw(format_args!(
            "<button type=\"button\" class=\"ghost remove\" id=\"fault-{index}-remove\" data-remove=\"{index}\" aria-label=\"Remove fault {index}: {}\">\
             <span aria-hidden=\"true\">✕ </span>Remove</button><span class=\"fault-summary\">{}</span></li>",
            Esc(&summary),
            Esc(&summary)
        ));
    }
    out.raw(format_args!("</ol>"));
    out.finish()
}

/// What a change to one control of the list does.
fn change_action(faults: &[Fault], index: usize, field: &str, text: &str) -> Action {
    let refuse = |problem: String| {
        Action::Notify(Message {
            tone: Tone::Error,
            text: format!("faults[{index}].{field}: {problem}. The current run is unchanged."),
        })
    };
    let Some(fault) = faults.get(index) else {
        return refuse("there is no such fault".to_owned());
    };
    let changed = if field == "kind" {
        Fault::template(text, fault.at_ms()).ok_or_else(|| format!("unknown kind `{text}`"))
    } else {
        with_field(fault, field, text)
    };
    match changed {
        Ok(fault) => {
            let mut next = faults.to_vec();
            next[index] = fault;
            Action::SetFaults(next)
        }
        Err(problem) => refuse(problem),
    }
}

#[function_component(FaultScript)]
pub fn fault_script(props: &ScriptProps) -> Html {
    let scenario = &props.run.scenario;
    let dispatch = &props.dispatch;
    let faults = &scenario.faults;
    let refocus = super::use_refocus();
    let rows = use_memo(props.run.clone(), |run| {
        AttrValue::from(rows_markup(&run.scenario.faults, run.scenario.world.instances))
    });
    let on_rows_change = edit_on_change(dispatch, faults, &refocus);
    let on_rows_click = remove_on_click(dispatch, faults);
    let at_ms = props.cursor_ms.min(scenario.duration_ms().saturating_sub(1));
    let tools = Tools {
        cursor_ms: props.cursor_ms,
        has_faults: !faults.is_empty(),
        on_builtin: props.on_builtin.reform(|event: Event| input_value(&event)),
        on_file: load_on_choose(&props.on_file),
        on_save: sending(&props.on_save, ()),
        on_add: add_on_click(dispatch, faults, at_ms),
        on_clear: sending(dispatch, Action::SetFaults(Vec::new())),
    };
    html! {
        <div class="script">
            { tools.markup() }
            if faults.is_empty() {
                <p class="hint" id="no-faults">{"No faults: the night is calm. Inject one above, or add one here."}</p>
            } else {
                <div class="fault-rows" onchange={on_rows_change} onclick={on_rows_click}>
                    { Html::from_html_unchecked((*rows).clone()) }
                </div>
            }
        </div>
    }
}

/// A change to a row's control edits that fault, and names the control to
/// refocus, since the re-render replaces it.
fn edit_on_change(
    dispatch: &Callback<Action>,
    faults: &[Fault],
    refocus: &Rc<RefCell<Option<String>>>,
) -> Callback<Event> {
    let dispatch = dispatch.clone();
    let faults = faults.to_vec();
    let refocus = refocus.clone();
    Callback::from(move |event: Event| {
        let Some(element) = event.target().and_then(|target| target.dyn_into::<web_sys::Element>().ok()) else {
            return;
        };
        let index = element.get_attribute("data-fault").and_then(|text| text.parse::<usize>().ok());
        let field = element.get_attribute("data-field");
        if let (Some(index), Some(field)) = (index, field) {
            *refocus.borrow_mut() = Some(element.id());
            dispatch.emit(change_action(&faults, index, &field, &input_value(&event)));
        }
    })
}

/// A click on a row's remove button removes that fault. The rows are raw
/// markup, so one listener on them finds the button clicked.
fn remove_on_click(dispatch: &Callback<Action>, faults: &[Fault]) -> Callback<MouseEvent> {
    let dispatch = dispatch.clone();
    let faults = faults.to_vec();
    Callback::from(move |event: MouseEvent| {
        let index = event
            .target()
            .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
            .and_then(|element| element.closest("[data-remove]").ok().flatten())
            .and_then(|button| button.get_attribute("data-remove"))
            .and_then(|text| text.parse::<usize>().ok());
        if let Some(index) = index.filter(|index| *index < faults.len()) {
            let mut next = faults.clone();
            next.remove(index);
            dispatch.emit(Action::SetFaults(next));
        }
    })
}

/// Adds a GC pause at `at_ms`, a fault to start editing from.
fn add_on_click(dispatch: &Callback<Action>, faults: &[Fault], at_ms: u64) -> Callback<MouseEvent> {
    let faults = faults.to_vec();
    dispatch.reform(move |_: MouseEvent| {
        let mut next = faults.clone();
        next.extend(Fault::template("gc_pause", at_ms));
        Action::SetFaults(next)
    })
}

/// Hands the chosen file on, and empties the input.
fn load_on_choose(on_file: &Callback<web_sys::File>) -> Callback<Event> {
    let on_file = on_file.clone();
    Callback::from(move |event: Event| {
        let Some(input) = event.target_dyn_into::<web_sys::HtmlInputElement>() else {
            return;
        };
        if let Some(file) = input.files().and_then(|files| files.get(0)) {
            on_file.emit(file);
        }
        // Choosing the same file again must load it again.
        input.set_value("");
    })
}

/// The script's tool bar: where a scenario comes from (a built-in, a file),
/// saving it, and adding or clearing faults.
struct Tools {
    cursor_ms: u64,
    has_faults: bool,
    on_builtin: Callback<Event>,
    on_file: Callback<Event>,
    on_save: Callback<MouseEvent>,
    on_add: Callback<MouseEvent>,
    on_clear: Callback<MouseEvent>,
}

impl Tools {
    fn markup(self) -> Html {
        html! {
            <div class="script-tools">
                <label class="field">
                    <span>{"Start from a built-in"}</span>
                    <select id="builtin" onchange={self.on_builtin}>
                        <option value="" selected=true disabled=true>{"choose…"}</option>
                        { for builtin::CATALOG.iter().map(|listed| html! {
                            <option value={listed.name}>{ format!("{} — {}", listed.name, listed.title) }</option>
                        }) }
                    </select>
                </label>
                <span class="file-button">
                    <input type="file" id="load-file" accept=".json,application/json" class="visually-hidden" onchange={self.on_file} />
                    <label for="load-file" class="button">{"Load scenario JSON…"}</label>
                </span>
                <button id="save-file" onclick={self.on_save}>{"Save scenario JSON"}</button>
                <button id="add-fault" onclick={self.on_add}>{ format!("Add a fault at {}", format::t_label(self.cursor_ms)) }</button>
                <button id="clear-faults" class="ghost" onclick={self.on_clear} disabled={!self.has_faults}>{"Remove every fault"}</button>
            </div>
        }
    }
}
