//! Properties: injection is idempotent and never touches app containers; hot upgrade always settles with one
//! working container on the new image and the other on the empty image; upgrades never exceed
//! maxUnavailable.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::needless_pass_by_value,
    clippy::type_complexity
)]

use crate::support;

use crate::support::facts_plan::plan;
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::SidecarSet;
use kruise_sidecar::{PlanInput, Reason, Step};
use proptest::prelude::*;
use serde_json::json;

fn app_pod(apps: usize, share_env: bool, extra_label: bool) -> Pod {
    let containers: Vec<_> = (0..apps)
        .map(|n| {
            let mut c = json!({"name": format!("app{n}"), "image": format!("app:{n}"),
                "volumeMounts": [{"name": format!("data{n}"), "mountPath": format!("/data{n}"), "subPathExpr": "$(POD)"}]});
            if share_env {
                c["env"] = json!([{"name": "POD", "value": format!("p{n}")}, {"name": "PROXY", "value": "x"}]);
            }
            c
        })
        .collect();
    let mut labels = json!({"app": "web"});
    if extra_label {
        labels["source"] = json!("app0");
    }
    support::pod(json!({
        "metadata": {"name": "p", "namespace": "ns", "labels": labels},
        "spec": {"containers": containers}
    }))
}

fn sidecar_set(name: &str, sidecars: &[(u8, bool, bool, bool)]) -> SidecarSet {
    let containers: Vec<_> = sidecars
        .iter()
        .enumerate()
        .map(|(n, (policy, share, hot, transfer))| {
            let mut c = json!({"name": format!("{name}-s{n}"), "image": "side:1",
                "podInjectPolicy": if *policy % 2 == 0 { "BeforeAppContainer" } else { "AfterAppContainer" },
                "volumeMounts": [{"name": "own", "mountPath": format!("/own{n}")}]});
            if *share {
                c["shareVolumePolicy"] = json!({"type": "enabled"});
            }
            if *hot {
                c["upgradeStrategy"] = json!({"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"});
            }
            if *transfer {
                c["transferEnv"] = json!([{"sourceContainerNameFrom": {"fieldRef": {"fieldPath": "metadata.labels['source']"}}, "envNames": ["PROXY"]}]);
            }
            c
        })
        .collect();
    support::sidecarset(json!({
        "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "containers": containers,
                 "initContainers": [{"name": format!("{name}-init"), "image": "init:1"}],
                 "volumes": [{"name": "own", "emptyDir": {}}]}
    }))
}

