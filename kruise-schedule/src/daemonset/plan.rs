//! One reconcile of an Advanced DaemonSet, as upstream's `syncDaemonSet` takes it: manage (create and
//! delete pods per node); if that wrote anything, stop there; otherwise refresh in-place updates and, unless
//! paused or `OnDelete`, run the rolling update. The status in any case.

use std::time::Duration;

use k8s_openapi::api::core::v1::PodSpec;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::DaemonSetStatus;
use kruise_inplace::UpdateOptions;
use kruise_lifecycle::Workload;

use super::action::{Action, ActionKind, Rule};
use super::create::PodTemplate;
use super::error::Error;
use super::facts::Facts;
use super::in_place::update_options;
use super::input::PlanInput;
use super::node_fit::DaemonPodFit;
use super::settings::{Budgets, Settings};
use super::update_order::{NodeClass, update_order};
use super::{manage, rolling, status};

/// Which step of the reconcile produced the actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Nothing to do.
    Idle,
    /// Pods created or deleted so that every node that should run the pod runs exactly one.
    Manage,
    /// In-place updates moved on; nothing else to do.
    Refresh,
    /// The rolling update.
    Update,
}

impl Step {
    /// `idle`, `manage`, `refresh` or `update`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Manage => "manage",
            Self::Refresh => "refresh",
            Self::Update => "update",
        }
    }
}

/// The next step of an Advanced DaemonSet: what to write and when to look again.
#[derive(Debug)]
pub struct Plan {
    /// The step that acted.
    pub step: Step,
    /// What to do, in order.
    pub actions: Vec<Action>,
    /// The status to write. `observedGeneration` moves to the DaemonSet's generation only when the manage
    /// step had nothing to do and no step stopped (upstream writes no status at all when a step fails).
    pub status: DaemonSetStatus,
    /// When to reconcile again even if nothing changes (`minReadySeconds`, in-place progress).
    pub requeue_after: Option<Duration>,
    /// The rolling update's numbers (`None` when the rolling update did not run or its values are invalid).
    pub budgets: Option<Budgets>,
    /// The nodes the rolling update may touch, in order, with their class (empty when it did not run).
    pub update_order: Vec<(String, NodeClass)>,
    /// The options to render in-place updates with (`ActionKind::in_place_outcome`).
    pub update_options: UpdateOptions,
    /// Where the plan stopped with upstream's reconcile error; the actions before it stand.
    pub stopped: Option<Error>,
}

/// What every step reads.
pub(crate) struct Ctx<'a> {
    pub(crate) input: &'a PlanInput<'a>,
    pub(crate) settings: Settings<'a>,
    pub(crate) facts: Facts<'a>,
    pub(crate) workload: Workload<'a>,
    pub(crate) template: PodTemplate,
    pub(crate) now: Timestamp,
}

/// Plans one reconcile of `input.daemonset`.
///
/// See the [module documentation](super) for an example.
#[must_use]
pub fn plan(input: &PlanInput<'_>) -> Plan {
    let daemonset = input.daemonset;
    let settings = Settings::of(daemonset);
    let empty_spec = PodSpec::default();
    let fit = DaemonPodFit::new(daemonset.spec.template.spec.as_ref().unwrap_or(&empty_spec));
    let now = input.now.timestamp();
    let facts = Facts::collect(
        input.pods,
        input.nodes,
        &settings,
        input.revisions.update_hash,
        &fit,
        now,
    );
    let template = PodTemplate::new(
        &settings,
        input.revisions.update_hash,
        fit.tolerations().to_vec(),
    );
    let ctx = Ctx {
        input,
        settings,
        facts,
        workload: Workload::daemon_set(daemonset.spec.lifecycle.as_ref()),
        template,
        now,
    };
    let mut requeue = Requeue::default();
    let (mut status, status_requeue) = status::status(&ctx);
    if let Some(after) = status_requeue {
        requeue.push(after);
    }
    let mut plan = Plan {
        step: Step::Idle,
        actions: Vec::new(),
        status: DaemonSetStatus::default(),
        requeue_after: None,
        budgets: None,
        update_order: Vec::new(),
        update_options: update_options(&ctx),
        stopped: None,
    };
    let outcome = run(&ctx, &mut plan, &mut requeue);
    match outcome {
        Ok(complete) => {
            if complete {
                status.observed_generation = daemonset.metadata.generation.unwrap_or(0);
            }
        }
        Err(error) => plan.stopped = Some(error),
    }
    plan.status = status;
    plan.requeue_after = requeue.0;
    plan
}

/// The steps; `Ok(true)` when the pass reached its end (the manage step wrote nothing).
fn run(ctx: &Ctx<'_>, plan: &mut Plan, requeue: &mut Requeue) -> Result<bool, Error> {
    plan.step = Step::Manage;
    let managed = manage::manage(ctx, requeue)?;
    if !managed.is_empty() {
        plan.actions = managed;
        return Ok(false);
    }
    plan.step = Step::Refresh;
    refresh(ctx, plan, requeue)?;
    let settings = &ctx.settings;
    if settings.paused || !settings.rolling_type {
        if plan.actions.is_empty() {
            plan.step = Step::Idle;
        }
        return Ok(true);
    }
    let budgets = settings.budgets(ctx.facts.desired)?;
    plan.budgets = Some(budgets);
    let order = update_order(ctx, budgets.partition)?;
    plan.update_order = order
        .iter()
        .map(|(name, class)| ((*name).to_owned(), *class))
        .collect();
    let updates = rolling::rolling_update(ctx, &budgets, &order, requeue)?;
    if !updates.is_empty() {
        plan.step = Step::Update;
    } else if plan.actions.is_empty() {
        plan.step = Step::Idle;
    }
    plan.actions.extend(updates);
    Ok(true)
}

/// In-place progress of every pod (upstream `refreshUpdateStates`).
fn refresh(ctx: &Ctx<'_>, plan: &mut Plan, requeue: &mut Requeue) -> Result<(), Error> {
    let options = &plan.update_options;
    for facts in ctx.facts.pods.iter().filter(|f| f.needs_refresh) {
        let outcome = kruise_inplace::refresh(facts.pod, ctx.now, options)?;
        if let Some(after) = outcome.requeue_after {
            requeue.push(after);
        }
        if outcome.changed() {
            plan.actions.push(Action {
                kind: ActionKind::RefreshInPlace {
                    pod: facts.index,
                    outcome: Box::new(outcome),
                },
                rule: Rule::InPlaceProgress,
            });
        }
    }
    Ok(())
}

/// The shortest of the requeue durations pushed (upstream's duration store); zero is ignored.
#[derive(Default)]
pub(crate) struct Requeue(Option<Duration>);

impl Requeue {
    pub(crate) fn push(&mut self, after: Duration) {
        if after.is_zero() {
            return;
        }
        self.0 = Some(self.0.map_or(after, |current| current.min(after)));
    }
}
