//! The hot-upgrade state machine (upstream `util_hotupgrade.go`): the tutorial's sidecar-1 / sidecar-2 example
//! through Upgrade -> Migration -> Reset, twice, and the rules of each step.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::needless_pass_by_value,
    clippy::type_complexity
)]

use crate::support;

use std::collections::BTreeMap;

use crate::support::facts_plan::plan;
use crate::support::{annotation, image_of, inject, later, running};
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::SidecarSet;
use kruise_api::keys::sidecarset as keys;
use kruise_sidecar::hot_upgrade::{container_to_upgrade, needs_reset, working_and_idle};
use kruise_sidecar::{PlanInput, Reason, Step};

const EMPTY: &str = "openkruise/hotupgrade-sample:empty";

fn version(set: &SidecarSet, image: &str, resource_version: &str) -> SidecarSet {
    let mut next = set.clone();
    next.spec.containers[0].container.image = Some(image.into());
    next.metadata.resource_version = Some(resource_version.into());
    kruise_sidecar::hash::annotate(&mut next).unwrap();
    next
}

fn step(set: &SidecarSet, pod: &Pod) -> kruise_sidecar::Plan {
    plan(&PlanInput {
        sidecarset: set,
        pods: std::slice::from_ref(pod),
        revisions: &[],
        revision_namespace: "kruise-system",
        now: later(120),
    })
    .unwrap()
}

fn versions(pod: &Pod) -> [String; 4] {
    ["version", "versionalt"]
        .iter()
        .flat_map(|kind| {
            ["sidecar-1", "sidecar-2"].map(|c| format!("{kind}.sidecarset.kruise.io/{c}"))
        })
        .map(|key| annotation(pod, &key).unwrap_or("").to_owned())
        .collect::<Vec<_>>()
        .try_into()
        .unwrap()
}

