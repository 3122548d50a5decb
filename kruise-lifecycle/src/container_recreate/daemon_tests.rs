#![allow(clippy::needless_pass_by_value)] // table helpers take owned JSON values

use kruise_api::apps::v1beta1::ContainerRecreateRequestStatus;
use serde_json::{Value, json};

use super::*;
use crate::container_recreate::runtime_view::ContainerView;

const CREATED: &str = "2024-05-01T10:00:00Z";

fn ts(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn ns(text: &str) -> i64 {
    i64::try_from(ts(text).as_nanosecond()).unwrap()
}

/// A request for containers `a` and `b` (status contexts `containerd://a0` and `containerd://b0`, restart 0).
fn crr(strategy: Value, status: Value) -> ContainerRecreateRequest {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "ContainerRecreateRequest",
        "metadata": {"name": "r", "namespace": "ns", "creationTimestamp": CREATED},
        "spec": {"podName": "p", "strategy": strategy, "containers": [
            {"name": "a", "statusContext": {"containerID": "containerd://a0", "restartCount": 0}},
            {"name": "b", "statusContext": {"containerID": "containerd://b0", "restartCount": 0}},
        ]},
        "status": status,
    }))
    .unwrap()
}

fn running(name: &str, id: &str, restarts: i32, started: &str) -> ContainerView {
    ContainerView {
        name: name.into(),
        id: id.into(),
        state: RuntimeState::Running,
        restart_count: restarts,
        created_at_ns: ns(started),
        started_at_ns: ns(started),
        ..ContainerView::default()
    }
}

fn view(containers: Vec<ContainerView>) -> PodView {
    PodView {
        runtime: "containerd".into(),
        containers,
    }
}

/// Both containers as they were when the request was created.
fn untouched() -> PodView {
    view(vec![
        running("a", "a0", 0, "2024-05-01T09:00:00Z"),
        running("b", "b0", 0, "2024-05-01T09:00:00Z"),
    ])
}

fn st(name: &str, phase: Phase, killed: bool) -> RecreateState {
    state(name, phase, killed, "")
}

#[test]
fn pick_orders_by_phase_weight_then_age() {
    let make = |name: &str, created: &str, status: Value| -> ContainerRecreateRequest {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "ContainerRecreateRequest",
            "metadata": {"name": name, "namespace": "ns", "creationTimestamp": created},
            "spec": {"podName": "p", "containers": [{"name": "a"}]},
            "status": status,
        }))
        .unwrap()
    };
    let fresh = make("fresh", "2024-05-01T10:00:03Z", json!({"phase": ""}));
    let older_fresh = make("older-fresh", "2024-05-01T10:00:01Z", json!({"phase": ""}));
    let pending = make(
        "pending",
        "2024-05-01T10:00:05Z",
        json!({"phase": "Pending"}),
    );
    let recreating = make(
        "recreating",
        "2024-05-01T10:00:09Z",
        json!({"phase": "Recreating"}),
    );
    let done = make(
        "done",
        "2024-05-01T09:00:00Z",
        json!({"phase": "Completed", "completionTime": "2024-05-01T09:01:00Z"}),
    );
    let all = [&fresh, &older_fresh, &pending, &recreating, &done];
    assert_eq!(
        pick(&all),
        Pick {
            picked: Some(3),
            to_pending: vec![1, 0]
        },
        "Recreating first; the completed one is skipped; only phase-less ones become Pending"
    );
    assert_eq!(
        pick(&[&fresh, &older_fresh]),
        Pick {
            picked: Some(1),
            to_pending: vec![0]
        }
    );
    assert_eq!(pick(&[&done]), Pick::default());
    assert_eq!(
        [
            Phase::Completed,
            Phase::Recreating,
            Phase::Pending,
            Phase::Failed
        ]
        .map(|p| phase_weight(&p)),
        [1, 2, 3, 4]
    );
}

