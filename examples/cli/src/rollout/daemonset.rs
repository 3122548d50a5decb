//! `kruise rollout plan` for an Advanced DaemonSet (`apps.kruise.io` DaemonSet): what its controller would
//! do next, from the DaemonSet, its pods, every Node of the cluster and its ControllerRevisions.
//!
//! The update revision is the hash the DaemonSet's pods carry in `controller-revision-hash`:
//! `--update-revision`, else `status.updateRevision` (v1alpha1 `status.daemonSetHash`). Upstream hashes the
//! template with go-spew, which is not reproduced here, so without either the plan is refused. In-place
//! updates need the old revision's data: its ControllerRevision (with its `controller-revision-hash` label)
//! in `--pods`.

use std::io::Write;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Node, Pod, PodSpec};
use k8s_openapi::jiff::{Timestamp, tz::TimeZone};
use kruise_api::apps::v1beta1::DaemonSet;
use kruise_api::feature_gate::FeatureGateSet;
use kruise_schedule::daemonset::{
    DaemonPodFit, KnownRevision, NodeClass, NodeFit, Options, Plan, PlanInput, Revisions, plan,
};
use serde_json::{Value, json};

use super::owned::Owned;
use super::planned_action::ActionObjects;
use super::template_revision::workload_key;
use super::{PlanArgs, PlanFormat, write_json};
use crate::CliError;

/// Plans `daemonset` over `owned` at `now` and prints the plan.
///
/// # Errors
/// Invalid input (exit code 2): no Nodes, no update revision, a `--current-revision`, bad gates or
/// ControllerRevisions; or failing output.
pub(super) fn plan_daemonset(
    args: &PlanArgs,
    daemonset: &DaemonSet,
    owned: &Owned,
    now: Timestamp,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let key = workload_key(&daemonset.metadata);
    if args.current_revision.is_some() {
        return Err(CliError::Invalid(format!(
            "--current-revision: DaemonSet {key} has no current revision, only the update revision \
             (--update-revision)"
        )));
    }
    let mut options = Options::default();
    options
        .in_place
        .apply_feature_gates(&args.feature_gates)
        .map_err(|error| CliError::Invalid(format!("--feature-gates: {error}")))?;
    if owned.nodes.is_empty() {
        return Err(CliError::Invalid(format!(
            "{}: DaemonSet {key} needs the cluster's Nodes, and the file holds none (add the output of \
             `kubectl get nodes -o yaml`)",
            args.pods
        )));
    }
    let status_hash = daemonset
        .status
        .as_ref()
        .map(|status| status.update_revision.as_str())
        .unwrap_or_default();
    let update_hash = match (&args.update_revision, status_hash) {
        (Some(given), _) => given.clone(),
        (None, "") => {
            return Err(CliError::Invalid(format!(
                "{}: DaemonSet {key} has no status.updateRevision (v1alpha1 status.daemonSetHash): give the \
                 update hash with --update-revision",
                args.workload
            )));
        }
        (None, hash) => hash.to_owned(),
    };
    let revisions: Vec<ControllerRevision> = owned.controller_revisions()?;
    let known: Vec<KnownRevision<'_>> = revisions.iter().filter_map(KnownRevision::of).collect();
    let zoned = now.to_zoned(TimeZone::UTC);
    let pods: Vec<&Pod> = owned.pods.iter().collect();
    let nodes: Vec<&Node> = owned.nodes.iter().collect();
    let input = PlanInput::new(
        daemonset,
        &pods,
        &nodes,
        Revisions {
            update_hash: &update_hash,
            known: &known,
        },
        &zoned,
        &options,
    );
    let result = plan(&input);
    let empty_spec = PodSpec::default();
    let fit = DaemonPodFit::new(daemonset.spec.template.spec.as_ref().unwrap_or(&empty_spec));
    let view = DaemonSetPlanView {
        key,
        nodes: owned
            .nodes
            .iter()
            .map(|node| {
                (
                    node.metadata.name.clone().unwrap_or_default(),
                    fit.check(node),
                )
            })
            .collect(),
        objects: ActionObjects {
            pods: &owned.pods,
            claims: &[],
        },
        plan: &result,
    };
    match args.output {
        PlanFormat::Json => write_json(out, &view.json())?,
        PlanFormat::Text => view.write_text(out)?,
    }
    Ok(())
}

