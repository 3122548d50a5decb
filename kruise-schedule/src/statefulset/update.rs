//! The rolling update (upstream `rollingUpdateStatefulsetPods`): refresh every pod; count the
//! unavailable slots; delete specified-delete pods within `maxUnavailable`; order the slots (descending slot
//! index down to the partition, or by priority with `unorderedUpdate`); update each old pod in place or by
//! recreation until `maxUnavailable` is reached. With `volumeClaimUpdateStrategy: OnPodRollingUpdate` (gate
//! `StatefulSetAutoResizePVCGate`), a pod whose claims lack capacity counts as unavailable, and a pod's
//! claims are expanded, and must have grown, before it is updated.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1beta1::StatefulSetPodUpdatePolicy;
use kruise_inplace::UpdateSpec;
use kruise_inplace::calculate::{RevisionRef, calculate_data};
use kruise_lifecycle::UpdateDecision;
use serde_json::Value;

use super::action::{ActionKind, Rule};
use super::error::Error;
use super::pass::Pass;
use super::plan::{Ctx, Occupant, Slot, is_pod_update};
use super::scale::is_specified_delete;
use super::volume_claims;
use super::wait::Wait;
use crate::int_or_percent::{Rounding, legacy_scaled};
use crate::planning::UpdateHow;
use crate::pod_view;
use crate::sort::priority::Priority;

/// `rollingUpdate.maxUnavailable` as a number: legacy-scaled from the replicas, rounded down, at least 1
/// (1 without `rollingUpdate`).
pub(crate) fn max_unavailable(ctx: &Ctx<'_>) -> Result<i64, Error> {
    let Some(rolling) = ctx.set.spec.update_strategy.rolling_update.as_ref() else {
        return Ok(1);
    };
    let one = IntOrString::Int(1);
    let value = rolling.max_unavailable.as_ref().unwrap_or(&one);
    legacy_scaled(value, ctx.range.replicas(), Rounding::Down)
        .map(|max| max.max(1))
        .map_err(|error| Error::MaxUnavailable {
            set: ctx.key.clone(),
            error: error.in_field("spec.updateStrategy.rollingUpdate.maxUnavailable"),
        })
}

/// The slots to update, in order (positions into `slots`; upstream `sortPodsToUpdate`).
pub(crate) fn update_order(ctx: &Ctx<'_>, slots: &[Slot]) -> Vec<usize> {
    let rolling = ctx.set.spec.update_strategy.rolling_update.as_ref();
    let partition = i64::from(rolling.and_then(|r| r.partition).unwrap_or(0));
    let max_update = usize::try_from(ctx.range.replicas() - partition).unwrap_or(0);
    if max_update == 0 {
        return Vec::new();
    }
    let Some(unordered) = rolling.and_then(|r| r.unordered_update.as_ref()) else {
        return (0..slots.len())
            .rev()
            .take_while(|&position| slots.get(position).is_some_and(|s| s.index >= partition))
            .take(max_update)
            .collect();
    };
    let mut settled = Vec::new();
    let mut waiting = Vec::new();
    for (position, slot) in slots.iter().enumerate().rev() {
        let Some(pod) = ctx.occupant_pod(&slot.occupant) else {
            continue;
        };
        if pod.metadata.deletion_timestamp.is_some() || is_pod_update(ctx, pod) {
            settled.push(position);
        } else {
            waiting.push(position);
        }
    }
    if let Some(strategy) = unordered.priority_strategy.as_ref() {
        let priority = Priority::new(strategy);
        if priority.is_active() {
            waiting.sort_by_cached_key(|&position| {
                slots
                    .get(position)
                    .and_then(|slot| ctx.occupant_pod(&slot.occupant))
                    .map(|pod| priority.key_of(pod))
            });
        }
    }
    settled.extend(waiting);
    settled.truncate(max_update);
    settled
}

