//! `PodUnavailableBudget` v1alpha1 ⇄ v1beta1 (upstream `apis/policy/v1alpha1/podunavailablebudget_conversion.go`).
//!
//! * The annotation `kruise.io/pub-protect-operations` (comma list) ⇒ `spec.protectOperations`: the items,
//!   trimmed, empty ones left out (unknown operations are kept as written).
//! * The annotation `pub.kruise.io/protect-total-replicas` ⇒ `spec.protectTotalReplicas`, when it is a
//!   32-bit integer.
//! * `spec.ignoredPodSelector` has no v1alpha1 form. Its per-pod counterpart, the **pod** annotation
//!   `pub.kruise.io/no-protect`, is not part of the budget, so there is nothing to convert (upstream's
//!   conversion ignores it too); the webhook keeps honouring it next to the selector.
//! * Everything else has the same name and shape in both versions (the v1alpha1 status always writes
//!   `observedGeneration`, v1beta1 leaves a zero out).
//!
//! As upstream, the annotations stay on the v1beta1 object (its metadata is copied unchanged), and v1beta1
//! keeps honouring them when the fields are empty. Back, a non-empty field overwrites its annotation only
//! when the annotation does not already say the same, so the annotation's original text (spacing, order
//! of an equal list, a `+` sign, leading zeros) survives the round trip.
//!
//! v1beta1 → v1alpha1: `ignoredPodSelector` is dropped (v1alpha1 cannot hold it).

use std::collections::BTreeMap;

use super::{HubConversion, hub_conversion};
use crate::keys;
use crate::policy::{v1alpha1, v1beta1};

impl HubConversion for v1alpha1::PodUnavailableBudget {
    type Hub = v1beta1::PodUnavailableBudget;

    fn to_hub_fields(&self) -> v1beta1::PodUnavailableBudget {
        let spec = &self.spec;
        let annotations = self.metadata.annotations.as_ref();
        v1beta1::PodUnavailableBudget {
            metadata: self.metadata.clone(),
            spec: v1beta1::PodUnavailableBudgetSpec {
                selector: spec.selector.clone(),
                target_reference: spec.target_reference.clone(),
                max_unavailable: spec.max_unavailable.clone(),
                min_available: spec.min_available.clone(),
                protect_operations: protect_operations(annotations).unwrap_or_default(),
                protect_total_replicas: protect_total_replicas(annotations),
                ignored_pod_selector: None,
            },
            status: self
                .status
                .as_ref()
                .map(v1beta1::PodUnavailableBudgetStatus::from),
        }
    }

    fn from_hub_fields(hub: &v1beta1::PodUnavailableBudget) -> Self {
        let spec = &hub.spec;
        let mut metadata = hub.metadata.clone();
        let annotations = metadata.annotations.as_ref();
        let operations = (!spec.protect_operations.is_empty()
            && protect_operations(annotations).as_ref() != Some(&spec.protect_operations))
        .then(|| {
            spec.protect_operations
                .iter()
                .map(v1beta1::PubOperation::as_str)
                .collect::<Vec<_>>()
                .join(",")
        });
        let total_replicas = spec
            .protect_total_replicas
            .filter(|total| protect_total_replicas(annotations) != Some(*total))
            .map(|total| total.to_string());
        for (key, value) in [
            (keys::pub_policy::PROTECT_OPERATIONS_ANNOTATION, operations),
            (
                keys::pub_policy::PROTECT_TOTAL_REPLICAS_ANNOTATION,
                total_replicas,
            ),
        ] {
            if let Some(value) = value {
                metadata
                    .annotations
                    .get_or_insert_with(BTreeMap::new)
                    .insert(key.to_owned(), value);
            }
        }
        v1alpha1::PodUnavailableBudget {
            metadata,
            spec: v1alpha1::PodUnavailableBudgetSpec {
                selector: spec.selector.clone(),
                target_reference: spec.target_reference.clone(),
                max_unavailable: spec.max_unavailable.clone(),
                min_available: spec.min_available.clone(),
            },
            status: hub
                .status
                .as_ref()
                .map(v1alpha1::PodUnavailableBudgetStatus::from),
        }
    }
}

