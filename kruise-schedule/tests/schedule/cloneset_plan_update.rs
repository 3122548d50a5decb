//! The refresh and update steps of the CloneSet planner and the status it writes (upstream `Update`,
//! `cloneset_status.go`): paused / OnDelete, candidates, `updateMaxUnavailable`, partition, rollback, in place
//! vs recreate through specified-delete, the inPlaceUpdate hook, `PreparingUpdate` first, the lifecycle
//! refresh, `expectedUpdatedReplicas`, the `Progressing` condition and the requeue.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

use crate::support::rollout;

use std::time::Duration;

use crate::support::rollout::planning::{cloneset, lifecycle_to, now, plan_of, plan_with, summary};
use crate::support::rollout::{pods, time};
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::{CloneSet, CloneSetConditionType, progressing_reason};
use kruise_inplace::calculate::RevisionRef;
use kruise_schedule::cloneset::{
    ActionKind, Options, Plan, PlanInput, Revisions, Rule, SeededIds, Step, Target, UpdateHow, plan,
};
use serde_json::{Value, json};

fn rolling(fields: &Value) -> Value {
    json!({"replicas": 5, "updateStrategy": {"rollingUpdate": fields}})
}

/// Plans with data for both revisions: `old_rev` runs `old_image`, the update revision is the template.
fn plan_in_place(cs: &CloneSet, pods: &[Pod], old_image: &str, old_env: bool) -> Plan {
    let mut old = cs.spec.template.clone();
    let container = &mut old.spec.as_mut().unwrap().containers[0];
    container.image = Some(old_image.into());
    if old_env {
        container.env = Some(vec![k8s_openapi::api::core::v1::EnvVar {
            name: "A".into(),
            value: Some("1".into()),
            ..Default::default()
        }]);
    }
    let data = kruise_inplace::revision::template_data_value(&old).unwrap();
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
    plan(&PlanInput::new(
        cs,
        pods,
        revisions,
        &now,
        &options,
        &SeededIds::new(1),
    ))
}

#[test]
fn recreate_limited_by_update_max_unavailable() {
    let cs = cloneset(&rolling(&json!({"maxUnavailable": 2})));
    let pods = pods("oNr- oNr- oNr- oNr- oNr-");
    let plan = plan_of(&cs, &pods);
    assert_eq!(plan.step, Step::Update);
    assert_eq!(
        (plan.diff.update_num, plan.diff.update_max_unavailable),
        (5, 2)
    );
    assert_eq!(
        summary(&plan, &pods),
        [
            "markSpecifiedDelete p0 update",
            "markSpecifiedDelete p1 update"
        ]
    );
    assert!(matches!(
        &plan.actions[0].rule,
        Rule::Update {
            target: Target::Update,
            position: 1,
            wanted: 5,
            max_unavailable: 2,
            how: UpdateHow::RecreatePolicy
        }
    ));
}

#[test]
fn unavailable_pods_use_the_budget_and_go_first() {
    // p1 is not ready: it is updated first (ActivePods) and does not use the budget; one ready pod follows.
    let cs = cloneset(&rolling(&json!({"maxUnavailable": 2})));
    let pods = pods("oNr- oN-- oNr- oNr- oNr-");
    let plan = plan_of(&cs, &pods);
    assert_eq!(
        summary(&plan, &pods),
        [
            "markSpecifiedDelete p1 update",
            "markSpecifiedDelete p0 update"
        ]
    );
    // An unavailable pod already at the target revision counts against the budget.
    let pods = rollout::pods("oNr- oNr- oNr- oNr- nN--");
    let plan = plan_of(&cs, &pods);
    assert_eq!(summary(&plan, &pods), ["markSpecifiedDelete p0 update"]);
}

