//! The story page's components: the root, which owns the one state and
//! calls the effects, and leaves that get data and callbacks. The figure is
//! the pages' timeline (`ui::timeline`), with the step's
//! highlights drawn on a layer of the same geometry over it.

use crate::story::effects::{self, StoryBoot};
use crate::story::state::{Shown, StoryAction, StoryState};
use crate::ui::format;
use crate::ui::input::use_narrow_screen;
use crate::ui::run::strategy_label_in;
use crate::ui::svg::Num;
use crate::ui::timeline::Timeline;
use locklab_engine::story::LookAt;
use locklab_engine::svg::{Band, band, geometry, write_band};
use locklab_engine::view::Resource;
use std::rc::Rc;
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct StoryAppProps {
    pub boot: Rc<StoryBoot>,
}

/// The page: the step's text and controls first (what a phone shows at
/// once), then the run's timeline with what to look at, then every step.
#[function_component(StoryApp)]
pub fn story_app(props: &StoryAppProps) -> Html {
    let boot = props.boot.clone();
    let state = use_reducer(move || first_state(&boot));
    let dispatch = {
        let dispatcher = state.dispatcher();
        Callback::from(move |action: StoryAction| dispatcher.dispatch(action))
    };
    let last = state.steps.len().saturating_sub(1);
    effects::use_keys(dispatch.clone(), last);
    effects::use_focus_kept(state.current, last);
    use_narrow_screen(dispatch.clone(), StoryAction::Narrow);
    effects::use_autoplay(&state);
    effects::use_lab_href(&state);
    effects::use_step_in_address(state.step().map(|step| step.id.clone()).unwrap_or_default());
    effects::use_step_from_address(dispatch.clone(), state.steps.iter().map(|step| step.id.clone()).collect());
    let on_seek = dispatch.reform(StoryAction::Seek);
    let notice =
        state.problem.as_ref().map(|problem| html! { <p class="message error" role="alert">{ problem.clone() }</p> });
    let Some(step) = state.step() else {
        return html! { <main class="story-page">{ for notice }</main> };
    };
    let href = state.lab_href.as_ref().filter(|(index, _)| *index == state.current).map(|(_, href)| href.clone());
    // An embedded story offers no embed code; the page's own does, for the step on screen.
    let on_copy_embed = (!state.embed).then(|| {
        let (index, id, title, dispatch) = (state.current, step.id.clone(), state.title.clone(), dispatch.clone());
        Callback::from(move |_: MouseEvent| {
            effects::copy_embed_code(index, &id, &format!("locklab: {title}"), dispatch.clone())
        })
    });
    let copied = state.copied.as_ref().filter(|(index, _)| *index == state.current).map(|(_, refused)| refused.clone());
    html! {
        <div class={classes!("story-page", state.embed.then_some("embed"))} data-ready="true" data-step={step.id.clone()}
            data-strategy={step.run.strategy.name()}
            data-playing={state.playing.to_string()} data-cursor-ms={state.cursor_ms.to_string()}>
            if !state.embed { { top_bar(&state.title) } }
            { for notice }
            <main id="main" class="story-main">
                <StepCard step={step.clone()} index={state.current} count={state.steps.len()}
                    chapters={state.chapters} playing={state.playing} lab_href={href}
                    on_copy_embed={on_copy_embed} copied={copied} dispatch={dispatch.clone()} />
                <StoryFigure step={step.clone()} cursor_ms={state.cursor_ms} narrow={state.narrow} {on_seek} />
                <StepList steps={state.steps.clone()} current={state.current} dispatch={dispatch} />
            </main>
        </div>
    }
}

/// The page's first state: the story the address names, or the post's
/// night with a notice saying the named one does not exist.
fn first_state(boot: &StoryBoot) -> StoryState {
    let (story, notice) = match locklab_engine::story::find(&boot.story) {
        Some(story) => (Some(story), None),
        None => (
            locklab_engine::story::find(effects::DEFAULT_STORY),
            Some(format!("There is no story named `{}`; here is the post's night instead.", boot.story)),
        ),
    };
    let mut state = match story {
        Some(story) => StoryState::new(&story, boot.step.as_deref(), boot.autoplay, boot.embed, boot.narrow),
        None => StoryState::failed("This build of locklab has no stories.".to_owned(), boot.embed, boot.narrow),
    };
    if state.problem.is_none() {
        state.problem = notice;
    }
    state
}

