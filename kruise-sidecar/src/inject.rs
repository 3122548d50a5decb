//! Injection into a pod being created (upstream `pkg/webhook/pod/mutating/sidecarset.go`), as the pod mutating
//! webhook does it.
//!
//! [`inject`] takes the whole admission view — pod (and old pod for an update), every SidecarSet, the
//! ControllerRevisions, the namespace's labels, `now` — and returns the mutated pod with the RFC 6902 patch
//! for the admission response. [`inject_sidecarsets`] is the core, for SidecarSets already matched and
//! resolved to the revision to inject.
//!
//! For each SidecarSet, in name order: `patchPodMetadata`; init containers (native sidecars also join the
//! hash entry's `sidecarList`) and pull secrets; containers (a `HotUpgrade` one as its `-1` / `-2` pair). Each
//! injected container gets the volume mounts / devices it shares, `IS_INJECTED=true`, then its `transferEnv`
//! and `subPathExpr` variables; the volumes its own mounts use come from `spec.volumes`. Then the pieces are
//! merged: init containers in name order, containers by `podInjectPolicy` (same names replaced in place),
//! volumes and pull secrets first-wins, and the hash, hash-without-image, injected-list and hot-upgrade
//! annotations. Injecting twice at the same `now` changes nothing the second time.
//!
//! The pod is copied once; each injected item is prepared once, from the SidecarSet's own (only what is kept
//! of the pod's mounts and variables is copied), and goes straight to its place in the copy's lists. What
//! went where (`injection_delta`) is what the admission patch is written from, so the pod's own
//! containers are neither serialised nor compared.
//!
//! On an **update** the open-source webhook stops before changing anything (its "availability changed"
//! check is always false); so does [`inject`], after resolving revisions like upstream.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use json_patch::Patch;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Container, EnvVar, LocalObjectReference, Pod, Volume};
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{PodInjectPolicy, SidecarContainer, SidecarSet};
use kruise_api::keys::sidecarset as keys;

use crate::container_merge::{append_devices, append_env, append_mounts, merged_pull_secrets};
use crate::error::Error;
use crate::hash::{self, is_native_sidecar, name_of};
use crate::hot_upgrade;
use crate::injection_delta::{InjectionDelta, Place, SpecLayout, Splice};
use crate::injection_revision;
use crate::matching;
use crate::metadata;
use crate::options::Options;
use crate::random::Chance;
use crate::records::{self, HashEntryRef, SidecarNames};
use crate::resources_policy;
use crate::shared_volumes;
use crate::transfer_env;

/// Everything the pod webhook looks at.
#[derive(Clone, Copy, Debug)]
pub struct InjectRequest<'a> {
    /// The pod as admitted.
    pub pod: &'a Pod,
    /// The pod before the change, for an UPDATE request; `None` for CREATE.
    pub old_pod: Option<&'a Pod>,
    /// Every SidecarSet (v1alpha1 ones converted to v1beta1).
    pub sidecarsets: &'a [SidecarSet],
    /// The SidecarSets' ControllerRevisions (from the kruise-manager namespace).
    pub revisions: &'a [ControllerRevision],
    /// The labels of the pod's Namespace object.
    pub namespace_labels: Option<&'a BTreeMap<String, String>>,
    /// The time written into the hash annotations.
    pub now: Timestamp,
    /// Upstream's feature gates.
    pub options: Options,
}

/// The webhook's answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Injection {
    /// The pod after injection (the admitted pod when nothing changes).
    pub pod: Pod,
    /// The RFC 6902 patch from the admitted pod to [`Injection::pod`] (empty when nothing changes).
    pub patch: Patch,
    /// The SidecarSets that matched, in the order they were injected.
    pub sidecarsets: Vec<String>,
}

impl Injection {
    fn unchanged(pod: &Pod, sidecarsets: Vec<String>) -> Self {
        Self {
            pod: pod.clone(),
            patch: Patch(Vec::new()),
            sidecarsets,
        }
    }

    /// Whether the pod changed.
    #[must_use]
    pub fn changed(&self) -> bool {
        !self.patch.0.is_empty()
    }
}

