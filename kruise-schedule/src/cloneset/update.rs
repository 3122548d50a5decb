//! The update step (upstream `Update` in `pkg/controller/cloneset/sync/cloneset_update.go`): refresh every pod,
//! then pick the pods to move to the target revision, order them, limit them by `updateMaxUnavailable`, and update
//! each in place or by recreation.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use kruise_api::apps::v1beta1::CloneSetPodUpdatePolicy;
use kruise_api::keys;
use kruise_api::lifecycle::LifecycleStateType;
use kruise_inplace::calculate::{RevisionRef, calculate_data};
use kruise_inplace::{UpdateOptions, UpdateSpec};
use kruise_lifecycle::{RefreshInput, Transition, UpdateGate};
use serde_json::Value;

use super::action::{Action, ActionKind, Rule, SpecificKind};
use super::diff::{self, RevisionMatch};
use super::error::Error;
use super::facts::{AVAILABLE, CURRENT, GRACE, NEEDS_REFRESH, NO_TEMPLATE_HASH, PodFacts, UPDATED};
use super::order;
use super::plan::{Ctx, Requeue, SkippedPod, Step};
use super::pod_source::ABSENT;
use crate::planning::{Target, UpdateHow};
use crate::pod_view::State;

type Failure = (Step, Vec<Action>, Error);

/// The refresh and update steps. A pod whose in-place state cannot be read is left out of both (pushed to
/// `skipped`) instead of stopping the step for every pod.
pub(crate) fn update(
    ctx: &Ctx<'_>,
    requeue: &mut Requeue,
    skipped: &mut Vec<SkippedPod>,
) -> Result<(Step, Vec<Action>), Failure> {
    let options = ctx.update_options();
    let mut actions = Vec::new();
    let mut refreshed: HashSet<usize> = HashSet::new();
    let mut modified = false;
    for facts in &ctx.facts.pods {
        let lifecycle_changing = matches!(
            facts.state,
            State::PreparingNormal | State::PreparingUpdate | State::Updating | State::Updated
        );
        // The whole pod is read only for the pods these steps may write to.
        let whole = (facts.has(NEEDS_REFRESH) || lifecycle_changing).then(|| ctx.pod(facts));
        let pod: &k8s_openapi::api::core::v1::Pod = whole.as_deref().unwrap_or(&ABSENT);
        if facts.has(NEEDS_REFRESH) {
            let outcome = match kruise_inplace::refresh(pod, ctx.now, &options) {
                Ok(outcome) => outcome,
                Err(error) => {
                    skipped.push(SkippedPod {
                        pod: facts.index,
                        error: error.into(),
                    });
                    continue;
                }
            };
            if let Some(after) = outcome.requeue_after {
                requeue.push(after);
            }
            if outcome.changed() {
                refreshed.insert(facts.index);
                actions.push(Action {
                    kind: ActionKind::RefreshInPlace {
                        pod: facts.index,
                        outcome: Box::new(outcome),
                    },
                    rule: Rule::InPlaceProgress,
                });
            }
        }
        if lifecycle_changing {
            let input = RefreshInput {
                update_completed: facts.state == State::Updating
                    && kruise_inplace::completion::is_completed(pod, &options),
                at_update_revision: facts.has(UPDATED),
            };
            let transition = ctx
                .workload
                .refresh(pod, input, ctx.input.now)
                .map_err(|error| (Step::Refresh, std::mem::take(&mut actions), error.into()))?;
            if !transition.is_noop() {
                modified = true;
                actions.push(Action {
                    kind: ActionKind::Lifecycle {
                        pod: facts.index,
                        transition,
                    },
                    rule: Rule::LifecycleRefresh,
                });
            }
        }
        if facts.has(NO_TEMPLATE_HASH) {
            modified = true;
            let revision = ctx.facts.revision(facts);
            actions.push(Action {
                kind: ActionKind::Specific(SpecificKind::FixPodTemplateHash {
                    pod: facts.index,
                    hash: kruise_api::pod::short_hash(revision).to_owned(),
                }),
                rule: Rule::MissingTemplateHash,
            });
        }
    }
    let step_so_far = if actions.is_empty() {
        Step::Idle
    } else {
        Step::Refresh
    };
    if modified || ctx.settings.on_delete || ctx.settings.paused {
        return Ok((step_so_far, actions));
    }

    let diff = diff::diff(
        &ctx.settings,
        &ctx.facts.pods,
        ctx.input.revisions.current == ctx.input.revisions.update,
        RevisionMatch::Hash,
    );
    if diff.update_num == 0 {
        return Ok((step_so_far, actions));
    }
    let target = if diff.update_num > 0 {
        Target::Update
    } else {
        Target::Current
    };
    let candidates: Vec<&PodFacts<'_>> = ctx
        .facts
        .pods
        .iter()
        .filter(|facts| {
            let waiting = facts.has(UPDATED) != (target == Target::Update);
            waiting
                && !refreshed.contains(&facts.index)
                && !skipped.iter().any(|skipped| skipped.pod == facts.index)
                && match facts.state {
                    State::PreparingDelete => false,
                    State::Updated => true,
                    _ => !facts.has(GRACE),
                }
        })
        .collect();

    // limitUpdateIndexes: at most |updateNum|, and no more than the budget allows.
    let target_flag = if target == Target::Update {
        UPDATED
    } else {
        CURRENT
    };
    let (mut unavailable, mut target_unavailable) = (0i64, 0i64);
    for facts in &ctx.facts.pods {
        if !facts.has(AVAILABLE) {
            unavailable += 1;
            if facts.has(target_flag) {
                target_unavailable += 1;
            }
        }
    }
    let wanted = diff.update_num.abs();
    let budget = diff
        .update_max_unavailable
        .saturating_sub(target_unavailable)
        .max(0);
    let k = usize::try_from(wanted.min(budget)).unwrap_or(0);
    let ordered = order::first(ctx, candidates, k);
    let mut chosen = Vec::with_capacity(ordered.len());
    for facts in ordered {
        let can_update = i64::try_from(chosen.len()).unwrap_or(i64::MAX);
        if target_unavailable + can_update >= diff.update_max_unavailable {
            break;
        }
        if facts.has(AVAILABLE) {
            if unavailable >= diff.update_max_unavailable {
                break;
            }
            unavailable += 1;
        }
        chosen.push(facts);
    }

    let mut updater = Updater::new(ctx, target, options);
    actions.reserve(chosen.len());
    for (position, facts) in chosen.into_iter().enumerate() {
        let rule = |how| Rule::Update {
            target,
            position: position + 1,
            wanted,
            max_unavailable: diff.update_max_unavailable,
            how,
        };
        if let Err(error) = updater.update_pod(facts, rule, &mut actions, requeue) {
            return Err((Step::Update, actions, error));
        }
    }
    let step = if actions.is_empty() {
        Step::Idle
    } else {
        Step::Update
    };
    Ok((step, actions))
}

