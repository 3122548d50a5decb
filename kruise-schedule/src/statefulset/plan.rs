//! One reconcile of an Advanced StatefulSet, as upstream's `updateStatefulSet` takes it: split the pods into
//! slots and condemned pods, walk the slots (create, recreate finished pods, wait in `OrderedReady`), delete
//! condemned pods, then the rolling update; the status in any case.

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod, PodTemplateSpec};
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{
    PodManagementPolicy, StatefulSet, StatefulSetStatus, StatefulSetUpdateStrategyType,
};
use kruise_inplace::{RevisionLabels, UpdateOptions};
use kruise_lifecycle::Workload;

use super::action::Action;
use super::create::{self, key};
use super::error::Error;
use super::health::Health;
use super::input::PlanInput;
use super::ordinals::{InvalidReserveOrdinal, OrdinalRange, ReservedOrdinals, ordinal_of};
use super::pass::Pass;
use super::volume_claims::ClaimTemplates;
use super::wait::Wait;
use super::{scale, status, update};
use crate::planning::Target;
use crate::pod_view;

/// The next step of an Advanced StatefulSet: what to write and when to look again.
#[derive(Debug)]
pub struct Plan {
    /// What to do, in order.
    pub actions: Vec<Action>,
    /// The status to write.
    pub status: StatefulSetStatus,
    /// When to reconcile again even if nothing changes (`minReadySeconds`, in-place grace periods).
    pub requeue_after: Option<Duration>,
    /// Where the pass stopped before doing all it could, and what it waits for.
    pub waiting: Option<Wait>,
    /// Where the pass stopped with upstream's reconcile error; the actions before it stand.
    pub stopped: Option<Error>,
    /// The kept ordinals (start, end, reserved).
    pub range: OrdinalRange,
    /// The `spec.reserveOrdinals` entry that made upstream reserve nothing, if any.
    pub invalid_reserve_ordinal: Option<InvalidReserveOrdinal>,
    /// The options to render in-place updates with (`ActionKind::in_place_outcome`).
    pub update_options: UpdateOptions,
}

/// What occupies a slot.
#[derive(Clone, Debug)]
pub(crate) enum Occupant {
    /// An existing pod (index into the input pods).
    Pod(usize),
    /// A pod to create, at this revision.
    New { pod: Box<Pod>, revision: Target },
}

/// A kept ordinal and its pod.
#[derive(Clone, Debug)]
pub(crate) struct Slot {
    pub(crate) ordinal: i64,
    /// `ordinal - start`: what the partition is compared with.
    pub(crate) index: i64,
    pub(crate) occupant: Occupant,
}

/// What every step reads.
pub(crate) struct Ctx<'a> {
    pub(crate) input: &'a PlanInput<'a>,
    pub(crate) set: &'a StatefulSet,
    pub(crate) key: String,
    pub(crate) range: OrdinalRange,
    pub(crate) workload: Workload<'a>,
    pub(crate) now: Timestamp,
    pub(crate) monotonic: bool,
    pub(crate) update_options: UpdateOptions,
    pub(crate) health: Vec<Health>,
    claims: HashMap<&'a str, usize>,
    /// The volume claim templates with their parsed storage requests.
    pub(crate) claim_templates: ClaimTemplates<'a>,
}

impl<'a> Ctx<'a> {
    /// The input claim named `name` and its index.
    pub(crate) fn claim(&self, name: &str) -> Option<(usize, &'a PersistentVolumeClaim)> {
        let index = *self.claims.get(name)?;
        self.input.claims.get(index).map(|claim| (index, claim))
    }

    /// The health of input pod `index`.
    pub(crate) fn health(&self, index: usize) -> Health {
        self.health
            .get(index)
            .copied()
            .unwrap_or_else(Health::new_pod)
    }

