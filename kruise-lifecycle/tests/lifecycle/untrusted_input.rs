//! What kruise-lifecycle reads from objects that users and other controllers write, driven with arbitrary and
//! structure-aware values: a pod's lifecycle state label, timestamp annotation and `KruisePodReady` condition
//! message through every workload decision, and ContainerRecreateRequests (with a random field replaced by any
//! JSON value, the synced-statuses and unready-acquired annotations edited) through the webhook, controller
//! and daemon decisions. Nothing panics, and every refusal says why. `KRUISE_FUZZ_CASES` sets the number of
//! cases (see `support::fuzz_cases`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)] // test code

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::ContainerRecreateRequest;
use kruise_api::lifecycle::Lifecycle;
use kruise_lifecycle::container_recreate::{controller, daemon, webhook};
use kruise_lifecycle::{
    DeleteDecision, LifecycleStateType, RefreshInput, Workload, WorkloadKind, not_ready,
};
use proptest::prelude::*;
use proptest::sample::{Index, select};
use serde_json::{Value, json};

use crate::support::{KRUISE_POD_READY, STATE, TIMESTAMP, now};
use kruise_fuzz_inputs::fuzz_cases;
use kruise_fuzz_inputs::json_values::{json_value, replaced};
use kruise_fuzz_inputs::text_edits::edited;

fn state_label() -> impl Strategy<Value = String> {
    prop_oneof![
        select(LifecycleStateType::KNOWN_VALUES)
            .prop_map(str::to_owned)
            .prop_flat_map(edited),
        any::<String>(),
    ]
}

fn not_ready_message() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(
            (
                select(&["Lifecycle", "ContainerRecreateRequest", ""][..]),
                select(&["preDeleteHook", "preUpdateHook", "default/crr-1", "é"][..]),
            ),
            0..3,
        )
        .prop_map(|entries| {
            let entries: Vec<Value> = entries
                .into_iter()
                .map(|(agent, key)| json!({"userAgent": agent, "key": key}))
                .collect();
            Value::Array(entries).to_string()
        })
        .prop_flat_map(edited),
        any::<String>(),
    ]
}

fn lifecycle_pod(state: &str, timestamp: &str, message: &str, hook_label: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": "web-0", "namespace": "default",
            "labels": {STATE: state, "example.com/hook": hook_label, "controller-revision-hash": "r"},
            "annotations": {TIMESTAMP: timestamp},
            "finalizers": ["example.com/hold"]},
        "spec": {"readinessGates": [{"conditionType": KRUISE_POD_READY}],
            "containers": [{"name": "app", "image": "busybox"}]},
        "status": {"phase": "Running",
            "conditions": [{"type": KRUISE_POD_READY, "status": "False", "message": message},
                           {"type": "Ready", "status": "True"}]}
    }))
    .unwrap()
}

fn lifecycle(mark: bool) -> Lifecycle {
    serde_json::from_value(json!({
        "preDelete": {"labelsHandler": {"example.com/hook": "true"}, "markPodNotReady": mark},
        "inPlaceUpdate": {"finalizersHandler": ["example.com/hold"], "markPodNotReady": mark},
        "preNormal": {"labelsHandler": {"example.com/hook": ""}}
    }))
    .unwrap()
}

/// A ContainerRecreateRequest as users write it (and the manager syncs it), as JSON.
fn crr_json(snapshots: &str, unready: &str) -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "ContainerRecreateRequest",
        "metadata": {"name": "restart", "namespace": "default",
            "labels": {"crr.apps.kruise.io/pod-uid": "u-1", "crr.apps.kruise.io/node-name": "node-0"},
            "annotations": {"crr.apps.kruise.io/sync-container-statuses": snapshots,
                "crr.apps.kruise.io/unready-acquired": unready},
            "finalizers": ["apps.kruise.io/pod-not-ready"]},
        "spec": {"podName": "web", "containers": [{"name": "app",
                "preStop": {"exec": {"command": ["sh"]}}, "ports": [{"containerPort": 80}],
                "statusContext": {"containerID": "containerd://c1", "restartCount": 1}}],
            "strategy": {"failurePolicy": "Fail", "orderedRecreate": true, "unreadyGracePeriodSeconds": 3,
                "minStartedSeconds": 2, "terminationGracePeriodSeconds": 30, "forceRecreate": false},
            "activeDeadlineSeconds": 300, "ttlSecondsAfterFinished": 60},
        "status": {"phase": "Recreating", "containerRecreateStates": [{"name": "app", "phase": "Pending"}]}
    })
}

fn crr_pod() -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "default", "uid": "u-1"},
        "spec": {"nodeName": "node-0", "terminationGracePeriodSeconds": 20,
            "readinessGates": [{"conditionType": KRUISE_POD_READY}],
            "containers": [{"name": "app", "image": "busybox", "ports": [{"containerPort": 80}]}]},
        "status": {"phase": "Running", "containerStatuses": [{"name": "app", "containerID": "containerd://c1",
            "restartCount": 2, "ready": true, "image": "busybox", "imageID": ""}]}
    }))
    .unwrap()
}