/// The webhook's answer with the patch as the JSON text an admission response carries (see
/// [`crate::admission_patch::injection_patch_json`]): what a webhook sends, without building the typed patch.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonInjection {
    /// The pod after injection (the admitted pod when nothing changes).
    pub pod: Pod,
    /// The RFC 6902 patch as JSON text (`[]` when nothing changes).
    pub patch: String,
    /// The SidecarSets that matched, in the order they were injected.
    pub sidecarsets: Vec<String>,
}

/// The pod webhook's SidecarSet step: matching, revision choice, then (for CREATE) injection.
///
/// # Errors
/// An invalid selector, a revision that cannot be found or restored, an unparsable SidecarSet annotation on
/// the pod, a `MergePatchJson` that cannot be applied, or a `resourcesPolicy` that cannot be evaluated.
pub fn inject(request: &InjectRequest<'_>, chance: &mut dyn Chance) -> Result<Injection, Error> {
    let (delta, names) = injected(request, chance)?;
    Ok(match delta {
        None => Injection::unchanged(request.pod, names),
        Some(delta) => Injection {
            patch: crate::admission_patch::delta_patch(&delta),
            pod: delta.pod,
            sidecarsets: names,
        },
    })
}

/// [`inject`] with the patch written as JSON text: the same decisions and the same operations, cheaper.
///
/// # Errors
/// As [`inject`].
pub fn inject_json(
    request: &InjectRequest<'_>,
    chance: &mut dyn Chance,
) -> Result<JsonInjection, Error> {
    let (delta, names) = injected(request, chance)?;
    Ok(match delta {
        None => JsonInjection {
            pod: request.pod.clone(),
            patch: "[]".to_owned(),
            sidecarsets: names,
        },
        Some(delta) => JsonInjection {
            patch: crate::admission_patch::delta_patch_json(&delta),
            pod: delta.pod,
            sidecarsets: names,
        },
    })
}

/// What [`inject`] and [`inject_json`] share: the injection (`None` when the request changes nothing: no
/// SidecarSet matched, or an UPDATE) and the matched SidecarSets' names.
fn injected<'p>(
    request: &InjectRequest<'p>,
    chance: &mut dyn Chance,
) -> Result<(Option<InjectionDelta<'p>>, Vec<String>), Error> {
    let (chosen, names) = resolve(request, chance)?;
    if chosen.is_empty() || request.old_pod.is_some() {
        return Ok((None, names));
    }
    let chosen: Vec<&SidecarSet> = chosen.iter().map(AsRef::as_ref).collect();
    let delta = delta(request.pod, &chosen, request.now, request.options)?;
    Ok((Some(delta), names))
}

/// The matched SidecarSets resolved to the revision to inject, and their names.
fn resolve<'a>(
    request: &InjectRequest<'a>,
    chance: &mut dyn Chance,
) -> Result<(Vec<Cow<'a, SidecarSet>>, Vec<String>), Error> {
    let pod = request.pod;
    let matched =
        matching::matching_sidecarsets(request.sidecarsets, pod, request.namespace_labels)?;
    let mut resolved = Vec::with_capacity(matched.len());
    for sidecarset in matched {
        let chosen = match request.old_pod {
            Some(old_pod) => {
                injection_revision::for_update(sidecarset, pod, old_pod, request.revisions)?
            }
            None => injection_revision::for_create(sidecarset, pod, request.revisions, chance)?,
        };
        resolved.push(chosen);
    }
    let names = resolved.iter().map(|s| name_of(s).to_owned()).collect();
    Ok((resolved, names))
}

/// What the SidecarSets contribute before merging.
struct Pieces<'s> {
    containers: Splice<Container>,
    init_containers: Splice<Container>,
    secrets: Vec<&'s LocalObjectReference>,
    /// The SidecarSets' volumes that the injected containers use and the pod does not define, first wins.
    volumes: Splice<Volume>,
    /// Inserted into the pod's annotations in order (a later value of a key wins).
    annotations: Vec<(String, String)>,
}

/// Injects SidecarSets (already matched and resolved to the revision to inject) into a pod being created.
///
/// # Errors
/// An unparsable SidecarSet annotation on the pod, a `MergePatchJson` that cannot be applied, or a SidecarSet
/// without hash annotations whose hash cannot be computed.
pub fn inject_sidecarsets(
    pod: &Pod,
    sidecarsets: &[&SidecarSet],
    now: Timestamp,
    options: Options,
) -> Result<Pod, Error> {
    Ok(delta(pod, sidecarsets, now, options)?.pod)
}

