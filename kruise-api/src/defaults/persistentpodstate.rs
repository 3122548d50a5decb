//! PersistentPodState defaults: the retention policy `WhenScaled`.
//!
//! Upstream has no mutating webhook for PersistentPodState; its controller reads an empty policy as
//! `WhenScaled`. Writing the value here makes that reading explicit without changing the meaning.

use super::ApplyDefaults;
use crate::apps::{v1alpha1, v1beta1};

impl ApplyDefaults for v1alpha1::PersistentPodState {
    fn apply_defaults(&mut self) {
        self.spec
            .persistent_pod_state_retention_policy
            .get_or_insert(v1alpha1::PersistentPodStateRetentionPolicyType::WhenScaled);
    }
}

impl ApplyDefaults for v1beta1::PersistentPodState {
    fn apply_defaults(&mut self) {
        self.spec
            .persistent_pod_state_retention_policy
            .get_or_insert(v1beta1::PersistentPodStateRetentionPolicyType::WhenScaled);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALPHA: &str = "
apiVersion: apps.kruise.io/v1alpha1
kind: PersistentPodState
metadata: {name: web, namespace: default}
spec:
  targetRef: {apiVersion: apps/v1, kind: StatefulSet, name: web}
  requiredPersistentTopology: {nodeTopologyKeys: [kubernetes.io/hostname]}
";

    #[test]
    fn retention_policy_defaults_to_when_scaled() {
        let mut alpha: v1alpha1::PersistentPodState = serde_saphyr::from_str(ALPHA).unwrap();
        alpha.apply_defaults();
        assert_eq!(
            alpha.spec.persistent_pod_state_retention_policy,
            Some(v1alpha1::PersistentPodStateRetentionPolicyType::WhenScaled)
        );
        let before = alpha.clone();
        alpha.apply_defaults();
        assert_eq!(alpha, before, "idempotent");

        let mut beta = v1beta1::PersistentPodState::from(
            &serde_saphyr::from_str::<v1alpha1::PersistentPodState>(ALPHA).unwrap(),
        );
        beta.apply_defaults();
        assert_eq!(
            beta,
            v1beta1::PersistentPodState::from(&before),
            "versions agree"
        );
    }

    #[test]
    fn set_policies_stay() {
        for policy in ["WhenDeleted", "Custom"] {
            let mut alpha: v1alpha1::PersistentPodState = serde_saphyr::from_str(&format!(
                "{ALPHA}  persistentPodStateRetentionPolicy: {policy}\n"
            ))
            .unwrap();
            alpha.apply_defaults();
            assert_eq!(
                alpha
                    .spec
                    .persistent_pod_state_retention_policy
                    .as_ref()
                    .map(v1alpha1::PersistentPodStateRetentionPolicyType::as_str),
                Some(policy)
            );
            let mut beta = v1beta1::PersistentPodState::from(&alpha);
            beta.apply_defaults();
            assert_eq!(
                beta.spec
                    .persistent_pod_state_retention_policy
                    .as_ref()
                    .map(v1beta1::PersistentPodStateRetentionPolicyType::as_str),
                Some(policy)
            );
        }
    }
}
