//! Advanced StatefulSet defaults (upstream `apis/apps/defaults/v1beta1.go`): replicas 1, revisionHistoryLimit 10,
//! `OrderedReady`, a `RollingUpdate` strategy with partition 0, maxUnavailable 1, podUpdatePolicy `ReCreate` and
//! minReadySeconds 0, the pod template and volume claim templates, and, depending on feature gates, the claim
//! retention policy (`Retain`/`Retain`) and the claim update strategy (`OnDelete`).
//!
//! [`ApplyDefaults`] uses upstream's default gates; [`apply_statefulset_defaults`] takes them explicitly.
//! v1alpha1 objects get the same defaults as v1beta1 ones, minus the fields v1alpha1 does not have (upstream
//! defaults them through the v1beta1 form).

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::ApplyDefaults;
use super::cloneset::apply_template_defaults;
use crate::apps::{v1alpha1, v1beta1};

/// The feature gates that change Advanced StatefulSet defaulting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatefulSetDefaultsOptions {
    /// Gate `StatefulSetAutoDeletePVC` (upstream default: on): default both claim retention policies to
    /// `Retain`.
    pub auto_delete_pvc: bool,
    /// Gate `StatefulSetAutoResizePVCGate` (upstream default: off): default `volumeClaimUpdateStrategy.type`
    /// to `OnDelete`.
    pub auto_resize_pvc: bool,
}

impl Default for StatefulSetDefaultsOptions {
    fn default() -> Self {
        Self {
            auto_delete_pvc: true,
            auto_resize_pvc: false,
        }
    }
}

/// Applies the v1beta1 Advanced StatefulSet defaults under the given feature gates.
pub fn apply_statefulset_defaults(
    statefulset: &mut v1beta1::StatefulSet,
    options: StatefulSetDefaultsOptions,
) {
    use v1beta1::PersistentVolumeClaimRetentionPolicyType as Retention;
    let spec = &mut statefulset.spec;
    default_common(
        &mut spec.pod_management_policy,
        &mut spec.update_strategy,
        &mut spec.replicas,
        &mut spec.revision_history_limit,
    );
    if options.auto_delete_pvc {
        let policy = spec
            .persistent_volume_claim_retention_policy
            .get_or_insert_with(Default::default);
        policy.when_deleted.get_or_insert(Retention::Retain);
        policy.when_scaled.get_or_insert(Retention::Retain);
    }
    if options.auto_resize_pvc {
        spec.volume_claim_update_strategy
            .type_
            .get_or_insert(v1beta1::VolumeClaimUpdateStrategyType::OnDelete);
    }
    apply_template_defaults(&mut spec.template, &mut spec.volume_claim_templates);
}

/// The defaults both versions share.
fn default_common(
    pod_management_policy: &mut Option<v1beta1::PodManagementPolicy>,
    update_strategy: &mut v1beta1::StatefulSetUpdateStrategy,
    replicas: &mut Option<i32>,
    revision_history_limit: &mut Option<i32>,
) {
    use v1beta1::StatefulSetUpdateStrategyType as Type;
    pod_management_policy.get_or_insert(v1beta1::PodManagementPolicy::OrderedReady);
    if *update_strategy.type_.get_or_insert(Type::RollingUpdate) == Type::RollingUpdate {
        let rolling = update_strategy
            .rolling_update
            .get_or_insert_with(Default::default);
        rolling.partition.get_or_insert(0);
        rolling.max_unavailable.get_or_insert(IntOrString::Int(1));
        rolling
            .pod_update_policy
            .get_or_insert(v1beta1::StatefulSetPodUpdatePolicy::ReCreate);
        rolling.min_ready_seconds.get_or_insert(0);
    }
    replicas.get_or_insert(1);
    revision_history_limit.get_or_insert(10);
}

impl ApplyDefaults for v1beta1::StatefulSet {
    fn apply_defaults(&mut self) {
        apply_statefulset_defaults(self, StatefulSetDefaultsOptions::default());
    }
}

