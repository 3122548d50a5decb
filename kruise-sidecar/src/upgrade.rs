//! In-place upgrades of pods that already run a SidecarSet's sidecars (upstream `UpdateSidecarSet`,
//! `GetNextUpgradePods`).
//!
//! [`next_upgrade_pods`] picks the pods to upgrade in this round:
//! 1. candidates: not updated (recorded hash ≠ SidecarSet hash) and selected by `updateStrategy.selector`
//!    (none: all); a candidate whose recorded hash without image differs is *not upgradable* (only images can
//!    change in place) and one with a ready but inconsistent sidecar waits;
//! 2. order: `ActivePods`, then the priority strategy, then the scatter strategy (a term with value `*`
//!    stands for every value of its key found on the pods, in pod order);
//! 3. count: `partition` (over all matched pods) keeps that many of the candidates; `maxUnavailable` (default
//!    1, percentages of the matched pods rounded up, an unparsable value is 0) caps the ready candidates taken
//!    while updated pods are not ready or not consistent; not-ready candidates are always taken.
//!
//! [`upgrade_pod`] upgrades one pod: new images (cold: the container; hot: see [`crate::hot_upgrade`]), the
//! hash entry, the in-place state with the image IDs before the change, `patchPodMetadata` and the
//! `SidecarSetUpgradable=True` condition entry.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::annotations::SidecarSetHashEntry;
use kruise_api::apps::v1beta1::{SidecarSet, SidecarSetUpdateStrategy};
use kruise_api::keys::sidecarset as keys;
use kruise_api::label_selector;
use kruise_api::scatter::UpdateScatterTerm;
use kruise_schedule::int_or_percent::{Rounding, legacy_scaled};
use kruise_schedule::partition::partition_replicas;
use kruise_schedule::sort::{priority::Priority, scatter::Scatter};

use crate::condition;
use crate::consistency;
use crate::error::Error;
use crate::hash::{SidecarSetHashes, is_native_sidecar, name_of};
use crate::hot_upgrade;
use crate::inplace_state;
use crate::metadata;
use crate::pod_view::PodView;
use crate::records;

/// The pods to act on in this round, as indexes into the matched pods.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NextUpgrade {
    /// Pods to upgrade now, in order.
    pub upgrade: Vec<usize>,
    /// Candidates that cannot be upgraded in place (a field other than an image changed): they get
    /// `SidecarSetUpgradable=False`.
    pub not_upgradable: Vec<usize>,
}

/// Upstream's `GetNextUpgradePods` over the matched `pods`.
#[must_use]
pub fn next_upgrade_pods<P: PodView>(
    sidecarset: &SidecarSet,
    hashes: &SidecarSetHashes,
    pods: &[P],
) -> NextUpgrade {
    let strategy = &sidecarset.spec.update_strategy;
    let selected = |pod: &P| match &strategy.selector {
        None => true,
        Some(selector) => label_selector::matches(selector, pod.labels()).unwrap_or(false),
    };
    let mut waiting = Vec::new();
    let mut not_upgradable = Vec::new();
    for (index, pod) in pods.iter().enumerate() {
        if consistency::is_pod_updated(sidecarset, hashes, pod) || !selected(pod) {
            continue;
        }
        let upgradability = consistency::upgradability(sidecarset, hashes, pod);
        if !upgradability.can_upgrade {
            not_upgradable.push(index);
        } else if upgradability.consistent {
            waiting.push(index);
        }
    }
    let waiting = sort_candidates(strategy, pods, waiting);
    let count = upgrade_count(sidecarset, hashes, pods, &waiting);
    NextUpgrade {
        upgrade: waiting.into_iter().take(count).collect(),
        not_upgradable,
    }
}

