//! WorkloadSpread v1alpha1 ⇄ v1beta1 (upstream `apis/apps/v1alpha1/workloadspread_conversion.go`).
//!
//! * Subsets: `requiredNodeSelectorTerm` ⇄ `requiredNodeSelector`, `preferredNodeSelectorTerms` ⇄
//!   `preferredNodeSelector`; the other subset fields, `targetRef`, `targetFilter` and `scheduleStrategy`
//!   keep their names.
//! * Subset conditions (in `subsetStatuses` and in every `versionedSubsetStatuses` entry) become standard
//!   `metav1.Condition`s. `metav1.Condition` requires a reason and a transition time, so, as upstream, an empty
//!   v1alpha1 reason becomes `Unknown`; a missing transition time becomes Go's zero time
//!   (`0001-01-01T00:00:00Z`, what Go holds for an unset `metav1.Time`). Back, unlike upstream (which keeps
//!   `Unknown`), the reason `Unknown` becomes empty again and the zero time becomes unset: that makes the
//!   mapping injective for what the controller writes (conditions without a reason). Only a v1alpha1 condition
//!   whose reason is literally `Unknown`, or whose time is exactly the zero time, needs the stash.
//!
//! v1beta1 → v1alpha1 drops a condition's `observedGeneration` (v1alpha1 has no such field) and turns a
//! reason `Unknown` into an empty reason.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

use super::{HubConversion, hub_conversion};
use crate::apps::{v1alpha1, v1beta1};

/// The reason upstream writes into a v1beta1 condition converted from a v1alpha1 one without a reason.
const MISSING_REASON: &str = "Unknown";

/// Go's zero `time.Time` (`0001-01-01T00:00:00Z`): what an unset v1alpha1 `lastTransitionTime` holds.
const GO_ZERO_TIME: Timestamp = Timestamp::constant(-62_135_596_800, 0);

impl HubConversion for v1alpha1::WorkloadSpread {
    type Hub = v1beta1::WorkloadSpread;

    fn to_hub_fields(&self) -> v1beta1::WorkloadSpread {
        let spec = &self.spec;
        v1beta1::WorkloadSpread {
            metadata: self.metadata.clone(),
            spec: v1beta1::WorkloadSpreadSpec {
                target_reference: spec.target_reference.clone(),
                target_filter: spec.target_filter.clone(),
                subsets: spec
                    .subsets
                    .iter()
                    .map(|subset| v1beta1::WorkloadSpreadSubset {
                        name: subset.name.clone(),
                        required_node_selector: subset.required_node_selector_term.clone(),
                        preferred_node_selector: subset.preferred_node_selector_terms.clone(),
                        tolerations: subset.tolerations.clone(),
                        max_replicas: subset.max_replicas.clone(),
                        patch: subset.patch.clone(),
                    })
                    .collect(),
                schedule_strategy: spec.schedule_strategy.clone(),
            },
            status: self
                .status
                .as_ref()
                .map(|status| v1beta1::WorkloadSpreadStatus {
                    observed_generation: status.observed_generation,
                    subset_statuses: subset_statuses_to_hub(&status.subset_statuses),
                    versioned_subset_statuses: status
                        .versioned_subset_statuses
                        .iter()
                        .map(|(revision, statuses)| {
                            (revision.clone(), subset_statuses_to_hub(statuses))
                        })
                        .collect(),
                }),
        }
    }

    fn from_hub_fields(hub: &v1beta1::WorkloadSpread) -> Self {
        let spec = &hub.spec;
        v1alpha1::WorkloadSpread {
            metadata: hub.metadata.clone(),
            spec: v1alpha1::WorkloadSpreadSpec {
                target_reference: spec.target_reference.clone(),
                target_filter: spec.target_filter.clone(),
                subsets: spec
                    .subsets
                    .iter()
                    .map(|subset| v1alpha1::WorkloadSpreadSubset {
                        name: subset.name.clone(),
                        required_node_selector_term: subset.required_node_selector.clone(),
                        preferred_node_selector_terms: subset.preferred_node_selector.clone(),
                        tolerations: subset.tolerations.clone(),
                        max_replicas: subset.max_replicas.clone(),
                        patch: subset.patch.clone(),
                    })
                    .collect(),
                schedule_strategy: spec.schedule_strategy.clone(),
            },
            status: hub
                .status
                .as_ref()
                .map(|status| v1alpha1::WorkloadSpreadStatus {
                    observed_generation: status.observed_generation,
                    subset_statuses: subset_statuses_from_hub(&status.subset_statuses),
                    versioned_subset_statuses: status
                        .versioned_subset_statuses
                        .iter()
                        .map(|(revision, statuses)| {
                            (revision.clone(), subset_statuses_from_hub(statuses))
                        })
                        .collect(),
                }),
        }
    }
}

