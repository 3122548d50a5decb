//! One reconcile of the SidecarSet controller as a pure function (upstream `UpdateSidecarSet`), like the
//! CloneSet planner: from the SidecarSet, the pods it selects and its ControllerRevisions at `now`, the
//! revision bookkeeping, the status to write, and the pods to patch — each with its reason and patches.
//!
//! 1. revisions: reuse, roll back or create the latest; truncate the history ([`crate::revision`]);
//! 2. status over the matched pods ([`crate::status`]);
//! 3. the hot-upgrade **reset** pass: pods whose upgraded sidecar is ready get the old container back on the
//!    empty image; if any pod is reset, the step ends there;
//! 4. stop when `updateStrategy.type` is `NotUpdate`, when every matched pod is updated, or when
//!    `updateStrategy.paused`;
//! 5. otherwise **upgrade** the pods [`crate::upgrade::next_upgrade_pods`] picks, and mark the candidates
//!    that cannot be upgraded in place with `SidecarSetUpgradable=False`.
//!
//! Upstream also waits for its in-flight update expectations before steps 3–5; a controller embedding this
//! planner keeps that bookkeeping (plan again once the patched pods are observed).

use std::borrow::Borrow;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Pod, PodStatus};
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{SidecarSet, SidecarSetStatus, SidecarSetUpdateStrategyType};
use kruise_inplace::Outcome;

use crate::condition;
use crate::error::Error;
use crate::hash::{self, name_of};
use crate::hot_upgrade;
use crate::pod_view::PodView;
use crate::records;
use crate::revision::{self, RevisionPlan};
use crate::status;
use crate::upgrade;

/// What the planner reads. For [`plan()`] the pods are any `Borrow<Pod>` (`Pod`, `&Pod`, `Arc<Pod>` from a
/// reflector store); for [`plan_steps`] any [`PodView`] (a pod, or its compact
/// [`PodFacts`](crate::pod_facts::PodFacts)). The planner never clones them.
#[derive(Debug)]
pub struct PlanInput<'a, P = Pod> {
    /// The SidecarSet as stored (with its hash annotations; they are computed when missing).
    pub sidecarset: &'a SidecarSet,
    /// The pods the SidecarSet selects (listed by its namespaces and selector); the planner keeps the
    /// matched ones.
    pub pods: &'a [P],
    /// The ControllerRevisions of the kruise-manager namespace (others' are ignored).
    pub revisions: &'a [ControllerRevision],
    /// Where new ControllerRevisions go (the kruise-manager namespace).
    pub revision_namespace: &'a str,
    /// The time written into annotations and conditions.
    pub now: Timestamp,
}

impl<P> Clone for PlanInput<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for PlanInput<'_, P> {}

/// Where the reconcile stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Hot-upgrade resets were planned; upgrades wait for the next reconcile.
    Reset,
    /// `updateStrategy.type: NotUpdate`: pods are never upgraded.
    NotUpdate,
    /// Every matched pod is updated.
    Finished,
    /// `updateStrategy.paused`.
    Paused,
    /// The upgrade step ran (its actions may be empty when the budget is used up or pods must wait).
    Upgrade,
}

/// Why a pod is patched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Hot upgrade finished on this pod: the old container goes back to the empty image.
    ResetHotUpgrade,
    /// The pod's sidecars are upgraded in place to the SidecarSet.
    Upgrade,
    /// A field other than an image changed, so the pod cannot be upgraded in place:
    /// `SidecarSetUpgradable=False`.
    NotUpgradable,
}

impl Reason {
    /// A short name: `reset-hot-upgrade`, `upgrade`, `not-upgradable`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::ResetHotUpgrade => "reset-hot-upgrade",
            Self::Upgrade => "upgrade",
            Self::NotUpgradable => "not-upgradable",
        }
    }
}

