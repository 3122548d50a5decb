//! Pod orderings, rule by rule: `ActivePods`, the 8-rule scale-down ranking (with the
//! pod-deletion-cost annotation), the same-node and topology-spread rankers, the priority sorter and the
//! scatter sorter, plus top-k selection against a full sort.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

use std::collections::BTreeMap;

use crate::support::rollout::{P, names, p};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use kruise_api::scatter::UpdateScatterTerm;
use kruise_api::update_priority::{
    UpdatePriorityOrderTerm, UpdatePriorityStrategy, UpdatePriorityWeightTerm,
};
use kruise_schedule::sort::deletion::{DeletionKey, parse_deletion_cost};
use kruise_schedule::sort::scatter::{Scatter, ScatterGroup, group_by_density};
use kruise_schedule::sort::{active, priority::Priority, rankers, select};

const COST: &str = "controller.kubernetes.io/pod-deletion-cost";

/// Sorts both input orders with `active::sort` and returns the names (both orders must agree).
fn active_order(pods: &[Pod]) -> Vec<String> {
    let mut forward: Vec<usize> = (0..pods.len()).collect();
    active::sort(pods, &mut forward);
    let mut backward: Vec<usize> = (0..pods.len()).rev().collect();
    active::sort(pods, &mut backward);
    assert_eq!(
        forward, backward,
        "the order does not depend on the input order"
    );
    names(pods, &forward)
}

#[test]
fn active_pods_rules() {
    // (rule, first, second): `first` is updated before `second`; the names put `second` first otherwise.
    let cases: Vec<(&str, P, P)> = vec![
        ("1 unassigned first", p("z").node(""), p("a")),
        (
            "2 pending before unknown",
            p("z").phase("Pending").not_ready(),
            p("a").phase("Unknown").not_ready(),
        ),
        ("2 unknown before running", p("z").phase("Unknown"), p("a")),
        (
            "2 failed counts as pending",
            p("z").phase("Failed").not_ready(),
            p("a").phase("Unknown").not_ready(),
        ),
        ("3 not ready first", p("z").not_ready(), p("a")),
        (
            "4 later ready first",
            p("z").ready_at(Some("2024-05-01T10:05:00Z")),
            p("a"),
        ),
        ("4 zero ready time first", p("z").ready_at(None), p("a")),
        (
            "5 more restarts first",
            p("z").restarts(3),
            p("a").restarts(1),
        ),
        (
            "6 newer first",
            p("z").created(Some("2024-05-01T10:00:30Z")),
            p("a"),
        ),
        ("6 zero creation first", p("z").created(None), p("a")),
        ("7 name breaks ties", p("a"), p("b")),
    ];
    for (rule, first, second) in cases {
        let pods = [second.build(), first.build()];
        let order = active_order(&pods);
        assert_eq!(order[0], pods[1].metadata.name.clone().unwrap(), "{rule}");
    }
}

#[test]
fn active_pods_ready_time_only_when_both_ready() {
    // Rule 4 is skipped when one is not ready: rule 3 decides; with both not ready, rule 5 decides.
    let pods = [
        p("a").not_ready().ready_at(Some("2024-05-01T09:00:00Z")),
        p("b")
            .not_ready()
            .ready_at(Some("2024-05-01T11:00:00Z"))
            .restarts(2),
    ]
    .map(P::build);
    assert_eq!(active_order(&pods), ["b", "a"]);
}

fn deletion_first(
    a: &Pod,
    b: &Pod,
    avail: (Option<bool>, Option<bool>),
    ranks: (f64, f64),
) -> bool {
    DeletionKey::of(a, avail.0, ranks.0) < DeletionKey::of(b, avail.1, ranks.1)
}

