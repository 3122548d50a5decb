//! NodeImage defaults (upstream `SetDefaultsNodeImage`): every tag gets a `pullPolicy` with `timeoutSeconds: 600` and
//! `backoffLimit: 3`.
//!
//! Upstream's webhook also sets each tag's `createdAt` to the current time when it is unset. This library
//! does not read the clock, so that default is left out of [`ApplyDefaults`]; call
//! [`DefaultCreatedAt::default_created_at`] with the time to use.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::ApplyDefaults;
use crate::apps::v1beta1::{ImageTagPullPolicy, ImageTagSpec};
use crate::apps::{v1alpha1, v1beta1};

/// Seconds one pull attempt may take when `timeoutSeconds` is unset.
const DEFAULT_TIMEOUT_SECONDS: i32 = 600;
/// Attempts per pull when `backoffLimit` is unset.
const DEFAULT_BACKOFF_LIMIT: i32 = 3;

fn apply_tag_defaults(tag: &mut ImageTagSpec) {
    let pull_policy = tag
        .pull_policy
        .get_or_insert_with(ImageTagPullPolicy::default);
    pull_policy
        .timeout_seconds
        .get_or_insert(DEFAULT_TIMEOUT_SECONDS);
    pull_policy
        .backoff_limit
        .get_or_insert(DEFAULT_BACKOFF_LIMIT);
}

impl ApplyDefaults for v1alpha1::NodeImage {
    fn apply_defaults(&mut self) {
        for image in self.spec.images.values_mut() {
            image.tags.iter_mut().for_each(apply_tag_defaults);
        }
    }
}

impl ApplyDefaults for v1beta1::NodeImage {
    fn apply_defaults(&mut self) {
        for image in self.spec.images.values_mut() {
            image.tags.iter_mut().for_each(apply_tag_defaults);
        }
    }
}

/// The NodeImage default that needs the current time.
///
/// ```
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
/// use kruise_api::apps::v1beta1::NodeImage;
/// use kruise_api::defaults::DefaultCreatedAt;
///
/// let mut node_image: NodeImage = serde_saphyr::from_str(r#"
/// apiVersion: apps.kruise.io/v1beta1
/// kind: NodeImage
/// metadata: {name: node1}
/// spec:
///   images:
///     ubuntu: {tags: [{tag: latest}, {tag: "22.04", createdAt: "2023-04-04T09:29:18Z"}]}
/// "#).unwrap();
/// let now = Time("2024-05-01T10:00:00Z".parse().unwrap());
/// node_image.default_created_at(&now);
/// let tags = &node_image.spec.images["ubuntu"].tags;
/// assert_eq!(tags[0].created_at.as_ref(), Some(&now));
/// assert_eq!(tags[1].created_at.as_ref().unwrap().0.to_string(), "2023-04-04T09:29:18Z");
/// ```
pub trait DefaultCreatedAt {
    /// Sets `createdAt` of every tag that has none to `now`, as upstream's webhook does with its clock.
    fn default_created_at(&mut self, now: &Time);
}

impl DefaultCreatedAt for v1alpha1::NodeImage {
    fn default_created_at(&mut self, now: &Time) {
        for image in self.spec.images.values_mut() {
            for tag in &mut image.tags {
                tag.created_at.get_or_insert_with(|| now.clone());
            }
        }
    }
}

impl DefaultCreatedAt for v1beta1::NodeImage {
    fn default_created_at(&mut self, now: &Time) {
        for image in self.spec.images.values_mut() {
            for tag in &mut image.tags {
                tag.created_at.get_or_insert_with(|| now.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NODE_IMAGE: &str = "
apiVersion: apps.kruise.io/v1alpha1
kind: NodeImage
metadata: {name: node1}
spec:
  images:
    ubuntu:
      tags:
      - tag: latest
        pullPolicy: {ttlSecondsAfterFinished: 300, timeoutSeconds: 120, activeDeadlineSeconds: 1200}
      - tag: '22.04'
    nginx:
      tags: [{tag: '1.25'}]
";

    #[test]
    fn tag_pull_policies_are_defaulted() {
        let mut node_image: v1alpha1::NodeImage = serde_saphyr::from_str(NODE_IMAGE).unwrap();
        node_image.apply_defaults();
        let ubuntu = &node_image.spec.images["ubuntu"].tags;
        assert_eq!(
            ubuntu[0].pull_policy,
            Some(ImageTagPullPolicy {
                timeout_seconds: Some(120),
                backoff_limit: Some(3),
                ttl_seconds_after_finished: Some(300),
                active_deadline_seconds: Some(1200),
            }),
            "set values stay"
        );
        let defaulted = ImageTagPullPolicy {
            timeout_seconds: Some(600),
            backoff_limit: Some(3),
            ..ImageTagPullPolicy::default()
        };
        assert_eq!(ubuntu[1].pull_policy.as_ref(), Some(&defaulted));
        assert_eq!(
            node_image.spec.images["nginx"].tags[0].pull_policy.as_ref(),
            Some(&defaulted)
        );
        assert!(
            ubuntu.iter().all(|tag| tag.created_at.is_none()),
            "createdAt needs the clock"
        );
        let before = node_image.clone();
        node_image.apply_defaults();
        assert_eq!(node_image, before, "idempotent");

        let mut beta = v1beta1::NodeImage::from(
            serde_saphyr::from_str::<v1alpha1::NodeImage>(NODE_IMAGE).unwrap(),
        );
        beta.apply_defaults();
        assert_eq!(
            v1alpha1::NodeImage::from(beta),
            node_image,
            "both versions agree"
        );
    }

    #[test]
    fn created_at_is_only_filled_in() {
        let mut node_image: v1alpha1::NodeImage = serde_saphyr::from_str(NODE_IMAGE).unwrap();
        let earlier = Time("2023-04-04T09:29:18Z".parse().unwrap());
        let now = Time("2024-05-01T10:00:00Z".parse().unwrap());
        node_image.spec.images.get_mut("nginx").unwrap().tags[0].created_at = Some(earlier.clone());
        node_image.default_created_at(&now);
        assert_eq!(
            node_image.spec.images["nginx"].tags[0].created_at,
            Some(earlier)
        );
        assert!(
            node_image.spec.images["ubuntu"]
                .tags
                .iter()
                .all(|tag| tag.created_at.as_ref() == Some(&now))
        );
        let before = node_image.clone();
        node_image.default_created_at(&Time("2030-01-01T00:00:00Z".parse().unwrap()));
        assert_eq!(node_image, before, "idempotent");
    }
}
