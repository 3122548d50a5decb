//! Advanced DaemonSet v1alpha1 ⇄ v1beta1 (upstream `apis/apps/v1alpha1/daemonset_conversion.go`).
//!
//! * `rollingUpdate.rollingUpdateType: Surging` ⇒ `Standard`, as upstream: v1beta1 has no `Surging` (it was
//!   only ever an alias of `Standard`, which defaulting rewrites anyway). v1beta1 cannot tell such an object
//!   from one that said `Standard`, so the round trip of an undefaulted `Surging` object goes through the
//!   conversion stash; defaulted v1alpha1 objects never hold `Surging` and never need it. Every other type
//!   (known or not) is copied.
//! * The annotation `daemonset.kruise.io/progressive-create-pod: "true"` ⇒ `scaleStrategy.partitionedScaling:
//!   true`; other values of the annotation give no scale strategy. The annotation stays on the v1beta1 object
//!   (metadata is copied), so going back only has to (re)write it when `partitionedScaling` is true: the
//!   mapping is injective.
//! * `status.daemonSetHash` ⇄ `status.updateRevision`.
//! * Everything else, including `partition` (IntOrString in both), is copied.
//!
//! v1beta1 → v1alpha1 loses a `scaleStrategy` that does not turn partitioned scaling on (`{}` or
//! `partitionedScaling: false`), and writes the annotation `"true"` over any other value when it is on. A
//! v1beta1 `rollingUpdateType: Surging` (not a v1beta1 value) comes back up as `Standard`.

use std::collections::BTreeMap;

use super::{HubConversion, hub_conversion};
use crate::apps::{v1alpha1, v1beta1};
use crate::keys;

impl HubConversion for v1alpha1::DaemonSet {
    type Hub = v1beta1::DaemonSet;

    fn to_hub_fields(&self) -> v1beta1::DaemonSet {
        let spec = &self.spec;
        let partitioned_scaling = self
            .metadata
            .annotations
            .as_ref()
            .and_then(|annotations| {
                annotations.get(keys::daemonset::PROGRESSIVE_CREATE_POD_ANNOTATION)
            })
            .is_some_and(|value| value == "true");
        v1beta1::DaemonSet {
            metadata: self.metadata.clone(),
            spec: v1beta1::DaemonSetSpec {
                selector: spec.selector.clone(),
                template: spec.template.clone(),
                update_strategy: v1beta1::DaemonSetUpdateStrategy {
                    type_: spec.update_strategy.type_.clone(),
                    rolling_update: spec
                        .update_strategy
                        .rolling_update
                        .as_ref()
                        .map(rolling_update_to_hub),
                },
                min_ready_seconds: spec.min_ready_seconds,
                burst_replicas: spec.burst_replicas.clone(),
                revision_history_limit: spec.revision_history_limit,
                lifecycle: spec.lifecycle.clone(),
                scale_strategy: partitioned_scaling.then_some(v1beta1::DaemonSetScaleStrategy {
                    partitioned_scaling: true,
                }),
            },
            status: self.status.as_ref().map(|status| v1beta1::DaemonSetStatus {
                current_number_scheduled: status.current_number_scheduled,
                number_misscheduled: status.number_misscheduled,
                desired_number_scheduled: status.desired_number_scheduled,
                number_ready: status.number_ready,
                observed_generation: status.observed_generation,
                updated_number_scheduled: status.updated_number_scheduled,
                number_available: status.number_available,
                number_unavailable: status.number_unavailable,
                collision_count: status.collision_count,
                conditions: status.conditions.clone(),
                update_revision: status.daemon_set_hash.clone(),
            }),
        }
    }

