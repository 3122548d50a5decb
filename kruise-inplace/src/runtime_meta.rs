//! kruise-daemon's container meta (upstream `pkg/daemon/containermeta`: `manageContainerMetaSet`, the
//! restarter and `eventFilter`), pure: the `apps.kruise.io/runtime-containers-meta` value a node reports for a
//! pod, and which containers it restarts because the labels or annotations their env reads changed.
//!
//! * Only pods controlled by an `apps.kruise.io` object or injected by a SidecarSet are reported
//!   ([`is_reported`]).
//! * One entry per `status.containerStatuses` entry (in that order) that the runtime has a container for (its
//!   newest incarnation): `name`, `containerID` (`<runtime>://<id>`), `restartCount` and
//!   `hashes.plainHash`, the hash kubelet wrote on the container (`io.kubernetes.container.hash`) or, without
//!   one, the hash the node's kubelet generation computes ([`plain_hash`]). An entry whose container ID is
//!   unchanged is kept as it was reported.
//! * With `InPlaceUpdateEnvFromMetadata`, `hashes.extractedEnvFromMetadataHash` is filled once, while the
//!   container runs, from the values its env vars that read pod labels or annotations have *inside the
//!   container* ([`current_env_hash`]; the daemon reads them by running `env` there). A container without such
//!   env vars needs no read: its hash is the same for any values.
//! * While the pod's `InPlaceUpdateReady` condition is `False` (an in-place update in progress), a running
//!   container whose reported env hash is set and differs from the hash of the pod's current labels and
//!   annotations ([`crate::env_from_metadata::expected_hash`]) is stopped ([`restarts`]); kubelet then creates it
//!   again with the new values.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Pod};
use kruise_api::inplace::{RuntimeContainerHashes, RuntimeContainerMeta, RuntimeContainerMetaSet};
use kruise_api::keys::inplace::INPLACE_UPDATE_READY;
use kruise_api::keys::sidecarset::HASH_ANNOTATION as SIDECARSET_HASH_ANNOTATION;

use crate::container_hash;
use crate::env_from_metadata::{self, ANNOTATIONS_PATH, LABELS_PATH};

/// The API group whose controllers' pods are reported.
const KRUISE_GROUP: &str = "apps.kruise.io";

/// What the runtime says about the newest incarnation of one container of the pod.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedContainer {
    /// The container's name in the pod spec.
    pub name: String,
    /// `<runtime>://<id>`.
    pub container_id: String,
    /// Its restart count (kubelet's annotation).
    pub restart_count: i32,
    /// Whether it is running.
    pub running: bool,
    /// The hash kubelet wrote on it (`io.kubernetes.container.hash`, parsed from hex), if any.
    pub kubelet_hash: Option<u64>,
}

/// The meta to report, before the env reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MetaPlan {
    /// The value to report once the env hashes of [`Self::read_env`] are filled in.
    pub set: RuntimeContainerMetaSet,
    /// Indexes into `set.containers` of running containers whose env must be read to fill their
    /// `extractedEnvFromMetadataHash` ([`current_env_hash`]).
    pub read_env: Vec<usize>,
}

/// Whether kruise-daemon reports the pod at all: its controller is an `apps.kruise.io` object, or a SidecarSet
/// injected it.
#[must_use]
pub fn is_reported(pod: &Pod) -> bool {
    let owned_by_kruise = pod.metadata.owner_references.iter().flatten().any(|owner| {
        owner.controller == Some(true)
            && owner.api_version.split_once('/').map(|(group, _)| group) == Some(KRUISE_GROUP)
    });
    let injected = pod
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|annotations| annotations.contains_key(SIDECARSET_HASH_ANNOTATION));
    owned_by_kruise || injected
}

