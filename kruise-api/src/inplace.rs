//! In-place update types shared by the workloads and the JSON values of the in-place annotations
//! (upstream `apis/apps/pub/inplace_update.go`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omitempty::is_zero;

/// How a workload updates pods in place.
///
/// The three `imagePreDownload*` fields are the HEAD (v1beta1) form of the v1alpha1 workload annotations in
/// [`keys::inplace`](crate::keys::inplace); the CloneSet conversion moves them between the two.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateStrategy {
    /// Seconds between marking a pod not ready and patching its spec.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub grace_period_seconds: i32,
    /// How many nodes pull the new image at once before the update reaches them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pre_download_parallelism: Option<IntOrString>,
    /// Timeout of each image pre-download pull, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pre_download_timeout_seconds: Option<i32>,
    /// How many updated pods must be ready before image pre-download starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pre_download_min_updated_ready_pods: Option<i32>,
}

/// The JSON value of the `apps.kruise.io/inplace-update-state` pod annotation.
///
/// Fields serialise in upstream's order, with upstream's omission rules: `revision` and `updateTimestamp`
/// always, `lastContainerStatuses` always (`null` when unset), everything else only when non-empty.
///
/// ```
/// use kruise_api::inplace::InPlaceUpdateState;
///
/// let raw = r#"{"revision":"demo-6d4f7b","updateTimestamp":"2024-05-01T10:00:00Z","lastContainerStatuses":{"main":{"imageID":"docker.io/library/nginx@sha256:aa"}},"updateImages":true}"#;
/// let state: InPlaceUpdateState = serde_json::from_str(raw).unwrap();
/// assert!(state.update_images);
/// assert_eq!(serde_json::to_string(&state).unwrap(), raw);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateState {
    /// The revision the pod is being updated to.
    pub revision: String,
    /// When the in-place update started (second precision).
    pub update_timestamp: Time,
    /// The image IDs of containers before their image changed, keyed by container name. The first record of a
    /// container is kept for the whole update.
    #[serde(default)]
    pub last_container_statuses: Option<BTreeMap<String, InPlaceUpdateContainerStatus>>,
    /// Whether env vars taken from pod metadata changed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub update_env_from_metadata: bool,
    /// Whether container resources changed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub update_resources: bool,
    /// Whether container images changed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub update_images: bool,
    /// Images still to be written by later batches, keyed by container name.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub next_container_images: BTreeMap<String, String>,
    /// Labels and annotations still to be written by later batches, keyed by container name.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub next_container_ref_metadata: BTreeMap<String, ContainerRefMetadata>,
    /// Resources still to be written by later batches, keyed by container name.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub next_container_resources: BTreeMap<String, ResourceRequirements>,
    /// Containers that must be ready before the next batch is written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_check_before_next: Option<InPlaceUpdatePreCheckBeforeNext>,
    /// One record per batch written so far.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub container_batches_record: Vec<InPlaceUpdateContainerBatch>,
}

/// What an in-place update remembers about a container before changing it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateContainerStatus {
    /// The container's image ID before the update.
    #[serde(rename = "imageID", default, skip_serializing_if = "is_zero")]
    pub image_id: String,
}

/// Labels and annotations that env vars of one container read through `fieldRef`.
///
/// Upstream stores a whole `ObjectMeta` here and only sets labels and annotations; Go then also writes
/// `"creationTimestamp":null`, which this type reproduces so that the annotation is byte-identical.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRefMetadata {
    /// Always `null` when written by Kruise.
    #[serde(default)]
    pub creation_timestamp: Option<Time>,
    /// Labels to write on the pod.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub labels: BTreeMap<String, String>,
    /// Annotations to write on the pod.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub annotations: BTreeMap<String, String>,
}

/// The check made before the next container batch of an in-place update is written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdatePreCheckBeforeNext {
    /// Containers that must report `ready: true` first (sorted).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub containers_required_ready: Vec<String>,
}

/// One batch of containers written by an in-place update.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateContainerBatch {
    /// When the batch was written.
    pub timestamp: Time,
    /// The containers of the batch (sorted).
    pub containers: Vec<String>,
}

/// The JSON value of the `apps.kruise.io/runtime-containers-meta` pod annotation, written by kruise-daemon.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeContainerMetaSet {
    /// One entry per running container.
    #[serde(default)]
    pub containers: Vec<RuntimeContainerMeta>,
}