/// `updated`, `updating`, `selected` or `rest`.
fn class_name(class: NodeClass) -> &'static str {
    match class {
        NodeClass::Updated => "updated",
        NodeClass::Updating => "updating",
        NodeClass::Selected => "selected",
        NodeClass::Rest => "rest",
    }
}

/// A DaemonSet plan with what it needs to name things.
struct DaemonSetPlanView<'a> {
    key: String,
    /// Every node and whether the daemon pod should run there.
    nodes: Vec<(String, NodeFit)>,
    objects: ActionObjects<'a>,
    plan: &'a Plan,
}

impl DaemonSetPlanView<'_> {
    fn json(&self) -> Value {
        let plan = self.plan;
        let nodes: Vec<Value> = self
            .nodes
            .iter()
            .map(|(name, fit)| {
                json!({
                    "node": name,
                    "shouldRun": fit.should_run,
                    "shouldContinueRunning": fit.should_continue_running,
                    "reason": fit.reason.as_ref().map(ToString::to_string),
                })
            })
            .collect();
        let budgets = plan.budgets.map(|b| {
            json!({
                "desired": b.desired,
                "maxUnavailable": b.max_unavailable,
                "maxSurge": b.max_surge,
                "partition": b.partition,
                "burstReplicas": b.burst_replicas,
            })
        });
        let order: Vec<Value> = plan
            .update_order
            .iter()
            .map(|(node, class)| json!({"node": node, "class": class_name(*class)}))
            .collect();
        json!({
            "daemonset": self.key,
            "step": plan.step.name(),
            "nodes": nodes,
            "budgets": budgets,
            "updateOrder": order,
            "actions": plan.actions.iter().map(|a| self.objects.json(a)).collect::<Vec<_>>(),
            "status": plan.status,
            "requeueAfterSeconds": plan.requeue_after.map(|d| d.as_secs_f64()),
            "error": plan.stopped.as_ref().map(ToString::to_string),
        })
    }

    fn write_text(&self, out: &mut impl Write) -> std::io::Result<()> {
        let plan = self.plan;
        writeln!(out, "DaemonSet {}: step {}", self.key, plan.step.name())?;
        writeln!(out, "nodes:")?;
        for (name, fit) in &self.nodes {
            match &fit.reason {
                None => writeln!(out, "  {name}: runs the pod")?,
                Some(reason) => writeln!(out, "  {name}: no pod: {reason}")?,
            }
        }
        if let Some(b) = plan.budgets {
            writeln!(
                out,
                "budgets: desired {}, maxUnavailable {}, maxSurge {}, partition {}, burstReplicas {}",
                b.desired, b.max_unavailable, b.max_surge, b.partition, b.burst_replicas
            )?;
        }
        if !plan.update_order.is_empty() {
            let order: Vec<String> = plan
                .update_order
                .iter()
                .map(|(node, class)| format!("{node} ({})", class_name(*class)))
                .collect();
            writeln!(out, "update order: {}", order.join(", "))?;
        }
        self.objects.write_lines(out, &plan.actions)?;
        if let Some(error) = &plan.stopped {
            writeln!(out, "stopped: {error}")?;
        }
        let s = &plan.status;
        writeln!(
            out,
            "status: desired {}, current {}, ready {}, available {}, updated {}, unavailable {}, misscheduled {}",
            s.desired_number_scheduled,
            s.current_number_scheduled,
            s.number_ready,
            s.number_available,
            s.updated_number_scheduled,
            s.number_unavailable,
            s.number_misscheduled
        )?;
        writeln!(out, "revision: update {}", s.update_revision)?;
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
