//! What the container runtime says about one pod's containers, as plain values: kubelet's `GetPodStatus`
//! reduced to what kruise-daemon decides on ([`super::daemon`]). The caller builds it from its runtime (CRI
//! `ListContainers` and `ContainerStatus`: times in nanoseconds since the epoch, IDs without the scheme).
//!
//! Every incarnation of a container is listed (an exited one stays until it is removed); [`PodView::latest`]
//! picks the newest by creation time, as kubelet's `FindContainerStatusByName` does. Container IDs are
//! written `<runtime>://<id>` ([`PodView::full_id`]), the form of `status.containerStatuses[].containerID`.
//!
//! ```
//! use kruise_lifecycle::container_recreate::runtime_view::{ContainerView, PodView, RuntimeState};
//!
//! let old = ContainerView { name: "main".into(), id: "a".into(), state: RuntimeState::Exited, created_at_ns: 1, ..Default::default() };
//! let new = ContainerView { name: "main".into(), id: "b".into(), state: RuntimeState::Running, created_at_ns: 2, restart_count: 1, ..Default::default() };
//! let view = PodView { runtime: "containerd".into(), containers: vec![old, new] };
//! let latest = view.latest("main").unwrap();
//! assert_eq!(view.full_id(latest), "containerd://b");
//! assert_eq!(latest.restart_count, 1);
//! ```

use k8s_openapi::jiff::Timestamp;

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
#[path = "runtime_view_tests.rs"]
mod tests;