/// One pod to patch.
#[derive(Clone, Debug, PartialEq)]
pub struct PodAction {
    /// Index into [`PlanInput::pods`].
    pub pod: usize,
    /// Why.
    pub reason: Reason,
    /// The pod after the change and the RFC 6902 patches (pod, then `status` subresource), each starting
    /// with a `test` of the observed resourceVersion.
    pub outcome: Outcome,
}

/// The result of one reconcile.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The revision bookkeeping.
    pub revisions: RevisionPlan,
    /// The status to write.
    pub status: SidecarSetStatus,
    /// Indexes of the matched pods.
    pub matched: Vec<usize>,
    /// Where the reconcile stopped.
    pub step: Step,
    /// The pods to patch, in order.
    pub actions: Vec<PodAction>,
}

/// One pod a plan acts on, decided from its [`PodView`]; [`pod_outcome`] builds the patches from the
/// whole pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PodStep {
    /// Index into [`PlanInput::pods`].
    pub pod: usize,
    /// Why.
    pub reason: Reason,
}

/// The decisions of one reconcile, made from pod views ([`plan_steps`]): everything of a [`Plan`] but the
/// patches.
#[derive(Clone, Debug, PartialEq)]
pub struct StepPlan {
    /// The revision bookkeeping.
    pub revisions: RevisionPlan,
    /// The status to write.
    pub status: SidecarSetStatus,
    /// Indexes of the matched pods.
    pub matched: Vec<usize>,
    /// Where the reconcile stopped.
    pub step: Step,
    /// The pods to patch, in order.
    pub steps: Vec<PodStep>,
}

impl StepPlan {
    /// The SidecarSet as the pod steps see it: `sidecarset` with the planned status (what
    /// [`pod_outcome`] takes).
    #[must_use]
    pub fn planned(&self, sidecarset: &SidecarSet) -> SidecarSet {
        let mut planned = sidecarset.clone();
        planned.status = Some(self.status.clone());
        planned
    }
}

/// Plans one reconcile.
///
/// # Errors
/// The SidecarSet cannot be encoded (invalid quantity), a `MergePatchJson` cannot be applied to a pod, or a
/// pod's `SidecarSetUpgradable` message does not parse.
pub fn plan<P: Borrow<Pod>>(input: &PlanInput<'_, P>) -> Result<Plan, Error> {
    let pods: Vec<&Pod> = input.pods.iter().map(Borrow::borrow).collect();
    let steps = plan_steps(&PlanInput {
        sidecarset: input.sidecarset,
        pods: &pods,
        revisions: input.revisions,
        revision_namespace: input.revision_namespace,
        now: input.now,
    })?;
    let planned = steps.planned(input.sidecarset);
    let mut actions = Vec::with_capacity(steps.steps.len());
    for step in &steps.steps {
        let Some(pod) = pods.get(step.pod) else {
            continue;
        };
        actions.push(PodAction {
            pod: step.pod,
            reason: step.reason,
            outcome: pod_outcome(&planned, step.reason, pod, input.now)?,
        });
    }
    Ok(Plan {
        revisions: steps.revisions,
        status: steps.status,
        matched: steps.matched,
        step: steps.step,
        actions,
    })
}

/// The pod after one step and its patches: `planned` is the SidecarSet with the planned status
/// ([`StepPlan::planned`]), `pod` the whole pod the step was planned from.
///
/// # Errors
/// The SidecarSet cannot be encoded, a `MergePatchJson` cannot be applied to the pod, or its
/// `SidecarSetUpgradable` message does not parse.
pub fn pod_outcome(
    planned: &SidecarSet,
    reason: Reason,
    pod: &Pod,
    now: Timestamp,
) -> Result<Outcome, Error> {
    let hashes = hash::recorded_or_computed(planned)?;
    let after = match reason {
        Reason::ResetHotUpgrade => hot_upgrade::reset(planned, &hashes, pod, now),
        Reason::Upgrade => upgrade::upgrade_pod(planned, &hashes, pod, now)?,
        Reason::NotUpgradable => {
            let mut after = pod.clone();
            condition::set_upgradable(&mut after, name_of(planned), false, now).map_err(
                |source| Error::PodAnnotation {
                    pod: records::pod_key(pod),
                    source,
                },
            )?;
            after
        }
    };
    Ok(Outcome::between(pod, after, false))
}

