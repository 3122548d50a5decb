//! Ordinals, `reserveOrdinals` and the start ordinal (upstream `stateful_set_utils.go`); as upstream, one bad
//! `reserveOrdinals` range discards the whole set.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

use crate::support::asts;

use crate::support::asts::{pods, run, run_with, set, summary};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_schedule::statefulset::ordinals::{
    OrdinalRange, ReservedOrdinals, claim_name, ordinal_of, parent_of, pod_name,
};
use kruise_schedule::statefulset::{Options, Rule};
use serde_json::json;

fn s(text: &str) -> IntOrString {
    IntOrString::String(text.into())
}

#[test]
fn ordinal_from_name() {
    let cases: &[(&str, Option<i32>)] = &[
        ("web-0", Some(0)),
        ("web-12", Some(12)),
        ("my-web-3", Some(3)),
        ("web-1-2", Some(2)),
        ("web-007", Some(7)),
        ("-5", Some(5)),
        ("web", None),
        ("web-", None),
        ("web-3a", None),
        ("web-a3", None),
        ("web-2147483647", Some(i32::MAX)),
        ("web-2147483648", None), // overflows int32: upstream ordinal -1
        ("", None),
    ];
    for (name, want) in cases {
        assert_eq!(ordinal_of(name), *want, "{name}");
    }
    assert_eq!(parent_of("my-web-3"), Some("my-web"));
    assert_eq!(parent_of("web"), None);
    assert_eq!(pod_name("web", 4), "web-4");
    assert_eq!(claim_name("data", "web", 4), "data-web-4");
}

#[test]
fn reserve_ordinals_parsing() {
    let ok: &[(Vec<IntOrString>, &[i64], &[i64])] = &[
        (
            vec![IntOrString::Int(1), IntOrString::Int(3)],
            &[1, 3],
            &[0, 2, 4],
        ),
        (vec![s("1-3")], &[1, 2, 3], &[0, 4]),
        (vec![s("2-2")], &[2], &[1, 3]),
        (
            vec![IntOrString::Int(0), s("5-6"), s("+8-9")],
            &[0, 5, 6, 8, 9],
            &[1, 7, 10],
        ),
        (vec![s("1-3"), s("2-5")], &[1, 4, 5], &[0, 6]),
        (vec![], &[], &[0, 1]),
    ];
    for (values, reserved, free) in ok {
        let parsed = ReservedOrdinals::parse(values).unwrap();
        for o in *reserved {
            assert!(parsed.contains(*o), "{values:?} reserves {o}");
        }
        for o in *free {
            assert!(!parsed.contains(*o), "{values:?} does not reserve {o}");
        }
    }
    let bad: &[(Vec<IntOrString>, usize)] = &[
        (vec![s("5")], 0),                        // a string must be a range
        (vec![IntOrString::Int(1), s("3-1")], 1), // start > end
        (vec![s("1-2-3")], 0),                    // two dashes
        (vec![s("-1-3")], 0),                     // a negative start splits into three parts
        (vec![s("a-3")], 0),
        (vec![s("1-b")], 0),
        (vec![s(" 1-3")], 0), // no trimming
        (vec![s("")], 0),
        (vec![IntOrString::Int(7), s("2-4"), s("x")], 2),
    ];
    for (values, index) in bad {
        let error = ReservedOrdinals::parse(values).unwrap_err();
        assert_eq!(error.index, *index, "{values:?}");
        // One bad entry discards the whole set.
        let (reserved, error) = ReservedOrdinals::of(values);
        assert!(reserved.is_empty(), "{values:?}");
        assert!(error.is_some());
    }
    let error = ReservedOrdinals::parse(&[IntOrString::Int(1), s("3-1")]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "spec.reserveOrdinals[1]: invalid range \"3-1\": the start is greater than the end"
    );
}

#[test]
fn spec_example_range() {
    // replicas=4, reserve {1,3}, start=2 → range [2,7), slots [2, nil(3), 4, 5, 6].
    let reserved = ReservedOrdinals::parse(&[IntOrString::Int(1), IntOrString::Int(3)]).unwrap();
    let range = OrdinalRange::new(2, 4, reserved);
    assert_eq!((range.start(), range.end()), (2, 7));
    assert_eq!(range.ordinals().collect::<Vec<_>>(), [2, 4, 5, 6]);
    assert_eq!(
        [2, 3, 4, 5, 6, 7, 1].map(|o| range.slot(o)),
        [Some(0), None, Some(2), Some(3), Some(4), None, None]
    );
}

