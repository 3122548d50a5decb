//! Table of pod lives: start, readiness gates, never-ready pods, in-place restarts, slow nodes.

use std::time::Duration;

use k8s_openapi::api::core::v1::{
    Container, ContainerStatus, Pod, PodCondition, PodReadinessGate, PodSpec,
};
use k8s_openapi::jiff::Timestamp;
use kube::api::ObjectMeta;

use super::*;

const T0: &str = "2024-05-01T10:00:00Z";

fn at(seconds: i64) -> Timestamp {
    let start: Timestamp = T0.parse().unwrap();
    Timestamp::from_second(start.as_second() + seconds).unwrap()
}

fn container(name: &str, image: &str) -> Container {
    Container {
        name: name.into(),
        image: Some(image.into()),
        ..Default::default()
    }
}

fn pod(containers: Vec<Container>, gates: &[&str]) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some("demo-abcde".into()),
            namespace: Some("default".into()),
            uid: Some("uid-1".into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers,
            node_name: Some("sim-0".into()),
            readiness_gates: (!gates.is_empty()).then(|| {
                gates
                    .iter()
                    .map(|gate| PodReadinessGate {
                        condition_type: (*gate).into(),
                    })
                    .collect()
            }),
            ..Default::default()
        }),
        status: None,
    }
}

fn behaviour() -> Behaviour {
    Behaviour {
        ready_delay: Duration::from_secs(2),
        restart_delay: Duration::from_secs(3),
        extra_delay: Duration::ZERO,
        never_ready: false,
        host_ip: "172.16.0.1".into(),
    }
}

/// Applies decisions the way the runner does, returning the last one.
fn step(pod: &mut Pod, behaviour: &Behaviour, now: Timestamp) -> StatusDecision {
    let decision = decide(pod, behaviour, now);
    if let Some(status) = &decision.status {
        pod.status = Some(status.clone());
    }
    decision
}

fn condition<'a>(pod: &'a Pod, kind: &str) -> Option<&'a PodCondition> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind)
}

fn condition_status(pod: &Pod, kind: &str) -> Option<String> {
    condition(pod, kind).map(|c| c.status.clone())
}

fn container_status<'a>(pod: &'a Pod, name: &str) -> &'a ContainerStatus {
    pod.status
        .as_ref()
        .and_then(|status| status.container_statuses.as_ref())
        .and_then(|statuses| statuses.iter().find(|cs| cs.name == name))
        .unwrap()
}

fn set_condition(pod: &mut Pod, kind: &str, status: &str) {
    let conditions = pod
        .status
        .get_or_insert_with(Default::default)
        .conditions
        .get_or_insert_with(Vec::new);
    conditions.retain(|c| c.type_ != kind);
    conditions.push(PodCondition {
        type_: kind.into(),
        status: status.into(),
        ..Default::default()
    });
}

#[test]
fn a_pod_starts_pending_then_runs_and_becomes_ready() {
    let mut pod = pod(vec![container("main", "nginx:1.25")], &[]);
    let first = step(&mut pod, &behaviour(), at(0));
    assert_eq!(first.recheck_after, Some(Duration::from_secs(2)));
    let status = pod.status.clone().unwrap();
    assert_eq!(status.phase.as_deref(), Some("Pending"));
    assert_eq!(status.start_time.unwrap().0, at(0));
    assert_eq!(
        container_status(&pod, "main")
            .state
            .as_ref()
            .unwrap()
            .waiting
            .as_ref()
            .unwrap()
            .reason
            .as_deref(),
        Some("ContainerCreating")
    );
    assert_eq!(condition_status(&pod, "Ready").as_deref(), Some("False"));

    let early = step(&mut pod, &behaviour(), at(1));
    assert_eq!(
        (early.status.is_none(), early.recheck_after),
        (true, Some(Duration::from_secs(1)))
    );

    let running = step(&mut pod, &behaviour(), at(2));
    assert!(running.status.is_some());
    assert_eq!(running.recheck_after, None);
    let main = container_status(&pod, "main");
    assert_eq!(
        pod.status.as_ref().unwrap().phase.as_deref(),
        Some("Running")
    );
    assert!(main.ready);
    assert_eq!(main.restart_count, 0);
    assert_eq!(main.image, "nginx:1.25");
    assert_eq!(main.image_id, identity::image_id("nginx:1.25"));
    assert_eq!(
        main.container_id.as_deref(),
        Some(identity::container_id("uid-1", "main", 0).as_str())
    );
    assert_eq!(
        condition_status(&pod, "ContainersReady").as_deref(),
        Some("True")
    );
    assert_eq!(condition_status(&pod, "Ready").as_deref(), Some("True"));
    assert_eq!(
        condition(&pod, "Ready")
            .unwrap()
            .last_transition_time
            .as_ref()
            .unwrap()
            .0,
        at(2)
    );
    assert!(pod.status.as_ref().unwrap().pod_ip.is_some());
    assert_eq!(
        pod.status.as_ref().unwrap().host_ip.as_deref(),
        Some("172.16.0.1")
    );
}

