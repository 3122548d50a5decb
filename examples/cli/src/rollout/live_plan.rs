//! `kruise rollout plan KIND/NAME`: the workload and what its planner reads, from the cluster. The pods
//! are those the selector matches whose controller is the workload (by uid), the claims those the
//! selector matches, the ControllerRevisions those the workload owns, and for an Advanced DaemonSet every
//! Node; together they are what `-f` and `--pods` would hold.

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Node, PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::ListParams;
use kube::{Api, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::PlanArgs;
use super::owned::{Owned, owned_from_objects};
use super::workload::{Workload, workload_from_object};
use crate::CliError;
use crate::live::target::{Target, WorkloadKind};
use crate::live::verbs::{block_on, cluster, read};

/// Everything listed in the namespace (and the Nodes), before choosing what belongs to the workload.
#[derive(Debug, Default)]
pub(super) struct Listed {
    /// Pods of the namespace.
    pub(super) pods: Vec<Value>,
    /// PersistentVolumeClaims of the namespace.
    pub(super) claims: Vec<Value>,
    /// ControllerRevisions of the namespace.
    pub(super) revisions: Vec<Value>,
    /// Nodes of the cluster (listed for a DaemonSet only).
    pub(super) nodes: Vec<Value>,
}

fn labels(object: &Value) -> std::collections::BTreeMap<String, String> {
    object
        .pointer("/metadata/labels")
        .cloned()
        .and_then(|labels| serde_json::from_value(labels).ok())
        .unwrap_or_default()
}

fn owned_by(object: &Value, uid: &str, controller_only: bool) -> bool {
    object
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|owners| {
            owners.iter().any(|owner| {
                owner.get("uid").and_then(Value::as_str) == Some(uid)
                    && (!controller_only
                        || owner.get("controller").and_then(Value::as_bool) == Some(true))
            })
        })
}

/// What of `listed` the planner of `workload` reads: its pods (selector and controller uid), the claims its
/// selector matches, its ControllerRevisions and (DaemonSet) the Nodes.
///
/// # Errors
/// The workload's `spec.selector` does not decode or is invalid.
pub(super) fn belonging(
    workload: &Value,
    kind: WorkloadKind,
    listed: Listed,
) -> Result<Vec<Value>, String> {
    let selector: LabelSelector = serde_json::from_value(
        workload
            .pointer("/spec/selector")
            .cloned()
            .unwrap_or(Value::Null),
    )
    .map_err(|error| format!("spec.selector: {error}"))?;
    let uid = workload
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let selects = |object: &Value| -> Result<bool, String> {
        kruise_api::label_selector::matches(&selector, &labels(object))
            .map_err(|error| format!("spec.selector: {error}"))
    };
    let mut chosen = Vec::new();
    for pod in listed.pods {
        if owned_by(&pod, uid, true) && selects(&pod)? {
            chosen.push(pod);
        }
    }
    for claim in listed.claims {
        if selects(&claim)? {
            chosen.push(claim);
        }
    }
    chosen.extend(
        listed
            .revisions
            .into_iter()
            .filter(|revision| owned_by(revision, uid, false)),
    );
    if kind == WorkloadKind::DaemonSet {
        chosen.extend(listed.nodes);
    }
    Ok(chosen)
}

/// Lists `K` in the namespace of `api` as JSON objects (with `apiVersion` and `kind`).
async fn list<K>(api: Api<K>, what: &str) -> Result<Vec<Value>, CliError>
where
    K: Resource + Clone + DeserializeOwned + Serialize + std::fmt::Debug,
{
    api.list(&ListParams::default())
        .await
        .map_err(|error| cluster(format!("listing {what}: {error}")))?
        .items
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<Vec<Value>, _>>()
        .map_err(cluster)
}

/// Reads `target` and what its planner reads from the cluster `args.cluster` names.
///
/// # Errors
/// The cluster side fails (exit code 1), or the workload does not decode (exit code 2).
pub(super) fn read_live(args: &PlanArgs, target: &Target) -> Result<(Workload, Owned), CliError> {
    let display = target.display();
    let (object, objects) = block_on(async {
        let connection = args.cluster.connect().await?;
        let workload = read(&connection, target).await?;
        let client = &connection.client;
        let namespace = &connection.namespace;
        let listed = Listed {
            pods: list(Api::<Pod>::namespaced(client.clone(), namespace), "pods").await?,
            claims: list(
                Api::<PersistentVolumeClaim>::namespaced(client.clone(), namespace),
                "PersistentVolumeClaims",
            )
            .await?,
            revisions: list(
                Api::<ControllerRevision>::namespaced(client.clone(), namespace),
                "ControllerRevisions",
            )
            .await?,
            nodes: if target.kind == WorkloadKind::DaemonSet {
                list(Api::<Node>::all(client.clone()), "Nodes").await?
            } else {
                Vec::new()
            },
        };
        let objects = belonging(&workload.object, target.kind, listed)
            .map_err(|error| CliError::Invalid(format!("{display}: {error}")))?;
        Ok((workload.object, objects))
    })?;
    let workload = workload_from_object(&display, &object)?;
    let owned = owned_from_objects(&format!("the pods of {display}"), objects)?;
    Ok((workload, owned))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(kind: &str, name: &str, labels: &Value, owner: Option<(&str, bool)>) -> Value {
        let owners: Vec<Value> = owner
            .map(|(uid, controller)| json!({"uid": uid, "controller": controller}))
            .into_iter()
            .collect();
        json!({"kind": kind, "metadata": {"name": name, "labels": labels, "ownerReferences": owners}})
    }

    fn names(objects: &[Value]) -> Vec<&str> {
        objects
            .iter()
            .filter_map(|o| o.pointer("/metadata/name").and_then(Value::as_str))
            .collect()
    }

    #[test]
    fn the_plan_reads_the_workloads_pods_claims_revisions_and_for_daemonsets_nodes() {
        let workload = json!({"metadata": {"uid": "u1"},
                              "spec": {"selector": {"matchLabels": {"app": "web"}}}});
        let web = json!({"app": "web"});
        let listed = || Listed {
            pods: vec![
                object("Pod", "mine", &web, Some(("u1", true))),
                object("Pod", "adopted-elsewhere", &web, Some(("u2", true))),
                object("Pod", "not-controller", &web, Some(("u1", false))),
                object(
                    "Pod",
                    "other-labels",
                    &json!({"app": "db"}),
                    Some(("u1", true)),
                ),
            ],
            claims: vec![
                object("PersistentVolumeClaim", "data-mine", &web, None),
                object(
                    "PersistentVolumeClaim",
                    "data-db",
                    &json!({"app": "db"}),
                    None,
                ),
            ],
            revisions: vec![
                object(
                    "ControllerRevision",
                    "web-1",
                    &json!({}),
                    Some(("u1", true)),
                ),
                object("ControllerRevision", "db-1", &json!({}), Some(("u3", true))),
            ],
            nodes: vec![object("Node", "node-a", &json!({}), None)],
        };
        let chosen = belonging(&workload, WorkloadKind::CloneSet, listed()).unwrap();
        assert_eq!(names(&chosen), ["mine", "data-mine", "web-1"]);
        let chosen = belonging(&workload, WorkloadKind::DaemonSet, listed()).unwrap();
        assert_eq!(names(&chosen), ["mine", "data-mine", "web-1", "node-a"]);
        let bad = json!({"spec": {"selector": {"matchLabels": "x"}}});
        let error = belonging(&bad, WorkloadKind::CloneSet, Listed::default()).unwrap_err();
        assert!(error.starts_with("spec.selector"), "{error}");
    }
}
