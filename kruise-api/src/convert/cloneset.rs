//! CloneSet v1alpha1 ⇄ v1beta1 (upstream `apis/apps/v1alpha1/cloneset_conversion.go`).
//!
//! * `updateStrategy.type` `ReCreate` / `InPlaceIfPossible` / `InPlaceOnly` ⇄ `type: RollingUpdate` plus
//!   `rollingUpdate.podUpdatePolicy` of the same name; `OnDelete` ⇄ `type: OnDelete`. An unset v1alpha1 type
//!   maps to `RollingUpdate` without a policy (both mean ReCreate) and back.
//! * The other v1alpha1 `updateStrategy` fields ⇄ `rollingUpdate` fields. Unlike upstream, an `OnDelete`
//!   strategy keeps them in `rollingUpdate` instead of dropping them, and an empty `inPlaceUpdateStrategy` stays
//!   present.
//! * `scaleStrategy.disablePVCReuse` ⇄ `scaleStrategy.enablePVCReuse` (negated).
//! * The label `apps.kruise.io/cloneset-scaling-exclude-preparing-delete: "true"` ⇒
//!   `scaleStrategy.excludePreparingDelete: true` (the label stays; it is not written back).
//! * The image-pre-download annotations ⇒ `inPlaceUpdateStrategy.imagePreDownload*`, the annotation winning
//!   over a v1alpha1 field as upstream; back, a field equal to what its annotation says is left to the
//!   annotation.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{HubConversion, hub_conversion};
use crate::apps::{v1alpha1, v1beta1};
use crate::inplace::InPlaceUpdateStrategy;
use crate::keys;

impl HubConversion for v1alpha1::CloneSet {
    type Hub = v1beta1::CloneSet;

    fn to_hub_fields(&self) -> v1beta1::CloneSet {
        let spec = &self.spec;
        let labels = self.metadata.labels.as_ref();
        let annotations = self.metadata.annotations.as_ref();
        let exclude_label = labels
            .and_then(|labels| labels.get(keys::cloneset::SCALING_EXCLUDE_PREPARING_DELETE_LABEL))
            .is_some_and(|value| value == "true");
        let strategy = &spec.update_strategy;
        let rolling_fields = v1beta1::RollingUpdateCloneSetStrategy {
            partition: strategy.partition.clone(),
            max_unavailable: strategy.max_unavailable.clone(),
            max_surge: strategy.max_surge.clone(),
            pod_update_policy: None,
            paused: strategy.paused,
            priority_strategy: strategy.priority_strategy.clone(),
            scatter_strategy: strategy.scatter_strategy.clone(),
            in_place_update_strategy: in_place_to_hub(
                strategy.in_place_update_strategy.as_ref(),
                annotations,
            ),
        };
        use v1alpha1::CloneSetUpdateStrategyType as Alpha;
        use v1beta1::{CloneSetPodUpdatePolicy as Policy, CloneSetUpdateStrategyType as Beta};
        let (type_, policy) = match &strategy.type_ {
            Some(Alpha::OnDelete) => (Beta::OnDelete, None),
            None => (Beta::RollingUpdate, None),
            Some(Alpha::ReCreate) => (Beta::RollingUpdate, Some(Policy::ReCreate)),
            Some(Alpha::InPlaceIfPossible) => {
                (Beta::RollingUpdate, Some(Policy::InPlaceIfPossible))
            }
            Some(Alpha::InPlaceOnly) => (Beta::RollingUpdate, Some(Policy::InPlaceOnly)),
            Some(Alpha::Unknown(other)) => {
                (Beta::RollingUpdate, Some(Policy::Unknown(other.clone())))
            }
        };
        let rolling_update = if type_ == Beta::OnDelete && rolling_fields == Default::default() {
            None
        } else {
            Some(v1beta1::RollingUpdateCloneSetStrategy {
                pod_update_policy: policy,
                ..rolling_fields
            })
        };
        v1beta1::CloneSet {
            metadata: self.metadata.clone(),
            spec: v1beta1::CloneSetSpec {
                replicas: spec.replicas,
                selector: spec.selector.clone(),
                template: spec.template.clone(),
                volume_claim_templates: spec.volume_claim_templates.clone(),
                scale_strategy: v1beta1::CloneSetScaleStrategy {
                    pods_to_delete: spec.scale_strategy.pods_to_delete.clone(),
                    max_unavailable: spec.scale_strategy.max_unavailable.clone(),
                    enable_pvc_reuse: !spec.scale_strategy.disable_pvc_reuse,
                    exclude_preparing_delete: spec.scale_strategy.exclude_preparing_delete
                        || exclude_label,
                },
                update_strategy: v1beta1::CloneSetUpdateStrategy {
                    type_: Some(type_),
                    rolling_update,
                },
                revision_history_limit: spec.revision_history_limit,
                min_ready_seconds: spec.min_ready_seconds,
                lifecycle: spec.lifecycle.clone(),
                progress_deadline_seconds: spec.progress_deadline_seconds,
            },
            status: self.status.clone(),
        }
    }

