//! The partition each subset workload gets (upstream `calcNextPartitions`): the subset's entry in
//! `updateStrategy.manualUpdate.partitions` (0 when absent), never above the subset's replicas and never
//! negative. The `Manual` strategy is the only one, and an unset `type` means it.
//!
//! ```
//! use std::collections::BTreeMap;
//! use kruise_api::apps::v1beta1::UnitedDeploymentSpec;
//! use kruise_schedule::united_deployment::partitions::partitions;
//!
//! let spec: UnitedDeploymentSpec = serde_json::from_value(serde_json::json!({
//!     "selector": {}, "topology": {"subsets": [{"name": "a"}, {"name": "b"}]},
//!     "updateStrategy": {"manualUpdate": {"partitions": {"a": 5}}}
//! })).unwrap();
//! let replicas = BTreeMap::from([("a".to_owned(), 3), ("b".to_owned(), 3)]);
//! assert_eq!(partitions(&spec, &replicas), BTreeMap::from([("a".into(), 3), ("b".into(), 0)]));
//! ```

use std::collections::BTreeMap;

use kruise_api::apps::v1beta1::UnitedDeploymentSpec;

/// The partition of every subset of `spec`, given the replicas allocated to them.
#[must_use]
pub fn partitions(
    spec: &UnitedDeploymentSpec,
    replicas: &BTreeMap<String, i32>,
) -> BTreeMap<String, i32> {
    let manual = spec
        .update_strategy
        .manual_update
        .as_ref()
        .map(|manual| &manual.partitions);
    spec.topology
        .subsets
        .iter()
        .map(|subset| {
            let wanted = manual
                .and_then(|partitions| partitions.get(&subset.name))
                .copied()
                .unwrap_or(0)
                .max(0);
            let partition = match replicas.get(&subset.name) {
                Some(limit) => wanted.min(*limit),
                None => wanted,
            };
            (subset.name.clone(), partition)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_follow_the_manual_map_capped_by_replicas() {
        let spec: UnitedDeploymentSpec = serde_json::from_value(serde_json::json!({
            "selector": {},
            "topology": {"subsets": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}]},
            "updateStrategy": {"type": "Manual",
                "manualUpdate": {"partitions": {"a": 2, "b": 9, "c": -3}}}
        }))
        .unwrap();
        let replicas: BTreeMap<String, i32> = [("a", 4), ("b", 4), ("c", 4)]
            .map(|(n, r)| (n.to_owned(), r))
            .into();
        let got = partitions(&spec, &replicas);
        let expected: BTreeMap<String, i32> = [("a", 2), ("b", 4), ("c", 0), ("d", 0)]
            .map(|(n, r)| (n.to_owned(), r))
            .into();
        assert_eq!(got, expected);
    }

    #[test]
    fn no_manual_update_means_every_pod_updates() {
        let spec: UnitedDeploymentSpec = serde_json::from_value(serde_json::json!({
            "selector": {}, "topology": {"subsets": [{"name": "a"}]}
        }))
        .unwrap();
        let replicas: BTreeMap<String, i32> = [("a".to_owned(), 3)].into();
        assert_eq!(partitions(&spec, &replicas)["a"], 0);
    }
}