#[test]
fn partition_keeps_old_pods() {
    let cs = cloneset(&rolling(&json!({"maxUnavailable": 5, "partition": 3})));
    let pods = pods("oNr- oNr- oNr- oNr- oNr-");
    let plan = plan_of(&cs, &pods);
    assert_eq!(plan.diff.update_num, 2);
    assert_eq!(plan.actions.len(), 2);
    assert_eq!(plan.status.expected_updated_replicas, 2);
    // "99%" still lets one pod update.
    let cs = cloneset(&rolling(&json!({"maxUnavailable": 5, "partition": "99%"})));
    let plan = plan_of(&cs, &pods);
    assert_eq!(
        (plan.diff.update_num, plan.status.expected_updated_replicas),
        (1, 1)
    );
}

#[test]
fn paused_and_on_delete_do_not_update() {
    let pods = pods("oNr- oNr- oNr- oNr- oNr-");
    let paused = cloneset(&rolling(&json!({"maxUnavailable": 2, "paused": true})));
    let plan = plan_of(&paused, &pods);
    assert!(plan.actions.is_empty());
    assert_eq!(plan.step, Step::Idle);
    let mut on_delete = cloneset(&rolling(&json!({"maxUnavailable": 2})));
    on_delete.spec.update_strategy.type_ =
        Some(kruise_api::apps::v1beta1::CloneSetUpdateStrategyType::OnDelete);
    let plan = plan_of(&on_delete, &pods);
    assert!(plan.actions.is_empty());
    // OnDelete: expectedUpdatedReplicas is replicas (no rollingUpdate).
    assert_eq!(plan.status.expected_updated_replicas, 5);
}

#[test]
fn rollback_needs_the_gate() {
    let cs = cloneset(&rolling(&json!({"maxUnavailable": 2, "partition": 4})));
    let pods = pods("nNr- nNr- nNr- nNr- oNr-");
    assert!(
        plan_of(&cs, &pods).actions.is_empty(),
        "gate off: no rollback"
    );
    let options = Options::default()
        .with_feature_gates("CloneSetPartitionRollback=true")
        .unwrap();
    let plan = plan_with(&cs, &pods, &options);
    assert_eq!(plan.diff.update_num, -3);
    assert_eq!(plan.actions.len(), 2);
    assert!(plan.actions.iter().all(|a| matches!(
        a.rule,
        Rule::Update {
            target: Target::Current,
            ..
        }
    )));
}

#[test]
fn in_place_when_possible_else_recreate() {
    let cs = cloneset(&rolling(
        &json!({"maxUnavailable": 1, "podUpdatePolicy": "InPlaceIfPossible"}),
    ));
    let pods = pods("oNr- oNr- oNr- oNr- oNr-");
    // Image-only change: in place, with the lifecycle state Updating written in the same pod write.
    let plan = plan_in_place(&cs, &pods, "nginx:0", false);
    assert_eq!(summary(&plan, &pods), ["updateInPlace p0 update"]);
    let ActionKind::UpdateInPlace {
        spec,
        lifecycle: Some(lifecycle),
        ..
    } = &plan.actions[0].kind
    else {
        panic!()
    };
    assert_eq!(
        spec.container_images.get("c").map(String::as_str),
        Some("nginx:1")
    );
    assert_eq!(
        lifecycle
            .to
            .as_ref()
            .map(kruise_api::lifecycle::LifecycleStateType::as_str),
        Some("Updating")
    );
    let outcome =
        plan.actions[0]
            .kind
            .in_place_outcome(&pods[0], now().timestamp(), &plan.update_options);
    assert!(outcome.unwrap().is_ok());
    // An env change cannot be made in place: recreate through specified-delete, with the reason.
    let plan = plan_in_place(&cs, &pods, "nginx:0", true);
    assert_eq!(summary(&plan, &pods), ["markSpecifiedDelete p0 update"]);
    assert!(matches!(
        &plan.actions[0].rule,
        Rule::Update {
            how: UpdateHow::RecreateRequired(_),
            ..
        }
    ));
    // A pod at a revision without data is recreated too.
    let plan = plan_of(&cs, &pods);
    assert!(
        plan.actions[0]
            .reason()
            .contains("not among the known revisions"),
        "{}",
        plan.actions[0].reason()
    );
    // InPlaceOnly refuses to recreate: the plan stops with a typed error and a FailedUpdate condition.
    let only = cloneset(&rolling(
        &json!({"maxUnavailable": 1, "podUpdatePolicy": "InPlaceOnly"}),
    ));
    let plan = plan_in_place(&only, &pods, "nginx:0", true);
    assert!(plan.stopped.unwrap().to_string().contains("InPlaceOnly"));
    assert!(
        plan.status
            .conditions
            .iter()
            .any(|c| c.type_ == CloneSetConditionType::FailedUpdate)
    );
}

