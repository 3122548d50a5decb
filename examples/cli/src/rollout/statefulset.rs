//! `kruise rollout plan` for an Advanced StatefulSet (`apps.kruise.io` StatefulSet): what its controller
//! would do next, from the StatefulSet, its pods, claims and ControllerRevisions.
//!
//! Revisions as for CloneSets: `status.currentRevision` / `status.updateRevision` unless the flags give
//! them; without either, the update revision is computed from the template as the controller names it
//! (`<name>-<hash>`), and the current revision is the update revision. Creating a pod at a current revision
//! other than the update revision needs that revision's ControllerRevision in `--pods`.

use std::io::Write;

use k8s_openapi::jiff::{Timestamp, tz::TimeZone};
use kruise_api::apps::v1beta1::StatefulSet;
use kruise_schedule::statefulset::{Options, Plan, PlanInput, Revisions, plan};
use serde_json::{Value, json};

use super::owned::Owned;
use super::planned_action::ActionObjects;
use super::template_revision::{chosen_revisions, revision_refs, workload_key};
use super::{PlanArgs, PlanFormat, write_json};
use crate::CliError;

/// Plans `set` over `owned` at `now` and prints the plan.
///
/// # Errors
/// Invalid input (exit code 2) or failing output.
pub(super) fn plan_statefulset(
    args: &PlanArgs,
    set: &StatefulSet,
    owned: &Owned,
    now: Timestamp,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let options = Options::default()
        .with_feature_gates(&args.feature_gates)
        .map_err(|error| CliError::Invalid(format!("--feature-gates: {error}")))?;
    let status = set.status.clone().unwrap_or_default();
    let (current, update) = chosen_revisions(
        args,
        (&status.current_revision, &status.update_revision),
        set.metadata.name.as_deref().unwrap_or(""),
        &set.spec.template,
        status.collision_count.unwrap_or(0),
    )?;
    let known = revision_refs(&owned.revisions);
    let zoned = now.to_zoned(TimeZone::UTC);
    let revisions = Revisions::named(&current, &update).with_known(&known);
    let input =
        PlanInput::new(set, &owned.pods, revisions, &zoned, &options).with_claims(&owned.claims);
    let result = plan(&input);
    let view = StatefulSetPlanView {
        key: workload_key(&set.metadata),
        objects: ActionObjects {
            pods: &owned.pods,
            claims: &owned.claims,
        },
        plan: &result,
    };
    match args.output {
        PlanFormat::Json => write_json(out, &view.json())?,
        PlanFormat::Text => view.write_text(out)?,
    }
    Ok(())
}

/// A StatefulSet plan with what it needs to name things.
struct StatefulSetPlanView<'a> {
    key: String,
    objects: ActionObjects<'a>,
    plan: &'a Plan,
}

impl StatefulSetPlanView<'_> {
    fn ordinals(&self) -> Vec<i64> {
        self.plan.range.ordinals().collect()
    }

    fn json(&self) -> Value {
        let plan = self.plan;
        json!({
            "statefulset": self.key,
            "ordinals": self.ordinals(),
            "actions": plan.actions.iter().map(|a| self.objects.json(a)).collect::<Vec<_>>(),
            "waiting": plan.waiting.as_ref().map(ToString::to_string),
            "status": plan.status,
            "requeueAfterSeconds": plan.requeue_after.map(|d| d.as_secs_f64()),
            "invalid": plan.invalid_reserve_ordinal.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "error": plan.stopped.as_ref().map(ToString::to_string),
        })
    }

    fn write_text(&self, out: &mut impl Write) -> std::io::Result<()> {
        let plan = self.plan;
        let ordinals: Vec<String> = self.ordinals().iter().map(ToString::to_string).collect();
        writeln!(
            out,
            "StatefulSet {}: ordinals [{}]",
            self.key,
            ordinals.join(", ")
        )?;
        if let Some(invalid) = &plan.invalid_reserve_ordinal {
            writeln!(out, "invalid: {invalid} (no ordinal is reserved)")?;
        }
        self.objects.write_lines(out, &plan.actions)?;
        if let Some(waiting) = &plan.waiting {
            writeln!(out, "waiting: {waiting}")?;
        }
        if let Some(error) = &plan.stopped {
            writeln!(out, "stopped: {error}")?;
        }
        let s = &plan.status;
        writeln!(
            out,
            "status: replicas {}, ready {}, available {}, current {}, updated {}, updatedReady {}, updatedAvailable {}",
            s.replicas,
            s.ready_replicas,
            s.available_replicas,
            s.current_replicas,
            s.updated_replicas,
            s.updated_ready_replicas,
            s.updated_available_replicas
        )?;
        writeln!(
            out,
            "revisions: current {}, update {}",
            s.current_revision, s.update_revision
        )?;
        for condition in &s.conditions {
            writeln!(
                out,
                "condition {}: {} {} {}",
                condition.type_, condition.status, condition.reason, condition.message
            )?;
        }
        if let Some(after) = plan.requeue_after {
            writeln!(out, "requeue after: {}s", after.as_secs_f64())?;
        }
        Ok(())
    }
}
