//! `kruise rollout plan` for a CloneSet: what the CloneSet controller would do next to it and its pods.
//!
//! The CloneSet may be `apps.kruise.io/v1alpha1` or `v1beta1` (converted to v1beta1, the hub). The pods file
//! may also hold the CloneSet's PersistentVolumeClaims (instance-id reuse), ControllerRevisions (in-place
//! updates need the pods' revision data) and Nodes (the topology-spread ranker). Revisions come from
//! `status.currentRevision` / `status.updateRevision` unless the flags give them; without either, the update
//! revision is computed from the template as the controller names it, and the current revision is the
//! update revision.

use std::io::Write;

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use k8s_openapi::jiff::{Timestamp, tz::TimeZone};
use kruise_api::apps::v1beta1;
use kruise_schedule::cloneset::{
    Action, ActionKind, Options, Plan, PlanInput, PlanRule, Revisions, SeededIds, SpecificKind,
    plan,
};
use serde_json::{Value, json};

use super::owned::Owned;
use super::template_revision::{chosen_revisions, revision_refs, workload_key};
use super::{PlanArgs, PlanFormat, write_json};
use crate::CliError;

/// Plans `cloneset` over the objects of `--pods` and prints the plan.
///
/// # Errors
/// Invalid input (exit code 2) or failing output.
pub(super) fn plan_cloneset(
    args: &PlanArgs,
    cloneset: &v1beta1::CloneSet,
    owned: &Owned,
    now: Timestamp,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let mut options = Options::default()
        .with_feature_gates(&args.feature_gates)
        .map_err(|error| CliError::Invalid(format!("--feature-gates: {error}")))?;
    options.exclude_preparing_delete = args.exclude_preparing_delete;
    let status = cloneset.status.clone().unwrap_or_default();
    let (current, update) = chosen_revisions(
        args,
        (&status.current_revision, &status.update_revision),
        cloneset.metadata.name.as_deref().unwrap_or(""),
        &cloneset.spec.template,
        status.collision_count.unwrap_or(0),
    )?;
    let known = revision_refs(&owned.revisions);
    let revisions = Revisions {
        current: &current,
        update: &update,
        known: &known,
    };
    let zoned = now.to_zoned(TimeZone::UTC);
    let ids = SeededIds::new(args.seed);
    let input = PlanInput::new(cloneset, &owned.pods, revisions, &zoned, &options, &ids)
        .with_claims(&owned.claims)
        .with_nodes(&owned.nodes);
    let result = plan(&input);
    let view = PlanView {
        cloneset,
        owned,
        plan: &result,
    };
    match args.output {
        PlanFormat::Json => write_json(out, &view.json())?,
        PlanFormat::Text => view.write_text(out)?,
    }
    Ok(())
}

/// A plan with what it needs to name things.
struct PlanView<'a> {
    cloneset: &'a v1beta1::CloneSet,
    owned: &'a Owned,
    plan: &'a Plan,
}

