//! New pods and their claims, and the identity and storage a pod must have (upstream `newStatefulSetPod`,
//! `getPersistentVolumeClaims`, `identityMatches`, `storageMatches`, `updateIdentity`, `updateStorage`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod, PodTemplateSpec, Volume,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kruise_api::apps::v1beta1::StatefulSet;
use kruise_api::keys;

use super::ordinals::{claim_name, ordinal_of, parent_of, pod_name};
use crate::pod_view;

/// The API version written in the owner reference of new pods (Advanced StatefulSet is served as v1beta1
/// by every supported Kruise version).
pub const OWNER_API_VERSION: &str = "apps.kruise.io/v1beta1";

/// `namespace/name` of the StatefulSet.
pub(crate) fn key(set: &StatefulSet) -> String {
    format!(
        "{}/{}",
        set.metadata.namespace.as_deref().unwrap_or(""),
        set.metadata.name.as_deref().unwrap_or("")
    )
}

pub(crate) fn set_name(set: &StatefulSet) -> &str {
    set.metadata.name.as_deref().unwrap_or("")
}

/// The claims of the pod with `ordinal`, one per volume claim template, in template order:
/// `(template name, claim)`.
pub(crate) fn claims_for(set: &StatefulSet, ordinal: i64) -> Vec<(&str, PersistentVolumeClaim)> {
    let name = set_name(set);
    set.spec
        .volume_claim_templates
        .iter()
        .map(|template| {
            let template_name = template.metadata.name.as_deref().unwrap_or("");
            let mut claim = template.clone();
            claim.metadata.name = Some(claim_name(template_name, name, ordinal));
            claim.metadata.namespace.clone_from(&set.metadata.namespace);
            claim
                .metadata
                .labels
                .clone_from(&set.spec.selector.match_labels);
            (template_name, claim)
        })
        .collect()
}

/// A new pod on `ordinal` from `template` at `revision`. The lifecycle state is added by the caller.
pub(crate) fn new_pod(
    set: &StatefulSet,
    template: &PodTemplateSpec,
    revision: &str,
    ordinal: i64,
    pod_index_label: bool,
) -> Pod {
    let name = set_name(set);
    let template_meta = template.metadata.clone().unwrap_or_default();
    let mut pod = Pod {
        metadata: ObjectMeta {
            name: Some(pod_name(name, ordinal)),
            generate_name: Some(format!("{name}-")),
            namespace: set.metadata.namespace.clone(),
            labels: Some(template_meta.labels.unwrap_or_default()),
            annotations: template_meta.annotations,
            finalizers: template_meta.finalizers,
            owner_references: Some(vec![OwnerReference {
                api_version: OWNER_API_VERSION.to_owned(),
                kind: "StatefulSet".to_owned(),
                name: name.to_owned(),
                uid: set.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..ObjectMeta::default()
        },
        spec: Some(template.spec.clone().unwrap_or_default()),
        status: None,
    };
    set_identity(set, &mut pod, ordinal, pod_index_label);
    if let Some(spec) = pod.spec.as_mut() {
        spec.hostname = pod.metadata.name.clone();
        spec.subdomain = Some(set.spec.service_name.clone()).filter(|s| !s.is_empty());
    }
    set_storage(set, &mut pod, ordinal);
    kruise_inplace::apply::write_revision(
        &mut pod,
        revision,
        kruise_inplace::RevisionLabels::Exact,
    );
    pod
}

/// Upstream `identityMatches`: the name is `<set>-<ordinal>`, the namespace is the set's, and the
/// `statefulset.kubernetes.io/pod-name` label is the name.
pub(crate) fn identity_matches(set: &StatefulSet, pod: &Pod) -> bool {
    let name = pod_view::name(pod);
    let Some(ordinal) = ordinal_of(name) else {
        return false;
    };
    parent_of(name) == Some(set_name(set))
        && name == pod_name(set_name(set), i64::from(ordinal))
        && pod.metadata.namespace == set.metadata.namespace
        && kruise_api::pod::label(pod, keys::kubernetes::STATEFULSET_POD_NAME_LABEL) == Some(name)
}

/// Upstream `storageMatches`: for every volume claim template, a volume of the template's name mounts the
/// pod's claim.
pub(crate) fn storage_matches(set: &StatefulSet, pod: &Pod) -> bool {
    let Some(ordinal) = ordinal_of(pod_view::name(pod)) else {
        return false;
    };
    let volumes = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.volumes.as_deref())
        .unwrap_or_default();
    set.spec.volume_claim_templates.iter().all(|template| {
        let template_name = template.metadata.name.as_deref().unwrap_or("");
        let wanted = claim_name(template_name, set_name(set), i64::from(ordinal));
        volumes.iter().any(|volume| {
            volume.name == template_name
                && volume
                    .persistent_volume_claim
                    .as_ref()
                    .is_some_and(|source| source.claim_name == wanted)
        })
    })
}

/// The pod with its identity and storage fixed (upstream `UpdateStatefulPod`'s changes).
pub(crate) fn with_identity(set: &StatefulSet, pod: &Pod, pod_index_label: bool) -> Pod {
    let mut updated = pod.clone();
    let ordinal = ordinal_of(pod_view::name(pod)).map_or(-1, i64::from);
    if !identity_matches(set, pod) {
        set_identity(set, &mut updated, ordinal, pod_index_label);
    }
    if !storage_matches(set, pod) {
        set_storage(set, &mut updated, ordinal);
    }
    updated
}

fn set_identity(set: &StatefulSet, pod: &mut Pod, ordinal: i64, pod_index_label: bool) {
    let name = pod_name(set_name(set), ordinal);
    pod.metadata.namespace.clone_from(&set.metadata.namespace);
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert(
        keys::kubernetes::STATEFULSET_POD_NAME_LABEL.to_owned(),
        name.clone(),
    );
    if pod_index_label {
        labels.insert(
            keys::kubernetes::POD_INDEX_LABEL.to_owned(),
            ordinal.to_string(),
        );
    }
    pod.metadata.name = Some(name);
}

/// Upstream `updateStorage`: one volume per template (named after it) mounting the pod's claim, then the
/// pod's other volumes. Upstream orders the claim volumes by Go map iteration (random); here they follow the
/// templates.
fn set_storage(set: &StatefulSet, pod: &mut Pod, ordinal: i64) {
    if set.spec.volume_claim_templates.is_empty() {
        return;
    }
    let Some(spec) = pod.spec.as_mut() else {
        return;
    };
    let claims = claims_for(set, ordinal);
    let mut volumes: Vec<Volume> = claims
        .iter()
        .map(|(template, claim)| Volume {
            name: (*template).to_owned(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim.metadata.name.clone().unwrap_or_default(),
                read_only: Some(false),
            }),
            ..Volume::default()
        })
        .collect();
    for volume in spec.volumes.take().unwrap_or_default() {
        if !claims.iter().any(|(template, _)| *template == volume.name) {
            volumes.push(volume);
        }
    }
    spec.volumes = Some(volumes);
}
