//! `OpenKruise` pod lifecycle hooks as pure decisions.
//!
//! `CloneSet`, Advanced `StatefulSet` and Advanced `DaemonSet` pods move through the lifecycle states
//! `PreparingNormal → Normal → PreparingUpdate → Updating → Updated → Normal … → PreparingDelete`, held at the
//! `Preparing*` and `Updated` steps by hooks (labels and finalizers) that a user's operator removes or
//! re-adds. This crate decides each step for one pod and returns the exact changes to write; it never talks
//! to a cluster and never reads the clock (`now` is an argument).
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use k8s_openapi::jiff::{Timestamp, tz::{Offset, TimeZone}};
//! use kruise_api::lifecycle::{Lifecycle, LifecycleHook};
//! use kruise_lifecycle::{LifecycleStateType, RefreshInput, UpdateDecision, Workload};
//!
//! let lifecycle = Lifecycle {
//!     in_place_update: Some(LifecycleHook {
//!         finalizers_handler: vec!["example.com/registered".into()],
//!         ..Default::default()
//!     }),
//!     ..Default::default()
//! };
//! let cloneset = Workload::cloneset(Some(&lifecycle));
//! let now = "2024-05-01T02:00:00Z".parse::<Timestamp>()?.to_zoned(TimeZone::fixed(Offset::constant(8)));
//!
//! // A Normal pod that the user's operator registered (it holds the hook finalizer) must be updated.
//! let mut pod = Pod::default();
//! pod.metadata.labels = Some([("lifecycle.apps.kruise.io/state".into(), "Normal".into())].into());
//! pod.metadata.finalizers = Some(vec!["example.com/registered".into()]);
//!
//! // The hook holds it: PreparingUpdate, written with one strategic-merge patch.
//! let UpdateDecision::Hold(held) = cloneset.update_wanted(&pod, &now)? else { unreachable!() };
//! assert_eq!(held.to, Some(LifecycleStateType::PreparingUpdate));
//! assert_eq!(
//!     held.change.metadata.strategic_merge_patch().unwrap(),
//!     serde_json::json!({"metadata": {
//!         "labels": {"lifecycle.apps.kruise.io/state": "PreparingUpdate"},
//!         "annotations": {"lifecycle.apps.kruise.io/timestamp": "2024-05-01T10:00:00+08:00"},
//!     }})
//! );
//! let mut pod = held.apply(&pod);
//!
//! // The operator deregisters the pod and drops its finalizer: the update may go ahead.
//! pod.metadata.finalizers = Some(vec![]);
//! let UpdateDecision::UpdateNow(updating) = cloneset.update_wanted(&pod, &now)? else { unreachable!() };
//! assert_eq!(updating.to, Some(LifecycleStateType::Updating));
//! let pod = updating.apply(&pod); // written together with the in-place patch (kruise-inplace)
//!
//! // Once the in-place update has completed, the pod waits in Updated for the operator to re-register it.
//! let done = RefreshInput { update_completed: true, ..Default::default() };
//! let updated = cloneset.refresh(&pod, done, &now)?;
//! assert_eq!(updated.to, Some(LifecycleStateType::Updated));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! * [`Workload`]: the state machine, one method per trigger (created, scheduled, update wanted, update
//!   completed, rolled back, hook re-armed, delete wanted, cancel delete) and [`Workload::refresh`].
//! * [`Transition`], [`UpdateDecision`], [`DeleteDecision`]: what a decision returns; [`change`]: the
//!   changes, applied to a [`Pod`](k8s_openapi::api::core::v1::Pod) or rendered as patches (built with
//!   `serde_json`; finalizers are only ever added).
//! * [`hook`]: `is_hooked` (any) and `is_all_hooked` (all); [`state`] and [`timestamp`]: the state label and
//!   its Go-format timestamp.
//! * [`not_ready`]: the multi-writer `KruisePodReady` condition, for the lifecycle and for any other writer
//!   (`ContainerRecreateRequest`); [`ready`]: `Ready` recomputed from readiness gates.
//! * [`guide`]: how a user's operator drives the hooks (the service-discovery walkthrough).
//! * [`container_recreate`]: `ContainerRecreateRequest`'s decisions (admission defaults and checks,
//!   kruise-manager's reconcile, kruise-daemon's per-node state machine over a plain view of the container
//!   runtime), with the same rules: no I/O, `now` as an argument.
//!
//! The crate enables no `k8s-openapi` version feature: pick one in your binary.

pub mod change;
pub mod container_recreate;
mod error;
pub mod guide;
pub mod hook;
pub mod not_ready;
pub mod ready;
pub mod state;
pub mod timestamp;
pub mod transition;
pub mod workload;

pub use change::{MetadataChange, PodChange, StatusChange};
pub use error::{Error, PodName};
pub use hook::{is_all_hooked, is_hooked};
pub use kruise_api::lifecycle::{Lifecycle, LifecycleHook, LifecycleStateType};
pub use not_ready::{PodNotReadyEntry, add_not_ready_key, remove_not_ready_key};
pub use transition::{DeleteDecision, RefreshInput, Transition, UpdateDecision, UpdateGate};
pub use workload::{Options, Workload, WorkloadKind};

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
