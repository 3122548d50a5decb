//! The parsers of kruise-schedule that read input from outside, driven with arbitrary text and with
//! structure-aware inputs: cron schedules from the field grammar (with `TZ=` prefixes, `@every` durations and
//! `spec.timeZone`), then edited; IntOrString percentages with edge numbers for the three scalers and the
//! partition; label selectors as printed for the scale subresource; deletion costs; reserved ordinals; image
//! references; pull-secret credentials; and the resource of a ResourceDistribution. Nothing panics, errors name the value, and what parses behaves
//! (fire times strictly increase, scaled values stay in range, normalising again changes nothing).
//! `KRUISE_FUZZ_CASES` sets the number of cases (see `support::fuzz_cases`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)] // test code

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1alpha1::ResourceDistribution;
use kruise_schedule::cron::{Schedule, Zone};
use kruise_schedule::image_pull::{node_pulls, reference};
use kruise_schedule::int_or_percent::{
    Rounding, ScaleError, kruise_scaled, legacy_scaled, safe_scaled,
};
use kruise_schedule::partition::partition_replicas;
use kruise_schedule::resource_distribution::copy::copy_object;
use kruise_schedule::resource_distribution::hash::resource_hash;
use kruise_schedule::resource_distribution::validation::validate;
use kruise_schedule::selector_string::selector_string;
use kruise_schedule::sort::deletion::parse_deletion_cost;
use kruise_schedule::statefulset::ordinals::ReservedOrdinals;
use proptest::prelude::*;
use proptest::sample::{Index, select};

use crate::support::cron as cron_support;
use kruise_fuzz_inputs::fuzz_cases;
use kruise_fuzz_inputs::json_values::{json_value, replaced};
use kruise_fuzz_inputs::text_edits::edited;

/// Go durations for `@every`: terms from the grammar with edge numbers and units, valid or not.
fn go_duration() -> impl Strategy<Value = String> {
    let term = (
        select(
            &[
                "0",
                "1",
                "1.5",
                ".5",
                "1.",
                ".",
                "9223372036854775807",
                "9223372036854775808",
                "2562047",
            ][..],
        ),
        select(&["ns", "us", "µs", "μs", "ms", "s", "m", "h", "", "d", "H"][..]),
    )
        .prop_map(|(number, unit)| format!("{number}{unit}"));
    (
        select(&["", "-", "+"][..]),
        prop::collection::vec(term, 1..4),
    )
        .prop_map(|(sign, terms)| format!("{sign}{}", terms.concat()))
}

/// Schedules: valid five-field ones, descriptors, `@every`, with or without a zone prefix, then edited; and
/// arbitrary text.
fn schedule_text() -> impl Strategy<Value = String> {
    let valid = prop_oneof![
        4 => cron_support::dense_schedule(),
        2 => cron_support::schedule(),
        1 => select(&["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"][..])
            .prop_map(str::to_owned),
        2 => go_duration().prop_map(|duration| format!("@every {duration}")),
    ];
    let prefixed = (
        select(
            &[
                "",
                "",
                "TZ=UTC ",
                "CRON_TZ=Asia/Tokyo ",
                "TZ=America/New_York ",
                "TZ=Local ",
                "TZ=Mars/Base ",
            ][..],
        ),
        valid,
    )
        .prop_map(|(prefix, schedule)| format!("{prefix}{schedule}"));
    prop_oneof![3 => prefixed.prop_flat_map(edited), 1 => any::<String>()]
}

fn time_zone() -> impl Strategy<Value = Option<String>> {
    prop::option::of(prop_oneof![
        select(
            &[
                "",
                "UTC",
                "Local",
                "Asia/Shanghai",
                "Australia/Lord_Howe",
                "Etc/GMT+14",
                "../etc",
                "utc"
            ][..]
        )
        .prop_map(str::to_owned),
        any::<String>(),
    ])
}

/// Percent strings with edge numbers, signs, spaces and decimals, and arbitrary text.
fn percent_text() -> impl Strategy<Value = String> {
    prop_oneof![
        select(
            &[
                "0%",
                "-0%",
                "100%",
                "2147483647%",
                "2147483648%",
                "-2147483649%",
                " 5%",
                "5% ",
                "5 %",
                "%5",
                "5%%",
                "0.01%",
                "1e2%",
                "inf%",
                "NaN%",
                "-inf%",
                "+50%",
                "%",
                "",
                "5",
                "٥%",
                "9223372036854775807%",
                "9223372036854775808%",
                "1e308%",
                "1e309%",
                "0x10%",
            ][..]
        )
        .prop_map(str::to_owned),
        (
            "[-+]?[0-9]{1,40}(\\.[0-9]{0,10})?",
            select(&["%", "", "%%"][..])
        )
            .prop_map(|(number, suffix)| format!("{number}{suffix}")),
        any::<String>(),
    ]
}

fn int_or_string() -> impl Strategy<Value = IntOrString> {
    prop_oneof![
        any::<i32>().prop_map(IntOrString::Int),
        percent_text().prop_map(IntOrString::String),
    ]
}