/// Whether a kubelet of this version (`v1.20.2`, `v1.31.0-eks-1`) hashes only a container's name and image
/// (1.31 and later) rather than the whole spec. An unreadable version counts as older.
#[must_use]
pub fn hashes_name_and_image_only(kubelet_version: &str) -> bool {
    let mut parts = kubelet_version.trim_start_matches('v').split('.');
    let major = parts.next().and_then(|part| part.parse::<u32>().ok());
    let minor = parts.next().and_then(|part| {
        let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u32>().ok()
    });
    matches!((major, minor), (Some(major), Some(minor)) if major > 1 || (major == 1 && minor >= 31))
}

/// The plain hash of a container as a kubelet of `kubelet_version` computes it.
#[must_use]
pub fn plain_hash(container: &Container, kubelet_version: &str) -> u64 {
    if hashes_name_and_image_only(kubelet_version) {
        container_hash::hash_v1_31(container)
    } else {
        container_hash::hash_before_v1_31(container).unwrap_or_default()
    }
}

/// Whether the container has env vars that read pod labels or annotations.
#[must_use]
pub fn reads_metadata(container: &Container) -> bool {
    metadata_references(container).next().is_some()
}

fn metadata_references(container: &Container) -> impl Iterator<Item = (&str, &str, &str)> {
    container.env.iter().flatten().filter_map(|var| {
        let field_path = var
            .value_from
            .as_ref()
            .and_then(|from| from.field_ref.as_ref())
            .map(|field_ref| field_ref.field_path.as_str());
        env_from_metadata::metadata_reference(&var.name, var.value.as_deref(), field_path)
            .filter(|(path, _)| *path == LABELS_PATH || *path == ANNOTATIONS_PATH)
            .map(|(path, key)| (var.name.as_str(), path, key))
    })
}

/// The env hash of a running container from the values its env vars have inside it (`running_env`, name to
/// value; a variable it does not have counts as empty), comparable with
/// [`env_from_metadata::expected_hash`].
#[must_use]
pub fn current_env_hash(container: &Container, running_env: &BTreeMap<String, String>) -> u64 {
    let mut labels = BTreeMap::new();
    let mut annotations = BTreeMap::new();
    for (name, path, key) in metadata_references(container) {
        let value = running_env.get(name).cloned().unwrap_or_default();
        let target = if path == LABELS_PATH {
            &mut labels
        } else {
            &mut annotations
        };
        target.insert(key.to_owned(), value);
    }
    env_from_metadata::expected_hash(container, Some(&labels), Some(&annotations))
}

/// Parses the output of `env` (`NAME=value` lines; a line without `=` is skipped).
#[must_use]
pub fn parse_env_output(output: &str) -> BTreeMap<String, String> {
    output
        .trim()
        .lines()
        .filter_map(|line| line.trim().split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect()
}

/// The meta to report for `pod` from the runtime's `observed` containers and the meta reported before
/// (`previous`), with `env_from_metadata` (the gate) deciding whether env hashes are filled.
#[must_use]
pub fn plan(
    pod: &Pod,
    observed: &[ObservedContainer],
    previous: Option<&RuntimeContainerMetaSet>,
    kubelet_version: &str,
    env_from_metadata: bool,
) -> MetaPlan {
    let containers = crate::pod_containers::containers(pod);
    let statuses = crate::pod_containers::container_statuses(pod);
    let mut result = MetaPlan::default();
    for status in statuses {
        let Some(runtime) = observed.iter().find(|c| c.name == status.name) else {
            continue;
        };
        let Some(spec) = containers.iter().find(|c| c.name == status.name) else {
            continue;
        };
        let kept = previous.and_then(|previous| {
            previous
                .containers
                .iter()
                .rev()
                .find(|meta| meta.container_id == runtime.container_id)
        });
        let mut meta = kept.cloned().unwrap_or_else(|| RuntimeContainerMeta {
            name: runtime.name.clone(),
            container_id: runtime.container_id.clone(),
            restart_count: runtime.restart_count,
            hashes: RuntimeContainerHashes {
                plain_hash: runtime
                    .kubelet_hash
                    .unwrap_or_else(|| plain_hash(spec, kubelet_version)),
                extracted_env_from_metadata_hash: 0,
            },
        });
        if env_from_metadata && meta.hashes.extracted_env_from_metadata_hash == 0 && runtime.running
        {
            if reads_metadata(spec) {
                result.read_env.push(result.set.containers.len());
            } else {
                meta.hashes.extracted_env_from_metadata_hash =
                    current_env_hash(spec, &BTreeMap::new());
            }
        }
        result.set.containers.push(meta);
    }
    result
}

/// Whether the pod's `InPlaceUpdateReady` condition is `False` (an in-place update is in progress).
#[must_use]
pub fn updating_in_place(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|status| status.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|condition| condition.type_ == INPLACE_UPDATE_READY && condition.status == "False")
}

