// criterion's macros generate undocumented items; the fixed input is built by indexing JSON values.
#![allow(missing_docs, clippy::indexing_slicing)]
//! Cost of the SidecarSet webhook step: injecting two SidecarSets (a log agent sharing the app's volumes and
//! a hot-upgrade proxy with transferred env) into a realistic 3-container pod, including the RFC 6902 patch,
//! next to deserialising and serialising the same pod with serde_json alone.
//!
//! The `sidecar_parts` group splits the webhook step into its stages, to see where the time goes: matching,
//! revision choice, building the injected pod (`inject_sidecarsets`: the pod's copy, the sidecars, dropping
//! the result), the patch (typed and as JSON text) found by comparing the admitted and injected pods (the
//! injection writes the same operations from where it put its items, without the comparison), and cloning
//! and dropping the pod.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::SidecarSet;
use kruise_api::defaults::ApplyDefaults;
use kruise_sidecar::{
    InjectRequest, Options, SeededChance, inject, inject_json, inject_sidecarsets,
};

fn sidecarsets() -> Vec<SidecarSet> {
    let specs = [
        serde_json::json!({"metadata": {"name": "log-agent"}, "spec": {
            "selector": {"matchLabels": {"app": "bench"}},
            "containers": [{"name": "log-agent", "image": "registry.example.com/log-agent:2.1",
                "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}},
                "volumeMounts": [{"name": "agent-conf", "mountPath": "/etc/agent"}],
                "shareVolumePolicy": {"type": "enabled"}}],
            "volumes": [{"name": "agent-conf", "configMap": {"name": "agent-conf"}}],
            "patchPodMetadata": [{"annotations": {"log.example.com/enabled": "true"}}]}}),
        serde_json::json!({"metadata": {"name": "mesh"}, "spec": {
            "selector": {"matchLabels": {"app": "bench"}},
            "initContainers": [{"name": "mesh-init", "image": "registry.example.com/mesh-init:1.0"}],
            "containers": [{"name": "envoy", "image": "registry.example.com/envoy:1.30",
                "ports": [{"containerPort": 15001}],
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 15021}},
                "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "registry.example.com/empty:1"},
                "transferEnv": [{"sourceContainerName": "c0", "envNames": ["POD_NAME", "REGION"]}]}],
            "imagePullSecrets": [{"name": "registry"}]}}),
    ];
    specs
        .into_iter()
        .map(|value| {
            let mut set: SidecarSet = serde_json::from_value(value).unwrap_or_default();
            set.apply_defaults();
            let _ = kruise_sidecar::hash::annotate(&mut set);
            set
        })
        .collect()
}

fn pod_json() -> String {
    let cloneset = kruise_benches::sample_cloneset(3);
    let mut template = serde_json::to_value(&cloneset.spec.template).unwrap_or_default();
    if let Some(containers) = template
        .pointer_mut("/spec/containers")
        .and_then(|c| c.as_array_mut())
    {
        for (index, container) in containers.iter_mut().enumerate() {
            container["volumeMounts"] = serde_json::json!([{"name": format!("data{index}"), "mountPath": format!("/data/{index}")}]);
            if let Some(env) = container["env"].as_array_mut() {
                env.push(serde_json::json!({"name": "REGION", "value": "eu-1"}));
            }
        }
    }
    template["spec"]["volumes"] = serde_json::json!([
        {"name": "data0", "emptyDir": {}}, {"name": "data1", "emptyDir": {}}, {"name": "data2", "emptyDir": {}}]);
    template["metadata"]["name"] = "bench-abcde".into();
    template["metadata"]["namespace"] = "default".into();
    template["metadata"]["annotations"] = serde_json::json!({"kubernetes.io/psp": "restricted"});
    template.to_string()
}

fn bench(c: &mut Criterion) {
    let sets = sidecarsets();
    let json = pod_json();
    let pod: Pod = serde_json::from_str(&json).unwrap_or_default();
    let now = "2024-05-01T10:00:00Z".parse().unwrap_or_default();
    let mut group = c.benchmark_group("sidecar");
    group.bench_function("inject_two_sidecarsets", |b| {
        b.iter(|| {
            let request = InjectRequest {
                pod: black_box(&pod),
                old_pod: None,
                sidecarsets: &sets,
                revisions: &[],
                namespace_labels: None,
                now,
                options: Options::default(),
            };
            black_box(inject(&request, &mut SeededChance::new(1)))
        });
    });
    // What a webhook sends: the same injection with the patch written as JSON text.
    group.bench_function("inject_two_sidecarsets_json_patch", |b| {
        b.iter(|| {
            let request = InjectRequest {
                pod: black_box(&pod),
                old_pod: None,
                sidecarsets: &sets,
                revisions: &[],
                namespace_labels: None,
                now,
                options: Options::default(),
            };
            black_box(inject_json(&request, &mut SeededChance::new(1)))
        });
    });
    group.bench_function("baseline_pod_serde_roundtrip", |b| {
        b.iter(|| {
            let parsed: Pod = serde_json::from_str(black_box(&json)).unwrap_or_default();
            black_box(serde_json::to_string(&parsed))
        });
    });
    group.finish();

    let mut parts = c.benchmark_group("sidecar_parts");
    parts.bench_function("matching", |b| {
        b.iter(|| kruise_sidecar::matching::matching_sidecarsets(&sets, black_box(&pod), None));
    });
    parts.bench_function("revision_for_create", |b| {
        b.iter(|| {
            let mut chance = SeededChance::new(1);
            sets.iter()
                .map(|set| {
                    kruise_sidecar::injection_revision::for_create(
                        set,
                        black_box(&pod),
                        &[],
                        &mut chance,
                    )
                    .is_ok()
                })
                .count()
        });
    });
    let chosen: Vec<&SidecarSet> = sets.iter().collect();
    parts.bench_function("inject_sidecarsets", |b| {
        b.iter(|| inject_sidecarsets(black_box(&pod), &chosen, now, Options::default()));
    });
    let injected = inject_sidecarsets(&pod, &chosen, now, Options::default()).unwrap_or_default();
    parts.bench_function("patch_typed", |b| {
        b.iter(|| kruise_sidecar::admission_patch::injection_patch(black_box(&pod), &injected));
    });
    parts.bench_function("patch_json", |b| {
        b.iter(|| {
            kruise_sidecar::admission_patch::injection_patch_json(black_box(&pod), &injected)
        });
    });
    parts.bench_function("pod_clone_and_drop", |b| {
        b.iter(|| black_box(&pod).clone());
    });
    parts.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
