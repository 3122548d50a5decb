//! One reading of every pod and node: which node each pod is meant for, whether it carries the update
//! revision, and its readiness, availability and lifecycle state.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::jiff::Timestamp;
use kruise_api::keys;

use super::node_affinity::target_node;
use super::node_fit::{DaemonPodFit, NodeFit};
use super::settings::Settings;
use crate::pod_view::{self, Conditions, State};

/// What the planner knows about one pod.
#[derive(Clone, Debug)]
pub(crate) struct PodFacts<'a> {
    /// Index into the input pods.
    pub(crate) index: usize,
    /// Index into [`Facts::pods`].
    pub(crate) position: usize,
    pub(crate) pod: &'a Pod,
    /// Carries the update hash (or the DaemonSet's template generation).
    pub(crate) updated: bool,
    pub(crate) terminating: bool,
    pub(crate) failed: bool,
    pub(crate) pre_deleting: bool,
    pub(crate) ready: bool,
    /// Ready for `minReadySeconds` (upstream `IsPodAvailable`).
    pub(crate) available: bool,
    /// Available, and `InPlaceUpdateReady` not false when the pod has that gate (the status' availability).
    pub(crate) daemon_available: bool,
    pub(crate) scheduled: bool,
    pub(crate) created: Option<Timestamp>,
    pub(crate) conditions: Conditions,
    pub(crate) has_in_place_gate: bool,
    /// The in-place refresh may have something to write (a grace period, a pending container batch, or the
    /// `InPlaceUpdateReady` condition not yet settled on a pod with the gate).
    pub(crate) needs_refresh: bool,
}

impl PodFacts<'_> {
    pub(crate) fn name(&self) -> &str {
        pod_view::name(self.pod)
    }
}

/// Oldest first: scheduled pods first, then by creation time (a missing time is the oldest), then by name.
pub(crate) fn by_age(a: &PodFacts<'_>, b: &PodFacts<'_>) -> Ordering {
    b.scheduled
        .cmp(&a.scheduled)
        .then(a.created.cmp(&b.created))
        .then(a.name().cmp(b.name()))
        .then(a.index.cmp(&b.index))
}

/// A node and the daemon pods meant for it.
#[derive(Clone, Debug)]
pub(crate) struct NodeEntry<'a> {
    pub(crate) name: &'a str,
    /// The node, when it exists.
    pub(crate) node: Option<&'a Node>,
    /// Its fit (for a missing node: should not run, should not continue).
    pub(crate) fit: NodeFit,
    /// Indexes into [`Facts::pods`].
    pub(crate) pods: Vec<usize>,
}

impl NodeEntry<'_> {
    pub(crate) fn exists(&self) -> bool {
        self.node.is_some()
    }
}

/// The pods and nodes of one plan.
#[derive(Debug)]
pub(crate) struct Facts<'a> {
    pub(crate) pods: Vec<PodFacts<'a>>,
    /// By node name (sorted).
    pub(crate) nodes: BTreeMap<&'a str, NodeEntry<'a>>,
    /// The number of existing nodes that should run the pod.
    pub(crate) desired: i64,
}

/// What findUpdatedPodsOnNode says about a node's non-terminating pods: at most one at the update revision and
/// at most one older one (`None` when there are more).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NewAndOld {
    pub(crate) new: Option<usize>,
    pub(crate) old: Option<usize>,
}

