//! The CRI side of [`kruise_lifecycle::container_recreate::runtime_view`]: what the container runtime says
//! about one pod (`ListContainers` entries and their `ContainerStatus`), converted to the plain
//! [`PodView`] the node agents decide on. The view and its rules (newest incarnation, full container IDs)
//! live in the library; only the conversion from `k8s-cri`'s protobuf types is here.
//!
//! ```
//! use k8s_cri::v1 as cri;
//! use kruise_runtime::cri::view::pod_view;
//!
//! let listed = cri::Container {
//!     id: "c1".into(),
//!     metadata: Some(cri::ContainerMetadata { name: "main".into(), attempt: 0 }),
//!     state: cri::ContainerState::ContainerRunning.into(),
//!     ..Default::default()
//! };
//! let view = pod_view("containerd", &[listed], &Default::default());
//! assert_eq!(view.full_id(view.latest("main").unwrap()), "containerd://c1");
//! ```

use std::collections::HashMap;

use k8s_cri::v1 as cri;
use kruise_lifecycle::container_recreate::runtime_view::{ContainerView, PodView, RuntimeState};

use super::labels;

/// The state of a CRI `ContainerState` number (unknown numbers: [`RuntimeState::Unknown`]).
#[must_use]
pub fn runtime_state(state: i32) -> RuntimeState {
    match cri::ContainerState::try_from(state) {
        Ok(cri::ContainerState::ContainerCreated) => RuntimeState::Created,
        Ok(cri::ContainerState::ContainerRunning) => RuntimeState::Running,
        Ok(cri::ContainerState::ContainerExited) => RuntimeState::Exited,
        _ => RuntimeState::Unknown,
    }
}

/// The container from a `ListContainers` entry and, when known, its `ContainerStatus` (times, exit).
#[must_use]
pub fn container_view(
    container: &cri::Container,
    status: Option<&cri::ContainerStatus>,
) -> ContainerView {
    let name = container
        .labels
        .get(labels::CONTAINER_NAME)
        .cloned()
        .or_else(|| container.metadata.as_ref().map(|m| m.name.clone()))
        .unwrap_or_default();
    let attempt = container.metadata.as_ref().map_or(0, |m| m.attempt);
    let restart_count = container
        .annotations
        .get(labels::CONTAINER_RESTART_COUNT)
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| i32::try_from(attempt).unwrap_or(i32::MAX));
    let state = status.map_or(container.state, |s| s.state);
    ContainerView {
        name,
        id: container.id.clone(),
        state: runtime_state(state),
        restart_count,
        created_at_ns: container.created_at,
        started_at_ns: status.map_or(0, |s| s.started_at),
        finished_at_ns: status.map_or(0, |s| s.finished_at),
        exit_code: status.map_or(0, |s| s.exit_code),
        reason: status.map(|s| s.reason.clone()).unwrap_or_default(),
        image: container
            .image
            .as_ref()
            .map(|spec| spec.image.clone())
            .unwrap_or_default(),
        image_ref: status.map_or_else(|| container.image_ref.clone(), |s| s.image_ref.clone()),
    }
}

/// The view of a pod from its `ListContainers` entries and the statuses fetched for them (by ID), on the
/// runtime named `runtime` (`Version`'s `runtime_name`).
#[must_use]
pub fn pod_view(
    runtime: &str,
    containers: &[cri::Container],
    statuses: &HashMap<String, cri::ContainerStatus>,
) -> PodView {
    PodView {
        runtime: runtime.to_owned(),
        containers: containers
            .iter()
            .map(|container| container_view(container, statuses.get(&container.id)))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(
        id: &str,
        name: &str,
        attempt: u32,
        created: i64,
        state: cri::ContainerState,
    ) -> cri::Container {
        cri::Container {
            id: id.into(),
            metadata: Some(cri::ContainerMetadata {
                name: name.into(),
                attempt,
            }),
            state: state.into(),
            created_at: created,
            labels: labels::container_labels("ns", "pod", "uid", name),
            ..Default::default()
        }
    }

    #[test]
    fn statuses_override_the_listing_and_annotations_give_the_restart_count() {
        let mut container = listed("c1", "main", 3, 10, cri::ContainerState::ContainerRunning);
        container
            .annotations
            .insert(labels::CONTAINER_RESTART_COUNT.into(), "7".into());
        let status = cri::ContainerStatus {
            id: "c1".into(),
            state: cri::ContainerState::ContainerExited.into(),
            started_at: 1_700_000_000_000_000_000,
            finished_at: 1_700_000_005_000_000_000,
            exit_code: 137,
            reason: "Error".into(),
            image_ref: "sha256:abc".into(),
            ..Default::default()
        };
        let view = container_view(&container, Some(&status));
        assert_eq!(view.state, RuntimeState::Exited);
        assert_eq!(view.restart_count, 7);
        assert_eq!(view.exit_code, 137);
        assert_eq!(view.started_at().unwrap().as_second(), 1_700_000_000);
        assert_eq!(view.finished_at().unwrap().as_second(), 1_700_000_005);
        assert_eq!(view.image_ref, "sha256:abc");

        let bare = container_view(
            &listed("c2", "main", 2, 1, cri::ContainerState::ContainerCreated),
            None,
        );
        assert_eq!(
            (bare.restart_count, bare.state, bare.started_at()),
            (2, RuntimeState::Created, None)
        );
    }

    #[test]
    fn pod_views_list_every_incarnation_with_its_status() {
        let containers = vec![
            listed("old", "main", 0, 10, cri::ContainerState::ContainerExited),
            listed("new", "main", 1, 20, cri::ContainerState::ContainerRunning),
            listed(
                "side",
                "sidecar",
                0,
                5,
                cri::ContainerState::ContainerRunning,
            ),
        ];
        let statuses = HashMap::from([(
            "side".to_owned(),
            cri::ContainerStatus {
                id: "side".into(),
                state: cri::ContainerState::ContainerExited.into(),
                exit_code: 1,
                ..Default::default()
            },
        )]);
        let view = pod_view("containerd", &containers, &statuses);
        assert_eq!(view.containers.len(), 3);
        assert_eq!(view.latest("main").unwrap().id, "new");
        let side = view.latest("sidecar").unwrap();
        assert_eq!((side.state, side.exit_code), (RuntimeState::Exited, 1));
        assert_eq!(view.full_id(side), "containerd://side");
        assert_eq!(runtime_state(99), RuntimeState::Unknown);
    }
}
