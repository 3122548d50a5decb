//! `kruise rollout plan` for a SidecarSet: what the SidecarSet controller would do next, from the
//! SidecarSet, the pods it selects and its ControllerRevisions (in `--revision-namespace`).
//!
//! The SidecarSet is read as stored (defaulted; its hash annotations computed when missing). A pod is
//! matched when it is active, selected, lists the SidecarSet in `kruise.io/sidecarset-injected-list` and runs
//! every sidecar; it is updated when its recorded `kruise.io/sidecarset-hash` is the SidecarSet's. The
//! revision is computed as the controller names it; the revision flags do not apply.

use std::io::Write;

use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::SidecarSet;
use kruise_sidecar::revision::LatestRevision;
use kruise_sidecar::upgrade;
use kruise_sidecar::{Plan, PlanInput, PodAction, Reason, Step, plan};
use serde_json::{Value, json};

use super::owned::Owned;
use super::{PlanArgs, PlanFormat, write_json};
use crate::CliError;

/// Plans `sidecarset` over `owned` at `now` and prints the plan.
///
/// # Errors
/// Invalid input (exit code 2): revision flags or feature gates (the SidecarSet planner reads none), bad
/// ControllerRevisions, a SidecarSet or pod the planner cannot read; or failing output.
pub(super) fn plan_sidecarset(
    args: &PlanArgs,
    sidecarset: &SidecarSet,
    owned: &Owned,
    now: Timestamp,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let name = sidecarset.metadata.name.as_deref().unwrap_or("");
    for (flag, given) in [
        ("--current-revision", args.current_revision.is_some()),
        ("--update-revision", args.update_revision.is_some()),
        ("--feature-gates", !args.feature_gates.is_empty()),
    ] {
        if given {
            return Err(CliError::Invalid(format!(
                "{flag}: SidecarSet {name}: the SidecarSet planner computes its revision and reads no feature gates"
            )));
        }
    }
    let revisions = owned.controller_revisions()?;
    let input = PlanInput {
        sidecarset,
        pods: &owned.pods,
        revisions: &revisions,
        revision_namespace: &args.revision_namespace,
        now,
    };
    let result =
        plan(&input).map_err(|error| CliError::Invalid(format!("SidecarSet {name}: {error}")))?;
    let strategy = &sidecarset.spec.update_strategy;
    let matched = result.matched.len();
    let view = SidecarSetPlanView {
        name,
        owned,
        plan: &result,
        max_unavailable: upgrade::max_unavailable(strategy, matched),
        partition: upgrade::partition(strategy, matched),
    };
    match args.output {
        PlanFormat::Json => write_json(out, &view.json())?,
        PlanFormat::Text => view.write_text(out)?,
    }
    Ok(())
}

/// `reset`, `notUpdate`, `finished`, `paused` or `upgrade`.
fn step_name(step: Step) -> &'static str {
    match step {
        Step::Reset => "reset",
        Step::NotUpdate => "notUpdate",
        Step::Finished => "finished",
        Step::Paused => "paused",
        Step::Upgrade => "upgrade",
    }
}

/// `reuse`, `rollback` or `create`.
fn latest_action(latest: &LatestRevision) -> &'static str {
    match latest {
        LatestRevision::Reuse { .. } => "reuse",
        LatestRevision::Rollback { .. } => "rollback",
        LatestRevision::Create(_) => "create",
    }
}

/// A SidecarSet plan with what it needs to name things and explain the upgrades.
struct SidecarSetPlanView<'a> {
    name: &'a str,
    owned: &'a Owned,
    plan: &'a Plan,
    /// `updateStrategy.maxUnavailable` over the matched pods.
    max_unavailable: usize,
    /// `updateStrategy.partition` over the matched pods.
    partition: usize,
}

impl SidecarSetPlanView<'_> {
    fn pod_name(&self, index: usize) -> &str {
        self.owned
            .pods
            .get(index)
            .and_then(|pod| pod.metadata.name.as_deref())
            .unwrap_or("")
    }

    /// Why the action's pod is patched; `position` is its 1-based place among the upgrades.
    fn reason(&self, action: &PodAction, position: usize) -> String {
        match action.reason {
            Reason::ResetHotUpgrade => {
                "hot upgrade done: the idle sidecar container goes back to the empty \
                                        image"
                    .to_owned()
            }
            Reason::NotUpgradable => {
                "a sidecar field other than an image changed, so the pod cannot be \
                                      upgraded in place: SidecarSetUpgradable=False"
                    .to_owned()
            }
            Reason::Upgrade => format!(
                "upgrade in place: position {position} in the upgrade order (partition {}, maxUnavailable {} \
                 over {} matched pods)",
                self.partition,
                self.max_unavailable,
                self.plan.matched.len()
            ),
        }
    }

    /// Each action with its reason, in order.
    fn explained(&self) -> Vec<(&PodAction, String)> {
        let mut upgrades = 0;
        self.plan
            .actions
            .iter()
            .map(|action| {
                if action.reason == Reason::Upgrade {
                    upgrades += 1;
                }
                (action, self.reason(action, upgrades))
            })
            .collect()
    }

    fn json(&self) -> Value {
        let plan = self.plan;
        let actions: Vec<Value> = self
            .explained()
            .into_iter()
            .map(|(action, reason)| {
                json!({
                    "kind": "patchPod",
                    "pod": self.pod_name(action.pod),
                    "rule": action.reason.name(),
                    "reason": reason,
                })
            })
            .collect();
        json!({
            "sidecarset": self.name,
            "step": step_name(plan.step),
            "matched": plan.matched.iter().map(|&index| self.pod_name(index)).collect::<Vec<_>>(),
            "budget": {
                "matched": plan.matched.len(),
                "maxUnavailable": self.max_unavailable,
                "partition": self.partition,
            },
            "revision": {
                "latest": plan.revisions.latest.name(),
                "action": latest_action(&plan.revisions.latest),
                "delete": plan.revisions.delete,
            },
            "actions": actions,
            "status": plan.status,
        })
    }

    fn write_text(&self, out: &mut impl Write) -> std::io::Result<()> {
        let plan = self.plan;
        writeln!(
            out,
            "SidecarSet {}: step {}",
            self.name,
            step_name(plan.step)
        )?;
        let matched: Vec<&str> = plan
            .matched
            .iter()
            .map(|&index| self.pod_name(index))
            .collect();
        writeln!(
            out,
            "matched: {} pod(s) [{}]; partition {}, maxUnavailable {}",
            matched.len(),
            matched.join(", "),
            self.partition,
            self.max_unavailable
        )?;
        writeln!(
            out,
            "revision: {} {}",
            latest_action(&plan.revisions.latest),
            plan.revisions.latest.name()
        )?;
        for name in &plan.revisions.delete {
            writeln!(out, "revision: delete {name}")?;
        }
        let explained = self.explained();
        if explained.is_empty() {
            writeln!(out, "actions: none")?;
        } else {
            writeln!(out, "actions:")?;
        }
        for (action, reason) in explained {
            writeln!(out, "  patchPod {}: {reason}", self.pod_name(action.pod))?;
        }
        let s = &plan.status;
        writeln!(
            out,
            "status: matched {}, updated {}, ready {}, updatedReady {}",
            s.matched_pods, s.updated_pods, s.ready_pods, s.updated_ready_pods
        )?;
        writeln!(out, "revisions: latest {}", s.latest_revision)?;
        Ok(())
    }
}