#[test]
fn in_place_hook_holds_the_update() {
    let mut spec = rolling(&json!({"maxUnavailable": 1, "podUpdatePolicy": "InPlaceIfPossible"}));
    spec["lifecycle"] = json!({"inPlaceUpdate": {"labelsHandler": {"hold": "true"}}});
    let cs = cloneset(&spec);
    let mut pods = pods("oNr- oNr- oNr- oNr- oNr-");
    for pod in &mut pods {
        pod.metadata
            .labels
            .as_mut()
            .unwrap()
            .insert("hold".into(), "true".into());
    }
    let plan = plan_in_place(&cs, &pods, "nginx:0", false);
    assert_eq!(summary(&plan, &pods), ["updateLifecycle p0 update"]);
    assert_eq!(
        lifecycle_to(&plan.actions[0].kind).as_deref(),
        Some("PreparingUpdate")
    );
    assert!(
        plan.actions[0]
            .reason()
            .contains("inPlaceUpdate hook holds it")
    );
}

#[test]
fn preparing_update_pods_come_first() {
    let cs = cloneset(&rolling(&json!({"maxUnavailable": 1})));
    let pods = pods("oNr- oNr- oNr- oPr- oNr-");
    let plan = plan_of(&cs, &pods);
    assert_eq!(summary(&plan, &pods), ["markSpecifiedDelete p3 update"]);
}

#[test]
fn priority_and_scatter_order_candidates() {
    let cs = cloneset(&rolling(&json!({"maxUnavailable": 2,
        "priorityStrategy": {"weightPriority": [{"weight": 10, "matchSelector": {"matchLabels": {"tier": "canary"}}}]}})));
    let mut pods = pods("oNr- oNr- oNr- oNr- oNr-");
    pods[4]
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("tier".into(), "canary".into());
    let plan = plan_of(&cs, &pods);
    assert_eq!(
        summary(&plan, &pods),
        [
            "markSpecifiedDelete p4 update",
            "markSpecifiedDelete p0 update"
        ]
    );
    // Scatter: p0..p2 share rack r1; with one held back, the first two updates are not both r1.
    let cs = cloneset(&rolling(
        &json!({"maxUnavailable": 2, "scatterStrategy": [{"key": "rack", "value": "r1"}]}),
    ));
    let mut pods = rollout::pods("oNr- oNr- oNr- oNr- oNr-");
    for pod in &mut pods[..3] {
        pod.metadata
            .labels
            .as_mut()
            .unwrap()
            .insert("rack".into(), "r1".into());
    }
    let plan = plan_of(&cs, &pods);
    assert_eq!(
        summary(&plan, &pods),
        [
            "markSpecifiedDelete p0 update",
            "markSpecifiedDelete p3 update"
        ]
    );
}

#[test]
fn refresh_moves_preparing_normal_and_skips_the_update() {
    let cs = cloneset(&rolling(&json!({"maxUnavailable": 2})));
    let mut pods = pods("oNr- oNr- oNr- oNr- oQr-");
    pods[4].spec.as_mut().unwrap().node_name = Some("n1".into());
    let plan = plan_of(&cs, &pods);
    assert_eq!(plan.step, Step::Refresh);
    assert_eq!(
        summary(&plan, &pods),
        ["updateLifecycle p4 lifecycle-refresh"]
    );
    assert_eq!(
        lifecycle_to(&plan.actions[0].kind).as_deref(),
        Some("Normal")
    );
    // Not scheduled yet: stays PreparingNormal, and the update goes on.
    let pods = rollout::pods("oNr- oNr- oNr- oNr- oQr-");
    assert_eq!(plan_of(&cs, &pods).step, Step::Update);
}

