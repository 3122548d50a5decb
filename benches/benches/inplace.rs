// criterion's macros generate undocumented items.
#![allow(missing_docs)]
//! Cost of an in-place update decision for a realistic 3-container CloneSet template: `calculate` between two
//! revisions and `apply` to a running pod, next to parsing both revisions' JSON with serde_json alone.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use kruise_api::defaults::ApplyDefaults;
use kruise_inplace::{UpdateOptions, apply, calculate, revision};

fn revision_json(name: &str, template: &PodTemplateSpec) -> String {
    let data = revision::template_data(template).unwrap_or_default();
    format!(
        r#"{{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{{"name":"{name}","namespace":"default","labels":{{"app":"bench","controller.kubernetes.io/hash":"x"}}}},"data":{data},"revision":1}}"#
    )
}

fn inputs() -> (String, String, Pod) {
    let mut cloneset = kruise_benches::sample_cloneset(3);
    cloneset.apply_defaults();
    let old = cloneset.spec.template.clone();
    let mut new = old.clone();
    if let Some(main) = new
        .spec
        .as_mut()
        .and_then(|spec| spec.containers.first_mut())
    {
        main.image = Some("registry.example.com/app/c0:v1.2.4".to_owned());
    }
    new.metadata
        .get_or_insert_with(Default::default)
        .annotations
        .get_or_insert_with(Default::default)
        .insert("release".to_owned(), "2024-05-01".to_owned());
    let old_json = revision_json("bench-5c5f449787", &old);
    let new_json = revision_json("bench-7cb9c88699", &new);

    let containers = old
        .spec
        .as_ref()
        .map(|spec| spec.containers.clone())
        .unwrap_or_default();
    let statuses: Vec<serde_json::Value> = containers
        .iter()
        .map(|c| {
            serde_json::json!({"name": c.name, "image": c.image, "imageID": format!("sha256:{}", c.name),
                "ready": true, "restartCount": 0, "containerID": format!("containerd://{}", c.name), "started": true})
        })
        .collect();
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "bench-abcde", "namespace": "default", "resourceVersion": "123456",
            "labels": {"app": "bench", "controller-revision-hash": "bench-5c5f449787", "pod-template-hash": "5c5f449787",
                "apps.kruise.io/cloneset-instance-id": "abcde"},
            "annotations": {"kubernetes.io/psp": "restricted"}},
        "spec": {"containers": containers, "readinessGates": [{"conditionType": "InPlaceUpdateReady"}], "nodeName": "node-1"},
        "status": {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "True"}, {"type": "ContainersReady", "status": "True"},
            {"type": "InPlaceUpdateReady", "status": "True"}], "containerStatuses": statuses}
    }))
    .unwrap_or_default();
    (old_json, new_json, pod)
}

fn inplace(c: &mut Criterion) {
    let (old_json, new_json, pod) = inputs();
    let parse = |json: &str| serde_json::from_str::<ControllerRevision>(json).unwrap_or_default();
    let (old, new) = (parse(&old_json), parse(&new_json));
    let options = UpdateOptions::default();
    let now = "2024-05-01T10:00:00Z".parse().unwrap_or_default();
    let spec = calculate(&old, &new, &options).unwrap_or_default();
    assert!(
        !spec.container_images.is_empty(),
        "the bench must update in place"
    );

    let mut group = c.benchmark_group("inplace");
    group.bench_function("serde_json parse both revisions (baseline)", |b| {
        b.iter(|| (parse(black_box(&old_json)), parse(black_box(&new_json))));
    });
    group.bench_function("calculate", |b| {
        b.iter(|| calculate(black_box(&old), black_box(&new), &options));
    });
    group.bench_function("apply", |b| {
        b.iter(|| apply(black_box(&pod), black_box(&spec), now, &options));
    });
    group.bench_function("calculate + apply", |b| {
        b.iter(|| {
            let spec = calculate(black_box(&old), black_box(&new), &options).unwrap_or_default();
            apply(black_box(&pod), &spec, now, &options)
        });
    });
    group.finish();
}

criterion_group!(benches, inplace);
criterion_main!(benches);
