//! ResourceDistribution v1alpha1 ⇄ v1beta1 (upstream `resourcedistribution_conversion.go`): two renames, nothing else.
//!
//! * `spec.targets.namespaceLabelSelector` ⇄ `spec.targets.namespaceSelector`.
//! * `status.conditions[].failedNamespace` ⇄ `status.conditions[].failedNamespaces` (same list).
//!
//! Every other field keeps its name and value, so the mapping is a bijection: no stash, nothing lost in
//! either direction.

use super::{HubConversion, hub_conversion};
use crate::apps::{v1alpha1, v1beta1};

impl HubConversion for v1alpha1::ResourceDistribution {
    type Hub = v1beta1::ResourceDistribution;

    fn to_hub_fields(&self) -> v1beta1::ResourceDistribution {
        let targets = &self.spec.targets;
        v1beta1::ResourceDistribution {
            metadata: self.metadata.clone(),
            spec: v1beta1::ResourceDistributionSpec {
                resource: self.spec.resource.clone(),
                targets: v1beta1::ResourceDistributionTargets {
                    all_namespaces: targets.all_namespaces,
                    excluded_namespaces: targets.excluded_namespaces.clone(),
                    included_namespaces: targets.included_namespaces.clone(),
                    namespace_selector: targets.namespace_label_selector.clone(),
                },
            },
            status: self
                .status
                .as_ref()
                .map(|status| v1beta1::ResourceDistributionStatus {
                    desired: status.desired,
                    succeeded: status.succeeded,
                    failed: status.failed,
                    observed_generation: status.observed_generation,
                    conditions: status
                        .conditions
                        .iter()
                        .map(|condition| v1beta1::ResourceDistributionCondition {
                            type_: condition.type_.clone(),
                            status: condition.status.clone(),
                            last_transition_time: condition.last_transition_time.clone(),
                            reason: condition.reason.clone(),
                            failed_namespaces: condition.failed_namespaces.clone(),
                        })
                        .collect(),
                }),
        }
    }

    fn from_hub_fields(hub: &v1beta1::ResourceDistribution) -> Self {
        let targets = &hub.spec.targets;
        v1alpha1::ResourceDistribution {
            metadata: hub.metadata.clone(),
            spec: v1alpha1::ResourceDistributionSpec {
                resource: hub.spec.resource.clone(),
                targets: v1alpha1::ResourceDistributionTargets {
                    all_namespaces: targets.all_namespaces,
                    excluded_namespaces: targets.excluded_namespaces.clone(),
                    included_namespaces: targets.included_namespaces.clone(),
                    namespace_label_selector: targets.namespace_selector.clone(),
                },
            },
            status: hub
                .status
                .as_ref()
                .map(|status| v1alpha1::ResourceDistributionStatus {
                    desired: status.desired,
                    succeeded: status.succeeded,
                    failed: status.failed,
                    observed_generation: status.observed_generation,
                    conditions: status
                        .conditions
                        .iter()
                        .map(|condition| v1alpha1::ResourceDistributionCondition {
                            type_: condition.type_.clone(),
                            status: condition.status.clone(),
                            last_transition_time: condition.last_transition_time.clone(),
                            reason: condition.reason.clone(),
                            failed_namespaces: condition.failed_namespaces.clone(),
                        })
                        .collect(),
                }),
        }
    }
}

hub_conversion!(v1alpha1::ResourceDistribution => v1beta1::ResourceDistribution);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::STASH_ANNOTATION;

    fn round_trip(alpha: &v1alpha1::ResourceDistribution) -> v1beta1::ResourceDistribution {
        let beta = v1beta1::ResourceDistribution::from(alpha);
        assert!(
            beta.metadata
                .annotations
                .as_ref()
                .is_none_or(|a| !a.contains_key(STASH_ANNOTATION)),
            "no stash needed"
        );
        assert_eq!(&v1alpha1::ResourceDistribution::from(&beta), alpha);
        beta
    }

    const ALPHA: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: ResourceDistribution
metadata: {name: demo, labels: {app: demo}}
spec:
  resource:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: demo}
    data: {k: v}
  targets:
    allNamespaces: true
    includedNamespaces: {list: [{name: ns-1}]}
    excludedNamespaces: {list: [{name: ns-2}]}
    namespaceLabelSelector: {matchLabels: {team: platform}}
status:
  desired: 3
  succeeded: 2
  failed: 1
  observedGeneration: 7
  conditions:
  - type: CreateResourceFailed
    status: "True"
    reason: create failed
    lastTransitionTime: "2024-05-01T10:00:00Z"
    failedNamespace: [ns-2]
"#;

    #[test]
    fn namespace_label_selector_becomes_namespace_selector() {
        let alpha: v1alpha1::ResourceDistribution = serde_saphyr::from_str(ALPHA).unwrap();
        let beta = round_trip(&alpha);
        let json = serde_json::to_value(&beta).unwrap();
        let targets = &json["spec"]["targets"];
        assert_eq!(
            targets["namespaceSelector"]["matchLabels"]["team"],
            "platform"
        );
        assert!(targets.get("namespaceLabelSelector").is_none());
        assert_eq!(targets["allNamespaces"], true);
        assert_eq!(targets["includedNamespaces"]["list"][0]["name"], "ns-1");
        assert_eq!(targets["excludedNamespaces"]["list"][0]["name"], "ns-2");
        assert_eq!(json["spec"]["resource"]["data"]["k"], "v");
    }

    #[test]
    fn failed_namespace_becomes_failed_namespaces() {
        let alpha: v1alpha1::ResourceDistribution = serde_saphyr::from_str(ALPHA).unwrap();
        let beta = round_trip(&alpha);
        let json = serde_json::to_value(&beta).unwrap();
        let condition = &json["status"]["conditions"][0];
        assert_eq!(condition["failedNamespaces"], serde_json::json!(["ns-2"]));
        assert!(condition.get("failedNamespace").is_none());
        assert_eq!(condition["type"], "CreateResourceFailed");
        assert_eq!(json["status"]["observedGeneration"], 7);
    }

    #[test]
    fn v1beta1_names_come_back_as_v1alpha1_names() {
        let beta: v1beta1::ResourceDistribution = serde_saphyr::from_str(
            r#"
apiVersion: apps.kruise.io/v1beta1
kind: ResourceDistribution
metadata: {name: demo, annotations: {keep: me}}
spec:
  resource: {apiVersion: v1, kind: Secret, metadata: {name: demo}, type: Opaque}
  targets: {namespaceSelector: {matchLabels: {team: platform}}}
status:
  conditions:
  - {type: NamespaceNotExists, status: "True", failedNamespaces: [ns-a, ns-b]}
"#,
        )
        .unwrap();
        let alpha = v1alpha1::ResourceDistribution::from(&beta);
        let json = serde_json::to_value(&alpha).unwrap();
        assert_eq!(
            json["spec"]["targets"]["namespaceLabelSelector"]["matchLabels"]["team"],
            "platform"
        );
        assert_eq!(
            json["status"]["conditions"][0]["failedNamespace"],
            serde_json::json!(["ns-a", "ns-b"])
        );
        assert_eq!(alpha.metadata.annotations.as_ref().unwrap()["keep"], "me");
        assert_eq!(v1beta1::ResourceDistribution::from(&alpha), beta);
    }
}