impl<'a> Facts<'a> {
    pub(crate) fn collect(
        pods: &[&'a Pod],
        nodes: &[&'a Node],
        settings: &Settings<'_>,
        update_hash: &str,
        fit: &DaemonPodFit<'_>,
        now: Timestamp,
    ) -> Self {
        let mut entries: BTreeMap<&'a str, NodeEntry<'a>> = BTreeMap::new();
        for &node in nodes {
            let name = node.metadata.name.as_deref().unwrap_or("");
            entries.entry(name).or_insert_with(|| NodeEntry {
                name,
                node: Some(node),
                fit: fit.check(node),
                pods: Vec::new(),
            });
        }
        let mut facts = Vec::with_capacity(pods.len());
        for (index, &pod) in pods.iter().enumerate() {
            let Some(target) = target_node(pod.spec.as_ref()) else {
                continue;
            };
            let conditions = Conditions::of(pod);
            let available = conditions.available(settings.min_ready_seconds, now);
            let hash =
                kruise_api::pod::label(pod, keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL);
            let generation =
                kruise_api::pod::label(pod, keys::kubernetes::POD_TEMPLATE_GENERATION_LABEL);
            let updated = (!update_hash.is_empty() && hash == Some(update_hash))
                || settings
                    .template_generation
                    .as_deref()
                    .is_some_and(|g| generation == Some(g));
            let has_in_place_gate = kruise_inplace::condition::has_readiness_gate(pod);
            let position = facts.len();
            facts.push(PodFacts {
                index,
                position,
                pod,
                updated,
                terminating: pod.metadata.deletion_timestamp.is_some(),
                failed: pod_view::phase(pod) == "Failed",
                pre_deleting: State::of(pod) == State::PreparingDelete,
                ready: conditions.ready,
                available,
                daemon_available: available && (!has_in_place_gate || conditions.in_place_ready),
                scheduled: !pod_view::node_name(pod).is_empty(),
                created: pod.metadata.creation_timestamp.as_ref().map(|t| t.0),
                conditions,
                has_in_place_gate,
                needs_refresh: needs_refresh(pod, &conditions, has_in_place_gate),
            });
            entries
                .entry(target)
                .or_insert_with(|| NodeEntry {
                    name: target,
                    node: None,
                    fit: NodeFit {
                        should_run: false,
                        should_continue_running: false,
                        reason: None,
                    },
                    pods: Vec::new(),
                })
                .pods
                .push(position);
        }
        let desired = entries
            .values()
            .filter(|e| e.exists() && e.fit.should_run)
            .count();
        Self {
            pods: facts,
            nodes: entries,
            desired: i64::try_from(desired).unwrap_or(i64::MAX),
        }
    }

    pub(crate) fn pod(&self, position: usize) -> Option<&PodFacts<'a>> {
        self.pods.get(position)
    }

    /// The node's non-terminating pods split into new and old; `None` when there is more than one of either.
    pub(crate) fn new_and_old(&self, entry: &NodeEntry<'_>) -> Option<NewAndOld> {
        let mut out = NewAndOld::default();
        for &position in &entry.pods {
            let Some(facts) = self.pod(position) else {
                continue;
            };
            if facts.terminating {
                continue;
            }
            let slot = if facts.updated {
                &mut out.new
            } else {
                &mut out.old
            };
            if slot.is_some() {
                return None;
            }
            *slot = Some(position);
        }
        Some(out)
    }

    /// Whether a slot is empty or holds a `PreparingDelete` pod.
    pub(crate) fn nil_or_pre_deleting(&self, slot: Option<usize>) -> bool {
        slot.and_then(|p| self.pod(p))
            .is_none_or(|f| f.pre_deleting)
    }
}

fn needs_refresh(pod: &Pod, conditions: &Conditions, has_gate: bool) -> bool {
    let present = |key| kruise_api::pod::annotation(pod, key).is_some_and(|v: &str| !v.is_empty());
    if present(keys::inplace::GRACE_ANNOTATION) || present(keys::inplace::LEGACY_GRACE_ANNOTATION) {
        return true;
    }
    let state = kruise_api::pod::annotation(pod, keys::inplace::STATE_ANNOTATION)
        .or_else(|| kruise_api::pod::annotation(pod, keys::inplace::LEGACY_STATE_ANNOTATION));
    if state.is_some_and(|state| state.contains("\"next")) {
        return true;
    }
    has_gate && !conditions.in_place_settled
}