/// Upstream's `SortUpdateIndexes`: `ActivePods` (ties by pod name), priority, scatter with `*` expanded.
#[must_use]
pub fn sort_candidates<P: PodView>(
    strategy: &SidecarSetUpdateStrategy,
    pods: &[P],
    mut indexes: Vec<usize>,
) -> Vec<usize> {
    // kruise_schedule's `active::sort`, over the pods' keys.
    indexes.sort_by_cached_key(|&index| {
        let key = pods.get(index).map(PodView::active_key);
        (key.is_none(), key, index)
    });
    if let Some(priority) = &strategy.priority_strategy {
        // `Priority::sort`, over the pods' labels.
        let priority = Priority::new(priority);
        if priority.is_active() {
            indexes
                .sort_by_cached_key(|&index| pods.get(index).map(|pod| priority.key(pod.labels())));
        }
    }
    if !strategy.scatter_strategy.is_empty() {
        let terms = expand_scatter_terms(&strategy.scatter_strategy, pods);
        let labels: Vec<&BTreeMap<String, String>> = pods.iter().map(PodView::labels).collect();
        indexes = Scatter::new(&terms).sort(&labels, indexes);
    }
    indexes
}

/// Upstream's `parseUpdateScatterTerms`: a term with value `*` becomes one term per value of its key on the
/// pods (in pod order); duplicates are dropped.
#[must_use]
pub fn expand_scatter_terms<P: PodView>(
    terms: &[UpdateScatterTerm],
    pods: &[P],
) -> Vec<UpdateScatterTerm> {
    let mut out: Vec<UpdateScatterTerm> = Vec::new();
    let mut push = |term: UpdateScatterTerm| {
        if !out.contains(&term) {
            out.push(term);
        }
    };
    for term in terms {
        if term.value != "*" {
            push(term.clone());
            continue;
        }
        for pod in pods {
            if let Some(value) = pod.labels().get(&term.key) {
                push(UpdateScatterTerm {
                    key: term.key.clone(),
                    value: value.clone(),
                });
            }
        }
    }
    out
}

/// The SidecarSet's `maxUnavailable` over `matched` pods (default 1; rounded up; unparsable → 0).
#[must_use]
pub fn max_unavailable(strategy: &SidecarSetUpdateStrategy, matched: usize) -> usize {
    let total = i64::try_from(matched).unwrap_or(i64::MAX);
    let value = match &strategy.max_unavailable {
        None => 1,
        Some(value) => legacy_scaled(value, total, Rounding::Up).unwrap_or(0),
    };
    usize::try_from(value).unwrap_or(0)
}

/// The SidecarSet's partition over `matched` pods (unparsable → 0).
#[must_use]
pub fn partition(strategy: &SidecarSetUpdateStrategy, matched: usize) -> usize {
    let replicas = i32::try_from(matched).unwrap_or(i32::MAX);
    strategy
        .partition
        .as_ref()
        .map_or(0, |partition| {
            partition_replicas(Some(partition), Some(replicas)).unwrap_or(0)
        })
        .try_into()
        .unwrap_or(0)
}

/// Upstream's `calculateUpgradeCount`: how many of the sorted `candidates` to upgrade now.
#[must_use]
pub fn upgrade_count<P: PodView>(
    sidecarset: &SidecarSet,
    hashes: &SidecarSetHashes,
    pods: &[P],
    candidates: &[usize],
) -> usize {
    let strategy = &sidecarset.spec.update_strategy;
    let kept = partition(strategy, pods.len());
    let Some(allowed) = candidates.len().checked_sub(kept).filter(|n| *n > 0) else {
        return 0;
    };
    let max_unavailable = max_unavailable(strategy, pods.len());
    let mut unavailable = pods
        .iter()
        .filter(|pod| {
            consistency::is_pod_updated(sidecarset, hashes, pod)
                && (!consistency::is_pod_state_consistent(sidecarset, pod, &BTreeSet::new())
                    || !consistency::is_pod_ready(sidecarset, pod))
        })
        .count();
    let mut count = 0;
    for index in candidates.iter().take(allowed) {
        let Some(pod) = pods.get(*index) else {
            break;
        };
        if !consistency::is_pod_ready(sidecarset, pod) {
            count += 1;
            continue;
        }
        if unavailable >= max_unavailable {
            break;
        }
        unavailable += 1;
        count += 1;
    }
    count
}