/// [`inject_sidecarsets`] with where the injected items went.
fn delta<'p>(
    pod: &'p Pod,
    sidecarsets: &[&SidecarSet],
    now: Timestamp,
    options: Options,
) -> Result<InjectionDelta<'p>, Error> {
    let mut copy = pod.clone();
    for sidecarset in sidecarsets {
        metadata::patch_pod_for_injection(&mut copy, &sidecarset.spec.patch_pod_metadata)?;
    }
    let pieces = build(pod, &copy, sidecarsets, now)?;
    if pieces.containers.is_empty() && pieces.init_containers.is_empty() {
        return Ok(InjectionDelta {
            admitted: pod,
            pod: copy,
            layout: None,
        });
    }
    let Pieces {
        mut containers,
        mut init_containers,
        secrets,
        volumes,
        annotations,
    } = pieces;
    init_containers.sort_by(|a, b| a.name.cmp(&b.name));
    if options.sort_sidecar_containers_by_name {
        containers.sort_by(|a, b| a.name.cmp(&b.name));
    }
    copy.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .extend(annotations);
    let own_secrets = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.image_pull_secrets.as_deref())
        .unwrap_or_default();
    let secrets = merged_pull_secrets(own_secrets, &secrets);
    let spec = copy.spec.get_or_insert_with(Default::default);
    let (init, init_layout) =
        init_containers.assemble(spec.init_containers.take().unwrap_or_default());
    spec.init_containers = (!init.is_empty()).then_some(init);
    let (list, containers_layout) = containers.assemble(std::mem::take(&mut spec.containers));
    spec.containers = list;
    let (list, volumes_layout) = volumes.assemble(spec.volumes.take().unwrap_or_default());
    spec.volumes = (!list.is_empty()).then_some(list);
    spec.image_pull_secrets = (!secrets.is_empty()).then_some(secrets);
    Ok(InjectionDelta {
        admitted: pod,
        pod: copy,
        layout: Some(SpecLayout {
            init_containers: init_layout,
            containers: containers_layout,
            volumes: volumes_layout,
        }),
    })
}

/// A SidecarSet's entry in the hash annotations, written at injection.
struct NewHashEntry<'s> {
    name: &'s str,
    hash: Cow<'s, str>,
    without_image: Cow<'s, str>,
    sidecar_list: Vec<&'s str>,
    revision: &'s str,
}

