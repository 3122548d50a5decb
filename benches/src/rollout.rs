//! A realistic CloneSet fleet for the rollout benchmarks and their baseline.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Container, ContainerStatus, Pod, PodCondition, PodReadinessGate, PodSpec, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::{SignedDuration, Timestamp, Zoned, tz::TimeZone};
use kruise_api::apps::v1beta1::CloneSet;
use kruise_inplace::calculate::RevisionRef;
use kruise_schedule::cloneset::Options;
use serde_json::Value;

/// A CloneSet of `size` replicas mid-rollout and its pods.
pub struct Fleet {
    /// The CloneSet (v1beta1): InPlaceIfPossible, partition 10%, maxUnavailable 20%, a weight priority, a
    /// scatter term, a preDelete hook that marks pods not ready.
    pub cloneset: CloneSet,
    /// The pods: 60% at the current revision, 3% not ready, 1% PreparingDelete (held by the hook).
    pub pods: Vec<Pod>,
    /// Current revision name.
    pub current: String,
    /// Update revision name.
    pub update: String,
    /// Both revisions' data.
    pub data: Vec<(String, Value)>,
    /// The decision time.
    pub now: Zoned,
    /// Upstream's default options.
    pub options: Options,
}

impl Fleet {
    /// A fleet of `size` pods.
    #[must_use]
    pub fn new(size: usize) -> Self {
        let mut cloneset: CloneSet = serde_json::from_value(serde_json::json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
            "metadata": {"name": "bench", "namespace": "default", "uid": "u-1", "generation": 3},
            "spec": {
                "replicas": size,
                "selector": {"matchLabels": {"app": "bench"}},
                "template": {"metadata": {"labels": {"app": "bench"}},
                    "spec": {"containers": [{"name": "main", "image": "registry.example.com/app:v2"}]}},
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {
                    "podUpdatePolicy": "InPlaceIfPossible", "partition": "10%", "maxUnavailable": "20%",
                    "priorityStrategy": {"weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {"zone": "a"}}}]},
                    "scatterStrategy": [{"key": "rack", "value": "r1"}]}},
                "lifecycle": {"preDelete": {"finalizersHandler": ["example.com/unregister"], "markPodNotReady": true}},
            },
        }))
        .unwrap_or_default();
        let old_template = {
            let mut t = cloneset.spec.template.clone();
            if let Some(c) = t.spec.as_mut().and_then(|s| s.containers.first_mut()) {
                c.image = Some("registry.example.com/app:v1".into());
            }
            t
        };
        let data =
            |template| kruise_inplace::revision::template_data_value(template).unwrap_or_default();
        let current = "bench-5c5f449787".to_owned();
        let update = "bench-7cb9c88699".to_owned();
        let data = vec![
            (current.clone(), data(&old_template)),
            (update.clone(), data(&cloneset.spec.template)),
        ];
        cloneset.status = Some(Default::default());
        let now: Timestamp = "2024-05-01T10:00:00Z"
            .parse()
            .unwrap_or(Timestamp::UNIX_EPOCH);
        let pods = (0..size).map(|i| pod(i, &current, &update, now)).collect();
        Self {
            cloneset,
            pods,
            current,
            update,
            data,
            now: now.to_zoned(TimeZone::UTC),
            options: Options::default(),
        }
    }

    /// The revisions as the planner takes them.
    #[must_use]
    pub fn revision_refs(&self) -> Vec<RevisionRef<'_>> {
        self.data
            .iter()
            .map(|(name, data)| RevisionRef {
                name,
                data: Some(data),
                annotations: None,
            })
            .collect()
    }
}

fn pod(i: usize, current: &str, update: &str, now: Timestamp) -> Pod {
    let old = i % 5 < 3;
    let revision = if old { current } else { update };
    let hash = revision.rsplit('-').next().unwrap_or(revision);
    let mut labels: BTreeMap<String, String> = [
        ("app", "bench".to_owned()),
        ("controller-revision-hash", revision.to_owned()),
        ("pod-template-hash", hash.to_owned()),
        ("apps.kruise.io/cloneset-instance-id", format!("{i:05}")),
        (
            "zone",
            ["a", "b", "c"]
                .get(i % 3)
                .copied()
                .unwrap_or("a")
                .to_owned(),
        ),
        ("rack", format!("r{}", i % 10)),
        ("lifecycle.apps.kruise.io/state", "Normal".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let pre_deleting = i % 100 == 7;
    if pre_deleting {
        labels.insert(
            "lifecycle.apps.kruise.io/state".into(),
            "PreparingDelete".into(),
        );
    }
    let ready = i % 33 != 5;
    let age = SignedDuration::from_secs(3600 + (i as i64 % 7200));
    let since = now.checked_sub(age).unwrap_or(now);
    let condition = |type_: &str, ok: bool| PodCondition {
        type_: type_.to_owned(),
        status: if ok { "True" } else { "False" }.to_owned(),
        last_transition_time: Some(Time(since)),
        ..Default::default()
    };
    Pod {
        metadata: ObjectMeta {
            name: Some(format!("bench-{i:05}")),
            namespace: Some("default".into()),
            labels: Some(labels),
            annotations: Some([("kubernetes.io/psp".to_owned(), "restricted".to_owned())].into()),
            finalizers: pre_deleting.then(|| vec!["example.com/unregister".to_owned()]),
            creation_timestamp: Some(Time(since)),
            resource_version: Some(format!("{}", 1000 + i)),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "main".into(),
                image: Some(format!(
                    "registry.example.com/app:{}",
                    if old { "v1" } else { "v2" }
                )),
                ..Default::default()
            }],
            node_name: Some(format!("node-{}", i % 1000)),
            readiness_gates: Some(vec![PodReadinessGate {
                condition_type: "InPlaceUpdateReady".into(),
            }]),
            ..Default::default()
        }),
        status: Some(PodStatus {
            phase: Some("Running".into()),
            conditions: Some(vec![
                condition("Initialized", true),
                condition("Ready", ready),
                condition("ContainersReady", ready),
                condition("PodScheduled", true),
                condition("InPlaceUpdateReady", true),
            ]),
            container_statuses: Some(vec![ContainerStatus {
                name: "main".into(),
                ready,
                restart_count: i32::try_from(i % 3).unwrap_or(0),
                image: "registry.example.com/app".into(),
                image_id: "sha256:abc".into(),
                ..Default::default()
            }]),
            ..Default::default()
        }),
    }
}

/// The baseline: one walk over the pods reading the revision label and the Ready condition.
#[must_use]
pub fn baseline(pods: &[Pod], update: &str) -> (usize, usize) {
    let mut updated = 0;
    let mut ready = 0;
    for pod in pods {
        let revision = pod
            .metadata
            .labels
            .as_ref()
            .and_then(|labels| labels.get("controller-revision-hash"));
        if revision.is_some_and(|r| r == update) {
            updated += 1;
        }
        let is_ready = pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
        if is_ready {
            ready += 1;
        }
    }
    (updated, ready)
}
