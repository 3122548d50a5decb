//! The hot-upgrade state machine (upstream `pkg/control/sidecarcontrol/util_hotupgrade.go`): a `HotUpgrade` sidecar
//! runs as two containers, `<name>-1` and `<name>-2`, of which one works and the other idles on the empty image.
//!
//! 1. **Injection** ([`injected_pair`], [`injection_annotations`]): `-1` gets the real image and works, `-2`
//!    the empty image; both get `SIDECARSET_VERSION` / `SIDECARSET_VERSION_ALT` from the pod's
//!    `version.sidecarset.kruise.io/<c>` / `versionalt.sidecarset.kruise.io/<c>` annotations (`-1`: 1 / 0,
//!    `-2`: 0 / 1).
//! 2. **Upgrade** ([`container_to_upgrade`], applied by [`crate::upgrade`]): the idle container (the one on
//!    the empty image, else the not-ready one, else the non-working one) gets the new image and becomes the
//!    working one; versions move to the SidecarSet's `resourceVersion`.
//! 3. **Migration**: the new container's `postStart` hook takes the state over; Kruise only waits for it to be
//!    ready.
//! 4. **Reset** ([`needs_reset`], [`reset`]): once the pod is consistent and ready, the old container goes
//!    back to the empty image and its version to `"0"`.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Container, EnvVar, EnvVarSource, ObjectFieldSelector, Pod};
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{SidecarContainer, SidecarContainerUpgradeType, SidecarSet};
use kruise_api::keys::sidecarset as keys;

use crate::consistency;
use crate::hash::SidecarSetHashes;
use crate::inplace_state;
use crate::pod_view::PodView;
use crate::records;

/// Whether the sidecar is upgraded hot.
#[must_use]
pub fn is_hot_upgrade(sidecar: &SidecarContainer) -> bool {
    sidecar.upgrade_strategy.upgrade_type == Some(SidecarContainerUpgradeType::HotUpgrade)
}

/// `<name>-1` and `<name>-2`.
#[must_use]
pub fn container_names(name: &str) -> (String, String) {
    (joined(&[name, "-1"]), joined(&[name, "-2"]))
}

/// The parts one after the other (cheaper than `format!` on the injection path).
fn joined(parts: &[&str]) -> String {
    let mut out = String::with_capacity(parts.iter().map(|part| part.len()).sum());
    for part in parts {
        out.push_str(part);
    }
    out
}

/// `version.sidecarset.kruise.io/<container>`.
#[must_use]
pub fn version_annotation(container: &str) -> String {
    joined(&[keys::VERSION_ANNOTATION_PREFIX, container])
}

/// `versionalt.sidecarset.kruise.io/<container>`.
#[must_use]
pub fn version_alt_annotation(container: &str) -> String {
    joined(&[keys::VERSION_ALT_ANNOTATION_PREFIX, container])
}

/// The working container of a hot-upgrade sidecar and the other one: the annotation's value when it is
/// `<name>-1`, otherwise `<name>-2` works.
#[must_use]
pub fn working_and_idle(sidecar: &str, pod: &(impl PodView + ?Sized)) -> (String, String) {
    let (first, second) = container_names(sidecar);
    let working = records::working_containers(pod);
    if working.0.get(sidecar) == Some(&first) {
        (first, second)
    } else {
        (second, first)
    }
}

fn annotation_env(name: &str, annotation_prefix: &str, container: &str) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value: None,
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                api_version: None,
                field_path: joined(&["metadata.annotations['", annotation_prefix, container, "']"]),
            }),
            ..EnvVarSource::default()
        }),
    }
}

/// The two containers a processed hot-upgrade sidecar is injected as: `-1` with the image, `-2` with the empty
/// image, both with the version envs appended.
#[must_use]
pub fn injected_pair(sidecar: &SidecarContainer) -> (SidecarContainer, SidecarContainer) {
    into_pair(sidecar.clone())
}

