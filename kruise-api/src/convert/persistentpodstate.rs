//! PersistentPodState v1alpha1 ⇄ v1beta1 (upstream `apis/apps/v1alpha1/persistent_pod_state_conversion.go`).
//!
//! * `requiredPersistentTopology.nodeTopologyKeys` ⇄ `requiredPersistentTopology.keys`, and the same inside
//!   every `preferredPersistentTopology[].preference`.
//! * `persistentPodStateRetentionPolicy` keeps its value (v1beta1's CRD only accepts `WhenScaled` and
//!   `WhenDeleted`; other v1alpha1 values are carried over as they are).
//! * Everything else, status included, is identical.
//!
//! The mapping is a bijection: no stash, nothing lost in either direction.

use super::{HubConversion, hub_conversion};
use crate::apps::{v1alpha1, v1beta1};

impl HubConversion for v1alpha1::PersistentPodState {
    type Hub = v1beta1::PersistentPodState;

    fn to_hub_fields(&self) -> v1beta1::PersistentPodState {
        let spec = &self.spec;
        let term = |term: &v1alpha1::NodeTopologyTerm| v1beta1::NodeTopologyTerm {
            keys: term.node_topology_keys.clone(),
        };
        v1beta1::PersistentPodState {
            metadata: self.metadata.clone(),
            spec: v1beta1::PersistentPodStateSpec {
                target_reference: spec.target_reference.clone(),
                persistent_pod_annotations: spec.persistent_pod_annotations.clone(),
                required_persistent_topology: spec.required_persistent_topology.as_ref().map(term),
                preferred_persistent_topology: spec
                    .preferred_persistent_topology
                    .iter()
                    .map(|preferred| v1beta1::PreferredTopologyTerm {
                        weight: preferred.weight,
                        preference: term(&preferred.preference),
                    })
                    .collect(),
                persistent_pod_state_retention_policy: spec
                    .persistent_pod_state_retention_policy
                    .as_ref()
                    .map(|policy| policy.as_str().into()),
            },
            status: self.status.clone(),
        }
    }

    fn from_hub_fields(hub: &v1beta1::PersistentPodState) -> Self {
        let spec = &hub.spec;
        let term = |term: &v1beta1::NodeTopologyTerm| v1alpha1::NodeTopologyTerm {
            node_topology_keys: term.keys.clone(),
        };
        v1alpha1::PersistentPodState {
            metadata: hub.metadata.clone(),
            spec: v1alpha1::PersistentPodStateSpec {
                target_reference: spec.target_reference.clone(),
                persistent_pod_annotations: spec.persistent_pod_annotations.clone(),
                required_persistent_topology: spec.required_persistent_topology.as_ref().map(term),
                preferred_persistent_topology: spec
                    .preferred_persistent_topology
                    .iter()
                    .map(|preferred| v1alpha1::PreferredTopologyTerm {
                        weight: preferred.weight,
                        preference: term(&preferred.preference),
                    })
                    .collect(),
                persistent_pod_state_retention_policy: spec
                    .persistent_pod_state_retention_policy
                    .as_ref()
                    .map(|policy| policy.as_str().into()),
            },
            status: hub.status.clone(),
        }
    }
}

hub_conversion!(v1alpha1::PersistentPodState => v1beta1::PersistentPodState);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::STASH_ANNOTATION;

    const ALPHA: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: PersistentPodState
metadata: {name: web, namespace: default}
spec:
  targetRef: {apiVersion: apps/v1, kind: StatefulSet, name: web}
  persistentPodAnnotations: [{key: cni.projectcalico.org/podIP}]
  requiredPersistentTopology: {nodeTopologyKeys: [kubernetes.io/hostname]}
  preferredPersistentTopology:
  - weight: 100
    preference: {nodeTopologyKeys: [topology.kubernetes.io/zone]}
  - weight: 50
    preference: {nodeTopologyKeys: []}
  persistentPodStateRetentionPolicy: WhenDeleted
status:
  observedGeneration: 2
  podStates:
    web-0:
      nodeName: node-1
      nodeTopologyLabels: {kubernetes.io/hostname: node-1}
      annotations: {cni.projectcalico.org/podIP: 10.0.0.8/32}
"#;

    #[test]
    fn node_topology_keys_become_keys() {
        let alpha: v1alpha1::PersistentPodState = serde_saphyr::from_str(ALPHA).unwrap();
        let beta = v1beta1::PersistentPodState::from(&alpha);
        assert!(
            beta.metadata
                .annotations
                .as_ref()
                .is_none_or(|a| !a.contains_key(STASH_ANNOTATION))
        );
        assert_eq!(v1alpha1::PersistentPodState::from(&beta), alpha);
        let json = serde_json::to_value(&beta).unwrap();
        let spec = &json["spec"];
        assert_eq!(
            spec["requiredPersistentTopology"],
            serde_json::json!({"keys": ["kubernetes.io/hostname"]})
        );
        assert_eq!(
            spec["preferredPersistentTopology"][0],
            serde_json::json!({"weight": 100, "preference": {"keys": ["topology.kubernetes.io/zone"]}})
        );
        assert_eq!(
            spec["preferredPersistentTopology"][1]["preference"],
            serde_json::json!({"keys": []}),
            "an empty key list stays present"
        );
        assert_eq!(spec["persistentPodStateRetentionPolicy"], "WhenDeleted");
        assert_eq!(
            json["status"]["podStates"]["web-0"]["nodeName"], "node-1",
            "status is carried over unchanged"
        );
    }

    #[test]
    fn keys_come_back_as_node_topology_keys() {
        let beta: v1beta1::PersistentPodState = serde_saphyr::from_str(
            r#"
apiVersion: apps.kruise.io/v1beta1
kind: PersistentPodState
metadata: {name: web, namespace: ns}
spec:
  targetRef: {apiVersion: apps/v1, kind: StatefulSet, name: web}
  requiredPersistentTopology: {keys: [kubernetes.io/hostname, topology.kubernetes.io/zone]}
  preferredPersistentTopology: [{weight: 100, preference: {keys: [topology.kubernetes.io/zone]}}]
  persistentPodStateRetentionPolicy: WhenScaled
"#,
        )
        .unwrap();
        let alpha = v1alpha1::PersistentPodState::from(&beta);
        assert_eq!(
            alpha
                .spec
                .required_persistent_topology
                .as_ref()
                .unwrap()
                .node_topology_keys,
            ["kubernetes.io/hostname", "topology.kubernetes.io/zone"]
        );
        assert_eq!(
            alpha.spec.preferred_persistent_topology[0]
                .preference
                .node_topology_keys,
            ["topology.kubernetes.io/zone"]
        );
        assert_eq!(
            alpha.spec.persistent_pod_state_retention_policy,
            Some(v1alpha1::PersistentPodStateRetentionPolicyType::WhenScaled)
        );
        assert_eq!(v1beta1::PersistentPodState::from(&alpha), beta);
    }

    #[test]
    fn unknown_retention_policies_are_kept() {
        let mut alpha: v1alpha1::PersistentPodState = serde_saphyr::from_str(ALPHA).unwrap();
        alpha.spec.persistent_pod_state_retention_policy = Some("Never".into());
        let beta = v1beta1::PersistentPodState::from(&alpha);
        assert_eq!(
            beta.spec
                .persistent_pod_state_retention_policy
                .as_ref()
                .map(v1beta1::PersistentPodStateRetentionPolicyType::as_str),
            Some("Never")
        );
        assert_eq!(v1alpha1::PersistentPodState::from(&beta), alpha);
    }
}
