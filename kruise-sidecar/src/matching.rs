//! Which SidecarSets a pod gets (upstream `PodMatchedSidecarSet`).
//!
//! * Only active pods (not `Succeeded`/`Failed`, not being deleted) are considered.
//! * The pod's namespace (`default` when empty) must satisfy `namespaceSelector`, matched against the labels
//!   of the Namespace object, which the caller passes. The Namespace's own `kubernetes.io/metadata.name`
//!   label is always taken as present (Kubernetes 1.21+ sets it on every namespace), so the v1beta1 form of a
//!   v1alpha1 `namespace: X` works on any cluster.
//! * The SidecarSet `selector` must be set, **non-empty** and match the pod's labels.
//! * [`matching_sidecarsets`] also skips SidecarSets with `injectionStrategy.paused`, and drops the base of a
//!   matched canary SidecarSet (`apps.kruise.io/sidecarset-canary: "true"` + `apps.kruise.io/sidecarset-base`).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::SidecarSet;
use kruise_api::keys;
use kruise_api::label_selector;

use crate::error::Error;
use crate::hash::name_of;

/// The namespace a pod is in, as upstream reads it (`default` when empty).
#[must_use]
pub fn pod_namespace(pod: &Pod) -> &str {
    match pod.metadata.namespace.as_deref() {
        None | Some("") => "default",
        Some(namespace) => namespace,
    }
}

/// Whether the pod is active: not `Succeeded` or `Failed`, and not being deleted.
#[must_use]
pub fn is_active_pod(pod: &Pod) -> bool {
    kruise_api::pod::is_active(pod)
}

/// Whether the SidecarSet's namespace selector admits a namespace with these labels (no selector: every
/// namespace).
///
/// # Errors
/// [`Error::Selector`] when the namespace selector is invalid.
pub fn namespace_matches(
    sidecarset: &SidecarSet,
    namespace: &str,
    namespace_labels: Option<&BTreeMap<String, String>>,
) -> Result<bool, Error> {
    let Some(selector) = &sidecarset.spec.namespace_selector else {
        return Ok(true);
    };
    let mut labels = namespace_labels.cloned().unwrap_or_default();
    labels
        .entry(keys::kubernetes::NAMESPACE_NAME_LABEL.to_owned())
        .or_insert_with(|| namespace.to_owned());
    label_selector::matches(selector, &labels).map_err(|source| Error::Selector {
        sidecarset: name_of(sidecarset).to_owned(),
        field: "spec.namespaceSelector",
        source,
    })
}

/// Upstream's `PodMatchedSidecarSet`: namespace, then a set, non-empty, matching selector. `namespace_labels`
/// are the labels of the pod's Namespace object.
///
/// # Errors
/// [`Error::Selector`] when a selector is invalid.
pub fn pod_matches(
    sidecarset: &SidecarSet,
    pod: &Pod,
    namespace_labels: Option<&BTreeMap<String, String>>,
) -> Result<bool, Error> {
    if !namespace_matches(sidecarset, pod_namespace(pod), namespace_labels)? {
        return Ok(false);
    }
    let Some(selector) = &sidecarset.spec.selector else {
        return Ok(false);
    };
    let empty = BTreeMap::new();
    let matched = label_selector::matches(selector, pod.metadata.labels.as_ref().unwrap_or(&empty))
        .map_err(|source| Error::Selector {
            sidecarset: name_of(sidecarset).to_owned(),
            field: "spec.selector",
            source,
        })?;
    Ok(matched && !label_selector::is_empty(selector))
}

/// The canary SidecarSet's base, if it is a canary.
#[must_use]
pub fn canary_base(sidecarset: &SidecarSet) -> Option<&str> {
    let annotations = sidecarset.metadata.annotations.as_ref()?;
    if annotations
        .get(keys::sidecarset::CANARY_ANNOTATION)
        .map(String::as_str)
        != Some("true")
    {
        return None;
    }
    annotations
        .get(keys::sidecarset::BASE_ANNOTATION)
        .map(String::as_str)
        .filter(|base| !base.is_empty())
}

/// The SidecarSets to inject into the pod, in name order: not paused for injection, matching, and not the
/// base of a matching canary. Empty for an inactive pod.
///
/// # Errors
/// [`Error::Selector`] when a selector of a candidate is invalid.
pub fn matching_sidecarsets<'a>(
    sidecarsets: &'a [SidecarSet],
    pod: &Pod,
    namespace_labels: Option<&BTreeMap<String, String>>,
) -> Result<Vec<&'a SidecarSet>, Error> {
    if !is_active_pod(pod) {
        return Ok(Vec::new());
    }
    let mut matched = Vec::new();
    for sidecarset in sidecarsets {
        if sidecarset.spec.injection_strategy.paused {
            continue;
        }
        if pod_matches(sidecarset, pod, namespace_labels)? {
            matched.push(sidecarset);
        }
    }
    let bases: BTreeSet<&str> = matched.iter().filter_map(|set| canary_base(set)).collect();
    matched.retain(|set| !bases.contains(name_of(set)));
    matched.sort_by(|a, b| name_of(a).cmp(name_of(b)));
    Ok(matched)
}

/// The namespaces upstream's field index files a SidecarSet under: those pinned by `namespaceSelector`
/// (`matchLabels` or an `In` expression on `kubernetes.io/metadata.name`); `None` means cluster scope.
#[must_use]
pub fn indexed_namespaces(sidecarset: &SidecarSet) -> Option<BTreeSet<String>> {
    let selector = sidecarset.spec.namespace_selector.as_ref()?;
    let key = keys::kubernetes::NAMESPACE_NAME_LABEL;
    let mut namespaces = BTreeSet::new();
    if let Some(name) = selector
        .match_labels
        .as_ref()
        .and_then(|labels| labels.get(key))
    {
        namespaces.insert(name.clone());
    }
    for requirement in selector.match_expressions.iter().flatten() {
        if requirement.key == key && requirement.operator == "In" {
            namespaces.extend(requirement.values.iter().flatten().cloned());
        }
    }
    (!namespaces.is_empty()).then_some(namespaces)
}
