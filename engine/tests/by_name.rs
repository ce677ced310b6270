//! The format's word-valued enums read back what serde writes for them, by
//! the names their shared reader lists, and refuse what the derive refused.

use locklab_engine::link::View;
use locklab_engine::recipe::{DbWait, LockStrength, Objects, OnLost, Release, ReportRow, Retry, TokenSource, Value};
use locklab_engine::scenario::{Efficiency, Liveness, NaiveRelease, Output, Safety};

/// Every variant reads back from what serde writes for it, by its listed name.
fn holds<T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(pairs: Vec<(T, &str)>) {
    for (variant, name) in pairs {
        let written = serde_json::to_string(&variant).expect("a unit variant serializes");
        assert_eq!(written, format!("\"{name}\""), "{variant:?}");
        assert_eq!(serde_json::from_str::<T>(&written).expect("it reads back"), variant);
        let as_map = format!("{{\"{name}\": null}}");
        assert_eq!(serde_json::from_str::<T>(&as_map).expect("the map form reads too"), variant);
    }
}

#[test]
fn names_are_what_serde_writes() {
    holds(Value::by_name());
    holds(LockStrength::by_name());
    holds(DbWait::by_name());
    holds(TokenSource::by_name());
    holds(ReportRow::by_name());
    holds(Objects::by_name());
    holds(OnLost::by_name());
    holds(Release::by_name());
    holds(Retry::by_name());
    holds(Safety::by_name());
    holds(Liveness::by_name());
    holds(Efficiency::by_name());
    holds(NaiveRelease::by_name());
    holds(View::by_name());
    holds(Output::by_name());
}

#[test]
fn errors_are_the_derives() {
    let error = serde_json::from_str::<DbWait>("\"wait\"").expect_err("no such variant").to_string();
    assert_eq!(error, "unknown variant `wait`, expected one of `block`, `nowait`, `skip_locked` at line 1 column 6");
    let error = serde_json::from_str::<Retry>("{\"fixed\": 1}").expect_err("a unit variant").to_string();
    assert!(error.starts_with("invalid type: integer `1`, expected unit"), "{error}");
}