impl ApplyDefaults for v1alpha1::StatefulSet {
    fn apply_defaults(&mut self) {
        let spec = &mut self.spec;
        default_common(
            &mut spec.pod_management_policy,
            &mut spec.update_strategy,
            &mut spec.replicas,
            &mut spec.revision_history_limit,
        );
        apply_template_defaults(&mut spec.template, &mut spec.volume_claim_templates);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "
apiVersion: apps.kruise.io/v1beta1
kind: StatefulSet
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template: {spec: {containers: [{name: main, image: 'nginx:1.25'}]}}
  volumeClaimTemplates: [{metadata: {name: www}}]
";

    fn beta(yaml: &str) -> v1beta1::StatefulSet {
        serde_saphyr::from_str(yaml).unwrap()
    }

    #[test]
    fn v1beta1_defaults() {
        let mut sts = beta(MINIMAL);
        sts.apply_defaults();
        let spec = &sts.spec;
        assert_eq!(spec.replicas, Some(1));
        assert_eq!(spec.revision_history_limit, Some(10));
        assert_eq!(
            spec.pod_management_policy,
            Some(v1beta1::PodManagementPolicy::OrderedReady)
        );
        assert_eq!(
            spec.update_strategy.type_,
            Some(v1beta1::StatefulSetUpdateStrategyType::RollingUpdate)
        );
        let rolling = spec.update_strategy.rolling_update.as_ref().unwrap();
        assert_eq!(rolling.partition, Some(0));
        assert_eq!(rolling.max_unavailable, Some(IntOrString::Int(1)));
        assert_eq!(
            rolling.pod_update_policy,
            Some(v1beta1::StatefulSetPodUpdatePolicy::ReCreate)
        );
        assert_eq!(rolling.min_ready_seconds, Some(0));
        let retention = spec
            .persistent_volume_claim_retention_policy
            .as_ref()
            .unwrap();
        assert_eq!(
            (
                retention.when_deleted.as_ref().unwrap().as_str(),
                retention.when_scaled.as_ref().unwrap().as_str()
            ),
            ("Retain", "Retain")
        );
        assert_eq!(
            spec.volume_claim_update_strategy.type_, None,
            "StatefulSetAutoResizePVCGate is off by default"
        );
        let main = &spec.template.spec.as_ref().unwrap().containers[0];
        assert_eq!(main.image_pull_policy.as_deref(), Some("Always"));
        assert_eq!(
            spec.volume_claim_templates[0]
                .status
                .as_ref()
                .unwrap()
                .phase
                .as_deref(),
            Some("Pending")
        );
        let before = sts.clone();
        sts.apply_defaults();
        assert_eq!(sts, before, "idempotent");
    }

    #[test]
    fn set_fields_are_kept_and_gates_switch_defaults() {
        let mut sts = beta(&format!(
            "{MINIMAL}  replicas: 3\n  podManagementPolicy: Parallel\n  persistentVolumeClaimRetentionPolicy: {{whenScaled: Delete}}\n  updateStrategy:\n    rollingUpdate: {{maxUnavailable: '50%', podUpdatePolicy: InPlaceIfPossible}}\n"
        ));
        apply_statefulset_defaults(
            &mut sts,
            StatefulSetDefaultsOptions {
                auto_delete_pvc: true,
                auto_resize_pvc: true,
            },
        );
        let spec = &sts.spec;
        assert_eq!(spec.replicas, Some(3));
        assert_eq!(
            spec.pod_management_policy,
            Some(v1beta1::PodManagementPolicy::Parallel)
        );
        let rolling = spec.update_strategy.rolling_update.as_ref().unwrap();
        assert_eq!(
            rolling.max_unavailable,
            Some(IntOrString::String("50%".into()))
        );
        assert_eq!(
            rolling.pod_update_policy,
            Some(v1beta1::StatefulSetPodUpdatePolicy::InPlaceIfPossible)
        );
        let retention = spec
            .persistent_volume_claim_retention_policy
            .as_ref()
            .unwrap();
        assert_eq!(
            retention.when_scaled,
            Some(v1beta1::PersistentVolumeClaimRetentionPolicyType::Delete)
        );
        assert_eq!(
            retention.when_deleted,
            Some(v1beta1::PersistentVolumeClaimRetentionPolicyType::Retain)
        );
        assert_eq!(
            spec.volume_claim_update_strategy.type_,
            Some(v1beta1::VolumeClaimUpdateStrategyType::OnDelete)
        );

        let mut no_gates = beta(MINIMAL);
        apply_statefulset_defaults(
            &mut no_gates,
            StatefulSetDefaultsOptions {
                auto_delete_pvc: false,
                auto_resize_pvc: false,
            },
        );
        assert_eq!(no_gates.spec.persistent_volume_claim_retention_policy, None);

        let mut on_delete = beta(&format!("{MINIMAL}  updateStrategy: {{type: OnDelete}}\n"));
        on_delete.apply_defaults();
        assert_eq!(
            on_delete.spec.update_strategy.rolling_update, None,
            "no rolling update parameters for OnDelete"
        );
    }

    #[test]
    fn v1alpha1_defaults_agree_with_v1beta1_ones() {
        let alpha: v1alpha1::StatefulSet =
            serde_saphyr::from_str(&MINIMAL.replace("v1beta1", "v1alpha1")).unwrap();
        let mut defaulted_then_converted = alpha.clone();
        defaulted_then_converted.apply_defaults();
        let before = defaulted_then_converted.clone();
        defaulted_then_converted.apply_defaults();
        assert_eq!(defaulted_then_converted, before, "idempotent");
        let defaulted_then_converted = v1beta1::StatefulSet::from(&defaulted_then_converted);
        let mut converted_then_defaulted = v1beta1::StatefulSet::from(&alpha);
        apply_statefulset_defaults(
            &mut converted_then_defaulted,
            StatefulSetDefaultsOptions {
                auto_delete_pvc: false,
                auto_resize_pvc: false,
            },
        );
        assert_eq!(converted_then_defaulted, defaulted_then_converted);
    }
}
