//! The built-in scenarios, shipped as files in `engine/scenarios/` and compiled
//! in, each with the outcome per strategy it is expected to produce.

/// A built-in scenario: its short name and its JSON text.
#[derive(Clone, Copy, Debug)]
pub struct Builtin {
    pub name: &'static str,
    pub text: &'static str,
}

macro_rules! builtins {
    ($($name:literal),* $(,)?) => {
        /// Every built-in, in the order people meet them.
        pub const ALL: &[Builtin] = &[
            $(Builtin { name: $name, text: include_str!(concat!("../scenarios/", $name, ".json")) },)*
        ];
    };
}

builtins![
    "two-am-saturday",
    "pause-after-check",
    "redis-failover",
    "redlock-clock-jump",
    "oom-no-restart",
    "overrun-del",
    "long-report",
    "delayed-packet",
    "calm-night",
];

/// A built-in by name.
pub fn find(name: &str) -> Option<&'static Builtin> {
    ALL.iter().find(|builtin| builtin.name == name)
}
