//! Whether a pod's sidecars run what their spec says (upstream `IsPodStateConsistent`), whether the pod counts as
//! ready for a SidecarSet, and whether a SidecarSet can upgrade it in place.
//!
//! * [`is_pod_state_consistent`]: as many container statuses as containers; when every considered sidecar
//!   image is a digest reference, each must equal its status `imageID` (repository and digest); otherwise the
//!   image IDs recorded before the last in-place change ([`is_sidecar_update_completed`]) decide.
//! * [`is_pod_ready`]: the idle hot-upgrade containers run the empty image, and the pod is running, ready
//!   and not being deleted.
//! * [`upgradability`]: the pod's recorded hash without image equals the SidecarSet's (only images can change
//!   in place), and no sidecar is ready but still inconsistent (an upgrade in flight).

use std::collections::{BTreeMap, BTreeSet};

use kruise_api::apps::v1beta1::SidecarSet;
use kruise_api::image::Reference;

use crate::hash::{SidecarSetHashes, name_of};
use crate::hot_upgrade;
use crate::pod_view::PodView;
use crate::records;

/// The names of the pod containers a SidecarSet manages: each container's name, or both `-1` and `-2` for
/// hot-upgrade containers (init containers are not included, as upstream).
#[must_use]
pub fn sidecar_containers_in_pod(sidecarset: &SidecarSet) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for sidecar in &sidecarset.spec.containers {
        if hot_upgrade::is_hot_upgrade(sidecar) {
            let (first, second) = hot_upgrade::container_names(&sidecar.container.name);
            names.insert(first);
            names.insert(second);
        } else {
            names.insert(sidecar.container.name.clone());
        }
    }
    names
}

/// Whether an image reference carries a digest.
#[must_use]
pub fn is_image_digest(image: &str) -> bool {
    Reference::parse(image).is_some_and(|reference| reference.digest.is_some())
}

/// Upstream's `IsContainerImageEqual`: both digests → same repository and digest; otherwise same repository
/// and tag (an unparsable reference is never equal). Repositories are compared as written (`busybox` is not
/// `docker.io/library/busybox`).
#[must_use]
pub fn is_image_equal(left: &str, right: &str) -> bool {
    let (Some(a), Some(b)) = (Reference::parse(left), Reference::parse(right)) else {
        return false;
    };
    let repository = |r: &Reference<'_>| match r.domain {
        Some(domain) => format!("{domain}/{}", r.path),
        None => r.path.to_owned(),
    };
    if a.digest.is_some() && b.digest.is_some() {
        return repository(&a) == repository(&b) && a.digest == b.digest;
    }
    repository(&a) == repository(&b) && a.tag == b.tag
}

/// A status `imageID` without its scheme (`docker-pullable://`, `containerd://`...).
#[must_use]
pub fn strip_scheme(image_id: &str) -> &str {
    image_id
        .split_once("://")
        .map_or(image_id, |(_, rest)| rest)
}

/// Upstream's `IsPodStateConsistent` for `containers` (empty: every sidecar container of the SidecarSet).
#[must_use]
pub fn is_pod_state_consistent(
    sidecarset: &SidecarSet,
    pod: &(impl PodView + ?Sized),
    containers: &BTreeSet<String>,
) -> bool {
    if pod.container_count() != pod.status_count() {
        return false;
    }
    let all;
    let considered = if containers.is_empty() {
        all = sidecar_containers_in_pod(sidecarset);
        &all
    } else {
        containers
    };
    let image_ids: BTreeMap<&str, &str> = pod
        .container_statuses()
        .map(|status| (status.name, strip_scheme(status.image_id)))
        .collect();
    let mut all_digest = true;
    for (name, image) in pod.containers() {
        if !considered.contains(name) {
            continue;
        }
        if !is_image_digest(image) {
            all_digest = false;
            break;
        }
        match image_ids.get(name) {
            Some(image_id) if is_image_equal(image, image_id) => {}
            _ => return false,
        }
    }
    if all_digest {
        return true;
    }
    is_sidecar_update_completed(pod, &[name_of(sidecarset)], considered)
}

/// Upstream's `IsSidecarContainerUpdateCompleted`: no state annotation → complete; an unparsable one → not
/// complete; otherwise a considered container whose status `imageID` is still the one recorded before the
/// change, while its status image differs from the spec image, is not complete.
#[must_use]
pub fn is_sidecar_update_completed(
    pod: &(impl PodView + ?Sized),
    sidecarsets: &[&str],
    containers: &BTreeSet<String>,
) -> bool {
    let states = match records::inplace_states(pod) {
        Ok(Some(states)) => states,
        Ok(None) => return true,
        Err(_) => return false,
    };
    let mut recorded: BTreeMap<&str, &str> = BTreeMap::new();
    for name in sidecarsets {
        if let Some(state) = states.get(*name) {
            for (container, status) in state.last_container_statuses.iter().flatten() {
                recorded.insert(container.as_str(), status.image_id.as_str());
            }
        }
    }
    let images: BTreeMap<&str, &str> = pod.containers().collect();
    pod.container_statuses()
        .filter(|status| containers.contains(status.name))
        .all(|status| match recorded.get(status.name) {
            Some(old) => {
                !(*old == status.image_id
                    && images.get(status.name).copied().unwrap_or("") != status.image)
            }
            None => true,
        })
}

