//! The update priority sorter (upstream `updatesort.PrioritySorter`).
//!
//! * `weightPriority`: a pod's weight is the sum of the weights of the terms whose selector matches its labels
//!   (terms with an invalid selector are skipped); higher weights first.
//! * `orderPriority`: the first term whose key is present on the pod gives the level (the term's position)
//!   and the order (the longest all-digit suffix of the value, 0 when none or when it overflows). A pod with
//!   none of the keys has level -1 and therefore comes **first**. Lower levels first, then higher orders.
//!
//! Pods of equal priority keep the order they had (the `ActivePods` order in the planners). Upstream's
//! comparator breaks such ties by the pods' positions in the informer's list, which is arbitrary; see the
//! crate README.
//!
//! ```
//! use kruise_api::update_priority::{UpdatePriorityOrderTerm, UpdatePriorityStrategy};
//! use kruise_schedule::sort::priority::{order_suffix, Priority};
//!
//! assert_eq!(order_suffix("shard-12"), 12);
//! assert_eq!(order_suffix("canary"), 0);
//! let strategy = UpdatePriorityStrategy {
//!     order_priority: vec![UpdatePriorityOrderTerm { ordered_key: "batch".into() }],
//!     ..Default::default()
//! };
//! let priority = Priority::new(&strategy);
//! let labels = |value: &str| [("batch".to_owned(), value.to_owned())].into();
//! assert!(priority.key(&labels("b-2")) < priority.key(&labels("b-1")), "higher order first");
//! assert!(priority.key(&Default::default()) < priority.key(&labels("b-9")), "no key: first");
//! ```

use std::borrow::Borrow;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kruise_api::label_selector;
use kruise_api::update_priority::UpdatePriorityStrategy;

/// A priority strategy prepared for sorting (selectors validated once).
#[derive(Clone, Debug)]
pub struct Priority<'a> {
    mode: Mode<'a>,
}

#[derive(Clone, Debug)]
enum Mode<'a> {
    None,
    Weight(Vec<(i64, &'a LabelSelector)>),
    Order(Vec<&'a str>),
}

/// The sort key a [`Priority`] gives a pod; smaller is updated first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PriorityKey {
    /// No priority strategy: every pod is equal.
    Equal,
    /// `weightPriority`: the negated weight.
    Weight(i64),
    /// `orderPriority`: the level and the negated order.
    Order(i64, i64),
}

impl<'a> Priority<'a> {
    /// Prepares `strategy`. `weightPriority` wins when both lists are set, as upstream.
    #[must_use]
    pub fn new(strategy: &'a UpdatePriorityStrategy) -> Self {
        let mode = if !strategy.weight_priority.is_empty() {
            Mode::Weight(
                strategy
                    .weight_priority
                    .iter()
                    .filter(|term| label_selector::validate(&term.match_selector).is_ok())
                    .map(|term| (i64::from(term.weight), &term.match_selector))
                    .collect(),
            )
        } else if !strategy.order_priority.is_empty() {
            Mode::Order(
                strategy
                    .order_priority
                    .iter()
                    .map(|term| term.ordered_key.as_str())
                    .collect(),
            )
        } else {
            Mode::None
        };
        Self { mode }
    }

    /// A strategy that leaves every order unchanged.
    #[must_use]
    pub fn none() -> Self {
        Self { mode: Mode::None }
    }

    /// Whether the strategy orders anything.
    #[must_use]
    pub fn is_active(&self) -> bool {
        !matches!(self.mode, Mode::None)
    }

    /// The key of a pod with `labels`.
    #[must_use]
    pub fn key(&self, labels: &BTreeMap<String, String>) -> PriorityKey {
        self.key_with(|key| labels.get(key).map(String::as_str))
    }

    /// The label keys the strategy reads (selector keys, or ordered keys), in term order.
    pub(crate) fn label_keys(&self) -> Vec<&'a str> {
        match &self.mode {
            Mode::None => Vec::new(),
            Mode::Weight(terms) => terms
                .iter()
                .flat_map(|(_, selector)| {
                    let labels = selector
                        .match_labels
                        .iter()
                        .flatten()
                        .map(|(k, _)| k.as_str());
                    let expressions = selector
                        .match_expressions
                        .iter()
                        .flatten()
                        .map(|requirement| requirement.key.as_str());
                    labels.chain(expressions)
                })
                .collect(),
            Mode::Order(keys) => keys.clone(),
        }
    }

    /// The key of a pod whose label values `get` gives (it must answer every key of
    /// [`Priority::label_keys`] as the pod's label map would).
    pub(crate) fn key_with<'l>(&self, get: impl Fn(&str) -> Option<&'l str>) -> PriorityKey {
        match &self.mode {
            Mode::None => PriorityKey::Equal,
            Mode::Weight(terms) => PriorityKey::Weight(
                -terms
                    .iter()
                    .filter(|(_, selector)| selector_matches_with(selector, &get))
                    .map(|(weight, _)| weight)
                    .sum::<i64>(),
            ),
            Mode::Order(keys) => keys
                .iter()
                .enumerate()
                .find_map(|(level, key)| {
                    get(key).map(|value| {
                        PriorityKey::Order(
                            i64::try_from(level).unwrap_or(i64::MAX),
                            -order_suffix(value),
                        )
                    })
                })
                .unwrap_or(PriorityKey::Order(-1, 0)),
        }
    }

    /// The key of `pod`.
    #[must_use]
    pub fn key_of(&self, pod: &Pod) -> PriorityKey {
        match self.mode {
            Mode::None => PriorityKey::Equal,
            _ => self.key(kruise_api::pod::labels(pod)),
        }
    }

    /// Stable-sorts `indexes` (into `pods`) by priority; equal pods keep their order.
    pub fn sort<P: Borrow<Pod>>(&self, pods: &[P], indexes: &mut [usize]) {
        if !self.is_active() {
            return;
        }
        indexes.sort_by_cached_key(|&index| pods.get(index).map(|pod| self.key_of(pod.borrow())));
    }
}

/// The integer value of the longest all-digit suffix of `value` (0 when there is none or it overflows an
/// `i64`).
#[must_use]
pub fn order_suffix(value: &str) -> i64 {
    let digits = value.bytes().rev().take_while(u8::is_ascii_digit).count();
    let start = value.len() - digits;
    value.get(start..).and_then(|d| d.parse().ok()).unwrap_or(0)
}

/// Kubernetes selector matching (for a selector already validated) over the label values `get` gives.
fn selector_matches_with<'l>(
    selector: &LabelSelector,
    get: &impl Fn(&str) -> Option<&'l str>,
) -> bool {
    selector
        .match_labels
        .iter()
        .flatten()
        .all(|(key, value)| get(key) == Some(value.as_str()))
        && selector
            .match_expressions
            .iter()
            .flatten()
            .all(|requirement| {
                let present = get(&requirement.key);
                let values = requirement.values.as_deref().unwrap_or_default();
                match requirement.operator.as_str() {
                    "In" => present.is_some_and(|value| values.iter().any(|v| v == value)),
                    "NotIn" => present.is_none_or(|value| !values.iter().any(|v| v == value)),
                    "Exists" => present.is_some(),
                    _ => present.is_none(),
                }
            })
}