#[test]
fn missing_pod_template_hash_is_back_filled() {
    let cs = cloneset(&rolling(&json!({"maxUnavailable": 2})));
    let mut pods = pods("nNr- nNr- nNr- nNr- nNr-");
    pods[2]
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .remove("pod-template-hash");
    let plan = plan_of(&cs, &pods);
    assert_eq!(
        summary(&plan, &pods),
        ["fixPodTemplateHash p2 pod-template-hash"]
    );
}

#[test]
fn status_counts_and_current_revision() {
    let cs = cloneset(&rolling(&json!({"maxUnavailable": 2})));
    let pods = pods("nNr- nNr- nN-- nUr- oNr-");
    let status = plan_of(&cs, &pods).status;
    assert_eq!(
        (
            status.replicas,
            status.ready_replicas,
            status.available_replicas,
            status.updated_replicas
        ),
        (5, 4, 3, 4)
    );
    assert_eq!(
        (
            status.updated_ready_replicas,
            status.updated_available_replicas
        ),
        (3, 2)
    );
    assert_eq!(status.current_revision, "old_rev");
    let done = rollout::pods("nNr- nNr- nNr- nNr- nNr-");
    let status = plan_of(&cs, &done).status;
    assert_eq!(
        status.current_revision, "new_rev",
        "every pod updated: current becomes update"
    );
}

#[test]
fn progressing_condition() {
    let reason = |plan: &Plan| {
        plan.status
            .conditions
            .iter()
            .find(|c| c.type_ == CloneSetConditionType::Progressing)
            .map(|c| (c.status.clone(), c.reason.clone()))
    };
    let mut spec = rolling(&json!({"maxUnavailable": 2}));
    spec["progressDeadlineSeconds"] = json!(600);
    let cs = cloneset(&spec);
    let pods = pods("oNr- oNr- oNr- oNr- oNr-");
    let plan = plan_of(&cs, &pods);
    assert_eq!(
        reason(&plan),
        Some(("True".into(), progressing_reason::UPDATED.into()))
    );
    assert_eq!(plan.requeue_after, Some(Duration::from_secs(601)));
    // Past the deadline: False, ProgressDeadlineExceeded.
    let mut late = cs.clone();
    late.status = Some(plan.status.clone());
    late.status.as_mut().unwrap().conditions[0].last_update_time =
        Some(time("2024-05-01T09:40:00Z"));
    assert_eq!(
        reason(&plan_of(&late, &pods)),
        Some((
            "False".into(),
            progressing_reason::PROGRESS_DEADLINE_EXCEEDED.into()
        ))
    );
    // Paused, partition reached, available.
    let mut paused = spec.clone();
    paused["updateStrategy"]["rollingUpdate"]["paused"] = json!(true);
    assert_eq!(
        reason(&plan_of(&cloneset(&paused), &pods)).unwrap().1,
        progressing_reason::PAUSED
    );
    let mut partitioned = spec.clone();
    partitioned["updateStrategy"]["rollingUpdate"]["partition"] = json!(3);
    let some = rollout::pods("nNr- nNr- oNr- oNr- oNr-");
    assert_eq!(
        reason(&plan_of(&cloneset(&partitioned), &some)).unwrap().1,
        progressing_reason::PARTITION_AVAILABLE
    );
    let all = rollout::pods("nNr- nNr- nNr- nNr- nNr-");
    assert_eq!(
        reason(&plan_of(&cs, &all)).unwrap().1,
        progressing_reason::AVAILABLE
    );
    // Without a deadline there is no Progressing condition.
    assert_eq!(
        reason(&plan_of(&cloneset(&rolling(&json!({}))), &pods)),
        None
    );
}