#[test]
fn deciding_again_on_the_written_status_changes_nothing() {
    let mut pod = pod(
        vec![
            container("main", "nginx:1.25"),
            container("side", "busybox"),
        ],
        &["InPlaceUpdateReady"],
    );
    for second in [0, 1, 2, 3] {
        step(&mut pod, &behaviour(), at(second));
        let again = decide(&pod, &behaviour(), at(second));
        assert_eq!(again.status, None, "second {second}");
    }
    assert_eq!(
        decide(&pod, &behaviour(), at(500)).status,
        None,
        "a running pod stays as it is"
    );
}

#[test]
fn ready_waits_for_every_readiness_gate() {
    let mut pod = pod(
        vec![container("main", "nginx:1.25")],
        &["InPlaceUpdateReady", "KruisePodReady"],
    );
    step(&mut pod, &behaviour(), at(0));
    step(&mut pod, &behaviour(), at(2));
    assert_eq!(
        condition_status(&pod, "ContainersReady").as_deref(),
        Some("True")
    );
    let ready = condition(&pod, "Ready").unwrap();
    assert_eq!(ready.status, "False");
    assert_eq!(ready.reason.as_deref(), Some("ReadinessGatesNotReady"));
    assert!(
        ready
            .message
            .as_deref()
            .unwrap()
            .contains("\"InPlaceUpdateReady\" does not exist")
    );

    set_condition(&mut pod, "InPlaceUpdateReady", "True");
    set_condition(&mut pod, "KruisePodReady", "False");
    step(&mut pod, &behaviour(), at(3));
    let ready = condition(&pod, "Ready").unwrap();
    assert_eq!(ready.status, "False");
    assert!(
        ready
            .message
            .as_deref()
            .unwrap()
            .contains("\"KruisePodReady\" is not \"True\", but False")
    );

    set_condition(&mut pod, "KruisePodReady", "True");
    step(&mut pod, &behaviour(), at(4));
    assert_eq!(condition_status(&pod, "Ready").as_deref(), Some("True"));
    assert_eq!(
        condition(&pod, "Ready")
            .unwrap()
            .last_transition_time
            .as_ref()
            .unwrap()
            .0,
        at(4)
    );
    // Conditions written by others are kept as they are.
    assert_eq!(
        condition_status(&pod, "InPlaceUpdateReady").as_deref(),
        Some("True")
    );
    assert_eq!(
        condition_status(&pod, "KruisePodReady").as_deref(),
        Some("True")
    );
}

#[test]
fn never_ready_pods_run_but_stay_unready() {
    let mut pod = pod(vec![container("main", "nginx:1.25")], &[]);
    let broken = Behaviour {
        never_ready: true,
        ..behaviour()
    };
    step(&mut pod, &broken, at(0));
    step(&mut pod, &broken, at(5));
    assert_eq!(
        pod.status.as_ref().unwrap().phase.as_deref(),
        Some("Running")
    );
    assert!(!container_status(&pod, "main").ready);
    let ready = condition(&pod, "Ready").unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_deref()),
        ("False", Some("ContainersNotReady"))
    );
    assert_eq!(
        ready.message.as_deref(),
        Some("containers with unready status: [main]")
    );
}

