//! The state one pass carries from step to step (actions so far, requeue, what it waits for, the pods
//! already refreshed) and the writes every step shares: refresh a pod, delete a pod, create missing claims.

use std::collections::HashMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kruise_lifecycle::{DeleteDecision, RefreshInput};

use super::action::{Action, ActionKind, Rule};
use super::create::claims_for;
use super::error::Error;
use super::plan::Ctx;
use super::wait::Wait;
use crate::pod_view::{self, State};

/// The shortest of the requeue durations pushed (upstream `DurationStore`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Requeue(pub(crate) Option<Duration>);

impl Requeue {
    pub(crate) fn push(&mut self, after: Option<Duration>) {
        if let Some(after) = after.filter(|after| !after.is_zero()) {
            self.0 = Some(self.0.map_or(after, |current| current.min(after)));
        }
    }
}

/// What one pass has decided so far.
#[derive(Debug, Default)]
pub(crate) struct Pass {
    pub(crate) actions: Vec<Action>,
    pub(crate) requeue: Requeue,
    pub(crate) waiting: Option<Wait>,
    /// Pods refreshed in this pass, and whether their lifecycle state changed.
    refreshed: HashMap<usize, bool>,
    /// `status.currentReplicas` / `status.updatedReplicas` decrements for pods deleted or updated in place.
    pub(crate) current_gone: i32,
    pub(crate) updated_gone: i32,
}

impl Pass {
    pub(crate) fn push(&mut self, kind: ActionKind, rule: Rule) {
        self.actions.push(Action { kind, rule });
    }

    pub(crate) fn wait(&mut self, wait: Wait) {
        self.waiting = Some(wait);
    }

    /// Upstream `refreshPodState`: the in-place refresh (grace period, next batch, `InPlaceUpdateReady`) and
    /// the lifecycle refresh. Writes are planned once per pod; the answer (whether the lifecycle state
    /// changed) is the same every time it is asked, as upstream asks again with the same cached pod.
    pub(crate) fn refresh(&mut self, ctx: &Ctx<'_>, index: usize) -> Result<bool, Error> {
        if let Some(changed) = self.refreshed.get(&index) {
            return Ok(*changed);
        }
        let Some(pod) = ctx.input.pods.get(index) else {
            return Ok(false);
        };
        let outcome = kruise_inplace::refresh(pod, ctx.now, &ctx.update_options)?;
        self.requeue.push(outcome.requeue_after);
        if outcome.changed() {
            self.push(
                ActionKind::RefreshInPlace {
                    pod: index,
                    outcome: Box::new(outcome),
                },
                Rule::InPlaceProgress,
            );
        }
        let state = State::of(pod);
        let mut changed = false;
        if matches!(
            state,
            State::PreparingNormal | State::PreparingUpdate | State::Updating | State::Updated
        ) {
            let input = RefreshInput {
                update_completed: state == State::Updating
                    && kruise_inplace::completion::is_completed(pod, &ctx.update_options),
                at_update_revision: pod_view::revision_is(pod, ctx.input.revisions.update),
            };
            let transition = ctx.workload.refresh(pod, input, ctx.input.now)?;
            if !transition.is_noop() {
                changed = transition.changes_state();
                self.push(
                    ActionKind::Lifecycle {
                        pod: index,
                        transition,
                    },
                    Rule::LifecycleRefresh,
                );
            }
        }
        self.refreshed.insert(index, changed);
        Ok(changed)
    }

    /// Upstream `deletePod`: while the preDelete hook holds the pod, move it to `PreparingDelete`;
    /// otherwise delete it. Returns (modified: the pod was deleted or its state changed, deleted).
    pub(crate) fn delete(
        &mut self,
        ctx: &Ctx<'_>,
        index: usize,
        rule: Rule,
    ) -> Result<(bool, bool), Error> {
        let Some(pod) = ctx.input.pods.get(index) else {
            return Ok((false, false));
        };
        match ctx.workload.delete_wanted(pod, ctx.input.now)? {
            DeleteDecision::Delete => {
                self.push(ActionKind::DeletePod { pod: index }, rule);
                Ok((true, true))
            }
            DeleteDecision::Hold(transition) => {
                let modified = transition.changes_state();
                if !transition.is_noop() {
                    self.push(
                        ActionKind::Lifecycle {
                            pod: index,
                            transition,
                        },
                        rule,
                    );
                }
                Ok((modified, false))
            }
        }
    }

    /// Upstream `createPersistentVolumeClaims`: create every claim of `pod` (on `ordinal`) that does not
    /// exist.
    ///
    /// # Errors
    /// [`Error::ClaimTerminating`] when one of them is being deleted.
    pub(crate) fn create_missing_claims(
        &mut self,
        ctx: &Ctx<'_>,
        pod: &Pod,
        ordinal: i64,
        rule: &Rule,
    ) -> Result<(), Error> {
        for (_, claim) in claims_for(ctx.set, ordinal) {
            let name = claim.metadata.name.as_deref().unwrap_or("");
            match ctx.claim(name) {
                None => self.push(
                    ActionKind::CreateClaim {
                        claim: Box::new(claim),
                    },
                    rule.clone(),
                ),
                Some((_, existing)) if existing.metadata.deletion_timestamp.is_some() => {
                    return Err(Error::ClaimTerminating {
                        pod: kruise_lifecycle::PodName::of(pod).0,
                        claim: name.to_owned(),
                    });
                }
                Some(_) => {}
            }
        }
        Ok(())
    }
}