/// [`injected_pair`], consuming the sidecar.
#[must_use]
pub fn into_pair(sidecar: SidecarContainer) -> (SidecarContainer, SidecarContainer) {
    let (first_name, second_name) = container_names(&sidecar.container.name);
    let empty_image = sidecar.upgrade_strategy.hot_upgrade_empty_image.clone();
    let mut first = sidecar.clone();
    let mut second = sidecar;
    pair_member(&mut first.container, first_name, None);
    pair_member(&mut second.container, second_name, Some(empty_image));
    (first, second)
}

/// [`into_pair`] for the container alone (what injection puts into the pod), with the pair's names
/// ([`container_names`]).
#[must_use]
pub(crate) fn container_pair(
    mut container: Container,
    (first_name, second_name): (String, String),
    empty_image: &str,
) -> (Container, Container) {
    // The copy gets its variables with room for the two version variables, as the original has.
    let env = container.env.take();
    let mut first = container.clone();
    first.env = env.as_ref().map(|env| {
        let mut copy = Vec::with_capacity(env.len() + 2);
        copy.extend_from_slice(env);
        copy
    });
    container.env = env;
    let mut second = container;
    pair_member(&mut first, first_name, None);
    pair_member(&mut second, second_name, Some(empty_image.to_owned()));
    (first, second)
}

/// Renames a copy of the sidecar to `-1` / `-2` (`image`: the empty image for `-2`) and appends the version
/// envs.
fn pair_member(container: &mut Container, name: String, image: Option<String>) {
    container.name = name;
    if image.is_some() {
        container.image = image;
    }
    let env = container.env.get_or_insert_with(Vec::new);
    env.reserve(2);
    env.push(annotation_env(
        keys::VERSION_ENV,
        keys::VERSION_ANNOTATION_PREFIX,
        &container.name,
    ));
    env.push(annotation_env(
        keys::VERSION_ALT_ENV,
        keys::VERSION_ALT_ANNOTATION_PREFIX,
        &container.name,
    ));
}

/// The version annotations written at injection (`-1` works: version 1, alt 0; `-2` idles: 0, 1).
#[must_use]
pub fn injection_annotations(sidecar: &str) -> [(String, String); 4] {
    let (first, second) = container_names(sidecar);
    pair_annotations(&first, &second)
}

/// [`injection_annotations`] of the pair's names.
#[must_use]
pub(crate) fn pair_annotations(first: &str, second: &str) -> [(String, String); 4] {
    [
        (version_annotation(first), "1".to_owned()),
        (version_alt_annotation(first), "0".to_owned()),
        (version_annotation(second), "0".to_owned()),
        (version_alt_annotation(second), "1".to_owned()),
    ]
}

fn container_image<'a>(pod: &'a (impl PodView + ?Sized), name: &str) -> Option<&'a str> {
    pod.container_image(name)
}

fn status_ready(pod: &(impl PodView + ?Sized), name: &str) -> bool {
    pod.container_statuses()
        .find(|status| status.name == name)
        .is_some_and(|status| status.ready)
}

/// Upstream's `findContainerToHotUpgrade`: `(to upgrade, the other)` — the container on the empty image
/// (`-1` first), else the not-ready one when exactly one is ready and consistent, else the non-working one.
#[must_use]
pub fn container_to_upgrade(
    sidecarset: &SidecarSet,
    sidecar: &SidecarContainer,
    pod: &(impl PodView + ?Sized),
) -> (String, String) {
    let (first, second) = container_names(&sidecar.container.name);
    let empty = sidecar.upgrade_strategy.hot_upgrade_empty_image.as_str();
    if container_image(pod, &first).unwrap_or("") == empty {
        return (first, second);
    }
    if container_image(pod, &second).unwrap_or("") == empty {
        return (second, first);
    }
    let ready = |name: &str| {
        status_ready(pod, name)
            && consistency::is_pod_state_consistent(
                sidecarset,
                pod,
                &BTreeSet::from([name.to_owned()]),
            )
    };
    match (ready(&first), ready(&second)) {
        (true, false) => (second, first),
        (false, true) => (first, second),
        _ => {
            let (working, idle) = working_and_idle(&sidecar.container.name, pod);
            (idle, working)
        }
    }
}