#[test]
fn before_manage_sets_recreating_then_honours_the_unready_grace() {
    let now = ts("2024-05-01T10:00:10Z");
    assert_eq!(
        before_manage(&crr(json!({}), json!({})), now),
        Step::StartRecreating
    );
    assert_eq!(
        before_manage(&crr(json!({}), json!({"phase": "Pending"})), now),
        Step::StartRecreating
    );
    assert_eq!(
        before_manage(&crr(json!({}), json!({"phase": "Recreating"})), now),
        Step::Manage
    );
    let graceful = json!({"unreadyGracePeriodSeconds": 5});
    assert_eq!(
        before_manage(&crr(graceful.clone(), json!({"phase": "Recreating"})), now),
        Step::WaitForUnreadyAcquired
    );
    let acquired = |at: &str| {
        json!({"phase": "Recreating", "conditions": [{"type": "PreRecreateGrace", "status": "True",
            "reason": "PreRecreateGrace", "message": "", "lastTransitionTime": at}]})
    };
    assert_eq!(
        before_manage(
            &crr(graceful.clone(), acquired("2024-05-01T10:00:08Z")),
            now
        ),
        Step::WaitForGrace(Duration::from_secs(3))
    );
    assert_eq!(
        before_manage(
            &crr(graceful.clone(), acquired("2024-05-01T10:00:05Z")),
            now
        ),
        Step::Manage
    );

    let mut annotated = crr(graceful.clone(), json!({"phase": "Recreating"}));
    annotated.metadata.annotations = Some(
        [(
            keys::UNREADY_ACQUIRED_KEY.to_owned(),
            "2024-05-01T10:00:09Z".to_owned(),
        )]
        .into(),
    );
    assert_eq!(
        before_manage(&annotated, now),
        Step::WaitForGrace(Duration::from_secs(4)),
        "the v1alpha1 annotation of an older manager counts too"
    );
    annotated.metadata.annotations = Some(
        [(
            keys::UNREADY_ACQUIRED_KEY.to_owned(),
            "yesterday".to_owned(),
        )]
        .into(),
    );
    assert_eq!(
        before_manage(&annotated, now),
        Step::Complete("failed to parse unready time yesterday".into())
    );
}

