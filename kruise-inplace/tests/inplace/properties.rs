//! Property tests: apply + refresh on a simulated kubelet always ends completed with every container on its new
//! image; every outcome's patches reproduce its pod; quantities and metadata patches round-trip.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::needless_pass_by_value
)] // test code

use std::collections::BTreeMap;

use crate::support::*;
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use kruise_inplace::{
    RevisionLabels, UpdateOptions, apply, calculate_templates, completion, quantity, refresh,
};
use proptest::prelude::*;
use serde_json::{Value, json};

#[derive(Clone, Debug)]
struct ContainerPlan {
    image_changes: bool,
    priority: Option<i8>,
    reads_label: bool,
}

#[derive(Clone, Debug)]
struct Plan {
    containers: Vec<ContainerPlan>,
    label_changes: bool,
    annotation_changes: bool,
    ordered: bool,
    gate: bool,
    grace: i32,
    daemon: bool,
    cloneset_labels: bool,
    short_hash: bool,
}

fn plans() -> impl Strategy<Value = Plan> {
    let container = (any::<bool>(), proptest::option::of(-2_i8..3), any::<bool>()).prop_map(
        |(image_changes, priority, reads_label)| ContainerPlan {
            image_changes,
            priority,
            reads_label,
        },
    );
    (
        proptest::collection::vec(container, 1..5),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(0), 1_i32..4],
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(
                containers,
                label_changes,
                annotation_changes,
                ordered,
                gate,
                grace,
                daemon,
                cloneset_labels,
                short_hash,
            )| Plan {
                containers,
                label_changes,
                annotation_changes,
                ordered,
                gate,
                grace,
                daemon,
                cloneset_labels,
                short_hash,
            },
        )
}