fn sidecars() -> impl Strategy<Value = Vec<(u8, bool, bool, bool)>> {
    prop::collection::vec((0u8..2, any::<bool>(), any::<bool>(), any::<bool>()), 0..3)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn injection_is_idempotent_and_leaves_app_containers_alone(
        apps in 1usize..4, share_env: bool, label: bool, first in sidecars(), second in sidecars(),
    ) {
        let pod = app_pod(apps, share_env, label);
        let sets = [sidecar_set("a", &first), sidecar_set("b", &second)];
        let once = support::inject(&pod, &sets);
        let twice = support::inject(&once.pod, &sets);
        prop_assert_eq!(&twice.pod, &once.pod);
        prop_assert!(twice.patch.0.is_empty());
        let original = &pod.spec.as_ref().unwrap().containers;
        let injected: Vec<_> = once.pod.spec.as_ref().unwrap().containers.iter()
            .filter(|c| c.name.starts_with("app")).cloned().collect();
        prop_assert_eq!(&injected, original);
        // The patch turns the admitted pod into the injected one.
        let mut value = serde_json::to_value(&pod).unwrap();
        json_patch::patch(&mut value, &once.patch).unwrap();
        prop_assert_eq!(serde_json::from_value::<Pod>(value).unwrap(), once.pod.clone());
        // The JSON-text patch of `inject_json` is the same patch, with the same pod.
        let request = kruise_sidecar::InjectRequest {
            pod: &pod, old_pod: None, sidecarsets: &sets, revisions: &[], namespace_labels: None,
            now: support::now(), options: kruise_sidecar::Options::default(),
        };
        let text = kruise_sidecar::inject_json(&request, &mut kruise_sidecar::SeededChance::new(1)).unwrap();
        prop_assert_eq!(&text.pod, &once.pod);
        let parsed: serde_json::Value = serde_json::from_str(&text.patch).unwrap();
        prop_assert_eq!(parsed, serde_json::to_value(&once.patch).unwrap());
    }

    #[test]
    fn hot_upgrade_settles_on_one_new_and_one_empty(
        images in prop::collection::vec(1u8..6, 1..6), ready_first: bool,
    ) {
        let mut set = support::sidecarset_fixture("sidecarset-hotupgrade.yaml");
        let mut pod = support::running(&support::inject(&support::pod_fixture("pod-hotupgrade.yaml"), std::slice::from_ref(&set)).pod);
        for (round, image) in images.iter().enumerate() {
            let image = format!("sidecar:v{image}");
            set.spec.containers[0].container.image = Some(image.clone());
            set.metadata.resource_version = Some(format!("{}", round + 10));
            kruise_sidecar::hash::annotate(&mut set).unwrap();
            // Reconcile until nothing is left to do; kubelet applies each write (readiness varies).
            for _ in 0..6 {
                let result = plan(&PlanInput { sidecarset: &set, pods: std::slice::from_ref(&pod), revisions: &[],
                    revision_namespace: "k", now: support::later(10) }).unwrap();
                if result.actions.is_empty() {
                    break;
                }
                prop_assert!(result.step == Step::Upgrade || result.step == Step::Reset);
                let mut next = support::running(&result.actions[0].outcome.pod);
                if !ready_first {
                    // The restarted container reports not ready once, then ready.
                    let mut lagging = support::kubelet_applies(&result.actions[0].outcome.pod,
                        &[("sidecar-1", false), ("sidecar-2", false)].into());
                    support::set_ready(&mut lagging, false);
                    let idle = plan(&PlanInput { sidecarset: &set, pods: std::slice::from_ref(&lagging), revisions: &[],
                        revision_namespace: "k", now: support::later(10) }).unwrap();
                    prop_assert!(idle.actions.iter().all(|a| a.reason != Reason::ResetHotUpgrade));
                    next = support::running(&lagging);
                }
                pod = next;
            }
            let images: Vec<String> = ["sidecar-1", "sidecar-2"].iter().map(|c| support::image_of(&pod, c)).collect();
            let (working, idle) = kruise_sidecar::hot_upgrade::working_and_idle("sidecar", &pod);
            prop_assert_eq!(support::image_of(&pod, &working), image.clone(), "{:?}", images);
            prop_assert_eq!(support::image_of(&pod, &idle), "openkruise/hotupgrade-sample:empty");
            prop_assert!(kruise_sidecar::consistency::is_pod_ready(&set, &pod));
        }
    }

    #[test]
    fn upgrades_never_exceed_max_unavailable(
        readiness in prop::collection::vec(any::<bool>(), 1..12),
        updated in prop::collection::vec(any::<bool>(), 12),
        max_unavailable in 1i32..5, percent: bool, partition in 0i32..6,
    ) {
        let v1 = support::sidecarset(json!({"metadata": {"name": "log"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "containers": [{"name": "agent", "image": "agent:1"}]}}));
        let strategy = if percent {
            json!({"maxUnavailable": format!("{}%", max_unavailable * 10), "partition": partition})
        } else {
            json!({"maxUnavailable": max_unavailable, "partition": partition})
        };
        let v2 = support::sidecarset(json!({"metadata": {"name": "log"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "containers": [{"name": "agent", "image": "agent:2"}],
                     "updateStrategy": strategy}}));
        let hashes = kruise_sidecar::hash::recorded_or_computed(&v2).unwrap();
        let pods: Vec<Pod> = readiness.iter().enumerate().map(|(n, ready)| {
            let pod = support::pod(json!({"metadata": {"name": format!("p{n}"), "namespace": "ns", "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "m"}]}}));
            let mut pod = support::running(&support::inject(&pod, std::slice::from_ref(&v1)).pod);
            if updated[n] {
                pod = kruise_sidecar::upgrade::upgrade_pod(&v2, &hashes, &pod, support::now()).unwrap();
                if *ready { pod = support::running(&pod); }
            }
            support::set_ready(&mut pod, *ready);
            pod
        }).collect();
        let result = plan(&PlanInput { sidecarset: &v2, pods: &pods, revisions: &[], revision_namespace: "k", now: support::now() }).unwrap();
        let budget = usize::try_from(if percent {
            (i64::from(max_unavailable) * 10 * i64::try_from(pods.len()).unwrap() + 99) / 100
        } else {
            i64::from(max_unavailable)
        }).unwrap();
        let unavailable_before = pods.iter().filter(|p| {
            kruise_sidecar::consistency::is_pod_updated(&v2, &hashes, p)
                && !(kruise_sidecar::consistency::is_pod_ready(&v2, p)
                    && kruise_sidecar::consistency::is_pod_state_consistent(&v2, p, &Default::default()))
        }).count();
        let ready_taken = result.actions.iter()
            .filter(|a| a.reason == Reason::Upgrade)
            .filter(|a| kruise_sidecar::consistency::is_pod_ready(&v2, &pods[a.pod]))
            .count();
        prop_assert!(ready_taken == 0 || unavailable_before + ready_taken <= budget,
            "before {} + taken {} > budget {}", unavailable_before, ready_taken, budget);
        let not_updated = pods.iter().filter(|p| !kruise_sidecar::consistency::is_pod_updated(&v2, &hashes, p)).count();
        let upgrades = result.actions.iter().filter(|a| a.reason == Reason::Upgrade).count();
        prop_assert!(upgrades <= not_updated.saturating_sub(usize::try_from(partition).unwrap()));
    }
}