/// Whether some hot-upgrade sidecar's idle container does not run the empty image (an upgrade waits for its
/// reset).
#[must_use]
pub fn is_in_hot_upgrading(sidecarset: &SidecarSet, pod: &(impl PodView + ?Sized)) -> bool {
    sidecarset.spec.containers.iter().any(|sidecar| {
        is_hot_upgrade(sidecar) && {
            let (_, idle) = working_and_idle(&sidecar.container.name, pod);
            container_image(pod, &idle).unwrap_or("")
                != sidecar.upgrade_strategy.hot_upgrade_empty_image
        }
    })
}

fn idle_containers(sidecarset: &SidecarSet, pod: &(impl PodView + ?Sized)) -> BTreeSet<String> {
    sidecarset
        .spec
        .containers
        .iter()
        .filter(|sidecar| is_hot_upgrade(sidecar))
        .map(|sidecar| working_and_idle(&sidecar.container.name, pod).1)
        .collect()
}

/// Upstream's `isHotUpgradingReady`: running and ready, or every container except the idle hot-upgrade ones
/// is ready.
#[must_use]
pub fn is_hot_upgrading_ready(sidecarset: &SidecarSet, pod: &(impl PodView + ?Sized)) -> bool {
    if consistency::is_running_and_ready(pod) {
        return true;
    }
    let idle = idle_containers(sidecarset, pod);
    pod.container_statuses()
        .filter(|status| !idle.contains(status.name))
        .all(|status| status.ready)
}

/// Whether the reset pass takes the pod: an idle container is off the empty image, the pod is consistent
/// without the idle containers, and it is ready (see [`is_hot_upgrading_ready`]).
#[must_use]
pub fn needs_reset(sidecarset: &SidecarSet, pod: &(impl PodView + ?Sized)) -> bool {
    if !is_in_hot_upgrading(sidecarset, pod) {
        return false;
    }
    let mut considered = consistency::sidecar_containers_in_pod(sidecarset);
    for idle in idle_containers(sidecarset, pod) {
        considered.remove(&idle);
    }
    consistency::is_pod_state_consistent(sidecarset, pod, &considered)
        && is_hot_upgrading_ready(sidecarset, pod)
}

/// The reset step: every idle container off the empty image goes back to it, its version becomes `"0"` and
/// so does the working container's alt version; the changed containers' image IDs are recorded in the sidecar
/// in-place state. The hash annotation is not touched.
#[must_use]
pub fn reset(sidecarset: &SidecarSet, hashes: &SidecarSetHashes, pod: &Pod, now: Timestamp) -> Pod {
    let mut pod = pod.clone();
    let mut changed = Vec::new();
    for sidecar in sidecarset
        .spec
        .containers
        .iter()
        .filter(|s| is_hot_upgrade(s))
    {
        let (working, idle) = working_and_idle(&sidecar.container.name, &pod);
        let empty = &sidecar.upgrade_strategy.hot_upgrade_empty_image;
        let Some(container) = pod
            .spec
            .as_mut()
            .and_then(|spec| spec.containers.iter_mut().find(|c| c.name == idle))
        else {
            continue;
        };
        if container.image.as_deref().unwrap_or("") == empty {
            continue;
        }
        container.image = Some(empty.clone());
        records::set_annotation(&mut pod, &version_annotation(&idle), "0".to_owned());
        records::set_annotation(&mut pod, &version_alt_annotation(&working), "0".to_owned());
        changed.push(idle);
    }
    inplace_state::record_changed_containers(&mut pod, sidecarset, hashes, &changed, now);
    pod
}
