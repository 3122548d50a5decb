//! Advanced DaemonSet defaults (upstream `SetDefaultsDaemonSet`): burstReplicas 250, revisionHistoryLimit 10, a
//! `RollingUpdate` strategy of type `Standard` with maxUnavailable 1 and maxSurge 0 when neither is set. In
//! v1alpha1 the deprecated `Surging` type becomes `Standard`, with maxSurge 1 and maxUnavailable 0 where unset.
//!
//! Unlike the other workloads, upstream's DaemonSet webhook leaves the pod template alone, and so do these
//! defaults.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::ApplyDefaults;
use crate::apps::{v1alpha1, v1beta1};

/// The default `burstReplicas`.
const DEFAULT_BURST_REPLICAS: i32 = 250;

fn default_budgets(max_unavailable: &mut Option<IntOrString>, max_surge: &mut Option<IntOrString>) {
    if max_unavailable.is_none() && max_surge.is_none() {
        *max_unavailable = Some(IntOrString::Int(1));
        *max_surge = Some(IntOrString::Int(0));
    }
}

impl ApplyDefaults for v1alpha1::DaemonSet {
    fn apply_defaults(&mut self) {
        use v1alpha1::DaemonSetRollingUpdateType as RollingType;
        use v1alpha1::DaemonSetUpdateStrategyType as Type;
        let spec = &mut self.spec;
        spec.burst_replicas
            .get_or_insert(IntOrString::Int(DEFAULT_BURST_REPLICAS));
        let strategy = &mut spec.update_strategy;
        if *strategy.type_.get_or_insert(Type::RollingUpdate) == Type::RollingUpdate {
            let rolling = strategy.rolling_update.get_or_insert_with(Default::default);
            if rolling.type_ == Some(RollingType::Surging) {
                rolling.max_surge.get_or_insert(IntOrString::Int(1));
                rolling.max_unavailable.get_or_insert(IntOrString::Int(0));
            }
            if matches!(rolling.type_, None | Some(RollingType::Surging)) {
                rolling.type_ = Some(RollingType::Standard);
            }
            default_budgets(&mut rolling.max_unavailable, &mut rolling.max_surge);
        }
        spec.revision_history_limit.get_or_insert(10);
    }
}

