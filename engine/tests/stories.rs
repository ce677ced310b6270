//! Every built-in story against the engine: each step's moment must occur in
//! its chapter's run, its claims must hold in that run's report, the claims
//! its words make must be listed, and what it points at must be drawn
//! (`Step::check`). A story that drifts from the engine fails here, naming
//! the story, the step and what is wrong.

use locklab_engine::report::analyze;
use locklab_engine::story::{Story, scenario_text};
use locklab_engine::view::Timeline;
use locklab_engine::{Scenario, builtin, simulate};

#[test]
fn every_story_step_happens_in_its_run_and_says_what_the_report_says() {
    assert!(!builtin::STORIES.is_empty(), "engine/stories/ has the post's night");
    for builtin in builtin::STORIES {
        let story = Story::parse(builtin.text).unwrap_or_else(|problem| panic!("story {}: {problem}", builtin.name));
        let mut previous = None;
        for chapter in &story.chapters {
            let text = scenario_text(&chapter.scenario).expect("Story::parse checked the scenario");
            let scenario = Scenario::from_json(text).expect("built-ins are valid");
            let log = simulate(&scenario, chapter.strategy);
            let report = analyze(&scenario, chapter.strategy, &log);
            let timeline = Timeline::build(&scenario, chapter.strategy, &log);
            for step in &chapter.steps {
                let found = step.check(&scenario, &timeline, &report).unwrap_or_else(|problem| {
                    panic!(
                        "story {}, step {} ({} under {}): {problem}",
                        story.id,
                        step.id,
                        chapter.scenario,
                        chapter.strategy.name()
                    )
                });
                // Within a chapter the story moves forward in time.
                if let Some((run, at_ms)) = previous
                    && run == (chapter.scenario.clone(), chapter.strategy)
                {
                    assert!(found.at_ms >= at_ms, "story {}, step {} goes back in time", story.id, step.id);
                }
                previous = Some(((chapter.scenario.clone(), chapter.strategy), found.at_ms));
            }
        }
    }
}

#[test]
fn a_step_whose_moment_or_claim_is_wrong_fails_the_check() {
    let story = Story::parse(builtin::STORIES[0].text).expect("the night parses");
    let chapter = &story.chapters[0];
    let scenario = Scenario::from_json(scenario_text(&chapter.scenario).unwrap_or_default()).expect("valid");
    let log = simulate(&scenario, chapter.strategy);
    let report = analyze(&scenario, chapter.strategy, &log);
    let timeline = Timeline::build(&scenario, chapter.strategy, &log);
    let mut step = chapter.steps[0].clone();
    step.moment = "write:refused".to_owned();
    assert!(step.check(&scenario, &timeline, &report).unwrap_err().contains("does not occur"));
    let mut step = chapter.steps[0].clone();
    step.text = "This night is safe.".to_owned();
    assert!(step.check(&scenario, &timeline, &report).unwrap_err().contains("lists none of"));
    step.claims = vec!["safe".to_owned()];
    assert!(step.check(&scenario, &timeline, &report).unwrap_err().contains("does not hold"));
}