    fn from_hub_fields(hub: &v1beta1::DaemonSet) -> Self {
        let spec = &hub.spec;
        let mut metadata = hub.metadata.clone();
        if spec
            .scale_strategy
            .as_ref()
            .is_some_and(|strategy| strategy.partitioned_scaling)
        {
            metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .insert(
                    keys::daemonset::PROGRESSIVE_CREATE_POD_ANNOTATION.to_owned(),
                    "true".to_owned(),
                );
        }
        v1alpha1::DaemonSet {
            metadata,
            spec: v1alpha1::DaemonSetSpec {
                selector: spec.selector.clone(),
                template: spec.template.clone(),
                update_strategy: v1alpha1::DaemonSetUpdateStrategy {
                    type_: spec.update_strategy.type_.clone(),
                    rolling_update: spec
                        .update_strategy
                        .rolling_update
                        .as_ref()
                        .map(rolling_update_from_hub),
                },
                min_ready_seconds: spec.min_ready_seconds,
                burst_replicas: spec.burst_replicas.clone(),
                revision_history_limit: spec.revision_history_limit,
                lifecycle: spec.lifecycle.clone(),
            },
            status: hub.status.as_ref().map(|status| v1alpha1::DaemonSetStatus {
                current_number_scheduled: status.current_number_scheduled,
                number_misscheduled: status.number_misscheduled,
                desired_number_scheduled: status.desired_number_scheduled,
                number_ready: status.number_ready,
                observed_generation: status.observed_generation,
                updated_number_scheduled: status.updated_number_scheduled,
                number_available: status.number_available,
                number_unavailable: status.number_unavailable,
                collision_count: status.collision_count,
                conditions: status.conditions.clone(),
                daemon_set_hash: status.update_revision.clone(),
            }),
        }
    }
}

hub_conversion!(v1alpha1::DaemonSet => v1beta1::DaemonSet);

fn rolling_update_to_hub(
    rolling: &v1alpha1::RollingUpdateDaemonSet,
) -> v1beta1::RollingUpdateDaemonSet {
    use v1alpha1::DaemonSetRollingUpdateType as Alpha;
    use v1beta1::DaemonSetRollingUpdateType as Beta;
    v1beta1::RollingUpdateDaemonSet {
        type_: rolling.type_.as_ref().map(|type_| match type_ {
            Alpha::Standard | Alpha::Surging => Beta::Standard,
            other => Beta::from(other.as_str()),
        }),
        max_unavailable: rolling.max_unavailable.clone(),
        max_surge: rolling.max_surge.clone(),
        selector: rolling.selector.clone(),
        partition: rolling.partition.clone(),
        paused: rolling.paused,
    }
}

