//! What the CloneSet planner reads: the CloneSet, its pods and claims, its revisions, the nodes (for the
//! topology-spread ranker), `now`, the options, and where new instance ids come from.

use std::cell::Cell;
use std::fmt;

use k8s_openapi::api::core::v1::{Node, PersistentVolumeClaim, Pod};
use k8s_openapi::jiff::Zoned;
use kruise_api::apps::v1beta1::CloneSet;
use kruise_api::keys::cloneset::INSTANCE_ID_ALPHABET;
use kruise_inplace::calculate::RevisionRef;

use crate::split_mix::SplitMix64;

use super::cache::PodFactsCache;
use super::options::Options;
use super::pod_source::PodSource;

/// The revisions the plan works with: the names of the current and the update revision, and every revision
/// whose data is known (for in-place updates the pod's own revision is looked up here by its
/// `controller-revision-hash` label; pods at revisions without data are recreated, as upstream does).
///
/// The update revision's template is the CloneSet's own `spec.template` unless its data is given. The current
/// revision's template is only needed to create pods at it (scale-up below the partition).
#[derive(Clone, Copy, Debug)]
pub struct Revisions<'a> {
    /// `status.currentRevision`.
    pub current: &'a str,
    /// `status.updateRevision`.
    pub update: &'a str,
    /// The known revisions (ControllerRevisions converted with `RevisionRef::from`).
    pub known: &'a [RevisionRef<'a>],
}

impl<'a> Revisions<'a> {
    /// Revisions by name only (no data: in-place updates fall back to recreate).
    #[must_use]
    pub fn named(current: &'a str, update: &'a str) -> Self {
        Self {
            current,
            update,
            known: &[],
        }
    }

    /// The known revision named `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&RevisionRef<'a>> {
        self.known.iter().find(|revision| revision.name == name)
    }
}

/// Everything one CloneSet plan reads, the source of new instance ids included.
#[derive(Clone, Copy)]
pub struct PlanInput<'a> {
    /// The CloneSet (the v1beta1 hub; convert a v1alpha1 object with `From`).
    pub cloneset: &'a CloneSet,
    /// The pods it owns. Inactive pods (finished or being deleted) are ignored, as upstream lists only
    /// active pods. Empty for an input [`PlanInput::from_cache`], whose pods are the cache's.
    pub pods: &'a [Pod],
    /// The PersistentVolumeClaims it owns (for instance-id reuse, claim creation and deletion).
    pub claims: &'a [PersistentVolumeClaim],
    /// The current and update revisions.
    pub revisions: Revisions<'a>,
    /// The nodes of the pods, read only for the topology-spread ranker (pods on nodes not given are left out
    /// of that ranker, as upstream does for nodes it cannot get).
    pub nodes: &'a [Node],
    /// The time of the decision; its zone is the one lifecycle timestamps are written in.
    pub now: &'a Zoned,
    /// Gates and flags.
    pub options: &'a Options,
    /// Where new instance ids come from (the plan's only randomness; [`SeededIds`] is deterministic).
    pub ids: &'a dyn InstanceIds,
    /// The pods' cached facts and where their whole pods are read, for a plan from a cache
    /// ([`PlanInput::from_cache`]).
    pub(crate) cache: Option<(&'a PodFactsCache, &'a dyn PodSource)>,
}

impl fmt::Debug for PlanInput<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlanInput")
            .field("cloneset", &self.cloneset)
            .field("pods", &self.pods)
            .field("claims", &self.claims)
            .field("revisions", &self.revisions)
            .field("nodes", &self.nodes)
            .field("now", &self.now)
            .field("options", &self.options)
            .field("cache", &self.cache.map(|(cache, _)| cache))
            .finish_non_exhaustive()
    }
}

impl<'a> PlanInput<'a> {
    /// An input with no claims, no nodes and the given options, taking new instance ids from `ids`.
    #[must_use]
    pub fn new(
        cloneset: &'a CloneSet,
        pods: &'a [Pod],
        revisions: Revisions<'a>,
        now: &'a Zoned,
        options: &'a Options,
        ids: &'a dyn InstanceIds,
    ) -> Self {
        Self {
            cloneset,
            pods,
            claims: &[],
            revisions,
            nodes: &[],
            now,
            options,
            ids,
            cache: None,
        }
    }