#[test]
fn seed_upgrade_migration_reset_twice() {
    let v1 = support::sidecarset_fixture("sidecarset-hotupgrade.yaml");
    let pod = running(
        &inject(
            &support::pod_fixture("pod-hotupgrade.yaml"),
            std::slice::from_ref(&v1),
        )
        .pod,
    );
    assert_eq!(
        working_and_idle("sidecar", &pod),
        ("sidecar-1".into(), "sidecar-2".into())
    );
    let status = step(&v1, &pod).status;
    assert_eq!(
        (status.matched_pods, status.updated_pods, status.ready_pods),
        (1, 1, 1)
    );

    // Upgrade: the idle (empty) sidecar-2 gets v2 and becomes the working one.
    let v2 = version(&v1, "openkruise/hotupgrade-sample:sidecarv2", "2000");
    let upgrade = step(&v2, &pod);
    assert_eq!(upgrade.step, Step::Upgrade);
    let upgraded = upgrade.actions[0].outcome.pod.clone();
    assert_eq!(upgrade.actions[0].reason, Reason::Upgrade);
    assert_eq!(
        image_of(&upgraded, "sidecar-1"),
        "openkruise/hotupgrade-sample:sidecarv1"
    );
    assert_eq!(
        image_of(&upgraded, "sidecar-2"),
        "openkruise/hotupgrade-sample:sidecarv2"
    );
    assert_eq!(
        image_of(&upgraded, "busybox"),
        "openkruise/hotupgrade-sample:busybox"
    );
    assert_eq!(
        annotation(&upgraded, keys::WORKING_HOT_UPGRADE_CONTAINER_ANNOTATION),
        Some(r#"{"sidecar":"sidecar-2"}"#)
    );
    // [version -1, version -2, versionalt -1, versionalt -2]
    assert_eq!(versions(&upgraded), ["1", "2000", "2000", "1"]);

    // Migration: kubelet restarts sidecar-2 on v2 (its postStart hook takes over); until it reports the new
    // image, nothing is reset and the upgrade counts as done.
    let waiting = step(&v2, &upgraded);
    assert_eq!(waiting.step, Step::Finished);
    assert!(waiting.actions.is_empty());
    assert_eq!(
        waiting.status.ready_pods, 0,
        "the old container is not on the empty image yet"
    );
    let migrated = running(&upgraded);
    assert!(needs_reset(&v2, &migrated));

    // Reset: sidecar-1 goes back to the empty image.
    let reset = step(&v2, &migrated);
    assert_eq!(reset.step, Step::Reset);
    assert_eq!(reset.actions[0].reason, Reason::ResetHotUpgrade);
    let after_reset = reset.actions[0].outcome.pod.clone();
    assert_eq!(image_of(&after_reset, "sidecar-1"), EMPTY);
    assert_eq!(
        image_of(&after_reset, "sidecar-2"),
        "openkruise/hotupgrade-sample:sidecarv2"
    );
    assert_eq!(versions(&after_reset), ["0", "2000", "2000", "0"]);
    assert_eq!(
        annotation(&after_reset, keys::HASH_ANNOTATION),
        annotation(&migrated, keys::HASH_ANNOTATION),
        "the reset does not touch the hash"
    );
    let state = kruise_sidecar::records::inplace_states(&after_reset)
        .unwrap()
        .unwrap();
    let recorded = state["hotupgrade-sidecarset"]
        .last_container_statuses
        .as_ref()
        .unwrap();
    assert_eq!(
        recorded["sidecar-1"].image_id,
        support::image_id("openkruise/hotupgrade-sample:sidecarv1")
    );
    let settled = running(&after_reset);
    let done = step(&v2, &settled);
    assert_eq!(
        (
            done.step,
            done.status.ready_pods,
            done.status.updated_ready_pods
        ),
        (Step::Finished, 1, 1)
    );

    // A second round upgrades the container now on the empty image: sidecar-1.
    let v3 = version(&v2, "openkruise/hotupgrade-sample:sidecarv3", "3000");
    let second = step(&v3, &settled).actions[0].outcome.pod.clone();
    assert_eq!(
        image_of(&second, "sidecar-1"),
        "openkruise/hotupgrade-sample:sidecarv3"
    );
    assert_eq!(
        image_of(&second, "sidecar-2"),
        "openkruise/hotupgrade-sample:sidecarv2"
    );
    assert_eq!(versions(&second), ["3000", "2000", "2000", "3000"]);
    let final_pod = running(&step(&v3, &running(&second)).actions[0].outcome.pod);
    assert_eq!(image_of(&final_pod, "sidecar-2"), EMPTY);
    assert_eq!(working_and_idle("sidecar", &final_pod).0, "sidecar-1");
}

#[test]
fn container_to_upgrade_rules() {
    let v1 = support::sidecarset_fixture("sidecarset-hotupgrade.yaml");
    let sidecar = &v1.spec.containers[0];
    let injected = running(
        &inject(
            &support::pod_fixture("pod-hotupgrade.yaml"),
            std::slice::from_ref(&v1),
        )
        .pod,
    );
    let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    // 1. The container on the empty image.
    assert_eq!(
        container_to_upgrade(&v1, sidecar, &injected),
        pair("sidecar-2", "sidecar-1")
    );
    let mut both_busy = injected.clone();
    for c in &mut both_busy.spec.as_mut().unwrap().containers {
        if c.name.starts_with("sidecar") {
            c.image = Some(format!("img-{}", c.name));
        }
    }
    let both_busy = running(&both_busy);
    // 2. Exactly one ready: the other one.
    let mut ready: BTreeMap<&str, bool> = [("sidecar-1", false), ("sidecar-2", true)].into();
    let pod = support::kubelet_applies(&both_busy, &ready);
    assert_eq!(
        container_to_upgrade(&v1, sidecar, &pod),
        pair("sidecar-1", "sidecar-2")
    );
    ready = [("sidecar-1", true), ("sidecar-2", false)].into();
    let pod = support::kubelet_applies(&both_busy, &ready);
    assert_eq!(
        container_to_upgrade(&v1, sidecar, &pod),
        pair("sidecar-2", "sidecar-1")
    );
    // 3. Otherwise the one that is not working.
    assert_eq!(
        container_to_upgrade(&v1, sidecar, &both_busy),
        pair("sidecar-2", "sidecar-1")
    );
    let mut working_two = both_busy.clone();
    working_two.metadata.annotations.as_mut().unwrap().insert(
        keys::WORKING_HOT_UPGRADE_CONTAINER_ANNOTATION.into(),
        r#"{"sidecar":"sidecar-2"}"#.into(),
    );
    assert_eq!(
        container_to_upgrade(&v1, sidecar, &working_two),
        pair("sidecar-1", "sidecar-2")
    );
}

#[test]
fn same_image_as_the_working_container_changes_nothing() {
    let v1 = support::sidecarset_fixture("sidecarset-hotupgrade.yaml");
    let pod = running(
        &inject(
            &support::pod_fixture("pod-hotupgrade.yaml"),
            std::slice::from_ref(&v1),
        )
        .pod,
    );
    let hashes = kruise_sidecar::hash::recorded_or_computed(&v1).unwrap();
    let after = kruise_sidecar::upgrade::upgrade_pod(&v1, &hashes, &pod, later(1)).unwrap();
    assert_eq!(after.spec, pod.spec);
    assert_eq!(versions(&after), versions(&pod));
}

#[test]
fn readiness_rules() {
    let v1 = support::sidecarset_fixture("sidecarset-hotupgrade.yaml");
    let pod = running(
        &inject(
            &support::pod_fixture("pod-hotupgrade.yaml"),
            std::slice::from_ref(&v1),
        )
        .pod,
    );
    assert!(kruise_sidecar::consistency::is_pod_ready(&v1, &pod));
    let mut idle_busy = pod.clone();
    idle_busy.spec.as_mut().unwrap().containers[1].image = Some("not-empty".into());
    assert!(!kruise_sidecar::consistency::is_pod_ready(&v1, &idle_busy));
    // Reset readiness ignores the idle container's own readiness when the pod is not ready.
    let mut pod_not_ready = running(&idle_busy);
    support::set_ready(&mut pod_not_ready, false);
    pod_not_ready
        .status
        .as_mut()
        .unwrap()
        .container_statuses
        .as_mut()
        .unwrap()[1]
        .ready = false;
    assert!(kruise_sidecar::hot_upgrade::is_hot_upgrading_ready(
        &v1,
        &pod_not_ready
    ));
    pod_not_ready
        .status
        .as_mut()
        .unwrap()
        .container_statuses
        .as_mut()
        .unwrap()[0]
        .ready = false;
    assert!(!kruise_sidecar::hot_upgrade::is_hot_upgrading_ready(
        &v1,
        &pod_not_ready
    ));
    assert!(!needs_reset(&v1, &pod_not_ready));
}