/// The page's header: the skip link, the brand with the story's title, and the other pages.
fn top_bar(title: &str) -> Html {
    html! {
        <>
            <a class="skip-link" href="#story-text">{"Skip to the story"}</a>
            <header class="topbar story-top">
                <div class="brand">
                    <p class="site-name"><a href="index.html">{"locklab"}</a></p>
                    <h1>{ title.to_owned() }</h1>
                </div>
                <nav class="pages" aria-label="Other pages">
                    <a href="index.html">{"Lab"}</a>
                    <a href="quiz.html">{"Quiz"}</a>
                </nav>
            </header>
        </>
    }
}

#[derive(Properties, PartialEq, Debug)]
pub struct StepCardProps {
    pub step: Shown,
    pub index: usize,
    pub count: usize,
    pub chapters: usize,
    pub playing: bool,
    pub lab_href: Option<AttrValue>,
    /// "Copy embed code" (not in an embedded story).
    pub on_copy_embed: Option<Callback<MouseEvent>>,
    /// This step's embed code was copied (`None`) or, refused, is shown (`Some`).
    pub copied: Option<Option<String>>,
    pub dispatch: Callback<StoryAction>,
}

/// The step: its chapter, its text, its way on, and the controls.
#[function_component(StepCard)]
pub fn step_card(props: &StepCardProps) -> Html {
    let step = &props.step;
    let emit = |action: StoryAction| {
        let dispatch = props.dispatch.clone();
        Callback::from(move |_: MouseEvent| dispatch.emit(action.clone()))
    };
    let first = props.index == 0;
    let last = props.index + 1 == props.count;
    let play_label = if props.playing { "❚❚ Pause" } else { "▶ Play" };
    html! {
        <section class="panel step-card" aria-labelledby="step-chapter">
            <p class="step-chapter" id="step-chapter">
                { format!("Chapter {} of {} · {}", step.chapter_number, props.chapters, step.chapter) }
            </p>
            <p class="step-text" id="story-text" tabindex="-1" aria-live="polite">{ step.text.clone() }</p>
            if !step.links.is_empty() {
                <p class="step-links">
                    { for step.links.iter().map(|(text, page)| html! {
                        <a class="button" href={page.clone()}>{ text.clone() }</a>
                    }) }
                </p>
            }
            <div class="story-controls">
                <button id="story-back" onclick={emit(StoryAction::Back)} disabled={first}>{"← Back"}</button>
                <button id="story-play" onclick={emit(StoryAction::Toggle)} aria-pressed={props.playing.to_string()}>
                    { play_label }
                </button>
                <button id="story-next" onclick={emit(StoryAction::Next)} disabled={last}>{"Next →"}</button>
                <span class="step-count">{ format!("Step {} of {}", props.index + 1, props.count) }</span>
                if let Some(href) = &props.lab_href {
                    <a class="button open-lab" id="open-in-lab" href={href.clone()}>{"Open this moment in the lab"}</a>
                } else {
                    <span class="hint">{"Making the lab link…"}</span>
                }
                if let Some(on_copy) = &props.on_copy_embed {
                    <button id="copy-story-embed" onclick={on_copy.clone()}
                        title="Copy an <iframe> snippet that shows this step inside a post">{"Copy embed code"}</button>
                }
            </div>
            <p class="hint copied-note" role="status">
                { match &props.copied {
                    Some(None) => "Copied the embed code of this step: paste it into your post's HTML.".to_owned(),
                    Some(Some(snippet)) => format!("The browser would not let the page copy; here is the embed code: {snippet}"),
                    None => String::new(),
                } }
            </p>
            <p class="hint keys-hint">{"Keys: → next, ← back, space plays or pauses."}</p>
        </section>
    }
}

