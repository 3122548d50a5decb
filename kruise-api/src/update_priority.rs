//! The priority strategy for the order in which pods are updated (upstream `apis/apps/pub/update_priority.go`;
//! applied by `pkg/util/updatesort/priority_sort.go`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::label_selector::{self, SelectorError};
use crate::omitempty::is_zero;

/// Rules that decide which pods are updated first. Exactly one of the two lists may be set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityStrategy {
    /// Order by the trailing integer of label values: the first key present on a pod decides its level.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub order_priority: Vec<UpdatePriorityOrderTerm>,
    /// Order by the sum of the weights of the terms whose selector matches the pod.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub weight_priority: Vec<UpdatePriorityWeightTerm>,
}

/// A label key whose value orders pods.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityOrderTerm {
    /// The label key; its value's longest all-digit suffix is the order.
    pub ordered_key: String,
}

/// A weight given to pods that a selector matches.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityWeightTerm {
    /// The weight, 0 to 100.
    pub weight: i32,
    /// Which pods get the weight.
    pub match_selector: LabelSelector,
}

/// Why an [`UpdatePriorityStrategy`] is invalid.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum PriorityStrategyError {
    /// Both lists are set.
    #[error("priorityStrategy: only one of weightPriority and orderPriority can be used")]
    BothSet,
    /// A weight is outside 0..=100.
    #[error("priorityStrategy.weightPriority[{index}].weight: {weight} is not in the range 0-100")]
    WeightOutOfRange {
        /// Index of the term.
        index: usize,
        /// The weight given.
        weight: i32,
    },
    /// A weight term's selector is empty.
    #[error("priorityStrategy.weightPriority[{index}].matchSelector: must not be empty")]
    EmptySelector {
        /// Index of the term.
        index: usize,
    },
    /// A weight term's selector does not parse.
    #[error("priorityStrategy.weightPriority[{index}].matchSelector: {source}")]
    InvalidSelector {
        /// Index of the term.
        index: usize,
        /// What is wrong with it.
        #[source]
        source: SelectorError,
    },
    /// An order term's key is empty.
    #[error("priorityStrategy.orderPriority[{index}].orderedKey: must not be empty")]
    EmptyOrderedKey {
        /// Index of the term.
        index: usize,
    },
}

impl UpdatePriorityStrategy {
    /// Checks the rules upstream's webhooks enforce. Weight 0 is accepted, as upstream does (its message says
    /// 1-100).
    ///
    /// # Errors
    /// The first rule that fails, naming the field.
    pub fn validate(&self) -> Result<(), PriorityStrategyError> {
        if !self.weight_priority.is_empty() && !self.order_priority.is_empty() {
            return Err(PriorityStrategyError::BothSet);
        }
        for (index, term) in self.weight_priority.iter().enumerate() {
            if !(0..=100).contains(&term.weight) {
                return Err(PriorityStrategyError::WeightOutOfRange {
                    index,
                    weight: term.weight,
                });
            }
            if label_selector::is_empty(&term.match_selector) {
                return Err(PriorityStrategyError::EmptySelector { index });
            }
            label_selector::validate(&term.match_selector)
                .map_err(|source| PriorityStrategyError::InvalidSelector { index, source })?;
        }
        if let Some(index) = self
            .order_priority
            .iter()
            .position(|term| term.ordered_key.is_empty())
        {
            return Err(PriorityStrategyError::EmptyOrderedKey { index });
        }
        Ok(())
    }

