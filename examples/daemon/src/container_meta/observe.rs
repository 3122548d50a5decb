//! What the container meta worker reads from the runtime: the newest incarnation of each container of a pod
//! (by kubelet's pod-UID label), and the environment a running container really has (`env` run inside it,
//! as upstream's `wrapEnvGetter`).

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_cri::v1 as cri;
use kruise_inplace::runtime_meta::{ObservedContainer, parse_env_output};
use kruise_lifecycle::container_recreate::runtime_view::RuntimeState;
use kruise_runtime::cri::view::runtime_state;
use kruise_runtime::cri::{CriClient, CriError, labels};

/// How long `env` may run inside a container.
pub const ENV_TIMEOUT: Duration = Duration::from_secs(3);

/// The newest incarnation of each container of the pod with this UID, on the runtime named `runtime`.
///
/// # Errors
/// The runtime could not be listed.
pub async fn observe(
    cri: &CriClient,
    runtime: &str,
    pod_uid: &str,
) -> Result<Vec<ObservedContainer>, CriError> {
    let listed = cri.list_containers(labels::pod_filter(pod_uid)).await?;
    Ok(newest_incarnations(runtime, &listed))
}

/// The newest (by creation time) listed container of each name, as the container meta worker sees it.
#[must_use]
pub fn newest_incarnations(runtime: &str, listed: &[cri::Container]) -> Vec<ObservedContainer> {
    let mut newest: BTreeMap<String, &cri::Container> = BTreeMap::new();
    for container in listed {
        let Some(name) = container.labels.get(labels::CONTAINER_NAME) else {
            continue;
        };
        let newer = newest
            .get(name)
            .is_none_or(|current| current.created_at < container.created_at);
        if newer {
            newest.insert(name.clone(), container);
        }
    }
    newest
        .into_iter()
        .map(|(name, container)| ObservedContainer {
            name,
            container_id: format!("{runtime}://{}", container.id),
            restart_count: container
                .annotations
                .get(labels::CONTAINER_RESTART_COUNT)
                .and_then(|count| count.parse().ok())
                .unwrap_or_default(),
            running: runtime_state(container.state) == RuntimeState::Running,
            kubelet_hash: container
                .annotations
                .get(labels::CONTAINER_HASH)
                .and_then(|hash| u64::from_str_radix(hash, 16).ok()),
        })
        .collect()
}

/// The environment of a running container (`container_id` with or without its `<runtime>://`).
///
/// # Errors
/// The exec failed, or `env` exited with a non-zero code (its stderr is in the message).
pub async fn running_env(
    cri: &CriClient,
    container_id: &str,
) -> Result<BTreeMap<String, String>, String> {
    let id = container_id
        .split_once("://")
        .map_or(container_id, |(_, id)| id);
    let response = cri
        .exec_sync(id, vec!["env".to_owned()], ENV_TIMEOUT)
        .await
        .map_err(|error| error.to_string())?;
    if response.exit_code != 0 {
        return Err(format!(
            "env exited with {}: {}",
            response.exit_code,
            String::from_utf8_lossy(&response.stderr).trim()
        ));
    }
    Ok(parse_env_output(&String::from_utf8_lossy(&response.stdout)))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn listed(
        id: &str,
        name: &str,
        created: i64,
        state: cri::ContainerState,
        hash: &str,
    ) -> cri::Container {
        cri::Container {
            id: id.into(),
            state: state.into(),
            created_at: created,
            labels: labels::container_labels("ns", "p", "u", name),
            annotations: HashMap::from([
                (labels::CONTAINER_HASH.to_owned(), hash.to_owned()),
                (
                    labels::CONTAINER_RESTART_COUNT.to_owned(),
                    created.to_string(),
                ),
            ]),
            ..cri::Container::default()
        }
    }

    #[test]
    fn the_newest_incarnation_of_each_container() {
        let containers = [
            listed("old", "main", 1, cri::ContainerState::ContainerExited, "ff"),
            listed(
                "new",
                "main",
                2,
                cri::ContainerState::ContainerRunning,
                "1a2b",
            ),
            listed("log", "log", 1, cri::ContainerState::ContainerExited, "zz"),
        ];
        let observed = newest_incarnations("containerd", &containers);
        assert_eq!(
            observed,
            [
                ObservedContainer {
                    name: "log".into(),
                    container_id: "containerd://log".into(),
                    restart_count: 1,
                    running: false,
                    kubelet_hash: None,
                },
                ObservedContainer {
                    name: "main".into(),
                    container_id: "containerd://new".into(),
                    restart_count: 2,
                    running: true,
                    kubelet_hash: Some(0x1a2b),
                },
            ]
        );
    }
}