    fn from_hub_fields(hub: &v1beta1::CloneSet) -> Self {
        let spec = &hub.spec;
        let annotations = hub.metadata.annotations.as_ref();
        let exclude_label = hub
            .metadata
            .labels
            .as_ref()
            .and_then(|labels| labels.get(keys::cloneset::SCALING_EXCLUDE_PREPARING_DELETE_LABEL))
            .is_some_and(|value| value == "true");
        let rolling = spec
            .update_strategy
            .rolling_update
            .clone()
            .unwrap_or_default();
        use v1alpha1::CloneSetUpdateStrategyType as Alpha;
        use v1beta1::{CloneSetPodUpdatePolicy as Policy, CloneSetUpdateStrategyType as Beta};
        let type_ = match (&spec.update_strategy.type_, &rolling.pod_update_policy) {
            (Some(Beta::OnDelete), _) => Some(Alpha::OnDelete),
            (_, None) => None,
            (_, Some(Policy::ReCreate)) => Some(Alpha::ReCreate),
            (_, Some(Policy::InPlaceIfPossible)) => Some(Alpha::InPlaceIfPossible),
            (_, Some(Policy::InPlaceOnly)) => Some(Alpha::InPlaceOnly),
            (_, Some(Policy::Unknown(other))) => Some(Alpha::Unknown(other.clone())),
        };
        v1alpha1::CloneSet {
            metadata: hub.metadata.clone(),
            spec: v1alpha1::CloneSetSpec {
                replicas: spec.replicas,
                selector: spec.selector.clone(),
                template: spec.template.clone(),
                volume_claim_templates: spec.volume_claim_templates.clone(),
                scale_strategy: v1alpha1::CloneSetScaleStrategy {
                    pods_to_delete: spec.scale_strategy.pods_to_delete.clone(),
                    max_unavailable: spec.scale_strategy.max_unavailable.clone(),
                    disable_pvc_reuse: !spec.scale_strategy.enable_pvc_reuse,
                    exclude_preparing_delete: spec.scale_strategy.exclude_preparing_delete
                        && !exclude_label,
                },
                update_strategy: v1alpha1::CloneSetUpdateStrategy {
                    type_,
                    partition: rolling.partition,
                    max_unavailable: rolling.max_unavailable,
                    max_surge: rolling.max_surge,
                    paused: rolling.paused,
                    priority_strategy: rolling.priority_strategy,
                    scatter_strategy: rolling.scatter_strategy,
                    in_place_update_strategy: rolling
                        .in_place_update_strategy
                        .map(|strategy| in_place_from_hub(strategy, annotations)),
                },
                revision_history_limit: spec.revision_history_limit,
                min_ready_seconds: spec.min_ready_seconds,
                lifecycle: spec.lifecycle.clone(),
                progress_deadline_seconds: spec.progress_deadline_seconds,
            },
            status: hub.status.clone(),
        }
    }
}

hub_conversion!(v1alpha1::CloneSet => v1beta1::CloneSet);

/// A v1alpha1 image-pre-download annotation: absent (`None`), or present with the value it parses to
/// (`Some(None)` when it does not parse).
type AnnotationValue<T> = Option<Option<T>>;

struct PreDownloadAnnotations {
    parallelism: AnnotationValue<IntOrString>,
    timeout_seconds: AnnotationValue<i32>,
    min_updated_ready_pods: AnnotationValue<i32>,
}