#[test]
fn ranges_table() {
    type Row = (i64, i64, Vec<IntOrString>, i64, &'static [i64]);
    let cases: &[Row] = &[
        (0, 3, vec![], 3, &[0, 1, 2]),
        (0, 0, vec![], 0, &[]),
        (0, 0, vec![IntOrString::Int(0)], 0, &[]),
        (0, 3, vec![IntOrString::Int(0)], 4, &[1, 2, 3]),
        (0, 3, vec![IntOrString::Int(3)], 3, &[0, 1, 2]), // reserved just past the end: no effect
        (0, 3, vec![s("1-2"), IntOrString::Int(4)], 6, &[0, 3, 5]),
        (5, 2, vec![IntOrString::Int(1)], 7, &[5, 6]), // reserved below the start: no effect
        (
            0,
            2,
            vec![s("1-1000000000")],
            1_000_000_002,
            &[0, 1_000_000_001],
        ),
        (0, -1, vec![], 0, &[]),
    ];
    for (start, replicas, reserve, end, ordinals) in cases {
        let range = OrdinalRange::new(*start, *replicas, ReservedOrdinals::parse(reserve).unwrap());
        assert_eq!(range.end(), *end, "{start} {replicas} {reserve:?}");
        assert_eq!(range.ordinals().collect::<Vec<_>>(), *ordinals);
    }
}

#[test]
fn reserved_ordinals_get_no_pod_and_pods_on_them_are_condemned() {
    let set =
        set(json!({"replicas": 3, "reserveOrdinals": [1], "podManagementPolicy": "Parallel"}));
    let pods = pods(&[(0, "r2"), (1, "r2")]);
    let plan = run(&set, &pods);
    assert_eq!(
        summary(&plan, &pods, &[]),
        ["create web-2@r2", "create web-3@r2", "delete web-1"]
    );
    assert!(matches!(
        plan.actions[2].rule,
        Rule::Condemned {
            ordinal: 1,
            why: kruise_schedule::statefulset::Condemned::Reserved
        }
    ));
}

#[test]
fn one_bad_range_discards_all_reserved_ordinals() {
    let set = set(
        json!({"replicas": 3, "reserveOrdinals": [1, "4-x"], "podManagementPolicy": "Parallel"}),
    );
    let pods = pods(&[(0, "r2"), (1, "r2")]);
    let plan = run(&set, &pods);
    // Nothing is reserved: web-1 stays, web-2 is created.
    assert_eq!(summary(&plan, &pods, &[]), ["create web-2@r2"]);
    assert_eq!(plan.invalid_reserve_ordinal.as_ref().unwrap().index, 1);
    assert_eq!(plan.range.ordinals().collect::<Vec<_>>(), [0, 1, 2]);
}

#[test]
fn start_ordinal_only_with_the_gate() {
    let set =
        set(json!({"replicas": 2, "ordinals": {"start": 5}, "podManagementPolicy": "Parallel"}));
    let plan = run(&set, &[]);
    assert_eq!(
        summary(&plan, &[], &[]),
        ["create web-0@r2", "create web-1@r2"]
    );

    let options = Options::default()
        .with_feature_gates("StatefulSetStartOrdinal=true")
        .unwrap();
    let pods = pods(&[(0, "r2")]);
    let plan = run_with(&set, &pods, &[], &options);
    assert_eq!(
        summary(&plan, &pods, &[]),
        ["create web-5@r2", "create web-6@r2", "delete web-0"]
    );
    assert!(matches!(
        plan.actions[2].rule,
        Rule::Condemned {
            ordinal: 0,
            why: kruise_schedule::statefulset::Condemned::BeforeStart
        }
    ));
    // The new pods carry their identity.
    let kruise_schedule::statefulset::ActionKind::CreatePod { pod, .. } = &plan.actions[0].kind
    else {
        panic!()
    };
    let labels = pod.metadata.labels.as_ref().unwrap();
    assert_eq!(labels["statefulset.kubernetes.io/pod-name"], "web-5");
    assert_eq!(labels["apps.kubernetes.io/pod-index"], "5");
    assert_eq!(
        pod.spec.as_ref().unwrap().hostname.as_deref(),
        Some("web-5")
    );
}

#[test]
fn pods_without_ordinal_are_ignored() {
    let set = set(json!({"replicas": 1}));
    let mut pods = pods(&[(0, "r2")]);
    pods.push(asts::pod("web-x", "r2"));
    let plan = run(&set, &pods);
    assert!(plan.actions.is_empty());
    assert_eq!(plan.status.replicas, 1);
}