#[test]
fn current_states_table() {
    let now = ts("2024-05-01T10:00:20Z");
    let recreating = json!({"phase": "Recreating"});
    let synced = |id: &str, ready: bool| {
        json!({"phase": "Recreating", "containerStatusSnapshot": [
            {"name": "a", "ready": ready, "restartCount": 1, "containerID": id}]})
    };
    let exited = ContainerView {
        state: RuntimeState::Exited,
        ..running("a", "a0", 0, "2024-05-01T09:00:00Z")
    };
    let restarted = running("a", "a1", 1, "2024-05-01T10:00:05Z");
    let b = running("b", "b0", 0, "2024-05-01T09:00:00Z");
    let cases: Vec<(&str, ContainerRecreateRequest, PodView, RecreateState)> = vec![
        (
            "not on the node",
            crr(json!({}), recreating.clone()),
            view(vec![b.clone()]),
            state("a", Phase::Pending, false, "not found container on Node"),
        ),
        (
            "exited",
            crr(json!({}), recreating.clone()),
            view(vec![exited, b.clone()]),
            st("a", Phase::Recreating, false),
        ),
        (
            "untouched",
            crr(json!({}), recreating.clone()),
            untouched(),
            st("a", Phase::Pending, false),
        ),
        (
            "recreated, not yet synced",
            crr(json!({}), recreating.clone()),
            view(vec![restarted.clone(), b.clone()]),
            st("a", Phase::Recreating, false),
        ),
        (
            "recreated and ready",
            crr(json!({}), synced("containerd://a1", true)),
            view(vec![restarted.clone(), b.clone()]),
            st("a", Phase::Succeeded, false),
        ),
        (
            "recreated but not ready",
            crr(json!({}), synced("containerd://a1", false)),
            view(vec![restarted.clone(), b.clone()]),
            st("a", Phase::Recreating, false),
        ),
        (
            "snapshot of an older incarnation",
            crr(json!({}), synced("containerd://a0", true)),
            view(vec![restarted.clone(), b.clone()]),
            st("a", Phase::Recreating, false),
        ),
        (
            "minStartedSeconds not reached (15 s of 30)",
            crr(
                json!({"minStartedSeconds": 30}),
                synced("containerd://a1", true),
            ),
            view(vec![restarted.clone(), b.clone()]),
            st("a", Phase::Recreating, false),
        ),
        (
            "minStartedSeconds reached (15 s of 10)",
            crr(
                json!({"minStartedSeconds": 10}),
                synced("containerd://a1", true),
            ),
            view(vec![restarted.clone(), b.clone()]),
            st("a", Phase::Succeeded, false),
        ),
        (
            "force recreate, not killed yet",
            crr(
                json!({"forceRecreate": true}),
                synced("containerd://a1", true),
            ),
            view(vec![restarted.clone(), b.clone()]),
            st("a", Phase::Pending, false),
        ),
        (
            "force recreate, killed",
            crr(
                json!({"forceRecreate": true}),
                json!({"phase": "Recreating", "containerRecreateStates": [
                    {"name": "a", "phase": "Recreating", "isKilled": true}]}),
            ),
            view(vec![restarted.clone(), b.clone()]),
            st("a", Phase::Recreating, true),
        ),
        (
            "a higher restart count with the same ID",
            crr(json!({}), recreating.clone()),
            view(vec![
                running("a", "a0", 3, "2024-05-01T09:00:00Z"),
                b.clone(),
            ]),
            st("a", Phase::Recreating, false),
        ),
        (
            "started after creation with the same ID",
            crr(json!({}), recreating.clone()),
            view(vec![
                running("a", "a0", 0, "2024-05-01T10:00:01Z"),
                b.clone(),
            ]),
            st("a", Phase::Recreating, false),
        ),
        (
            "started within the creation second (upstream would say recreated)",
            crr(json!({}), recreating.clone()),
            view(vec![
                running("a", "a0", 0, "2024-05-01T10:00:00.700Z"),
                b.clone(),
            ]),
            st("a", Phase::Pending, false),
        ),
        (
            "a final state stays",
            crr(
                json!({}),
                json!({"phase": "Recreating", "containerRecreateStates": [
                    {"name": "a", "phase": "Failed", "message": "kill container error: boom"}]}),
            ),
            untouched(),
            state("a", Phase::Failed, false, "kill container error: boom"),
        ),
    ];
    for (what, request, pod, expected) in cases {
        let got = current_states(&request, &pod, now);
        assert_eq!(got.first(), Some(&expected), "{what}");
        assert_eq!(got.len(), 2, "{what}");
    }
}

fn with_states(strategy: Value, list: &[RecreateState]) -> ContainerRecreateRequest {
    let mut request = crr(strategy, json!({"phase": "Recreating"}));
    request.status = Some(ContainerRecreateRequestStatus {
        phase: Phase::Recreating,
        container_recreate_states: list.to_vec(),
        ..ContainerRecreateRequestStatus::default()
    });
    request
}

#[test]
fn decide_writes_new_states_before_acting() {
    let now = ts("2024-05-01T10:00:20Z");
    let request = crr(json!({}), json!({"phase": "Recreating"}));
    assert_eq!(
        decide(&request, &untouched(), &BTreeMap::new(), now),
        Decision::Patch(vec![
            st("a", Phase::Pending, false),
            st("b", Phase::Pending, false)
        ])
    );
}

#[test]
fn one_kill_per_pass_in_order() {
    let now = ts("2024-05-01T10:00:20Z");
    let pending = [
        st("a", Phase::Pending, false),
        st("b", Phase::Pending, false),
    ];
    for strategy in [json!({}), json!({"orderedRecreate": true})] {
        let request = with_states(strategy.clone(), &pending);
        assert_eq!(
            decide(&request, &untouched(), &BTreeMap::new(), now),
            Decision::Kill {
                name: "a".into(),
                container_id: "a0".into(),
                states_if_killed: vec![
                    st("a", Phase::Recreating, true),
                    st("b", Phase::Pending, false)
                ],
            },
            "{strategy}"
        );
    }
    // a is being recreated: unordered goes on to b, ordered waits for a.
    let restarted = view(vec![
        running("a", "a1", 1, "2024-05-01T10:00:05Z"),
        running("b", "b0", 0, "2024-05-01T09:00:00Z"),
    ]);
    let a_recreating = [
        st("a", Phase::Recreating, true),
        st("b", Phase::Pending, false),
    ];
    assert!(matches!(
        decide(&with_states(json!({}), &a_recreating), &restarted, &BTreeMap::new(), now),
        Decision::Kill { ref name, .. } if name == "b"
    ));
    assert_eq!(
        decide(
            &with_states(json!({"orderedRecreate": true}), &a_recreating),
            &restarted,
            &BTreeMap::new(),
            now
        ),
        Decision::Wait(None)
    );
}