    pub(crate) fn pod(&self, index: usize) -> Option<&'a Pod> {
        self.input.pods.get(index)
    }

    /// The pod in a slot (existing or about to be created).
    pub(crate) fn occupant_pod<'s>(&'s self, occupant: &'s Occupant) -> Option<&'s Pod> {
        match occupant {
            Occupant::Pod(index) => self.pod(*index),
            Occupant::New { pod, .. } => Some(pod),
        }
    }

    /// `updateStrategy.type` is `RollingUpdate` (the default).
    pub(crate) fn rolling_type(&self) -> bool {
        self.set
            .spec
            .update_strategy
            .type_
            .as_ref()
            .is_none_or(|t| *t == StatefulSetUpdateStrategyType::RollingUpdate)
    }

    /// The pod template of a revision: the update revision's is the StatefulSet's own unless its data is
    /// given; the current revision's comes from its data (the StatefulSet's own when both are the same).
    fn template(&self, target: Target) -> Result<Cow<'a, PodTemplateSpec>, Error> {
        let revisions = &self.input.revisions;
        let name = match target {
            Target::Current => revisions.current,
            Target::Update => revisions.update,
        };
        let data = revisions.get(name).and_then(|r| r.data);
        let own = target == Target::Update || revisions.current == revisions.update;
        let Some(data) = data else {
            return if own {
                Ok(Cow::Borrowed(&self.set.spec.template))
            } else {
                Err(Error::MissingRevision {
                    set: self.key.clone(),
                    revision: name.to_owned(),
                })
            };
        };
        let template = data
            .get("spec")
            .and_then(|spec| spec.get("template"))
            .ok_or_else(|| Error::InvalidRevision {
                set: self.key.clone(),
                revision: name.to_owned(),
                reason: "missing".to_owned(),
            })?;
        serde_json::from_value(template.clone())
            .map(Cow::Owned)
            .map_err(|error| Error::InvalidRevision {
                set: self.key.clone(),
                revision: name.to_owned(),
                reason: error.to_string(),
            })
    }
}

/// Plans one reconcile of `input.set`.
///
/// See the [module documentation](super) for an example.
#[must_use]
pub fn plan(input: &PlanInput<'_>) -> Plan {
    let set = input.set;
    let spec = &set.spec;
    let (reserved, invalid_reserve_ordinal) = ReservedOrdinals::of(&spec.reserve_ordinals);
    let start = if input.options.start_ordinal {
        spec.ordinals.as_ref().map_or(0, |o| i64::from(o.start))
    } else {
        0
    };
    let range = OrdinalRange::new(start, i64::from(spec.replicas.unwrap_or(1)), reserved);
    let now = input.now.timestamp();
    let min_ready_seconds = spec
        .update_strategy
        .rolling_update
        .as_ref()
        .and_then(|r| r.min_ready_seconds)
        .unwrap_or(0);
    let grace = spec
        .update_strategy
        .rolling_update
        .as_ref()
        .and_then(|r| r.in_place_update_strategy.as_ref())
        .map_or(0, |s| s.grace_period_seconds);
    let update_options = UpdateOptions {
        gates: input.options.in_place,
        grace_period_seconds: grace,
        revision_labels: RevisionLabels::Exact,
        ..UpdateOptions::default()
    };
    let ctx = Ctx {
        input,
        set,
        key: key(set),
        range,
        workload: Workload::stateful_set(spec.lifecycle.as_ref())
            .with_options(input.options.lifecycle.clone()),
        now,
        monotonic: spec.pod_management_policy.as_ref() != Some(&PodManagementPolicy::Parallel),
        update_options,
        health: input
            .pods
            .iter()
            .map(|pod| Health::of(pod, min_ready_seconds, now))
            .collect(),
        claims: input
            .claims
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.metadata.name.as_deref().map(|n| (n, i)))
            .collect(),
        claim_templates: ClaimTemplates::of(set),
    };
    let mut pass = Pass::default();
    let (split, stopped) = run(&ctx, &mut pass);
    let status = match (&split, &stopped) {
        (None, Some(Error::InvalidSelector { .. })) => set.status.clone().unwrap_or_default(),
        (None, _) => status::status(&ctx, Counted::AllPods, &pass),
        (Some((slots, condemned)), _) => {
            status::status(&ctx, Counted::Split(slots, condemned), &pass)
        }
    };
    Plan {
        actions: pass.actions,
        status,
        requeue_after: pass.requeue.0,
        waiting: pass.waiting,
        stopped,
        range: ctx.range.clone(),
        invalid_reserve_ordinal,
        update_options: ctx.update_options.clone(),
    }
}

/// Which pods the status counts.
#[derive(Clone, Copy)]
pub(crate) enum Counted<'s> {
    /// Every input pod (upstream's first count, kept when the pass stops before splitting the pods).
    AllPods,
    /// The slots and the condemned pods.
    Split(&'s [Slot], &'s [usize]),
}

type Split = (Vec<Slot>, Vec<usize>);

/// The pass: the slots and condemned pods once split (`None` when it stopped before), and the error it
/// stopped with.
fn run(ctx: &Ctx<'_>, pass: &mut Pass) -> (Option<Split>, Option<Error>) {
    if let Err(error) = kruise_api::label_selector::validate(&ctx.set.spec.selector) {
        let error = Error::InvalidSelector {
            set: ctx.key.clone(),
            reason: error.to_string(),
        };
        return (None, Some(error));
    }
    let (slots, condemned) = match split(ctx) {
        Ok(split) => split,
        Err(error) => return (None, Some(error)),
    };
    if ctx.set.metadata.deletion_timestamp.is_some() {
        pass.wait(Wait::Deleting);
        return (Some((slots, condemned)), None);
    }
    let error = steps(ctx, pass, &slots, &condemned).err();
    (Some((slots, condemned)), error)
}