impl ApplyDefaults for v1beta1::DaemonSet {
    fn apply_defaults(&mut self) {
        use v1beta1::DaemonSetUpdateStrategyType as Type;
        let spec = &mut self.spec;
        spec.burst_replicas
            .get_or_insert(IntOrString::Int(DEFAULT_BURST_REPLICAS));
        let strategy = &mut spec.update_strategy;
        if *strategy.type_.get_or_insert(Type::RollingUpdate) == Type::RollingUpdate {
            let rolling = strategy.rolling_update.get_or_insert_with(Default::default);
            rolling
                .type_
                .get_or_insert(v1beta1::DaemonSetRollingUpdateType::Standard);
            default_budgets(&mut rolling.max_unavailable, &mut rolling.max_surge);
        }
        spec.revision_history_limit.get_or_insert(10);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "
apiVersion: apps.kruise.io/v1alpha1
kind: DaemonSet
metadata: {name: nginx}
spec:
  selector: {matchLabels: {app: nginx}}
  template: {spec: {containers: [{name: nginx, image: 'nginx:1.25'}]}}
";

    fn alpha(extra: &str) -> v1alpha1::DaemonSet {
        serde_saphyr::from_str(&format!("{MINIMAL}{extra}")).unwrap()
    }

    fn rolling(ds: &v1alpha1::DaemonSet) -> &v1alpha1::RollingUpdateDaemonSet {
        ds.spec.update_strategy.rolling_update.as_ref().unwrap()
    }

    #[test]
    fn v1alpha1_defaults() {
        let mut ds = alpha("");
        ds.apply_defaults();
        assert_eq!(ds.spec.burst_replicas, Some(IntOrString::Int(250)));
        assert_eq!(ds.spec.revision_history_limit, Some(10));
        assert_eq!(
            ds.spec.update_strategy.type_,
            Some(v1alpha1::DaemonSetUpdateStrategyType::RollingUpdate)
        );
        let rolling = rolling(&ds);
        assert_eq!(
            rolling.type_,
            Some(v1alpha1::DaemonSetRollingUpdateType::Standard)
        );
        assert_eq!(rolling.max_unavailable, Some(IntOrString::Int(1)));
        assert_eq!(rolling.max_surge, Some(IntOrString::Int(0)));
        assert_eq!(rolling.partition, None);
        assert_eq!(
            ds.spec.template.spec.as_ref().unwrap().containers[0].image_pull_policy,
            None,
            "the pod template is not defaulted"
        );
        let before = ds.clone();
        ds.apply_defaults();
        assert_eq!(ds, before, "idempotent");
    }

    #[test]
    fn surging_becomes_standard_with_surge() {
        let mut ds = alpha("  updateStrategy: {rollingUpdate: {rollingUpdateType: Surging}}\n");
        ds.apply_defaults();
        let surging = rolling(&ds);
        assert_eq!(
            surging.type_,
            Some(v1alpha1::DaemonSetRollingUpdateType::Standard)
        );
        assert_eq!(surging.max_surge, Some(IntOrString::Int(1)));
        assert_eq!(surging.max_unavailable, Some(IntOrString::Int(0)));

        let mut kept = alpha(
            "  updateStrategy: {rollingUpdate: {rollingUpdateType: Surging, maxSurge: '10%'}}\n",
        );
        kept.apply_defaults();
        assert_eq!(
            rolling(&kept).max_surge,
            Some(IntOrString::String("10%".into()))
        );
        assert_eq!(rolling(&kept).max_unavailable, Some(IntOrString::Int(0)));
    }

    #[test]
    fn set_fields_are_kept() {
        let mut ds = alpha(
            "  burstReplicas: 10%\n  revisionHistoryLimit: 3\n  updateStrategy: {rollingUpdate: {rollingUpdateType: InPlaceIfPossible, maxSurge: 2}}\n",
        );
        ds.apply_defaults();
        assert_eq!(
            ds.spec.burst_replicas,
            Some(IntOrString::String("10%".into()))
        );
        assert_eq!(ds.spec.revision_history_limit, Some(3));
        let rolling = rolling(&ds);
        assert_eq!(
            rolling.type_,
            Some(v1alpha1::DaemonSetRollingUpdateType::InPlaceIfPossible)
        );
        assert_eq!(rolling.max_surge, Some(IntOrString::Int(2)));
        assert_eq!(
            rolling.max_unavailable, None,
            "only defaulted when both are unset"
        );

        let mut on_delete = alpha("  updateStrategy: {type: OnDelete}\n");
        on_delete.apply_defaults();
        assert_eq!(on_delete.spec.update_strategy.rolling_update, None);
    }

    #[test]
    fn v1beta1_defaults_agree_with_converted_v1alpha1_defaults() {
        for extra in [
            "",
            "  updateStrategy: {rollingUpdate: {rollingUpdateType: Surging}}\n",
            "  updateStrategy: {type: OnDelete}\n",
        ] {
            let ds = alpha(extra);
            let mut defaulted_then_converted = ds.clone();
            defaulted_then_converted.apply_defaults();
            let defaulted_then_converted = v1beta1::DaemonSet::from(defaulted_then_converted);
            let mut converted_then_defaulted = v1beta1::DaemonSet::from(&ds);
            converted_then_defaulted.apply_defaults();
            let before = converted_then_defaulted.clone();
            converted_then_defaulted.apply_defaults();
            assert_eq!(converted_then_defaulted, before, "idempotent");
            if extra.contains("Surging") {
                // Converting first loses Surging, so its surge defaults do not apply.
                continue;
            }
            assert_eq!(
                converted_then_defaulted, defaulted_then_converted,
                "{extra}"
            );
        }
    }
}