#[test]
fn failures_complete_or_are_ignored() {
    let now = ts("2024-05-01T10:00:20Z");
    let pending = [
        st("a", Phase::Pending, false),
        st("b", Phase::Pending, false),
    ];
    let errors = BTreeMap::from([("a".to_owned(), "stop signal".to_owned())]);
    let failed_a = state(
        "a",
        Phase::Failed,
        false,
        "kill container error: stop signal",
    );

    // Fail: the failure is written, and the next pass completes the request without touching b.
    let request = with_states(json!({"failurePolicy": "Fail"}), &pending);
    assert_eq!(
        decide(&request, &untouched(), &errors, now),
        Decision::Patch(vec![failed_a.clone(), st("b", Phase::Pending, false)])
    );
    let request = with_states(
        json!({"failurePolicy": "Fail"}),
        &[failed_a.clone(), pending[1].clone()],
    );
    assert_eq!(
        decide(&request, &untouched(), &BTreeMap::new(), now),
        Decision::Complete(String::new())
    );

    // Ignore: the walk goes on and kills b in the same pass.
    let request = with_states(json!({"failurePolicy": "Ignore"}), &pending);
    assert_eq!(
        decide(&request, &untouched(), &errors, now),
        Decision::Kill {
            name: "b".into(),
            container_id: "b0".into(),
            states_if_killed: vec![failed_a.clone(), st("b", Phase::Recreating, true)],
        }
    );
    let done_b = view(vec![
        running("a", "a0", 0, "2024-05-01T09:00:00Z"),
        running("b", "b1", 1, "2024-05-01T10:00:05Z"),
    ]);
    let request = with_states(
        json!({"failurePolicy": "Ignore"}),
        &[failed_a, st("b", Phase::Succeeded, true)],
    );
    assert_eq!(
        decide(&request, &done_b, &BTreeMap::new(), now),
        Decision::Complete(String::new())
    );
}

#[test]
fn completion_and_min_started_requeue() {
    let now = ts("2024-05-01T10:00:20Z");
    let both = view(vec![
        running("a", "a1", 1, "2024-05-01T10:00:05Z"),
        running("b", "b1", 1, "2024-05-01T10:00:06Z"),
    ]);
    let mut request = with_states(
        json!({"minStartedSeconds": 60}),
        &[
            st("a", Phase::Recreating, true),
            st("b", Phase::Recreating, true),
        ],
    );
    assert_eq!(
        decide(&request, &both, &BTreeMap::new(), now),
        Decision::Wait(Some(Duration::from_secs(60)))
    );
    request.status.as_mut().unwrap().container_recreate_states = vec![
        st("a", Phase::Succeeded, true),
        st("b", Phase::Succeeded, true),
    ];
    assert_eq!(
        decide(&request, &both, &BTreeMap::new(), now),
        Decision::Complete(String::new())
    );
}

#[test]
fn the_runtime_must_be_ours() {
    let now = ts("2024-05-01T10:00:20Z");
    let request = crr(json!({}), json!({"phase": "Recreating"}));
    let mut docker = untouched();
    docker.runtime = "docker".into();
    assert_eq!(
        decide(&request, &docker, &BTreeMap::new(), now),
        Decision::Complete(
            "failed to find runtime service: not found runtime service for containerd in daemon"
                .into()
        )
    );
    let mut no_context = request.clone();
    no_context.spec.containers[1].status_context = None;
    assert_eq!(
        decide(&no_context, &untouched(), &BTreeMap::new(), now),
        Decision::Complete(
            "failed to find runtime service: no statusContext or empty containerID in b container"
                .into()
        )
    );
}

