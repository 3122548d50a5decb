//! The scale step of the CloneSet planner (upstream `Scale`): cancelling `PreparingDelete` on scale-up,
//! slow-start creation with revisions and instance ids (reusing ids of claims left without a pod),
//! specified deletion within `deleteReadyLimit`, `PreparingDelete` instead of deletion under a preDelete hook,
//! and scale-down by the ranking, old revisions first. Scale and update never happen in one plan.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

use crate::support::rollout;

use std::collections::BTreeMap;

use crate::support::rollout::planning::{
    cloneset, lifecycle_to, now, plan_claims, plan_of, summary,
};
use crate::support::rollout::pods;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kruise_inplace::calculate::RevisionRef;
use kruise_schedule::cloneset::{
    ActionKind, Options, PlanInput, Revisions, Rule, SeededIds, Step, Target, plan,
};
use serde_json::json;

const INSTANCE_ID: &str = "apps.kruise.io/cloneset-instance-id";

fn created(plan: &kruise_schedule::cloneset::Plan) -> Vec<(Pod, u32, Rule)> {
    plan.actions
        .iter()
        .filter_map(|a| match &a.kind {
            ActionKind::CreatePod { pod, batch, .. } => {
                Some(((**pod).clone(), *batch, a.rule.clone()))
            }
            _ => None,
        })
        .collect()
}

fn label<'p>(pod: &'p Pod, key: &str) -> &'p str {
    pod.metadata
        .labels
        .as_ref()
        .unwrap()
        .get(key)
        .map_or("", String::as_str)
}

#[test]
fn scale_up_creates_in_slow_start_batches() {
    let cs = cloneset(&json!({"replicas": 7}));
    let plan = plan_of(&cs, &[]);
    assert_eq!(plan.step, Step::Scale);
    let pods = created(&plan);
    assert_eq!(pods.len(), 7);
    let batches: Vec<u32> = pods.iter().map(|p| p.1).collect();
    assert_eq!(batches, [0, 1, 1, 2, 2, 2, 2]);
    for (pod, _, rule) in &pods {
        // Created in PreparingNormal, at the update revision, with an instance id and the readiness gate.
        assert_eq!(
            label(pod, "lifecycle.apps.kruise.io/state"),
            "PreparingNormal"
        );
        assert_eq!(label(pod, "controller-revision-hash"), "new_rev");
        assert_eq!(label(pod, INSTANCE_ID).len(), 5);
        assert_eq!(
            pod.metadata.name.as_deref(),
            Some(format!("cs-{}", label(pod, INSTANCE_ID)).as_str())
        );
        let gates = pod.spec.as_ref().unwrap().readiness_gates.as_ref().unwrap();
        assert!(
            gates
                .iter()
                .any(|g| g.condition_type == "InPlaceUpdateReady")
        );
        assert!(matches!(
            rule,
            Rule::ScaleUp {
                revision: Target::Update,
                wanted: 7,
                limit: 7,
                reused_claim: false
            }
        ));
    }
    let mut ids: Vec<&str> = pods.iter().map(|p| label(&p.0, INSTANCE_ID)).collect();
    ids.dedup();
    assert_eq!(ids.len(), 7, "ids are distinct");
}

#[test]
fn scale_up_limited_by_scale_max_unavailable() {
    // 3 -> 6 with scaleStrategy.maxUnavailable 2 and one pod not ready: scaleUpLimit 1.
    let cs = cloneset(&json!({"replicas": 6, "scaleStrategy": {"maxUnavailable": 2}}));
    let pods = pods("nNr- nNr- nN--");
    let plan = plan_of(&cs, &pods);
    assert_eq!((plan.diff.scale_up_num, plan.diff.scale_up_limit), (3, 1));
    assert_eq!(created(&plan).len(), 1);
}