#[derive(Properties, PartialEq, Debug)]
pub struct StoryFigureProps {
    pub step: Shown,
    pub cursor_ms: u64,
    pub narrow: bool,
    /// The timeline's seek, as the story's action.
    pub on_seek: Callback<u64>,
}

/// The step's run on the lab's timeline, with what to look at outlined.
#[function_component(StoryFigure)]
pub fn story_figure(props: &StoryFigureProps) -> Html {
    let step = &props.step;
    let run = &step.run;
    let at_ms = i64::try_from(step.found.at_ms).unwrap_or(i64::MAX);
    let caption = format!(
        "{} under {}: the moment is {} ({}).",
        run.scenario.name,
        strategy_label_in(&run.scenario, run.strategy),
        format::wall_clock(&run.scenario.clock_origin, at_ms),
        format::t_label(step.found.at_ms)
    );
    html! {
        <figure class="panel story-figure" aria-labelledby="story-caption">
            <figcaption id="story-caption">{ caption }</figcaption>
            <RunCounts run={run.clone()} />
            if let Some(event) = step.found.event.and_then(|index| run.event(index)) {
                <p class={classes!("wire-line", step.look_at.contains(&LookAt::Wire).then_some("highlight-text"))}
                    data-look-at={step.look_at.contains(&LookAt::Wire).then_some("wire")}>
                    <span class="wire-label">{"On the wire: "}</span>
                    <code>{ format!("{}  {event}", format::t_label(event.at_ms)) }</code>
                </p>
            }
            <div class="story-timeline">
                <Timeline run={run.clone()} cursor_ms={props.cursor_ms} on_seek={props.on_seek.clone()}
                    narrow={props.narrow} label={AttrValue::from("Time cursor of the story's run")} />
                <Highlights step={step.clone()} narrow={props.narrow} />
            </div>
        </figure>
    }
}

#[derive(Properties, PartialEq, Debug)]
pub struct RunCountsProps {
    pub run: crate::ui::run::RunRef,
}

/// The run's verdict and the counts a chapter's point rests on: what the
/// timeline cannot show at a glance (other services' failed queries, the
/// duplicated side effects).
#[function_component(RunCounts)]
pub fn run_counts(props: &RunCountsProps) -> Html {
    let report = &props.run.report;
    let metrics = &report.metrics;
    let safety = match report.safety {
        locklab_engine::scenario::Safety::Safe => "safe",
        locklab_engine::scenario::Safety::AtRisk => "at risk",
        locklab_engine::scenario::Safety::Unsafe => "unsafe",
    };
    let liveness = match report.liveness {
        locklab_engine::scenario::Liveness::Ok => "every report on time",
        locklab_engine::scenario::Liveness::Late => "a report late",
        locklab_engine::scenario::Liveness::Missed => "a report missed",
        locklab_engine::scenario::Liveness::Behind => "falling behind",
    };
    let efficiency = match report.efficiency {
        locklab_engine::scenario::Efficiency::Ok => "no work wasted",
        locklab_engine::scenario::Efficiency::Wasteful => "wasteful",
    };
    let counts = [
        (metrics.stale_writes_accepted, "stale write accepted", "stale writes accepted"),
        (metrics.stale_writes_rejected, "stale write refused", "stale writes refused"),
        (metrics.wasted_runs, "run no fault forced", "runs no fault forced"),
        (metrics.duplicate_side_effects, "duplicate upload or post", "duplicate uploads and posts"),
        (metrics.queries_held_behind_lock, "query held up by the row lock", "queries held up by the row lock"),
    ];
    html! {
        <p class="run-counts" data-safety={report.safety.name()} data-liveness={report.liveness.name()}
            data-efficiency={report.efficiency.name()}>
            <strong>{ format!("The whole run: {safety}, {liveness}, {efficiency}") }</strong>
            { for counts.iter().map(|(count, one, many)| html! {
                <span>{ format!(" · {count} {}", if *count == 1 { one } else { many }) }</span>
            }) }
        </p>
    }
}