fn steps(ctx: &Ctx<'_>, pass: &mut Pass, slots: &[Slot], condemned: &[usize]) -> Result<(), Error> {
    if scale::scale(ctx, pass, slots, condemned)? == scale::Flow::Exit {
        return Ok(());
    }
    if !ctx.rolling_type() {
        pass.wait(Wait::OnDelete);
        return Ok(());
    }
    update::rolling_update(ctx, pass, slots)
}

/// Splits the pods into the slots of the kept ordinals (a later pod with the same ordinal wins, as
/// upstream) and the condemned pods (descending ordinal); pods without an ordinal are ignored. Empty slots
/// get new pods at the revision upstream's `isCurrentRevisionNeeded` picks.
fn split(ctx: &Ctx<'_>) -> Result<(Vec<Slot>, Vec<usize>), Error> {
    let ordinals: Vec<i64> = ctx.range.ordinals().collect();
    let mut occupied: Vec<Option<usize>> = vec![None; ordinals.len()];
    let mut condemned: Vec<(i64, usize)> = Vec::new();
    for (index, pod) in ctx.input.pods.iter().enumerate() {
        let Some(ordinal) = ordinal_of(pod_view::name(pod)).map(i64::from) else {
            continue;
        };
        if ctx.range.contains(ordinal) {
            if let Ok(position) = ordinals.binary_search(&ordinal)
                && let Some(slot) = occupied.get_mut(position)
            {
                *slot = Some(index);
            }
        } else {
            condemned.push((ordinal, index));
        }
    }
    condemned.sort_by(|a, b| {
        b.0.cmp(&a.0).then_with(|| {
            let name = |i: usize| ctx.pod(i).map_or("", pod_view::name);
            name(a.1).cmp(name(b.1))
        })
    });

    let set = ctx.set;
    let rolling = set.spec.update_strategy.rolling_update.as_ref();
    let revisions = ctx.input.revisions;
    let current_replicas = i64::from(set.status.as_ref().map_or(0, |s| s.current_replicas));
    let partition = i64::from(rolling.and_then(|r| r.partition).unwrap_or(0));
    let mut templates: [Option<Cow<'_, PodTemplateSpec>>; 2] = [None, None];
    let mut slots = Vec::with_capacity(ordinals.len());
    let mut not_updated = occupied
        .iter()
        .flatten()
        .filter_map(|&i| ctx.pod(i))
        .filter(|pod| !is_pod_update(ctx, pod))
        .count();
    for (position, (&ordinal, pod)) in ordinals.iter().zip(&occupied).enumerate() {
        let index = ordinal - ctx.range.start();
        if let Some(pod) = pod {
            slots.push(Slot {
                ordinal,
                index,
                occupant: Occupant::Pod(*pod),
            });
            continue;
        }
        // upstream isCurrentRevisionNeeded
        let current = if !ctx.rolling_type() {
            false
        } else {
            match rolling {
                None => ordinal < ctx.range.start() + current_replicas,
                Some(r) if r.unordered_update.is_none() => {
                    i64::try_from(position).unwrap_or(i64::MAX) < partition
                }
                Some(_) => i64::try_from(not_updated).unwrap_or(i64::MAX) < partition,
            }
        };
        let target = if current {
            Target::Current
        } else {
            Target::Update
        };
        let which = usize::from(target == Target::Update);
        let template = match templates.get_mut(which) {
            Some(Some(template)) => template,
            Some(slot) => slot.insert(ctx.template(target)?),
            None => continue,
        };
        let revision = match target {
            Target::Current => revisions.current,
            Target::Update => revisions.update,
        };
        let mut pod = create::new_pod(
            set,
            template,
            revision,
            ordinal,
            ctx.input.options.pod_index_label,
        );
        ctx.workload
            .created(&pod, ctx.input.now)
            .change
            .apply_to(&mut pod);
        if !is_pod_update(ctx, &pod) {
            not_updated += 1;
        }
        slots.push(Slot {
            ordinal,
            index,
            occupant: Occupant::New {
                pod: Box::new(pod),
                revision: target,
            },
        });
    }
    Ok((slots, condemned.into_iter().map(|(_, i)| i).collect()))
}

/// Upstream `revision.IsPodUpdate`: the revision label denotes the update revision (short hashes match), or
/// with `PreparingUpdateAsUpdate` the pod is `PreparingUpdate`.
pub(crate) fn is_pod_update(ctx: &Ctx<'_>, pod: &Pod) -> bool {
    (ctx.input.options.preparing_update_as_update
        && pod_view::State::of(pod) == pod_view::State::PreparingUpdate)
        || pod_view::cloneset_revision_matches(pod, ctx.input.revisions.update)
}
