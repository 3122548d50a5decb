//! One reconcile of a CloneSet, as upstream's `syncCloneSet` takes it: the scale step first; if it changes
//! nothing, the refresh and update steps; the status in any case.

use std::borrow::Cow;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::apps::v1beta1::{CloneSetPodUpdatePolicy, CloneSetStatus};
use kruise_inplace::{RevisionLabels, UpdateOptions};
use kruise_lifecycle::Workload;

use super::action::{Action, ActionKind, SpecificKind};
use super::create;
use super::diff::{self, Diff, RevisionMatch};
use super::error::Error;
use super::facts::{self, Facts, PodFacts};
use super::input::PlanInput;
use super::invalid::InvalidValue;
use super::pod_source::{Loader, NoPods, WholePod};
use super::settings::Settings;
use super::{scale, status, update};

/// Which step of the reconcile produced the actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Nothing to do.
    Idle,
    /// The scale step (creations, deletions, `PreparingDelete` changes).
    Scale,
    /// The refresh at the start of the update step (lifecycle and in-place progress, `pod-template-hash`).
    Refresh,
    /// The update step.
    Update,
}

impl Step {
    /// `idle`, `scale`, `refresh` or `update`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Scale => "scale",
            Self::Refresh => "refresh",
            Self::Update => "update",
        }
    }
}

/// The next step of a CloneSet: what to write and when to look again.
#[derive(Debug)]
pub struct Plan {
    /// The diff as the scale step computes it (with `PreparingUpdateAsUpdate`'s revision match).
    pub diff: Diff,
    /// The step that acted.
    pub step: Step,
    /// What to do, in order.
    pub actions: Vec<Action>,
    /// The status to write.
    pub status: CloneSetStatus,
    /// When to reconcile again even if nothing changes (grace periods, `minReadySeconds`, the progress
    /// deadline).
    pub requeue_after: Option<Duration>,
    /// The options to render in-place updates with (`ActionKind::in_place_outcome`).
    pub update_options: UpdateOptions,
    /// Spec values upstream's validation would refuse or its controller cannot parse, with how the plan read
    /// each (sorted by field). When one of them holds the plan ([`crate::cloneset::Reading::Hold`]) the
    /// plan has no actions; the status carries the `InvalidSpec` condition while any is left.
    pub invalid: Vec<InvalidValue>,
    /// Where the step stopped with upstream's reconcile error; the actions before it stand, and the status
    /// carries a `FailedScale` / `FailedUpdate` condition.
    pub stopped: Option<Error>,
    /// Pods left out of the refresh and update steps because something they carry cannot be read (a
    /// malformed in-place update state annotation): the other pods go on (upstream stops the whole CloneSet's
    /// update at such a pod). A controller reports each, for example as a Warning Event.
    pub skipped: Vec<SkippedPod>,
    /// For a plan from a cache: the pods (by index) whose whole pod a step needed and the
    /// [`super::PodSource`] no longer held at the cached `resourceVersion` (they changed since the cache
    /// read them). When any is listed the plan has no actions: bring the cache up to date and plan again.
    pub unavailable: Vec<usize>,
}

/// A pod the plan left out, and why.
#[derive(Debug)]
pub struct SkippedPod {
    /// The pod's index in the planned pods.
    pub pod: usize,
    /// What could not be read.
    pub error: Error,
}

impl Plan {
    /// What a controller must see before planning again: names of pods and claims to be created, names to
    /// be deleted, and pods whose next write must be observed. `pods` are the pods the plan's indexes refer
    /// to (`PlanInput::pods`, or `PodFactsCache::pods`).
    #[must_use]
    pub fn expectations<P: std::borrow::Borrow<Pod>>(&self, pods: &[P]) -> Expectations {
        let mut expectations = Expectations::default();
        for action in &self.actions {
            let name = action.object_name(pods, &[]).to_owned();
            match &action.kind {
                ActionKind::CreatePod { .. } | ActionKind::CreateClaim { .. } => {
                    expectations.creations.push(name);
                }
                ActionKind::DeletePod { .. } => expectations.deletions.push(name),
                ActionKind::Specific(SpecificKind::DeleteClaim { .. }) => {}
                _ => {
                    if !expectations.updates.contains(&name) {
                        expectations.updates.push(name);
                    }
                }
            }
        }
        expectations
    }
}

/// Upstream's scale and resource-version expectations, as names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expectations {
    /// Pods and claims that must appear.
    pub creations: Vec<String>,
    /// Pods that must disappear.
    pub deletions: Vec<String>,
    /// Pods whose update must be observed (a newer resourceVersion).
    pub updates: Vec<String>,
}

/// What every step reads.
pub(crate) struct Ctx<'a> {
    pub(crate) input: &'a PlanInput<'a>,
    pub(crate) settings: Settings<'a>,
    pub(crate) facts: Facts<'a>,
    pub(crate) workload: Workload<'a>,
    pub(crate) now: Timestamp,
    /// Reads the whole pods of a plan from a cache.
    pub(crate) loader: &'a Loader<'a>,
}