#[test]
fn scale_up_below_partition_uses_the_current_revision() {
    // replicas 5, partition 3, no pods: 3 pods at the current revision, 2 at the update revision.
    let cs =
        cloneset(&json!({"replicas": 5, "updateStrategy": {"rollingUpdate": {"partition": 3}}}));
    let mut old_template = cs.spec.template.clone();
    old_template.spec.as_mut().unwrap().containers[0].image = Some("nginx:0".into());
    let data = kruise_inplace::revision::template_data_value(&old_template).unwrap();
    let known = [RevisionRef {
        name: "old_rev",
        data: Some(&data),
        annotations: None,
    }];
    let now = now();
    let options = Options::default();
    let revisions = Revisions {
        current: "old_rev",
        update: "new_rev",
        known: &known,
    };
    let ids = SeededIds::new(3);
    let input = PlanInput::new(&cs, &[], revisions, &now, &options, &ids);
    let plan = plan(&input);
    let pods = created(&plan);
    let at: Vec<(&str, &str)> = pods
        .iter()
        .map(|p| {
            let image = p.0.spec.as_ref().unwrap().containers[0]
                .image
                .as_deref()
                .unwrap();
            (label(&p.0, "controller-revision-hash"), image)
        })
        .collect();
    assert_eq!(
        at.iter().filter(|x| **x == ("old_rev", "nginx:0")).count(),
        3,
        "{at:?}"
    );
    assert_eq!(
        at.iter().filter(|x| **x == ("new_rev", "nginx:1")).count(),
        2,
        "{at:?}"
    );
    // Without the current revision's data the plan stops with a typed error naming it.
    let ids = SeededIds::new(3);
    let input = PlanInput::new(
        &cs,
        &[],
        Revisions::named("old_rev", "new_rev"),
        &now,
        &options,
        &ids,
    );
    let plan = kruise_schedule::cloneset::plan(&input);
    let error = plan.stopped.expect("stopped").to_string();
    assert!(
        error.contains("old_rev") && error.contains("default/cs"),
        "{error}"
    );
}

fn claim(name: &str, id: &str) -> PersistentVolumeClaim {
    PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            labels: Some(BTreeMap::from([(INSTANCE_ID.to_owned(), id.to_owned())])),
            ..Default::default()
        },
        ..Default::default()
    }
}

#[test]
fn scale_up_reuses_ids_of_orphan_claims() {
    let vct = json!([{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}}}}]);
    let cs = cloneset(
        &json!({"replicas": 3, "volumeClaimTemplates": vct, "scaleStrategy": {"enablePVCReuse": true}}),
    );
    let mut pods = pods("nNr-");
    pods[0]
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .insert(INSTANCE_ID.into(), "used1".into());
    // "used1" belongs to a live pod; "orph1" has no pod and is reused; its claim is not created again.
    let claims = [
        claim("data-cs-used1", "used1"),
        claim("data-cs-orph1", "orph1"),
    ];
    let plan = plan_claims(&cs, &pods, &claims);
    let new = created(&plan);
    assert_eq!(new.len(), 2);
    let reused: Vec<&str> = new
        .iter()
        .filter(|p| {
            matches!(
                p.2,
                Rule::ScaleUp {
                    reused_claim: true,
                    ..
                }
            )
        })
        .map(|p| label(&p.0, INSTANCE_ID))
        .collect();
    assert_eq!(reused, ["orph1"]);
    let claim_names: Vec<String> = plan
        .actions
        .iter()
        .filter_map(|a| match &a.kind {
            ActionKind::CreateClaim { claim } => claim.metadata.name.clone(),
            _ => None,
        })
        .collect();
    let other = new
        .iter()
        .map(|p| label(&p.0, INSTANCE_ID))
        .find(|id| *id != "orph1")
        .unwrap();
    assert_eq!(
        claim_names,
        [format!("data-cs-{other}")],
        "only the missing claim is created"
    );
    // Without enablePVCReuse the orphan id is not reused.
    let cs = cloneset(&json!({"replicas": 3, "volumeClaimTemplates": vct}));
    let plan = plan_claims(&cs, &pods, &claims);
    assert!(
        created(&plan)
            .iter()
            .all(|p| label(&p.0, INSTANCE_ID) != "orph1")
    );
}

