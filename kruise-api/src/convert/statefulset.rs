//! Advanced StatefulSet v1alpha1 ⇄ v1beta1.
//!
//! v1alpha1 is a subset of v1beta1: every v1alpha1 field (spec and status) has a v1beta1 field of the same
//! name and type, so v1alpha1 → v1beta1 copies them and is injective; the round trip never needs the stash.
//!
//! v1beta1 → v1alpha1 drops what v1alpha1 cannot hold, as upstream does: `volumeClaimUpdateStrategy`,
//! `reserveOrdinals`, `lifecycle`, `scaleStrategy`, `persistentVolumeClaimRetentionPolicy`, `ordinals`, and
//! the status fields `updatedReadyReplicas`, `updatedAvailableReplicas` and `volumeClaims`.

use super::{HubConversion, hub_conversion};
use crate::apps::{v1alpha1, v1beta1};

impl HubConversion for v1alpha1::StatefulSet {
    type Hub = v1beta1::StatefulSet;

    fn to_hub_fields(&self) -> v1beta1::StatefulSet {
        let spec = &self.spec;
        v1beta1::StatefulSet {
            metadata: self.metadata.clone(),
            spec: v1beta1::StatefulSetSpec {
                replicas: spec.replicas,
                selector: spec.selector.clone(),
                template: spec.template.clone(),
                volume_claim_templates: spec.volume_claim_templates.clone(),
                service_name: spec.service_name.clone(),
                pod_management_policy: spec.pod_management_policy.clone(),
                update_strategy: spec.update_strategy.clone(),
                revision_history_limit: spec.revision_history_limit,
                ..Default::default()
            },
            status: self
                .status
                .as_ref()
                .map(|status| v1beta1::StatefulSetStatus {
                    observed_generation: status.observed_generation,
                    replicas: status.replicas,
                    ready_replicas: status.ready_replicas,
                    available_replicas: status.available_replicas,
                    current_replicas: status.current_replicas,
                    updated_replicas: status.updated_replicas,
                    current_revision: status.current_revision.clone(),
                    update_revision: status.update_revision.clone(),
                    collision_count: status.collision_count,
                    conditions: status.conditions.clone(),
                    label_selector: status.label_selector.clone(),
                    ..Default::default()
                }),
        }
    }

    fn from_hub_fields(hub: &v1beta1::StatefulSet) -> Self {
        let spec = &hub.spec;
        v1alpha1::StatefulSet {
            metadata: hub.metadata.clone(),
            spec: v1alpha1::StatefulSetSpec {
                replicas: spec.replicas,
                selector: spec.selector.clone(),
                template: spec.template.clone(),
                volume_claim_templates: spec.volume_claim_templates.clone(),
                service_name: spec.service_name.clone(),
                pod_management_policy: spec.pod_management_policy.clone(),
                update_strategy: spec.update_strategy.clone(),
                revision_history_limit: spec.revision_history_limit,
            },
            status: hub
                .status
                .as_ref()
                .map(|status| v1alpha1::StatefulSetStatus {
                    observed_generation: status.observed_generation,
                    replicas: status.replicas,
                    ready_replicas: status.ready_replicas,
                    available_replicas: status.available_replicas,
                    current_replicas: status.current_replicas,
                    updated_replicas: status.updated_replicas,
                    current_revision: status.current_revision.clone(),
                    update_revision: status.update_revision.clone(),
                    collision_count: status.collision_count,
                    conditions: status.conditions.clone(),
                    label_selector: status.label_selector.clone(),
                }),
        }
    }
}

hub_conversion!(v1alpha1::StatefulSet => v1beta1::StatefulSet);

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    use super::*;
    use crate::convert::STASH_ANNOTATION;

    const ALPHA: &str = "
apiVersion: apps.kruise.io/v1alpha1
kind: StatefulSet
metadata: {name: web, namespace: default}
spec:
  replicas: 5
  serviceName: nginx-headless
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      readinessGates: [{conditionType: InPlaceUpdateReady}]
      containers: [{name: nginx, image: 'nginx:1.25'}]
  volumeClaimTemplates: [{metadata: {name: www}, spec: {accessModes: [ReadWriteOnce]}}]
  revisionHistoryLimit: 5
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      partition: 2
      maxUnavailable: 50%
      podUpdatePolicy: InPlaceIfPossible
      paused: true
      minReadySeconds: 10
      inPlaceUpdateStrategy: {gracePeriodSeconds: 10}
      unorderedUpdate:
        priorityStrategy:
          weightPriority: [{weight: 50, matchSelector: {matchLabels: {tier: canary}}}]
