//! Update strategy (`UpdateSidecarSet`), state consistency (`IsPodStateConsistent`) and status: the planner's
//! upgrade step, table by table.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::needless_pass_by_value,
    clippy::type_complexity
)]

use crate::support;

use std::collections::BTreeSet;

use crate::support::facts_plan::plan;
use crate::support::{annotation, image_of, inject, later, running, sidecarset};
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::SidecarSet;
use kruise_api::keys::sidecarset as keys;
use kruise_inplace::Subresource;
use kruise_sidecar::consistency::{self, is_pod_state_consistent};
use kruise_sidecar::{PlanInput, Reason, Step};
use serde_json::json;

fn log_set(image: &str, update_strategy: serde_json::Value) -> SidecarSet {
    sidecarset(json!({
        "metadata": {"name": "log", "resourceVersion": "7"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "containers": [{"name": "agent", "image": image}],
                 "updateStrategy": update_strategy}
    }))
}

fn web_pod(name: &str, labels: serde_json::Value) -> Pod {
    let mut all = json!({"app": "web"});
    for (k, v) in labels.as_object().unwrap() {
        all[k] = v.clone();
    }
    support::pod(json!({
        "metadata": {"name": name, "namespace": "ns", "labels": all,
                     "creationTimestamp": "2024-01-01T00:00:00Z"},
        "spec": {"nodeName": "n1", "containers": [{"name": "main", "image": "web:1"}]}
    }))
}

/// `count` running pods injected with `set`.
fn fleet(set: &SidecarSet, count: usize) -> Vec<Pod> {
    (0..count)
        .map(|n| {
            running(
                &inject(
                    &web_pod(&format!("p{n}"), json!({})),
                    std::slice::from_ref(set),
                )
                .pod,
            )
        })
        .collect()
}

fn run(set: &SidecarSet, pods: &[Pod]) -> kruise_sidecar::Plan {
    plan(&PlanInput {
        sidecarset: set,
        pods,
        revisions: &[],
        revision_namespace: "kruise-system",
        now: later(60),
    })
    .unwrap()
}

fn upgraded(plan: &kruise_sidecar::Plan) -> Vec<usize> {
    plan.actions
        .iter()
        .filter(|a| a.reason == Reason::Upgrade)
        .map(|a| a.pod)
        .collect()
}

