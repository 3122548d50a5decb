//! Container launch priority (upstream `apis/apps/pub/launch_priority.go`): pods that ask for ordered or
//! prioritised container starts get a `KRUISE_CONTAINER_BARRIER` env in every container, read from the ConfigMap
//! `<pod>-barrier` at key `p_<priority>` (the daemon writes the keys in priority order; a container cannot start
//! before its key exists).
//!
//! Rules, as upstream's pod webhook:
//! * pods with a single container are left alone;
//! * annotation `apps.kruise.io/container-launch-priority: Ordered` gives container `i` priority `-i`
//!   (the first starts first), whatever the envs say;
//! * otherwise each container's `KRUISE_CONTAINER_PRIORITY` env (a literal integer; the last one wins;
//!   absent = 0) gives its priority, and barriers are injected only if some priority is non-zero and not
//!   all are equal. A value that is not an integer rejects the pod.
//! * a pod with only `generateName` gets its name now, since the barrier ConfigMap is named after it.
//!
//! Deviation: a container that already has a `KRUISE_CONTAINER_BARRIER` env keeps it and gets no second
//! one (upstream appends a duplicate; this only matters if the webhook runs twice on one pod).
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_examples::webhook::launch_priority::priorities;
//!
//! let pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"annotations": {"apps.kruise.io/container-launch-priority": "Ordered"}},
//!     "spec": {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}
//! })).unwrap();
//! assert_eq!(priorities(&pod).unwrap(), Some(vec![0, -1, -2]));
//! ```

use k8s_openapi::api::core::v1::Pod;
use kruise_api::keys::launch_priority::{
    BARRIER_CONFIG_MAP_SUFFIX, BARRIER_ENV, BARRIER_KEY_PREFIX, LAUNCH_ORDERED,
    LAUNCH_PRIORITY_ANNOTATION, PRIORITY_ENV,
};
use serde_json::{Value, json};

/// A `KRUISE_CONTAINER_PRIORITY` value that is not an integer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("container {container:?}: {PRIORITY_ENV}={value:?} is not an integer")]
pub struct InvalidPriority {
    /// The container.
    pub container: String,
    /// The value as written.
    pub value: String,
}

/// The priority of every container, in spec order, or `None` when the pod needs no launch ordering.
///
/// # Errors
/// A `KRUISE_CONTAINER_PRIORITY` value that does not parse as an integer.
pub fn priorities(pod: &Pod) -> Result<Option<Vec<i64>>, InvalidPriority> {
    let containers = pod
        .spec
        .as_ref()
        .map_or(&[][..], |spec| &spec.containers[..]);
    if containers.len() <= 1 {
        return Ok(None);
    }
    let ordered = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(LAUNCH_PRIORITY_ANNOTATION))
        .is_some_and(|value| value == LAUNCH_ORDERED);
    if ordered {
        return Ok(Some(
            (0..containers.len()).map(|index| -(index as i64)).collect(),
        ));
    }
    let mut result = Vec::with_capacity(containers.len());
    for container in containers {
        let mut priority = 0;
        for env in container
            .env
            .iter()
            .flatten()
            .filter(|env| env.name == PRIORITY_ENV)
        {
            let value = env.value.as_deref().unwrap_or_default();
            priority = parse_go_int(value).ok_or_else(|| InvalidPriority {
                container: container.name.clone(),
                value: value.to_owned(),
            })?;
        }
        result.push(priority);
    }
    let any_set = result.iter().any(|&priority| priority != 0);
    let all_equal = result.windows(2).all(|pair| pair.first() == pair.last());
    Ok((any_set && !all_equal).then_some(result))
}

/// The barrier env of a container with `priority` in the pod `pod_name`.
#[must_use]
pub fn barrier_env(priority: i64, pod_name: &str) -> Value {
    json!({
        "name": BARRIER_ENV,
        "valueFrom": {"configMapKeyRef": {
            "name": format!("{pod_name}{BARRIER_CONFIG_MAP_SUFFIX}"),
            "key": format!("{BARRIER_KEY_PREFIX}{priority}"),
        }}
    })
}

