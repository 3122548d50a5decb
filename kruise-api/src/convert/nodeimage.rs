//! NodeImage v1alpha1 ⇄ v1beta1 (upstream `apis/apps/v1alpha1/nodeimage_conversion.go`).
//!
//! Every field maps to the field of the same name (the tags and the status are the same types in both
//! versions, including the HEAD `status.waiting`). The pull secrets' `mode` exists only in v1beta1:
//! converting up leaves it empty, and converting down **drops** it, as upstream does.

use std::collections::BTreeMap;

use super::{HubConversion, hub_conversion};
use crate::apps::{v1alpha1, v1beta1};

impl HubConversion for v1alpha1::NodeImage {
    type Hub = v1beta1::NodeImage;

    fn to_hub_fields(&self) -> v1beta1::NodeImage {
        let images: BTreeMap<String, v1beta1::ImageSpec> = self
            .spec
            .images
            .iter()
            .map(|(name, image)| {
                let image = v1beta1::ImageSpec {
                    pull_secrets: image
                        .pull_secrets
                        .iter()
                        .map(|secret| v1beta1::ReferenceObject {
                            namespace: secret.namespace.clone(),
                            name: secret.name.clone(),
                            mode: String::new(),
                        })
                        .collect(),
                    tags: image.tags.clone(),
                    sandbox_config: image.sandbox_config.clone(),
                };
                (name.clone(), image)
            })
            .collect();
        v1beta1::NodeImage {
            metadata: self.metadata.clone(),
            spec: v1beta1::NodeImageSpec { images },
            status: self.status.clone(),
        }
    }

    fn from_hub_fields(hub: &v1beta1::NodeImage) -> Self {
        let images: BTreeMap<String, v1alpha1::ImageSpec> = hub
            .spec
            .images
            .iter()
            .map(|(name, image)| {
                let image = v1alpha1::ImageSpec {
                    pull_secrets: image
                        .pull_secrets
                        .iter()
                        .map(|secret| v1alpha1::ReferenceObject {
                            namespace: secret.namespace.clone(),
                            name: secret.name.clone(),
                        })
                        .collect(),
                    tags: image.tags.clone(),
                    sandbox_config: image.sandbox_config.clone(),
                };
                (name.clone(), image)
            })
            .collect();
        v1alpha1::NodeImage {
            metadata: hub.metadata.clone(),
            spec: v1alpha1::NodeImageSpec { images },
            status: hub.status.clone(),
        }
    }
}

hub_conversion!(v1alpha1::NodeImage => v1beta1::NodeImage);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::STASH_ANNOTATION;

    const NODE_IMAGE: &str = "
apiVersion: apps.kruise.io/v1alpha1
kind: NodeImage
metadata: {name: node1}
spec:
  images:
    ubuntu:
      pullSecrets: [{namespace: kruise-daemon-config, name: pull-secret-abc12}]
      tags:
      - tag: latest
        createdAt: '2023-04-04T09:29:18Z'
        pullPolicy: {ttlSecondsAfterFinished: 300, timeoutSeconds: 600, backoffLimit: 3, activeDeadlineSeconds: 1200}
        ownerReferences: [{apiVersion: apps.kruise.io/v1alpha1, kind: ImagePullJob, namespace: default, name: job-ubuntu, uid: 8f3c}]
        version: 1
        imagePullPolicy: IfNotPresent
      sandboxConfig: {annotations: {team: infra}}
status:
  desired: 1
  succeeded: 1
  failed: 0
  pulling: 0
  waiting: 0
  imageStatuses:
    ubuntu:
      tags:
      - {tag: latest, phase: Succeeded, progress: 100, startTime: '2023-04-04T09:29:18Z', completionTime: '2023-04-04T09:29:28Z', version: 1, imageID: 'docker.io/library/ubuntu@sha256:aabbcc'}
  firstSyncStatus: {syncAt: '2023-04-04T09:29:28Z', status: Succeeded}
";

    #[test]
    fn every_field_maps_to_itself_and_mode_stays_empty() {
        let alpha: v1alpha1::NodeImage = serde_saphyr::from_str(NODE_IMAGE).unwrap();
        let beta = v1beta1::NodeImage::from(&alpha);
        assert!(
            beta.metadata
                .annotations
                .as_ref()
                .is_none_or(|a| !a.contains_key(STASH_ANNOTATION))
        );
        let secret = &beta.spec.images["ubuntu"].pull_secrets[0];
        assert_eq!(
            (
                secret.namespace.as_str(),
                secret.name.as_str(),
                secret.mode.as_str()
            ),
            ("kruise-daemon-config", "pull-secret-abc12", "")
        );
        assert_eq!(
            beta.spec.images["ubuntu"].tags,
            alpha.spec.images["ubuntu"].tags
        );
        assert_eq!(beta.status, alpha.status);
        assert_eq!(v1alpha1::NodeImage::from(&beta), alpha);
    }

    /// v1beta1-only: the pull secrets' `mode` cannot be held by v1alpha1.
    #[test]
    fn secret_mode_is_dropped_in_v1alpha1() {
        let mut beta: v1beta1::NodeImage =
            serde_saphyr::from_str(&NODE_IMAGE.replace("v1alpha1/", "v1beta1/")).unwrap();
        for image in beta.spec.images.values_mut() {
            for secret in &mut image.pull_secrets {
                secret.mode = crate::keys::image_pull::SECRET_MODE_BATCH.to_owned();
            }
        }
        let alpha = v1alpha1::NodeImage::from(&beta);
        let json = serde_json::to_value(&alpha).unwrap();
        assert_eq!(
            json["spec"]["images"]["ubuntu"]["pullSecrets"],
            serde_json::json!([{"namespace": "kruise-daemon-config", "name": "pull-secret-abc12"}])
        );
        let back = v1beta1::NodeImage::from(&alpha);
        assert_eq!(back.spec.images["ubuntu"].pull_secrets[0].mode, "");
    }

    #[test]
    fn untyped_objects_convert_both_ways() {
        let beta = serde_json::json!({
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "NodeImage",
            "metadata": {"name": "node-3"},
            "spec": {"images": {"nginx": {
                "pullSecrets": [{"namespace": "kruise-daemon-config", "name": "s", "mode": "batch"}],
                "tags": [{"tag": "1.25"}]
            }}},
            "status": {"desired": 1, "succeeded": 0, "failed": 0, "pulling": 1, "waiting": 0}
        });
        let alpha = crate::convert::convert_object(beta, "apps.kruise.io/v1alpha1").unwrap();
        assert_eq!(alpha["apiVersion"], "apps.kruise.io/v1alpha1");
        assert_eq!(
            alpha["spec"]["images"]["nginx"]["pullSecrets"],
            serde_json::json!([{"namespace": "kruise-daemon-config", "name": "s"}])
        );
        let back = crate::convert::convert_object(alpha, "apps.kruise.io/v1beta1").unwrap();
        assert_eq!(back["status"]["pulling"], 1);
        assert!(
            back["spec"]["images"]["nginx"]["pullSecrets"][0]
                .get("mode")
                .is_none()
        );
    }
}