/// The pieces the SidecarSets contribute to `admitted`, whose copy `pod` has the patched annotations.
fn build<'s>(
    admitted: &Pod,
    pod: &Pod,
    sidecarsets: &[&'s SidecarSet],
    now: Timestamp,
) -> Result<Pieces<'s>, Error> {
    let parse_error = |source| Error::PodAnnotation {
        pod: records::pod_key(pod),
        source,
    };
    let recorded = records::hash_entries(pod, keys::HASH_ANNOTATION).map_err(parse_error)?;
    let recorded_without_image =
        records::hash_entries(pod, keys::HASH_WITHOUT_IMAGE_ANNOTATION).map_err(parse_error)?;
    let working = records::working_containers(pod);
    let mut new_working: Vec<&'s str> = Vec::new();
    // `kruise.io/sidecarset-injected-list`: sorted names, empty items ignored (`InjectedSidecarSets`).
    let mut injected: BTreeSet<&str> =
        kruise_api::pod::annotation(pod, keys::INJECTED_LIST_ANNOTATION)
            .unwrap_or("")
            .split(',')
            .filter(|name| !name.is_empty())
            .collect();
    let own_containers = admitted
        .spec
        .as_ref()
        .map_or(&[][..], |spec| &spec.containers[..]);
    let own_init = admitted
        .spec
        .as_ref()
        .and_then(|spec| spec.init_containers.as_deref())
        .unwrap_or_default();
    let own_volumes = admitted
        .spec
        .as_ref()
        .and_then(|spec| spec.volumes.as_deref())
        .unwrap_or_default();
    // Every sidecar becomes one container, a hot-upgrade one two.
    let sidecar_count = |list: &[SidecarContainer]| -> usize {
        list.iter()
            .map(|sidecar| 1 + usize::from(hot_upgrade::is_hot_upgrade(sidecar)))
            .sum()
    };
    let containers: usize = sidecarsets
        .iter()
        .map(|set| sidecar_count(&set.spec.containers))
        .sum();
    let init_containers: usize = sidecarsets
        .iter()
        .map(|set| sidecar_count(&set.spec.init_containers))
        .sum();
    let mut pieces = Pieces {
        containers: Splice::with_capacity(containers + own_containers.len()),
        init_containers: Splice::with_capacity(init_containers + own_init.len()),
        secrets: Vec::new(),
        volumes: Splice::with_capacity(0),
        annotations: Vec::with_capacity(8),
    };
    let mut new_entries: Vec<NewHashEntry<'s>> = Vec::with_capacity(sidecarsets.len());

    for sidecarset in sidecarsets {
        let name = name_of(sidecarset);
        injected.insert(name);
        let (hash, without_image) = hash::recorded_or_computed_ref(sidecarset)?;
        let mut sidecar_list = Vec::new();
        let mut injecting = false;
        for init in &sidecarset.spec.init_containers {
            if is_native_sidecar(init) {
                sidecar_list.push(init.container.name.as_str());
            }
            let prepared = prepare(
                sidecarset,
                init,
                admitted,
                pod,
                own_volumes,
                &mut pieces.volumes,
            )?;
            injecting = true;
            let before = is_before(init);
            if is_native_sidecar(init) && hot_upgrade::is_hot_upgrade(init) {
                new_working.push(init.container.name.as_str());
                let (first, second) = hot_pair(init, prepared, &mut pieces.annotations);
                for container in [first, second] {
                    let place = Place::of_container(own_init, &container.name, before);
                    pieces.init_containers.push(place, container);
                }
            } else {
                let place = Place::of_container(own_init, &prepared.name, before);
                pieces.init_containers.push(place, prepared);
            }
        }
        pieces.secrets.extend(&sidecarset.spec.image_pull_secrets);
        for sidecar in &sidecarset.spec.containers {
            sidecar_list.push(sidecar.container.name.as_str());
            let prepared = prepare(
                sidecarset,
                sidecar,
                admitted,
                pod,
                own_volumes,
                &mut pieces.volumes,
            )?;
            injecting = true;
            let before = is_before(sidecar);
            if hot_upgrade::is_hot_upgrade(sidecar) {
                new_working.push(sidecar.container.name.as_str());
                let (first, second) = hot_pair(sidecar, prepared, &mut pieces.annotations);
                for container in [first, second] {
                    let place = Place::of_container(own_containers, &container.name, before);
                    pieces.containers.push(place, container);
                }
            } else {
                let place = Place::of_container(own_containers, &prepared.name, before);
                pieces.containers.push(place, prepared);
            }
        }
        if injecting {
            sidecar_list.sort_unstable();
            sidecar_list.dedup();
            new_entries.push(NewHashEntry {
                name,
                hash,
                without_image,
                sidecar_list,
                revision: sidecarset
                    .status
                    .as_ref()
                    .map_or("", |status| status.latest_revision.as_str()),
            });
        }
    }
    if !new_working.is_empty() {
        pieces.annotations.push((
            keys::WORKING_HOT_UPGRADE_CONTAINER_ANNOTATION.to_owned(),
            records::working_annotation_value(&working, &new_working),
        ));
    }
    let time = records::to_time(now);
    let mut last_time = None;
    for (key, recorded) in [
        (keys::HASH_ANNOTATION, &recorded),
        (keys::HASH_WITHOUT_IMAGE_ANNOTATION, &recorded_without_image),
    ] {
        let with_image = key == keys::HASH_ANNOTATION;
        let new = new_entries.iter().map(|entry| {
            (
                entry.name,
                HashEntryRef {
                    update_timestamp: Some(&time),
                    hash: if with_image {
                        &entry.hash
                    } else {
                        &entry.without_image
                    },
                    sidecar_set_name: entry.name,
                    sidecar_list: SidecarNames::Borrowed(&entry.sidecar_list),
                    controller_revision: if with_image { entry.revision } else { "" },
                },
            )
        });
        let value = records::hash_annotation_with(recorded, new, &mut last_time);
        pieces.annotations.push((key.to_owned(), value));
    }
    let injected_value = injected.into_iter().collect::<Vec<_>>().join(",");
    pieces
        .annotations
        .push((keys::INJECTED_LIST_ANNOTATION.to_owned(), injected_value));
    Ok(pieces)
}

