//! `persistentVolumeClaimRetentionPolicy` (gate `StatefulSetAutoDeletePVC`): which owner references a
//! pod's claims must carry so that Kubernetes' garbage collector deletes them with the StatefulSet
//! (`whenDeleted: Delete`: the set owns them) or with a scaled-down pod (`whenScaled: Delete`: the condemned
//! pod owns them). Upstream `claimOwnerMatchesSetAndPod`, `updateClaimOwnerRefForSetAndPod`,
//! `PodClaimIsStale`.

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kruise_api::apps::v1beta1::{PersistentVolumeClaimRetentionPolicyType as Policy, StatefulSet};

/// Who must own a claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Owners {
    set: bool,
    pod: bool,
}

/// The owners the policy wants for a claim of a pod that is kept (`in_range`) or scaled down. Unknown
/// or missing values count as `Retain`, as upstream.
fn wanted(set: &StatefulSet, in_range: bool) -> Owners {
    let policy = set.spec.persistent_volume_claim_retention_policy.as_ref();
    let delete = |value: Option<&Policy>| matches!(value, Some(Policy::Delete));
    let when_deleted = delete(policy.and_then(|p| p.when_deleted.as_ref()));
    let when_scaled = delete(policy.and_then(|p| p.when_scaled.as_ref()));
    match (when_scaled, when_deleted) {
        (false, false) => Owners {
            set: false,
            pod: false,
        },
        (false, true) => Owners {
            set: true,
            pod: false,
        },
        (true, false) => Owners {
            set: false,
            pod: !in_range,
        },
        (true, true) => Owners {
            set: in_range,
            pod: !in_range,
        },
    }
}

fn owned_by(claim: &PersistentVolumeClaim, uid: &str) -> bool {
    claim
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|owner| owner.uid == uid)
}

/// The owner references `claim` (of `pod`) should have under `set`'s policy, or `None` when it already
/// follows the policy. In the policy `whenScaled: Delete, whenDeleted: Retain`, a claim owned by the set is
/// freed from it whatever happens to the pod, as upstream.
pub(crate) fn owners_to_write(
    set: &StatefulSet,
    pod: &Pod,
    claim: &PersistentVolumeClaim,
    in_range: bool,
) -> Option<Vec<OwnerReference>> {
    let want = wanted(set, in_range);
    let set_uid = set.metadata.uid.as_deref().unwrap_or("");
    let pod_uid = pod.metadata.uid.as_deref().unwrap_or("");
    let has_set = owned_by(claim, set_uid);
    let has_pod = owned_by(claim, pod_uid);
    if has_set == want.set && has_pod == want.pod {
        return None;
    }
    let mut owners = claim.metadata.owner_references.clone().unwrap_or_default();
    let mut fix = |uid: &str, wanted: bool, has: bool, reference: OwnerReference| {
        if wanted && !has {
            owners.push(reference);
        } else if !wanted && has {
            owners.retain(|owner| owner.uid != uid);
        }
    };
    fix(
        set_uid,
        want.set,
        has_set,
        OwnerReference {
            api_version: super::create::OWNER_API_VERSION.to_owned(),
            kind: "StatefulSet".to_owned(),
            name: set.metadata.name.clone().unwrap_or_default(),
            uid: set_uid.to_owned(),
            ..OwnerReference::default()
        },
    );
    fix(
        pod_uid,
        want.pod,
        has_pod,
        OwnerReference {
            api_version: "v1".to_owned(),
            kind: "Pod".to_owned(),
            name: pod.metadata.name.clone().unwrap_or_default(),
            uid: pod_uid.to_owned(),
            ..OwnerReference::default()
        },
    );
    Some(owners)
}

/// Upstream `PodClaimIsStale` for a pod about to be created (no uid yet): with `whenScaled: Delete`, a claim
/// that has an owner reference with the pod's name belongs to an earlier pod and is about to be deleted.
pub(crate) fn is_stale(set: &StatefulSet, pod_name: &str, claim: &PersistentVolumeClaim) -> bool {
    let when_scaled = set
        .spec
        .persistent_volume_claim_retention_policy
        .as_ref()
        .and_then(|p| p.when_scaled.as_ref());
    if !matches!(when_scaled, Some(Policy::Delete)) {
        return false;
    }
    claim
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|owner| owner.name == pod_name && !owner.uid.is_empty())
}
