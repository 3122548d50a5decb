//! The rollout table of `kruise cloneset watch`: one header line with the CloneSet's counts, one line per
//! revision with its pods by lifecycle state, then one line per pod. Pure, so it is tested offline.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::CloneSet;
use kube::ResourceExt;

/// When `kruise cloneset watch` stops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Until {
    /// Never (until Ctrl-C).
    #[default]
    Forever,
    /// Every wanted pod exists and is ready at the observed generation.
    Ready,
    /// The rollout reached the partition: `expectedUpdatedReplicas` pods updated and ready.
    Partitioned,
    /// Every pod is at the update revision and ready, and the current revision caught up.
    Complete,
}

fn observed(cloneset: &CloneSet) -> bool {
    let status = cloneset.status.as_ref();
    status.is_some_and(|s| s.observed_generation == cloneset.metadata.generation.unwrap_or(0))
}

/// Whether `until` holds for the CloneSet and its pods.
#[must_use]
pub fn reached(until: Until, cloneset: &CloneSet, pods: &[Pod]) -> bool {
    let replicas = cloneset.spec.replicas.unwrap_or(1);
    let status = cloneset.status.clone().unwrap_or_default();
    let count = i32::try_from(pods.len()).unwrap_or(i32::MAX);
    let all_ready = pods.iter().all(kruise_api::pod::is_ready);
    match until {
        Until::Forever => false,
        Until::Ready => {
            observed(cloneset)
                && count == replicas
                && all_ready
                && status.ready_replicas == replicas
        }
        Until::Partitioned => {
            observed(cloneset)
                && count == replicas
                && status.updated_ready_replicas >= status.expected_updated_replicas
        }
        Until::Complete => {
            observed(cloneset)
                && count == replicas
                && all_ready
                && status.updated_ready_replicas == replicas
                && status.current_revision == status.update_revision
        }
    }
}

fn main_image(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|statuses| statuses.first())
        .map(|status| status.image.as_str())
        .filter(|image| !image.is_empty())
        .or_else(|| {
            pod.spec
                .as_ref()
                .and_then(|s| s.containers.first())
                .and_then(|c| c.image.as_deref())
        })
        .unwrap_or("-")
}

fn restarts(pod: &Pod) -> i32 {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .map_or(0, |statuses| statuses.iter().map(|s| s.restart_count).sum())
}

fn state(pod: &Pod) -> &str {
    pod.labels()
        .get(kruise_api::keys::lifecycle::STATE_LABEL)
        .map_or("-", String::as_str)
}