fn rolling_update_from_hub(
    rolling: &v1beta1::RollingUpdateDaemonSet,
) -> v1alpha1::RollingUpdateDaemonSet {
    v1alpha1::RollingUpdateDaemonSet {
        type_: rolling
            .type_
            .as_ref()
            .map(|type_| v1alpha1::DaemonSetRollingUpdateType::from(type_.as_str())),
        max_unavailable: rolling.max_unavailable.clone(),
        max_surge: rolling.max_surge.clone(),
        selector: rolling.selector.clone(),
        partition: rolling.partition.clone(),
        paused: rolling.paused,
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    use super::*;
    use crate::convert::STASH_ANNOTATION;

    const BASE: &str = "
apiVersion: apps.kruise.io/v1alpha1
kind: DaemonSet
metadata: {name: nginx, namespace: default}
spec:
  selector: {matchLabels: {k8s-app: nginx}}
  template:
    metadata: {labels: {k8s-app: nginx}}
    spec: {containers: [{name: nginx, image: 'nginx:1.25'}]}
";

    fn with(extra: &str) -> v1alpha1::DaemonSet {
        serde_saphyr::from_str(&format!("{BASE}{extra}")).unwrap()
    }

    fn stashed<K: kube::Resource>(object: &K) -> bool {
        object
            .meta()
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(STASH_ANNOTATION))
    }

    fn round_trip(ds: &v1alpha1::DaemonSet) -> v1beta1::DaemonSet {
        let beta = v1beta1::DaemonSet::from(ds);
        assert_eq!(&v1alpha1::DaemonSet::from(&beta), ds, "round trip");
        beta
    }

    fn rolling(beta: &v1beta1::DaemonSet) -> &v1beta1::RollingUpdateDaemonSet {
        beta.spec.update_strategy.rolling_update.as_ref().unwrap()
    }

    #[test]
    fn surging_becomes_standard() {
        let ds = with(
            "  updateStrategy: {type: RollingUpdate, rollingUpdate: {rollingUpdateType: Surging, maxSurge: 1}}\n",
        );
        let beta = round_trip(&ds);
        assert_eq!(
            rolling(&beta).type_,
            Some(v1beta1::DaemonSetRollingUpdateType::Standard)
        );
        assert_eq!(rolling(&beta).max_surge, Some(IntOrString::Int(1)));
        assert!(
            stashed(&beta),
            "v1beta1 cannot tell Surging from Standard: the stash restores it"
        );
        let mut edited = beta.clone();
        edited.spec.min_ready_seconds = 5;
        assert_eq!(
            v1alpha1::DaemonSet::from(&edited)
                .spec
                .update_strategy
                .rolling_update
                .unwrap()
                .type_,
            Some(v1alpha1::DaemonSetRollingUpdateType::Standard),
            "a stale stash is ignored"
        );
    }

    #[test]
    fn other_rolling_update_types_are_copied() {
        for type_ in ["Standard", "InPlaceIfPossible", "Teleport"] {
            let ds = with(&format!(
                "  updateStrategy:\n    rollingUpdate:\n      rollingUpdateType: {type_}\n      partition: '20%'\n      paused: true\n      selector: {{matchLabels: {{canary: 'true'}}}}\n"
            ));
            let beta = round_trip(&ds);
            assert!(!stashed(&beta), "{type_}");
            let rolling = rolling(&beta);
            assert_eq!(rolling.type_.as_ref().unwrap().as_str(), type_);
            assert_eq!(rolling.partition, Some(IntOrString::String("20%".into())));
            assert_eq!(rolling.paused, Some(true));
            assert!(rolling.selector.is_some());
        }
    }

    #[test]
    fn progressive_create_pod_annotation_becomes_partitioned_scaling() {
        let annotated = |value: &str| {
            let mut ds = with("");
            ds.metadata.annotations = Some(
                [(
                    keys::daemonset::PROGRESSIVE_CREATE_POD_ANNOTATION.to_owned(),
                    value.to_owned(),
                )]
                .into(),
            );
            ds
        };
        let beta = round_trip(&annotated("true"));
        assert!(!stashed(&beta));
        assert_eq!(
            beta.spec.scale_strategy,
            Some(v1beta1::DaemonSetScaleStrategy {
                partitioned_scaling: true
            })
        );
        let beta = round_trip(&annotated("false"));
        assert!(!stashed(&beta));
        assert_eq!(beta.spec.scale_strategy, None, "only \"true\" counts");
        assert_eq!(round_trip(&with("")).spec.scale_strategy, None);
    }

    #[test]
    fn daemon_set_hash_becomes_update_revision() {
        let ds =
            with("status: {desiredNumberScheduled: 3, numberReady: 2, daemonSetHash: 5b8f7d9c4}\n");
        let beta = round_trip(&ds);
        assert!(!stashed(&beta));
        let status = beta.status.unwrap();
        assert_eq!(status.update_revision, "5b8f7d9c4");
        assert_eq!(status.desired_number_scheduled, 3);
    }

    #[test]
    fn partitioned_scaling_without_annotation_writes_it_going_down() {
        let mut beta = v1beta1::DaemonSet::from(&with(""));
        beta.spec.scale_strategy = Some(v1beta1::DaemonSetScaleStrategy {
            partitioned_scaling: true,
        });
        let alpha = v1alpha1::DaemonSet::from(&beta);
        assert_eq!(
            alpha.metadata.annotations.unwrap()[keys::daemonset::PROGRESSIVE_CREATE_POD_ANNOTATION],
            "true"
        );
        beta.spec.scale_strategy = Some(v1beta1::DaemonSetScaleStrategy::default());
        let alpha = v1alpha1::DaemonSet::from(&beta);
        assert_eq!(alpha.metadata.annotations, None);
        assert_eq!(
            v1beta1::DaemonSet::from(&alpha).spec.scale_strategy,
            None,
            "v1alpha1 cannot hold a scale strategy that does not scale by partition"
        );
    }
}