impl<'a> Ctx<'a> {
    /// The whole pod: an input pod, or for a plan from a cache the pod its source holds at the cached
    /// version.
    pub(crate) fn pod(&self, facts: &PodFacts<'a>) -> WholePod<'a> {
        match facts.pod {
            Some(pod) => WholePod::Borrowed(pod),
            None => self.loader.load(facts.index),
        }
    }

    pub(crate) fn active_len(&self) -> i64 {
        i64::try_from(self.facts.pods.len()).unwrap_or(i64::MAX)
    }

    pub(crate) fn sort_by_name(&self, pods: &mut [&PodFacts<'a>]) {
        pods.sort_by(|a, b| {
            self.facts
                .name(a)
                .cmp(self.facts.name(b))
                .then(a.index.cmp(&b.index))
        });
    }

    pub(crate) fn revision_labels(&self) -> RevisionLabels {
        RevisionLabels::CloneSet {
            short_hash: self.input.options.short_hash,
        }
    }

    /// The in-place options of this CloneSet (upstream `GetUpdateOptions`).
    pub(crate) fn update_options(&self) -> UpdateOptions {
        let rolling = self.settings.rolling;
        UpdateOptions {
            gates: self.input.options.in_place,
            ignore_volume_claim_templates_hash_diff: self.settings.policy
                == CloneSetPodUpdatePolicy::InPlaceOnly,
            grace_period_seconds: rolling
                .and_then(|r| r.in_place_update_strategy.as_ref())
                .map_or(0, |s| s.grace_period_seconds),
            revision: None,
            revision_labels: self.revision_labels(),
            resize_subresource: true,
        }
    }

    /// The pod template of the current revision (the CloneSet's own when both revisions are the same).
    pub(crate) fn current_template(&self) -> Result<Cow<'a, PodTemplateSpec>, Error> {
        let revisions = &self.input.revisions;
        let cloneset = self.input.cloneset;
        if revisions.current == revisions.update {
            return Ok(Cow::Borrowed(&cloneset.spec.template));
        }
        let missing = || Error::MissingRevision {
            cloneset: create::key(cloneset),
            revision: revisions.current.to_owned(),
        };
        let data = revisions
            .get(revisions.current)
            .and_then(|r| r.data)
            .ok_or_else(missing)?;
        let template = data
            .get("spec")
            .and_then(|spec| spec.get("template"))
            .ok_or_else(missing)?;
        serde_json::from_value(template.clone())
            .map(Cow::Owned)
            .map_err(|error| Error::InvalidRevision {
                cloneset: create::key(cloneset),
                revision: revisions.current.to_owned(),
                reason: error.to_string(),
            })
    }
}

/// Plans one reconcile of `input.cloneset`, taking new instance ids from `input.ids`.
///
/// See the [module documentation](super) for an example.
#[must_use]
pub fn plan(input: &PlanInput<'_>) -> Plan {
    let loader = match input.cache {
        Some((cache, source)) => Loader::new(Some(cache), source),
        None => Loader::new(None, &NoPods),
    };
    let mut plan = plan_with(input, &loader);
    plan.unavailable = loader.missing();
    if !plan.unavailable.is_empty() {
        plan.actions.clear();
        plan.skipped.clear();
        plan.stopped = None;
        plan.step = Step::Idle;
    }
    plan
}

/// [`plan`], reading the whole pods of a plan from a cache with `loader`.
fn plan_with<'a>(input: &'a PlanInput<'a>, loader: &'a Loader<'a>) -> Plan {
    let settings = Settings::of(input.cloneset, input.options);
    let now = input.now.timestamp();
    let (current, update) = (input.revisions.current, input.revisions.update);
    let facts = match input.cache {
        Some((cache, _)) => cache.facts(&settings, (current, update), now, loader),
        None => facts::collect(input.pods, &settings, current, update, now),
    };
    let workload = Workload::cloneset(input.cloneset.spec.lifecycle.as_ref())
        .with_options(input.options.lifecycle.clone());
    let ctx = Ctx {
        input,
        settings,
        facts,
        workload,
        now,
        loader,
    };
    let same = input.revisions.current == input.revisions.update;
    let scale_diff = diff::diff(
        &ctx.settings,
        &ctx.facts.pods,
        same,
        RevisionMatch::IsPodUpdate,
    );
    let mut requeue = Requeue::default();
    let mut skipped = Vec::new();
    let (step, actions, failure) = if ctx.settings.held {
        // A spec value with no safe reading (negative replicas, an invalid partition): act on nothing.
        (Step::Idle, Vec::new(), None)
    } else {
        match scale::scale(&ctx, &scale_diff) {
            Ok(Some(actions)) => (Step::Scale, actions, None),
            Err(error) => (Step::Scale, Vec::new(), Some((status::FAILED_SCALE, error))),
            Ok(None) => match update::update(&ctx, &mut requeue, &mut skipped) {
                Ok((step, actions)) => (step, actions, None),
                Err((step, actions, error)) => {
                    (step, actions, Some((status::FAILED_UPDATE, error)))
                }
            },
        }
    };
    let (status, progress_requeue) =
        status::status(&ctx, failure.as_ref().map(|(t, e)| (t.clone(), e)));
    if let Some(after) = progress_requeue {
        requeue.push(after);
    }
    if let Some(at) = ctx.facts.next_available {
        requeue.push_until(at, now);
    }
    Plan {
        diff: scale_diff,
        step: if actions.is_empty() && failure.is_none() {
            Step::Idle
        } else {
            step
        },
        actions,
        status,
        requeue_after: requeue.0,
        update_options: ctx.update_options(),
        invalid: ctx.settings.invalid.clone(),
        stopped: failure.map(|(_, error)| error),
        skipped,
        unavailable: Vec::new(),
    }
}

/// The shortest of the requeue durations pushed (upstream `DurationStore`).
#[derive(Default)]
pub(crate) struct Requeue(Option<Duration>);

impl Requeue {
    pub(crate) fn push(&mut self, after: Duration) {
        if after.is_zero() {
            return;
        }
        self.0 = Some(self.0.map_or(after, |current| current.min(after)));
    }

    fn push_until(&mut self, at: Timestamp, now: Timestamp) {
        let wait: SignedDuration = at.duration_since(now);
        if let Ok(wait) = Duration::try_from(wait) {
            self.push(wait);
        }
    }
}