#[test]
fn scale_up_cancels_preparing_delete() {
    // 3 replicas, one pod in PreparingDelete (not specified): it is brought back to PreparingNormal.
    let cs = cloneset(&json!({"replicas": 3}));
    let pods = pods("nNr- nNr- nDr-");
    let plan = plan_of(&cs, &pods);
    assert_eq!(summary(&plan, &pods), ["updateLifecycle p2 cancel-delete"]);
    assert_eq!(
        lifecycle_to(&plan.actions[0].kind).as_deref(),
        Some("PreparingNormal")
    );
    // No shortfall (replicas 2): nothing to cancel; the released PreparingDelete pod is deleted.
    let cs2 = cloneset(&json!({"replicas": 2}));
    let plan = plan_of(&cs2, &pods);
    assert_eq!(summary(&plan, &pods), ["deletePod p2 pre-delete"]);
    // A specified PreparingDelete pod is not cancelled.
    let specified = rollout::pods("nNr- nNr- nDrd");
    let plan = plan_of(&cs, &specified);
    assert!(
        summary(&plan, &specified)
            .iter()
            .all(|s| !s.contains("cancel-delete"))
    );
}

#[test]
fn no_cancel_when_a_hook_marks_pods_not_ready() {
    let cs = cloneset(&json!({"replicas": 3, "lifecycle": {"preDelete": {
        "finalizersHandler": ["example.com/hold"], "markPodNotReady": true}}}));
    let mut pods = pods("nNr- nNr- nDr-");
    pods[2].metadata.finalizers = Some(vec!["example.com/hold".into()]);
    let plan = plan_of(&cs, &pods);
    // Still hooked: no cancel, no deletion, nothing else in the scale step.
    assert!(
        summary(&plan, &pods)
            .iter()
            .all(|s| !s.contains("cancel-delete") && !s.starts_with("deletePod"))
    );
}

