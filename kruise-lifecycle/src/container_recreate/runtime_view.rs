//! What the container runtime says about one pod's containers, as plain values: kubelet's `GetPodStatus`
//! reduced to what the node agents decide on (pure).
//!
//! Every incarnation of a container is listed (an exited one stays until it is removed); [`PodView::latest`]
//! picks the newest by creation time, as kubelet's `FindContainerStatusByName` does. Container IDs are
//! written `<runtime>://<id>` ([`PodView::full_id`]), the form of `status.containerStatuses[].containerID`.
//!
//! ```
//! use kruise_examples::cri::view::{ContainerView, PodView, RuntimeState};
//!
//! let old = ContainerView { name: "main".into(), id: "a".into(), state: RuntimeState::Exited, created_at_ns: 1, ..Default::default() };
//! let new = ContainerView { name: "main".into(), id: "b".into(), state: RuntimeState::Running, created_at_ns: 2, restart_count: 1, ..Default::default() };
//! let view = PodView { runtime: "containerd".into(), containers: vec![old, new] };
//! let latest = view.latest("main").unwrap();
//! assert_eq!(view.full_id(latest), "containerd://b");
//! assert_eq!(latest.restart_count, 1);
//! ```

use std::collections::HashMap;

use k8s_cri::v1 as cri;
use k8s_openapi::jiff::Timestamp;

use super::labels;

/// The state of a container incarnation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RuntimeState {
    /// Created, not started.
    Created,
    /// Running.
    Running,
    /// Exited (stopped, crashed or completed).
    Exited,
    /// The runtime does not know.
    #[default]
    Unknown,
}

impl RuntimeState {
    /// The state of a CRI `ContainerState` number.
    #[must_use]
    pub fn from_cri(state: i32) -> Self {
        match cri::ContainerState::try_from(state) {
            Ok(cri::ContainerState::ContainerCreated) => Self::Created,
            Ok(cri::ContainerState::ContainerRunning) => Self::Running,
            Ok(cri::ContainerState::ContainerExited) => Self::Exited,
            _ => Self::Unknown,
        }
    }
}

/// One container incarnation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContainerView {
    /// The container's name in the pod spec (kubelet's `io.kubernetes.container.name` label).
    pub name: String,
    /// The runtime's ID (without the `<runtime>://` prefix).
    pub id: String,
    /// Its state.
    pub state: RuntimeState,
    /// The restart count of this incarnation (kubelet's annotation, else the CRI attempt).
    pub restart_count: i32,
    /// Creation time, nanoseconds since the epoch.
    pub created_at_ns: i64,
    /// Start time, nanoseconds since the epoch (0: not started).
    pub started_at_ns: i64,
    /// Finish time, nanoseconds since the epoch (0: not finished).
    pub finished_at_ns: i64,
    /// Exit code (meaningful once exited).
    pub exit_code: i32,
    /// The runtime's reason for the exit (`Completed`, `Error`, ...).
    pub reason: String,
    /// The image as the container spec named it.
    pub image: String,
    /// The image the runtime resolved it to (an image ID or a repository digest).
    pub image_ref: String,
}

impl ContainerView {
    /// The container from a `ListContainers` entry and, when known, its `ContainerStatus` (times, exit).
    #[must_use]
    pub fn from_runtime(container: &cri::Container, status: Option<&cri::ContainerStatus>) -> Self {
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
        Self {
            name,
            id: container.id.clone(),
            state: RuntimeState::from_cri(state),
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

    /// When it started, if it did.
    #[must_use]
    pub fn started_at(&self) -> Option<Timestamp> {
        nanos(self.started_at_ns)
    }

    /// When it finished, if it did.
    #[must_use]
    pub fn finished_at(&self) -> Option<Timestamp> {
        nanos(self.finished_at_ns)
    }
}

/// A timestamp from CRI nanoseconds; 0 (and garbage) is `None`.
#[must_use]
pub fn nanos(value: i64) -> Option<Timestamp> {
    (value > 0)
        .then(|| Timestamp::from_nanosecond(i128::from(value)).ok())
        .flatten()
}

/// The containers of one pod as the runtime reports them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodView {
    /// The runtime's name (`containerd`), the scheme of full container IDs.
    pub runtime: String,
    /// Every incarnation of every container.
    pub containers: Vec<ContainerView>,
}

impl PodView {
    /// The view of a pod from its `ListContainers` entries and the statuses fetched for them (by ID).
    #[must_use]
    pub fn from_runtime(
        runtime: &str,
        containers: &[cri::Container],
        statuses: &HashMap<String, cri::ContainerStatus>,
    ) -> Self {
        Self {
            runtime: runtime.to_owned(),
            containers: containers
                .iter()
                .map(|container| {
                    ContainerView::from_runtime(container, statuses.get(&container.id))
                })
                .collect(),
        }
    }

    /// The newest incarnation of the container `name` (ties: the larger restart count, then the ID).
    #[must_use]
    pub fn latest(&self, name: &str) -> Option<&ContainerView> {
        self.containers
            .iter()
            .filter(|container| container.name == name)
            .max_by(|a, b| {
                (a.created_at_ns, a.restart_count, &a.id).cmp(&(
                    b.created_at_ns,
                    b.restart_count,
                    &b.id,
                ))
            })
    }

    /// `<runtime>://<id>`, the form of `containerStatuses[].containerID`.
    #[must_use]
    pub fn full_id(&self, container: &ContainerView) -> String {
        format!("{}://{}", self.runtime, container.id)
    }
}

/// Splits `<runtime>://<id>` into its parts (`None` without a scheme).
#[must_use]
pub fn split_container_id(full: &str) -> Option<(&str, &str)> {
    full.split_once("://")
        .filter(|(runtime, id)| !runtime.is_empty() && !id.is_empty())
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
        let view = ContainerView::from_runtime(&container, Some(&status));
        assert_eq!(view.state, RuntimeState::Exited);
        assert_eq!(view.restart_count, 7);
        assert_eq!(view.exit_code, 137);
        assert_eq!(view.started_at().unwrap().as_second(), 1_700_000_000);
        assert_eq!(view.finished_at().unwrap().as_second(), 1_700_000_005);
        assert_eq!(view.image_ref, "sha256:abc");

        let bare = ContainerView::from_runtime(
            &listed("c2", "main", 2, 1, cri::ContainerState::ContainerCreated),
            None,
        );
        assert_eq!(
            (bare.restart_count, bare.state, bare.started_at()),
            (2, RuntimeState::Created, None)
        );
    }

    #[test]
    fn latest_is_the_newest_incarnation() {
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
        let view = PodView::from_runtime("containerd", &containers, &HashMap::new());
        assert_eq!(view.latest("main").unwrap().id, "new");
        assert_eq!(
            view.full_id(view.latest("sidecar").unwrap()),
            "containerd://side"
        );
        assert!(view.latest("missing").is_none());
        assert_eq!(RuntimeState::from_cri(99), RuntimeState::Unknown);
    }

    #[test]
    fn container_ids_split() {
        assert_eq!(
            split_container_id("containerd://abc"),
            Some(("containerd", "abc"))
        );
        assert_eq!(split_container_id("abc"), None);
        assert_eq!(split_container_id("://abc"), None);
        assert_eq!(nanos(0), None);
    }
}