#[test]
fn seed_cold_upgrade_of_sidecar1() {
    let v1 = support::sidecarset_fixture("sidecarset-log.yaml");
    let pod = running(
        &inject(
            &support::pod_fixture("pod-nginx.yaml"),
            std::slice::from_ref(&v1),
        )
        .pod,
    );
    let mut v2 = v1.clone();
    v2.spec.containers[0].container.image = Some("busybox:1.35.0".into());
    kruise_sidecar::hash::annotate(&mut v2).unwrap();

    let pods = [pod];
    let result = run(&v2, &pods);
    assert_eq!(result.step, Step::Upgrade);
    assert_eq!(result.matched, [0]);
    assert_eq!(
        (
            result.status.matched_pods,
            result.status.updated_pods,
            result.status.ready_pods
        ),
        (1, 0, 1)
    );
    let action = &result.actions[0];
    assert_eq!(action.reason, Reason::Upgrade);
    let after = &action.outcome.pod;
    assert_eq!(image_of(after, "sidecar1"), "busybox:1.35.0");
    assert_eq!(image_of(after, "app"), "nginx:1.7.9");
    let new_hash = kruise_sidecar::hash::recorded_or_computed(&v2)
        .unwrap()
        .hash;
    assert_eq!(
        kruise_sidecar::records::recorded_hash(after, "test-sidecarset"),
        new_hash
    );
    assert_eq!(
        annotation(after, keys::INPLACE_UPDATE_STATE_ANNOTATION).unwrap(),
        format!(
            r#"{{"test-sidecarset":{{"revision":"{new_hash}","updateTimestamp":"2024-05-01T10:01:00Z","lastContainerStatuses":{{"sidecar1":{{"imageID":"{}"}}}}}}}}"#,
            support::image_id("busybox")
        )
    );
    let condition = after
        .status
        .as_ref()
        .unwrap()
        .conditions
        .as_ref()
        .unwrap()
        .iter()
        .find(|c| c.type_ == keys::UPGRADABLE_CONDITION)
        .unwrap();
    assert_eq!(
        (condition.status.as_str(), condition.message.as_deref()),
        ("True", Some(r#"{"test-sidecarset":true}"#))
    );
    assert!(action.outcome.patch(Subresource::Pod).is_some());
    assert!(action.outcome.patch(Subresource::Status).is_some());

    // Until kubelet reports the new image ID, the pod is updated but not consistent, so not ready.
    let pending = [after.clone()];
    let status = run(&v2, &pending).status;
    assert_eq!(
        (
            status.updated_pods,
            status.ready_pods,
            status.updated_ready_pods
        ),
        (1, 0, 0)
    );
    let done = [running(after)];
    let result = run(&v2, &done);
    assert_eq!(
        (
            result.status.updated_pods,
            result.status.ready_pods,
            result.status.updated_ready_pods
        ),
        (1, 1, 1)
    );
    assert_eq!(result.step, Step::Finished);
    assert!(result.actions.is_empty());
}

#[test]
fn max_unavailable_table() {
    let v1 = log_set("agent:1", json!({}));
    let pods = fleet(&v1, 5);
    let cases = [
        (json!({}), 1),
        (json!({"maxUnavailable": 2}), 2),
        (json!({"maxUnavailable": "50%"}), 3),
        (json!({"maxUnavailable": "1%"}), 1),
        (json!({"maxUnavailable": "12.5%"}), 0),
        (json!({"maxUnavailable": 9}), 5),
    ];
    for (strategy, expected) in cases {
        let mut v2 = log_set("agent:2", strategy.clone());
        if strategy.get("maxUnavailable").is_none() {
            v2.spec.update_strategy.max_unavailable = None;
        }
        assert_eq!(upgraded(&run(&v2, &pods)).len(), expected, "{strategy}");
    }
}

#[test]
fn partition_keeps_pods_among_the_not_yet_updated() {
    let v1 = log_set("agent:1", json!({}));
    let pods = fleet(&v1, 5);
    let cases = [
        (json!({"partition": 2, "maxUnavailable": 5}), 3),
        (json!({"partition": "40%", "maxUnavailable": 5}), 3),
        (json!({"partition": "41%", "maxUnavailable": 5}), 2),
        (json!({"partition": "100%", "maxUnavailable": 5}), 0),
        (json!({"partition": "99%", "maxUnavailable": 5}), 1),
        (json!({"partition": 5, "maxUnavailable": 5}), 0),
    ];
    for (strategy, expected) in cases {
        assert_eq!(
            upgraded(&run(&log_set("agent:2", strategy.clone()), &pods)).len(),
            expected,
            "{strategy}"
        );
    }
    // Partition counts among the not-yet-updated: with 2 of 5 updated, partition 2 leaves 1 to upgrade.
    let v2 = log_set("agent:2", json!({"partition": 2, "maxUnavailable": 5}));
    let mut mixed = pods.clone();
    for pod in mixed.iter_mut().take(2) {
        let after = kruise_sidecar::upgrade::upgrade_pod(
            &v2,
            &kruise_sidecar::hash::recorded_or_computed(&v2).unwrap(),
            pod,
            later(1),
        )
        .unwrap();
        *pod = running(&after);
    }
    assert_eq!(upgraded(&run(&v2, &mixed)).len(), 1);
}

#[test]
fn not_ready_pods_are_free_and_updated_not_ready_pods_use_the_budget() {
    let v1 = log_set("agent:1", json!({}));
    let mut pods = fleet(&v1, 4);
    support::set_ready(&mut pods[3], false);
    support::set_ready(&mut pods[2], false);
    let v2 = log_set("agent:2", json!({"maxUnavailable": 1}));
    let chosen = upgraded(&run(&v2, &pods));
    assert_eq!(
        chosen.len(),
        3,
        "two not-ready pods plus one within the budget: {chosen:?}"
    );
    assert!(chosen.contains(&2) && chosen.contains(&3));

    // An updated pod that is not ready yet uses the whole budget.
    let mut busy = fleet(&v1, 3);
    let hashes = kruise_sidecar::hash::recorded_or_computed(&v2).unwrap();
    busy[0] = kruise_sidecar::upgrade::upgrade_pod(&v2, &hashes, &busy[0], later(1)).unwrap();
    assert!(upgraded(&run(&v2, &busy)).is_empty());
}

#[test]
fn order_active_pods_priority_and_scatter() {
    let v1 = log_set("agent:1", json!({}));
    let labelled = |name: &str, labels: serde_json::Value| {
        running(&inject(&web_pod(name, labels), std::slice::from_ref(&v1)).pod)
    };
    // ActivePods: the pod that is not ready goes first.
    let mut pods = vec![labelled("a", json!({})), labelled("b", json!({}))];
    support::set_ready(&mut pods[1], false);
    pods[1].status.as_mut().unwrap().phase = Some("Pending".into());
    let v2 = log_set("agent:2", json!({"maxUnavailable": 5}));
    assert_eq!(upgraded(&run(&v2, &pods)), [1, 0]);

    // Priority: the heavier pod first.
    let pods = vec![
        labelled("a", json!({})),
        labelled("b", json!({"tier": "edge"})),
    ];
    let weighted = log_set(
        "agent:2",
        json!({"maxUnavailable": 5, "priorityStrategy": {"weightPriority": [
        {"weight": 50, "matchSelector": {"matchLabels": {"tier": "edge"}}}]}}),
    );
    assert_eq!(upgraded(&run(&weighted, &pods)), [1, 0]);

    // Scatter with `*`: zone values spread over the batch.
    let zones = ["z1", "z1", "z1", "z2", "z2", "z2"];
    let pods: Vec<Pod> = zones
        .iter()
        .enumerate()
        .map(|(n, zone)| labelled(&format!("p{n}"), json!({"zone": zone})))
        .collect();
    let scattered = log_set(
        "agent:2",
        json!({"maxUnavailable": 6, "scatterStrategy": [{"key": "zone", "value": "*"}]}),
    );
    let order = upgraded(&run(&scattered, &pods));
    assert_eq!(order.len(), 6);
    let sequence: Vec<&str> = order.iter().map(|i| zones[*i]).collect();
    assert!(
        sequence.windows(3).all(|w| !(w[0] == w[1] && w[1] == w[2])),
        "{sequence:?}"
    );
    let terms = kruise_sidecar::upgrade::expand_scatter_terms(
        &scattered.spec.update_strategy.scatter_strategy,
        &pods,
    );
    let values: Vec<_> = terms.iter().map(|t| t.value.as_str()).collect();
    assert_eq!(values, ["z1", "z2"]);
}

#[test]
fn selector_limits_candidates() {
    let v1 = log_set("agent:1", json!({}));
    let pods = vec![
        running(&inject(&web_pod("a", json!({})), std::slice::from_ref(&v1)).pod),
        running(
            &inject(
                &web_pod("b", json!({"canary.release": "true"})),
                std::slice::from_ref(&v1),
            )
            .pod,
        ),
    ];
    let v2 = log_set(
        "agent:2",
        json!({"maxUnavailable": 5, "selector": {"matchLabels": {"canary.release": "true"}}}),
    );
    assert_eq!(upgraded(&run(&v2, &pods)), [1]);
}

#[test]
fn not_upgradable_pods_get_the_condition() {
    let v1 = log_set("agent:1", json!({}));
    let pods = fleet(&v1, 1);
    let changed = sidecarset(json!({
        "metadata": {"name": "log"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "containers": [{"name": "agent", "image": "agent:2", "args": ["--new"]}]}
    }));
    let result = run(&changed, &pods);
    assert_eq!(result.actions.len(), 1);
    assert_eq!(result.actions[0].reason, Reason::NotUpgradable);
    let after = &result.actions[0].outcome.pod;
    let condition = after
        .status
        .as_ref()
        .unwrap()
        .conditions
        .as_ref()
        .unwrap()
        .iter()
        .find(|c| c.type_ == keys::UPGRADABLE_CONDITION)
        .unwrap();
    assert_eq!(condition.status, "False");
    assert_eq!(condition.reason.as_deref(), Some("UpdateImmutableField"));
    assert_eq!(after.spec, pods[0].spec, "nothing else changes");
    assert!(result.actions[0].outcome.patch(Subresource::Pod).is_none());
    // Once recorded, nothing more to write.
    assert!(
        run(&changed, std::slice::from_ref(after))
            .actions
            .is_empty()
    );
}

#[test]
fn steps_not_update_paused_finished() {
    let v1 = log_set("agent:1", json!({}));
    let pods = fleet(&v1, 2);
    assert_eq!(run(&v1, &pods).step, Step::Finished);
    assert_eq!(
        run(&log_set("agent:2", json!({"type": "NotUpdate"})), &pods).step,
        Step::NotUpdate
    );
    let paused = run(&log_set("agent:2", json!({"paused": true})), &pods);
    assert_eq!(paused.step, Step::Paused);
    assert!(paused.actions.is_empty());
    assert_eq!(paused.status.matched_pods, 2);
}

#[test]
fn matched_pods_need_the_injected_list_and_every_sidecar() {
    let v1 = log_set("agent:1", json!({}));
    let injected = fleet(&v1, 1).remove(0);
    let mut unlisted = injected.clone();
    unlisted
        .metadata
        .annotations
        .as_mut()
        .unwrap()
        .remove(keys::INJECTED_LIST_ANNOTATION);
    let mut missing = injected.clone();
    missing
        .spec
        .as_mut()
        .unwrap()
        .containers
        .retain(|c| c.name != "agent");
    let mut other_app = injected.clone();
    other_app.metadata.labels = Some([("app".to_owned(), "db".to_owned())].into());
    let mut finished = injected.clone();
    finished.status.as_mut().unwrap().phase = Some("Succeeded".into());
    let pods = [injected, unlisted, missing, other_app, finished];
    assert_eq!(kruise_sidecar::status::matched_pods(&v1, &pods), [0]);
}

#[test]
fn state_consistency_table() {
    let digest = "sha256:98ad9d1a2be345201bb0709b0d38655eb1b370145c7d94ca1fe9c421f76e245a";
    let set = log_set("agent:1", json!({}));
    let base = fleet(&set, 1).remove(0);
    let with = |image: &str, image_id: &str, extra_status: bool| {
        let mut pod = base.clone();
        pod.spec
            .as_mut()
            .unwrap()
            .containers
            .iter_mut()
            .find(|c| c.name == "agent")
            .unwrap()
            .image = Some(image.into());
        let statuses = pod
            .status
            .as_mut()
            .unwrap()
            .container_statuses
            .as_mut()
            .unwrap();
        statuses
            .iter_mut()
            .find(|s| s.name == "agent")
            .unwrap()
            .image_id = image_id.into();
        if extra_status {
            statuses.pop();
        }
        pod
    };
    let all = BTreeSet::new();
    let cases = [
        (
            with(
                &format!("agent@{digest}"),
                &format!("docker-pullable://agent@{digest}"),
                false,
            ),
            true,
        ),
        (
            with(
                &format!("agent@{digest}"),
                "agent@sha256:0000000000000000000000000000000000000000000000000000000000000000",
                false,
            ),
            false,
        ),
        (with("agent:1", "anything", false), true),
        (with("agent:1", "anything", true), false),
    ];
    for (pod, expected) in cases {
        assert_eq!(
            is_pod_state_consistent(&set, &pod, &all),
            expected,
            "{:?}",
            pod.spec.as_ref().unwrap().containers
        );
    }
    // With an in-place record: the old image ID still running means not consistent.
    let v2 = log_set("agent:2", json!({}));
    let hashes = kruise_sidecar::hash::recorded_or_computed(&v2).unwrap();
    let upgraded = kruise_sidecar::upgrade::upgrade_pod(&v2, &hashes, &base, later(1)).unwrap();
    assert!(!is_pod_state_consistent(&v2, &upgraded, &all));
    assert!(is_pod_state_consistent(&v2, &running(&upgraded), &all));
    let upgradability = consistency::upgradability(&v2, &hashes, &base);
    assert!(upgradability.can_upgrade && upgradability.consistent);
}

#[test]
fn revisions_and_status_come_together() {
    let v1 = log_set("agent:1", json!({}));
    let pods = fleet(&v1, 2);
    let result = run(&v1, &pods);
    let kruise_sidecar::revision::LatestRevision::Create(revision) = &result.revisions.latest
    else {
        panic!("expected a new revision");
    };
    assert_eq!(
        result.status.latest_revision,
        revision.metadata.name.clone().unwrap()
    );
    assert_eq!(result.status.collision_count, Some(0));
    assert_eq!(result.status.updated_ready_pods, 2);
}
