//! Builders for the Advanced StatefulSet planner tests: a StatefulSet `web` in `default`, pods by name and
//! revision, and a one-line summary of a plan's actions.

#![allow(dead_code)]

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::jiff::{Timestamp, Zoned, tz::TimeZone};
use kruise_api::apps::v1beta1::StatefulSet;
use kruise_inplace::calculate::RevisionRef;
use kruise_schedule::statefulset::{
    ActionKind, Options, Plan, PlanInput, Revisions, SpecificKind, plan,
};
use serde_json::{Value, json};

pub const NOW: &str = "2024-05-01T10:00:00Z";

pub fn now() -> Zoned {
    NOW.parse::<Timestamp>().unwrap().to_zoned(TimeZone::UTC)
}

/// The pod template of revision `rev` (`r1` → image `nginx:1`, `r2` → `nginx:2`, ...), with the
/// `InPlaceUpdateReady` readiness gate.
pub fn template(rev: &str) -> Value {
    json!({
        "metadata": {"labels": {"app": "web"}},
        "spec": {
            "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
            "containers": [{"name": "c", "image": format!("nginx:{}", rev.trim_start_matches('r'))}],
        },
    })
}

/// A StatefulSet `web` whose template is revision `r2`, with `spec` merged over the base spec.
pub fn set(spec: Value) -> StatefulSet {
    let mut base = json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default", "uid": "set-uid", "generation": 3},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": template("r2"),
        },
    });
    if let (Some(target), Value::Object(extra)) = (base["spec"].as_object_mut(), spec) {
        for (key, value) in extra {
            target.insert(key, value);
        }
    }
    serde_json::from_value(base).unwrap()
}

/// A Running, Ready pod `name` at revision `rev` (ready since an hour before [`NOW`]).
pub fn pod(name: &str, rev: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {
            "name": name, "namespace": "default", "uid": format!("uid-{name}"),
            "labels": {"app": "web", "controller-revision-hash": rev, "statefulset.kubernetes.io/pod-name": name},
        },
        "spec": {
            "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
            "containers": [{"name": "c", "image": format!("nginx:{}", rev.trim_start_matches('r'))}],
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2024-05-01T09:00:00Z"},
                {"type": "InPlaceUpdateReady", "status": "True"},
            ],
            "containerStatuses": [{"name": "c", "image": format!("nginx:{}", rev.trim_start_matches('r')), "imageID": format!("id-{rev}"), "ready": true, "restartCount": 0}],
        },
    }))
    .unwrap()
}

/// `pod` with `Ready` False.
pub fn not_ready(mut pod: Pod) -> Pod {
    let status = pod.status.as_mut().unwrap();
    for condition in status.conditions.as_mut().unwrap() {
        if condition.type_ == "Ready" {
            condition.status = "False".into();
        }
    }
    pod
}

/// `pod` in `phase` (not ready).
pub fn phase(pod: Pod, phase: &str) -> Pod {
    let mut pod = not_ready(pod);
    pod.status.as_mut().unwrap().phase = Some(phase.into());
    pod
}

/// `pod` being deleted.
pub fn terminating(mut pod: Pod) -> Pod {
    pod.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        NOW.parse().unwrap(),
    ));
    pod
}

/// `pod` with a label.
pub fn label(mut pod: Pod, key: &str, value: &str) -> Pod {
    pod.metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert(key.into(), value.into());
    pod
}

/// `pod` in lifecycle `state`.
pub fn state(pod: Pod, state: &str) -> Pod {
    label(pod, "lifecycle.apps.kruise.io/state", state)
}

/// `pod` with a finalizer.
pub fn finalizer(mut pod: Pod, finalizer: &str) -> Pod {
    pod.metadata
        .finalizers
        .get_or_insert_with(Default::default)
        .push(finalizer.into());
    pod
}

/// Revision data for `r1`..`rN`.
pub fn revision_data(names: &[&str]) -> Vec<(String, Value)> {
    names
        .iter()
        .map(|name| {
            let template: k8s_openapi::api::core::v1::PodTemplateSpec =
                serde_json::from_value(template(name)).unwrap();
            (
                (*name).to_owned(),
                kruise_inplace::revision::template_data_value(&template).unwrap(),
            )
        })
        .collect()
}

pub fn refs(data: &[(String, Value)]) -> Vec<RevisionRef<'_>> {
    data.iter()
        .map(|(name, data)| RevisionRef {
            name,
            data: Some(data),
            annotations: None,
        })
        .collect()
}

/// Plans with current revision `r1`, update revision `r2`, both with data, and `options`.
pub fn run_with(
    set: &StatefulSet,
    pods: &[Pod],
    claims: &[PersistentVolumeClaim],
    options: &Options,
) -> Plan {
    let data = revision_data(&["r1", "r2"]);
    let known = refs(&data);
    let now = now();
    let input = PlanInput::new(
        set,
        pods,
        Revisions::named("r1", "r2").with_known(&known),
        &now,
        options,
    )
    .with_claims(claims);
    plan(&input)
}

/// [`run_with`] with default options and no claims.
pub fn run(set: &StatefulSet, pods: &[Pod]) -> Plan {
    run_with(set, pods, &[], &Options::default())
}

/// One line per action: `create web-0@r2`, `claim data-web-0`, `delete web-3`, `inplace web-2`,
/// `lifecycle web-1 PreparingDelete`, `refresh web-1`, `identity web-1`, `owners data-web-1`.
pub fn summary(plan: &Plan, pods: &[Pod], claims: &[PersistentVolumeClaim]) -> Vec<String> {
    plan.actions
        .iter()
        .map(|action| {
            let name = action.object_name(pods, claims);
            match &action.kind {
                ActionKind::CreatePod { pod, .. } => format!(
                    "create {name}@{}",
                    pod.metadata.labels.as_ref().unwrap()["controller-revision-hash"]
                ),
                ActionKind::CreateClaim { .. } => format!("claim {name}"),
                ActionKind::DeletePod { .. } => format!("delete {name}"),
                ActionKind::Lifecycle { transition, .. } => format!(
                    "lifecycle {name} {}",
                    transition.to.as_ref().map_or("(none)", |s| s.as_str())
                ),
                ActionKind::RefreshInPlace { .. } => format!("refresh {name}"),
                ActionKind::UpdateInPlace { .. } => format!("inplace {name}"),
                ActionKind::Specific(SpecificKind::UpdateIdentity { .. }) => {
                    format!("identity {name}")
                }
                ActionKind::Specific(SpecificKind::UpdateClaimOwners { .. }) => {
                    format!("owners {name}")
                }
                other => format!("{} {name}", other.name()),
            }
        })
        .collect()
}

/// Pods `web-<i>` for each `(ordinal, rev)`.
pub fn pods(list: &[(i64, &str)]) -> Vec<Pod> {
    list.iter()
        .map(|(i, rev)| pod(&format!("web-{i}"), rev))
        .collect()
}