hub_conversion!(v1alpha1::WorkloadSpread => v1beta1::WorkloadSpread);

fn subset_statuses_to_hub(
    statuses: &[v1alpha1::WorkloadSpreadSubsetStatus],
) -> Vec<v1beta1::WorkloadSpreadSubsetStatus> {
    statuses
        .iter()
        .map(|status| v1beta1::WorkloadSpreadSubsetStatus {
            name: status.name.clone(),
            replicas: status.replicas,
            conditions: status.conditions.iter().map(condition_to_hub).collect(),
            missing_replicas: status.missing_replicas,
            creating_pods: status.creating_pods.clone(),
            deleting_pods: status.deleting_pods.clone(),
        })
        .collect()
}

fn subset_statuses_from_hub(
    statuses: &[v1beta1::WorkloadSpreadSubsetStatus],
) -> Vec<v1alpha1::WorkloadSpreadSubsetStatus> {
    statuses
        .iter()
        .map(|status| v1alpha1::WorkloadSpreadSubsetStatus {
            name: status.name.clone(),
            replicas: status.replicas,
            conditions: status.conditions.iter().map(condition_from_hub).collect(),
            missing_replicas: status.missing_replicas,
            creating_pods: status.creating_pods.clone(),
            deleting_pods: status.deleting_pods.clone(),
        })
        .collect()
}

fn condition_to_hub(condition: &v1alpha1::WorkloadSpreadSubsetCondition) -> Condition {
    Condition {
        type_: condition.type_.as_str().to_owned(),
        status: condition.status.clone(),
        last_transition_time: condition
            .last_transition_time
            .clone()
            .unwrap_or(Time(GO_ZERO_TIME)),
        reason: if condition.reason.is_empty() {
            MISSING_REASON.to_owned()
        } else {
            condition.reason.clone()
        },
        message: condition.message.clone(),
        observed_generation: None,
    }
}

fn condition_from_hub(condition: &Condition) -> v1alpha1::WorkloadSpreadSubsetCondition {
    v1alpha1::WorkloadSpreadSubsetCondition {
        type_: condition.type_.as_str().into(),
        status: condition.status.clone(),
        last_transition_time: Some(condition.last_transition_time.clone())
            .filter(|time| time.0 != GO_ZERO_TIME),
        reason: if condition.reason == MISSING_REASON {
            String::new()
        } else {
            condition.reason.clone()
        },
        message: condition.message.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::STASH_ANNOTATION;

    fn has_stash(beta: &v1beta1::WorkloadSpread) -> bool {
        beta.metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(STASH_ANNOTATION))
    }

    fn round_trip(alpha: &v1alpha1::WorkloadSpread) -> v1beta1::WorkloadSpread {
        let beta = v1beta1::WorkloadSpread::from(alpha);
        assert_eq!(&v1alpha1::WorkloadSpread::from(&beta), alpha, "round trip");
        beta
    }

    const ALPHA: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: WorkloadSpread
metadata: {name: ws-demo, namespace: default}
spec:
  targetRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: sample}
  targetFilter:
    selector: {matchLabels: {role: worker}}
    replicasPathList: [spec.replicas]
  subsets:
  - name: zone-a
    requiredNodeSelectorTerm:
      matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}]
    preferredNodeSelectorTerms:
    - weight: 50
      preference:
        matchExpressions: [{key: node-type, operator: In, values: [ecs]}]
    tolerations: [{key: dedicated, operator: Exists}]
    maxReplicas: 3
    patch: {metadata: {labels: {subset: zone-a}}}
  - name: zone-b
  scheduleStrategy:
    type: Adaptive
    adaptive: {disableSimulationSchedule: true, rescheduleCriticalSeconds: 30}
status:
  observedGeneration: 2
  subsetStatuses:
  - name: zone-a
    replicas: 3
    missingReplicas: 0
    conditions:
    - {type: Schedulable, status: "False", lastTransitionTime: "2024-05-01T10:00:00Z"}
    creatingPods: {ws-demo-abcde: "2024-05-01T10:00:01Z"}
  - name: zone-b
    replicas: 1
    missingReplicas: -1
  versionedSubsetStatuses:
    sample-6d9d5f8c4b:
    - name: zone-a
      replicas: 2
      missingReplicas: 1
      conditions: [{type: Schedulable, status: "True", reason: Recovered, message: room again}]
      deletingPods: {ws-demo-fghij: "2024-05-01T10:00:02Z"}
