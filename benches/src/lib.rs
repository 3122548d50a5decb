//! Criterion benchmarks of kruise-rs (`cargo bench -p kruise-benches`) and the inputs they share.
//!
//! Benchmarks are never timed assertions: run them on demand and compare the numbers.
//!
//! ```
//! let cloneset = kruise_benches::sample_cloneset(3);
//! assert_eq!(cloneset.spec.template.spec.unwrap().containers.len(), 3);
//! ```

pub mod rollout;

use kruise_api::apps::v1alpha1::CloneSet;

/// A realistic v1alpha1 CloneSet with `containers` containers, in-place updates, a partition and hooks.
#[must_use]
pub fn sample_cloneset(containers: usize) -> CloneSet {
    let containers: Vec<_> = (0..containers)
        .map(|index| {
            serde_json::json!({
                "name": format!("c{index}"),
                "image": format!("registry.example.com/app/c{index}:v1.2.3"),
                "ports": [{"containerPort": 8080 + index, "protocol": "TCP"}],
                "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                "resources": {"limits": {"cpu": "1", "memory": "512Mi"}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080 + index}},
            })
        })
        .collect();
    let value = serde_json::json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "bench", "namespace": "default", "labels": {"app": "bench"}},
        "spec": {
            "replicas": 100,
            "selector": {"matchLabels": {"app": "bench"}},
            "template": {"metadata": {"labels": {"app": "bench"}}, "spec": {"containers": containers}},
            "updateStrategy": {"type": "InPlaceIfPossible", "partition": "20%", "maxUnavailable": "10%",
                "priorityStrategy": {"weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {"zone": "a"}}}]}},
            "lifecycle": {"preDelete": {"finalizersHandler": ["example.com/unregister"], "markPodNotReady": true}},
        },
    });
    serde_json::from_value(value).unwrap_or_default()
}