/// The rolling update step.
pub(crate) fn rolling_update(ctx: &Ctx<'_>, pass: &mut Pass, slots: &[Slot]) -> Result<(), Error> {
    let mut modified = false;
    for index in 0..ctx.input.pods.len() {
        modified |= pass.refresh(ctx, index)?;
    }
    if modified {
        pass.wait(Wait::LifecycleRefreshed);
        return Ok(());
    }
    let rolling = ctx.set.spec.update_strategy.rolling_update.as_ref();
    if rolling.is_some_and(|r| r.paused) {
        pass.wait(Wait::Paused);
        return Ok(());
    }
    let max = max_unavailable(ctx)?;
    let update = ctx.input.revisions.update;
    let current = ctx.input.revisions.current;

    let resize = volume_claims::resize_on_update(ctx);
    let mut unavailable: HashSet<usize> = HashSet::new();
    for (position, slot) in slots.iter().enumerate() {
        let Occupant::Pod(index) = slot.occupant else {
            unavailable.insert(position);
            continue;
        };
        let health = ctx.health(index);
        let completed = || {
            ctx.pod(index).is_some_and(|pod| {
                kruise_inplace::completion::is_completed(pod, &ctx.update_options)
            })
        };
        if !health.healthy() || !completed() {
            unavailable.insert(position);
        } else if !health.available {
            unavailable.insert(position);
            pass.requeue.push(health.wait);
        } else if resize && !volume_claims::claims_ready(ctx, slot.ordinal) {
            // A claim still growing to what it requests.
            unavailable.insert(position);
        }
    }
    let over = |unavailable: &HashSet<usize>, position: usize| {
        i64::try_from(unavailable.len()).unwrap_or(i64::MAX) >= max
            && !unavailable.contains(&position)
    };

    let mut specified: HashSet<usize> = HashSet::new();
    for (position, slot) in slots.iter().enumerate().rev() {
        let Occupant::Pod(index) = slot.occupant else {
            continue;
        };
        let Some(pod) = ctx.pod(index) else {
            continue;
        };
        if !is_specified_delete(pod) || over(&unavailable, position) {
            continue;
        }
        specified.insert(position);
        if !ctx.health(index).terminating {
            let (_, deleted) =
                pass.delete(ctx, index, Rule::SpecifiedDelete { slot: slot.index })?;
            if deleted {
                if pod_view::revision_is(pod, current) {
                    pass.current_gone += 1;
                } else if pod_view::revision_is(pod, update) {
                    pass.updated_gone += 1;
                }
            }
        }
        unavailable.insert(position);
    }

    let mut updater = Updater::new(ctx);
    for (rank, position) in update_order(ctx, slots).into_iter().enumerate() {
        let Some(slot) = slots.get(position) else {
            continue;
        };
        let Some(pod) = ctx.occupant_pod(&slot.occupant) else {
            continue;
        };
        let claims_compatible = !resize || volume_claims::claims_compatible(ctx, slot.ordinal)?;
        if pod_view::revision_is(pod, update) && claims_compatible {
            continue;
        }
        if over(&unavailable, position) {
            pass.wait(Wait::MaxUnavailable {
                pod: pod_view::name(pod).to_owned(),
                unavailable: unavailable.len(),
                max_unavailable: max,
            });
            return Ok(());
        }
        let Occupant::Pod(index) = slot.occupant else {
            // A pod created by this pass: it is acted on once it exists.
            unavailable.insert(position);
            continue;
        };
        if resize {
            // Storage first: expand the claims, then wait until they have the storage (upstream does not
            // patch a claim before its pod is about to be updated, so that a running pod grows its file
            // system online).
            if !claims_compatible {
                volume_claims::expand(ctx, pass, index, slot.ordinal, slot.index)?;
            }
            if !volume_claims::claims_completed(ctx, slot.ordinal)? {
                unavailable.insert(position);
                pass.wait(Wait::ClaimsNotReady {
                    pod: pod_view::name(pod).to_owned(),
                });
                continue;
            }
        }
        if specified.contains(&position) || ctx.health(index).terminating {
            continue;
        }
        let rule = |how| Rule::Update {
            position: rank + 1,
            slot: slot.index,
            max_unavailable: max,
            how,
        };
        let gone = match updater.in_place(pass, index, pod, &rule)? {
            InPlace::Started => true,
            InPlace::No(how) => pass.delete(ctx, index, rule(how))?.1,
        };
        unavailable.insert(position);
        if gone && pod_view::revision_is(pod, current) {
            pass.current_gone += 1;
        }
    }
    Ok(())
}