/// Whether the sidecar goes before the pod's containers.
fn is_before(sidecar: &SidecarContainer) -> bool {
    sidecar.pod_inject_policy == Some(PodInjectPolicy::BeforeAppContainer)
}

/// A hot-upgrade sidecar's `-1` / `-2` pair; its version annotations go to `annotations`.
fn hot_pair(
    sidecar: &SidecarContainer,
    prepared: Container,
    annotations: &mut Vec<(String, String)>,
) -> (Container, Container) {
    let names = hot_upgrade::container_names(&prepared.name);
    annotations.extend(hot_upgrade::pair_annotations(&names.0, &names.1));
    let empty_image = &sidecar.upgrade_strategy.hot_upgrade_empty_image;
    hot_upgrade::container_pair(prepared, names, empty_image)
}

/// One sidecar ready to merge: shared mounts and devices, `IS_INJECTED`, transferred and `subPathExpr`
/// variables, resources from its `resourcesPolicy`; the volumes its own mounts and devices use are appended to
/// `volumes_out` unless the pod (`own_volumes`) or an earlier sidecar already has a volume of that name (the
/// merge keeps the first volume of a name). The containers are read from `admitted`, the labels and
/// annotations from `pod` (its copy with the patched annotations).
fn prepare(
    sidecarset: &SidecarSet,
    sidecar: &SidecarContainer,
    admitted: &Pod,
    pod: &Pod,
    own_volumes: &[Volume],
    volumes_out: &mut Splice<Volume>,
) -> Result<Container, Error> {
    let pod_containers = admitted
        .spec
        .as_ref()
        .map_or(&[][..], |spec| &spec.containers[..]);
    let resources = resources_policy::sidecar_resources(sidecarset, sidecar, pod_containers)?;
    let (shared_mounts, sub_path_envs) = shared_volumes::shared_mount_refs(sidecar, admitted);
    let shared_devices = shared_volumes::shared_device_refs(sidecar, admitted);
    let transferred = transfer_env::transfer_env_refs(sidecar, pod_containers, pod);

    let container = &sidecar.container;
    let used = container
        .volume_mounts
        .iter()
        .flatten()
        .map(|mount| mount.name.as_str())
        .chain(
            container
                .volume_devices
                .iter()
                .flatten()
                .map(|device| device.name.as_str()),
        );
    for name in used {
        // Upstream dereferences the lookup (in a map of the SidecarSet's volumes, where the last of a name
        // wins); a mount of a volume the SidecarSet does not define is skipped.
        if let Some(volume) = sidecarset
            .spec
            .volumes
            .iter()
            .rev()
            .find(|volume| volume.name == name)
            && !volumes_out.items().any(|known| known.name == name)
            && !own_volumes.iter().any(|known| known.name == name)
        {
            volumes_out.push(Place::After, volume.clone());
        }
    }

    let mut container = sidecar.container.clone();
    if let Some(resources) = resources {
        container.resources = Some(resources);
    }
    if !shared_mounts.is_empty() {
        let devices = container.volume_devices.as_deref().unwrap_or_default();
        let mounts = container.volume_mounts.get_or_insert_with(Vec::new);
        append_mounts(mounts, devices, &shared_mounts);
    }
    if !shared_devices.is_empty() {
        let mounts = container.volume_mounts.as_deref().unwrap_or_default();
        let devices = container.volume_devices.get_or_insert_with(Vec::new);
        append_devices(devices, mounts, &shared_devices);
    }
    let env = container.env.get_or_insert_with(Vec::new);
    // The hot-upgrade pair adds its two version variables.
    let version_envs = if hot_upgrade::is_hot_upgrade(sidecar) {
        2
    } else {
        0
    };
    env.reserve(1 + transferred.len() + sub_path_envs.len() + version_envs);
    env.push(EnvVar {
        name: keys::IS_INJECTED_ENV.to_owned(),
        value: Some("true".to_owned()),
        value_from: None,
    });
    // The transferred variables, then the `subPathExpr` ones, each unless its name is taken by then.
    let mut candidates = transferred;
    candidates.extend(sub_path_envs);
    append_env(env, &candidates);
    Ok(container)
}