#[test]
fn specified_delete_within_delete_ready_limit() {
    // maxUnavailable 1: of two ready specified pods one is deleted; a not-ready specified pod always is.
    let cs = cloneset(
        &json!({"replicas": 5, "updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}}}),
    );
    let pods = pods("nNrd nNrd nN-d nNr- nNr-");
    let plan = plan_of(&cs, &pods);
    assert_eq!(
        plan.diff.delete_ready_limit, 1,
        "specified pods do not count as unavailable"
    );
    assert_eq!(
        summary(&plan, &pods),
        [
            "deletePod p0 specified-delete",
            "deletePod p2 specified-delete"
        ]
    );
    assert_eq!(
        plan.actions[1].rule,
        Rule::SpecifiedDelete {
            ready: false,
            remaining: 0
        }
    );
    let pods = rollout::pods("nNrd nNrd nNr- nNr- nNr-");
    let plan = plan_of(&cs, &pods);
    assert_eq!(plan.diff.delete_ready_limit, 1);
    assert_eq!(summary(&plan, &pods), ["deletePod p0 specified-delete"]);
    assert_eq!(
        plan.actions[0].rule,
        Rule::SpecifiedDelete {
            ready: true,
            remaining: 0
        }
    );
}

#[test]
fn pods_to_delete_names_are_specified() {
    let cs = cloneset(
        &json!({"replicas": 3, "scaleStrategy": {"podsToDelete": ["p1"]},
        "updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}}}),
    );
    let pods = pods("nNr- nNr- nNr-");
    let plan = plan_of(&cs, &pods);
    assert_eq!(summary(&plan, &pods), ["deletePod p1 specified-delete"]);
}

#[test]
fn pre_delete_hook_turns_deletion_into_preparing_delete() {
    let cs = cloneset(
        &json!({"replicas": 3, "lifecycle": {"preDelete": {"labelsHandler": {"hold": "true"}}},
        "updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}}}),
    );
    let mut pods = pods("nNrd nNr- nNr-");
    pods[0]
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("hold".into(), "true".into());
    let plan = plan_of(&cs, &pods);
    assert_eq!(
        summary(&plan, &pods),
        ["updateLifecycle p0 specified-delete"]
    );
    assert_eq!(
        lifecycle_to(&plan.actions[0].kind).as_deref(),
        Some("PreparingDelete")
    );
    assert!(
        plan.actions[0].reason().contains("preDelete hook holds it"),
        "{}",
        plan.actions[0].reason()
    );
    // Released (label gone) while PreparingDelete: really deleted, with its claims.
    let mut released = rollout::pods("nNr- nNr- nNr- nDrd");
    released[3]
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .insert(INSTANCE_ID.into(), "x1".into());
    let claims = [claim("data-cs-x1", "x1")];
    let plan = plan_claims(&cs, &released, &claims);
    assert_eq!(
        plan.actions
            .iter()
            .map(|a| a.kind.name())
            .collect::<Vec<_>>(),
        ["deletePod", "deleteClaim"]
    );
}

#[test]
fn scale_down_takes_old_revisions_first_by_ranking() {
    // 5 pods, replicas 3, partition 0: 2 to delete, both from the old revision (scaleDownNumOldRevision 2).
    let cs = cloneset(
        &json!({"replicas": 3, "updateStrategy": {"rollingUpdate": {"maxUnavailable": 2}}}),
    );
    let pods = pods("nNr- oNr- oN-- oNr- nNr-");
    let plan = plan_of(&cs, &pods);
    assert_eq!(
        (
            plan.diff.scale_down_num,
            plan.diff.scale_down_num_old_revision
        ),
        (2, 3)
    );
    // Not ready first (p2), then by name among equals (p1).
    assert_eq!(
        summary(&plan, &pods),
        ["deletePod p2 scale-down", "deletePod p1 scale-down"]
    );
    assert!(matches!(
        plan.actions[0].rule,
        Rule::ScaleDown {
            revision: Target::Current,
            rank: 1,
            of: 3,
            ready: false
        }
    ));
    // deleteReadyLimit holds back ready pods: maxUnavailable 0 + surplus 2 - unavailable 1 = 1.
    let cs = cloneset(
        &json!({"replicas": 3, "updateStrategy": {"rollingUpdate": {"maxUnavailable": 0}}}),
    );
    let pods3 = rollout::pods("nNr- oNr- oN-- oNr- nNr- nNr-");
    let plan = plan_of(&cs, &pods3);
    assert_eq!(plan.diff.delete_ready_limit, 2);
    assert_eq!(plan.diff.scale_down_num, 3);
    assert_eq!(plan.actions.len(), 3, "{:?}", summary(&plan, &pods3));
}

#[test]
fn scale_down_splits_between_revisions() {
    // replicas 3, partition 1, pods 2 old + 3 new: 1 old kept (partition), so delete 1 old and 1 new.
    let cs = cloneset(
        &json!({"replicas": 3, "updateStrategy": {"rollingUpdate": {"partition": 1, "maxUnavailable": 3}}}),
    );
    let pods = pods("oNr- oNr- nNr- nNr- nNr-");
    let plan = plan_of(&cs, &pods);
    assert_eq!(
        (
            plan.diff.scale_down_num,
            plan.diff.scale_down_num_old_revision
        ),
        (2, 1)
    );
    let targets: Vec<Target> = plan
        .actions
        .iter()
        .filter_map(|a| match a.rule {
            Rule::ScaleDown { revision, .. } => Some(revision),
            _ => None,
        })
        .collect();
    assert_eq!(targets, [Target::Current, Target::Update]);
}

#[test]
fn deletion_cost_and_same_node_rank_choose_the_pod() {
    let cs = cloneset(
        &json!({"replicas": 2, "updateStrategy": {"rollingUpdate": {"maxUnavailable": 3}}}),
    );
    let mut pods = pods("nNr- nNr- nNr-");
    for (pod, node) in pods.iter_mut().zip(["n1", "n1", "n2"]) {
        pod.spec.as_mut().unwrap().node_name = Some(node.into());
    }
    // Same node: p0 and p1 share n1; p0 ranks higher (name order among equals) and goes first.
    let plan = plan_of(&cs, &pods);
    assert_eq!(summary(&plan, &pods), ["deletePod p0 scale-down"]);
    // A lower deletion cost beats the rank.
    pods[2].metadata.annotations = Some(BTreeMap::from([(
        "controller.kubernetes.io/pod-deletion-cost".to_owned(),
        "-1".to_owned(),
    )]));
    let plan = plan_of(&cs, &pods);
    assert_eq!(summary(&plan, &pods), ["deletePod p2 scale-down"]);
}

#[test]
fn scale_and_update_never_in_one_plan() {
    // Scale-up is due and 3 pods wait for an update: only the scale step acts.
    let cs = cloneset(
        &json!({"replicas": 4, "updateStrategy": {"rollingUpdate": {"maxUnavailable": 2}}}),
    );
    let pods = pods("oNr- oNr- oNr-");
    let plan = plan_of(&cs, &pods);
    assert_eq!(plan.step, Step::Scale);
    assert!(plan.diff.update_num > 0);
    assert!(plan.actions.iter().all(|a| a.kind.name() == "createPod"));
}