enum InPlace {
    /// Updated in place, or held by the inPlaceUpdate hook (upstream counts both as "in-placing").
    Started,
    /// Not in place: recreate, for this reason.
    No(UpdateHow),
}

/// In-place updates, computing each old revision's update spec once.
struct Updater<'c, 'a> {
    ctx: &'c Ctx<'a>,
    update_data: Option<Value>,
    specs: HashMap<String, Result<Arc<UpdateSpec>, String>>,
}

impl<'c, 'a> Updater<'c, 'a> {
    fn new(ctx: &'c Ctx<'a>) -> Self {
        Self {
            ctx,
            update_data: None,
            specs: HashMap::new(),
        }
    }

    /// The in-place spec from the pod's revision (matched exactly) to the update revision.
    fn spec_for(&mut self, pod: &Pod) -> Result<Arc<UpdateSpec>, String> {
        let revisions = self.ctx.input.revisions;
        let revision = kruise_api::pod::revision(pod);
        let Some(old) = revisions.get(revision) else {
            return Err(format!(
                "the pod's revision {revision:?} is not among the known revisions"
            ));
        };
        if let Some(cached) = self.specs.get(old.name) {
            return cached.clone();
        }
        let target = match revisions.get(revisions.update).filter(|r| r.data.is_some()) {
            Some(known) => Ok(*known),
            None => {
                if self.update_data.is_none() {
                    self.update_data =
                        kruise_inplace::revision::template_data_value(&self.ctx.set.spec.template)
                            .ok();
                }
                self.update_data
                    .as_ref()
                    .map(|data| RevisionRef {
                        name: revisions.update,
                        data: Some(data),
                        annotations: None,
                    })
                    .ok_or_else(|| "the update revision's template is invalid".to_owned())
            }
        };
        let result = target.and_then(|target| {
            calculate_data(*old, target, &self.ctx.update_options)
                .map(Arc::new)
                .map_err(|reason| reason.to_string())
        });
        self.specs.insert(old.name.to_owned(), result.clone());
        result
    }

    /// Upstream `inPlaceUpdatePod`.
    fn in_place(
        &mut self,
        pass: &mut Pass,
        index: usize,
        pod: &Pod,
        rule: &dyn Fn(UpdateHow) -> Rule,
    ) -> Result<InPlace, Error> {
        let ctx = self.ctx;
        let policy = ctx
            .set
            .spec
            .update_strategy
            .rolling_update
            .as_ref()
            .and_then(|r| r.pod_update_policy.as_ref());
        let only = policy == Some(&StatefulSetPodUpdatePolicy::InPlaceOnly);
        if !only && policy != Some(&StatefulSetPodUpdatePolicy::InPlaceIfPossible) {
            return Ok(InPlace::No(UpdateHow::RecreatePolicy));
        }
        let spec = match self.spec_for(pod) {
            Ok(spec) => spec,
            Err(reason) if only => {
                return Err(Error::InPlaceOnly {
                    pod: kruise_lifecycle::PodName::of(pod).0,
                    reason,
                });
            }
            Err(reason) => return Ok(InPlace::No(UpdateHow::RecreateRequired(reason))),
        };
        match ctx.workload.update_wanted(pod, ctx.input.now)? {
            UpdateDecision::Hold(transition) => {
                if !transition.is_noop() {
                    pass.push(
                        ActionKind::Lifecycle {
                            pod: index,
                            transition,
                        },
                        rule(UpdateHow::InPlace),
                    );
                }
            }
            UpdateDecision::UpdateNow(lifecycle) => {
                if ctx.update_options.grace_period_seconds > 0 {
                    pass.requeue.push(Some(Duration::from_secs(
                        u64::try_from(ctx.update_options.grace_period_seconds).unwrap_or(0),
                    )));
                }
                pass.push(
                    ActionKind::UpdateInPlace {
                        pod: index,
                        spec,
                        lifecycle: Some(Arc::new(lifecycle)),
                    },
                    rule(UpdateHow::InPlace),
                );
            }
        }
        Ok(InPlace::Started)
    }
}