hub_conversion!(v1alpha1::PodUnavailableBudget => v1beta1::PodUnavailableBudget);

/// The status has the same fields in both versions.
impl From<&v1alpha1::PodUnavailableBudgetStatus> for v1beta1::PodUnavailableBudgetStatus {
    fn from(status: &v1alpha1::PodUnavailableBudgetStatus) -> Self {
        Self {
            observed_generation: status.observed_generation,
            disrupted_pods: status.disrupted_pods.clone(),
            unavailable_pods: status.unavailable_pods.clone(),
            unavailable_allowed: status.unavailable_allowed,
            current_available: status.current_available,
            desired_available: status.desired_available,
            total_replicas: status.total_replicas,
        }
    }
}

/// The status has the same fields in both versions.
impl From<&v1beta1::PodUnavailableBudgetStatus> for v1alpha1::PodUnavailableBudgetStatus {
    fn from(status: &v1beta1::PodUnavailableBudgetStatus) -> Self {
        Self {
            observed_generation: status.observed_generation,
            disrupted_pods: status.disrupted_pods.clone(),
            unavailable_pods: status.unavailable_pods.clone(),
            unavailable_allowed: status.unavailable_allowed,
            current_available: status.current_available,
            desired_available: status.desired_available,
            total_replicas: status.total_replicas,
        }
    }
}

/// The operations of a non-empty protect-operations annotation: comma-separated, trimmed, empty items
/// left out.
fn protect_operations(
    annotations: Option<&BTreeMap<String, String>>,
) -> Option<Vec<v1beta1::PubOperation>> {
    let raw = annotations?.get(keys::pub_policy::PROTECT_OPERATIONS_ANNOTATION)?;
    (!raw.is_empty()).then(|| {
        raw.split(',')
            .map(str::trim)
            .filter(|operation| !operation.is_empty())
            .map(v1beta1::PubOperation::from)
            .collect()
    })
}

