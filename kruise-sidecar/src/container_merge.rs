//! How injected pieces merge into a pod (upstream's `pkg/util/pods.go`):
//! first one wins everywhere except for same-named containers, which the sidecar replaces in place.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{
    Container, EnvVar, LocalObjectReference, Volume, VolumeDevice, VolumeMount,
};
use kruise_api::apps::v1beta1::{PodInjectPolicy, SidecarContainer};

/// Which of `additional` to take: those whose key is not among `taken` nor an earlier taken one's. Keys are
/// borrowed, so nothing is copied to decide.
fn first_wins<'a, T>(
    taken: impl Iterator<Item = &'a str>,
    additional: &'a [T],
    key: impl Fn(&'a T) -> &'a str,
) -> Vec<bool> {
    let mut keys: BTreeSet<&str> = taken.collect();
    additional
        .iter()
        .map(|item| keys.insert(key(item)))
        .collect()
}

/// Below this many key comparisons, [`append_first_wins`] scans the lists instead of building a set.
const LINEAR_SCAN_LIMIT: usize = 1024;

/// Appends (cloned) the items of `additional` whose key is not taken yet: by an item of `original` (those
/// appended before it included) or by `other_keys`. Short lists are scanned, long ones go through a set.
pub(crate) fn append_first_wins<'a, T: Clone + 'a>(
    original: &mut Vec<T>,
    other_keys: &[&str],
    additional: &[&'a T],
    key: impl Fn(&T) -> &str,
) {
    if additional.is_empty() {
        return;
    }
    let known = original.len() + other_keys.len();
    if known.saturating_mul(additional.len()) > LINEAR_SCAN_LIMIT {
        let keep: Vec<bool> = {
            let mut keys: BTreeSet<&str> = original.iter().map(&key).collect();
            keys.extend(other_keys.iter().copied());
            additional
                .iter()
                .map(|item| keys.insert(key(item)))
                .collect()
        };
        original.reserve(keep.iter().filter(|kept| **kept).count());
        original.extend(
            additional
                .iter()
                .zip(keep)
                .filter(|(_, kept)| *kept)
                .map(|(item, _)| (*item).clone()),
        );
        return;
    }
    for item in additional {
        let wanted = key(item);
        if !other_keys.contains(&wanted) && !original.iter().any(|known| key(known) == wanted) {
            original.push((*item).clone());
        }
    }
}

/// Appends the variables of `additional` whose name is not taken yet (by `original` or an earlier one).
pub fn merge_env(original: &mut Vec<EnvVar>, additional: &[EnvVar]) {
    let additional: Vec<&EnvVar> = additional.iter().collect();
    append_env(original, &additional);
}

/// [`merge_env`] with the additional variables borrowed: only those appended are copied.
pub(crate) fn append_env(original: &mut Vec<EnvVar>, additional: &[&EnvVar]) {
    append_first_wins(original, &[], additional, |env| env.name.as_str());
}

/// Appends the mounts of `additional` whose mount path is not used yet by a mount or by one of `devices`.
pub fn merge_volume_mounts(
    original: &mut Vec<VolumeMount>,
    devices: &[VolumeDevice],
    additional: &[VolumeMount],
) {
    let additional: Vec<&VolumeMount> = additional.iter().collect();
    append_mounts(original, devices, &additional);
}

/// [`merge_volume_mounts`] with the additional mounts borrowed: only those appended are copied.
pub(crate) fn append_mounts(
    original: &mut Vec<VolumeMount>,
    devices: &[VolumeDevice],
    additional: &[&VolumeMount],
) {
    if additional.is_empty() {
        return;
    }
    let device_paths: Vec<&str> = devices
        .iter()
        .map(|device| device.device_path.as_str())
        .collect();
    append_first_wins(original, &device_paths, additional, |mount| {
        mount.mount_path.as_str()
    });
}

/// Appends the devices of `additional` whose device path is not used yet by a device or by one of `mounts`.
pub fn merge_volume_devices(
    original: &mut Vec<VolumeDevice>,
    mounts: &[VolumeMount],
    additional: &[VolumeDevice],
) {
    let additional: Vec<&VolumeDevice> = additional.iter().collect();
    append_devices(original, mounts, &additional);
}

/// [`merge_volume_devices`] with the additional devices borrowed: only those appended are copied.
pub(crate) fn append_devices(
    original: &mut Vec<VolumeDevice>,
    mounts: &[VolumeMount],
    additional: &[&VolumeDevice],
) {
    if additional.is_empty() {
        return;
    }
    let mount_paths: Vec<&str> = mounts
        .iter()
        .map(|mount| mount.mount_path.as_str())
        .collect();
    append_first_wins(original, &mount_paths, additional, |device| {
        device.device_path.as_str()
    });
}

/// Appends the volumes of `additional` whose name is not taken yet (the pod's volume, or the first sidecar's,
/// wins).
pub fn merge_volumes(original: &mut Vec<Volume>, additional: Vec<Volume>) {
    if additional.is_empty() {
        return;
    }
    let keep = first_wins(
        original.iter().map(|volume| volume.name.as_str()),
        &additional,
        |volume| volume.name.as_str(),
    );
    original.reserve(keep.iter().filter(|kept| **kept).count());
    original.extend(
        additional
            .into_iter()
            .zip(keep)
            .filter_map(|(volume, kept)| kept.then_some(volume)),
    );
}

/// The pod's pull secrets then the sidecars', de-duplicated by name (first wins).
#[must_use]
pub fn merge_pull_secrets(
    pod: Vec<LocalObjectReference>,
    sidecars: Vec<LocalObjectReference>,
) -> Vec<LocalObjectReference> {
    let keep: Vec<bool> = {
        let mut names = BTreeSet::new();
        pod.iter()
            .chain(&sidecars)
            .map(|secret| names.insert(secret.name.as_str()))
            .collect()
    };
    pod.into_iter()
        .chain(sidecars)
        .zip(keep)
        .filter_map(|(secret, kept)| kept.then_some(secret))
        .collect()
}

/// [`merge_pull_secrets`] of borrowed lists: only the kept secrets are copied.
pub(crate) fn merged_pull_secrets(
    pod: &[LocalObjectReference],
    sidecars: &[&LocalObjectReference],
) -> Vec<LocalObjectReference> {
    let candidates: Vec<&LocalObjectReference> =
        pod.iter().chain(sidecars.iter().copied()).collect();
    let mut merged = Vec::with_capacity(candidates.len());
    append_first_wins(&mut merged, &[], &candidates, |secret| secret.name.as_str());
    merged
}

/// Upstream's `mergeSidecarContainers`: a sidecar whose name is already in the pod replaces that container in
/// place; the others go before the pod's containers (`BeforeAppContainer`, in order) or after them
/// (`AfterAppContainer` or unset).
#[must_use]
pub fn merge_sidecar_containers(
    mut pod: Vec<Container>,
    sidecars: Vec<SidecarContainer>,
) -> Vec<Container> {
    if sidecars.is_empty() {
        return pod;
    }
    let mut merged = Vec::with_capacity(pod.len() + sidecars.len());
    let mut after = Vec::new();
    for sidecar in sidecars {
        if let Some(existing) = pod
            .iter_mut()
            .find(|container| container.name == sidecar.container.name)
        {
            *existing = sidecar.container;
            continue;
        }
        match sidecar.pod_inject_policy {
            Some(PodInjectPolicy::BeforeAppContainer) => merged.push(sidecar.container),
            _ => after.push(sidecar.container),
        }
    }
    merged.append(&mut pod);
    merged.append(&mut after);
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str, value: &str) -> EnvVar {
        EnvVar {
            name: name.into(),
            value: Some(value.into()),
            value_from: None,
        }
    }

    fn mount(name: &str, path: &str) -> VolumeMount {
        VolumeMount {
            name: name.into(),
            mount_path: path.into(),
            ..VolumeMount::default()
        }
    }

    #[test]
    fn long_lists_merge_as_short_ones() {
        // Below and above the scan limit: every item of `additional` whose name is new, in order.
        for (own, more) in [(3, 5), (40, 60)] {
            let original: Vec<EnvVar> = (0..own)
                .map(|n| env(&format!("e{}", n * 3), "own"))
                .collect();
            let additional: Vec<EnvVar> = (0..more)
                .map(|n| env(&format!("e{}", n * 2 % (more / 2 + 1)), &n.to_string()))
                .collect();
            let mut expected = original.clone();
            for item in &additional {
                if !expected.iter().any(|known| known.name == item.name) {
                    expected.push(item.clone());
                }
            }
            let mut merged = original.clone();
            merge_env(&mut merged, &additional);
            assert_eq!(merged, expected, "{own} + {more}");
            // Keys taken elsewhere (device paths for mounts) are skipped too.
            let devices: Vec<VolumeDevice> = (0..own)
                .map(|n| VolumeDevice {
                    name: "d".into(),
                    device_path: format!("/p{n}"),
                })
                .collect();
            let mounts: Vec<VolumeMount> = (0..more)
                .map(|n| mount("m", &format!("/p{}", n % own * 2)))
                .collect();
            let mut merged = Vec::new();
            merge_volume_mounts(&mut merged, &devices, &mounts);
            let paths: Vec<_> = merged.iter().map(|m| m.mount_path.clone()).collect();
            let mut expected: Vec<String> = Vec::new();
            for mount in &mounts {
                if !devices.iter().any(|d| d.device_path == mount.mount_path)
                    && !expected.contains(&mount.mount_path)
                {
                    expected.push(mount.mount_path.clone());
                }
            }
            assert_eq!(paths, expected, "{own} + {more}");
        }
    }

    #[test]
    fn env_first_wins() {
        let mut original = vec![env("A", "1")];
        merge_env(
            &mut original,
            &[env("A", "2"), env("B", "1"), env("B", "2")],
        );
        assert_eq!(original, vec![env("A", "1"), env("B", "1")]);
    }

    #[test]
    fn mounts_skip_used_paths_including_device_paths() {
        let mut original = vec![mount("a", "/a")];
        let devices = [VolumeDevice {
            name: "d".into(),
            device_path: "/dev/x".into(),
        }];
        merge_volume_mounts(
            &mut original,
            &devices,
            &[
                mount("b", "/a"),
                mount("c", "/dev/x"),
                mount("d", "/d"),
                mount("e", "/d"),
            ],
        );
        let names: Vec<_> = original.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["a", "d"]);
        let mut devices_out = devices.to_vec();
        merge_volume_devices(
            &mut devices_out,
            &original,
            &[
                VolumeDevice {
                    name: "x".into(),
                    device_path: "/a".into(),
                },
                VolumeDevice {
                    name: "y".into(),
                    device_path: "/dev/y".into(),
                },
            ],
        );
        assert_eq!(devices_out.len(), 2);
        assert_eq!(devices_out[1].name, "y");
    }

    #[test]
    fn secrets_and_volumes_dedupe() {
        let secret = |n: &str| LocalObjectReference { name: n.into() };
        let merged = merge_pull_secrets(
            vec![secret("a"), secret("a")],
            vec![secret("b"), secret("a")],
        );
        assert_eq!(merged, vec![secret("a"), secret("b")]);
        let volume = |n: &str| Volume {
            name: n.into(),
            ..Volume::default()
        };
        let mut volumes = vec![volume("x")];
        merge_volumes(&mut volumes, vec![volume("x"), volume("y")]);
        assert_eq!(volumes.len(), 2);
    }

    #[test]
    fn containers_before_after_and_replaced_in_place() {
        let app = |n: &str| Container {
            name: n.into(),
            ..Container::default()
        };
        let sidecar = |n: &str, policy: Option<PodInjectPolicy>, image: &str| SidecarContainer {
            container: Container {
                name: n.into(),
                image: Some(image.into()),
                ..Container::default()
            },
            pod_inject_policy: policy,
            ..SidecarContainer::default()
        };
        let merged = merge_sidecar_containers(
            vec![app("main"), app("log")],
            vec![
                sidecar("b1", Some(PodInjectPolicy::BeforeAppContainer), "x"),
                sidecar("a1", Some(PodInjectPolicy::AfterAppContainer), "x"),
                sidecar("log", Some(PodInjectPolicy::BeforeAppContainer), "new"),
                sidecar("u", None, "x"),
                sidecar("b2", Some(PodInjectPolicy::BeforeAppContainer), "x"),
            ],
        );
        let names: Vec<_> = merged.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["b1", "b2", "main", "log", "a1", "u"]);
        assert_eq!(merged[3].image.as_deref(), Some("new"));
    }
}