/// The table for the CloneSet and its pods (sorted by name).
#[must_use]
pub fn render(cloneset: &CloneSet, pods: &[Pod]) -> String {
    let status = cloneset.status.clone().unwrap_or_default();
    let partition = cloneset
        .spec
        .update_strategy
        .rolling_update
        .as_ref()
        .and_then(|r| r.partition.as_ref())
        .map_or_else(
            || "0".to_owned(),
            |p| match p {
                k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(n) => n.to_string(),
                k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(s) => s.clone(),
            },
        );
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}/{}: replicas {} ready {} updated {}/{} (updatedReady {}, expected {}) partition {}",
        cloneset.namespace().unwrap_or_default(),
        cloneset.name_any(),
        cloneset.spec.replicas.unwrap_or(1),
        status.ready_replicas,
        status.updated_replicas,
        status.replicas,
        status.updated_ready_replicas,
        status.expected_updated_replicas,
        partition
    );
    let revision_role = |revision: &str| {
        if kruise_api::pod::revision_matches(revision, &status.update_revision) {
            "update"
        } else if kruise_api::pod::revision_matches(revision, &status.current_revision) {
            "current"
        } else {
            "other"
        }
    };
    let mut by_revision: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for pod in pods {
        *by_revision
            .entry(kruise_api::pod::revision(pod).to_owned())
            .or_default()
            .entry(state(pod).to_owned())
            .or_default() += 1;
    }
    for (revision, states) in &by_revision {
        let states: Vec<String> = states.iter().map(|(s, n)| format!("{s} {n}")).collect();
        let _ = writeln!(
            out,
            "  {:<7} {:<28} pods: {}",
            revision_role(revision),
            revision,
            states.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "  {:<24} {:<8} {:<16} {:<6} {:<20} {:<8} NODE",
        "POD", "REVISION", "STATE", "READY", "IMAGE", "RESTARTS"
    );
    let mut sorted: Vec<&Pod> = pods.iter().collect();
    sorted.sort_by_key(|pod| pod.name_any());
    for pod in sorted {
        let _ = writeln!(
            out,
            "  {:<24} {:<8} {:<16} {:<6} {:<20} {:<8} {}",
            pod.name_any(),
            revision_role(kruise_api::pod::revision(pod)),
            state(pod),
            kruise_api::pod::is_ready(pod),
            main_image(pod),
            restarts(pod),
            pod.spec
                .as_ref()
                .and_then(|s| s.node_name.as_deref())
                .unwrap_or("-")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[allow(clippy::needless_pass_by_value)]
    fn cloneset(status: serde_json::Value) -> CloneSet {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
            "metadata": {"name": "demo", "namespace": "default", "generation": 2},
            "spec": {"replicas": 2, "selector": {}, "template": {},
                "updateStrategy": {"rollingUpdate": {"partition": 1}}},
            "status": status,
        }))
        .unwrap()
    }

    fn pod(name: &str, revision: &str, state: &str, ready: bool, image: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {
                "controller-revision-hash": revision, "lifecycle.apps.kruise.io/state": state}},
            "spec": {"nodeName": "n-0", "containers": [{"name": "main", "image": image}]},
            "status": {"conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"}}],
                "containerStatuses": [{"name": "main", "image": image, "imageID": "", "ready": ready,
                    "restartCount": 1}]},
        }))
        .unwrap()
    }

    #[test]
    fn the_table_groups_pods_by_revision_and_state() {
        let cs = cloneset(
            json!({"observedGeneration": 2, "replicas": 2, "readyReplicas": 1,
            "updatedReplicas": 1, "updatedReadyReplicas": 0, "expectedUpdatedReplicas": 1,
            "updateRevision": "demo-new", "currentRevision": "demo-old"}),
        );
        let pods = [
            pod("demo-b", "demo-new", "Updating", false, "nginx:2"),
            pod("demo-a", "demo-old", "Normal", true, "nginx:1"),
        ];
        let table = render(&cs, &pods);
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[0].starts_with("default/demo: replicas 2 ready 1 updated 1/2"),
            "{table}"
        );
        assert!(lines[0].ends_with("partition 1"), "{table}");
        assert!(table.contains("update  demo-new"), "{table}");
        assert!(table.contains("pods: Updating 1"), "{table}");
        assert!(table.contains("current demo-old"), "{table}");
        let a = lines
            .iter()
            .position(|l| l.trim_start().starts_with("demo-a"))
            .unwrap();
        let b = lines
            .iter()
            .position(|l| l.trim_start().starts_with("demo-b"))
            .unwrap();
        assert!(a < b, "pods by name:\n{table}");
        assert!(
            lines[b].contains("Updating")
                && lines[b].contains("nginx:2")
                && lines[b].contains("false")
        );
    }

    #[test]
    fn conditions_follow_the_status() {
        let ready = |ready_pods: bool| {
            [
                pod("a", "r2", "Normal", ready_pods, "x"),
                pod("b", "r2", "Normal", true, "x"),
            ]
        };
        let partial = cloneset(
            json!({"observedGeneration": 2, "replicas": 2, "readyReplicas": 2,
            "updatedReadyReplicas": 1, "expectedUpdatedReplicas": 1,
            "updateRevision": "r2", "currentRevision": "r1"}),
        );
        assert!(reached(Until::Ready, &partial, &ready(true)));
        assert!(!reached(Until::Ready, &partial, &ready(false)));
        assert!(reached(Until::Partitioned, &partial, &ready(true)));
        assert!(!reached(Until::Complete, &partial, &ready(true)));
        assert!(!reached(Until::Forever, &partial, &ready(true)));
        let done = cloneset(
            json!({"observedGeneration": 2, "replicas": 2, "readyReplicas": 2,
            "updatedReadyReplicas": 2, "expectedUpdatedReplicas": 1,
            "updateRevision": "r2", "currentRevision": "r2"}),
        );
        assert!(reached(Until::Complete, &done, &ready(true)));
        let stale = cloneset(
            json!({"observedGeneration": 1, "replicas": 2, "readyReplicas": 2,
            "updatedReadyReplicas": 2, "updateRevision": "r2", "currentRevision": "r2"}),
        );
        assert!(
            !reached(Until::Complete, &stale, &ready(true)),
            "an old generation's status"
        );
    }
}
