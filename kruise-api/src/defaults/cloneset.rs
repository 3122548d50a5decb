//! CloneSet defaults (upstream `SetDefaultsCloneSet`): replicas 1, revisionHistoryLimit 10, the pod template and
//! volume claim templates, update type ReCreate, partition 0, maxUnavailable `20%`, maxSurge 0, and an empty
//! `inPlaceUpdateStrategy` for the in-place policies.

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::ApplyDefaults;
use super::pod::{
    PodDefaultsOptions, apply_pod_spec_defaults, apply_volume_claim_template_defaults,
};
use crate::apps::{v1alpha1, v1beta1};
use crate::keys;

/// Defaults of a workload's pod template and volume claim templates.
pub(crate) fn apply_template_defaults(
    template: &mut PodTemplateSpec,
    claims: &mut [PersistentVolumeClaim],
) {
    apply_pod_spec_defaults(
        template.spec.get_or_insert_with(Default::default),
        PodDefaultsOptions::default(),
    );
    for claim in claims {
        apply_volume_claim_template_defaults(claim);
    }
}

fn default_rollout_budgets(
    partition: &mut Option<IntOrString>,
    max_unavailable: &mut Option<IntOrString>,
    max_surge: &mut Option<IntOrString>,
) {
    partition.get_or_insert(IntOrString::Int(0));
    max_unavailable.get_or_insert_with(|| {
        IntOrString::String(keys::cloneset::DEFAULT_MAX_UNAVAILABLE.to_owned())
    });
    max_surge.get_or_insert(IntOrString::Int(0));
}

impl ApplyDefaults for v1alpha1::CloneSet {
    fn apply_defaults(&mut self) {
        use v1alpha1::CloneSetUpdateStrategyType as Type;
        let spec = &mut self.spec;
        spec.replicas.get_or_insert(1);
        spec.revision_history_limit.get_or_insert(10);
        apply_template_defaults(&mut spec.template, &mut spec.volume_claim_templates);
        let strategy = &mut spec.update_strategy;
        match strategy.type_.get_or_insert(Type::ReCreate) {
            Type::InPlaceIfPossible | Type::InPlaceOnly => {
                strategy
                    .in_place_update_strategy
                    .get_or_insert_with(Default::default);
            }
            _ => {}
        }
        default_rollout_budgets(
            &mut strategy.partition,
            &mut strategy.max_unavailable,
            &mut strategy.max_surge,
        );
    }
}

impl ApplyDefaults for v1beta1::CloneSet {
    fn apply_defaults(&mut self) {
        use v1beta1::{CloneSetPodUpdatePolicy as Policy, CloneSetUpdateStrategyType as Type};
        let spec = &mut self.spec;
        spec.replicas.get_or_insert(1);
        spec.revision_history_limit.get_or_insert(10);
        apply_template_defaults(&mut spec.template, &mut spec.volume_claim_templates);
        let strategy = &mut spec.update_strategy;
        if *strategy.type_.get_or_insert(Type::RollingUpdate) != Type::RollingUpdate {
            return;
        }
        let rolling = strategy.rolling_update.get_or_insert_with(Default::default);
        match rolling.pod_update_policy.get_or_insert(Policy::ReCreate) {
            Policy::InPlaceIfPossible | Policy::InPlaceOnly => {
                rolling
                    .in_place_update_strategy
                    .get_or_insert_with(Default::default);
            }
            _ => {}
        }
        default_rollout_budgets(
            &mut rolling.partition,
            &mut rolling.max_unavailable,
            &mut rolling.max_surge,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1alpha1_defaults() {
        let mut cs: v1alpha1::CloneSet = serde_saphyr::from_str(
            "
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: demo}
spec:
  selector: {matchLabels: {app: demo}}
  template: {spec: {containers: [{name: main, image: nginx}]}}
  volumeClaimTemplates: [{metadata: {name: data}}]
  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 1}
",
        )
        .unwrap();
        cs.apply_defaults();
        let strategy = &cs.spec.update_strategy;
        assert_eq!(cs.spec.replicas, Some(1));
        assert_eq!(cs.spec.revision_history_limit, Some(10));
        assert_eq!(strategy.partition, Some(IntOrString::Int(0)));
        assert_eq!(
            strategy.max_unavailable,
            Some(IntOrString::Int(1)),
            "set values stay"
        );
        assert_eq!(strategy.max_surge, Some(IntOrString::Int(0)));
        assert_eq!(strategy.in_place_update_strategy, Some(Default::default()));
        assert_eq!(
            cs.spec.volume_claim_templates[0]
                .status
                .as_ref()
                .unwrap()
                .phase
                .as_deref(),
            Some("Pending")
        );
        let before = cs.clone();
        cs.apply_defaults();
        assert_eq!(cs, before, "idempotent");

        let mut recreate: v1alpha1::CloneSet = serde_saphyr::from_str(
            "{apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, metadata: {name: d}, spec: {selector: {}, template: {}}}",
        )
        .unwrap();
        recreate.apply_defaults();
        assert_eq!(
            recreate.spec.update_strategy.type_,
            Some(v1alpha1::CloneSetUpdateStrategyType::ReCreate)
        );
        assert_eq!(recreate.spec.update_strategy.in_place_update_strategy, None);
        assert_eq!(
            recreate.spec.update_strategy.max_unavailable,
            Some(IntOrString::String("20%".into()))
        );
    }

    #[test]
    fn v1beta1_defaults_agree_with_converted_v1alpha1_defaults() {
        let alpha: v1alpha1::CloneSet = serde_saphyr::from_str(
            "
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: demo}
spec:
  selector: {matchLabels: {app: demo}}
  template: {spec: {containers: [{name: main, image: nginx}]}}
  updateStrategy: {type: InPlaceOnly}
",
        )
        .unwrap();
        let mut defaulted_then_converted = alpha.clone();
        defaulted_then_converted.apply_defaults();
        let defaulted_then_converted = v1beta1::CloneSet::from(defaulted_then_converted);
        let mut converted_then_defaulted = v1beta1::CloneSet::from(&alpha);
        converted_then_defaulted.apply_defaults();
        assert_eq!(converted_then_defaulted, defaulted_then_converted);
    }
}
