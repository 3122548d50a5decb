//! New pods and claims for scale-up (upstream `NewVersionedPods`, `GetPersistentVolumeClaims`,
//! `getOrGenAvailableIDs`).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use k8s_openapi::api::core::v1::{
    PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod, PodTemplateSpec, Volume,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::jiff::Zoned;
use kruise_api::apps::v1beta1::CloneSet;
use kruise_api::keys;
use kruise_inplace::RevisionLabels;
use kruise_lifecycle::Workload;

use super::error::Error;
use super::input::InstanceIds;

/// The API version written in the owner references of new pods and claims: served by every Kruise version
/// (v1beta1 is not served before v1.9).
pub const OWNER_API_VERSION: &str = "apps.kruise.io/v1alpha1";

/// How many generated ids in a row may collide with ids in use before the plan gives up.
const MAX_ID_ATTEMPTS: usize = 1000;

/// The instance ids for `count` new pods: first those of claims left without an active pod (when claims are
/// reused), then new ones from `ids` that no pod or claim uses; sorted, as upstream lists them.
pub(crate) fn instance_ids(
    cloneset: &CloneSet,
    count: usize,
    pod_ids: &[&str],
    claims: &[PersistentVolumeClaim],
    reuse: bool,
    ids: &dyn InstanceIds,
) -> Result<Vec<(String, bool)>, Error> {
    let label = keys::cloneset::INSTANCE_ID_LABEL;
    let mut in_use: HashSet<String> = HashSet::new();
    let mut free: BTreeSet<String> = BTreeSet::new();
    for claim in claims {
        if let Some(id) = claim.metadata.labels.as_ref().and_then(|l| l.get(label))
            && !id.is_empty()
        {
            in_use.insert(id.clone());
            free.insert(id.clone());
        }
    }
    for &id in pod_ids {
        if !id.is_empty() {
            in_use.insert(id.to_owned());
            free.remove(id);
        }
    }
    let mut out: Vec<(String, bool)> = Vec::with_capacity(count);
    let mut free = free.into_iter();
    while out.len() < count {
        if reuse && let Some(id) = free.next() {
            out.push((id, true));
            continue;
        }
        let mut attempts = 0;
        loop {
            let id = ids.next_id();
            if !id.is_empty() && in_use.insert(id.clone()) {
                out.push((id, false));
                break;
            }
            attempts += 1;
            if attempts >= MAX_ID_ATTEMPTS {
                return Err(Error::InstanceIds {
                    cloneset: key(cloneset),
                    attempts,
                });
            }
        }
    }
    out.sort();
    Ok(out)
}

/// `namespace/name` of the CloneSet.
pub(crate) fn key(cloneset: &CloneSet) -> String {
    format!(
        "{}/{}",
        cloneset.metadata.namespace.as_deref().unwrap_or(""),
        cloneset.metadata.name.as_deref().unwrap_or("")
    )
}

fn owner(cloneset: &CloneSet) -> OwnerReference {
    OwnerReference {
        api_version: OWNER_API_VERSION.to_owned(),
        kind: "CloneSet".to_owned(),
        name: cloneset.metadata.name.clone().unwrap_or_default(),
        uid: cloneset.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The claims of the pod with instance id `id` (upstream `GetPersistentVolumeClaims`), in template order.
pub(crate) fn claims_for(cloneset: &CloneSet, id: &str) -> Vec<PersistentVolumeClaim> {
    let name = cloneset.metadata.name.as_deref().unwrap_or("");
    cloneset
        .spec
        .volume_claim_templates
        .iter()
        .map(|template| {
            let mut claim = template.clone();
            let template_name = template.metadata.name.as_deref().unwrap_or("");
            claim.metadata.name = Some(format!("{template_name}-{name}-{id}"));
            claim
                .metadata
                .namespace
                .clone_from(&cloneset.metadata.namespace);
            let labels = claim.metadata.labels.get_or_insert_with(BTreeMap::new);
            for (k, v) in cloneset.spec.selector.match_labels.iter().flatten() {
                labels.insert(k.clone(), v.clone());
            }
            labels.insert(keys::cloneset::INSTANCE_ID_LABEL.to_owned(), id.to_owned());
            claim
                .metadata
                .owner_references
                .get_or_insert_with(Vec::new)
                .push(owner(cloneset));
            claim
        })
        .collect()
}

/// A new pod at `revision` from `template` with instance id `id` (upstream `newVersionedPods` plus the
/// `PreparingNormal` state the scale step writes).
pub(crate) fn new_pod(
    cloneset: &CloneSet,
    template: &PodTemplateSpec,
    revision: &str,
    id: &str,
    labels: RevisionLabels,
    workload: &Workload<'_>,
    now: &Zoned,
) -> Pod {
    let name = cloneset.metadata.name.as_deref().unwrap_or("");
    let template_meta = template.metadata.clone().unwrap_or_default();
    let mut pod = Pod {
        metadata: ObjectMeta {
            name: Some(format!("{name}-{id}")),
            generate_name: Some(format!("{name}-")),
            namespace: cloneset.metadata.namespace.clone(),
            labels: Some(template_meta.labels.unwrap_or_default()),
            annotations: template_meta.annotations,
            finalizers: template_meta.finalizers,
            owner_references: Some(vec![owner(cloneset)]),
            ..ObjectMeta::default()
        },
        spec: Some(template.spec.clone().unwrap_or_default()),
        status: None,
    };
    kruise_inplace::apply::write_revision(&mut pod, revision, labels);
    if let Some(labels) = pod.metadata.labels.as_mut() {
        labels.insert(keys::cloneset::INSTANCE_ID_LABEL.to_owned(), id.to_owned());
    }
    kruise_inplace::condition::inject_readiness_gate(&mut pod);
    let claims = claims_for(cloneset, id);
    if !claims.is_empty()
        && let Some(spec) = pod.spec.as_mut()
    {
        let mut volumes: Vec<Volume> = claims
            .iter()
            .zip(&cloneset.spec.volume_claim_templates)
            .map(|(claim, template)| Volume {
                name: template.metadata.name.clone().unwrap_or_default(),
                persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                    claim_name: claim.metadata.name.clone().unwrap_or_default(),
                    read_only: Some(false),
                }),
                ..Volume::default()
            })
            .collect();
        for volume in spec.volumes.take().unwrap_or_default() {
            if !volumes.iter().any(|v| v.name == volume.name) {
                volumes.push(volume);
            }
        }
        spec.volumes = Some(volumes);
    }
    workload.created(&pod, now).change.apply_to(&mut pod);
    pod
}

/// The slow-start batch of the `position`-th creation (batches of 1, 2, 4, …).
pub(crate) fn batch_of(position: usize) -> u32 {
    (position + 1).ilog2()
}
