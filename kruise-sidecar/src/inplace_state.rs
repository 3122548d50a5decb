//! The sidecar in-place update state (`kruise.io/sidecarset-inplace-update-state`): per SidecarSet, the
//! image IDs containers had before their image last changed, which [`crate::consistency`] compares with the
//! running ones.
//!
//! An entry's `revision` (the SidecarSet hash) and `updateTimestamp` are set when the entry is created and
//! never refreshed; a container's recorded image ID is replaced on every change of that container. An
//! unparsable annotation is replaced (upstream logs it and starts over).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::SidecarSet;
use kruise_api::inplace::{InPlaceUpdateContainerStatus, InPlaceUpdateState};
use kruise_api::keys::sidecarset as keys;

use crate::hash::{SidecarSetHashes, name_of};
use crate::records;

/// Records, under the SidecarSet's entry, the current status `imageID` of each changed container (upstream's
/// `UpdatePodAnnotationsInUpgrade`; the entry is created even when nothing changed).
pub fn record_changed_containers(
    pod: &mut Pod,
    sidecarset: &SidecarSet,
    hashes: &SidecarSetHashes,
    changed: &[String],
    now: Timestamp,
) {
    let mut states = records::inplace_states(pod)
        .ok()
        .flatten()
        .unwrap_or_default();
    let image_ids: BTreeMap<&str, &str> = pod
        .status
        .iter()
        .flat_map(|status| status.container_statuses.iter().flatten())
        .map(|status| (status.name.as_str(), status.image_id.as_str()))
        .collect();
    let state = states
        .entry(name_of(sidecarset).to_owned())
        .or_insert_with(|| InPlaceUpdateState {
            revision: hashes.hash.clone(),
            update_timestamp: records::to_time(now),
            last_container_statuses: None,
            update_env_from_metadata: false,
            update_resources: false,
            update_images: false,
            next_container_images: BTreeMap::new(),
            next_container_ref_metadata: BTreeMap::new(),
            next_container_resources: BTreeMap::new(),
            pre_check_before_next: None,
            container_batches_record: Vec::new(),
        });
    let recorded = state
        .last_container_statuses
        .get_or_insert_with(BTreeMap::new);
    for name in changed {
        recorded.insert(
            name.clone(),
            InPlaceUpdateContainerStatus {
                image_id: image_ids
                    .get(name.as_str())
                    .copied()
                    .unwrap_or("")
                    .to_owned(),
            },
        );
    }
    let value = records::to_annotation_value(&states);
    records::set_annotation(pod, keys::INPLACE_UPDATE_STATE_ANNOTATION, value);
}