proptest! {
    #![proptest_config(fuzz_cases::config())]

    #[test]
    fn pod_lifecycle_values(
        state in state_label(),
        timestamp in prop_oneof![Just("2024-05-01T10:00:00+08:00".to_owned()).prop_flat_map(edited), any::<String>()],
        message in not_ready_message(),
        hook_label in select(&["true", "", "false"][..]),
        kind in select(&[WorkloadKind::CloneSet, WorkloadKind::StatefulSet, WorkloadKind::DaemonSet][..]),
        mark in any::<bool>(),
        update_completed in any::<bool>(),
        at_update_revision in any::<bool>(),
    ) {
        let pod = lifecycle_pod(&state, &timestamp, &message, hook_label);
        let hooks = lifecycle(mark);
        let workload = Workload::new(kind, Some(&hooks));
        let now = now();
        let parses = not_ready::entries(&pod).is_ok();
        // A refusal (a state that does not allow the step, a message that does not parse) names the pod.
        let check = |result: Result<(), kruise_lifecycle::Error>| -> Result<(), TestCaseError> {
            if let Err(error) = result {
                prop_assert!(error.to_string().contains("default/web-0"), "{}", error);
            }
            Ok(())
        };
        let _ = workload.created(&pod, &now).apply(&pod);
        check(workload.scheduled(&pod, &now).map(|transition| { let _ = transition.apply(&pod); }))?;
        check(workload.update_wanted(&pod, &now).map(|_| ()))?;
        check(workload.hook_rearmed(&pod, &now).map(|transition| { let _ = transition.apply(&pod); }))?;
        check(workload.refresh(&pod, RefreshInput { update_completed, at_update_revision }, &now)
            .map(|transition| { let _ = transition.apply(&pod); }))?;
        check(workload.delete_wanted(&pod, &now).map(|decision| {
            if let DeleteDecision::Hold(transition) = decision { let _ = transition.apply(&pod); }
        }))?;
        check(workload.cancel_delete(&pod, &now).map(|_| ()))?;
        let entry = not_ready::pre_delete_entry();
        // The not-ready keys fail only on a message that does not parse.
        let added = not_ready::add_not_ready_key(&pod, &entry, now.timestamp()).map(|_| ());
        prop_assert_eq!(added.is_ok(), parses);
        check(added)?;
        let removed = not_ready::remove_not_ready_key(&pod, &entry, now.timestamp()).map(|_| ());
        prop_assert_eq!(removed.is_ok(), parses);
        check(removed)?;
        let label = kruise_lifecycle::state::state(&pod);
        prop_assert_eq!(label.map(|state| state.as_str().to_owned()), Some(state).filter(|state| !state.is_empty()));
    }

    #[test]
    fn container_recreate_requests(
        snapshots in prop_oneof![
            Just(r#"[{"name":"app","ready":true,"restartCount":2,"containerID":"containerd://c1"}]"#.to_owned())
                .prop_flat_map(edited),
            any::<String>(),
        ],
        unready in prop_oneof![Just("2024-05-01T10:00:00Z".to_owned()).prop_flat_map(edited), any::<String>()],
        at in any::<Index>(),
        value in json_value(),
        replace in any::<bool>(),
        node_labels in prop::option::of(prop::collection::btree_map("[a-z./]{0,12}", "[a-z-]{0,8}", 0..3)),
    ) {
        let mut document = crr_json(&snapshots, &unready);
        if replace {
            document = replaced(document, at, value);
        }
        let Ok(crr) = serde_json::from_value::<ContainerRecreateRequest>(document) else {
            return Ok(());
        };
        let pod = crr_pod();
        let now: Timestamp = "2024-05-01T10:00:01Z".parse().unwrap();
        let _ = daemon::before_manage(&crr, now);
        let _ = daemon::snapshots(&crr);
        let _ = controller::decide(&crr, Some(&pod), now);
        let _ = controller::decide(&crr, None, now);
        prop_assert!(webhook::check_update(&crr, &crr).is_ok());
        for pod in [Some(&pod), None] {
            let mut defaulted = crr.clone();
            match webhook::default_on_create(&mut defaulted, pod, node_labels.as_ref()) {
                Ok(()) => prop_assert!(serde_json::to_value(&defaulted).is_ok()),
                Err(rejection) => {
                    prop_assert_eq!(rejection.code, 400);
                    prop_assert!(!rejection.message.is_empty());
                }
            }
        }
        let mut changed = crr.clone();
        changed.spec.pod_name.push('x');
        prop_assert_eq!(webhook::check_update(&crr, &changed).unwrap_err().code, 403);
    }
}