impl PreDownloadAnnotations {
    fn read(annotations: Option<&BTreeMap<String, String>>) -> Self {
        let get = |key: &str| {
            annotations
                .and_then(|annotations| annotations.get(key))
                .filter(|value| !value.is_empty())
        };
        let int = |key: &str| get(key).map(|value| value.parse::<i32>().ok());
        Self {
            parallelism: get(keys::inplace::IMAGE_PRE_DOWNLOAD_PARALLELISM_ANNOTATION)
                .map(|value| Some(parse_int_or_string(value))),
            timeout_seconds: int(keys::inplace::IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS_ANNOTATION),
            min_updated_ready_pods: int(
                keys::inplace::IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS_ANNOTATION,
            ),
        }
    }

    fn is_empty(&self) -> bool {
        self.parallelism.is_none()
            && self.timeout_seconds.is_none()
            && self.min_updated_ready_pods.is_none()
    }
}

/// Kubernetes' `intstr.Parse`: an integer when the text is one, else the text.
fn parse_int_or_string(value: &str) -> IntOrString {
    value
        .parse::<i32>()
        .map_or_else(|_| IntOrString::String(value.to_owned()), IntOrString::Int)
}

fn in_place_to_hub(
    strategy: Option<&InPlaceUpdateStrategy>,
    annotations: Option<&BTreeMap<String, String>>,
) -> Option<InPlaceUpdateStrategy> {
    let from_annotations = PreDownloadAnnotations::read(annotations);
    if strategy.is_none() && from_annotations.is_empty() {
        return None;
    }
    let base = strategy.cloned().unwrap_or_default();
    Some(InPlaceUpdateStrategy {
        grace_period_seconds: base.grace_period_seconds,
        image_pre_download_parallelism: from_annotations
            .parallelism
            .unwrap_or(base.image_pre_download_parallelism),
        image_pre_download_timeout_seconds: from_annotations
            .timeout_seconds
            .unwrap_or(base.image_pre_download_timeout_seconds),
        image_pre_download_min_updated_ready_pods: from_annotations
            .min_updated_ready_pods
            .unwrap_or(base.image_pre_download_min_updated_ready_pods),
    })
}