/// RFC 6902 operations injecting the barriers; `generated_name` is used (and written to
/// `/metadata/name`) when the pod has only a `generateName`.
///
/// # Errors
/// See [`priorities`].
pub fn patch(
    pod: &Pod,
    generated_name: impl FnOnce(&str) -> String,
) -> Result<Vec<Value>, InvalidPriority> {
    let Some(priorities) = priorities(pod)? else {
        return Ok(Vec::new());
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
    let containers = pod
        .spec
        .as_ref()
        .map_or(&[][..], |spec| &spec.containers[..]);
    for (index, (container, priority)) in containers.iter().zip(priorities).enumerate() {
        let envs = container.env.as_deref();
        if envs
            .unwrap_or_default()
            .iter()
            .any(|env| env.name == BARRIER_ENV)
        {
            continue;
        }
        let env = barrier_env(priority, &name);
        ops.push(match envs {
            Some(_) => json!({"op": "add", "path": format!("/spec/containers/{index}/env/-"), "value": env}),
            None => json!({"op": "add", "path": format!("/spec/containers/{index}/env"), "value": [env]}),
        });
    }
    Ok(ops)
}

/// Go's `strconv.Atoi` on 64-bit: an optional sign, then decimal digits, nothing else.
fn parse_go_int(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(annotation: Option<&str>, priorities: &[Option<&str>]) -> Pod {
        let containers: Vec<Value> = priorities
            .iter()
            .enumerate()
            .map(|(index, priority)| match priority {
                Some(value) => json!({"name": format!("c{index}"), "env": [{"name": PRIORITY_ENV, "value": value}]}),
                None => json!({"name": format!("c{index}")}),
            })
            .collect();
        let mut value = json!({"metadata": {"name": "web-1"}, "spec": {"containers": containers}});
        if let Some(annotation) = annotation {
            value["metadata"]["annotations"] = json!({ LAUNCH_PRIORITY_ANNOTATION: annotation });
        }
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn priority_rules() {
        type Case<'a> = (Option<&'a str>, &'a [Option<&'a str>], Option<Vec<i64>>);
        let cases: [Case; 8] = [
            (Some("Ordered"), &[None, None, None], Some(vec![0, -1, -2])),
            (Some("Ordered"), &[Some("5"), Some("9")], Some(vec![0, -1])),
            (Some("Ordered"), &[None], None),
            (Some("ordered"), &[None, None], None),
            (None, &[Some("10"), None, Some("-3")], Some(vec![10, 0, -3])),
            (None, &[Some("7"), Some("7")], None),
            (None, &[Some("0"), None], None),
            (None, &[Some("+2"), Some("1")], Some(vec![2, 1])),
        ];
        for (annotation, envs, expected) in cases {
            assert_eq!(
                priorities(&pod(annotation, envs)).unwrap(),
                expected,
                "{annotation:?} {envs:?}"
            );
        }
    }

    #[test]
    fn a_bad_priority_rejects_the_pod() {
        for bad in ["", "1.5", "ten", "9223372036854775808", " 1"] {
            let error = priorities(&pod(None, &[Some(bad), Some("1")])).unwrap_err();
            assert_eq!(
                error,
                InvalidPriority {
                    container: "c0".into(),
                    value: bad.into()
                },
                "{bad:?}"
            );
        }
    }

    #[test]
    fn barriers_are_appended_or_created() {
        let mut pod = pod(Some("Ordered"), &[None, Some("3")]);
        let ops = patch(&pod, |_| unreachable!()).unwrap();
        assert_eq!(
            ops,
            [
                json!({"op": "add", "path": "/spec/containers/0/env", "value": [barrier_env(0, "web-1")]}),
                json!({"op": "add", "path": "/spec/containers/1/env/-", "value": barrier_env(-1, "web-1")}),
            ]
        );
        assert_eq!(
            barrier_env(-1, "web-1"),
            json!({"name": "KRUISE_CONTAINER_BARRIER", "valueFrom": {"configMapKeyRef": {"name": "web-1-barrier", "key": "p_-1"}}})
        );
        // Already injected: nothing more.
        let spec = pod.spec.as_mut().unwrap();
        for container in &mut spec.containers {
            container
                .env
                .get_or_insert_with(Vec::new)
                .push(serde_json::from_value(barrier_env(0, "web-1")).unwrap());
        }
        assert!(patch(&pod, |_| unreachable!()).unwrap().is_empty());
    }

    #[test]
    fn generate_name_pods_get_their_name_first() {
        let mut pod = pod(Some("Ordered"), &[None, None]);
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
