//! ImagePullJob and ImageListPullJob v1alpha1 ⇄ v1beta1 (upstream maps no field for them: the two
//! versions have the same shape).
//!
//! The image (or image list) maps to itself and the inline pull template and the status are the same types
//! in both versions.

use super::{HubConversion, hub_conversion};
use crate::apps::{v1alpha1, v1beta1};

impl HubConversion for v1alpha1::ImagePullJob {
    type Hub = v1beta1::ImagePullJob;

    fn to_hub_fields(&self) -> v1beta1::ImagePullJob {
        v1beta1::ImagePullJob {
            metadata: self.metadata.clone(),
            spec: v1beta1::ImagePullJobSpec {
                image: self.spec.image.clone(),
                template: self.spec.template.clone(),
            },
            status: self.status.clone(),
        }
    }

    fn from_hub_fields(hub: &v1beta1::ImagePullJob) -> Self {
        v1alpha1::ImagePullJob {
            metadata: hub.metadata.clone(),
            spec: v1alpha1::ImagePullJobSpec {
                image: hub.spec.image.clone(),
                template: hub.spec.template.clone(),
            },
            status: hub.status.clone(),
        }
    }
}

hub_conversion!(v1alpha1::ImagePullJob => v1beta1::ImagePullJob);

impl HubConversion for v1alpha1::ImageListPullJob {
    type Hub = v1beta1::ImageListPullJob;

    fn to_hub_fields(&self) -> v1beta1::ImageListPullJob {
        v1beta1::ImageListPullJob {
            metadata: self.metadata.clone(),
            spec: v1beta1::ImageListPullJobSpec {
                images: self.spec.images.clone(),
                template: self.spec.template.clone(),
            },
            status: self.status.clone(),
        }
    }

    fn from_hub_fields(hub: &v1beta1::ImageListPullJob) -> Self {
        v1alpha1::ImageListPullJob {
            metadata: hub.metadata.clone(),
            spec: v1alpha1::ImageListPullJobSpec {
                images: hub.spec.images.clone(),
                template: hub.spec.template.clone(),
            },
            status: hub.status.clone(),
        }
    }
}

hub_conversion!(v1alpha1::ImageListPullJob => v1beta1::ImageListPullJob);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::STASH_ANNOTATION;
    use serde_json::{Value, json};

    fn same_json_but_api_version(alpha: &impl serde::Serialize, beta: &impl serde::Serialize) {
        let mut alpha = serde_json::to_value(alpha).unwrap();
        let mut beta = serde_json::to_value(beta).unwrap();
        alpha["apiVersion"] = Value::Null;
        beta["apiVersion"] = Value::Null;
        assert_eq!(alpha, beta);
        assert!(beta["metadata"]["annotations"][STASH_ANNOTATION].is_null());
    }

    #[test]
    fn image_pull_job_maps_to_itself() {
        let alpha: v1alpha1::ImagePullJob = serde_saphyr::from_str(
            "
apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata: {name: job-with-always, namespace: default}
spec:
  image: nginx:1.9.1
  parallelism: 10
  selector: {names: [node-1, node-2]}
  completionPolicy: {type: Always, activeDeadlineSeconds: 1200, ttlSecondsAfterFinished: 300}
  pullPolicy: {backoffLimit: 3, timeoutSeconds: 300}
  pullSecrets: [secret-name1]
  sandboxConfig: {labels: {team: infra}}
  imagePullPolicy: Always
status:
  startTime: '2024-05-01T10:00:00Z'
  desired: 2
  active: 1
  succeeded: 1
  failed: 0
  message: job is running, progress 50.0%
",
        )
        .unwrap();
        let beta = v1beta1::ImagePullJob::from(&alpha);
        same_json_but_api_version(&alpha, &beta);
        let json = serde_json::to_value(&beta).unwrap();
        assert_eq!(
            json["spec"]["selector"],
            json!({"names": ["node-1", "node-2"]}),
            "the template is inline"
        );
        assert_eq!(v1alpha1::ImagePullJob::from(&beta), alpha);
    }

    #[test]
    fn image_list_pull_job_maps_to_itself() {
        let alpha: v1alpha1::ImageListPullJob = serde_saphyr::from_str(
            "
apiVersion: apps.kruise.io/v1alpha1
kind: ImageListPullJob
metadata: {name: job-with-always}
spec:
  images: ['nginx:1.9.1', 'busybox:1.29.2']
  podSelector: {matchLabels: {app: web}}
  completionPolicy: {type: Never}
status:
  desired: 2
  completed: 2
  succeeded: 1
  failedImageStatuses: [{imagePullJob: job-with-always-x7k2p, name: 'busybox:1.29.2', message: 'node-2 failed'}]
",
        )
        .unwrap();
        let beta = v1beta1::ImageListPullJob::from(&alpha);
        same_json_but_api_version(&alpha, &beta);
        assert_eq!(v1alpha1::ImageListPullJob::from(&beta), alpha);
    }
}