fn template(plan: &Plan, new: bool) -> PodTemplateSpec {
    let version = if new { "2" } else { "1" };
    let containers: Vec<Value> = plan
        .containers
        .iter()
        .enumerate()
        .map(|(index, c)| {
            let tag = if new && c.image_changes { "2" } else { "1" };
            let mut env = Vec::new();
            if let Some(priority) = c.priority {
                env.push(json!({"name": "KRUISE_CONTAINER_PRIORITY", "value": priority.to_string()}));
            }
            if c.reads_label {
                env.push(json!({"name": "L", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['l']"}}}));
            }
            json!({"name": format!("c{index}"), "image": format!("img{index}:{tag}"), "env": env})
        })
        .collect();
    let mut annotations = BTreeMap::new();
    if plan.ordered {
        annotations.insert(
            "apps.kruise.io/container-launch-priority",
            "Ordered".to_owned(),
        );
    }
    annotations.insert(
        "note",
        if new && plan.annotation_changes {
            "b".to_owned()
        } else {
            "a".to_owned()
        },
    );
    let label = if plan.label_changes { version } else { "1" };
    serde_json::from_value(json!({
        "metadata": {"labels": {"app": "x", "l": label}, "annotations": annotations},
        "spec": {"containers": containers}
    }))
    .unwrap()
}

fn created(template: &PodTemplateSpec, plan: &Plan) -> Pod {
    let mut pod = Pod {
        metadata: template.metadata.clone().unwrap(),
        spec: template.spec.clone(),
        ..Pod::default()
    };
    pod.metadata.name = Some("p-0".into());
    pod.metadata.namespace = Some("default".into());
    pod.metadata.resource_version = Some("100".into());
    pod.metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("controller-revision-hash".into(), "p-old".into());
    let annotations = pod.metadata.annotations.clone();
    kruise_inplace::launch_priority::inject_barriers(
        pod.spec.as_mut().unwrap(),
        annotations.as_ref(),
        "p-0",
    )
    .unwrap();
    if plan.gate {
        kruise_inplace::condition::inject_readiness_gate(&mut pod);
    }
    running_statuses(&mut pod);
    pod.status.as_mut().unwrap().conditions = Some(vec![
        serde_json::from_value(json!({"type": "Ready", "status": "True"})).unwrap(),
        serde_json::from_value(json!({"type": "ContainersReady", "status": "True"})).unwrap(),
    ]);
    if plan.daemon {
        daemon_step(&mut pod);
    }
    pod
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn apply_and_refresh_converge(plan in plans()) {
        let env_changes = plan.label_changes && plan.containers.iter().any(|c| c.reads_label);
        // Env vars from metadata can only be confirmed through kruise-daemon's report.
        let daemon = plan.daemon || env_changes;
        let plan = Plan { daemon, ..plan };
        let revision_labels = if plan.cloneset_labels {
            RevisionLabels::CloneSet { short_hash: plan.short_hash }
        } else {
            RevisionLabels::Exact
        };
        let options = UpdateOptions { grace_period_seconds: plan.grace, revision_labels, ..UpdateOptions::default() };
        let (old, new) = (template(&plan, false), template(&plan, true));
        let mut spec = calculate_templates(&old, &new, &options).unwrap();
        spec.revision = format!("p-{}", spec.revision);
        prop_assert_eq!(spec.update_env_from_metadata, env_changes);

        let mut now = at("2024-05-01T10:00:00Z");
        let mut pod = created(&old, &plan);
        let outcome = apply(&pod, &spec, now, &options).unwrap();
        assert_patches_reproduce(&pod, &outcome);
        pod = outcome.pod;

        let mut settled = false;
        for _ in 0..80 {
            kubelet_step(&mut pod);
            if plan.daemon {
                daemon_step(&mut pod);
            }
            now = plus(now, 1);
            let outcome = refresh(&pod, now, &options).unwrap();
            assert_patches_reproduce(&pod, &outcome);
            let changed = outcome.changed();
            pod = outcome.pod;
            if !changed && completion::is_completed(&pod, &options) && outcome.requeue_after.is_none() {
                settled = true;
                break;
            }
        }
        prop_assert!(settled, "did not converge: {:?}", kruise_inplace::state::read_state(&pod));
        for (index, container) in new.spec.as_ref().unwrap().containers.iter().enumerate() {
            prop_assert_eq!(image(&pod, &format!("c{index}")), container.image.as_deref().unwrap());
            let status = pod.status.as_ref().unwrap().container_statuses.as_ref().unwrap().iter().find(|s| s.name == container.name).unwrap();
            prop_assert_eq!(status.image.as_str(), container.image.as_deref().unwrap());
        }
        prop_assert_eq!(label(&pod, "l"), new.metadata.as_ref().unwrap().labels.as_ref().unwrap().get("l").map(String::as_str));
        prop_assert_eq!(annotation(&pod, "note"), Some(if plan.annotation_changes { "b" } else { "a" }));
        prop_assert!(kruise_inplace::apply::is_at_revision(&pod, &spec.revision, revision_labels));
        if plan.gate {
            prop_assert_eq!(condition(&pod, "InPlaceUpdateReady").unwrap().status.as_str(), "True");
        }
        // Every batch but the last waited for the previous one: batches never repeat a container.
        let batches = state(&pod).container_batches_record;
        let mut seen = std::collections::BTreeSet::new();
        for batch in &batches {
            for name in &batch.containers {
                prop_assert!(seen.insert(name.clone()), "{} in two batches", name);
            }
        }
    }

    #[test]
    fn canonical_quantities_are_stable(
        integer in 0_u64..100_000,
        fraction in proptest::option::of(0_u32..1000),
        suffix in prop_oneof![Just(""), Just("m"), Just("k"), Just("M"), Just("G"), Just("Ki"), Just("Mi"), Just("Gi"), Just("e3"), Just("e-2"), Just("n"), Just("u")],
        negative in any::<bool>(),
    ) {
        let sign = if negative { "-" } else { "" };
        let text = match fraction {
            Some(fraction) => format!("{sign}{integer}.{fraction:03}{suffix}"),
            None => format!("{sign}{integer}{suffix}"),
        };
        let parsed = quantity::parse(&text).unwrap();
        let canonical = quantity::canonical(&text).unwrap();
        prop_assert_eq!(quantity::canonical(&canonical).unwrap(), canonical.clone(), "{} -> {}", text, canonical);
        prop_assert_eq!(quantity::parse(&canonical).unwrap(), parsed, "{} -> {}", text, canonical);
    }

}
