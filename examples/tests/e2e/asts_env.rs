//! The environment of the Advanced StatefulSet scenarios: the CloneSet scenarios' namespace, node
//! simulator and manager handle ([`Env`]), with kruise-manager run as a child process (the binary under
//! test, so its flags and registration are tested too) watching the namespace's StatefulSets, plus helpers
//! to create, patch and read Advanced StatefulSets.

use std::time::Duration;

use anyhow::{Result, anyhow};
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::StatefulSet;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use serde_json::{Value, json};

use crate::cloneset_env::{Env, ManagerHandle, WAIT, describe, is_ready, revision};
use crate::support::{Cluster, wait_for};

/// How long a rollout may take in these scenarios (generous: the machine may be loaded).
pub const ROLLOUT_WAIT: Duration = Duration::from_secs(150);

/// Starts the namespace, the simulator and a kruise-manager child process (log `manager-NAME.log`).
pub async fn start(cluster: &Cluster, namespace: &str, name: &str) -> Result<Env> {
    start_with(cluster, namespace, name, &[]).await
}

/// [`start`] with `extra` manager arguments (feature gates).
pub async fn start_with(
    cluster: &Cluster,
    namespace: &str,
    name: &str,
    extra: &[&str],
) -> Result<Env> {
    let mut env = Env::without_manager(cluster, namespace).await?;
    env.manager = Some(manager_with(cluster, namespace, name, extra).await?);
    wait_for_api(&env).await?;
    Ok(env)
}

/// A kruise-manager child process running the Advanced StatefulSet controller for `namespace`.
pub async fn manager(cluster: &Cluster, namespace: &str, name: &str) -> Result<ManagerHandle> {
    manager_with(cluster, namespace, name, &[]).await
}

/// [`manager`] with `extra` arguments.
async fn manager_with(
    cluster: &Cluster,
    namespace: &str,
    name: &str,
    extra: &[&str],
) -> Result<ManagerHandle> {
    let scope = format!("--statefulset-namespace={namespace}");
    let mut args = vec![scope.as_str()];
    args.extend_from_slice(extra);
    ManagerHandle::child(cluster, namespace, name, &args).await
}

/// Waits until v1beta1 Advanced StatefulSets are served (the manager installs the CRDs at start).
pub async fn wait_for_api(env: &Env) -> Result<()> {
    wait_for("the v1beta1 Advanced StatefulSet API", WAIT, || async {
        Ok(sets(env)
            .list(&ListParams::default().limit(1))
            .await
            .ok()
            .map(|_| ()))
    })
    .await
}

/// The Advanced StatefulSet API of the namespace.
pub fn sets(env: &Env) -> Api<StatefulSet> {
    Api::namespaced(env.client.clone(), &env.namespace)
}

/// Creates `object` (a v1beta1 StatefulSet as JSON) in the namespace.
pub async fn create(env: &Env, mut object: Value) -> Result<StatefulSet> {
    object["metadata"]["namespace"] = json!(env.namespace);
    let set: StatefulSet = serde_json::from_value(object)?;
    Ok(sets(env).create(&PostParams::default(), &set).await?)
}

/// A v1beta1 StatefulSet `name` (label `app=<name>`, container `main` at `image`) with `spec` merged
/// over it.
pub fn statefulset(name: &str, replicas: i32, image: &str, spec: Value) -> Value {
    let mut object = json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": image}]},
            },
        },
    });
    merge(&mut object["spec"], spec);
    object
}

fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                merge(target.entry(key).or_insert(Value::Null), value);
            }
        }
        (target, patch) => *target = patch,
    }
}

/// A JSON merge patch of the StatefulSet.
pub async fn patch(env: &Env, name: &str, patch: Value) -> Result<StatefulSet> {
    Ok(sets(env)
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?)
}

/// The image container `container` runs (from its status).
pub fn running(pod: &Pod, container: &str) -> Option<String> {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|statuses| statuses.iter().find(|s| s.name == container))
        .map(|status| status.image.clone())
}

/// Waits until the StatefulSet `name` has exactly the pods `names`, all Ready, running `image` in
/// `container`, at the update revision, and its status says so; returns the pods by name.
pub async fn wait_rolled_out(
    env: &Env,
    name: &str,
    label: &str,
    names: &[&str],
    container: &str,
    image: &str,
) -> Result<Vec<Pod>> {
    wait_for(
        &format!("{name}: pods {names:?} Ready at {image}"),
        ROLLOUT_WAIT,
        || async {
            let set = sets(env).get(name).await?;
            let status = set.status.clone().unwrap_or_default();
            let pods = env.pods(label).await?;
            let found: Vec<String> = pods.iter().map(ResourceExt::name_any).collect();
            let replicas = i32::try_from(names.len())?;
            let done = found == names
                && pods
                    .iter()
                    .all(|pod| is_ready(pod) && running(pod, container).as_deref() == Some(image))
                && pods.iter().all(|pod| revision(pod) == status.update_revision)
                && status.replicas == replicas
                && status.ready_replicas == replicas
                && status.updated_replicas == replicas
                && status.updated_ready_replicas == replicas
                && status.current_revision == status.update_revision
                && status.observed_generation == set.metadata.generation.unwrap_or(0);
            if done {
                return Ok(Some(pods));
            }
            Err(anyhow!(
                "pods {:?}; status replicas {} ready {} updated {} updatedReady {} current {} update {}",
                pods.iter().map(describe).collect::<Vec<_>>(),
                status.replicas,
                status.ready_replicas,
                status.updated_replicas,
                status.updated_ready_replicas,
                status.current_revision,
                status.update_revision
            ))
        },
    )
    .await
}

/// The image container `container` of each pod runs, for messages.
pub fn images(pods: &[Pod], container: &str) -> Vec<String> {
    pods.iter()
        .map(|pod| {
            format!(
                "{}={}",
                pod.name_any(),
                running(pod, container).as_deref().unwrap_or("-")
            )
        })
        .collect()
}
