//! Container launch priority in the pod webhook: the admission patch that carries the decisions of
//! [`kruise_inplace::launch_priority`] (which pods get a `KRUISE_CONTAINER_BARRIER` env in every container,
//! with which priority; upstream `apis/apps/pub/launch_priority.go` and the pod webhook's
//! `containerLaunchPriorityInitialization`) to the API server.
//!
//! * a pod with only `generateName` gets its name now, since the barrier ConfigMap is named after it;
//! * a container's env list is created when it has none, appended to otherwise.
//!
//! Deviation: a container that already has a `KRUISE_CONTAINER_BARRIER` env keeps it and gets no second
//! one (upstream appends a duplicate; this only matters if the webhook runs twice on one pod).
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_manager::webhook::launch_priority::patch;
//!
//! let pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web-0", "annotations": {"apps.kruise.io/container-launch-priority": "Ordered"}},
//!     "spec": {"containers": [{"name": "a"}, {"name": "b"}]}
//! })).unwrap();
//! let ops = patch(&pod, |prefix| format!("{prefix}x")).unwrap();
//! assert_eq!(ops[1]["value"][0]["valueFrom"]["configMapKeyRef"]["key"], "p_-1");
//! ```

use k8s_openapi::api::core::v1::Pod;
use kruise_api::keys::launch_priority::BARRIER_ENV;
use kruise_inplace::launch_priority::{PriorityError, barrier_env, webhook_priorities};
use serde_json::{Value, json};

/// RFC 6902 operations injecting the barriers; `generated_name` is used (and written to
/// `/metadata/name`) when the pod has only a `generateName`.
///
/// # Errors
/// [`PriorityError`] for a `KRUISE_CONTAINER_PRIORITY` that is not an integer.
pub fn patch(
    pod: &Pod,
    generated_name: impl FnOnce(&str) -> String,
) -> Result<Vec<Value>, PriorityError> {
    let Some(spec) = pod.spec.as_ref() else {
        return Ok(Vec::new());
    };
    let priorities = match webhook_priorities(spec, pod.metadata.annotations.as_ref())? {
        Some(priorities) if !priorities.is_empty() => priorities,
        _ => return Ok(Vec::new()),
    };
    let mut ops = Vec::new();
    let name = match (
        pod.metadata.name.as_deref(),
        pod.metadata.generate_name.as_deref(),
    ) {
        (Some(name), _) if !name.is_empty() => name.to_owned(),
        (_, Some(prefix)) if !prefix.is_empty() => {
            let name = generated_name(prefix);
            ops.push(json!({"op": "add", "path": "/metadata/name", "value": name}));
            name
        }
        _ => String::new(),
    };
    for (index, (container, priority)) in spec.containers.iter().zip(priorities).enumerate() {
        let envs = container.env.as_deref();
        if envs
            .unwrap_or_default()
            .iter()
            .any(|env| env.name == BARRIER_ENV)
        {
            continue;
        }
        let env = json!(barrier_env(priority, &name));
        ops.push(match envs {
            Some(_) => json!({"op": "add", "path": format!("/spec/containers/{index}/env/-"), "value": env}),
            None => json!({"op": "add", "path": format!("/spec/containers/{index}/env"), "value": [env]}),
        });
    }
    Ok(ops)
}

#[cfg(test)]
mod tests {
    use kruise_api::keys::launch_priority::LAUNCH_PRIORITY_ANNOTATION;

    use super::*;

    fn pod(annotation: Option<&str>, containers: usize) -> Pod {
        let containers: Vec<Value> = (0..containers)
            .map(|index| json!({"name": format!("c{index}")}))
            .collect();
        let mut value = json!({"metadata": {"name": "web-1"}, "spec": {"containers": containers}});
        if let Some(annotation) = annotation {
            value["metadata"]["annotations"] = json!({ LAUNCH_PRIORITY_ANNOTATION: annotation });
        }
        serde_json::from_value(value).unwrap()
    }

    fn barrier(priority: i64) -> Value {
        json!({"name": "KRUISE_CONTAINER_BARRIER", "valueFrom": {"configMapKeyRef": {
            "name": "web-1-barrier", "key": format!("p_{priority}")}}})
    }

    #[test]
    fn barriers_are_appended_or_created() {
        let mut pod = pod(Some("Ordered"), 2);
        pod.spec.as_mut().unwrap().containers[1].env = Some(vec![
            serde_json::from_value(json!({"name": "KRUISE_CONTAINER_PRIORITY", "value": "3"}))
                .unwrap(),
        ]);
        let ops = patch(&pod, |_| unreachable!()).unwrap();
        assert_eq!(
            ops,
            [
                json!({"op": "add", "path": "/spec/containers/0/env", "value": [barrier(0)]}),
                json!({"op": "add", "path": "/spec/containers/1/env/-", "value": barrier(-1)}),
            ]
        );
        // Already injected: nothing more.
        let spec = pod.spec.as_mut().unwrap();
        for container in &mut spec.containers {
            container
                .env
                .get_or_insert_with(Vec::new)
                .push(serde_json::from_value(barrier(0)).unwrap());
        }
        assert!(patch(&pod, |_| unreachable!()).unwrap().is_empty());
    }

    #[test]
    fn pods_that_ask_for_nothing_get_nothing() {
        assert!(patch(&pod(None, 3), |_| unreachable!()).unwrap().is_empty());
        assert!(
            patch(&pod(Some("Ordered"), 1), |_| unreachable!())
                .unwrap()
                .is_empty()
        );
        assert!(
            patch(&pod(Some("Ordered"), 0), |_| unreachable!())
                .unwrap()
                .is_empty()
        );
        assert!(
            patch(&Pod::default(), |_| unreachable!())
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_bad_priority_rejects_the_pod() {
        let mut pod = pod(None, 2);
        pod.spec.as_mut().unwrap().containers[0].env = Some(vec![
            serde_json::from_value(json!({"name": "KRUISE_CONTAINER_PRIORITY", "value": "1.5"}))
                .unwrap(),
        ]);
        let error = patch(&pod, |_| unreachable!()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "container c0: KRUISE_CONTAINER_PRIORITY=\"1.5\" is not an integer"
        );
    }

    #[test]
    fn generate_name_pods_get_their_name_first() {
        let mut pod = pod(Some("Ordered"), 2);
        pod.metadata.name = None;
        pod.metadata.generate_name = Some("web-".into());
        let ops = patch(&pod, |prefix| format!("{prefix}xyz12")).unwrap();
        assert_eq!(
            ops.first(),
            Some(&json!({"op": "add", "path": "/metadata/name", "value": "web-xyz12"}))
        );
        assert_eq!(
            ops[1]["value"][0]["valueFrom"]["configMapKeyRef"]["name"],
            "web-xyz12-barrier"
        );
    }
}