/// What kruise-daemon saw of one container in the runtime.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeContainerMeta {
    /// Container name.
    #[serde(default)]
    pub name: String,
    /// Container ID as in pod status (`<runtime>://<id>`).
    #[serde(rename = "containerID", default)]
    pub container_id: String,
    /// Restart count of the container.
    #[serde(default)]
    pub restart_count: i32,
    /// Hashes of the container spec as kubelet computed them.
    #[serde(default)]
    pub hashes: RuntimeContainerHashes,
}

/// Hashes of a container spec as the kubelet that runs it computed them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeContainerHashes {
    /// Kubelet's hash of the container spec.
    #[serde(default)]
    pub plain_hash: u64,
    /// The hash of the env vars taken from pod metadata.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub extracted_env_from_metadata_hash: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field set, in upstream's field order; `creationTimestamp: null` inside the ref metadata as Go
    /// writes an `ObjectMeta`.
    const FULL_STATE: &str = concat!(
        r#"{"revision":"demo-7b9d8c","updateTimestamp":"2024-05-01T10:00:00Z","#,
        r#""lastContainerStatuses":{"main":{"imageID":"docker.io/library/nginx@sha256:aa"},"sidecar":{}},"#,
        r#""updateEnvFromMetadata":true,"updateResources":true,"updateImages":true,"#,
        r#""nextContainerImages":{"main":"nginx:1.26"},"#,
        r#""nextContainerRefMetadata":{"main":{"creationTimestamp":null,"labels":{"version":"2"}}},"#,
        r#""nextContainerResources":{"main":{"limits":{"cpu":"2"}}},"#,
        r#""preCheckBeforeNext":{"containersRequiredReady":["sidecar"]},"#,
        r#""containerBatchesRecord":[{"timestamp":"2024-05-01T10:00:00Z","containers":["sidecar"]}]}"#
    );

    #[test]
    fn full_state_round_trips_byte_for_byte() {
        let state: InPlaceUpdateState = serde_json::from_str(FULL_STATE).unwrap();
        assert_eq!(state.next_container_images["main"], "nginx:1.26");
        assert_eq!(
            state.last_container_statuses.as_ref().unwrap()["sidecar"].image_id,
            ""
        );
        assert_eq!(serde_json::to_string(&state).unwrap(), FULL_STATE);
    }

    #[test]
    fn minimal_state_writes_null_last_container_statuses() {
        let state: InPlaceUpdateState =
            serde_json::from_str(r#"{"revision":"r","updateTimestamp":"2024-05-01T10:00:00Z"}"#)
                .unwrap();
        assert_eq!(
            serde_json::to_string(&state).unwrap(),
            r#"{"revision":"r","updateTimestamp":"2024-05-01T10:00:00Z","lastContainerStatuses":null}"#
        );
    }

    #[test]
    fn runtime_container_meta_shape() {
        let raw = concat!(
            r#"{"containers":[{"name":"main","containerID":"containerd://abc","restartCount":1,"#,
            r#""hashes":{"plainHash":18446744073709551615,"extractedEnvFromMetadataHash":42}},"#,
            r#"{"name":"log","containerID":"containerd://def","restartCount":0,"hashes":{"plainHash":7}}]}"#
        );
        let meta: RuntimeContainerMetaSet = serde_json::from_str(raw).unwrap();
        assert_eq!(
            meta.containers[0].hashes.plain_hash,
            u64::MAX,
            "full u64 range"
        );
        assert_eq!(serde_json::to_string(&meta).unwrap(), raw);
    }

    #[test]
    fn strategy_omits_zero_grace() {
        let strategy = InPlaceUpdateStrategy {
            grace_period_seconds: 0,
            ..Default::default()
        };
        assert_eq!(serde_json::to_string(&strategy).unwrap(), "{}");
        let raw = r#"{"gracePeriodSeconds":10,"imagePreDownloadParallelism":"50%","imagePreDownloadTimeoutSeconds":600,"imagePreDownloadMinUpdatedReadyPods":2}"#;
        let strategy: InPlaceUpdateStrategy = serde_json::from_str(raw).unwrap();
        assert_eq!(serde_json::to_string(&strategy).unwrap(), raw);
    }
}
