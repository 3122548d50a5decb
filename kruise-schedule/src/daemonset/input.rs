//! What the Advanced DaemonSet planner reads: the DaemonSet, its pods, the nodes, its revisions, `now` and the
//! options.

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::jiff::Zoned;
use kruise_api::apps::v1beta1::DaemonSet;
use kruise_api::keys;
use kruise_inplace::calculate::RevisionRef;

use super::options::Options;

/// A revision of the DaemonSet as the planner needs it: the hash its pods carry in `controller-revision-hash`
/// (the ControllerRevision's own `controller-revision-hash` label) and its data.
#[derive(Clone, Copy, Debug)]
pub struct KnownRevision<'a> {
    /// The hash.
    pub hash: &'a str,
    /// The revision's name and data.
    pub revision: RevisionRef<'a>,
}

impl<'a> KnownRevision<'a> {
    /// The revision of a ControllerRevision, `None` when it lacks the `controller-revision-hash` label.
    #[must_use]
    pub fn of(revision: &'a ControllerRevision) -> Option<Self> {
        let hash = revision
            .metadata
            .labels
            .as_ref()?
            .get(keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL)?;
        Some(Self {
            hash,
            revision: RevisionRef::from(revision),
        })
    }
}

/// The revisions the plan works with.
#[derive(Clone, Copy, Debug)]
pub struct Revisions<'a> {
    /// The hash of the update (newest) revision: every pod created gets it, and pods carrying it are updated.
    pub update_hash: &'a str,
    /// The revisions whose data is known. A pod is updated in place only when the revision of its hash is
    /// here; the update revision's data defaults to the DaemonSet's own `spec.template`.
    pub known: &'a [KnownRevision<'a>],
}

impl<'a> Revisions<'a> {
    /// Only the update hash (no data: `InPlaceIfPossible` falls back to recreating pods).
    #[must_use]
    pub fn hash(update_hash: &'a str) -> Self {
        Self {
            update_hash,
            known: &[],
        }
    }

    /// The known revision with `hash`.
    #[must_use]
    pub fn get(&self, hash: &str) -> Option<&KnownRevision<'a>> {
        self.known.iter().find(|known| known.hash == hash)
    }
}

/// Everything one Advanced DaemonSet plan reads.
#[derive(Clone, Copy, Debug)]
pub struct PlanInput<'a> {
    /// The DaemonSet (the v1beta1 hub; convert a v1alpha1 object with `From`).
    pub daemonset: &'a DaemonSet,
    /// The pods it owns, including terminating and finished ones (they matter: a node with a terminating pod
    /// gets no new pod until it is gone, and failed pods are deleted). References, so that a controller
    /// plans from its cache without copying a pod.
    pub pods: &'a [&'a Pod],
    /// Every node of the cluster (references: the controller's node cache is not copied either).
    pub nodes: &'a [&'a Node],
    /// The update revision and the known revisions.
    pub revisions: Revisions<'a>,
    /// The time of the decision; its zone is the one lifecycle timestamps are written in.
    pub now: &'a Zoned,
    /// Gates.
    pub options: &'a Options,
}

impl<'a> PlanInput<'a> {
    /// An input with the given pods, nodes and revisions.
    #[must_use]
    pub fn new(
        daemonset: &'a DaemonSet,
        pods: &'a [&'a Pod],
        nodes: &'a [&'a Node],
        revisions: Revisions<'a>,
        now: &'a Zoned,
        options: &'a Options,
    ) -> Self {
        Self {
            daemonset,
            pods,
            nodes,
            revisions,
            now,
            options,
        }
    }
}