/// Whether marking the pod not upgradable by `sidecarset` changes its `SidecarSetUpgradable` condition
/// (read from the view's copy of that condition alone).
fn marks_not_upgradable<P: PodView>(
    pod: &P,
    sidecarset: &str,
    now: Timestamp,
) -> Result<bool, Error> {
    let mut probe = Pod {
        status: Some(PodStatus {
            conditions: pod
                .upgradable_condition()
                .cloned()
                .map(|condition| vec![condition]),
            ..PodStatus::default()
        }),
        ..Pod::default()
    };
    condition::set_upgradable(&mut probe, sidecarset, false, now).map_err(|source| {
        Error::PodAnnotation {
            pod: pod.key(),
            source,
        }
    })
}

/// Plans one reconcile from pod views: the decisions of [`plan()`] without the patches (see
/// [`crate::pod_facts`]).
///
/// # Errors
/// The SidecarSet cannot be encoded (invalid quantity), or a pod's `SidecarSetUpgradable` message does not
/// parse.
pub fn plan_steps<P: PodView>(input: &PlanInput<'_, P>) -> Result<StepPlan, Error> {
    let sidecarset = input.sidecarset;
    let hashes = hash::recorded_or_computed(sidecarset)?;
    let matched = status::matched_pods(sidecarset, input.pods);
    let matched_pods: Vec<&P> = matched
        .iter()
        .filter_map(|index| input.pods.get(*index))
        .collect();
    let revisions = revision::plan_revisions(
        sidecarset,
        input.revisions,
        &matched_pods,
        input.revision_namespace,
    )?;
    let collision_count = sidecarset
        .status
        .as_ref()
        .and_then(|status| status.collision_count)
        .unwrap_or(0);
    let status = status::calculate_status(
        sidecarset,
        &hashes,
        &matched_pods,
        revisions.latest.name(),
        collision_count,
    );
    let mut current = sidecarset.clone();
    current.status = Some(status.clone());
    let mut plan = StepPlan {
        revisions,
        status,
        matched: matched.clone(),
        step: Step::Upgrade,
        steps: Vec::new(),
    };
    let index_of = |position: usize| matched.get(position).copied().unwrap_or(position);

    if current
        .spec
        .containers
        .iter()
        .any(hot_upgrade::is_hot_upgrade)
    {
        for (position, pod) in matched_pods.iter().enumerate() {
            if hot_upgrade::needs_reset(&current, pod) {
                plan.steps.push(PodStep {
                    pod: index_of(position),
                    reason: Reason::ResetHotUpgrade,
                });
            }
        }
        if !plan.steps.is_empty() {
            plan.step = Step::Reset;
            return Ok(plan);
        }
    }
    let strategy = &current.spec.update_strategy;
    if strategy.type_ == Some(SidecarSetUpdateStrategyType::NotUpdate) {
        plan.step = Step::NotUpdate;
        return Ok(plan);
    }
    if plan.status.updated_pods >= plan.status.matched_pods {
        plan.step = Step::Finished;
        return Ok(plan);
    }
    if strategy.paused {
        plan.step = Step::Paused;
        return Ok(plan);
    }
    let next = upgrade::next_upgrade_pods(&current, &hashes, &matched_pods);
    let name = name_of(&current);
    for position in next.not_upgradable {
        let Some(pod) = matched_pods.get(position) else {
            continue;
        };
        if marks_not_upgradable(pod, name, input.now)? {
            plan.steps.push(PodStep {
                pod: index_of(position),
                reason: Reason::NotUpgradable,
            });
        }
    }
    for position in next.upgrade {
        if matched_pods.get(position).is_some() {
            plan.steps.push(PodStep {
                pod: index_of(position),
                reason: Reason::Upgrade,
            });
        }
    }
    Ok(plan)
}