#[derive(Properties, PartialEq, Debug)]
pub struct HighlightsProps {
    pub step: Shown,
    pub narrow: bool,
}

/// The step's look-ats, outlined over the timeline in its own geometry.
#[function_component(Highlights)]
pub fn highlights(props: &HighlightsProps) -> Html {
    let step = &props.step;
    let pen = Highlighter { timeline: &step.run.timeline, geometry: geometry(&step.run.timeline, false, props.narrow) };
    let shapes: Vec<Html> = step.look_at.iter().flat_map(|look_at| pen.shapes(step, *look_at)).collect();
    html! {
        <svg class="highlight-layer" viewBox={format!("0 0 {} {}", Num(pen.geometry.width), Num(pen.geometry.height))}
            aria-hidden="true">
            { for shapes }
        </svg>
    }
}

/// Draws a step's highlights over its timeline, in the timeline's geometry.
struct Highlighter<'a> {
    timeline: &'a locklab_engine::view::Timeline,
    geometry: locklab_engine::svg::Geometry,
}

impl Highlighter<'_> {
    /// Where a band of the timeline sits: its top and its height.
    fn row(&self, which: Band) -> Option<(f64, f64)> {
        band(self.timeline, false, which)
    }

    fn outline(name: String, x: f64, y: f64, width: f64, height: f64) -> Html {
        html! {
            <rect class="highlight" data-look-at={name} x={Num(x).to_string()} y={Num(y + 1.0).to_string()}
                width={Num(width.max(4.0)).to_string()} height={Num((height - 2.0).max(4.0)).to_string()} rx="4" />
        }
    }

    fn ring(name: String, x: f64, (top, height): (f64, f64)) -> Html {
        html! {
            <circle class="highlight ring" data-look-at={name} cx={Num(x).to_string()}
                cy={Num(top + height - 9.0).to_string()} r="10" />
        }
    }

    fn whole_row(&self, name: String, which: Band) -> Vec<Html> {
        let width = self.geometry.width - 4.0;
        self.row(which).map(|(top, height)| Self::outline(name, 2.0, top, width, height)).into_iter().collect()
    }

    /// The shapes one look-at of the step draws.
    fn shapes(&self, step: &Shown, look_at: LookAt) -> Vec<Html> {
        let name = look_at_name(look_at);
        match look_at {
            LookAt::Lane(instance) => self.whole_row(name, Band::Instance(instance)),
            LookAt::Resource(resource) => self.whole_row(name, Band::Holder(resource)),
            LookAt::Storage => self.whole_row(name, Band::Storage),
            LookAt::Rows => self.whole_row(name, Band::Rows),
            LookAt::Slack => self.whole_row(name, Band::Slack),
            LookAt::Faults => self.whole_row(name, Band::Faults),
            LookAt::Overlap => self.overlaps(&name),
            LookAt::Mark => self.mark(step, name),
            // The moment's line of the log is outlined under the caption, not on the drawing.
            LookAt::Wire => Vec::new(),
            LookAt::Token(token) => self.token(&name, token),
        }
    }

    /// Every overlap, across the instances' lanes.
    fn overlaps(&self, name: &str) -> Vec<Html> {
        let lanes: Vec<(f64, f64)> = (0..self.timeline.instances)
            .filter_map(|index| self.row(Band::Instance(locklab_engine::ids::InstanceId(index))))
            .collect();
        let (Some(first), Some(last)) = (lanes.first(), lanes.last()) else { return Vec::new() };
        let (top, height) = (first.0, last.0 + last.1 - first.0);
        let x_of = |at_ms| self.geometry.x(at_ms);
        let outline = |span: &locklab_engine::view::Span| {
            Self::outline(name.to_owned(), x_of(span.from_ms), top, x_of(span.to_ms) - x_of(span.from_ms), height)
        };
        self.timeline.overlaps.iter().map(outline).collect()
    }

    /// A ring on the mark of the event the step found.
    fn mark(&self, step: &Shown, name: String) -> Vec<Html> {
        let Some(event) = step.found.event else { return Vec::new() };
        let timeline = self.timeline;
        let x = self.geometry.x(step.found.at_ms);
        let mark = timeline
            .writes
            .iter()
            .find(|write| write.event == event)
            .map(write_band)
            .or_else(|| timeline.posts.iter().any(|post| post.event == event).then_some(Band::Slack))
            .or_else(|| timeline.faults.iter().any(|fault| fault.event == event).then_some(Band::Faults));
        mark.and_then(|which| self.row(which)).map(|place| Self::ring(name, x, place)).into_iter().collect()
    }

    /// Every write that carried `token`, and every belief that held it.
    fn token(&self, name: &str, token: locklab_engine::ids::Token) -> Vec<Html> {
        let timeline = self.timeline;
        let writes = timeline.writes.iter().filter(|write| write.token == Some(token)).filter_map(|write| {
            self.row(write_band(write)).map(|place| Self::ring(name.to_owned(), self.geometry.x(write.at_ms), place))
        });
        let beliefs = timeline.beliefs.iter().filter(|span| span.token == Some(token)).filter_map(|span| {
            let (top, height) = self.row(Band::Instance(span.instance))?;
            let x = self.geometry.x(span.span.from_ms);
            Some(Self::outline(name.to_owned(), x, top, self.geometry.x(span.span.to_ms) - x, height))
        });
        writes.chain(beliefs).collect()
    }
}

