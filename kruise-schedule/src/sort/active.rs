//! Kubernetes' `ActivePods` order, the default order in which CloneSet and SidecarSet update pods ("smaller"
//! is updated first), as `kubecontroller.ActivePods.Less` sorts:
//!
//! 1. unscheduled before scheduled (only when exactly one has no node);
//! 2. `Pending` < `Unknown` < `Running` (other phases count as `Pending`);
//! 3. not ready before ready;
//! 4. when both are ready, the more recently ready first (a zero time counts as the most recent);
//! 5. more container restarts first;
//! 6. newer pods first (a zero creation time first);
//! 7. (kruise-rs) ties by pod name, so the order is total and deterministic.

use std::borrow::Borrow;
use std::cmp::{Ordering, Reverse};

use k8s_openapi::api::core::v1::Pod;

use super::{LatestFirst, phase_ordinal};
use crate::pod_view::{self, Conditions};

/// The sort key of one pod in the `ActivePods` order; compare keys with `Ord`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActiveKey<'a> {
    /// Rule 1: scheduled.
    pub scheduled: bool,
    /// Rule 2: phase ordinal.
    pub phase: u8,
    /// Rule 3: ready.
    pub ready: bool,
    /// Rule 4: when it became ready (only compared when both are ready).
    pub ready_since: LatestFirst,
    /// Rule 5: most restarts first.
    pub restarts: Reverse<i32>,
    /// Rule 6: creation time, newest (or zero) first.
    pub created: LatestFirst,
    /// Tie-break: the pod name.
    pub name: &'a str,
}

impl<'a> ActiveKey<'a> {
    /// The key of `pod`.
    #[must_use]
    pub fn of(pod: &'a Pod) -> Self {
        let conditions = Conditions::of(pod);
        Self::with_conditions(pod, &conditions)
    }

    /// The key of `pod` whose conditions were already read.
    #[must_use]
    pub fn with_conditions(pod: &'a Pod, conditions: &Conditions) -> Self {
        Self {
            scheduled: !pod_view::node_name(pod).is_empty(),
            phase: phase_ordinal(pod_view::phase(pod)),
            ready: conditions.ready,
            ready_since: LatestFirst(if conditions.ready {
                conditions.ready_since
            } else {
                None
            }),
            restarts: Reverse(kruise_api::pod::max_restart_count(pod)),
            created: LatestFirst(pod.metadata.creation_timestamp.as_ref().map(|time| time.0)),
            name: pod_view::name(pod),
        }
    }
}

impl ActiveKey<'_> {
    /// The order of rules 1 to 6, without the name tie-break.
    pub(crate) fn cmp_unnamed(&self, other: &Self) -> Ordering {
        self.scheduled
            .cmp(&other.scheduled)
            .then(self.phase.cmp(&other.phase))
            .then(self.ready.cmp(&other.ready))
            .then_with(|| {
                if self.ready && other.ready {
                    self.ready_since.cmp(&other.ready_since)
                } else {
                    Ordering::Equal
                }
            })
            .then(self.restarts.cmp(&other.restarts))
            .then(self.created.cmp(&other.created))
    }
}

impl Ord for ActiveKey<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.cmp_unnamed(other).then(self.name.cmp(other.name))
    }
}

impl PartialOrd for ActiveKey<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Sorts `indexes` (into `pods`) in the `ActivePods` order. Indexes out of range sort last, in index order.
pub fn sort<P: Borrow<Pod>>(pods: &[P], indexes: &mut [usize]) {
    indexes.sort_by_cached_key(|&index| {
        let key = pods.get(index).map(|pod| ActiveKey::of(pod.borrow()));
        (key.is_none(), key, index)
    });
}
