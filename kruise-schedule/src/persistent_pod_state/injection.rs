//! What the pod mutating webhook adds to a pod CREATE (upstream `persistentPodStateMutatingPod` and
//! `createNodeAffinity`).
//!
//! The pod's controller owner must be a StatefulSet of `apps` or `apps.kruise.io`; the PersistentPodState
//! is the first one (not being deleted) whose target is that owner (same group, kind and name); it must
//! hold a record for the pod's name with at least one node topology label. Then:
//!
//! * `requiredPersistentTopology` set: each of its keys that the record has goes into the pod's
//!   `nodeSelector` (set over what the pod already says for that key);
//! * each `preferredPersistentTopology` term becomes a preferred node affinity term of the same weight
//!   whose expressions are `key In [recorded value]` for the keys the record has, appended after the
//!   pod's own terms (a term whose keys were all unrecorded is appended with no expression, as upstream);
//! * `kruise.io/injected-persistent-pod-state` names the PersistentPodState.
//!
//! Nothing is done when there is neither a required topology nor a preferred term. The recorded
//! annotations are not written on the pod: upstream records them for other components to read and does
//! not restore them either.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, NodeAffinity, NodeSelectorRequirement, NodeSelectorTerm, Pod, PreferredSchedulingTerm,
};
use kruise_api::apps::v1alpha1::{PersistentPodState, PersistentPodStateSpec, PodState};
use kruise_api::apps::v1beta1::TargetReference;
use kruise_api::keys::persistent_pod_state::INJECTED_ANNOTATION;

use super::{is_supported_workload, same_workload};

/// The node constraints one pod gets back.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Placement {
    /// The required keys' recorded values (`None`: no required topology in the spec).
    pub node_selector: Option<BTreeMap<String, String>>,
    /// One term per preferred topology, in the spec's order.
    pub preferred: Vec<PreferredSchedulingTerm>,
}

impl Placement {
    /// Nothing to add.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.node_selector.as_ref().is_none_or(BTreeMap::is_empty) && self.preferred.is_empty()
    }
}

/// The constraints `spec` makes of the record `state`.
#[must_use]
pub fn placement(spec: &PersistentPodStateSpec, state: &PodState) -> Placement {
    let recorded = |key: &String| {
        state
            .node_topology_labels
            .get(key)
            .map(|value| (key.clone(), value.clone()))
    };
    let node_selector = spec.required_persistent_topology.as_ref().map(|term| {
        term.node_topology_keys
            .iter()
            .filter_map(recorded)
            .collect()
    });
    let preferred = spec
        .preferred_persistent_topology
        .iter()
        .map(|term| {
            let expressions: Vec<NodeSelectorRequirement> = term
                .preference
                .node_topology_keys
                .iter()
                .filter_map(recorded)
                .map(|(key, value)| NodeSelectorRequirement {
                    key,
                    operator: "In".to_owned(),
                    values: Some(vec![value]),
                })
                .collect();
            PreferredSchedulingTerm {
                weight: term.weight,
                preference: NodeSelectorTerm {
                    match_expressions: (!expressions.is_empty()).then_some(expressions),
                    match_fields: None,
                },
            }
        })
        .collect();
    Placement {
        node_selector,
        preferred,
    }
}

/// The workload controlling `pod`, when it is one PersistentPodStates follow.
#[must_use]
pub fn owner_workload(pod: &Pod) -> Option<TargetReference> {
    let owner = pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|owner| owner.controller == Some(true))?;
    is_supported_workload(&owner.api_version, &owner.kind).then(|| TargetReference {
        api_version: owner.api_version.clone(),
        kind: owner.kind.clone(),
        name: owner.name.clone(),
    })
}

/// The PersistentPodState of `workload` among `candidates` (those of the pod's namespace): the first not
/// being deleted whose target is the workload.
pub fn select<'a>(
    candidates: impl IntoIterator<Item = &'a PersistentPodState>,
    workload: &TargetReference,
) -> Option<&'a PersistentPodState> {
    candidates.into_iter().find(|state| {
        state.metadata.deletion_timestamp.is_none()
            && same_workload(&state.spec.target_reference, workload)
    })
}

/// Mutates `pod` (a CREATE) with the PersistentPodState among `candidates` that follows its workload;
/// returns that PersistentPodState's name when the pod was changed.
pub fn inject<'a>(
    pod: &mut Pod,
    candidates: impl IntoIterator<Item = &'a PersistentPodState>,
) -> Option<String> {
    let workload = owner_workload(pod)?;
    let chosen = select(candidates, &workload)?;
    let name = pod.metadata.name.as_deref()?;
    let state = chosen.status.as_ref()?.pod_states.get(name)?;
    if state.node_topology_labels.is_empty() {
        return None;
    }
    let wanted = placement(&chosen.spec, state);
    if wanted.is_empty() {
        return None;
    }
    let state_name = chosen.metadata.name.clone().unwrap_or_default();
    pod.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(INJECTED_ANNOTATION.to_owned(), state_name.clone());
    let spec = pod.spec.get_or_insert_with(Default::default);
    if let Some(selector) = wanted.node_selector.filter(|selector| !selector.is_empty()) {
        spec.node_selector
            .get_or_insert_with(BTreeMap::new)
            .extend(selector);
    }
    if !wanted.preferred.is_empty() {
        spec.affinity
            .get_or_insert_with(Affinity::default)
            .node_affinity
            .get_or_insert_with(NodeAffinity::default)
            .preferred_during_scheduling_ignored_during_execution
            .get_or_insert_with(Vec::new)
            .extend(wanted.preferred);
    }
    Some(state_name)
}

#[cfg(test)]
mod tests;
