//! What the Advanced StatefulSet planner reads: the StatefulSet, its pods and claims, its revisions, `now`
//! and the options.

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::jiff::Zoned;
use kruise_api::apps::v1beta1::StatefulSet;
use kruise_inplace::calculate::RevisionRef;

use super::options::Options;

/// The revisions the plan works with: the names of the current and the update revision, and every revision
/// whose data is known. A pod's own revision is looked up here by its exact `controller-revision-hash` label
/// for in-place updates; a pod at a revision without data cannot be updated in place (it is recreated, or
/// with `InPlaceOnly` the plan stops with an error), as upstream.
///
/// The update revision's template is the StatefulSet's own `spec.template` unless its data is given. The
/// current revision's data is needed to create pods at it (below the partition).
#[derive(Clone, Copy, Debug)]
pub struct Revisions<'a> {
    /// `status.currentRevision` (the update revision when the StatefulSet has none yet).
    pub current: &'a str,
    /// The update revision (the revision of `spec.template`).
    pub update: &'a str,
    /// The known revisions (ControllerRevisions converted with `RevisionRef::from`).
    pub known: &'a [RevisionRef<'a>],
}

impl<'a> Revisions<'a> {
    /// Revisions by name only.
    #[must_use]
    pub fn named(current: &'a str, update: &'a str) -> Self {
        Self {
            current,
            update,
            known: &[],
        }
    }

    /// Sets the known revisions.
    #[must_use]
    pub fn with_known(mut self, known: &'a [RevisionRef<'a>]) -> Self {
        self.known = known;
        self
    }

    /// The known revision named exactly `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&RevisionRef<'a>> {
        self.known.iter().find(|revision| revision.name == name)
    }
}

/// Everything one Advanced StatefulSet plan reads.
#[derive(Clone, Copy, Debug)]
pub struct PlanInput<'a> {
    /// The StatefulSet (v1beta1; apply `kruise_api::defaults` first, as upstream's webhook does).
    pub set: &'a StatefulSet,
    /// Every pod it owns, including finished and terminating ones (upstream lists them all). Pods whose
    /// name has no ordinal are ignored.
    pub pods: &'a [Pod],
    /// The PersistentVolumeClaims of its pods (looked up by name).
    pub claims: &'a [PersistentVolumeClaim],
    /// The current and update revisions.
    pub revisions: Revisions<'a>,
    /// The time of the decision; its zone is the one lifecycle timestamps are written in.
    pub now: &'a Zoned,
    /// Gates.
    pub options: &'a Options,
}

impl<'a> PlanInput<'a> {
    /// An input with no claims.
    #[must_use]
    pub fn new(
        set: &'a StatefulSet,
        pods: &'a [Pod],
        revisions: Revisions<'a>,
        now: &'a Zoned,
        options: &'a Options,
    ) -> Self {
        Self {
            set,
            pods,
            claims: &[],
            revisions,
            now,
            options,
        }
    }

    /// Sets the claims.
    #[must_use]
    pub fn with_claims(mut self, claims: &'a [PersistentVolumeClaim]) -> Self {
        self.claims = claims;
        self
    }
}