/// Updates chosen pods, computing each revision pair's in-place spec once.
struct Updater<'c, 'a> {
    ctx: &'c Ctx<'a>,
    target: Target,
    options: UpdateOptions,
    target_data: Option<Value>,
    specs: HashMap<String, Result<Arc<UpdateSpec>, String>>,
    /// The spec of each pod revision id ([`super::facts::Facts::revisions`]) already looked up.
    by_revision: Vec<Option<Result<Arc<UpdateSpec>, String>>>,
    /// The "update now" lifecycle transition of each lifecycle state met so far: it depends only on the
    /// state and `now`, so the pods leaving one state share one.
    updating: Vec<(Option<LifecycleStateType>, Arc<Transition>)>,
}

impl<'c, 'a> Updater<'c, 'a> {
    fn new(ctx: &'c Ctx<'a>, target: Target, options: UpdateOptions) -> Self {
        Self {
            ctx,
            target,
            options,
            target_data: None,
            specs: HashMap::new(),
            by_revision: Vec::new(),
            updating: Vec::new(),
        }
    }

    fn target_name(&self) -> &'a str {
        match self.target {
            Target::Update => self.ctx.input.revisions.update,
            Target::Current => self.ctx.input.revisions.current,
        }
    }

    /// The in-place spec from the pod's revision to the target, or why the pod must be recreated.
    fn spec_for(&mut self, facts: &PodFacts<'a>) -> Result<Arc<UpdateSpec>, String> {
        let id = facts.revision as usize;
        if let Some(Some(spec)) = self.by_revision.get(id) {
            return spec.clone();
        }
        let spec = self.spec_of_revision(self.ctx.facts.revision(facts));
        if self.by_revision.len() <= id {
            self.by_revision.resize(id + 1, None);
        }
        if let Some(slot) = self.by_revision.get_mut(id) {
            *slot = Some(spec.clone());
        }
        spec
    }

    fn spec_of_revision(&mut self, revision: &str) -> Result<Arc<UpdateSpec>, String> {
        let revisions = self.ctx.input.revisions;
        let Some(old) = revisions
            .known
            .iter()
            .find(|known| kruise_api::pod::revision_matches(revision, known.name))
        else {
            return Err(format!(
                "the pod's revision {revision:?} is not among the known revisions"
            ));
        };
        if let Some(cached) = self.specs.get(old.name) {
            return cached.clone();
        }
        let target_name = self.target_name();
        let target = match revisions.get(target_name).filter(|r| r.data.is_some()) {
            Some(known) => Ok(*known),
            None if self.target == Target::Update => {
                if self.target_data.is_none() {
                    self.target_data = kruise_inplace::revision::template_data_value(
                        &self.ctx.input.cloneset.spec.template,
                    )
                    .ok();
                }
                self.target_data
                    .as_ref()
                    .map(|data| RevisionRef {
                        name: target_name,
                        data: Some(data),
                        annotations: None,
                    })
                    .ok_or_else(|| "the update revision's template is invalid".to_owned())
            }
            None => Err(format!("revision {target_name:?} has no data")),
        };
        let result = target.and_then(|target| {
            calculate_data(*old, target, &self.options)
                .map(Arc::new)
                .map_err(|reason| reason.to_string())
        });
        self.specs.insert(old.name.to_owned(), result.clone());
        result
    }

    /// The "update now" transition from `from`, built once per state.
    fn updating_transition(&mut self, from: Option<LifecycleStateType>) -> Arc<Transition> {
        if let Some((_, shared)) = self.updating.iter().find(|(state, _)| *state == from) {
            return Arc::clone(shared);
        }
        let transition = Arc::new(
            self.ctx
                .workload
                .updating_transition(from.clone(), self.ctx.input.now),
        );
        self.updating.push((from, Arc::clone(&transition)));
        transition
    }

    fn update_pod(
        &mut self,
        facts: &PodFacts<'a>,
        rule: impl Fn(UpdateHow) -> Rule,
        actions: &mut Vec<Action>,
        requeue: &mut Requeue,
    ) -> Result<(), Error> {
        let whole = self.ctx.pod(facts);
        let pod: &k8s_openapi::api::core::v1::Pod = &whole;
        let policy = &self.ctx.settings.policy;
        let in_place = matches!(
            policy,
            CloneSetPodUpdatePolicy::InPlaceIfPossible | CloneSetPodUpdatePolicy::InPlaceOnly
        );
        let mut how = UpdateHow::RecreatePolicy;
        if in_place {
            match self.spec_for(facts) {
                Ok(spec) => {
                    let current = facts
                        .state
                        .lifecycle()
                        .unwrap_or_else(|| kruise_lifecycle::state::state(pod));
                    let gate = self.ctx.workload.update_gate_in(
                        pod,
                        current.clone(),
                        self.ctx.input.now,
                    )?;
                    match gate {
                        UpdateGate::Hold(transition) => {
                            if !transition.is_noop() {
                                actions.push(Action {
                                    kind: ActionKind::Lifecycle {
                                        pod: facts.index,
                                        transition,
                                    },
                                    rule: rule(UpdateHow::InPlace),
                                });
                            }
                        }
                        UpdateGate::Proceed => {
                            let lifecycle = self.updating_transition(current);
                            if self.options.grace_period_seconds > 0 {
                                requeue.push(Duration::from_secs(
                                    u64::try_from(self.options.grace_period_seconds).unwrap_or(0),
                                ));
                            }
                            actions.push(Action {
                                kind: ActionKind::UpdateInPlace {
                                    pod: facts.index,
                                    spec,
                                    lifecycle: Some(lifecycle),
                                },
                                rule: rule(UpdateHow::InPlace),
                            });
                        }
                    }
                    return Ok(());
                }
                Err(reason) => {
                    if *policy == CloneSetPodUpdatePolicy::InPlaceOnly {
                        return Err(Error::InPlaceOnly {
                            pod: kruise_lifecycle::PodName::of(pod).0,
                            reason,
                        });
                    }
                    how = UpdateHow::RecreateRequired(reason);
                }
            }
        }
        if kruise_api::pod::label(pod, keys::cloneset::SPECIFIED_DELETE_LABEL) != Some("true") {
            actions.push(Action {
                kind: ActionKind::Specific(SpecificKind::MarkSpecifiedDelete { pod: facts.index }),
                rule: rule(how),
            });
        }
        Ok(())
    }
}