/// (rule, first, second, availability, ranks): `first` is deleted before `second`.
type DeletionCase = (&'static str, P, P, (Option<bool>, Option<bool>), (f64, f64));

#[test]
fn deletion_ranking_rules() {
    let none = (None, None);
    let flat = (0.0, 0.0);
    // (rule, first, second, availability, ranks): `first` is deleted before `second`.
    let cases: Vec<DeletionCase> = vec![
        ("1 unassigned first", p("z").node(""), p("a"), none, flat),
        (
            "2 pending before running",
            p("z").phase("Pending"),
            p("a"),
            none,
            flat,
        ),
        (
            "2 unknown before running",
            p("z").phase("Unknown"),
            p("a"),
            none,
            flat,
        ),
        (
            "3a unavailable first",
            p("z"),
            p("a"),
            (Some(false), Some(true)),
            flat,
        ),
        ("3b not ready first", p("z").not_ready(), p("a"), none, flat),
        (
            "4 lower deletion cost first",
            p("z").annotation(COST, "-5"),
            p("a"),
            none,
            flat,
        ),
        (
            "4 lower positive cost first",
            p("z").annotation(COST, "1"),
            p("a").annotation(COST, "2"),
            none,
            flat,
        ),
        (
            "4 invalid cost counts as 0",
            p("z").annotation(COST, "+5"),
            p("a").annotation(COST, "1"),
            none,
            flat,
        ),
        ("5 higher rank first", p("z"), p("a"), none, (2.0, 1.0)),
        (
            "5 rank beats ready time",
            p("z"),
            p("a").ready_at(Some("2024-05-01T10:30:00Z")),
            none,
            (1.0, 0.0),
        ),
        (
            "6 later ready first",
            p("z").ready_at(Some("2024-05-01T10:05:00Z")),
            p("a"),
            none,
            flat,
        ),
        (
            "7 more restarts first",
            p("z").restarts(4),
            p("a"),
            none,
            flat,
        ),
        (
            "8 newer first",
            p("z").created(Some("2024-05-01T10:00:30Z")),
            p("a"),
            none,
            flat,
        ),
        (
            "8 zero creation first",
            p("z").created(None),
            p("a"),
            none,
            flat,
        ),
        ("9 name breaks ties", p("a"), p("b"), none, flat),
    ];
    for (rule, first, second, avail, ranks) in cases {
        let (first, second) = (first.build(), second.build());
        assert!(deletion_first(&first, &second, avail, ranks), "{rule}");
        assert!(
            !deletion_first(&second, &first, (avail.1, avail.0), (ranks.1, ranks.0)),
            "{rule} (reversed)"
        );
    }
    // Availability is only compared when both are given.
    let (a, z) = (p("a").build(), p("z").build());
    assert!(deletion_first(&a, &z, (Some(false), None), (0.0, 0.0)));
    assert!(!deletion_first(&z, &a, (Some(false), None), (0.0, 0.0)));
}

#[test]
fn deletion_cost_parsing() {
    let cases = [
        ("-100", -100),
        ("0", 0),
        ("42", 42),
        ("2147483647", i32::MAX),
        ("-2147483648", i32::MIN),
        ("2147483648", 0),
        ("+5", 0),
        ("007", 0),
        ("", 0),
        ("1.5", 0),
        ("abc", 0),
    ];
    for (value, expected) in cases {
        assert_eq!(parse_deletion_cost(value), expected, "{value:?}");
    }
}

#[test]
fn same_node_ranker() {
    // n1 holds a (not ready), b, c; n2 holds d alone. On n1 the order is a, c (newer), b; the last (b) is
    // dropped and the kept get n_kept - i: a 2, c 1. Pods alone on a node and the dropped one get 0.
    let pods = [
        p("a").node("n1").not_ready(),
        p("b").node("n1"),
        p("c").node("n1").created(Some("2024-05-01T10:00:30Z")),
        p("d").node("n2"),
        p("e").node(""),
    ]
    .map(P::build);
    let ranks = rankers::same_node(&pods, &[0, 1, 2, 3, 4]);
    assert_eq!(ranks, [2.0, 0.0, 1.0, 0.0, 0.0]);
    // Ranks are per position of the indexes given.
    let ranks = rankers::same_node(&pods, &[2, 0]);
    assert_eq!(ranks, [0.0, 1.0]);
}

#[test]
fn spread_ranker() {
    // zone z1: nodes n1 (a, b) and n2 (c); zone z2: n3 (d). n4 is unknown (e is left out).
    let node = |zone: &str, host: &str| -> BTreeMap<String, String> {
        [
            ("zone".to_owned(), zone.to_owned()),
            ("kubernetes.io/hostname".to_owned(), host.to_owned()),
        ]
        .into()
    };
    let labels: BTreeMap<&str, BTreeMap<String, String>> = [
        ("n1", node("z1", "n1")),
        ("n2", node("z1", "n2")),
        ("n3", node("z2", "n3")),
    ]
    .into();
    let lookup = |name: &str| labels.get(name);
    let pods = [
        p("a").node("n1"),
        p("b").node("n1").created(Some("2024-05-01T10:00:30Z")),
        p("c").node("n2").not_ready(),
        p("d").node("n3"),
        p("e").node("n4"),
    ]
    .map(P::build);
    let ln4 = 4f64.ln(); // two zones: ln(2 + 2)
    let ranks = rankers::spread(&pods, &[0, 1, 2, 3, 4], &["zone"], &lookup);
    // z1 ordered with same-node ranks as rule 5: c (not ready) first, then b (rank 1 on n1), then a.
    let expected = [1.0 * ln4, 2.0 * ln4, 3.0 * ln4, 1.0 * ln4, 0.0];
    for (got, want) in ranks.iter().zip(expected) {
        assert!((got - want).abs() < 1e-9, "{ranks:?} != {expected:?}");
    }
    // The hostname key: groups are nodes (3 groups: ln 5), no same-node tiebreak.
    let ranks = rankers::spread(
        &pods,
        &[0, 1, 2, 3, 4],
        &["kubernetes.io/hostname"],
        &lookup,
    );
    let ln5 = 5f64.ln();
    let expected = [1.0 * ln5, 2.0 * ln5, 1.0 * ln5, 1.0 * ln5, 0.0];
    for (got, want) in ranks.iter().zip(expected) {
        assert!((got - want).abs() < 1e-9, "{ranks:?} != {expected:?}");
    }
}

fn selector(labels: &[(&str, &str)]) -> LabelSelector {
    LabelSelector {
        match_labels: Some(
            labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        ),
        match_expressions: None,
    }
}

fn priority_order(strategy: &UpdatePriorityStrategy, pods: &[Pod]) -> Vec<String> {
    let mut order: Vec<usize> = (0..pods.len()).collect();
    Priority::new(strategy).sort(pods, &mut order);
    names(pods, &order)
}

#[test]
fn priority_weight() {
    let strategy = UpdatePriorityStrategy {
        weight_priority: vec![
            UpdatePriorityWeightTerm {
                weight: 50,
                match_selector: selector(&[("zone", "a")]),
            },
            UpdatePriorityWeightTerm {
                weight: 30,
                match_selector: selector(&[("tier", "web")]),
            },
            // Invalid selector (bad operator): skipped.
            UpdatePriorityWeightTerm {
                weight: 1000,
                match_selector: LabelSelector {
                    match_labels: None,
                    match_expressions: Some(vec![LabelSelectorRequirement {
                        key: "zone".into(),
                        operator: "Bogus".into(),
                        values: None,
                    }]),
                },
            },
        ],
        ..Default::default()
    };
    let pods = [
        p("none"),
        p("web").label("tier", "web"),
        p("zone-a").label("zone", "a"),
        p("both").label("zone", "a").label("tier", "web"),
        p("none2"),
    ]
    .map(P::build);
    // 80, 50, 30, then the weightless in their input order (stable).
    assert_eq!(
        priority_order(&strategy, &pods),
        ["both", "zone-a", "web", "none", "none2"]
    );
}

#[test]
fn priority_order_terms() {
    let strategy = UpdatePriorityStrategy {
        order_priority: vec![
            UpdatePriorityOrderTerm {
                ordered_key: "batch".into(),
            },
            UpdatePriorityOrderTerm {
                ordered_key: "group".into(),
            },
        ],
        ..Default::default()
    };
    let pods = [
        p("g-5").label("group", "g-5"),
        p("b-1").label("batch", "b-1"),
        p("b-10").label("batch", "b-10"),
        p("plain"),
        p("b-x").label("batch", "canary"),
        p("both").label("batch", "b-2").label("group", "g-9"),
    ]
    .map(P::build);
    // Level -1 (no key) first; level 0 (batch) by order descending (canary = 0); then level 1 (group).
    assert_eq!(
        priority_order(&strategy, &pods),
        ["plain", "b-10", "both", "b-1", "b-x", "g-5"]
    );
    // Weight wins when both lists are set.
    let both = UpdatePriorityStrategy {
        weight_priority: vec![UpdatePriorityWeightTerm {
            weight: 1,
            match_selector: selector(&[("group", "g-5")]),
        }],
        ..strategy
    };
    assert_eq!(priority_order(&both, &pods)[0], "g-5");
}

fn rack_pods(racks: &[&str]) -> Vec<Pod> {
    racks
        .iter()
        .enumerate()
        .map(|(i, rack)| p(&format!("{rack}-{i}")).label("rack", rack).build())
        .collect()
}

fn term(key: &str, value: &str) -> UpdateScatterTerm {
    UpdateScatterTerm {
        key: key.into(),
        value: value.into(),
    }
}

#[test]
fn scatter_one_term_update_group() {
    // m m m u u u: the last matched is held back; groups of (1, 2) twice: m u u m u, then the held-back m.
    let pods = rack_pods(&["m", "m", "m", "u", "u", "u"]);
    let terms = [term("rack", "m")];
    let order = Scatter::new(&terms).sort(&pods, (0..6).collect());
    assert_eq!(
        names(&pods, &order),
        ["m-0", "u-3", "u-4", "m-1", "u-5", "m-2"]
    );
}

#[test]
fn scatter_one_term_total_group() {
    // All pods: 4 m, 4 u. Sorting 3 m and 4 u: held back m, totals (3, 4) vs update (2, 4): the totals are
    // denser in matched pods, so their sizes (1, 1) run for min(2/1, 4/1) = 2 rounds, and 4 - 2 = 2
    // unmatched go first.
    let pods = rack_pods(&["m", "m", "m", "u", "u", "u", "u", "m"]);
    let terms = [term("rack", "m")];
    let mut order = Scatter::new(&terms).sort(&pods, (0..7).collect());
    assert_eq!(
        names(&pods, &order),
        ["u-3", "u-4", "m-0", "u-5", "m-1", "u-6", "m-2"]
    );
    assert_eq!(
        group_by_density(3, 4, 2, 4),
        ScatterGroup {
            group_num: 2,
            matched_size: 1,
            unmatched_size: 1,
            unmatched_remainder: 2
        }
    );
    // One side with at most one pod: unchanged.
    order = Scatter::new(&terms).sort(&pods, vec![0, 3, 4]);
    assert_eq!(names(&pods, &order), ["m-0", "u-3", "u-4"]);
}

#[test]
fn scatter_rounds_half_away_from_zero() {
    // new_group(2, 5): 2 groups of round(1) = 1 matched and round(2.5) = 3 unmatched.
    assert_eq!(
        group_by_density(2, 5, 2, 5),
        ScatterGroup {
            group_num: 2,
            matched_size: 1,
            unmatched_size: 3,
            unmatched_remainder: 0
        }
    );
}

#[test]
fn scatter_several_terms() {
    // Terms are counted over the pods being sorted; a term matching none is dropped; the most matched first.
    let pods: Vec<Pod> = [
        ("a", "x"),
        ("a", "y"),
        ("b", "x"),
        ("b", "x"),
        ("b", "y"),
        ("c", "y"),
    ]
    .iter()
    .enumerate()
    .map(|(i, (rack, zone))| {
        p(&format!("p{i}"))
            .label("rack", rack)
            .label("zone", zone)
            .build()
    })
    .collect();
    let terms = [term("rack", "a"), term("zone", "y"), term("rack", "none")];
    let scatter = Scatter::new(&terms);
    let applied = scatter.terms_for(&pods, &[0, 1, 2, 3, 4, 5]);
    assert_eq!(applied, [&terms[1], &terms[0]]);
}

#[test]
fn top_k_matches_full_sort() {
    let values: Vec<u32> = (0..200u32).map(|i| (i * 7919) % 211).collect();
    let mut sorted: Vec<usize> = (0..values.len()).collect();
    sorted.sort_by_key(|&i| (values[i], i));
    for k in [0, 1, 5, 199, 200, 500] {
        let first = select::first_k((0..values.len()).collect(), k, |&i| (values[i], i));
        assert_eq!(first, sorted[..k.min(sorted.len())], "k = {k}");
    }
}
