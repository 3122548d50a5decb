//! The SidecarSet planner run twice: from the pods ([`kruise_sidecar::plan()`]) and from their compact facts
//! ([`kruise_sidecar::plan_steps`] over [`PodFacts`], then [`kruise_sidecar::pod_outcome`] from the whole pods
//! of the steps, as the controller does). Every test that plans through [`plan`] checks that both agree.

use k8s_openapi::api::core::v1::Pod;
use kruise_sidecar::pod_facts::PodFacts;
use kruise_sidecar::{Error, Plan, PlanInput, PodAction, plan_steps, pod_outcome};

/// [`kruise_sidecar::plan()`], asserting that the plan from the pods' facts makes the same decisions and,
/// with the whole pods of its steps, the same patches.
pub fn plan(input: &PlanInput<'_, Pod>) -> Result<Plan, Error> {
    let from_pods = kruise_sidecar::plan(input)?;
    let facts: Vec<PodFacts> = input.pods.iter().map(PodFacts::of).collect();
    let steps = plan_steps(&PlanInput {
        sidecarset: input.sidecarset,
        pods: &facts,
        revisions: input.revisions,
        revision_namespace: input.revision_namespace,
        now: input.now,
    })
    .expect("the plan from facts fails where the plan from pods does not");
    assert_eq!(steps.revisions, from_pods.revisions, "revisions");
    assert_eq!(steps.status, from_pods.status, "status");
    assert_eq!(steps.matched, from_pods.matched, "matched pods");
    assert_eq!(steps.step, from_pods.step, "step");
    let planned = steps.planned(input.sidecarset);
    let actions: Vec<PodAction> = steps
        .steps
        .iter()
        .map(|step| PodAction {
            pod: step.pod,
            reason: step.reason,
            outcome: pod_outcome(&planned, step.reason, &input.pods[step.pod], input.now)
                .expect("the patches of a step"),
        })
        .collect();
    assert_eq!(actions, from_pods.actions, "actions");
    Ok(from_pods)
}
