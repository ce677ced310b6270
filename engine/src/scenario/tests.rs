//! The scenario document's tests: reading, refusing, round trips.

use super::error::*;
use super::faults::*;
use super::schema::*;
use super::strategies::*;
use super::validate::*;
use super::world::*;
use crate::ids::{Period, ReportOf};
use serde::{Deserialize, Deserializer};
use std::fmt;

#[test]
fn the_kind_list_names_every_fault_and_each_kind_has_a_template() {
    let kinds: Vec<String> = FAULT_VARIANTS.iter().map(|variant| snake_case(variant)).collect();
    assert_eq!(FAULT_KINDS.to_vec(), kinds, "FAULT_KINDS names the faults! list's kinds, in its order");
    for kind in FAULT_KINDS {
        let template = Fault::template(kind, 7).unwrap_or_else(|| panic!("`{kind}` has a template"));
        assert_eq!((template.kind_name(), template.at_ms()), (kind, 7));
        let scenario = Scenario { faults: vec![template], ..Scenario::default() };
        assert!(Scenario::from_json(&scenario.to_json()).is_ok(), "`{kind}`'s template is a valid fault");
    }
    assert_eq!(Fault::template("no_such_kind", 0), None);
}

#[test]
fn a_struct_given_as_an_array_is_refused_by_name() {
    let cases = [
        (r#"{"format": "locklab/2", "world": [3, 300000]}"#, "world"),
        (r#"["locklab/2"]"#, "the document"),
        (r#"{"format": "locklab/2", "strategies": {"naive": [30000]}}"#, "strategies.naive"),
        (r#"{"format": "locklab/2", "expect": {"naive": ["safe", "ok"]}}"#, "expect.naive"),
    ];
    for (text, path) in cases {
        let error = Scenario::from_json(text).expect_err(text);
        assert_eq!(error.path, path, "{text}: {error}");
        assert!(error.message.contains("is an array"), "{error}");
    }
    let lists = r#"{"format": "locklab/2", "world": {"network_latency_ms": [1, 2]},
        "faults": [{"at_ms": 1, "kind": "partition", "between": ["a", "redis"], "duration_ms": 5}]}"#;
    assert!(Scenario::from_json(lists).is_ok(), "list fields stay lists");
}

#[test]
fn the_minimal_document_is_the_seed_world() {
    let scenario = Scenario::from_json(r#"{"format": "locklab/1"}"#).unwrap();
    assert_eq!(scenario.world, World::default());
    assert_eq!(scenario.duration_ms(), 900_000);
    assert_eq!(scenario.strategy_settings().len(), 6);
}

#[test]
fn a_title_names_the_settings_that_differ_from_the_seeds() {
    let title = |json: &str, id: StrategyId| Scenario::from_json(json).unwrap().settings_for(id).title();
    let seed = r#"{"format": "locklab/1"}"#;
    assert_eq!(title(seed, StrategyId::Naive), StrategyId::Naive.title());
    assert_eq!(title(seed, StrategyId::Redlock), StrategyId::Redlock.title());
    let sized = r#"{"format": "locklab/1", "strategies": {"naive": {"ttl_ms": 100000}}}"#;
    assert_eq!(title(sized, StrategyId::Naive), "SET NX EX 100");
    let overrun = r#"{"format": "locklab/1", "strategies": {"naive": {"ttl_ms": 1500, "release": "del"}}}"#;
    assert_eq!(title(overrun, StrategyId::Naive), "SET NX PX 1500, released with a plain DEL");
    let three = r#"{"format": "locklab/1", "strategies": {"redlock": {"nodes": 3}}}"#;
    assert_eq!(title(three, StrategyId::Redlock), "Redlock over 3 Redis nodes");
    assert_eq!(title(three, StrategyId::Fencing), StrategyId::Fencing.title());
}

#[test]
fn a_document_keeps_the_output_of_its_version() {
    let v2 = Scenario::from_json(r#"{"format": "locklab/2"}"#).unwrap();
    assert_eq!(v2.output(), Output::Daily);
    let v1 = Scenario::from_json(r#"{"format": "locklab/1"}"#).unwrap();
    assert_eq!(v1.output(), Output::PerPeriod, "version 1 gave every period its own report");
    let chosen = Scenario::from_json(r#"{"format": "locklab/1", "world": {"output": "daily"}}"#).unwrap();
    assert_eq!(chosen.output(), Output::Daily, "a document may say which it means");
    assert_eq!(Scenario::from_json(&v1.to_json()).unwrap().output(), Output::PerPeriod, "and keeps it");
    assert_eq!(v2.report_of(Period(2)), v2.report_of(Period(0)), "every period rewrites the day's report");
    assert_eq!(v1.report_of(Period(2)), ReportOf::Period(Period(2)));
    // 02:00 plus 22 hours of five-minute periods crosses midnight: the next day's report.
    assert_eq!(v2.report_of(Period(263)), ReportOf::Day(0));
    assert_eq!(v2.report_of(Period(264)), ReportOf::Day(1));
}

#[test]
fn a_strategy_alone_with_defaults() {
    let scenario = Scenario::from_json(r#"{"format": "locklab/1", "strategies": {"fencing": {}}}"#).unwrap();
    assert_eq!(scenario.strategy_settings(), vec![StrategySettings::Fencing(LeaseSettings::default())]);
}

#[test]
fn unknown_fields_and_bad_values_name_the_field() {
    let cases = [
        (r#"{"format": "locklab/1", "wrold": {}}"#, "wrold: unknown field `wrold`"),
        (r#"{"format": "locklab/1", "world": {"instance": 3}}"#, "world.instance: unknown field `instance`"),
        (r#"{"format": "locklab/3"}"#, "format: must be"),
        (r#"{"format": "locklab/2", "clock_origin": "banana"}"#, "clock_origin: must be a time of day"),
        (r#"{"format": "locklab/2", "clock_origin": "99:00:00"}"#, "clock_origin: must be a time of day"),
        (r#"{"format": "locklab/2", "world": {"output": "weekly"}}"#, "world.output: unknown variant"),
        (r#"{"format": "locklab/2", "strategies": {}}"#, "strategies: names no strategy"),
        (
            r#"{"format": "locklab/2", "world": {"network_latency_ms": [1, 2, 3]}}"#,
            "network_latency_ms must be two numbers of milliseconds, [low, high]; found 3 numbers",
        ),
        (
            r#"{"format": "locklab/2", "faults": [{"at_ms": 5, "kind": "gc_pause", "target": "a", "duration_ms": 1, "duration_ms": 2}]}"#,
            "faults[0].duration_ms: is given twice",
        ),
        (r#"{"format": "locklab/2", "name": "\u001b[31mred"}"#, "name: holds the control character \\u{1b}"),
        (r#"{"format": "locklab/2", "description": "a\u0007"}"#, "description: holds the control character \\u{7}"),
        // A mark of the parser's own, written into the document, does not move the path.
        (r#"{"format": "locklab/2", "w\u001forld": 1}"#, "w\\u{1f}orld: unknown field `w\\u{1f}orld`"),
        (
            r#"{"format": "locklab/2", "faults": [{"at_ms": 5, "kind": "gc_pause", "target": "a", "x\u001fy": 1}]}"#,
            "faults[0].x\\u{1f}y: unknown field",
        ),
        (r#"{"format": "locklab/1", "world": {"instances": 9}}"#, "world.instances: 9 is out of range"),
        (
            r#"{"format": "locklab/1", "faults": [{"at_ms": -5, "kind": "gc_pause", "target": "a", "duration_ms": 1}]}"#,
            "faults[0].at_ms",
        ),
        (
            r#"{"format": "locklab/1", "faults": [{"at_ms": 5, "kind": "gc_pause", "target": "a", "duration_ms": 1},
                {"at_ms": 5, "kind": "gc_pause", "target": "a", "duration_ms": "long"}]}"#,
            "faults[1].duration_ms: invalid type",
        ),
        (
            r#"{"format": "locklab/1", "faults": [{"at_ms": 5, "kind": "gc_pause", "target": "a"}  ]}"#,
            "faults[0]: missing field `duration_ms`",
        ),
        (r#"{"format": "locklab/1", "faults": [{"at_ms": 5}]}"#, "faults[0]: missing field `kind`"),
        (
            r#"{"format": "locklab/1", "faults": [{"at_ms": 5, "kind": "gc_pause", "target": "a", "durations_ms": 1}]}"#,
            "faults[0].durations_ms: unknown field `durations_ms`",
        ),
        (
            r#"{"format": "locklab/1", "faults": [{"at_ms": 5, "kind": "partition", "between": ["a"], "duration_ms": 1}]}"#,
            "faults[0].between: invalid length 1",
        ),
        (
            r#"{"format": "locklab/1", "faults": [{"at_ms": 5, "kind": "gc_paws", "target": "a", "duration_ms": 1}]}"#,
            "unknown variant `gc_paws`",
        ),
        (
            r#"{"format": "locklab/1", "faults": [{"at_ms": 5, "kind": "gc_pause", "target": "z", "duration_ms": 1}]}"#,
            "unknown party `z`",
        ),
        (
            r#"{"format": "locklab/1", "faults": [{"at_ms": 5, "kind": "gc_pause", "target": "d", "duration_ms": 1}]}"#,
            "faults[0].target: instance `d` does not exist",
        ),
        (
            r#"{"format": "locklab/1", "faults": [{"at_ms": 5000000, "kind": "gc_pause", "target": "a", "duration_ms": 1}]}"#,
            "faults[0].at_ms: 5000000 is not inside the run",
        ),
        (
            r#"{"format": "locklab/1", "faults": [{"at_ms": 5, "kind": "redis_restart", "target": "a", "down_ms": 1}]}"#,
            "faults[0].target: `a` cannot be the target",
        ),
        (r#"{"format": "locklab/1", "strategies": {"fencin": {}}}"#, "strategies.fencin: unknown field `fencin`"),
        (r#"{"format": "locklab/1", "duration_ms": 99999999999}"#, "duration_ms: 99999999999 is out of range"),
        ("{", "EOF"),
    ];
    for (text, expected) in cases {
        let error = Scenario::from_json(text).expect_err(text).to_string();
        assert!(error.contains(expected), "{text}\n  gave: {error}\n  wanted: {expected}");
    }
}

#[test]
fn a_byte_order_mark_is_read_past_and_long_text_refused() {
    let scenario = Scenario::from_json("\u{feff}{\"format\": \"locklab/2\", \"name\": \"from an editor\"}").unwrap();
    assert_eq!(scenario.name, "from an editor");
    let long = format!(r#"{{"format": "locklab/2", "name": "{}"}}"#, "x".repeat(MAX_NAME_CHARS + 1));
    let error = Scenario::from_json(&long).expect_err("too long").to_string();
    assert_eq!(error, format!("name: is {} characters long; at most {MAX_NAME_CHARS} are allowed", MAX_NAME_CHARS + 1));
}

#[test]
fn every_fault_field_is_listed_and_set_by_name() {
    for kind in FAULT_KINDS {
        let fault = Fault::template(kind, 1_000).expect("a template per kind");
        let fields = fault.fields();
        assert_eq!(fields.first(), Some(&("at_ms", FieldValue::Ms(1_000))), "{kind}: at_ms first");
        for (name, value) in &fields {
            assert_eq!(fault.with_field(name, *value).as_ref(), Some(&fault), "{kind}.{name} set to itself");
        }
        assert_eq!(fault.with_field("nothing", FieldValue::Ms(1)), None, "{kind} has no such field");
    }
    let pause = Fault::template("gc_pause", 0).expect("a kind");
    let longer = pause.with_field("duration_ms", FieldValue::Ms(5_000)).expect("a duration");
    assert_eq!(longer.fields()[2], ("duration_ms", FieldValue::Ms(5_000)));
    assert_eq!(pause.with_field("duration_ms", FieldValue::Flag(true)), None, "a flag is not a duration");
}

#[test]
fn the_contract_example_loads_and_round_trips() {
    let text = include_str!("../../tests/fixtures/contract-example.json");
    let scenario = Scenario::from_json(text).unwrap();
    assert_eq!(scenario.seed, 7);
    assert_eq!(scenario.strategy_settings().len(), 6);
    let again = Scenario::from_json(&scenario.to_json()).unwrap();
    assert_eq!(scenario, again);
}

/// A fault read as faults were read before [`RawValue`]: its object as a
/// JSON map, read by serde's derive under its kind.
#[derive(Debug)]
struct DerivedFault(Fault);

impl<'de> Deserialize<'de> for DerivedFault {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = serde_json::Map<String, serde_json::Value>;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a fault, as an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                use serde::de::Error;
                let mut fields = serde_json::Map::new();
                while let Some((key, value)) = map.next_entry::<String, serde_json::Value>()? {
                    if fields.contains_key(&key) {
                        return Err(A::Error::custom(format!(".{}{FIELD_MARK}is given twice", unmarked(&key))));
                    }
                    fields.insert(key, value);
                }
                Ok(fields)
            }
        }
        use serde::de::Error;
        let mut fields = deserializer.deserialize_map(Visitor)?;
        let kind = match fields.remove("kind") {
            Some(serde_json::Value::String(kind)) => kind,
            Some(other) => {
                return Err(D::Error::custom(format!(".kind{FIELD_MARK}must be a string, found {other}")));
            }
            None => return Err(D::Error::custom(format!("{FIELD_MARK}missing field `kind`"))),
        };
        let by_kind = serde_json::Value::Object(
            std::iter::once((kind.clone(), serde_json::Value::Object(fields.clone()))).collect(),
        );
        serde_json::from_value::<FaultByKind>(by_kind).map(|fault| DerivedFault(fault.into())).map_err(|error| {
            let field = derived_faulty_field(&kind, &fields).map(|field| format!(".{field}")).unwrap_or_default();
            D::Error::custom(format!("{field}{FIELD_MARK}{error}"))
        })
    }
}

/// The fault reader gives what serde's derive over a JSON map gave, fault
/// or error word for word (its place included), for every kind with
/// each field left out, given twice, unknown, or holding each kind of
/// JSON value, and for kinds that are no kind.
#[test]
fn faults_read_as_serde_derive_read_them() {
    let values = [
        "null",
        "true",
        "false",
        "0",
        "-0",
        "7",
        "-5",
        "1.5",
        "-2.5",
        "5.0",
        "1e30",
        "18446744073709551615",
        "9223372036854775808",
        "-9223372036854775808",
        "\"a\"",
        "\"holder\"",
        "\"redis\"",
        "\"redis-1\"",
        "\"zz\"",
        "\"d\"",
        "\"x\\u001fy\"",
        "[]",
        "[\"a\"]",
        "[\"a\", \"redis\"]",
        "[\"a\", 5]",
        "[5, \"a\"]",
        "[\"a\", \"b\", \"c\"]",
        "[\"a\", \"zz\", 1]",
        "{}",
        "{\"b\": 1, \"a\": [1.5, \"x\"], \"b\": null}",
    ];
    let mut documents = Vec::new();
    for kind in FAULT_KINDS {
        let template = Fault::template(kind, 5).expect("every kind has a template");
        let fields: Vec<(String, String)> = serde_json::to_value(&template)
            .expect("a fault is JSON")
            .as_object()
            .expect("an object")
            .iter()
            .map(|(key, value)| (key.clone(), value.to_string()))
            .collect();
        let object = |fields: &[(String, String)]| {
            let entries: Vec<String> = fields.iter().map(|(key, value)| format!("\"{key}\": {value}")).collect();
            format!("{{{}}}", entries.join(", "))
        };
        documents.push(object(&fields));
        let reversed: Vec<(String, String)> = fields.iter().rev().cloned().collect();
        documents.push(object(&reversed));
        let declared: Vec<&str> = FAULT_FIELDS[FAULT_KINDS.iter().position(|known| *known == kind).unwrap()].to_vec();
        for field in declared.iter().copied().chain(["kind"]) {
            let without: Vec<(String, String)> = fields.iter().filter(|(key, _)| key != field).cloned().collect();
            documents.push(object(&without));
            for value in values {
                let mut changed = without.clone();
                changed.push((field.to_owned(), value.to_owned()));
                documents.push(object(&changed));
                changed.insert(0, ("zzz".to_owned(), value.to_owned()));
                documents.push(object(&changed));
            }
            let mut twice = fields.clone();
            twice.push((field.to_owned(), "1".to_owned()));
            documents.push(object(&twice));
        }
        for unknown in ["aaa", "zzz", "x\\u001fy", "at_mss"] {
            let mut more = fields.clone();
            more.push((unknown.to_owned(), "1".to_owned()));
            documents.push(object(&more));
            more.push(("at_ms".to_owned(), "\"soon\"".to_owned()));
            documents.push(object(&more));
        }
    }
    documents.push("{\"kind\": \"gc_paws\", \"at_ms\": 5}".to_owned());
    documents.push("{\"kind\": \"gc_paws\", \"at_ms\": \"x\"}".to_owned());
    documents.push("{\"kind\": [\"gc_pause\"]}".to_owned());
    documents.push("{}".to_owned());
    documents.extend(
        ["[]", "5", "\"gc_pause\"", "null", "{\"kind\": \"gc_pause\", \"at_ms\": 5,}", "{\"kind\": 1e999}"]
            .map(String::from),
    );
    for document in &documents {
        let text = format!("[{document}]");
        let read = serde_json::from_str::<Vec<Fault>>(&text).map_err(|error| error.to_string());
        let derived = serde_json::from_str::<Vec<DerivedFault>>(&text)
            .map(|faults| faults.into_iter().map(|fault| fault.0).collect::<Vec<Fault>>())
            .map_err(|error| error.to_string());
        assert_eq!(read, derived, "{text}");
    }
    assert!(documents.len() > 1000, "{} documents", documents.len());
}
