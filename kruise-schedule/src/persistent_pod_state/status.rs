//! The next status of a PersistentPodState (upstream `ReconcilePersistentPodState.Reconcile`).
//!
//! * The workload is gone or being deleted: no pod state is kept, whatever the retention policy.
//! * Every pod of the workload that is Ready and has a node gets a record: its node name, the values its
//!   node has for the topology keys (required and preferred together), and its values of the persistent
//!   annotation keys. A record whose node name is unchanged and whose label and annotation keys are the
//!   keys asked for is kept as it is.
//! * Retention `WhenScaled` (or unset, or any value but `WhenDeleted`): the record of a pod whose ordinal
//!   (the number after the name's last `-`) is not one of the workload's first `replicas` unreserved
//!   ordinals is removed once that pod no longer exists. A name without a number keeps its record.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1alpha1::{
    PersistentPodStateRetentionPolicyType as Retention, PersistentPodStateSpec,
    PersistentPodStateStatus, PodState,
};

use crate::statefulset::ordinals::ReservedOrdinals;

/// What the status needs to know about the target workload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkloadView {
    /// `spec.replicas` (the scale).
    pub replicas: i32,
    /// The Advanced StatefulSet's `reserveOrdinals` (empty for an apps/v1 StatefulSet).
    pub reserved: ReservedOrdinals,
    /// The workload has a deletion timestamp.
    pub deleting: bool,
}

/// The observation one status is computed from.
#[derive(Clone, Copy, Debug)]
pub struct StatusInput<'a> {
    /// The PersistentPodState's spec.
    pub spec: &'a PersistentPodStateSpec,
    /// Its current status.
    pub previous: Option<&'a PersistentPodStateStatus>,
    /// Its `metadata.generation`.
    pub generation: i64,
    /// The target workload; `None` when it does not exist.
    pub workload: Option<&'a WorkloadView>,
    /// The workload's active pods (owned by it, not terminated, not being deleted).
    pub pods: &'a [Pod],
    /// The labels of the nodes the pods run on, by node name (a node missing here is not recorded).
    pub node_labels: &'a BTreeMap<String, BTreeMap<String, String>>,
}

/// The node label keys the spec records: the required keys and every preferred term's keys.
#[must_use]
pub fn topology_keys(spec: &PersistentPodStateSpec) -> BTreeSet<&str> {
    let required = spec
        .required_persistent_topology
        .iter()
        .flat_map(|term| term.node_topology_keys.iter());
    let preferred = spec
        .preferred_persistent_topology
        .iter()
        .flat_map(|term| term.preference.node_topology_keys.iter());
    required.chain(preferred).map(String::as_str).collect()
}

/// The next status.
#[must_use]
pub fn next_status(input: &StatusInput<'_>) -> PersistentPodStateStatus {
    let Some(workload) = input.workload.filter(|workload| !workload.deleting) else {
        return PersistentPodStateStatus {
            observed_generation: input.generation,
            pod_states: BTreeMap::new(),
        };
    };
    let mut states = input
        .previous
        .map(|status| status.pod_states.clone())
        .unwrap_or_default();
    let label_keys = topology_keys(input.spec);
    let annotation_keys: BTreeSet<&str> = input
        .spec
        .persistent_pod_annotations
        .iter()
        .map(|annotation| annotation.key.as_str())
        .collect();
    for pod in input.pods {
        let (Some(name), Some(node)) = (pod.metadata.name.as_deref(), scheduled_node(pod)) else {
            continue;
        };
        if !kruise_api::pod::is_ready(pod) {
            continue;
        }
        if states
            .get(name)
            .is_some_and(|state| is_current(state, node, &label_keys, &annotation_keys))
        {
            continue;
        }
        let Some(labels) = input.node_labels.get(node) else {
            continue;
        };
        states.insert(
            name.to_owned(),
            record(pod, node, labels, &label_keys, &annotation_keys),
        );
    }
    let when_deleted = matches!(
        input.spec.persistent_pod_state_retention_policy,
        Some(Retention::WhenDeleted)
    );
    if !when_deleted {
        let existing: BTreeSet<&str> = input
            .pods
            .iter()
            .filter_map(|pod| pod.metadata.name.as_deref())
            .collect();
        states.retain(|name, _| {
            let Some(ordinal) = ordinal_of(name) else {
                return true;
            };
            is_within_replicas(ordinal, workload) || existing.contains(name.as_str())
        });
    }
    PersistentPodStateStatus {
        observed_generation: input.generation,
        pod_states: states,
    }
}

/// The pod's node, when it has one.
fn scheduled_node(pod: &Pod) -> Option<&str> {
    pod.spec
        .as_ref()
        .and_then(|spec| spec.node_name.as_deref())
        .filter(|node| !node.is_empty())
}

/// The record needs no refresh: same node, and recorded under exactly the keys asked for.
fn is_current(
    state: &PodState,
    node: &str,
    label_keys: &BTreeSet<&str>,
    annotation_keys: &BTreeSet<&str>,
) -> bool {
    state.node_name == node
        && state
            .node_topology_labels
            .keys()
            .map(String::as_str)
            .eq(label_keys.iter().copied())
        && state
            .annotations
            .keys()
            .map(String::as_str)
            .eq(annotation_keys.iter().copied())
}

/// The record of `pod` on `node` (labels `node_labels`).
fn record(
    pod: &Pod,
    node: &str,
    node_labels: &BTreeMap<String, String>,
    label_keys: &BTreeSet<&str>,
    annotation_keys: &BTreeSet<&str>,
) -> PodState {
    let picked = |source: Option<&BTreeMap<String, String>>, keys: &BTreeSet<&str>| {
        keys.iter()
            .filter_map(|key| {
                let value = source?.get(*key)?;
                Some(((*key).to_owned(), value.clone()))
            })
            .collect()
    };
    PodState {
        node_name: node.to_owned(),
        node_topology_labels: picked(Some(node_labels), label_keys),
        annotations: picked(pod.metadata.annotations.as_ref(), annotation_keys),
    }
}

/// The ordinal of a StatefulSet pod name: the integer after its last `-` (Go's `strconv.Atoi`, so a
/// sign is accepted).
#[must_use]
pub fn ordinal_of(name: &str) -> Option<i64> {
    let (_, suffix) = name.rsplit_once('-').unwrap_or(("", name));
    suffix.parse().ok()
}

/// Whether `ordinal` is one of the workload's first `replicas` ordinals that are not reserved.
#[must_use]
pub fn is_within_replicas(ordinal: i64, workload: &WorkloadView) -> bool {
    if ordinal < 0 || workload.reserved.contains(ordinal) {
        return false;
    }
    let reserved_below: i64 = workload
        .reserved
        .ranges()
        .iter()
        .filter(|(start, _)| *start < ordinal)
        .map(|(start, end)| (*end).min(ordinal.saturating_sub(1)) - (*start).max(0) + 1)
        .filter(|count| *count > 0)
        .sum();
    ordinal.saturating_sub(reserved_below) < i64::from(workload.replicas)
}

#[cfg(test)]
mod tests;