"#;

    fn alpha() -> v1alpha1::WorkloadSpread {
        serde_saphyr::from_str(ALPHA).unwrap()
    }

    #[test]
    fn subset_node_selectors_are_renamed() {
        let beta = round_trip(&alpha());
        assert!(!has_stash(&beta));
        let json = serde_json::to_value(&beta).unwrap();
        let subset = &json["spec"]["subsets"][0];
        assert_eq!(
            subset["requiredNodeSelector"]["matchExpressions"][0]["values"][0],
            "zone-a"
        );
        assert_eq!(subset["preferredNodeSelector"][0]["weight"], 50);
        assert!(subset.get("requiredNodeSelectorTerm").is_none());
        assert!(subset.get("preferredNodeSelectorTerms").is_none());
        assert_eq!(subset["maxReplicas"], 3);
        assert_eq!(subset["patch"]["metadata"]["labels"]["subset"], "zone-a");
        assert_eq!(json["spec"]["scheduleStrategy"]["type"], "Adaptive");
        assert_eq!(
            json["spec"]["targetFilter"]["replicasPathList"][0],
            "spec.replicas"
        );
    }

    #[test]
    fn subset_conditions_become_metav1_conditions() {
        let beta = round_trip(&alpha());
        assert!(!has_stash(&beta));
        let status = beta.status.as_ref().unwrap();
        let condition = &status.subset_statuses[0].conditions[0];
        assert_eq!(condition.type_, v1beta1::SUBSET_SCHEDULABLE);
        assert_eq!(condition.status, "False");
        assert_eq!(
            condition.reason, "Unknown",
            "metav1.Condition needs a reason"
        );
        assert_eq!(
            serde_json::to_value(&condition.last_transition_time).unwrap(),
            "2024-05-01T10:00:00Z"
        );
        let versioned = &status.versioned_subset_statuses["sample-6d9d5f8c4b"][0];
        assert_eq!(versioned.conditions[0].reason, "Recovered");
        assert_eq!(versioned.conditions[0].message, "room again");
        assert_eq!(
            serde_json::to_value(&versioned.conditions[0].last_transition_time).unwrap(),
            "0001-01-01T00:00:00Z",
            "an unset time is Go's zero time"
        );
        assert_eq!(status.subset_statuses[1].missing_replicas, -1);
    }

    #[test]
    fn conditions_that_look_like_the_fillers_need_the_stash() {
        let mut alpha = alpha();
        let status = alpha.status.as_mut().unwrap();
        status.subset_statuses[0].conditions[0].reason = "Unknown".into();
        let beta = round_trip(&alpha);
        assert!(
            has_stash(&beta),
            "a literal Unknown reason is told apart by the stash"
        );
    }

    #[test]
    fn v1beta1_conditions_lose_only_observed_generation() {
        let beta: v1beta1::WorkloadSpread = serde_saphyr::from_str(
            r#"
apiVersion: apps.kruise.io/v1beta1
kind: WorkloadSpread
metadata: {name: ws-demo, namespace: default}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  subsets:
  - name: ecs
    requiredNodeSelector:
      matchExpressions: [{key: type, operator: NotIn, values: [virtual-kubelet]}]
    preferredNodeSelector: [{weight: 1, preference: {matchExpressions: [{key: disk, operator: Exists}]}}]
status:
  subsetStatuses:
  - name: ecs
    replicas: 1
    missingReplicas: 2
    conditions:
    - type: Schedulable
      status: "False"
      reason: Unknown
      message: ""
      lastTransitionTime: "2024-05-01T10:00:00Z"
      observedGeneration: 4
"#,
        )
        .unwrap();
        let alpha = v1alpha1::WorkloadSpread::from(&beta);
        let subset = &alpha.spec.subsets[0];
        assert!(subset.required_node_selector_term.is_some());
        assert_eq!(subset.preferred_node_selector_terms.len(), 1);
        let condition = &alpha.status.as_ref().unwrap().subset_statuses[0].conditions[0];
        assert_eq!(
            condition.type_,
            v1alpha1::WorkloadSpreadSubsetConditionType::Schedulable
        );
        assert_eq!(condition.reason, "", "Unknown is the filler for no reason");
        let mut expected = beta.clone();
        expected.status.as_mut().unwrap().subset_statuses[0].conditions[0].observed_generation =
            None;
        assert_eq!(v1beta1::WorkloadSpread::from(&alpha), expected);
    }

    #[test]
    fn untyped_objects_convert_both_ways() {
        let object = serde_json::to_value(alpha()).unwrap();
        let beta =
            crate::convert::convert_object(object.clone(), "apps.kruise.io/v1beta1").unwrap();
        assert_eq!(beta["apiVersion"], "apps.kruise.io/v1beta1");
        assert!(beta["spec"]["subsets"][0]["requiredNodeSelector"].is_object());
        let back = crate::convert::convert_object(beta, "apps.kruise.io/v1alpha1").unwrap();
        assert_eq!(back, object);
    }
}
