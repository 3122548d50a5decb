//! The storage system of the claim-resize scenarios, played by the test: the local API server has no
//! volume provisioner, no PersistentVolume binder and no resizer. A StorageClass (any provisioner name),
//! a PersistentVolume bound to each claim (PV `claimRef`, claim `spec.volumeName`, claim status `Bound`
//! with its capacity, through the status subresource), and a claim's capacity set as a resizer would.
//!
//! What kube-apiserver v1.20 accepts: expanding a claim's `spec.resources.requests.storage` only once
//! the claim is `Bound` ("spec is immutable after creation except resources.requests for bound claims"),
//! only when its StorageClass has `allowVolumeExpansion: true` (admission `PersistentVolumeClaimResize`:
//! "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must
//! support resize"), and never to less than before; a claim's status (phase, capacity) is written freely
//! through the status subresource.

use anyhow::{Context, Result};
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::StorageClass;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use serde_json::json;

use crate::asts_env::ROLLOUT_WAIT;
use crate::cloneset_env::Env;
use crate::support::wait_for;

/// The provisioner the test's StorageClasses name (nothing runs it).
const PROVISIONER: &str = "e2e.kruise.io/played-by-the-test";

/// Creates the StorageClass `name` (cluster-wide), allowing volume expansion or not (`allowVolumeExpansion`
/// left unset).
pub async fn storage_class(env: &Env, name: &str, allow_expansion: bool) -> Result<()> {
    let mut class = json!({
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": name}, "provisioner": PROVISIONER,
    });
    if allow_expansion {
        class["allowVolumeExpansion"] = json!(true);
    }
    let class: StorageClass = serde_json::from_value(class)?;
    Api::<StorageClass>::all(env.client.clone())
        .create(&PostParams::default(), &class)
        .await
        .with_context(|| format!("creating StorageClass {name}"))?;
    Ok(())
}

/// The claims API of the namespace.
pub fn claims(env: &Env) -> Api<PersistentVolumeClaim> {
    Api::namespaced(env.client.clone(), &env.namespace)
}

/// `spec.resources.requests.storage` of `claim`.
pub fn requested(claim: &PersistentVolumeClaim) -> Option<&str> {
    claim
        .spec
        .as_ref()?
        .resources
        .as_ref()?
        .requests
        .as_ref()?
        .get("storage")
        .map(|q| q.0.as_str())
}

/// `status.capacity.storage` of `claim`.
pub fn capacity(claim: &PersistentVolumeClaim) -> Option<&str> {
    claim
        .status
        .as_ref()?
        .capacity
        .as_ref()?
        .get("storage")
        .map(|q| q.0.as_str())
}

/// Waits for each claim of `names` (created by the controller) and binds it to a new PersistentVolume of
/// the claim's class and requested size, as a provisioner and the PV binder would.
pub async fn bind_claims(env: &Env, names: &[&str]) -> Result<()> {
    let api = claims(env);
    let volumes: Api<PersistentVolume> = Api::all(env.client.clone());
    for name in names {
        let claim = wait_for(&format!("claim {name}"), ROLLOUT_WAIT, || async {
            Ok(api.get_opt(name).await?)
        })
        .await?;
        if claim
            .spec
            .as_ref()
            .and_then(|s| s.volume_name.as_deref())
            .is_some_and(|v| !v.is_empty())
        {
            continue;
        }
        let size = requested(&claim).unwrap_or("1Gi").to_owned();
        let volume_name = format!("{}-{name}", env.namespace);
        let volume: PersistentVolume = serde_json::from_value(json!({
            "metadata": {"name": volume_name},
            "spec": {
                "storageClassName": claim.spec.as_ref().and_then(|s| s.storage_class_name.clone()),
                "capacity": {"storage": size},
                "accessModes": ["ReadWriteOnce"],
                "hostPath": {"path": format!("/tmp/{volume_name}")},
                "claimRef": {"namespace": env.namespace, "name": name, "uid": claim.uid()},
            },
        }))?;
        volumes.create(&PostParams::default(), &volume).await?;
        api.patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"volumeName": volume_name}})),
        )
        .await
        .with_context(|| format!("binding claim {name}"))?;
        api.patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Bound",
                "accessModes": ["ReadWriteOnce"], "capacity": {"storage": size}}})),
        )
        .await
        .with_context(|| format!("marking claim {name} Bound"))?;
    }
    Ok(())
}

/// Sets the capacity of `claim` to `storage`, as the resizer does once the volume has grown.
pub async fn set_capacity(env: &Env, claim: &str, storage: &str) -> Result<()> {
    claims(env)
        .patch_status(
            claim,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"capacity": {"storage": storage}}})),
        )
        .await
        .with_context(|| format!("setting the capacity of claim {claim}"))?;
    Ok(())
}

/// `name: request/capacity` for each claim of the namespace, for messages.
pub async fn describe_claims(env: &Env) -> Result<Vec<String>> {
    Ok(claims(env)
        .list(&Default::default())
        .await?
        .items
        .iter()
        .map(|claim| {
            format!(
                "{}: {}/{}",
                claim.name_any(),
                requested(claim).unwrap_or("-"),
                capacity(claim).unwrap_or("-")
            )
        })
        .collect())
}