/// The value of the protect-total-replicas annotation, when it is a 32-bit integer (Go's
/// `strconv.ParseInt(value, 10, 32)`: an optional sign, then decimal digits).
fn protect_total_replicas(annotations: Option<&BTreeMap<String, String>>) -> Option<i32> {
    annotations?
        .get(keys::pub_policy::PROTECT_TOTAL_REPLICAS_ANNOTATION)?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::STASH_ANNOTATION;
    use v1beta1::PubOperation;

    fn with_annotations(pairs: &[(&str, &str)]) -> v1alpha1::PodUnavailableBudget {
        let mut pub_: v1alpha1::PodUnavailableBudget = serde_saphyr::from_str(
            "
apiVersion: policy.kruise.io/v1alpha1
kind: PodUnavailableBudget
metadata: {name: web-pub, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  maxUnavailable: 25%
status: {observedGeneration: 1, unavailableAllowed: 1, currentAvailable: 4, desiredAvailable: 3, totalReplicas: 4}
",
        )
        .unwrap();
        if !pairs.is_empty() {
            pub_.metadata.annotations = Some(
                pairs
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            );
        }
        pub_
    }

    fn round_trip(alpha: &v1alpha1::PodUnavailableBudget) -> v1beta1::PodUnavailableBudget {
        let beta = v1beta1::PodUnavailableBudget::from(alpha);
        assert_eq!(
            &v1alpha1::PodUnavailableBudget::from(&beta),
            alpha,
            "round trip"
        );
        let stashed = beta
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(STASH_ANNOTATION));
        assert!(!stashed, "{:?}", beta.metadata.annotations);
        beta
    }

    #[test]
    fn protect_operations_annotation_becomes_the_field() {
        for (raw, expected) in [
            ("EVICT", vec![PubOperation::Evict]),
            (
                "DELETE, UPDATE,,EVICT",
                vec![
                    PubOperation::Delete,
                    PubOperation::Update,
                    PubOperation::Evict,
                ],
            ),
            (
                "RESIZE,delete",
                vec![PubOperation::Resize, PubOperation::from("delete")],
            ),
            (" , ", vec![]),
            ("", vec![]),
        ] {
            let beta = round_trip(&with_annotations(&[(
                keys::pub_policy::PROTECT_OPERATIONS_ANNOTATION,
                raw,
            )]));
            assert_eq!(beta.spec.protect_operations, expected, "{raw:?}");
        }
        let beta = round_trip(&with_annotations(&[]));
        assert!(beta.spec.protect_operations.is_empty());
    }

    #[test]
    fn protect_total_replicas_annotation_becomes_the_field() {
        for (raw, expected) in [
            ("10", Some(10)),
            ("+7", Some(7)),
            ("007", Some(7)),
            ("-1", Some(-1)),
            ("ten", None),
            ("4294967296", None),
            ("", None),
        ] {
            let beta = round_trip(&with_annotations(&[(
                keys::pub_policy::PROTECT_TOTAL_REPLICAS_ANNOTATION,
                raw,
            )]));
            assert_eq!(beta.spec.protect_total_replicas, expected, "{raw:?}");
        }
    }

    #[test]
    fn no_protect_is_a_pod_annotation_and_not_converted() {
        let alpha = with_annotations(&[(keys::pub_policy::NO_PROTECT_ANNOTATION, "true")]);
        let beta = round_trip(&alpha);
        assert_eq!(beta.spec.ignored_pod_selector, None);
    }

    #[test]
    fn v1beta1_fields_become_annotations() {
        let beta: v1beta1::PodUnavailableBudget = serde_saphyr::from_str(
            "
apiVersion: policy.kruise.io/v1beta1
kind: PodUnavailableBudget
metadata: {name: web-pub, namespace: default, annotations: {kruise.io/pub-protect-operations: DELETE}}
spec:
  targetRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: web}
  minAvailable: 2
  protectOperations: [DELETE, EVICT]
  protectTotalReplicas: 5
  ignoredPodSelector: {matchLabels: {pub.kruise.io/ignored: 'true'}}
",
        )
        .unwrap();
        let alpha = v1alpha1::PodUnavailableBudget::from(&beta);
        let annotations = alpha.metadata.annotations.clone().unwrap();
        assert_eq!(
            annotations[keys::pub_policy::PROTECT_OPERATIONS_ANNOTATION],
            "DELETE,EVICT",
            "the field wins over a stale annotation"
        );
        assert_eq!(
            annotations[keys::pub_policy::PROTECT_TOTAL_REPLICAS_ANNOTATION],
            "5"
        );
        let again = v1beta1::PodUnavailableBudget::from(&alpha);
        assert_eq!(again.spec.protect_operations, beta.spec.protect_operations);
        assert_eq!(again.spec.protect_total_replicas, Some(5));
        assert_eq!(
            again.spec.ignored_pod_selector, None,
            "v1alpha1 cannot hold ignoredPodSelector"
        );
    }

    #[test]
    fn target_ref_and_status_are_copied() {
        let alpha: v1alpha1::PodUnavailableBudget = serde_saphyr::from_str(
            "
apiVersion: policy.kruise.io/v1alpha1
kind: PodUnavailableBudget
metadata: {name: web-pub, namespace: default}
spec:
  targetRef: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: web}
  minAvailable: 80%
status:
  observedGeneration: 0
  disruptedPods: {web-abcde: '2024-05-01T10:00:00Z'}
  unavailablePods: {web-fghij: '2024-05-01T10:00:05Z'}
  unavailableAllowed: 0
  currentAvailable: 8
  desiredAvailable: 8
  totalReplicas: 10
",
        )
        .unwrap();
        let beta = round_trip(&alpha);
        assert_eq!(beta.spec.target_reference, alpha.spec.target_reference);
        let status = beta.status.unwrap();
        assert_eq!(status.disrupted_pods.len(), 1);
        assert_eq!(status.total_replicas, 10);
        let json = serde_json::to_value(v1alpha1::PodUnavailableBudget::from(
            &v1beta1::PodUnavailableBudget::from(&alpha),
        ))
        .unwrap();
        assert_eq!(
            json["status"]["observedGeneration"], 0,
            "v1alpha1 always writes observedGeneration"
        );
    }
}
