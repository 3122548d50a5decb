//! Multi-batch scenarios on a simulated kubelet: each batch is written only after the previous one runs and is
//! ready.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::needless_pass_by_value
)] // test code

use std::collections::BTreeMap;
use std::time::Duration;

use crate::support::*;
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::jiff::Timestamp;
use kruise_api::keys::inplace::STATE_ANNOTATION;
use kruise_inplace::{
    UpdateOptions, UpdateSpec, apply, calculate_templates, completion, launch_priority, refresh,
};
use serde_json::json;

fn template(value: serde_json::Value) -> PodTemplateSpec {
    serde_json::from_value(value).unwrap()
}

/// A pod created from `template` by the pod webhook (barrier env vars) and running.
fn created(template: &PodTemplateSpec, name: &str) -> Pod {
    let mut pod = Pod {
        metadata: template.metadata.clone().unwrap_or_default(),
        spec: template.spec.clone(),
        ..Pod::default()
    };
    pod.metadata.name = Some(name.into());
    pod.metadata.resource_version = Some("1".into());
    let annotations = pod.metadata.annotations.clone();
    launch_priority::inject_barriers(pod.spec.as_mut().unwrap(), annotations.as_ref(), name)
        .unwrap();
    kruise_inplace::condition::inject_readiness_gate(&mut pod);
    running_statuses(&mut pod);
    pod.status.as_mut().unwrap().conditions = Some(vec![
        serde_json::from_value(json!({"type": "InPlaceUpdateReady", "status": "True"})).unwrap(),
        serde_json::from_value(json!({"type": "ContainersReady", "status": "True"})).unwrap(),
        serde_json::from_value(json!({"type": "Ready", "status": "True"})).unwrap(),
    ]);
    pod
}

struct Run {
    pod: Pod,
    now: Timestamp,
    options: UpdateOptions,
}

impl Run {
    fn refresh(&mut self) -> bool {
        self.now = plus(self.now, 1);
        let outcome = refresh(&self.pod, self.now, &self.options).unwrap();
        assert_patches_reproduce(&self.pod, &outcome);
        let changed = outcome.changed();
        self.pod = outcome.pod;
        changed
    }

    fn batches(&self) -> Vec<Vec<String>> {
        state(&self.pod)
            .container_batches_record
            .into_iter()
            .map(|b| b.containers)
            .collect()
    }
}

fn start(pod: &Pod, spec: &UpdateSpec, options: UpdateOptions) -> Run {
    let now = at("2024-05-01T10:00:00Z");
    let outcome = apply(pod, spec, now, &options).unwrap();
    assert_patches_reproduce(pod, &outcome);
    Run {
        pod: outcome.pod,
        now,
        options,
    }
}

#[test]
fn sidecar_first_then_main() {
    let old = template(
        json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
        {"name": "main", "image": "app:v1"},
        {"name": "sidecar", "image": "proxy:v1", "env": [{"name": "KRUISE_CONTAINER_PRIORITY", "value": "10"}]}]}}),
    );
    let mut new = old.clone();
    new.spec.as_mut().unwrap().containers[0].image = Some("app:v2".into());
    new.spec.as_mut().unwrap().containers[1].image = Some("proxy:v2".into());
    let spec = calculate_templates(&old, &new, &UpdateOptions::default()).unwrap();
    assert_eq!(spec.container_images.len(), 2);

    let mut run = start(&created(&old, "web-0"), &spec, UpdateOptions::default());
    assert_eq!(image(&run.pod, "sidecar"), "proxy:v2");
    assert_eq!(
        image(&run.pod, "main"),
        "app:v1",
        "main waits for the sidecar"
    );
    assert_eq!(
        condition(&run.pod, "InPlaceUpdateReady").unwrap().status,
        "False"
    );
    assert_eq!(condition(&run.pod, "Ready").unwrap().status, "False");
    let first = state(&run.pod);
    assert_eq!(
        first
            .pre_check_before_next
            .unwrap()
            .containers_required_ready,
        ["sidecar"]
    );
    assert_eq!(
        first.next_container_images,
        BTreeMap::from([("main".to_owned(), "app:v2".to_owned())])
    );

    assert!(!run.refresh(), "the sidecar still runs the old image");
    kubelet_step(&mut run.pod); // sidecar restarted, not ready yet
    assert!(!run.refresh(), "the sidecar is not ready");
    kubelet_step(&mut run.pod); // sidecar ready
    assert!(run.refresh());
    assert_eq!(image(&run.pod, "main"), "app:v2");
    assert_eq!(
        run.batches(),
        [vec!["sidecar".to_owned()], vec!["main".to_owned()]]
    );
    assert!(!completion::is_completed(&run.pod, &run.options));
    assert!(!run.refresh(), "main still runs the old image");
    kubelet_step(&mut run.pod);
    assert!(
        run.refresh(),
        "main restarted: the condition goes back to True"
    );
    assert_eq!(
        condition(&run.pod, "InPlaceUpdateReady").unwrap().status,
        "True"
    );
    assert!(completion::is_completed(&run.pod, &run.options));
    assert!(!run.refresh());
    let last = state(&run.pod);
    assert_eq!(last.last_container_statuses.unwrap().len(), 2);
}