    /// An input whose pods are `cache`'s ([`PodFactsCache::pods`]; `pods` stays empty): the plan derives
    /// the pods' facts from the cache instead of reading every pod, and reads from `source` only the whole
    /// pods of the steps that act on them, at the cached `resourceVersion`. It decides exactly as a plan of
    /// [`PlanInput::new`] with those pods in that order; when `source` no longer holds a pod it needs, the
    /// plan has no actions and names the pod in [`super::Plan::unavailable`]. The plan's pod indexes refer
    /// to [`PodFactsCache::pod`].
    #[must_use]
    pub fn from_cache(
        cloneset: &'a CloneSet,
        (cache, source): (&'a PodFactsCache, &'a dyn PodSource),
        revisions: Revisions<'a>,
        now: &'a Zoned,
        options: &'a Options,
        ids: &'a dyn InstanceIds,
    ) -> Self {
        Self {
            cache: Some((cache, source)),
            ..Self::new(cloneset, &[], revisions, now, options, ids)
        }
    }

    /// Sets the claims.
    #[must_use]
    pub fn with_claims(mut self, claims: &'a [PersistentVolumeClaim]) -> Self {
        self.claims = claims;
        self
    }

    /// Sets the nodes.
    #[must_use]
    pub fn with_nodes(mut self, nodes: &'a [Node]) -> Self {
        self.nodes = nodes;
        self
    }

    /// Sets the instance-id source (to plan the same input again from a fresh stream).
    #[must_use]
    pub fn with_ids(mut self, ids: &'a dyn InstanceIds) -> Self {
        self.ids = ids;
        self
    }
}

/// Where new instance ids come from (upstream: 5 random characters of
/// [`INSTANCE_ID_ALPHABET`]). The planner skips ids already in use by a pod or claim.
///
/// The source is read through a shared reference, as the [`PlanInput`] that carries it is `Copy`: a source
/// keeps its position in its stream itself (in a `Cell`, as [`SeededIds`] does, or behind a lock), so that
/// the next plan given the same source continues the stream.
pub trait InstanceIds {
    /// The next candidate id.
    fn next_id(&self) -> String;
}

impl<F: Fn() -> String> InstanceIds for F {
    fn next_id(&self) -> String {
        self()
    }
}

/// A deterministic id generator: 5 characters of [`INSTANCE_ID_ALPHABET`] from a seeded [`SplitMix64`] stream.
///
/// ```
/// use kruise_schedule::cloneset::{InstanceIds, SeededIds};
///
/// let ids = SeededIds::new(7);
/// let id = ids.next_id();
/// assert_eq!(id.len(), 5);
/// assert_eq!(SeededIds::new(7).next_id(), id);
/// ```
pub struct SeededIds {
    stream: Cell<SplitMix64>,
}

impl SeededIds {
    /// A copy of the stream where it stands.
    fn position(&self) -> SplitMix64 {
        let stream = self.stream.replace(SplitMix64::new(0));
        self.stream.set(stream.clone());
        stream
    }
}

impl Clone for SeededIds {
    fn clone(&self) -> Self {
        Self {
            stream: Cell::new(self.position()),
        }
    }
}

impl fmt::Debug for SeededIds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SeededIds")
            .field("stream", &self.position())
            .finish()
    }
}

impl SeededIds {
    /// A generator starting at `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self {
            stream: Cell::new(SplitMix64::new(seed)),
        }
    }
}

impl InstanceIds for SeededIds {
    fn next_id(&self) -> String {
        let alphabet = INSTANCE_ID_ALPHABET.as_bytes();
        let mut stream = self.stream.replace(SplitMix64::new(0));
        let mut value = stream.next_u64();
        self.stream.set(stream);
        let mut id = String::with_capacity(5);
        for _ in 0..5 {
            let len = alphabet.len() as u64;
            let digit = usize::try_from(value % len).unwrap_or(0);
            value /= len;
            id.push(char::from(alphabet.get(digit).copied().unwrap_or(b'b')));
        }
        id
    }
}
