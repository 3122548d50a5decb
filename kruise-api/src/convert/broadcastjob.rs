//! BroadcastJob v1alpha1 ⇄ v1beta1 (upstream maps no field for it: the two versions have the same shape).
//!
//! Every field maps to the field of the same name; the status is the same type in both versions. The spec
//! mapping is shared with the AdvancedCronJob `broadcastJobTemplate`.

use super::{HubConversion, hub_conversion};
use crate::apps::{v1alpha1, v1beta1};

impl HubConversion for v1alpha1::BroadcastJob {
    type Hub = v1beta1::BroadcastJob;

    fn to_hub_fields(&self) -> v1beta1::BroadcastJob {
        v1beta1::BroadcastJob {
            metadata: self.metadata.clone(),
            spec: spec_to_hub(&self.spec),
            status: self.status.clone(),
        }
    }

    fn from_hub_fields(hub: &v1beta1::BroadcastJob) -> Self {
        v1alpha1::BroadcastJob {
            metadata: hub.metadata.clone(),
            spec: spec_from_hub(&hub.spec),
            status: hub.status.clone(),
        }
    }
}

hub_conversion!(v1alpha1::BroadcastJob => v1beta1::BroadcastJob);

/// The v1beta1 form of a v1alpha1 BroadcastJob spec (field by field).
pub(super) fn spec_to_hub(spec: &v1alpha1::BroadcastJobSpec) -> v1beta1::BroadcastJobSpec {
    v1beta1::BroadcastJobSpec {
        parallelism: spec.parallelism.clone(),
        template: spec.template.clone(),
        completion_policy: spec.completion_policy.clone(),
        paused: spec.paused,
        failure_policy: spec.failure_policy.clone(),
    }
}

/// The v1alpha1 form of a v1beta1 BroadcastJob spec (field by field).
pub(super) fn spec_from_hub(spec: &v1beta1::BroadcastJobSpec) -> v1alpha1::BroadcastJobSpec {
    v1alpha1::BroadcastJobSpec {
        parallelism: spec.parallelism.clone(),
        template: spec.template.clone(),
        completion_policy: spec.completion_policy.clone(),
        paused: spec.paused,
        failure_policy: spec.failure_policy.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::STASH_ANNOTATION;

    const FULL: &str = "
apiVersion: apps.kruise.io/v1alpha1
kind: BroadcastJob
metadata: {name: demo, namespace: default, labels: {app: demo}}
spec:
  parallelism: '50%'
  template:
    spec:
      restartPolicy: OnFailure
      containers: [{name: main, image: busybox}]
  completionPolicy: {type: Always, activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 30}
  paused: true
  failurePolicy: {type: Continue, restartLimit: 3}
status:
  conditions:
  - {type: Complete, status: 'True', lastProbeTime: '2024-05-01T10:00:00Z', lastTransitionTime: '2024-05-01T10:00:00Z', reason: Complete}
  startTime: '2024-05-01T09:59:00Z'
  completionTime: '2024-05-01T10:00:00Z'
  active: 0
  succeeded: 3
  failed: 1
  desired: 4
  phase: completed
";

    #[test]
    fn every_field_maps_to_itself() {
        let alpha: v1alpha1::BroadcastJob = serde_saphyr::from_str(FULL).unwrap();
        let beta = v1beta1::BroadcastJob::from(&alpha);
        assert!(
            beta.metadata
                .annotations
                .as_ref()
                .is_none_or(|a| !a.contains_key(STASH_ANNOTATION))
        );
        let mut alpha_json = serde_json::to_value(&alpha).unwrap();
        let mut beta_json = serde_json::to_value(&beta).unwrap();
        alpha_json["apiVersion"] = serde_json::Value::Null;
        beta_json["apiVersion"] = serde_json::Value::Null;
        assert_eq!(alpha_json, beta_json, "same JSON apart from apiVersion");
        assert_eq!(v1alpha1::BroadcastJob::from(&beta), alpha);
    }

    #[test]
    fn native_v1beta1_converts_down_unchanged() {
        let beta: v1beta1::BroadcastJob =
            serde_saphyr::from_str(&FULL.replace("v1alpha1", "v1beta1")).unwrap();
        let alpha = v1alpha1::BroadcastJob::from(&beta);
        assert_eq!(alpha.spec.failure_policy.restart_limit, 3);
        assert_eq!(
            alpha.status.as_ref().unwrap().phase,
            v1beta1::BroadcastJobPhase::Completed
        );
        assert_eq!(v1beta1::BroadcastJob::from(&alpha), beta);
    }
}