#[test]
fn an_in_place_image_change_restarts_only_that_container_after_the_delay() {
    let mut pod = pod(
        vec![
            container("main", "nginx:1.25"),
            container("side", "busybox:1"),
        ],
        &[],
    );
    step(&mut pod, &behaviour(), at(0));
    step(&mut pod, &behaviour(), at(2));
    let old_main = container_status(&pod, "main").clone();
    let old_side = container_status(&pod, "side").clone();

    pod.spec.as_mut().unwrap().containers[0].image = Some("nginx:1.26".into());
    let stop = step(&mut pod, &behaviour(), at(10));
    assert_eq!(stop.recheck_after, Some(Duration::from_secs(3)));
    let stopped = container_status(&pod, "main");
    assert!(!stopped.ready);
    assert_eq!(
        stopped.image_id, old_main.image_id,
        "still the old image while restarting"
    );
    assert_eq!(stopped.restart_count, 0);
    let terminated = stopped
        .last_state
        .as_ref()
        .unwrap()
        .terminated
        .as_ref()
        .unwrap();
    assert_eq!(terminated.finished_at.as_ref().unwrap().0, at(10));
    assert_eq!(terminated.container_id, old_main.container_id);
    assert_eq!(condition_status(&pod, "Ready").as_deref(), Some("False"));
    assert_eq!(container_status(&pod, "side"), &old_side);

    let waiting = step(&mut pod, &behaviour(), at(12));
    assert_eq!(
        (waiting.status, waiting.recheck_after),
        (None, Some(Duration::from_secs(1)))
    );

    step(&mut pod, &behaviour(), at(13));
    let restarted = container_status(&pod, "main");
    assert!(restarted.ready);
    assert_eq!(restarted.restart_count, 1);
    assert_eq!(restarted.image, "nginx:1.26");
    assert_eq!(restarted.image_id, identity::image_id("nginx:1.26"));
    assert_eq!(
        restarted.container_id.as_deref(),
        Some(identity::container_id("uid-1", "main", 1).as_str())
    );
    assert_ne!(restarted.container_id, old_main.container_id);
    assert_eq!(
        container_status(&pod, "side"),
        &old_side,
        "the other container is untouched"
    );
    assert_eq!(condition_status(&pod, "Ready").as_deref(), Some("True"));
    assert_eq!(decide(&pod, &behaviour(), at(50)).status, None);
}

#[test]
fn a_zero_restart_delay_restarts_in_one_write() {
    let mut pod = pod(vec![container("main", "nginx:1.25")], &[]);
    let quick = Behaviour {
        restart_delay: Duration::ZERO,
        ..behaviour()
    };
    step(&mut pod, &quick, at(0));
    step(&mut pod, &quick, at(2));
    pod.spec.as_mut().unwrap().containers[0].image = Some("nginx:1.26".into());
    let decision = step(&mut pod, &quick, at(3));
    assert_eq!(decision.recheck_after, None);
    let main = container_status(&pod, "main");
    assert_eq!(
        (main.restart_count, main.image.as_str(), main.ready),
        (1, "nginx:1.26", true)
    );
    assert!(main.last_state.as_ref().unwrap().terminated.is_some());
}

#[test]
fn slow_nodes_add_their_delay_to_start_and_restart() {
    let mut pod = pod(vec![container("main", "nginx:1.25")], &[]);
    let slow = Behaviour {
        extra_delay: Duration::from_secs(10),
        ..behaviour()
    };
    assert_eq!(
        step(&mut pod, &slow, at(0)).recheck_after,
        Some(Duration::from_secs(12))
    );
    step(&mut pod, &slow, at(5));
    assert_eq!(
        pod.status.as_ref().unwrap().phase.as_deref(),
        Some("Pending")
    );
    step(&mut pod, &slow, at(12));
    assert_eq!(
        pod.status.as_ref().unwrap().phase.as_deref(),
        Some("Running")
    );
    pod.spec.as_mut().unwrap().containers[0].image = Some("nginx:1.26".into());
    assert_eq!(
        step(&mut pod, &slow, at(20)).recheck_after,
        Some(Duration::from_secs(13))
    );
}

#[test]
fn init_containers_complete_and_untagged_images_report_latest() {
    let mut pod = pod(vec![container("main", "nginx")], &[]);
    pod.spec.as_mut().unwrap().init_containers = Some(vec![container("setup", "busybox:1")]);
    step(&mut pod, &behaviour(), at(0));
    step(&mut pod, &behaviour(), at(2));
    let status = pod.status.as_ref().unwrap();
    let init = &status.init_container_statuses.as_ref().unwrap()[0];
    let terminated = init.state.as_ref().unwrap().terminated.as_ref().unwrap();
    assert_eq!(
        (terminated.exit_code, terminated.reason.as_deref()),
        (0, Some("Completed"))
    );
    assert_eq!(container_status(&pod, "main").image, "nginx:latest");
}

#[test]
fn sub_second_clocks_are_truncated_like_the_api_server_does() {
    let mut pod = pod(vec![container("main", "nginx:1.25")], &[]);
    let precise = at(0).checked_add(Duration::from_millis(700)).unwrap();
    step(&mut pod, &behaviour(), precise);
    assert_eq!(
        pod.status.as_ref().unwrap().start_time.as_ref().unwrap().0,
        at(0)
    );
}

#[test]
fn a_pod_without_spec_or_uid_does_not_panic() {
    let empty = Pod::default();
    let decision = decide(&empty, &behaviour(), at(0));
    assert!(decision.status.is_some());
    let decision = decide(&empty, &Behaviour::default(), at(0));
    assert_eq!(decision.status.unwrap().phase.as_deref(), Some("Running"));
}