/// A look-at as the story file writes it, for tests and styles.
fn look_at_name(look_at: LookAt) -> String {
    match look_at {
        LookAt::Lane(instance) => format!("lane:{instance}"),
        LookAt::Resource(Resource::RowLock) => "resource:row_lock".to_owned(),
        LookAt::Resource(Resource::Lease) => "resource:lease".to_owned(),
        LookAt::Resource(Resource::Redis(party)) => format!("resource:{party}"),
        LookAt::Storage => "storage".to_owned(),
        LookAt::Rows => "rows".to_owned(),
        LookAt::Slack => "slack".to_owned(),
        LookAt::Faults => "faults".to_owned(),
        LookAt::Overlap => "overlap".to_owned(),
        LookAt::Mark => "mark".to_owned(),
        LookAt::Token(token) => format!("token:{token}"),
        LookAt::Wire => "wire".to_owned(),
    }
}

#[derive(Properties, PartialEq, Debug)]
pub struct StepListProps {
    pub steps: Rc<Vec<Shown>>,
    pub current: usize,
    pub dispatch: Callback<StoryAction>,
}

/// Every step, by chapter, to jump to.
#[function_component(StepList)]
pub fn step_list(props: &StepListProps) -> Html {
    let mut chapters: Vec<(usize, String, Vec<usize>)> = Vec::new();
    for (index, step) in props.steps.iter().enumerate() {
        match chapters.last_mut() {
            Some((number, _, steps)) if *number == step.chapter_number => steps.push(index),
            _ => chapters.push((step.chapter_number, step.chapter.clone(), vec![index])),
        }
    }
    html! {
        <nav class="panel step-list" aria-label="The story's steps">
            <h2>{"All steps"}</h2>
            <ol class="chapters">
                { for chapters.into_iter().map(|(_, title, indices)| html! {
                    <li>
                        <span class="chapter-name">{ title }</span>
                        <ol class="steps">
                            { for indices.into_iter().map(|index| {
                                let step = &props.steps[index];
                                let dispatch = props.dispatch.clone();
                                let current = index == props.current;
                                html! {
                                    <li>
                                        <button class={classes!("step-link", current.then_some("current"))}
                                            aria-current={current.then_some("step")}
                                            onclick={Callback::from(move |_: MouseEvent| dispatch.emit(StoryAction::Go(index)))}>
                                            { first_words(&step.text) }
                                        </button>
                                    </li>
                                }
                            }) }
                        </ol>
                    </li>
                }) }
            </ol>
        </nav>
    }
}

/// The start of a step's text, for the list.
fn first_words(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().take(9).collect();
    let more = text.split_whitespace().count() > words.len();
    format!("{}{}", words.join(" "), if more { " …" } else { "" })
}