fn in_place_from_hub(
    strategy: InPlaceUpdateStrategy,
    annotations: Option<&BTreeMap<String, String>>,
) -> InPlaceUpdateStrategy {
    let from_annotations = PreDownloadAnnotations::read(annotations);
    fn unless_annotated<T: PartialEq>(
        field: Option<T>,
        annotation: &AnnotationValue<T>,
    ) -> Option<T> {
        match annotation {
            Some(Some(annotated)) if field.as_ref() == Some(annotated) => None,
            _ => field,
        }
    }
    InPlaceUpdateStrategy {
        grace_period_seconds: strategy.grace_period_seconds,
        image_pre_download_parallelism: unless_annotated(
            strategy.image_pre_download_parallelism,
            &from_annotations.parallelism,
        ),
        image_pre_download_timeout_seconds: unless_annotated(
            strategy.image_pre_download_timeout_seconds,
            &from_annotations.timeout_seconds,
        ),
        image_pre_download_min_updated_ready_pods: unless_annotated(
            strategy.image_pre_download_min_updated_ready_pods,
            &from_annotations.min_updated_ready_pods,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::STASH_ANNOTATION;

    fn alpha(yaml: &str) -> v1alpha1::CloneSet {
        serde_saphyr::from_str(yaml).unwrap()
    }

    const BASE: &str = "
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: demo
  namespace: default
spec:
  selector: {matchLabels: {app: demo}}
  template:
    metadata: {labels: {app: demo}}
    spec: {containers: [{name: main, image: 'nginx:1.25'}]}
";

    fn with(extra: &str) -> v1alpha1::CloneSet {
        alpha(&format!("{BASE}{extra}"))
    }

    fn round_trip(cs: &v1alpha1::CloneSet) -> v1beta1::CloneSet {
        let beta = v1beta1::CloneSet::from(cs);
        assert_eq!(&v1alpha1::CloneSet::from(&beta), cs, "round trip");
        beta
    }

    fn no_stash(beta: &v1beta1::CloneSet) {
        let stashed = beta
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(STASH_ANNOTATION));
        assert!(!stashed, "{:?}", beta.metadata.annotations);
    }

    #[test]
    fn update_strategy_types() {
        for (alpha_type, beta_type, policy) in [
            ("ReCreate", "RollingUpdate", Some("ReCreate")),
            (
                "InPlaceIfPossible",
                "RollingUpdate",
                Some("InPlaceIfPossible"),
            ),
            ("InPlaceOnly", "RollingUpdate", Some("InPlaceOnly")),
            ("Teleport", "RollingUpdate", Some("Teleport")),
        ] {
            let cs = with(&format!(
                "  updateStrategy: {{type: {alpha_type}, partition: 3, maxSurge: '10%', paused: true}}\n"
            ));
            let beta = round_trip(&cs);
            no_stash(&beta);
            let strategy = &beta.spec.update_strategy;
            assert_eq!(strategy.type_.as_ref().unwrap().as_str(), beta_type);
            let rolling = strategy.rolling_update.as_ref().unwrap();
            assert_eq!(
                rolling
                    .pod_update_policy
                    .as_ref()
                    .map(v1beta1::CloneSetPodUpdatePolicy::as_str),
                policy
            );
            assert_eq!(rolling.partition, Some(IntOrString::Int(3)));
            assert_eq!(rolling.max_surge, Some(IntOrString::String("10%".into())));
            assert!(rolling.paused);
        }
    }

    #[test]
    fn on_delete_has_no_rolling_update_unless_fields_are_set() {
        let bare = round_trip(&with("  updateStrategy: {type: OnDelete}\n"));
        no_stash(&bare);
        assert_eq!(
            bare.spec.update_strategy.type_,
            Some(v1beta1::CloneSetUpdateStrategyType::OnDelete)
        );
        assert_eq!(bare.spec.update_strategy.rolling_update, None);
        let with_partition =
            round_trip(&with("  updateStrategy: {type: OnDelete, partition: 2}\n"));
        no_stash(&with_partition);
        assert_eq!(
            with_partition
                .spec
                .update_strategy
                .rolling_update
                .unwrap()
                .partition,
            Some(IntOrString::Int(2))
        );
    }

    #[test]
    fn unset_type_means_rolling_update_without_policy() {
        let beta = round_trip(&with(""));
        no_stash(&beta);
        assert_eq!(
            beta.spec.update_strategy.type_,
            Some(v1beta1::CloneSetUpdateStrategyType::RollingUpdate)
        );
        assert_eq!(
            beta.spec
                .update_strategy
                .rolling_update
                .unwrap()
                .pod_update_policy,
            None
        );
    }

    #[test]
    fn pvc_reuse_is_negated() {
        let reuse = round_trip(&with(""));
        assert!(
            reuse.spec.scale_strategy.enable_pvc_reuse,
            "v1alpha1 reuses PVCs by default"
        );
        let no_reuse = round_trip(&with("  scaleStrategy: {disablePVCReuse: true}\n"));
        assert!(!no_reuse.spec.scale_strategy.enable_pvc_reuse);
        let json = serde_json::to_value(&no_reuse).unwrap();
        assert_eq!(
            json["spec"]["scaleStrategy"]["enablePVCReuse"], false,
            "always written, even when false"
        );
    }

    #[test]
    fn exclude_preparing_delete_label_becomes_the_field() {
        let mut cs = with("");
        cs.metadata.labels = Some(
            [(
                keys::cloneset::SCALING_EXCLUDE_PREPARING_DELETE_LABEL.to_owned(),
                "true".to_owned(),
            )]
            .into(),
        );
        let beta = round_trip(&cs);
        no_stash(&beta);
        assert!(beta.spec.scale_strategy.exclude_preparing_delete);
        let other_value = {
            let mut cs = with("");
            cs.metadata.labels = Some(
                [(
                    keys::cloneset::SCALING_EXCLUDE_PREPARING_DELETE_LABEL.to_owned(),
                    "yes".to_owned(),
                )]
                .into(),
            );
            round_trip(&cs)
        };
        assert!(
            !other_value.spec.scale_strategy.exclude_preparing_delete,
            "only \"true\" counts"
        );
    }

    #[test]
    fn image_pre_download_annotations_become_fields() {
        // As defaulted by the webhook: in-place policies always carry an inPlaceUpdateStrategy.
        let mut cs =
            with("  updateStrategy: {type: InPlaceIfPossible, inPlaceUpdateStrategy: {}}\n");
        cs.metadata.annotations = Some(
            [
                (
                    keys::inplace::IMAGE_PRE_DOWNLOAD_PARALLELISM_ANNOTATION.to_owned(),
                    "50%".to_owned(),
                ),
                (
                    keys::inplace::IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS_ANNOTATION.to_owned(),
                    "600".to_owned(),
                ),
                (
                    keys::inplace::IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS_ANNOTATION.to_owned(),
                    "oops".to_owned(),
                ),
            ]
            .into(),
        );
        let beta = round_trip(&cs);
        no_stash(&beta);
        let in_place = beta
            .spec
            .update_strategy
            .rolling_update
            .unwrap()
            .in_place_update_strategy
            .unwrap();
        assert_eq!(
            in_place.image_pre_download_parallelism,
            Some(IntOrString::String("50%".into()))
        );
        assert_eq!(in_place.image_pre_download_timeout_seconds, Some(600));
        assert_eq!(
            in_place.image_pre_download_min_updated_ready_pods, None,
            "an unparsable annotation gives no value"
        );

        let mut undefaulted = cs.clone();
        undefaulted.spec.update_strategy.in_place_update_strategy = None;
        let beta = round_trip(&undefaulted);
        assert!(
            beta.metadata
                .annotations
                .unwrap()
                .contains_key(STASH_ANNOTATION),
            "no inPlaceUpdateStrategy besides the annotations is told apart by the stash"
        );
    }

    #[test]
    fn annotation_wins_over_field_and_the_field_is_stashed() {
        let mut cs = with(
            "  updateStrategy: {type: InPlaceIfPossible, inPlaceUpdateStrategy: {imagePreDownloadTimeoutSeconds: 30}}\n",
        );
        cs.metadata.annotations = Some(
            [(
                keys::inplace::IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS_ANNOTATION.to_owned(),
                "90".to_owned(),
            )]
            .into(),
        );
        let beta = round_trip(&cs);
        let in_place = beta
            .spec
            .update_strategy
            .rolling_update
            .as_ref()
            .unwrap()
            .in_place_update_strategy
            .clone()
            .unwrap();
        assert_eq!(
            in_place.image_pre_download_timeout_seconds,
            Some(90),
            "upstream: the annotation wins"
        );
        assert!(
            beta.metadata
                .annotations
                .as_ref()
                .unwrap()
                .contains_key(STASH_ANNOTATION)
        );

        let mut edited = beta.clone();
        edited.spec.replicas = Some(7);
        let back = v1alpha1::CloneSet::from(&edited);
        assert_eq!(back.spec.replicas, Some(7));
        assert_eq!(
            back.spec
                .update_strategy
                .in_place_update_strategy
                .unwrap()
                .image_pre_download_timeout_seconds,
            None,
            "a stale stash is ignored"
        );
        assert!(
            !back
                .metadata
                .annotations
                .unwrap()
                .contains_key(STASH_ANNOTATION)
        );
    }

    #[test]
    fn native_v1beta1_fields_stay_fields() {
        let beta: v1beta1::CloneSet = serde_saphyr::from_str(
            "
apiVersion: apps.kruise.io/v1beta1
kind: CloneSet
metadata: {name: demo}
spec:
  selector: {matchLabels: {app: demo}}
  template: {}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      podUpdatePolicy: InPlaceOnly
      inPlaceUpdateStrategy: {imagePreDownloadParallelism: 2}
",
        )
        .unwrap();
        let alpha = v1alpha1::CloneSet::from(&beta);
        assert_eq!(
            alpha.spec.update_strategy.type_,
            Some(v1alpha1::CloneSetUpdateStrategyType::InPlaceOnly)
        );
        assert_eq!(
            alpha
                .spec
                .update_strategy
                .in_place_update_strategy
                .unwrap()
                .image_pre_download_parallelism,
            Some(IntOrString::Int(2))
        );
        assert_ne!(
            alpha.spec.scale_strategy.disable_pvc_reuse,
            beta.spec.scale_strategy.enable_pvc_reuse
        );
    }
}
