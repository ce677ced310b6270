//! The quiz's function components. The root ([`QuizApp`]) owns the state and
//! calls the side effects; every other component gets data and callbacks as
//! props and keeps no app state. The side-by-side shows the two runs on the
//! pages' timeline and verdict components ([`crate::ui`]), under one shared
//! cursor.

use crate::quiz::effects::{self, QuizBoot};
use crate::quiz::progress::Progress;
use crate::quiz::state::{Answered, Column, DEFAULT_SPEED_RATIO, Pairing, QuizAction, QuizState, SPEEDS};
use crate::ui::format;
use crate::ui::input::use_narrow_screen;
use crate::ui::message::{Message, Tone};
use crate::ui::run::RunRef;
use crate::ui::timeline::Timeline;
use crate::ui::verdicts::Verdicts;
use locklab_engine::Scenario;
use locklab_engine::quiz::Choice;
use std::cell::Cell;
use std::rc::Rc;
use yew::prelude::*;

/// "A, C and D".
fn joined(ids: &[&str]) -> String {
    match ids {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// "A · SET NX + short TTL + fencing token", with the card's own settings
/// where they differ from the seed's ("N · SET NX EX 60, released with a plain DEL").
fn choice_name(choice: &Choice, scenario: &Scenario) -> String {
    format!("{} · {}", choice.id, scenario.settings_for(choice.strategy).title())
}

#[derive(Properties, PartialEq, Debug)]
pub struct QuizAppProps {
    pub boot: Rc<QuizBoot>,
}

/// The root: the one reducer state, the side effects, and the page layout.
#[function_component(QuizApp)]
pub fn quiz_app(props: &QuizAppProps) -> Html {
    let boot = props.boot.clone();
    let state = use_reducer(move || {
        let (cards, problems) = crate::quiz::state::load_cards();
        let mut notice = boot.notice.clone();
        if !problems.is_empty() {
            // Said beside the boot notice, if there is one: neither hides the other.
            let before = notice.map(|notice| format!("{} ", notice.text)).unwrap_or_default();
            notice = Some(Message {
                tone: Tone::Error,
                text: format!("{before}Some cards could not be read and are left out: {}.", problems.join("; ")),
            });
        }
        let current = boot.card.as_deref().and_then(|name| cards.iter().position(|card| card.name == name));
        let mut state = QuizState::new(Rc::new(cards), boot.progress.clone(), current, notice);
        state.narrow = boot.narrow;
        state
    });
    let dispatch = {
        let dispatcher = state.dispatcher();
        use_memo((), move |()| Callback::from(move |action: QuizAction| dispatcher.dispatch(action)))
    };
    let dispatch: Callback<QuizAction> = (*dispatch).clone();
    // The pages' timeline and verdict ask to move the cursor; they take it as
    // a prop, so the callback need not be kept from one render to the next.
    let on_seek = dispatch.reform(QuizAction::Seek);

    effects::use_save_progress(state.progress.clone(), dispatch.clone());
    effects::use_playback(&state);
    effects::use_lab_hrefs(&state);
    use_narrow_screen(dispatch.clone(), QuizAction::SetNarrow);
    let card_name = state.card().map_or("", |card| card.name);
    effects::use_card_in_address(card_name);
    // After "Check my answer", focus goes to the result (the button is gone).
    let just_checked = use_mut_ref(|| Cell::new(false));
    {
        let just_checked = just_checked.clone();
        let answered = state.answered.is_some();
        use_effect_with(answered, move |answered| {
            if *answered && just_checked.borrow().replace(false) {
                effects::focus("result");
            }
        });
    }
    let on_check = {
        let dispatch = dispatch.clone();
        Callback::from(move |()| {
            just_checked.borrow().set(true);
            dispatch.emit(QuizAction::Check);
        })
    };

    let notice = state.notice.as_ref().map(|notice| {
        let (class, role) = match notice.tone {
            Tone::Info => ("message info", "status"),
            Tone::Error => ("message error", "alert"),
        };
        let icon = if notice.tone == Tone::Error { "⚠ " } else { "ℹ " };
        let dismiss = dispatch.reform(|_: MouseEvent| QuizAction::Dismiss);
        html! {
            <div class={class} role={role} id="notice">
                <span aria-hidden="true">{icon}</span>
                <span class="message-text">{ &notice.text }</span>
                <button class="ghost" onclick={dismiss}><span aria-hidden="true">{"✕"}</span><span class="visually-hidden">{"Dismiss the message"}</span></button>
            </div>
        }
    });
    let (right, tried) = state.score();
    let body = match state.card() {
        Some(card) => html! {
            <CardView card_number={state.current + 1} card_count={state.cards.len()}
                title={AttrValue::from(card.title().to_owned())} story={AttrValue::from(card.quiz.story.clone())}
                question={AttrValue::from(card.quiz.question.clone())} choices={Rc::new(card.quiz.choices.clone())}
                scenario={card.scenario.clone()}
                answer={Rc::new(card.quiz.answer.clone())} asks={card.quiz.asks.describe()}
                pick={state.pick.clone()} answered={state.answered.clone()}
                explanation={AttrValue::from(card.quiz.explanation.clone())}
                fix={card.quiz.fix.as_ref().map(|fix| AttrValue::from(fix.text.clone()))}
                references={Rc::new(card.quiz.references.iter().map(|reference| (reference.title.clone(), reference.url.clone())).collect::<Vec<_>>())}
                cursor_ms={state.cursor_ms} playing={state.playing} speed_ratio={state.speed_ratio}
                narrow={state.narrow} dispatch={dispatch.clone()} {on_seek} {on_check} />
        },
        None => html! { <p class="boot-note">{"No quiz cards could be read."}</p> },
    };

    html! {
        <div class="quiz" data-ready="true" data-card={card_name}
            data-answered={state.answered.is_some().to_string()}
            data-cursor-ms={state.cursor_ms.to_string()} data-playing={state.playing.to_string()}>
            <a class="skip-link" href="#main">{"Skip to the card"}</a>
            <header class="topbar">
                <div class="brand">
                    <h1>{"locklab quiz"}</h1>
                    <p class="tagline">{"Pick a fix, then watch it run beside the right answer."}</p>
                </div>
                <nav class="pages" aria-label="Other pages">
                    <a href="story.html">{"The night, step by step"}</a>
                    <a class="button back-to-lab" href="index.html">{"← Back to the lab"}</a>
                </nav>
            </header>
            { for notice }
            <div class="quiz-layout">
                <CardList cards={state.cards.iter().map(|card| (card.name, AttrValue::from(card.title().to_owned()))).collect::<Vec<_>>()}
                    current={state.current} progress={state.progress.clone()} right={right} tried={tried}
                    dispatch={dispatch.clone()} />
                <main id="main" class="quiz-main" tabindex="-1">{ body }</main>
            </div>
        </div>
    }
}

#[derive(Properties, PartialEq, Debug)]
pub struct CardListProps {
    /// (name, title) of every card, in order.
    pub cards: Vec<(&'static str, AttrValue)>,
    pub current: usize,
    pub progress: Rc<Progress>,
    pub right: usize,
    pub tried: usize,
    pub dispatch: Callback<QuizAction>,
}

/// The cards in order with their status, the score and "Reset progress".
#[function_component(CardList)]
pub fn card_list(props: &CardListProps) -> Html {
    let items = props.cards.iter().enumerate().map(|(index, (name, title))| {
        let status = props.progress.status(name);
        let current = index == props.current;
        let (mark, word) = status.mark_and_word();
        let onclick = props.dispatch.reform(move |_: MouseEvent| QuizAction::Open(index));
        html! {
            <li>
                <button type="button" class={classes!("card-link", status.word(), current.then_some("current"))}
                    data-card={*name} data-status={status.word()}
                    aria-current={current.then_some("step")} {onclick}>
                    <span class="card-number">{ index + 1 }</span>
                    <span class="card-name">{ title.clone() }</span>
                    <span class="card-status">
                        if !mark.is_empty() { <span class="status-mark" aria-hidden="true">{ mark }</span>{" "} }
                        <span class="status-word">{ word }</span>
                    </span>
                </button>
            </li>
        }
    });
    let on_reset = props.dispatch.reform(|_: MouseEvent| QuizAction::ResetProgress);
    let score = if props.tried == 0 {
        "Score: nothing tried yet".to_owned()
    } else {
        format!("Score: {} right of {} tried", props.right, props.tried)
    };
    html! {
        <nav class="panel card-list" aria-labelledby="cards-title">
            <h2 id="cards-title">{ format!("{} cards", props.cards.len()) }</h2>
            <p class="score" id="score" data-right={props.right.to_string()} data-tried={props.tried.to_string()}
                aria-live="polite">{ score }</p>
            <ol class="cards">{ for items }</ol>
            <button type="button" id="reset-progress" onclick={on_reset} disabled={props.tried == 0}
                title="Forget every answer on this device">{"Reset progress"}</button>
        </nav>
    }
}

#[derive(Properties, PartialEq, Debug)]
pub struct CardViewProps {
    pub card_number: usize,
    pub card_count: usize,
    pub title: AttrValue,
    pub story: AttrValue,
    pub question: AttrValue,
    pub choices: Rc<Vec<Choice>>,
    /// The card's scenario: its settings name the choices.
    pub scenario: Rc<Scenario>,
    pub answer: Rc<Vec<String>>,
    /// What the question asks of a run, in words.
    pub asks: &'static str,
    pub pick: Option<String>,
    pub answered: Option<Answered>,
    pub explanation: AttrValue,
    /// The fix the card names, to play in the lab, in words.
    pub fix: Option<AttrValue>,
    /// (title, address) of each reference.
    pub references: Rc<Vec<(String, String)>>,
    pub cursor_ms: u64,
    pub playing: bool,
    pub speed_ratio: f64,
    pub narrow: bool,
    pub dispatch: Callback<QuizAction>,
    /// The timelines' and verdicts' seek, as the quiz's action.
    pub on_seek: Callback<u64>,
    pub on_check: Callback<()>,
}

/// One card: story, question, choices; once checked, the result, the two
/// runs side by side, the explanation and the references.
#[function_component(CardView)]
pub fn card_view(props: &CardViewProps) -> Html {
    let answered = props.answered.as_ref();
    let checked = answered.is_some();
    let choices = props.choices.iter().map(|choice| {
        let id = choice.id.clone();
        let input_id = format!("choice-{id}");
        let selected = props.pick.as_deref() == Some(id.as_str());
        let right = props.answer.contains(&id);
        let onchange = props.dispatch.reform({
            let id = id.clone();
            move |_: Event| QuizAction::Pick(id.clone())
        });
        // After checking, every choice says whether it was right: the mark
        // and the word, never the colour alone.
        let mark = checked.then(|| {
            let (class, text) = if right { ("good", "✓ right") } else { ("bad", "✗ wrong") };
            html! { <span class={classes!("choice-mark", class)}>{ text }</span> }
        });
        html! {
            <li class={classes!("quiz-choice", selected.then_some("chosen"))}>
                <input type="radio" name="quiz-choice" id={input_id.clone()} value={id.clone()}
                    checked={selected} disabled={checked} {onchange} />
                <label for={input_id}>
                    <span class="choice-letter" aria-hidden="true">{ &id }</span>
                    <span class="choice-body">
                        <span class="choice-strategy">
                            <span class="visually-hidden">{ format!("{id}: ") }</span>{ props.scenario.settings_for(choice.strategy).title() }
                        </span>
                        <span class="choice-text">{ &choice.text }</span>
                    </span>
                    if selected && checked { <span class="your-pick">{"your pick"}</span> }
                    { for mark }
                </label>
            </li>
        }
    });
    let onsubmit = {
        let on_check = props.on_check.clone();
        Callback::from(move |event: SubmitEvent| {
            event.prevent_default();
            on_check.emit(());
        })
    };
    let previous = props.card_number.checked_sub(2);
    let next = (props.card_number < props.card_count).then_some(props.card_number);
    let nav_button = |index: Option<usize>, id: &'static str, text: &'static str| {
        let onclick = props.dispatch.reform(move |_: MouseEvent| QuizAction::Open(index.unwrap_or(0)));
        html! { <button type="button" id={id} disabled={index.is_none()} {onclick}>{ text }</button> }
    };
    html! {
        <article class="panel quiz-card" aria-labelledby="card-title">
            <p class="card-count">{ format!("Card {} of {}", props.card_number, props.card_count) }</p>
            <h2 id="card-title">{ props.title.clone() }</h2>
            <p class="story">{ props.story.clone() }</p>
            <form class="ask" {onsubmit}>
                <fieldset class="quiz-choices">
                    <legend class="question">{ props.question.clone() }</legend>
                    if !checked {
                        <p class="hint">{"Pick one; nothing runs until you check."}</p>
                    }
                    <ul class="choice-list">{ for choices }</ul>
                </fieldset>
                if !checked {
                    <button type="submit" id="check" class="primary" disabled={props.pick.is_none()}>
                        {"Check my answer"}
                    </button>
                }
            </form>
            if let Some(answered) = answered {
                <ResultLine right={answered.right} pick={answered.pick.choice.id.clone()}
                    answer={props.answer.clone()} asks={props.asks} dispatch={props.dispatch.clone()} />
                <SideBySide answered={answered.clone()} cursor_ms={props.cursor_ms} playing={props.playing}
                    speed_ratio={props.speed_ratio} narrow={props.narrow} dispatch={props.dispatch.clone()}
                    on_seek={props.on_seek.clone()} />
                <section class="explanation" aria-labelledby="explanation-title">
                    <h3 id="explanation-title">{"Why"}</h3>
                    <p>{ props.explanation.clone() }</p>
                    if let Some(fix) = &props.fix {
                        <p class="fix">
                            <a class="button" id="play-fix" href={answered.fix_href.clone().map_or(AttrValue::from("index.html"), AttrValue::from)}>
                                {"Play the fix in the lab ↗"}
                            </a>
                            { format!(" {fix}.") }
                        </p>
                    }
                    if !props.references.is_empty() {
                        <h3>{"Read more"}</h3>
                        <ul class="references">
                            { for props.references.iter().map(|(title, url)| html! {
                                <li><a href={url.clone()} rel="noopener" target="_blank">{ title }</a></li>
                            }) }
                        </ul>
                    }
                </section>
            }
            <nav class="card-nav" aria-label="Cards">
                { nav_button(previous, "previous-card", "← Previous card") }
                { nav_button(next, "next-card", "Next card →") }
            </nav>
        </article>
    }
}

#[derive(Properties, PartialEq, Debug)]
pub struct ResultProps {
    pub right: bool,
    pub pick: String,
    pub answer: Rc<Vec<String>>,
    pub asks: &'static str,
    pub dispatch: Callback<QuizAction>,
}

/// Right or wrong, in words, and "Try again".
#[function_component(ResultLine)]
pub fn result_line(props: &ResultProps) -> Html {
    let others: Vec<&str> = props.answer.iter().map(String::as_str).filter(|id| *id != props.pick.as_str()).collect();
    let (head, detail) = if props.right {
        let also = if others.is_empty() {
            " It is the only choice that does.".to_owned()
        } else {
            format!(
                " {} right too.",
                if others.len() == 1 { format!("{} is", others[0]) } else { format!("{} are", joined(&others)) }
            )
        };
        ("✓ Right.", format!("{} {}.{also}", props.pick, props.asks))
    } else {
        let all: Vec<&str> = props.answer.iter().map(String::as_str).collect();
        let detail = if all.len() == 1 {
            format!("The answer is {}: it {}.", all[0], props.asks)
        } else {
            format!("The right answers are {}: each {}.", joined(&all), props.asks)
        };
        ("✗ Not this one.", detail)
    };
    let on_again = props.dispatch.reform(|_: MouseEvent| QuizAction::TryAgain);
    html! {
        <div class={classes!("result", if props.right { "right" } else { "wrong" })} id="result"
            data-result={if props.right { "right" } else { "wrong" }} tabindex="-1" role="status">
            <p><strong class="result-head">{ head }</strong>{" "}{ detail }</p>
            <button type="button" id="try-again" class="ghost" onclick={on_again}>{"Try this card again"}</button>
        </div>
    }
}

#[derive(Properties, PartialEq, Debug)]
pub struct SideBySideProps {
    pub answered: Answered,
    pub cursor_ms: u64,
    pub playing: bool,
    pub speed_ratio: f64,
    pub narrow: bool,
    pub dispatch: Callback<QuizAction>,
    pub on_seek: Callback<u64>,
}

fn speed_text(speed: f64) -> String {
    format!("{}×", speed.round())
}

/// The pick's run and its partner's, two columns under one play/pause and one cursor.
#[function_component(SideBySide)]
pub fn side_by_side(props: &SideBySideProps) -> Html {
    let answered = &props.answered;
    let duration_ms = answered.duration_ms();
    let other = &answered.other.choice.id;
    let pairing = match answered.pairing {
        Pairing::RightAnswer => format!(
            "Your pick beside {other}, the right answer: the same scenario, seed and faults; only the strategy differs."
        ),
        Pairing::AnotherRightAnswer => {
            format!(
                "{other} is right too: here it is beside your pick, two ways through the same night and what each costs."
            )
        }
        Pairing::ClosestWrong => format!(
            "No other choice is right, so beside your pick is {other}, the wrong choice whose run comes closest to yours \
             (the fewest differences in verdicts and metrics): what still differs is what the question is about."
        ),
    };
    let on_play = props.dispatch.reform(|_: MouseEvent| QuizAction::TogglePlay);
    let on_scrub = props.dispatch.reform(|event: InputEvent| {
        let value = event.target_dyn_into::<web_sys::HtmlInputElement>().map(|input| input.value()).unwrap_or_default();
        QuizAction::Seek(value.parse().unwrap_or(0))
    });
    let on_speed = props.dispatch.reform(|event: Event| {
        let value =
            event.target_dyn_into::<web_sys::HtmlSelectElement>().map(|select| select.value()).unwrap_or_default();
        QuizAction::SetSpeed(
            SPEEDS.get(value.parse::<usize>().unwrap_or(usize::MAX)).copied().unwrap_or(DEFAULT_SPEED_RATIO),
        )
    });
    // The timelines are sliders: with focus, arrows step 1 % of the run
    // (shift: 10 %), Home and End go to the ends.
    let on_key = {
        let dispatch = props.dispatch.clone();
        let cursor_ms = props.cursor_ms;
        Callback::from(move |event: KeyboardEvent| {
            let on_timeline = event
                .target_dyn_into::<web_sys::Element>()
                .is_some_and(|element| element.class_name().split_whitespace().any(|class| class == "timeline"));
            if !on_timeline {
                return;
            }
            let step_ms = (duration_ms / if event.shift_key() { 10 } else { 100 }).max(1);
            let to = match event.key().as_str() {
                "ArrowRight" | "ArrowUp" => cursor_ms.saturating_add(step_ms),
                "ArrowLeft" | "ArrowDown" => cursor_ms.saturating_sub(step_ms),
                "Home" => 0,
                "End" => duration_ms,
                _ => return,
            };
            event.prevent_default();
            dispatch.emit(QuizAction::Seek(to));
        })
    };
    let speeds = SPEEDS.iter().enumerate().map(|(index, speed)| {
        html! { <option value={index.to_string()} selected={*speed == props.speed_ratio}>{ speed_text(*speed) }</option> }
    });
    let (play_icon, play_label) = if props.playing { ("⏸", "Pause") } else { ("▶", "Play both") };
    let hrefs = answered.lab_hrefs.as_ref();
    html! {
        <section class="side-by-side" aria-labelledby="runs-title">
            <h3 id="runs-title">{"Both runs, side by side"}</h3>
            <p class="pairing" id="pairing" data-pairing={format!("{:?}", answered.pairing)}>{ pairing }</p>
            <div class="quiz-transport" role="group" aria-label="Playback of both runs">
                <button type="button" id="quiz-play" class="primary" onclick={on_play}
                    aria-pressed={props.playing.to_string()}>
                    <span aria-hidden="true">{ format!("{play_icon} ") }</span>{ play_label }
                </button>
                <input type="range" id="quiz-cursor" min="0" max={duration_ms.to_string()} step="100"
                    value={props.cursor_ms.to_string()} oninput={on_scrub}
                    aria-label="Time cursor of both runs"
                    aria-valuetext={format!("{} of {}", format::t_label(props.cursor_ms), format::elapsed(duration_ms))} />
                <output class="clock" id="quiz-clock">
                    <span class="clock-t">{ format::t_label(props.cursor_ms) }</span>
                    <span class="clock-of">{ format!(" of {}", format::elapsed(duration_ms)) }</span>
                </output>
                <label class="field">
                    <span>{"Speed"}</span>
                    <select id="quiz-speed" onchange={on_speed}>{ for speeds }</select>
                </label>
            </div>
            <div class="run-columns" onkeydown={on_key}>
                <RunColumn role="pick" column={answered.pick.clone()} lab_href={hrefs.map(|hrefs| AttrValue::from(hrefs.0.clone()))}
                    cursor_ms={props.cursor_ms} narrow={props.narrow} on_seek={props.on_seek.clone()} />
                <RunColumn role="other" column={answered.other.clone()} lab_href={hrefs.map(|hrefs| AttrValue::from(hrefs.1.clone()))}
                    cursor_ms={props.cursor_ms} narrow={props.narrow} on_seek={props.on_seek.clone()} />
            </div>
            <p class="legend-line">
                {"Each lane: solid, the instance believes it holds the lock (tok = its token); outline, the lock service counts it as holder; shaded ⚠, two believe at once; hatched, a GC pause. ✓ write accepted · ✗ rejected · ✉ Slack post · ⚡ fault. Click a timeline or a finding to move the cursor."}
            </p>
            <p class="simplifies-line" id="simplifies-line">
                <strong>{"Where the lab simplifies: "}</strong>
                {"every party has one clock that a jump steps (only etcd's leases run on a monotonic clock), Redis replication is a fixed lag, a report row is checked when written and applied at COMMIT, and a fencing token protects only what checks it (storage that checks tokens does; a plain object store and Slack cannot)."}
            </p>
        </section>
    }
}

#[derive(Properties, PartialEq, Debug)]
pub struct RunColumnProps {
    /// `pick` or `other`: names the column for tests and ids.
    pub role: &'static str,
    pub column: Column,
    /// The "Open in the lab" address, once made.
    pub lab_href: Option<AttrValue>,
    pub cursor_ms: u64,
    /// Narrow screen: the lab's narrow drawing, readable at the full width of
    /// a phone; otherwise the compact one, as in the lab's compare mode.
    pub narrow: bool,
    pub on_seek: Callback<u64>,
}

/// One run: the choice, the lab's timeline, the lab's verdict and findings,
/// and a link that opens this run in the lab.
#[function_component(RunColumn)]
pub fn run_column(props: &RunColumnProps) -> Html {
    let column = &props.column;
    let run: &RunRef = &column.run;
    let heading = match (props.role, column.right) {
        ("pick", _) => "Your pick",
        (_, true) => "A right answer",
        (_, false) => "A wrong choice",
    };
    let title_id = format!("run-{}-title", props.role);
    let (mark_class, mark) = if column.right { ("good", "✓ right") } else { ("bad", "✗ wrong") };
    html! {
        <section class={classes!("run-column", props.role)} data-role={props.role}
            data-strategy={run.strategy.name()} aria-labelledby={title_id.clone()}>
            <header class="run-head">
                <p class="run-role">{ heading }{" "}<span class={classes!("choice-mark", mark_class)}>{ mark }</span></p>
                <h4 id={title_id}>{ choice_name(&column.choice, &run.scenario) }</h4>
            </header>
            <Timeline run={run.clone()} cursor_ms={props.cursor_ms} on_seek={props.on_seek.clone()}
                compact={!props.narrow} narrow={props.narrow}
                label={AttrValue::from(format!("Time cursor, {}", choice_name(&column.choice, &run.scenario)))} />
            <Verdicts run={run.clone()} cursor_ms={props.cursor_ms} on_seek={props.on_seek.clone()}
                id={AttrValue::from(format!("verdicts-{}", props.role))} />
            if let Some(href) = &props.lab_href {
                <a class="button open-lab" id={format!("open-lab-{}", props.role)} href={href.clone()}>
                    { format!("Open {} in the lab", column.choice.id) }
                </a>
            } else {
                <span class="hint open-lab-pending">{"Making the lab link…"}</span>
            }
        </section>
    }
}