/// Upstream's `IsRunningAndReady`: phase `Running`, `Ready=True` and no deletion timestamp.
#[must_use]
pub fn is_running_and_ready(pod: &(impl PodView + ?Sized)) -> bool {
    pod.is_running_and_ready()
}

/// Whether the pod counts as ready for the SidecarSet: every idle hot-upgrade container has the empty image
/// in its spec, and the pod is running and ready.
#[must_use]
pub fn is_pod_ready(sidecarset: &SidecarSet, pod: &(impl PodView + ?Sized)) -> bool {
    let mut idle: BTreeMap<String, &str> = BTreeMap::new();
    for sidecar in &sidecarset.spec.containers {
        if hot_upgrade::is_hot_upgrade(sidecar) {
            let (_, other) = hot_upgrade::working_and_idle(&sidecar.container.name, pod);
            idle.insert(other, &sidecar.upgrade_strategy.hot_upgrade_empty_image);
        }
    }
    let idle_ok = pod.containers().all(|(name, image)| match idle.get(name) {
        Some(empty) if !empty.is_empty() => image == *empty,
        _ => true,
    });
    idle_ok && is_running_and_ready(pod)
}

/// Whether a SidecarSet can upgrade a pod in place, and whether the pod is settled enough to do it now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Upgradability {
    /// The recorded hash without image equals the SidecarSet's: only images changed.
    pub can_upgrade: bool,
    /// No sidecar container is ready while still inconsistent (no upgrade in flight).
    pub consistent: bool,
}

/// Upstream's `IsSidecarSetUpgradable`.
#[must_use]
pub fn upgradability(
    sidecarset: &SidecarSet,
    hashes: &SidecarSetHashes,
    pod: &(impl PodView + ?Sized),
) -> Upgradability {
    let name = name_of(sidecarset);
    if records::recorded_hash_without_image(pod, name) != hashes.without_image {
        return Upgradability {
            can_upgrade: false,
            consistent: false,
        };
    }
    let ready: BTreeMap<&str, bool> = pod
        .container_statuses()
        .map(|status| (status.name, status.ready))
        .collect();
    let consistent = sidecar_containers_in_pod(sidecarset)
        .into_iter()
        .all(|sidecar| {
            let is_ready = ready.get(sidecar.as_str()).copied().unwrap_or(false);
            !is_ready || is_pod_state_consistent(sidecarset, pod, &BTreeSet::from([sidecar]))
        });
    Upgradability {
        can_upgrade: true,
        consistent,
    }
}

/// Whether the pod was last written from the SidecarSet's current hash.
#[must_use]
pub fn is_pod_updated(
    sidecarset: &SidecarSet,
    hashes: &SidecarSetHashes,
    pod: &(impl PodView + ?Sized),
) -> bool {
    records::recorded_hash(pod, name_of(sidecarset)) == hashes.hash
}

/// Upstream's `IsPodConsistentWithSidecarSet`: every sidecar container is in the pod (for hot upgrade: the
/// working-container entry and both `-1` / `-2`).
#[must_use]
pub fn has_all_sidecars(sidecarset: &SidecarSet, pod: &(impl PodView + ?Sized)) -> bool {
    let has = |name: &str| pod.containers().any(|(container, _)| container == name);
    let working = records::working_containers(pod);
    sidecarset.spec.containers.iter().all(|sidecar| {
        let name = &sidecar.container.name;
        if hot_upgrade::is_hot_upgrade(sidecar) {
            let (first, second) = hot_upgrade::container_names(name);
            working.0.contains_key(name) && has(&first) && has(&second)
        } else {
            has(name)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_equality_table() {
        let digest = "sha256:98ad9d1a2be345201bb0709b0d38655eb1b370145c7d94ca1fe9c421f76e245a";
        let cases = [
            ("busybox:1.35.0", "busybox:1.35.0", true),
            ("busybox:1.35.0", "busybox:1.36.0", false),
            ("busybox", "busybox", true),
            ("busybox", "docker.io/library/busybox", false),
            (
                &format!("busybox@{digest}") as &str,
                &format!("busybox@{digest}") as &str,
                true,
            ),
            (
                &format!("docker.io/library/busybox@{digest}"),
                &format!("busybox@{digest}"),
                false,
            ),
            (&format!("busybox:1.35.0@{digest}"), "busybox:1.35.0", true),
            ("Not A Reference", "Not A Reference", false),
        ];
        for (left, right, equal) in cases {
            assert_eq!(is_image_equal(left, right), equal, "{left} vs {right}");
        }
        assert!(is_image_digest(&format!("busybox@{digest}")));
        assert!(!is_image_digest("busybox:1"));
        assert_eq!(
            strip_scheme("docker-pullable://busybox@sha256:aa"),
            "busybox@sha256:aa"
        );
        assert_eq!(strip_scheme("busybox@sha256:aa"), "busybox@sha256:aa");
    }
}