/// Upstream's `UpgradeSidecarContainer` for every sidecar container: the containers whose image changed.
fn upgrade_images(sidecarset: &SidecarSet, pod: &mut Pod) -> Vec<String> {
    let resource_version = sidecarset
        .metadata
        .resource_version
        .clone()
        .unwrap_or_default();
    let mut changed = Vec::new();
    for sidecar in &sidecarset.spec.containers {
        let new_image = sidecar.container.image.as_deref().unwrap_or("");
        let hot = hot_upgrade::is_hot_upgrade(sidecar);
        let (target, other) = if hot {
            hot_upgrade::container_to_upgrade(sidecarset, sidecar, pod)
        } else {
            (
                sidecar.container.name.clone(),
                sidecar.container.name.clone(),
            )
        };
        let image_of = |pod: &Pod, name: &str| {
            pod.spec
                .as_ref()
                .and_then(|spec| spec.containers.iter().find(|c| c.name == name))
                .map(|c| c.image.clone().unwrap_or_default())
        };
        let Some(old_image) = image_of(pod, &other) else {
            continue;
        };
        if old_image == new_image {
            continue;
        }
        let Some(container) = pod
            .spec
            .as_mut()
            .and_then(|spec| spec.containers.iter_mut().find(|c| c.name == target))
        else {
            continue;
        };
        container.image = Some(new_image.to_owned());
        changed.push(target.clone());
        if hot {
            let mut working = records::working_containers(pod);
            working
                .0
                .insert(sidecar.container.name.clone(), target.clone());
            records::set_annotation(
                pod,
                keys::WORKING_HOT_UPGRADE_CONTAINER_ANNOTATION,
                records::to_annotation_value(&working.0),
            );
            let other_version =
                kruise_api::pod::annotation(pod, &hot_upgrade::version_annotation(&other))
                    .unwrap_or("")
                    .to_owned();
            records::set_annotation(
                pod,
                &hot_upgrade::version_annotation(&target),
                resource_version.clone(),
            );
            records::set_annotation(
                pod,
                &hot_upgrade::version_alt_annotation(&target),
                other_version,
            );
            records::set_annotation(
                pod,
                &hot_upgrade::version_alt_annotation(&other),
                resource_version.clone(),
            );
        }
    }
    changed
}

/// The sorted names upstream records in `sidecarList`: native-sidecar init containers and containers.
#[must_use]
pub fn sidecar_list(sidecarset: &SidecarSet) -> Vec<String> {
    let names: BTreeSet<String> = sidecarset
        .spec
        .init_containers
        .iter()
        .filter(|init| is_native_sidecar(init))
        .chain(&sidecarset.spec.containers)
        .map(|sidecar| sidecar.container.name.clone())
        .collect();
    names.into_iter().collect()
}

/// Upgrades one pod to the SidecarSet (upstream's `updatePodSidecarAndHash` on a fresh pod): images, hash
/// entry, in-place state, metadata patches, and `SidecarSetUpgradable=True` for this SidecarSet.
///
/// # Errors
/// A `MergePatchJson` that cannot be applied, or an unparsable `SidecarSetUpgradable` message.
pub fn upgrade_pod(
    sidecarset: &SidecarSet,
    hashes: &SidecarSetHashes,
    pod: &Pod,
    now: Timestamp,
) -> Result<Pod, Error> {
    let name = name_of(sidecarset);
    let key = records::pod_key(pod);
    let mut pod = pod.clone();
    let changed = upgrade_images(sidecarset, &mut pod);

    let mut entries = records::hash_entries(&pod, keys::HASH_ANNOTATION).unwrap_or_default();
    entries.insert(
        name.to_owned(),
        SidecarSetHashEntry {
            update_timestamp: Some(records::to_time(now)),
            hash: hashes.hash.clone(),
            sidecar_set_name: name.to_owned(),
            sidecar_list: sidecar_list(sidecarset),
            controller_revision: sidecarset
                .status
                .as_ref()
                .map(|status| status.latest_revision.clone())
                .unwrap_or_default(),
        },
    );
    records::set_annotation(
        &mut pod,
        keys::HASH_ANNOTATION,
        records::to_annotation_value(&entries),
    );
    inplace_state::record_changed_containers(&mut pod, sidecarset, hashes, &changed, now);

    metadata::patch_pod(&mut pod, &sidecarset.spec.patch_pod_metadata)?;
    condition::set_upgradable(&mut pod, name, true, now)
        .map_err(|source| Error::PodAnnotation { pod: key, source })?;
    Ok(pod)
}
