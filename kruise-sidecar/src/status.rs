//! Which pods a SidecarSet controls and its status (upstream `pkg/controller/sidecarset`).
//!
//! * matched: the pods the caller listed (selected by `namespaceSelector` and `selector`) that are active,
//!   list the SidecarSet in `kruise.io/sidecarset-injected-list` and carry every sidecar container;
//! * updated: the pod's recorded hash is the SidecarSet's; ready: consistent and
//!   [`consistency::is_pod_ready`]; updatedReady: both.

use std::collections::BTreeSet;

use kruise_api::apps::v1beta1::{SidecarSet, SidecarSetStatus};
use kruise_api::label_selector;

use crate::consistency;
use crate::hash::{SidecarSetHashes, name_of};
use crate::pod_view::PodView;
use crate::records;

/// Indexes of the pods the SidecarSet controls (see the module docs). The caller lists pods by the
/// SidecarSet's namespaces; the selector is checked again here.
#[must_use]
pub fn matched_pods<P: PodView>(sidecarset: &SidecarSet, pods: &[P]) -> Vec<usize> {
    let selected = |pod: &P| {
        sidecarset.spec.selector.as_ref().is_some_and(|selector| {
            !label_selector::is_empty(selector)
                && label_selector::matches(selector, pod.labels()).unwrap_or(false)
        })
    };
    let name = name_of(sidecarset);
    pods.iter()
        .enumerate()
        .filter(|(_, pod)| {
            pod.is_active()
                && selected(pod)
                && records::is_injected(pod, name)
                && consistency::has_all_sidecars(sidecarset, pod)
        })
        .map(|(index, _)| index)
        .collect()
}

/// Upstream's `calculateStatus` over the matched pods.
#[must_use]
pub fn calculate_status<P: PodView>(
    sidecarset: &SidecarSet,
    hashes: &SidecarSetHashes,
    matched: &[P],
    latest_revision: &str,
    collision_count: i32,
) -> SidecarSetStatus {
    let count = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
    let (mut updated, mut ready, mut updated_ready) = (0, 0, 0);
    for pod in matched {
        let is_updated = consistency::is_pod_updated(sidecarset, hashes, pod);
        if is_updated {
            updated += 1;
        }
        if consistency::is_pod_state_consistent(sidecarset, pod, &BTreeSet::new())
            && consistency::is_pod_ready(sidecarset, pod)
        {
            ready += 1;
            if is_updated {
                updated_ready += 1;
            }
        }
    }
    SidecarSetStatus {
        observed_generation: sidecarset.metadata.generation.unwrap_or(0),
        matched_pods: count(matched.len()),
        updated_pods: count(updated),
        ready_pods: count(ready),
        updated_ready_pods: count(updated_ready),
        latest_revision: latest_revision.to_owned(),
        collision_count: Some(collision_count),
    }
}