impl PlanView<'_> {
    fn key(&self) -> String {
        workload_key(&self.cloneset.metadata)
    }

    /// The pod an action is about: the pod acted on or created, or the pod a claim belongs to.
    fn pod_of(&self, action: &Action) -> String {
        let claim_pod = |claim: &PersistentVolumeClaim| {
            let id = claim
                .metadata
                .labels
                .as_ref()
                .and_then(|labels| labels.get(kruise_api::keys::cloneset::INSTANCE_ID_LABEL))
                .map_or("", String::as_str);
            format!(
                "{}-{id}",
                self.cloneset.metadata.name.as_deref().unwrap_or("")
            )
        };
        match &action.kind {
            ActionKind::CreateClaim { claim } => claim_pod(claim),
            ActionKind::Specific(SpecificKind::DeleteClaim { claim }) => self
                .owned
                .claims
                .get(*claim)
                .map(claim_pod)
                .unwrap_or_default(),
            _ => action.object_name(&self.owned.pods, &[]).to_owned(),
        }
    }

    fn action_json(&self, action: &Action) -> Value {
        let mut value = serde_json::Map::new();
        value.insert("kind".into(), json!(action.kind.name()));
        value.insert("pod".into(), json!(self.pod_of(action)));
        value.insert("rule".into(), json!(action.rule.id()));
        value.insert("reason".into(), json!(action.reason()));
        match &action.kind {
            ActionKind::CreateClaim { .. }
            | ActionKind::Specific(SpecificKind::DeleteClaim { .. }) => {
                let claim = action.object_name(&self.owned.pods, &self.owned.claims);
                value.insert("claim".into(), json!(claim));
            }
            ActionKind::CreatePod { pod, batch, .. } => {
                value.insert("batch".into(), json!(batch));
                let revision = pod.metadata.labels.as_ref().and_then(|labels| {
                    labels.get(kruise_api::keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL)
                });
                value.insert("revision".into(), json!(revision));
            }
            ActionKind::Lifecycle { transition, .. } => {
                let name = |state: &Option<kruise_api::lifecycle::LifecycleStateType>| {
                    state.as_ref().map(|state| state.as_str().to_owned())
                };
                value.insert(
                    "lifecycle".into(),
                    json!({"from": name(&transition.from), "to": name(&transition.to)}),
                );
            }
            _ => {}
        }
        Value::Object(value)
    }

    fn json(&self) -> Value {
        let diff: serde_json::Map<String, Value> = self
            .plan
            .diff
            .fields()
            .iter()
            .map(|(name, value)| ((*name).to_owned(), json!(value)))
            .collect();
        json!({
            "cloneset": self.key(),
            "step": self.plan.step.name(),
            "diff": diff,
            "actions": self.plan.actions.iter().map(|a| self.action_json(a)).collect::<Vec<_>>(),
            "status": self.plan.status,
            "requeueAfterSeconds": self.plan.requeue_after.map(|d| d.as_secs_f64()),
            "invalid": self.plan.invalid.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "error": self.plan.stopped.as_ref().map(ToString::to_string),
            "skipped": self.plan.skipped.iter().map(|skipped| json!({
                "pod": self.owned.pods.get(skipped.pod).and_then(|pod| pod.metadata.name.clone()),
                "error": skipped.error.to_string(),
            })).collect::<Vec<_>>(),
        })
    }

    fn write_text(&self, out: &mut impl Write) -> std::io::Result<()> {
        let plan = self.plan;
        writeln!(out, "CloneSet {}: step {}", self.key(), plan.step.name())?;
        writeln!(out, "diff: {}", plan.diff)?;
        for invalid in &plan.invalid {
            writeln!(out, "invalid: {invalid}")?;
        }
        if plan.actions.is_empty() {
            writeln!(out, "actions: none")?;
        } else {
            writeln!(out, "actions:")?;
        }
        for action in &plan.actions {
            let mut object = action
                .object_name(&self.owned.pods, &self.owned.claims)
                .to_owned();
            if let ActionKind::CreatePod { batch, .. } = &action.kind {
                object = format!("{object} (batch {batch})");
            }
            writeln!(
                out,
                "  {} {}: {}",
                action.kind.name(),
                object,
                action.reason()
            )?;
        }
        if let Some(error) = &plan.stopped {
            writeln!(out, "stopped: {error}")?;
        }
        for skipped in &plan.skipped {
            let name = self
                .owned
                .pods
                .get(skipped.pod)
                .and_then(|pod| pod.metadata.name.as_deref())
                .unwrap_or("?");
            writeln!(out, "skipped: pod {name}: {}", skipped.error)?;
        }
        let s = &plan.status;
        writeln!(
            out,
            "status: replicas {}, ready {}, available {}, updated {}, updatedReady {}, updatedAvailable {}, expectedUpdated {}",
            s.replicas,
            s.ready_replicas,
            s.available_replicas,
            s.updated_replicas,
            s.updated_ready_replicas,
            s.updated_available_replicas,
            s.expected_updated_replicas
        )?;
        writeln!(
            out,
            "revisions: current {}, update {}",
            s.current_revision, s.update_revision
        )?;
        for condition in &s.conditions {
            writeln!(
                out,
                "condition {:?}: {} {} {}",
                condition.type_, condition.status, condition.reason, condition.message
            )?;
        }
        if let Some(after) = plan.requeue_after {
            writeln!(out, "requeue after: {}s", after.as_secs_f64())?;
        }
        Ok(())
    }
}