/// The container IDs to stop because their env from metadata changed: only while updating in place, and only
/// running containers whose reported env hash is set and differs from the pod's current one.
#[must_use]
pub fn restarts(
    pod: &Pod,
    set: &RuntimeContainerMetaSet,
    observed: &[ObservedContainer],
) -> Vec<String> {
    if !updating_in_place(pod) {
        return Vec::new();
    }
    let containers = crate::pod_containers::containers(pod);
    set.containers
        .iter()
        .filter(|meta| {
            let running = observed
                .iter()
                .any(|c| c.container_id == meta.container_id && c.running);
            let reported = meta.hashes.extracted_env_from_metadata_hash;
            running
                && reported > 0
                && containers
                    .iter()
                    .find(|c| c.name == meta.name)
                    .is_some_and(|spec| {
                        reported
                            != env_from_metadata::expected_hash(
                                spec,
                                pod.metadata.labels.as_ref(),
                                pod.metadata.annotations.as_ref(),
                            )
                    })
        })
        .map(|meta| meta.container_id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(tier: &str, updating: bool) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "web-0", "labels": {"tier": tier},
                "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                    "name": "web", "uid": "u", "controller": true}]},
            "spec": {"containers": [
                {"name": "main", "image": "busybox", "env": [
                    {"name": "TIER", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['tier']"}}},
                    {"name": "PLAIN", "value": "x"},
                ]},
                {"name": "log", "image": "busybox"},
            ]},
            "status": {
                "conditions": [{"type": "InPlaceUpdateReady", "status": if updating { "False" } else { "True" }}],
                "containerStatuses": [
                    {"name": "main", "ready": true, "restartCount": 0, "image": "busybox", "imageID": ""},
                    {"name": "log", "ready": true, "restartCount": 0, "image": "busybox", "imageID": ""},
                ],
            },
        }))
        .unwrap()
    }

    fn observed(main_id: &str) -> Vec<ObservedContainer> {
        vec![
            ObservedContainer {
                name: "main".into(),
                container_id: format!("containerd://{main_id}"),
                restart_count: 0,
                running: true,
                kubelet_hash: Some(0xabc),
            },
            ObservedContainer {
                name: "log".into(),
                container_id: "containerd://l1".into(),
                restart_count: 2,
                running: true,
                kubelet_hash: None,
            },
        ]
    }

    #[test]
    fn only_kruise_pods_are_reported() {
        assert!(is_reported(&pod("gold", false)));
        let mut plain = pod("gold", false);
        plain.metadata.owner_references = None;
        assert!(!is_reported(&plain));
        plain.metadata.annotations = Some(BTreeMap::from([(
            SIDECARSET_HASH_ANNOTATION.to_owned(),
            "{}".to_owned(),
        )]));
        assert!(is_reported(&plain));
    }

    #[test]
    fn kubelet_generations() {
        assert!(!hashes_name_and_image_only("v1.20.2"));
        assert!(!hashes_name_and_image_only("v1.30.9"));
        assert!(hashes_name_and_image_only("v1.31.0"));
        assert!(hashes_name_and_image_only("v1.33.1-eks-1"));
        assert!(!hashes_name_and_image_only("garbage"));
        let container = &pod("gold", false).spec.unwrap().containers[1];
        assert_eq!(
            plain_hash(container, "v1.31.0"),
            container_hash::hash_v1_31(container)
        );
        assert_eq!(
            Some(plain_hash(container, "v1.20.2")),
            container_hash::hash_before_v1_31(container)
        );
    }

    #[test]
    fn a_new_container_is_reported_with_kubelets_hash_and_waits_for_its_env() {
        let pod = pod("gold", false);
        let plan = plan(&pod, &observed("m1"), None, "v1.20.2", true);
        let [main, log] = plan.set.containers.as_slice() else {
            panic!("two entries expected: {plan:?}");
        };
        assert_eq!(main.container_id, "containerd://m1");
        assert_eq!(main.hashes.plain_hash, 0xabc);
        assert_eq!(main.hashes.extracted_env_from_metadata_hash, 0);
        assert_eq!(plan.read_env, [0]);
        // No kubelet annotation: the node's kubelet generation computes it; no env to read.
        let log_spec = &pod.spec.as_ref().unwrap().containers[1];
        assert_eq!(log.hashes.plain_hash, plain_hash(log_spec, "v1.20.2"));
        assert_eq!(log.restart_count, 2);
        assert_eq!(
            log.hashes.extracted_env_from_metadata_hash,
            env_from_metadata::expected_hash(log_spec, None, None)
        );
        let gated = super::plan(&pod, &observed("m1"), None, "v1.20.2", false);
        assert!(gated.read_env.is_empty());
        assert_eq!(
            gated.set.containers[1]
                .hashes
                .extracted_env_from_metadata_hash,
            0
        );
    }

    #[test]
    fn the_running_env_hash_matches_the_expected_one_for_the_same_values() {
        let pod = pod("gold", false);
        let main = &pod.spec.as_ref().unwrap().containers[0];
        let env = parse_env_output("PATH=/bin\nTIER=gold\nPLAIN=x\n");
        assert_eq!(
            current_env_hash(main, &env),
            env_from_metadata::expected_hash(main, pod.metadata.labels.as_ref(), None)
        );
        let other = parse_env_output("TIER=silver");
        assert_ne!(
            current_env_hash(main, &other),
            env_from_metadata::expected_hash(main, pod.metadata.labels.as_ref(), None)
        );
    }

    #[test]
    fn kept_entries_and_restarts_during_an_in_place_update() {
        let before = pod("gold", false);
        let mut first = plan(&before, &observed("m1"), None, "v1.20.2", true);
        let main_spec = &before.spec.as_ref().unwrap().containers[0];
        first.set.containers[0]
            .hashes
            .extracted_env_from_metadata_hash =
            current_env_hash(main_spec, &parse_env_output("TIER=gold"));
        // Same container: the entry is kept as reported, nothing to read.
        let again = plan(&before, &observed("m1"), Some(&first.set), "v1.20.2", true);
        assert_eq!(again.set, first.set);
        assert!(again.read_env.is_empty());
        assert!(restarts(&before, &again.set, &observed("m1")).is_empty());

        // The label changed but no update is in progress: nothing restarts.
        let relabelled = pod("silver", false);
        assert!(restarts(&relabelled, &again.set, &observed("m1")).is_empty());
        // During an in-place update: `main` restarts, `log` (no env from metadata) does not.
        let updating = pod("silver", true);
        assert_eq!(
            restarts(&updating, &again.set, &observed("m1")),
            ["containerd://m1"]
        );
        // Already stopped: not stopped again.
        let mut stopped = observed("m1");
        stopped[0].running = false;
        assert!(restarts(&updating, &again.set, &stopped).is_empty());
        // The new incarnation gets a fresh entry whose env must be read.
        let next = plan(
            &updating,
            &observed("m2"),
            Some(&again.set),
            "v1.20.2",
            true,
        );
        assert_eq!(next.set.containers[0].container_id, "containerd://m2");
        assert_eq!(next.read_env, [0]);
    }
}