#[test]
fn requeue_for_min_ready_seconds_and_grace() {
    let mut spec = rolling(&json!({"maxUnavailable": 0}));
    spec["minReadySeconds"] = json!(30);
    let cs = cloneset(&spec);
    let mut pods = pods("nNr- nNr- nNr- nNr- nNr-");
    // p0 became ready 10 s ago: available 31 s after that (Go compares strictly), so requeue in 21 s.
    for pod in &mut pods {
        let status = pod.status.as_mut().unwrap();
        status.conditions.as_mut().unwrap()[0].last_transition_time =
            Some(time("2024-05-01T09:00:00Z"));
    }
    pods[0]
        .status
        .as_mut()
        .unwrap()
        .conditions
        .as_mut()
        .unwrap()[0]
        .last_transition_time = Some(time("2024-05-01T09:59:50Z"));
    let plan = plan_of(&cs, &pods);
    assert_eq!(plan.requeue_after, Some(Duration::from_secs(21)));
    assert_eq!(plan.status.available_replicas, 4);
    // An in-place update with a grace period requeues after it.
    let cs = cloneset(&rolling(
        &json!({"maxUnavailable": 1, "podUpdatePolicy": "InPlaceIfPossible",
        "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10}}),
    ));
    let old = rollout::pods("oNr- oNr- oNr- oNr- oNr-");
    let plan = plan_in_place(&cs, &old, "nginx:0", false);
    assert_eq!(plan.requeue_after, Some(Duration::from_secs(10)));
}

#[test]
fn preparing_update_as_update_changes_the_scale_diff() {
    // Scale counts the PreparingUpdate pod as updated only with the gate.
    let cs = cloneset(
        &json!({"replicas": 4, "updateStrategy": {"rollingUpdate": {"partition": "90%", "maxUnavailable": 1}}}),
    );
    let pods = pods("oPr- oNr- oNr-");
    assert_eq!(plan_of(&cs, &pods).diff.scale_up_num_old_revision, 0);
    let options = Options::default()
        .with_feature_gates("PreparingUpdateAsUpdate=true")
        .unwrap();
    assert_eq!(
        plan_with(&cs, &pods, &options)
            .diff
            .scale_up_num_old_revision,
        1
    );
}

/// A pod whose in-place update state annotation does not parse is left out (and reported), not a reason to
/// stop the update of every other pod (upstream stops the whole CloneSet's update there).
#[test]
fn a_pod_with_an_unreadable_in_place_state_is_skipped() {
    let cs = cloneset(&rolling(
        &json!({"maxUnavailable": 2, "podUpdatePolicy": "InPlaceIfPossible"}),
    ));
    let mut pods = pods("oNr- oNr- oNr- oNr- oNr-");
    pods[0]
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(
            kruise_api::keys::inplace::STATE_ANNOTATION.to_owned(),
            // Cut short: it still says there is a next batch, so the refresh reads it.
            r#"{"revision":"old_rev","nextContainerImages":{"c":"#.to_owned(),
        );
    let plan = plan_in_place(&cs, &pods, "nginx:0", false);
    assert!(plan.stopped.is_none(), "{:?}", plan.stopped);
    assert_eq!(
        summary(&plan, &pods),
        ["updateInPlace p1 update", "updateInPlace p2 update"]
    );
    assert_eq!(plan.skipped.len(), 1);
    assert_eq!(plan.skipped[0].pod, 0);
    assert!(
        plan.skipped[0]
            .error
            .to_string()
            .contains("apps.kruise.io/inplace-update-state"),
        "{}",
        plan.skipped[0].error
    );
    assert!(
        !plan
            .status
            .conditions
            .iter()
            .any(|c| c.type_ == CloneSetConditionType::FailedUpdate)
    );
}
