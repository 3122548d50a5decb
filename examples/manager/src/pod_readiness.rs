//! The pod readiness controller (upstream `podreadiness`): a pod with the `KruisePodReady` readiness gate
//! (injected by the pod webhook) and no `KruisePodReady` condition gets the condition `True`, so it can
//! become Ready. Afterwards the condition belongs to whoever adds or removes not-ready reasons (lifecycle
//! hooks with `markPodNotReady`), and this controller leaves it alone.
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_manager::pod_readiness::needs_condition;
//!
//! let pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "p"},
//!     "spec": {"containers": [], "readinessGates": [{"conditionType": "KruisePodReady"}]},
//! })).unwrap();
//! assert!(needs_condition(&pod));
//! ```

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::keys::pod_readiness::KRUISE_POD_READY;
use kube::api::Patch;

use kube::{Api, ResourceExt};
use serde_json::{Value, json};

use super::actions::{self, ActionError};
use super::controllers::{ControllerContext, ControllerError, ControllerFuture, ManagedController};

/// Pods handled at the same time.
const CONCURRENCY: usize = 8;

/// Whether the pod has the `KruisePodReady` gate but no such condition yet (and is not being deleted).
#[must_use]
pub fn needs_condition(pod: &Pod) -> bool {
    let gated = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.readiness_gates.as_ref())
        .is_some_and(|gates| {
            gates
                .iter()
                .any(|gate| gate.condition_type == KRUISE_POD_READY)
        });
    gated
        && pod.metadata.deletion_timestamp.is_none()
        && kruise_api::pod::condition(pod, KRUISE_POD_READY).is_none()
}

/// The status patch adding `KruisePodReady=True` at `now`, conditional on the pod's `resourceVersion`.
#[must_use]
pub fn condition_patch(pod: &Pod, now: Timestamp) -> Value {
    json!({
        "metadata": {"resourceVersion": pod.metadata.resource_version},
        "status": {"conditions": [{
            "type": KRUISE_POD_READY,
            "status": "True",
            "lastTransitionTime": metav1_time(now),
        }]},
    })
}

fn metav1_time(now: Timestamp) -> String {
    // Kubernetes' metav1.Time: RFC 3339 with second precision, UTC.
    now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The pod readiness controller, registered in kruise-manager's controller set.
#[derive(Clone, Debug, Default)]
pub struct PodReadinessController {
    /// Watch only this namespace (default: all).
    pub namespace: Option<String>,
}

impl ManagedController for PodReadinessController {
    fn name(&self) -> &str {
        "pod-readiness"
    }

    fn run(&self, context: ControllerContext) -> ControllerFuture {
        let namespace = self.namespace.clone();
        Box::pin(async move {
            let pods: Api<Pod> = Api::all(context.client.clone());
            let metrics = context.metrics.clone();
            let stream = context
                .informers
                .get::<Pod>()
                .applied()
                .filter(move |pod| {
                    let wanted = namespace.as_deref().is_none_or(|namespace| {
                        pod.metadata.namespace.as_deref() == Some(namespace)
                    });
                    futures::future::ready(wanted && needs_condition(pod))
                })
                .map(|pod| {
                    let pods = pods.clone();
                    let metrics = metrics.clone();
                    async move {
                        let outcome = metrics.instrument(mark_ready(&pods, &pod)).await;
                        match outcome {
                            Ok(())
                            | Err(ActionError::Conflict { .. } | ActionError::NotFound { .. }) => {}
                            Err(error) => {
                                tracing::warn!(%error, "setting KruisePodReady failed");
                            }
                        }
                    }
                })
                .buffer_unordered(CONCURRENCY);
            let mut stream = std::pin::pin!(stream.take_until(context.shutdown.clone().wait()));
            while stream.next().await.is_some() {}
            Ok::<(), ControllerError>(())
        })
    }
}

async fn mark_ready(pods: &Api<Pod>, pod: &Pod) -> Result<(), ActionError> {
    let namespace = pod.namespace().unwrap_or_default();
    let key = format!("{namespace}/{}", pod.name_any());
    let patch = condition_patch(pod, Timestamp::now());
    let api: Api<Pod> = Api::namespaced(pods.clone().into_client(), &namespace);
    actions::patch(
        &api,
        &key,
        &pod.name_any(),
        Some("status"),
        &Patch::Strategic(&patch),
    )
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(gates: &[&str], conditions: &[(&str, &str)]) -> Pod {
        let gates: Vec<Value> = gates.iter().map(|g| json!({"conditionType": g})).collect();
        let conditions: Vec<Value> = conditions
            .iter()
            .map(|(t, s)| json!({"type": t, "status": s}))
            .collect();
        serde_json::from_value(json!({
            "metadata": {"name": "p", "namespace": "ns", "resourceVersion": "7"},
            "spec": {"containers": [], "readinessGates": gates},
            "status": {"conditions": conditions},
        }))
        .unwrap()
    }

    #[test]
    fn only_gated_pods_without_the_condition_get_it() {
        assert!(needs_condition(&pod(&["KruisePodReady"], &[])));
        assert!(needs_condition(&pod(
            &["InPlaceUpdateReady", "KruisePodReady"],
            &[("Ready", "False")]
        )));
        assert!(!needs_condition(&pod(&["InPlaceUpdateReady"], &[])));
        assert!(!needs_condition(&pod(&[], &[])));
        assert!(
            !needs_condition(&pod(&["KruisePodReady"], &[("KruisePodReady", "False")])),
            "a hook's not-ready reason is not overwritten"
        );
        let mut deleting = pod(&["KruisePodReady"], &[]);
        deleting.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                "2024-05-01T10:00:00Z".parse().unwrap(),
            ));
        assert!(!needs_condition(&deleting));
    }

    #[test]
    fn the_patch_is_conditional_and_sets_true() {
        let patch = condition_patch(
            &pod(&["KruisePodReady"], &[]),
            "2024-05-01T10:00:00.5Z".parse().unwrap(),
        );
        assert_eq!(patch["metadata"]["resourceVersion"], "7");
        let condition = &patch["status"]["conditions"][0];
        assert_eq!(condition["type"], "KruisePodReady");
        assert_eq!(condition["status"], "True");
        assert_eq!(condition["lastTransitionTime"], "2024-05-01T10:00:00Z");
    }
}
