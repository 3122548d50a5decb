//! ContainerRecreateRequest (CRR): the pure decisions of its three actors, upstream's
//! `pkg/webhook/containerrecreaterequest`, `pkg/controller/containerrecreaterequest` and
//! `pkg/daemon/containerrecreate`.
//!
//! * [`webhook`]: the mutating webhook's defaults and checks ([`webhook::default_on_create`],
//!   [`webhook::check_update`], a [`webhook::Rejection`] otherwise);
//! * [`controller`]: kruise-manager's reconcile ([`controller::decide`] → a [`controller::Plan`] of writes and
//!   when to look again), including the not-ready hold of `unreadyGracePeriodSeconds` through the
//!   multi-writer `KruisePodReady` condition ([`crate::not_ready`]);
//! * [`daemon`]: kruise-daemon's state machine on the node: which request of a pod to work on
//!   ([`daemon::pick`]), the phase and unready grace first ([`daemon::before_manage`]), then per-container
//!   states and the one container to kill per pass ([`daemon::decide`]), and kubelet's stop grace
//!   ([`daemon::Grace`]);
//! * [`runtime_view`]: what the container runtime says about one pod's containers, as plain values (the
//!   caller converts its runtime's answers, e.g. CRI `ListContainers` / `ContainerStatus`).
//!
//! Like the rest of the crate, these modules do no I/O, read no clock (`now` is an argument) and use no
//! randomness; the caller observes the cluster and the runtime and executes what comes back.
//!
//! ```
//! use kruise_api::apps::v1beta1::ContainerRecreateRequest;
//! use kruise_lifecycle::container_recreate::daemon::{Decision, decide};
//! use kruise_lifecycle::container_recreate::runtime_view::{ContainerView, PodView, RuntimeState};
//!
//! // A request being recreated, its container states written, and the container still untouched.
//! let crr: ContainerRecreateRequest = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "restart", "namespace": "default", "creationTimestamp": "2024-05-01T10:00:00Z"},
//!     "spec": {"podName": "web", "containers": [
//!         {"name": "app", "statusContext": {"containerID": "containerd://c1", "restartCount": 0}}]},
//!     "status": {"phase": "Recreating", "containerRecreateStates": [{"name": "app", "phase": "Pending"}]},
//! })).unwrap();
//! let view = PodView {
//!     runtime: "containerd".into(),
//!     containers: vec![ContainerView {
//!         name: "app".into(), id: "c1".into(), state: RuntimeState::Running, ..Default::default()
//!     }],
//! };
//! let now = "2024-05-01T10:00:01Z".parse().unwrap();
//! let Decision::Kill { container_id, .. } = decide(&crr, &view, &Default::default(), now) else {
//!     unreachable!()
//! };
//! assert_eq!(container_id, "c1"); // stop it (kubelet's way: preStop, then StopContainer), then write the states
//! ```

pub mod controller;
pub mod daemon;
pub mod runtime_view;
pub mod webhook;