fn exercise(schedule: &Schedule, text: &str) -> Result<(), TestCaseError> {
    let after: DateTime<Utc> = "2024-03-10T06:59:30Z".parse().unwrap();
    for zone in [Zone::UTC, Zone::Named(chrono_tz::Australia::Lord_Howe)] {
        let mut previous = after;
        for next in schedule.iter_after(after, zone).take(3) {
            prop_assert!(next > previous, "{:?}: {} then {}", text, previous, next);
            previous = next;
        }
        let missed = schedule.missed_runs(after, after + Duration::days(2), zone);
        prop_assert!(
            missed.count == 0 || missed.most_recent.is_some(),
            "{:?}",
            text
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(fuzz_cases::config())]

    #[test]
    fn cron_schedules(text in schedule_text(), zone in time_zone()) {
        match Schedule::parse(&text) {
            Ok(schedule) => exercise(&schedule, &text)?,
            Err(error) => prop_assert!(!error.to_string().is_empty()),
        }
        match Schedule::parse_with_time_zone(&text, zone.as_deref()) {
            Ok(resolved) => exercise(&resolved.schedule, &text)?,
            Err(error) => prop_assert!(!error.to_string().is_empty()),
        }
    }

    #[test]
    fn int_or_percent_scalers(value in int_or_string(), total in prop_oneof![
        0_i64..1000, Just(i64::MAX), Just(i64::MIN), Just(-1_i64), any::<i64>(),
    ]) {
        type Scaler = fn(&IntOrString, i64, Rounding) -> Result<i64, ScaleError>;
        for scaler in [legacy_scaled as Scaler, safe_scaled, kruise_scaled] {
            let up = scaler(&value, total, Rounding::Up);
            let down = scaler(&value, total, Rounding::Down);
            prop_assert_eq!(up.is_ok(), down.is_ok());
            match (&value, up, down) {
                (IntOrString::Int(int), up, down) => {
                    prop_assert_eq!(up, Ok(i64::from(*int)));
                    prop_assert_eq!(down, Ok(i64::from(*int)));
                }
                (IntOrString::String(_), Ok(up), Ok(down)) => {
                    prop_assert!(down <= up, "{:?} of {}: {} < {}", value, total, up, down);
                }
                (IntOrString::String(text), Err(error), _) => {
                    let error = error.in_field("spec.maxUnavailable");
                    let expected = format!("spec.maxUnavailable: invalid value {text:?}: ");
                    prop_assert!(error.to_string().starts_with(&expected), "{}", error);
                }
                (IntOrString::String(_), Ok(_), Err(_)) => prop_assert!(false, "rounding changed validity"),
            }
        }
        if let (IntOrString::String(text), Ok(percent)) = (&value, value_percent(&value)) {
            // A percentage of 0..=100 of a small total stays within the total.
            if (0..=100).contains(&percent) && (0..1000).contains(&total) {
                let up = safe_scaled(&value, total, Rounding::Up).unwrap();
                prop_assert!((0..=total).contains(&up), "{} of {} = {}", text, total, up);
            }
        }
        let replicas = i32::try_from(total).ok();
        if let Ok(kept) = partition_replicas(Some(&value), replicas) {
            prop_assert!(kept >= 0 && kept <= i64::from(replicas.unwrap_or(1)).max(0));
        }
    }

    #[test]
    fn printed_selectors(
        labels in prop::collection::btree_map(any::<String>(), any::<String>(), 0..3),
        expressions in prop::collection::vec((
            any::<String>(),
            prop_oneof![select(&["In", "NotIn", "Exists", "DoesNotExist"][..]).prop_map(str::to_owned), any::<String>()],
            prop::option::of(prop::collection::vec(any::<String>(), 0..3)),
        ), 0..3),
    ) {
        let selector = LabelSelector {
            match_labels: Some(labels.clone()),
            match_expressions: Some(expressions.iter().cloned().map(|(key, operator, values)| {
                LabelSelectorRequirement { key, operator, values }
            }).collect()),
        };
        let printed = selector_string(&selector);
        prop_assert_eq!(&selector_string(&selector), &printed);
        if expressions.is_empty() {
            let expected: Vec<String> = labels.iter().map(|(key, value)| format!("{key}={value}")).collect();
            prop_assert_eq!(printed, expected.join(","));
        }
    }

    #[test]
    fn deletion_costs(text in prop_oneof![
        any::<i64>().prop_map(|cost| cost.to_string()),
        select(&["0", "-0", "+5", "007", " 5", "2147483647", "2147483648", "-2147483648", "", "-", "١"][..])
            .prop_map(str::to_owned),
        any::<String>(),
    ]) {
        let cost = parse_deletion_cost(&text);
        if cost != 0 {
            prop_assert_eq!(cost.to_string(), text);
        }
    }

    #[test]
    fn reserved_ordinals(values in prop::collection::vec(prop_oneof![
        any::<i32>().prop_map(IntOrString::Int),
        (any::<i64>(), any::<i64>()).prop_map(|(a, b)| IntOrString::String(format!("{}-{}", a.min(b), a.max(b)))),
        select(&["1-3", "5", "-1-3", "3-1", "1--3", "-", "1-", "0-1000000000", "9223372036854775807-9223372036854775807"][..])
            .prop_map(|text| IntOrString::String(text.to_owned())),
        any::<String>().prop_map(IntOrString::String),
    ], 0..5)) {
        match ReservedOrdinals::parse(&values) {
            Ok(reserved) => {
                for value in &values {
                    match value {
                        IntOrString::Int(ordinal) => prop_assert!(reserved.contains(i64::from(*ordinal))),
                        IntOrString::String(text) => {
                            let (start, end) = text.split_once('-').unwrap();
                            prop_assert!(reserved.contains(start.parse().unwrap()));
                            prop_assert!(reserved.contains(end.parse().unwrap()));
                        }
                    }
                }
                let _ = reserved.to_string();
            }
            Err(error) => {
                let expected = format!("spec.reserveOrdinals[{}]", error.index);
                prop_assert!(error.to_string().starts_with(&expected), "{}", error);
            }
        }
    }

    #[test]
    fn image_references(text in prop_oneof![
        any::<String>(),
        (prop::option::of(select(&["docker.io", "index.docker.io", "localhost", "registry:5000", "r.example.com"][..])),
            select(&["nginx", "library/nginx", "library/a/b", "team/app", "a__b", "UPPER"][..]),
            prop::option::of(select(&["1.26", "latest", "v1_2-3"][..])),
            prop::option::of(select(&["sha256:0123456789abcdef0123456789abcdef", "sha256:xyz"][..])))
            .prop_map(|(domain, path, tag, digest)| {
                let mut text = domain.map(|domain| format!("{domain}/")).unwrap_or_default();
                text.push_str(path);
                if let Some(tag) = tag { text.push(':'); text.push_str(tag); }
                if let Some(digest) = digest { text.push('@'); text.push_str(digest); }
                text
            })
            .prop_flat_map(edited),
    ]) {
        match reference::normalize(&text) {
            Ok(normalized) => {
                let again = reference::normalize(&normalized.reference()).unwrap();
                prop_assert_eq!(&again, &normalized);
                let _ = reference::registry(&normalized.name);
            }
            Err(error) => prop_assert_eq!(error.to_string(), format!("invalid image {text:?}")),
        }
    }

    #[test]
    fn pull_secrets(
        key in select(&[".dockerconfigjson", ".dockercfg", "other"][..]),
        data in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..200),
            (select(&["docker.io", "https://index.docker.io/v1/", "r.example.com", "r.example.com:5000/x"][..]),
             select(&["dXNlcjpwYXNz", "bm9jb2xvbg==", "!!", "", "dXNlcjo="][..]))
                .prop_map(|(host, auth)| {
                    serde_json::json!({"auths": {host: {"auth": auth}}, host: {"username": "", "auth": auth}})
                        .to_string()
                })
                .prop_flat_map(edited)
                .prop_map(String::into_bytes),
        ],
        image in select(&["nginx", "r.example.com/app", "r.example.com:5000/x/y", ""][..]),
    ) {
        let secret: BTreeMap<String, Vec<u8>> = [(key.to_owned(), data)].into();
        let _ = node_pulls::credentials(&secret, image);
    }

    /// A ResourceDistribution whose `spec.resource` has one value replaced by arbitrary JSON: the webhook
    /// rules, the hash and the copy never panic, every error names a `spec.resource` field, and a resource the
    /// rules accept makes a copy in the namespace.
    #[test]
    fn resource_distribution_resources(at in any::<Index>(), value in json_value()) {
        let resource = replaced(
            serde_json::json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "pull", "labels": {"a": "b"}, "annotations": {"n": "v"}},
                "type": "Opaque", "data": {"k": "dg=="}}),
            at,
            value,
        );
        let distributor: ResourceDistribution = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "shared", "uid": "u1"},
            "spec": {"resource": resource, "targets": {"allNamespaces": true}}
        }))
        .unwrap();
        let errors = validate(&distributor, None);
        for error in &errors {
            prop_assert!(error.field.starts_with("spec.resource"), "{}", error);
        }
        prop_assert_eq!(resource_hash(&distributor.spec.resource).len(), 64);
        let copy = copy_object(&distributor, "web", "h");
        if errors.is_empty() {
            let copy = copy.unwrap();
            prop_assert_eq!(&copy["metadata"]["namespace"], "web");
            prop_assert_eq!(&copy["metadata"]["ownerReferences"][0]["uid"], "u1");
        }
    }
}

/// The integer percentage of a string that [`safe_scaled`] accepts.
fn value_percent(value: &IntOrString) -> Result<i64, ()> {
    match value {
        IntOrString::String(text) => text
            .strip_suffix('%')
            .and_then(|digits| digits.parse().ok())
            .ok_or(()),
        IntOrString::Int(_) => Err(()),
    }
}