#[test]
fn grace_follows_kubelet() {
    let grace = Grace::of(&crr(
        json!({"terminationGracePeriodSeconds": 10}),
        json!({}),
    ));
    assert_eq!(grace.hook_budget(), Some(Duration::from_secs(10)));
    assert_eq!(grace.stop_timeout(None), 10);
    assert_eq!(grace.stop_timeout(Some(Duration::from_millis(3900))), 7);
    assert_eq!(grace.stop_timeout(Some(Duration::from_secs(9))), 2);
    let zero = Grace::of(&crr(json!({"terminationGracePeriodSeconds": 0}), json!({})));
    assert_eq!((zero.hook_budget(), zero.stop_timeout(None)), (None, 2));
    assert_eq!(Grace::of(&crr(json!({}), json!({}))).seconds, 30);
}

/// What a daemon started again decides from the request and the runtime alone, for every point at which
/// the previous one may have died during a kill of `a` (the kill is recorded between the hook and the stop).
#[test]
fn a_restarted_daemon_resumes_from_the_recorded_kill() {
    let now = ts("2024-05-01T10:00:20Z");
    let not_recorded = [
        st("a", Phase::Pending, false),
        st("b", Phase::Pending, false),
    ];
    let recorded = [
        st("a", Phase::Recreating, true),
        st("b", Phase::Pending, false),
    ];
    let a_restarted = view(vec![
        running("a", "a1", 1, "2024-05-01T10:00:05Z"),
        running("b", "b0", 0, "2024-05-01T09:00:00Z"),
    ]);
    for strategy in [json!({}), json!({"forceRecreate": true})] {
        // Died during the hook: not recorded, not stopped: the kill starts over.
        assert!(
            matches!(
                decide(&with_states(strategy.clone(), &not_recorded), &untouched(), &BTreeMap::new(), now),
                Decision::Kill { ref name, ref container_id, .. } if name == "a" && container_id == "a0"
            ),
            "{strategy}"
        );
        // Died during the stop, which never took effect: the same incarnation is stopped again.
        assert_eq!(
            decide(
                &with_states(strategy.clone(), &recorded),
                &untouched(),
                &BTreeMap::new(),
                now
            ),
            Decision::Patch(vec![
                st("a", Phase::Pending, true),
                st("b", Phase::Pending, false)
            ]),
            "{strategy}"
        );
        // Died during the stop, which took effect, and kubelet restarted the container: the new
        // incarnation is the recreated one, never killed again (not even with forceRecreate); b is next.
        assert!(
            matches!(
                decide(&with_states(strategy.clone(), &recorded), &a_restarted, &BTreeMap::new(), now),
                Decision::Kill { ref name, .. } if name == "b"
            ),
            "{strategy}"
        );
    }
}

#[test]
fn a_kill_is_recorded_only_on_an_undecided_newer_version() {
    let pending = [
        st("a", Phase::Pending, false),
        st("b", Phase::Pending, false),
    ];
    let mut decided_on = with_states(json!({}), &pending);
    decided_on.metadata.uid = Some("u1".into());
    let mut snapshot_synced = decided_on.clone();
    snapshot_synced.metadata.resource_version = Some("2".into());
    assert!(kill_still_applies(&decided_on, &snapshot_synced));
    let mut states_changed = decided_on.clone();
    if let Some(status) = states_changed.status.as_mut() {
        status.container_recreate_states[0].is_killed = true;
    }
    assert!(!kill_still_applies(&decided_on, &states_changed));
    let mut completed = decided_on.clone();
    if let Some(status) = completed.status.as_mut() {
        status.phase = Phase::Completed;
        status.completion_time = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(ts(
            "2024-05-01T10:00:30Z",
        )));
    }
    assert!(!kill_still_applies(&decided_on, &completed));
    let mut deleting = decided_on.clone();
    deleting.metadata.deletion_timestamp = completed
        .status
        .as_ref()
        .and_then(|status| status.completion_time.clone());
    assert!(!kill_still_applies(&decided_on, &deleting));
    let mut recreated_object = decided_on.clone();
    recreated_object.metadata.uid = Some("u2".into());
    assert!(!kill_still_applies(&decided_on, &recreated_object));
}
