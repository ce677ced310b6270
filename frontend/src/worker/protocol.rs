//! What the pages and the worker say to each other through gloo-worker: the
//! requests, the explorer's inputs, the answers, and their encoding as JSON
//! text.

use gloo_worker::Codec;
use locklab_engine::explore::{ExploreOptions, Goal};
use locklab_engine::{Scenario, StrategyId};
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

/// gloo-worker's messages as JSON strings.
#[derive(Debug)]
pub struct JsonCodec;

impl Codec for JsonCodec {
    fn encode<I: Serialize>(input: I) -> JsValue {
        JsValue::from_str(&serde_json::to_string(&input).unwrap_or_default())
    }

    fn decode<O: for<'de> Deserialize<'de>>(input: JsValue) -> O {
        // Both ends are this crate's own code: a message that does not decode
        // is a bug, and the panic panel shows it.
        let text = input.as_string().unwrap_or_default();
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("a worker message did not decode: {error}"))
    }
}

/// What the page asks of the worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Request {
    /// Starts a search (a running one is replaced).
    Explore(ExploreRequest),
    /// Stops the running search.
    Cancel,
    /// Runs the seed's story under `strategy` for seeds `0..runs` and times it (after a warm-up).
    Bench { strategy: StrategyId, runs: u32 },
}

/// The explorer's inputs as the page collects them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExploreRequest {
    pub strategy: StrategyId,
    /// `unsafe`, `late`, `wasteful`, `stale_write` or `two_holders`.
    pub goal: String,
    pub kinds: Vec<String>,
    pub max_faults: u8,
    pub window_ms: (u64, u64),
    pub runs: u32,
    pub seed: u64,
    /// The world searched in, a scenario whose own faults are set aside (a
    /// lab's scenario, brought by a share link); absent, the seed's world over
    /// one cron period.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "scenario_document")]
    pub world: Option<Box<Scenario>>,
}

/// A scenario inside a worker message travels as its own document text and
/// is read back by `Scenario::from_json`: validated, and the one scenario
/// deserializer the worker links anyway (derived into the message's own, it
/// cost the worker 15 KB of gzipped wasm).
mod scenario_document {
    use locklab_engine::Scenario;
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(world: &Option<Box<Scenario>>, serializer: S) -> Result<S::Ok, S::Error> {
        match world {
            Some(world) => serializer.serialize_some(&world.to_json()),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Box<Scenario>>, D::Error> {
        let text: Option<String> = Option::deserialize(deserializer)?;
        text.map(|text| Scenario::from_json(&text).map(Box::new).map_err(D::Error::custom)).transpose()
    }
}

impl ExploreRequest {
    /// The engine's options, or what is wrong with the request.
    pub fn options(&self) -> Result<ExploreOptions, String> {
        let goal = Goal::parse(&self.goal).ok_or_else(|| format!("unknown goal `{}`", self.goal))?;
        let options = ExploreOptions {
            kinds: self.kinds.clone(),
            max_faults: self.max_faults,
            window_ms: self.window_ms,
            runs: self.runs,
            seed: self.seed,
            ..ExploreOptions::for_world(self.strategy, goal, self.world.as_deref())
        };
        options.validate()?;
        Ok(options)
    }
}

/// What the worker answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Response {
    /// A search's progress after a slice.
    Progress {
        runs: u32,
        budget: u32,
        elapsed_ms: f64,
    },
    /// A search ended: the counterexample as a scenario document, if one was found.
    Explored {
        runs: u32,
        elapsed_ms: f64,
        scenario: Option<String>,
        /// When the counterexample met the goal: where the lab opens it.
        met_at_ms: Option<u64>,
        cancelled: bool,
    },
    Bench {
        strategy: StrategyId,
        runs: u32,
        events: u64,
        elapsed_ms: f64,
    },
    /// A request that could not be served, and why.
    Refused(String),
}