#[test]
fn ordered_launch_updates_one_container_at_a_time() {
    let old = template(
        json!({"metadata": {"annotations": {"apps.kruise.io/container-launch-priority": "Ordered"}},
        "spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}, {"name": "c", "image": "c:1"}]}}),
    );
    let mut new = old.clone();
    for container in &mut new.spec.as_mut().unwrap().containers {
        container.image = Some(container.image.as_deref().unwrap().replace(":1", ":2"));
    }
    let spec = calculate_templates(&old, &new, &UpdateOptions::default()).unwrap();
    let mut run = start(&created(&old, "p"), &spec, UpdateOptions::default());
    for _ in 0..12 {
        kubelet_step(&mut run.pod);
        run.refresh();
    }
    assert_eq!(
        run.batches(),
        [
            vec!["a".to_owned()],
            vec!["b".to_owned()],
            vec!["c".to_owned()]
        ]
    );
    assert!(completion::is_completed(&run.pod, &run.options));
    assert_eq!(
        condition(&run.pod, "InPlaceUpdateReady").unwrap().status,
        "True"
    );
}

#[test]
fn shared_env_label_pulls_a_lower_priority_container_forward() {
    let env = |priority: &str| {
        json!([
        {"name": "KRUISE_CONTAINER_PRIORITY", "value": priority},
        {"name": "VERSION", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['version']"}}}])
    };
    let old = template(
        json!({"metadata": {"labels": {"version": "1"}}, "spec": {"containers": [
        {"name": "high", "image": "h:1", "env": env("5")},
        {"name": "low", "image": "l:1", "env": env("1")},
        {"name": "other", "image": "o:1", "env": [{"name": "KRUISE_CONTAINER_PRIORITY", "value": "1"}]}]}}),
    );
    let mut new = old.clone();
    new.metadata
        .as_mut()
        .unwrap()
        .labels
        .as_mut()
        .unwrap()
        .insert("version".into(), "2".into());
    new.spec.as_mut().unwrap().containers[2].image = Some("o:2".into());
    let spec = calculate_templates(&old, &new, &UpdateOptions::default()).unwrap();
    assert!(spec.update_env_from_metadata);
    assert_eq!(
        spec.container_ref_metadata.keys().collect::<Vec<_>>(),
        ["high", "low"]
    );

    let mut pod = created(&old, "p");
    daemon_step(&mut pod);
    let mut run = start(&pod, &spec, UpdateOptions::default());
    assert_eq!(run.batches(), [vec!["high".to_owned(), "low".to_owned()]]);
    assert_eq!(label(&run.pod, "version"), Some("2"));
    assert_eq!(image(&run.pod, "other"), "o:1");
    for _ in 0..10 {
        kubelet_step(&mut run.pod);
        daemon_step(&mut run.pod);
        run.refresh();
    }
    assert_eq!(
        run.batches(),
        [
            vec!["high".to_owned(), "low".to_owned()],
            vec!["other".to_owned()]
        ]
    );
    assert!(completion::is_completed(&run.pod, &run.options));
}

#[test]
fn grace_period_then_batches() {
    let old = template(json!({"spec": {"containers": [{"name": "main", "image": "app:v1"}]}}));
    let mut new = old.clone();
    new.spec.as_mut().unwrap().containers[0].image = Some("app:v2".into());
    let options = UpdateOptions {
        grace_period_seconds: 10,
        ..UpdateOptions::default()
    };
    let spec = calculate_templates(&old, &new, &options).unwrap();
    let mut run = start(&created(&old, "p"), &spec, options);
    assert_eq!(image(&run.pod, "main"), "app:v1");
    assert!(!run.refresh());
    let outcome = refresh(&run.pod, plus(run.now, 3), &run.options).unwrap();
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(6)));
    run.now = plus(run.now, 8);
    assert!(
        run.refresh(),
        "ten seconds after the start the spec is patched"
    );
    assert_eq!(image(&run.pod, "main"), "app:v2");
    assert!(
        annotation(&run.pod, STATE_ANNOTATION)
            .unwrap()
            .contains(r#""containerBatchesRecord""#)
    );
    kubelet_step(&mut run.pod);
    assert!(run.refresh());
    assert!(completion::is_completed(&run.pod, &run.options));
}
