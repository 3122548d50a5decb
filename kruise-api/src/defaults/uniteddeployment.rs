//! UnitedDeployment defaults (upstream `SetDefaultsUnitedDeployment`): replicas 1, revisionHistoryLimit 10, the
//! `Manual` update strategy with an empty `manualUpdate`, the pod template and volume claim templates of a
//! StatefulSet template, and minReplicas 0 for every subset without one when some subset has minReplicas or
//! maxReplicas and none has replicas.
//!
//! Upstream's webhook leaves `replicas` unset and its controller reads an unset value as 1; 1 is the documented
//! default, so it is written here. As upstream, the Advanced StatefulSet, CloneSet and Deployment templates
//! are not touched.

use k8s_openapi::api::apps::v1::StatefulSetSpec;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::ApplyDefaults;
use super::cloneset::apply_template_defaults;
use crate::apps::{v1alpha1, v1beta1};

fn default_update_strategy(strategy: &mut v1beta1::UnitedDeploymentUpdateStrategy) {
    use v1beta1::UnitedDeploymentUpdateStrategyType as Type;
    if *strategy.type_.get_or_insert(Type::Manual) == Type::Manual {
        strategy.manual_update.get_or_insert_with(Default::default);
    }
}

fn default_statefulset_template(spec: Option<&mut StatefulSetSpec>) {
    if let Some(spec) = spec {
        apply_template_defaults(
            &mut spec.template,
            spec.volume_claim_templates
                .as_deref_mut()
                .unwrap_or_default(),
        );
    }
}

fn default_min_replicas(subsets: &mut [v1beta1::Subset]) {
    let has_replicas = subsets.iter().any(|subset| subset.replicas.is_some());
    let has_bounds = subsets
        .iter()
        .any(|subset| subset.min_replicas.is_some() || subset.max_replicas.is_some());
    if has_bounds && !has_replicas {
        for subset in subsets {
            subset.min_replicas.get_or_insert(IntOrString::Int(0));
        }
    }
}

impl ApplyDefaults for v1alpha1::UnitedDeployment {
    fn apply_defaults(&mut self) {
        let spec = &mut self.spec;
        spec.replicas.get_or_insert(1);
        spec.revision_history_limit.get_or_insert(10);
        default_update_strategy(&mut spec.update_strategy);
        default_statefulset_template(
            spec.template
                .stateful_set_template
                .as_mut()
                .map(|template| &mut template.spec),
        );
        default_min_replicas(&mut spec.topology.subsets);
    }
}

impl ApplyDefaults for v1beta1::UnitedDeployment {
    fn apply_defaults(&mut self) {
        let spec = &mut self.spec;
        spec.replicas.get_or_insert(1);
        spec.revision_history_limit.get_or_insert(10);
        default_update_strategy(&mut spec.update_strategy);
        default_statefulset_template(
            spec.template
                .stateful_set_template
                .as_mut()
                .map(|template| &mut template.spec),
        );
        default_min_replicas(&mut spec.topology.subsets);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "
apiVersion: apps.kruise.io/v1alpha1
kind: UnitedDeployment
metadata: {name: ud}
spec:
  selector: {matchLabels: {app: ud}}
  template:
    statefulSetTemplate:
      metadata: {labels: {app: ud}}
      spec:
        selector: {matchLabels: {app: ud}}
        template: {metadata: {labels: {app: ud}}, spec: {containers: [{name: main, image: 'nginx:1.25'}]}}
        volumeClaimTemplates: [{metadata: {name: data}}]
";

    fn alpha(extra: &str) -> v1alpha1::UnitedDeployment {
        serde_saphyr::from_str(&format!("{MINIMAL}{extra}")).unwrap()
    }

    #[test]
    fn v1alpha1_defaults() {
        let mut ud = alpha(
            "  topology:\n    subsets: [{name: a, minReplicas: 1}, {name: b, maxReplicas: '50%'}, {name: c}]\n",
        );
        ud.apply_defaults();
        let spec = &ud.spec;
        assert_eq!(spec.replicas, Some(1));
        assert_eq!(spec.revision_history_limit, Some(10));
        assert_eq!(
            spec.update_strategy.type_,
            Some(v1beta1::UnitedDeploymentUpdateStrategyType::Manual)
        );
        assert_eq!(spec.update_strategy.manual_update, Some(Default::default()));
        let mins: Vec<_> = spec
            .topology
            .subsets
            .iter()
            .map(|subset| subset.min_replicas.clone())
            .collect();
        assert_eq!(
            mins,
            [
                Some(IntOrString::Int(1)),
                Some(IntOrString::Int(0)),
                Some(IntOrString::Int(0))
            ]
        );
        let sts = &spec.template.stateful_set_template.as_ref().unwrap().spec;
        let main = &sts.template.spec.as_ref().unwrap().containers[0];
        assert_eq!(main.image_pull_policy.as_deref(), Some("Always"));
        let claim = &sts.volume_claim_templates.as_ref().unwrap()[0];
        assert_eq!(
            claim.status.as_ref().unwrap().phase.as_deref(),
            Some("Pending")
        );
        let before = ud.clone();
        ud.apply_defaults();
        assert_eq!(ud, before, "idempotent");
    }

    #[test]
    fn min_replicas_only_without_replicas() {
        let mut with_replicas = alpha(
            "  topology:\n    subsets: [{name: a, replicas: 2}, {name: b, maxReplicas: 3}]\n",
        );
        with_replicas.apply_defaults();
        assert_eq!(with_replicas.spec.topology.subsets[1].min_replicas, None);
        let mut without_bounds = alpha("  topology:\n    subsets: [{name: a}, {name: b}]\n");
        without_bounds.apply_defaults();
        assert!(
            without_bounds
                .spec
                .topology
                .subsets
                .iter()
                .all(|subset| subset.min_replicas.is_none())
        );
    }

    #[test]
    fn set_fields_are_kept_and_versions_agree() {
        let ud = alpha(
            "  revisionHistoryLimit: 3\n  updateStrategy: {type: Manual, manualUpdate: {partitions: {a: 1}}}\n",
        );
        let mut defaulted = ud.clone();
        defaulted.apply_defaults();
        assert_eq!(defaulted.spec.revision_history_limit, Some(3));
        assert_eq!(
            defaulted
                .spec
                .update_strategy
                .manual_update
                .as_ref()
                .unwrap()
                .partitions,
            [("a".to_owned(), 1)].into()
        );
        let mut converted_then_defaulted = v1beta1::UnitedDeployment::from(&ud);
        converted_then_defaulted.apply_defaults();
        assert_eq!(
            converted_then_defaulted,
            v1beta1::UnitedDeployment::from(&defaulted)
        );
        let mut other_type: v1beta1::UnitedDeployment = serde_saphyr::from_str(
            "{apiVersion: apps.kruise.io/v1beta1, kind: UnitedDeployment, metadata: {name: u}, spec: {selector: {}, updateStrategy: {type: Canary}}}",
        )
        .unwrap();
        other_type.apply_defaults();
        assert_eq!(other_type.spec.update_strategy.manual_update, None);
    }
}
