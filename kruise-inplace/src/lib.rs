//! In-place update of pods, as OpenKruise does it (upstream `pkg/util/inplaceupdate` and the revision
//! naming of `controller/history`), without I/O.
//!
//! * [`calculate()`] / [`calculate_templates`]: can a pod move from one revision (or pod template) to another in
//!   place, and what changes — an [`UpdateSpec`] — or why it must be recreated ([`Recreate`]).
//! * [`apply()`]: start the update of a pod at `now`: revision labels, a fresh state annotation, the first
//!   container batch (by launch priority) or the grace-period annotation, and `InPlaceUpdateReady=False` first.
//! * [`refresh()`]: on every reconcile, finish a grace period, write the next batch once the previous one is
//!   ready, and set `InPlaceUpdateReady` back to `True` when done.
//! * [`completion`]: whether the update finished (image IDs, kubelet container hashes, env-from-metadata
//!   hashes).
//! * [`revision`]: ControllerRevision data and names, byte for byte as Go builds them.
//! * [`runtime_meta`]: kruise-daemon's `runtime-containers-meta` report and its env-from-metadata restarts;
//!   [`launch_barrier`]: the container launch priority barrier ConfigMap's next key.
//!
//! [`apply()`] and [`refresh()`] return an [`Outcome`]: the pod after the step and the RFC 6902 patches a
//! controller sends, in order. Time is an argument; switches are [`UpdateOptions`] (with upstream's
//! [`FeatureGates`] and their defaults).
//!
//! ```
//! use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod, PodSpec, PodStatus, PodTemplateSpec};
//! use kruise_inplace::{apply, calculate_templates, completion, refresh, UpdateOptions};
//!
//! let template = |image: &str| PodTemplateSpec {
//!     spec: Some(PodSpec {
//!         containers: vec![Container { name: "main".into(), image: Some(image.into()), ..Default::default() }],
//!         ..Default::default()
//!     }),
//!     ..Default::default()
//! };
//! let options = UpdateOptions::default();
//! let spec = calculate_templates(&template("nginx:1.24"), &template("nginx:1.25"), &options).unwrap();
//!
//! let pod = Pod {
//!     spec: template("nginx:1.24").spec,
//!     status: Some(PodStatus {
//!         container_statuses: Some(vec![ContainerStatus {
//!             name: "main".into(),
//!             image: "nginx:1.24".into(),
//!             image_id: "sha256:old".into(),
//!             ready: true,
//!             ..Default::default()
//!         }]),
//!         ..Default::default()
//!     }),
//!     ..Default::default()
//! };
//! let now = "2024-05-01T10:00:00Z".parse().unwrap();
//! let started = apply(&pod, &spec, now, &options).unwrap();
//! assert!(!completion::is_completed(&started.pod, &options));
//!
//! // Kubelet restarts the container with the new image.
//! let mut running = started.pod.clone();
//! let status = &mut running.status.as_mut().unwrap().container_statuses.as_mut().unwrap()[0];
//! status.image = "nginx:1.25".into();
//! status.image_id = "sha256:new".into();
//! assert!(completion::is_completed(&running, &options));
//! assert!(!refresh(&running, now, &options).unwrap().changed()); // no readiness gate to flip
//! ```

pub mod apply;
pub mod batch;
pub mod calculate;
pub mod completion;
pub mod condition;
pub mod container_hash;
pub mod env_from_metadata;
pub mod error;
pub mod go_json;
mod go_types;
mod json_diff;
pub mod launch_barrier;
pub mod launch_priority;
pub mod options;
pub mod patch;
mod pod_containers;
pub mod qos;
pub mod quantity;
pub mod refresh;
pub mod revision;
pub mod runtime_meta;
pub mod state;
mod strategic_merge;
pub mod update_spec;

pub use apply::{apply, apply_with};
pub use calculate::{
    Recreate, calculate, calculate_data, calculate_templates, can_update_in_place,
};
pub use error::Error;
pub use options::{FeatureGates, RevisionLabels, UpdateOptions};
pub use patch::{Outcome, Subresource, Write};
pub use refresh::refresh;
pub use update_spec::UpdateSpec;