    /// The weight of a pod with these labels: the sum of the weights of matching terms. Terms whose selector
    /// does not parse are skipped, as upstream does.
    #[must_use]
    pub fn weight_of(&self, labels: &BTreeMap<String, String>) -> i64 {
        self.weight_priority
            .iter()
            .filter(|term| label_selector::matches(&term.match_selector, labels).unwrap_or(false))
            .map(|term| i64::from(term.weight))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    fn selector(key: &str, value: &str) -> LabelSelector {
        LabelSelector {
            match_labels: Some([(key.to_owned(), value.to_owned())].into()),
            ..Default::default()
        }
    }

    #[test]
    fn validation_rules() {
        let both = UpdatePriorityStrategy {
            order_priority: vec![UpdatePriorityOrderTerm {
                ordered_key: "k".into(),
            }],
            weight_priority: vec![UpdatePriorityWeightTerm {
                weight: 1,
                match_selector: selector("a", "b"),
            }],
        };
        assert_eq!(both.validate(), Err(PriorityStrategyError::BothSet));

        let zero_weight = UpdatePriorityStrategy {
            weight_priority: vec![UpdatePriorityWeightTerm {
                weight: 0,
                match_selector: selector("a", "b"),
            }],
            ..Default::default()
        };
        assert_eq!(
            zero_weight.validate(),
            Ok(()),
            "upstream accepts 0 although its message says 1-100"
        );

        let heavy = UpdatePriorityStrategy {
            weight_priority: vec![UpdatePriorityWeightTerm {
                weight: 101,
                match_selector: selector("a", "b"),
            }],
            ..Default::default()
        };
        assert_eq!(
            heavy.validate(),
            Err(PriorityStrategyError::WeightOutOfRange {
                index: 0,
                weight: 101
            })
        );

        let empty = UpdatePriorityStrategy {
            weight_priority: vec![UpdatePriorityWeightTerm {
                weight: 5,
                match_selector: LabelSelector::default(),
            }],
            ..Default::default()
        };
        assert_eq!(
            empty.validate(),
            Err(PriorityStrategyError::EmptySelector { index: 0 })
        );

        let bad_operator = UpdatePriorityStrategy {
            weight_priority: vec![UpdatePriorityWeightTerm {
                weight: 5,
                match_selector: LabelSelector {
                    match_expressions: Some(vec![LabelSelectorRequirement {
                        key: "a".into(),
                        operator: "Near".into(),
                        values: None,
                    }]),
                    ..Default::default()
                },
            }],
            ..Default::default()
        };
        assert!(matches!(
            bad_operator.validate(),
            Err(PriorityStrategyError::InvalidSelector { index: 0, .. })
        ));

        let empty_key = UpdatePriorityStrategy {
            order_priority: vec![
                UpdatePriorityOrderTerm {
                    ordered_key: "k".into(),
                },
                UpdatePriorityOrderTerm {
                    ordered_key: String::new(),
                },
            ],
            ..Default::default()
        };
        assert_eq!(
            empty_key.validate(),
            Err(PriorityStrategyError::EmptyOrderedKey { index: 1 })
        );
    }

    #[test]
    fn weights_add_up_over_matching_terms() {
        let strategy = UpdatePriorityStrategy {
            weight_priority: vec![
                UpdatePriorityWeightTerm {
                    weight: 50,
                    match_selector: selector("zone", "a"),
                },
                UpdatePriorityWeightTerm {
                    weight: 30,
                    match_selector: selector("tier", "web"),
                },
                UpdatePriorityWeightTerm {
                    weight: 7,
                    match_selector: selector("zone", "b"),
                },
            ],
            ..Default::default()
        };
        let labels: BTreeMap<_, _> = [
            ("zone".to_owned(), "a".to_owned()),
            ("tier".to_owned(), "web".to_owned()),
        ]
        .into();
        assert_eq!(strategy.weight_of(&labels), 80);
        assert_eq!(strategy.weight_of(&BTreeMap::new()), 0);
    }

    #[test]
    fn json_shape() {
        let raw = r#"{"weightPriority":[{"weight":50,"matchSelector":{"matchLabels":{"test-key":"foo"}}}]}"#;
        let strategy: UpdatePriorityStrategy = serde_json::from_str(raw).unwrap();
        assert_eq!(serde_json::to_string(&strategy).unwrap(), raw);
    }
}
