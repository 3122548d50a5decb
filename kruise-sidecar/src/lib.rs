//! SidecarSet, as OpenKruise does it (upstream `pkg/control/sidecarcontrol`, the pod webhook's
//! `sidecarset*.go` and `pkg/controller/sidecarset`), without I/O.
//!
//! * [`matching`]: which SidecarSets a pod gets (namespace selector, selector, paused, canary).
//! * [`inject()`]: the pod webhook's injection: metadata patches, init containers, containers (hot-upgrade
//!   pairs), shared volumes, transferred env, volumes, pull secrets, annotations, and the RFC 6902 patch.
//! * [`hash`]: the SidecarSet hashes, bit-exact with upstream; [`revision`]: ControllerRevision data, names,
//!   restoring history and the controller's history bookkeeping; [`injection_revision`]: which revision a
//!   new pod gets.
//! * [`upgrade`]: which pods to upgrade next and the in-place upgrade of one pod; [`hot_upgrade`]: the
//!   hot-upgrade state machine; [`consistency`]: state consistency and readiness.
//! * [`plan()`]: one reconcile of the SidecarSet controller: revisions, status, resets, upgrades;
//!   [`plan_steps`] makes the same decisions from [`pod_view::PodView`]s such as the compact
//!   [`pod_facts::PodFacts`] a controller keeps between reconciles, and [`pod_outcome`] builds one step's
//!   patches from the whole pod.
//! * [`validation`]: the SidecarSet validating webhook's rules.
//! * [`terminator`]: the Job sidecar terminator's decisions (upstream `pkg/controller/sidecarterminator`).
//!
//! Time (`now`), randomness ([`Chance`]), ControllerRevisions and namespace labels are arguments.
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_api::apps::v1beta1::SidecarSet;
//! use kruise_api::defaults::ApplyDefaults;
//! use kruise_sidecar::{inject, InjectRequest, Options, SeededChance};
//!
//! let mut sidecarset: SidecarSet = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet", "metadata": {"name": "log"},
//!     "spec": {"selector": {"matchLabels": {"app": "nginx"}},
//!              "containers": [{"name": "sidecar1", "image": "busybox"}]},
//! })).unwrap();
//! sidecarset.apply_defaults(); // as stored: podInjectPolicy BeforeAppContainer, ...
//! let pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "p", "namespace": "default", "labels": {"app": "nginx"}},
//!     "spec": {"containers": [{"name": "app", "image": "nginx"}]},
//! })).unwrap();
//! let sidecarsets = [sidecarset];
//! let request = InjectRequest {
//!     pod: &pod, old_pod: None, sidecarsets: &sidecarsets, revisions: &[], namespace_labels: None,
//!     now: "2024-05-01T10:00:00Z".parse().unwrap(), options: Options::default(),
//! };
//! let injection = inject(&request, &mut SeededChance::new(1)).unwrap();
//! let names: Vec<_> = injection.pod.spec.unwrap().containers.iter().map(|c| c.name.clone()).collect();
//! assert_eq!(names, ["sidecar1", "app"]);
//! ```

pub mod admission_patch;
pub mod condition;
pub mod consistency;
pub mod container_merge;
mod encoding;
pub mod error;
pub mod hash;
pub mod hot_upgrade;
pub mod inject;
mod injection_delta;
pub mod injection_revision;
pub mod inplace_state;
pub mod matching;
pub mod metadata;
pub mod options;
pub mod plan;
pub mod pod_facts;
pub mod pod_view;
mod random;
pub mod records;
pub mod resource_expression;
pub mod resources_policy;
pub mod revision;
pub mod shared_volumes;
pub mod status;
pub mod terminator;
pub mod transfer_env;
pub mod upgrade;
pub mod validation;

pub use error::Error;
pub use inject::{
    InjectRequest, Injection, JsonInjection, inject, inject_json, inject_sidecarsets,
};
pub use options::{FeatureGateError, Options};
pub use plan::{
    Plan, PlanInput, PodAction, PodStep, Reason, Step, StepPlan, plan, plan_steps, pod_outcome,
};
pub use random::{Chance, FixedChance, SeededChance};