status:
  observedGeneration: 3
  replicas: 5
  readyReplicas: 4
  availableReplicas: 4
  currentReplicas: 3
  updatedReplicas: 2
  currentRevision: web-5d8b9c
  updateRevision: web-7f6d4b
  collisionCount: 1
  labelSelector: app=nginx
  conditions: [{type: FailedUpdatePod, status: 'True', reason: UpdateFailed, message: boom}]
";

    fn alpha() -> v1alpha1::StatefulSet {
        serde_saphyr::from_str(ALPHA).unwrap()
    }

    #[test]
    fn every_v1alpha1_field_is_copied_and_round_trips_without_stash() {
        let alpha = alpha();
        let beta = v1beta1::StatefulSet::from(&alpha);
        assert!(
            beta.metadata
                .annotations
                .as_ref()
                .is_none_or(|a| !a.contains_key(STASH_ANNOTATION))
        );
        let rolling = beta.spec.update_strategy.rolling_update.as_ref().unwrap();
        assert_eq!(rolling.partition, Some(2));
        assert_eq!(
            rolling.max_unavailable,
            Some(IntOrString::String("50%".into()))
        );
        assert_eq!(rolling.min_ready_seconds, Some(10));
        assert!(rolling.unordered_update.is_some());
        assert_eq!(beta.spec.service_name, "nginx-headless");
        let status = beta.status.as_ref().unwrap();
        assert_eq!(status.update_revision, "web-7f6d4b");
        assert_eq!(status.conditions[0].type_, "FailedUpdatePod");
        assert_eq!(v1alpha1::StatefulSet::from(&beta), alpha);
    }

    #[test]
    fn untyped_objects_of_the_workload_kinds_convert() {
        use serde_json::json;
        for kind in ["StatefulSet", "DaemonSet", "UnitedDeployment"] {
            let object = json!({
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": kind,
                "metadata": {"name": "x"},
                "spec": {"selector": {}, "template": {}},
            });
            let up = crate::convert::convert_object(object, "apps.kruise.io/v1beta1")
                .unwrap_or_else(|error| panic!("{kind}: {error}"));
            assert_eq!(up["apiVersion"], "apps.kruise.io/v1beta1", "{kind}");
            let down = crate::convert::convert_object(up, "apps.kruise.io/v1alpha1").unwrap();
            assert_eq!(down["kind"], kind);
            assert_eq!(down["apiVersion"], "apps.kruise.io/v1alpha1");
        }
    }

    #[test]
    fn v1beta1_only_fields_are_dropped_going_down() {
        let mut beta = v1beta1::StatefulSet::from(&alpha());
        beta.spec.reserve_ordinals = vec![IntOrString::Int(1), IntOrString::String("3-5".into())];
        beta.spec.ordinals = Some(v1beta1::StatefulSetOrdinals { start: 2 });
        beta.spec.lifecycle = Some(Default::default());
        beta.spec.scale_strategy = Some(v1beta1::StatefulSetScaleStrategy {
            max_unavailable: Some(IntOrString::String("10%".into())),
        });
        beta.spec.persistent_volume_claim_retention_policy = Some(Default::default());
        beta.spec.volume_claim_update_strategy.type_ =
            Some(v1beta1::VolumeClaimUpdateStrategyType::OnPodRollingUpdate);
        let status = beta.status.as_mut().unwrap();
        status.updated_ready_replicas = 2;
        status.updated_available_replicas = 1;
        status.volume_claims = vec![v1beta1::VolumeClaimStatus {
            volume_claim_name: "www".into(),
            compatible_replicas: 5,
            compatible_ready_replicas: 4,
        }];
        let down = v1alpha1::StatefulSet::from(&beta);
        assert_eq!(
            down,
            alpha(),
            "v1alpha1 cannot hold the v1beta1-only fields"
        );
        let up_again = v1beta1::StatefulSet::from(&down);
        assert!(up_again.spec.reserve_ordinals.is_empty());
        assert_eq!(up_again.status.unwrap().volume_claims, vec![]);
    }
}
